//! The counters Nsight Compute takes from the SASS, from the block counts of [`super::flow`]: warp
//! instructions (`smsp__inst_executed.sum`), shared and global load and store instructions
//! (`smsp__sass_inst_executed_op_{shared,global}_{ld,st}.sum`: one per LDS/LDS.64/LDS.128, so a
//! vector ptxas merged from four `ld.shared.f32` counts once; a predicated one only where a lane's
//! guard holds, as often as its PTX line ran at most) and LDC instructions with their
//! requests to the constant cache (`idc__requests.sum`: ULDC and constant operands send none).

use super::flow::{block_counts, Cfg, LineCount};
use super::listing::{Function, Inst};
use std::collections::HashMap;

/// Counts of one launch's SASS, in warp-level instructions (rounded to whole instructions).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SassCounts {
    /// All instructions issued (`smsp__inst_executed.sum`).
    pub inst_executed: u64,
    /// LDS of any width (`smsp__sass_inst_executed_op_shared_ld.sum`).
    pub shared_ld_inst: u64,
    /// STS of any width (`..._op_shared_st.sum`).
    pub shared_st_inst: u64,
    /// LDG of any width (`..._op_global_ld.sum`).
    pub global_ld_inst: u64,
    /// STG of any width (`..._op_global_st.sum`).
    pub global_st_inst: u64,
    /// LDC (not ULDC) instructions.
    pub ldc_inst: u64,
    /// Their requests to the constant cache (`idc__requests.sum`): one per LDC of a fixed
    /// address; for an indexed one (`c[0x0][R0+0x224]`) the PTX line's requests per execution.
    pub idc_requests: u64,
    /// LDGSTS issued, those whose lanes are all predicated off included
    /// (`smsp__inst_executed_op_ldgsts.sum`: measured on the H200, 216 for sgemm_cp_async's 152
    /// with a lane on, tests/fixtures/tensor/h200/report.json).
    pub ldgsts_issued: u64,
    /// Warp instructions per PTX line (SASS attributed to the line by its line info).
    pub per_line: HashMap<u32, u64>,
}

/// What the PTX run counted per PTX line: [`LineCount`] plus the requests the line's accesses
/// made (for an indexed LDC, the distinct addresses per warp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineRun {
    /// Executions, lanes, guard.
    pub count: LineCount,
    /// Requests (constant or parameter loads: distinct addresses per execution, summed).
    pub requests: u64,
}

/// The counts of `f` for a launch of `warps` warps whose PTX lines ran as `lines`. `selected`:
/// where ptxas kept the kernel's local memory in registers, the words its local loads read
/// (distinct addresses per execution, summed), which bound the requests of its predicated
/// fixed-address LDCs (below). Errors as [`block_counts`].
pub fn count(
    f: &Function,
    lines: &HashMap<u32, LineRun>,
    warps: u64,
    selected: Option<u64>,
) -> Result<SassCounts, String> {
    let cfg = Cfg::new(f);
    let counts: HashMap<u32, LineCount> = lines.iter().map(|(&l, r)| (l, r.count)).collect();
    let x = block_counts(f, &cfg, &counts, warps)?;
    let mut c = SassCounts::default();
    let mut exact = [0f64; 8];
    // Per (counter slot, PTX line) of the predicated copies: their count, and how many there are.
    let mut guarded: std::collections::BTreeMap<(usize, u32), (f64, f64)> = Default::default();
    // Per PTX line of predicated LDCs: requests per execution, and whether they are indexed.
    let mut ldc_requests: HashMap<u32, (f64, bool)> = HashMap::new();
    for (i, inst) in f.insts.iter().enumerate() {
        // Block counts are whole warps where the program pins them; the solver's last digits
        // are not. (A split of an unrolled loop's trips can be fractional on average.)
        let raw = x[cfg.block_of[i]];
        let n = if (raw - raw.round()).abs() < 1e-3 + 1e-6 * raw {
            raw.round()
        } else {
            raw
        };
        let slot = slot_of(inst);
        if let (Some(slot), false) = (slot, inst.guard.is_empty()) {
            let g = guarded.entry((slot, inst.ptx_line)).or_default();
            g.0 += n.max(0.0);
            g.1 += 1.0;
            if slot == 5 {
                let per = requests_per_ldc(inst, lines);
                ldc_requests.insert(inst.ptx_line, (per, inst.constant_indexed()));
            }
        }
        if n <= 0.0 {
            continue;
        }
        exact[0] += n;
        if inst.base() == "LDGSTS" {
            exact[7] += n;
        }
        *c.per_line.entry(inst.ptx_line).or_default() += n.round() as u64;
        let Some(slot) = slot.filter(|_| inst.guard.is_empty()) else {
            continue;
        };
        exact[slot] += n;
        if slot == 5 {
            exact[6] += n * requests_per_ldc(inst, lines);
        }
    }
    // Nsight Compute counts a load or store instruction, and an LDC's requests, where at least
    // one lane's guard holds: a predicated copy (if-converted, or guarded in the PTX) at most as
    // often as the PTX line ran.
    let mut select_requests = 0.0;
    for ((slot, line), (n, copies)) in guarded {
        let ran = lines.get(&line).map_or(0.0, |l| l.count.executed as f64);
        let n = n.min(ran * copies);
        exact[slot] += n;
        if slot == 5 {
            match ldc_requests.get(&line).copied().unwrap_or((1.0, false)) {
                (_, false) if selected.is_some() => select_requests += n,
                (per, _) => exact[6] += n * per,
            }
        }
    }
    // A by-value array of parameters that ptxas selects from (one predicated LDC per element
    // and lookup) sends a request from the LDCs whose guard holds on some lane: one per word
    // a lookup's lanes read (measured on the H200: 20 requests a warp for param_table_local's
    // 35 LDCs, tests/fixtures/suite37).
    exact[6] += selected.map_or(select_requests, |w| select_requests.min(w as f64));
    let r = |v: f64| v.round() as u64;
    c.inst_executed = r(exact[0]);
    c.shared_ld_inst = r(exact[1]);
    c.shared_st_inst = r(exact[2]);
    c.global_ld_inst = r(exact[3]);
    c.global_st_inst = r(exact[4]);
    c.ldc_inst = r(exact[5]);
    c.idc_requests = r(exact[6]);
    c.ldgsts_issued = r(exact[7]);
    Ok(c)
}

/// The counter slot of `inst` in [`count`]: LDS 1, STS 2, LDG 3, STG 4, LDC 5; `None` for others.
fn slot_of(inst: &Inst) -> Option<usize> {
    match inst.base() {
        "LDS" => Some(1),
        "STS" => Some(2),
        "LDG" => Some(3),
        "STG" => Some(4),
        "LDC" => Some(5),
        _ => None,
    }
}

/// Requests of one LDC execution: 1 for a fixed address (`c[0x0][0x218]`); for an indexed one
/// (`c[0x0][R0+0x224]`, lanes may differ) the requests per execution of its PTX line where the
/// PTX counted any, else 1.
fn requests_per_ldc(inst: &Inst, lines: &HashMap<u32, LineRun>) -> f64 {
    if !inst.constant_indexed() {
        return 1.0;
    }
    match lines.get(&inst.ptx_line) {
        Some(l) if l.count.executed > 0 && l.requests > 0 => {
            l.requests as f64 / l.count.executed as f64
        }
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::listing::parse;

    #[test]
    fn merged_shared_loads_count_once_and_uldc_sends_no_request() {
        let text = ".text.k:\n\
            //## File \"p\", line 1\n/*0000*/ LDC R1, c[0x0][0x28] ;\n\
            /*0010*/ ULDC.64 UR4, c[0x0][0x208] ;\n\
            //## File \"p\", line 2\n/*0020*/ LDS.128 R4, [R0] ;\n\
            //## File \"p\", line 6\n/*0030*/ LDC R3, c[0x0][R2+0x224] ;\n\
            /*0040*/ STS [R0], R3 ;\n/*0050*/ EXIT ;\n";
        let f = parse(text).unwrap().functions.remove(0);
        let run = |e: u64, req: u64| LineRun {
            count: LineCount {
                executed: e,
                threads: 32 * e,
                guarded: false,
            },
            requests: req,
        };
        // PTX lines 2..5 are four ld.shared.f32 that ptxas merged into the LDS.128 of line 2.
        let lines: HashMap<u32, LineRun> = [
            (1, run(4, 0)),
            (2, run(4, 0)),
            (3, run(4, 0)),
            (4, run(4, 0)),
            (5, run(4, 0)),
            (6, run(4, 64)),
        ]
        .into_iter()
        .collect();
        let c = count(&f, &lines, 4, None).unwrap();
        assert_eq!(c.inst_executed, 24);
        assert_eq!(c.shared_ld_inst, 4);
        assert_eq!(c.shared_st_inst, 4);
        assert_eq!(c.ldc_inst, 8);
        // 4 for the fixed LDC, 16 per execution of the indexed one.
        assert_eq!(c.idc_requests, 4 + 64);
        assert_eq!(c.per_line[&6], 12);
    }

    #[test]
    fn a_select_over_parameters_requests_the_words_its_lookups_read() {
        // Two lookups (P0 from lane & 1, P1 warp-uniform) into a 2-element by-value array of
        // parameters: one predicated LDC per element and lookup, at the element's ld.param line.
        let text = ".text.k:\n\
            //## File \"p\", line 1\n/*0000*/ @P0 LDC R0, c[0x0][0x210] ;\n\
            /*0010*/ @P1 LDC R1, c[0x0][0x210] ;\n\
            //## File \"p\", line 2\n/*0020*/ @!P0 LDC R0, c[0x0][0x214] ;\n\
            /*0030*/ @!P1 LDC R1, c[0x0][0x214] ;\n/*0040*/ EXIT ;\n";
        let f = parse(text).unwrap().functions.remove(0);
        let once = LineRun {
            count: LineCount {
                executed: 1,
                threads: 32,
                guarded: false,
            },
            requests: 0,
        };
        let lines: HashMap<u32, LineRun> = [(1, once), (2, once)].into_iter().collect();
        // Not known which have a lane on: all four.
        assert_eq!(count(&f, &lines, 1, None).unwrap().idc_requests, 4);
        // The lookups read 2 words and 1 word: 3 of the LDCs have a lane on.
        let c = count(&f, &lines, 1, Some(3)).unwrap();
        assert_eq!((c.idc_requests, c.ldc_inst), (3, 4));
    }
}

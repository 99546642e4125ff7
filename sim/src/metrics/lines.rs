//! Per-source-line statistics: a launch's per-instruction statistics ([`PcStats`]) summed over
//! the instructions of each CUDA source line, as Nsight Compute's Source page sums SASS
//! instructions per line.
//!
//! An instruction belongs to the line its `.loc` names (the PTX line info NVRTC, nvcc
//! `-lineinfo` and clang `-gline-tables-only` emit; [`crate::ptx::ast::LineLoc`]); an instruction
//! with no `.loc` before it, or one whose `.loc` names line 0 (compiler-generated code), stands
//! for its own PTX line. Lines are ordered by their total cost ([`cost`]), then by the warp
//! instructions they executed: what a line costs over the whole launch, not per execution, so
//! that eight loads executed 131,072 times each rank above a store executed 2,048 times.

use super::PcStats;
use crate::ptx::ast::LineLoc;
use serde::Serialize;

/// Where a line of the view is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Place {
    /// A line of a CUDA (or other) source file: the `.file` index and the 1-based line.
    Source {
        /// The `.file` index of the module's line info.
        file: u32,
        /// 1-based line.
        line: u32,
    },
    /// A PTX line (no line info for the instruction).
    Ptx {
        /// 1-based PTX line.
        line: u32,
    },
}

impl Place {
    /// The place of an instruction at PTX line `ptx_line` with line info `loc`.
    pub fn of(ptx_line: u32, loc: Option<LineLoc>) -> Place {
        match loc {
            Some(l) if l.line > 0 => Place::Source {
                file: l.file,
                line: l.line,
            },
            _ => Place::Ptx { line: ptx_line },
        }
    }
}

/// One line of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineStats {
    /// The source (or PTX) line.
    pub place: Place,
    /// The PTX lines of its executed instructions, ascending.
    pub ptx_lines: Vec<u32>,
    /// Its instructions' statistics summed ([`PcStats::merge`]; `worst` is the execution of any
    /// of them with the most wavefronts).
    pub stats: PcStats,
    /// Its total cost: [`cost`] summed over its instructions.
    pub cost: u64,
    /// Warp instructions it executed: the SASS instructions ptxas attributed to its PTX lines
    /// where the launch was counted on its SASS (`sass::count`), as Nsight Compute's Source page
    /// counts them; else its PTX instructions' executions (`stats.executed`).
    pub warp_insts: u64,
}

/// What an instruction cost the memory pipeline over the launch: the L1 data-path work of its
/// kind, summed over its executions. Global and local accesses cost their sectors, shared ones
/// their wavefronts, indexed constant loads their requests (one per distinct address: the
/// constant cache serializes them); the requests stand for any instruction with requests but
/// neither, so a request is never free. An instruction without memory accesses costs 0.
pub fn cost(s: &PcStats) -> u64 {
    s.sectors.max(s.wavefronts).max(s.requests)
}

/// The per-line view of one launch: `per_pc` as [`crate::run::LaunchResult::per_pc`] (PTX line,
/// text, statistics per instruction), `locs` the line info of each instruction (as long, or
/// shorter: a missing entry is no line info) and `sass` the SASS warp instructions per PTX line
/// ([`crate::run::LaunchResult::sass_per_line`]; empty where the launch was not counted on its
/// SASS). Only executed instructions count; the most costly line first, then the one that
/// executed the most warp instructions, then in source order.
pub fn by_line(
    per_pc: &[(u32, String, PcStats)],
    locs: &[Option<LineLoc>],
    sass: &std::collections::BTreeMap<u32, u64>,
) -> Vec<LineStats> {
    let mut lines: std::collections::BTreeMap<Place, LineStats> = Default::default();
    for (i, (ptx_line, _, s)) in per_pc.iter().enumerate() {
        if s.executed == 0 {
            continue;
        }
        let place = Place::of(*ptx_line, locs.get(i).copied().flatten());
        let l = lines.entry(place).or_insert_with(|| LineStats {
            place,
            ptx_lines: vec![],
            stats: PcStats::default(),
            cost: 0,
            warp_insts: 0,
        });
        if !l.ptx_lines.contains(ptx_line) {
            l.ptx_lines.push(*ptx_line);
        }
        l.stats.merge(s.clone());
        l.cost += cost(s);
    }
    // SASS of PTX lines without an executed instruction (the stack-pointer LDC and the memory
    // descriptor ptxas puts on the `.entry` line): each its own PTX line, so that the lines add up
    // to the launch's warp instructions.
    let covered: std::collections::HashSet<u32> = (per_pc.iter())
        .filter(|(_, _, s)| s.executed > 0)
        .map(|(line, _, _)| *line)
        .collect();
    for &line in sass.keys().filter(|l| !covered.contains(l)) {
        lines.insert(
            Place::Ptx { line },
            LineStats {
                place: Place::Ptx { line },
                ptx_lines: vec![line],
                stats: PcStats::default(),
                cost: 0,
                warp_insts: 0,
            },
        );
    }
    let mut v: Vec<LineStats> = lines.into_values().collect();
    for l in &mut v {
        l.ptx_lines.sort_unstable();
        l.warp_insts = if sass.is_empty() {
            l.stats.executed
        } else {
            l.ptx_lines.iter().filter_map(|p| sass.get(p)).sum()
        };
    }
    v.sort_by(|a, b| {
        b.cost
            .cmp(&a.cost)
            .then(b.warp_insts.cmp(&a.warp_insts))
            .then(a.place.cmp(&b.place))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(executed: u64, requests: u64, sectors: u64, wavefronts: u64) -> PcStats {
        PcStats {
            executed,
            threads: 32 * executed,
            requests,
            sectors,
            wavefronts,
            ..Default::default()
        }
    }

    fn at(file: u32, line: u32) -> Option<LineLoc> {
        Some(LineLoc { file, line, col: 0 })
    }

    #[test]
    fn lines_sum_their_instructions_and_rank_by_total_cost() {
        // Line 10: a store executed 2,048 times, 32 sectors each (65,536; 32 per execution).
        // Line 20: two loads executed 131,072 times, 4 sectors each (2 x 524,288; 4 each).
        // Line 30: an add executed 131,072 times (cost 0). PTX line 7: no line info, as often.
        let per_pc = vec![
            (5, "st".into(), stats(2048, 2048, 65_536, 0)),
            (6, "ld a".into(), stats(131_072, 131_072, 524_288, 0)),
            (7, "mov".into(), stats(131_072, 0, 0, 0)),
            (8, "ld b".into(), stats(131_072, 131_072, 524_288, 0)),
            (9, "add".into(), stats(131_072, 0, 0, 0)),
            (10, "never".into(), stats(0, 0, 0, 0)),
        ];
        let locs = [at(1, 10), at(1, 20), None, at(1, 20), at(1, 30), at(1, 40)];
        let v = by_line(&per_pc, &locs, &Default::default());
        let places: Vec<Place> = v.iter().map(|l| l.place).collect();
        assert_eq!(
            places,
            [
                Place::Source { file: 1, line: 20 },
                Place::Source { file: 1, line: 10 },
                Place::Source { file: 1, line: 30 },
                Place::Ptx { line: 7 },
            ]
        );
        assert_eq!(v[0].ptx_lines, [6, 8]);
        assert_eq!(v[0].cost, 1_048_576);
        assert_eq!(v[0].stats.executed, 262_144);
        assert_eq!(v[0].stats.requests, 262_144);
        assert_eq!(v[0].stats.sectors, 1_048_576);
        assert_eq!(v[1].cost, 65_536);
        // Ties in cost (0) go to the line that executed more, then source lines before PTX
        // lines.
        assert_eq!(v[2].stats.executed, 131_072);
        assert_eq!(v[3].stats.executed, 131_072);
    }

    #[test]
    fn line_zero_and_missing_line_info_fall_back_to_ptx_lines() {
        let per_pc = vec![
            (3, "a".into(), stats(1, 1, 4, 0)),
            (4, "b".into(), stats(1, 1, 0, 2)),
        ];
        let v = by_line(&per_pc, &[at(1, 0)], &Default::default());
        assert_eq!(v[0].place, Place::Ptx { line: 3 });
        assert_eq!(v[1].place, Place::Ptx { line: 4 });
        assert_eq!((v[0].cost, v[1].cost), (4, 2));
    }

    #[test]
    fn a_launch_counted_on_its_sass_counts_each_lines_sass_instructions() {
        // Two PTX lines of one source line, and a third line; ptxas unrolled line 6's loop, so
        // its SASS instructions are not its PTX executions.
        let per_pc = vec![
            (5, "ld".into(), stats(100, 100, 400, 0)),
            (6, "add".into(), stats(400, 0, 0, 0)),
            (7, "st".into(), stats(100, 100, 400, 0)),
        ];
        let locs = [at(1, 10), at(1, 10), at(1, 11)];
        // PTX line 2 (the `.entry` line) has SASS and no PTX instruction.
        let sass = std::collections::BTreeMap::from([(5, 100), (6, 250), (7, 100), (2, 3)]);
        let v = by_line(&per_pc, &locs, &sass);
        assert_eq!(v[0].place, Place::Source { file: 1, line: 10 });
        assert_eq!((v[0].warp_insts, v[0].stats.executed), (350, 500));
        assert_eq!(v[1].warp_insts, 100);
        assert_eq!((v[2].place, v[2].warp_insts), (Place::Ptx { line: 2 }, 3));
        assert_eq!(v.iter().map(|l| l.warp_insts).sum::<u64>(), 453);
        // Without SASS counts, the PTX executions.
        let v = by_line(&per_pc, &locs, &Default::default());
        assert_eq!(v[0].warp_insts, 500);
    }
}

//! How often each SASS basic block ran: the block counts that agree with the SASS's control flow
//! and with what the PTX run counted per PTX line.
//!
//! ptxas does not keep the PTX's blocks: it unrolls loops (sgemm_tiled16's k loop by 4, with a
//! remainder loop), if-converts short branches into predicated code, hoists, duplicates the
//! shuffle reduction for a diverged warp (`BRA.DIV`) and adds its own subroutines (the slow path of
//! a division). So a SASS instruction's count is not its PTX line's count. It is found as the
//! solution of a linear program over the SASS control-flow graph ([`Cfg`]):
//!
//! - **flow**: a block's count is at least that of each edge into it and at most their sum (a warp
//!   that diverged arrives by two edges and reconverges); a block with one successor passes its
//!   count on; a conditional branch sends at most its count along each edge and at least its count
//!   along both together; the entry block runs once per warp; a `BRA.DIV` (taken only by a warp
//!   that is not converged) is not taken where the PTX shows the next warp-wide instruction running
//!   with all 32 lanes;
//! - **memory and barrier instructions** (LDG, STG, LDS, STS, LDL, STL, indexed LDC, ATOM, ATOMS, RED,
//!   SHFL, BAR): ptxas emits exactly one per PTX instruction it keeps, merged vectors aside, so the
//!   counts of the copies of one PTX line sum to the PTX count; a copy ptxas predicated itself
//!   (if-converted: the PTX instruction has no guard) runs at least as often;
//! - **every other instruction**: its line's copies in one block, divided by the fewest it has in
//!   any block, sum to the PTX count (an unrolled body holds four copies of what the remainder loop
//!   holds once);
//! - **LDC of a fixed address** (a kernel parameter) with more than one copy: none; ptxas loads
//!   a parameter again on a path that needs it rather than keep it in a register, so those
//!   copies' counts are not their line's.
//!
//! The three are met in that order of priority (a lexicographic program: the memory instructions'
//! misfit is minimised first, then, holding it, the others', then the instructions issued), since
//! only the first is exact. Where trip counts differ between entries of an unrolled loop, the
//! split between the unrolled body and the remainder is not determined by totals; the program
//! then takes the fewest instructions (the longest unrolled runs).
//!
//! Measured against Nsight Compute's `smsp__inst_executed.sum` on the H200: 84 of the 84 bundled
//! launches (tests/measured_h200.rs) and 38 of the 42 launches of tests/fixtures/suite37 within 3%
//! (its README: `table.py`).

use super::listing::{Function, Inst};
use microlp::{ComparisonOp, LinearExpr, OptimizationDirection, Problem};
use std::collections::HashMap;

/// How a basic block ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Falls through or branches unconditionally: one successor (none at the function's end).
    One,
    /// A guarded branch: the target and the next block.
    Cond,
    /// `BRA.DIV`: the target only for a warp that is not converged.
    Div,
    /// `EXIT`/`RET` unguarded, or an indirect branch: no successor in the function.
    Stop,
    /// A guarded `EXIT`/`RET`: the next block for the lanes that stay.
    GuardedStop,
}

/// One basic block: instructions `start..end` of the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// First instruction.
    pub start: usize,
    /// One past the last.
    pub end: usize,
    /// Successor blocks: the branch target first, then the next block.
    pub succ: Vec<usize>,
    /// How it ends.
    pub ends: End,
}

/// The basic blocks of a function, in address order; block 0 is the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cfg {
    /// The blocks.
    pub blocks: Vec<Block>,
    /// The block of each instruction.
    pub block_of: Vec<usize>,
}

impl Cfg {
    /// Splits `f` at branch targets and after every instruction that ends a block.
    pub fn new(f: &Function) -> Cfg {
        let n = f.insts.len();
        let mut start = vec![false; n + 1];
        start[0] = true;
        for &l in &f.labels {
            start[l] = true;
        }
        for (i, inst) in f.insts.iter().enumerate() {
            if inst.ends_block() {
                start[i + 1] = true;
            }
            if let Some(t) = inst.target {
                start[t] = true;
            }
        }
        let firsts: Vec<usize> = (0..n).filter(|&i| start[i]).collect();
        let mut block_of = vec![0; n];
        for (b, &s) in firsts.iter().enumerate() {
            let e = firsts.get(b + 1).copied().unwrap_or(n);
            block_of[s..e].fill(b);
        }
        let blocks = firsts
            .iter()
            .enumerate()
            .map(|(b, &s)| {
                let e = firsts.get(b + 1).copied().unwrap_or(n);
                let next = (e < n).then_some(b + 1);
                let last = &f.insts[e - 1];
                let target = last.target.map(|t| block_of[t]);
                let guarded = !last.guard.is_empty() || uniform_condition(last);
                let (ends, succ): (End, Vec<usize>) = match last.base() {
                    "BRA" | "JMP" if last.opcode.starts_with("BRA.DIV") => {
                        (End::Div, target.into_iter().chain(next).collect())
                    }
                    "BRA" | "JMP" if guarded => {
                        (End::Cond, target.into_iter().chain(next).collect())
                    }
                    "BRA" | "JMP" => (End::One, target.into_iter().collect()),
                    "EXIT" | "RET" | "KILL" if guarded => {
                        (End::GuardedStop, next.into_iter().collect())
                    }
                    "EXIT" | "RET" | "KILL" | "BRX" | "JMX" => (End::Stop, vec![]),
                    _ => (End::One, next.into_iter().collect()),
                };
                Block {
                    start: s,
                    end: e,
                    succ,
                    ends,
                }
            })
            .collect();
        Cfg { blocks, block_of }
    }
}

/// `BRA.U !UP0, ...`: a branch on a uniform predicate operand rather than a guard.
fn uniform_condition(i: &Inst) -> bool {
    let first = i.operands.split(',').next().unwrap_or("").trim();
    let p = first.trim_start_matches('!');
    (p.starts_with('P') || p.starts_with("UP")) && p[1..].chars().any(|c| c.is_ascii_digit())
}

/// What the PTX run counted for one PTX line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineCount {
    /// Warp-level executions (a warp with any lane active counts once).
    pub executed: u64,
    /// Lanes active over those executions.
    pub threads: u64,
    /// The PTX instruction has a guard (`@%p1 st...`): ptxas's predicated copy is then its own.
    pub guarded: bool,
}

/// Opcodes of which ptxas emits one per PTX instruction (merged vectors aside).
fn is_memory(i: &Inst) -> bool {
    i.is_memory_access() || matches!(i.base(), "LDC" | "SHFL" | "BAR")
}

/// Whether `i` is an LDC of a fixed constant-bank address (`c[0x0][0x21c]`, `c[0x0][RZ+0x10]`),
/// which ptxas may rematerialize on any path, as opposed to an indexed one (`c[0x3][R8+0xc]`).
fn fixed_ldc(i: &Inst) -> bool {
    i.base() == "LDC" && !i.constant_indexed()
}

/// The count of every block of `cfg` (of function `f`), in warps: the solution of the program of
/// the module docs, for a launch whose PTX lines ran as `lines` says and whose `warps` warps each
/// entered the function once. Errors: the solver failed (the caller keeps the PTX estimate).
pub fn block_counts(
    f: &Function,
    cfg: &Cfg,
    lines: &HashMap<u32, LineCount>,
    warps: u64,
) -> Result<Vec<f64>, String> {
    if warps == 0 || cfg.blocks.is_empty() {
        return Ok(vec![0.0; cfg.blocks.len()]);
    }
    let w = warps as f64;
    // Anchors: (line's count in warps, per block multiplicity, at-least?) by class.
    struct Anchor {
        count: f64,
        blocks: Vec<(usize, f64)>,
        at_least: bool,
    }
    let mut strong: HashMap<u32, (HashMap<usize, f64>, bool)> = HashMap::new();
    let mut weak: HashMap<u32, HashMap<usize, f64>> = HashMap::new();
    // Fixed-address LDCs per PTX line: more than one is a parameter ptxas loads again.
    let mut fixed: HashMap<u32, usize> = HashMap::new();
    for inst in f.insts.iter().filter(|i| fixed_ldc(i)) {
        *fixed.entry(inst.ptx_line).or_default() += 1;
    }
    for (i, inst) in f.insts.iter().enumerate() {
        let Some(lc) = lines.get(&inst.ptx_line).filter(|l| l.executed > 0) else {
            continue;
        };
        let b = cfg.block_of[i];
        let converted = !inst.guard.is_empty() && !lc.guarded;
        if fixed_ldc(inst) && fixed[&inst.ptx_line] > 1 {
            // A kernel parameter that ptxas loads again where a path needs it, rather than keep
            // it in a register (lud_perimeter: `LDC R3, c[0x0][0x21c]` at the entry and again,
            // as `LDC R5`, in the column block's path): its copies do not sum to its line's
            // count, and they anchor nothing (suite37 peri's idc__requests were 25% short).
            continue;
        }
        if is_memory(inst) {
            let e = strong
                .entry(inst.ptx_line)
                .or_insert((HashMap::new(), true));
            *e.0.entry(b).or_default() += 1.0;
            e.1 &= converted;
        } else if !converted {
            *weak.entry(inst.ptx_line).or_default().entry(b).or_default() += 1.0;
        }
    }
    let mut tiers: [Vec<Anchor>; 2] = [vec![], vec![]];
    for (line, (blocks, at_least)) in &strong {
        tiers[0].push(Anchor {
            count: lines[line].executed as f64 / w,
            blocks: blocks.iter().map(|(&b, &m)| (b, m)).collect(),
            at_least: *at_least,
        });
    }
    for (line, blocks) in &weak {
        if strong.contains_key(line) {
            continue;
        }
        let fewest = blocks.values().copied().fold(f64::INFINITY, f64::min);
        tiers[1].push(Anchor {
            count: lines[line].executed as f64 / w,
            blocks: blocks.iter().map(|(&b, &m)| (b, m / fewest)).collect(),
            at_least: false,
        });
    }
    for t in &mut tiers {
        // HashMap order would make the solver's path (and its last digits) vary run to run.
        for a in t.iter_mut() {
            a.blocks.sort_by_key(|&(b, _)| b);
        }
        t.sort_by(|a, b| {
            let key = |x: &Anchor| {
                x.blocks
                    .iter()
                    .map(|&(b, m)| (b, m.to_bits()))
                    .collect::<Vec<_>>()
            };
            key(a).cmp(&key(b)).then(a.count.total_cmp(&b.count))
        });
    }
    let full = |i: usize| {
        lines
            .get(&f.insts[i].ptx_line)
            .is_some_and(|l| l.executed > 0 && l.threads == 32 * l.executed)
    };

    // Stage k minimises objective k holding stages < k at their optimum (plus a tolerance).
    let mut held: Vec<(usize, f64)> = vec![];
    let mut last = vec![];
    for stage in 0..3 {
        let mut p = Problem::new(OptimizationDirection::Minimize);
        let len = |b: &Block| (b.end - b.start) as f64;
        let obj_x = |b: &Block| if stage == 2 { len(b) } else { 0.0 };
        let x: Vec<_> = cfg
            .blocks
            .iter()
            .map(|b| p.add_var(obj_x(b), (0.0, f64::INFINITY)))
            .collect();
        let mut edges = vec![];
        for (a, b) in cfg.blocks.iter().enumerate() {
            for &s in &b.succ {
                edges.push((a, s, p.add_var(0.0, (0.0, f64::INFINITY))));
            }
        }
        // Slack pairs per anchor, weighted by the inverse of its count (relative misfit).
        let mut objectives: [Vec<(microlp::Variable, f64)>; 2] = [vec![], vec![]];
        let mut slack = vec![];
        for (t, tier) in tiers.iter().enumerate() {
            for a in tier {
                let wt = 1.0 / a.count.max(1e-9);
                let on = |k: usize| if stage == k { wt } else { 0.0 };
                let over = p.add_var(if a.at_least { 0.0 } else { on(t) }, (0.0, f64::INFINITY));
                let under = p.add_var(on(t), (0.0, f64::INFINITY));
                objectives[t].push((under, wt));
                if !a.at_least {
                    objectives[t].push((over, wt));
                }
                slack.push((t, over, under));
            }
        }
        let expr = |terms: &[(microlp::Variable, f64)]| {
            let mut e = LinearExpr::empty();
            for &(v, c) in terms {
                e.add(v, c);
            }
            e
        };
        // Entry: once per warp, plus any loop back to it.
        let mut entry = vec![(x[0], 1.0)];
        entry.extend(
            edges
                .iter()
                .filter(|e| e.1 == 0)
                .map(|&(_, _, y)| (y, -1.0)),
        );
        p.add_constraint(expr(&entry), ComparisonOp::Eq, 1.0);
        for (b, &xb) in x.iter().enumerate().skip(1) {
            let ins: Vec<_> = edges.iter().filter(|e| e.1 == b).map(|e| e.2).collect();
            let mut sum = vec![(xb, 1.0)];
            sum.extend(ins.iter().map(|&y| (y, -1.0)));
            p.add_constraint(expr(&sum), ComparisonOp::Le, 0.0);
            for &y in &ins {
                p.add_constraint(expr(&[(y, 1.0), (xb, -1.0)]), ComparisonOp::Le, 0.0);
            }
        }
        for (a, blk) in cfg.blocks.iter().enumerate() {
            let outs: Vec<_> = edges.iter().filter(|e| e.0 == a).collect();
            match blk.ends {
                End::One => {
                    if let Some(&&(_, _, y)) = outs.first() {
                        p.add_constraint(expr(&[(y, 1.0), (x[a], -1.0)]), ComparisonOp::Eq, 0.0);
                    }
                }
                End::Cond | End::Div => {
                    for &&(_, _, y) in &outs {
                        p.add_constraint(expr(&[(y, 1.0), (x[a], -1.0)]), ComparisonOp::Le, 0.0);
                    }
                    let mut both = vec![(x[a], 1.0)];
                    both.extend(outs.iter().map(|e| (e.2, -1.0)));
                    p.add_constraint(expr(&both), ComparisonOp::Le, 0.0);
                    // A converged warp does not take BRA.DIV: the next warp-wide instruction
                    // ran with all lanes wherever the PTX ran it.
                    if blk.ends == End::Div && blk.end < f.insts.len() && full(blk.end) {
                        if let Some(&&(_, _, y)) =
                            outs.iter().find(|e| Some(e.1) == blk.succ.first().copied())
                        {
                            p.add_constraint(expr(&[(y, 1.0)]), ComparisonOp::Eq, 0.0);
                        }
                    }
                }
                End::GuardedStop => {
                    for &&(_, _, y) in &outs {
                        p.add_constraint(expr(&[(y, 1.0), (x[a], -1.0)]), ComparisonOp::Le, 0.0);
                    }
                }
                End::Stop => {}
            }
        }
        let mut k = 0;
        for tier in &tiers {
            for a in tier {
                let (_, over, under) = slack[k];
                k += 1;
                let mut terms: Vec<_> = a.blocks.iter().map(|&(b, m)| (x[b], m)).collect();
                terms.push((over, -1.0));
                terms.push((under, 1.0));
                p.add_constraint(expr(&terms), ComparisonOp::Eq, a.count);
            }
        }
        for &(t, bound) in &held {
            p.add_constraint(expr(&objectives[t]), ComparisonOp::Le, bound);
        }
        // microlp may panic on a degenerate problem; that only costs the SASS counts.
        let solved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p.solve()))
            .map_err(|_| "the linear program's solver failed".to_string())?
            .map_err(|e| format!("the linear program has no solution ({e})"))?;
        if stage < 2 {
            let v = solved.objective();
            held.push((stage, v * (1.0 + 1e-6) + 1e-6));
        }
        last = x.iter().map(|&v| *solved.var_value(v) * w).collect();
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::listing::parse;

    fn listing(body: &str) -> Function {
        let text = format!(".text.k:\n{body}");
        parse(&text).unwrap().functions.remove(0)
    }

    fn counts(lines: &[(u32, u64)]) -> HashMap<u32, LineCount> {
        lines
            .iter()
            .map(|&(l, e)| {
                (
                    l,
                    LineCount {
                        executed: e,
                        threads: 32 * e,
                        guarded: false,
                    },
                )
            })
            .collect()
    }

    /// A loop unrolled by 2 with a remainder loop, as ptxas emits one: the LDG of PTX line 3 has
    /// two copies in the unrolled body and one in the remainder.
    const UNROLLED: &str = "\
//## File \"p\", line 1
/*0000*/ ISETP.GE.AND P0, PT, R0, 0x2, PT ;
/*0010*/ @!P0 BRA `(.L_x_1) ;
.L_x_0:
//## File \"p\", line 3
/*0020*/ LDG.E R2, desc[UR4][R4.64] ;
/*0030*/ LDG.E R3, desc[UR4][R4.64+0x4] ;
//## File \"p\", line 4
/*0040*/ IADD3 R0, R0, -0x2, RZ ;
/*0050*/ ISETP.GT.AND P1, PT, R0, 0x1, PT ;
/*0060*/ @P1 BRA `(.L_x_0) ;
.L_x_1:
//## File \"p\", line 5
/*0070*/ ISETP.NE.AND P0, PT, R0, RZ, PT ;
/*0080*/ @!P0 EXIT ;
//## File \"p\", line 3
/*0090*/ LDG.E R2, desc[UR4][R4.64] ;
//## File \"p\", line 6
/*00a0*/ EXIT ;
";

    #[test]
    fn the_blocks_of_an_unrolled_loop() {
        let f = listing(UNROLLED);
        let cfg = Cfg::new(&f);
        let shape: Vec<(usize, usize, Vec<usize>, End)> = cfg
            .blocks
            .iter()
            .map(|b| (b.start, b.end, b.succ.clone(), b.ends))
            .collect();
        assert_eq!(
            shape,
            [
                (0, 2, vec![2, 1], End::Cond),
                (2, 7, vec![1, 2], End::Cond),
                (7, 9, vec![3], End::GuardedStop),
                (9, 11, vec![], End::Stop),
            ]
        );
    }

    #[test]
    fn an_odd_trip_count_splits_between_the_body_and_the_remainder() {
        // 10 warps, each 5 trips of the PTX loop: 2 unrolled passes and 1 remainder each.
        let f = listing(UNROLLED);
        let cfg = Cfg::new(&f);
        let x = block_counts(
            &f,
            &cfg,
            &counts(&[(1, 10), (3, 50), (4, 50), (5, 10), (6, 10)]),
            10,
        )
        .unwrap();
        let r: Vec<i64> = x.iter().map(|v| v.round() as i64).collect();
        assert_eq!(r, [10, 20, 10, 10]);
        let issued: f64 = cfg
            .blocks
            .iter()
            .zip(&x)
            .map(|(b, c)| (b.end - b.start) as f64 * c)
            .sum();
        assert_eq!(issued.round() as i64, 2 * 10 + 5 * 20 + 2 * 10 + 2 * 10);
    }

    #[test]
    fn an_if_converted_load_runs_as_often_as_its_block() {
        // PTX: `@%p bra skip; ld.global` (line 3 unguarded, executed by 4 of 10 warps); ptxas
        // predicates the LDG instead: it issues in all 10.
        let f = listing(
            "//## File \"p\", line 1\n/*0000*/ ISETP.GE.AND P0, PT, R0, 0x2, PT ;\n\
             //## File \"p\", line 3\n/*0010*/ @!P0 LDG.E R2, desc[UR4][R4.64] ;\n\
             //## File \"p\", line 5\n/*0020*/ EXIT ;\n",
        );
        let cfg = Cfg::new(&f);
        let x = block_counts(&f, &cfg, &counts(&[(1, 10), (3, 4), (5, 10)]), 10).unwrap();
        assert_eq!(x.iter().map(|v| v.round() as i64).collect::<Vec<_>>(), [10]);
    }

    #[test]
    fn a_converged_warp_does_not_take_bra_div() {
        let f = listing(
            "//## File \"p\", line 1\n/*0000*/ BRA.DIV UR4, `(.L_x_1) ;\n\
             //## File \"p\", line 2\n/*0010*/ SHFL.BFLY PT, R2, R0, 0x1, 0x1f ;\n\
             /*0020*/ EXIT ;\n.L_x_1:\n/*0030*/ WARPSYNC.ALL ;\n\
             /*0040*/ SHFL.BFLY PT, R2, R0, 0x1, 0x1f ;\n/*0050*/ EXIT ;\n",
        );
        let cfg = Cfg::new(&f);
        let x = block_counts(&f, &cfg, &counts(&[(1, 8), (2, 8)]), 8).unwrap();
        assert_eq!(
            x.iter().map(|v| v.round() as i64).collect::<Vec<_>>(),
            [8, 8, 0]
        );
    }
}

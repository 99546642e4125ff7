//! The invariant entries ([`LoopEntry::invariant`]): those whose values stay the same whenever they run
//! on one register file, the registers they write, and the next entry that is not invariant.

use super::entry::{EntryOp, LoopEntry};
use crate::exec::decode::{DInst, NO_REG};

/// The registers the invariant entries of `pre` write ([`LoopEntry::invariant`]).
pub fn invariant_registers(pre: &[LoopEntry]) -> Vec<u16> {
    (pre.iter().filter(|p| p.invariant))
        .filter_map(|p| p.writes().map(|(d, _)| d))
        .collect()
}

/// Sets each entry's [`LoopEntry::next`] (once [`invariants`] has marked them), from the last back.
pub fn mark_next(pre: &mut [LoopEntry]) {
    let mut next = pre.len() as u32;
    for (pc, p) in pre.iter_mut().enumerate().rev() {
        p.next = next;
        if !p.invariant {
            next = pc as u32;
        }
    }
}

/// Marks the invariant entries ([`LoopEntry::invariant`]) of the program `insts` (whose entries are
/// `pre`): parameters and broadcasts first (and `%tid` when `tid_fixed`: each register file runs
/// the same warp of every block, with the same `%tid`), then forms of their registers, until
/// none is added.
pub fn invariants(pre: &mut [LoopEntry], insts: &[DInst], tid_fixed: bool) {
    let regs = insts
        .iter()
        .flat_map(|i| i.dst)
        .filter(|&d| d != NO_REG)
        .map(|d| usize::from(d) + 1)
        .max()
        .unwrap_or(0);
    let mut writers = vec![0u32; regs];
    for d in insts.iter().flat_map(|i| i.dst).filter(|&d| d != NO_REG) {
        writers[usize::from(d)] += 1;
    }
    // Registers whose only writer is an invariant entry.
    let mut fixed = vec![false; regs];
    loop {
        let mut added = false;
        for p in pre.iter_mut().filter(|p| !p.invariant && p.plain()) {
            let Some((d, srcs)) = p.writes() else {
                continue;
            };
            let sole = writers.get(usize::from(d)) == Some(&1);
            let from_fixed = srcs
                .iter()
                .flatten()
                .all(|&r| r != d && fixed.get(usize::from(r)) == Some(&true));
            let varies =
                matches!(p.op, EntryOp::Nop) || (!tid_fixed && matches!(p.op, EntryOp::Tid { .. }));
            if sole && from_fixed && !varies {
                p.invariant = true;
                fixed[usize::from(d)] = true;
                added = true;
            }
        }
        if !added {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::fast::tests::inst;
    use crate::exec::fast::{AluForm, LaneOp, Opd};
    use crate::ptx::inst::Op;

    /// Parameters and broadcasts are invariant, and forms of their registers, when each is
    /// its register's only writer; a register written by a general instruction, twice, or by
    /// the form itself is not.
    #[test]
    fn invariant_entries_follow_their_sources() {
        let with_dst = |d: u16| {
            let mut i = inst(Op::Exit, &[]);
            i.dst[0] = d;
            i
        };
        let form = |d: u16, a: Opd, b: Opd| {
            EntryOp::AluForm(AluForm {
                kernel: LaneOp::Add(u64::MAX),
                d,
                a,
                b,
                c: Opd::Imm(0),
            })
        };
        let bcast = |d: u16| EntryOp::Bcast {
            d,
            v: 7,
            imc: false,
        };
        let ops = [
            form(2, Opd::Reg(1), Opd::Imm(4)), // r2 = r1 + 4: invariant once r1 is
            bcast(1),                          // r1 = 7
            EntryOp::General,                  // r4 = a load
            form(3, Opd::Reg(2), Opd::Reg(4)), // r3 = r2 + r4: r4 varies
            bcast(5),                          // r5 = 7, written twice
            bcast(5),
            form(6, Opd::Reg(6), Opd::Imm(1)), // r6 = r6 + 1: itself
            EntryOp::Param {
                d: 7,
                v: 1,
                wide: true,
            },
            EntryOp::Tid {
                d: 8,
                c: 0,
                m: u64::MAX,
            },
            form(9, Opd::Reg(8), Opd::Reg(7)), // r9 = %tid.x + r7: invariant with %tid
            EntryOp::Ctaid {
                d: 10,
                c: 0,
                m: u64::MAX,
            },
        ];
        let dsts = [2, 1, 4, 3, 5, 5, 6, 7, 8, 9, 10];
        let insts: Vec<DInst> = dsts.iter().map(|&d| with_dst(d)).collect();
        let mut pre: Vec<LoopEntry> = ops
            .iter()
            .map(|&op| LoopEntry {
                op,
                guard: NO_REG,
                negated: false,
                run_end: 0,
                seg_end: 0,
                invariant: false,
                next: 0,
            })
            .collect();
        let fresh = pre.clone();
        invariants(&mut pre, &insts, false);
        let got: Vec<bool> = pre.iter().map(|p| p.invariant).collect();
        let (t, f) = (true, false);
        assert_eq!(got, [t, t, f, f, f, f, f, t, f, f, f]);
        // Register files that each run one warp of every block: `%tid` is invariant too.
        let mut pre = fresh;
        invariants(&mut pre, &insts, true);
        let got: Vec<bool> = pre.iter().map(|p| p.invariant).collect();
        assert_eq!(got, [t, t, f, f, f, f, f, t, t, t, f]);
        // Each entry's next entry that is not invariant.
        mark_next(&mut pre);
        let next: Vec<u32> = pre.iter().map(|p| p.next).collect();
        assert_eq!(next, [2, 2, 3, 4, 5, 6, 10, 10, 10, 10, 11]);
    }
}

//! Pre-decoded forms of the common integer instructions (wasmi's idea: decide once per launch what
//! an instruction is, not once per execution).
//!
//! Index arithmetic dominates ordinary kernels: `mad.lo.s32`, `mul.wide.s32`, `add.s64`,
//! `cvt.u64.u32`, `cvta.to.global.u64`, `setp.ge.s32` and the like, each on registers or an
//! immediate. [`AluForm::of`] turns such an instruction into a [`LaneOp`] (the operation with its
//! widths and masks worked out) and resolved operands; [`AluForm::run`] executes it for a warp with
//! one dispatch and one plain 32-lane loop. The common f32 arithmetic (`add`, `sub`, `mul`,
//! `fma`/`mad` to nearest, without `.sat`) has forms too. Everything else (other floats, `.sat`,
//! `.hi`, special registers, negated predicates, other operations) keeps the general path of the
//! warp loop (`exec::step`), which [`AluForm::of`] signals with `None`.
//!
//! [`forms`] makes the table the warp loop reads, one [`LoopEntry`] per instruction: the forms, and
//! the [`EntryOp`] entries a converged warp runs without the general path (kernel parameters, moves
//! of values uniform over a launch or a block, `%tid`, branches and exits).
//!
//! Each kernel computes exactly what the general path computes ([`super::alu::alu_warp`],
//! [`super::alu::compare_warp`] and the `mov`, `cvt` and `cvta` arms of the warp loop); the tests
//! below check that for every kernel on random operands and masks.
//!
//! The parts, each re-exported here: `kernel` (the operations, [`LaneOp`], and their operands),
//! `form` (the forms: which instructions have one, and their lane loops), `entry` (the table's
//! entries, [`EntryOp`] and [`LoopEntry`], the memory plans, and the ends of runs and segments) and
//! `invariant` (the entries whose values stay the same over a launch). The test switches that
//! pick other paths are in `tests` here.

mod entry;
mod form;
mod invariant;
mod kernel;

pub use entry::{forms, EntryOp, LoopEntry, MemPlan, Word};
pub use form::AluForm;
pub use invariant::{invariant_registers, invariants, mark_next};
pub use kernel::{FlopKind, LaneOp, Opd, Ord4};

#[cfg(test)]
pub(crate) mod tests {
    use crate::exec::decode::{DInst, Src, NO_REG};
    use crate::ptx::inst::Op;

    /// An instruction `op d=r0, sources` (registers r1.. or immediates).
    pub(super) fn inst(op: Op, srcs: &[Src]) -> DInst {
        let mut src = [Src::Imm(0); 4];
        src[..srcs.len()].copy_from_slice(srcs);
        DInst {
            op,
            guard: NO_REG,
            guard_negated: false,
            dst: [0, NO_REG, NO_REG, NO_REG],
            src,
            nsrc: srcs.len() as u8,
            addr: None,
            target: 0,
        }
    }
}

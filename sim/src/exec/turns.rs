//! Where a warp's turn ends in the functional pass: the SM's co-resident warps take turns, each
//! issuing until it would stall on a load, so that the caches see their accesses interleaved as
//! the GPU's warp schedulers issue them (greedy-then-oldest: a warp issues until it stalls, then
//! the next warp in age order), not one warp's accesses after another's.
//!
//! The timing pass ([`crate::timing::replay`]) issues a warp's instructions in dataflow order
//! within a basic block (ptxas hoists independent loads above their uses) and in order across a
//! branch that is one in SASS (a branch issues after every instruction before it; ptxas
//! if-converts short ones into predicated code, which is no branch). So a warp that has issued a
//! load goes on issuing, through its basic block, the loads and stores that do not need that
//! load's value; it stalls
//! - at a memory instruction whose address, value or guard needs a value loaded earlier in its
//!   basic block (directly or through the instructions that read it), and
//! - at a branch, taken or not, that is not if-converted ([`FENCE`]): the instructions before it
//!   that use the loaded values wait for them, and the branch for them (the next iteration of a
//!   loop issues after the uses of this one's loads),
//!
//! and the next warp takes its turn. A turn of a warp that has issued no load goes on (stores
//! and ALU work do not stall it). Barriers and exits end a turn too.
//!
//! This is what makes the loads of one loop iteration of all warps reach the L1 before any
//! warp's loads of the next (warps that read the same lines in the same iteration hit in L1 as
//! on the GPU), and a value every warp loads before a loop be read by all of them before any of
//! them stores it after the loop (as on the GPU, where the loop's ALU work keeps them apart).
//!
//! Which warp takes the next turn is the launch's [`Order`]: by default the one the replay would
//! issue first ([`crate::timing::Pace`]: warps whose loads hit L1 come back sooner than warps
//! whose loads miss, as on the GPU); [`Order::Rounds`] and [`Order::Serial`] are the orders
//! before it, kept to measure the choice ([`crate::trace::order`]).

use super::decode::{DInst, Program, Src, NO_REG};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::{Op, WmmaOp};

/// The order in which the functional pass runs the turns of an SM's co-resident warps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// The warp the replay would issue first takes the next turn ([`crate::timing::Pace`]): the
    /// one ready first, the oldest on a tie.
    #[default]
    Paced,
    /// [`Order::Paced`], and a turn also yields at a memory instruction once another warp is
    /// ready to issue ([`crate::timing::Pace::deadline`]): the accesses of warps of different
    /// schedulers that issue in the same cycles interleave one memory instruction at a time.
    /// It agrees with the replay better still (`tests/order.rs`), but the time the replay then
    /// predicts is further from the H200's (fit set 6.0% against 5.9%, held-out 38.0% against
    /// 30.0%, `validate report`): not the default until the replay's other rules are
    /// re-examined under it.
    Interleaved,
    /// Each block's running warps take a turn in warp order, the blocks in dispatch order,
    /// round after round, whatever their loads' latencies.
    Rounds,
    /// A warp runs until it exits or waits at a barrier, then the next (no turns).
    Serial,
}

/// The turn ends before this instruction if the warp has issued a load in it.
pub const WAITS: u8 = 1;
/// The instruction loads a value (a load other than `ld.param`, an atomic that returns one):
/// once it is issued, the warp's turn ends at its next stall.
pub const LOADS: u8 = 2;
/// A branch that is one in SASS (not if-converted): the turn ends after it if the warp has
/// issued a load in it.
pub const FENCE: u8 = 4;
/// A load, store or atomic (not of `.param`): the turn may yield before it
/// ([`crate::exec::step::Ctx::deadline`]).
pub const MEMORY: u8 = 8;

/// Per instruction of `program`, its [`WAITS`], [`LOADS`] and [`FENCE`] bits; `if_converted`
/// says which branches ptxas turns into predicated code ([`crate::timing::sass::Profile::skipped`]).
///
/// A register carries a load's value from the load on through the instructions that read it,
/// within the load's basic block (from a branch target or the instruction after a branch, exit
/// or barrier, to the next such boundary).
pub fn flags(program: &Program, if_converted: impl Fn(u32) -> bool) -> Vec<u8> {
    let insts = &program.insts;
    let mut starts = vec![false; insts.len() + 1];
    for (pc, i) in insts.iter().enumerate() {
        if matches!(i.op, Op::Bra) {
            if let Some(s) = starts.get_mut(i.target as usize) {
                *s = true;
            }
        }
        if ends_block(i) {
            starts[pc + 1] = true;
        }
    }
    let mut carries = vec![false; program.num_regs];
    let mut set: Vec<u16> = Vec::new();
    let mut out = vec![0u8; insts.len()];
    for (pc, i) in insts.iter().enumerate() {
        if starts[pc] {
            for r in set.drain(..) {
                carries[usize::from(r)] = false;
            }
        }
        // `sust`'s values are in the operand table, not its sources.
        let values = match i.op {
            Op::Sust(s) => program
                .operands
                .get(i.target as usize..i.target as usize + usize::from(s.vec))
                .unwrap_or(&[]),
            _ => &[],
        };
        let needs = (sources(i).chain(values.iter().copied()))
            .any(|r| carries.get(usize::from(r)).copied().unwrap_or(false));
        if needs && is_memory(i) {
            out[pc] |= WAITS;
        }
        if loads(i) {
            out[pc] |= LOADS;
        }
        if is_memory(i) && !matches!(i.op, Op::Ld(m) | Op::St(m) if m.space == StateSpace::Param) {
            out[pc] |= MEMORY;
        }
        if matches!(i.op, Op::Bra) && !if_converted(pc as u32) {
            out[pc] |= FENCE;
        }
        if needs || loads(i) {
            for &d in i.dst.iter().filter(|&&d| d != NO_REG) {
                if let Some(c) = carries.get_mut(usize::from(d)) {
                    if !*c {
                        *c = true;
                        set.push(d);
                    }
                }
            }
        }
    }
    out
}

/// The registers `i` reads: operands, the address's base and the guard.
fn sources(i: &DInst) -> impl Iterator<Item = u16> + '_ {
    let reg = |s: &Src| match s {
        Src::Reg(r) | Src::NotPred(r) => Some(*r),
        _ => None,
    };
    (i.src[..usize::from(i.nsrc)].iter().filter_map(reg))
        .chain(i.addr.as_ref().and_then(|a| reg(&a.base)))
        .chain((i.guard != NO_REG).then_some(i.guard))
}

/// A load, store or atomic: an instruction that goes to a memory pipe.
fn is_memory(i: &DInst) -> bool {
    matches!(
        i.op,
        Op::Ld(_)
            | Op::St(_)
            | Op::Atom(_)
            | Op::Red(_)
            | Op::CpAsync(_)
            | Op::Ldmatrix(_)
            | Op::Stmatrix(_)
            | Op::Wmma(WmmaOp::Load { .. } | WmmaOp::Store { .. })
            | Op::Tex(_)
            | Op::Suld(_)
            | Op::Sust(_)
    )
}

/// An instruction whose result comes back from memory with a memory latency.
fn loads(i: &DInst) -> bool {
    match i.op {
        Op::Ld(m) => m.space != StateSpace::Param,
        Op::Atom(_)
        | Op::Ldmatrix(_)
        | Op::Wmma(WmmaOp::Load { .. })
        | Op::Tex(_)
        | Op::Suld(_) => true,
        _ => false,
    }
}

/// The instruction ends its basic block.
fn ends_block(i: &DInst) -> bool {
    matches!(
        i.op,
        Op::Bra | Op::Exit | Op::Ret | Op::BarSync | Op::BarRed(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::decode::SymbolAddr;
    use std::collections::HashMap;

    /// The kernel `k` of `body`, with registers `%rd1..7`, `%r1..7`, `%p1..3`.
    fn program(body: &str) -> Program {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n{body}\n}}\n"
        );
        let m = crate::ptx::parse(&text, "t.ptx").unwrap();
        let f = m.entry("k").unwrap();
        let symbols = HashMap::from([("p".to_string(), SymbolAddr::Param(0))]);
        crate::exec::decode::decode(f, &symbols, &text, "t.ptx").unwrap()
    }

    #[test]
    fn a_load_whose_address_needs_a_loaded_value_waits_and_an_independent_one_does_not() {
        let p = program(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.u32 %r1, [%rd1];\n\
             ld.global.u32 %r2, [%rd1+4];\n\
             mul.wide.u32 %rd2, %r1, 4;\n\
             add.s64 %rd3, %rd1, %rd2;\n\
             ld.global.u32 %r3, [%rd3];\n\
             st.global.u32 [%rd1], %r2;\n\
             st.global.u32 [%rd1+8], 7;\n\
             exit;",
        );
        let f = flags(&p, |_| false);
        // ld.param: neither loads (for turns) nor waits, nor is it a memory instruction.
        assert_eq!(f[0], 0);
        assert_eq!(f[1], LOADS | MEMORY);
        assert_eq!(f[2], LOADS | MEMORY);
        assert_eq!(f[3], 0, "an ALU instruction never waits");
        assert_eq!(f[5], LOADS | WAITS | MEMORY, "its address comes from %r1");
        assert_eq!(f[6], WAITS | MEMORY, "its value is a loaded one");
        assert_eq!(f[7], MEMORY);
    }

    #[test]
    fn a_loaded_value_carries_only_within_its_basic_block() {
        let p = program(
            "ld.param.u64 %rd1, [p];\n\
             ld.global.u32 %r1, [%rd1];\n\
             L: add.s32 %r1, %r1, 1;\n\
             st.global.u32 [%rd1], %r1;\n\
             setp.lt.s32 %p1, %r1, 10;\n\
             @%p1 bra L;\n\
             exit;",
        );
        let f = flags(&p, |_| false);
        assert_eq!(f[1], LOADS | MEMORY);
        assert_eq!(f[3], MEMORY, "the branch target starts a new block");
        assert_eq!(f[5], FENCE);
        assert_eq!(
            flags(&p, |pc| pc == 5)[5],
            0,
            "an if-converted branch is no fence"
        );
    }
}

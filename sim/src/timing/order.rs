//! Memory order within a basic block, as ptxas keeps it: a load that may read what an earlier
//! store of its block wrote issues after that store. A pure function of the decoded program.
//!
//! The timing replay issues a warp's instructions in dataflow order within a basic block, because
//! ptxas schedules independent instructions, loads included, above the instructions they do not
//! depend on. It does not move a load above a store that may write the same bytes: the SASS of
//! suite37's `stencil3d_7pt` (`tests/fixtures/suite37/sass/stencil.sass`, ptxas 12.9, sm_90), whose
//! PTX loop body holds four z steps of five `ld.global.f32` and one `st.global.f32` each (input and
//! output are two pointer parameters, which may alias), keeps every step's LDGs after the STG of
//! the step before. A warp issues in order, and the STG waits for its value, which waits for the
//! step's loads: the four steps' loads are never in flight together, and the H200 takes 1,028
//! cycles per step (Nsight Compute, `tests/fixtures/suite37/h200.json`, `s3d_256`: 261,130 cycles for
//! 254 steps), about one loaded DRAM round trip (R2 in `validate/measurements/h200/ubench`: 751-801
//! cycles under load) plus the step's adds; dataflow order overlapped the four.
//!
//! Two accesses may alias when their state spaces may hold the same bytes (generic addresses reach
//! global, shared and local memory) and ptxas cannot tell them apart: unless both use the same base
//! register, unchanged between them, with offsets whose byte ranges do not overlap. `ld.global.nc`
//! (read-only for the kernel's lifetime), constant and parameter loads, and texture fetches are
//! never ordered. Atomics both load and store. Across a branch the replay issues in order anyway
//! (ptxas does not move instructions across one), so the analysis starts afresh at every basic
//! block.

use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{DInst, Program, Src, NO_REG};
use crate::ptx::inst::{Op, WmmaOp};

/// Shared memory, as a bit of [`Order`]'s masks.
pub const SHARED: u8 = 1;
/// Global memory.
pub const GLOBAL: u8 = 2;
/// Local memory.
pub const LOCAL: u8 = 4;

/// The memory-order role of one instruction: the spaces its store writes (bits [`SHARED`],
/// [`GLOBAL`], [`LOCAL`]) and the spaces whose earlier stores in its basic block its load must
/// issue after (0: none, or no load).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Order {
    /// Spaces it writes.
    pub stores: u8,
    /// Spaces of the earlier stores of its basic block it may read what they wrote.
    pub follows: u8,
}

/// The spaces an access of `space` may touch.
fn spaces(space: StateSpace) -> u8 {
    match space {
        StateSpace::Shared => SHARED,
        StateSpace::Global => GLOBAL,
        StateSpace::Local => LOCAL,
        StateSpace::Generic => SHARED | GLOBAL | LOCAL,
        _ => 0,
    }
}

/// One access as the analysis sees it: its spaces, its base register and byte range.
#[derive(Debug, Clone, Copy)]
struct Access {
    spaces: u8,
    base: Option<u16>,
    from: i64,
    to: i64,
}

impl Access {
    fn of(inst: &DInst, space: StateSpace, bytes: u32) -> Self {
        let (base, offset) = match inst.addr {
            Some(a) => match a.base {
                Src::Reg(r) => (Some(r), a.offset),
                _ => (None, a.offset),
            },
            None => (None, 0),
        };
        Access {
            spaces: spaces(space),
            base,
            from: offset,
            to: offset + i64::from(bytes.max(1)),
        }
    }

    /// Whether the two may touch the same bytes.
    fn may_alias(&self, other: &Access) -> bool {
        if self.spaces & other.spaces == 0 {
            return false;
        }
        match (self.base, other.base) {
            (Some(a), Some(b)) if a == b => self.from < other.to && other.from < self.to,
            _ => true,
        }
    }
}

/// What `inst` loads and stores, as accesses (`None`: it does not).
fn roles(inst: &DInst) -> (Option<Access>, Option<Access>) {
    match inst.op {
        Op::Ld(m) if m.nc => (None, None),
        Op::Ld(m) => (Some(Access::of(inst, m.space, m.bytes_per_thread())), None),
        Op::St(m) => (None, Some(Access::of(inst, m.space, m.bytes_per_thread()))),
        Op::Atom(a) | Op::Red(a) => {
            let x = Access::of(inst, a.space, a.ty.bytes());
            (Some(x), Some(x))
        }
        Op::Ldmatrix(_) => (Some(Access::of(inst, StateSpace::Shared, 16)), None),
        Op::Stmatrix(_) => (None, Some(Access::of(inst, StateSpace::Shared, 16))),
        Op::Wmma(WmmaOp::Load { space, .. }) => (Some(Access::of(inst, space, 16)), None),
        Op::Wmma(WmmaOp::Store { space, .. }) => (None, Some(Access::of(inst, space, 16))),
        _ => (None, None),
    }
}

/// Per instruction of `program`, its [`Order`].
pub fn of(program: &Program) -> Vec<Order> {
    let insts = &program.insts;
    let leader = program.leaders();
    let mut out = vec![Order::default(); insts.len()];
    // The stores of the current basic block so far.
    let mut stores: Vec<Access> = vec![];
    for (pc, inst) in insts.iter().enumerate() {
        if leader[pc] || matches!(inst.op, Op::BarSync | Op::BarRed(_)) {
            stores.clear();
        }
        let (load, store) = roles(inst);
        if let Some(l) = load {
            out[pc].follows = stores
                .iter()
                .filter(|s| s.may_alias(&l))
                .fold(0, |m, s| m | (s.spaces & l.spaces));
        }
        if let Some(s) = store {
            out[pc].stores = s.spaces;
            stores.push(s);
        }
        // A register it writes no longer holds the base earlier stores used.
        for &d in inst.dst.iter().filter(|&&d| d != NO_REG) {
            for s in stores.iter_mut().filter(|s| s.base == Some(d)) {
                s.base = None;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::decode::{decode, SymbolAddr};
    use std::collections::HashMap;

    /// The orders of `body`'s instructions (after the two parameter loads, before `ret`).
    fn orders(body: &str) -> Vec<Order> {
        let src = format!(
            ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a, \
             .param .u64 b)\n{{\n.reg .b64 %rd<8>;\n.reg .f32 %f<8>;\n.reg .pred %p<2>;\n\
             ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [b];\n{body}\nret;\n}}\n"
        );
        let m = crate::ptx::parse(&src, "t.ptx").unwrap();
        let symbols = HashMap::from([
            ("a".to_string(), SymbolAddr::Param(0)),
            ("b".to_string(), SymbolAddr::Param(8)),
        ]);
        let p = decode(m.entry("k").unwrap(), &symbols, &src, "t.ptx").unwrap();
        of(&p)[2..p.insts.len() - 1].to_vec()
    }

    const NONE: Order = Order {
        stores: 0,
        follows: 0,
    };

    #[test]
    fn a_load_after_a_store_through_another_pointer_follows_it() {
        // stencil3d_7pt's body: the next step's loads after this step's store.
        let o = orders(
            "ld.global.f32 %f1, [%rd1];\nst.global.f32 [%rd2], %f1;\nld.global.f32 %f2, [%rd1+4];",
        );
        assert_eq!(o[0], NONE);
        assert_eq!(
            o[1],
            Order {
                stores: GLOBAL,
                follows: 0
            }
        );
        assert_eq!(
            o[2],
            Order {
                stores: 0,
                follows: GLOBAL
            }
        );
    }

    #[test]
    fn disjoint_offsets_of_one_base_and_read_only_loads_do_not_follow() {
        let o = orders(
            "st.global.f32 [%rd1], %f1;\nld.global.f32 %f2, [%rd1+4];\n\
             ld.global.nc.f32 %f3, [%rd2];\nld.global.f32 %f4, [%rd1];\nld.shared.f32 %f5, [%rd2];",
        );
        assert_eq!(o[1].follows, 0, "same base, bytes 4-8 against 0-4");
        assert_eq!(o[2].follows, 0, "ld.global.nc");
        assert_eq!(o[3].follows, GLOBAL, "same base, same bytes");
        assert_eq!(o[4].follows, 0, "shared against a global store");
    }

    #[test]
    fn a_new_base_value_a_generic_access_and_a_new_block() {
        let o = orders(
            "st.global.f32 [%rd1], %f1;\nadd.s64 %rd1, %rd1, 4;\nld.global.f32 %f2, [%rd1+4];\n\
             ld.f32 %f3, [%rd2];\nst.shared.f32 [%rd3], %f3;\nld.f32 %f4, [%rd2+64];\n\
             @%p1 bra $L1;\n$L1:\nld.global.f32 %f5, [%rd2];",
        );
        assert_eq!(o[2].follows, GLOBAL, "the base register changed: unknown");
        assert_eq!(o[3].follows, GLOBAL, "generic against a global store");
        assert_eq!(
            o[5].follows,
            GLOBAL | SHARED,
            "generic after a shared store"
        );
        assert_eq!(o[7].follows, 0, "a new basic block");
    }
}

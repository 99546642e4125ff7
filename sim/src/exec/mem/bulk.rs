//! Hopper's asynchronous transaction barriers and bulk copies (sm_90): `mbarrier` objects in
//! shared memory and the 1-D `cp.async.bulk` copies that complete their transactions.
//!
//! An mbarrier (PTX ISA, "mbarrier") counts a phase's pending arrivals and pending transaction
//! bytes; the phase completes when both reach zero, its parity flips and the arrival count is
//! reloaded with the expected count. Its 8 bytes are opaque on the hardware; the simulator keeps
//! its state in them ([`Barrier`]), so that a kernel that copies or clears the object sees it
//! change. Copies complete at issue (as `cp.async` does, [`super::tensor`]): a `cp.async.bulk`
//! copies its bytes and completes its mbarrier's transaction bytes when the lane issues it, and
//! a bulk group has nothing left to wait for. A wait that finds its phase incomplete ends the
//! warp's turn, so that the warps that arrive run. Bulk copies are not yet handed to the memory
//! models: their traffic is in no counter (the TMA unit's metrics are not modelled).

use crate::error::Result;
use crate::exec::decode::{DInst, NO_REG};
use crate::exec::step::{lanes, Ctx};
use crate::exec::warp::{row_mut, Warp};
use crate::memory::image::{read_le, write_le};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::MbarrierOp;

/// An mbarrier's state as the simulator encodes it in the object's 8 bytes: bits 0-19 the
/// expected arrivals per phase, 20-39 the pending arrivals, 40-62 the pending transaction
/// bytes (23-bit two's complement: a copy may complete before its bytes are expected), 63 the
/// current phase's parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Barrier {
    /// Arrivals each phase expects (`mbarrier.init`'s count, 1 to 2^20 - 1).
    pub expected: u32,
    /// Arrivals the current phase still waits for.
    pub pending: u32,
    /// Transaction bytes the current phase still waits for (negative: completed before expected).
    pub tx: i32,
    /// Parity of the current (incomplete) phase.
    pub phase: bool,
}

const COUNT_MASK: u64 = (1 << 20) - 1;
const TX_BITS: u32 = 23;

impl Barrier {
    /// `mbarrier.init` with `count` expected arrivals.
    pub fn init(count: u32) -> Barrier {
        Barrier {
            expected: count,
            pending: count,
            tx: 0,
            phase: false,
        }
    }

    /// The state in its 8-byte encoding.
    pub fn encode(self) -> u64 {
        let tx = (self.tx as u32 as u64) & ((1 << TX_BITS) - 1);
        u64::from(self.expected) & COUNT_MASK
            | (u64::from(self.pending) & COUNT_MASK) << 20
            | tx << 40
            | u64::from(self.phase) << 63
    }

    /// The state of 8 bytes that [`Barrier::encode`] wrote.
    pub fn decode(v: u64) -> Barrier {
        let tx = ((v >> 40) & ((1 << TX_BITS) - 1)) as u32;
        let tx = ((tx << (32 - TX_BITS)) as i32) >> (32 - TX_BITS);
        Barrier {
            expected: (v & COUNT_MASK) as u32,
            pending: ((v >> 20) & COUNT_MASK) as u32,
            tx,
            phase: v >> 63 == 1,
        }
    }

    /// Completes the phase when no arrival and no transaction byte is pending.
    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
    }

    /// `count` arrivals; returns the state token `arrive` writes (the phase arrived at, bit 63).
    pub fn arrive(&mut self, count: u32) -> u64 {
        let token = u64::from(self.phase) << 63;
        self.pending = self.pending.saturating_sub(count);
        self.settle();
        token
    }

    /// `expect_tx` (`bytes` > 0) or `complete_tx` (`bytes` < 0) of the current phase.
    pub fn transaction(&mut self, bytes: i32) {
        self.tx = self.tx.saturating_add(bytes);
        self.settle();
    }

    /// Whether the phase of parity `parity` has completed (`test_wait.parity`): the current
    /// phase is the other one.
    pub fn parity_done(self, parity: bool) -> bool {
        self.phase != parity
    }
}

/// Failed waits in a row after which a warp's wait is taken for a deadlock: each failed wait
/// ends the warp's turn, so the others ran that many turns without completing the phase.
pub const MAX_FAILED_WAITS: u32 = 1 << 16;

impl Ctx<'_> {
    /// The error of a wait whose phase never completes.
    fn deadlock(&self, pc: u32) -> crate::error::Error {
        let p = self.pass.launch.program;
        crate::error::Error::Fault {
            launch: self.pass.launch.label.into(),
            message: format!(
                "an mbarrier wait in block ({},{},{}) found its phase incomplete {MAX_FAILED_WAITS} \
                 times in a row while the other warps ran: its arrivals or transaction bytes never \
                 come (a deadlock); PTX line {}: `{}`",
                self.ctaid[0],
                self.ctaid[1],
                self.ctaid[2],
                p.lines[pc as usize],
                p.texts[pc as usize]
            ),
        }
    }

    /// The mbarrier at shared offset `at` for `lane`; `None` (a fault noted) when the 8 bytes
    /// are misaligned or outside the block's shared memory.
    fn barrier(&mut self, w: &Warp, pc: u32, lane: usize, at: u64) -> Option<Barrier> {
        let v = usize::try_from(at)
            .ok()
            .filter(|_| at.is_multiple_of(8))
            .and_then(|o| read_le(self.shared, o, 8));
        if v.is_none() {
            self.note_fault(w, pc, lane, "mbarrier", StateSpace::Shared, at, 8);
        }
        v.map(Barrier::decode)
    }

    fn set_barrier(&mut self, at: u64, b: Barrier) {
        write_le(self.shared, at as usize, 8, b.encode());
    }

    /// `mbarrier.*` for the lanes of `exec`, one lane after another.
    pub(crate) fn mbarrier(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        op: MbarrierOp,
        exec: u32,
    ) -> Result<u32> {
        let addrs = self.addresses(w, inst, exec);
        let mut waiting = false;
        for l in lanes(exec) {
            let at = addrs[l];
            let arg = self.read(w, inst.src[0], l);
            if op == MbarrierOp::Init {
                if at.is_multiple_of(8) && (at as usize) < self.shared.len() {
                    self.set_barrier(at, Barrier::init(arg as u32 & COUNT_MASK as u32));
                } else {
                    self.note_fault(w, pc, l, "mbarrier", StateSpace::Shared, at, 8);
                    return Ok(0);
                }
                continue;
            }
            let Some(mut b) = self.barrier(w, pc, l, at) else {
                return Ok(0);
            };
            let result = match op {
                MbarrierOp::Arrive { expect_tx } => {
                    if expect_tx {
                        b.transaction(arg as u32 as i32);
                        Some(b.arrive(1))
                    } else {
                        Some(b.arrive(arg as u32))
                    }
                }
                MbarrierOp::ExpectTx => {
                    b.transaction(arg as u32 as i32);
                    None
                }
                MbarrierOp::CompleteTx => {
                    b.transaction(-(arg as u32 as i32));
                    None
                }
                MbarrierOp::Wait { parity } => {
                    let done = if parity {
                        b.parity_done(arg & 1 == 1)
                    } else {
                        b.parity_done(arg >> 63 == 1)
                    };
                    waiting |= !done;
                    Some(u64::from(done))
                }
                MbarrierOp::Inval => {
                    write_le(self.shared, at as usize, 8, 0);
                    continue;
                }
                MbarrierOp::Init => unreachable!("handled above"),
            };
            if !matches!(op, MbarrierOp::Wait { .. }) {
                self.set_barrier(at, b);
            }
            if let (Some(v), true) = (result, inst.dst[0] != NO_REG) {
                row_mut(&mut w.regs, inst.dst[0])[l] = v;
            }
        }
        if matches!(op, MbarrierOp::Wait { .. }) {
            w.failed_waits = if waiting { w.failed_waits + 1 } else { 0 };
            if w.failed_waits > MAX_FAILED_WAITS {
                return Err(self.deadlock(pc));
            }
        }
        // An incomplete phase: let the other warps run (they arrive or copy).
        self.turn_over |= waiting;
        Ok(0)
    }

    /// `cp.async.bulk` (1-D) for the lanes of `exec`: each lane's copy of `size` bytes (a
    /// multiple of 16, both addresses 16-byte aligned), then, to shared memory, the
    /// `complete_tx` of its mbarrier.
    pub(crate) fn cp_async_bulk(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        to_shared: bool,
        exec: u32,
    ) -> Result<u32> {
        let dst = self.addresses(w, inst, exec);
        let src_off = match inst.src[3] {
            crate::exec::decode::Src::Imm(v) => v,
            _ => 0,
        };
        let (from, to) = if to_shared {
            (StateSpace::Global, StateSpace::Shared)
        } else {
            (StateSpace::Shared, StateSpace::Global)
        };
        for l in lanes(exec) {
            let src = self.read(w, inst.src[0], l).wrapping_add(src_off);
            let size = self.read(w, inst.src[1], l) as u32;
            let (d, s) = (dst[l], src);
            if !size.is_multiple_of(16) || !d.is_multiple_of(16) || !s.is_multiple_of(16) {
                let (space, a) = if d.is_multiple_of(16) {
                    (from, s)
                } else {
                    (to, d)
                };
                self.note_fault(
                    w,
                    pc,
                    l,
                    "cp.async.bulk misaligned (16 bytes)",
                    space,
                    a,
                    size,
                );
                return Ok(0);
            }
            for k in (0..u64::from(size)).step_by(8) {
                let Some(v) = self.access(w, l, from, s + k, 8, None) else {
                    self.note_fault(w, pc, l, "read", from, s + k, 8);
                    return Ok(0);
                };
                if self.access(w, l, to, d + k, 8, Some(v)).is_none() {
                    self.note_fault(w, pc, l, "write", to, d + k, 8);
                    return Ok(0);
                }
            }
            if to_shared {
                let bar = self
                    .read(w, inst.src[2], l)
                    .wrapping_add(u64::from(inst.target));
                let Some(mut b) = self.barrier(w, pc, l, bar) else {
                    return Ok(0);
                };
                b.transaction(-(size as i32));
                self.set_barrier(bar, b);
            }
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_completes_when_arrivals_and_bytes_are_done() {
        let mut b = Barrier::init(2);
        assert_eq!(Barrier::decode(b.encode()), b);
        b.transaction(4096); // arrive.expect_tx of one thread: 4096 bytes, one arrival
        assert_eq!(b.arrive(1), 0);
        assert!(!b.parity_done(false));
        b.transaction(-4096); // the copy's complete_tx
        assert!(!b.parity_done(false), "one arrival still pending");
        assert_eq!(b.arrive(1), 0);
        assert!(b.parity_done(false) && !b.parity_done(true));
        assert_eq!((b.pending, b.tx, b.phase), (2, 0, true));
        // The next phase: bytes completed before they are expected (negative, then zero).
        b.transaction(-16);
        assert_eq!(Barrier::decode(b.encode()).tx, -16);
        b.transaction(16);
        assert_eq!(b.arrive(2), 1 << 63);
        assert!(b.parity_done(true) && !b.parity_done(false));
    }
}

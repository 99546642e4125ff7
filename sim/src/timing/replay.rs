//! The timing pass: replays a block's instruction streams on per-warp scoreboards.
//!
//! Each warp issues its next instruction one cycle after the previous one unless a source
//! register is not ready yet (dataflow issue: ptxas hoists independent loads above their uses, so
//! a load does not wait behind an unrelated stall). A load's result is ready after the latency of
//! the level that served it; an ALU result after the ALU latency; a store is acknowledged by L2.
//! `bar.sync` waits for the warp's outstanding results, then for every warp still running; the
//! block is done when its last warp has retired and its stores are acknowledged.

use super::Costs;
use crate::exec::trace::{BlockLog, Entry};
use crate::exec::{DInst, Program, Src, NO_REG};
use crate::ptx::inst::Op;

/// One warp's scoreboard during the replay.
#[derive(Debug, Clone, Default)]
struct Board {
    /// Issue floor: cycles since the block started, one per instruction issued.
    clock: u32,
    /// Cycle each register's value is ready.
    ready: Vec<u32>,
    /// Cycle by which every store has been acknowledged.
    drain: u32,
    /// Next entry of the warp's stream.
    next: usize,
    /// Waiting at `bar.sync`.
    at_barrier: bool,
}

impl Board {
    fn issue_time(&self, inst: &DInst) -> u32 {
        let mut t = self.clock + 1;
        let mut need = |s: &Src| {
            if let Src::Reg(r) | Src::NotPred(r) = s {
                t = t.max(self.ready[*r as usize]);
            }
        };
        inst.src[..usize::from(inst.nsrc)]
            .iter()
            .for_each(&mut need);
        if let Some(a) = &inst.addr {
            need(&a.base);
        }
        if inst.guard != NO_REG {
            need(&Src::Reg(inst.guard));
        }
        t
    }

    /// Issues the instruction of `e`.
    fn step(
        &mut self,
        program: &Program,
        costs: &Costs,
        shared_latency: u32,
        log: &BlockLog,
        e: Entry,
    ) {
        let inst = &program.insts[e.pc as usize];
        let issue = self.issue_time(inst);
        let ready = match inst.op {
            Op::BarSync | Op::BarRed(_) => {
                // The barrier waits for the warp's outstanding results, then for the others.
                self.clock = issue.max(self.results_ready());
                self.at_barrier = true;
                return;
            }
            Op::Ld(_) => Some(issue + log.latency(e)),
            Op::St(_) => {
                self.drain = self.drain.max(issue + log.latency(e));
                None
            }
            // An atomic's result is ready after its latency; a reduction is acknowledged then.
            Op::Atom(_) | Op::Red(_) if inst.dst[0] == NO_REG => {
                self.drain = self.drain.max(issue + log.latency(e));
                None
            }
            Op::Atom(_) | Op::Red(_) => Some(issue + log.latency(e)),
            Op::Shfl(_) => Some(issue + shared_latency),
            Op::Bra | Op::Exit | Op::Ret | Op::WarpSync => None,
            _ => Some(issue + costs.alu),
        };
        if let Some(t) = ready {
            for &d in inst.dst.iter().filter(|&&d| d != NO_REG) {
                self.ready[d as usize] = t;
            }
        }
        self.clock += 1;
    }

    fn results_ready(&self) -> u32 {
        self.ready.iter().copied().max().unwrap_or(0)
    }

    fn finish(&self) -> u64 {
        u64::from(self.clock.max(self.drain).max(self.results_ready()))
    }
}

/// Reusable scoreboards (one per warp of a block).
#[derive(Debug, Default)]
pub struct Replay {
    boards: Vec<Board>,
}

impl Replay {
    /// Cycles from the block's start until its last warp retired: the latency-bound time of
    /// the block whose functional pass left `log` (latencies resolved).
    pub fn block(
        &mut self,
        program: &Program,
        costs: &Costs,
        shared_latency: u32,
        log: &BlockLog,
    ) -> u64 {
        let n = log.warps.len();
        if self.boards.len() < n {
            self.boards.resize_with(n, Board::default);
        }
        for b in &mut self.boards[..n] {
            b.clock = 0;
            b.drain = 0;
            b.next = 0;
            b.at_barrier = false;
            b.ready.clear();
            b.ready.resize(program.num_regs, 0);
        }
        loop {
            for (b, stream) in self.boards[..n].iter_mut().zip(&log.warps) {
                while !b.at_barrier {
                    let Some(&e) = stream.get(b.next) else { break };
                    b.next += 1;
                    b.step(program, costs, shared_latency, log, e);
                }
            }
            let arrived = self.boards[..n].iter().filter(|b| b.at_barrier);
            let Some(t) = arrived.map(|b| b.clock).max() else {
                break;
            };
            // Everyone still running waits at the barrier: release it at the latest arrival.
            for b in self.boards[..n].iter_mut().filter(|b| b.at_barrier) {
                b.at_barrier = false;
                b.clock = t;
            }
        }
        self.boards[..n]
            .iter()
            .map(Board::finish)
            .max()
            .unwrap_or(0)
    }
}

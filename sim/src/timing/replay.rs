//! The timing pass: replays a block's instruction streams on per-warp scoreboards.
//!
//! Each warp issues its next instruction one cycle after the previous one unless a source
//! register is not ready yet (dataflow issue: ptxas hoists independent loads above their uses, so
//! a load does not wait behind an unrelated stall). A load's result is ready after the latency of
//! the level that served it; an ALU result after the ALU latency; a store is acknowledged by L2.
//! `bar.sync` waits for the warp's outstanding results, then for every warp still running; the
//! block is done when its last warp has retired and its stores are acknowledged.

use super::{Costs, SmWork};
use crate::exec::trace::{BlockLog, Entry, MEM, TICKET};
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

    /// Issues the instruction of `e` of warp `warp`, accounting it on the SM's `work`.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        program: &Program,
        costs: &Costs,
        shared_latency: u32,
        log: &BlockLog,
        work: &mut SmWork,
        warp: u32,
        e: Entry,
    ) {
        let inst = &program.insts[e.pc as usize];
        let issue = self.issue_time(inst);
        // SASS issue slots, constant-pipe work, first use of a unit (timing::sass).
        work.issued(costs, e.pc, inst, log.wave, issue, warp);
        let ready = match inst.op {
            Op::BarSync | Op::BarRed(_) => {
                // The barrier waits for the warp's outstanding results, then for the others.
                self.clock = issue.max(self.results_ready());
                self.at_barrier = true;
                return;
            }
            Op::Bra => {
                // Instructions after a branch issue after it and all before it; an if-converted
                // region is issued even when every lane skips it (`lat` 1: every lane jumped).
                self.clock = work.branch(costs, e.pc, warp, self.clock, issue);
                if e.lat == 1 {
                    self.clock += work.skipped(costs, e.pc);
                }
                None
            }
            Op::Ld(_) => Some(issue + latency(e.lat, costs, log, work)),
            Op::St(_) => {
                self.drain = self.drain.max(issue + latency(e.lat, costs, log, work));
                None
            }
            // An atomic's result is ready after its latency; a reduction is acknowledged then.
            Op::Atom(_) | Op::Red(_) if inst.dst[0] == NO_REG => {
                self.drain = self.drain.max(issue + latency(e.lat, costs, log, work));
                None
            }
            Op::Atom(_) | Op::Red(_) => Some(issue + latency(e.lat, costs, log, work)),
            Op::Shfl(_) => Some(issue + shared_latency),
            Op::Exit | Op::Ret | Op::WarpSync => None,
            _ => Some(issue + costs.result_latency(e.pc)),
        };
        if let Some(t) = ready {
            for &d in inst.dst.iter().filter(|&&d| d != NO_REG) {
                self.ready[d as usize] = t;
            }
        }
        self.clock += u32::from(costs.sass.at(e.pc).slots);
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
        work: &mut SmWork,
    ) -> u64 {
        let n = log.warps.len();
        if self.boards.len() < n {
            self.boards.resize_with(n, Board::default);
        }
        for (i, b) in self.boards[..n].iter_mut().enumerate() {
            // The SM launches the block's warps one after another.
            b.clock = costs.warp_start(i as u32);
            b.drain = 0;
            b.next = 0;
            b.at_barrier = false;
            b.ready.clear();
            b.ready.resize(program.num_regs, 0);
        }
        loop {
            for (w, (b, stream)) in self.boards[..n].iter_mut().zip(&log.warps).enumerate() {
                while !b.at_barrier {
                    let Some(&e) = stream.get(b.next) else { break };
                    b.next += 1;
                    b.step(program, costs, shared_latency, log, work, w as u32, e);
                }
            }
            let arrived = self.boards[..n].iter().filter(|b| b.at_barrier).count();
            let Some(t) = self.boards[..n]
                .iter()
                .filter(|b| b.at_barrier)
                .map(|b| b.clock)
                .max()
            else {
                break;
            };
            // The arrivals pass the barrier unit one after another.
            let t = t + costs.barrier(arrived);
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

/// The latency of an entry's `lat`: its own, or what the L2 pass found for its request (a DRAM
/// access waits behind the DRAM traffic its SM's wave queued before it), and for a global or local
/// access what the L1 data pipe, fills in flight and store merging make of it.
fn latency(lat: u32, costs: &Costs, log: &BlockLog, work: &mut SmWork) -> u32 {
    let ticket = |lat: u32, work: &mut SmWork| {
        if lat & TICKET == 0 {
            return lat;
        }
        let o = log.out[(lat & !TICKET) as usize];
        let queued = work.queue_dram(log.wave, o.dram_bytes);
        if o.dram {
            costs.dram_queued(queued)
        } else {
            o.lat
        }
    };
    if lat & TICKET == 0 && lat & MEM != 0 {
        let m = log.mems[(lat & !MEM) as usize];
        let l = ticket(m.lat, work);
        let sectors = &log.sectors[m.start as usize..m.end as usize];
        return work.global_sectors(costs, log.wave, m.dwf, sectors, m.store, m.hit, l);
    }
    ticket(lat, work)
}

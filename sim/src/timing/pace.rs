//! The pace of an SM's co-resident warps in the functional pass: which warp takes the next turn
//! ([`crate::exec::turns`]), by a forward estimate of the cycle the replay ([`super::replay`])
//! issues it at, so that the caches see the warps' accesses in the replay's order.
//!
//! The replay serves warps in the cycle order of their ready instructions, the oldest first
//! among those ready in the same cycle; a warp whose loads hit L1 comes back after the L1
//! latency, one whose loads went to L2 after the L2's, and warps of one scheduler share its
//! issue cycles. The pace keeps, per warp, the cycle it is ready to issue again, and takes the
//! smallest next (the oldest warp on a tie), as the replay's queue of ready warps does. What a
//! turn costs it reads off the turn's trace entries, as the replay will:
//! - every instruction takes one cycle of its warp's scheduler (warp `w % schedulers`, as in the
//!   replay), the first no sooner than the cycle the warp is ready and the scheduler free;
//! - a load's value is ready after the latency of where it was served: L1, shared memory, a
//!   constant cache; an L1 hit on a sector whose fill is still in flight when the fill is back;
//!   an L1 miss after the DRAM latency, behind the DRAM traffic the SM queued before it at its
//!   share of the bandwidth ([`Costs::dram_queued`], as the replay queues it; the L2 pass, which
//!   says L2 or DRAM, runs after the functional pass, and a miss is taken for a DRAM access);
//! - a turn ends where the warp stalls for a load it issued ([`crate::exec::turns`]), so the warp
//!   is ready again when its turn's last load is;
//! - blocks start the dispatch interval apart, their warps the warp-launch interval apart; a
//!   barrier releases after its last arrival plus the barrier unit's time ([`Costs::barrier`]).
//!
//! It leaves out what the functional pass does not know (DRAM queueing, ALU dependency chains,
//! SASS expansion): it orders turns, it prices nothing the report shows.

use super::Costs;
use crate::trace::{BlockLog, Entry, Lat, Served};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The pace of one SM's co-resident warps: per warp (numbered as the replay numbers them, the
/// warps of the wave's blocks in dispatch order), the cycle it can issue again; per scheduler,
/// its next free cycle. Cycles count from the wave's start.
#[derive(Debug, Default, Clone)]
pub struct Pace {
    /// Per warp, the cycle it can issue its next instruction.
    ready: Vec<u64>,
    /// Per warp, the cycle the loads of its turns since its last stall are back.
    pending: Vec<u64>,
    /// Per scheduler, the first cycle no turn has taken.
    free: Vec<u64>,
    /// The warps that can take a turn, by (ready cycle, warp).
    queue: BinaryHeap<Reverse<(u64, u32)>>,
    /// Per L1 sector whose fill a load of this wave started, the cycle the fill is back (the
    /// replay's map of fills in flight).
    fills: super::maps::FillMap,
    /// The cycle the SM's share of the DRAM bandwidth has moved what was queued so far.
    dram_free: f64,
}

impl Pace {
    /// Starts a wave of `blocks` blocks of `warps` warps each on an SM with the schedulers of
    /// `costs`: every warp ready when it starts ([`Costs::block_dispatch`],
    /// [`Costs::warp_start`]) and queued.
    pub fn start(&mut self, costs: &Costs, blocks: usize, warps: usize) {
        let dispatch = costs.block_dispatch(warps as u32);
        self.ready.clear();
        self.pending.clear();
        self.queue.clear();
        for k in 0..blocks {
            let start = (dispatch * k as f64).round() as u64;
            for i in 0..warps {
                let t = start + u64::from(costs.warp_start(i as u32));
                self.queue.push(Reverse((t, self.ready.len() as u32)));
                self.ready.push(t);
                self.pending.push(0);
            }
        }
        self.free.clear();
        self.free.resize(costs.schedulers.max(1) as usize, 0);
        self.fills.clear();
        self.dram_free = 0.0;
    }

    /// The warp to take the next turn, out of the queue: the one ready first, the oldest on a
    /// tie. `None` when no warp is queued (all have exited or wait at a barrier).
    pub fn next(&mut self) -> Option<usize> {
        self.queue.pop().map(|Reverse((_, w))| w as usize)
    }

    /// How many instructions warp `w`, out of the queue ([`Pace::next`]), may issue in its turn
    /// before it yields at a memory instruction: the cycles from its first issue to the cycle the
    /// next queued warp is ready (`usize::MAX` when none is queued). Warps of other schedulers
    /// issue in the same cycles, so a turn that went on past them would put its accesses before
    /// theirs.
    pub fn deadline(&self, w: usize) -> usize {
        let start = self.ready[w].max(self.free[w % self.free.len()]);
        match self.queue.peek() {
            Some(Reverse((next, _))) => next.saturating_sub(start) as usize,
            None => usize::MAX,
        }
    }

    /// Warp `w`'s scheduler (SMSP: `w` modulo the schedulers, as the replay assigns warps) and
    /// the cycle its next turn begins: when it is ready and its scheduler free.
    pub fn slot(&self, w: usize) -> (u32, u64) {
        let p = w % self.free.len().max(1);
        let free = self.free.get(p).copied().unwrap_or(0);
        (p as u32, self.ready.get(w).copied().unwrap_or(0).max(free))
    }

    /// Warp `w` took a turn that executed `entries` (its stream's new entries; `loads` says
    /// which instructions load a value, [`crate::exec::turns::LOADS`]; `log` is its block's
    /// log): its scheduler's cycles are taken. A turn that `yielded` leaves the warp ready the
    /// cycle after its last instruction, its loads in flight; one that ended at a stall, a
    /// barrier or the exit, when its loads' values (and those of the turns it yielded before)
    /// are back. With `queue`, the warp goes back into the queue (it did not exit or reach a
    /// barrier).
    #[allow(clippy::too_many_arguments)]
    pub fn turn(
        &mut self,
        costs: &Costs,
        w: usize,
        entries: &[Entry],
        loads: impl Fn(u32) -> bool,
        log: &BlockLog,
        yielded: bool,
        queue: bool,
    ) {
        let p = w % self.free.len();
        let mut t = self.ready[w].max(self.free[p]);
        let mut back = self.pending[w];
        for e in entries {
            t += 1;
            if loads(e.pc) {
                back = back.max(self.load(costs, log, e.lat, t));
            }
        }
        self.free[p] = t;
        if yielded {
            self.ready[w] = t;
            self.pending[w] = back;
        } else {
            self.ready[w] = t.max(back);
            self.pending[w] = 0;
        }
        if queue {
            self.queue.push(Reverse((self.ready[w], w as u32)));
        }
    }

    /// The cycle the value of a load entry `lat` of `log`, issued at cycle `t`, is back.
    fn load(&mut self, costs: &Costs, log: &BlockLog, lat: u32, t: u64) -> u64 {
        let Lat::Access(i) = Lat::of(lat) else {
            return t + u64::from(latency(costs, log, lat));
        };
        let Some(m) = log.mems.get(i) else {
            return t + u64::from(costs.l1);
        };
        let sectors = log
            .sectors
            .get(m.start as usize..m.end as usize)
            .unwrap_or(&[]);
        if m.hit {
            let fill = u64::from(self.fills.latest(sectors));
            return fill.max(t + u64::from(costs.l1));
        }
        let share = costs.dram_bytes_per_cycle_per_sm;
        let bytes = sectors.len() as f64 * costs.l1_sector as f64;
        if share > 0.0 {
            self.dram_free = self.dram_free.max(t as f64) + bytes / share;
        }
        let queued = (self.dram_free - t as f64).max(0.0).round() as u64;
        let back = t + u64::from(costs.dram) + queued;
        // Sectors of a record come ascending and distinct, as the map needs.
        self.fills
            .insert_all_new(sectors, u32::try_from(back).unwrap_or(u32::MAX));
        back
    }

    /// Releases the barrier the warps `warps` wait at (all of the block's that still run): they
    /// are ready after the last arrival and the barrier unit's time, and queued.
    pub fn release(&mut self, costs: &Costs, warps: &[usize]) {
        let Some(last) = warps.iter().map(|&w| self.ready[w]).max() else {
            return;
        };
        let t = last + u64::from(costs.barrier(warps.len()));
        for &w in warps {
            self.ready[w] = t;
            self.queue.push(Reverse((t, w as u32)));
        }
    }
}

/// The functional pass's estimate of the latency (cycles) of a load entry `lat` of `log`: where
/// it was served; a request to L2 of its own (an atomic, an indexed constant miss) at the L2 hit
/// latency, an L1 miss of a global or local load at the DRAM latency (without the queue
/// [`Pace`] adds).
pub fn latency(costs: &Costs, log: &BlockLog, lat: u32) -> u32 {
    match Lat::of(lat) {
        Lat::Cycles(c) => c,
        Lat::Served(s) => served(costs, s),
        Lat::Request(_) => costs.l2,
        Lat::Access(i) => match log.mems.get(i).map(|m| Lat::of(m.lat)) {
            Some(Lat::Served(s)) => served(costs, s),
            Some(Lat::Cycles(c)) => c,
            _ => costs.dram,
        },
    }
}

/// [`latency`] of an access the SM served; an LDC at the nearest constant cache's latency.
fn served(costs: &Costs, s: Served) -> u32 {
    match s {
        Served::Ldc(_) => costs.constant.first().copied().unwrap_or(costs.l2),
        s => super::latency(costs, s, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::tests::h200_costs;

    #[test]
    fn warps_start_in_dispatch_order_and_the_one_ready_first_goes_next() {
        let costs = h200_costs();
        let mut pace = Pace::default();
        pace.start(&costs, 2, 2);
        assert_eq!(pace.next(), Some(0));
        // Warp 0 issues one load served by L1: it is back after the L1 latency.
        let mut log = BlockLog::default();
        let load = Entry {
            pc: 0,
            lat: Served::L1.lat(),
        };
        pace.turn(&costs, 0, &[load], |_| true, &log, false, true);
        assert_eq!(pace.ready[0], 1 + u64::from(costs.l1));
        // Warp 1 started a warp launch later; block 1's warps a dispatch interval later.
        assert_eq!(pace.next(), Some(1));
        let miss = Entry {
            pc: 0,
            lat: log.request(crate::trace::L2Kind::Load, &[0]),
        };
        pace.turn(&costs, 1, &[miss], |_| true, &log, false, true);
        let w1 = u64::from(costs.warp_start(1)) + 1 + u64::from(costs.l2);
        assert_eq!(pace.ready[1], w1);
        let b1 = costs.block_dispatch(2).round() as u64;
        // The L1 hit brings warp 0 back before block 1 starts, when the dispatch interval is
        // longer than the L1 latency; either way the queue gives the smallest ready cycle.
        let order: Vec<usize> = std::iter::from_fn(|| pace.next()).collect();
        let mut expected = vec![(pace.ready[0], 0), (w1, 1), (b1, 2)];
        expected.push((b1 + u64::from(costs.warp_start(1)), 3));
        expected.sort();
        assert_eq!(order, expected.iter().map(|&(_, w)| w).collect::<Vec<_>>());
    }

    #[test]
    fn a_hit_on_a_fill_in_flight_waits_for_it_and_misses_queue_for_dram() {
        let mut costs = h200_costs();
        costs.warp_launch = 0.0;
        let mut pace = Pace::default();
        pace.start(&costs, 1, 3);
        let mut log = BlockLog::default();
        // Warp 0 misses sectors 10..14 (4 sectors), warp 1 then hits sector 12, warp 2 misses
        // sectors 20..24 behind warp 0's bytes.
        let access = |log: &mut BlockLog, sectors: std::ops::Range<u64>, hit: bool| {
            let start = log.sectors.len() as u32;
            log.sectors.extend(sectors);
            let end = log.sectors.len() as u32;
            let rec = crate::trace::MemRec {
                lat: if hit { Served::L1.lat() } else { 0 },
                dwf: 1,
                start,
                end,
                lines: 1,
                store: false,
                hit,
            };
            Entry {
                pc: 0,
                lat: log.mem(rec),
            }
        };
        let miss = access(&mut log, 10..14, false);
        let hit = access(&mut log, 12..13, true);
        let later = access(&mut log, 20..24, false);
        pace.turn(&costs, 0, &[miss], |_| true, &log, false, true);
        let share = costs.dram_bytes_per_cycle_per_sm;
        let q0 = (4.0 * costs.l1_sector as f64 / share).round() as u64;
        let back0 = 1 + u64::from(costs.dram) + q0;
        assert_eq!(pace.ready[0], back0);
        pace.turn(&costs, 1, &[hit], |_| true, &log, false, true);
        assert_eq!(pace.ready[1], back0, "the hit waits for warp 0's fill");
        pace.turn(&costs, 2, &[later], |_| true, &log, false, true);
        // Issued at cycle 1 on its own scheduler, behind warp 0's bytes and its own.
        let q2 = (8.0 * costs.l1_sector as f64 / share - 0.0).round() as u64;
        assert_eq!(pace.ready[2], 1 + u64::from(costs.dram) + q2);
    }

    #[test]
    fn warps_of_one_scheduler_share_its_cycles_and_a_barrier_waits_for_the_last() {
        let mut costs = h200_costs();
        costs.schedulers = 1;
        costs.warp_launch = 0.0;
        let mut pace = Pace::default();
        pace.start(&costs, 1, 2);
        let log = BlockLog::default();
        let alu = Entry { pc: 0, lat: 0 };
        pace.turn(&costs, 0, &[alu; 10], |_| false, &log, false, false);
        pace.turn(&costs, 1, &[alu; 5], |_| false, &log, false, false);
        // Warp 1 waited for warp 0's ten cycles of the one scheduler.
        assert_eq!((pace.ready[0], pace.ready[1]), (10, 15));
        while pace.next().is_some() {}
        pace.release(&costs, &[0, 1]);
        let t = 15 + u64::from(costs.barrier(2));
        assert_eq!((pace.ready[0], pace.ready[1]), (t, t));
        assert_eq!(
            (pace.next(), pace.next(), pace.next()),
            (Some(0), Some(1), None)
        );
    }
}

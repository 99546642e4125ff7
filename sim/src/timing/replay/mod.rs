//! The timing pass: replays the instruction streams of the blocks co-resident on one SM in a wave,
//! event by event, on per-warp scoreboards that share the SM's warp schedulers.
//!
//! - **Blocks and warps.** Blocks start in dispatch order, each in the SM's block slot that frees
//!   first and no sooner than [`Costs::block_dispatch`] after the previous one (the first wave's
//!   blocks that far apart, a later wave's as the earlier wave's blocks retire); the SM launches a
//!   block's warps [`Costs::warp_start`] apart. The replay keeps the schedulers' calendars from
//!   wave to wave, so a wave's warps find the cycles the previous wave's warps took (older warps
//!   first). Warp `w` of the wave (counting the warps of its blocks in dispatch order) belongs to
//!   scheduler `w % schedulers` (four sub-cores per SM, \[paper\] Huerta25 §5.4; warp id modulo
//!   the schedulers is how \[sim\] Accel-Sim assigns them).
//! - **Scoreboard.** A warp's instruction is ready when its source registers are and no sooner
//!   than the cycle after the warp's issue floor (dataflow issue within a basic block: ptxas
//!   hoists independent loads above their uses, so a load does not wait behind an unrelated
//!   stall; across a branch the warp issues in order). A load's result is ready after the latency
//!   of the level that served it; an ALU result after its SASS steps times the ALU latency; a
//!   store is acknowledged by L2.
//! - **Schedulers.** Each scheduler issues at most one SASS instruction per cycle ([`Port`]); an
//!   instruction of `k` SASS instructions takes `k` of its cycles. Warps are served in the cycle
//!   order of their ready instructions, the oldest warp first among those ready in the same cycle
//!   (a loosely round-robin, oldest-first order: every ready warp gets its turn). An instruction
//!   that could issue at the warp's floor but found the scheduler busy holds the warp's later
//!   instructions back by as much.
//! - **Tensor pipe.** Each scheduler's sub-partition has one tensor pipe: an `mma.sync` or
//!   `wmma.mma` issues no sooner than the pipe is free, occupies it for its form's issue cycles
//!   and its D is ready its form's latency after the issue ([`crate::timing::tensor`]); the wait
//!   for the pipe is `math_pipe_throttle`.
//! - **Loops.** Instructions after a branch issue after every instruction before it, but at a
//!   loop's backward branch only at [`Plan::waits`] of every [`Plan::overlap`] executions: one
//!   SASS iteration covers `overlap` PTX iterations and ptxas hoists their loads above their
//!   uses, so a warp waits for loads `waits` times in it, and between those waits the PTX
//!   iterations issue in dataflow order, their loads in flight together
//!   ([`crate::sass::unroll`]; without SASS every execution waits).
//! - **Barriers.** `bar.sync` waits for the warp's outstanding results, then for every warp of
//!   its block still running; the last arrival releases them after [`Costs::barrier`].
//!
//! A block is done when its last warp has retired and its stores are acknowledged; the pass
//! returns each block's cycles from its start ([`SmWork::latency`] places them in the slots again
//! for the launch's latency bound, sampled waves included).

use super::sched::{Heap, Keys, Port, Ring, RING};
use super::stall::{self, Stalls, Why};
use super::{Costs, SmWork, Unit};
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{DInst, Program, Src, NO_REG};
use crate::ptx::inst::Op;
use crate::trace::{BlockLog, Entry, Lat};

mod board;
mod issue;
mod plan;
#[cfg(test)]
mod tests;

use board::*;
use issue::*;
pub use plan::Plans;
use plan::*;

/// One block of the wave during the replay.
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    /// Cycle it starts.
    start: u32,
    /// Its first warp among the boards.
    first: usize,
    /// Its warps.
    warps: usize,
    /// Warps that have not retired.
    live: usize,
    /// Warps waiting at `bar.sync`.
    arrived: usize,
}

/// What one replay reads: the program, its costs, the shared-memory latency.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The kernel.
    pub program: &'a Program,
    /// Its costs.
    pub costs: &'a Costs,
    /// Shared-memory load-to-use latency (cycles), which shuffles take too.
    pub shared_latency: u32,
    /// What the replay needs of each instruction ([`Plans::new`] of the program and costs).
    pub plans: &'a Plans,
}

/// Reusable state of an SM's replay: schedulers and block slots, which carry over from wave to
/// wave. (The queue of ready warps and their scoreboards start each wave afresh: they are the
/// host thread's, `Scratch`.)
#[derive(Debug, Default)]
pub struct Replay {
    sm: Sm,
}

/// What a wave's replay uses only while it runs: the queue of ready warps and their scoreboards.
/// One per host thread rather than per SM: a thread replays the waves of its SMs one after
/// another, and each SM's own (a 32 KiB ring, 1 KiB a warp of boards) had left the host's caches
/// by the time the SM's next batch came (about 1% of read_stride's last-level misses).
#[derive(Debug, Default)]
struct Scratch {
    /// Warps waiting to issue, for waves of at most [`RING`] warps (every configured GPU's);
    /// made by the first wave that needs it.
    ring: Option<Ring>,
    /// Warps waiting to issue, for larger waves.
    heap: Heap,
    /// Per warp of the wave, the cycle each register's value is ready (the program's registers
    /// of warp 0, then of warp 1, and so on), but for waves [`Scratch::small`] takes.
    regs: Vec<u32>,
    /// The same layout as `regs`: the warp state ([`Why`]) a wait for each register counts as.
    whys: Vec<Why>,
    /// The same per warp as a [`Small`] board, for waves of at most [`RING`] warps of a
    /// program of at most [`SMALL`] registers.
    small: Vec<Small>,
}

thread_local! {
    /// This thread's `Scratch`.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// An SM's replay state but for its queue of ready warps and their scoreboards.
#[derive(Debug, Default)]
struct Sm {
    blocks: Vec<Block>,
    /// The warp schedulers, the first `schedulers` of them (a fixed array: a warp's scheduler
    /// is found without a bounds check).
    ports: [Port; MAX_SCHEDULERS],
    /// Warp schedulers of the SM.
    schedulers: usize,
    /// Per block slot of the SM, the cycle (of the launch) it is free.
    slots: Vec<f64>,
    /// Cycle (of the launch) the last block started.
    last_start: f64,
    /// Cycle (of the launch) the current wave's cycles count from.
    origin: u64,
}

/// One warp of the wave during the replay: its stream, scoreboard and scheduler. A warp's turn
/// reads it through one pointer.
#[derive(Debug)]
struct Warp<'a, R: Board + ?Sized> {
    /// The instructions it executed, in order.
    stream: &'a [Entry],
    /// Cycle each register's value is ready (its part of [`Scratch::regs`] or
    /// [`Scratch::small`]).
    ready: &'a mut R,
    /// Its block's log.
    log: &'a BlockLog,
    /// The plan of the next entry's instruction while the warp is queued (found when the warp
    /// stopped before it, so that its turn reads neither the stream nor the plans again).
    plan: &'a Plan,
    /// Next entry of the stream.
    next: u32,
    /// That entry's latency while the warp is queued.
    lat: u32,
    /// Issue floor: the warp's next instruction issues after it (cycles since the wave started).
    clock: u32,
    /// The last cycle of the warp's timeline its warp states account for ([`stall`]).
    seen: u32,
    /// The latest cycle it issued an instruction (a branch's successors issue after it).
    issued_max: u32,
    /// Cycle by which every store has been acknowledged.
    drain: u32,
    /// The backward branch the warp last executed ([`Warp::waits_at`]).
    loop_pc: u32,
    /// Its executions in a row that every lane took, times [`Plan::waits`], less
    /// [`Plan::overlap`] for each wait there.
    trips: u32,
    /// Its block's index in the wave.
    block: u16,
    /// Its scheduler (the SM's warp number modulo the schedulers).
    port: u8,
    /// Waiting at `bar.sync`.
    at_barrier: bool,
    /// Per space ([`crate::timing::order`]'s bits: shared, global, local), the cycle its last
    /// store issued: a load that may read what it wrote issues after it.
    stored: [u32; 3],
}

impl<R: Board + ?Sized> Warp<'_, R> {
    /// The first cycle an instruction with `deps` can issue: after the floor, once its sources
    /// are ready.
    #[inline(always)]
    fn issue_time(&self, deps: &Deps) -> u32 {
        // `take` rather than a slice: no bounds check on the count.
        let t = (deps.src.iter().take(usize::from(deps.n_src)))
            .fold(self.clock + 1, |t, &r| t.max(self.ready.at(r)));
        if deps.order == 0 {
            return t;
        }
        (0..3)
            .filter(|&c| deps.order & (1 << c) != 0)
            .fold(t, |t, c| t.max(self.stored[c] + 1))
    }

    /// Records that an instruction storing to the spaces `stores` issued at cycle `issue`.
    #[inline]
    fn note_store(&mut self, stores: u8, issue: u32) {
        for c in (0..3).filter(|&c| stores & (1 << c) != 0) {
            self.stored[c] = self.stored[c].max(issue);
        }
    }

    /// The cycle the last of its results is ready (the program has `n` registers).
    fn results_ready(&self, n: usize) -> u32 {
        self.ready.first(n).iter().copied().max().unwrap_or(0)
    }

    /// Whether the warp's instructions after the branch planned as `p`, of an entry with latency
    /// `lat` (1: every lane took it), wait for all before it. A forward branch: yes. A backward
    /// one: at [`Plan::waits`] of every [`Plan::overlap`] executions in a row that every lane
    /// takes, spread evenly (the last of each `overlap` waits: there the SASS loop branches
    /// back, [`crate::sass::unroll`]), and where the loop ends for a lane (not every lane took
    /// it).
    #[inline]
    fn waits_at(&mut self, p: &Plan, lat: u32) -> bool {
        if p.overlap == 0 {
            return true;
        }
        if self.loop_pc != p.pc {
            (self.loop_pc, self.trips) = (p.pc, 0);
        }
        if lat != 1 {
            self.trips = 0;
            return true;
        }
        // `waits` in `overlap` steps: a wait each time the count passes `overlap`.
        self.trips += u32::from(p.waits);
        if self.trips < u32::from(p.overlap) {
            return false;
        }
        self.trips -= u32::from(p.overlap);
        true
    }

    fn finish(&self, n: usize) -> u32 {
        self.clock.max(self.drain).max(self.results_ready(n))
    }

    /// The warp state of a wait for `deps` until cycle `want`: the [`Why`] of the source
    /// register ready last, or [`stall::MISC`] when none is that late (the issue floor held it).
    #[cold]
    fn why_late(&self, deps: &Deps, want: u32) -> Why {
        (deps.src.iter().take(usize::from(deps.n_src)))
            .find(|&&r| self.ready.at(r) == want)
            .map_or(stall::MISC, |&r| self.ready.why(r))
    }

    /// Accounts an instruction planned as `p`, ready at `want`, whose `slots` issue slots were
    /// taken from `issue` to `last`, on `st`: the cycles since the warp's last accounted one
    /// until `want` as the late register's state, then until `issue` as `not_selected`, and
    /// each slot as `selected` (an instruction issued into an earlier gap of the timeline, by
    /// dataflow, adds its slots only).
    #[inline(always)]
    fn account(
        &mut self,
        st: &mut Stalls,
        deps: &Deps,
        want: u32,
        issue: u32,
        last: u32,
        slots: u32,
    ) {
        let from = self.seen + 1;
        if issue >= from {
            if want > from {
                let why = self.why_late(deps, want);
                st.0[usize::from(why)] += u64::from(want - from);
            }
            // Waiting between the slots of a multi-slot instruction is the scheduler's too.
            st.0[usize::from(stall::NOT_SELECTED)] +=
                u64::from(issue - want.max(from) + (last - issue + 1).saturating_sub(slots.max(1)));
        }
        st.0[usize::from(stall::SELECTED)] += u64::from(slots);
        self.seen = self.seen.max(last);
    }
}

/// What an issue reads besides the warp, its plan and scheduler.
#[derive(Clone, Copy)]
struct Env<'a> {
    costs: &'a Costs,
    shared_latency: u32,
    /// The [`Plan::rare`] flags whose work this wave does ([`UNIT`] only in an SM's first wave,
    /// whose blocks start the launch).
    rare: u8,
    /// The [`Plan::fast`] flag of this wave: [`FAST_FIRST`] with [`UNIT`], else [`FAST_LATER`].
    fast: u8,
    /// The program's registers.
    regs: usize,
}

/// A warp's place in the ready queue: earlier cycle first, then lower warp number.
#[inline]
fn pack(t: u32, w: u32) -> u64 {
    u64::from(t) << 32 | u64::from(w)
}

impl Replay {
    /// Readies a replay another launch used for a new launch: the state a new one starts with,
    /// keeping the allocations (calendars) so that the launch does not grow them anew.
    pub fn relaunch(&mut self) {
        let sm = &mut self.sm;
        sm.blocks.clear();
        sm.ports.iter_mut().for_each(Port::reset);
        sm.slots.clear();
        sm.last_start = 0.0;
        sm.origin = 0;
    }

    /// Replays the wave whose blocks left `logs` (latencies resolved, in dispatch order) on one
    /// SM, accounting its work on `work`; returns each block's cycles from its start to its last
    /// warp's retirement, in order.
    pub fn wave(&mut self, cx: Ctx, logs: &[BlockLog], work: &mut SmWork) -> Vec<u64> {
        SCRATCH.with_borrow_mut(|scratch| scratch.wave(&mut self.sm, cx, logs, work))
    }
}

impl Scratch {
    /// [`Replay::wave`] of `sm` on this scratch (its queue and boards are made afresh for the
    /// wave, [`Keys::clear`] and zeroed registers).
    fn wave(&mut self, sm: &mut Sm, cx: Ctx, logs: &[BlockLog], work: &mut SmWork) -> Vec<u64> {
        let total: usize = logs.iter().map(|l| l.warps.len()).sum();
        let n = cx.program.num_regs;
        if total <= RING && n <= SMALL {
            // The program's registers are zero before the wave (as in `regs`); the board's
            // other entries are never read.
            if self.small.len() < total {
                let zero = Small {
                    ready: [0; BOARD],
                    whys: [0; SMALL],
                };
                self.small.resize(total, zero);
            }
            let boards = &mut self.small[..total];
            // The first `n` entries, rounded up to 8, in 32-byte stores of a zero the compiler
            // cannot see (else the loop is a `memset` call again): `fill(0)` of `n` was a call
            // per board, ~1.3% of transpose_smem's time (perf).
            let zero = std::hint::black_box([0u32; 8]);
            let k = n.div_ceil(8);
            for b in boards.iter_mut() {
                b.ready.as_chunks_mut::<8>().0[..k].fill(zero);
            }
            let boards: Vec<&mut Small> = boards.iter_mut().collect();
            sm.wave(
                self.ring.get_or_insert_with(Ring::default),
                boards,
                cx,
                logs,
                work,
            )
        } else {
            self.regs.clear();
            self.regs.resize(total * n, 0);
            self.whys.resize(total * n, 0);
            let (mut regs, mut whys) = (&mut self.regs[..], &mut self.whys[..]);
            let mut wides: Vec<Wide> = (0..total)
                .map(|_| {
                    let (ready, rest) = std::mem::take(&mut regs).split_at_mut(n);
                    regs = rest;
                    let (w, rest) = std::mem::take(&mut whys).split_at_mut(n);
                    whys = rest;
                    Wide { ready, whys: w }
                })
                .collect();
            let boards: Vec<&mut Wide> = wides.iter_mut().collect();
            if total <= RING {
                sm.wave(
                    self.ring.get_or_insert_with(Ring::default),
                    boards,
                    cx,
                    logs,
                    work,
                )
            } else {
                sm.wave(&mut self.heap, boards, cx, logs, work)
            }
        }
    }
}

impl Sm {
    /// [`Replay::wave`] with the ready warps in `q`.
    fn wave<Q: Keys, R: Board + ?Sized>(
        &mut self,
        q: &mut Q,
        boards: Vec<&mut R>,
        cx: Ctx,
        logs: &[BlockLog],
        work: &mut SmWork,
    ) -> Vec<u64> {
        self.wave_with(q, boards, cx, logs, work, true)
    }

    /// [`Sm::wave`], with [`Warp::fast`] (else every instruction through [`Warp::step`], which
    /// the tests compare it with).
    fn wave_with<Q: Keys, R: Board + ?Sized>(
        &mut self,
        q: &mut Q,
        boards: Vec<&mut R>,
        cx: Ctx,
        logs: &[BlockLog],
        work: &mut SmWork,
        fast: bool,
    ) -> Vec<u64> {
        let slots = self.start(cx, logs, work);
        if work.stalls.len() < cx.plans.0.len() {
            work.stalls.resize(cx.plans.0.len(), Stalls::default());
        }
        let n = cx.program.num_regs;
        let total: usize = logs.iter().map(|l| l.warps.len()).sum();
        debug_assert_eq!(boards.len(), total);
        let schedulers = self.schedulers;
        let mut boards = boards.into_iter();
        let mut warps = Vec::with_capacity(total);
        // The next warp's scheduler: the wave's warp number modulo the schedulers.
        let mut port = 0;
        for (k, log) in logs.iter().enumerate() {
            let start = self.blocks[k].start;
            for (i, stream) in log.warps.iter().enumerate() {
                let ready = boards.next().expect("a board per warp");
                warps.push(Warp {
                    stream,
                    ready,
                    log,
                    plan: &IDLE,
                    next: 0,
                    lat: 0,
                    clock: start + cx.costs.warp_start(i as u32),
                    seen: start + cx.costs.warp_start(i as u32),
                    issued_max: 0,
                    port,
                    drain: 0,
                    loop_pc: u32::MAX,
                    trips: 0,
                    block: u16::try_from(k).expect("at most 65,536 blocks in a wave"),
                    at_barrier: false,
                    stored: [0; 3],
                });
                port += 1;
                if port as usize == schedulers {
                    port = 0;
                }
            }
        }
        let first_uses = logs.first().is_some_and(|l| l.wave == 0);
        let env = Env {
            costs: cx.costs,
            shared_latency: cx.shared_latency,
            rare: CONST | BARRIER | if first_uses { UNIT } else { 0 },
            fast: match (fast, first_uses) {
                (false, _) => 0,
                (true, true) => FAST_FIRST,
                (true, false) => FAST_LATER,
            },
            regs: n,
        };
        let mut ev = Events {
            q,
            warps: &mut warps,
            blocks: &mut self.blocks,
            ports: &mut self.ports,
            plans: &cx.plans.0,
            costs: cx.costs,
        };
        ev.q.clear();
        for w in 0..total {
            ev.queue_first(w, work);
        }
        ev.run(env, work);
        // A warp's time from its last issue to its retirement: its stores' acknowledgements.
        for h in &warps {
            let (end, last) = (h.finish(n), h.stream.last());
            if let (true, Some(e)) = (end > h.seen, last) {
                work.stalls[e.pc as usize].0[usize::from(stall::DRAIN)] += u64::from(end - h.seen);
            }
        }
        let mut out = Vec::with_capacity(self.blocks.len());
        for (b, (slot, start)) in self.blocks.iter().zip(slots) {
            let end = warps[b.first..b.first + b.warps]
                .iter()
                .map(|h| h.finish(n))
                .max()
                .unwrap_or(b.start);
            let dur = end.saturating_sub(b.start);
            self.slots[slot] = start + f64::from(dur);
            out.push(u64::from(dur));
        }
        out
    }

    /// Places the wave's blocks in the SM's block slots and sets up their records and the
    /// schedulers.
    fn start(&mut self, cx: Ctx, logs: &[BlockLog], work: &mut SmWork) -> Vec<(usize, f64)> {
        self.blocks.clear();
        let schedulers = cx.costs.schedulers.max(1) as usize;
        assert!(schedulers <= MAX_SCHEDULERS, "{schedulers} warp schedulers");
        if self.schedulers != schedulers {
            self.ports.iter_mut().for_each(Port::reset);
            self.schedulers = schedulers;
        }
        work.set_dram_share(cx.costs);
        // Fills in flight matter only to loads that hit L1 (a wave without them is spared the
        // fills' map).
        // (A flag per log: scanning the records read them a batch after they were written, out
        // of the host's caches.)
        work.expect_hits(logs.iter().any(|l| l.load_hits));
        let starts = self.place(cx, logs);
        let origin = starts.first().map_or(0, |&(_, s)| s as u64);
        work.advance(origin.saturating_sub(self.origin));
        self.origin = origin;
        self.ports.iter_mut().for_each(|p| p.set_origin(origin));
        work.set_pipe_origin(origin);
        let mut first = 0;
        for (k, log) in logs.iter().enumerate() {
            let warps = log.warps.len();
            self.blocks.push(Block {
                start: (starts[k].1 - origin as f64).round() as u32,
                first,
                warps,
                live: warps,
                arrived: 0,
            });
            first += warps;
        }
        starts
    }

    /// The slot and start cycle (of the launch) of each of the wave's blocks: in dispatch order,
    /// each in the slot that frees first and no sooner than the dispatch interval after the
    /// previous block (as [`SmWork::latency`] places them).
    fn place(&mut self, cx: Ctx, logs: &[BlockLog]) -> Vec<(usize, f64)> {
        if self.slots.is_empty() {
            self.slots = vec![0.0; logs.len().max(1)];
            self.last_start = f64::NEG_INFINITY;
        }
        let dispatch = cx
            .costs
            .block_dispatch(logs.first().map_or(1, |l| l.warps.len() as u32));
        let mut taken = vec![false; self.slots.len()];
        let mut out = Vec::with_capacity(logs.len());
        for _ in logs {
            let slot = (0..self.slots.len())
                .filter(|&i| !taken[i])
                .min_by(|&a, &b| self.slots[a].total_cmp(&self.slots[b]));
            let slot = slot.unwrap_or_else(|| {
                self.slots.push(0.0);
                taken.push(false);
                self.slots.len() - 1
            });
            taken[slot] = true;
            let start = self.slots[slot].max(self.last_start + dispatch).max(0.0);
            self.last_start = start;
            out.push((slot, start));
        }
        out
    }
}

/// The wave's event loop: its warps, their blocks, the schedulers and the queue of ready warps.
struct Events<'e, 'a, Q, R: Board + ?Sized> {
    q: &'e mut Q,
    warps: &'e mut [Warp<'a, R>],
    blocks: &'e mut [Block],
    ports: &'e mut [Port; MAX_SCHEDULERS],
    plans: &'a [Plan],
    costs: &'a Costs,
}

impl<Q: Keys, R: Board + ?Sized> Events<'_, '_, Q, R> {
    /// Issues the queued warps' instructions in the order of their keys (cycle, then warp).
    ///
    /// The warp of the smallest key runs (out of the queue) for as long as it stays the
    /// earliest ready warp: while its next instruction's key is below `top`, the smallest key
    /// in the queue, as nothing enters the queue while it runs (only a barrier's release or the
    /// end of a block queues warps, and the warp stops there). Then [`Keys::switch`] queues it
    /// and hands over to `top`'s warp, or it parks at a barrier or retires.
    ///
    /// Not inlined into the wave's set-up: the event loop's registers are allocated on its own
    /// (inlined, a change to the set-up moved the loop's spills by 1% of the host's
    /// instructions either way).
    #[inline(never)]
    fn run(&mut self, env: Env, work: &mut SmWork) {
        let plans = self.plans;
        let Some((mut key, mut top)) = self.q.pop_first() else {
            return;
        };
        loop {
            let w = key as u32;
            let h = &mut self.warps[w as usize];
            let port = &mut self.ports[h.port as usize % MAX_SCHEDULERS];
            // The warp goes on while its key, `want << 32 | w`, is below `top` (no other key
            // equals its own).
            let lim = (top >> 32) + u64::from(w < top as u32);
            // The key's cycle is the warp's issue time: nothing but the warp itself changes its
            // scoreboard while it waits in the queue.
            let next = h.run(env, plans, work, port, (key >> 32) as u32, lim);
            // Only this warp's scheduler took cycles (trimming earlier or later changes no
            // result: no warp asks for a cycle before its floor).
            let long = port.long();
            match next {
                Some(next) => (key, top) = (top, self.q.switch(pack(next, w), top)),
                // `top` is still the smallest key unless a barrier's release queued warps.
                None if !self.park_or_retire(w as usize, work) && top != u64::MAX => {
                    (key, top) = (top, self.q.take(top));
                }
                None => match self.q.pop_first() {
                    Some(first) => (key, top) = first,
                    None => {
                        if long {
                            self.trim();
                        }
                        return;
                    }
                },
            }
            if long {
                self.trim();
            }
        }
    }

    /// Queues warp `w` for its first instruction, or retires it when its stream is empty: as
    /// [`Events::queue_or_retire`], whose issue time is the floor's next cycle (every register
    /// is ready at cycle 0 when the wave starts).
    fn queue_first(&mut self, w: usize, work: &mut SmWork) {
        let h = &mut self.warps[w];
        prefetch_stream(h.stream);
        match h.stream.first() {
            Some(&e) => {
                h.plan = &self.plans[e.pc as usize];
                h.lat = e.lat;
                debug_assert_eq!(h.issue_time(&h.plan.deps), h.clock + 1);
                self.q.push(pack(h.clock + 1, w as u32));
            }
            None => self.queue_or_retire(w, work),
        }
    }

    /// Queues warp `w` for its next instruction, or retires it when its stream is done.
    fn queue_or_retire(&mut self, w: usize, work: &mut SmWork) {
        let h = &mut self.warps[w];
        match h.stream.get(h.next as usize) {
            Some(&e) => {
                h.plan = &self.plans[e.pc as usize];
                h.lat = e.lat;
                let t = h.issue_time(&h.plan.deps);
                self.q.push(pack(t, w as u32));
            }
            None => {
                let k = h.block as usize;
                self.blocks[k].live -= 1;
                self.release(k, work);
            }
        }
    }

    /// Warp `w`, out of the queue, has parked at a barrier or retired: counts it in its block and
    /// releases the block's barrier if it was the last one there; returns whether it did.
    fn park_or_retire(&mut self, w: usize, work: &mut SmWork) -> bool {
        let h = &self.warps[w];
        let k = h.block as usize;
        let blk = &mut self.blocks[k];
        if h.at_barrier {
            blk.arrived += 1;
        } else {
            blk.live -= 1;
        }
        // Most warps retire from blocks without a barrier pending: nothing to release.
        blk.arrived != 0 && blk.arrived >= blk.live && self.release(k, work)
    }

    /// Releases block `k`'s barrier once every warp still running has arrived: after the latest
    /// arrival and the barrier unit's time. Returns whether it did (and so queued warps).
    fn release(&mut self, k: usize, work: &mut SmWork) -> bool {
        let blk = self.blocks[k];
        if blk.arrived == 0 || blk.arrived < blk.live {
            return false;
        }
        let range = blk.first..blk.first + blk.warps;
        let Some(t) = self.warps[range.clone()]
            .iter()
            .filter(|h| h.at_barrier)
            .map(|h| h.clock)
            .max()
        else {
            return false;
        };
        // The arrivals pass the barrier unit one after another.
        let t = t + self.costs.barrier(blk.arrived);
        self.blocks[k].arrived = 0;
        for w in range {
            let h = &mut self.warps[w];
            if h.at_barrier {
                h.at_barrier = false;
                h.clock = t;
                // From the barrier's issue to the release: `barrier` (its entry is the one
                // before the warp's next).
                let pc = h.stream[h.next as usize - 1].pc as usize;
                work.stalls[pc].0[usize::from(stall::BARRIER)] +=
                    u64::from(t.saturating_sub(h.seen));
                h.seen = h.seen.max(t);
                self.queue_or_retire(w, work);
            }
        }
        true
    }

    /// Forgets the scheduler cycles no warp can ask for any more (before every floor).
    #[cold]
    fn trim(&mut self) {
        let safe = (self.warps.iter())
            .map(|h| u64::from(h.clock) + 1)
            .min()
            .unwrap_or(0);
        self.ports.iter_mut().for_each(|p| p.forget_before(safe));
    }
}

//! The timing pass: replays the instruction streams of the blocks co-resident on one SM in a wave,
//! event by event, on per-warp scoreboards that share the SM's warp schedulers.
//!
//! - **Blocks and warps.** Blocks start in dispatch order, each in the SM's block slot that frees
//!   first and no sooner than [`Costs::block_dispatch`] after the previous one (the first wave's
//!   blocks that far apart, a later wave's as the earlier wave's blocks retire); the SM launches a
//!   block's warps [`Costs::warp_start`] apart. The replay keeps the schedulers' calendars from
//!   wave to wave, so a wave's warps find the cycles the previous wave's warps took (older warps
//!   first). Warp `w` of the wave (counting the warps of its blocks in dispatch order) belongs to
//!   scheduler `w % schedulers` (four sub-cores per SM, [paper] Huerta25 §5.4; warp id modulo
//!   the schedulers is how [sim] Accel-Sim assigns them).
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
//! - **Barriers.** `bar.sync` waits for the warp's outstanding results, then for every warp of
//!   its block still running; the last arrival releases them after [`Costs::barrier`].
//!
//! A block is done when its last warp has retired and its stores are acknowledged; the pass
//! returns each block's cycles from its start ([`SmWork::latency`] places them in the slots again
//! for the launch's latency bound, sampled waves included).

use super::sched::{Heap, Keys, Port, Ring, RING};
use super::{Costs, SmWork, Unit};
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{DInst, Program, Src, NO_REG};
use crate::ptx::inst::Op;
use crate::trace::{BlockLog, Entry, MEM, TICKET};

/// The registers one instruction waits for and writes, read once from its [`DInst`] so the
/// replay's inner loop touches a few bytes instead of the decoded instruction.
#[derive(Debug, Clone, Copy, Default)]
struct Deps {
    /// Source registers (operands, address base, guard); `n_src` of them.
    src: [u16; 7],
    n_src: u8,
    /// Destination registers; `n_dst` of them.
    dst: [u16; 4],
    n_dst: u8,
}

impl Deps {
    fn of(inst: &DInst) -> Self {
        let mut d = Deps::default();
        let add = |s: &Src, d: &mut Deps| {
            if let Src::Reg(r) | Src::NotPred(r) = s {
                d.src[usize::from(d.n_src)] = *r;
                d.n_src += 1;
            }
        };
        for s in &inst.src[..usize::from(inst.nsrc)] {
            add(s, &mut d);
        }
        if let Some(a) = &inst.addr {
            add(&a.base, &mut d);
        }
        if inst.guard != NO_REG {
            add(&Src::Reg(inst.guard), &mut d);
        }
        for &r in inst.dst.iter().filter(|&&r| r != NO_REG) {
            d.dst[usize::from(d.n_dst)] = r;
            d.n_dst += 1;
        }
        d
    }
}

/// How the replay treats an instruction once issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    /// `bar.sync`, `bar.red`: waits for the warp's results, then for its block.
    Barrier,
    /// A branch.
    Bra,
    /// A load, or an atomic whose result is used: its destinations are ready after its latency.
    Load,
    /// A store, or an atomic whose result is not used: acknowledged after its latency.
    Drain,
    /// A shuffle: the shared-memory latency.
    Shfl,
    /// `exit`, `ret`, `bar.warp.sync`: no result.
    Nothing,
    /// Everything else: its SASS steps times the ALU latency.
    #[default]
    Alu,
}

/// What the replay needs of one instruction, read once per launch from the program and its costs
/// so that an issue touches a few bytes: registers, kind, SASS slots, result latency, and what
/// the SM's work accounts for it.
#[derive(Debug, Clone, Copy, Default)]
struct Plan {
    deps: Deps,
    /// Its instruction's index in the program.
    pc: u32,
    kind: Kind,
    /// SASS issue slots ([`crate::timing::sass::Sass::slots`]).
    slots: u32,
    /// ALU result latency (cycles), [`Costs::result_latency`].
    result: u32,
    /// Constant-pipe cycles an issue adds (a pointer parameter's LDC.64), or 0.
    const_cycles: f64,
    /// The unit whose first use it may be.
    unit: Option<Unit>,
    /// A branch ptxas if-converts (no branch in SASS).
    if_converted: bool,
    /// The rare work its issue does: [`CONST`] (constant-pipe cycles), [`BARRIER`] (a
    /// `bar.sync`'s arrival occupies the barrier unit), [`UNIT`] (it may be a unit's first use);
    /// one test for the three.
    rare: u8,
    /// An ALU instruction or a load of one SASS slot or none (folded into another) and one
    /// destination, not a `bar.sync`: most of a stream, issued by [`Warp::fast`] when it is not
    /// a unit's first use ([`FAST_LATER`] and [`FAST_FIRST`]: in waves that note first uses,
    /// [`Env::fast`], and in the others) and a load's entry carries its latency. A pointer
    /// parameter's load (constant-pipe cycles) is one too: every kernel's warps load a few.
    fast: u8,
    /// `!0` for a load, whose entry carries its latency, `0` for an ALU instruction: the latency
    /// [`Warp::fast`] adds to `result` is the entry's latency masked with it.
    lat_mask: u32,
}

impl Plan {
    fn of(costs: &Costs, pc: u32, inst: &DInst) -> Self {
        let s = costs.sass.at(pc);
        let kind = match inst.op {
            Op::BarSync | Op::BarRed(_) => Kind::Barrier,
            Op::Bra => Kind::Bra,
            Op::Ld(_) => Kind::Load,
            Op::St(_) => Kind::Drain,
            Op::Atom(_) | Op::Red(_) if inst.dst[0] == NO_REG => Kind::Drain,
            Op::Atom(_) | Op::Red(_) => Kind::Load,
            Op::Shfl(_) => Kind::Shfl,
            Op::Exit | Op::Ret | Op::WarpSync => Kind::Nothing,
            _ => Kind::Alu,
        };
        let plan = Plan {
            deps: Deps::of(inst),
            pc,
            kind,
            slots: u32::from(s.slots),
            // A load's result waits for its entry's latency alone.
            result: if kind == Kind::Load {
                0
            } else {
                costs.result_latency(pc)
            },
            // A pointer parameter is an LDC.64 on the constant pipe, always a hit.
            const_cycles: match inst.op {
                Op::Ld(m) if m.space == StateSpace::Param => f64::from(s.ldc) * costs.const_serial,
                _ => 0.0,
            },
            unit: Unit::of(costs, pc, inst),
            if_converted: costs.sass.skipped(pc).is_some(),
            rare: 0,
            fast: 0,
            lat_mask: if kind == Kind::Load { !0 } else { 0 },
        };
        let flag = |set: bool, f: u8| if set { f } else { 0 };
        let rare = flag(plan.const_cycles != 0.0, CONST)
            | flag(inst.op == Op::BarSync, BARRIER)
            | flag(plan.unit.is_some(), UNIT);
        let fast = matches!(kind, Kind::Alu | Kind::Load)
            && plan.slots <= 1
            && rare & BARRIER == 0
            && plan.deps.n_dst == 1;
        Plan {
            rare,
            fast: flag(fast, FAST_LATER) | flag(fast && rare & UNIT == 0, FAST_FIRST),
            ..plan
        }
    }
}

/// The plan a warp holds before it is queued (no instruction).
const IDLE: Plan = Plan {
    deps: Deps {
        src: [0; 7],
        n_src: 0,
        dst: [0; 4],
        n_dst: 0,
    },
    pc: 0,
    kind: Kind::Nothing,
    slots: 0,
    result: 0,
    const_cycles: 0.0,
    unit: None,
    if_converted: false,
    rare: 0,
    fast: 0,
    lat_mask: 0,
};

/// [`Plan::rare`]: constant-pipe cycles.
const CONST: u8 = 1;
/// [`Plan::rare`]: a `bar.sync`.
const BARRIER: u8 = 2;
/// [`Plan::rare`]: a unit's first use, maybe.
const UNIT: u8 = 4;

/// Warp schedulers an SM may have (`sm.schedulers`, 1 to 8: [`crate::config`]).
const MAX_SCHEDULERS: usize = 8;

/// [`Plan::fast`]: issued by [`Warp::fast`] in waves that do not note first uses.
const FAST_LATER: u8 = 1;
/// [`Plan::fast`]: issued by [`Warp::fast`] in waves that note first uses ([`UNIT`]).
const FAST_FIRST: u8 = 2;

/// The [`Plan`] of each instruction of a launch's program, made once per launch and shared by
/// every SM's replay.
#[derive(Debug, Default)]
pub struct Plans(Vec<Plan>);

impl Plans {
    /// The plans of `program`'s instructions under `costs` (with the program's SASS profile).
    pub fn new(costs: &Costs, program: &Program) -> Self {
        Plans(
            (program.insts.iter().enumerate())
                .map(|(pc, i)| Plan::of(costs, pc as u32, i))
                .collect(),
        )
    }
}

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
/// host thread's, [`Scratch`].)
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
    /// The same per warp as a [`Small`] board, for waves of at most [`RING`] warps of a
    /// program of at most [`SMALL`] registers.
    small: Vec<Small>,
}

thread_local! {
    /// This thread's [`Scratch`].
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
    /// The latest cycle it issued an instruction (a branch's successors issue after it).
    issued_max: u32,
    /// Cycle by which every store has been acknowledged.
    drain: u32,
    /// Its block's index in the wave.
    block: u16,
    /// Its scheduler (the SM's warp number modulo the schedulers).
    port: u8,
    /// Waiting at `bar.sync`.
    at_barrier: bool,
}

impl<R: Board + ?Sized> Warp<'_, R> {
    /// The first cycle an instruction with `deps` can issue: after the floor, once its sources
    /// are ready.
    #[inline(always)]
    fn issue_time(&self, deps: &Deps) -> u32 {
        // `take` rather than a slice: no bounds check on the count.
        (deps.src.iter().take(usize::from(deps.n_src)))
            .fold(self.clock + 1, |t, &r| t.max(self.ready.at(r)))
    }

    /// The cycle the last of its results is ready (the program has `n` registers).
    fn results_ready(&self, n: usize) -> u32 {
        self.ready.first(n).iter().copied().max().unwrap_or(0)
    }

    fn finish(&self, n: usize) -> u32 {
        self.clock.max(self.drain).max(self.results_ready(n))
    }
}

/// A warp's scoreboard: the cycle each of its registers' value is ready.
trait Board {
    /// Register `r`'s cycle.
    fn at(&self, r: u16) -> u32;
    /// Sets register `r`'s cycle.
    fn set(&mut self, r: u16, t: u32);
    /// The first `n` registers' cycles.
    fn first(&self, n: usize) -> &[u32];
}

impl Board for [u32] {
    #[inline(always)]
    fn at(&self, r: u16) -> u32 {
        self[usize::from(r)]
    }

    #[inline(always)]
    fn set(&mut self, r: u16, t: u32) {
        self[usize::from(r)] = t;
    }

    fn first(&self, n: usize) -> &[u32] {
        &self[..n]
    }
}

/// Registers a [`Small`] board holds.
const SMALL: usize = 256;

/// Entries of a [`Small`] board: [`SMALL`] and a cache line more, so that the boards of a wave,
/// one after another, do not map a register's line to the same few sets of the host's L1 data
/// cache (1 KiB apart, every fourth board's line of a register falls in the same set of a
/// 4 KiB-periodic cache: conflict misses with 48 warps per SM).
const BOARD: usize = SMALL + 16;

/// The scoreboard of a program of at most [`SMALL`] registers: a register's index, below
/// [`SMALL`], is its low byte, so that a look-up needs no bounds check (nor the board's length
/// in a register of the replay's hot loop).
type Small = [u32; BOARD];

impl Board for Small {
    #[inline(always)]
    fn at(&self, r: u16) -> u32 {
        debug_assert!(usize::from(r) < SMALL);
        self[usize::from(r as u8)]
    }

    #[inline(always)]
    fn set(&mut self, r: u16, t: u32) {
        debug_assert!(usize::from(r) < SMALL);
        self[usize::from(r as u8)] = t;
    }

    fn first(&self, n: usize) -> &[u32] {
        &self[..n]
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
                self.small.resize(total, [0; BOARD]);
            }
            let boards = &mut self.small[..total];
            // The first `n` entries, rounded up to 8, in 32-byte stores of a zero the compiler
            // cannot see (else the loop is a `memset` call again): `fill(0)` of `n` was a call
            // per board, ~1.3% of transpose_smem's time (perf).
            let zero = std::hint::black_box([0u32; 8]);
            let k = n.div_ceil(8);
            for b in boards.iter_mut() {
                b.as_chunks_mut::<8>().0[..k].fill(zero);
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
            let mut regs = &mut self.regs[..];
            let boards = (0..total).map(|_| {
                let (ready, rest) = std::mem::take(&mut regs).split_at_mut(n);
                regs = rest;
                ready
            });
            let boards: Vec<&mut [u32]> = boards.collect();
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
                    issued_max: 0,
                    port,
                    drain: 0,
                    block: u16::try_from(k).expect("at most 65,536 blocks in a wave"),
                    at_barrier: false,
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
            ev.queue_first(w);
        }
        ev.run(env, work);
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
                None if !self.park_or_retire(w as usize) && top != u64::MAX => {
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
    fn queue_first(&mut self, w: usize) {
        let h = &mut self.warps[w];
        prefetch_stream(h.stream);
        match h.stream.first() {
            Some(&e) => {
                h.plan = &self.plans[e.pc as usize];
                h.lat = e.lat;
                debug_assert_eq!(h.issue_time(&h.plan.deps), h.clock + 1);
                self.q.push(pack(h.clock + 1, w as u32));
            }
            None => self.queue_or_retire(w),
        }
    }

    /// Queues warp `w` for its next instruction, or retires it when its stream is done.
    fn queue_or_retire(&mut self, w: usize) {
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
                self.release(k);
            }
        }
    }

    /// Warp `w`, out of the queue, has parked at a barrier or retired: counts it in its block and
    /// releases the block's barrier if it was the last one there; returns whether it did.
    fn park_or_retire(&mut self, w: usize) -> bool {
        let h = &self.warps[w];
        let k = h.block as usize;
        let blk = &mut self.blocks[k];
        if h.at_barrier {
            blk.arrived += 1;
        } else {
            blk.live -= 1;
        }
        // Most warps retire from blocks without a barrier pending: nothing to release.
        blk.arrived != 0 && blk.arrived >= blk.live && self.release(k)
    }

    /// Releases block `k`'s barrier once every warp still running has arrived: after the latest
    /// arrival and the barrier unit's time. Returns whether it did (and so queued warps).
    fn release(&mut self, k: usize) -> bool {
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
            if self.warps[w].at_barrier {
                self.warps[w].at_barrier = false;
                self.warps[w].clock = t;
                self.queue_or_retire(w);
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

impl<'a, R: Board + ?Sized> Warp<'a, R> {
    /// Issues the warp's instructions, the first ready at cycle `want`, until the key of the
    /// next one is not below `lim << 32` (nor its cycle below `lim` when the warp's number is
    /// smaller than the next key's): returns that instruction's cycle; or until it parks at a
    /// barrier or retires (`None`).
    #[inline(always)]
    fn run(
        &mut self,
        env: Env,
        plans: &'a [Plan],
        work: &mut SmWork,
        port: &mut Port,
        mut want: u32,
        lim: u64,
    ) -> Option<u32> {
        let mut next = self.next as usize;
        // A queued warp has an instruction to issue: its entry `next`.
        debug_assert_eq!(
            self.stream.get(next).map(|e| (e.pc, e.lat)),
            Some((self.plan.pc, self.lat))
        );
        let (mut p, mut e_lat) = (self.plan, self.lat);
        let out = loop {
            next += 1;
            // A load's plain latency (a ticket or an access the general path resolves).
            let lat = e_lat & p.lat_mask;
            if p.fast & env.fast != 0 && lat & (TICKET | MEM) == 0 {
                self.fast(p, work, port, want, lat);
            } else if self.step(env, p, work, port, want, e_lat) {
                break None;
            }
            let Some(&n) = self.stream.get(next) else {
                break None;
            };
            (p, e_lat) = (&plans[n.pc as usize], n.lat);
            want = self.issue_time(&p.deps);
            if u64::from(want) >= lim {
                (self.plan, self.lat) = (p, e_lat);
                break Some(want);
            }
        };
        self.next = next as u32;
        out
    }

    /// [`Warp::step`] for a [`Plan::fast`] instruction: one slot or none, its constant-pipe
    /// cycles, its one result after its latency (`lat`, a load's, added to [`Plan::result`]).
    #[inline(always)]
    fn fast(&mut self, p: &Plan, work: &mut SmWork, port: &mut Port, want: u32, lat: u32) {
        debug_assert!(p.fast != 0 && p.deps.n_dst == 1);
        // In issue order, as the general path adds them (a sum of floats).
        if p.rare & CONST != 0 {
            work.const_cycles += p.const_cycles;
        }
        let dst = p.deps.dst[0];
        let result = p.result + lat;
        if p.slots == 0 {
            // Folded: it takes no cycle, and the floor moves to its cycle if it was the next.
            self.issued_max = self.issued_max.max(want);
            self.ready.set(dst, want + result);
            if want == self.clock + 1 {
                self.clock = want;
            }
            return;
        }
        // `work.now` is left alone: only memory accesses read it, and they set it in `step`.
        let issue = port.take(u64::from(want)) as u32;
        self.issued_max = self.issued_max.max(issue);
        work.issue_slots += 1;
        self.ready.set(dst, issue + result);
        // One slot: the floor moves to the issue cycle when the instruction waited only for
        // the scheduler, else by one.
        self.clock = if want == self.clock + 1 {
            issue
        } else {
            self.clock + 1
        };
    }

    /// Issues the instruction planned as `p`, of an entry with latency `lat` and ready at cycle
    /// `want`, on the warp's scheduler `port`, accounting it on the SM's `work`; returns whether
    /// the warp parked at a barrier.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn step(
        &mut self,
        env: Env,
        p: &Plan,
        work: &mut SmWork,
        port: &mut Port,
        want: u32,
        lat: u32,
    ) -> bool {
        debug_assert_eq!(want, self.issue_time(&p.deps));
        let costs = env.costs;
        let log = self.log;
        let front = want == self.clock + 1;
        let slots = p.slots;
        let (issue, last) = take_slots(port, want, slots);
        // SASS issue slots, constant-pipe and barrier work, first use of a unit.
        work.now = issue;
        self.issued_max = self.issued_max.max(issue);
        work.issue_slots += u64::from(slots);
        let rare = p.rare & env.rare;
        if rare != 0 {
            if rare & CONST != 0 {
                work.const_cycles += p.const_cycles;
            }
            if rare & BARRIER != 0 {
                work.barrier_cycles += costs.barrier_per_warp;
            }
            if let (true, Some(u)) = (rare & UNIT != 0, p.unit) {
                work.starts.note(u, issue);
            }
        }
        let ready = match p.kind {
            Kind::Barrier => {
                // The barrier waits for the warp's outstanding results, then for the others.
                self.clock = issue.max(self.results_ready(env.regs));
                self.at_barrier = true;
                return true;
            }
            Kind::Bra => {
                // Instructions after a branch issue after it and all before it (ptxas does not
                // move instructions across a branch, and a warp issues in order); an
                // if-converted branch is no branch in SASS. An if-converted region is issued even
                // when every lane skips it (`lat` 1: every lane jumped).
                if !p.if_converted {
                    self.clock = self.clock.max(issue).max(self.issued_max);
                }
                if lat == 1 {
                    let k = work.skipped(costs, p.pc);
                    if k > 0 {
                        self.clock = take_slots(port, self.clock + 1, k).1;
                    }
                }
                None
            }
            Kind::Load => Some(issue + latency(lat, costs, log, work)),
            Kind::Drain => {
                self.drain = self.drain.max(issue + latency(lat, costs, log, work));
                None
            }
            Kind::Shfl => Some(issue + env.shared_latency),
            Kind::Nothing => None,
            // Results of a multi-instruction expansion are late by what its last slot waited.
            Kind::Alu => Some((last + 1).saturating_sub(slots.max(1)).max(issue) + p.result),
        };
        if let Some(t) = ready {
            for &d in p.deps.dst.iter().take(usize::from(p.deps.n_dst)) {
                self.ready.set(d, t);
            }
        }
        // An instruction that waited only for the scheduler holds back the warp's later ones.
        self.clock += slots;
        if front {
            self.clock = self.clock.max(last);
        }
        false
    }
}

/// Takes `slots` issue cycles of `port`, the first at or after `want`; returns the first and the
/// last (both `want` when the instruction issues nothing).
#[inline(always)]
fn take_slots(port: &mut Port, want: u32, slots: u32) -> (u32, u32) {
    if slots == 0 {
        return (want, want);
    }
    let first = port.take(u64::from(want)) as u32;
    if slots == 1 {
        return (first, first);
    }
    let mut last = first;
    for _ in 1..slots {
        last = port.take(u64::from(last) + 1) as u32;
    }
    (first, last)
}

/// The latency of an entry's `lat`: its own, or what the L2 pass found for its request (a DRAM
/// access waits behind the DRAM traffic its SM's wave queued before it), and for a global or local
/// access what the L1 data pipe, fills in flight and store merging make of it.
#[inline(always)]
fn latency(lat: u32, costs: &Costs, log: &BlockLog, work: &mut SmWork) -> u32 {
    // Most entries carry their latency (constant, shared, parameter loads).
    if lat & (TICKET | MEM) == 0 {
        return lat;
    }
    resolved(lat, costs, log, work)
}

/// Asks the host to bring the first lines of a warp's stream past its first into its caches
/// when the wave starts: the event loop's load of a warp's next entry, a batch after the
/// execution pass wrote it, waited for memory in 29% of the loop's samples (`perf annotate` of
/// the benchmark's read_stride), and the wave's warps interleave their streams too finely for
/// the host's own prefetcher. Only a hint (x86-64's `prefetcht0`; nothing elsewhere).
#[inline(always)]
fn prefetch_stream(stream: &[Entry]) {
    const LINE: usize = 64 / std::mem::size_of::<Entry>();
    let mut k = LINE;
    while k < stream.len().min(4 * LINE) {
        crate::memory::prefetch_line(stream.as_ptr().wrapping_add(k).cast());
        k += LINE;
    }
}

/// [`latency`] of a ticket or a global or local access.
#[inline(never)]
fn resolved(lat: u32, costs: &Costs, log: &BlockLog, work: &mut SmWork) -> u32 {
    let ticket = |lat: u32, work: &mut SmWork| {
        if lat & TICKET == 0 {
            return lat;
        }
        let o = log.out[(lat & !TICKET) as usize].get();
        if o.dram {
            costs.dram_queued(work.queue_dram(o.dram_bytes))
        } else {
            // The queue moves on all the same; only a DRAM access waits for it.
            work.queue_dram_only(o.dram_bytes);
            o.lat
        }
    };
    if lat & TICKET == 0 && lat & MEM != 0 {
        let m = log.mems[(lat & !MEM) as usize];
        let l = ticket(m.lat, work);
        let sectors = &log.sectors[m.start as usize..m.end as usize];
        let lines = u32::from(m.lines);
        return work.global_sectors(costs, log.wave, m.dwf, sectors, lines, m.store, m.hit, l);
    }
    ticket(lat, work)
}

#[cfg(test)]
mod tests {
    use super::super::sched::tests::rng;
    use super::*;
    use crate::config::GpuConfig;
    use crate::ptx::ast::StateSpace;
    use crate::ptx::inst::{CacheOp, MemOp};
    use crate::ptx::Type;

    /// `mov` (one SASS instruction, one ALU step) into `dst` from `src`, or from nothing.
    fn mov(dst: u16, src: Option<u16>) -> DInst {
        let mut s = [Src::Imm(0); 4];
        if let Some(r) = src {
            s[0] = Src::Reg(r);
        }
        DInst {
            op: Op::Mov(Type::U32),
            guard: NO_REG,
            guard_negated: false,
            dst: [dst, NO_REG, NO_REG, NO_REG],
            src: s,
            nsrc: u8::from(src.is_some()),
            addr: None,
            target: 0,
        }
    }

    /// A global load into `dst`.
    fn load(dst: u16) -> DInst {
        DInst {
            op: Op::Ld(MemOp {
                space: StateSpace::Global,
                cache: CacheOp::Default,
                vec: 1,
                ty: Type::U32,
                volatile: false,
                nc: false,
            }),
            ..mov(dst, None)
        }
    }

    /// The program `insts` on an H200 whose warps and blocks all start at cycle 0, with
    /// `schedulers` warp schedulers (ALU latency 4).
    fn setup(insts: Vec<DInst>, schedulers: u32) -> (Program, Costs) {
        let cfg = GpuConfig::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/h200.toml"
        )))
        .unwrap();
        let mut costs = Costs::new(&cfg);
        costs.warp_launch = 0.0;
        costs.dispatch = 0.0;
        costs.schedulers = schedulers;
        assert_eq!(costs.alu, 4);
        let n = insts.len();
        let program = Program {
            name: "t".into(),
            insts,
            lines: vec![0; n],
            texts: vec![String::new(); n],
            num_regs: 8,
            reg_slots: vec![1; 8],
        };
        (program, costs)
    }

    /// A block whose warps run `streams` (entries: pc, latency).
    fn block(streams: &[&[(u32, u32)]]) -> BlockLog {
        BlockLog {
            warps: streams
                .iter()
                .map(|s| s.iter().map(|&(pc, lat)| Entry { pc, lat }).collect())
                .collect(),
            ..Default::default()
        }
    }

    /// `blocks` blocks of `warps` warps in `wave`, each warp a random stream of up to 29 entries
    /// (pcs below `pcs`; latencies under 30 cycles, one in five up to 600).
    fn random_logs(
        r: &mut impl FnMut(u64) -> u64,
        wave: usize,
        blocks: usize,
        warps: usize,
        pcs: u64,
    ) -> Vec<BlockLog> {
        (0..blocks)
            .map(|_| {
                let streams: Vec<Vec<(u32, u32)>> = (0..warps)
                    .map(|_| {
                        (0..r(30))
                            .map(|_| {
                                let lat = if r(5) == 0 { 1 + r(600) } else { r(30) };
                                (r(pcs) as u32, lat as u32)
                            })
                            .collect()
                    })
                    .collect();
                let streams: Vec<&[(u32, u32)]> = streams.iter().map(Vec::as_slice).collect();
                BlockLog {
                    wave,
                    ..block(&streams)
                }
            })
            .collect()
    }

    fn replay(program: &Program, costs: &Costs, logs: &[BlockLog]) -> Vec<u64> {
        let plans = Plans::new(costs, program);
        let cx = Ctx {
            program,
            costs,
            shared_latency: 23,
            plans: &plans,
        };
        Replay::default().wave(cx, logs, &mut SmWork::default())
    }

    #[test]
    fn eight_warps_of_four_alu_instructions_share_four_schedulers() {
        let (p, c) = setup((0..4).map(|r| mov(r, None)).collect(), 4);
        let warp: &[(u32, u32)] = &[(0, 0), (1, 0), (2, 0), (3, 0)];
        // Four warps, one per scheduler: issue at cycles 1-4, the last result 4 cycles later.
        assert_eq!(replay(&p, &c, &[block(&[warp; 4])]), vec![8]);
        // Eight warps, two per scheduler: 8 instructions each, issued at cycles 1-8.
        assert_eq!(replay(&p, &c, &[block(&[warp; 8])]), vec![12]);
        // One scheduler: 32 instructions, cycles 1-32.
        let (p, c) = setup((0..4).map(|r| mov(r, None)).collect(), 1);
        assert_eq!(replay(&p, &c, &[block(&[warp; 8])]), vec![36]);
    }

    #[test]
    fn two_warps_on_one_scheduler_interleave() {
        // Blocks of one warp each, both on the one scheduler: the ready warps take turns
        // (cycles 1, 3, 5 and 2, 4, 6), the last results 4 cycles later.
        let (p, c) = setup((0..3).map(|r| mov(r, None)).collect(), 1);
        let warp: &[(u32, u32)] = &[(0, 0), (1, 0), (2, 0)];
        let logs = [block(&[warp]), block(&[warp])];
        assert_eq!(replay(&p, &c, &logs), vec![9, 10]);
        // Two schedulers: warp 1 of the SM has its own; both issue at cycles 1-3.
        let (p, c) = setup((0..3).map(|r| mov(r, None)).collect(), 2);
        assert_eq!(replay(&p, &c, &logs), vec![7, 7]);
    }

    #[test]
    fn a_warp_waiting_for_its_load_lets_another_issue() {
        // Warp 0 loads r0 (100 cycles) and adds to it; warp 1 runs three ALU instructions. On one
        // scheduler warp 1 issues at cycles 2-4 while warp 0 waits; warp 0's add issues at 101.
        let (p, c) = setup(vec![load(0), mov(1, Some(0)), mov(2, None)], 1);
        let logs = [
            block(&[&[(0, 100), (1, 0)]]),
            block(&[&[(2, 0), (2, 0), (2, 0)]]),
        ];
        assert_eq!(replay(&p, &c, &logs), vec![105, 8]);
    }

    /// Twelve random instructions of 8 registers: loads, `bar.sync`s and moves (some of an
    /// immediate), drawn from `r`.
    fn random_insts(r: &mut impl FnMut(u64) -> u64) -> Vec<DInst> {
        (0..12)
            .map(|_| match r(8) {
                0 | 1 => load(r(8) as u16),
                2 => DInst {
                    op: Op::BarSync,
                    dst: [NO_REG; 4],
                    ..mov(0, None)
                },
                _ => {
                    let src = if r(4) > 0 { Some(r(8) as u16) } else { None };
                    mov(r(8) as u16, src)
                }
            })
            .collect()
    }

    #[test]
    fn the_ring_and_the_heap_replay_alike() {
        // Random programs of ALU instructions, loads and barriers, random streams of them, two
        // waves on one SM: the ring's event loop and the heap's (and the two kinds of [`Board`])
        // agree on every block's cycles and
        // on the SM's work.
        for seed in 1..80 {
            let mut r = rng(seed);
            let insts = random_insts(&mut r);
            let (p, c) = setup(insts, 1 + r(4) as u32);
            let plans = Plans::new(&c, &p);
            let cx = Ctx {
                program: &p,
                costs: &c,
                shared_latency: 23,
                plans: &plans,
            };
            let (mut a, mut b) = (Sm::default(), Sm::default());
            let (mut wa, mut wb) = (SmWork::default(), SmWork::default());
            for wave in 0..2 {
                let blocks = 1 + r(4) as usize;
                let warps = 1 + r(16) as usize;
                let logs = random_logs(&mut r, wave, blocks, warps, 12);
                // The ring's replay on small boards (dirty past the program's registers), the
                // heap's on the registers' slices.
                let total = blocks * warps;
                let mut small = vec![[0; BOARD]; total];
                small.iter_mut().for_each(|b| b[8..].fill(u32::MAX));
                let mut flat = vec![0; total * 8];
                let boards = flat.chunks_mut(8).collect();
                let ra = a.wave(
                    &mut Ring::default(),
                    small.iter_mut().collect(),
                    cx,
                    &logs,
                    &mut wa,
                );
                let rb = b.wave(&mut Heap::default(), boards, cx, &logs, &mut wb);
                assert_eq!(ra, rb, "seed {seed} wave {wave}");
            }
            let json = |w: &SmWork| serde_json::to_string(w).unwrap();
            assert_eq!(json(&wa), json(&wb), "seed {seed}");
        }
    }

    #[test]
    fn sms_sharing_a_threads_scratch_replay_as_alone() {
        // Random programs, three SMs of three waves each (up to 96 warps: the ring and the
        // heap, small boards and the registers' slices): replaying the SMs' waves interleaved
        // on this thread (one scratch, left by another SM's wave) gives every SM the cycles and
        // work it gets with its waves alone on a fresh thread (a fresh scratch).
        for seed in 1..40 {
            let mut r = rng(seed);
            let insts = random_insts(&mut r);
            let (mut p, c) = setup(insts, 1 + r(4) as u32);
            // Beyond [`SMALL`] registers: the registers' slices.
            if r(4) == 0 {
                p.num_regs = SMALL + 1;
            }
            let waves: Vec<Vec<Vec<BlockLog>>> = (0..3)
                .map(|_| {
                    (0..3)
                        .map(|wave| {
                            let (blocks, warps) = (1 + r(6) as usize, 1 + r(16) as usize);
                            random_logs(&mut r, wave, blocks, warps, 12)
                        })
                        .collect()
                })
                .collect();
            let run = |sms: &[usize]| {
                let plans = Plans::new(&c, &p);
                let cx = Ctx {
                    program: &p,
                    costs: &c,
                    shared_latency: 23,
                    plans: &plans,
                };
                let mut replays: Vec<Replay> = (0..3).map(|_| Replay::default()).collect();
                let mut works = vec![SmWork::default(); 3];
                let mut cycles = vec![vec![]; 3];
                for wave in 0..3 {
                    for &s in sms {
                        let logs = &waves[s].get(wave).expect("three waves");
                        let out = replays[s].wave(cx, logs, &mut works[s]);
                        cycles[s].push(out);
                    }
                }
                let json = |w: &SmWork| serde_json::to_string(w).unwrap();
                (sms.iter())
                    .map(|&s| (cycles[s].clone(), json(&works[s])))
                    .collect::<Vec<_>>()
            };
            let shared = run(&[0, 1, 2]);
            for (s, shared) in shared.iter().enumerate() {
                let alone = std::thread::scope(|t| t.spawn(|| run(&[s])).join().unwrap());
                assert_eq!(&alone[0], shared, "seed {seed} sm {s}");
            }
        }
    }

    #[test]
    fn the_fast_path_issues_as_the_general_path() {
        // Random programs of ALU instructions (folded ones too), loads (global, shared and
        // parameter ones, a pointer's on the constant pipe) and barriers, random streams of
        // them (plain latencies), two waves on one SM (the first notes units' first uses): the
        // fast path and the general one agree on every block's cycles and on the SM's work.
        let param = |dst: u16, ty: Type| DInst {
            op: Op::Ld(MemOp {
                space: StateSpace::Param,
                cache: CacheOp::Default,
                vec: 1,
                ty,
                volatile: false,
                nc: false,
            }),
            ..mov(dst, None)
        };
        for seed in 1..120 {
            let mut r = rng(seed);
            let reg = |r: &mut dyn FnMut(u64) -> u64| r(8) as u16;
            let insts = (0..14)
                .map(|_| match r(10) {
                    0 => load(reg(&mut r)),
                    1 => {
                        let mut l = load(reg(&mut r));
                        if let Op::Ld(m) = &mut l.op {
                            m.space = StateSpace::Shared;
                        }
                        l
                    }
                    2 => param(reg(&mut r), Type::U32),
                    3 => param(reg(&mut r), Type::U64),
                    4 => DInst {
                        op: Op::BarSync,
                        dst: [NO_REG; 4],
                        ..mov(0, None)
                    },
                    5 => {
                        let src = reg(&mut r);
                        DInst {
                            op: Op::Cvta {
                                to_space: true,
                                space: StateSpace::Global,
                            },
                            ..mov(reg(&mut r), Some(src))
                        }
                    }
                    _ => {
                        let src = if r(4) > 0 { Some(reg(&mut r)) } else { None };
                        mov(reg(&mut r), src)
                    }
                })
                .collect();
            let (p, c) = setup(insts, 1 + r(4) as u32);
            let plans = Plans::new(&c, &p);
            let cx = Ctx {
                program: &p,
                costs: &c,
                shared_latency: 23,
                plans: &plans,
            };
            let (mut a, mut b) = (Sm::default(), Sm::default());
            let (mut wa, mut wb) = (SmWork::default(), SmWork::default());
            for wave in 0..2 {
                let blocks = 1 + r(4) as usize;
                let warps = 1 + r(16) as usize;
                let logs = random_logs(&mut r, wave, blocks, warps, 14);
                let total = blocks * warps;
                let (mut sa, mut sb) = (vec![[0; BOARD]; total], vec![[0; BOARD]; total]);
                let ra = a.wave_with(
                    &mut Ring::default(),
                    sa.iter_mut().collect(),
                    cx,
                    &logs,
                    &mut wa,
                    true,
                );
                let rb = b.wave_with(
                    &mut Ring::default(),
                    sb.iter_mut().collect(),
                    cx,
                    &logs,
                    &mut wb,
                    false,
                );
                assert_eq!(ra, rb, "seed {seed} wave {wave}");
                assert_eq!(sa, sb, "seed {seed} wave {wave}");
            }
            let json = |w: &SmWork| serde_json::to_string(w).unwrap();
            // `now` is the last memory access's issue cycle: the fast path leaves it alone.
            wa.now = wb.now;
            assert_eq!(json(&wa), json(&wb), "seed {seed}");
        }
    }

    #[test]
    fn a_dependent_chain_issues_when_its_operands_are_ready() {
        // r1 <- r0 <- load: 1 + 100, then the mov's 4: ready at 105, the second mov at 109.
        let (p, c) = setup(vec![load(0), mov(1, Some(0)), mov(2, Some(1))], 4);
        let logs = [block(&[&[(0, 100), (1, 0), (2, 0)]])];
        assert_eq!(replay(&p, &c, &logs), vec![109]);
    }
}

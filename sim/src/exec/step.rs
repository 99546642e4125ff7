//! The warp loop's one step: pick the lanes at the smallest PC, execute their instruction.
//! A converged warp runs its pre-decoded instructions ([`super::fast`]) in one straight-line
//! loop; the other instructions take the general path, whose arms forward to plain functions
//! ([`super::alu`]) or to the memory path ([`super::mem`]).

use super::alu;
use super::decode::{DInst, Src, NO_REG};
use super::fast::{Fast, FlopKind, Form, Pre};
use super::trace::{BlockLog, Entry};
use super::turns::{FENCE, LOADS, WAITS};
use super::warp::Warp;
use super::Launch;
use crate::config::GpuConfig;
use crate::error::{Error, Result};
use crate::memory::image::GlobalView;
use crate::memory::system::{Params, SmCaches};
use crate::metrics::{Counters, PcStats};
use crate::ptx::ast::{Special, Type};
use crate::ptx::inst::{AluOp, Op, ShflMode, VoteMode};
use crate::timing::{Costs, SmWork};

mod ext;

/// Runs `$body` for each lane `$l` of `$exec`: a plain `0..32` loop for a full warp (the common
/// case, which the compiler can unroll and vectorize), else over the set bits.
macro_rules! for_lanes {
    ($exec:expr, |$l:ident| $body:block) => {{
        let exec: u32 = $exec;
        if exec == u32::MAX {
            #[allow(clippy::needless_range_loop)] // the body indexes several arrays by lane
            for $l in 0..32usize $body
        } else {
            let mut m = exec;
            while m != 0 {
                let $l = m.trailing_zeros() as usize;
                m &= m - 1;
                $body
            }
        }
    }};
}
pub(crate) use for_lanes;

/// What one block's warps share while they run on their SM's thread.
pub struct Ctx<'a> {
    /// The GPU.
    pub cfg: &'a GpuConfig,
    /// The launch being run.
    pub launch: &'a Launch<'a>,
    /// The pre-decoded entry of each instruction of the program ([`super::fast`]).
    pub forms: &'a [Pre],
    /// Global memory, shared with the other SMs' threads.
    pub global: &'a GlobalView<'a>,
    /// The constant bank.
    pub constant: &'a [u8],
    /// The SM's L1 and constant caches.
    pub caches: &'a mut SmCaches,
    /// Cache geometry.
    pub params: &'a Params,
    /// The block's shared memory.
    pub shared: &'a mut [u8],
    /// The SM's counters.
    pub counters: &'a mut Counters,
    /// The SM's per-instruction statistics.
    pub per_pc: &'a mut [PcStats],
    /// The per-PC counts and stream entries of the straight-line path, added to `per_pc` when
    /// the SM's batch ends ([`Runs::fold`]).
    pub runs: &'a mut Runs,
    /// The SM's work for the throughput bounds.
    pub work: &'a mut SmWork,
    /// Latencies.
    pub costs: &'a Costs,
    /// The SM the block runs on.
    pub sm: usize,
    /// `%ctaid` of the block.
    pub ctaid: [u32; 3],
    /// Warp instructions this SM may still execute before the launch is stopped.
    pub budget: &'a mut u64,
    /// The allocation the last global access lane by lane fell in (a lookup cache).
    pub last_alloc: Option<usize>,
    /// Per PC, the allocation the instruction's last whole-warp global access fell in (a
    /// lookup cache kept over the SM's blocks; `u32::MAX` for none yet).
    pub alloc_hints: &'a mut [u32],
    /// Per PC, the first address of the instruction's last whole-warp global run (`0` for none
    /// yet): the next run is prefetched into the host's cache one step further
    /// ([`Ctx::prefetch_next_run`]).
    pub last_runs: &'a mut [u64],
    /// What the block leaves for the L2 and timing passes.
    pub log: &'a mut BlockLog,
    /// The block's pending `bar.red`.
    pub sync: super::sync::BlockSync,
    /// A warp's turn ends where it stalls on a load it issued ([`super::turns`],
    /// [`Ctx::run_warp`]): the SM's co-resident warps take turns, so that their accesses reach
    /// the caches interleaved.
    pub turns: bool,
    /// Per instruction, its [`super::turns::WAITS`] and [`super::turns::LOADS`] bits.
    pub turn_flags: &'a [u8],
    /// The running warp's turn has ended.
    pub turn_over: bool,
    /// The running warp has issued a load in this turn (with `turns`): its turn ends at its next
    /// stall.
    pub loaded: bool,
}

impl Ctx<'_> {
    /// Runs `w` until it exits, waits at a barrier or, with [`Ctx::turns`], stalls on a load it
    /// issued ([`super::turns`]) ([`Ctx::step`] after step), in one call so that the
    /// straight-line path's set-up is the warp's, not each step's. A turn executes at least one
    /// instruction.
    pub fn run_warp(&mut self, w: &mut Warp) -> Result<()> {
        self.turn_over = false;
        self.loaded = false;
        while w.live != 0 && !w.at_barrier && !self.turn_over {
            self.step(w)?;
        }
        Ok(())
    }

    /// Executes warp instructions of `w`: a converged warp's run of pre-decoded instructions
    /// ([`Ctx::run_straight`]), then one instruction on the general path, which stops at any
    /// instruction that can fault, wait or diverge.
    #[inline(always)]
    pub fn step(&mut self, w: &mut Warp) -> Result<()> {
        // A converged warp at an instruction of the general path goes there directly.
        let general = |p: &Pre| matches!(p.op, Fast::General);
        if w.converged && !self.forms.get(w.common_pc as usize).is_some_and(general) {
            // Loads and stores between the runs go to the memory path from here.
            while let Some(exec) = self.run_straight(w) {
                self.mem_step(w, exec)?;
                if self.turn_over {
                    return Ok(());
                }
            }
            if w.live == 0 || self.turn_over {
                return Ok(());
            }
        }
        self.step_one(w)
    }

    /// Runs converged warp `w` through the pre-decoded instructions from its PC on, until an
    /// instruction that needs the general path: one without a pre-decoded entry, a branch that
    /// diverges, the end of the budget (the general path reports it at that instruction), or the
    /// warp's exit. Every lane of a converged warp is at the PC, so the lanes at it are the live
    /// ones.
    ///
    /// A full warp runs each segment of entries ([`Pre::in_segment`]: plain entries, whole-warp
    /// word accesses, branches and exits) through [`Ctx::segment`], with its bookkeeping done once for
    /// the segment; the other entries, and a partial warp's runs of plain entries, go through
    /// [`Ctx::entry`]. `%clock` is counted at the end.
    ///
    /// A load or store that neither runs in a segment nor is left to the general path stops the
    /// loop within the budget with its lanes, `Some(exec)`, for [`Ctx::mem_step`].
    #[inline(always)]
    fn run_straight(&mut self, w: &mut Warp) -> Option<u32> {
        let live = w.live;
        let threads = u64::from(live.count_ones());
        let forms = self.forms;
        let mut left = *self.budget;
        let mut pc = w.common_pc;
        let mem = loop {
            if left == 0 {
                break None;
            }
            let Some(pre) = forms.get(pc as usize) else {
                break None;
            };
            if live == u32::MAX && pre.seg_end > pc {
                // The segment from `pc`, cut at the budget (saturating: a forward branch moves
                // the PC on further than the budget goes down, and a budget may be near
                // `u64::MAX`).
                let end = u64::from(pre.seg_end).min(u64::from(pc).saturating_add(left)) as u32;
                let (stop, how) = self.segment(w, pc, end);
                left -= u64::from(stop - pc);
                pc = stop;
                match how {
                    Seg::Ran => continue,
                    Seg::Jump(target) => {
                        pc = target;
                        if self.turn_over {
                            break None;
                        }
                        continue;
                    }
                    Seg::Mem(exec) => break Some(exec),
                    Seg::Left => break None,
                    Seg::Turn => {
                        self.turn_over = true;
                        break None;
                    }
                }
            }
            match self.entry(w, pre, &mut pc, &mut left, threads) {
                Stop::Next => {}
                Stop::Mem(exec) => break Some(exec),
                Stop::Done => break None,
                Stop::Turn => {
                    self.turn_over = true;
                    break None;
                }
            }
        };
        // `%clock` counts the instructions issued: none of those above reads it.
        w.clock += (*self.budget - left) as u32;
        *self.budget = left;
        w.common_pc = pc;
        mem
    }

    /// Runs the entries of full converged warp `w` at PCs `a..b`, all in one segment
    /// ([`Pre::in_segment`]) and within the budget, as the general path would one at a time:
    /// their stream entries are copied from [`Runs::entries`] (a word access's latency, and a
    /// taken branch's, written into its own), the per-PC statistics and the uniform datapath's
    /// counters counted once for the PCs it ran (less the threads of a branch no lane took:
    /// none ran it); once every invariant entry has filled its register in this register
    /// file, it steps over the invariant entries ([`Pre::next`]).
    ///
    /// Returns the end of the PCs it ran and counted, and what next ([`Seg`]): `b` when it ran
    /// them all; a branch every lane takes, or an exit, is the last it runs; it stops, uncounted,
    /// at a branch that diverges (for the general path) and at a load or store it leaves to
    /// [`Ctx::mem_step`]: one whose guard does not let every lane run, or that
    /// [`Ctx::word_access`] leaves to the general path.
    #[inline(always)]
    fn segment(&mut self, w: &mut Warp, a: u32, b: u32) -> (u32, Seg) {
        // Cut at `b`, so that the loop's `pc < b` bounds its entries' indexing too.
        let forms = &self.forms[..b as usize];
        let idx = w.index as usize;
        // Out of the log while the loop runs: the word accesses do not touch the streams.
        let mut stream = std::mem::take(&mut self.log.warps[idx]);
        let base = stream.len();
        stream.extend_from_slice(&self.runs.entries[a as usize..b as usize]);
        let settled = w.unsettled == 0;
        let mut pc = a;
        if settled && forms[a as usize].invariant {
            pc = forms[a as usize].next;
        }
        let mut stop = (b, Seg::Ran);
        // One loop per case, so that a settled register file's (the common case) neither
        // tests for invariant entries (it steps over them) nor chooses its next PC.
        macro_rules! seg_loop {
            ($settled:expr) => {
                while pc < b {
                    let p = &forms[pc as usize];
                    match p.op {
                        Fast::Mem(ref plan) => {
                            let turn = self.turn_flags[pc as usize];
                            if self.loaded && turn & WAITS != 0 {
                                stop = (pc, Seg::Turn);
                                break;
                            }
                            match self.segment_word(w, p, pc, plan) {
                                Ok(lat) => {
                                    stream[base + (pc - a) as usize].lat = lat;
                                    self.loaded |= self.turns && turn & LOADS != 0;
                                }
                                Err(exec) => {
                                    stop = (pc, Seg::Mem(exec));
                                    break;
                                }
                            }
                        }
                        Fast::Bra { target } => {
                            let exec = pre_guard_mask(w, p);
                            // A branch after a load: the warp stalls ([`super::turns`]).
                            let fence = self.loaded && self.turn_flags[pc as usize] & FENCE != 0;
                            if exec == u32::MAX {
                                // Taken by every lane: the timing pass needs to know.
                                stream[base + (pc - a) as usize].lat = 1;
                                self.turn_over = fence;
                                stop = (pc + 1, Seg::Jump(target));
                                break;
                            }
                            if exec != 0 {
                                stop = (pc, Seg::Left);
                                break;
                            }
                            // Taken by no lane: no thread ran it.
                            uncount_threads(&mut self.runs.diff, pc as usize, 32);
                            if fence {
                                stop = (pc + 1, Seg::Turn);
                                break;
                            }
                        }
                        Fast::Exit => {
                            w.live = 0;
                            stop = (pc + 1, Seg::Left);
                            break;
                        }
                        ref op => {
                            plain(op, w, &self.ctaid, u32::MAX);
                            if !$settled && p.invariant {
                                settle(p, w);
                            }
                        }
                    }
                    pc = if $settled { p.next } else { pc + 1 };
                }
            };
        }
        if settled {
            seg_loop!(true);
        } else {
            seg_loop!(false);
        }
        let end = stop.0;
        if end < b {
            stream.truncate(base + (end - a) as usize);
        }
        self.log.warps[idx] = stream;
        let (a, end) = (a as usize, end as usize);
        let runs = &mut *self.runs;
        count_uniform(self.counters, (&runs.uniform, &runs.flops), a, end, 32);
        count_run(&mut runs.diff, a, end, 32);
        stop
    }

    /// The word access `plan` at `pc` (entry `p`) of a segment of full warp `w`: its latency,
    /// or, having done nothing, the lanes its guard lets run when [`Ctx::segment`] leaves it to
    /// [`Ctx::mem_step`] (some lanes' guard is off, or [`Ctx::word_access`] declines it).
    #[inline(always)]
    fn segment_word(
        &mut self,
        w: &mut Warp,
        p: &Pre,
        pc: u32,
        plan: &super::fast::MemPlan,
    ) -> std::result::Result<u32, u32> {
        let exec = pre_guard_mask(w, p);
        let lat = if exec == u32::MAX {
            self.word_access(w, pc, *plan)
        } else {
            None
        };
        lat.ok_or(exec)
    }

    /// One step of [`Ctx::run_straight`] at `pc`, whose entry is `pre`, that is not a segment
    /// (`left` instructions of the budget, `threads` the warp's live lanes; both `pc` and
    /// `left` moved on): a partial warp's run of plain entries, or one other entry.
    #[inline(always)]
    fn entry(
        &mut self,
        w: &mut Warp,
        pre: &Pre,
        pc: &mut u32,
        left: &mut u64,
        threads: u64,
    ) -> Stop {
        let Ctx {
            forms,
            counters,
            per_pc,
            runs,
            costs,
            ctaid,
            log,
            ..
        } = self;
        let Runs {
            diff,
            entries,
            uniform,
            flops,
        } = &mut **runs;
        let stream = &mut log.warps[w.index as usize];
        let live = w.live;
        // A partial warp's plain run from `pc`, cut at the budget (saturating, as in
        // `run_straight`).
        let end = u64::from(pre.run_end).min(u64::from(*pc).saturating_add(*left)) as u32;
        if end > *pc {
            let (a, b) = (*pc as usize, end as usize);
            let settled = w.unsettled == 0;
            let mut q = a;
            if settled && pre.invariant {
                q = pre.next as usize;
            }
            while q < b {
                let p = &forms[q];
                plain(&p.op, w, ctaid, live);
                q = if settled { p.next as usize } else { q + 1 };
            }
            count_uniform(counters, (uniform, flops), a, b, threads);
            count_run(diff, a, b, threads);
            stream.extend_from_slice(&entries[a..b]);
            *left -= u64::from(end - *pc);
            *pc = end;
            return Stop::Next;
        }
        let exec = if pre.guard == NO_REG {
            live
        } else {
            live & guard_bits(&w.regs, pre.guard, pre.negated)
        };
        let n = if exec == live {
            threads
        } else {
            u64::from(exec.count_ones())
        };
        let (mut next, mut lat) = (*pc + 1, 0);
        let mut fence = false;
        match &pre.op {
            &Fast::Bra { target } => {
                fence = self.turn_flags[*pc as usize] & FENCE != 0;
                if exec == live {
                    // A branch every active lane takes: the timing pass needs to know.
                    (next, lat) = (target, 1);
                } else if exec != 0 {
                    return Stop::Done; // divergence: the general path
                }
            }
            Fast::Exit => w.live = 0,
            Fast::General => return Stop::Done,
            Fast::Mem(_) => return Stop::Mem(exec),
            op => {
                // A guarded form or `bar.warp.sync`.
                plain(op, w, ctaid, exec);
                count_uniform(
                    counters,
                    (uniform, flops),
                    *pc as usize,
                    *pc as usize + 1,
                    n,
                );
                if let Fast::Param { .. } = op {
                    lat = costs.imc;
                }
            }
        }
        *left -= 1;
        let ps = &mut per_pc[*pc as usize];
        ps.executed += 1;
        ps.threads += n;
        stream.push(Entry { pc: *pc, lat });
        *pc = next;
        if w.live == 0 {
            return Stop::Done;
        }
        if fence && self.loaded {
            // A branch after a load: the warp stalls ([`super::turns`]).
            return Stop::Turn;
        }
        Stop::Next
    }

    /// Executes the load or store at converged warp `w`'s PC for the lanes of `exec` (its live
    /// lanes whose guard lets it run) exactly as [`Ctx::step_one`] and [`Ctx::step_general`]
    /// would, with what they decide for any instruction already known: the budget is not
    /// spent ([`Ctx::run_straight`] stopped within it), the lanes at the PC are the live ones,
    /// and the warp goes on to the next PC.
    #[inline(always)]
    fn mem_step(&mut self, w: &mut Warp, exec: u32) -> Result<()> {
        let pc = w.common_pc;
        let turn = self.turn_flags[pc as usize];
        if self.loaded && turn & WAITS != 0 {
            // It needs a value the warp's turn loaded: the warp stalls before it.
            self.turn_over = true;
            return Ok(());
        }
        self.loaded |= self.turns && turn & LOADS != 0;
        let inst = &self.launch.program.insts[pc as usize];
        *self.budget -= 1;
        let ps = &mut self.per_pc[pc as usize];
        ps.executed += 1;
        ps.threads += u64::from(exec.count_ones());
        w.clock += 1;
        w.common_pc = pc + 1;
        let lat = self.load_or_store(w, inst, pc, exec)?;
        self.log.warps[w.index as usize].push(Entry { pc, lat });
        Ok(())
    }

    /// Executes load or store `inst` at `pc` of `w` for the lanes of `exec`; returns its
    /// latency for the stream. Out of line, and the one caller of [`Ctx::load`] and
    /// [`Ctx::store`] (for the straight-line path and the general one), so that they are
    /// inlined here rather than called.
    #[inline(never)]
    fn load_or_store(&mut self, w: &mut Warp, inst: &DInst, pc: u32, exec: u32) -> Result<u32> {
        match inst.op {
            Op::Ld(m) => self.load(w, inst, pc, m, exec),
            Op::St(m) => self.store(w, inst, pc, m, exec),
            _ => unreachable!("memory entries are loads and stores"),
        }
    }

    /// Executes one warp instruction of `w`.
    ///
    /// The bookkeeping every instruction needs and the pre-decoded integer forms run here,
    /// inlined into the warp loop; the other instructions go to [`Ctx::step_general`], out of
    /// line, so that the common path does not pay for the registers and stack the memory and
    /// control-flow arms need.
    #[inline]
    fn step_one(&mut self, w: &mut Warp) -> Result<()> {
        let (pc, mask) = w.next();
        let prog = self.launch.program;
        let Some(inst) = prog.insts.get(pc as usize) else {
            // Unreachable for decoded programs (they end in exit); treat as exit.
            w.live &= !mask;
            return Ok(());
        };
        if self.loaded && self.turn_flags[pc as usize] & WAITS != 0 {
            // It needs a value the warp's turn loaded: the warp stalls before it.
            self.turn_over = true;
            return Ok(());
        }
        if *self.budget == 0 {
            return Err(self.over_budget());
        }
        *self.budget -= 1;
        let exec = mask & guard_mask(w, inst);
        let ps = &mut self.per_pc[pc as usize];
        ps.executed += 1;
        ps.threads += u64::from(exec.count_ones());
        // `%clock` reads the warp's issue count: cycles are only known after the timing pass.
        w.clock += 1;
        if let Fast::Form(f) = &self.forms[pc as usize].op {
            // The common integer and f32 forms, decided once per launch: no branch, no latency.
            f.run(&mut w.regs, exec);
            if let Some(k) = f.kernel.flops() {
                count_flop(self.counters, k, u64::from(exec.count_ones()));
            }
            w.advance(pc, mask, 0, inst.target);
            self.log.warps[w.index as usize].push(Entry { pc, lat: 0 });
            return Ok(());
        }
        self.step_general(w, inst, pc, mask, exec)
    }

    /// The error of a launch that ran out of its instruction budget.
    #[cold]
    #[inline(never)]
    fn over_budget(&self) -> Error {
        Error::Budget {
            launch: self.launch.label.into(),
            budget: self.launch.max_warp_instructions,
        }
    }

    /// Executes instruction `inst` at `pc` of `w` for the lanes of `exec` (of those at `pc`,
    /// `mask`) when it has no pre-decoded form: control flow, memory, and the general ALU path.
    #[inline(never)]
    fn step_general(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        mask: u32,
        exec: u32,
    ) -> Result<()> {
        // `matches!`, not `==`: the derived comparison of `Op` is a call.
        let taken = if matches!(inst.op, Op::Bra) { exec } else { 0 };
        w.advance(pc, mask, taken, inst.target);
        // A branch after a load: the warp stalls ([`super::turns`]).
        self.turn_over |= self.loaded && self.turn_flags[pc as usize] & FENCE != 0;
        let lat = match inst.op {
            // A branch every active lane takes: the timing pass needs to know (if-conversion).
            Op::Bra => u32::from(exec == mask),
            Op::WarpSync => 0,
            Op::Exit | Op::Ret => {
                w.live &= !exec;
                0
            }
            Op::BarSync => {
                w.at_barrier = true;
                0
            }
            Op::Ld(_) | Op::St(_) => {
                self.loaded |= self.turns && self.turn_flags[pc as usize] & LOADS != 0;
                self.load_or_store(w, inst, pc, exec)?
            }
            Op::Atom(a) | Op::Red(a) => {
                self.loaded |= self.turns && self.turn_flags[pc as usize] & LOADS != 0;
                self.atomic(w, inst, pc, a, exec)?
            }
            Op::BarRed(op) => {
                self.bar_red_arrive(w, inst, op, exec);
                w.at_barrier = true;
                0
            }
            Op::Shfl(mode) => {
                self.shfl(w, inst, mode, exec);
                0
            }
            _ => {
                if let Op::Alu { op, ty, .. } = inst.op {
                    if ty.is_float() {
                        self.count_flops(op, ty, exec);
                    }
                }
                self.alu(w, inst, exec);
                0
            }
        };
        self.log.warps[w.index as usize].push(Entry { pc, lat });
        Ok(())
    }

    /// Reads a source operand for `lane`.
    #[inline(always)]
    pub fn read(&self, w: &Warp, s: Src, lane: usize) -> u64 {
        match s {
            Src::Reg(r) => w.regs[r as usize * 32 + lane],
            Src::NotPred(r) => (w.regs[r as usize * 32 + lane] & 1) ^ 1,
            Src::Imm(v) => v,
            Src::Special(sp) => self.special(w, sp, lane),
        }
    }

    /// Counts a float instruction per active thread under the SASS operation it becomes.
    fn count_flops(&mut self, op: AluOp, ty: Type, exec: u32) {
        let n = u64::from(exec.count_ones());
        let c = &mut *self.counters;
        let double = ty == Type::F64;
        let slot = match op {
            AluOp::Add | AluOp::Sub => {
                if double {
                    &mut c.dadd_threads
                } else {
                    &mut c.fadd_threads
                }
            }
            AluOp::Mul => {
                if double {
                    &mut c.dmul_threads
                } else {
                    &mut c.fmul_threads
                }
            }
            AluOp::Mad | AluOp::Fma => {
                if double {
                    &mut c.dfma_threads
                } else {
                    &mut c.ffma_threads
                }
            }
            _ => return,
        };
        *slot += n;
    }

    /// `shfl.sync`: each lane reads `a` of a source lane chosen by the mode, `b` and the clamp
    /// and segment mask packed in `c` (PTX ISA §9.7.8.6); out-of-range lanes read their own.
    fn shfl(&self, w: &mut Warp, inst: &DInst, mode: ShflMode, exec: u32) {
        let [sa, sb, sc, _] = inst.src;
        let a = self.gather(w, sa, u32::MAX);
        let (b, c) = (self.gather(w, sb, exec), self.gather(w, sc, exec));
        let (d, p) = (inst.dst[0], inst.dst[1]);
        for l in lanes(exec) {
            let lane = l as i64;
            let bval = (b[l] & 0x1f) as i64;
            let cval = (c[l] & 0x1f) as i64;
            let segmask = ((c[l] >> 8) & 0x1f) as i64;
            let max_lane = (lane & segmask) | (cval & !segmask);
            let min_lane = lane & segmask;
            let (j, ok) = match mode {
                ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                ShflMode::Idx => {
                    let j = min_lane | (bval & !segmask);
                    (j, j <= max_lane)
                }
            };
            let src = if ok { j as usize } else { l };
            if d != NO_REG {
                w.regs[d as usize * 32 + l] = alu::trunc(a[src], 32);
            }
            if p != NO_REG {
                w.regs[p as usize * 32 + l] = u64::from(ok);
            }
        }
    }

    /// Reads a source operand for every lane of `exec` (others are 0).
    #[inline]
    pub(crate) fn gather(&self, w: &Warp, s: Src, exec: u32) -> [u64; 32] {
        match s {
            Src::Imm(v) => [v; 32],
            Src::Reg(r) => w.regs[r as usize * 32..][..32]
                .try_into()
                .expect("32 lanes"),
            Src::Special(sp) => self.special_warp(w, sp),
            Src::NotPred(_) => {
                let mut out = [0u64; 32];
                for l in lanes(exec) {
                    out[l] = self.read(w, s, l);
                }
                out
            }
        }
    }

    /// The destination row of register `d` and the rows of the sources `srcs[..n]` (the rest
    /// zeros), read in place where a source is another register and built in `tmp` otherwise
    /// (an immediate, a special register, a negated predicate, or the destination itself), so
    /// that an instruction's lane loop copies nothing.
    #[inline]
    pub(crate) fn operands<'t>(
        &self,
        w: &'t mut Warp,
        d: u16,
        srcs: [Src; 3],
        n: usize,
        exec: u32,
        tmp: &'t mut [Option<[u64; 32]>; 3],
    ) -> (&'t mut [u64; 32], [&'t [u64; 32]; 3]) {
        let d0 = usize::from(d) * 32;
        for k in 0..n {
            match srcs[k] {
                Src::Reg(r) if usize::from(r) * 32 != d0 => {}
                s => tmp[k] = Some(self.gather(w, s, exec)),
            }
        }
        let tmp: &'t [Option<[u64; 32]>; 3] = tmp;
        let (lo, rest) = w.regs.split_at_mut(d0);
        let (out, hi) = rest.split_at_mut(32);
        let out: &'t mut [u64; 32] = out.try_into().expect("32 lanes");
        let (lo, hi): (&'t [u64], &'t [u64]) = (lo, hi);
        let mut rows: [&'t [u64; 32]; 3] = [&ZEROS; 3];
        for (k, row) in rows.iter_mut().enumerate().take(n) {
            *row = match (srcs[k], &tmp[k]) {
                (_, Some(t)) => t,
                (Src::Reg(r), None) if usize::from(r) * 32 < d0 => lo[usize::from(r) * 32..][..32]
                    .try_into()
                    .expect("32 lanes"),
                (Src::Reg(r), None) => hi[usize::from(r) * 32 - d0 - 32..][..32]
                    .try_into()
                    .expect("32 lanes"),
                (_, None) => unreachable!("sources other than registers are built above"),
            };
        }
        (out, rows)
    }

    /// A special register for all 32 lanes: one match, then a plain loop.
    fn special_warp(&self, w: &Warp, s: Special) -> [u64; 32] {
        match s {
            Special::Tid(c) => std::array::from_fn(|l| u64::from(w.tid[c as usize][l])),
            Special::LaneId => std::array::from_fn(|l| l as u64),
            _ if warp_uniform(s) => [self.special(w, s, 0); 32],
            _ => std::array::from_fn(|l| self.special(w, s, l)),
        }
    }

    /// The value of source `s` when it is the same for every lane by its kind (an immediate, a
    /// warp-uniform special register), without reading the warp's registers.
    #[inline]
    fn uniform(&self, w: &Warp, s: Src) -> Option<u64> {
        match s {
            Src::Imm(v) => Some(v),
            Src::Special(sp) if warp_uniform(sp) => Some(self.special(w, sp, 0)),
            _ => None,
        }
    }

    #[inline(never)]
    fn special(&self, w: &Warp, s: Special, lane: usize) -> u64 {
        let b = self.launch.dims.block;
        let l = lane;
        let lane = lane as u32;
        u64::from(match s {
            Special::Tid(c) => w.tid[c as usize][l],
            Special::Ntid(c) => b[c as usize],
            Special::Ctaid(c) => self.ctaid[c as usize],
            Special::Nctaid(c) => self.launch.dims.grid[c as usize],
            Special::LaneId => lane,
            Special::WarpId => w.index,
            Special::NWarpId => self.cfg.sm.max_warps,
            Special::SmId => self.sm as u32,
            Special::NSmId => self.cfg.sm.count,
            Special::LaneMaskEq => 1 << lane,
            Special::LaneMaskLt => (1u32 << lane) - 1,
            Special::LaneMaskLe => ((1u64 << (lane + 1)) - 1) as u32,
            Special::LaneMaskGt => !(((1u64 << (lane + 1)) - 1) as u32),
            Special::LaneMaskGe => !((1u32 << lane) - 1),
            Special::Clock | Special::Clock64 | Special::GlobalTimer => return u64::from(w.clock),
        })
    }

    fn alu(&mut self, w: &mut Warp, inst: &DInst, exec: u32) {
        let [s0, s1, s2, _] = inst.src;
        let d0 = inst.dst[0] as usize * 32;
        match inst.op {
            Op::Mov(ty) => {
                if let Src::Special(Special::Ntid(_) | Special::Nctaid(_)) = s0 {
                    // %ntid and %nctaid live in constant bank 0: a warp-uniform constant operand.
                    self.counters.imc_requests += 1;
                }
                let m = alu::mask(ty.bits().max(8));
                if let Some(v) = self.uniform(w, s0) {
                    // `%ctaid`, `%ntid`, an immediate or a symbol's address: one value.
                    let out = &mut w.regs[d0..][..32];
                    for_lanes!(exec, |l| {
                        out[l] = v & m;
                    });
                    return;
                }
                let mut tmp = [None; 3];
                let (out, [a, _, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 1, exec, &mut tmp);
                for_lanes!(exec, |l| {
                    out[l] = a[l] & m;
                });
            }
            Op::Cvta { to_space, space } => {
                let window = crate::memory::image::window(space);
                let mut tmp = [None; 3];
                let (out, [a, _, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 1, exec, &mut tmp);
                // Both directions wrap: to the space's window offset or back to generic.
                let delta = if to_space {
                    window.wrapping_neg()
                } else {
                    window
                };
                for_lanes!(exec, |l| {
                    out[l] = a[l].wrapping_add(delta);
                });
            }
            Op::Cvt { dst, src, rnd, sat } => {
                let mut tmp = [None; 3];
                let (out, [a, _, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 1, exec, &mut tmp);
                if !sat && !src.is_float() && !dst.is_float() {
                    // Integer widening and narrowing (index arithmetic: cvt.u64.u32 and the
                    // like): sign- or zero-extend by the source, truncate to the destination.
                    let (sh, dm) = (alu::sext_shift(src.bits()), alu::mask(dst.bits()));
                    if src.is_signed() {
                        for_lanes!(exec, |l| {
                            out[l] = alu::sext_by(a[l], sh) as u64 & dm;
                        });
                    } else {
                        let m = alu::mask(src.bits()) & dm;
                        for_lanes!(exec, |l| {
                            out[l] = a[l] & m;
                        });
                    }
                    return;
                }
                for_lanes!(exec, |l| {
                    out[l] = alu::convert(dst, src, rnd, sat, a[l]);
                });
            }
            Op::Alu { op, ty, mode, sat } => {
                // Sources past `nsrc` are not read.
                let mut tmp = [None; 3];
                let n = usize::from(inst.nsrc);
                let (out, [a, b, c]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], n, exec, &mut tmp);
                alu::alu_warp(op, ty, mode, sat, a, b, c, exec, out);
            }
            Op::Setp { cmp, bool_op, ty } if inst.dst[1] == NO_REG && bool_op.is_none() => {
                // The common `setp` with one destination: a loop per comparison.
                let mut tmp = [None; 3];
                let (out, [a, b, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 2, exec, &mut tmp);
                alu::compare_warp(cmp, ty, a, b, exec, out);
            }
            Op::Setp { cmp, bool_op, ty } => {
                let d1 = inst.dst[1];
                let tp;
                let (a, b) = (self.gather(w, s0, exec), self.gather(w, s1, exec));
                let p = if bool_op.is_some() {
                    tp = self.gather(w, s2, exec);
                    &tp
                } else {
                    &ZEROS
                };
                for l in lanes(exec) {
                    let r = alu::compare(cmp, ty, a[l], b[l]);
                    let c = bool_op.is_none() || p[l] & 1 == 1;
                    w.regs[d0 + l] = u64::from(alu::combine(bool_op, r, c));
                    if d1 != NO_REG {
                        w.regs[d1 as usize * 32 + l] = u64::from(alu::combine(bool_op, !r, c));
                    }
                }
            }
            Op::Vote(mode) => {
                let p = self.gather(w, s0, exec);
                let mut yes = 0u32;
                for l in lanes(exec) {
                    yes |= ((p[l] & 1) as u32) << l;
                }
                let v = match mode {
                    VoteMode::All => u64::from(yes == exec),
                    VoteMode::Any => u64::from(yes != 0),
                    VoteMode::Uni => u64::from(yes == 0 || yes == exec),
                    VoteMode::Ballot => u64::from(yes),
                };
                for l in lanes(exec) {
                    w.regs[d0 + l] = v;
                }
            }
            Op::ActiveMask => {
                for l in lanes(exec) {
                    w.regs[d0 + l] = u64::from(exec);
                }
            }
            Op::Selp(ty) => {
                for l in lanes(exec) {
                    let v = if self.read(w, s2, l) & 1 == 1 {
                        self.read(w, s0, l)
                    } else {
                        self.read(w, s1, l)
                    };
                    w.regs[d0 + l] = alu::trunc(v, ty.bits());
                }
            }
            _ => self.alu_ext(w, inst, exec),
        }
    }
}

/// Special registers with one value for the whole warp.
#[inline]
fn warp_uniform(s: Special) -> bool {
    matches!(
        s,
        Special::Ntid(_)
            | Special::Ctaid(_)
            | Special::Nctaid(_)
            | Special::WarpId
            | Special::NWarpId
            | Special::SmId
            | Special::NSmId
            | Special::Clock
            | Special::Clock64
            | Special::GlobalTimer
    )
}

/// 32 lanes of zeros: the value of a source an instruction does not have.
static ZEROS: [u64; 32] = [0; 32];

/// The lanes of `mask`, ascending.
#[inline]
pub fn lanes(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let l = mask.trailing_zeros();
            mask &= mask - 1;
            Some(l as usize)
        }
    })
}

/// Lanes whose guard predicate lets the entry `p` run (all when unguarded): [`guard_mask`] of
/// the warp loop's pre-decoded entry.
#[inline(always)]
fn pre_guard_mask(w: &Warp, p: &Pre) -> u32 {
    if p.guard == NO_REG {
        return u32::MAX;
    }
    guard_bits(&w.regs, p.guard, p.negated)
}

/// Lanes whose guard predicate lets the instruction run (all when unguarded).
#[inline]
fn guard_mask(w: &Warp, inst: &DInst) -> u32 {
    if inst.guard == NO_REG {
        return u32::MAX;
    }
    guard_bits(&w.regs, inst.guard, inst.guard_negated)
}

/// The lanes whose predicate register `p` (of register file `regs`) is set, or clear when
/// `negated`.
#[inline]
fn guard_bits(regs: &[u64], p: u16, negated: bool) -> u32 {
    let row = &regs[usize::from(p) * 32..][..32];
    let mut m = 0u32;
    for (l, v) in row.iter().enumerate() {
        m |= (*v as u32 & 1) << l;
    }
    if negated {
        !m
    } else {
        m
    }
}

/// Sets the lanes of `exec` of `row` to `v` (the others keep what they hold: a later warp in
/// the same register file may read them before writing).
#[inline(always)]
fn fill(row: &mut [u64; 32], exec: u32, v: u64) {
    for_lanes!(exec, |l| {
        row[l] = v;
    });
}

/// Register `d`'s 32 lanes, to write.
#[inline(always)]
fn row_mut(regs: &mut [u64], d: u16) -> &mut [u64; 32] {
    (&mut regs[usize::from(d) * 32..][..32])
        .try_into()
        .expect("32 lanes")
}

/// Executes entry `op` of a converged warp `w` for the lanes of `exec`: an integer form, a
/// broadcast, a kernel parameter, `%ctaid`, `%tid` or nothing. Control flow, the general path
/// and the counters ([`count_uniform`]) are the caller's.
#[inline(always)]
fn plain(op: &Fast, w: &mut Warp, ctaid: &[u32; 3], exec: u32) {
    match op {
        Fast::Form(f) => f.run_inline(&mut w.regs, exec),
        &Fast::Bcast { d, v, .. } | &Fast::Param { d, v, .. } => {
            fill(row_mut(&mut w.regs, d), exec, v);
        }
        &Fast::Ctaid { d, c, m } => {
            let v = u64::from(ctaid[usize::from(c)]) & m;
            fill(row_mut(&mut w.regs, d), exec, v);
        }
        &Fast::Tid { d, c, m } => {
            let tid = &w.tid[usize::from(c)];
            let out = row_mut(&mut w.regs, d);
            for_lanes!(exec, |l| {
                out[l] = u64::from(tid[l]) & m;
            });
        }
        Fast::Nop | Fast::Bra { .. } | Fast::Exit | Fast::General | Fast::Mem(_) => {}
    }
}

/// Marks the register of invariant entry `p`, just run for all 32 lanes of `w`, as fixed when
/// its sources are.
#[cold]
fn settle(p: &Pre, w: &mut Warp) {
    let Some((d, srcs)) = p.writes() else {
        return;
    };
    let fixed = |r: u16| w.fixed.get(usize::from(r)) == Some(&true);
    if fixed(d) || !srcs.iter().flatten().all(|&r| fixed(r)) {
        return;
    }
    if let Some(f) = w.fixed.get_mut(usize::from(d)) {
        *f = true;
        w.unsettled -= 1;
    }
}

/// How [`Ctx::segment`] ended, for [`Ctx::run_straight`].
#[derive(Debug, Clone, Copy)]
enum Seg {
    /// It ran every PC it was given: go on from the next one.
    Ran,
    /// At a branch every lane took: go on from its target.
    Jump(u32),
    /// At a load or store for [`Ctx::mem_step`], within the budget, with its lanes.
    Mem(u32),
    /// At a branch that diverges (for the general path), or after the warp's exit.
    Left,
    /// Before a word access that needs a value the warp's turn loaded, or after a branch that
    /// ends the turn: the turn is over ([`super::turns`]).
    Turn,
}

/// What [`Ctx::entry`] leaves [`Ctx::run_straight`] to do.
enum Stop {
    /// Go on from the next PC.
    Next,
    /// Stop at a load or store, within the budget, for the lanes it holds.
    Mem(u32),
    /// Stop at an instruction of the general path or at the warp's exit.
    Done,
    /// Stop after a branch that ends the warp's turn ([`super::turns`]).
    Turn,
}

/// What the straight-line path of one SM keeps over a launch: the per-PC counts of the runs of
/// entries it executed, as differences, and each instruction's stream entry.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// `[executions, threads]` differences per PC (`len + 1` of them): a run over PCs `a..b`
    /// adds at `a` and takes away at `b` (wrapping), so that the prefix sums are each PC's
    /// counts ([`Runs::fold`]).
    diff: Vec<[u64; 2]>,
    /// The stream entry of each instruction executed on the straight-line path: its PC and
    /// its latency (a kernel parameter's is the IMC's; a word access's is written over).
    entries: Vec<Entry>,
    /// Per PC (`len + 1`), the uniform datapath's requests of the instructions before it:
    /// `[IMC requests, IDC requests]` (every IDC request, an 8-byte parameter's, hits).
    uniform: Vec<[u64; 2]>,
    /// Per PC (`len + 1`), the f32 forms before it by kind ([`super::fast::Kernel::flops`]:
    /// `[fadd, fmul, ffma]`), each counting its threads; empty when the program has none, so
    /// that integer kernels' runs count nothing more.
    flops: Vec<[u64; 3]>,
}

impl Runs {
    /// The runs of a launch whose pre-decoded entries are `forms`, priced by `costs`.
    pub fn new(forms: &[Pre], costs: &Costs) -> Runs {
        let entries = forms
            .iter()
            .enumerate()
            .map(|(pc, p)| Entry {
                pc: pc as u32,
                lat: if let Fast::Param { .. } = p.op {
                    costs.imc
                } else {
                    0
                },
            })
            .collect();
        let mut uniform = vec![[0; 2]];
        let mut flops = vec![[0; 3]];
        for p in forms {
            let [imc, idc] = *uniform.last().expect("starts with one");
            let (di, dd) = match p.op {
                Fast::Bcast { imc, .. } => (u64::from(imc), 0),
                Fast::Param { wide, .. } => (u64::from(!wide), u64::from(wide)),
                _ => (0, 0),
            };
            uniform.push([imc + di, idc + dd]);
            let mut f = *flops.last().expect("starts with one");
            if let Fast::Form(Form { kernel, .. }) = p.op {
                if let Some(k) = kernel.flops() {
                    f[k] += 1;
                }
            }
            flops.push(f);
        }
        if flops.last() == Some(&[0; 3]) {
            flops.clear();
        }
        Runs {
            flops,
            diff: vec![[0; 2]; forms.len() + 1],
            entries,
            uniform,
        }
    }

    /// No launch's runs yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.diff.is_empty()
    }

    /// Adds the counts of the runs so far to `per_pc` (one per PC) and starts again from none.
    pub fn fold(&mut self, per_pc: &mut [PcStats]) {
        let mut acc = [0u64; 2];
        for (d, ps) in self.diff.iter_mut().zip(per_pc) {
            acc[0] = acc[0].wrapping_add(d[0]);
            acc[1] = acc[1].wrapping_add(d[1]);
            ps.executed += acc[0];
            ps.threads += acc[1];
        }
        self.diff.fill([0; 2]);
    }
}

/// Counts the uniform datapath's requests and the f32 forms' threads ([`Runs::flops`]) of the
/// instructions at PCs `a..b` (a plain run, or one entry) run by `threads` threads in `counters`.
#[inline(always)]
fn count_uniform(
    counters: &mut Counters,
    runs: (&[[u64; 2]], &[[u64; 3]]),
    a: usize,
    b: usize,
    threads: u64,
) {
    let (uniform, flops) = runs;
    let [imc, idc] = [0, 1].map(|k| uniform[b][k] - uniform[a][k]);
    counters.imc_requests += imc;
    counters.idc_requests += idc;
    counters.idc_hits += idc;
    if !flops.is_empty() {
        let [fadd, fmul, ffma] = [0, 1, 2].map(|k| flops[b][k] - flops[a][k]);
        counters.fadd_threads += fadd * threads;
        counters.fmul_threads += fmul * threads;
        counters.ffma_threads += ffma * threads;
    }
}

/// Counts `threads` threads of an f32 form of kind `k` ([`super::fast::Kernel::flops`]) in `counters`, as
/// [`Ctx::count_flops`] counts the general path's.
#[inline(always)]
fn count_flop(counters: &mut Counters, k: FlopKind, threads: u64) {
    let slot = match k {
        0 => &mut counters.fadd_threads,
        1 => &mut counters.fmul_threads,
        _ => &mut counters.ffma_threads,
    };
    *slot += threads;
}

/// Takes `threads` threads back from the count of PC `pc` in `diff` (a branch inside a
/// segment that no lane took: [`count_run`] counted every thread of the segment there).
#[inline(always)]
fn uncount_threads(diff: &mut [[u64; 2]], pc: usize, threads: u64) {
    diff[pc][1] = diff[pc][1].wrapping_sub(threads);
    diff[pc + 1][1] = diff[pc + 1][1].wrapping_add(threads);
}

/// Counts one execution of the plain run over PCs `a..b` by `threads` threads in `diff`.
#[inline(always)]
fn count_run(diff: &mut [[u64; 2]], a: usize, b: usize, threads: u64) {
    let da = &mut diff[a];
    da[0] = da[0].wrapping_add(1);
    da[1] = da[1].wrapping_add(threads);
    let db = &mut diff[b];
    db[0] = db[0].wrapping_sub(1);
    db[1] = db[1].wrapping_sub(threads);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loads and stores of converged warps through [`Ctx::mem_step`] give what the general
    /// path gives: the same outputs, counters, per-PC statistics and timing, on workloads with
    /// global and shared loads and stores, guards, divergence and barriers.
    #[test]
    fn memory_entries_match_the_general_path() {
        let cases: [(&str, &[(&str, i64)]); 4] = [
            ("transpose_smem", &[("n", 64)]),
            ("read_stride", &[("n", 3000)]),
            ("reduce", &[]),
            ("stencil_1d", &[]),
        ];
        for (name, sets) in cases {
            crate::testing::same_both_ways("rtx3090", name, sets, |on| {
                super::super::fast::tests::MEM_GENERAL.set(on)
            });
        }
    }

    /// Full warps' segments ([`Ctx::segment`]) give what running their entries one at a time
    /// gives (plain runs, loads and stores through the memory path): the same outputs,
    /// counters, per-PC statistics and timing, on workloads with parameters, invariant and
    /// f32 forms, global and shared word accesses, branches, barriers and partial warps.
    #[test]
    fn segments_match_entry_by_entry() {
        let cases: [(&str, &[(&str, i64)]); 7] = [
            ("transpose_smem", &[("n", 64)]),
            ("read_stride", &[("n", 3000)]),
            ("reduce", &[("n", 8192)]),
            ("stencil_1d", &[("n", 4096)]),
            ("smem_stride", &[]),
            ("conv2d", &[]),
            ("pseudo_random", &[("n", 20000)]),
        ];
        for gpu in ["rtx3090", "h200"] {
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |on| {
                    super::super::fast::tests::SEGMENTS_OFF.set(on)
                });
            }
        }
    }

    /// A kernel whose segments hold guarded word accesses (a guard that lets a whole warp
    /// run, part of one, or none, and negated), f32 forms and invariant entries, run on blocks
    /// with a partial warp and under budgets that end a launch inside a segment, gives the same
    /// results and errors with segments as entry by entry, and faults alike where a word access
    /// inside a segment is misaligned.
    #[test]
    fn segments_match_entry_by_entry_with_guards_and_budgets() {
        const PTX: &str = "
.version 8.8
.target sm_80
.address_size 64
.visible .entry seg_mix(.param .u64 p_dst, .param .u32 p_k, .param .u64 p_g)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<20>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<20>;
	ld.param.u64 	%rd1, [p_dst];
	ld.param.u32 	%r1, [p_k];
	ld.param.u64 	%rd9, [p_g];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
	mul.wide.u32 	%rd3, %r5, 8;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	setp.lt.u32 	%p1, %r2, %r1;
	add.s32 	%r7, %r6, %r5;
	@%p1 st.global.u32 	[%rd4], %r7;
	mov.b32 	%f1, %r6;
	add.f32 	%f2, %f1, %f1;
	@!%p1 ld.global.u32 	%r8, [%rd4+4];
	mul.f32 	%f3, %f2, %f1;
	add.s64 	%rd5, %rd4, %rd9;
	st.global.f32 	[%rd5+4], %f3;
	ld.global.u32 	%r9, [%rd4+4];
	add.s32 	%r10, %r9, %r8;
	st.global.u32 	[%rd4], %r10;
	ret;
}
";
        let dir = std::env::temp_dir().join(format!("sim-seg-mix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("seg_mix.ptx"), PTX).unwrap();
        let launch = |k: u32, g: u64| {
            format!(
                "[[launch]]\nlabel = \"k{k}g{g}\"\nkernel = \"seg_mix\"\ngrid = [3, 1, 1]\n\
                 block = [80, 1, 1]\nargs = [\"dst\", {k}, {g}]\n\n"
            )
        };
        let head = "name = \"seg_mix\"\ndescription = \"test\"\nptx = \"seg_mix.ptx\"\n\
                    [params]\nn = 1\n\
                    [[buffer]]\nname = \"dst\"\ntype = \"u32\"\ncount = \"600\"\n\
                    init = \"random:5\"\noutput = true\n\n";
        // Guards that pass for no lane, part of the first warp, whole warps, every lane.
        let mut text = head.to_string();
        for k in [0, 5, 32, 33, 64, 80] {
            text += &launch(k, 0);
        }
        // A misaligned store inside a segment faults.
        let faults = format!("{head}{}", launch(40, 2));
        segments_vs_entries(&dir, "seg_mix", &[(text, false), (faults, true)]);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A kernel whose segments hold branches (guarded by a predicate or its negation, taken by
    /// no lane, part of a warp or all its lanes; unguarded; a loop's backward branch) and
    /// exits, run on blocks with a partial warp and under budgets that end a launch anywhere,
    /// gives the same results and errors with segments as entry by entry.
    #[test]
    fn segments_with_branches_match_entry_by_entry() {
        const PTX: &str = "
.version 8.8
.target sm_80
.address_size 64
.visible .entry seg_bra(.param .u64 p_dst, .param .u32 p_k)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<6>;
	ld.param.u64 	%rd1, [p_dst];
	ld.param.u32 	%r1, [p_k];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
	mul.wide.u32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	setp.lt.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L_a;
	add.s32 	%r6, %r6, 1;
	st.global.u32 	[%rd4], %r6;
$L_a:
	setp.ge.u32 	%p2, %r2, %r1;
	@!%p2 bra 	$L_b;
	add.s32 	%r6, %r6, 2;
$L_b:
	mov.u32 	%r8, 0;
$L_loop:
	add.s32 	%r8, %r8, 1;
	add.s32 	%r6, %r6, %r8;
	setp.lt.u32 	%p3, %r8, 3;
	@%p3 bra 	$L_loop;
	add.s32 	%r7, %r6, %r5;
	st.global.u32 	[%rd4], %r7;
	bra 	$L_c;
	add.s32 	%r7, %r7, 100;
$L_c:
	setp.eq.u32 	%p3, %r1, 0;
	@%p3 bra 	$L_d;
	st.global.u32 	[%rd4+1200], %r7;
	ret;
$L_d:
	st.global.u32 	[%rd4+2400], %r7;
}
";
        let dir = std::env::temp_dir().join(format!("sim-seg-bra-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("seg_bra.ptx"), PTX).unwrap();
        let mut text = "name = \"seg_bra\"\ndescription = \"test\"\nptx = \"seg_bra.ptx\"\n\
                        [params]\nn = 1\n\
                        [[buffer]]\nname = \"dst\"\ntype = \"u32\"\ncount = \"900\"\n\
                        init = \"random:7\"\noutput = true\n\n"
            .to_string();
        // Guards that pass for no lane, part of the first warp, whole warps, every lane.
        for k in [0, 5, 32, 33, 64, 80] {
            text += &format!(
                "[[launch]]\nlabel = \"k{k}\"\nkernel = \"seg_bra\"\ngrid = [3, 1, 1]\n\
                 block = [80, 1, 1]\nargs = [\"dst\", {k}]\n\n"
            );
        }
        segments_vs_entries(&dir, "seg_bra", &[(text, false)]);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Runs each workload of `texts` (written into `dir` as `{name}_{k}.toml`, next to its PTX)
    /// under budgets that end a launch at many places, with segments and entry by entry
    /// ([`super::super::fast::tests::SEGMENTS_OFF`]); asserts the same launches or error, and
    /// that the unlimited run fails exactly where the text's flag says so.
    fn segments_vs_entries(dir: &std::path::Path, name: &str, texts: &[(String, bool)]) {
        for (k, (text, faults)) in texts.iter().enumerate() {
            let path = dir.join(format!("{name}_{k}.toml"));
            std::fs::write(&path, text).unwrap();
            let cfg = format!("{}/../configs/rtx3090.toml", env!("CARGO_MANIFEST_DIR"));
            let cfg = crate::config::GpuConfig::load(std::path::Path::new(&cfg)).unwrap();
            let w = crate::workload::Workload::resolve(path.to_str().unwrap()).unwrap();
            for budget in [
                u64::MAX,
                1,
                7,
                13,
                17,
                20,
                40,
                101,
                200,
                230,
                240,
                250,
                252,
                254,
                260,
                300,
                333,
                400,
            ] {
                let opts = crate::run::Options {
                    keep_outputs: true,
                    max_warp_instructions: budget,
                    ..Default::default()
                };
                let run = |off: bool| {
                    super::super::fast::tests::SEGMENTS_OFF.set(off);
                    let r = crate::run::run_workload(&cfg, &w, &opts);
                    super::super::fast::tests::SEGMENTS_OFF.set(false);
                    match r {
                        Ok(r) => format!("{:?}", r.launches),
                        Err(e) => format!("error: {e}"),
                    }
                };
                let (seg, one) = (run(false), run(true));
                if budget == u64::MAX {
                    assert_eq!(one.starts_with("error"), *faults, "{k}: {one:.300}");
                }
                assert_eq!(seg, one, "{name} {k} budget {budget}");
            }
        }
    }

    /// Two overlapping runs and one at the end: each PC counts the runs over it.
    #[test]
    fn runs_fold_into_per_pc_counts() {
        let mut runs = Runs {
            diff: vec![[0; 2]; 5],
            ..Default::default()
        };
        count_run(&mut runs.diff, 0, 3, 32);
        count_run(&mut runs.diff, 1, 4, 5);
        count_run(&mut runs.diff, 3, 4, 7);
        let mut per_pc = vec![PcStats::default(); 4];
        per_pc[2].executed = 10;
        runs.fold(&mut per_pc);
        let got: Vec<(u64, u64)> = per_pc.iter().map(|p| (p.executed, p.threads)).collect();
        assert_eq!(got, [(1, 32), (2, 37), (12, 37), (2, 12)]);
        assert!(runs.diff.iter().all(|d| *d == [0, 0]));
    }
}

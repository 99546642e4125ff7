//! The straight-line path of a converged warp: runs of pre-decoded entries ([`super::super::fast`]),
//! a segment at a time for a full warp, and the loads and stores between them; where a warp's
//! turn ends on this path ([`super::super::turns`]).

use super::*;

impl Ctx<'_> {
    /// Runs converged warp `w` through the pre-decoded instructions from its PC on, until an
    /// instruction that needs the general path: one without a pre-decoded entry, a branch that
    /// diverges, the end of the budget (the general path reports it at that instruction), or the
    /// warp's exit. Every lane of a converged warp is at the PC, so the lanes at it are the live
    /// ones.
    ///
    /// A full warp runs each segment of entries ([`LoopEntry::in_segment`]: plain entries, whole-warp
    /// word accesses, branches and exits) through [`Ctx::segment`], with its bookkeeping done once for
    /// the segment; the other entries, and a partial warp's runs of plain entries, go through
    /// [`Ctx::entry`]. `%clock` is counted at the end.
    ///
    /// A load or store that neither runs in a segment nor is left to the general path stops the
    /// loop within the budget with its lanes, `Some(exec)`, for [`Ctx::mem_step`].
    #[inline(always)]
    pub(super) fn run_straight(&mut self, w: &mut Warp) -> Option<u32> {
        let live = w.live;
        let threads = u64::from(live.count_ones());
        let forms = self.pass.forms;
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
                    SegmentEnd::Ran => continue,
                    SegmentEnd::Jump(target) => {
                        pc = target;
                        if self.turn_over {
                            break None;
                        }
                        continue;
                    }
                    SegmentEnd::Mem(exec) => break Some(exec),
                    SegmentEnd::Left => break None,
                    SegmentEnd::Turn => {
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
    /// ([`LoopEntry::in_segment`]) and within the budget, as the general path would one at a time:
    /// their stream entries are copied from [`Runs::entries`] (a word access's latency, and a
    /// taken branch's, written into its own), the per-PC statistics and the uniform datapath's
    /// counters counted once for the PCs it ran (less the threads of a branch no lane took:
    /// none ran it); once every invariant entry has filled its register in this register
    /// file, it steps over the invariant entries ([`LoopEntry::next`]).
    ///
    /// Returns the end of the PCs it ran and counted, and what next ([`SegmentEnd`]): `b` when it ran
    /// them all; a branch every lane takes, or an exit, is the last it runs; it stops, uncounted,
    /// at a branch that diverges (for the general path) and at a load or store it leaves to
    /// [`Ctx::mem_step`]: one whose guard does not let every lane run, or that
    /// [`Ctx::word_access`] leaves to the general path.
    #[inline(always)]
    pub(super) fn segment(&mut self, w: &mut Warp, a: u32, b: u32) -> (u32, SegmentEnd) {
        // Cut at `b`, so that the loop's `pc < b` bounds its entries' indexing too.
        let forms = &self.pass.forms[..b as usize];
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
        let mut stop = (b, SegmentEnd::Ran);
        // One loop per case, so that a settled register file's (the common case) neither
        // tests for invariant entries (it steps over them) nor chooses its next PC.
        macro_rules! seg_loop {
            ($settled:expr) => {
                while pc < b {
                    let p = &forms[pc as usize];
                    match p.op {
                        EntryOp::Mem(ref plan) => {
                            let turn = self.pass.turn_flags[pc as usize];
                            if self.loaded && turn & WAITS != 0
                                || self.yields(turn, base + (pc - a) as usize)
                            {
                                stop = (pc, SegmentEnd::Turn);
                                break;
                            }
                            match self.segment_word(w, p, pc, plan) {
                                Ok(lat) => {
                                    stream[base + (pc - a) as usize].lat = lat;
                                    self.loaded |= self.turns && turn & LOADS != 0;
                                }
                                Err(exec) => {
                                    stop = (pc, SegmentEnd::Mem(exec));
                                    break;
                                }
                            }
                        }
                        EntryOp::Bra { target } => {
                            let exec = pre_guard_mask(w, p);
                            // A branch after a load: the warp stalls ([`super::turns`]).
                            let fence =
                                self.loaded && self.pass.turn_flags[pc as usize] & FENCE != 0;
                            if exec == u32::MAX {
                                // Taken by every lane: the timing pass needs to know.
                                stream[base + (pc - a) as usize].lat = 1;
                                self.turn_over = fence;
                                stop = (pc + 1, SegmentEnd::Jump(target));
                                break;
                            }
                            if exec != 0 {
                                stop = (pc, SegmentEnd::Left);
                                break;
                            }
                            // Taken by no lane: no thread ran it.
                            uncount_threads(&mut self.runs.diff, pc as usize, 32);
                            if fence {
                                stop = (pc + 1, SegmentEnd::Turn);
                                break;
                            }
                        }
                        EntryOp::Exit => {
                            w.live = 0;
                            stop = (pc + 1, SegmentEnd::Left);
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
    pub(super) fn segment_word(
        &mut self,
        w: &mut Warp,
        p: &LoopEntry,
        pc: u32,
        plan: &crate::exec::fast::MemPlan,
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
    pub(super) fn entry(
        &mut self,
        w: &mut Warp,
        pre: &LoopEntry,
        pc: &mut u32,
        left: &mut u64,
        threads: u64,
    ) -> Stop {
        let Ctx {
            pass,
            counters,
            per_pc,
            runs,
            ctaid,
            log,
            ..
        } = self;
        let forms = pass.forms;
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
            &EntryOp::Bra { target } => {
                fence = self.pass.turn_flags[*pc as usize] & FENCE != 0;
                if exec == live {
                    // A branch every active lane takes: the timing pass needs to know.
                    (next, lat) = (target, 1);
                } else if exec != 0 {
                    return Stop::Done; // divergence: the general path
                }
            }
            EntryOp::Exit => w.live = 0,
            EntryOp::General => return Stop::Done,
            EntryOp::Mem(_) => return Stop::Mem(exec),
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
                if let EntryOp::Param { .. } = op {
                    lat = Served::Operand.lat();
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
    pub(super) fn mem_step(&mut self, w: &mut Warp, exec: u32) -> Result<()> {
        let pc = w.common_pc;
        let turn = self.pass.turn_flags[pc as usize];
        if self.loaded && turn & WAITS != 0 {
            // It needs a value the warp's turn loaded: the warp stalls before it.
            self.turn_over = true;
            return Ok(());
        }
        if self.yields(turn, self.log.warps[w.index as usize].len()) {
            return Ok(());
        }
        self.loaded |= self.turns && turn & LOADS != 0;
        let inst = &self.pass.launch.program.insts[pc as usize];
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
    pub(super) fn load_or_store(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        exec: u32,
    ) -> Result<u32> {
        match inst.op {
            Op::Ld(m) => self.load(w, inst, pc, m, exec),
            Op::St(m) => self.store(w, inst, pc, m, exec),
            _ => unreachable!("memory entries are loads and stores"),
        }
    }
}

/// Lanes whose guard predicate lets the entry `p` run (all when unguarded): [`guard_mask`] of
/// the warp loop's pre-decoded entry.
#[inline(always)]
pub(super) fn pre_guard_mask(w: &Warp, p: &LoopEntry) -> u32 {
    if p.guard == NO_REG {
        return u32::MAX;
    }
    guard_bits(&w.regs, p.guard, p.negated)
}

/// Executes entry `op` of a converged warp `w` for the lanes of `exec`: an integer form, a
/// broadcast, a kernel parameter, `%ctaid`, `%tid` or nothing. Control flow, the general path
/// and the counters ([`count_uniform`]) are the caller's.
#[inline(always)]
pub(super) fn plain(op: &EntryOp, w: &mut Warp, ctaid: &[u32; 3], exec: u32) {
    match op {
        EntryOp::AluForm(f) => f.run_inline(&mut w.regs, exec),
        &EntryOp::Bcast { d, v, .. } | &EntryOp::Param { d, v, .. } => {
            fill(row_mut(&mut w.regs, d), exec, v);
        }
        &EntryOp::Ctaid { d, c, m } => {
            let v = u64::from(ctaid[usize::from(c)]) & m;
            fill(row_mut(&mut w.regs, d), exec, v);
        }
        &EntryOp::Tid { d, c, m } => {
            let tid = &w.tid[usize::from(c)];
            let out = row_mut(&mut w.regs, d);
            for_lanes!(exec, |l| {
                out[l] = u64::from(tid[l]) & m;
            });
        }
        EntryOp::Nop | EntryOp::Bra { .. } | EntryOp::Exit | EntryOp::General | EntryOp::Mem(_) => {
        }
    }
}

/// Marks the register of invariant entry `p`, just run for all 32 lanes of `w`, as fixed when
/// its sources are.
#[cold]
pub(super) fn settle(p: &LoopEntry, w: &mut Warp) {
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
pub(super) enum SegmentEnd {
    /// It ran every PC it was given: go on from the next one.
    Ran,
    /// At a branch every lane took: go on from its target.
    Jump(u32),
    /// At a load or store for [`Ctx::mem_step`], within the budget, with its lanes.
    Mem(u32),
    /// At a branch that diverges (for the general path), or after the warp's exit.
    Left,
    /// Before a word access that needs a value the warp's turn loaded or that the turn yields
    /// at, or after a branch that ends the turn: the turn is over ([`super::turns`]).
    Turn,
}

/// What [`Ctx::entry`] leaves [`Ctx::run_straight`] to do.
pub(super) enum Stop {
    /// Go on from the next PC.
    Next,
    /// Stop at a load or store, within the budget, for the lanes it holds.
    Mem(u32),
    /// Stop at an instruction of the general path or at the warp's exit.
    Done,
    /// Stop after a branch that ends the warp's turn ([`super::turns`]).
    Turn,
}

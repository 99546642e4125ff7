//! A warp's issue loop: its instructions issue in dataflow order within a basic block and in
//! order across a branch, each at the first free cycle of its scheduler; what each kind of
//! instruction waits for and when its result is ready.

use super::*;

impl<'a, R: Board + ?Sized> Warp<'a, R> {
    /// Issues the warp's instructions, the first ready at cycle `want`, until the key of the
    /// next one is not below `lim << 32` (nor its cycle below `lim` when the warp's number is
    /// smaller than the next key's): returns that instruction's cycle; or until it parks at a
    /// barrier or retires (`None`).
    #[inline(always)]
    pub(super) fn run(
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
            if p.fast & env.fast != 0 && Lat::is_cycles(lat) {
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
    pub(super) fn fast(
        &mut self,
        p: &Plan,
        work: &mut SmWork,
        port: &mut Port,
        want: u32,
        lat: u32,
    ) {
        debug_assert!(p.fast != 0 && p.deps.n_dst == 1);
        // In issue order, as the general path adds them (a sum of floats).
        if p.rare & CONST != 0 {
            work.const_cycles += p.const_cycles;
        }
        let dst = p.deps.dst[0];
        let result = p.result + lat;
        let smsp = usize::from(self.port) % MAX_SCHEDULERS;
        if p.slots == 0 {
            // Folded: it takes no cycle, and the floor moves to its cycle if it was the next.
            // Its wait counts (an instruction it is folded into waits as long). A `mul.wide`
            // folded into its add is the IMAD.WIDE: its heavy-pipe cycles count here.
            pipes_book(p, work, smsp, want);
            let st = &mut work.stalls[p.pc as usize];
            self.account(st, &p.deps, want, want, want, 0);
            self.issued_max = self.issued_max.max(want);
            self.ready.set(dst, want + result, p.why);
            if want == self.clock + 1 {
                self.clock = want;
            }
            return;
        }
        // `work.now` is left alone: only memory accesses read it, and they set it in `step`.
        let go = pipes_book(p, work, smsp, want);
        let from = self.seen + 1;
        let issue = port.take(u64::from(go)) as u32;
        let st = &mut work.stalls[p.pc as usize];
        self.account(st, &p.deps, want, issue, issue, 1);
        if go > want {
            throttled(st, want.max(from), go);
        }
        self.issued_max = self.issued_max.max(issue);
        work.issue_slots += 1;
        self.ready.set(dst, issue + result, p.why);
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
    pub(super) fn step(
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
        // A loop's backward branch between two of its SASS loop's is not in the SASS
        // ([`Warp::waits_at`]): it takes no slot.
        let waits = match p.kind {
            Kind::Bra => !p.if_converted && self.waits_at(p, lat),
            _ => false,
        };
        let slots = if p.kind == Kind::Bra && !waits && p.overlap > 1 && lat == 1 {
            0
        } else {
            p.slots
        };
        // A tensor instruction waits for its sub-partition's tensor pipe too.
        let smsp = usize::from(self.port) % MAX_SCHEDULERS;
        let go = match p.kind {
            Kind::Tensor => want.max(work.tensor_free[smsp]),
            _ => pipes_book(p, work, smsp, want),
        };
        let from = self.seen + 1;
        let (issue, last) = take_slots(port, go, slots);
        let st = &mut work.stalls[p.pc as usize];
        self.account(st, &p.deps, want, issue, last, slots);
        if go > want {
            throttled(st, want.max(from), go);
        }
        if p.stores != 0 {
            self.note_store(p.stores, issue);
        }
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
        let mut why = p.why;
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
                // if-converted branch is no branch in SASS, nor is a loop's backward branch
                // between two of its SASS loop's ([`Warp::waits_at`]). An if-converted region is
                // issued even when every lane skips it (`lat` 1: every lane jumped).
                if waits {
                    self.clock = self.clock.max(issue).max(self.issued_max);
                }
                if lat == 1 {
                    let k = work.skipped(costs, p.pc);
                    if k > 0 {
                        let (first, end) = take_slots(port, self.clock + 1, k);
                        // The skipped region's slots: issued, predicated off.
                        let pc = p.pc as usize;
                        self.account(&mut work.stalls[pc], &Deps::default(), first, first, end, k);
                        self.clock = end;
                    }
                }
                None
            }
            Kind::Load => {
                // The level that served a global access, found by the look-up.
                work.level = p.why;
                let l = latency(lat, costs, log, work);
                why = work.level;
                // `result`: what a texture fetch adds to the memory latency (0 for others).
                Some(issue + l + p.result)
            }
            Kind::Drain => {
                self.drain = self.drain.max(issue + latency(lat, costs, log, work));
                None
            }
            Kind::Shfl => Some(issue + env.shared_latency),
            Kind::Tensor => {
                work.tensor_free[smsp] = issue + p.pipe;
                Some(issue + p.result)
            }
            Kind::Nothing => None,
            // Results of a multi-instruction expansion are late by what its last slot waited.
            Kind::Alu => Some((last + 1).saturating_sub(slots.max(1)).max(issue) + p.result),
        };
        if let Some(t) = ready {
            for &d in p.deps.dst.iter().take(usize::from(p.deps.n_dst)) {
                self.ready.set(d, t, why);
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

/// Books the cycles the half-rate pipes `p` uses on sub-partition `smsp` take, the first at or
/// after `want` ([`crate::timing::pipes`]); returns the first cycle both are free from, the
/// earliest the instruction issues (`want` when it uses neither).
#[inline(always)]
fn pipes_book(p: &Plan, work: &mut SmWork, smsp: usize, want: u32) -> u32 {
    let mut go = want;
    if p.heavy != 0 {
        go = go.max(take_slots(&mut work.heavy[smsp], want, u32::from(p.heavy)).0);
    }
    if p.alu != 0 {
        go = go.max(take_slots(&mut work.alu_pipe[smsp], want, u32::from(p.alu)).0);
    }
    go
}

/// Counts the cycles from `from` to `go`, which [`Warp::account`] counted as `not_selected`, as
/// `math_pipe_throttle`: the instruction was ready and its pipe was busy.
fn throttled(st: &mut Stalls, from: u32, go: u32) {
    if go > from {
        let c = u64::from(go - from);
        st.0[usize::from(stall::NOT_SELECTED)] -= c;
        st.0[usize::from(stall::MATH_PIPE_THROTTLE)] += c;
    }
}

/// Takes `slots` issue cycles of `port`, the first at or after `want`; returns the first and the
/// last (both `want` when the instruction issues nothing).
#[inline(always)]
pub(super) fn take_slots(port: &mut Port, want: u32, slots: u32) -> (u32, u32) {
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
pub(super) fn latency(lat: u32, costs: &Costs, log: &BlockLog, work: &mut SmWork) -> u32 {
    // Most entries carry their latency (constant, shared, parameter loads).
    if Lat::is_cycles(lat) {
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
pub(super) fn prefetch_stream(stream: &[Entry]) {
    const LINE: usize = 64 / std::mem::size_of::<Entry>();
    let mut k = LINE;
    while k < stream.len().min(4 * LINE) {
        crate::memory::prefetch_line(stream.as_ptr().wrapping_add(k).cast());
        k += LINE;
    }
}

/// [`latency`] of a ticket or a global or local access.
#[inline(never)]
pub(super) fn resolved(lat: u32, costs: &Costs, log: &BlockLog, work: &mut SmWork) -> u32 {
    let request = |lat: u32, work: &mut SmWork| {
        let Lat::Request(i) = Lat::of(lat) else {
            return lat;
        };
        let o = log.out[i].get();
        work.level = if o.dram {
            stall::LONG_DRAM
        } else {
            stall::LONG_L2
        };
        if o.dram {
            costs.dram_queued(work.queue_dram(o.dram_bytes))
        } else {
            // The queue moves on all the same; only a DRAM access waits for it.
            work.queue_dram_only(o.dram_bytes);
            o.lat
        }
    };
    if let Lat::Access(i) = Lat::of(lat) {
        if let Some(v) = work.issued.as_mut() {
            v.push((log.wave as u32, log.block, i as u32, work.now));
        }
        let m = log.mems[i];
        let l = request(m.lat, work);
        if m.hit {
            work.level = stall::LONG_L1;
        }
        let sectors = &log.sectors[m.start as usize..m.end as usize];
        let lines = u32::from(m.lines);
        return work.global_sectors(costs, log.wave, m.dwf, sectors, lines, m.store, m.hit, l);
    }
    request(lat, work)
}

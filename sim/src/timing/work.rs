//! Work done on one SM during a launch ([`SmWork`]): the counts its throughput bounds come
//! from, the fills in flight and stores an access meets, and its latency bound.

use super::*;

/// The earliest cycle (of the SM's first blocks, which start the launch) each unit was used.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Starts {
    /// First global/local load.
    pub load: Option<u32>,
    /// First global/local store.
    pub store: Option<u32>,
    /// First shared-memory access.
    pub shared: Option<u32>,
    /// First LDC.
    pub ldc: Option<u32>,
}

impl Starts {
    pub(super) fn note(&mut self, u: Unit, t: u32) {
        let slot = match u {
            Unit::Load => &mut self.load,
            Unit::Store => &mut self.store,
            Unit::Shared => &mut self.shared,
            Unit::Ldc => &mut self.ldc,
        };
        *slot = Some(slot.map_or(t, |x| x.min(t)));
    }

    pub(super) fn of(&self, u: Unit) -> f64 {
        let v = match u {
            Unit::Load => self.load,
            Unit::Store => self.store,
            Unit::Shared => self.shared,
            Unit::Ldc => self.ldc,
        };
        v.map_or(0.0, f64::from)
    }
}

/// Work done on one SM during a launch, for its throughput bounds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SmWork {
    /// Where the order of the functional pass is measured ([`crate::exec::Launch::probe_order`],
    /// SM 0): per global or local access the replay issued, (wave, block, its index in the
    /// block's [`crate::trace::BlockLog::mems`], issue cycle from the wave's start).
    #[serde(skip)]
    pub issued: Option<Vec<(u32, u64, u32, u32)>>,
    /// Warp instructions issued (PTX).
    pub warp_insts: u64,
    /// SASS warp instructions issued ([`sass`]): the issue bound's work.
    pub issue_slots: u64,
    /// Cycles the barrier unit was busy with `bar.sync` arrivals.
    pub barrier_cycles: f64,
    /// L2 write requests (128-byte lines the stores touched).
    pub l2_write_lines: u64,
    /// When each unit was first used.
    pub starts: Starts,
    /// Latency-bound cycles of each block, in dispatch order, with its wave.
    pub blocks: Vec<(usize, u64)>,
    /// Issue cycle of the instruction being executed (set by the replay).
    pub now: u32,
    /// This SM's share of the DRAM bandwidth and what is booked on it ([`SmWork::set_dram_share`],
    /// [`SmWork::queue_dram`]).
    #[serde(skip)]
    pub(super) dram: super::dram::DramCalendar,
    /// L1 data-pipe wavefronts of global and local accesses ([`data_wavefronts`], plus the
    /// missed sectors a fill writes into the data array).
    pub data_wavefronts: u64,
    /// Sectors stores touched, and those that left L1 unmerged (L2 writes).
    pub store_sectors: u64,
    /// Store sectors that left L1 as L2 writes (not merged into another store's).
    pub store_sectors_sent: u64,
    /// The wave whose fills and stores the maps below track.
    #[serde(skip)]
    pub(super) track_wave: usize,
    /// Sector -> cycle its fill from L2/DRAM arrives (the wave's L1 misses in flight).
    #[serde(skip)]
    pub(super) fills: FillMap,
    /// Sectors `fills` may hold lie within these two, so that a hit whose sectors lie outside
    /// (another buffer's) skips the look-ups. A wave starts with `(u64::MAX, 0)`, which holds
    /// none; the default `(0, 0)` is safe too, as every insert widens the range to its sectors.
    #[serde(skip)]
    pub(super) fill_range: (u64, u64),
    /// No load of the wave hits L1 throughout ([`SmWork::expect_hits`]): no load waits for a fill
    /// in flight, so misses need not record theirs in `fills`.
    #[serde(skip)]
    pub(super) no_hits: bool,
    /// Sector -> cycle of the wave's last store to it.
    #[serde(skip)]
    pub(super) stored: SectorMap<512>,
    /// Memory instructions sent to the LSU (global, local, shared; not LDC).
    pub mem_insts: u64,
    /// L1 sectors moved (global and local).
    pub l1_sectors: u64,
    /// L1 tag lookups (distinct 128-byte lines per request).
    pub l1_tags: u64,
    /// Cycles the constant pipe was busy passing addresses ([`Costs::constant_work`]).
    pub const_cycles: f64,
    /// Cycles of constant-cache misses in flight ([`Costs::constant_work`]).
    pub const_miss_cycles: f64,
    /// LDC requests that missed the SM's nearest constant cache and went to its GPC's constant
    /// cache ([`crate::trace::BlockLog::const_far`]).
    pub const_far: u64,
    /// Shared-memory wavefronts.
    pub shared_wavefronts: u64,
    /// Latency-bound cycles per wave (the slowest warp of each wave of co-resident blocks).
    pub waves: Vec<u64>,
    /// Warp-cycles per warp state of each instruction of the program (index: its pc), as the
    /// replay found them ([`super::stall`]).
    #[serde(skip)]
    pub stalls: Vec<super::stall::Stalls>,
    /// The level that served the global access being priced ([`super::stall::LONG_L1`],
    /// `LONG_L2` or `LONG_DRAM`; set by the replay's latency look-up).
    #[serde(skip)]
    pub(super) level: super::stall::Why,
    /// Per SM sub-partition (warp scheduler, at most 8), the cycle (of the current wave) its
    /// tensor pipe is free ([`super::tensor`]).
    #[serde(skip)]
    pub(super) tensor_free: [u32; 8],
    /// Per sub-partition, the cycles its FMA-heavy pipe and its ALU are taken
    /// ([`super::pipes`]): calendars, as the schedulers' (warps reach them roughly, not
    /// strictly, in cycle order, and a wave's warps find the earlier wave's cycles taken).
    #[serde(skip)]
    pub(super) heavy: [super::sched::Port; 8],
    #[serde(skip)]
    pub(super) alu_pipe: [super::sched::Port; 8],
}

impl SmWork {
    /// Adds what the memory instruction of outcome `o` asks of the SM's LSU, L1 tag stage and
    /// shared-memory banks (the throughput bounds' work).
    #[inline(always)]
    pub fn tally(&mut self, o: &crate::trace::Outcome) {
        use crate::trace::Outcome;
        match *o {
            Outcome::Shared { wavefronts, .. } => {
                self.mem_insts += 1;
                self.shared_wavefronts += u64::from(wavefronts);
            }
            Outcome::Global { sectors, lines, .. }
            | Outcome::Atomic { sectors, lines, .. }
            | Outcome::Texture { sectors, lines, .. } => {
                self.mem_insts += 1;
                self.l1_sectors += u64::from(sectors);
                self.l1_tags += u64::from(lines);
            }
            Outcome::Uniform { .. }
            | Outcome::ConstOperand
            | Outcome::Ldc { .. }
            | Outcome::InRegisters { .. } => {}
        }
    }

    /// Adds `bytes` of DRAM traffic, requested at the current instruction's issue cycle, to the
    /// SM's share of the DRAM bandwidth; returns the bytes still ahead of them including them.
    /// The share moves what was booked first come first served and idles while nothing is
    /// booked; a request waits only for what was booked at or after its own issue cycle, since
    /// the replay reaches accesses out of cycle order ([`super::dram::DramCalendar`]).
    pub fn queue_dram(&mut self, bytes: u64) -> u64 {
        self.dram.take(f64::from(self.now), bytes)
    }

    /// [`SmWork::queue_dram`] without its answer (a request L2 served, whose latency does not
    /// wait for the queue, booking the DRAM bytes it moved, if any).
    #[inline]
    pub fn queue_dram_only(&mut self, bytes: u64) {
        if bytes > 0 {
            self.dram.take(f64::from(self.now), bytes);
        }
    }

    /// The replay's cycles now count from `cycles` later (the start of the next wave's first
    /// block): the DRAM queue keeps what it has not moved yet.
    pub fn advance(&mut self, cycles: u64) {
        self.dram.advance(cycles);
        for t in &mut self.tensor_free {
            *t = t.saturating_sub(u32::try_from(cycles).unwrap_or(u32::MAX));
        }
    }

    /// Makes the pipe calendars' requests count from cycle `origin` of the launch (the start of
    /// the wave's first block) and forgets the cycles before it: the earlier waves' warps have
    /// all issued.
    pub fn set_pipe_origin(&mut self, origin: u64) {
        for p in self.heavy.iter_mut().chain(&mut self.alu_pipe) {
            p.set_origin(origin);
            p.forget_before(0);
        }
    }

    /// Extrapolates a sampled launch (by [`crate::trace::sampled`], as the counters); the latency
    /// of each wave that was not simulated is the mean of the simulated waves between wave 0 and
    /// the last.
    pub fn extrapolate(&mut self, first: &SmWork, snap: &SmWork, factor: f64, simulated: &[bool]) {
        let ex = |a: u64, b: u64, c: u64| crate::trace::sampled(a, b, c, factor);
        let exf = |a: f64, b: f64, c: f64| a + (b - a) * factor + (c - b);
        self.warp_insts = ex(first.warp_insts, snap.warp_insts, self.warp_insts);
        self.issue_slots = ex(first.issue_slots, snap.issue_slots, self.issue_slots);
        self.mem_insts = ex(first.mem_insts, snap.mem_insts, self.mem_insts);
        self.l1_sectors = ex(first.l1_sectors, snap.l1_sectors, self.l1_sectors);
        self.l1_tags = ex(first.l1_tags, snap.l1_tags, self.l1_tags);
        self.l2_write_lines = ex(
            first.l2_write_lines,
            snap.l2_write_lines,
            self.l2_write_lines,
        );
        self.data_wavefronts = ex(
            first.data_wavefronts,
            snap.data_wavefronts,
            self.data_wavefronts,
        );
        self.store_sectors = ex(first.store_sectors, snap.store_sectors, self.store_sectors);
        self.store_sectors_sent = ex(
            first.store_sectors_sent,
            snap.store_sectors_sent,
            self.store_sectors_sent,
        );
        self.shared_wavefronts = ex(
            first.shared_wavefronts,
            snap.shared_wavefronts,
            self.shared_wavefronts,
        );
        self.const_cycles = exf(first.const_cycles, snap.const_cycles, self.const_cycles);
        self.const_far = ex(first.const_far, snap.const_far, self.const_far);
        self.const_miss_cycles = exf(
            first.const_miss_cycles,
            snap.const_miss_cycles,
            self.const_miss_cycles,
        );
        self.barrier_cycles = exf(
            first.barrier_cycles,
            snap.barrier_cycles,
            self.barrier_cycles,
        );
        let none = super::stall::Stalls::default();
        for (pc, s) in self.stalls.iter_mut().enumerate() {
            let a = first.stalls.get(pc).unwrap_or(&none);
            s.extrapolate(a, snap.stalls.get(pc).unwrap_or(&none), factor);
        }
        // Blocks of the waves not simulated: as many per wave as the simulated middle waves had,
        // each taking their mean time.
        let n = simulated.len();
        let middle = |w: usize| w > 0 && w + 1 < n && simulated[w];
        let sampled: Vec<u64> = self
            .blocks
            .iter()
            .filter(|b| middle(b.0))
            .map(|b| b.1)
            .collect();
        let per_wave = (1..n)
            .find(|&w| middle(w))
            .map_or(0, |w| self.blocks.iter().filter(|b| b.0 == w).count());
        let mean_block = sampled.iter().sum::<u64>() / (sampled.len() as u64).max(1);
        let mut blocks = Vec::with_capacity(self.blocks.len() + n * per_wave);
        let mut it = self.blocks.iter().peekable();
        for (w, &sim) in simulated.iter().enumerate() {
            if sim {
                while let Some(b) = it.next_if(|b| b.0 == w) {
                    blocks.push(*b);
                }
            } else {
                blocks.extend(std::iter::repeat_n((w, mean_block), per_wave));
            }
        }
        blocks.extend(it);
        self.blocks = blocks;
        let n = simulated.len();
        let middle: Vec<u64> = (1..n.saturating_sub(1))
            .filter(|&w| simulated[w])
            .filter_map(|w| self.waves.get(w).copied())
            .collect();
        let mean = middle.iter().sum::<u64>() / (middle.len() as u64).max(1);
        if self.waves.len() < n {
            self.waves.resize(n, 0);
        }
        for (w, _) in simulated
            .iter()
            .enumerate()
            .take(n.saturating_sub(1))
            .skip(1)
            .filter(|(_, s)| !**s)
        {
            self.waves[w] = mean;
        }
    }

    /// Records that a block of this SM in wave `wave` finished after `cycles`.
    pub fn block_done(&mut self, wave: usize, cycles: u64) {
        if self.waves.len() <= wave {
            self.waves.resize(wave + 1, 0);
        }
        self.waves[wave] = self.waves[wave].max(cycles);
        self.blocks.push((wave, cycles));
    }

    /// Says whether the wave about to be replayed has a load that hits L1 throughout
    /// ([`crate::trace::MemRec::hit`]): only such a load asks [`SmWork::global_sectors`]
    /// for the fills in flight, so without one the misses' fills are not recorded (read_stride
    /// and transpose_smem hit nothing). Set per wave; until then fills are recorded.
    pub fn expect_hits(&mut self, any: bool) {
        self.no_hits = !any;
    }

    /// Sets the SM's share of the DRAM bandwidth the queue drains at ([`SmWork::queue_dram`]).
    pub fn set_dram_share(&mut self, costs: &Costs) {
        // Every wave sets it; what earlier waves booked stays.
        let share = costs.dram_bytes_per_cycle_per_sm;
        if self.dram.share() != share {
            self.dram = super::dram::DramCalendar::new(share);
        }
    }

    /// Accounts the constant-pipe work of an LDC ([`Costs::ldc_work`]).
    #[inline]
    pub fn add_ldc(&mut self, (pipe, miss): (f64, f64)) {
        self.const_cycles += pipe;
        self.const_miss_cycles += miss;
    }

    /// Accounts a global or local access (a store when `store`; `hit` when every sector hit L1)
    /// and returns its latency from `lat`, the latency of the level that served it:
    /// - in the L1 data pipe it takes the [`data_wavefronts`] of its words, plus one per missed
    ///   sector (the fill written into the data array);
    /// - a load that hits a sector whose fill is still in flight waits for that fill (the miss
    ///   status holding register merges it), so warps reading the same missed sector get their
    ///   data together;
    /// - a store to a sector another store of this SM wrote at most `store_merge` cycles before
    ///   merges into that store's L2 write.
    ///
    /// The access comes as its L1 data-pipe wavefronts `dwf` ([`data_wavefronts`] plus one per
    /// missed sector), its distinct sector numbers (address / sector size, from
    /// [`crate::memory::coalesce::sectors`]) and the distinct L1 lines they lie in, `lines`,
    /// which the functional pass leaves for the timing pass. A store that nothing merges reads
    /// `lines` and the number of its sectors, not the sectors.
    #[allow(clippy::too_many_arguments)]
    pub fn global_sectors(
        &mut self,
        costs: &Costs,
        wave: usize,
        dwf: u32,
        sectors: &[u64],
        lines: u32,
        store: bool,
        hit: bool,
        lat: u32,
    ) -> u32 {
        if wave != self.track_wave {
            self.track_wave = wave;
            self.fills.clear();
            self.fill_range = (u64::MAX, 0);
            self.stored.clear();
        }
        self.data_wavefronts += u64::from(dwf);
        let now = self.now;
        // Sectors come ascending and distinct ([`crate::memory::coalesce::sectors`]), so those of
        // one line come one after another.
        debug_assert!(sectors.windows(2).all(|w| w[0] < w[1]));
        if store {
            self.store_sectors += sectors.len() as u64;
            let Some(window) = costs.store_merge else {
                // Nothing merges: every sector is an L2 write, and no store asks when this one
                // wrote (the map of stores is not kept).
                debug_assert_eq!(u64::from(lines), distinct_lines(costs, sectors));
                self.store_sectors_sent += sectors.len() as u64;
                self.l2_write_lines += u64::from(lines);
                return lat;
            };
            self.stored.reserve_for(sectors.len());
            let (mut sent, mut lines, mut last_line) = (0u64, 0u64, None);
            for &s in sectors {
                let before = self.stored.insert_reserved(s, now);
                if before.is_some_and(|t| t.abs_diff(now) <= window) {
                    continue;
                }
                sent += 1;
                let line = costs.line_of(s);
                if last_line != Some(line) {
                    lines += 1;
                    last_line = Some(line);
                }
            }
            self.store_sectors_sent += sent;
            self.l2_write_lines += lines;
            return lat;
        }
        if !hit && self.no_hits {
            // Its fills are not recorded: the sectors (of a log written a batch ago, out of the
            // host's caches by now) are not read.
            return lat;
        }
        let (first, last) = match sectors {
            [] => return lat,
            [f, .., l] => (*f, *l),
            [f] => (*f, *f),
        };
        let (lo, hi) = self.fill_range;
        if hit {
            if last < lo || first > hi {
                // None of its sectors has a fill in flight.
                return lat;
            }
            // The latest fill among its sectors, 0 for none (`saturating_sub` keeps the order:
            // the largest wait is the latest fill's).
            let wait = self.fills.latest(sectors).saturating_sub(now);
            lat.max(wait)
        } else {
            if !self.no_hits {
                self.fills.insert_all_new(sectors, now + lat);
                self.fill_range = (lo.min(first), hi.max(last));
            }
            lat
        }
    }

    /// A warp jumped over the region of the branch at `pc` with all its lanes: if ptxas
    /// if-converts that branch the warp issues the region predicated off; accounts it and
    /// returns its issue slots.
    #[inline]
    pub fn skipped(&mut self, costs: &Costs, pc: u32) -> u32 {
        match costs.sass.skipped(pc) {
            Some(k) => {
                self.issue_slots += u64::from(k.slots);
                self.const_cycles += f64::from(k.ldc) * costs.const_serial;
                self.mem_insts += u64::from(k.mem);
                k.slots
            }
            None => 0,
        }
    }

    /// Latency-bound cycles of this SM: its blocks run in dispatch order, each in the first free
    /// block slot (as many as its first wave has) and no sooner than `dispatch` cycles after the
    /// previous block started.
    pub fn latency(&self, dispatch: f64) -> f64 {
        let slots = self.blocks.iter().filter(|b| b.0 == 0).count().max(1);
        let mut free = vec![0.0f64; slots];
        let mut last_start = f64::NEG_INFINITY;
        let mut end = 0.0f64;
        for &(_, dur) in &self.blocks {
            let (i, f) = free
                .iter()
                .copied()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("at least one slot");
            let start = f.max(last_start + dispatch).max(0.0);
            free[i] = start + dur as f64;
            last_start = start;
            end = end.max(free[i]);
        }
        end
    }
}

/// The distinct L1 lines of ascending `sectors`: one more at each change of line, computed from
/// the ends for a run without gaps.
#[inline]
pub(super) fn distinct_lines(costs: &Costs, sectors: &[u64]) -> u64 {
    match sectors {
        [] => 0,
        [first, .., last]
            if costs.l1_line_shift.is_some() && last - first + 1 == sectors.len() as u64 =>
        {
            costs.line_of(*last) - costs.line_of(*first) + 1
        }
        _ => {
            1 + sectors
                .windows(2)
                .filter(|w| costs.line_of(w[0]) != costs.line_of(w[1]))
                .count() as u64
        }
    }
}

/// The sector maps of an SM's timing pass ([`SmWork::take_maps`]): their tables, kept from one
/// launch to the next, so that a launch neither allocates nor grows them anew (a wave of strided
/// loads holds tens of thousands of sectors).
#[derive(Debug, Default)]
pub struct SectorMaps {
    pub(super) fills: FillMap,
    pub(super) stored: SectorMap<512>,
}

impl SmWork {
    /// Takes this SM's sector maps for another launch's SM ([`SmWork::reuse_maps`]); this one's
    /// are left empty.
    pub fn take_maps(&mut self) -> SectorMaps {
        SectorMaps {
            fills: std::mem::take(&mut self.fills),
            stored: std::mem::take(&mut self.stored),
        }
    }

    /// Gives this SM, before its launch's timing pass, the tables of `maps`, emptied: the same
    /// as the empty maps it starts with.
    pub fn reuse_maps(&mut self, maps: SectorMaps) {
        let SectorMaps {
            mut fills,
            mut stored,
        } = maps;
        fills.clear();
        stored.clear();
        self.fills = fills;
        self.stored = stored;
    }
}

/// Sectors per chunk of a [`FillMap`]: 512 bytes of 32-byte sectors, four 128-byte lines.
pub(super) const CHUNK: usize = 16;

/// The ascending, distinct `sectors` grouped by chunk: (chunk number, bit per sector of it).
#[inline(always)]
pub(super) fn chunks(sectors: &[u64], mut each: impl FnMut(u64, u32)) {
    let shift = CHUNK.trailing_zeros();
    let low = CHUNK as u64 - 1;
    if let [first, .., last] = *sectors {
        if last - first + 1 == sectors.len() as u64 {
            // A run without gaps (a coalesced access): each chunk's bits from its ends.
            for c in first >> shift..=last >> shift {
                let lo = if c == first >> shift { first & low } else { 0 };
                let hi = if c == last >> shift { last & low } else { low };
                each(c, (u32::MAX >> (31 - hi)) & (u32::MAX << lo));
            }
            return;
        }
    }
    let mut it = sectors.iter();
    let Some(&s) = it.next() else { return };
    let (mut chunk, mut bits) = (s >> shift, 1u32 << (s & low));
    for &s in it {
        if s >> shift != chunk {
            each(chunk, bits);
            (chunk, bits) = (s >> shift, 0);
        }
        bits |= 1 << (s & low);
    }
    each(chunk, bits);
}

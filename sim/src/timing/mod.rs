//! A cycle-approximate timing model.
//!
//! Per SM the larger of two kinds of bounds wins:
//! - **latency**, an event-driven replay ([`replay`]): the warps of all the blocks co-resident on
//!   the SM in a wave advance together in cycle order. Each warp runs a scoreboard (an
//!   instruction issues when its source registers are ready and after the SASS instructions
//!   before it, [`sass`]; its result is ready after the latency of the level that served it; a
//!   warp retires when its stores are acknowledged by L2) and belongs to one of the SM's warp
//!   schedulers, each issuing at most one SASS instruction per cycle ([`sched::Port`]), so warps
//!   wait for each other's issue slots. A DRAM access waits behind the SM's earlier DRAM traffic,
//!   served first come first served at the SM's share of the bandwidth
//!   ([`SmWork::queue_dram`], [`Costs::dram_queued`]), which is how bandwidth reaches
//!   latency-bound kernels. `bar.sync` releases a block after its last warp arrives plus the
//!   barrier unit's time ([`Costs::barrier`]). Blocks start in the SM's block slots (the occupancy
//!   limit), each in the first free slot and no sooner than the block dispatch interval after the
//!   previous one; a wave's blocks join the replay when the previous wave's blocks free their
//!   slots, on the same scheduler calendars ([`SmWork::latency`] adds up the same placement): the
//!   tail of the last wave and a dispatch rate too slow for short blocks (reduce) both follow.
//! - **throughput**: the busiest shared unit of the SM, counted from its first use (before it,
//!   the warps wait for what the unit's work depends on): SASS instruction issue (one per
//!   scheduler per cycle, [`sass`], as if the warps were spread evenly over the schedulers: a
//!   floor under the replay, which assigns them as the hardware does), the LSU (memory
//!   instructions per cycle), L1 data (sectors per cycle) and tags, shared-memory wavefronts, and
//!   the constant pipe (the unit ncu calls the ADU: every LDC address and every warp's `bar.sync`
//!   passes it, CUDA C++ Programming Guide §5.3.2; misses are limited by those in flight,
//!   [`Costs::constant_work`]). Only issue is also modelled event by event; the other units'
//!   contention enters through these bounds alone.
//!
//! The GPU-wide L2 (reads, and writes at the write bandwidth or write-request rate, from the
//! first store) and DRAM bandwidths give two more bounds; the kernel takes the largest, plus the
//! launch overhead. What it leaves out (a later model refines it): queueing at the LSU, L1 and
//! constant pipe inside the replay, L2 slice conflicts, DRAM page effects.

pub mod sass;

pub mod replay;

pub mod sched;

use crate::config::GpuConfig;
use crate::memory::shared::Banks;
use crate::memory::{Level, WarpAccess};
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{DInst, Program};
use crate::ptx::inst::Op;
use serde::Serialize;

/// Latencies in SM cycles, read once from the config.
#[derive(Debug, Clone)]
pub struct Costs {
    /// Dependent ALU instruction.
    pub alu: u32,
    /// Warp-uniform constant operand (IMC hit), also kernel parameters.
    pub imc: u32,
    /// Constant cache levels, nearest first.
    pub constant: Vec<u32>,
    /// L1 hit.
    pub l1: u32,
    /// L2 hit.
    pub l2: u32,
    /// DRAM.
    pub dram: u32,
    /// Cycles per additional distinct constant address in one request (1 / addresses per cycle).
    pub const_serial: f64,
    /// Constant-cache misses in flight per SM.
    pub const_misses_in_flight: f64,
    /// DRAM bytes per SM cycle available to one SM (its share of the GPU's bandwidth).
    pub dram_bytes_per_cycle_per_sm: f64,
    /// Cycles from the last warp's arrival at a barrier to its release, besides the per-warp part.
    pub barrier_latency: u32,
    /// Cycles each warp's barrier occupies the SM's barrier unit.
    pub barrier_per_warp: f64,
    /// Cycles between two warps of a block starting.
    pub warp_launch: f64,
    /// Cycles between two blocks starting on an SM, at least (`sm.block_dispatch_cycles`).
    pub dispatch: f64,
    /// Warp schedulers per SM, each issuing one SASS instruction per cycle.
    pub schedulers: u32,
    /// What the program's instructions become on the GPU ([`sass::Profile`]); empty when the
    /// costs were made without a program (every instruction one SASS instruction).
    pub sass: sass::Profile,
    /// The banks of the L1/shared data array, which global accesses pass too.
    pub banks: Banks,
    /// L1 sector and line bytes.
    pub l1_sector: u64,
    /// L1 line bytes.
    pub l1_line: u64,
    /// log2 of the sectors per L1 line when both sizes are powers of two (configs' sizes are),
    /// so that a sector's line is a shift ([`Costs::line_of`]).
    pub l1_line_shift: Option<u32>,
    /// Stores to one sector this close in cycles merge before L2 (`None`: never).
    pub store_merge: Option<u32>,
}

impl Costs {
    /// Latencies of `cfg`.
    pub fn new(cfg: &GpuConfig) -> Self {
        Costs {
            alu: cfg.sm.alu_latency_cycles,
            imc: cfg.constant.imc_latency_cycles,
            constant: cfg
                .constant
                .cache
                .iter()
                .map(|c| c.latency_cycles)
                .collect(),
            l1: cfg.l1.latency_cycles,
            l2: cfg.l2.latency_cycles,
            dram: cfg.dram.latency_cycles,
            const_serial: 1.0 / cfg.constant.addresses_per_cycle,
            const_misses_in_flight: cfg.constant.misses_in_flight,
            dram_bytes_per_cycle_per_sm: cfg.dram_bytes_per_cycle() / f64::from(cfg.sm.count),
            barrier_latency: cfg.sm.barrier_latency_cycles,
            barrier_per_warp: cfg.sm.barrier_cycles_per_warp,
            warp_launch: cfg.sm.warp_launch_cycles,
            dispatch: cfg.sm.block_dispatch_cycles,
            schedulers: cfg.sm.schedulers,
            sass: sass::Profile::default(),
            banks: Banks {
                banks: cfg.shared.banks,
                width: cfg.shared.bank_width_bytes,
            },
            l1_sector: u64::from(cfg.l1.sector_bytes),
            l1_line: u64::from(cfg.l1.line_bytes),
            l1_line_shift: line_shift(u64::from(cfg.l1.sector_bytes), u64::from(cfg.l1.line_bytes)),
            store_merge: cfg.l1.store_merge_cycles,
        }
    }

    /// Latencies of `cfg` and the SASS profile of program `p`.
    pub fn for_program(cfg: &GpuConfig, p: &Program) -> Self {
        Costs {
            sass: sass::Profile::new(p),
            ..Self::new(cfg)
        }
    }

    /// The L1 line of sector number `sector`.
    #[inline]
    pub fn line_of(&self, sector: u64) -> u64 {
        match self.l1_line_shift {
            Some(k) => sector >> k,
            None => sector * self.l1_sector / self.l1_line,
        }
    }

    /// Cycles until the result of the ALU instruction at `pc` is ready: its dependent SASS steps
    /// times the ALU latency (0 for an instruction ptxas folds into another).
    #[inline]
    pub fn result_latency(&self, pc: u32) -> u32 {
        u32::from(self.sass.at(pc).steps) * self.alu
    }

    /// The constant pipe's work for an LDC whose distinct addresses were served at `served`:
    /// (pipe cycles, miss cycles). Every address passes the pipe (1 / addresses per cycle); each
    /// one served beyond the nearest level also holds one of the misses in flight for that
    /// level's latency. The two overlap: the pipe goes on with other addresses while misses are
    /// outstanding ([`estimate`] takes the larger total).
    pub fn constant_work(&self, served: &[Level]) -> (f64, f64) {
        self.constant_costs(served).1
    }

    /// [`Costs::constant_costs`] of an LDC whose `requests` distinct addresses were all served
    /// by the two nearest constant levels, `misses` of them by the second: bit for bit the same
    /// as for any order of them (the nearest level adds nothing to the miss sum, so it is the
    /// second level's term added `misses` times), without a walk over the requests.
    pub fn constant_costs_near(&self, requests: u32, misses: u32) -> (u32, (f64, f64)) {
        let pipe = f64::from(requests) * self.const_serial;
        let mut miss: f64 = std::iter::empty::<f64>().sum();
        let mut worst = None;
        if misses < requests {
            worst = Some(self.const_level(Level::Cache(0)));
        }
        if misses > 0 {
            let lat = self.const_level(Level::Cache(1));
            worst = worst.max(Some(lat));
            let term = f64::from(lat) / self.const_misses_in_flight;
            for _ in 0..misses {
                miss += term;
            }
        }
        let serial = (requests.saturating_sub(1) as f64 * self.const_serial).round() as u32;
        (worst.unwrap_or(self.imc) + serial, (pipe, miss))
    }

    /// The constant-pipe work (pipe cycles, miss cycles: [`Costs::constant_work`]) of the LDC
    /// (the `ld.const` at `pc`) whose distinct addresses were served at `served`; `None` for the
    /// half of an LDC.64 pair, which issues nothing.
    #[inline]
    pub fn ldc_work(&self, pc: u32, served: &[Level]) -> Option<(f64, f64)> {
        (self.sass.at(pc).ldc > 0).then(|| self.constant_work(served))
    }

    /// The cycle warp `index` of a block starts: the SM launches a block's warps one after another
    /// ([microbenchmark] `validate/measurements/h200/ubench`, C).
    pub fn warp_start(&self, index: u32) -> u32 {
        (self.warp_launch * f64::from(index)).round() as u32
    }

    /// Cycles between two blocks of `warps` warps starting on one SM: the block dispatch interval,
    /// and at least a block's worth of warp launches (the next block's warps launch after this
    /// block's).
    pub fn block_dispatch(&self, warps: u32) -> f64 {
        self.dispatch
            .max(f64::from(warps.max(1)) * self.warp_launch)
    }

    /// Cycles from the last of `warps` warps arriving at `bar.sync` to their release: the
    /// arrivals pass the barrier unit one after another ([microbenchmark]
    /// `validate/measurements/h200/ubench`, D: 9 + 2 cycles per warp on an H200).
    pub fn barrier(&self, warps: usize) -> u32 {
        self.barrier_latency + (self.barrier_per_warp * warps as f64).round() as u32
    }

    fn const_level(&self, l: Level) -> u32 {
        match l {
            Level::Cache(k) => self
                .constant
                .get(usize::from(k))
                .copied()
                .unwrap_or(self.l2),
            Level::L2 => self.l2,
            Level::Dram => self.dram,
        }
    }

    /// DRAM latency of a request behind `queued_bytes` of DRAM traffic of its wave: the idle
    /// latency plus the time the SM's share of the bandwidth takes to move what is queued
    /// (requests of co-resident blocks are served in issue order, first come first served).
    pub fn dram_queued(&self, queued_bytes: u64) -> u32 {
        (f64::from(self.dram) + queued_bytes as f64 / self.dram_bytes_per_cycle_per_sm).round()
            as u32
    }

    /// Load-to-use latency of a global/local load served at `level`.
    pub fn global(&self, level: Level) -> u32 {
        match level {
            Level::Cache(_) => self.l1,
            Level::L2 => self.l2,
            Level::Dram => self.dram,
        }
    }

    /// Latency of an LDC whose requests were served at `served` (in service order): the requests
    /// go out one distinct address at a time, and the last one returns after its level's latency.
    pub fn constant_load(&self, served: &[Level]) -> u32 {
        self.constant_costs(served).0
    }

    /// [`Costs::constant_load`] and [`Costs::constant_work`] of `served` in one walk over its
    /// levels: (latency, (pipe cycles, miss cycles)), bit for bit the same as the two apart.
    pub fn constant_costs(&self, served: &[Level]) -> (u32, (f64, f64)) {
        let pipe = served.len() as f64 * self.const_serial;
        // Runs of requests come from one level: its latency and term are found once per run,
        // the term then added once per request, in order (the sum of the terms one by one, from
        // the sum of none).
        let mut worst = None;
        let mut miss: f64 = std::iter::empty::<f64>().sum();
        for run in served.chunk_by(|a, b| a == b) {
            let lat = self.const_level(run[0]);
            worst = worst.max(Some(lat));
            if matches!(run[0], Level::Cache(0)) {
                continue;
            }
            let term = f64::from(lat) / self.const_misses_in_flight;
            for _ in run {
                miss += term;
            }
        }
        let serial = (served.len().saturating_sub(1) as f64 * self.const_serial).round() as u32;
        (worst.unwrap_or(self.imc) + serial, (pipe, miss))
    }
}

/// log2 of the sectors per line when `sector` and `line` bytes are powers of two and the line
/// holds whole sectors ([`Costs::l1_line_shift`]).
fn line_shift(sector: u64, line: u64) -> Option<u32> {
    let per_line = line.checked_div(sector)?;
    (per_line.is_power_of_two() && per_line * sector == line).then(|| per_line.trailing_zeros())
}

/// The units whose first use starts their throughput bound ([`SmWork::starts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Global and local loads (LSU, L1, L2 reads).
    Load,
    /// Global and local stores (LSU, L1, L2 writes).
    Store,
    /// Shared-memory accesses.
    Shared,
    /// LDC on the constant pipe.
    Ldc,
}

impl Unit {
    /// The unit instruction `inst` (at `pc` of `costs`' program) uses first, if any.
    pub fn of(costs: &Costs, pc: u32, inst: &DInst) -> Option<Unit> {
        let (m, store) = match inst.op {
            Op::Ld(m) => (m, false),
            Op::St(m) => (m, true),
            _ => return None,
        };
        Some(match m.space {
            StateSpace::Shared => Unit::Shared,
            StateSpace::Const if costs.sass.at(pc).ldc > 0 => Unit::Ldc,
            StateSpace::Const | StateSpace::Param | StateSpace::Reg => return None,
            _ if store => Unit::Store,
            _ => Unit::Load,
        })
    }
}

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
    fn note(&mut self, u: Unit, t: u32) {
        let slot = match u {
            Unit::Load => &mut self.load,
            Unit::Store => &mut self.store,
            Unit::Shared => &mut self.shared,
            Unit::Ldc => &mut self.ldc,
        };
        *slot = Some(slot.map_or(t, |x| x.min(t)));
    }

    fn of(&self, u: Unit) -> f64 {
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
    /// DRAM bytes per cycle of this SM's share ([`SmWork::set_dram_share`]).
    #[serde(skip)]
    dram_share: f64,
    /// L1 data-pipe wavefronts of global and local accesses ([`data_wavefronts`], plus the
    /// missed sectors a fill writes into the data array).
    pub data_wavefronts: u64,
    /// Sectors stores touched, and those that left L1 unmerged (L2 writes).
    pub store_sectors: u64,
    /// Store sectors that left L1 as L2 writes (not merged into another store's).
    pub store_sectors_sent: u64,
    /// The wave whose fills and stores the maps below track.
    #[serde(skip)]
    track_wave: usize,
    /// Sector -> cycle its fill from L2/DRAM arrives (the wave's L1 misses in flight).
    #[serde(skip)]
    fills: FillMap,
    /// Sectors `fills` may hold lie within these two, so that a hit whose sectors lie outside
    /// (another buffer's) skips the look-ups. A wave starts with `(u64::MAX, 0)`, which holds
    /// none; the default `(0, 0)` is safe too, as every insert widens the range to its sectors.
    #[serde(skip)]
    fill_range: (u64, u64),
    /// No load of the wave hits L1 throughout ([`SmWork::expect_hits`]): no load waits for a fill
    /// in flight, so misses need not record theirs in `fills`.
    #[serde(skip)]
    no_hits: bool,
    /// Sector -> cycle of the wave's last store to it.
    #[serde(skip)]
    stored: SectorMap<512>,
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
    /// Shared-memory wavefronts.
    pub shared_wavefronts: u64,
    /// Cycle (of the current wave) by which this SM's share of the DRAM bandwidth has moved all
    /// the traffic queued so far.
    pub dram_free: f64,
    /// Latency-bound cycles per wave (the slowest warp of each wave of co-resident blocks).
    pub waves: Vec<u64>,
}

impl SmWork {
    /// Adds `bytes` of DRAM traffic, requested at the current instruction's issue cycle, to the
    /// SM's queue; returns the bytes still ahead of them including them. The SM's share of the
    /// DRAM bandwidth serves the queue first come first served and idles while it is empty (the
    /// timing replay issues in cycle order), so a request waits for what was queued before it and
    /// has not been moved yet.
    pub fn queue_dram(&mut self, bytes: u64) -> u64 {
        let now = f64::from(self.now);
        if self.dram_share <= 0.0 {
            return bytes;
        }
        self.dram_free = self.dram_free.max(now) + bytes as f64 / self.dram_share;
        (((self.dram_free - now) * self.dram_share).round() as u64).max(bytes)
    }

    /// [`SmWork::queue_dram`] without its answer (a request L2 served, whose latency does not
    /// wait for the queue): the same queue afterwards, without the conversions of the answer.
    #[inline]
    pub fn queue_dram_only(&mut self, bytes: u64) {
        if self.dram_share > 0.0 {
            self.dram_free =
                self.dram_free.max(f64::from(self.now)) + bytes as f64 / self.dram_share;
        }
    }

    /// The replay's cycles now count from `cycles` later (the start of the next wave's first
    /// block): the DRAM queue keeps what it has not moved yet.
    pub fn advance(&mut self, cycles: u64) {
        self.dram_free = (self.dram_free - cycles as f64).max(0.0);
    }

    /// Extrapolates a sampled launch (as [`crate::metrics::Counters::extrapolate`]); the latency
    /// of each wave that was not simulated is the mean of the simulated waves between wave 0 and
    /// the last.
    pub fn extrapolate(&mut self, first: &SmWork, snap: &SmWork, factor: f64, simulated: &[bool]) {
        let ex = |a: u64, b: u64, c: u64| a + crate::metrics::scale(b - a, factor) + (c - b);
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
        self.dram_share = costs.dram_bytes_per_cycle_per_sm;
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
fn distinct_lines(costs: &Costs, sectors: &[u64]) -> u64 {
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
    fills: FillMap,
    stored: SectorMap<512>,
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
const CHUNK: usize = 16;

/// The ascending, distinct `sectors` grouped by chunk: (chunk number, bit per sector of it).
#[inline(always)]
fn chunks(sectors: &[u64], mut each: impl FnMut(u64, u32)) {
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

/// Sector -> cycle its fill arrives, for one wave of one SM ([`SmWork::global_sectors`]): a
/// [`SectorMap`] of chunks of [`CHUNK`] consecutive sectors, each with a bit per sector that has
/// a cycle and the cycles. The sectors of an access mostly share a few chunks (a coalesced
/// access one, a strided one a few), so an access costs a look-up per chunk and a bit or a store
/// per sector rather than a look-up per sector.
#[derive(Debug, Clone, Default)]
struct FillMap {
    /// (chunk number, bit per sector with a cycle, generation) per slot, as [`SectorMap`]'s.
    meta: Vec<(u64, u32, u32)>,
    /// The cycles of each slot's sectors (those without a bit hold anything).
    cycles: Vec<[u32; CHUNK]>,
    /// The current generation (0 marks never-used slots, so it starts at 1).
    generation: u32,
    /// Chunks held in this generation.
    len: usize,
}

impl FillMap {
    /// First size (slots): a wave of strided loads touches a few hundred chunks.
    const MIN: usize = 512;

    /// Forgets every sector.
    fn clear(&mut self) {
        self.len = 0;
        if next_generation(&mut self.generation) {
            self.meta.iter_mut().for_each(|s| s.2 = 0);
        }
    }

    /// The latest cycle of ascending, distinct `sectors`, 0 when none has one.
    #[inline]
    fn latest(&self, sectors: &[u64]) -> u32 {
        if self.len == 0 {
            return 0;
        }
        let (meta, cycles, generation) = (&self.meta[..], &self.cycles[..], self.generation);
        let mut latest = 0;
        chunks(
            sectors,
            #[inline(always)]
            |chunk, bits| {
                if let (i, true) = probe(meta, generation, chunk) {
                    let have = bits & meta[i].1;
                    let c = &cycles[i];
                    if have.is_power_of_two() {
                        latest = latest.max(c[have.trailing_zeros() as usize % CHUNK]);
                    } else if have != 0 {
                        // Every lane, those without a bit as 0 (a few vector instructions).
                        let m = (0..CHUNK)
                            .map(|k| if have >> k & 1 != 0 { c[k] } else { 0 })
                            .max()
                            .unwrap_or(0);
                        latest = latest.max(m);
                    }
                }
            },
        );
        latest
    }

    /// Sets the cycle of each of ascending, distinct `sectors` that has none to `cycle`.
    #[inline]
    fn insert_all_new(&mut self, sectors: &[u64], cycle: u32) {
        // One capacity check for at most a chunk per sector, then the table's fields in
        // registers.
        while 2 * (self.len + sectors.len()) > self.meta.len() {
            self.grow();
        }
        let generation = self.generation;
        let meta = &mut self.meta[..];
        let cycles = &mut self.cycles[..];
        let mut len = self.len;
        chunks(
            sectors,
            #[inline(always)]
            |chunk, bits| match probe(meta, generation, chunk) {
                (i, false) => {
                    meta[i] = (chunk, bits, generation);
                    // The lanes without a bit are never read: one store for all.
                    cycles[i] = [cycle; CHUNK];
                    len += 1;
                }
                (i, true) => {
                    let mut new = bits & !meta[i].1;
                    meta[i].1 |= new;
                    let c = &mut cycles[i];
                    while new != 0 {
                        c[new.trailing_zeros() as usize % CHUNK] = cycle;
                        new &= new - 1;
                    }
                }
            },
        );
        self.len = len;
    }

    /// The cycle of `sector`, if it has one.
    #[cfg(test)]
    fn get(&self, sector: u64) -> Option<u32> {
        let (chunk, k) = (sector / CHUNK as u64, (sector % CHUNK as u64) as usize);
        if self.len == 0 {
            return None;
        }
        match probe(&self.meta, self.generation, chunk) {
            (i, true) if self.meta[i].1 >> k & 1 != 0 => Some(self.cycles[i][k]),
            _ => None,
        }
    }

    #[cold]
    fn grow(&mut self) {
        let meta = std::mem::take(&mut self.meta);
        let cycles = std::mem::take(&mut self.cycles);
        let n = (2 * meta.len()).max(Self::MIN);
        self.meta = vec![(0, 0, 0); n];
        self.cycles = vec![[0; CHUNK]; n];
        let generation = self.generation.max(1);
        self.generation = generation;
        for (m, c) in meta.into_iter().zip(cycles) {
            if m.2 == generation {
                let (i, _) = probe(&self.meta, generation, m.0);
                self.meta[i] = m;
                self.cycles[i] = c;
            }
        }
    }
}

/// A map from sector numbers to cycles for one wave of one SM ([`SmWork::global_sectors`]):
/// open addressing with linear probing, emptied in one step per wave by a generation count
/// (a slot of an older generation is free), so a wave's lookups cost a multiply and a compare or
/// two instead of a general hash map's probe groups, and no wave clears its slots.
///
/// `MIN` is the table's first size (slots): a wave's misses in flight may be a few thousand
/// sectors, its stores a few hundred, and a table sized for them stays in the host's caches (a
/// wave's slots are spread over the whole table).
#[derive(Debug, Clone, Default)]
struct SectorMap<const MIN: usize> {
    /// (sector, cycle, generation) per slot; a power of two of them, or none.
    slots: Vec<(u64, u32, u32)>,
    /// The current generation (0 marks never-used slots, so it starts at 1).
    generation: u32,
    /// Sectors held in this generation.
    len: usize,
}

impl<const MIN: usize> SectorMap<MIN> {
    /// Forgets every sector.
    fn clear(&mut self) {
        self.len = 0;
        if next_generation(&mut self.generation) {
            self.slots.iter_mut().for_each(|s| s.2 = 0);
        }
    }

    /// Where `sector` is, or the free slot where it would go (the table has a free slot).
    #[inline]
    fn find(&self, sector: u64) -> (usize, bool) {
        probe(&self.slots, self.generation, sector)
    }

    /// The cycle of `sector`, if it has one.
    #[cfg(test)]
    fn get(&self, sector: u64) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        match self.find(sector) {
            (i, true) => Some(self.slots[i].1),
            _ => None,
        }
    }

    /// Sets the cycle of `sector` to `cycle`; returns the one it had.
    #[cfg(test)]
    fn insert(&mut self, sector: u64, cycle: u32) -> Option<u32> {
        self.reserve_for(1);
        self.insert_reserved(sector, cycle)
    }

    /// [`SectorMap::insert`] into a table with room for it ([`SectorMap::reserve_for`]).
    #[inline]
    fn insert_reserved(&mut self, sector: u64, cycle: u32) -> Option<u32> {
        debug_assert!(2 * (self.len + 1) <= self.slots.len());
        let (i, found) = self.find(sector);
        let before = std::mem::replace(&mut self.slots[i], (sector, cycle, self.generation));
        if found {
            Some(before.1)
        } else {
            self.len += 1;
            None
        }
    }

    /// Sets the cycle of `sector` to `cycle` unless it has one.
    #[cfg(test)]
    fn insert_new(&mut self, sector: u64, cycle: u32) {
        if self.get(sector).is_none() {
            self.insert(sector, cycle);
        }
    }

    /// Room for `n` more sectors, the table at most half full.
    #[inline]
    fn reserve_for(&mut self, n: usize) {
        while 2 * (self.len + n) > self.slots.len() {
            self.grow();
        }
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0, 0); (2 * old.len()).max(MIN)];
        let generation = self.generation.max(1);
        self.generation = generation;
        for (k, c, g) in old {
            if g == generation {
                let (i, _) = self.find(k);
                self.slots[i] = (k, c, g);
            }
        }
    }
}

/// Moves a table tagged by generation (a tag of another generation is an empty slot) on to the
/// next one, which forgets every entry at once. Returns true once in 2^32 clears, when the counter
/// wrapped: the old generations' tags could come back, so the caller zeroes them (0 marks
/// never-used slots, so the count goes on at 1).
fn next_generation(generation: &mut u32) -> bool {
    *generation = generation.wrapping_add(1);
    if *generation == 0 {
        *generation = 1;
        return true;
    }
    false
}

/// Where `sector` is among `slots` (a power of two of them, one free) in generation
/// `generation`, or the free slot where it would go ([`SectorMap::find`]).
#[inline(always)]
fn probe(slots: &[(u64, u32, u32)], generation: u32, sector: u64) -> (usize, bool) {
    let mask = slots.len() - 1;
    // Fibonacci hashing: consecutive sectors spread over the table.
    let mut i = (sector.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
    loop {
        let (k, _, g) = slots[i];
        if g != generation {
            return (i, false);
        }
        if k == sector {
            return (i, true);
        }
        i = (i + 1) & mask;
    }
}

/// L1 data-pipe wavefronts of a global or local access: the L1's data array is the shared-memory
/// banks ([NV] CUDA-CC §20.4.3, one array for L1 and shared memory), so as for shared memory a
/// wavefront reads one word per bank, and words of different lines in one bank take a wavefront
/// each (a warp reading one word from each of 16 rows 4 KiB apart takes 16). [measured] Nsight
/// Compute's `l1tex__data_pipe_lsu_wavefronts` on an H200 equals these plus the missed sectors
/// within 3% for transpose's copy_col, naive_row and naive_col and conv2d's global kernel, 8% for
/// copy_row, and with shared wavefronts added within 3% for transpose_smem
/// (validate/measurements/h200/ubench/bd.txt).
pub fn data_wavefronts(access: &WarpAccess, banks: Banks) -> u32 {
    let shape = crate::memory::coalesce::Shape::of(access.mask, &access.addrs);
    data_wavefronts_of(access, banks, shape.run(access.bytes), shape.step)
}

/// As [`data_wavefronts`], for an access whose contiguous run
/// ([`crate::memory::coalesce::contiguous`]) and step ([`crate::memory::coalesce::Shape::step`])
/// the caller already has: a strided load's in closed form.
#[inline]
pub fn data_wavefronts_of(
    access: &WarpAccess,
    banks: Banks,
    run: Option<u64>,
    step: Option<(u64, u64)>,
) -> u32 {
    crate::memory::shared::wavefronts_of_step(access, banks, run, step).wavefronts
}

/// GPU-wide traffic of a launch, for the L2 and DRAM bounds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Traffic {
    /// L2 sectors read by the SMs (`lts__t_sectors_srcunit_tex_op_read.sum`).
    pub l2_read_sectors: u64,
    /// L2 sectors written by the SMs (`lts__t_sectors_srcunit_tex_op_write.sum`).
    pub l2_write_sectors: u64,
    /// DRAM bytes read and written.
    pub dram_bytes: u64,
}

/// The predicted time of a launch and what bounds it.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// Kernel cycles at the SM clock (`gpc__cycles_elapsed.max`), launch overhead included.
    pub cycles: f64,
    /// Kernel duration in ns (`gpu__time_duration.sum`), launch overhead included.
    pub time_ns: f64,
    /// Which bound set the time: `latency`, `issue`, `lsu`, `l1`, `constant`, `shared`, `l2`,
    /// `dram`.
    pub bound: &'static str,
    /// Every bound in cycles, for reports.
    pub bounds: Vec<(&'static str, f64)>,
}

/// Combines per-SM work and GPU-wide traffic into the launch time.
pub fn estimate(cfg: &GpuConfig, sms: &[SmWork], traffic: Traffic, block_warps: u32) -> Timing {
    let mut bounds: Vec<(&'static str, f64)> = Vec::new();
    let mut worst = |name: &'static str, v: f64| match bounds.iter_mut().find(|(n, _)| *n == name) {
        Some((_, x)) => *x = x.max(v),
        None => bounds.push((name, v)),
    };
    // A unit's throughput bound counts from its first use: before it, the SM's warps are still
    // waiting for what the unit's work depends on (the data of a load, a barrier).
    let (mut first_load, mut first_store) = (f64::INFINITY, f64::INFINITY);
    for w in sms {
        let st = &w.starts;
        let mem_start = [Unit::Load, Unit::Store, Unit::Shared]
            .iter()
            .filter(|&&u| match u {
                Unit::Load => st.load.is_some(),
                Unit::Store => st.store.is_some(),
                _ => st.shared.is_some(),
            })
            .map(|&u| st.of(u))
            .fold(f64::INFINITY, f64::min);
        let mem_start = if mem_start.is_finite() {
            mem_start
        } else {
            0.0
        };
        if let Some(t) = st.load {
            first_load = first_load.min(f64::from(t));
        }
        if let Some(t) = st.store {
            first_store = first_store.min(f64::from(t));
        }
        // The next block's warps launch after this block's: the dispatch interval is at least a
        // block's worth of warp launches.
        let warps = f64::from(block_warps.max(1));
        let dispatch = cfg
            .sm
            .block_dispatch_cycles
            .max(warps * cfg.sm.warp_launch_cycles);
        worst("latency", w.latency(dispatch));
        worst("issue", w.issue_slots as f64 / f64::from(cfg.sm.schedulers));
        worst(
            "lsu",
            mem_start + w.mem_insts as f64 / cfg.sm.lsu_instructions_per_cycle,
        );
        worst(
            "l1",
            mem_start
                + (w.l1_sectors as f64 / cfg.l1.sectors_per_cycle)
                    .max(w.l1_tags as f64 / cfg.l1.tag_lookups_per_cycle),
        );
        // The data pipe serves shared and global wavefronts alike, one per cycle; named after the
        // larger part.
        let rate = cfg.shared.wavefronts_per_cycle;
        let data = (mem_start + (w.shared_wavefronts + w.data_wavefronts) as f64 / rate)
            .max(st.of(Unit::Shared) + w.shared_wavefronts as f64 / rate);
        if w.shared_wavefronts >= w.data_wavefronts {
            worst("shared", data);
        } else {
            worst("l1", data);
        }
        worst(
            "constant",
            st.of(Unit::Ldc) + w.const_cycles.max(w.const_miss_cycles) + w.barrier_cycles,
        );
    }
    // L2: reads at the read bandwidth; writes at the write bandwidth or the write-request rate,
    // whichever is slower; the write stream cannot start before the first store.
    let sector = f64::from(cfg.l2.sector_bytes);
    let reads = traffic.l2_read_sectors as f64 * sector / cfg.l2.bandwidth_bytes_per_cycle;
    let write_bw = if cfg.l2.write_bandwidth_bytes_per_cycle > 0.0 {
        cfg.l2.write_bandwidth_bytes_per_cycle
    } else {
        cfg.l2.bandwidth_bytes_per_cycle
    };
    // Stores merged in L1 never reach L2.
    let (touched, sent) = sms.iter().fold((0u64, 0u64), |(a, b), w| {
        (a + w.store_sectors, b + w.store_sectors_sent)
    });
    let sent_fraction = if touched == 0 {
        1.0
    } else {
        sent as f64 / touched as f64
    };
    let mut writes = traffic.l2_write_sectors as f64 * sent_fraction * sector / write_bw;
    if cfg.l2.write_requests_per_cycle > 0.0 {
        let lines: u64 = sms.iter().map(|w| w.l2_write_lines).sum();
        writes = writes.max(lines as f64 / cfg.l2.write_requests_per_cycle);
    }
    let first_load = if first_load.is_finite() {
        first_load
    } else {
        0.0
    };
    let first_store = if first_store.is_finite() {
        first_store
    } else {
        0.0
    };
    worst(
        "l2",
        (first_load + reads + writes).max(first_store + writes),
    );
    worst(
        "dram",
        first_load + traffic.dram_bytes as f64 / cfg.dram_bytes_per_cycle(),
    );
    let (bound, cycles) =
        bounds
            .iter()
            .copied()
            .fold(("latency", 0.0), |a, b| if b.1 > a.1 { b } else { a });
    // The launch overhead is part of what Nsight Compute measures, in time and in cycles.
    let cycles = cycles + cfg.gpu.launch_overhead_ns * 1e-9 * cfg.clock_hz();
    let time_ns = cycles / cfg.clock_hz() * 1e9;
    Timing {
        cycles,
        time_ns,
        bound,
        bounds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn banks() -> Banks {
        Banks {
            banks: 32,
            width: 4,
        }
    }

    #[test]
    fn global_words_conflict_per_bank_like_shared_memory() {
        // 32 consecutive words: one wavefront.
        let row = WarpAccess::from_fn(4, |l| 4096 + 4 * l);
        assert_eq!(data_wavefronts(&row, banks()), 1);
        // Pairs of lanes read two words of 16 rows 4 KiB apart (transpose copy_col): the rows
        // share banks, 16 wavefronts.
        let col = WarpAccess::from_fn(4, |l| (l / 2) * 4096 + 4 * (l % 2));
        assert_eq!(data_wavefronts(&col, banks()), 16);
        // float4 per lane, consecutive: 512 bytes, four quarter-warp phases.
        let v4 = WarpAccess::from_fn(16, |l| 16 * l);
        assert_eq!(data_wavefronts(&v4, banks()), 4);
    }

    #[test]
    fn blocks_fill_free_slots_no_faster_than_dispatch() {
        let mut w = SmWork::default();
        for wave in [0, 0, 1, 1] {
            w.block_done(wave, 100);
        }
        // Two slots, no dispatch limit: two rounds of 100.
        assert_eq!(w.latency(0.0), 200.0);
        // Blocks start 80 apart at most: 0, 80, 160 (slot free at 100), 240 (free at 180).
        assert_eq!(w.latency(80.0), 340.0);
    }

    /// The costs of the bundled H200 description.
    fn h200_costs() -> Costs {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml");
        Costs::new(&GpuConfig::load(std::path::Path::new(path)).unwrap())
    }

    #[test]
    fn constant_work_adds_each_miss_term_in_order() {
        let costs = h200_costs();
        let (c0, c1, l2, dram) = (Level::Cache(0), Level::Cache(1), Level::L2, Level::Dram);
        let served = [c1, c0, l2, l2, dram, c0, c1, Level::Cache(9), c1];
        // The sum one term at a time, nearest level skipped, as the definition reads.
        let mut want: f64 = std::iter::empty::<f64>().sum();
        for &l in &served {
            if l != c0 {
                want += f64::from(costs.const_level(l)) / costs.const_misses_in_flight;
            }
        }
        let (pipe, miss) = costs.constant_work(&served);
        assert_eq!(pipe, 9.0 * costs.const_serial);
        assert_eq!(miss.to_bits(), want.to_bits());
        // Only the nearest level: the sum of none.
        let none: f64 = std::iter::empty::<f64>().sum();
        assert_eq!(costs.constant_work(&[c0, c0]).1.to_bits(), none.to_bits());
    }

    #[test]
    fn constant_costs_near_match_the_walk() {
        let costs = h200_costs();
        let (c0, c1) = (Level::Cache(0), Level::Cache(1));
        let cases: [&[Level]; 6] = [
            &[],
            &[c0],
            &[c1],
            &[c0, c0, c0],
            &[c1, c0, c1, c1, c0, c1, c1],
            &[c1; 32],
        ];
        for served in cases {
            let misses = served.iter().filter(|&&l| l == c1).count() as u32;
            let (lat, (pipe, miss)) = costs.constant_costs_near(served.len() as u32, misses);
            let (want_lat, (want_pipe, want_miss)) = costs.constant_costs(served);
            assert_eq!(lat, want_lat);
            assert_eq!(pipe.to_bits(), want_pipe.to_bits());
            assert_eq!(miss.to_bits(), want_miss.to_bits());
        }
        // 32 requests, 5 served by the second level: its latency, 31 addresses after the first.
        let (lat, _) = costs.constant_costs_near(32, 5);
        let serial = (31.0 * costs.const_serial).round() as u32;
        assert_eq!(
            lat,
            costs.const_level(c1).max(costs.const_level(c0)) + serial
        );
    }

    #[test]
    fn a_sector_map_keeps_one_wave() {
        let mut m = SectorMap::<4096>::default();
        assert_eq!(m.get(7), None);
        assert_eq!(m.insert(7, 10), None);
        assert_eq!(m.insert(7, 12), Some(10));
        m.insert_new(7, 99);
        assert_eq!(m.get(7), Some(12));
        // Growing keeps every sector.
        for s in 0..10_000u64 {
            m.insert_new(s * 4, s as u32);
        }
        assert_eq!(m.get(7), Some(12));
        assert!((0..10_000u64).all(|s| m.get(s * 4) == Some(s as u32)));
        assert_eq!(m.get(5), None);
        // The next wave starts empty.
        m.clear();
        assert_eq!(m.get(7), None);
        assert_eq!(m.get(8), None);
        assert_eq!(m.insert(8, 1), None);
        assert_eq!(m.get(8), Some(1));
        // Growing keeps every sector.
        let many: Vec<u64> = (100..20_100).collect();
        for &s in &many {
            m.insert_new(s, 7);
        }
        assert_eq!(m.len, 20_001);
        assert!(m.slots.len() >= 2 * m.len);
        assert!(many.iter().all(|&s| m.get(s) == Some(7)));
        assert_eq!(m.insert_reserved(8, 2), Some(1));
    }

    #[test]
    fn a_fill_map_keeps_each_sectors_first_cycle() {
        // Against a plain map, over accesses without gaps, strided, scattered, and across
        // chunks, growing, and waves.
        let mut m = FillMap::default();
        let mut want = std::collections::HashMap::new();
        let mut seed = 12345u64;
        let mut next = move || {
            seed = crate::testing::lcg(seed);
            seed >> 33
        };
        for round in 0..4000u32 {
            if round % 1000 == 999 {
                m.clear();
                want.clear();
            }
            let base = next() % 100_000;
            let n = 1 + next() % 32;
            let mut sectors: Vec<u64> = match round % 3 {
                0 => (base..base + n).collect(),
                1 => (0..n).map(|k| base + k * (1 + round as u64 % 7)).collect(),
                _ => (0..n).map(|_| base + next() % 3000).collect(),
            };
            sectors.sort_unstable();
            sectors.dedup();
            let latest = sectors.iter().filter_map(|s| want.get(s)).max().copied();
            assert_eq!(m.latest(&sectors), latest.unwrap_or(0));
            m.insert_all_new(&sectors, round);
            for &s in &sectors {
                want.entry(s).or_insert(round);
            }
        }
        assert!(want.iter().all(|(&s, &c)| m.get(s) == Some(c)));
        assert_eq!(m.get(100_000 + 40_000), None);
        assert!(2 * m.len <= m.meta.len());
    }

    #[test]
    fn a_wave_without_hits_skips_the_fills_and_changes_nothing() {
        // Misses and stores (with and without merging) of waves that have no load hitting L1:
        // an SM that records the fills and one told there are no hits answer and count alike.
        let mut costs = h200_costs();
        let mut seed = 99u64;
        let mut next = move || {
            seed = crate::testing::lcg(seed);
            seed >> 33
        };
        for merge in [None, Some(1), Some(50)] {
            costs.store_merge = merge;
            let (mut a, mut b) = (SmWork::default(), SmWork::default());
            b.expect_hits(false);
            for round in 0..3000u64 {
                let wave = (round / 500) as usize;
                let now = (round * 7 + next() % 20) as u32;
                a.now = now;
                b.now = now;
                let base = next() % 5000;
                let n = 1 + next() % 32;
                let mut sectors: Vec<u64> = match round % 3 {
                    0 => (base..base + n).collect(),
                    1 => (0..n).map(|k| base + k * (1 + round % 5)).collect(),
                    _ => (0..n).map(|_| base + next() % 300).collect(),
                };
                sectors.sort_unstable();
                sectors.dedup();
                let (store, lat, dwf) = (next() % 2 == 0, 100 + next() as u32 % 400, 1 + n as u32);
                let lines = distinct_lines(&costs, &sectors) as u32;
                let want = a.global_sectors(&costs, wave, dwf, &sectors, lines, store, false, lat);
                let got = b.global_sectors(&costs, wave, dwf, &sectors, lines, store, false, lat);
                assert_eq!(got, want);
            }
            assert_eq!(b.fills.len, 0);
            assert_eq!(
                (
                    a.data_wavefronts,
                    a.store_sectors,
                    a.store_sectors_sent,
                    a.l2_write_lines
                ),
                (
                    b.data_wavefronts,
                    b.store_sectors,
                    b.store_sectors_sent,
                    b.l2_write_lines
                )
            );
        }
    }

    #[test]
    fn dram_queue_drains_at_the_bandwidth_share() {
        let mut w = SmWork {
            dram_share: 16.0,
            ..Default::default()
        };
        w.now = 0;
        assert_eq!(w.queue_dram(1024), 1024);
        // 10 cycles later 160 bytes have drained: 864 are still ahead, plus these 128.
        w.now = 10;
        assert_eq!(w.queue_dram(128), 992);
        // 100 cycles later the queue is empty: only this request is ahead of itself.
        w.now = 110;
        assert_eq!(w.queue_dram(128), 128);
        // The idle DRAM saved nothing up: two requests at once queue behind each other.
        w.now = 1000;
        assert_eq!(w.queue_dram(64), 64);
        assert_eq!(w.queue_dram(64), 128);
        // The next wave starts 1002 cycles later: 6 cycles of the queue (96 bytes) are left.
        w.advance(1002);
        w.now = 0;
        assert_eq!(w.queue_dram(64), 160);
    }

    #[test]
    fn a_request_l2_served_moves_the_dram_queue_as_one_it_serves() {
        // Random requests, some served by L2 (`queue_dram_only`), on random shares (none too):
        // the queue is the same, bit for bit, as when each asks `queue_dram`.
        for seed in 1..100 {
            let mut x = seed;
            let mut r = || {
                x = crate::testing::lcg(x);
                x >> 33
            };
            let share = [0.0, 6.7, 16.0, 0.3][(r() % 4) as usize];
            let new = || SmWork {
                dram_share: share,
                ..Default::default()
            };
            let (mut a, mut b) = (new(), new());
            let mut now = 0u32;
            for _ in 0..300 {
                now += (r() % 50) as u32;
                (a.now, b.now) = (now, now);
                let bytes = [0, 32, 128, 1024, r() % 5000][(r() % 5) as usize];
                if r() % 3 == 0 {
                    a.queue_dram_only(bytes);
                    b.queue_dram(bytes);
                } else {
                    assert_eq!(a.queue_dram(bytes), b.queue_dram(bytes), "seed {seed}");
                }
                assert_eq!(a.dram_free.to_bits(), b.dram_free.to_bits(), "seed {seed}");
            }
        }
    }
}

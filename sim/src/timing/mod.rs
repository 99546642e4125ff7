//! A first cycle-approximate timing model.
//!
//! Two bounds per SM, the larger wins:
//! - **latency**: each warp runs a scoreboard timeline (an instruction issues when its source
//!   registers are ready; its result is ready after the latency of the level that served it; a
//!   warp retires when its stores are acknowledged by L2). A DRAM access waits behind the DRAM
//!   traffic its wave has already queued, served at the SM's share of the bandwidth
//!   ([`Costs::dram_queued`]): latency plus transfer time, which is how bandwidth reaches
//!   latency-bound kernels.
//!   Warps of co-resident blocks overlap; blocks beyond the occupancy limit run in later waves,
//!   so an SM's latency time is the sum over its waves of the slowest warp of the wave.
//! - **throughput**: the busiest shared unit of the SM: warp-instruction issue (one per scheduler
//!   per cycle), the LSU (memory instructions per cycle), L1 data (sectors per cycle) and tags,
//!   and the indexed constant cache (a constant request is serialized per distinct address, CUDA
//!   C++ Programming Guide §5.3.2; each address costs a cycle fraction on a hit and a share of the
//!   next level's latency on a miss, [`Costs::constant_occupancy`]).
//!
//! The GPU-wide L2 and DRAM bandwidths give two more bounds; the kernel takes the largest, plus
//! the launch overhead. What it leaves out (a later model refines it): contention inside a wave,
//! the tail effect of uneven waves beyond the per-SM sum, L2 slice conflicts, DRAM page effects.

pub mod replay;

use crate::config::GpuConfig;
use crate::memory::Level;
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
        }
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

    /// Cycles the SM's constant pipeline is busy with requests served at `served`: a hit in the
    /// nearest level takes 1 / addresses-per-cycle; a request served farther occupies it for that
    /// level's latency over the misses kept in flight.
    pub fn constant_occupancy(&self, served: &[Level]) -> f64 {
        served
            .iter()
            .map(|&l| {
                if l == Level::Cache(0) {
                    self.const_serial
                } else {
                    f64::from(self.const_level(l)) / self.const_misses_in_flight
                }
            })
            .sum()
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
        let worst = served
            .iter()
            .map(|&l| self.const_level(l))
            .max()
            .unwrap_or(self.imc);
        worst + (served.len().saturating_sub(1) as f64 * self.const_serial).round() as u32
    }
}

/// Work done on one SM during a launch, for its throughput bounds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SmWork {
    /// Warp instructions issued.
    pub warp_insts: u64,
    /// Memory instructions sent to the LSU (global, local, shared; not LDC).
    pub mem_insts: u64,
    /// L1 sectors moved (global and local).
    pub l1_sectors: u64,
    /// L1 tag lookups (distinct 128-byte lines per request).
    pub l1_tags: u64,
    /// Cycles the constant pipeline was busy ([`Costs::constant_occupancy`]).
    pub const_cycles: f64,
    /// Shared-memory wavefronts.
    pub shared_wavefronts: u64,
    /// The wave whose DRAM traffic `queue_bytes` counts.
    pub queue_wave: usize,
    /// DRAM bytes the current wave of this SM has queued so far.
    pub queue_bytes: u64,
    /// Latency-bound cycles per wave (the slowest warp of each wave of co-resident blocks).
    pub waves: Vec<u64>,
}

impl SmWork {
    /// Adds `bytes` of DRAM traffic to the queue of `wave` (a new wave starts an empty queue);
    /// returns the bytes queued including them.
    pub fn queue_dram(&mut self, wave: usize, bytes: u64) -> u64 {
        if wave != self.queue_wave {
            self.queue_wave = wave;
            self.queue_bytes = 0;
        }
        self.queue_bytes += bytes;
        self.queue_bytes
    }

    /// Extrapolates a sampled launch (as [`crate::metrics::Counters::extrapolate`]); the latency
    /// of each wave that was not simulated is the mean of the simulated waves between wave 0 and
    /// the last.
    pub fn extrapolate(&mut self, first: &SmWork, snap: &SmWork, factor: f64, simulated: &[bool]) {
        let ex = |a: u64, b: u64, c: u64| a + crate::metrics::scale(b - a, factor) + (c - b);
        self.warp_insts = ex(first.warp_insts, snap.warp_insts, self.warp_insts);
        self.mem_insts = ex(first.mem_insts, snap.mem_insts, self.mem_insts);
        self.l1_sectors = ex(first.l1_sectors, snap.l1_sectors, self.l1_sectors);
        self.l1_tags = ex(first.l1_tags, snap.l1_tags, self.l1_tags);
        self.shared_wavefronts = ex(
            first.shared_wavefronts,
            snap.shared_wavefronts,
            self.shared_wavefronts,
        );
        self.const_cycles = first.const_cycles
            + (snap.const_cycles - first.const_cycles) * factor
            + (self.const_cycles - snap.const_cycles);
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
    }
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
pub fn estimate(cfg: &GpuConfig, sms: &[SmWork], l2_sectors: u64, dram_bytes: u64) -> Timing {
    let mut bounds: Vec<(&'static str, f64)> = Vec::new();
    let mut worst = |name: &'static str, v: f64| match bounds.iter_mut().find(|(n, _)| *n == name) {
        Some((_, x)) => *x = x.max(v),
        None => bounds.push((name, v)),
    };
    for w in sms {
        worst("latency", w.waves.iter().sum::<u64>() as f64);
        worst("issue", w.warp_insts as f64 / f64::from(cfg.sm.schedulers));
        worst(
            "lsu",
            w.mem_insts as f64 / cfg.sm.lsu_instructions_per_cycle,
        );
        worst(
            "l1",
            (w.l1_sectors as f64 / cfg.l1.sectors_per_cycle)
                .max(w.l1_tags as f64 / cfg.l1.tag_lookups_per_cycle),
        );
        worst("constant", w.const_cycles);
        worst(
            "shared",
            w.shared_wavefronts as f64 / cfg.shared.wavefronts_per_cycle,
        );
    }
    worst(
        "l2",
        l2_sectors as f64 * f64::from(cfg.l2.sector_bytes) / cfg.l2.bandwidth_bytes_per_cycle,
    );
    worst("dram", dram_bytes as f64 / cfg.dram_bytes_per_cycle());
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

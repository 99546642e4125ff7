//! A first cycle-approximate timing model.
//!
//! Two bounds per SM, the larger wins:
//! - **latency**: each warp runs a scoreboard timeline (an instruction issues when its source
//!   registers are ready; its result is ready after the latency of the level that served it).
//!   Warps of co-resident blocks overlap; blocks beyond the occupancy limit run in later waves,
//!   so an SM's latency time is the sum over its waves of the slowest warp of the wave.
//! - **throughput**: the busiest shared unit of the SM: warp-instruction issue (one per scheduler
//!   per cycle), the LSU (memory instructions per cycle), L1 data (sectors per cycle) and tags,
//!   and the indexed constant cache (distinct addresses per cycle: a constant request is
//!   serialized per distinct address, CUDA C++ Programming Guide §5.3.2).
//!
//! The GPU-wide L2 and DRAM bandwidths give two more bounds; the kernel takes the largest, plus
//! the launch overhead. What it leaves out (a later model refines it): contention inside a wave,
//! the tail effect of uneven waves beyond the per-SM sum, L2 slice conflicts, DRAM page effects.

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
}

impl Costs {
    /// Latencies of `cfg`.
    pub fn new(cfg: &GpuConfig) -> Self {
        Costs {
            alu: cfg.sm.alu_latency_cycles as u32,
            imc: cfg.constant.imc_latency_cycles as u32,
            constant: cfg.constant.cache.iter().map(|c| c.latency_cycles as u32).collect(),
            l1: cfg.l1.latency_cycles as u32,
            l2: cfg.l2.latency_cycles as u32,
            dram: cfg.dram.latency_cycles as u32,
            const_serial: 1.0 / cfg.constant.addresses_per_cycle as f64,
        }
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
            .map(|l| match l {
                Level::Cache(k) => self.constant.get(usize::from(*k)).copied().unwrap_or(self.l2),
                Level::L2 => self.l2,
                Level::Dram => self.dram,
            })
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
    /// Memory instructions sent to the LSU (global, local, shared, LDC).
    pub mem_insts: u64,
    /// L1 sectors moved (global and local).
    pub l1_sectors: u64,
    /// L1 tag lookups (distinct 128-byte lines per request).
    pub l1_tags: u64,
    /// Indexed constant requests (distinct addresses).
    pub const_requests: u64,
    /// Latency-bound cycles per wave (the slowest warp of each wave of co-resident blocks).
    pub waves: Vec<u64>,
}

impl SmWork {
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
    /// Kernel cycles at the SM clock (`gpc__cycles_elapsed.max`), without launch overhead.
    pub cycles: f64,
    /// Kernel duration in ns (`gpu__time_duration.sum`), launch overhead included.
    pub time_ns: f64,
    /// Which bound set the time: `latency`, `issue`, `lsu`, `l1`, `constant`, `l2`, `dram`.
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
        worst("issue", w.warp_insts as f64 / cfg.sm.schedulers as f64);
        worst("lsu", w.mem_insts as f64 / cfg.sm.lsu_instructions_per_cycle as f64);
        worst("l1", (w.l1_sectors as f64 / cfg.l1.sectors_per_cycle as f64).max(w.l1_tags as f64 / cfg.l1.tag_lookups_per_cycle as f64));
        worst("constant", w.const_requests as f64 / cfg.constant.addresses_per_cycle as f64);
    }
    worst("l2", l2_sectors as f64 * cfg.l2.sector_bytes as f64 / cfg.l2.bandwidth_bytes_per_cycle as f64);
    let bytes_per_cycle = cfg.dram.bandwidth_gb_per_s as f64 * 1e9 / cfg.clock_hz();
    worst("dram", dram_bytes as f64 / bytes_per_cycle);
    let (bound, cycles) = bounds.iter().copied().fold(("latency", 0.0), |a, b| if b.1 > a.1 { b } else { a });
    let time_ns = cycles / cfg.clock_hz() * 1e9 + cfg.gpu.launch_overhead_ns as f64;
    Timing { cycles, time_ns, bound, bounds }
}

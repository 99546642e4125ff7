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
//!   `mma.sync` and `wmma.mma` wait for their sub-partition's tensor pipe, which each occupies for
//!   its form's issue interval, and their D is ready after the form's latency ([`tensor`]).
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

pub mod stall;

pub mod pace;

pub mod tensor;

pub mod pipes;

pub mod order;

mod costs;
mod dram;
mod maps;
pub(crate) mod price;
#[cfg(test)]
mod tests;
mod work;

pub use costs::{Costs, Unit};
use maps::*;
pub use pace::Pace;
pub use price::{latency, price};
use work::*;
pub use work::{SectorMaps, SmWork, Starts};

use crate::config::GpuConfig;
use crate::memory::shared::Banks;
use crate::memory::Level;
use crate::ptx::ast::StateSpace;
use crate::ptx::decode::{DInst, Program};
use crate::ptx::inst::Op;
use serde::Serialize;

pub use crate::memory::shared::{data_wavefronts, data_wavefronts_of};

/// GPU-wide traffic of a launch, for the L2 and DRAM bounds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Traffic {
    /// L2 sectors read by the SMs (`lts__t_sectors_srcunit_tex_op_read.sum`).
    pub l2_read_sectors: u64,
    /// L2 sectors written by the SMs (`lts__t_sectors_srcunit_tex_op_write.sum`).
    pub l2_write_sectors: u64,
    /// DRAM bytes read and written.
    pub dram_bytes: u64,
    /// Cycles of the L2 atomic unit on its busiest line
    /// ([`crate::exec::LaunchStats::atomic_line_cycles`]).
    pub atomic_line_cycles: f64,
}

/// The predicted time of a launch and what bounds it.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// Kernel cycles at the SM clock (`gpc__cycles_elapsed.max`), launch overhead included.
    pub cycles: f64,
    /// Kernel duration in ns (`gpu__time_duration.sum`), launch overhead included.
    pub time_ns: f64,
    /// Which bound set the time: `latency`, `issue`, `lsu`, `l1`, `constant`, `shared`, `l2`,
    /// `dram`; `host` for a back-to-back launch ([`back_to_back`]).
    pub bound: &'static str,
    /// Every bound in cycles, for reports.
    pub bounds: Vec<(&'static str, f64)>,
}

/// The GPC constant caches' throughput bound, in cycles: per GPC, from its SMs' first LDC, the
/// requests their constant L1s missed at [`crate::config::schema::Constant::gcc_requests_per_cycle`]
/// (SM `i` in GPC `i % gpcs`); the slowest GPC. `None` where the config sets no such limit or
/// no LDC missed. Source: 132 SMs missing the constant L1 together cost each SM 2x-2.5x what one
/// SM alone pays, the same whichever SMs run; Nsight Compute counts 0.50 GCC requests per cycle
/// per GPC at 66 and at 132 SMs, with k = 1 or 32 addresses per warp
/// (`validate/measurements/h200/ubench`, I).
pub fn gcc_bound(cfg: &GpuConfig, sms: &[SmWork]) -> Option<f64> {
    let rate = cfg.constant.gcc_requests_per_cycle;
    let gpcs = cfg.sm.gpcs.max(1) as usize;
    if rate <= 0.0 {
        return None;
    }
    let mut per_gpc = vec![(0u64, f64::INFINITY); gpcs];
    for (i, w) in sms.iter().enumerate() {
        if w.const_far == 0 {
            continue;
        }
        let g = &mut per_gpc[i % gpcs];
        g.0 += w.const_far;
        g.1 = g.1.min(w.starts.of(Unit::Ldc));
    }
    per_gpc
        .iter()
        .filter(|g| g.0 > 0)
        .map(|&(n, start)| start + n as f64 / rate)
        .reduce(f64::max)
}

/// The time of a launch among many launched back to back (`sim run --warm`): at least the host's
/// interval between launches ([`crate::config::schema::Gpu::host_launch_interval_ns`]), the bound
/// then named `host`. Source: \[microbenchmark\] `validate/measurements/h200/ubench`, K: kernels
/// of up to 2 us of work launched 2000 times between two CUDA events take 4.2-4.8 us each, the
/// host's enqueue time; longer ones their own time plus 1.4-2.0 us, about the launch overhead.
pub fn back_to_back(cfg: &GpuConfig, t: &mut Timing) {
    let floor = cfg.gpu.host_launch_interval_ns;
    if floor > t.time_ns {
        t.time_ns = floor;
        t.cycles = floor * 1e-9 * cfg.clock_hz();
        t.bound = "host";
        t.bounds.push(("host", t.cycles));
    }
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
    if let Some(b) = gcc_bound(cfg, sms) {
        worst("constant", b);
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
    // The L2 atomic unit performs the requests to one line one after another
    // ([`Costs::atomic_line`]).
    worst(
        "l2",
        first_store.min(first_load) + traffic.atomic_line_cycles,
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

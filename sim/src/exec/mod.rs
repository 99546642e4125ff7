//! Functional SIMT execution of a decoded kernel, warp by warp.
//!
//! Blocks are placed on SMs round-robin (block `b` on SM `b % count`), `occupancy` of them resident
//! per SM at a time (a wave). Within a block, warps of 32 threads run in lock step; each warp runs
//! until it exits or reaches `bar.sync`, then the next; the barrier releases when every warp still
//! running has arrived. Divergence and reconvergence: every lane keeps its own program counter and
//! the warp executes, at each step, the lanes with the smallest one (min-PC scheduling). Lanes
//! that branched apart rejoin as soon as their PCs meet again, which for the structured code
//! compilers emit is the immediate post-dominator that a reconvergence stack would pick.
//!
//! Each memory instruction becomes one [`WarpAccess`](crate::memory::WarpAccess) for the `memory` models; their outcomes are
//! counted in [`Counters`] and priced by [`Costs`] on the warp's scoreboard timeline.

pub mod alu;
pub mod decode;
mod mem;
mod step;
mod warp;

pub use decode::{decode, DInst, Program, Src, SymbolAddr, NO_REG};

use crate::config::GpuConfig;
use crate::error::{Error, Result};
use crate::memory::system::MemorySystem;
use crate::memory::MemoryImage;
use crate::metrics::{Counters, PcStats};
use crate::timing::{Costs, SmWork};
use warp::Warp;

/// Grid and block shape of a launch, in threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Blocks per grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
}

impl Dims {
    /// Threads per block.
    pub fn block_threads(&self) -> u32 {
        self.block.iter().product()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g)).product()
    }
}

/// A progress callback: (launch label, blocks done, blocks in the launch).
pub type ProgressFn = dyn Fn(&str, u64, u64) + Send + Sync;

/// Everything a launch needs besides the memory state.
#[derive(Clone)]
pub struct Launch<'a> {
    /// Label for messages (`constant`).
    pub label: &'a str,
    /// The kernel.
    pub program: &'a Program,
    /// The kernel parameter buffer (`.param` space), laid out as the PTX declares.
    pub params: Vec<u8>,
    /// Grid and block shape.
    pub dims: Dims,
    /// Shared memory per block (static + dynamic), bytes.
    pub shared_bytes: u64,
    /// Local memory per thread, bytes.
    pub local_bytes: u64,
    /// Global loads cached in L1 (`dlcm=ca`) unless the instruction says otherwise.
    pub cache_global_loads: bool,
    /// Shared memory bank width in bytes for this launch (4, or Kepler's 8-byte mode).
    pub bank_width: u32,
    /// Budget of warp instructions before the launch is stopped as runaway.
    pub max_warp_instructions: u64,
    /// Told (label, blocks done, blocks) every few blocks; it cannot change the result.
    pub progress: Option<&'a ProgressFn>,
}

/// What a launch produced: counters, per-instruction statistics and per-SM work.
#[derive(Debug, Clone, Default)]
pub struct LaunchStats {
    /// Launch-wide counters.
    pub counters: Counters,
    /// Per instruction of the program.
    pub per_pc: Vec<PcStats>,
    /// Per SM.
    pub sms: Vec<SmWork>,
    /// Blocks resident per SM at a time.
    pub occupancy_blocks: u32,
}

/// Blocks of `dims` resident per SM at once: the tightest of the thread, warp, block and shared
/// memory limits of the config (CUDA C++ Programming Guide, "Occupancy"). `Err` when one block
/// cannot fit at all.
pub fn occupancy(
    cfg: &GpuConfig,
    dims: &Dims,
    shared_bytes: u64,
) -> std::result::Result<u32, String> {
    let threads = dims.block_threads();
    if threads == 0 {
        return Err("the block has no threads".into());
    }
    if threads > cfg.sm.max_threads_per_block {
        return Err(format!(
            "{threads} threads per block exceed the GPU's limit of {}",
            cfg.sm.max_threads_per_block
        ));
    }
    if shared_bytes > cfg.shared.size_per_block_bytes as u64 {
        return Err(format!(
            "{shared_bytes} bytes of shared memory per block exceed the GPU's limit of {}",
            cfg.shared.size_per_block_bytes
        ));
    }
    let warps = threads.div_ceil(32);
    let mut n = cfg
        .sm
        .max_blocks
        .min(cfg.sm.max_threads / threads)
        .min(cfg.sm.max_warps / warps);
    if let Some(per_sm) = (cfg.shared.size_per_sm_bytes as u64).checked_div(shared_bytes) {
        n = n.min(per_sm as u32);
    }
    Ok(n.max(1))
}

/// Runs `launch` to completion over `image`, through the hierarchy `mem`.
pub fn run(
    cfg: &GpuConfig,
    launch: &Launch,
    image: &mut MemoryImage,
    mem: &mut MemorySystem,
) -> Result<LaunchStats> {
    let dims = launch.dims;
    let occ = occupancy(cfg, &dims, launch.shared_bytes).map_err(|m| Error::Launch {
        launch: launch.label.into(),
        message: m,
    })?;
    let sm_count = cfg.sm.count as u64;
    let mut stats = LaunchStats {
        per_pc: vec![PcStats::default(); launch.program.insts.len()],
        sms: vec![SmWork::default(); sm_count as usize],
        occupancy_blocks: occ,
        ..Default::default()
    };
    let costs = Costs::for_program(cfg, launch.program); // timing: with the SASS profile
    let threads = dims.block_threads();
    let nwarps = threads.div_ceil(32) as usize;
    let mut warps: Vec<Warp> = (0..nwarps)
        .map(|_| Warp::new(launch.program.num_regs, launch.local_bytes))
        .collect();
    let mut shared = vec![0u8; launch.shared_bytes as usize];
    let mut budget = launch.max_warp_instructions;
    let [gx, gy, _] = dims.grid;
    for b in 0..dims.blocks() {
        let ctaid = [
            (b % u64::from(gx)) as u32,
            (b / u64::from(gx) % u64::from(gy)) as u32,
            (b / (u64::from(gx) * u64::from(gy))) as u32,
        ];
        let sm = (b % sm_count) as usize;
        let wave = (b / sm_count / u64::from(occ)) as usize;
        shared.fill(0);
        for (w, warp) in warps.iter_mut().enumerate() {
            warp.reset(w as u32, dims.block);
            warp.clock = costs.warp_start(w as u32); // timing: the SM launches warps one by one
        }
        let mut ctx = step::Ctx {
            cfg,
            launch,
            image: &mut *image,
            mem: &mut *mem,
            shared: &mut shared,
            stats: &mut stats,
            costs: &costs,
            sm,
            ctaid,
            budget: &mut budget,
            last_alloc: None,
            wave,
        };
        run_block(&mut ctx, &mut warps)?;
        let done = warps.iter().map(Warp::finish_time).max().unwrap_or(0);
        stats.sms[sm].block_done(wave, done);
        if let Some(p) = launch.progress {
            if (b + 1) % 256 == 0 || b + 1 == dims.blocks() {
                p(launch.label, b + 1, dims.blocks());
            }
        }
    }
    Ok(stats)
}

/// Runs one block's warps, releasing `bar.sync` when every running warp has arrived.
fn run_block(ctx: &mut step::Ctx, warps: &mut [Warp]) -> Result<()> {
    loop {
        for w in warps.iter_mut() {
            while w.live != 0 && !w.at_barrier {
                ctx.step(w)?;
            }
        }
        let running: Vec<&mut Warp> = warps.iter_mut().filter(|w| w.live != 0).collect();
        if running.is_empty() {
            return Ok(());
        }
        // Everyone still running waits at the barrier: release it at the latest arrival.
        // timing: plus the barrier's release time
        let t =
            running.iter().map(|w| w.clock).max().unwrap_or(0) + ctx.costs.barrier(running.len());
        for w in running {
            w.at_barrier = false;
            w.clock = t;
        }
    }
}

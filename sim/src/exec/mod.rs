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
pub mod fast;
mod mem;
pub mod occupancy;
pub mod regs;
mod step;
mod sync;
pub mod trace;
pub mod turns;
mod warp;

pub use decode::{decode, DInst, Program, Src, SymbolAddr, NO_REG};
pub use occupancy::{occupancy, Occupancy};

use crate::config::GpuConfig;
use crate::error::{Error, Result};
use crate::memory::image::GlobalView;
use crate::memory::system::{L2Lines, L2Model, L2Outcome, MemorySystem, Params, SmCaches};
use crate::memory::{Level, MemoryImage};
use crate::metrics::{Counters, PcStats};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::Op;
use crate::timing::replay::{Plans, Replay};
use crate::timing::{Costs, SectorMaps, SmWork};
use rayon::prelude::*;
use trace::{BlockLog, L2Kind, ReqOut};
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
    /// Registers per thread, for occupancy (what ptxas allocates: estimated from the PTX,
    /// [`regs::estimate`], or given).
    pub registers: u32,
    /// Global loads cached in L1 (`dlcm=ca`) unless the instruction says otherwise.
    pub cache_global_loads: bool,
    /// Shared memory bank width in bytes for this launch (4, or Kepler's 8-byte mode).
    pub bank_width: u32,
    /// Budget of warp instructions before the launch is stopped as runaway.
    pub max_warp_instructions: u64,
    /// Told (label, blocks done, blocks) every few blocks; it cannot change the result.
    pub progress: Option<&'a ProgressFn>,
    /// Which waves to simulate.
    pub sampling: Sampling,
}

/// Which waves of a launch are simulated.
///
/// A sampled launch simulates wave 0, every `n`-th wave after it, and the last wave (which may be
/// partial: the tail), on caches that only the simulated waves warmed. The counters and work of
/// the simulated full waves stand for all the full waves (scaled by their count over the simulated
/// ones); the last wave counts as itself. The error is estimated from the spread of the
/// simulated waves' latency ([`SampleInfo`]). Blocks of waves not simulated compute nothing: their
/// outputs stay as they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sampling {
    /// Every wave.
    Full,
    /// Wave 0, every `n`-th wave and the last.
    Every(u64),
    /// Full up to [`AUTO_SAMPLE_WAVES`] waves; beyond, about [`AUTO_SAMPLE_WAVES`] / 2 waves
    /// evenly spread.
    #[default]
    Auto,
}

/// Launches with more waves than this are sampled under [`Sampling::Auto`]. (The main job, 12.8
/// million threads on an RTX 3090, has 153 waves and runs in full.)
pub const AUTO_SAMPLE_WAVES: u64 = 512;

/// How a sampled launch was simulated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleInfo {
    /// Waves in the launch.
    pub waves: u64,
    /// Waves simulated.
    pub simulated: u64,
    /// Every `every`-th wave was simulated.
    pub every: u64,
    /// Estimated relative error of the extrapolated latency-bound time, 95% confidence
    /// (1.96 standard errors of the mean wave latency, finite-population corrected; 0.15 = 15%).
    pub error: f64,
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
    /// The occupancy limits of the launch.
    pub occupancy: Occupancy,
    /// Set when only some waves were simulated.
    pub sampled: Option<SampleInfo>,
}

/// One SM's state while a launch runs: its warps, shared memory and statistics, and the logs
/// of the blocks it ran in the current wave.
#[derive(Default)]
struct SmRun {
    /// The SM's own register files and shared memory, for a launch whose blocks may see what
    /// the SM's earlier block left in them ([`Files::pooled`]); otherwise a thread's run them.
    files: Files,
    counters: Counters,
    per_pc: Vec<PcStats>,
    /// Per PC, the allocation of its last whole-warp global access ([`step::Ctx::alloc_hints`]).
    alloc_hints: Vec<u32>,
    /// Per PC, the first address of its last whole-warp global run ([`step::Ctx::last_runs`]).
    last_runs: Vec<u64>,
    work: SmWork,
    /// Logs of the blocks of two batches of waves in turn (batches alternate between the two):
    /// the L2 pass of a batch reads one while pass 1 of the next batch fills the other (and the
    /// L2 pass of the last batch reads one while the timing pass of the batch before reads the
    /// other).
    logs: [Vec<BlockLog>; 2],
    /// Logs in use, per buffer.
    used: [usize; 2],
    /// Warp instructions this batch.
    executed: u64,
    /// The first fault of this batch: (block, error).
    error: Option<(u64, Error)>,
    /// Scoreboards of the timing pass.
    replay: Replay,
    /// The straight-line path's counts and stream entries (made by the SM's first batch).
    runs: step::Runs,
}

/// The register files and shared memory that an SM's blocks run in.
///
/// A launch whose kernel reads no register before writing it ([`Files::pooled`]) runs each SM's
/// batch in the files of the thread that runs it ([`Pool`]), so that the SMs a thread runs one
/// after another reuse the rows the one before left in the host's caches (per-SM files, 106 KiB
/// per SM on transpose_smem, missed the host's L1 and L2 on every SM's batch). Nothing a block
/// can see depends on which SM's block ran in them before: shared memory is zeroed for each
/// block, local memory is zeroed for each warp ([`Warp::reset`]), every register is written
/// before it is read, and the rows an invariant entry fixes ([`Warp::fixed`]) hold values of
/// the launch (parameters, immediates, the block shape, `%tid` of the file's warp), the same on
/// every SM.
#[derive(Default)]
struct Files {
    /// Register files: one per warp of the blocks an SM holds at a time (resident block `k`'s
    /// warp `w` at `k * warps per block + w`).
    warps: Vec<Warp>,
    /// Shared memory of each resident block.
    shared: Vec<Vec<u8>>,
    /// `warps` and `shared` are made for this launch (the first batch that runs in them makes
    /// them, from the ones an earlier launch left where there are).
    ready: bool,
}

impl Files {
    /// Whether a launch whose kernel may read the registers `clear` before writing them
    /// ([`regs::read_before_written`]; `None`: any, through `shfl`) may run its SMs in any
    /// thread's files: when it reads none, nothing in them shows from block to block.
    fn pooled(clear: Option<&[u16]>) -> bool {
        clear.is_some_and(|c| c.is_empty())
    }

    /// Makes the files over for `launch` (once per launch, before its first block runs in them):
    /// `files` register files of the program's registers, each with all the invariant entries
    /// of `forms` to run, and the launch's shared memory for each of `blocks` resident blocks.
    fn prepare(
        &mut self,
        launch: &Launch,
        forms: &[fast::Pre],
        files: usize,
        blocks: usize,
        clear: Option<&[u16]>,
    ) {
        if self.ready {
            return;
        }
        self.ready = true;
        // The register files an earlier launch left, made over, and new ones past them. Every
        // register file starts with all the launch's invariant entries to run.
        let (num_regs, local) = (launch.program.num_regs, launch.local_bytes);
        self.warps.truncate(files);
        self.warps
            .iter_mut()
            .for_each(|w| w.relaunch(num_regs, local, clear));
        self.warps.resize_with(files, || Warp::new(num_regs, local));
        let invariants = forms.iter().filter(|p| p.invariant).count() as u32;
        self.warps.iter_mut().for_each(|w| w.unsettled = invariants);
        // Cleared for each block ([`zero_shared`]).
        self.shared.resize_with(blocks, Vec::new);
        for buf in &mut self.shared {
            buf.resize(launch.shared_bytes as usize, 0);
        }
    }
}

/// Where SMs' blocks run ([`Files`]): a test switch ([`tests::FILES`]) picks other ways than
/// the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FilesMode {
    /// In the files of the thread that runs them, where the launch allows it.
    Pooled,
    /// In the SM's own files.
    Own,
    /// Even SMs in their thread's files, odd ones in their own (as when a thread's are busy).
    #[cfg_attr(not(test), allow(dead_code))]
    Mixed,
}

/// Per thread of the pool that runs pass 1, its [`Files`] (and one more for a thread outside
/// the pool), for a launch that pools them ([`Files::pooled`]).
struct Pool(Vec<std::sync::Mutex<Files>>);

impl Pool {
    /// The files of `slots` threads, from those of an earlier launch (`kept`), to be made over
    /// for this launch by their first batch.
    fn new(kept: Vec<Files>, slots: usize) -> Pool {
        let mut files = kept;
        files.resize_with(slots, Files::default);
        files.iter_mut().for_each(|f| f.ready = false);
        Pool(files.into_iter().map(std::sync::Mutex::new).collect())
    }

    /// The files of the calling thread, or `None` when another holds them (a thread runs
    /// another launch's SM while it waits: then the SM's own files serve, with the same result).
    fn mine(&self) -> Option<std::sync::MutexGuard<'_, Files>> {
        let last = self.0.len() - 1;
        let slot = rayon::current_thread_index().map_or(last, |i| i.min(last));
        self.0[slot].try_lock().ok()
    }

    /// What the next launch may reuse.
    fn leave(self) -> Vec<Files> {
        (self.0.into_iter())
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }
}

/// What one launch's SMs leave for the next launch's ([`run_with`]): allocations whose contents
/// each launch starts afresh, kept so that a launch does not allocate and grow them anew.
#[derive(Default)]
pub struct Scratch {
    sms: Vec<SmScratch>,
    /// The threads' register files and shared memory ([`Pool`]).
    pool: Vec<Files>,
}

/// The [`Scratch`] the last run of this process left ([`Scratch::kept`], [`Scratch::keep`]).
static KEPT: std::sync::Mutex<Option<Scratch>> = std::sync::Mutex::new(None);

impl Scratch {
    /// What the last run of this process left with [`Scratch::keep`], or an empty scratch when
    /// there is none (or another thread's run has it). A process that runs workloads one after
    /// another (the benchmark, a sweep) then does not allocate, zero and free each run's register
    /// files, block logs and replay state again: they were about 3% of the benchmark's time on
    /// transpose_smem. The results are those of an empty scratch ([`run_with`]).
    pub fn kept() -> Scratch {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.take().unwrap_or_default()
    }

    /// Leaves this scratch for the next run of this process ([`Scratch::kept`]) in place of the
    /// one kept, if any (which is freed). What it holds is one run's worth: the largest launch's
    /// per-SM state of that run.
    pub fn keep(self) {
        let old = KEPT.lock().unwrap_or_else(|e| e.into_inner()).replace(self);
        drop(old);
    }
}

impl Drop for Scratch {
    /// Frees the SMs' parts on every core: thousands of register files and log buffers, which
    /// took about 1 ms on one core after transpose_smem.
    fn drop(&mut self) {
        std::mem::take(&mut self.sms).into_par_iter().for_each(drop);
    }
}

/// One SM's part of [`Scratch`].
struct SmScratch {
    replay: Replay,
    logs: [Vec<BlockLog>; 2],
    maps: SectorMaps,
    files: Files,
}

/// Runs `launch` to completion over `image`, through the hierarchy `mem`.
///
/// As [`run_with`] with nothing kept from an earlier launch.
pub fn run(
    cfg: &GpuConfig,
    launch: &Launch,
    image: &mut MemoryImage,
    mem: &mut MemorySystem,
) -> Result<LaunchStats> {
    run_with(cfg, launch, image, mem, &mut Scratch::default())
}

/// Runs `launch` to completion over `image`, through the hierarchy `mem`, reusing the
/// allocations an earlier launch left in `scratch` (and leaving this one's there): the result is
/// the same as [`run`]'s.
///
/// Blocks run a wave at a time (the blocks co-resident on the SMs), or, in a launch run in full,
/// a batch of consecutive waves at a time (up to [`BATCH_BLOCKS`] blocks per SM). Three passes
/// per batch:
/// 1. functional, in parallel over SMs (rayon): each SM runs its blocks in order through its own
///    L1 and constant caches, logging what goes to L2;
/// 2. L2, serial, in block order: the logged requests run through the shared L2 and DRAM, which
///    prices the accesses that reached them;
/// 3. timing: each SM replays the instruction streams of each wave's blocks together on warp
///    scoreboards that share its warp schedulers ([`crate::timing::replay`]), wave after wave.
///
/// A launch run in full overlaps the serial L2 pass with parallel work, so that no core waits for
/// it: the L2 pass of a batch runs during pass 1 of the next batch (the L2 pass reads only the
/// batch's logs, which pass 1 of the next does not touch: batches alternate between two log
/// buffers), and the L2 pass of the last batch during the timing pass of the batch before it (the
/// constant-pipe work the first two passes find is added by pass 3).
///
/// Results do not depend on the number of threads: SMs share nothing in pass 1 but global
/// memory, and the order of pass 2 is fixed.
pub fn run_with(
    cfg: &GpuConfig,
    launch: &Launch,
    image: &mut MemoryImage,
    mem: &mut MemorySystem,
    scratch: &mut Scratch,
) -> Result<LaunchStats> {
    let dims = launch.dims;
    let occupancy = occupancy(cfg, &dims, launch.shared_bytes, launch.registers).map_err(|m| {
        Error::Launch {
            launch: launch.label.into(),
            message: m,
        }
    })?;
    let occ = occupancy.blocks;
    let sm_count = cfg.sm.count as u64;
    let costs = Costs::for_program(cfg, launch.program); // with the SASS profile
    let nwarps = dims.block_threads().div_ceil(32) as usize;
    let plen = launch.program.insts.len();
    let mut sms: Vec<SmRun> = (0..sm_count)
        .map(|_| SmRun {
            per_pc: vec![PcStats::default(); plen],
            alloc_hints: vec![u32::MAX; plen],
            last_runs: vec![0; plen],
            ..Default::default()
        })
        .collect();
    for (st, kept) in sms.iter_mut().zip(scratch.sms.drain(..)) {
        st.adopt(kept);
    }
    let mut counters = Counters::default();
    let mut budget = launch.max_warp_instructions;
    let (global, constant) = image.view();
    let MemorySystem {
        sms: caches,
        l2,
        params,
    } = mem;
    let per_wave = sm_count * u64::from(occ);
    let blocks = dims.blocks();
    let global_atomics = launch
        .program
        .insts
        .iter()
        .any(|i| matches!(i.op, Op::Atom(a) | Op::Red(a) if a.space != StateSpace::Shared));
    let waves = blocks.div_ceil(per_wave);
    let every = match launch.sampling {
        Sampling::Full => 1,
        Sampling::Every(n) => n.max(1),
        Sampling::Auto if waves > AUTO_SAMPLE_WAVES => waves.div_ceil(AUTO_SAMPLE_WAVES / 2),
        Sampling::Auto => 1,
    };
    let mut simulated = vec![false; waves as usize];
    let mut wave_latency: Vec<f64> = vec![];
    // Statistics after wave 0 and before the last wave, when sampling.
    let mut after_first: Option<(Counters, Vec<SmRun>)> = None;
    let mut snap: Option<(Counters, Vec<SmRun>)> = None;
    // The batch whose L2 and timing passes are still to run (launches run in full): its log
    // buffer and blocks.
    let mut pending: Option<(usize, u64, u64)> = None;
    let plans = Plans::new(&costs, launch.program);
    // Each warp of an SM's resident blocks has its own register file (`run_batch_on_sm`), which
    // runs that warp of every block: its `%tid` rows do not change over the launch.
    let forms = fast::forms(launch, true);
    // The registers whose rows a kernel may read before writing them: cleared when an SM's
    // register files are made over for this launch, the others left as they are.
    let clear = regs::read_before_written(launch.program);
    // The register files and shared memory of the pool's threads, when the launch's SMs may
    // share them ([`Files`]); the last for a thread outside the pool.
    #[cfg(test)]
    let mode = tests::FILES.get();
    #[cfg(not(test))]
    let mode = FilesMode::Pooled;
    let pool = (mode != FilesMode::Own && Files::pooled(clear.as_deref())).then(|| {
        Pool::new(
            std::mem::take(&mut scratch.pool),
            rayon::current_num_threads() + 1,
        )
    });
    // Pooled register files hold only the rows the kernel's live ranges need
    // ([`regs::compact`]; invariant entries' registers keep their own): fewer rows to miss in
    // the host's caches. Pass 1 runs the renamed program; the timing pass keeps the PTX's
    // registers (its scoreboards follow them), and so do the costs (same PCs).
    let compacted = (pool.as_ref())
        .and_then(|_| regs::compact(launch.program, &fast::invariant_registers(&forms)));
    let renamed = (compacted.as_ref()).map(|program| Launch {
        program,
        ..launch.clone()
    });
    let run_launch = renamed.as_ref().unwrap_or(launch);
    let forms = match renamed {
        Some(_) => fast::forms(run_launch, true),
        None => forms,
    };
    // Built once and cloned by each SM (building it per SM grew its vectors push by push).
    let runs = step::Runs::new(&forms, &costs);
    let turn_flags = turns::flags(launch.program);
    let cx = crate::timing::replay::Ctx {
        program: launch.program,
        costs: &costs,
        shared_latency: cfg.shared.latency_cycles,
        plans: &plans,
    };
    // A launch run in full goes `batch` waves at a time: each SM runs its blocks of those waves
    // in a row, which keeps its caches' and scoreboards' state in the host's caches and makes a
    // thread wait for the other at the end of each pass once per batch instead of once per wave.
    // Only the order in which different SMs touch global memory changes, as it already does
    // between the SMs of one wave run on different threads.
    // Kernels with global atomics keep the batches they had: the order of their atomics (SM
    // after SM within a batch) is part of their results.
    let blocks_in_a_row = if global_atomics {
        ATOMIC_BATCH_BLOCKS
    } else {
        BATCH_BLOCKS
    };
    let batch = if every == 1 {
        (blocks_in_a_row / u64::from(occ).max(1)).max(1)
    } else {
        1
    };
    let mut wave = 0usize;
    let mut turn = 0usize;
    while (wave as u64) < waves {
        let is_last = wave as u64 + 1 == waves;
        if !(wave as u64).is_multiple_of(every) && !is_last {
            wave += 1;
            continue;
        }
        let count = batch_waves(wave as u64, waves, batch, !global_atomics);
        let first = wave as u64 * per_wave;
        let last = (first + per_wave * count).min(blocks);
        simulated[wave..wave + count as usize].fill(true);
        // Logs of batches alternate between two buffers.
        let buf = turn % 2;
        turn += 1;
        if is_last && every > 1 {
            // What the sampled full waves gathered; the last wave counts once on top of it.
            snap = Some((counters.clone(), sms.iter().map(SmRun::snapshot).collect()));
        }
        let run_sm = |(s, (st, cache)): (usize, (&mut SmRun, &mut SmCaches))| {
            let pooled = pool
                .as_ref()
                .filter(|_| mode != FilesMode::Mixed || s % 2 == 0);
            let mut mine = pooled.and_then(Pool::mine);
            let mut own = None;
            let files = match &mut mine {
                Some(f) => &mut **f,
                None => own.insert(std::mem::take(&mut st.files)),
            };
            run_batch_on_sm(
                cfg,
                run_launch,
                &forms,
                &runs,
                &costs,
                &global,
                constant,
                params,
                cache,
                st,
                files,
                s,
                buf,
                per_wave,
                first,
                last,
                budget,
                nwarps,
                clear.as_deref(),
                &turn_flags,
            );
            if let Some(files) = own {
                st.files = files;
            }
        };
        // Blocks of one SM run in order on one thread; SMs in parallel, unless the kernel has
        // global atomics: their read-modify-writes must see each other, in a fixed order.
        let run_batch = |sms: &mut [SmRun], caches: &mut [SmCaches]| {
            if global_atomics {
                sms.iter_mut()
                    .zip(caches.iter_mut())
                    .enumerate()
                    .for_each(run_sm);
            } else {
                sms.par_iter_mut()
                    .zip(caches.par_iter_mut())
                    .enumerate()
                    .for_each(run_sm);
            }
        };
        match pending {
            // The L2 pass of the batch before, in block order, on this thread while the other
            // cores start pass 1 of this batch. Its logs are moved out of the SMs meanwhile.
            Some((pbuf, pfirst, plast)) => {
                let mut behind: Vec<(Vec<BlockLog>, usize)> =
                    sms.iter_mut().map(|st| st.take_logs(pbuf)).collect();
                rayon::join(
                    || {
                        let logs = behind.iter_mut().map(|(l, n)| &mut l[..*n]).collect();
                        resolve_batch_l2(l2, &costs, &mut counters, logs, pfirst, plast)
                    },
                    || run_batch(&mut sms, caches),
                );
                for (st, logs) in sms.iter_mut().zip(behind) {
                    st.put_logs(pbuf, logs);
                }
            }
            None => run_batch(&mut sms, caches),
        }
        // The earliest block that faulted, whatever thread ran it.
        if let Some((_, e)) = sms
            .iter_mut()
            .filter_map(|s| s.error.take())
            .min_by_key(|(b, _)| *b)
        {
            return Err(e);
        }
        let executed: u64 = sms.iter().map(|s| s.executed).sum();
        budget = budget.checked_sub(executed).ok_or_else(|| Error::Budget {
            launch: launch.label.into(),
            budget: launch.max_warp_instructions,
        })?;
        let is_last_batch = wave as u64 + count >= waves;
        if every > 1 {
            let ahead = sms.iter_mut().map(|st| st.split(buf).0).collect();
            resolve_batch_l2(l2, &costs, &mut counters, ahead, first, last);
            time_batch(cx, sms.iter_mut().map(|st| st.timing(buf)).collect());
        } else if is_last_batch {
            // This batch's L2 pass (serial) while the other cores replay the batch before.
            let (ahead, behind): (Vec<_>, Vec<_>) = sms.iter_mut().map(|st| st.split(buf)).unzip();
            rayon::join(
                || resolve_batch_l2(l2, &costs, &mut counters, ahead, first, last),
                || {
                    if pending.is_some() {
                        time_batch(cx, behind);
                    }
                },
            );
            time_batch(cx, sms.iter_mut().map(|st| st.timing(buf)).collect());
            pending = None;
        } else {
            if let Some((pbuf, _, _)) = pending {
                time_batch(cx, sms.iter_mut().map(|st| st.timing(pbuf)).collect());
            }
            pending = Some((buf, first, last));
        }
        if every > 1 && wave == 0 {
            after_first = Some((counters.clone(), sms.iter().map(SmRun::snapshot).collect()));
        }
        if every > 1 && wave > 0 && !is_last {
            let slowest = sms.iter().filter_map(|s| s.work.waves.get(wave)).max();
            wave_latency.push(slowest.copied().unwrap_or(0) as f64);
        }
        if let Some(p) = launch.progress {
            p(launch.label, last, blocks);
        }
        wave += count as usize;
    }
    debug_assert!(
        pending.is_none(),
        "the last batch runs its own L2 and timing passes"
    );
    // Wave 0 (cold caches) and the last wave count once; the simulated waves between them
    // stand for all the waves between them.
    let sampled = match (after_first, snap) {
        (Some((c0, s0)), Some((c, snaps))) if waves > 2 => {
            let k = simulated.iter().filter(|&&s| s).count() as u64;
            let factor = (waves - 2) as f64 / (k - 2).max(1) as f64;
            counters.extrapolate(&c0, &c, factor);
            for ((st, sn), s0) in sms.iter_mut().zip(&snaps).zip(&s0) {
                st.counters.extrapolate(&s0.counters, &sn.counters, factor);
                for ((a, b), z) in st.per_pc.iter_mut().zip(&sn.per_pc).zip(&s0.per_pc) {
                    a.extrapolate(z, b, factor);
                }
                st.work.extrapolate(&s0.work, &sn.work, factor, &simulated);
            }
            Some(SampleInfo {
                waves,
                simulated: k,
                every,
                error: sampling_error(&wave_latency, waves - 2),
            })
        }
        _ => None,
    };
    let mut stats = LaunchStats {
        per_pc: vec![PcStats::default(); plen],
        occupancy_blocks: occ,
        occupancy,
        sampled,
        ..Default::default()
    };
    if let Some(pool) = pool {
        scratch.pool = pool.leave();
    }
    for mut st in sms {
        scratch.sms.push(st.leave());
        counters.add(&st.counters);
        for (a, b) in stats.per_pc.iter_mut().zip(st.per_pc) {
            a.merge(b);
        }
        stats.sms.push(st.work);
    }
    stats.counters = counters;
    Ok(stats)
}

/// What the L2 pass of a batch needs of one SM: the logs of its blocks in that batch.
type L2Side<'a> = &'a mut [BlockLog];

/// What the timing pass of a batch needs of one SM: its replay, the logs of its blocks in that
/// batch, and its work.
type TimingSide<'a> = (&'a mut Replay, &'a [BlockLog], &'a mut SmWork);

/// The L2 pass of the batch of blocks `first..last`, in block order (block `b` ran on SM
/// `b % count`, its log the `(b - first) / count`-th of that SM's).
fn resolve_batch_l2(
    l2: &mut L2Model,
    costs: &Costs,
    counters: &mut Counters,
    mut logs: Vec<L2Side>,
    first: u64,
    last: u64,
) {
    let sm_count = logs.len() as u64;
    for b in first..last {
        let s = (b % sm_count) as usize;
        let k = ((b - first) / sm_count) as usize;
        resolve_l2(l2, costs, counters, &mut logs[s][k]);
    }
}

/// The timing pass of a batch of waves: each SM replays the blocks of each wave together, wave
/// after wave; SMs in parallel.
fn time_batch(cx: crate::timing::replay::Ctx, mut sms: Vec<TimingSide>) {
    sms.par_iter_mut().for_each(|(replay, logs, work)| {
        // An SM's logs are in block order, so the blocks of a wave are adjacent.
        for logs in logs.chunk_by(|a, b| a.wave == b.wave) {
            // The constant-pipe work the functional and L2 passes found, in their order.
            for k in 0..2 {
                for log in logs {
                    log.ldc[k].iter().for_each(|&w| work.add_ldc(w));
                }
            }
            let wave = logs[0].wave;
            for done in replay.wave(cx, logs, work) {
                work.block_done(wave, done);
            }
        }
    });
}

impl SmRun {
    /// The L2 side of buffer `buf`'s logs and the timing side of the other buffer's.
    fn split(&mut self, buf: usize) -> (L2Side<'_>, TimingSide<'_>) {
        let [a, b] = &mut self.logs;
        let (ahead, behind) = if buf == 0 { (a, b) } else { (b, a) };
        let used = self.used;
        (
            &mut ahead[..used[buf]],
            (&mut self.replay, &behind[..used[1 - buf]], &mut self.work),
        )
    }

    /// The timing side of buffer `buf`'s logs.
    fn timing(&mut self, buf: usize) -> TimingSide<'_> {
        self.split(1 - buf).1
    }

    /// Moves buffer `buf`'s logs out, with the number in use, for the L2 pass of their batch to
    /// run while this SM runs the next batch into the other buffer. When the other buffer has no
    /// log yet, it gets one sized as this buffer's first (as [`run_batch_on_sm`] would make it).
    fn take_logs(&mut self, buf: usize) -> (Vec<BlockLog>, usize) {
        if self.logs[1 - buf].is_empty() {
            if let Some(like) = self.logs[buf].first() {
                let log = log_like(like);
                self.logs[1 - buf].push(log);
            }
        }
        (std::mem::take(&mut self.logs[buf]), self.used[buf])
    }

    /// Puts back what [`SmRun::take_logs`] moved out.
    fn put_logs(&mut self, buf: usize, (logs, _): (Vec<BlockLog>, usize)) {
        self.logs[buf] = logs;
    }

    /// Takes over what an SM of an earlier launch left (before this launch's first batch).
    fn adopt(&mut self, kept: SmScratch) {
        let SmScratch {
            mut replay,
            logs,
            maps,
            mut files,
        } = kept;
        // Made over for this launch by its first batch ([`Files::prepare`]).
        files.ready = false;
        self.files = files;
        replay.relaunch();
        self.replay = replay;
        // Logs are emptied as blocks take them ([`BlockLog::reset`]).
        self.logs = logs;
        self.work.reuse_maps(maps);
    }

    /// What the next launch's SM may reuse (after the last batch).
    fn leave(&mut self) -> SmScratch {
        SmScratch {
            replay: std::mem::take(&mut self.replay),
            logs: std::mem::take(&mut self.logs),
            maps: self.work.take_maps(),
            files: std::mem::take(&mut self.files),
        }
    }

    /// The statistics gathered so far (not the scratch state).
    fn snapshot(&self) -> SmRun {
        SmRun {
            counters: self.counters.clone(),
            per_pc: self.per_pc.clone(),
            work: self.work.clone(),
            ..Default::default()
        }
    }
}

/// Relative error (95%) of `population` times the mean of `samples` as an estimate of their
/// total: 1.96 standard errors of the mean, finite-population corrected, over the mean.
fn sampling_error(samples: &[f64], population: u64) -> f64 {
    let k = samples.len() as f64;
    if k < 2.0 {
        return 0.0;
    }
    let mean = samples.iter().sum::<f64>() / k;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let fpc = (1.0 - k / population as f64).max(0.0).sqrt();
    if mean > 0.0 {
        1.96 * (var / k).sqrt() * fpc / mean
    } else {
        0.0
    }
}

/// Blocks an SM runs in a row, at most, when a launch runs in full (one batch of waves). 16
/// rather than 8: an SM's L1 model and scoreboards stay in the host's caches over more blocks,
/// which cut read_stride's last-level misses by 7% (transpose_smem's by 13%) for 0.5% more
/// instructions (cachegrind with this CPU's caches); the logs of a batch are out of the host's
/// caches by the next pass either way.
const BATCH_BLOCKS: u64 = 16;

/// [`BATCH_BLOCKS`] for a kernel with global atomics, which run SM after SM within a batch: the
/// batches it had (8), so that its atomics' order, which their results depend on, stays.
const ATOMIC_BATCH_BLOCKS: u64 = 8;

/// Waves in the batch that starts at wave `wave` of a launch of `waves`, in batches of `batch`
/// waves. With `short_first`, the batch left short goes first rather than last: the L2 pass of a
/// batch runs while the other core runs pass 1 of the next batch, so a short last batch left
/// that core idle (transpose_smem's launches of 3 waves in batches of 2: the L2 pass of 984
/// blocks against pass 1 of 40). Kernels with global atomics keep their batches (their
/// atomics' order is part of their results).
fn batch_waves(wave: u64, waves: u64, batch: u64, short_first: bool) -> u64 {
    let rest = waves % batch;
    if short_first && wave == 0 && rest != 0 {
        rest
    } else {
        batch.min(waves - wave)
    }
}

/// Pass 1 for SM `s`: runs its blocks among `first..last` (block `b` runs on SM `b % count`, in
/// wave `b / per_wave`) in the register files and shared memory `files`, logging them in
/// buffer `buf`.
///
/// The blocks of one wave are co-resident: their warps take turns ([`take_turns`], [`turns`]),
/// so that the SM's L1 and constant caches see their accesses interleaved as the warp
/// schedulers issue them, not one warp's after another's.
#[allow(clippy::too_many_arguments)] // the pass's inputs, each read-only or owned by this SM
fn run_batch_on_sm(
    cfg: &GpuConfig,
    launch: &Launch,
    forms: &[fast::Pre],
    runs: &step::Runs,
    costs: &Costs,
    global: &GlobalView,
    constant: &[u8],
    params: &Params,
    caches: &mut SmCaches,
    st: &mut SmRun,
    files: &mut Files,
    s: usize,
    buf: usize,
    per_wave: u64,
    first: u64,
    last: u64,
    budget: u64,
    nwarps: usize,
    clear: Option<&[u16]>,
    turn_flags: &[u8],
) {
    let sm_count = u64::from(cfg.sm.count);
    let dims = launch.dims;
    let [gx, gy, _] = dims.grid;
    st.used[buf] = 0;
    st.executed = 0;
    // One register file per warp of the SM's resident blocks, one shared memory per block.
    let slots = (per_wave / sm_count).max(1) as usize;
    files.prepare(launch, forms, slots * nwarps, slots, clear);
    if st.runs.is_empty() {
        st.runs = runs.clone();
    }
    // Turns matter only where more than one warp is resident.
    let turns = slots * nwarps > 1;
    let mut left = budget;
    let mut b = first + (s as u64 + sm_count - first % sm_count) % sm_count;
    let mut group: Vec<u64> = Vec::with_capacity(slots);
    let mut syncs: Vec<sync::BlockSync> = Vec::with_capacity(slots);
    while b < last {
        // This SM's blocks of wave `b / per_wave`.
        let wave = b / per_wave;
        group.clear();
        while b < last && b / per_wave == wave {
            group.push(b);
            b += sm_count;
        }
        let used = st.used[buf];
        for &blk in &group {
            if st.logs[buf].len() <= st.used[buf] {
                // Sized below, as a kept log is.
                st.logs[buf].push(BlockLog::default());
            }
            let u = st.used[buf];
            st.used[buf] += 1;
            let (ahead, other) = match &mut st.logs {
                [a, o] if buf == 0 => (a, &*o),
                [o, a] => (a, &*o),
            };
            let (before, rest) = ahead.split_at_mut(u);
            let log = &mut rest[0];
            log.reset(blk, wave as usize, nwarps);
            // Room for what the buffer's previous log, or the other buffer's first, holds:
            // blocks of a launch log alike, so the log does not grow its buffers step by step.
            if let Some(like) = before.last().or(other.first()) {
                log.make_room(like);
            }
        }
        for k in 0..group.len() {
            zero_shared(&mut files.shared[k]);
            let warps = &mut files.warps[k * nwarps..(k + 1) * nwarps];
            for (w, warp) in warps.iter_mut().enumerate() {
                warp.reset(w as u32, dims.block);
            }
        }
        syncs.clear();
        syncs.resize_with(group.len(), Default::default);
        let logs = &mut st.logs[buf][used..used + group.len()];
        // Blocks with a warp still running, as bits.
        let mut running: u64 = u64::MAX >> (64 - group.len());
        while running != 0 {
            for (k, &blk) in group.iter().enumerate() {
                if running & (1 << k) == 0 {
                    continue;
                }
                let mut ctx = step::Ctx {
                    cfg,
                    launch,
                    forms,
                    global,
                    constant,
                    caches: &mut *caches,
                    params,
                    shared: &mut files.shared[k],
                    counters: &mut st.counters,
                    per_pc: &mut st.per_pc,
                    runs: &mut st.runs,
                    work: &mut st.work,
                    costs,
                    sm: s,
                    ctaid: [
                        (blk % u64::from(gx)) as u32,
                        (blk / u64::from(gx) % u64::from(gy)) as u32,
                        (blk / (u64::from(gx) * u64::from(gy))) as u32,
                    ],
                    budget: &mut left,
                    last_alloc: None,
                    alloc_hints: &mut st.alloc_hints,
                    last_runs: &mut st.last_runs,
                    log: &mut logs[k],
                    sync: std::mem::take(&mut syncs[k]),
                    turns,
                    turn_flags,
                    turn_over: false,
                    loaded: false,
                };
                let warps = &mut files.warps[k * nwarps..(k + 1) * nwarps];
                if let Err(e) = take_turns(&mut ctx, warps) {
                    st.error = Some((blk, e));
                    return;
                }
                if warps.iter().all(|w| w.live == 0) {
                    running &= !(1 << k);
                }
                syncs[k] = std::mem::take(&mut ctx.sync);
            }
        }
    }
    st.runs.fold(&mut st.per_pc);
    st.executed = budget - left;
    // Every instruction the budget counted was executed once (counted here rather than per
    // instruction in the warp loop).
    st.counters.inst_executed += st.executed;
    st.work.warp_insts += st.executed;
}

/// One round of a block's warps: each warp that runs takes its turn ([`step::Ctx::run_warp`]:
/// until it stalls on a load it issued ([`turns`]), waits at a barrier or exits), in warp
/// order; a `bar.sync` that every running warp has reached then releases. The SM's resident
/// blocks take their rounds in dispatch order, so its warps take turns oldest first.
fn take_turns(ctx: &mut step::Ctx, warps: &mut [Warp]) -> Result<()> {
    let mut live = false;
    let mut waiting = true;
    for w in warps.iter_mut() {
        if w.live != 0 && !w.at_barrier {
            ctx.run_warp(w)?;
        }
        if w.live != 0 {
            live = true;
            waiting &= w.at_barrier;
        }
    }
    if live && waiting {
        // Everyone still running waits at the barrier (its timing is the replay's); a
        // `bar.red` hands out its result.
        ctx.sync.release(warps);
        for w in warps.iter_mut().filter(|w| w.live != 0) {
            w.at_barrier = false;
        }
    }
    Ok(())
}

/// Zeroes a block's shared memory `buf` (a few KiB) with plain 32-byte stores. `fill(0)` was a
/// `memset` call, whose `rep stosb` (glibc's choice from 2 KiB on) valgrind counts as one
/// instruction per byte: about 3,400 a block on transpose_smem's 4 KiB tile, 1.6% of the run's
/// instructions, though the CPU stores those bytes in about as few cycles as the loop here.
fn zero_shared(buf: &mut [u8]) {
    // A zero the compiler cannot see, so that it does not turn the loop back into `memset`.
    let zero = std::hint::black_box([0u8; 32]);
    let (chunks, rest) = buf.as_chunks_mut::<32>();
    for c in chunks {
        *c = zero;
    }
    rest.fill(0);
}

/// An empty log with room for what `like` (the log of another block of the launch) holds; its L2
/// outcomes may not be known yet, so they get room for its requests.
fn log_like(like: &BlockLog) -> BlockLog {
    let mut log = BlockLog {
        warps: vec![Vec::new(); like.warps.len()],
        ..Default::default()
    };
    log.make_room(like);
    log
}

/// Pass 2 for one block: runs its L2 requests in order through `l2`, counts their traffic and
/// records for each where it was served and the DRAM bytes it moved (the timing pass queues those
/// at the request's issue time).
fn resolve_l2(l2: &mut L2Model, costs: &Costs, c: &mut Counters, log: &mut BlockLog) {
    // In the shipped configs' L2 geometry, loads and stores go through `lines`, borrowed once for
    // a run of them (and given back for any other request): a request costs a few counts and its
    // lines' lookups.
    let fast = l2.lines().is_some();
    let mut lines = None;
    // Their counters, added to `c` once (in locals, not written through `c` per request).
    let [mut read_sectors, mut read_hits, mut write_sectors, mut write_hits] = [0u64; 4];
    let [mut dram_read, mut dram_write] = [0u64; 2];
    for req in &log.reqs {
        let addrs = &log.addrs[req.start as usize..req.end as usize];
        if fast {
            if lines.is_none() {
                lines = l2.lines();
            }
            let f = lines.as_mut().expect("the L2's geometry does not change");
            let sb = L2Lines::SECTOR_BYTES;
            let out = match req.kind {
                L2Kind::Load | L2Kind::LoadLines => {
                    let counts = match req.kind {
                        L2Kind::LoadLines => Some(f.read_lines(addrs)),
                        _ => f.read(addrs),
                    };
                    counts.map(|r| {
                        let (read, written) = (u64::from(r.missed) * sb, u64::from(r.written) * sb);
                        read_sectors += u64::from(r.sectors);
                        read_hits += u64::from(r.hits);
                        dram_read += read;
                        dram_write += written;
                        ReqOut {
                            lat: costs.global(r.level()),
                            dram: r.missed != 0,
                            dram_bytes: read + written,
                        }
                    })
                }
                L2Kind::Store | L2Kind::StoreLines => {
                    let w = match req.kind {
                        L2Kind::StoreLines => f.write_lines(addrs),
                        _ => f.write(addrs),
                    };
                    let written = u64::from(w.written) * sb;
                    write_sectors += u64::from(w.sectors);
                    write_hits += u64::from(w.hits);
                    dram_write += written;
                    Some(ReqOut {
                        lat: costs.l2,
                        dram: false,
                        dram_bytes: written,
                    })
                }
                _ => None,
            };
            if let Some(out) = out {
                log.out.push(out.into());
                continue;
            }
        }
        lines = None;
        let mut t = L2Outcome::default();
        let served = |level: Level| ReqOut {
            lat: costs.global(level),
            dram: level == Level::Dram,
            dram_bytes: 0,
        };
        let mut out = match &req.kind {
            // `Params::line_records` only where the L2 is `L2Lines`' (`fast`).
            L2Kind::LoadLines | L2Kind::StoreLines => unreachable!("line records on a fast L2"),
            L2Kind::Load => {
                let level = l2.read_request(addrs, &mut t);
                c.l2_read_sectors += u64::from(t.sectors);
                c.l2_read_hits += u64::from(t.hits);
                served(level)
            }
            L2Kind::Store => {
                l2.write(addrs, &mut t);
                c.l2_write_sectors += u64::from(t.sectors);
                c.l2_write_hits += u64::from(t.hits);
                ReqOut {
                    lat: costs.l2,
                    ..Default::default()
                }
            }
            L2Kind::Atomic { returns } => {
                let level = addrs
                    .iter()
                    .map(|&a| l2.atomic(a, &mut t))
                    .max()
                    .unwrap_or(Level::L2);
                if *returns {
                    c.l2_atom_sectors += u64::from(t.sectors);
                    served(level.max(Level::L2))
                } else {
                    c.l2_red_sectors += u64::from(t.sectors);
                    ReqOut {
                        lat: costs.l2,
                        ..Default::default()
                    }
                }
            }
            L2Kind::Const(i) => {
                let trace::ConstReq { pc, start, end } = log.consts[*i as usize];
                let mut far = addrs.iter();
                let served: Vec<Level> = log.served[start as usize..end as usize]
                    .iter()
                    .map(|s| match s {
                        Some(l) => *l,
                        None => l2.read(*far.next().expect("one address per miss"), &mut t),
                    })
                    .collect();
                log.ldc[1].extend(costs.ldc_work(pc, &served));
                ReqOut {
                    lat: costs.constant_load(&served),
                    ..Default::default()
                }
            }
        };
        out.dram_bytes = match req.kind {
            L2Kind::Const(_) => t.dram_read,
            _ => t.dram_read + t.dram_write,
        };
        c.dram_read_bytes += t.dram_read;
        c.dram_write_bytes += t.dram_write;
        log.out.push(out.into());
    }
    c.l2_read_sectors += read_sectors;
    c.l2_read_hits += read_hits;
    c.l2_write_sectors += write_sectors;
    c.l2_write_hits += write_hits;
    c.dram_read_bytes += dram_read;
    c.dram_write_bytes += dram_write;
}

#[cfg(test)]
mod tests {
    use super::{batch_waves, FilesMode};
    use crate::run::run_workload;

    thread_local! {
        /// Where the SMs of launches run on this thread run their blocks ([`super::Files`]).
        pub(super) static FILES: std::cell::Cell<FilesMode> =
            const { std::cell::Cell::new(FilesMode::Pooled) };
    }

    /// The batches of a launch, as `run_with` walks them.
    fn batches(waves: u64, batch: u64, short_first: bool) -> Vec<u64> {
        let (mut wave, mut out) = (0, vec![]);
        while wave < waves {
            let n = batch_waves(wave, waves, batch, short_first);
            out.push(n);
            wave += n;
        }
        out
    }

    /// The short batch goes first (or last, for kernels with global atomics); every wave is in
    /// one batch.
    #[test]
    fn short_batch_goes_first() {
        assert_eq!(batches(3, 2, true), [1, 2]);
        assert_eq!(batches(3, 2, false), [2, 1]);
        assert_eq!(batches(9, 5, true), [4, 5]);
        assert_eq!(batches(10, 5, true), [5, 5]);
        assert_eq!(batches(1, 16, true), [1]);
        assert_eq!(
            batches(153, 16, true),
            [9, 16, 16, 16, 16, 16, 16, 16, 16, 16]
        );
        assert_eq!(batches(7, 1, true), [1; 7]);
    }

    /// Bundled workload `name` with `sets` on `configs/{gpu}.toml` on a pool of `threads`
    /// threads, its SMs' blocks running as `mode` says: the launches (outputs, counters,
    /// per-PC statistics, timing), printed.
    fn launches(
        gpu: &str,
        name: &str,
        sets: &[(&str, i64)],
        threads: usize,
        mode: FilesMode,
    ) -> String {
        let (cfg, w, opts) = crate::testing::bundled(gpu, name, sets);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            FILES.set(mode);
            let r = run_workload(&cfg, &w, &opts);
            FILES.set(FilesMode::Pooled);
            format!("{:?}", r.unwrap().launches)
        })
    }

    /// SMs whose blocks run in their threads' register files and shared memory, one after
    /// another in the same ones (one thread), on two or three threads, or some in their own,
    /// give the results of SMs that each have their own: on kernels with barriers (a file per
    /// warp, `%tid` invariant), without (one file in turn), with `shfl` (own files always),
    /// partial warps and blocks, and on GPUs of other SM counts.
    #[test]
    fn pooled_files_match_own_files() {
        // (GPU, workload, `--set` overrides)
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, i64)]);
        let cases: [Case; 8] = [
            ("rtx3090", "transpose_smem", &[("n", 96)]),
            ("rtx3090", "read_stride", &[("n", 3000)]),
            ("t4", "reduce", &[("n", 8192)]),
            ("rtx3090", "stencil_1d", &[("n", 4096)]),
            ("rtx3090", "smem_stride", &[]),
            ("h200", "conv2d", &[]),
            ("rtx3090", "pseudo_random", &[("n", 20_000)]),
            ("t4", "transpose_smem", &[("n", 80)]),
        ];
        for (gpu, name, sets) in cases {
            let own = launches(gpu, name, sets, 2, FilesMode::Own);
            for threads in [1, 2, 3] {
                for mode in [FilesMode::Pooled, FilesMode::Mixed] {
                    assert_eq!(
                        launches(gpu, name, sets, threads, mode),
                        own,
                        "{gpu} {name}: {mode:?} on {threads} threads"
                    );
                }
            }
        }
    }
}

//! The pipeline: the order of the passes that simulate a launch, and the trace between them.
//!
//! 1. `exec` (functional, `exec::sm::run_batch_on_sm`): each SM runs its batch of
//!    blocks, the warps of a wave's resident blocks taking turns, through its own L1 and
//!    constant caches; it records in each block's [`BlockLog`] what happened: per warp, its
//!    stream of instructions; what went to L2; what served each access.
//! 2. L2 (`l2`): the logged requests run through the shared L2 and DRAM in block order.
//! 3. `timing` ([`crate::timing::replay`]): each SM replays its waves' streams on warp
//!    scoreboards that share its warp schedulers.
//!
//! The [`BlockLog`] is the one contract between the passes: pass 1 writes it, pass 2 adds the
//! outcomes of its L2 requests, pass 3 reads it.

mod l2;

use crate::config::GpuConfig;
use crate::error::{Error, Result};
use crate::exec::faults;
use crate::exec::sm::{
    run_batch_on_sm, Batch, Files, FilesMode, L2Side, Pass1, Pool, Scratch, SmRun, TimingSide,
};
use crate::exec::{
    fast, occupancy, regs, step, turns, Launch, LaunchStats, SampleInfo, Sampling,
    AUTO_SAMPLE_WAVES,
};
use crate::memory::system::{L2Model, MemorySystem, SmCaches};
use crate::memory::{Level, MemoryImage};
use crate::metrics::{Counters, PcStats};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::Op;
use crate::timing::replay::Plans;
use crate::timing::Costs;
use crate::trace::BlockLog;
use l2::resolve_wave;
use rayon::prelude::*;

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
/// a batch of consecutive waves at a time (up to `BATCH_BLOCKS` blocks per SM). Three passes
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
    // The timing keeps a (wave, cycles) record per block and a few bytes per wave, simulated or
    // extrapolated: refused up front where the host cannot hold them (a grid of 65535^3 blocks).
    let schedule = blocks
        .checked_mul(16)
        .and_then(|b| b.checked_add(waves.checked_mul(17)?))
        .unwrap_or(u64::MAX);
    let too_large = |m: String| Error::Launch {
        launch: launch.label.into(),
        message: format!(
            "grid {:?} ({blocks} blocks in {waves} waves) is too large for this host: {m}",
            dims.grid
        ),
    };
    let every = match launch.sampling {
        Sampling::Full => 1,
        Sampling::Every(n) => n.max(1),
        Sampling::Auto if waves > AUTO_SAMPLE_WAVES => waves.div_ceil(AUTO_SAMPLE_WAVES / 2),
        Sampling::Auto => 1,
    };
    // Up front, what the launch holds besides the buffers, against the memory budget: its
    // schedule, the per-instruction state of every SM a block reaches (a 10 MB straight-line
    // PTX file has 400,000 instructions: 9 GB on 132 SMs), and the trace of the batches in flight, bounded
    // per SM below.
    let active = sm_count.min(blocks).max(1);
    let per_pc = (plen as u64)
        .saturating_mul(active)
        .saturating_mul(per_instruction_bytes(every > 1));
    let trace_cap = match launch.memory_left {
        None => {
            crate::memory::check_host_bytes(schedule)
                .map_err(|m| too_large(format!("its schedule {m}")))?;
            (u64::MAX, u64::MAX)
        }
        Some((left, limit)) => {
            if schedule > left {
                let m = crate::memory::over_budget("its schedule", schedule, (left, limit));
                return Err(too_large(m));
            }
            if per_pc > left - schedule {
                let what = format!(
                    "kernel `{}` has {plen} instructions: the per-instruction state of \
{active} SMs",
                    launch.program.name
                );
                return Err(Error::Launch {
                    launch: launch.label.into(),
                    message: crate::memory::over_budget(&what, per_pc, (left - schedule, limit)),
                });
            }
            let trace = left - schedule - per_pc;
            (trace / (2 * active * TRACE_BYTES_PER_WARP_INST), trace)
        }
    };
    let (trace_cap, trace_bytes) = trace_cap;
    // Allocated after the budget's checks above.
    // An SM's per-instruction state comes with its first block (`run_batch_on_sm`).
    let mut sms: Vec<SmRun> = (0..sm_count).map(|_| SmRun::default()).collect();
    for (st, kept) in sms.iter_mut().zip(scratch.sms.drain(..)) {
        st.adopt(kept);
    }
    if let (true, Some(st)) = (launch.probe_order, sms.first_mut()) {
        st.probe = Some(Default::default());
        st.work.issued = Some(Vec::new());
    }
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
    let mode = scratch.files_mode;
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
    let runs = step::Runs::new(&forms);
    let turn_flags = turns::flags(launch.program, |pc| costs.sass.skipped(pc).is_some());
    let pass1 = Pass1 {
        cfg,
        launch: run_launch,
        forms: &forms,
        runs: &runs,
        costs: &costs,
        global: &global,
        constant,
        params,
        per_wave,
        nwarps,
        clear: clear.as_deref(),
        turn_flags: &turn_flags,
        measured_vector_phases: cfg.compute_capability().0 >= 3,
    };
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
            let batch = Batch {
                buf,
                first,
                last,
                budget: budget.min(trace_cap),
            };
            run_batch_on_sm(&pass1, batch, s, cache, st, files);
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
            // A kernel that ran away after a memory error: the errors are what to fix.
            if sms.iter().any(|s| !s.faults.is_empty()) {
                let (all, dropped) =
                    faults::merge_counted(sms.iter_mut().map(|s| std::mem::take(&mut s.faults)));
                return Err(faults::report_dropped(
                    launch.label,
                    &all,
                    launch.checks.memcheck_limit,
                    dropped,
                ));
            }
            return Err(match e {
                Error::Budget { .. } if trace_cap < budget => {
                    trace_too_long(launch, trace_cap, trace_bytes)
                }
                e => e,
            });
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
                // An SM whose first block came after a snapshot had no state at it: none yet.
                let none = PcStats::default();
                for (pc, a) in st.per_pc.iter_mut().enumerate() {
                    let z = s0.per_pc.get(pc).unwrap_or(&none);
                    a.extrapolate(z, sn.per_pc.get(pc).unwrap_or(&none), factor);
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
    // Memory errors let the launch run to its end, so that all of them are reported.
    let (all, dropped) =
        faults::merge_counted(sms.iter_mut().map(|s| std::mem::take(&mut s.faults)));
    if !all.is_empty() {
        for mut st in sms {
            scratch.sms.push(st.leave());
        }
        return Err(faults::report_dropped(
            launch.label,
            &all,
            launch.checks.memcheck_limit,
            dropped,
        ));
    }
    stats.hazards =
        crate::exec::race::merge(sms.iter_mut().map(|s| std::mem::take(&mut s.hazards)));
    for mut st in sms {
        if let (Some(probe), Some(issued)) = (st.probe.take(), st.work.issued.take()) {
            stats.order = crate::trace::order::agreement(&probe, &issued);
        }
        stats.prints.append(&mut st.prints);
        scratch.sms.push(st.leave());
        counters.add(&st.counters);
        for (a, b) in stats.per_pc.iter_mut().zip(st.per_pc) {
            a.merge(b);
        }
        for (a, s) in stats
            .per_pc
            .iter_mut()
            .zip(std::mem::take(&mut st.work.stalls))
        {
            a.stalls.add(&s);
        }
        stats.sms.push(st.work);
    }
    stats.counters = counters;
    let busiest = mem
        .l2
        .take_busiest_atomic_line(costs.atomic_word, f64::from(costs.global(Level::L2)));
    stats.atomic_line_cycles = match &stats.sampled {
        Some(s) if s.simulated > 0 => busiest * s.waves as f64 / s.simulated as f64,
        _ => busiest,
    };
    Ok(stats)
}

/// Host bytes of the trace per warp instruction, for the memory budget: an 8-byte stream entry
/// with a vector's spare room (13 bytes measured for a branch loop, `runaway.ptx`) and the records
/// of the accesses of memory instructions (about 37 bytes measured over memory-bound streams).
const TRACE_BYTES_PER_WARP_INST: u64 = 48;

/// Host bytes per instruction of the program per SM: its statistics (and their two snapshots
/// when `sampled`), its allocation and run hints, its straight-line runs.
fn per_instruction_bytes(sampled: bool) -> u64 {
    // The pass's statistics and the replay's warp states (`SmWork::stalls`).
    let stats = (std::mem::size_of::<PcStats>()
        + std::mem::size_of::<crate::timing::stall::Stalls>()) as u64;
    let hints = (std::mem::size_of::<u32>() + std::mem::size_of::<u64>()) as u64;
    stats * if sampled { 3 } else { 1 } + hints + step::Runs::BYTES_PER_PC
}

/// The error of a launch one of whose SMs ran `cap` warp instructions in a batch: the most whose
/// trace the `trace` bytes the memory budget leaves hold, two batches of every SM in flight.
#[cold]
fn trace_too_long(launch: &Launch, cap: u64, trace: u64) -> Error {
    let bytes = cap.saturating_mul(TRACE_BYTES_PER_WARP_INST);
    let limit = launch
        .memory_left
        .map_or(crate::memory::Limit::Available, |l| l.1);
    Error::Launch {
        launch: launch.label.into(),
        message: format!(
            "the blocks of one SM ran {cap} warp instructions in a batch, whose trace ({} at \
{TRACE_BYTES_PER_WARP_INST} bytes each) is the most the {} that {limit} leaves for the traces \
in flight holds: a runaway kernel? --max-warp-instructions N stops it sooner; --max-memory SIZE \
sets the budget",
            crate::memory::size_text(bytes),
            crate::memory::size_text(trace),
        ),
    }
}

/// The L2 pass of the batch of blocks `first..last`, wave by wave, each wave's blocks in block
/// order ([`resolve_wave`]; block `b` ran on SM `b % count`, its log the `(b - first) /
/// count`-th of that SM's).
fn resolve_batch_l2(
    l2: &mut L2Model,
    costs: &Costs,
    counters: &mut Counters,
    mut logs: Vec<L2Side>,
    first: u64,
    last: u64,
) {
    let sm_count = logs.len() as u64;
    // Each SM's logs in block order, taken one by one as the blocks come.
    let mut per_sm: Vec<_> = logs.iter_mut().map(|l| l.iter_mut()).collect();
    let mut wave: Vec<&mut BlockLog> = Vec::new();
    for b in first..last {
        let log = per_sm[(b % sm_count) as usize]
            .next()
            .expect("a log per block of the batch");
        if wave.last().is_some_and(|w| w.wave != log.wave) {
            resolve_wave(l2, costs, counters, &mut wave);
            wave.clear();
        }
        wave.push(log);
    }
    resolve_wave(l2, costs, counters, &mut wave);
}

/// The timing pass of a batch of waves: each SM replays the blocks of each wave together, wave
/// after wave; SMs in parallel.
fn time_batch(cx: crate::timing::replay::Ctx, mut sms: Vec<TimingSide>) {
    sms.par_iter_mut().for_each(|(replay, logs, work)| {
        // What the SM served, priced (`timing::price`), block by block.
        let mut ldc_lats = Vec::new();
        for log in logs.iter_mut() {
            crate::timing::price(cx.costs, log, &mut ldc_lats);
        }
        // An SM's logs are in block order, so the blocks of a wave are adjacent.
        for logs in logs.chunk_by(|a, b| a.wave == b.wave) {
            // The constant-pipe work the functional and L2 passes found, in their order.
            for k in 0..2 {
                for log in logs {
                    log.ldc[k].iter().for_each(|&w| work.add_ldc(w));
                }
            }
            let far = |l: &BlockLog| l.const_far.saturating_sub(l.const_merged);
            work.const_far += logs.iter().map(far).sum::<u64>();
            let wave = logs[0].wave;
            for done in replay.wave(cx, logs, work) {
                work.block_done(wave, done);
            }
        }
    });
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

/// `BATCH_BLOCKS` for a kernel with global atomics, which run SM after SM within a batch: the
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

#[cfg(test)]
mod tests {
    use super::batch_waves;
    use crate::exec::sm::{FilesMode, Scratch};

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
            let mut scratch = Scratch::default();
            scratch.files_mode = mode;
            let plan = crate::run::plan(&cfg, &w, &opts).unwrap();
            let r = crate::run::execute_with(&cfg, plan, &opts, &mut scratch);
            format!("{:?}", r.unwrap().launches)
        })
    }

    /// SMs whose blocks run in their threads' register files and shared memory, one after
    /// another in the same ones (one thread), on three threads, or some in their own,
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
        // Each case on one thread (one SM after another in the same files) and on three (SMs
        // finishing out of order), pooled or mixed in turn: every pairing over the 8 cases.
        let runs = [
            (1, FilesMode::Pooled),
            (3, FilesMode::Mixed),
            (1, FilesMode::Mixed),
            (3, FilesMode::Pooled),
        ];
        for (i, (gpu, name, sets)) in cases.into_iter().enumerate() {
            let own = launches(gpu, name, sets, 2, FilesMode::Own);
            for (threads, mode) in [runs[i % 4], runs[(i + 1) % 4]] {
                assert_eq!(
                    launches(gpu, name, sets, threads, mode),
                    own,
                    "{gpu} {name}: {mode:?} on {threads} threads"
                );
            }
        }
    }
}

//! Pass 1 for one SM: its batch of blocks run wave by wave, the warps of a wave's resident
//! blocks taking turns ([`super::turns`]), in register files and shared memory that the SMs a
//! thread runs reuse ([`Files`], [`Pool`]), logging what each block did ([`BlockLog`]) for the
//! L2 and timing passes; and the per-SM state a launch keeps ([`SmRun`]) and leaves for the next
//! ([`Scratch`]).

use super::trace::BlockLog;
use super::turns::{Order, LOADS};
use super::warp::Warp;
use super::{fast, step, sync, Launch};
use crate::config::GpuConfig;
use crate::error::Error;
use crate::memory::image::GlobalView;
use crate::memory::system::{Params, SmCaches};
use crate::metrics::{Counters, PcStats};
use crate::timing::replay::Replay;
use crate::timing::{Costs, Pace, SectorMaps, SmWork};
use rayon::prelude::*;

/// One SM's state while a launch runs: its warps, shared memory and statistics, and the logs
/// of the blocks it ran in the current wave.
#[derive(Default)]
pub(crate) struct SmRun {
    /// The SM's own register files and shared memory, for a launch whose blocks may see what
    /// the SM's earlier block left in them ([`Files::pooled`]); otherwise a thread's run them.
    pub(crate) files: Files,
    pub(crate) counters: Counters,
    pub(crate) per_pc: Vec<PcStats>,
    /// Per PC, the allocation of its last whole-warp global access ([`step::Ctx::alloc_hints`]).
    pub(crate) alloc_hints: Vec<u32>,
    /// Per PC, the first address of its last whole-warp global run ([`step::Ctx::last_runs`]).
    pub(crate) last_runs: Vec<u64>,
    pub(crate) work: SmWork,
    /// Logs of the blocks of two batches of waves in turn (batches alternate between the two):
    /// the L2 pass of a batch reads one while pass 1 of the next batch fills the other (and the
    /// L2 pass of the last batch reads one while the timing pass of the batch before reads the
    /// other).
    pub(crate) logs: [Vec<BlockLog>; 2],
    /// Logs in use, per buffer.
    pub(crate) used: [usize; 2],
    /// Warp instructions this batch.
    pub(crate) executed: u64,
    /// The first error of this batch that stops the launch (the budget): (block, error).
    pub(crate) error: Option<(u64, Error)>,
    /// The memory errors of the launch on this SM, which let it run on
    /// ([`crate::exec::faults`]).
    pub(crate) faults: crate::exec::faults::Faults,
    /// The shared-memory hazards of the launch on this SM, with racecheck ([`super::race`]).
    pub(crate) hazards: Vec<super::race::Hazard>,
    /// The `printf` calls of the launch on this SM ([`crate::exec::printf`]).
    pub(crate) prints: Vec<crate::exec::printf::Print>,
    /// Scoreboards of the timing pass.
    pub(crate) replay: Replay,
    /// The straight-line path's counts and stream entries (made by the SM's first batch).
    pub(crate) runs: step::Runs,
    /// Which warp takes the next turn ([`Order::Paced`]).
    pub(crate) pace: Pace,
    /// The functional order of the SM's global and local accesses, where it is measured
    /// ([`super::Launch::probe_order`]).
    pub(crate) probe: Option<crate::trace::order::Probe>,
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
pub(crate) struct Files {
    /// Register files: one per warp of the blocks an SM holds at a time (resident block `k`'s
    /// warp `w` at `k * warps per block + w`).
    pub(crate) warps: Vec<Warp>,
    /// Shared memory of each resident block.
    pub(crate) shared: Vec<Vec<u8>>,
    /// `warps` and `shared` are made for this launch (the first batch that runs in them makes
    /// them, from the ones an earlier launch left where there are).
    pub(crate) ready: bool,
}

impl Files {
    /// Whether a launch whose kernel may read the registers `clear` before writing them
    /// ([`regs::read_before_written`]; `None`: any, through `shfl`) may run its SMs in any
    /// thread's files: when it reads none, nothing in them shows from block to block.
    pub(crate) fn pooled(clear: Option<&[u16]>) -> bool {
        clear.is_some_and(|c| c.is_empty())
    }

    /// Makes the files over for `launch` (once per launch, before its first block runs in them):
    /// `files` register files of the program's registers, each with all the invariant entries
    /// of `forms` to run, and the launch's shared memory for each of `blocks` resident blocks.
    pub(crate) fn prepare(
        &mut self,
        launch: &Launch,
        forms: &[fast::LoopEntry],
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

/// Where SMs' blocks run ([`Files`]): [`Scratch::files_mode`], which tests set to other ways
/// than the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum FilesMode {
    /// In the files of the thread that runs them, where the launch allows it.
    #[default]
    Pooled,
    /// In the SM's own files.
    Own,
    /// Even SMs in their thread's files, odd ones in their own (as when a thread's are busy).
    #[cfg_attr(not(test), allow(dead_code))]
    Mixed,
}

/// Per thread of the pool that runs pass 1, its [`Files`] (and one more for a thread outside
/// the pool), for a launch that pools them ([`Files::pooled`]).
pub(crate) struct Pool(Vec<std::sync::Mutex<Files>>);

impl Pool {
    /// The files of `slots` threads, from those of an earlier launch (`kept`), to be made over
    /// for this launch by their first batch.
    pub(crate) fn new(kept: Vec<Files>, slots: usize) -> Pool {
        let mut files = kept;
        files.resize_with(slots, Files::default);
        files.iter_mut().for_each(|f| f.ready = false);
        Pool(files.into_iter().map(std::sync::Mutex::new).collect())
    }

    /// The files of the calling thread, or `None` when another holds them (a thread runs
    /// another launch's SM while it waits: then the SM's own files serve, with the same result).
    pub(crate) fn mine(&self) -> Option<std::sync::MutexGuard<'_, Files>> {
        let last = self.0.len() - 1;
        let slot = rayon::current_thread_index().map_or(last, |i| i.min(last));
        self.0[slot].try_lock().ok()
    }

    /// What the next launch may reuse.
    pub(crate) fn leave(self) -> Vec<Files> {
        (self.0.into_iter())
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }
}

/// What one launch's SMs leave for the next launch's (`pipeline::run_with`): allocations whose contents
/// each launch starts afresh, kept so that a launch does not allocate and grow them anew.
#[derive(Default)]
pub struct Scratch {
    pub(crate) sms: Vec<SmScratch>,
    /// The threads' register files and shared memory ([`Pool`]).
    pub(crate) pool: Vec<Files>,
    /// Where the launches' SMs run their blocks: in the pool's files where the launch allows it
    /// (the default), or, to check that the pool changes no result, otherwise.
    pub(crate) files_mode: FilesMode,
}

/// The [`Scratch`] the last run of this process left ([`Scratch::kept`], [`Scratch::keep`]).
static KEPT: std::sync::Mutex<Option<Scratch>> = std::sync::Mutex::new(None);

impl Scratch {
    /// What the last run of this process left with [`Scratch::keep`], or an empty scratch when
    /// there is none (or another thread's run has it). A process that runs workloads one after
    /// another (the benchmark, a sweep) then does not allocate, zero and free each run's register
    /// files, block logs and replay state again: they were about 3% of the benchmark's time on
    /// transpose_smem. The results are those of an empty scratch (`pipeline::run_with`).
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
pub(crate) struct SmScratch {
    replay: Replay,
    logs: [Vec<BlockLog>; 2],
    maps: SectorMaps,
    files: Files,
}

impl SmRun {
    /// The L2 side of buffer `buf`'s logs and the timing side of the other buffer's.
    pub(crate) fn split(&mut self, buf: usize) -> (L2Side<'_>, TimingSide<'_>) {
        let [a, b] = &mut self.logs;
        let (ahead, behind) = if buf == 0 { (a, b) } else { (b, a) };
        let used = self.used;
        (
            &mut ahead[..used[buf]],
            (
                &mut self.replay,
                &mut behind[..used[1 - buf]],
                &mut self.work,
            ),
        )
    }

    /// The timing side of buffer `buf`'s logs.
    pub(crate) fn timing(&mut self, buf: usize) -> TimingSide<'_> {
        self.split(1 - buf).1
    }

    /// Moves buffer `buf`'s logs out, with the number in use, for the L2 pass of their batch to
    /// run while this SM runs the next batch into the other buffer. When the other buffer has no
    /// log yet, it gets one sized as this buffer's first (as [`run_batch_on_sm`] would make it).
    pub(crate) fn take_logs(&mut self, buf: usize) -> (Vec<BlockLog>, usize) {
        if self.logs[1 - buf].is_empty() {
            if let Some(like) = self.logs[buf].first() {
                let log = log_like(like);
                self.logs[1 - buf].push(log);
            }
        }
        (std::mem::take(&mut self.logs[buf]), self.used[buf])
    }

    /// Puts back what [`SmRun::take_logs`] moved out.
    pub(crate) fn put_logs(&mut self, buf: usize, (logs, _): (Vec<BlockLog>, usize)) {
        self.logs[buf] = logs;
    }

    /// Takes over what an SM of an earlier launch left (before this launch's first batch).
    pub(crate) fn adopt(&mut self, kept: SmScratch) {
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
    pub(crate) fn leave(&mut self) -> SmScratch {
        SmScratch {
            replay: std::mem::take(&mut self.replay),
            logs: std::mem::take(&mut self.logs),
            maps: self.work.take_maps(),
            files: std::mem::take(&mut self.files),
        }
    }

    /// The statistics gathered so far (not the scratch state).
    pub(crate) fn snapshot(&self) -> SmRun {
        SmRun {
            counters: self.counters.clone(),
            per_pc: self.per_pc.clone(),
            work: self.work.clone(),
            ..Default::default()
        }
    }
}

/// What the L2 pass of a batch needs of one SM: the logs of its blocks in that batch.
pub(crate) type L2Side<'a> = &'a mut [BlockLog];

/// What the timing pass of a batch needs of one SM: its replay, the logs of its blocks in that
/// batch, and its work.
pub(crate) type TimingSide<'a> = (&'a mut Replay, &'a mut [BlockLog], &'a mut SmWork);

/// What pass 1 of a launch reads on every SM: the launch and what was made of it once.
#[derive(Clone, Copy)]
pub(crate) struct Pass1<'a> {
    pub(crate) cfg: &'a GpuConfig,
    /// The launch as pass 1 runs it (its program's registers renamed where they were compacted).
    pub(crate) launch: &'a Launch<'a>,
    /// The pre-decoded entries of its program ([`fast::forms`]).
    pub(crate) forms: &'a [fast::LoopEntry],
    /// The straight-line path's counts and entries, cloned by each SM's first batch.
    pub(crate) runs: &'a step::Runs,
    pub(crate) costs: &'a Costs,
    pub(crate) global: &'a GlobalView<'a>,
    /// The constant bank.
    pub(crate) constant: &'a [u8],
    /// Cache geometry.
    pub(crate) params: &'a Params,
    /// Blocks per wave (resident blocks per SM times SMs).
    pub(crate) per_wave: u64,
    /// Warps per block.
    pub(crate) nwarps: usize,
    /// The registers the kernel may read before writing them ([`super::regs::read_before_written`]).
    pub(crate) clear: Option<&'a [u16]>,
    /// Per instruction, where a warp's turn ends ([`super::turns::flags`]).
    pub(crate) turn_flags: &'a [u8],
    /// Whether 8- and 16-byte shared accesses take the phase rules measured on the H200
    /// ([`crate::memory::shared::lsu_wavefronts`]: compute 3.x on) rather than Fermi's.
    pub(crate) measured_vector_phases: bool,
}

/// One batch of waves for pass 1: the blocks `first..last`, logged in log buffer `buf`, with
/// `budget` warp instructions left to the launch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Batch {
    pub(crate) buf: usize,
    pub(crate) first: u64,
    pub(crate) last: u64,
    pub(crate) budget: u64,
}

/// Pass 1 for SM `s`: runs its blocks of `batch` (block `b` runs on SM `b % count`, in wave
/// `b / per_wave`) in the register files and shared memory `files`, logging them in the batch's
/// log buffer.
///
/// The blocks of one wave are co-resident: their warps take turns ([`super::turns`]) in the
/// launch's [`Order`] (by default the replay's, estimated by [`Pace`]), so that the SM's L1 and
/// constant caches see their accesses interleaved as the warp schedulers issue them, not one
/// warp's after another's.
pub(crate) fn run_batch_on_sm(
    p: &Pass1,
    batch: Batch,
    s: usize,
    caches: &mut SmCaches,
    st: &mut SmRun,
    files: &mut Files,
) {
    let Pass1 {
        cfg,
        launch,
        forms,
        runs,
        per_wave,
        nwarps,
        clear,
        ..
    } = *p;
    let Batch {
        buf,
        first,
        last,
        budget,
    } = batch;
    let sm_count = u64::from(cfg.sm.count);
    let dims = launch.dims;
    let [gx, gy, _] = dims.grid;
    st.used[buf] = 0;
    st.executed = 0;
    let mut b = first + (s as u64 + sm_count - first % sm_count) % sm_count;
    if b >= last {
        // No block of this batch runs here: nothing to prepare, and an SM that no block ever
        // reaches holds no per-instruction state (a 10 MB straight-line kernel's 4 blocks on
        // the H200's 132 SMs).
        return;
    }
    // One register file per warp of the SM's resident blocks, one shared memory per block.
    let slots = (per_wave / sm_count).max(1) as usize;
    files.prepare(launch, forms, slots * nwarps, slots, clear);
    if st.runs.is_empty() {
        st.runs = runs.clone();
    }
    let plen = launch.program.insts.len();
    if st.per_pc.len() != plen {
        // Allocated when the SM's first block comes (the budget counted it up front).
        st.per_pc = vec![PcStats::default(); plen];
        st.alloc_hints = vec![u32::MAX; plen];
        st.last_runs = vec![0; plen];
    }
    // Turns matter only where more than one warp is resident.
    let turns = slots * nwarps > 1;
    let mut left = budget;
    // The wave's blocks on this SM, with their `%ctaid`.
    let mut group: Vec<(u64, [u32; 3])> = Vec::with_capacity(slots);
    let mut syncs: Vec<sync::BlockSync> = Vec::with_capacity(slots);
    let racecheck = launch.checks.racecheck;
    let mut shadows: Vec<super::race::Shadow> = Vec::new();
    while b < last {
        // This SM's blocks of wave `b / per_wave`.
        let wave = b / per_wave;
        group.clear();
        while b < last && b / per_wave == wave {
            let ctaid = [
                (b % u64::from(gx)) as u32,
                (b / u64::from(gx) % u64::from(gy)) as u32,
                (b / (u64::from(gx) * u64::from(gy))) as u32,
            ];
            group.push((b, ctaid));
            b += sm_count;
        }
        let used = st.used[buf];
        for &(blk, _) in &group {
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
        if racecheck {
            shadows.resize_with(group.len(), Default::default);
            for (shadow, &(blk, _)) in shadows.iter_mut().zip(&group) {
                shadow.start(blk, launch.shared_bytes as usize);
            }
        }
        // The wave's cycles count from its start.
        caches.start_wave();
        let logs = &mut st.logs[buf][used..used + group.len()];
        let order = if turns { p.launch.order } else { Order::Serial };
        // Runs warp `w` of the wave (block `w / nwarps`) for one turn.
        macro_rules! turn {
            ($w:expr, $deadline:expr, $slot:expr) => {{
                let w: usize = $w;
                let k = w / nwarps;
                let (blk, ctaid) = group[k];
                let mut ctx = step::Ctx {
                    pass: p,
                    caches: &mut *caches,
                    shared: &mut files.shared[k],
                    counters: &mut st.counters,
                    per_pc: &mut st.per_pc,
                    runs: &mut st.runs,
                    work: &mut st.work,
                    sm: s,
                    ctaid,
                    budget: &mut left,
                    last_alloc: None,
                    alloc_hints: &mut st.alloc_hints,
                    last_runs: &mut st.last_runs,
                    log: &mut logs[k],
                    faults: &mut st.faults,
                    prints: &mut st.prints,
                    sync: std::mem::take(&mut syncs[k]),
                    race: match shadows.get_mut(k) {
                        Some(shadow) if racecheck => Some((shadow, &mut st.hazards)),
                        _ => None,
                    },
                    turns: order != Order::Serial,
                    turn_over: false,
                    loaded: false,
                    deadline: $deadline,
                    slot: $slot,
                    turn_start: 0,
                    async_copy: crate::ptx::inst::CacheOp::Default,
                    texture: None,
                    yielded: false,
                };
                let mems = ctx.log.mems.len();
                let r = ctx.run_warp(&mut files.warps[w]);
                syncs[k] = std::mem::take(&mut ctx.sync);
                if let Some(probe) = st.probe.as_mut() {
                    probe.turn(blk, mems, logs[k].mems.len());
                }
                if let Err(e) = r {
                    st.error = Some((blk, e));
                    return;
                }
            }};
        }
        if matches!(order, Order::Paced | Order::Interleaved) {
            st.pace.start(p.costs, group.len(), nwarps);
            let mut waiting: Vec<usize> = Vec::with_capacity(nwarps);
            while let Some(w) = st.pace.next() {
                let (k, i) = (w / nwarps, w % nwarps);
                let before = logs[k].warps[i].len();
                let deadline = match order {
                    Order::Interleaved => st.pace.deadline(w),
                    _ => usize::MAX,
                };
                turn!(w, deadline, Some(st.pace.slot(w)));
                let (live, at_barrier) = (files.warps[w].live != 0, files.warps[w].at_barrier);
                let flags = p.turn_flags;
                let loads = |pc: u32| flags.get(pc as usize).is_some_and(|f| f & LOADS != 0);
                let entries = &logs[k].warps[i][before..];
                // A turn that yielded with loads in flight (one that yielded without any is
                // one that stalled on none).
                let yielded = files.warps[w].loads_in_flight;
                st.pace.turn(
                    p.costs,
                    w,
                    entries,
                    loads,
                    &logs[k],
                    yielded,
                    live && !at_barrier,
                );
                if at_barrier {
                    // The block's barrier releases once every warp still running waits at it.
                    let block = &mut files.warps[k * nwarps..(k + 1) * nwarps];
                    if block.iter().all(|w| w.live == 0 || w.at_barrier) {
                        if let Err(e) = super::barrier::check_release(launch, block, group[k].1) {
                            st.error = Some((group[k].0, e));
                            return;
                        }
                        syncs[k].release(block);
                        if let Some(shadow) = shadows.get_mut(k) {
                            shadow.next_interval();
                        }
                        waiting.clear();
                        for (j, w) in block.iter_mut().enumerate() {
                            if w.live != 0 {
                                w.at_barrier = false;
                                waiting.push(k * nwarps + j);
                            }
                        }
                        st.pace.release(p.costs, &waiting);
                    }
                }
            }
        } else {
            // Rounds: each block's running warps take a turn in warp order, the blocks in
            // dispatch order; a barrier releases after a round in which every running warp of
            // its block reached it.
            let mut running: u64 = u64::MAX >> (64 - group.len());
            while running != 0 {
                for k in 0..group.len() {
                    if running & (1 << k) == 0 {
                        continue;
                    }
                    for w in k * nwarps..(k + 1) * nwarps {
                        if files.warps[w].live != 0 && !files.warps[w].at_barrier {
                            turn!(w, usize::MAX, None);
                        }
                    }
                    let block = &mut files.warps[k * nwarps..(k + 1) * nwarps];
                    if block.iter().all(|w| w.live == 0) {
                        running &= !(1 << k);
                    } else if block.iter().all(|w| w.live == 0 || w.at_barrier) {
                        // Everyone still running waits at the barrier (its timing is the
                        // replay's); a `bar.red` hands out its result.
                        if let Err(e) = super::barrier::check_release(launch, block, group[k].1) {
                            st.error = Some((group[k].0, e));
                            return;
                        }
                        syncs[k].release(block);
                        if let Some(shadow) = shadows.get_mut(k) {
                            shadow.next_interval();
                        }
                        for w in block.iter_mut().filter(|w| w.live != 0) {
                            w.at_barrier = false;
                        }
                    }
                }
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
pub(crate) fn log_like(like: &BlockLog) -> BlockLog {
    let mut log = BlockLog {
        warps: vec![Vec::new(); like.warps.len()],
        ..Default::default()
    };
    log.make_room(like);
    log
}

//! Functional SIMT execution of a decoded kernel, warp by warp: pass 1 of the pipeline
//! ([`crate::pipeline`]), which runs each SM's batch of blocks (`sm::run_batch_on_sm`).
//!
//! Blocks are placed on SMs round-robin (block `b` on SM `b % count`), `occupancy` of them resident
//! per SM at a time (a wave). The warps of an SM's resident blocks take turns ([`turns`]): each
//! issues until it stalls on a load it issued, waits at `bar.sync` or exits, then the next, oldest
//! first; the barrier releases when every warp of its block still running has arrived. Within a
//! warp, 32 threads run in lock step. Divergence and reconvergence: every lane keeps its own
//! program counter and the warp executes, at each step, the lanes with the smallest one (min-PC
//! scheduling). Lanes that branched apart rejoin as soon as their PCs meet again, which for the
//! structured code compilers emit is the immediate post-dominator that a reconvergence stack
//! would pick.
//!
//! Each memory instruction becomes one [`WarpAccess`](crate::memory::WarpAccess) for the `memory`
//! models; what served it is recorded in the block's [`trace::BlockLog`].

pub mod alu;
pub mod barrier;
pub mod fast;
pub mod faults;
mod mem;
pub mod occupancy;
pub mod printf;
pub mod race;
pub mod regs;
pub(crate) mod sm;
pub(crate) mod step;
mod sync;
pub mod texture;
pub mod turns;
mod warp;

// The decoded program (`ptx::decode`) and the trace (`crate::trace`) under the names exec's
// modules use.
pub use crate::ptx::decode::{self, decode, DInst, Program, Src, SymbolAddr, NO_REG};
pub use crate::trace;
pub use occupancy::{occupancy, Occupancy};
pub use sm::Scratch;

use crate::metrics::{Counters, PcStats};
use crate::timing::SmWork;

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
    /// Which of the equivalent execution paths to take (tests compare them).
    pub paths: Paths,
    /// The order of the turns of an SM's co-resident warps ([`turns::Order::Paced`] unless a
    /// study of the order asks for another).
    pub order: turns::Order,
    /// The compute-sanitizer-like checks to run besides memcheck ([`barrier::Checks`]).
    pub checks: barrier::Checks,
    /// Measure how far the functional order of SM 0's global and local accesses agrees with the
    /// order the timing replay issues them in ([`LaunchStats::order`]).
    pub probe_order: bool,
    /// The texture and surface objects its kernel may fetch from, by handle
    /// ([`texture::TexObject::handle`]; empty: none).
    pub objects: &'a [texture::TexObject],
    /// The host memory the launch may take besides the buffers, and what bounds it
    /// ([`crate::memory::Budget::left`]); `None`: unbounded.
    pub memory_left: Option<(u64, crate::memory::Limit)>,
}

/// Which of the simulator's equivalent paths a launch takes. The defaults are the fast paths;
/// each other choice gives the same outputs, counters and timing, and exists so that tests can
/// check that (guards of the fast paths against the general ones, not specifications).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paths {
    /// Loads and stores take the general path rather than pre-decoded memory entries.
    pub mem_general: bool,
    /// Loads and stores of converged warps get general plans: the memory path rather than
    /// whole-warp word accesses.
    pub word_general: bool,
    /// No entry is in a segment: the straight-line path runs entry by entry.
    pub segments_off: bool,
    /// Every global access takes the general L1 path rather than the one-line path.
    pub global_general: bool,
    /// L2 requests of global and local accesses are one address per sector rather than line
    /// records.
    pub line_records_off: bool,
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
    /// With [`Launch::probe_order`]: how far the functional order of SM 0's global and local
    /// accesses agrees with the replay's.
    pub order: Option<crate::trace::order::Agreement>,
    /// Cycles the L2 atomic unit spent on its busiest line (requests to one line are performed one
    /// after another). A sampled launch's is scaled by its waves over those simulated.
    pub atomic_line_cycles: f64,
    /// With racecheck: the launch's distinct shared-memory hazards ([`race::merge`]).
    pub hazards: Vec<race::Hazard>,
    /// The threads' `printf` calls, in the documented order ([`printf::order`]).
    pub prints: Vec<printf::Print>,
}

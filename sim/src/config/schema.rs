//! The TOML tables of a GPU config, one struct per table, with the units in the field names.
//!
//! Every key is required and unknown keys are rejected (`deny_unknown_fields`); the ranges and
//! combinations that serde cannot express are checked in `check.rs`.

use serde::{Deserialize, Serialize};

/// `[gpu]`: identity of the GPU and per-launch costs that are not memory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Marketing name as the driver reports it (`"NVIDIA GeForce RTX 3090"`); non-empty.
    pub name: String,
    /// Compute capability as `"MAJOR.MINOR"` (`"8.6"`), major 1 to 12, minor 0 to 9; see
    /// [`GpuConfig::compute_capability`](super::GpuConfig::compute_capability). It is also the
    /// architecture ptxas assembles for (`"8.6"`: `-arch=sm_86`; [`crate::sass`]) and NVRTC or
    /// clang compile a workload's `.cu` for.
    pub compute_capability: String,
    /// Time a kernel launch costs beyond its work, in nanoseconds (>= 0).
    pub launch_overhead_ns: f64,
    /// Time the host takes to enqueue one kernel launch, in nanoseconds (0 to 1e9; optional, 0
    /// by default): kernels launched back to back (`sim run --warm`, the CUDA-event mean of
    /// many launches) take at least this each, however short their work.
    #[serde(default)]
    pub host_launch_interval_ns: f64,
}

/// `[sm]`: the streaming multiprocessors, their clock and occupancy limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sm {
    /// Number of SMs on the GPU (1 to 1024).
    pub count: u32,
    /// Graphics processing clusters (GPCs) the SMs are grouped in (1 to `count`): SM `i` is in
    /// GPC `i % gpcs`, as consecutive SM ids lie in different GPCs on an H200 (its first 16 SMs
    /// fetched the constant table into all 8 GPC constant caches:
    /// `validate/measurements/h200/ubench`, I). Optional: 0 (the default) counts as 1.
    #[serde(default)]
    pub gpcs: u32,
    /// SM (core) clock in MHz (> 0, <= 10000); all `*_cycles` values count this clock.
    pub clock_mhz: f64,
    /// Threads per warp; must be 32.
    pub warp_size: u32,
    /// Warp schedulers (sub-cores) per SM, each issuing at most one warp instruction per cycle (1 to 8).
    pub schedulers: u32,
    /// Maximum resident threads per SM (32 to 4096).
    pub max_threads: u32,
    /// Maximum resident warps per SM (1 to 128).
    pub max_warps: u32,
    /// Maximum resident blocks per SM (1 to 64).
    pub max_blocks: u32,
    /// Maximum threads per block (32 to 2048, and <= `max_threads`).
    pub max_threads_per_block: u32,
    /// 32-bit registers per SM (1024 to 1048576). Also taken as the most one block may hold, as
    /// on every GPU of `configs/` (CUDA-CC Table 27, CUDA42 Table F-2).
    pub registers: u32,
    /// Most registers ptxas gives one thread (1 to 255): 255 on compute 3.5 and later, 63 on
    /// 2.x and 3.0 (CUDA-CC Table 27). A kernel estimated to need more is counted at this many
    /// (ptxas would spill the rest to local memory).
    pub max_registers_per_thread: u32,
    /// Fewest registers per thread that Nsight Compute's `launch__registers_per_thread` reports
    /// (0 to `max_registers_per_thread`): a kernel ptxas compiles to fewer reads this many.
    /// Occupancy is unchanged (the allocation unit rounds such counts up at least as far on
    /// the GPUs measured). Optional, default 0 (no floor).
    #[serde(default)]
    pub min_registers_per_thread: u32,
    /// Registers are allocated in multiples of this many (1 to 4096): per warp from compute 2.x
    /// on (256 on 3.x and later, 64 on 2.x), per block on 1.x (512 on 1.2/1.3); the CUDA
    /// occupancy calculator's register allocation unit (`cuda_occupancy.h`,
    /// `cudaOccRegAllocationGranularity`). The register file is split evenly among the SM's
    /// `schedulers` (sub-partitions, `cudaOccSubPartitionsPerMultiprocessor`), each holding whole
    /// warps' registers.
    pub register_allocation_unit: u32,
    /// Memory instructions per cycle that the SM's shared L1/shared-memory/LSU structures accept
    /// (> 0, <= 32); 0.5 = one every two cycles.
    pub lsu_instructions_per_cycle: f64,
    /// Latency of a dependent ALU instruction, in SM cycles (1 to 100).
    pub alu_latency_cycles: u32,
    /// Cycles between two thread blocks starting on one SM when blocks are waiting (the block
    /// dispatch rate; 0 to 10000). Optional: 0 (the default) does not model it.
    #[serde(default)]
    pub block_dispatch_cycles: f64,
    /// Cycles between two warps of a block starting (the SM launches a block's warps one after
    /// another; 0 to 1000). Optional: 0 (the default) starts them together.
    #[serde(default)]
    pub warp_launch_cycles: f64,
    /// Cycles from the last warp's arrival at `bar.sync` to the release, besides
    /// `barrier_cycles_per_warp` per warp of the block (0 to 10000). Optional, default 0.
    #[serde(default)]
    pub barrier_latency_cycles: u32,
    /// Cycles each warp's `bar.sync` occupies the SM's barrier unit, which serializes the
    /// arrivals (0 to 100). Optional, default 0.
    #[serde(default)]
    pub barrier_cycles_per_warp: f64,
    /// Cycles a warp's integer multiply (`mad.lo`, `mul.lo`/`.hi`: SASS IMAD) occupies its
    /// sub-partition's FMA-heavy pipe; a `mul.wide`/`mad.wide` (IMAD.WIDE) takes twice that
    /// (1 to 16). Optional, default 1: the pipe keeps up with issue.
    #[serde(default = "one")]
    pub imad_issue_cycles: u32,
    /// Cycles a warp's integer compare, min/max, logic or shift instruction (`setp`, `selp`,
    /// `min`/`max`, `and`/`or`/`xor`/`not`, `shl`/`shr`, `lop3`, bit fields: SASS ISETP, IMNMX,
    /// LOP3, SHF, ...) occupies its sub-partition's ALU pipe (1 to 16). Optional, default 1.
    #[serde(default = "one")]
    pub alu_issue_cycles: u32,
}

fn one() -> u32 {
    1
}

/// `[shared]`: shared memory (the scratchpad carved out of the unified L1/shared array).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shared {
    /// Shared memory per SM available to resident blocks, in bytes (0 to 1048576).
    pub size_per_sm_bytes: u32,
    /// Shared memory one block may use, in bytes (<= `size_per_sm_bytes`).
    pub size_per_block_bytes: u32,
    /// Shared memory one block may use after the opt-in (`cudaFuncSetAttribute(f,
    /// cudaFuncAttributeMaxDynamicSharedMemorySize, n)`, the workload's
    /// `max_dynamic_shared_bytes`), static plus dynamic, in bytes (`size_per_block_bytes` to
    /// `size_per_sm_bytes`); the device attribute `cudaDevAttrMaxSharedMemoryPerBlockOptin`.
    /// Optional; default `size_per_block_bytes` (no opt-in above it, as before compute 7.0).
    #[serde(default)]
    pub size_per_block_optin_bytes: Option<u32>,
    /// Number of banks: 16 (compute 1.x) or 32.
    pub banks: u32,
    /// Bank width in bytes, the default bank mode: 4 or 8 (Kepler can switch per launch).
    pub bank_width_bytes: u32,
    /// Whether a launch may select 8-byte banks (`bank_mode = 8`; Kepler's
    /// `cudaDeviceSetSharedMemConfig`). Elsewhere the request is ignored, as the hardware does.
    pub bank_width_selectable: bool,
    /// Load-to-use latency of a conflict-free shared load, in SM cycles (1 to 1000).
    pub latency_cycles: u32,
    /// Wavefronts (bank-conflict-free passes) the shared pipeline serves per cycle per SM (> 0, <= 8).
    pub wavefronts_per_cycle: f64,
}

/// `[constant]`: constant memory and its cache hierarchy.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constant {
    /// Size of the constant memory space, in bytes (1 to 1048576).
    pub size_bytes: u32,
    /// Lanes served by one broadcast: 16 (compute 1.x, half-warps) or 32.
    pub broadcast_lanes: u32,
    /// Distinct addresses the indexed constant cache (IDC, LDC instructions) serves per cycle
    /// per SM (> 0, <= 32); a warp's request is split into one request per distinct address.
    pub addresses_per_cycle: f64,
    /// Constant-cache misses an SM keeps in flight (> 0, <= 64): a request served by a farther
    /// level occupies the constant pipeline for that level's latency divided by this.
    pub misses_in_flight: f64,
    /// Requests per cycle that one GPC's constant cache (GCC, the level behind each SM's
    /// constant L1) serves for all the SMs of its GPC together (>= 0, <= 64; 0: no such limit):
    /// every LDC address that misses an SM's nearest constant cache is one request. Optional: 0
    /// (the default).
    #[serde(default)]
    pub gcc_requests_per_cycle: f64,
    /// Cycles within which LDCs of warps of different SM sub-partitions (SMSPs) at the same
    /// instruction are served interleaved, address by address, by the IDC, sharing each line
    /// fill ([`crate::memory::constant::merge`]); 0 to 100000, 0: each warp's LDC served whole
    /// before the next. Optional: 0 (the default).
    #[serde(default)]
    pub smsp_merge_cycles: u32,
    /// Latency of a warp-uniform constant operand that hits the immediate constant cache (IMC),
    /// in SM cycles (0 to 1000).
    pub imc_latency_cycles: u32,
    /// The constant cache levels, nearest first (1 to 3); misses of the last level go to L2.
    pub cache: Vec<ConstantCache>,
}

/// `[[constant.cache]]`: one level of the constant cache hierarchy (per SM).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantCache {
    /// Label for reports (`"L1"`, `"L1.5"`); non-empty.
    pub name: String,
    /// Capacity in bytes: a multiple of `line_bytes * associativity` giving a power-of-two
    /// number of sets, at most 16 MiB.
    pub size_bytes: u64,
    /// Line (fill) size in bytes: a power of two from 4 to 1024.
    pub line_bytes: u32,
    /// Ways per set (1 to 64).
    pub associativity: u32,
    /// Load-to-use latency of a hit at this level, in SM cycles (1 to 2000).
    pub latency_cycles: u32,
}

/// `[l1]`: the per-SM L1 data cache as global loads see it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1 {
    /// Data-cache bytes available to global loads (after the shared-memory carve-out): a
    /// positive multiple of `line_bytes * associativity`, at most 16 MiB.
    pub size_bytes: u64,
    /// Line (tag) size in bytes: a power of two from 32 to 1024.
    pub line_bytes: u32,
    /// Sector (fill and valid-bit) size in bytes: a power of two from 4 to `line_bytes`.
    pub sector_bytes: u32,
    /// Ways per set (1 to 1024).
    pub associativity: u32,
    /// Load-to-use latency of an L1 hit, in SM cycles (1 to 2000).
    pub latency_cycles: u32,
    /// Default cache policy of global loads (`-dlcm`): true = `ca` (cached in L1), false = `cg`
    /// (L2 only).
    pub cache_global_loads: bool,
    /// Bytes per global-memory transaction: `sector_bytes` (32 B, sectored, CC >= 5.x) or
    /// `line_bytes` (128 B, Fermi/Kepler L1-cached line transactions).
    pub transaction_bytes: u32,
    /// L1 data bandwidth in sectors per cycle per SM (> 0, <= 64).
    pub sectors_per_cycle: f64,
    /// Tag lookups per cycle per SM (> 0, <= 64).
    pub tag_lookups_per_cycle: f64,
    /// What a global store does to L1 (the data always goes on to L2).
    pub store_policy: StorePolicy,
    /// Stores of one SM to the same sector issued at most this many cycles apart leave L1 as one
    /// L2 write (0 to 1000). Optional: absent, stores never merge.
    #[serde(default)]
    pub store_merge_cycles: Option<u32>,
    /// Load-to-use latency of a texture fetch or surface load whose sectors all hit L1, in SM
    /// cycles (`latency_cycles` to 4000): the texture pipe's addressing, filtering and format
    /// stages come on top of the L1 lookup. Optional: absent, `latency_cycles`.
    #[serde(default)]
    pub texture_latency_cycles: Option<u32>,
}

/// How L1 treats global stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StorePolicy {
    /// Update the sectors L1 holds, allocate nothing (Volta and later as Accel-Sim models them).
    WriteThrough,
    /// Invalidate the line in L1 (Fermi and Kepler: "L1 is not used for stores").
    WriteEvict,
}

/// `[l2]`: the L2 cache shared by all SMs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2 {
    /// Capacity in bytes: a positive multiple of `line_bytes * associativity`, at most 4 GiB.
    pub size_bytes: u64,
    /// Line (tag) size in bytes: a power of two from 32 to 1024.
    pub line_bytes: u32,
    /// Sector size in bytes: a power of two from 4 to `line_bytes`.
    pub sector_bytes: u32,
    /// Ways per set (1 to 1024).
    pub associativity: u32,
    /// Load-to-use latency of an L2 hit, in SM cycles (1 to 10000).
    pub latency_cycles: u32,
    /// L2 bandwidth of the whole GPU in bytes per SM clock cycle (> 0, <= 1e6): reads, and writes
    /// unless `write_bandwidth_bytes_per_cycle` says otherwise.
    pub bandwidth_bytes_per_cycle: f64,
    /// L2 write bandwidth of the whole GPU in bytes per SM clock cycle (0 to 1e6). Optional: 0
    /// (the default) means `bandwidth_bytes_per_cycle`.
    #[serde(default)]
    pub write_bandwidth_bytes_per_cycle: f64,
    /// Write requests (one per 128-byte line a store touches) the L2 of the whole GPU accepts per
    /// SM clock cycle (0 to 1e6). Optional: 0 (the default) does not limit them.
    #[serde(default)]
    pub write_requests_per_cycle: f64,
    /// SM cycles of one pass of the L2 atomic unit over a sector (0 to 1e6): a pass performs one
    /// operation on each word of the sector, so the lanes of a warp request on one word take one
    /// pass each, and the requests to one 128-byte line are performed one after another.
    /// Optional: 0 (the default) does not limit them.
    #[serde(default)]
    pub same_address_atomic_cycles: f64,
    /// L2 atomic units the 128-byte lines are spread over (0 to 4096; [`crate::memory::system::atomic_unit`]):
    /// the requests of lines that share a unit are performed one after another. Optional: 0
    /// (the default) gives every line a unit of its own.
    #[serde(default)]
    pub atomic_units: u32,
    /// Set displacement of the L2 index (0 to 65535): line `l` (address / `line_bytes`) is kept
    /// in set `(l mod sets + set_displacement * (l / sets)) mod sets`, so that lines a multiple
    /// of the set count apart (rows of a power-of-two pitch) spread over the sets as under the
    /// GPU's unpublished hash ([`crate::memory::cache::SectorCache::with_set_displacement`]). Optional:
    /// 0 (the default) is `l mod sets`.
    #[serde(default)]
    pub set_displacement: u32,
    /// Bytes an L2 read miss fetches from DRAM: the missing sector, or the aligned block of
    /// sectors around it (a multiple of `sector_bytes`, at most `line_bytes`).
    pub fill_bytes: u32,
}

/// `[dram]`: device memory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dram {
    /// Sustained bandwidth in GB/s (1e9 bytes per second; > 0, <= 1e6).
    pub bandwidth_gb_per_s: f64,
    /// Load-to-use latency of a DRAM access (including the L2 miss), in SM cycles
    /// (1 to 100000, >= `l2.latency_cycles`).
    pub latency_cycles: u32,
}

/// `[tensor]`: the tensor pipe of each SM sub-partition (SMSP, one per warp scheduler), which
/// `mma.sync` and `wmma.mma` occupy. Optional: absent (or `form = []`, as on the GPUs before
/// compute capability 7.0, which have no tensor cores) a kernel that uses a tensor instruction is
/// refused at its launch, naming the form the config lacks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tensor {
    /// The forms the GPU executes (`[[tensor.form]]`), each (shape, A/B type, C/D type) at most
    /// once.
    #[serde(default)]
    pub form: Vec<TensorForm>,
}

/// `[[tensor.form]]`: the timing of one form of `mma.sync` (or `wmma.mma`) on the tensor pipe. A
/// warp's instruction occupies its sub-partition's pipe for `issue_cycles` (independent
/// instructions of one or several warps of the sub-partition start that far apart) and its
/// result (D) is ready `latency_cycles` after its issue (a dependent instruction on the same
/// accumulator waits that long).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorForm {
    /// The shape as PTX writes it: `"m16n8k8"`, `"m16n8k16"` or `"m16n8k32"` (`mma.sync`), or
    /// `"m16n16k16"` (`wmma.mma`; without such an entry a `wmma.mma` m16n16k16 takes two of the
    /// config's `m16n8k16` of its types, as ptxas makes it for sm_80 and later).
    pub shape: String,
    /// The type of A and B: `"f16"`, `"bf16"`, `"tf32"` or `"s8"` (the 8-bit integer forms, `.s8`
    /// or `.u8` operands in any mix).
    pub ab_type: String,
    /// The type of C and D (the accumulator): `"f32"`, `"f16"` or `"s32"`; of an instruction
    /// whose C and D differ, D's.
    pub cd_type: String,
    /// Cycles from the instruction's issue until D is ready (1 to 1000).
    pub latency_cycles: u32,
    /// Cycles the instruction occupies its sub-partition's tensor pipe (1 to 1000).
    pub issue_cycles: u32,
}

/// Shape of a set-associative cache, in bytes, as the memory models need it. Build it with
/// [`L1::geometry`], [`L2::geometry`] or [`ConstantCache::geometry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheGeometry {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Line (tag) size in bytes.
    pub line_bytes: u64,
    /// Sector size in bytes (= `line_bytes` for an unsectored cache).
    pub sector_bytes: u64,
    /// Ways per set.
    pub associativity: u64,
}

impl CacheGeometry {
    /// Number of sets, `size / (line * associativity)`; 0 if the geometry is degenerate (a
    /// validated config never is).
    pub fn sets(&self) -> u64 {
        self.size_bytes
            .checked_div(self.line_bytes.saturating_mul(self.associativity))
            .unwrap_or(0)
    }

    /// Sectors per line, `line / sector`; 0 if the geometry is degenerate.
    pub fn sectors_per_line(&self) -> u64 {
        self.line_bytes.checked_div(self.sector_bytes).unwrap_or(0)
    }
}

impl L1 {
    /// The L1 data cache's shape.
    pub fn geometry(&self) -> CacheGeometry {
        CacheGeometry {
            size_bytes: self.size_bytes,
            line_bytes: self.line_bytes.into(),
            sector_bytes: self.sector_bytes.into(),
            associativity: self.associativity.into(),
        }
    }
}

impl L2 {
    /// The L2 cache's shape.
    pub fn geometry(&self) -> CacheGeometry {
        CacheGeometry {
            size_bytes: self.size_bytes,
            line_bytes: self.line_bytes.into(),
            sector_bytes: self.sector_bytes.into(),
            associativity: self.associativity.into(),
        }
    }
}

impl ConstantCache {
    /// This level's shape; constant caches are unsectored, so `sector_bytes = line_bytes`.
    pub fn geometry(&self) -> CacheGeometry {
        CacheGeometry {
            size_bytes: self.size_bytes,
            line_bytes: self.line_bytes.into(),
            sector_bytes: self.line_bytes.into(),
            associativity: self.associativity.into(),
        }
    }
}

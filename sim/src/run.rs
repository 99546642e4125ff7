//! Running a workload: lay out memory, decode each launch's kernel, execute it through the memory
//! hierarchy, and price it. This is the one place the stages meet; each stage stays ignorant of
//! the others' inputs.
//!
//! This file holds the options, the results and the execution of a plan ([`execute`]); making
//! the plan ([`plan`]: the PTX, the registers of each launch) is in `resolve`, and laying out
//! memory (module variables, a kernel's symbols, the constant bank, the parameter buffer) in
//! `layout`.

use crate::config::GpuConfig;
use crate::error::Result;
use crate::exec::{self, Dims, Launch};
use crate::memory::system::MemorySystem;
use crate::memory::MemoryImage;
use crate::metrics::{Counters, PcStats};
use crate::pipeline;
use crate::ptx::ast::LineLoc;
use crate::timing::{self, Timing};
use crate::workload::Workload;
use std::collections::BTreeMap;

mod layout;
mod resolve;
mod sass;
pub mod sources;
mod texture;

pub use resolve::plan;

/// Called as blocks finish: (launch label, blocks done, blocks in the launch).
pub type Progress = std::sync::Arc<exec::ProgressFn>;

/// How to run a workload.
#[derive(Clone)]
pub struct Options {
    /// `--set NAME=VALUE` parameter overrides.
    pub sets: Vec<(String, i64)>,
    /// Run each launch twice and report the second (back-to-back timing): L2 keeps what the
    /// first left, every SM's L1 and nearest constant cache start empty
    /// ([`crate::memory::system::MemorySystem::next_launch`]).
    pub warm: bool,
    /// Keep a copy of every output buffer after each launch.
    pub keep_outputs: bool,
    /// Warp-instruction budget per launch.
    pub max_warp_instructions: u64,
    /// Only the launches with these labels (all when empty).
    pub only: Vec<String>,
    /// Progress reports for long runs (the `sim` binary draws a bar); `None`: silent.
    pub progress: Option<Progress>,
    /// Which waves of each launch to simulate (default: all, unless the grid is very large).
    pub sampling: exec::Sampling,
    /// The compiler for workloads that name a CUDA source (`cuda = "kernel.cu"`).
    pub compiler: crate::compile::Compiler,
    /// Compiler options for workloads that name a CUDA source (`--nvrtc-option`), after the
    /// workload's own `nvrtc_options`.
    pub nvrtc_options: Vec<String>,
    /// Registers per thread of every launch (`--registers`), over the workload's `registers`
    /// and the estimate from the PTX.
    pub registers: Option<u32>,
    /// Which of the simulator's equivalent paths to take ([`exec::Paths`]; the default is the
    /// fast one): tests compare them.
    pub paths: exec::Paths,
    /// The order of the turns of an SM's co-resident warps in the functional pass
    /// ([`exec::turns::Order`]; the default is the replay's).
    pub order: exec::turns::Order,
    /// Measure how far the functional order agrees with the replay's, per launch
    /// ([`exec::Launch::probe_order`]).
    pub probe_order: bool,
    /// The compute-sanitizer-like checks besides memcheck (`--check`).
    pub checks: exec::barrier::Checks,
    /// Which ptxas gives the registers per thread of launches that do not give their own
    /// (default: the first found; [`crate::sass::Settings::off`]: the estimate from the PTX).
    pub ptxas: crate::sass::Settings,
    /// The host memory a run may take (`--max-memory`), in bytes; besides it, the run takes at
    /// most 3/4 of what the host has ([`crate::memory::Budget`]).
    pub max_memory: Option<u64>,
    /// Size of the printf FIFO in bytes (`--printf-fifo-bytes`, the `cudaLimitPrintfFifoSize`
    /// a host sets with `cudaDeviceSetLimit`); default [`exec::printf::DEFAULT_FIFO_BYTES`].
    pub printf_fifo_bytes: Option<u64>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("sets", &self.sets)
            .field("warm", &self.warm)
            .field("keep_outputs", &self.keep_outputs)
            .field("max_warp_instructions", &self.max_warp_instructions)
            .field("only", &self.only)
            .field("progress", &self.progress.is_some())
            .field("sampling", &self.sampling)
            .field("compiler", &self.compiler)
            .field("nvrtc_options", &self.nvrtc_options)
            .field("registers", &self.registers)
            .field("paths", &self.paths)
            .field("order", &self.order)
            .field("probe_order", &self.probe_order)
            .field("checks", &self.checks)
            .field("ptxas", &self.ptxas)
            .field("max_memory", &self.max_memory)
            .field("printf_fifo_bytes", &self.printf_fifo_bytes)
            .finish()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sets: vec![],
            warm: false,
            keep_outputs: false,
            max_warp_instructions: 1 << 34,
            only: vec![],
            progress: None,
            sampling: exec::Sampling::Auto,
            compiler: crate::compile::Compiler::Auto,
            nvrtc_options: vec![],
            registers: None,
            paths: exec::Paths::default(),
            order: exec::turns::Order::default(),
            probe_order: false,
            checks: Default::default(),
            ptxas: crate::sass::Settings::default(),
            max_memory: None,
            printf_fifo_bytes: None,
        }
    }
}

/// The result of one launch.
#[derive(Debug, Clone)]
pub struct LaunchResult {
    /// Label.
    pub label: String,
    /// PTX entry.
    pub kernel: String,
    /// Blocks per grid.
    pub grid: [u32; 3],
    /// Threads per block.
    pub block: [u32; 3],
    /// Counters.
    pub counters: Counters,
    /// Predicted time.
    pub timing: Timing,
    /// Blocks resident per SM.
    pub occupancy_blocks: u32,
    /// The occupancy and its limits.
    pub occupancy: exec::Occupancy,
    /// Registers per thread the occupancy was computed with.
    pub registers: u32,
    /// Where that number came from.
    pub registers_source: RegisterSource,
    /// The SASS that the warp-instruction counts came from (`None`: estimated from the PTX).
    pub instructions_source: Option<crate::sass::SassBuild>,
    /// Why they are estimated, where they are and something kept the SASS from being used.
    pub instructions_note: Option<String>,
    /// SASS warp instructions per PTX line, where the launch was counted on its SASS
    /// (`instructions_source`; empty otherwise): what the source view counts per line.
    pub sass_per_line: std::collections::BTreeMap<u32, u64>,
    /// Registers per thread the GPU allocates, as Nsight Compute's `launch__registers_per_thread`
    /// reports them: `registers`, at least the config's `sm.min_registers_per_thread`.
    pub allocated_registers: u32,
    /// Per-instruction statistics with the PTX line and text of each instruction.
    pub per_pc: Vec<(u32, String, PcStats)>,
    /// The CUDA source location (`.loc`) of each instruction of `per_pc`, `None` where the PTX
    /// has none; [`WorkloadRun::line_files`] names the files.
    pub locs: Vec<Option<LineLoc>>,
    /// Output buffers after the launch (when asked for): (name, bytes).
    pub outputs: Vec<(String, Vec<u8>)>,
    /// Things the user should know about how the launch was interpreted.
    pub notes: Vec<String>,
    /// With [`Options::probe_order`]: how far the functional order of SM 0's global and local
    /// accesses agrees with the timing replay's.
    pub order: Option<crate::trace::order::Agreement>,
    /// Set when only some waves were simulated.
    pub sampled: Option<exec::SampleInfo>,
    /// With racecheck ([`Options::checks`]): each distinct shared-memory hazard, as a message
    /// naming its kind, both instructions (PTX and CUDA line), threads, block and count.
    pub hazards: Vec<String>,
    /// What the launch's `printf` calls printed ([`exec::printf`]).
    pub printf: Printf,
}

/// The output of a launch's `printf` calls, as the host prints it after the launch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printf {
    /// The text: each call's, in the order of [`exec::printf::order`] (block, warp, the warp's
    /// calls in order, lane).
    pub text: Vec<u8>,
    /// Calls made.
    pub calls: u64,
    /// Calls overwritten because the FIFO ([`Options::printf_fifo_bytes`]) overflowed: the
    /// oldest, whose text is missing from `text`.
    pub overwritten: u64,
}

/// Where a launch's registers per thread came from, in order of precedence: given (`--registers`
/// over the launch's `registers = N`), ptxas's count, the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegisterSource {
    /// Estimated from the PTX ([`exec::regs::estimate`]).
    Estimated,
    /// Given by the user: the workload's `registers` or `--registers`.
    Given,
    /// `ptxas -v`'s `Used N registers` for the config's architecture ([`crate::sass`]).
    Ptxas(crate::sass::Build),
}

impl RegisterSource {
    /// `estimated`, `given` or `ptxas`: the JSON report's `registers_per_thread_source`.
    pub fn name(self) -> &'static str {
        match self {
            RegisterSource::Estimated => "estimated",
            RegisterSource::Given => "given",
            RegisterSource::Ptxas(_) => "ptxas",
        }
    }

    /// Where the number came from, for people: `estimated from the PTX`, `given`, `ptxas 12.9
    /// sm_86` (the table's words and the JSON report's `registers_per_thread_from`).
    pub fn describe(self) -> String {
        match self {
            RegisterSource::Estimated => "estimated from the PTX".to_string(),
            RegisterSource::Given => "given".to_string(),
            RegisterSource::Ptxas(b) => b.to_string(),
        }
    }
}

/// The note a sampled launch carries.
fn sample_note(s: &exec::SampleInfo) -> String {
    format!(
        "sampled: simulated {} of {} waves (wave 0, every {}th, and the last), counters and time \
extrapolated; estimated error of the time +-{:.1}% (95%); blocks of the other waves computed no \
outputs (--sample full simulates every block)",
        s.simulated,
        s.waves,
        s.every,
        100.0 * s.error
    )
}

/// The compilation of a workload's CUDA source (`cuda = "kernel.cu"`), as reports show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CompiledBy {
    /// The CUDA source (`tests/fixtures/user_kernel/histogram.cu`).
    pub source: String,
    /// The compiler and its version (`NVRTC 12.9`, `clang 19.1.7`).
    pub compiler: String,
    /// The target architecture (`sm_90`).
    pub arch: String,
}

/// The result of a workload.
#[derive(Debug, Clone)]
pub struct WorkloadRun {
    /// Workload name.
    pub workload: String,
    /// Its description.
    pub description: String,
    /// Parameters after overrides.
    pub params: BTreeMap<String, i64>,
    /// Where the PTX came from: its file, or the CUDA source and its compiler.
    pub ptx: String,
    /// Who compiled the PTX, for a workload that names a CUDA source.
    pub compiled: Option<CompiledBy>,
    /// Launches in order.
    pub launches: Vec<LaunchResult>,
    /// The `.file` table of the PTX's line info: (index, name as the PTX writes it).
    pub line_files: Vec<(u32, String)>,
    /// Those files with their text, where found ([`sources::find`]; empty until a caller that
    /// shows source text looks for them).
    pub sources: Vec<sources::SourceFile>,
    /// The output buffers, whose bytes each launch's `outputs` holds (with
    /// [`Options::keep_outputs`]).
    pub outputs: Vec<OutputBuffer>,
}

/// A kernel argument as the GPU side needs it: a buffer's address, or literal bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedArg {
    /// The device address of the named buffer (8 bytes).
    Buffer(String),
    /// The parameter's bytes, little-endian.
    Bytes(Vec<u8>),
    /// The handle of the named texture or surface object ([`Plan::objects`]; 8 bytes).
    Object(String),
}

/// One launch, made concrete.
#[derive(Debug, Clone)]
pub struct PlannedLaunch {
    /// Label (`constant`).
    pub label: String,
    /// PTX entry.
    pub kernel: String,
    /// The decoded kernel.
    pub program: exec::Program,
    /// The parameter buffer with the simulator's buffer addresses.
    pub params: Vec<u8>,
    /// The arguments in PTX parameter order, for a real GPU (its buffer addresses differ).
    pub args: Vec<PlannedArg>,
    /// Grid and block.
    pub dims: Dims,
    /// Dynamic shared memory in bytes (what a real launch passes).
    pub dynamic_shared_bytes: u64,
    /// The launch's `max_dynamic_shared_bytes` opt-in, which a real GPU run sets as the
    /// function's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` before launching.
    pub max_dynamic_shared_bytes: Option<u64>,
    /// Static plus dynamic shared memory in bytes.
    pub shared_bytes: u64,
    /// Local memory per thread in bytes.
    pub local_bytes: u64,
    /// Registers per thread, for occupancy.
    pub registers: u32,
    /// Where that number came from.
    pub registers_source: RegisterSource,
    /// The kernel's SASS for the config's architecture, when ptxas and nvdisasm made it: the
    /// warp-instruction counts are then the SASS's ([`crate::sass::count`]). Else why not
    /// (`None`: ptxas turned off), shown as the report's `instructions_from`.
    pub sass: std::result::Result<crate::sass::KernelSass, Option<String>>,
    /// Global loads cached in L1 by default (`dlcm=ca`).
    pub cache_global_loads: bool,
    /// Shared-memory bank width in bytes.
    pub bank_width: u32,
    /// Things the user should know about how the launch was interpreted.
    pub notes: Vec<String>,
}

/// A workload made concrete: its PTX, the initial memory and every launch's kernel, arguments and
/// shape. The simulator executes it ([`execute`]); the `validate` crate replays it on a real GPU.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The workload, parameters overridden.
    pub workload: Workload,
    /// Who compiled the PTX, for a workload that names a CUDA source (`None`: PTX from a file).
    pub compiled: Option<CompiledBy>,
    /// Where the PTX came from, for messages.
    pub ptx_name: String,
    /// The PTX text.
    pub ptx_text: String,
    /// Initial device memory: buffers, `.global` variables, the constant bank.
    pub image: MemoryImage,
    /// Initial contents of every module `.const` variable and of every `.global` one with data
    /// (an initializer, or a workload `[[constant]]`; the others are zero): (symbol, bytes).
    pub symbols: Vec<(String, Vec<u8>)>,
    /// The launches, in order (filtered by [`Options::only`]).
    pub launches: Vec<PlannedLaunch>,
    /// The `.file` table of the PTX's line info: (index, name as the PTX writes it).
    pub line_files: Vec<(u32, String)>,
    /// The output buffers (`output = true`), in the workload's order.
    pub outputs: Vec<OutputBuffer>,
    /// The texture and surface objects (`[[texture]]`, `[[surface]]`), textures first; a
    /// kernel argument that names one holds its [`exec::texture::TexObject::handle`].
    pub objects: Vec<exec::texture::TexObject>,
}

/// An output buffer (`output = true`) of a workload: what its bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputBuffer {
    /// Its name.
    pub name: String,
    /// Its element type (`u8`, `f32`, ...).
    pub ty: String,
    /// Its dimensions, outermost first (the workload's `shape`, else `[count]`).
    pub shape: Vec<u64>,
}

/// Runs every launch of `w` on the GPU described by `cfg`: [`plan`], then [`execute`].
pub fn run_workload(cfg: &GpuConfig, w: &Workload, opts: &Options) -> Result<WorkloadRun> {
    let p = plan(cfg, w, opts)?;
    execute(cfg, p, opts)
}

/// Executes a [`Plan`]'s launches in order on the simulated GPU, each with cold caches (or warm,
/// with [`Options::warm`]), on one memory image that carries results from launch to launch.
pub fn execute(cfg: &GpuConfig, plan: Plan, opts: &Options) -> Result<WorkloadRun> {
    // Allocations one launch's SMs leave for the next (each launch starts them afresh), kept from
    // the process's last run and left for its next one.
    let mut scratch = exec::Scratch::kept();
    let run = execute_with(cfg, plan, opts, &mut scratch)?;
    scratch.keep();
    Ok(run)
}

/// [`execute`], the launches' SMs starting from the allocations in `scratch` and leaving theirs
/// there.
pub(crate) fn execute_with(
    cfg: &GpuConfig,
    plan: Plan,
    opts: &Options,
    scratch: &mut exec::Scratch,
) -> Result<WorkloadRun> {
    let Plan {
        workload: w,
        mut image,
        launches: planned,
        compiled,
        ptx_name,
        line_files,
        outputs: output_buffers,
        objects,
        ..
    } = plan;
    let mut launches = vec![];
    for p in &planned {
        let launch = Launch {
            label: &p.label,
            program: &p.program,
            params: p.params.clone(),
            dims: p.dims,
            shared_bytes: p.shared_bytes,
            local_bytes: p.local_bytes,
            registers: p.registers,
            cache_global_loads: p.cache_global_loads,
            bank_width: p.bank_width,
            max_warp_instructions: opts.max_warp_instructions,
            progress: opts.progress.as_deref(),
            sampling: opts.sampling,
            paths: opts.paths,
            order: opts.order,
            probe_order: opts.probe_order,
            checks: opts.checks,
            objects: &objects,
            memory_left: image.memory_left(&crate::memory::Budget {
                max: opts.max_memory,
            }),
        };
        let mut mem = MemorySystem::with_line_records(cfg, !opts.paths.line_records_off);
        if opts.warm {
            pipeline::run_with(cfg, &launch, &mut image, &mut mem, scratch)?;
            mem.next_launch();
        }
        let mut stats = pipeline::run_with(cfg, &launch, &mut image, &mut mem, scratch)?;
        // Warp instructions as the GPU counts them: SASS, from the PTX (timing::sass), or from
        // the kernel's own SASS where ptxas and nvdisasm listed it.
        stats.counters.inst_executed = stats.sms.iter().map(|w| w.issue_slots).sum();
        let (mut instructions_source, mut instructions_note) = (None, None);
        let mut sass_per_line = Default::default();
        match &p.sass {
            Ok(k) => match sass::sass_counts(k, &p.program, &stats.per_pc) {
                Ok(s) => {
                    sass::apply_sass_counts(&mut stats.counters, &s);
                    instructions_source = Some(k.build);
                    sass_per_line = s.per_line.into_iter().collect();
                }
                Err(why) => instructions_note = Some(format!("{}: {why}", k.build)),
            },
            Err(note) => instructions_note = note.clone(),
        }
        let c = &stats.counters;
        let mut timing = timing::estimate(
            cfg,
            &stats.sms,
            timing::Traffic {
                // Atomics and reductions read and write their sectors in L2.
                l2_read_sectors: c.l2_read_sectors + c.l2_atom_sectors + c.l2_red_sectors,
                l2_write_sectors: c.l2_write_sectors,
                dram_bytes: c.dram_read_bytes + c.dram_write_bytes,
                atomic_line_cycles: stats.atomic_line_cycles,
            },
            p.dims.block_threads().div_ceil(32),
        );
        if opts.warm {
            timing::back_to_back(cfg, &mut timing);
        }
        let outputs = if opts.keep_outputs {
            w.buffers
                .iter()
                .filter(|b| b.output)
                .filter_map(|b| {
                    image
                        .by_name(&b.name)
                        .map(|a| (b.name.clone(), a.contents().into_owned()))
                })
                .collect()
        } else {
            vec![]
        };
        let per_pc = stats
            .per_pc
            .iter()
            .enumerate()
            .map(|(i, s)| (p.program.lines[i], p.program.texts[i].clone(), s.clone()))
            .collect();
        let printf = printf_output(stats.prints, opts.printf_fifo_bytes);
        let printf_note = (printf.overwritten > 0).then(|| {
            format!(
                "printf: {} of {} calls overwritten (the oldest): they overflowed the {}-byte \
                 printf FIFO (cudaLimitPrintfFifoSize; --printf-fifo-bytes)",
                printf.overwritten,
                printf.calls,
                opts.printf_fifo_bytes
                    .unwrap_or(exec::printf::DEFAULT_FIFO_BYTES)
            )
        });
        launches.push(LaunchResult {
            label: p.label.clone(),
            kernel: p.kernel.clone(),
            grid: p.dims.grid,
            block: p.dims.block,
            counters: stats.counters,
            timing,
            occupancy_blocks: stats.occupancy_blocks,
            occupancy: stats.occupancy,
            registers: p.registers,
            registers_source: p.registers_source,
            instructions_source,
            sass_per_line,
            instructions_note,
            allocated_registers: p.registers.max(cfg.sm.min_registers_per_thread),
            per_pc,
            locs: p.program.locs.clone(),
            outputs,
            notes: p
                .notes
                .iter()
                .cloned()
                .chain(stats.sampled.as_ref().map(sample_note))
                .chain(printf_note)
                .collect(),
            sampled: stats.sampled,
            order: stats.order,
            hazards: (stats.hazards.iter())
                .map(|h| hazard_message(h, &p.program, p.dims.block, p.dims.grid))
                .collect(),
            printf,
        });
    }
    Ok(WorkloadRun {
        workload: w.name.clone(),
        description: w.description.clone(),
        params: w.params.clone(),
        ptx: ptx_name,
        compiled,
        launches,
        line_files,
        sources: vec![],
        outputs: output_buffers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str) -> GpuConfig {
        let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
        GpuConfig::load(std::path::Path::new(&path)).expect("shipped config")
    }

    /// Runs bundled workload `name` with `--set` overrides `sets`, its SMs starting from `scratch`.
    fn run_from(
        cfg: &GpuConfig,
        name: &str,
        sets: &[(&str, i64)],
        s: &mut exec::Scratch,
    ) -> String {
        let w = Workload::resolve(name).expect("bundled workload");
        let opts = Options {
            sets: sets.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            keep_outputs: true,
            ..Options::default()
        };
        let plan = plan(cfg, &w, &opts).expect("plans");
        format!("{:?}", execute_with(cfg, plan, &opts, s).expect("runs"))
    }

    /// A kernel that writes the `iota` buffer it reads (in place, `src[i] = src[i] + 1`) on
    /// every SM: the first write puts the buffer's formula in memory (memory::formula) while
    /// other threads read it; each lane reads its element before writing it, so the result is
    /// exact whatever the order, and the same on one host thread.
    #[test]
    fn a_kernel_writing_its_iota_input_in_place_reads_and_writes_it_exactly() {
        let dir = format!("{}/../tests/fixtures", env!("CARGO_MANIFEST_DIR"));
        let text = include_str!("../../tests/fixtures/add_one.toml")
            .replace("init = \"zeros\"\noutput = true", "init = \"zeros\"")
            .replace("init = \"iota\"", "init = \"iota\"\noutput = true")
            .replace(
                "args = [\"dst\", \"src\", \"n\"]",
                "args = [\"src\", \"src\", \"n\"]",
            );
        let source =
            crate::workload::Source::File(std::path::Path::new(&dir).join("in_place.toml"));
        let w = Workload::from_toml_str(&text, source).expect("workload parses");
        let n = 100_000;
        let opts = Options {
            sets: vec![("n".into(), n)],
            keep_outputs: true,
            ..Options::default()
        };
        let want: Vec<u8> = (1..=n as i32).flat_map(i32::to_le_bytes).collect();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            let run = pool
                .unwrap()
                .install(|| run_workload(&config("rtx3090.toml"), &w, &opts));
            let run = run.expect("runs");
            let outputs = &run.launches[0].outputs;
            assert_eq!(outputs.len(), 1, "{threads} threads");
            assert_eq!(outputs[0].0, "src");
            assert!(outputs[0].1 == want, "{threads} threads");
        }
    }

    /// A run whose SMs start from what other workloads' runs left (register files of other
    /// shapes, logs, replay state; on GPUs of other SM counts) gives the results of a run from
    /// an empty scratch, as [`execute`]'s reuse across runs of a process relies on.
    #[test]
    fn runs_from_an_earlier_runs_scratch_match_runs_from_an_empty_one() {
        let (rtx, t4) = (config("rtx3090.toml"), config("t4.toml"));
        // (GPU, workload, `--set` overrides)
        type Case<'a> = (&'a GpuConfig, &'a str, &'a [(&'a str, i64)]);
        let runs: [Case; 8] = [
            (&rtx, "transpose_smem", &[("n", 64)]),
            (&rtx, "pseudo_random", &[("n", 20_000)]),
            (&t4, "reduce", &[("n", 16_384)]),
            (&rtx, "read_stride", &[("n", 4096)]),
            (&rtx, "conv2d", &[("n", 64)]),
            (&t4, "stencil_1d", &[("n", 8192)]),
            (&rtx, "smem_stride", &[]),
            (&t4, "transpose_smem", &[("n", 64)]),
        ];
        let fresh: Vec<String> = (runs.iter())
            .map(|&(cfg, w, sets)| run_from(cfg, w, sets, &mut exec::Scratch::default()))
            .collect();
        // Forwards, then backwards: each shape follows others, larger and smaller.
        let mut shared = exec::Scratch::default();
        for k in (0..runs.len()).chain((0..runs.len()).rev()) {
            let (cfg, w, sets) = runs[k];
            assert_eq!(
                run_from(cfg, w, sets, &mut shared),
                fresh[k],
                "{w} after others"
            );
        }
    }
}

/// The racecheck warning of hazard `h` of a launch of `program` with blocks of shape `block`
/// in grid `grid`: its kind, the two accesses (PTX line, CUDA `file:line` where `.loc` gives
/// one, thread), block, shared offset and count.
fn hazard_message(
    h: &exec::race::Hazard,
    program: &crate::ptx::decode::Program,
    block: [u32; 3],
    grid: [u32; 3],
) -> String {
    let at = |(pc, t): (u32, u32)| {
        let pc = pc as usize;
        let (x, y, z) = exec::barrier::thread(t, block);
        format!(
            "thread ({x},{y},{z}) at {}: `{}`",
            program.place(pc),
            program.texts[pc]
        )
    };
    let b = h.block;
    let (bx, by) = (u64::from(grid[0]), u64::from(grid[1]));
    format!(
        "racecheck: {} hazard on shared memory between {} and {} with no barrier between them, block ({},{},{}), shared offset {:#x} ({} byte pairs)",
        h.kind,
        at(h.first),
        at(h.second),
        b % bx,
        b / bx % by,
        b / (bx * by),
        h.offset,
        h.count
    )
}

/// The launch's `printf` text from its calls: ordered, then cut to the FIFO
/// (`fifo_bytes`, default [`exec::printf::DEFAULT_FIFO_BYTES`]).
fn printf_output(mut prints: Vec<exec::printf::Print>, fifo_bytes: Option<u64>) -> Printf {
    let calls = prints.len() as u64;
    exec::printf::order(&mut prints);
    let fifo = fifo_bytes.unwrap_or(exec::printf::DEFAULT_FIFO_BYTES);
    let overwritten = exec::printf::fit_fifo(&mut prints, fifo) as u64;
    Printf {
        text: prints.into_iter().flat_map(|p| p.text).collect(),
        calls,
        overwritten,
    }
}

//! Running a workload: lay out memory, decode each launch's kernel, execute it through the memory
//! hierarchy, and price it. This is the one place the stages meet; each stage stays ignorant of
//! the others' inputs.

use crate::config::GpuConfig;
use crate::error::Result;
use crate::exec::{self, Dims, Launch, SymbolAddr};
use crate::memory::system::MemorySystem;
use crate::memory::MemoryImage;
use crate::metrics::{Counters, PcStats};
use crate::pipeline;
use crate::ptx::{self, Module, StateSpace, Type};
use crate::timing::{self, Timing};
use crate::workload::init::{self, Elem};
use crate::workload::{Arg, Workload};
use std::collections::{BTreeMap, HashMap};

/// Called as blocks finish: (launch label, blocks done, blocks in the launch).
pub type Progress = std::sync::Arc<exec::ProgressFn>;

/// How to run a workload.
#[derive(Clone)]
pub struct Options {
    /// `--set NAME=VALUE` parameter overrides.
    pub sets: Vec<(String, i64)>,
    /// Run each launch twice on the same caches and report the second (back-to-back timing).
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
    /// Registers per thread of every launch (`--registers`), over the workload's `registers`
    /// and the estimate from the PTX.
    pub registers: Option<u32>,
    /// Which of the simulator's equivalent paths to take ([`exec::Paths`]; the default is the
    /// fast one): tests compare them.
    pub paths: exec::Paths,
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
            .field("registers", &self.registers)
            .field("paths", &self.paths)
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
            registers: None,
            paths: exec::Paths::default(),
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
    /// Per-instruction statistics with the PTX line and text of each instruction.
    pub per_pc: Vec<(u32, String, PcStats)>,
    /// Output buffers after the launch (when asked for): (name, bytes).
    pub outputs: Vec<(String, Vec<u8>)>,
    /// Things the user should know about how the launch was interpreted.
    pub notes: Vec<String>,
    /// Set when only some waves were simulated.
    pub sampled: Option<exec::SampleInfo>,
}

/// Where a launch's registers per thread came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegisterSource {
    /// Estimated from the PTX ([`exec::regs::estimate`]).
    Estimated,
    /// Given by the user: the workload's `registers` or `--registers`.
    Given,
}

impl RegisterSource {
    /// `estimated` or `given`.
    pub fn name(self) -> &'static str {
        match self {
            RegisterSource::Estimated => "estimated",
            RegisterSource::Given => "given",
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

/// The result of a workload.
#[derive(Debug, Clone)]
pub struct WorkloadRun {
    /// Workload name.
    pub workload: String,
    /// Its description.
    pub description: String,
    /// Parameters after overrides.
    pub params: BTreeMap<String, i64>,
    /// Launches in order.
    pub launches: Vec<LaunchResult>,
}

/// A kernel argument as the GPU side needs it: a buffer's address, or literal bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedArg {
    /// The device address of the named buffer (8 bytes).
    Buffer(String),
    /// The parameter's bytes, little-endian.
    Bytes(Vec<u8>),
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
    /// Static plus dynamic shared memory in bytes.
    pub shared_bytes: u64,
    /// Local memory per thread in bytes.
    pub local_bytes: u64,
    /// Registers per thread, for occupancy.
    pub registers: u32,
    /// Where that number came from.
    pub registers_source: RegisterSource,
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
    /// Where the PTX came from, for messages.
    pub ptx_name: String,
    /// The PTX text.
    pub ptx_text: String,
    /// Initial device memory: buffers, `.global` variables, the constant bank.
    pub image: MemoryImage,
    /// Initial contents of every module `.const`/`.global` variable with data: (symbol, bytes).
    pub symbols: Vec<(String, Vec<u8>)>,
    /// The launches, in order (filtered by [`Options::only`]).
    pub launches: Vec<PlannedLaunch>,
}

/// Runs every launch of `w` on the GPU described by `cfg`: [`plan`], then [`execute`].
pub fn run_workload(cfg: &GpuConfig, w: &Workload, opts: &Options) -> Result<WorkloadRun> {
    let p = plan(cfg, w, opts)?;
    execute(cfg, p, opts)
}

/// Resolves `w` against `cfg`: parses the PTX, builds the initial memory, decodes each launch.
pub fn plan(cfg: &GpuConfig, w: &Workload, opts: &Options) -> Result<Plan> {
    let mut w = w.clone();
    w.set_params(&opts.sets)?;
    let (ptx_name, text) = match &w.cuda {
        Some(cu) => compile_source(cfg, &w, cu, opts.compiler)?,
        None => {
            let (ptx_name, bytes) = w.source.read_relative(&w.ptx)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| w.err("ptx", format!("{ptx_name} is not UTF-8 text")))?;
            (ptx_name, text)
        }
    };
    let module = ptx::parse(&text, &ptx_name)?;
    if module.address_size != 64 {
        return Err(w.err(
            "ptx",
            format!(
                "{ptx_name}: .address_size {} is not supported (only 64-bit addressing)",
                module.address_size
            ),
        ));
    }

    let mut image = MemoryImage::new(cfg.constant.size_bytes as usize);
    let mut symbols = layout_module(&module, &mut image, &w)?;
    let mut buffers: HashMap<String, u64> = HashMap::new();
    let read_file = |p: &str| {
        w.source
            .read_relative(p)
            .map(|(_, d)| d)
            .map_err(|e| e.to_string())
    };
    for (i, b) in w.buffers.iter().enumerate() {
        let key = format!("buffer[{i}]");
        let elem = Elem::parse(&b.ty)
            .ok_or_else(|| w.err(&format!("{key}.type"), format!("unknown type `{}`", b.ty)))?;
        let count = w.eval(&b.count, &format!("{key}.count"))?;
        let count = usize::try_from(count)
            .map_err(|_| w.err(&format!("{key}.count"), format!("= {count}, must be >= 0")))?;
        // An `iota` buffer stays its formula until a kernel writes it (memory::formula); a large
        // buffer of zeros is fresh pages, not a pass of zeros (memory::host::HostBytes).
        let bytes = (count.checked_mul(elem.bytes()))
            .ok_or_else(|| format!("{count} elements of {} bytes overflow", elem.bytes()));
        let too_big = |m: String| format!("{count} elements of {} bytes: {m}", elem.bytes());
        let base = match init::formula(&b.init, elem) {
            Some(f) => bytes
                .and_then(|n| image.alloc_formula(&b.name, f, n).map_err(too_big))
                .map_err(|m| w.err(&format!("{key}.init"), m))?,
            None if b.init == "zeros" => bytes
                .and_then(|n| image.alloc_zeros(&b.name, n).map_err(too_big))
                .map_err(|m| w.err(&format!("{key}.init"), m))?,
            None => {
                let data = init::build(&b.init, elem, count, &read_file)
                    .map_err(|m| w.err(&format!("{key}.init"), m))?;
                image.alloc(&b.name, data)
            }
        };
        if buffers.insert(b.name.clone(), base).is_some() {
            return Err(w.err(
                &format!("{key}.name"),
                format!("a second buffer named `{}`", b.name),
            ));
        }
    }
    for (i, c) in w.constants.iter().enumerate() {
        init_constant(&module, &mut image, &symbols, &w, i, c, &read_file)?;
    }
    let symbol_data = module
        .globals
        .iter()
        .filter_map(|v| match symbols.get(&v.name)? {
            SymbolAddr::Const(off) => Some((
                v.name.clone(),
                image.constant[*off as usize..(*off + v.size_bytes()) as usize].to_vec(),
            )),
            SymbolAddr::Global(a) => image
                .allocs
                .iter()
                .find(|x| x.base == *a)
                .map(|x| (v.name.clone(), x.contents().into_owned())),
            _ => None,
        })
        .collect();

    let mut launches = vec![];
    for (i, spec) in w.launches.iter().enumerate() {
        if !opts.only.is_empty() && !opts.only.contains(&spec.label) {
            continue;
        }
        let key = format!("launch[{i}]");
        let f = module.entry(&spec.kernel).ok_or_else(|| {
            let names: Vec<&str> = module
                .functions
                .iter()
                .filter(|f| f.is_entry)
                .map(|f| f.name.as_str())
                .collect();
            w.err(
                &format!("{key}.kernel"),
                format!(
                    "no entry `{}` in {ptx_name} (entries: {})",
                    spec.kernel,
                    names.join(", ")
                ),
            )
        })?;
        let inlined = ptx::inline::inline_calls(&module, f, &text, &ptx_name)?;
        let f = &inlined;
        let (param_bytes, dynamic_shared_at, local) = layout_kernel(&module, f, &mut symbols);
        let program = exec::decode(f, &symbols, &text, &ptx_name)?;
        let (params, args) = build_params(f, spec, &buffers, &w, &key, param_bytes)?;
        let dims = Dims {
            grid: w.dims(&spec.grid, &format!("{key}.grid"))?,
            block: w.dims(&spec.block, &format!("{key}.block"))?,
        };
        let dynamic = match &spec.shared_bytes {
            Some(e) => w.eval(e, &format!("{key}.shared_bytes"))?,
            None => 0,
        };
        if dynamic < 0 {
            return Err(w.err(
                &format!("{key}.shared_bytes"),
                format!("= {dynamic}, must be >= 0"),
            ));
        }
        let cache_global_loads = match spec.dlcm.as_deref() {
            None => cfg.l1.cache_global_loads,
            Some("ca") => true,
            Some("cg") => false,
            Some(o) => {
                return Err(w.err(
                    &format!("{key}.dlcm"),
                    format!("= \"{o}\", allowed: \"ca\" or \"cg\""),
                ))
            }
        };
        let mut notes = vec![];
        let bank_width = match spec.bank_mode {
            None => cfg.shared.bank_width_bytes,
            Some(b) if b != 4 && b != 8 => {
                return Err(w.err(
                    &format!("{key}.bank_mode"),
                    format!("= {b}, allowed: 4 or 8"),
                ))
            }
            Some(b) if cfg.shared.bank_width_selectable => b,
            Some(b) => {
                // As on the hardware: cudaDeviceSetSharedMemConfig is ignored where banks are fixed.
                if b != cfg.shared.bank_width_bytes {
                    notes.push(format!(
                        "bank_mode = {b} ignored: {} has fixed {}-byte banks",
                        cfg.gpu.name, cfg.shared.bank_width_bytes
                    ));
                }
                cfg.shared.bank_width_bytes
            }
        };
        let (registers, registers_source) =
            launch_registers(cfg, &program, spec, opts, &w, &key, &mut notes)?;
        launches.push(PlannedLaunch {
            label: spec.label.clone(),
            kernel: spec.kernel.clone(),
            program,
            params,
            args,
            dims,
            dynamic_shared_bytes: dynamic as u64,
            shared_bytes: dynamic_shared_at + dynamic as u64,
            local_bytes: local,
            registers,
            registers_source,
            cache_global_loads,
            bank_width,
            notes,
        });
    }
    Ok(Plan {
        workload: w,
        ptx_name,
        ptx_text: text,
        image,
        symbols: symbol_data,
        launches,
    })
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
        };
        let mut mem = MemorySystem::with_line_records(cfg, !opts.paths.line_records_off);
        if opts.warm {
            pipeline::run_with(cfg, &launch, &mut image, &mut mem, scratch)?;
        }
        let mut stats = pipeline::run_with(cfg, &launch, &mut image, &mut mem, scratch)?;
        // Warp instructions as the GPU counts them: SASS, from the PTX (timing::sass).
        stats.counters.inst_executed = stats.sms.iter().map(|w| w.issue_slots).sum();
        let c = &stats.counters;
        let timing = timing::estimate(
            cfg,
            &stats.sms,
            timing::Traffic {
                // Atomics and reductions read and write their sectors in L2.
                l2_read_sectors: c.l2_read_sectors + c.l2_atom_sectors + c.l2_red_sectors,
                l2_write_sectors: c.l2_write_sectors,
                dram_bytes: c.dram_read_bytes + c.dram_write_bytes,
            },
            p.dims.block_threads().div_ceil(32),
        );
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
            per_pc,
            outputs,
            notes: p
                .notes
                .iter()
                .cloned()
                .chain(stats.sampled.as_ref().map(sample_note))
                .collect(),
            sampled: stats.sampled,
        });
    }
    Ok(WorkloadRun {
        workload: w.name.clone(),
        description: w.description.clone(),
        params: w.params.clone(),
        launches,
    })
}

/// Registers per thread of a launch of `program`: `--registers`, else the launch's `registers`,
/// else the estimate from the PTX clamped to the GPU's maximum (with a note: ptxas would spill).
/// A given number above the maximum is an error naming the key (or the flag).
fn launch_registers(
    cfg: &GpuConfig,
    program: &exec::Program,
    spec: &crate::workload::LaunchSpec,
    opts: &Options,
    w: &Workload,
    key: &str,
    notes: &mut Vec<String>,
) -> Result<(u32, RegisterSource)> {
    let max = cfg.sm.max_registers_per_thread;
    let allowed = format!(
        "allowed: 0 to {max} (sm.max_registers_per_thread of {})",
        cfg.path
    );
    if let Some(n) = opts.registers {
        if n > max {
            return Err(crate::Error::Launch {
                launch: spec.label.clone(),
                message: format!("--registers {n} is out of range; {allowed}"),
            });
        }
        return Ok((n, RegisterSource::Given));
    }
    if let Some(n) = spec.registers {
        if n > max {
            return Err(w.err(&format!("{key}.registers"), format!("= {n}, {allowed}")));
        }
        return Ok((n, RegisterSource::Given));
    }
    let estimate = exec::regs::estimate(program);
    if estimate > max {
        notes.push(format!(
            "an estimated {estimate} registers per thread exceed {}'s {max}: counted as {max} \
             for occupancy (ptxas would spill the rest to local memory, which is not simulated); \
             `registers = N` in the launch or --registers N gives ptxas's number",
            cfg.gpu.name
        ));
        return Ok((max, RegisterSource::Estimated));
    }
    Ok((estimate, RegisterSource::Estimated))
}

/// Compiles the workload's CUDA source `cu` for the config's GPU; returns a name for the PTX (the
/// source, the compiler and the target, for messages) and the PTX.
fn compile_source(
    cfg: &GpuConfig,
    w: &Workload,
    cu: &str,
    compiler: crate::compile::Compiler,
) -> Result<(String, String)> {
    let (name, bytes) = w.source.read_relative(cu)?;
    let source =
        String::from_utf8(bytes).map_err(|_| w.err("cuda", format!("{name} is not UTF-8 text")))?;
    let dir = match &w.source {
        crate::workload::Source::File(p) => {
            Some(p.parent().unwrap_or(std::path::Path::new(".")).join(cu))
        }
        crate::workload::Source::Inline => Some(std::path::PathBuf::from(cu)),
        crate::workload::Source::Bundled(_) => None,
    };
    let include_dir = dir.as_deref().and_then(std::path::Path::parent);
    let c = crate::compile::compile_cuda(
        &name,
        &source,
        include_dir,
        cfg.compute_capability(),
        compiler,
    )?;
    Ok((
        format!("{name} (PTX by {} for {})", c.compiler, c.arch),
        c.ptx,
    ))
}

/// Places module-scope `.const` and `.global` variables; returns their symbols.
fn layout_module(
    module: &Module,
    image: &mut MemoryImage,
    w: &Workload,
) -> Result<HashMap<String, SymbolAddr>> {
    let mut symbols = HashMap::new();
    let mut bank = 0u64;
    for v in &module.globals {
        match v.space {
            StateSpace::Const => {
                bank = bank.next_multiple_of(u64::from(v.align.max(1)));
                let end = bank + v.size_bytes();
                if end > image.constant.len() as u64 {
                    return Err(w.err(
                        "ptx",
                        format!("constant variable `{}` ends at byte {end}, beyond the GPU's {} bytes of constant memory", v.name, image.constant.len()),
                    ));
                }
                image.constant[bank as usize..bank as usize + v.init.len()]
                    .copy_from_slice(&v.init);
                symbols.insert(v.name.clone(), SymbolAddr::Const(bank));
                bank = end;
            }
            StateSpace::Global => {
                let size = usize::try_from(v.size_bytes()).unwrap_or(usize::MAX);
                let mut data = crate::memory::image::host_buffer(size)
                    .map_err(|m| w.err("ptx", format!("global variable `{}` {m}", v.name)))?;
                data.extend_from_slice(&v.init);
                data.resize(size, 0);
                let a = image.alloc(&v.name, data);
                symbols.insert(v.name.clone(), SymbolAddr::Global(a));
            }
            _ => {}
        }
    }
    Ok(symbols)
}

/// Lays out a kernel's parameters and its shared and local variables (module and kernel scope)
/// into `symbols`. Returns the parameter bytes, the offset where dynamic (`extern`) shared memory
/// starts (after the static variables, 16-byte aligned), and the local bytes per thread.
fn layout_kernel(
    module: &Module,
    f: &ptx::Function,
    symbols: &mut HashMap<String, SymbolAddr>,
) -> (u64, u64, u64) {
    fn place(end: &mut u64, align: u32, size: u64) -> u64 {
        *end = end.next_multiple_of(u64::from(align.max(1)));
        let at = *end;
        *end += size;
        at
    }
    let mut params = 0u64;
    for p in &f.params {
        symbols.insert(
            p.name.clone(),
            SymbolAddr::Param(place(&mut params, p.align, p.size_bytes())),
        );
    }
    let (mut shared, mut local) = (0u64, 0u64);
    let vars = || module.globals.iter().chain(&f.locals);
    for v in vars().filter(|v| !v.is_extern) {
        match v.space {
            StateSpace::Shared => symbols.insert(
                v.name.clone(),
                SymbolAddr::Shared(place(&mut shared, v.align, v.size_bytes())),
            ),
            StateSpace::Local => symbols.insert(
                v.name.clone(),
                SymbolAddr::Local(place(&mut local, v.align, v.size_bytes())),
            ),
            _ => None,
        };
    }
    let dynamic = shared.next_multiple_of(16);
    for v in vars().filter(|v| v.is_extern && v.space == StateSpace::Shared) {
        symbols.insert(v.name.clone(), SymbolAddr::Shared(dynamic));
    }
    (params, dynamic, local)
}

/// Writes a `[[constant]]` initialiser into its symbol.
fn init_constant(
    module: &Module,
    image: &mut MemoryImage,
    symbols: &HashMap<String, SymbolAddr>,
    w: &Workload,
    i: usize,
    c: &crate::workload::ConstantSpec,
    read_file: &dyn Fn(&str) -> std::result::Result<Vec<u8>, String>,
) -> Result<()> {
    let key = format!("constant[{i}]");
    let var = module
        .globals
        .iter()
        .find(|g| g.name == c.symbol)
        .ok_or_else(|| {
            let names: Vec<&str> = module
                .globals
                .iter()
                .filter(|g| matches!(g.space, StateSpace::Const | StateSpace::Global))
                .map(|g| g.name.as_str())
                .collect();
            w.err(
                &format!("{key}.symbol"),
                format!(
                    "no symbol `{}` in the PTX (symbols: {})",
                    c.symbol,
                    names.join(", ")
                ),
            )
        })?;
    let elem = Elem::parse(&c.ty)
        .ok_or_else(|| w.err(&format!("{key}.type"), format!("unknown type `{}`", c.ty)))?;
    let size = var.size_bytes();
    let count = match &c.count {
        Some(e) => w.eval(e, &format!("{key}.count"))?,
        None => (size / elem.bytes() as u64) as i64,
    };
    let count = usize::try_from(count)
        .map_err(|_| w.err(&format!("{key}.count"), format!("= {count}, must be >= 0")))?;
    if (count * elem.bytes()) as u64 > size {
        return Err(w.err(
            &format!("{key}.count"),
            format!(
                "{count} x {} bytes exceed the {size} bytes of `{}`",
                elem.bytes(),
                c.symbol
            ),
        ));
    }
    let data = init::build(&c.init, elem, count, read_file)
        .map_err(|m| w.err(&format!("{key}.init"), m))?;
    match symbols.get(&c.symbol) {
        Some(SymbolAddr::Const(off)) => {
            let off = *off as usize;
            image.constant[off..off + data.len()].copy_from_slice(&data);
        }
        Some(SymbolAddr::Global(a)) => {
            let a = *a;
            let alloc = image
                .allocs
                .iter_mut()
                .find(|x| x.base == a)
                .expect("global symbols are allocated");
            alloc.bytes_mut()[..data.len()].copy_from_slice(&data);
        }
        _ => {
            return Err(w.err(
                &format!("{key}.symbol"),
                format!("`{}` is not a .const or .global variable", c.symbol),
            ))
        }
    }
    Ok(())
}

/// Lays the launch's arguments out as the PTX `.param` list declares them.
fn build_params(
    f: &ptx::Function,
    spec: &crate::workload::LaunchSpec,
    buffers: &HashMap<String, u64>,
    w: &Workload,
    key: &str,
    bytes: u64,
) -> Result<(Vec<u8>, Vec<PlannedArg>)> {
    if spec.args.len() != f.params.len() {
        return Err(w.err(
            &format!("{key}.args"),
            format!(
                "{} arguments given, kernel `{}` takes {}",
                spec.args.len(),
                f.name,
                f.params.len()
            ),
        ));
    }
    let mut out = vec![0u8; bytes as usize];
    let mut args = Vec::with_capacity(f.params.len());
    let mut off = 0u64;
    for (j, (p, a)) in f.params.iter().zip(&spec.args).enumerate() {
        off = off.next_multiple_of(u64::from(p.align.max(1)));
        let k = format!("{key}.args[{j}]");
        let value: u64 = match a {
            Arg::Text(t) if buffers.contains_key(t) => {
                if p.ty.bytes() != 8 || p.count != 1 {
                    return Err(w.err(
                        &k,
                        format!(
                            "buffer `{t}` passed to `{}`, which is not a 64-bit pointer parameter",
                            p.name
                        ),
                    ));
                }
                buffers[t]
            }
            Arg::Text(t) => int_for(p.ty, w.eval(&crate::workload::Expr::Text(t.clone()), &k)?),
            Arg::Int(v) => int_for(p.ty, *v),
            Arg::Float(x) => match p.ty {
                Type::F64 => x.to_bits(),
                Type::F32 => u64::from((*x as f32).to_bits()),
                _ => {
                    return Err(w.err(
                        &k,
                        format!(
                            "float {x} passed to the .{} parameter `{}`",
                            p.ty.name(),
                            p.name
                        ),
                    ))
                }
            },
        };
        let n = (p.ty.bytes() as usize).min(8);
        out[off as usize..off as usize + n].copy_from_slice(&value.to_le_bytes()[..n]);
        args.push(match a {
            Arg::Text(t) if buffers.contains_key(t) => PlannedArg::Buffer(t.clone()),
            _ => PlannedArg::Bytes(value.to_le_bytes()[..n].to_vec()),
        });
        off += p.size_bytes();
    }
    Ok((out, args))
}

fn int_for(ty: Type, v: i64) -> u64 {
    match ty {
        Type::F32 => u64::from((v as f32).to_bits()),
        Type::F64 => (v as f64).to_bits(),
        _ => v as u64,
    }
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

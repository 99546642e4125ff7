//! The `sim` command line: run bundled or user workloads on a GPU config and report.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use sim::compile::Compiler;
use sim::config::GpuConfig;
use sim::report;
use sim::run::{run_workload, Options};
use sim::workload::{parse_set, Workload};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

// The simulator allocates and frees per-SM logs, register files and buffers in every launch; glibc's
// malloc/free and the page faults after it trims freed memory were ~8% of transpose_smem's time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "sim",
    version,
    about = "Simulate a CUDA kernel's memory behaviour from its PTX on a described GPU",
    long_about = "gpumemsim's simulator. It executes a kernel's PTX warp by warp (32 threads in lock step, \
with divergence), models the constant cache (broadcast vs serialized per distinct address), global memory \
(coalescing into 32-byte sectors, L1, L2, DRAM), and predicts the time on the GPU a config file describes. \
Counters are named after the Nsight Compute metrics they predict.",
    after_help = "Examples:\n  sim run configs/rtx3090.toml pseudo_random\n  sim run configs/h200.toml one_access_per_thread --set n=128000 --format json\n  sim list"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run workloads on a GPU config and print what their memory accesses cost
    #[command(
        after_help = "Examples:\n  sim run configs/rtx3090.toml pseudo_random\n  \
sim run configs/rtx3090.toml one_access_per_block one_access_per_warp one_access_per_thread pseudo_random\n  \
sim run configs/h200.toml pseudo_random --set n=128000 --format json\n  \
sim run configs/rtx3090.toml path/to/my_workload.toml --per-instruction\n\n\
Reading the table: `const req/LDC` is the number of distinct addresses per warp-level constant load \
(1 = broadcast; 32 = fully serialized); `ld sectors/req` the 32-byte sectors per global load request (4 = a \
coalesced warp of 4-byte loads, 32 = scattered); the last lines say what bounds each launch."
    )]
    Run {
        /// GPU description (TOML), e.g. configs/rtx3090.toml
        config: PathBuf,
        /// Bundled workload names (see `sim list`) or paths to workload files
        #[arg(required = true)]
        workloads: Vec<String>,
        /// Override a workload parameter, e.g. --set n=128000 (repeatable)
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
        sets: Vec<(String, i64)>,
        /// Output format: a table for people, or JSON keyed by Nsight Compute metric names
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Run each launch twice and report the second (back-to-back timing): L2 keeps what the
        /// first left, every SM's L1 and nearest constant cache start empty, as on an H200
        #[arg(long)]
        warm: bool,
        /// Also list the PTX instructions of each launch with their memory statistics, worst first
        #[arg(long)]
        per_instruction: bool,
        /// Run only the launch with this label (repeatable), e.g. --launch constant
        #[arg(long = "launch", value_name = "LABEL")]
        launches: Vec<String>,
        /// Stop a launch after this many warp instructions (runaway kernels)
        #[arg(long, default_value_t = 1 << 34, value_name = "N")]
        max_warp_instructions: u64,
        /// Host memory the run may take, e.g. 4G, 512M (powers of 1024) or bytes. Before it
        /// allocates, a run checks what it needs (each buffer, each launch's schedule and
        /// per-instruction state, the trace of its blocks) and stops with an error naming the
        /// input beyond it; default: 3/4 of the available memory (and of what `ulimit -v` leaves)
        #[arg(long, value_name = "SIZE", value_parser = parse_max_memory)]
        max_memory: Option<u64>,
        /// Which waves to simulate: `full`, `auto` (full unless a launch has more than 512 waves of
        /// blocks; then about 256 waves spread evenly, extrapolated, with the estimated error
        /// printed), or N (wave 0, every N-th wave and the last)
        #[arg(long, default_value = "auto", value_parser = parse_sampling, value_name = "auto|full|N")]
        sample: sim::exec::Sampling,
        /// Threads simulating SMs in parallel (default: one per core). Results are identical
        /// for any number
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Compiler for workloads that name a CUDA source (`cuda = "kernel.cu"`): nvrtc, clang, or
        /// auto (NVRTC if libnvrtc loads, else clang); default: $GPUMEMSIM_COMPILER, else auto
        #[arg(long, value_name = "COMPILER")]
        compiler: Option<Compiler>,
        /// Registers per thread of every launch, as `ptxas -v` reports them (`Used N registers`),
        /// for occupancy only; over a launch's `registers = N` in the workload file and over the
        /// estimate from the PTX (the most 32-bit values live at once in a schedule like
        /// ptxas's, plus the stack pointer)
        #[arg(long, value_name = "N")]
        registers: Option<u32>,
        /// Which ptxas assembles the PTX for the config's architecture (sm_86 for the RTX 3090)
        /// to give each launch its registers per thread (`ptxas -v`): a path, `off` (estimate
        /// from the PTX), or `auto`: the PyPI wheel nvidia-cuda-nvcc-cu12, then $CUDA_HOME/bin,
        /// /usr/local/cuda/bin and the PATH. Default: $GPUMEMSIM_PTXAS, else auto. Results are
        /// cached in $GPUMEMSIM_CACHE_DIR (`off`: not kept), else $XDG_CACHE_HOME/gpumemsim or
        /// ~/.cache/gpumemsim
        #[arg(long, value_name = "auto|off|PATH")]
        ptxas: Option<sim::sass::Ptxas>,
    },
    /// Compile a CUDA source to PTX with NVRTC or clang, as `sim run` does for `cuda = "..."`
    /// workloads, and print the PTX
    #[command(
        after_help = "Examples:\n  sim compile tests/fixtures/user_kernel/histogram.cu --arch sm_90 > histogram.ptx\n  \
sim compile my_kernel.cu --compiler clang --arch sm_80\n\n\
NVRTC: pip install nvidia-cuda-nvrtc-cu12 and put its lib directory on LD_LIBRARY_PATH; clang: \
apt-get install clang-19 (no CUDA needed; CUDA math library functions are not available then)."
    )]
    Compile {
        /// The CUDA source (device code)
        source: PathBuf,
        /// Target architecture, e.g. sm_90 or 9.0 (the compute capability of a config)
        #[arg(long, default_value = "sm_80", value_parser = parse_arch)]
        arch: (u32, u32),
        /// nvrtc, clang, or auto (NVRTC if libnvrtc loads, else clang); default:
        /// $GPUMEMSIM_COMPILER, else auto
        #[arg(long, value_name = "COMPILER")]
        compiler: Option<Compiler>,
    },
    /// List the bundled workloads, one line each
    #[command(after_help = "Example:\n  sim list")]
    List,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Table,
    Json,
}

/// A progress bar on stderr for runs longer than a second (hidden when stderr is not a terminal,
/// so pipes and tests see nothing). The simulation itself never depends on it.
fn progress_bar() -> sim::run::Progress {
    let start = std::time::Instant::now();
    let bar: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);
    std::sync::Arc::new(move |label: &str, done: u64, total: u64| {
        let Ok(mut bar) = bar.lock() else { return };
        if bar.is_none() && start.elapsed().as_secs_f64() > 1.0 && done < total {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{msg:>10} [{bar:40}] {pos}/{len} blocks, {eta} left",
            ) {
                b.set_style(style.progress_chars("=> "));
            }
            *bar = Some(b);
        }
        if let Some(b) = bar.as_ref() {
            b.set_message(label.to_string());
            b.set_length(total);
            b.set_position(done);
            if done == total {
                b.finish_and_clear();
                *bar = None;
            }
        }
    })
}

/// `sm_90`, `compute_90`, `90` or `9.0` → (9, 0).
fn parse_arch(s: &str) -> std::result::Result<(u32, u32), String> {
    let t = s
        .trim()
        .trim_start_matches("sm_")
        .trim_start_matches("compute_");
    let (major, minor) = match t.split_once('.') {
        Some((a, b)) => (a.parse().ok(), b.parse().ok()),
        None if t.len() >= 2 && t.bytes().all(|b| b.is_ascii_digit()) => {
            let (a, b) = t.split_at(t.len() - 1);
            (a.parse().ok(), b.parse().ok())
        }
        None => (None, None),
    };
    match (major, minor) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(format!(
            "`{s}`: expected an architecture such as sm_90 or 9.0"
        )),
    }
}

/// `--ptxas`, else `$GPUMEMSIM_PTXAS`, else auto.
fn ptxas_choice(flag: Option<sim::sass::Ptxas>) -> Result<sim::sass::Ptxas> {
    if let Some(p) = flag {
        return Ok(p);
    }
    match std::env::var("GPUMEMSIM_PTXAS") {
        Ok(v) if !v.trim().is_empty() => v
            .parse()
            .map_err(|e| anyhow::anyhow!("GPUMEMSIM_PTXAS: {e}")),
        _ => Ok(sim::sass::Ptxas::Auto),
    }
}

/// `--compiler`, else `$GPUMEMSIM_COMPILER`, else auto.
fn compiler_choice(flag: Option<Compiler>) -> Result<Compiler> {
    if let Some(c) = flag {
        return Ok(c);
    }
    match std::env::var("GPUMEMSIM_COMPILER") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map_err(|e| anyhow::anyhow!("GPUMEMSIM_COMPILER: {e}")),
        _ => Ok(Compiler::Auto),
    }
}

fn main() -> ExitCode {
    if let Err(m) = sim::check_cpu() {
        eprintln!("error: {m}");
        return ExitCode::from(2);
    }
    // Output still buffered at exit would be lost silently on a full disk: flush it here.
    let result = real_main().and_then(|()| Ok(std::io::stdout().flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`sim run ... | head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        // Files are read through `sim::Error::Io` or with a context, which name them: a bare I/O
        // error, without context, is a write to stdout (`sim run ... > /dev/full`).
        Err(e) if e.chain().count() == 1 && e.downcast_ref::<std::io::Error>().is_some() => {
            eprintln!("error: cannot write to standard output: {e:#}");
            ExitCode::from(2)
        }
        Err(e) => {
            let m = sim::report::printable(&format!("{e:#}"));
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Compile {
            source,
            arch,
            compiler,
        } => {
            let text = sim::files::read_text(&source, "CUDA source")
                .with_context(|| format!("cannot read {}", source.display()))?;
            let name = source.display().to_string();
            let c = sim::compile::compile_cuda(
                &name,
                &text,
                source.parent(),
                arch,
                compiler_choice(compiler)?,
            )?;
            eprintln!("{name}: PTX by {} for {}", c.compiler, c.arch);
            write!(out, "{}", c.ptx)?;
            Ok(())
        }
        Command::List => {
            for w in gpumemsim::workloads() {
                let desc =
                    Workload::from_toml_str(w.toml, sim::workload::Source::Bundled(w.path.into()))
                        .map(|x| x.description)
                        .unwrap_or_default();
                writeln!(out, "{:<24} {}", w.name, desc)?;
            }
            Ok(())
        }
        Command::Run {
            config,
            workloads,
            sets,
            format,
            warm,
            per_instruction,
            launches,
            max_warp_instructions,
            max_memory,
            threads,
            sample,
            compiler,
            registers,
            ptxas,
        } => {
            if let Some(n) = threads {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build_global()
                    .context("starting the simulation threads")?;
            }
            let cfg = GpuConfig::load(&config)?;
            let opts = Options {
                compiler: compiler_choice(compiler)?,
                progress: Some(progress_bar()),
                sets,
                warm,
                keep_outputs: false,
                max_warp_instructions,
                max_memory,
                only: launches,
                sampling: sample,
                registers,
                paths: Default::default(),
                ptxas: sim::sass::Settings {
                    ptxas: ptxas_choice(ptxas)?,
                    ..Default::default()
                },
            };
            let mut docs = vec![];
            for name in &workloads {
                let w = Workload::resolve(name)?;
                let run =
                    run_workload(&cfg, &w, &opts).with_context(|| format!("workload `{name}`"))?;
                if run.launches.is_empty() {
                    bail!(
                        "workload `{name}`: no launch matches --launch {:?}",
                        opts.only
                    );
                }
                match format {
                    Format::Json => docs.push(report::json(&cfg, &run, per_instruction)),
                    Format::Table => {
                        writeln!(out, "{}", report::table(&cfg, &run))?;
                        if per_instruction {
                            writeln!(out, "{}", report::per_instruction(&run))?;
                        }
                    }
                }
            }
            if format == Format::Json {
                let v = if docs.len() == 1 {
                    docs.remove(0)
                } else {
                    serde_json::Value::Array(docs)
                };
                writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
            }
            Ok(())
        }
    }
}

/// `--sample auto|full|N`.
fn parse_sampling(s: &str) -> std::result::Result<sim::exec::Sampling, String> {
    use sim::exec::Sampling;
    match s {
        "auto" => Ok(Sampling::Auto),
        "full" => Ok(Sampling::Full),
        n => match n.parse::<u64>() {
            Ok(0) | Err(_) => Err(format!(
                "`{n}` is not auto, full or a positive number of waves"
            )),
            Ok(1) => Ok(Sampling::Full),
            Ok(k) => Ok(Sampling::Every(k)),
        },
    }
}

fn parse_max_memory(s: &str) -> std::result::Result<u64, String> {
    sim::memory::parse_size(s)
}

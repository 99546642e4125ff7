//! gpumemsim's validator: runs the simulator's exact PTX on a real NVIDIA GPU and compares.
//!
//! The binary `validate` loads the same PTX text that `sim` executes onto a GPU through cudarc
//! (the CUDA driver API and NVRTC, both loaded at run time, so this crate builds on machines
//! without CUDA), runs a workload's launches with the workload's inputs, checks the outputs bit
//! for bit, times the launches with CUDA events, reads the Nsight Compute counters the simulator
//! predicts and prints predicted vs measured (DESIGN.md, "Validation methodology").
//!
//! Working today: `validate ptx` ([`ptxgen`]), which regenerates and checks the committed PTX of
//! the bundled kernels. `compare`, `device` and `report` are placeholders.

pub mod ptxgen;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The kernels directory of the source tree this binary was built from.
const SOURCE_KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels");

/// Command line of the `validate` binary.
#[derive(Debug, Parser)]
#[command(
    name = "validate",
    version,
    about = "Run gpumemsim's PTX on a real NVIDIA GPU and compare measurements with the simulator's predictions",
    long_about = "Run gpumemsim's PTX on a real NVIDIA GPU and compare measurements with the \
simulator's predictions.\n\n\
validate loads the very PTX that `sim` executes (kernels/ptx/*.ptx, or a workload's own) onto a \
real NVIDIA GPU through cudarc, runs the workload's launches with the same inputs, checks the \
outputs against the simulator's bit for bit, times every launch with CUDA events (warm-ups, then \
repeats: median and spread), reads the Nsight Compute counters that the simulator predicts \
(ncu --metrics, keyed by the same metric names as `sim run --format json`) and prints predicted vs \
measured with the error of each.\n\n\
CUDA is loaded at run time: validate builds and starts without it, and only the subcommands that \
need the GPU or NVRTC ask for libcuda or libnvrtc.",
    after_help = "Examples:\n  \
validate ptx --check                                  are the committed PTX files up to date?\n  \
validate compare configs/h200.toml pseudo_random      (later release) predicted vs measured"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Compile kernels/*.cu to the stamped PTX the simulator runs (NVRTC), or check it is up to date
    #[command(
        long_about = "Compile kernels/*.cu to the PTX that the simulator runs and the validator \
loads, or check that the committed PTX is up to date.\n\n\
NVRTC (NVIDIA's runtime compiler, loaded at run time through cudarc; no GPU needed) writes \
kernels/ptx/<stem>.ptx with the options --gpu-architecture=compute_80 -lineinfo; clang writes the \
parser fixture kernels/ptx/clang/<stem>.ptx. Each file's first line is a stamp: \
`// gpumemsim: generated from <stem>.cu sha256=<hash of the .cu> by <compiler> with <options>`, \
followed by the compiler's PTX unchanged.\n\n\
--check compares the stamps with the sources' hashes (no compiler needed) and exits 1 listing the \
stale files.\n\n\
Get libnvrtc with `pip install nvidia-cuda-nvrtc-cu12` and point LD_LIBRARY_PATH at it (see the \
example); without it, `validate ptx` exits 2.",
        after_help = "Examples:\n  \
validate ptx --check\n  \
export LD_LIBRARY_PATH=\"$(python3 -c 'import nvidia.cuda_nvrtc as m;print(*m.__path__)')/lib\"\n  \
validate ptx\n  \
validate ptx --compiler clang --clang clang-19"
    )]
    Ptx(PtxArgs),

    /// Run a workload on the GPU and print predicted vs measured (coming in a later release)
    #[command(
        long_about = "Run a workload on the GPU and print predicted vs measured: outputs checked \
against the simulator, time from CUDA events, counters from Nsight Compute.\n\n\
Coming in a later release; until then `sim run` prints the predictions.",
        after_help = "Example:\n  validate compare configs/h200.toml pseudo_random --set n=128000"
    )]
    Compare(CompareArgs),

    /// Describe the GPU as a config would (coming in a later release)
    #[command(
        long_about = "Describe the installed GPU (name, compute capability, SMs, clocks, memory \
sizes) in the keys of configs/*.toml, to start or check a config.\n\n\
Coming in a later release.",
        after_help = "Example:\n  validate device --device 0"
    )]
    Device(DeviceArgs),

    /// Summarize measured reports: accuracy per workload and metric (coming in a later release)
    #[command(
        long_about = "Summarize committed measurement reports: error per workload and metric, \
mean absolute percentage error, worst case and rank correlation.\n\n\
Coming in a later release.",
        after_help = "Example:\n  validate report reports/h200/*.json"
    )]
    Report(ReportArgs),
}

/// Which compiler `validate ptx` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompilerChoice {
    /// NVRTC: kernels/ptx/<stem>.ptx, the PTX the workloads use
    Nvrtc,
    /// clang: kernels/ptx/clang/<stem>.ptx, a parser fixture
    Clang,
    /// both
    All,
}

/// Arguments of `validate ptx`.
#[derive(Debug, clap::Args)]
pub struct PtxArgs {
    /// Only check the stamps against the sources' SHA-256 (no compiler needed); exit 1 if stale
    #[arg(long)]
    pub check: bool,
    /// The compiler to run
    #[arg(long, value_enum, default_value = "nvrtc")]
    pub compiler: CompilerChoice,
    /// The clang binary for --compiler clang or all
    #[arg(long, value_name = "BIN", default_value = ptxgen::DEFAULT_CLANG)]
    pub clang: String,
    /// The kernels directory [default: the source tree's kernels/]
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
}

/// Arguments of `validate compare` (not implemented yet).
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// GPU config (configs/h200.toml)
    pub config: Option<String>,
    /// Bundled workload name or workload file
    pub workload: Option<String>,
    /// Override a workload parameter: --set n=128000
    #[arg(long, value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

/// Arguments of `validate device` (not implemented yet).
#[derive(Debug, clap::Args)]
pub struct DeviceArgs {
    /// CUDA device ordinal
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

/// Arguments of `validate report` (not implemented yet).
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Measurement reports (JSON)
    pub reports: Vec<PathBuf>,
}

/// Runs a parsed command line; errors are printed by `main` as `error: ...` with exit code 2.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Cmd::Ptx(args) => ptx(&args),
        Cmd::Compare(_) => Ok(not_implemented("compare")),
        Cmd::Device(_) => Ok(not_implemented("device")),
        Cmd::Report(_) => Ok(not_implemented("report")),
    }
}

fn not_implemented(name: &str) -> ExitCode {
    eprintln!("validate {name}: not implemented yet (see `sim run` for predictions)");
    ExitCode::from(2)
}

/// `path` relative to the current directory when it is below it, for shorter messages.
fn shown(path: &Path) -> String {
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let abs = if abs.exists() {
        abs
    } else {
        // A missing file: canonicalize its directory instead.
        match (
            path.parent().and_then(|d| d.canonicalize().ok()),
            path.file_name(),
        ) {
            (Some(dir), Some(name)) => dir.join(name),
            _ => path.to_path_buf(),
        }
    };
    std::env::current_dir()
        .ok()
        .and_then(|cwd| abs.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or(abs)
        .display()
        .to_string()
}

fn ptx(args: &PtxArgs) -> Result<ExitCode> {
    let kernels = args
        .kernels
        .clone()
        .unwrap_or_else(|| PathBuf::from(SOURCE_KERNELS));
    if args.check {
        let (checked, stale) = ptxgen::check(&kernels)?;
        if stale.is_empty() {
            println!("ok: {} PTX files match their sources", checked.len());
            for path in &checked {
                println!("  {}", shown(path));
            }
            return Ok(ExitCode::SUCCESS);
        }
        println!("stale PTX ({} of {}):", stale.len(), checked.len());
        for s in &stale {
            println!(
                "  {}: {} (source {})",
                shown(&s.ptx),
                s.problem,
                shown(&s.source)
            );
        }
        let mut commands: Vec<&str> = stale.iter().map(|s| s.compiler.regenerate()).collect();
        commands.dedup();
        for command in commands {
            println!("regenerate with: {command}");
        }
        return Ok(ExitCode::from(1));
    }
    let mut written = Vec::new();
    if matches!(args.compiler, CompilerChoice::Nvrtc | CompilerChoice::All) {
        written.extend(ptxgen::generate_nvrtc(&kernels)?);
    }
    if matches!(args.compiler, CompilerChoice::Clang | CompilerChoice::All) {
        written.extend(ptxgen::generate_clang(&kernels, &args.clang)?);
    }
    for path in &written {
        let text = std::fs::read_to_string(path)?;
        println!(
            "wrote {} ({})",
            shown(path),
            text.lines().next().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

//! The command line of the `validate` binary (clap). Each subcommand's `--help` explains it with
//! examples; the work is done in [`crate::cmd`].

use crate::ptxgen;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Command line of the `validate` binary.
#[derive(Debug, Parser)]
#[command(
    name = "validate",
    version,
    about = "Run gpumemsim's PTX on a real NVIDIA GPU and compare measurements with the simulator's predictions",
    long_about = "Run gpumemsim's PTX on a real NVIDIA GPU and compare measurements with the \
simulator's predictions.\n\n\
validate loads the very PTX that `sim` executes onto a real NVIDIA GPU through cudarc, runs the \
workload's launches with the same inputs, checks the outputs against the simulator's (integers bit \
for bit), times every launch with CUDA events (warm-ups, then repeats: median and spread), reads \
the Nsight Compute counters that the simulator predicts (ncu --metrics, keyed by the same metric \
names as `sim run --format json`) and prints predicted vs measured with the error of each.\n\n\
CUDA is loaded at run time: validate builds and starts without it, and only the subcommands that \
need the GPU or NVRTC ask for libcuda or libnvrtc. Errors are one line on stderr, exit code 2.",
    after_help = "Examples:\n  \
validate device                                       what GPU is this?\n  \
validate compare pseudo_random --set n=128000         one workload, smaller\n  \
validate compare --out validate/measurements/h200/report.json --force   every bundled workload\n  \
validate report validate/measurements/h200/report.json --config configs/h200.toml\n  \
validate report validate/measurements/h200/report.json --plot h200.svg   predicted vs measured\n  \
validate device --write-config configs/b200.toml      a config from the GPU's attributes\n  \
validate calibrate --config configs/h200.toml --out /tmp/h200.toml   measure latencies, bandwidths\n  \
validate calibrate --plan                             what calibrate measures (no GPU)\n  \
validate ptx --check                                  are the committed PTX files up to date?"
)]
pub struct Cli {
    /// The subcommand.
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
parser fixture kernels/ptx/clang/<stem>.ptx. NVRTC also compiles the microbenchmarks of \
`validate calibrate`, validate/calibrate/*.cu, to validate/calibrate/ptx/<stem>.ptx (embedded in \
the binary). Each file's first line is a stamp: \
`// gpumemsim: generated from <stem>.cu sha256=<hash of the .cu> by <compiler> with <options>`, \
followed by the compiler's PTX unchanged.\n\n\
--check compares the stamps with the sources' hashes (no compiler needed) and exits 1 listing the \
stale files.\n\n\
Get libnvrtc with `pip install nvidia-cuda-nvrtc-cu12` (found where pip puts it; \
GPUMEMSIM_NVRTC names another); without it, `validate ptx` exits 2.",
        after_help = "Examples:\n  \
validate ptx --check\n  \
validate ptx\n  \
validate ptx --compiler clang --clang clang-19"
    )]
    Ptx(PtxArgs),

    /// Run workloads on the GPU and print predicted vs measured time, counters and output checks
    #[command(
        long_about = "Run workloads on the GPU and print predicted vs measured.\n\n\
For each workload: the simulator predicts every launch (cold caches, as `sim run`); the GPU runs \
the same PTX with the same inputs, once per launch in order on fresh buffers, and the output \
buffers are compared with the simulator's after each launch (integers bit for bit, floats within \
relative 1e-5 + absolute 1e-6). Then each launch is timed with CUDA events: --warmup launches, \
then --repeat launches each alone between two events (median, p10-p90, min, max), then --repeat \
launches back to back between two events (their mean per launch: the convention of the \
add_constant study the bundled workloads come from, 100 warm-ups then 100 timed launches). When ncu \
(Nsight Compute) is on PATH or given with --ncu, validate re-runs itself under `ncu --csv \
--clock-control none --metrics <every metric the simulator predicts>` and compares each counter \
(ncu flushes caches before each pass: cold, like the prediction).\n\n\
At the end, a summary over all launches: mean absolute percentage error of time, the worst \
launch, Spearman's rank correlation, and the same per counter. --out writes it all as JSON \
(`validate report` re-renders it, and CI checks the simulator against it).\n\n\
--config auto (the default) picks configs/<name>.toml whose gpu.name is the device's name, looking \
in configs/ of the current directory, its parents and the source tree. When none matches, it builds \
a config in memory from the device's attributes, as `validate device --write-config` writes it \
(every value the attributes do not give is taken from the nearest shipped config of the same \
compute capability major), says so in one line listing those assumed keys, and records \
`generated from device attributes (base: configs/<x>.toml)` as the report's config.\n\n\
--plot FILE.svg draws predicted against measured: one panel per quantity (time, and each counter \
with a non-zero measurement), one point per launch, the y = x diagonal, the MAPE in each title; \
log-log axes where the values span more than 2 decades (launches with a zero are then left out).\n\n\
Exit code: 0 when every output matched, 1 when some differ, 2 on errors (a workload that fails is \
reported, the others still run).",
        after_help = "Examples:\n  \
validate compare pseudo_random --set n=128000 --repeat 20     quick\n  \
validate compare                                              every bundled workload\n  \
validate compare --out validate/measurements/h200/report.json --force --plot h200.svg\n  \
validate compare reduce smem_square --config configs/h200.toml --no-ncu"
    )]
    Compare(CompareArgs),

    /// Print the GPU's properties (name, compute capability, SMs, clocks, memory, L2)
    #[command(
        long_about = "Print the properties of a CUDA device as the driver reports them: name, \
compute capability, SM count, clocks, memory size and bus, L2 size, shared and constant memory, \
occupancy limits, and the driver's CUDA version. The name is what `compare --config auto` matches \
against the gpu.name of configs/*.toml.\n\n\
--write-config PATH writes a config skeleton in the TOML format of configs/*.toml from these \
attributes: name, compute capability, SM count and clock, threads, warps and blocks per SM, \
threads per block, registers, shared memory per SM and per block, constant memory, L2 size, and \
the DRAM bandwidth [derived] from the memory clock and bus width (2 x clock x bus bits / 8: the \
pin rate, which kernels do not reach). Every other value (latencies, cache geometries, bank \
width, constant caches, L1, throughputs, launch overhead) is taken from the nearest shipped config \
of the same compute capability major (else the latest one) and marked \
`# assumed: taken from configs/<x>.toml`; the command lists them. An existing file is never \
overwritten unless --force is given.",
        after_help = "Examples:\n  \
validate device\n  \
validate device --device 1\n  \
validate device --write-config configs/b200.toml\n  \
validate device --write-config configs/b200.toml --force      replace it"
    )]
    Device(DeviceArgs),

    /// Re-render a saved report; with --config, compare current predictions with its measurements
    #[command(
        long_about = "Re-render reports written by `validate compare --out`: the per-workload \
tables and the accuracy summary. No GPU needed.\n\n\
With --config, the simulator runs again for every workload of the report (same parameters) and \
its current predictions replace the saved ones, so that a change to the simulator or a config is \
checked against real measurements on a machine without a GPU.\n\n\
--plot FILE.svg draws predicted against measured (after --config's re-prediction): one panel per \
quantity (time, and each counter with a non-zero measurement), one point per launch, the y = x \
diagonal, the MAPE in each title; log-log axes where the values span more than 2 decades \
(launches with a zero are then left out). One report at a time.",
        after_help = "Examples:\n  \
validate report validate/measurements/h200/report.json\n  \
validate report validate/measurements/h200/report.json --config configs/h200.toml\n  \
validate report validate/measurements/h200/report.json --config configs/h200.toml --plot h200.svg"
    )]
    Report(ReportArgs),

    /// Measure latencies, bandwidths and constant/shared costs on the GPU and write them into a config
    #[command(
        long_about = crate::calibrate::long_help(),
        after_help = "Examples:\n  \
validate calibrate --plan                                      the benchmarks, no GPU needed\n  \
validate calibrate --config configs/h200.toml --out /tmp/h200.toml\n  \
validate calibrate --config configs/h200.toml > /tmp/h200.toml   the TOML on stdout, table on stderr\n  \
validate calibrate --only latency-l1,latency-l2,latency-dram --format json\n  \
validate calibrate --out configs/h200.toml --config configs/h200.toml --force   in place"
    )]
    Calibrate(CalibrateArgs),

    /// Internal: run each launch of a workload once (what `compare` profiles under ncu)
    #[command(hide = true)]
    ProfileOnce(ProfileOnceArgs),
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
    /// One kernels directory [default: the source tree's kernels/ and validate/calibrate/]
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
}

/// Arguments of `validate compare`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("written").args(["out", "plot"]).multiple(true)))]
pub struct CompareArgs {
    /// Bundled workload names or workload files [default: every bundled workload]
    pub workloads: Vec<String>,
    /// GPU config: `auto` (the configs/*.toml whose gpu.name is the device's, else one generated
    /// from its attributes), a bundled config's name (h200: `sim list --configs`) or a path, as
    /// `sim run` takes it
    #[arg(long, value_name = "auto|NAME|PATH", default_value = "auto")]
    pub config: String,
    /// Override a workload parameter, for every workload that has it: --set n=128000
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, i64)>,
    /// Write the JSON report here (after every workload, so an interrupted run keeps what it
    /// measured). An existing file is refused unless --force, as `sim run -o`
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Draw predicted against measured as an SVG: one panel per quantity, one point per launch.
    /// A new file (an existing one only with --force), never the --out report or the config
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Replace an existing --out report or --plot file (never an input)
    #[arg(long, requires = "written")]
    pub force: bool,
    /// Untimed launches before the timed ones, per launch
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub warmup: u32,
    /// Timed launches per launch (single, then back to back)
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Do not run Nsight Compute (timing and outputs only)
    #[arg(long)]
    pub no_ncu: bool,
    /// The ncu executable [default: ncu on PATH, then /usr/local/cuda/bin/ncu]
    #[arg(long, value_name = "PATH", conflicts_with = "no_ncu")]
    pub ncu: Option<PathBuf>,
    /// CUDA device ordinal
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
}

/// Arguments of `validate device`.
#[derive(Debug, clap::Args)]
pub struct DeviceArgs {
    /// CUDA device ordinal
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
    /// Write a config skeleton (TOML) from the device's attributes; the rest from a shipped config
    #[arg(long, value_name = "PATH")]
    pub write_config: Option<PathBuf>,
    /// Overwrite the --write-config file if it exists
    #[arg(long, requires = "write_config")]
    pub force: bool,
}

/// How `validate calibrate` prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// tables for people
    Table,
    /// one JSON object
    Json,
}

/// Arguments of `validate calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// The config to start from: `auto` (the configs/*.toml whose gpu.name is the device's, else
    /// one generated from its attributes), a bundled config's name or a path. Measured keys are
    /// replaced, the rest is kept byte for byte
    #[arg(long, value_name = "auto|NAME|PATH", default_value = "auto")]
    pub config: String,
    /// Write the calibrated config here [default: print it on stdout]
    #[arg(short = 'o', long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Overwrite the --out file if it exists
    #[arg(long, requires = "out")]
    pub force: bool,
    /// Results as tables or as one JSON object
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// List the benchmarks (what, how, unit, key, time) and exit; no GPU needed
    #[arg(long)]
    pub plan: bool,
    /// Run only these benchmarks (comma-separated ids from --plan; the clock always runs)
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub only: Vec<String>,
    /// CUDA device ordinal
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
}

/// Arguments of `validate report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Reports written by `validate compare --out`
    #[arg(required = true, value_name = "FILE")]
    pub reports: Vec<PathBuf>,
    /// Re-run the simulator with this config (a bundled name such as h200, or a path, as `sim
    /// run` takes it) and compare its predictions with the measurements
    #[arg(long, value_name = "NAME|PATH")]
    pub config: Option<PathBuf>,
    /// Draw predicted against measured as an SVG: one panel per quantity, one point per launch.
    /// A new file (an existing one only with --force), never the report or the config
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Overwrite the --plot file if it exists
    #[arg(long, requires = "plot")]
    pub force: bool,
    /// Print the accuracy document (Markdown) instead of the tables, e.g. to regenerate
    /// docs/accuracy.md: validate report validate/measurements/h200/report.json --config
    /// configs/h200.toml --markdown > docs/accuracy.md
    #[arg(long)]
    pub markdown: bool,
}

/// Arguments of the hidden `validate profile-once`.
#[derive(Debug, clap::Args)]
pub struct ProfileOnceArgs {
    /// Bundled workload name or workload file
    pub workload: String,
    /// GPU config (the plan depends on it)
    #[arg(long, value_name = "PATH")]
    pub config: PathBuf,
    /// Parameter overrides
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, i64)>,
    /// CUDA device ordinal
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
}

pub use sim::workload::parse_set;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn compare_defaults_and_options() {
        let c = Cli::try_parse_from(["validate", "compare"]).unwrap();
        let Cmd::Compare(a) = c.command else { panic!() };
        assert!(a.workloads.is_empty());
        assert_eq!((a.config.as_str(), a.warmup, a.repeat), ("auto", 100, 100));
        let c = Cli::try_parse_from([
            "validate",
            "compare",
            "reduce",
            "pseudo_random",
            "--set",
            "n=1024",
            "--warmup",
            "3",
            "--repeat",
            "5",
            "--no-ncu",
            "--out",
            "r.json",
        ])
        .unwrap();
        let Cmd::Compare(a) = c.command else { panic!() };
        assert_eq!(a.workloads, ["reduce", "pseudo_random"]);
        assert_eq!(a.set, [("n".to_string(), 1024)]);
        assert!(a.no_ncu && a.out.is_some());
        assert!(Cli::try_parse_from(["validate", "compare", "--repeat", "0"]).is_err());
        assert!(Cli::try_parse_from(["validate", "compare", "--no-ncu", "--ncu", "x"]).is_err());
        // As `sim run`: -o is --out, and --force (replace it) needs it.
        let c = Cli::try_parse_from(["validate", "compare", "-o", "r.json", "--force"]).unwrap();
        let Cmd::Compare(a) = c.command else { panic!() };
        assert!(a.force && a.out.is_some());
        assert!(Cli::try_parse_from(["validate", "compare", "--force"]).is_err());
    }

    #[test]
    fn calibrate_defaults_and_options() {
        let c = Cli::try_parse_from(["validate", "calibrate"]).unwrap();
        let Cmd::Calibrate(a) = c.command else {
            panic!()
        };
        assert_eq!(
            (a.config.as_str(), a.format, a.plan),
            ("auto", Format::Table, false)
        );
        assert!(a.out.is_none() && a.only.is_empty() && !a.force);
        let c = Cli::try_parse_from([
            "validate",
            "calibrate",
            "--config",
            "configs/h200.toml",
            "--out",
            "/tmp/x.toml",
            "--force",
            "--format",
            "json",
            "--only",
            "latency-l1,launch",
        ])
        .unwrap();
        let Cmd::Calibrate(a) = c.command else {
            panic!()
        };
        assert_eq!(a.only, ["latency-l1", "launch"]);
        assert!(a.force && a.format == Format::Json);
        assert!(Cli::try_parse_from(["validate", "calibrate", "--force"]).is_err());
        let mut cmd = Cli::command();
        let help = cmd
            .find_subcommand_mut("calibrate")
            .unwrap()
            .render_long_help()
            .to_string();
        for s in crate::calibrate::SPECS {
            assert!(help.contains(s.id), "{}: {help}", s.id);
        }
    }

    #[test]
    fn sets_parse() {
        assert_eq!(parse_set("n = 5"), Ok(("n".into(), 5)));
        assert!(parse_set("n").is_err());
        assert!(parse_set("n=x").is_err());
        assert!(parse_set("=1").is_err());
    }

    #[test]
    fn profile_once_is_hidden_and_report_needs_a_file() {
        let help = Cli::command().render_long_help().to_string();
        assert!(!help.contains("profile-once"), "{help}");
        assert!(Cli::try_parse_from(["validate", "profile-once", "w", "--config", "c"]).is_ok());
        assert!(Cli::try_parse_from(["validate", "report"]).is_err());
    }

    #[test]
    fn plot_write_config_and_force() {
        let c = Cli::try_parse_from(["validate", "report", "r.json", "--plot", "p.svg"]).unwrap();
        let Cmd::Report(a) = c.command else { panic!() };
        assert_eq!(a.plot.unwrap(), PathBuf::from("p.svg"));
        let c = Cli::try_parse_from(["validate", "compare", "--plot", "p.svg"]).unwrap();
        let Cmd::Compare(a) = c.command else { panic!() };
        assert_eq!(a.plot.unwrap(), PathBuf::from("p.svg"));
        let c = Cli::try_parse_from(["validate", "device", "--write-config", "x.toml", "--force"])
            .unwrap();
        let Cmd::Device(a) = c.command else { panic!() };
        assert!(a.force && a.write_config.is_some());
        assert!(Cli::try_parse_from(["validate", "device", "--force"]).is_err());
        for sub in ["compare", "report", "device"] {
            let mut cmd = Cli::command();
            let help = cmd
                .find_subcommand_mut(sub)
                .unwrap()
                .render_long_help()
                .to_string();
            let flag = if sub == "device" {
                "--write-config"
            } else {
                "--plot"
            };
            assert!(help.matches(flag).count() >= 3, "{sub}: {help}");
        }
    }
}

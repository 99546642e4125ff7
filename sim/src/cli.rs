//! The command line of the `sim` binary (clap): the subcommands, their options and the help
//! texts. Part of the binary, not of the library; `main.rs` does the work.

use clap::{Parser, Subcommand, ValueEnum};
use sim::compile::Compiler;
use sim::workload::parse_set;
use std::path::PathBuf;

/// Command line of the `sim` binary.
#[derive(Parser)]
#[command(
    name = "sim",
    version,
    about = "Simulate a CUDA kernel's memory behaviour from its PTX on a described GPU",
    long_about = "gpumemsim's simulator. It executes a kernel's PTX warp by warp (32 threads in lock step, \
with divergence), models the constant cache (broadcast vs serialized per distinct address), global memory \
(coalescing into 32-byte sectors, L1, L2, DRAM), and predicts the time on the GPU a config file describes. \
Counters are named after the Nsight Compute metrics they predict.",
    after_help = "Examples:\n  sim run rtx3090 pseudo_random\n  sim run configs/h200.toml one_access_per_thread --set n=128000 --format json\n  sim list\n  sim list --configs"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

// Parsed once per process: the size of `Run`'s options does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run workloads on a GPU config and print what their memory accesses cost
    #[command(
        override_usage = "sim run [OPTIONS] CONFIG WORKLOAD...\n       \
sim run [OPTIONS] --config CONFIG WORKLOAD...   (as `validate compare WORKLOAD... --config CONFIG`)",
        after_help = "Examples:\n  sim run rtx3090 pseudo_random\n  \
sim run rtx3090 one_access_per_block one_access_per_warp one_access_per_thread pseudo_random\n  \
sim run configs/h200.toml pseudo_random --set n=128000 --format json -o pr.json\n  \
sim run h200 reduce transpose --format csv --metrics regex:^dram__ --metrics smsp__inst_executed.sum\n  \
sim run rtx3090 path/to/my_workload.toml --per-instruction\n  \
sim run h200 ray --per-line                 (counts per CUDA source line, with the source)\n\n\
Reading the table: `const req/LDC` is the number of distinct addresses per warp-level constant load \
(1 = broadcast; 32 = fully serialized); `ld sectors/req` the 32-byte sectors per global load request (4 = a \
coalesced warp of 4-byte loads, 32 = scattered); the last lines say what bounds each launch.\n\n\
For programs: --format json prints one object with `schema_version`, the tool's version and git \
commit, the config's path and SHA-256, and a `workloads` list (one entry per workload, each with \
its `launches` and their `metrics` keyed by Nsight Compute names; counts are integers). \
--format csv prints one row per launch with the metric names as columns and their units in the \
second row, as `ncu --csv --page raw --print-units base` does. When one workload of several \
fails, the others are still reported, the failure is listed (JSON `failures`) and the exit code \
is 2. Try: sim run rtx3090 pseudo_random --format json | jq '.workloads[].launches[].metrics'\n\n\
Reference: docs/report-format.md (every JSON key and CSV column), docs/workload-format.md (workload \
files: keys, initializers, expressions)."
    )]
    Run {
        /// The GPU config, then the workloads. CONFIG: a bundled name (rtx3090, h200, ...:
        /// `sim list --configs`; the copy built into this binary) or a path to a config file
        /// (configs/rtx3090.toml). WORKLOAD: a bundled name (`sim list`) or a path to a workload
        /// file. With --config, every argument is a workload
        #[arg(required = true, value_name = "CONFIG|WORKLOAD")]
        positional: Vec<String>,
        /// The GPU config as an option, as `validate` takes it; then every argument is a workload
        #[arg(long = "config", value_name = "CONFIG")]
        config: Option<String>,
        /// Override a workload parameter, e.g. --set n=128000 (repeatable)
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
        sets: Vec<(String, i64)>,
        /// What-if config: change a config key before it is validated (repeatable), a dotted
        /// key as in the TOML: --config-set l1.size_bytes=262144 --config-set
        /// constant.cache[0].line_bytes=128 (`[1]`: the second cache level). The same checks as
        /// in a file apply; the JSON report lists the changes under `config_sets`
        #[arg(long = "config-set", value_name = "KEY=VALUE", value_parser = sim::config::set::parse_config_set)]
        config_sets: Vec<(String, String)>,
        /// Output format: a table for people; JSON (one object) or CSV (one row per launch),
        /// keyed by Nsight Compute metric names, for programs
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Report only these metrics, as ncu's --metrics: comma-separated names, or
        /// `regex:EXPR` for every metric the expression matches somewhere (`^...$`: the whole
        /// name). Repeatable; `sim list --metrics` lists the names
        #[arg(long = "metrics", value_name = "NAMES|regex:EXPR")]
        metrics: Vec<String>,
        /// Write the report to FILE instead of standard output (any format). An existing file
        /// is refused unless --force; an input of the run is always refused
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace an existing --out or --html file, or existing files of --save-outputs
        #[arg(long)]
        force: bool,
        /// Also write a self-contained HTML report to FILE (no network needed): the launches'
        /// summary, per launch its bounds, warp states (Nsight Compute's stall reasons), source
        /// view and the bank picture of its worst shared access. An existing file is refused
        /// unless --force
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// A `validate` report (the layout of validate/measurements/h200/report.json) whose
        /// measurements --html shows beside the predictions, launches matched by workload and
        /// label
        #[arg(long, value_name = "REPORT.json")]
        measured: Option<PathBuf>,
        /// Write every output buffer (`output = true`) after each launch into DIR (made if
        /// missing) as a NumPy file, DIR/<workload>.<launch>.<buffer>.npy, of the buffer's type
        /// and `shape` (default: one dimension of `count`); an image buffer (`u8` of shape
        /// [h, w, 4], [h, w, 3] or [h, w]; `u32` of shape [h, w]) also as a PNG. Existing files
        /// are refused unless --force. Try: sim run h200 ray --save-outputs out/
        #[arg(long, value_name = "DIR")]
        save_outputs: Option<PathBuf>,
        /// Run each launch twice and report the second (back-to-back timing): L2 keeps what the
        /// first left, every SM's L1 and nearest constant cache start empty, as on an H200
        #[arg(long)]
        warm: bool,
        /// Also list the PTX instructions of each launch with their memory statistics, the most
        /// costly over the launch first, with the CUDA source line of each (from the PTX's
        /// `.loc` line info)
        #[arg(long)]
        per_instruction: bool,
        /// Also attribute every count of each launch to CUDA source lines, as Nsight Compute's
        /// Source page: per line the warp instructions executed and their share, requests,
        /// sectors, shared wavefronts and bank conflicts, L1 hit rate and memory cost, the most
        /// costly line (over the launch, not per execution) first, with the line's source text.
        /// Lines come from the PTX's `.loc` directives (NVRTC and `nvcc -lineinfo` write them;
        /// the bundled kernels have them); PTX lines stand in where there are none. The source
        /// file is looked for beside the workload file, its `cuda` source and its PTX. JSON:
        /// `per_source_line` per launch, `source_files` per workload
        #[arg(long)]
        per_line: bool,
        /// Run only the launch with this label (repeatable), e.g. --launch constant
        #[arg(long = "launch", value_name = "LABEL")]
        launches: Vec<String>,
        /// Checks as compute-sanitizer's tools (comma-separated, repeatable): `memcheck` (always
        /// on: every distinct out-of-bounds or misaligned access of a launch is listed and the
        /// run fails), `racecheck` (shared-memory hazards between threads of a block with no
        /// barrier between them: warnings with both PTX/CUDA lines, the run still succeeds
        /// unless --check-fail), `synccheck` (a `bar.sync` reached by part of a warp is an error). A block
        /// deadlocked at different barriers is always an error. Try: sim run h200 my.toml
        /// --check racecheck,synccheck
        #[arg(long = "check", value_name = "TOOLS", value_delimiter = ',', value_parser = ["memcheck", "racecheck", "synccheck"])]
        check: Vec<String>,
        /// The most distinct memory errors (memcheck) a launch lists
        #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        memcheck_limit: u32,
        /// With --check racecheck, a hazard fails the run (exit code 2)
        #[arg(long)]
        check_fail: bool,
        /// Stop a launch after this many warp instructions (runaway kernels)
        #[arg(long, default_value_t = 1 << 34, value_name = "N")]
        max_warp_instructions: u64,
        /// Host memory the run may take, e.g. 4G, 512M (powers of 1024) or bytes. Before it
        /// allocates, a run checks what it needs (each buffer, each launch's schedule and
        /// per-instruction state, the trace of its blocks) and stops with an error naming the
        /// input beyond it; default: 3/4 of the available memory (and of what `ulimit -v` leaves)
        #[arg(long, value_name = "SIZE", value_parser = parse_max_memory)]
        max_memory: Option<u64>,
        /// Write what the kernels' `printf` calls print into FILE (all launches, in order)
        /// instead of the default: standard output before each workload's table, or standard
        /// error with --format json/csv on standard output (the document stays whole). Within a
        /// launch the order is block, warp, the warp's calls, lane. An existing file is refused
        /// unless --force
        #[arg(long = "printf", value_name = "FILE")]
        printf: Option<PathBuf>,
        /// Size of the printf FIFO (cudaLimitPrintfFifoSize), e.g. 1M (default) or bytes: when a
        /// launch prints more, its oldest calls are overwritten, as on the GPU, and a note says
        /// how many
        #[arg(long, value_name = "SIZE", value_parser = parse_max_memory)]
        printf_fifo_bytes: Option<u64>,
        /// Which waves to simulate: `full`, `auto` (full unless a launch has more than 512 waves of
        /// blocks; then about 256 waves spread evenly, extrapolated, with the estimated error
        /// printed), or N (wave 0, every N-th wave and the last)
        #[arg(long, default_value = "auto", value_parser = sim::sweep::parse_sampling, value_name = "auto|full|N")]
        sample: sim::exec::Sampling,
        /// Threads simulating SMs in parallel (default: one per core). Results are identical
        /// for any number
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Compiler for workloads that name a CUDA source (`cuda = "kernel.cu"`): nvrtc, clang, or
        /// auto (NVRTC if libnvrtc loads, else clang); default: $GPUMEMSIM_COMPILER, else auto
        #[arg(long, value_name = "COMPILER")]
        compiler: Option<Compiler>,
        /// A compiler option for workloads that name a CUDA source, after the workload's own
        /// `nvrtc_options` (repeatable), in NVRTC's spelling: --nvrtc-option=-DTILE=32
        /// --nvrtc-option=--use_fast_math (clang takes only -D, -U, -I and -std=)
        #[arg(
            long = "nvrtc-option",
            value_name = "OPTION",
            allow_hyphen_values = true
        )]
        nvrtc_options: Vec<String>,
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
        /// Which nvdisasm lists the SASS that ptxas made (with -lineinfo), so that warp
        /// instructions, shared load/store instructions and LDC requests are counted on the
        /// kernel's own SASS: a path, `off` (estimated from the PTX), or `auto`: the PyPI wheel
        /// nvidia-cuda-nvdisasm, then $CUDA_HOME/bin, /usr/local/cuda/bin and the PATH. Default:
        /// $GPUMEMSIM_NVDISASM, else auto. The JSON report's `instructions_from` says which
        #[arg(long, value_name = "auto|off|PATH")]
        nvdisasm: Option<sim::sass::Ptxas>,
    },
    #[command(
        override_usage = "sim sweep [OPTIONS] FILE.toml",
        after_help = "A sweep file lists what to combine; every point of the product runs:\n\n  \
configs = [\"rtx3090\", \"h200\"]                    # bundled names or paths (relative to the file)\n  \
config_sets = [{}, { \"l1.size_bytes\" = 65536 }]    # what-if variants of each config (--config-set)\n  \
workloads = [\"pseudo_random\"]                      # bundled names or paths\n  \
warm = false                                       # optional, as --warm\n  \
sample = \"auto\"                                    # optional, as --sample\n  \
[params]                                           # each a value or a list (--set)\n  \
n = [1024, 4096, 16384]\n\n\
That file has 2 x 2 x 1 x 3 = 12 points. Points are numbered in that order (configs outermost, the \
last param fastest). Output: one row per launch of each point, columns `point`, `config` (with its \
changes: h200[l1.size_bytes=65536]), `workload`, `param.NAME`, `error`, `launch`, `kernel`, then every \
metric under its Nsight Compute name: the rows of Python's gpumemsim.sweep, and each point's numbers \
are those of `sim run` for it. A point that fails (a bad config set, an unknown workload) is one row \
whose `error` says why; the others still run, and the exit code stays 0 (standard error counts the \
failed points).\n\nExamples:\n  sim sweep docs/examples/sweep.toml -o sweep.csv\n  \
sim sweep docs/examples/sweep.toml --format json | jq '.[] | {config, launch, t: .\"gpu__time_duration.sum\"}'\n\n\
Reference: docs/sweep-format.md."
    )]
    /// Run every point of a sweep file (configs x what-if config sets x workloads x params) and
    /// print one row per launch, as CSV or JSON
    Sweep {
        /// The sweep file (TOML: configs, config_sets, workloads, params; see below)
        #[arg(value_name = "FILE.toml")]
        file: PathBuf,
        /// Output format: CSV (a header, then one line per launch) or JSON (an array of rows)
        #[arg(long, value_enum, default_value_t = SweepFormat::Csv)]
        format: SweepFormat,
        /// Write the rows to FILE instead of standard output; an existing file only with --force
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace an existing --out file
        #[arg(long)]
        force: bool,
        /// Threads running points (and their SMs) in parallel (default: one per core). Results
        /// are identical for any number
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
    },
    /// Compile a CUDA source to PTX with NVRTC or clang, as `sim run` does for `cuda = "..."`
    /// workloads, and print the PTX
    #[command(
        after_help = "Examples:\n  sim compile tests/fixtures/user_kernel/histogram.cu --arch sm_90 > histogram.ptx\n  \
sim compile my_kernel.cu --compiler clang --arch sm_80\n\n\
NVRTC: pip install nvidia-cuda-nvrtc-cu12 (found where pip puts it); clang: \
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
        /// A compiler option (repeatable), in NVRTC's spelling: --nvrtc-option=-DTILE=32
        /// --nvrtc-option=--use_fast_math (clang takes only -D, -U, -I and -std=)
        #[arg(
            long = "nvrtc-option",
            value_name = "OPTION",
            allow_hyphen_values = true
        )]
        nvrtc_options: Vec<String>,
    },
    /// List the bundled workloads, one line each (or the configs, or the metrics)
    #[command(after_help = "Examples:\n  sim list\n  sim list --configs\n  sim list --metrics")]
    List {
        /// List the bundled GPU configs instead: name, GPU, file, and the provenance tags its
        /// values cite (how many values come from NVIDIA documents, papers, measurements...)
        #[arg(long, conflicts_with = "metrics")]
        configs: bool,
        /// List the metrics `sim run` reports, with their units, for --metrics
        #[arg(long)]
        metrics: bool,
    },
}

/// `sim sweep --format`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum SweepFormat {
    /// A header of column names, then one line per launch of each point.
    Csv,
    /// An array of row objects (the records of the DataFrame).
    Json,
}

/// `sim run --format`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum Format {
    /// Tables and explanations for people.
    Table,
    /// One JSON object (`schema_version`, `workloads`, ...).
    Json,
    /// One row per launch, Nsight Compute metric names as columns.
    Csv,
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

/// `--max-memory SIZE` (`4G`, `512M`, bytes).
fn parse_max_memory(s: &str) -> std::result::Result<u64, String> {
    sim::memory::parse_size(s)
}

//! `validate calibrate`: microbenchmarks on the GPU at hand whose results are written into a
//! config, each key marked as measured.
//!
//! Three layers, so that everything but the GPU runs in tests:
//! - [`bench`] runs the CUDA kernels (`validate/calibrate/*.cu`, their NVRTC PTX embedded) and
//!   reduces each benchmark to a few numbers: a [`Raw`] record. It is the only part that needs a
//!   GPU.
//! - [`analyze`] turns a [`Raw`] record and the base config into rows for people (what was
//!   measured, value, unit, the key it sets) and [`edit::Setting`]s: pure.
//! - [`edit`] writes the settings into the base config's text in place (toml_edit), [`fit`] holds
//!   the arithmetic (line fits, cache levels from a latency curve, unit conversions).
//!
//! Latencies are SM cycles counted by `clock64` inside the kernel, so they do not depend on the
//! clock; times from CUDA events are converted to cycles with the SM clock measured during the
//! run (the `clock` benchmark), which is also written as `sm.clock_mhz`.

mod analyze;
pub mod bench;
pub mod edit;
pub mod fit;

pub use analyze::{analyze, clock_used, predicted_wavefronts};

use edit::Setting;
use fit::Level;
use serde::Serialize;
use sim::config::GpuConfig;
use sim::memory::shared::{wavefronts, Banks};
use sim::memory::WarpAccess;

/// One benchmark, as `--plan` and `--help` describe it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spec {
    /// The name `--only` takes.
    pub id: &'static str,
    /// What it measures, in a few words.
    pub measures: &'static str,
    /// How: the kernel and what is counted.
    pub method: &'static str,
    /// The unit of the value(s) written.
    pub unit: &'static str,
    /// The config keys it sets (none: a check of the model).
    pub keys: &'static [&'static str],
    /// Seconds it takes on an H200, module loading included (rounded up).
    pub seconds: f64,
}

/// Every benchmark, in the order they run. `clock` always runs: the others need its clock.
pub const SPECS: &[Spec] = &[
    Spec {
        id: "clock",
        measures: "SM clock",
        method:
            "one warp per SM spins on clock64 for 1M and 21M cycles; the cycle difference over \
the CUDA-event time difference (the launch overhead cancels), median of 3, at the start and at the \
end of the run",
        unit: "MHz",
        keys: &["sm.clock_mhz"],
        seconds: 0.2,
    },
    Spec {
        id: "latency-l1",
        measures: "L1 hit latency",
        method: "one thread follows a pointer chain: 8192 dependent ld.global.u64 (plain loads, \
cached in L1) over a warm 8 KiB chain (one pointer per 128-byte line); cycles per load",
        unit: "cycles",
        keys: &["l1.latency_cycles"],
        seconds: 0.1,
    },
    Spec {
        id: "latency-l2",
        measures: "L2 hit latency",
        method: "8192 dependent ld.global.cg.u64 (L2 only, never an L1 hit) over a warm 1 MiB \
chain, pointers 256 bytes apart in scattered order; cycles per load",
        unit: "cycles",
        keys: &["l2.latency_cycles"],
        seconds: 0.1,
    },
    Spec {
        id: "latency-dram",
        measures: "DRAM latency (L2 miss)",
        method: "16384 dependent ld.global.cg.u64 through a cold 16 MiB chain (pointers 256 bytes \
apart, scattered order), each run right after reading 32 x L2 (at most 2 GiB) of other data to \
evict it; median of 3 runs",
        unit: "cycles",
        keys: &["dram.latency_cycles"],
        seconds: 0.2,
    },
    Spec {
        id: "latency-shared",
        measures: "shared memory latency",
        method: "one thread, 8192 dependent ld.shared.u32 through a chain of shared addresses",
        unit: "cycles",
        keys: &["shared.latency_cycles"],
        seconds: 0.1,
    },
    Spec {
        id: "latency-constant",
        measures: "constant cache levels",
        method: "one thread, dependent ld.const through __constant__ chains (64 bytes apart) over \
working sets of 512 B to 64 KiB; each plateau of the curve is a level (its latency), each step a \
size (the largest working set before it, rounded to the level's line x ways x 2^k)",
        unit: "cycles, bytes",
        keys: &[
            "constant.cache[0].latency_cycles",
            "constant.cache[0].size_bytes",
            "constant.cache[1].latency_cycles",
            "constant.cache[1].size_bytes",
        ],
        seconds: 0.2,
    },
    Spec {
        id: "bandwidth-dram",
        measures: "DRAM bandwidth",
        method: "a copy of 16 x L2 (at most 1 GiB) to another buffer, one 16-byte word per \
thread over the whole GPU: bytes read + written over the CUDA-event time, median of 10; a \
read-only pass over both halves is reported too",
        unit: "GB/s",
        keys: &["dram.bandwidth_gb_per_s"],
        seconds: 0.5,
    },
    Spec {
        id: "bandwidth-l2",
        measures: "L2 bandwidth",
        method: "the full GPU reads a working set of a quarter of L2 128 times with \
ld.global.cg.v4 (L2 only), bytes over CUDA-event time x the measured SM clock, median of 10",
        unit: "bytes/cycle",
        keys: &["l2.bandwidth_bytes_per_cycle"],
        seconds: 0.2,
    },
    Spec {
        id: "bandwidth-shared",
        measures: "shared memory bandwidth per SM",
        method:
            "one block of 1024 threads per SM, conflict-free ld.shared.v4 (4 wavefronts each); \
bytes per clock64 cycle per SM (median over SMs), divided by banks x bank width per wavefront",
        unit: "wavefronts/cycle",
        keys: &["shared.wavefronts_per_cycle"],
        seconds: 0.1,
    },
    Spec {
        id: "constant-addresses",
        measures: "constant cache cost per distinct address",
        method:
            "16 warps of one SM issue warp-level ld.const (LDC) whose lanes read 1, 2, 4, 8, 16 \
or 32 distinct cached words; the SM's cycles per warp-level load against the distinct addresses \
fit a line: addresses per cycle = 1 / slope",
        unit: "addresses/cycle",
        keys: &["constant.addresses_per_cycle"],
        seconds: 0.1,
    },
    Spec {
        id: "constant-misses",
        measures: "constant misses in flight",
        method: "as constant-addresses, with lanes 256 bytes and loads 8 KiB apart, every address \
moving 5 lines on each iteration, so that all miss the smallest constant cache and the next level \
serves them; the slope is the cycles each missing address occupies the SM: misses in flight = \
the next level's latency (from latency-constant, else the config's) / slope",
        unit: "misses",
        keys: &["constant.misses_in_flight"],
        seconds: 0.1,
    },
    Spec {
        id: "bank-conflicts",
        measures: "shared bank conflicts vs stride",
        method:
            "16 warps of one SM issue warp-level ld.shared.u32, lane l reading word l x stride \
(stride 1 to 32); the SM's cycles per warp-level load against the wavefronts the simulator \
predicts (gcd(stride, 32) on 32 4-byte banks): cycles per wavefront and how well the line fits \
(a check of the model; sets nothing)",
        unit: "cycles/wavefront",
        keys: &[],
        seconds: 0.2,
    },
    Spec {
        id: "launch",
        measures: "kernel launch overhead",
        method: "an empty kernel (one warp): 1000 launches queued behind a 20 ms spin kernel \
between two CUDA events (the host's launch cost hidden, as in Nsight Compute's \
gpu__time_duration): the GPU's time per launch is written; one launch queued the same way (less \
an empty event pair) and one launched alone while the GPU idles are reported",
        unit: "ns",
        keys: &["gpu.launch_overhead_ns"],
        seconds: 0.1,
    },
];

/// The spec named `id`.
pub fn spec(id: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.id == id)
}

/// A pointer chase, reduced.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Chase {
    /// Cycles per dependent load (median over runs).
    pub cycles_per_load: f64,
    /// Timed loads per run.
    pub loads: u64,
    /// Bytes the chain spans.
    pub bytes: u64,
    /// Runs.
    pub runs: u32,
}

/// Bytes moved and the median CUDA-event time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Transfer {
    /// Bytes moved per launch (read + written).
    pub bytes: f64,
    /// Median milliseconds per launch.
    pub ms: f64,
}

/// Everything the GPU measured, reduced to numbers ([`bench::run`] fills it; tests make it up).
/// A benchmark that did not run leaves its fields empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Raw {
    /// The device's name.
    pub device: String,
    /// SM clock measured at the start of the run, MHz.
    pub clock_start_mhz: Option<f64>,
    /// SM clock measured at the end of the run, MHz.
    pub clock_end_mhz: Option<f64>,
    /// The device attribute CLOCK_RATE (the maximum SM clock), MHz.
    pub attribute_clock_mhz: Option<f64>,
    /// latency-l1.
    pub l1: Option<Chase>,
    /// latency-l2.
    pub l2: Option<Chase>,
    /// latency-dram.
    pub dram: Option<Chase>,
    /// latency-shared.
    pub shared: Option<Chase>,
    /// latency-constant: (working-set bytes, cycles per load).
    pub constant_sweep: Vec<(f64, f64)>,
    /// bandwidth-dram: the read-only pass.
    pub dram_read: Option<Transfer>,
    /// bandwidth-dram: the copy (bytes read + written).
    pub dram_copy: Option<Transfer>,
    /// bandwidth-l2.
    pub l2_read: Option<Transfer>,
    /// bandwidth-shared: bytes per cycle of each SM that ran a block.
    pub shared_bytes_per_cycle: Vec<f64>,
    /// constant-addresses: (distinct addresses, SM cycles per warp-level load).
    pub constant_addresses: Vec<(f64, f64)>,
    /// constant-misses: (distinct addresses, SM cycles per warp-level load), every address
    /// missing the smallest constant cache.
    pub constant_misses: Vec<(f64, f64)>,
    /// bank-conflicts: (stride in words, SM cycles per warp-level load).
    pub bank_conflicts: Vec<(f64, f64)>,
    /// Warps per block of constant-addresses and bank-conflicts.
    pub warps: u32,
    /// launch: median µs of single launches, each between two events (the host's launch included).
    pub launch_single_us: Option<f64>,
    /// launch: the GPU's µs for one launch queued behind a spin kernel, less an empty event pair.
    pub launch_gpu_single_us: Option<f64>,
    /// launch: the GPU's µs per launch of 1000 launches queued behind a spin kernel.
    pub launch_gpu_back_to_back_us: Option<f64>,
    /// launch: the host took longer to queue the 1000 launches than the spin kernel ran, so the
    /// back-to-back time may include the host's.
    pub launch_queue_drained: bool,
}

/// One measured quantity, for the table and the JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The benchmark's id.
    pub bench: &'static str,
    /// What the value is.
    pub quantity: String,
    /// The value, in `unit`.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// The config key it sets, if any.
    pub key: Option<String>,
    /// How it was measured and derived (the comment written above the key).
    pub detail: String,
}

/// A measured curve (for the table's notes and the JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    /// The benchmark's id.
    pub bench: &'static str,
    /// What x is.
    pub x: &'static str,
    /// What y is.
    pub y: &'static str,
    /// (x, y), as measured.
    pub points: Vec<(f64, f64)>,
    /// The model's value at each x, when there is one (the predicted wavefronts).
    pub model: Option<Vec<f64>>,
}

/// Which SM clock converted times to cycles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClockUsed {
    /// MHz.
    pub mhz: f64,
    /// Where it came from, in words.
    pub source: String,
}

/// The analysis of a run: rows, the settings to write, curves, warnings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The clock used for conversions.
    pub clock: ClockUsed,
    /// Every measured quantity.
    pub rows: Vec<Row>,
    /// The keys to write (rows with a key whose value passed its checks).
    pub settings: Vec<Setting>,
    /// The curves behind the fitted rows.
    pub curves: Vec<Curve>,
    /// What could not be measured or written, and why.
    pub warnings: Vec<String>,
}

/// `validate calibrate --help`: what it does, then every benchmark with its unit, key and time.
pub fn long_help() -> String {
    let mut out = String::from(
        "Run microbenchmarks on the GPU at hand and write their results into a config, each \
measured key marked `# measured: validate calibrate, <device>, <date>` with a comment above it \
saying how it was measured and what the value was before. Every other byte of the base config \
(--config) is kept: unmeasured keys, comments, order.\n\n\
Latencies are pointer chases: one thread follows a chain of addresses, each load's address being \
the value the previous one returned, timed with clock64 inside the kernel (SM cycles: \
load-to-use, as the config's *_latency_cycles keys count them). Bandwidths are timed with CUDA \
events; bytes per cycle use the SM clock measured during the run (a clock64 spin against event \
time, at the start and the end; the table says which clock was used). The kernels are CUDA C \
in validate/calibrate/*.cu with inline PTX for the exact load instructions; their NVRTC PTX is \
embedded in the binary, so calibrate needs only the CUDA driver.\n\n\
Output: without --out, the calibrated TOML goes to stdout and the tables to stderr; with --out \
PATH, the TOML goes to PATH (an existing file only with --force) and the tables to stdout. \
--format json prints one JSON object instead of the tables (holding the TOML too when there is \
no --out). --plan lists the benchmarks without a GPU. Without a CUDA driver or device: one line \
on stderr, exit code 2. Exit code 1 when the calibrated config does not load (a measurement out \
of the schema's range; it is then not written).\n\nBenchmarks (about ",
    );
    let total: f64 = SPECS.iter().map(|s| s.seconds).sum();
    out += &format!(
        "{total:.1} s of GPU work on an H200, plus a second or two to load the kernels):\n"
    );
    for s in SPECS {
        let keys = if s.keys.is_empty() {
            "sets nothing (a check of the model)".to_string()
        } else {
            format!("sets {}", s.keys.join(", "))
        };
        out += &format!(
            "\n{} ({}, {}; {keys}; ~{:.1} s): {}\n",
            s.id, s.measures, s.unit, s.seconds, s.method
        );
    }
    out
}

/// The `--plan` listing as rows of text: id, measures, unit, keys, seconds, method.
pub fn plan_rows() -> Vec<[String; 6]> {
    SPECS
        .iter()
        .map(|s| {
            [
                s.id.to_string(),
                s.measures.to_string(),
                s.unit.to_string(),
                if s.keys.is_empty() {
                    "(a check: sets nothing)".into()
                } else {
                    s.keys.join(", ")
                },
                format!("{:.1}", s.seconds),
                s.method.to_string(),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests;

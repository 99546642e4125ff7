//! The measurement report: what `validate compare --out` writes and `validate report` reads.
//! Committed reports (`validate/measurements/<gpu>/report.json`) let CI, which has no GPU, check
//! the simulator against real hardware. Like `sim run --format json`, the layout is a contract:
//! fields may be added, never renamed. Metrics are keyed by Nsight Compute names.
//!
//! ```json
//! {"device": {"name": "NVIDIA H200", "compute_capability": "9.0", ...},
//!  "driver": "13.0", "cuda": "12.8", "ncu": "Version 2025.3.1.0 ...",
//!  "config": "configs/h200.toml", "timestamp": "2026-11-21T10:00:00Z",
//!  "workloads": [{"workload": "pseudo_random", "params": {"n": 12800000},
//!    "launches": [{"label": "constant", "kernel": "add_constant_constant_memory",
//!      "predicted": {"gpu__time_duration.sum": 1290000.0, ...},
//!      "measured": {"gpu__time_duration.sum": 1597376.0, ...},
//!      "time_us": {"median": 1601.2, "min": 1598.0, "max": 1610.5, "p10": ..., "p90": ...,
//!                  "mean_back_to_back": 1596.3, "repeats": 100},
//!      "outputs_match": true}]}]}
//! ```

use crate::outputs::Tolerance;
use crate::stats::TimeStats;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The GPU's properties as the driver reports them (`validate device`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Marketing name (`NVIDIA H200`), matched against a config's `gpu.name`.
    pub name: String,
    /// `MAJOR.MINOR`.
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Maximum SM clock in MHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`).
    pub sm_clock_mhz: Option<f64>,
    /// Peak memory clock in MHz.
    pub memory_clock_mhz: Option<f64>,
    /// Memory bus width in bits.
    pub memory_bus_bits: Option<u32>,
    /// Device memory in bytes.
    pub memory_bytes: u64,
    /// L2 cache in bytes.
    pub l2_bytes: Option<u64>,
    /// Shared memory per SM in bytes.
    pub shared_per_sm_bytes: Option<u64>,
    /// Shared memory a block may use without opting in (static and default dynamic), in bytes.
    #[serde(default)]
    pub shared_per_block_bytes: Option<u64>,
    /// Shared memory a block may opt in to, in bytes.
    pub shared_per_block_optin_bytes: Option<u64>,
    /// Constant memory in bytes.
    pub constant_bytes: Option<u64>,
    /// Threads per SM.
    pub max_threads_per_sm: Option<u32>,
    /// Blocks per SM.
    pub max_blocks_per_sm: Option<u32>,
    /// Threads per block.
    #[serde(default)]
    pub max_threads_per_block: Option<u32>,
    /// 32-bit registers per SM.
    pub registers_per_sm: Option<u32>,
    /// Threads per warp.
    pub warp_size: Option<u32>,
}

/// The report of one `validate compare` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The GPU.
    pub device: DeviceInfo,
    /// Driver version (`cuDriverGetVersion`: 13000 → `13.0`).
    pub driver: String,
    /// The CUDA API version of validate's bindings (cudarc's `cuda-12080` feature: `12.8`).
    pub cuda: String,
    /// Nsight Compute's version line, when counters were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ncu: Option<String>,
    /// The simulator config whose predictions are in `predicted`: its path, or, when
    /// `--config auto` found none for the device, `generated from device attributes (base:
    /// configs/h200.toml)`.
    pub config: String,
    /// When the measurement was made, UTC (`2026-11-21T10:00:00Z`).
    pub timestamp: String,
    /// Warm-up launches before the timed ones.
    #[serde(default)]
    pub warmup: u32,
    /// Timed launches.
    #[serde(default)]
    pub repeat: u32,
    /// How outputs were compared.
    #[serde(default)]
    pub tolerance: Tolerance,
    /// One entry per workload, in the order run.
    pub workloads: Vec<WorkloadReport>,
}

/// One workload's launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadReport {
    /// Bundled workload name or workload file, as given on the command line.
    pub workload: String,
    /// Its parameters after `--set` overrides.
    pub params: BTreeMap<String, i64>,
    /// Why the workload could not be measured, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why ncu's counters are missing, or what ncu warned about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Where the GPU's driver placed each buffer, in the workload's order (empty in reports
    /// made before it was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<BufferPlace>,
    /// Launches in order.
    pub launches: Vec<LaunchReport>,
}

/// One buffer's place in the GPU's address space, as `validate compare` allocated it
/// (`cuMemAllocAsync` where the device has memory pools, else `cuMemAlloc`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferPlace {
    /// The workload's buffer name.
    pub name: String,
    /// Its device address, in hex (`0x7f3a00000000`).
    pub address: String,
    /// Its size in bytes (the allocation has at least 1).
    pub bytes: u64,
}

/// One launch: predicted and measured metrics, event timings, the output check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchReport {
    /// Launch label.
    pub label: String,
    /// PTX entry.
    pub kernel: String,
    /// The simulator's metrics (Nsight Compute names; time in ns).
    pub predicted: BTreeMap<String, f64>,
    /// Nsight Compute's measurements of the same metrics (empty without ncu).
    pub measured: BTreeMap<String, f64>,
    /// CUDA-event timings in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<TimeStats>,
    /// Whether every output buffer matched the simulator's after this launch.
    pub outputs_match: bool,
    /// One line per differing output buffer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<String>,
}

impl Report {
    /// Writes the report as pretty JSON, creating the directory.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Reads a report.
    pub fn load(path: &Path) -> Result<Report> {
        let text = sim::files::read_text(path, "validate report")
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a validate report", path.display()))
    }
}

/// `cuDriverGetVersion`'s number as text: 13000 → `13.0`, 12080 → `12.8`.
pub fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC); past jiff's range (the end of
/// 9999, less a day of offsets), `jiff::Timestamp::MAX`.
pub fn utc_timestamp(unix_seconds: u64) -> String {
    format_utc(unix_seconds, "%Y-%m-%dT%H:%M:%SZ")
}

/// `unix_seconds` formatted by `strftime`-style `format` in UTC (clamped to jiff's range).
pub(crate) fn format_utc(unix_seconds: u64, format: &str) -> String {
    let t = i64::try_from(unix_seconds)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .unwrap_or(jiff::Timestamp::MAX);
    t.strftime(format).to_string()
}

/// Now, as [`utc_timestamp`].
pub fn now_utc() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small report with two launches, one without ncu counters.
    pub(crate) fn sample() -> Report {
        let m = |v: &[(&str, f64)]| v.iter().map(|(k, x)| (k.to_string(), *x)).collect();
        Report {
            device: DeviceInfo {
                name: "NVIDIA H200".into(),
                compute_capability: "9.0".into(),
                sm_count: 132,
                sm_clock_mhz: Some(1980.0),
                memory_bytes: 150_000_000_000,
                l2_bytes: Some(62_914_560),
                ..DeviceInfo::default()
            },
            driver: "13.0".into(),
            cuda: "12.8".into(),
            ncu: Some("Version 2025.3.1.0".into()),
            config: "configs/h200.toml".into(),
            timestamp: "2026-11-21T10:00:00Z".into(),
            warmup: 100,
            repeat: 100,
            tolerance: Tolerance::default(),
            workloads: vec![WorkloadReport {
                workload: "pseudo_random".into(),
                params: [("n".to_string(), 128_000)].into(),
                error: None,
                warnings: vec![],
                buffers: vec![],
                launches: vec![
                    LaunchReport {
                        label: "constant".into(),
                        kernel: "add_constant_constant_memory".into(),
                        predicted: m(&[
                            ("gpu__time_duration.sum", 20_000.0),
                            ("idc__requests.sum", 1.6e6),
                        ]),
                        measured: m(&[
                            ("gpu__time_duration.sum", 23_000.0),
                            ("idc__requests.sum", 1.6e6),
                        ]),
                        time_us: TimeStats::from_samples(&[23.3, 23.0, 24.1], 19.3),
                        outputs_match: true,
                        mismatches: vec![],
                    },
                    LaunchReport {
                        label: "global".into(),
                        kernel: "add_constant_global_memory".into(),
                        predicted: m(&[("gpu__time_duration.sum", 8_000.0)]),
                        measured: BTreeMap::new(),
                        time_us: TimeStats::from_samples(&[7.1, 7.2], 4.1),
                        outputs_match: false,
                        mismatches: vec![
                            "sums: 1 of 128000 elements differ: [5] expected 5, got 0".into(),
                        ],
                    },
                ],
            }],
        }
    }

    #[test]
    fn a_report_round_trips_through_json_and_a_file() {
        let r = sample();
        let text = serde_json::to_string_pretty(&r).unwrap();
        assert!(text.contains("\"mean_back_to_back\""), "{text}");
        assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), r);
        let dir = std::env::temp_dir().join(format!("validate-report-{}", std::process::id()));
        let path = dir.join("h200/report.json");
        r.save(&path).unwrap();
        assert_eq!(Report::load(&path).unwrap(), r);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_documented_minimal_layout_loads() {
        let text = r#"{"device": {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
            "memory_bytes": 1}, "driver": "13.0", "cuda": "12.8", "config": "configs/h200.toml",
            "timestamp": "2026-11-21T10:00:00Z", "workloads": [{"workload": "w", "params": {},
            "launches": [{"label": "a", "kernel": "k", "predicted": {}, "measured": {},
            "time_us": {"median": 1, "min": 1, "max": 1, "p10": 1, "p90": 1,
            "mean_back_to_back": 1, "repeats": 1}, "outputs_match": true}]}]}"#;
        let r: Report = serde_json::from_str(text).unwrap();
        assert_eq!(r.workloads[0].launches[0].time_us.unwrap().median, 1.0);
        assert_eq!(r.tolerance, Tolerance::default());
    }

    #[test]
    fn timestamps_and_versions() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc_timestamp(u64::MAX), "9999-12-30T22:00:00Z");
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12080), "12.8");
        assert!(now_utc().ends_with('Z'));
    }
}

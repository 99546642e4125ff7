//! The JSON document of `sim run --format json`: one object, whatever the number of workloads.
//!
//! ```json
//! {"schema_version": 1,
//!  "tool": {"name": "gpumemsim", "version": "0.1.0", "git_commit": "5c98deb..."},
//!  "config": "configs/rtx3090.toml", "config_name": "rtx3090", "config_bundled": true,
//!  "config_sha256": "9f2c...", "gpu": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6",
//!  "units": {"gpu__time_duration.sum": "nsecond", "dram__bytes_read.sum": "byte", "...": ""},
//!  "workloads": [{"workload": "pseudo_random", "description": "...", "params": {"n": 12800000},
//!    "ptx": "kernels/ptx/add_constant.ptx", "compiled": null,
//!    "launches": [{"label": "constant", "kernel": "add_constant_constant_memory",
//!      "grid": [12500, 1, 1], "block": [1024, 1, 1],
//!      "metrics": {"gpu__time_duration.sum": 1290000.5, "idc__requests.sum": 12800000, "...": 0},
//!      "bound": "constant", "bounds_cycles": {"latency": 812, "issue": 9001, "...": 0},
//!      "occupancy_blocks_per_sm": 1, "...": "..."}]}],
//!  "failures": [{"workload": "broken", "error": "..."}]}
//! ```
//!
//! Stability rules: keys are never renamed; every launch has the same keys (`bounds_cycles` has
//! all of [`BOUNDS`], 0 for a unit the launch never used; `sampling` is `null` for a launch run in
//! full); counts are JSON integers, only `gpu__time_duration.sum` (ns) is a real number; `metrics`
//! holds the metrics `--metrics` selects (all by default), with their units in `units`. A
//! workload compiled from CUDA (`cuda = "k.cu"`) says by what in `compiled`: `{"source",
//! "compiler", "arch"}` (`"NVRTC 12.9"`, `"sm_90"`); `null` for PTX from a file. A
//! workload that fails is listed in `failures` while the others are still reported (and the
//! command exits with code 2). `schema_version` grows when a key changes meaning or goes away;
//! version 1 is the first versioned layout (before it, one workload was an object and several an
//! array).

use super::select::Selection;
use super::{launch_values, metric_names, metric_unit, source, Detail};
use crate::config::find::FoundConfig;
use crate::run::{LaunchResult, WorkloadRun};
use serde_json::{json, Map, Value};

/// The layout version of the document.
pub const SCHEMA_VERSION: u32 = 1;

/// The bound names of `bounds_cycles`, every one present in every launch (timing::estimate's
/// bounds).
pub const BOUNDS: [&str; 8] = [
    "latency", "issue", "lsu", "l1", "shared", "constant", "l2", "dram",
];

/// `{"name", "version", "git_commit"}` of this build (`git_commit` is `null` when it was not
/// built from a git checkout).
pub fn tool() -> Value {
    json!({
        "name": "gpumemsim",
        "version": env!("CARGO_PKG_VERSION"),
        "git_commit": gpumemsim::git_commit(),
    })
}

/// The document of `runs` on `config`, keeping the metrics `sel` selects; `failures` are
/// (workload as typed, error message) of the workloads that did not run.
pub fn document(
    config: &FoundConfig,
    runs: &[WorkloadRun],
    failures: &[(String, String)],
    sel: &Selection,
    detail: Detail,
) -> Value {
    let units: Map<String, Value> = metric_names()
        .into_iter()
        .filter(|m| sel.keeps(m))
        .map(|m| (m.to_string(), Value::from(metric_unit(m))))
        .collect();
    let mut doc = json!({
        "schema_version": SCHEMA_VERSION,
        "tool": tool(),
        "config": config.path,
        "config_name": config.name,
        "config_bundled": config.bundled,
        "config_sha256": config.sha256,
        "gpu": config.config.gpu.name,
        "compute_capability": config.config.gpu.compute_capability,
        "units": units,
        "workloads": runs.iter().map(|r| workload(r, sel, detail)).collect::<Vec<_>>(),
        "failures": failures
            .iter()
            .map(|(w, e)| json!({"workload": w, "error": e}))
            .collect::<Vec<_>>(),
    });
    // Only a changed config has the key: the reports of unchanged ones stay as they were.
    if !config.sets.is_empty() {
        let sets: Map<String, Value> = config
            .sets
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect();
        doc["config_sets"] = Value::Object(sets);
    }
    doc
}

/// One element of `workloads`.
pub fn workload(run: &WorkloadRun, sel: &Selection, detail: Detail) -> Value {
    let mut o = json!({
        "workload": run.workload,
        "description": run.description,
        "params": run.params,
        "ptx": run.ptx,
        "compiled": run.compiled,
        "launches": run
            .launches
            .iter()
            .map(|l| launch(run, l, sel, detail))
            .collect::<Vec<_>>(),
    });
    if detail.per_line {
        o["source_files"] = source::files_json(run);
    }
    o
}

/// One element of `launches`.
pub fn launch(run: &WorkloadRun, l: &LaunchResult, sel: &Selection, detail: Detail) -> Value {
    let metrics: Map<String, Value> = launch_values(l)
        .into_iter()
        .filter(|(k, _)| sel.keeps(k))
        .map(|(k, v)| (k.to_string(), v.to_json()))
        .collect();
    let bounds: Map<String, Value> = BOUNDS
        .iter()
        .map(|b| {
            let cycles = l
                .timing
                .bounds
                .iter()
                .find(|(n, _)| n == b)
                .map_or(0.0, |(_, v)| *v);
            (b.to_string(), Value::from(cycles.round() as u64))
        })
        .collect();
    let mut o = json!({
        "label": l.label,
        "kernel": l.kernel,
        "grid": l.grid,
        "block": l.block,
        "metrics": metrics,
        "bound": l.timing.bound,
        "bounds_cycles": bounds,
        "occupancy_blocks_per_sm": l.occupancy_blocks,
        "occupancy_limited_by": l.occupancy.limiters(),
        "registers_per_thread_source": l.registers_source.name(),
        "registers_per_thread_from": l.registers_source.describe(),
        "instructions_source": if l.instructions_source.is_some() { "sass" } else { "estimated" },
        "instructions_from": l.instructions_source.map_or_else(
            || match &l.instructions_note {
                Some(why) => format!("estimated from the PTX ({why})"),
                None => "estimated from the PTX".to_string(),
            },
            |b| b.to_string()
        ),
        "notes": l.notes,
        // racecheck's distinct hazards, one message each (empty without `--check racecheck`).
        "hazards": l.hazards,
        "sampling": l.sampled,
        "warp_states": super::stalls::launch_json(l),
    });
    if detail.per_instruction {
        o["per_instruction"] = l
            .per_pc
            .iter()
            .zip(l.locs.iter().chain(std::iter::repeat(&None)))
            .filter(|((_, _, s), _)| s.executed > 0)
            .map(|((line, text, s), loc)| {
                let source = loc.filter(|x| x.line > 0).map(|x| {
                    json!({
                        "file": run.line_files.iter().rev().find(|(i, _)| *i == x.file).map(|(_, n)| n),
                        "line": x.line,
                        "column": x.col,
                    })
                });
                json!({"line": line, "ptx": text, "stats": s, "source": source})
            })
            .collect();
    }
    if detail.per_line {
        o["per_source_line"] = source::per_line_json(run, l);
    }
    o
}

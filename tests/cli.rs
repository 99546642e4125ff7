//! End-to-end specification of the `sim` command line (DESIGN.md, "Data flow of `sim run`").
//!
//! Each test states one promise of the tool to its users:
//!
//! 1. the simulator is functionally exact: both `add_constant` kernels of every bundled workload
//!    compute `sums[i] = inputs[i] + values[index(i)]` on every GPU config (library API, so that the
//!    output buffers can be read back);
//! 2. the main job, `sim run configs/rtx3090.toml pseudo_random`, shows constant memory slower than
//!    global memory, and its JSON carries the Nsight Compute metrics with the counts that the
//!    coalescing and constant-broadcast rules fix exactly;
//! 3. the other patterns and configs run, `--set` and several workloads work;
//! 4. bad input (PTX, config, workload name, parameter, path) is one `error:` line and exit code 2,
//!    never a panic;
//! 5. faulting and runaway kernels are stopped with a report;
//! 6. `sim list` and the help texts.
//!
//! The fixtures in `tests/fixtures/` are small hand-written PTX modules and their workload files.
//! The binary runs from the workspace root, so paths read as a user types them.

mod common;

use common::root;
use serde_json::Value;
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The add_constant workloads: each has a `constant` and a `global` launch.
const ADD_CONSTANT: [&str; 4] = [
    "one_access_per_block",
    "one_access_per_warp",
    "one_access_per_thread",
    "pseudo_random",
];
/// Every bundled workload (`kernels/*.toml`).
const BUNDLED: [&str; 21] = [
    "aos_vs_soa",
    "conv2d",
    "copy_float4",
    "one_access_per_block",
    "one_access_per_thread",
    "one_access_per_warp",
    "pseudo_random",
    "ray",
    "read_ldg",
    "read_offset",
    "read_stride",
    "reduce",
    "smem_rectangle",
    "smem_square",
    "smem_square_8byte",
    "smem_stride",
    "smem_stride_8byte",
    "stencil_1d",
    "transpose",
    "transpose_smem",
    "write_offset",
];
const CONFIGS: [&str; 2] = ["configs/rtx3090.toml", "configs/h200.toml"];

/// What one `sim` invocation did.
struct Outcome {
    command: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` exited with {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `sim ARGS...` in the workspace root and captures its exit code, stdout and stderr.
fn sim(args: &[&str]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the sim binary runs");
    Outcome {
        command: format!("sim {}", args.join(" ")),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Outcome {
    /// Asserts exit code 0 and a quiet stderr; returns self for chaining.
    fn success(self) -> Self {
        assert_eq!(self.code, Some(0), "expected exit code 0\n{self}");
        assert!(
            !self.stderr.contains("panicked"),
            "expected no panic\n{self}"
        );
        self
    }

    /// Parses stdout as JSON.
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("expected JSON on stdout ({e})\n{self}"))
    }

    /// The one workload of the JSON document on stdout (`workloads[0]`), asserting that the
    /// document holds exactly one.
    fn workload(&self) -> Value {
        let doc = self.json();
        let list = doc["workloads"]
            .as_array()
            .unwrap_or_else(|| panic!("expected a list `workloads`\n{self}"));
        assert_eq!(list.len(), 1, "expected one workload\n{self}");
        list[0].clone()
    }

    /// Asserts the error contract: exit code 2, nothing on stdout, exactly one stderr line that
    /// starts with `error:` and contains every one of `needles`, and no panic.
    fn fails_with(&self, needles: &[&str]) {
        assert_eq!(self.code, Some(2), "expected exit code 2\n{self}");
        assert!(
            !self.stderr.contains("panicked"),
            "expected an error, not a panic\n{self}"
        );
        assert_eq!(self.stdout, "", "expected nothing on stdout\n{self}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected exactly one line on stderr, found {}\n{self}",
            lines.len()
        );
        assert!(
            lines[0].starts_with("error: "),
            "expected stderr to start with `error: `\n{self}"
        );
        for needle in needles {
            assert!(
                self.stderr.contains(needle),
                "expected the error to mention `{needle}`\n{self}"
            );
        }
    }

    /// Labels of the table's rows whose first cell is one of `labels`, in order.
    fn table_rows(&self, labels: &[&str]) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|line| {
                // A row is `│ label │ ...` (or `| label | ...`): skip the border, take the first cell.
                let body = line.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '_');
                if body.len() == line.len() {
                    return None; // no border: not a table row
                }
                let cell = body
                    .split(|c: char| c.is_whitespace() || c == '│' || c == '|')
                    .next()?;
                labels.contains(&cell).then(|| cell.to_string())
            })
            .collect()
    }

    /// The number after `constant / global time: ` (the table mode's summary line).
    fn constant_over_global(&self) -> f64 {
        let prefix = "constant / global time: ";
        let line = self
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .unwrap_or_else(|| panic!("expected a line `{prefix}<ratio>x`\n{self}"));
        line.trim()
            .trim_end_matches('x')
            .parse()
            .unwrap_or_else(|e| panic!("expected a number in `{prefix}{line}` ({e})\n{self}"))
    }
}

/// The metric `name` of a launch's JSON, as a number.
fn metric(launch: &Value, name: &str) -> f64 {
    let metrics = launch["metrics"]
        .as_object()
        .unwrap_or_else(|| panic!("expected an object `metrics` in {launch:#}"));
    metrics
        .get(name)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| {
            let known: Vec<&String> = metrics.keys().collect();
            panic!(
                "expected the numeric metric `{name}` in launch `{}`; it has {known:?}",
                launch["label"]
            )
        })
}

/// Asserts that launch metric `name` equals `expected`, and says why it should.
fn assert_metric(launch: &Value, name: &str, expected: f64, why: &str) {
    let actual = metric(launch, name);
    assert_eq!(
        actual, expected,
        "launch `{}`: {name} expected {expected} ({why}), actual {actual}",
        launch["label"]
    );
}

/// Line number (1-based) of the first non-comment line of PTX `file` containing `needle`.
fn line_of(file: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    let found = text
        .lines()
        .position(|l| !l.trim_start().starts_with("//") && l.contains(needle));
    1 + found.unwrap_or_else(|| panic!("no `{needle}` outside comments in {}", file.display()))
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("gpumemsim-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// Writes `text` to `name` inside the directory; returns the path as a string.
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write temp file");
        p.to_str().expect("UTF-8 temp path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The RTX 3090 config's text.
fn rtx3090_toml() -> String {
    std::fs::read_to_string(root().join("configs/rtx3090.toml")).expect("configs/rtx3090.toml")
}

/// `text` with the line `key = ...` of TOML table `[section]` replaced by `replacement` (or
/// deleted when `None`). Panics when the key is not there, so an edit never silently misses.
fn edit_key(text: &str, section: &str, key: &str, replacement: Option<&str>) -> String {
    let mut current = String::new();
    let mut done = false;
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            current = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
        let is_key = t.split('=').next().map(str::trim) == Some(key) && t.contains('=');
        if !done && current == section && is_key {
            done = true;
            if let Some(r) = replacement {
                out.push_str(r);
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    assert!(done, "the config has no `{key}` in [{section}]");
    out
}

/// `text` with `line` added right after the header of `[section]`.
fn add_line(text: &str, section: &str, line: &str) -> String {
    let header = format!("[{section}]");
    let at = text
        .lines()
        .position(|l| l.trim() == header)
        .unwrap_or_else(|| panic!("no {header}"));
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(at + 1, line);
    lines.join("\n") + "\n"
}

// ---------------------------------------------------------------------------------------------
// 1. Functional exactness (library API: the output buffers)
// ---------------------------------------------------------------------------------------------

/// The index into `values` that thread `tid` of block `block` reads (reference/workloads.md).
fn reference_index(workload: &str, block: usize, tid: usize) -> usize {
    const N: usize = 16384;
    match workload {
        "one_access_per_block" => block % N,
        "one_access_per_warp" => (tid / 32) % N,
        "one_access_per_thread" => tid % N,
        "pseudo_random" => (tid * 1357) % N,
        other => panic!("no reference for {other}"),
    }
}

/// The reference: `sums[i] = inputs[i] + values[index(i)]` with inputs = 0 and values[k] = k,
/// i = block * 1024 + tid, for i < n.
fn reference_sums(workload: &str, n: usize) -> Vec<i32> {
    let inputs = vec![0i32; n];
    let values: Vec<i32> = (0..16384).collect();
    (0..n)
        .map(|i| inputs[i] + values[reference_index(workload, i / 1024, i % 1024)])
        .collect()
}

/// Runs only launch `label` of `workload` with `n` sums, from freshly initialised buffers, and
/// returns its `sums` buffer.
fn simulated_sums(cfg: &GpuConfig, workload: &str, n: i64, label: &str) -> Vec<i32> {
    let w = Workload::resolve(workload).unwrap_or_else(|e| panic!("{workload}: {e}"));
    let opts = Options {
        sets: vec![("n".into(), n)],
        keep_outputs: true,
        only: vec![label.into()],
        ..Default::default()
    };
    let run =
        run_workload(cfg, &w, &opts).unwrap_or_else(|e| panic!("{workload} {label} n={n}: {e}"));
    assert_eq!(
        run.launches.len(),
        1,
        "{workload}: expected one launch labelled `{label}`"
    );
    let outputs = &run.launches[0].outputs;
    let names: Vec<&str> = outputs.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        ["sums"],
        "{workload} {label}: expected exactly one output buffer, `sums`"
    );
    let bytes = &outputs[0].1;
    assert_eq!(
        bytes.len(),
        4 * n as usize,
        "{workload} {label}: expected `sums` to hold exactly n = {n} ints"
    );
    bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Both launches (constant and global) of `workload`, on both configs, at the documented
/// n = 128000 and at n = 5000 (neither a multiple of 32 nor of 1024: a partial block and a
/// partly masked warp), compute exactly the reference.
fn assert_functionally_exact(workload: &str) {
    for config in CONFIGS {
        let cfg = GpuConfig::load(&root().join(config)).unwrap_or_else(|e| panic!("{config}: {e}"));
        for n in [128_000i64, 5000] {
            let expected = reference_sums(workload, n as usize);
            for label in ["constant", "global"] {
                let actual = simulated_sums(&cfg, workload, n, label);
                let wrong: Vec<(usize, i32, i32)> = (0..expected.len())
                    .filter(|&i| actual[i] != expected[i])
                    .map(|i| (i, expected[i], actual[i]))
                    .collect();
                assert!(
                    wrong.is_empty(),
                    "{workload} on {config}, launch `{label}`, n = {n}: {} of {n} sums differ from the reference; \
                     first (index, expected, actual): {:?}",
                    wrong.len(),
                    &wrong[..wrong.len().min(16)]
                );
            }
        }
    }
}

#[test]
fn one_access_per_block_computes_the_reference_sums() {
    assert_functionally_exact("one_access_per_block");
}

#[test]
fn one_access_per_warp_computes_the_reference_sums() {
    assert_functionally_exact("one_access_per_warp");
}

#[test]
fn one_access_per_thread_computes_the_reference_sums() {
    assert_functionally_exact("one_access_per_thread");
}

#[test]
fn pseudo_random_computes_the_reference_sums() {
    assert_functionally_exact("pseudo_random");
}

#[test]
fn a_fixture_workload_file_runs_by_path_and_computes_its_result() {
    // add_one.ptx is the valid twin of the malformed fixtures below: they fail for their one
    // changed line only.
    let cfg = GpuConfig::load(&root().join("configs/rtx3090.toml")).expect("config");
    let path = root().join("tests/fixtures/add_one.toml");
    let w = Workload::resolve(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let run = run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (name, bytes) = &run.launches[0].outputs[0];
    assert_eq!(name, "dst");
    let actual: Vec<i32> = bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let expected: Vec<i32> = (1..=1000).collect();
    assert_eq!(
        actual, expected,
        "dst[i] = src[i] + 1 with src[k] = k, n = 1000"
    );

    sim(&["run", "configs/rtx3090.toml", "tests/fixtures/add_one.toml"]).success();
}

// ---------------------------------------------------------------------------------------------
// 2. The main job: pseudo_random on the RTX 3090
// ---------------------------------------------------------------------------------------------

#[test]
fn main_job_table_shows_constant_memory_slower_than_global() {
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=128000",
    ])
    .success();
    assert_eq!(
        out.table_rows(&["constant", "global"]),
        ["constant", "global"],
        "expected one table row per launch\n{out}"
    );
    let ratio = out.constant_over_global();
    assert!(ratio > 1.0, "expected constant / global time > 1 (32 distinct addresses per warp serialize), actual {ratio}\n{out}");
}

/// Metrics every launch's JSON must carry (the names join simulator and Nsight Compute).
const REQUIRED_METRICS: [&str; 5] = [
    "gpu__time_duration.sum",
    "gpc__cycles_elapsed.max",
    "idc__requests.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "dram__bytes_read.sum",
];

#[test]
fn main_job_json_has_the_contract_keys_and_the_exact_counts() {
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=128000",
        "--format",
        "json",
    ])
    .success();
    let top = out.json();
    for key in [
        "schema_version",
        "tool",
        "config",
        "config_sha256",
        "gpu",
        "workloads",
    ] {
        assert!(
            top.get(key).is_some(),
            "expected the key `{key}` in the JSON\n{top:#}"
        );
    }
    assert_eq!(top["config"], "configs/rtx3090.toml");
    let doc = out.workload();
    for key in ["workload", "params", "launches"] {
        assert!(
            doc.get(key).is_some(),
            "expected the key `{key}` in the workload\n{doc:#}"
        );
    }
    assert_eq!(doc["workload"], "pseudo_random");
    assert_eq!(doc["params"]["n"], 128_000);
    let launches = doc["launches"]
        .as_array()
        .unwrap_or_else(|| panic!("expected an array `launches`\n{doc:#}"));
    let labels: Vec<&str> = launches
        .iter()
        .map(|l| l["label"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(labels, ["constant", "global"]);

    for launch in launches {
        assert_eq!(
            launch["grid"],
            serde_json::json!([125, 1, 1]),
            "ceil(128000 / 1024) = 125 blocks"
        );
        assert_eq!(launch["block"], serde_json::json!([1024, 1, 1]));
        for name in REQUIRED_METRICS {
            let v = metric(launch, name);
            assert!(
                v.is_finite() && v >= 0.0,
                "launch `{}`: {name} = {v}, expected a finite count >= 0",
                launch["label"]
            );
        }
        assert!(
            metric(launch, "gpu__time_duration.sum") > 0.0,
            "a launch takes time"
        );
        assert!(
            metric(launch, "gpc__cycles_elapsed.max") > 0.0,
            "a launch takes cycles"
        );
    }

    // 128000 threads = 125 blocks x 32 warps = 4000 full warps; every warp executes each memory
    // instruction once with all 32 lanes active.
    let warps = 4000.0;
    let constant = &launches[0];
    assert_metric(
        constant,
        "smsp__sass_inst_executed_op_ldc.sum",
        warps,
        "one LDC per warp",
    );
    assert_metric(
        constant,
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        warps,
        "one global load per warp: inputs",
    );
    assert_metric(
        constant,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        warps * 4.0,
        "32 consecutive ints = 4 sectors",
    );
    assert_metric(
        constant,
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        warps,
        "one store per warp: sums",
    );
    assert_metric(
        constant,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        warps * 4.0,
        "32 consecutive ints = 4 sectors",
    );
    // (tid * 1357) % 16384 is injective over a warp (1357 is odd), so each LDC is 32 requests;
    // idc__requests.sum may also count uniform loads, hence at least.
    let idc = metric(constant, "idc__requests.sum");
    assert!(idc >= warps * 32.0, "constant launch: idc__requests.sum expected >= {} (32 distinct addresses per warp), actual {idc}", warps * 32.0);

    let global = &launches[1];
    assert_metric(
        global,
        "smsp__sass_inst_executed_op_ldc.sum",
        0.0,
        "no constant-memory loads",
    );
    assert_metric(
        global,
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        2.0 * warps,
        "two loads per warp: inputs and values",
    );
    assert_metric(
        global,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        warps * 4.0 + warps * 32.0,
        "4 sectors of inputs plus 32 scattered sectors of values per warp",
    );
    assert_metric(
        global,
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        warps,
        "one store per warp: sums",
    );
    assert_metric(
        global,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        warps * 4.0,
        "32 consecutive ints = 4 sectors",
    );
}

// ---------------------------------------------------------------------------------------------
// 3. The other patterns, the H200 config, --set, several workloads, options
// ---------------------------------------------------------------------------------------------

#[test]
fn every_bundled_workload_runs_on_both_configs_and_reports_both_launches() {
    for config in CONFIGS {
        for workload in ADD_CONSTANT {
            let out = sim(&["run", config, workload, "--set", "n=5000"]).success();
            assert_eq!(
                out.table_rows(&["constant", "global"]),
                ["constant", "global"],
                "expected one row per launch\n{out}"
            );
            let ratio = out.constant_over_global();
            assert!(
                ratio.is_finite() && ratio > 0.0,
                "expected a positive time ratio, actual {ratio}\n{out}"
            );
        }
    }
}

#[test]
fn set_n_is_reported_in_the_json_params() {
    let out = sim(&[
        "run",
        "configs/h200.toml",
        "one_access_per_thread",
        "--set",
        "n=128000",
        "--format",
        "json",
    ])
    .success();
    let doc = out.workload();
    assert_eq!(doc["params"]["n"], 128_000, "params.n\n{doc:#}");
    assert_eq!(
        out.json()["gpu"].as_str().map(|g| g.contains("H200")),
        Some(true),
        "gpu names the H200\n{doc:#}"
    );
    assert_eq!(
        doc["launches"][0]["grid"],
        serde_json::json!([125, 1, 1]),
        "grid follows n\n{doc:#}"
    );
}

#[test]
fn two_workloads_give_one_json_document_listing_both() {
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "one_access_per_block",
        "one_access_per_warp",
        "--set",
        "n=5000",
        "--format",
        "json",
    ])
    .success();
    let doc = out.json();
    let docs = doc["workloads"]
        .as_array()
        .unwrap_or_else(|| panic!("expected a list `workloads`\n{doc:#}"));
    let names: Vec<&Value> = docs.iter().map(|d| &d["workload"]).collect();
    assert_eq!(
        names,
        ["one_access_per_block", "one_access_per_warp"],
        "one entry per workload, in order"
    );
    for d in docs {
        assert_eq!(
            d["launches"].as_array().map(Vec::len),
            Some(2),
            "two launches each\n{d:#}"
        );
    }
}

#[test]
fn launch_selects_one_launch_and_warm_and_per_instruction_are_accepted() {
    let only = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=5000",
        "--launch",
        "global",
        "--format",
        "json",
    ])
    .success();
    let labels: Vec<Value> = only.workload()["launches"]
        .as_array()
        .expect("launches")
        .iter()
        .map(|l| l["label"].clone())
        .collect();
    assert_eq!(
        labels,
        ["global"],
        "--launch global runs only the global launch"
    );

    let warm = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=5000",
        "--warm",
    ])
    .success();
    assert_eq!(
        warm.table_rows(&["constant", "global"]),
        ["constant", "global"],
        "{warm}"
    );

    let per = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=5000",
        "--per-instruction",
    ])
    .success();
    for inst in ["ld.const", "ld.global", "st.global"] {
        assert!(
            per.stdout.contains(inst),
            "expected the per-instruction listing to show `{inst}`\n{per}"
        );
    }
}

/// `--warm`'s second launch finds in L2 what the first read, but every SM's L1 empty: on an H200
/// a line read in one launch is an L2 hit in the next, queued back to back or not, and Nsight
/// Compute counts as many L1 misses in the second launch as in the first
/// (validate/measurements/h200/ubench/warm.txt, warm_ncu.txt).
#[test]
fn warm_launches_keep_l2_but_start_with_empty_l1s() {
    let metrics = |warm: bool| {
        let mut args = vec![
            "run",
            "configs/h200.toml",
            "pseudo_random",
            "--set",
            "n=50000",
            "--launch",
            "global",
            "--format",
            "json",
        ];
        if warm {
            args.push("--warm");
        }
        let out = sim(&args).success();
        out.workload()["launches"][0]["metrics"].clone()
    };
    let (cold, warm) = (metrics(false), metrics(true));
    let m = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
    let hit = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum";
    let miss = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum";
    let (l2, l2_hit) = (
        "lts__t_sectors_srcunit_tex_op_read.sum",
        "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    );
    assert_eq!(m(&warm, hit), m(&cold, hit), "L1 hits: the L1 starts empty");
    assert_eq!(m(&warm, miss), m(&cold, miss), "L1 misses");
    assert!(
        m(&cold, l2_hit) < m(&cold, l2),
        "a cold launch misses L2 too"
    );
    assert_eq!(
        m(&warm, l2_hit),
        m(&warm, l2),
        "every L2 read hits what the first launch left"
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Errors: one line, `error:`, exit code 2, no panic
// ---------------------------------------------------------------------------------------------

#[test]
fn a_typo_in_the_ptx_names_the_file_line_and_instruction() {
    let line = line_of(&root().join("tests/fixtures/typo.ptx"), "ad.s32");
    let out = sim(&["run", "configs/rtx3090.toml", "tests/fixtures/typo.toml"]);
    out.fails_with(&[&format!("tests/fixtures/typo.ptx:{line}:"), "ad.s32"]);
}

#[test]
fn an_unsupported_instruction_names_the_file_line_and_instruction() {
    let line = line_of(
        &root().join("tests/fixtures/unsupported.ptx"),
        "tex.1d.v4.s32.s32",
    );
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "tests/fixtures/unsupported.toml",
    ]);
    out.fails_with(&[
        &format!("tests/fixtures/unsupported.ptx:{line}:"),
        "tex.1d.v4.s32.s32",
        "supported",
    ]);
}

#[test]
fn an_out_of_range_config_value_names_the_key() {
    let dir = TempDir::new("sector-bytes");
    let config = dir.write(
        "gpu.toml",
        &edit_key(
            &rtx3090_toml(),
            "l1",
            "sector_bytes",
            Some("sector_bytes = 48"),
        ),
    );
    sim(&["run", &config, "pseudo_random", "--set", "n=5000"]).fails_with(&[
        &config,
        "l1.sector_bytes",
        "48",
    ]);
}

#[test]
fn an_unknown_config_key_is_named() {
    let dir = TempDir::new("unknown-key");
    let config = dir.write(
        "gpu.toml",
        &add_line(&rtx3090_toml(), "l1", "bogus_key = 1"),
    );
    sim(&["run", &config, "pseudo_random", "--set", "n=5000"]).fails_with(&[&config, "bogus_key"]);
}

#[test]
fn a_missing_config_key_is_named() {
    let dir = TempDir::new("missing-key");
    let config = dir.write(
        "gpu.toml",
        &edit_key(&rtx3090_toml(), "dram", "latency_cycles", None),
    );
    sim(&["run", &config, "pseudo_random", "--set", "n=5000"])
        .fails_with(&[&config, "dram.latency_cycles"]);
}

#[test]
fn a_missing_register_key_is_named() {
    let dir = TempDir::new("missing-register-key");
    let config = dir.write(
        "gpu.toml",
        &edit_key(&rtx3090_toml(), "sm", "register_allocation_unit", None),
    );
    sim(&["run", &config, "pseudo_random", "--set", "n=5000"])
        .fails_with(&[&config, "sm.register_allocation_unit"]);
}

#[test]
fn registers_per_thread_are_reported_and_can_be_given() {
    // The estimate (ptxas off; tests/ptxas.rs checks ptxas's counts) against a given number.
    let args = [
        "run",
        "configs/h200.toml",
        "conv2d",
        "--format",
        "json",
        "--ptxas",
        "off",
    ];
    let estimated = sim(&args).success().workload();
    let given = sim(&[&args[..], &["--registers", "64"]].concat())
        .success()
        .workload();
    for (doc, source) in [(&estimated, "estimated"), (&given, "given")] {
        for l in doc["launches"].as_array().expect("launches") {
            assert_eq!(l["registers_per_thread_source"], source, "{l:#}");
            for m in [
                "launch__registers_per_thread",
                "launch__occupancy_limit_registers",
                "launch__occupancy_limit_shared_mem",
                "launch__occupancy_limit_warps",
                "launch__occupancy_limit_blocks",
            ] {
                metric(l, m);
            }
        }
    }
    // conv2d's 256-thread blocks: 8 per SM by threads; 64 registers hold 4 (2048 per warp, 32
    // warps), and the launch says registers limit it.
    let g = &given["launches"][0];
    assert_metric(g, "launch__registers_per_thread", 64.0, "--registers 64");
    assert_metric(
        g,
        "launch__occupancy_limit_registers",
        4.0,
        "65536 / 2048 / 8 warps",
    );
    assert_metric(
        g,
        "launch__occupancy_limit_warps",
        8.0,
        "2048 threads / 256",
    );
    assert_eq!(g["occupancy_blocks_per_sm"], 4);
    assert_eq!(g["occupancy_limited_by"], serde_json::json!(["registers"]));
    let e = &estimated["launches"][0];
    assert_eq!(e["occupancy_blocks_per_sm"], 8);
    let table = sim(&["run", "configs/h200.toml", "conv2d", "--registers", "64"]).success();
    assert!(
        table
            .stdout
            .contains("4 blocks per SM, limited by registers (64 registers per thread, given)"),
        "{table}"
    );
    sim(&["run", "configs/h200.toml", "conv2d", "--registers", "256"])
        .fails_with(&["--registers 256 is out of range; allowed: 0 to 255"]);
    // Not a number of registers: clap's usage error (exit code 2), no panic.
    let bad = sim(&["run", "configs/h200.toml", "conv2d", "--registers", "many"]);
    assert_eq!(bad.code, Some(2), "{bad}");
    assert!(
        bad.stderr.contains("'many'") && !bad.stderr.contains("panicked"),
        "{bad}"
    );
}

#[test]
fn a_missing_config_file_is_named() {
    sim(&["run", "configs/no_such_gpu.toml", "pseudo_random"])
        .fails_with(&["configs/no_such_gpu.toml"]);
}

#[test]
fn an_unknown_workload_lists_the_bundled_ones() {
    let out = sim(&["run", "configs/rtx3090.toml", "no_such_workload"]);
    let mut needles = vec!["no_such_workload"];
    needles.extend(BUNDLED);
    out.fails_with(&needles);
}

#[test]
fn an_unknown_parameter_is_named() {
    sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "m=3",
    ])
    .fails_with(&["params.m", "no such parameter"]);
}

// ---------------------------------------------------------------------------------------------
// 5. Faulting and runaway kernels
// ---------------------------------------------------------------------------------------------

#[test]
fn an_out_of_bounds_read_names_the_buffer_thread_and_ptx_line() {
    let line = line_of(&root().join("tests/fixtures/add_one.ptx"), "ld.global.u32");
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "tests/fixtures/out_of_bounds.toml",
    ]);
    // `src` holds 100 ints; thread 100 is the first to read past its end.
    out.fails_with(&[
        "invalid global read",
        "`src`",
        "thread (100,0,0)",
        &format!("PTX line {line}"),
    ]);
}

#[test]
fn every_distinct_memory_error_of_a_launch_is_listed_not_only_the_first() {
    let ptx = root().join("tests/fixtures/add_one.ptx");
    let (ld, st) = (
        line_of(&ptx, "ld.global.u32"),
        line_of(&ptx, "st.global.u32"),
    );
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "tests/fixtures/out_of_bounds_twice.toml",
    ]);
    // Threads 100.. read past `src` (warp 3), threads 90.. write past `dst` (warps 2 and 3):
    // two distinct errors, each with the first thread that made it in the simulator's
    // execution order (warp 3's store ran before warp 2's), the write made by two warp
    // instructions.
    out.fails_with(&[
        "2 distinct memory errors",
        "invalid global read of 4 bytes",
        "thread (100,0,0)",
        &format!("PTX line {ld}"),
        "invalid global write of 4 bytes",
        "thread (96,0,0)",
        "24 bytes after the end of buffer `dst`",
        &format!("PTX line {st}: `st.global.u32 [%rd7], %r7;` (in 2 warp instructions)"),
    ]);
}

#[test]
fn a_misaligned_read_names_the_buffer_thread_and_ptx_line() {
    let line = line_of(
        &root().join("tests/fixtures/misaligned.ptx"),
        "ld.global.u32",
    );
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "tests/fixtures/misaligned.toml",
    ]);
    // Every thread reads 2 bytes past an element's start; thread 0 is the first reported.
    out.fails_with(&[
        "invalid global misaligned read of 4 bytes",
        "`src`",
        "thread (0,0,0)",
        &format!("PTX line {line}"),
    ]);
}

#[test]
fn a_runaway_kernel_is_stopped_by_the_instruction_budget() {
    let out = sim(&[
        "run",
        "configs/rtx3090.toml",
        "tests/fixtures/runaway.toml",
        "--max-warp-instructions",
        "1000",
    ]);
    out.fails_with(&["spin", "budget", "1000", "--max-warp-instructions"]);
}

// ---------------------------------------------------------------------------------------------
// 6. list and help
// ---------------------------------------------------------------------------------------------

#[test]
fn list_prints_the_bundled_workloads_one_per_line() {
    let out = sim(&["list"]).success();
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut expected = BUNDLED.to_vec();
    expected.sort();
    let mut actual = names.clone();
    actual.sort();
    assert_eq!(
        actual, expected,
        "expected one line per bundled workload\n{out}"
    );
}

#[test]
fn help_texts_show_an_example() {
    for args in [&["--help"][..], &["run", "--help"][..]] {
        let out = sim(args).success();
        assert!(
            out.stdout.contains("Example"),
            "expected an example in the help\n{out}"
        );
        assert!(
            out.stdout.contains("sim run configs/"),
            "expected an example command line\n{out}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Regressions.
// ---------------------------------------------------------------------------------------------

/// `sim run ... | head` used to panic on the broken pipe (println!); it now exits quietly with 0.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args([
            "run",
            "configs/rtx3090.toml",
            "pseudo_random",
            "--set",
            "n=5000",
            "--format",
            "json",
        ])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the sim binary runs");
    drop(child.stdout.take()); // the reader goes away before sim prints, as `| head -0` would
    let out = child.wait_with_output().expect("sim finishes");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "expected no panic on a closed stdout, got:\n{stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit code on a closed stdout; stderr:\n{stderr}"
    );
}

/// The simulation runs SMs on several threads; counters, per-instruction statistics and cycles
/// must not depend on how many (issue 7: "results identical to a single-threaded run").
#[test]
fn results_are_identical_on_one_and_on_several_threads() {
    for (config, workload, set) in [
        ("configs/h200.toml", "transpose_smem", None),
        ("configs/rtx3090.toml", "conv2d", None),
        ("configs/k40.toml", "reduce", None),
        ("configs/rtx3090.toml", "pseudo_random", Some("n=64000")),
    ] {
        let run = |threads: &str| {
            let mut args = vec![
                "run",
                config,
                workload,
                "--format",
                "json",
                "--per-instruction",
                "--threads",
                threads,
            ];
            if let Some(s) = set {
                args.extend(["--set", s]);
            }
            sim(&args).success().stdout
        };
        let one = run("1");
        assert!(one.contains("gpu__time_duration.sum"), "{one}");
        for n in ["2", "3"] {
            assert!(
                run(n) == one,
                "{workload} on {config}: --threads {n} differs from --threads 1"
            );
        }
    }
}

/// `--sample N` simulates some waves and extrapolates: counts that are the same in every wave
/// (instructions, requests, sectors) come out exact, the launch says it was sampled and gives an
/// error estimate, and a bad value is a one-line error.
#[test]
fn sampled_launches_extrapolate_exact_per_wave_counts_and_say_so() {
    let full = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=2560000",
        "--format",
        "json",
        "--sample",
        "full",
    ])
    .success()
    .workload();
    let sampled = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--set",
        "n=2560000",
        "--format",
        "json",
        "--sample",
        "4",
    ])
    .success()
    .workload();
    for (f, s) in full["launches"]
        .as_array()
        .unwrap()
        .iter()
        .zip(sampled["launches"].as_array().unwrap())
    {
        assert!(f["sampling"].is_null());
        assert_eq!(s["sampling"]["waves"], 31, "{s}");
        assert_eq!(
            s["sampling"]["simulated"], 9,
            "waves 0, 4, ..., 28 and 30: {s}"
        );
        assert!(s["sampling"]["error"].as_f64().unwrap() >= 0.0);
        for m in [
            "smsp__inst_executed.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "idc__requests.sum",
        ] {
            assert_eq!(metric(f, m), metric(s, m), "{m}");
        }
        assert!(
            s["notes"]
                .to_string()
                .contains("sampled: simulated 9 of 31 waves"),
            "{s}"
        );
    }
    let bad = sim(&[
        "run",
        "configs/rtx3090.toml",
        "pseudo_random",
        "--sample",
        "0",
    ]);
    assert_eq!(bad.code, Some(2), "{bad}");
    assert!(
        bad.stderr.contains("not auto, full or a positive number"),
        "{bad}"
    );
}

/// `--sample 8` extrapolates the global atomic and reduction counters and the shared atomic ones
/// like every other count: a kernel whose blocks all do the same atomics gets those of
/// `--sample full`. (Regression: they were left out of the extrapolation, so a sampled launch
/// reported 5/33 of them here, the share of the waves simulated.)
#[test]
fn sampled_launches_extrapolate_the_atomic_and_reduction_counters() {
    let run = |sample| {
        let v = sim(&[
            "run",
            "configs/rtx3090.toml",
            "tests/fixtures/atomic_waves.toml",
            "--format",
            "json",
            "--sample",
            sample,
        ])
        .success()
        .workload();
        v["launches"][0].clone()
    };
    let (full, sampled) = (run("full"), run("8"));
    assert!(full["sampling"].is_null(), "{full}");
    assert_eq!(sampled["sampling"]["waves"], 33, "{sampled}");
    assert_eq!(
        sampled["sampling"]["simulated"], 5,
        "waves 0, 8, 16, 24 and 32: {sampled}"
    );
    // 2706 blocks of 32 warps; each warp's atomics and reductions cover 4 sectors; its shared
    // atomic adds 1 to one word and its result is unread, which ptxas makes an ATOMS.POPC.INC:
    // one wavefront for the warp's one word (suite38's sh_inc kernels under ncu on the H200).
    let warps = 2706.0 * 32.0;
    for (m, per_warp) in [
        ("smsp__sass_inst_executed_op_global_atom.sum", 1.0),
        ("smsp__sass_inst_executed_op_global_red.sum", 1.0),
        ("smsp__sass_inst_executed_op_shared_atom.sum", 1.0),
        ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", 1.0),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", 4.0),
        ("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", 1.0),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", 4.0),
        ("lts__t_sectors_srcunit_tex_op_atom.sum", 4.0),
        ("lts__t_sectors_srcunit_tex_op_red.sum", 4.0),
        (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
            1.0,
        ),
    ] {
        assert_metric(&full, m, warps * per_warp, "every warp of every block");
        let (f, s) = (metric(&full, m), metric(&sampled, m));
        assert!(
            (s - f).abs() <= 0.01 * f,
            "{m}: --sample 8 gives {s}, --sample full {f} (ratio {:.3})",
            s / f
        );
    }
    for m in [
        "smsp__inst_executed.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ] {
        assert_eq!(metric(&full, m), metric(&sampled, m), "{m}");
    }
}

/// issue 39: `printf` text reaches standard output before the table, standard error beside a
/// JSON document on standard output, or the `--printf` file (which is never overwritten without
/// --force).
#[test]
fn printf_text_goes_to_stdout_stderr_or_the_printf_file() {
    let first = "block 0 thread   0: v=0.000000 0.00e+00 0 |0     |000000| 0xff BEEF\n";
    let w = "tests/fixtures/tensor/printf.toml";
    let table = sim(&["run", "configs/h200.toml", w]).success();
    assert!(table.stdout.starts_with(first), "{table}");
    let json = sim(&["run", "configs/h200.toml", w, "--format", "json"]).success();
    assert!(json.stderr.starts_with(first), "{json}");
    json.json();
    let dir = std::env::temp_dir().join(format!("sim_printf_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("printf.txt");
    let f = file.to_str().unwrap();
    let r = sim(&["run", "configs/h200.toml", w, "--printf", f]).success();
    assert!(!r.stdout.contains("block 0 thread"), "{r}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(first) && text.lines().count() == 9,
        "{text}"
    );
    let again = sim(&["run", "configs/h200.toml", w, "--printf", f]);
    assert_eq!(again.code, Some(2), "{again}");
    std::fs::remove_dir_all(&dir).unwrap();
}

//! `sim` fits the user's tools (issue 42): one stable JSON object, ncu-shaped CSV, metric
//! selection, output files, configs by name. Each test is a problem a new user met, and fails on
//! the behaviour before the fix (said in its doc).
//!
//! The "Done when" of the issue is [`csv_and_json_agree_for_one_workload_and_for_several`]:
//! `tests/formats_agree.py` reads the CSV with Python's `csv` and the JSON with `json` and finds
//! the same numbers; [`jq_reads_every_launchs_metrics`] runs the issue's jq filter.

mod common;

use common::root;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

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
            "$ {}\nexit code: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}

impl Outcome {
    fn success(self) -> Self {
        assert_eq!(self.code, Some(0), "expected exit code 0\n{self}");
        self
    }

    /// Exit code 2 and exactly one stderr line, `error: ...`, holding every one of `needles`.
    fn one_error(&self, needles: &[&str]) {
        assert_eq!(self.code, Some(2), "expected exit code 2\n{self}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "expected one line on stderr\n{self}");
        assert!(lines[0].starts_with("error: "), "{self}");
        for n in needles {
            assert!(
                self.stderr.contains(n),
                "expected `{n}` in the error\n{self}"
            );
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e})\n{self}"))
    }
}

fn sim(args: &[&str]) -> Outcome {
    sim_with(args, None)
}

/// `sim args...` with `COLUMNS` set to `columns`, or unset (the tables' natural layout).
fn sim_with(args: &[&str], columns: Option<&str>) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sim"));
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    let out = cmd
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

/// A fresh directory for one test's files.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-tools-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Small runs: one workload, and three of different kinds (constant, shared, global).
const ONE: &[&str] = &["pseudo_random"];
const SEVERAL: &[&str] = &["pseudo_random", "reduce", "one_access_per_warp"];

/// `sim run rtx3090 WORKLOADS --set n=8192 EXTRA...`.
fn run_args<'a>(workloads: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "rtx3090"];
    a.extend(workloads);
    a.extend(["--set", "n=8192"]);
    a.extend(extra);
    a
}

/// Before: no CSV at all, and JSON was an object for one workload but an array for several.
#[test]
fn csv_and_json_agree_for_one_workload_and_for_several() {
    let dir = temp_dir("agree");
    for (i, workloads) in [ONE, SEVERAL].iter().enumerate() {
        let csv = dir.join(format!("r{i}.csv"));
        let json = dir.join(format!("r{i}.json"));
        let (c, j) = (csv.to_str().unwrap(), json.to_str().unwrap());
        sim(&run_args(workloads, &["--format", "csv", "-o", c])).success();
        sim(&run_args(workloads, &["--format", "json", "-o", j])).success();
        let script = root().join("tests/formats_agree.py");
        let out = Command::new("python3")
            .arg(&script)
            .args([c, j])
            .args(*workloads)
            .output()
            .expect(
                "python3 runs (the CI installs it; tests/formats_agree.py needs only its stdlib)",
            );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{} {c} {j}\n{text}{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.starts_with(&format!("ok: {} workload(s)", workloads.len())),
            "{text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The issue's filter, `jq '.workloads[].launches[].metrics'`, gives one object of metrics per
/// launch for one workload and for several (with jq where installed, else the same walk here).
#[test]
fn jq_reads_every_launchs_metrics() {
    let has_jq = Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    for (workloads, launches) in [(ONE, 2), (SEVERAL, 6)] {
        let out = sim(&run_args(workloads, &["--format", "json"])).success();
        let metrics: Vec<Value> = if has_jq {
            let mut child = Command::new("jq")
                .args(["-c", ".workloads[].launches[].metrics"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("jq runs");
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(out.stdout.as_bytes())
                .unwrap();
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "jq failed on\n{out}");
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        } else {
            eprintln!("jq not found: walking .workloads[].launches[].metrics in Rust instead");
            let doc = out.json();
            doc["workloads"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|w| w["launches"].as_array().unwrap().clone())
                .map(|l| l["metrics"].clone())
                .collect()
        };
        assert_eq!(metrics.len(), launches, "{out}");
        for m in &metrics {
            assert!(m["smsp__inst_executed.sum"].is_u64(), "{m}");
        }
    }
}

/// Before: counts were floats (`524288.0`), nothing said which build or which config text made
/// the numbers, and the keys of `bounds_cycles` came and went with the launch.
#[test]
fn json_counts_are_integers_and_every_launch_has_the_same_keys() {
    let doc = sim(&run_args(SEVERAL, &["--format", "json"]))
        .success()
        .json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["tool"]["name"], "gpumemsim");
    assert_eq!(doc["tool"]["version"], env!("CARGO_PKG_VERSION"));
    let commit = &doc["tool"]["git_commit"];
    assert!(
        commit.is_null() || commit.as_str().is_some_and(|c| c.len() == 40),
        "{commit}"
    );
    assert_eq!(doc["config"], "configs/rtx3090.toml");
    assert_eq!(doc["config_bundled"], true);
    let text = std::fs::read(root().join("configs/rtx3090.toml")).unwrap();
    assert_eq!(doc["config_sha256"], sim::config::find::sha256_hex(&text));
    assert_eq!(doc["failures"], serde_json::json!([]));
    assert_eq!(doc["workloads"][0]["ptx"], "kernels/ptx/add_constant.ptx");
    assert!(
        doc["workloads"][0]["compiled"].is_null(),
        "bundled PTX, not compiled"
    );
    let mut shapes = std::collections::BTreeSet::new();
    for w in doc["workloads"].as_array().unwrap() {
        for l in w["launches"].as_array().unwrap() {
            let keys: Vec<&String> = l.as_object().unwrap().keys().collect();
            let bounds: Vec<&String> = l["bounds_cycles"].as_object().unwrap().keys().collect();
            shapes.insert(format!("{keys:?} {bounds:?}"));
            for (k, v) in l["metrics"].as_object().unwrap() {
                match k.as_str() {
                    "gpu__time_duration.sum" => assert!(v.is_f64(), "{k} = {v}"),
                    _ => assert!(v.is_u64(), "{k} = {v} should be an integer"),
                }
            }
            for v in l["bounds_cycles"].as_object().unwrap().values() {
                assert!(v.is_u64(), "{v}");
            }
        }
    }
    assert_eq!(shapes.len(), 1, "one shape for every launch: {shapes:#?}");
    let b = shapes.first().unwrap();
    for bound in sim::report::doc::BOUNDS {
        assert!(b.contains(&format!("\"{bound}\"")), "{bound} in {b}");
    }
}

/// Before: there was no metric selection; every user wrote jq for it.
#[test]
fn metrics_select_as_ncus_option_does() {
    let doc = sim(&run_args(
        ONE,
        &[
            "--format",
            "json",
            "--metrics",
            "regex:^dram__",
            "--metrics",
            "smsp__inst_executed.sum",
        ],
    ))
    .success()
    .json();
    let m = &doc["workloads"][0]["launches"][0]["metrics"];
    let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "smsp__inst_executed.sum"
        ]
    );
    assert_eq!(doc["units"].as_object().unwrap().len(), 3, "{doc}");
    let csv = sim(&run_args(
        ONE,
        &[
            "--format",
            "csv",
            "--metrics",
            "dram__bytes_read.sum,idc__requests.sum",
        ],
    ))
    .success();
    let header = csv.stdout.lines().next().unwrap();
    assert!(
        header.ends_with(r#""CC","dram__bytes_read.sum","idc__requests.sum""#),
        "{header}"
    );
    // The table shows the selection too, a row per metric.
    let table = sim(&run_args(ONE, &["--metrics", "regex:^idc__"])).success();
    assert!(
        table.stdout.contains("idc__requests_lookup_miss.sum"),
        "{table}"
    );
    assert!(!table.stdout.contains("dram__"), "{table}");
    sim(&run_args(ONE, &["--metrics", "dram__bytes.sum"]))
        .one_error(&["`dram__bytes.sum` is not a metric", "sim list --metrics"]);
    sim(&run_args(ONE, &["--metrics", "regex:^l3"])).one_error(&["matches no metric"]);
    let list = sim(&["list", "--metrics"]).success();
    assert!(list.stdout.contains("gpu__time_duration.sum") && list.stdout.contains("nsecond"));
}

/// Before: `sim` had no output file (`validate compare` had `--out`, `sim` only `--format`).
#[test]
fn out_writes_any_format_and_refuses_to_overwrite() {
    let dir = temp_dir("out");
    let table = dir.join("t.txt");
    let t = table.to_str().unwrap();
    let first = sim(&run_args(ONE, &["-o", t])).success();
    assert_eq!(first.stdout, "", "the report went to the file");
    let written = std::fs::read_to_string(&table).unwrap();
    assert!(
        written.contains("pseudo_random on NVIDIA GeForce RTX 3090"),
        "{written}"
    );
    sim(&run_args(ONE, &["-o", t])).one_error(&["t.txt: the file exists; pass --force"]);
    sim(&run_args(ONE, &["--out", t, "--force", "--format", "csv"])).success();
    assert!(std::fs::read_to_string(&table)
        .unwrap()
        .starts_with("\"ID\","));
    // An input is never replaced, --force or not: the workload file, its PTX, the config.
    let w = dir.join("add_one.toml");
    std::fs::copy(root().join("tests/fixtures/add_one.toml"), &w).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/add_one.ptx"),
        dir.join("add_one.ptx"),
    )
    .unwrap();
    let cfg = dir.join("gpu.toml");
    std::fs::copy(root().join("configs/rtx3090.toml"), &cfg).unwrap();
    let (w, c) = (w.to_str().unwrap(), cfg.to_str().unwrap());
    for target in [
        w.to_string(),
        dir.join("add_one.ptx").display().to_string(),
        c.to_string(),
    ] {
        sim(&["run", c, w, "-o", &target, "--force"]).one_error(&["input of the run"]);
    }
    assert_eq!(
        std::fs::read_to_string(&cfg).unwrap(),
        std::fs::read_to_string(root().join("configs/rtx3090.toml")).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Before: `sim run h200 ...` said "cannot read h200" while workloads resolved by name, and
/// `sim list` showed no configs.
#[test]
fn configs_resolve_by_name_and_are_listed() {
    let by_name = sim(&run_args(ONE, &["--format", "json"])).success().json();
    let mut by_path_args = run_args(ONE, &["--format", "json"]);
    by_path_args[1] = "configs/rtx3090.toml";
    let by_path = sim(&by_path_args).success().json();
    assert_eq!(
        by_name["workloads"], by_path["workloads"],
        "the same numbers"
    );
    assert_eq!(
        by_name["config_sha256"], by_path["config_sha256"],
        "the same text"
    );
    assert_eq!(by_path["config_bundled"], false);
    // The convention of `validate compare W --config C` works here too.
    let as_option = [
        "run",
        "pseudo_random",
        "--config",
        "rtx3090",
        "--set",
        "n=8192",
    ];
    let as_option = sim(&[&as_option[..], &["--format", "json"]].concat())
        .success()
        .json();
    assert_eq!(as_option["workloads"], by_name["workloads"]);
    sim(&["run", "pseudo_random"]).one_error(&["needs a config and at least one workload"]);
    sim(&["run", "h300", "pseudo_random"]).one_error(&[
        "config `h300`",
        "no bundled config",
        "h200, k40, rtx3090",
    ]);
    sim(&["run", "configs/h300.toml", "pseudo_random"])
        .one_error(&["config `configs/h300.toml`: no such file"]);
    let list = sim(&["list", "--configs"]).success();
    for (name, gpu) in [
        ("rtx3090", "NVIDIA GeForce RTX 3090"),
        ("h200", "NVIDIA H200"),
    ] {
        let line = list
            .stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{list}"));
        assert!(line.contains(gpu), "{line}");
    }
    assert!(
        list.stdout
            .contains("configs/h200.toml; sources cited: [NV] "),
        "{list}"
    );
    assert!(
        list.stdout.contains("[measured]"),
        "h200 is calibrated on a real H200\n{list}"
    );
}

/// Before: one failing workload among several discarded the output of all of them.
#[test]
fn a_failing_workload_among_several_keeps_the_others() {
    let args = [
        "run",
        "rtx3090",
        "pseudo_random",
        "tests/fixtures/out_of_bounds.toml",
    ];
    let json = sim(&[&args[..], &["--set", "n=8192", "--format", "json"]].concat());
    json.one_error(&[
        "workload `tests/fixtures/out_of_bounds.toml`",
        "launch[0].block[0]",
    ]);
    let doc = json.json();
    assert_eq!(doc["workloads"][0]["workload"], "pseudo_random");
    assert_eq!(
        doc["failures"][0]["workload"],
        "tests/fixtures/out_of_bounds.toml"
    );
    let table = sim(&[&args[..], &["--set", "n=8192"]].concat());
    table.one_error(&["out_of_bounds.toml"]);
    assert!(
        table
            .stdout
            .contains("pseudo_random on NVIDIA GeForce RTX 3090"),
        "{table}"
    );
}

/// Before: `(n + 15) // 16` ran: evalexpr took `//` for a comment, so the grid was n + 15
/// blocks, 16 times too many, and the table looked plausible.
#[test]
fn floor_division_in_a_grid_is_an_error_naming_the_key() {
    let dir = temp_dir("floordiv");
    let w = std::fs::read_to_string(root().join("tests/fixtures/add_one.toml")).unwrap();
    let grid = w
        .lines()
        .find(|l| l.trim_start().starts_with("grid"))
        .expect("a grid line");
    let w = w.replace(grid, r#"grid = ["(n + 15) // 16", 1, 1]"#);
    std::fs::write(dir.join("add_one.toml"), w).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/add_one.ptx"),
        dir.join("add_one.ptx"),
    )
    .unwrap();
    let p = dir.join("add_one.toml");
    sim(&["run", "rtx3090", p.to_str().unwrap()]).one_error(&[
        "launch[0].grid[0]",
        "`(n + 15) // 16`: unexpected `/` at column 11",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Before: the workload format was documented only outside the repository. The reference names
/// every key the parser accepts and every initializer, and its complete example parses.
#[test]
fn the_workload_format_reference_is_complete() {
    let doc = std::fs::read_to_string(root().join("docs/workload-format.md")).unwrap();
    let keys = [
        "name",
        "description",
        "ptx",
        "cuda",
        "[params]",
        "[[buffer]]",
        "[[constant]]",
        "[[launch]]",
        "type",
        "count",
        "init",
        "output",
        "symbol",
        "label",
        "kernel",
        "grid",
        "block",
        "shared_bytes",
        "args",
        "bank_mode",
        "dlcm",
        "registers",
        "[[texture]]",
        "[[surface]]",
        "buffer",
        "dims",
        "format",
        "channels",
        "width",
        "height",
        "pitch_bytes",
        "address_mode",
        "filter_mode",
        "read_mode",
        "normalized_coords",
    ];
    for k in keys {
        assert!(
            doc.contains(&format!("| `{k}` |")),
            "docs/workload-format.md: no row for `{k}`"
        );
    }
    for init in [
        "zeros",
        "iota",
        "value:V",
        "random:SEED",
        "random:SEED:LO:HI",
        "file:PATH",
    ] {
        assert!(
            doc.contains(&format!("| `{init}` |")),
            "no row for init `{init}`"
        );
    }
    for f in sim::workload::expr::FUNCTIONS {
        assert!(
            doc.contains(&format!("`{f}(a, b)`")),
            "expression function {f}"
        );
    }
    let example = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a complete example");
    let w = sim::workload::Workload::from_toml_str(
        example,
        sim::workload::Source::Bundled("pseudo_random.toml".into()),
    )
    .unwrap();
    assert_eq!(w.launches.len(), 2);
    // It is the bundled pseudo_random, so it runs.
    let cfg = sim::config::find::find("rtx3090").unwrap().config;
    let opts = sim::run::Options {
        sets: vec![("n".into(), 4096)],
        ..Default::default()
    };
    let run = sim::run::run_workload(&cfg, &w, &opts).unwrap();
    assert_eq!(run.launches.len(), 2);
}

/// Before: `file:` took raw bytes only, so a NumPy array saved with `numpy.save` put its header
/// into the buffer. Now the header is checked against the buffer and skipped.
#[test]
fn a_npy_array_initializes_a_buffer() {
    let dir = temp_dir("npy");
    // What numpy.save(np.arange(1000, dtype='<i4') * 3) writes: a version 1.0 header padded to
    // 64 bytes, then the elements.
    let mut header = "{'descr': '<i4', 'fortran_order': False, 'shape': (1000,), }".to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend((header.len() as u16).to_le_bytes());
    file.extend(header.as_bytes());
    file.extend((0..1000i32).flat_map(|v| (3 * v).to_le_bytes()));
    std::fs::write(dir.join("src.npy"), &file).unwrap();
    let w = std::fs::read_to_string(root().join("tests/fixtures/add_one.toml")).unwrap();
    let w = w.replacen("init = \"iota\"", "init = \"file:src.npy\"", 1);
    std::fs::write(dir.join("add_one.toml"), &w).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/add_one.ptx"),
        dir.join("add_one.ptx"),
    )
    .unwrap();
    let p = dir.join("add_one.toml");
    let workload = sim::workload::Workload::resolve(p.to_str().unwrap()).unwrap();
    let cfg = sim::config::find::find("rtx3090").unwrap().config;
    let opts = sim::run::Options {
        keep_outputs: true,
        ..Default::default()
    };
    let run = sim::run::run_workload(&cfg, &workload, &opts).unwrap();
    let (_, dst) = run.launches[0]
        .outputs
        .iter()
        .find(|(n, _)| n == "dst")
        .expect("dst");
    let dst: Vec<i32> = dst
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(dst, (0..1000).map(|v| 3 * v + 1).collect::<Vec<_>>());
    // A dtype that is not the buffer's is an error naming the key, not a reinterpretation.
    let w = w.replacen("type = \"i32\"", "type = \"f32\"", 1);
    std::fs::write(dir.join("add_one.toml"), w).unwrap();
    sim(&["run", "rtx3090", p.to_str().unwrap()]).one_error(&[
        "buffer[0].init",
        "dtype is '<i4'",
        "needs '<f4'",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Before: the summary table was 162 columns wide whatever the terminal, and explanation lines
/// ran to 489 characters. With `COLUMNS=80` every line fits in 80 columns: the summary puts the
/// launches side by side (a row per quantity), the per-instruction tables one per instruction,
/// the explanations wrap. A pipe without `COLUMNS`, and `-o FILE` always, keep the wide layout.
#[test]
fn tables_fit_the_terminal_width() {
    let args = run_args(ONE, &["--per-instruction", "--per-line"]);
    let narrow = sim_with(&args, Some("80")).success();
    for line in narrow.stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} > 80: {line}\n{narrow}",
            line.chars().count()
        );
    }
    let summary: Vec<&str> = narrow.stdout.lines().skip(2).take(3).collect();
    assert!(
        summary[1].starts_with("│ launch         │ constant │") && summary[1].ends_with("global │"),
        "{narrow}"
    );
    assert!(narrow.stdout.contains("\n│ cycles         │"), "{narrow}");
    let wide = sim_with(&args, None).success();
    let widest = wide
        .stdout
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap();
    assert!(widest > 80, "{wide}");
    assert!(
        wide.stdout
            .contains("\n│ launch   │    time │ cycles │ warp insts │"),
        "{wide}"
    );
    // The same numbers in both layouts.
    let cycles = |o: &Outcome| {
        o.json()["workloads"][0]["launches"][0]["metrics"]["gpc__cycles_elapsed.max"].clone()
    };
    let json = sim_with(&run_args(ONE, &["--format", "json"]), Some("80")).success();
    let n = cycles(&json).as_u64().unwrap().to_string();
    assert!(
        narrow.stdout.contains(&format!(" {n} │")) && wide.stdout.contains(&format!(" {n} │")),
        "{n}"
    );
    let dir = temp_dir("columns");
    let file = dir.join("table.txt");
    let file_args = [&args[..], &["-o", file.to_str().unwrap()]].concat();
    sim_with(&file_args, Some("80")).success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), wide.stdout);
}

/// The kind of a JSON value as the report format promises it: counts are integers.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "real",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Differences of shape between `doc` (an example) and `real` at `path`: keys one has and the
/// other lacks, values of another kind. Objects named `metrics` or `units` are maps of metric
/// names, which an example may cut: there the example's keys must be real ones. An array of the
/// example is compared element by element with the first elements of the real one.
fn shape_differences(doc: &Value, real: &Value, path: &str, out: &mut Vec<String>) {
    if kind(doc) != kind(real) {
        out.push(format!(
            "{path}: {} in the example, {} in the output",
            kind(doc),
            kind(real)
        ));
        return;
    }
    match (doc, real) {
        (Value::Object(d), Value::Object(r)) => {
            let map = path.ends_with(".metrics") || path.ends_with(".units");
            for k in d.keys().filter(|k| !r.contains_key(*k)) {
                out.push(format!("{path}.{k}: in the example, not in the output"));
            }
            if !map {
                for k in r.keys().filter(|k| !d.contains_key(*k)) {
                    out.push(format!("{path}.{k}: in the output, not in the example"));
                }
            }
            for (k, v) in d {
                if let Some(rv) = r.get(k) {
                    shape_differences(v, rv, &format!("{path}.{k}"), out);
                }
            }
        }
        (Value::Array(d), Value::Array(r)) => {
            for (i, v) in d.iter().enumerate() {
                match r.get(i) {
                    Some(rv) => shape_differences(v, rv, &format!("{path}[{i}]"), out),
                    None => out.push(format!("{path}[{i}]: in the example, not in the output")),
                }
            }
        }
        _ => {}
    }
}

/// Before: the JSON example lived in a DESIGN.md outside the repository, and the key table had
/// no row for `instructions_source`. docs/report-format.md's example has exactly the keys of the
/// real document of its command, with values of the same kinds, and every key of a document and
/// of a launch has a row in the reference's tables.
#[test]
fn the_json_example_of_the_report_format_has_the_real_keys() {
    let doc = std::fs::read_to_string(root().join("docs/report-format.md")).unwrap();
    let block = doc
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a JSON example in docs/report-format.md");
    let example: Value = serde_json::from_str(block).expect("the example is JSON");
    let args = [
        "run",
        "rtx3090",
        "pseudo_random",
        "--set",
        "n=8192",
        "--format",
        "json",
        "--metrics",
        "gpu__time_duration.sum",
        "--metrics",
        "idc__requests.sum",
        "--metrics",
        "dram__bytes_read.sum",
        "--launch",
        "constant",
    ];
    let flat = args.join(" ");
    assert!(
        doc.replace('\n', " ").contains(&format!("`sim {flat}`")),
        "the example's command is not `sim {flat}`"
    );
    let real = sim(&args).success().json();
    let mut differences = vec![];
    shape_differences(&example, &real, "", &mut differences);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // The reference's tables name every key.
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    let launch = &real["workloads"][0]["launches"][0];
    for key in real
        .as_object()
        .unwrap()
        .keys()
        .chain(launch.as_object().unwrap().keys())
    {
        assert!(
            rows.iter()
                .any(|r| r.split(" | ").next().unwrap().contains(&format!("`{key}`"))),
            "docs/report-format.md: no table row for `{key}`"
        );
    }
}

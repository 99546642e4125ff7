//! `sim sweep FILE.toml` (sim::sweep): every point of the product runs, each point's numbers are
//! exactly those of `sim run` for it, a failing point is a row with the message `sim run` prints,
//! and a bad sweep file is an error naming its key.

mod common;

use common::{root, sim};
use serde_json::Value;
use std::path::PathBuf;

/// A sweep file in a fresh temp directory (removed when dropped).
struct SweepFile(PathBuf);

impl SweepFile {
    fn new(name: &str, text: &str) -> SweepFile {
        let dir =
            std::env::temp_dir().join(format!("gpumemsim-sweep-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("sweep.toml"), text).expect("write sweep file");
        SweepFile(dir)
    }
    fn path(&self) -> String {
        self.0
            .join("sweep.toml")
            .to_str()
            .expect("UTF-8 temp path")
            .to_string()
    }
}

impl Drop for SweepFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SWEEP: &str = r#"
configs = ["rtx3090"]
config_sets = [{}, { "l1.size_bytes" = 65536, "l1.associativity" = 128 }, { "l1.size_bytes" = 3 }]
workloads = ["pseudo_random", "no_such_workload"]
[params]
n = [1024, 4096]
"#;

/// `sim run` of one point: its launches' metrics, or the error line it prints.
fn single(sets: &[&str], workload: &str, n: i64) -> Result<Vec<Value>, String> {
    let n = format!("n={n}");
    let mut args = vec!["run", "rtx3090", workload, "--set", &n, "--format", "json"];
    for s in sets {
        args.extend(["--config-set", s]);
    }
    let (code, out, err) = sim(&args);
    if code != Some(0) {
        return Err(err
            .trim()
            .strip_prefix("error: ")
            .unwrap_or(err.trim())
            .to_string());
    }
    let doc: Value = serde_json::from_str(&out).expect("sim run JSON");
    Ok(doc["workloads"][0]["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["metrics"].clone())
        .collect())
}

#[test]
fn every_point_equals_its_single_run_and_failures_are_rows() {
    let f = SweepFile::new("points", SWEEP);
    let (code, out, err) = sim(&["sweep", &f.path(), "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    // 3 variants x 2 workloads x 2 sizes; the 3rd variant and the unknown workload fail.
    assert!(err.contains("8 of 12 points failed"), "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).expect("sweep JSON");
    let variants: [&[&str]; 3] = [
        &[],
        &["l1.size_bytes=65536", "l1.associativity=128"],
        &["l1.size_bytes=3"],
    ];
    let labels = [
        "rtx3090",
        "rtx3090[l1.size_bytes=65536,l1.associativity=128]",
        "rtx3090[l1.size_bytes=3]",
    ];
    let mut point = 0;
    let mut checked = 0;
    for (sets, label) in variants.iter().zip(labels) {
        for w in ["pseudo_random", "no_such_workload"] {
            for n in [1024, 4096] {
                let mine: Vec<&Value> = rows.iter().filter(|r| r["point"] == point).collect();
                for r in &mine {
                    assert_eq!(
                        (
                            r["config"].as_str(),
                            r["workload"].as_str(),
                            r["param.n"].as_i64()
                        ),
                        (Some(label), Some(w), Some(n))
                    );
                }
                match single(sets, w, n) {
                    Ok(metrics) => {
                        assert_eq!(
                            mine.len(),
                            metrics.len(),
                            "point {point}: one row per launch"
                        );
                        for (r, m) in mine.iter().zip(&metrics) {
                            assert_eq!(r["error"], Value::Null);
                            for (k, v) in m.as_object().unwrap() {
                                assert_eq!(&r[k], v, "point {point} {k}");
                                checked += 1;
                            }
                        }
                    }
                    Err(e) => {
                        assert_eq!(mine.len(), 1, "point {point}: one error row");
                        assert_eq!(mine[0]["error"].as_str(), Some(e.as_str()), "point {point}");
                    }
                }
                point += 1;
            }
        }
    }
    assert!(checked > 200, "compared only {checked} metrics");
}

#[test]
fn csv_has_the_json_columns_and_out_is_not_overwritten() {
    let f = SweepFile::new(
        "csv",
        "configs = [\"rtx3090\"]\nworkloads = [\"pseudo_random\"]\n[params]\nn = 1024\n",
    );
    let (code, csv, err) = sim(&["sweep", &f.path()]);
    assert_eq!(code, Some(0), "{err}");
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header
            .starts_with("point,config,workload,param.n,error,launch,kernel,dram__bytes_read.sum,"),
        "{header}"
    );
    assert_eq!(lines.count(), 2, "two launches");
    let out = f.0.join("rows.csv");
    std::fs::write(&out, "mine").unwrap();
    let (code, _, err) = sim(&["sweep", &f.path(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    let (code, _, err) = sim(&["sweep", &f.path(), "-o", out.to_str().unwrap(), "--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), csv);
}

#[test]
fn bad_sweep_files_name_the_key() {
    for (text, want) in [
        (
            "configs = [\"rtx3090\"]\nworkloads = []\n",
            "sweep.toml: workloads: is empty",
        ),
        (
            "configs = [\"rtx3090\"]\nworkloads = [\"pseudo_random\"]\n[params]\nn = \"big\"\n",
            "sweep.toml: params.n: \"big\" is not an integer or a list",
        ),
        (
            "configs = [\"rtx3090\"]\nworkloads = [\"pseudo_random\"]\nsample = \"most\"\n",
            "sweep.toml: sample: `most` is not auto, full",
        ),
        ("configs = \"rtx3090\"\n", "sweep.toml: configs"),
    ] {
        let f = SweepFile::new("bad", text);
        let (code, out, err) = sim(&["sweep", &f.path()]);
        assert_eq!(code, Some(2), "{text}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(want), "{text}: want `{want}` in\n{err}");
    }
    let (code, _, err) = sim(&["sweep", "no/such/sweep.toml"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no/such/sweep.toml"), "{err}");
}

#[test]
fn the_documented_example_runs() {
    let ex = root().join("docs/examples/sweep.toml");
    let (code, out, err) = sim(&["sweep", ex.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 36, "18 points of two launches");
    assert!(rows.iter().all(|r| r["error"].is_null()), "{err}");
}

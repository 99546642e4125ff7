//! What-if configs on the command line: `sim run --config-set KEY=VALUE` changes a config's
//! value before validation (sim::config::set), so the same checks apply as in a file, and the
//! report says what was changed.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs `sim ARGS...` in the workspace root: (exit code, stdout, stderr).
fn sim(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap())
        .output()
        .expect("the sim binary runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// `sim run CONFIG pseudo_random --set n=4096 --format json EXTRA...`: the JSON document.
fn json(config: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "run",
        config,
        "pseudo_random",
        "--set",
        "n=4096",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = sim(&args);
    assert_eq!(code, Some(0), "{args:?}\n{err}");
    serde_json::from_str(&out).unwrap()
}

/// A metric of launch `i` of the document's one workload.
fn metric(doc: &Value, i: usize, name: &str) -> f64 {
    doc["workloads"][0]["launches"][i]["metrics"][name]
        .as_f64()
        .unwrap()
}

#[test]
fn a_set_equal_to_the_file_changes_nothing_and_is_reported() {
    let plain = json("rtx3090", &[]);
    // 128 is rtx3090's L1 line already (configs/rtx3090.toml): the same numbers.
    let same = json("rtx3090", &["--config-set", "l1.line_bytes=128"]);
    assert_eq!(plain["workloads"], same["workloads"]);
    assert!(plain.get("config_sets").is_none());
    assert_eq!(
        same["config_sets"],
        serde_json::json!({"l1.line_bytes": "128"})
    );
}

#[test]
fn a_changed_value_changes_the_prediction() {
    let plain = json("h200", &[]);
    // Twice the SM clock: the constant launch, bound by the SM's constant cache, takes about
    // half the nanoseconds (a few more cycles: DRAM bytes per cycle halve).
    let fast = json("h200", &["--config-set", "sm.clock_mhz=3948.2"]);
    let ns = |d: &Value| metric(d, 0, "gpu__time_duration.sum");
    assert!(
        ns(&fast) < 0.6 * ns(&plain),
        "{} vs {}",
        ns(&fast),
        ns(&plain)
    );
}

#[test]
fn bad_sets_are_errors_naming_the_key_and_the_set() {
    for (set, says) in [
        ("l1.sector_bytes=3", "l1.sector_bytes"),
        ("l1.size_bytes=lots", "l1.size_bytes"),
        ("l1.no_such_key=1", "no_such_key"),
        ("l3.size_bytes=1", "no table `l3`"),
        ("constant.cache[5].line_bytes=64", "index 5 is out of range"),
    ] {
        let (code, _, err) = sim(&["run", "rtx3090", "pseudo_random", "--config-set", set]);
        assert_eq!(code, Some(2), "{set}\n{err}");
        assert!(err.contains(says), "{set}: {err}");
        assert!(
            err.contains(&format!("from --config-set {set}")),
            "{set}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    let (code, _, err) = sim(&[
        "run",
        "rtx3090",
        "pseudo_random",
        "--config-set",
        "l1.size_bytes",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expected KEY=VALUE"), "{err}");
}

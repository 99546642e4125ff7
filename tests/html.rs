//! End-to-end specification of `sim run --html FILE` and of the warp states in the reports
//! (issue 41):
//!
//! 1. The page of the main job (pseudo_random, smaller) and of the per-line fixture
//!    (`tests/fixtures/lineinfo`) renders in a real headless browser (Debian's `chromium`,
//!    which `.ci/run` installs): the DOM after its script ran has the launches, the bound and
//!    warp-state charts, the source view with the CUDA line's text, the bank picture, and with
//!    `--measured` the measured values. Without a browser the test says so and skips the
//!    rendering only.
//! 2. An existing file is never replaced without `--force`; `--measured` needs `--html` and a
//!    validate report.
//! 3. The JSON's warp states: every launch has `warp_states` under ncu's names, and the lines'
//!    time shares add up to the whole.

mod common;

use common::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `sim ARGS...` in the workspace root: (exit code, stdout, stderr).
fn sim(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the sim binary runs");
    let r = (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!r.2.contains("panicked"), "sim {args:?} panicked\n{}", r.2);
    r
}

/// `sim ARGS...`, which must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = sim(args);
    assert_eq!(code, Some(0), "sim {args:?}\n{out}\n{err}");
    out
}

/// A fresh empty directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-html-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The headless browser: `chromium` (Debian's package), else `chromium-browser` or
/// `google-chrome`, as found on PATH.
fn browser() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// The DOM of `page` after its script ran, as the browser serializes it (`--dump-dom`), or
/// `None` when no browser is installed. A 60-second `timeout` keeps a hung browser from
/// hanging the test.
fn rendered(page: &Path) -> Option<String> {
    let Some(b) = browser() else {
        eprintln!(
            "SKIPPED the browser rendering: no chromium on PATH (apt-get install chromium; .ci/run installs it)"
        );
        return None;
    };
    let profile = page.with_extension("profile");
    let out = Command::new("timeout")
        .args([
            "60",
            b,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("timeout runs the browser");
    assert!(
        out.status.success(),
        "{b}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// How many times `needle` occurs in `hay`.
fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn the_main_job_s_page_renders_in_a_browser_with_measurements_beside() {
    let d = temp_dir("main");
    let page = d.join("report.html");
    let p = page.to_str().unwrap();
    let measured = "validate/measurements/h200/report.json";
    ok(&[
        "run",
        "h200",
        "pseudo_random",
        "--set",
        "n=128000",
        "--html",
        p,
        "--measured",
        measured,
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing fetched.
    for fetch in ["src=\"http", "href=\"http", "<link", "src=\"//"] {
        assert!(!html.contains(fetch), "the page fetches: {fetch}");
    }
    // The summary table is in the page itself; the charts are the script's.
    assert!(html.contains("data-label=\"constant\"") && html.contains("data-label=\"global\""));
    assert!(!html.contains("id=\"rendered\""));
    let Some(dom) = rendered(&page) else {
        return;
    };
    assert_eq!(
        count(&dom, "id=\"rendered\""),
        1,
        "the script ran to its end"
    );
    // Per launch: the bounds, the warp states, the measurements and the source view.
    assert_eq!(count(&dom, "<svg class=\"bounds\""), 2, "{dom}");
    assert_eq!(count(&dom, "<svg class=\"stalls\""), 2);
    assert_eq!(count(&dom, "<table class=\"measured\""), 2);
    assert_eq!(count(&dom, "<table class=\"source\""), 2);
    assert!(dom.contains(">gpu__time_duration.sum<"));
    // One marked bar per launch: the bound that set its time.
    assert_eq!(count(&dom, "fill=\"#c0392b\""), 2);
    assert!(dom.contains(">long_scoreboard<"), "warp states drawn");
    // The constant launch's time is the constant cache's, beyond the replay's timeline.
    assert!(dom.contains("the constant bound ("), "{dom}");
}

#[test]
fn the_fixture_s_page_shows_its_source_lines_and_the_bank_picture() {
    let d = temp_dir("lines");
    let page = d.join("lines.html");
    let p = page.to_str().unwrap();
    ok(&[
        "run",
        "h200",
        "tests/fixtures/lineinfo/lines.toml",
        "--html",
        p,
    ]);
    let Some(dom) = rendered(&page) else {
        return;
    };
    assert_eq!(count(&dom, "<table class=\"source\""), 1);
    // The CUDA lines with their text (the 2-way conflicted shared store is line 9).
    assert!(dom.contains(">lines.cu:9<"), "{dom}");
    assert_eq!(count(&dom, "<svg class=\"banks\""), 1);
    // Two lanes per bank of the 2-way conflict: cells of wavefront 0 and of wavefront 1.
    assert!(dom.contains("wavefront 1: lanes"), "{dom}");
}

#[test]
fn an_existing_page_is_refused_without_force_and_measured_needs_html() {
    let d = temp_dir("refuse");
    let page = d.join("mine.html");
    std::fs::write(&page, "mine").unwrap();
    let p = page.to_str().unwrap();
    let fixture = "tests/fixtures/lineinfo/lines.toml";
    let (code, _, err) = sim(&["run", "h200", fixture, "--html", p]);
    assert_eq!(code, Some(2));
    assert!(err.contains("exists") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "mine");
    ok(&["run", "h200", fixture, "--html", p, "--force"]);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    let (code, _, err) = sim(&["run", "h200", fixture, "--measured", "README.md"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--html"), "{err}");
    let (code, _, err) = sim(&[
        "run",
        "h200",
        fixture,
        "--html",
        p,
        "--force",
        "--measured",
        "Cargo.toml",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not JSON"), "{err}");
}

#[test]
fn json_warp_states_use_ncu_names_and_line_shares_add_up() {
    let out = ok(&[
        "run",
        "h200",
        "tests/fixtures/lineinfo/lines.toml",
        "--format",
        "json",
        "--per-line",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let l = &doc["workloads"][0]["launches"][0];
    let ws = &l["warp_states"];
    let m = &ws["metrics"];
    let issued = ws["issued"].as_u64().unwrap();
    assert!(issued > 0);
    assert_eq!(
        m["smsp__pcsamp_warps_issue_stalled_selected"].as_u64(),
        Some(issued)
    );
    // The levels add up to the long scoreboard.
    let long: u64 = ["l1", "l2", "dram"]
        .iter()
        .map(|k| {
            m[format!("sim__warps_issue_stalled_long_scoreboard_{k}")]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(
        m["smsp__pcsamp_warps_issue_stalled_long_scoreboard"].as_u64(),
        Some(long)
    );
    let barrier = m["smsp__pcsamp_warps_issue_stalled_barrier"]
        .as_u64()
        .unwrap();
    let per = m["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"].as_f64();
    assert_eq!(per, Some(barrier as f64 / issued as f64));
    let lines = l["per_source_line"].as_array().unwrap();
    let cycles: u64 = lines
        .iter()
        .map(|x| x["warp_cycles"].as_u64().unwrap())
        .sum();
    assert_eq!(cycles, ws["warp_cycles"].as_u64().unwrap());
    let shares: f64 = lines
        .iter()
        .map(|x| x["time_share"].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
}

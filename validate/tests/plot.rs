//! Issue 40: `validate report --plot` onto the report's own path replaced the report. The plot
//! now goes only to a new `.svg` file that is none of the command's inputs (an existing file with
//! `--force`), and a refusal is one `error:` line with exit code 2, before anything is printed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `validate report REPORT --plot PLOT extra...` from the workspace root: (exit code, stdout,
/// stderr).
fn report(report: &Path, plot: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_validate"))
        .arg("report")
        .arg(report)
        .arg("--plot")
        .arg(plot)
        .args(extra)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// A fresh directory with a copy of the committed H200 report, named `name`.
fn copy(tag: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("validate-plot-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = dir.join(name);
    std::fs::copy(root.join("measurements/h200/report.json"), &path).unwrap();
    path
}

#[test]
fn the_plot_never_replaces_the_report_or_an_existing_file() {
    let saved = copy("own", "report.svg");
    let before = std::fs::read(&saved).unwrap();
    for extra in [&[][..], &["--force"][..]] {
        let (code, stdout, stderr) = report(&saved, &saved, extra);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(stdout, "", "nothing is printed before the refusal");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: --plot ") && stderr.contains("which this command reads"),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read(&saved).unwrap(),
        before,
        "the report is unchanged"
    );

    let json = copy("new", "report.json");
    let plot = json.with_file_name("h200.svg");
    let _ = std::fs::remove_file(&plot);
    let (code, stdout, stderr) = report(&json, &plot, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("wrote "), "{stdout}");
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    // A second time it exists: kept, unless --force.
    let (code, _, stderr) = report(&json, &plot, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("exists and is not overwritten (pass --force"),
        "{stderr}"
    );
    assert_eq!(report(&json, &plot, &["--force"]).0, Some(0));
    // Not an SVG file name: the report's own path, or a typo.
    let (code, _, stderr) = report(&json, &json, &["--force"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("must end in .svg"), "{stderr}");
}

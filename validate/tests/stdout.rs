//! Issue 40: `validate` panicked ("failed printing to stdout") when its standard output was a
//! closed pipe (`validate report ... | head -c1`) or a full disk (`> /dev/full`). Now a closed
//! pipe ends the run quietly with exit code 0, as `sim` does, and a full disk is one `error:` line
//! with exit code 2.

use std::process::{Command, Stdio};

/// The commands that print without a GPU, from the workspace root.
const COMMANDS: &[&[&str]] = &[
    &["report", "validate/measurements/h200/report.json"],
    &[
        "report",
        "validate/measurements/h200/report.json",
        "--markdown",
    ],
    &["calibrate", "--plan"],
    &["ptx", "--check"],
];

fn validate(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_validate"));
    c.args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stderr(Stdio::piped());
    c
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    for args in COMMANDS {
        let mut child = validate(args).stdout(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take()); // the reader is gone before the first write
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "validate {args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "validate {args:?}: {err}");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_full_disk_is_one_error_line() {
    for args in COMMANDS {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = validate(args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "validate {args:?}: {err}");
        assert_eq!(
            err.trim_end(),
            "error: cannot write to standard output: No space left on device (os error 28)",
            "validate {args:?}"
        );
    }
}

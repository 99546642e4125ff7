//! Issue 40: `validate` panicked ("failed printing to stdout") when its standard output was a
//! closed pipe (`validate report ... | head -c1`) or a full disk (`> /dev/full`). Now a closed
//! pipe ends the run quietly with exit code 0, as `sim` does, and a full disk is one `error:` line
//! with exit code 2 (`--help` and `--version` included: clap's own print ignored the failed write
//! and exited 0). The commands run under a 4 GiB address-space limit where `prlimit` exists.

use std::process::{Command, Stdio};

/// The commands that print without a GPU, from the workspace root (`report --config`, which
/// simulates the 84 launches first, takes a minute in a debug build: it goes through the same
/// writer as `report`).
const COMMANDS: &[&[&str]] = &[
    &["--help"],
    &["--version"],
    &["help", "report"],
    &["report", "--help"],
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
    let bin = env!("CARGO_BIN_EXE_validate");
    let mut c = if Command::new("prlimit").arg("--version").output().is_ok() {
        let mut c = Command::new("prlimit");
        c.arg(format!("--as={}", 4u64 << 30)).arg(bin);
        c
    } else {
        Command::new(bin)
    };
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

/// A bad argument was clap's paragraph (error, usage, "For more information, try '--help'."):
/// now one line naming the argument, exit code 2.
#[test]
fn a_bad_argument_is_one_line_naming_it() {
    for (args, want) in [
        (
            &["compare", "--repeat", "0"][..],
            "error: invalid value '0' for '--repeat <N>': 0 is not in 1..=4294967295; try \
             'validate compare --help'",
        ),
        (
            &["report", "--markdwn"],
            "error: unexpected argument '--markdwn' found (tip: a similar argument exists: \
             '--markdown'); try 'validate report --help'",
        ),
        (
            &["--foo"],
            "error: unexpected argument '--foo' found; try 'validate --help'",
        ),
    ] {
        let out = validate(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "validate {args:?}: {err}");
        assert_eq!(err.trim_end(), want, "validate {args:?}");
        assert!(out.stdout.is_empty(), "validate {args:?}");
    }
}

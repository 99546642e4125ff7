//! Helpers the end-to-end tests share: where the workspace is, and running the `sim` binary
//! there so that paths read as a user types them.
#![allow(dead_code)] // each test crate uses its own part

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root: `sim` runs there.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("sim/ has a parent")
        .to_path_buf()
}

/// Runs `sim ARGS...` in the workspace root: (exit code, stdout, stderr). A panic is a failure
/// whatever the test expects.
pub fn sim(args: &[&str]) -> (Option<i32>, String, String) {
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

/// The output buffer `name` of launch `l` (run with `keep_outputs`) as little-endian 32-bit words.
pub fn output_words(l: &sim::run::LaunchResult, name: &str) -> Vec<u32> {
    let b = &l.outputs.iter().find(|(n, _)| n == name).unwrap().1;
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

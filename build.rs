//! Embeds the bundled kernels and GPU configs into the `gpumemsim` catalog crate.
//!
//! Every `kernels/*.toml` (workload files), `kernels/*.cu` (CUDA sources) and `kernels/ptx/*.ptx`
//! (the PTX committed from them) becomes an `include_str!` entry of a generated table, so the
//! binaries run the bundled workloads with no file system access and no CUDA installed; every
//! `configs/*.toml` an entry of a second table, so that `sim run h200 ...` works anywhere.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let kernels = root.join("kernels");
    println!("cargo:rerun-if-changed=kernels");
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    collect(&kernels, &kernels, &mut entries);
    entries.sort();
    let mut out =
        String::from("/// Every bundled file: (path relative to `kernels/`, contents).\n");
    out.push_str("pub static FILES: &[(&str, &str)] = &[\n");
    for (rel, abs) in &entries {
        println!("cargo:rerun-if-changed={}", abs.display());
        out.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
    }
    out.push_str("];\n");
    out.push_str("/// Every bundled GPU config: (name, path in the source tree, contents).\n");
    out.push_str("pub static CONFIGS: &[(&str, &str, &str)] = &[\n");
    let configs = root.join("configs");
    println!("cargo:rerun-if-changed=configs");
    let mut names: Vec<PathBuf> = fs::read_dir(&configs)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    names.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    names.sort();
    for abs in &names {
        println!("cargo:rerun-if-changed={}", abs.display());
        let file = abs.file_name().expect("a file").to_string_lossy();
        let name = file.trim_end_matches(".toml");
        out.push_str(&format!(
            "    ({name:?}, {:?}, include_str!({:?})),\n",
            format!("configs/{file}"),
            abs.display().to_string()
        ));
    }
    out.push_str("];\n");
    let commit = git_commit(&root);
    out.push_str("/// The git commit the crate was built from (`git rev-parse HEAD`), if known.\n");
    out.push_str(&format!(
        "pub static GIT_COMMIT: Option<&str> = {commit:?};\n"
    ));
    let dest = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("catalog.rs");
    fs::write(dest, out).expect("write catalog.rs into OUT_DIR");
}

/// Collects `*.toml`, `*.cu` and `ptx/*.ptx` under `dir`, keyed by their path relative to `base`.
fn collect(base: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(read) = fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(base, &path, out);
            continue;
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "toml" | "cu" | "ptx" | "bin") {
            let rel = path
                .strip_prefix(base)
                .expect("under base")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, path));
        }
    }
}

/// `git rev-parse HEAD` of the checkout at `root`, or `None` outside git (a crate tarball) or
/// without git. Asks cargo to run again when HEAD or the branch it names moves.
fn git_commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
    if let (Some(common), Some(branch)) = (
        git(&["rev-parse", "--git-common-dir"]),
        git(&["symbolic-ref", "-q", "HEAD"]),
    ) {
        let common = root.join(common);
        for f in [common.join(&branch), common.join("packed-refs")] {
            if f.exists() {
                println!("cargo:rerun-if-changed={}", f.display());
            }
        }
    }
    let commit = git(&["rev-parse", "HEAD"])?;
    commit
        .bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then_some(commit)
}

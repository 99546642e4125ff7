//! Embeds the bundled kernels into the `gpumemsim` catalog crate.
//!
//! Every `kernels/*.toml` (workload files), `kernels/*.cu` (CUDA sources) and `kernels/ptx/*.ptx`
//! (the PTX committed from them) becomes an `include_str!` entry of a generated table, so the
//! binaries run the bundled workloads with no file system access and no CUDA installed.

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

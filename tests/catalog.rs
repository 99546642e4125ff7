//! The bundled catalog is consistent: every `kernels/*.cu` has up-to-date PTX, and every bundled
//! workload parses and names PTX that the catalog holds.
//!
//! A generated PTX file's first line is a stamp (kernels/README.md):
//! `// gpumemsim: generated from <stem>.cu sha256=<hex> by <compiler> with <options>`.
//! A stamp whose hash differs from the `.cu`'s bytes now means someone edited the source without
//! regenerating the PTX, so the simulator and the GPU would run code that is not in the `.cu`.

use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

const REGENERATE_NVRTC: &str = "cargo run -p validate -- ptx";
const REGENERATE_CLANG: &str = "cargo run -p validate -- ptx --compiler clang";
const STAMP_PREFIX: &str = "// gpumemsim: generated from ";

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `.cu` files directly under `kernels/`, sorted.
fn sources() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(kernels_dir())
        .expect("kernels/ exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    out.sort();
    out
}

/// `(source file name, sha256)` from the stamp on the first line of `ptx`.
fn stamp(ptx: &str) -> Option<(&str, &str)> {
    let rest = ptx.lines().next()?.strip_prefix(STAMP_PREFIX)?;
    let (source, rest) = rest.split_once(" sha256=")?;
    let (hash, rest) = rest.split_once(' ')?;
    rest.starts_with("by ").then_some((source, hash))
}

/// Checks one generated PTX file against its source; returns the problem, if any.
fn problem(source: &Path, ptx: &Path, regenerate: &str) -> Option<String> {
    let name = source.file_name().unwrap().to_string_lossy();
    let shown = ptx
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(ptx)
        .display()
        .to_string();
    let shown = shown.trim_start_matches('/');
    let Ok(text) = fs::read_to_string(ptx) else {
        return Some(format!(
            "{shown} is missing (generated from kernels/{name}); regenerate with: {regenerate}"
        ));
    };
    let Some((stamped_source, stamped_hash)) = stamp(&text) else {
        return Some(format!(
            "{shown} has no `{STAMP_PREFIX}...` stamp on its first line; regenerate with: {regenerate}"
        ));
    };
    if stamped_source != name {
        return Some(format!(
            "{shown} says it was generated from {stamped_source}, not {name}; regenerate with: {regenerate}"
        ));
    }
    let now = sha256_hex(&fs::read(source).expect("readable .cu"));
    (stamped_hash != now).then(|| {
        format!(
            "{shown} is stale: its stamp has sha256={stamped_hash}, kernels/{name} now has sha256={now}; \
regenerate with: {regenerate}"
        )
    })
}

#[test]
fn every_source_has_up_to_date_ptx() {
    let sources = sources();
    assert!(!sources.is_empty(), "no kernels/*.cu found");
    let mut problems = Vec::new();
    for source in &sources {
        let stem = source.file_stem().unwrap().to_string_lossy();
        let nvrtc = kernels_dir().join("ptx").join(format!("{stem}.ptx"));
        problems.extend(problem(source, &nvrtc, REGENERATE_NVRTC));
        let clang = kernels_dir()
            .join("ptx")
            .join("clang")
            .join(format!("{stem}.ptx"));
        if clang.exists() {
            problems.extend(problem(source, &clang, REGENERATE_CLANG));
        }
    }
    assert!(
        problems.is_empty(),
        "stale generated PTX:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_ptx_file_comes_from_a_source() {
    // A PTX file whose .cu was deleted or renamed would otherwise never be checked again.
    let mut problems = Vec::new();
    for (path, text) in gpumemsim::files() {
        if !path.ends_with(".ptx") {
            continue;
        }
        match stamp(text) {
            Some((source, _)) if gpumemsim::file(source).is_some() => {}
            Some((source, _)) => problems.push(format!(
                "kernels/{path}: its source kernels/{source} does not exist"
            )),
            None => problems.push(format!(
                "kernels/{path}: no `{STAMP_PREFIX}...` stamp on its first line"
            )),
        }
    }
    assert!(
        problems.is_empty(),
        "PTX without a source:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_workload_parses_and_names_bundled_ptx() {
    let workloads = gpumemsim::workloads();
    assert!(
        !workloads.is_empty(),
        "no bundled workloads (kernels/*.toml)"
    );
    for w in workloads {
        let doc: toml::Table = toml::from_str(w.toml)
            .unwrap_or_else(|e| panic!("kernels/{} is not valid TOML: {e}", w.path));
        let name = doc.get("name").and_then(|v| v.as_str());
        assert_eq!(
            name,
            Some(w.name),
            "kernels/{}: `name` must be the file name without .toml",
            w.path
        );
        let ptx = doc
            .get("ptx")
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("kernels/{}: no `ptx = \"...\"` key", w.path));
        let text = gpumemsim::file(ptx).unwrap_or_else(|| {
            panic!(
                "kernels/{}: ptx = {ptx:?} is not in the bundled catalog",
                w.path
            )
        });
        let launches = doc
            .get("launch")
            .and_then(|v| v.as_array())
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        assert!(!launches.is_empty(), "kernels/{}: no [[launch]]", w.path);
        for launch in launches {
            let kernel = launch
                .get("kernel")
                .and_then(|v| v.as_str())
                .unwrap_or_else(|| panic!("kernels/{}: a [[launch]] without `kernel`", w.path));
            let entry = format!(".entry {kernel}(");
            assert!(
                text.contains(&entry),
                "kernels/{}: kernel {kernel:?} is not an entry of {ptx}",
                w.path
            );
        }
    }
}

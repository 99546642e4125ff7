//! The catalog of gpumemsim's bundled kernels and workloads.
//!
//! `build.rs` embeds everything under `kernels/`: the CUDA sources (`*.cu`), the PTX that NVIDIA's
//! compiler made from them (`ptx/*.ptx`, stamped with the source's SHA-256) and the workload files
//! (`*.toml`, the format of DESIGN.md). The `sim` and `validate` binaries resolve a workload name
//! such as `pseudo_random` here, so they need no files beside them at run time.
//!
//! ```
//! let w = gpumemsim::workload("pseudo_random").expect("bundled");
//! assert!(w.toml.contains("add_constant"));
//! assert!(gpumemsim::file("ptx/add_constant.ptx").is_some());
//! ```

mod generated {
    include!(concat!(env!("OUT_DIR"), "/catalog.rs"));
}

/// A bundled workload file.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// The name users type (`pseudo_random`): the file name without `.toml`.
    pub name: &'static str,
    /// Path relative to `kernels/` (`pseudo_random.toml`); paths inside the file resolve against it.
    pub path: &'static str,
    /// The TOML text.
    pub toml: &'static str,
}

/// Every bundled file as (path relative to `kernels/`, contents), sorted by path.
pub fn files() -> &'static [(&'static str, &'static str)] {
    generated::FILES
}

/// The contents of the bundled file at `path` (relative to `kernels/`, `/`-separated), if any.
pub fn file(path: &str) -> Option<&'static str> {
    let path = path.strip_prefix("./").unwrap_or(path);
    files().iter().find(|(p, _)| *p == path).map(|(_, c)| *c)
}

/// The bundled workloads (the top-level `kernels/*.toml`), sorted by name.
pub fn workloads() -> Vec<Workload> {
    files()
        .iter()
        .filter(|(p, _)| p.ends_with(".toml") && !p.contains('/'))
        .map(|(p, toml)| Workload {
            name: p.trim_end_matches(".toml"),
            path: p,
            toml,
        })
        .collect()
}

/// The git commit these files were built from (`git rev-parse HEAD` at build time), if the
/// build ran inside a git checkout.
pub fn git_commit() -> Option<&'static str> {
    generated::GIT_COMMIT
}

/// A bundled GPU config (`configs/<name>.toml` of the source tree this crate was built from).
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// The name users type (`rtx3090`): the file name without `.toml`.
    pub name: &'static str,
    /// Its path in the source tree (`configs/rtx3090.toml`).
    pub path: &'static str,
    /// The TOML text.
    pub toml: &'static str,
}

/// The bundled GPU configs, sorted by name.
///
/// ```
/// assert!(gpumemsim::configs().iter().any(|c| c.name == "rtx3090" && c.path == "configs/rtx3090.toml"));
/// ```
pub fn configs() -> Vec<Config> {
    generated::CONFIGS
        .iter()
        .map(|&(name, path, toml)| Config { name, path, toml })
        .collect()
}

/// The bundled config called `name`, if any.
pub fn config(name: &str) -> Option<Config> {
    configs().into_iter().find(|c| c.name == name)
}

/// The bundled workload called `name`, if any.
pub fn workload(name: &str) -> Option<Workload> {
    workloads().into_iter().find(|w| w.name == name)
}

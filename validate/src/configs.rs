//! `--config auto`: the `configs/*.toml` whose `gpu.name` is the device's name.
//!
//! Looks in `configs/` of the current directory and of each of its parents (so that it works from
//! anywhere inside a checkout), then in the source tree this binary was built from.

use anyhow::{bail, Result};
use sim::config::GpuConfig;
use std::path::{Path, PathBuf};

/// The configs directory of the source tree this binary was built from.
const SOURCE_CONFIGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs");

/// The directories searched by [`resolve`], existing ones only, nearest first.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = vec![];
    if let Ok(cwd) = std::env::current_dir() {
        dirs.extend(cwd.ancestors().map(|d| d.join("configs")));
    }
    dirs.push(PathBuf::from(SOURCE_CONFIGS));
    let mut seen = vec![];
    dirs.into_iter()
        .filter(|d| d.is_dir())
        .filter(|d| {
            let c = d.canonicalize().unwrap_or_else(|_| d.clone());
            let new = !seen.contains(&c);
            seen.push(c);
            new
        })
        .collect()
}

/// Every `*.toml` in `dir`, sorted, with its `gpu.name` (or why it does not load).
pub fn list(dir: &Path) -> Vec<(PathBuf, Result<String, String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = GpuConfig::load(&p)
                .map(|c| c.gpu.name)
                .map_err(|e| e.to_string());
            (p, name)
        })
        .collect()
}

/// The config for `device_name`: `choice` itself unless it is `auto`, else the first config in
/// [`search_dirs`] whose `gpu.name` equals `device_name` (ignoring case and surrounding spaces).
pub fn resolve(choice: &str, device_name: &str) -> Result<PathBuf> {
    if choice != "auto" {
        let p = PathBuf::from(choice);
        if !p.is_file() {
            bail!("--config {choice}: no such file");
        }
        return Ok(p);
    }
    resolve_in(&search_dirs(), device_name)
}

/// [`resolve`]'s search over `dirs`.
pub fn resolve_in(dirs: &[PathBuf], device_name: &str) -> Result<PathBuf> {
    let want = device_name.trim().to_lowercase();
    let mut known = vec![];
    for dir in dirs {
        for (path, name) in list(dir) {
            match name {
                Ok(n) if n.trim().to_lowercase() == want => return Ok(path),
                Ok(n) => known.push(format!("{} (\"{n}\")", path.display())),
                Err(_) => known.push(format!("{} (does not load)", path.display())),
            }
        }
    }
    if known.is_empty() {
        bail!(
            "--config auto: no configs/ directory found for \"{device_name}\"; pass --config PATH \
(building a config from the device's attributes is a later step)"
        );
    }
    bail!(
        "--config auto: no config has gpu.name = \"{device_name}\"; configs: {}; pass --config PATH \
(building a config from the device's attributes is a later step)",
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_configs() -> Vec<PathBuf> {
        vec![PathBuf::from(SOURCE_CONFIGS)]
    }

    #[test]
    fn the_h200_resolves_to_its_config() {
        let p = resolve_in(&repo_configs(), "NVIDIA H200").unwrap();
        assert_eq!(p.file_name().unwrap(), "h200.toml");
        let p = resolve_in(&repo_configs(), " nvidia h200 ").unwrap();
        assert_eq!(p.file_name().unwrap(), "h200.toml");
    }

    #[test]
    fn an_unknown_gpu_lists_the_configs_and_suggests_config_path() {
        let e = resolve_in(&repo_configs(), "NVIDIA B200")
            .unwrap_err()
            .to_string();
        assert!(e.contains("h200.toml (\"NVIDIA H200\")"), "{e}");
        assert!(e.contains("--config PATH"), "{e}");
        assert!(e.contains("later step"), "{e}");
        let e = resolve_in(&[], "X").unwrap_err().to_string();
        assert!(e.contains("no configs/ directory"), "{e}");
    }

    #[test]
    fn an_explicit_path_must_exist() {
        let e = resolve("/no/such/config.toml", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such file"), "{e}");
    }
}

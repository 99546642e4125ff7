//! `--config auto`: the `configs/*.toml` whose `gpu.name` is the device's name, else a config
//! generated from the device's attributes on top of the nearest shipped one ([`crate::skeleton`]).
//!
//! Looks in `configs/` of the current directory and of each of its parents (so that it works from
//! anywhere inside a checkout), then in the source tree this binary was built from.

use crate::report::DeviceInfo;
use crate::skeleton::{self, Skeleton};
use anyhow::{anyhow, bail, Result};
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
            "--config auto: no configs/ directory found for \"{device_name}\" (a config generated \
from the device's attributes needs a shipped one for the rest); pass --config PATH"
        );
    }
    bail!(
        "--config auto: no config has gpu.name = \"{device_name}\"; configs: {}",
        known.join(", ")
    )
}

/// Every config in `dirs` that loads, nearest directory first; a file name already seen in an
/// earlier directory is skipped.
pub fn load_all(dirs: &[PathBuf]) -> Vec<(PathBuf, GpuConfig)> {
    let mut out: Vec<(PathBuf, GpuConfig)> = vec![];
    for dir in dirs {
        for (path, name) in list(dir) {
            if name.is_err() || out.iter().any(|(p, _)| p.file_name() == path.file_name()) {
                continue;
            }
            if let Ok(cfg) = GpuConfig::load(&path) {
                out.push((path, cfg));
            }
        }
    }
    out
}

/// How a shipped config is named in comments and reports: relative to the current directory when
/// below it, else `configs/<file>`.
pub fn base_label(path: &Path) -> String {
    let shown = crate::cmd::shown(path);
    if Path::new(&shown).is_relative() {
        return shown;
    }
    match (path.parent().and_then(Path::file_name), path.file_name()) {
        (Some(dir), Some(file)) if dir == "configs" => {
            format!("configs/{}", file.to_string_lossy())
        }
        _ => shown,
    }
}

/// The skeleton for `info` on the config of `dirs` nearest in compute capability
/// ([`skeleton::nearest`]): the base's label and the skeleton.
pub fn skeleton_in(dirs: &[PathBuf], info: &DeviceInfo) -> Result<(String, Skeleton)> {
    let all = load_all(dirs);
    let i = skeleton::nearest(&info.compute_capability, &all).ok_or_else(|| {
        anyhow!(
            "no configs/*.toml found to take what the device's attributes do not give from \
(searched: {})",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let (path, base) = &all[i];
    let label = base_label(path);
    Ok((label.clone(), skeleton::skeleton(info, base, &label)))
}

/// A config generated from the device's attributes.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The config, loaded from [`Generated::skeleton`]'s text.
    pub cfg: GpuConfig,
    /// Its text and what was assumed.
    pub skeleton: Skeleton,
    /// The shipped config the assumed values come from (`configs/h200.toml`).
    pub base: String,
}

impl Generated {
    /// What a report records as its config.
    pub fn description(&self) -> String {
        format!("generated from device attributes (base: {})", self.base)
    }
}

/// [`skeleton_in`], loaded.
pub fn generate_in(dirs: &[PathBuf], info: &DeviceInfo) -> Result<Generated> {
    let (base, skeleton) = skeleton_in(dirs, info)?;
    let cfg = GpuConfig::from_toml_str(&skeleton.text, "<generated from device attributes>")
        .map_err(|e| {
            anyhow!("the config generated from the device's attributes does not load: {e}")
        })?;
    Ok(Generated {
        cfg,
        skeleton,
        base,
    })
}

/// The config `compare` uses.
#[derive(Debug, Clone)]
pub enum Choice {
    /// A config file: `--config PATH`, or the shipped config whose `gpu.name` is the device's.
    File(PathBuf),
    /// `--config NAME`: the config of that name built into the binary, as `sim run NAME`
    /// resolves it ([`sim::config::find`]).
    Bundled(gpumemsim::Config),
    /// `--config auto` with no config for the device: one generated from its attributes.
    Generated(Box<Generated>),
}

/// `--config NAME|PATH` (not `auto`), by `sim run`'s rule ([`sim::config::find`]): an existing
/// path is that file, else a bundled config's name.
pub fn explicit(choice: &str) -> Result<Choice> {
    let found = sim::config::find::find(choice)?;
    if !found.bundled {
        return Ok(Choice::File(PathBuf::from(choice)));
    }
    gpumemsim::config(&found.name)
        .map(Choice::Bundled)
        .ok_or_else(|| anyhow!("config `{choice}`: no bundled config of that name"))
}

/// `--config`: `choice` itself unless it is `auto`; else the config whose `gpu.name` is the
/// device's ([`resolve`]); else one generated from the device's attributes.
pub fn choose(choice: &str, info: &DeviceInfo) -> Result<Choice> {
    choose_in(choice, info, &search_dirs())
}

/// [`choose`] over `dirs`.
pub fn choose_in(choice: &str, info: &DeviceInfo, dirs: &[PathBuf]) -> Result<Choice> {
    if choice != "auto" {
        return explicit(choice);
    }
    match resolve_in(dirs, &info.name) {
        Ok(path) => Ok(Choice::File(path)),
        Err(e) if load_all(dirs).is_empty() => Err(e),
        Err(_) => Ok(Choice::Generated(Box::new(generate_in(dirs, info)?))),
    }
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
        let e = resolve_in(&[], "X").unwrap_err().to_string();
        assert!(e.contains("no configs/ directory"), "{e}");
        assert!(e.contains("--config PATH"), "{e}");
    }

    /// Issue 42: `validate compare --config h200` said "no such file" where `sim run h200` runs.
    #[test]
    fn a_name_is_the_bundled_config_as_in_sim_run() {
        match explicit("h200").unwrap() {
            Choice::Bundled(c) => assert_eq!(c.path, "configs/h200.toml"),
            other => panic!("{other:?}"),
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml");
        assert!(matches!(explicit(path).unwrap(), Choice::File(_)));
        let e = explicit("h300").unwrap_err().to_string();
        assert!(e.contains("no bundled config"), "{e}");
    }

    #[test]
    fn auto_takes_the_matching_config_else_generates_one() {
        let h200 = crate::report::tests::sample().device;
        match choose_in("auto", &h200, &repo_configs()).unwrap() {
            Choice::File(p) => assert_eq!(p.file_name().unwrap(), "h200.toml"),
            other => panic!("the H200 has a config file: {other:?}"),
        }
        let b200 = crate::skeleton::tests::b200();
        let Choice::Generated(g) = choose_in("auto", &b200, &repo_configs()).unwrap() else {
            panic!("no config is named NVIDIA B200");
        };
        assert_eq!(g.cfg.gpu.name, "NVIDIA B200");
        assert_eq!(g.cfg.sm.count, 148);
        assert!(g.base.ends_with("configs/h200.toml"), "{}", g.base);
        assert_eq!(
            g.description(),
            format!("generated from device attributes (base: {})", g.base)
        );
        assert!(g.skeleton.assumed.iter().any(|k| k == "l1.size_bytes"));
        // Without any config there is nothing to take the rest from.
        let e = choose_in("auto", &b200, &[]).unwrap_err().to_string();
        assert!(e.contains("no configs/ directory"), "{e}");
        // An explicit path is taken as it is.
        assert!(matches!(
            choose_in("/no/such.toml", &b200, &repo_configs()),
            Err(e) if e.to_string().contains("no such file")
        ));
    }

    #[test]
    fn shipped_configs_are_labelled_configs_slash_file() {
        let p = PathBuf::from(SOURCE_CONFIGS).join("h200.toml");
        assert!(
            base_label(&p).ends_with("configs/h200.toml"),
            "{}",
            base_label(&p)
        );
        assert_eq!(
            load_all(&repo_configs()).len(),
            list(&repo_configs()[0]).len()
        );
    }

    #[test]
    fn an_explicit_path_must_exist() {
        let e = resolve("/no/such/config.toml", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such file"), "{e}");
    }
}

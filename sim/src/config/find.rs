//! Finding a GPU config from what the user typed: a path, or the name of a bundled config.
//!
//! `sim run rtx3090 pseudo_random` and `sim run configs/rtx3090.toml pseudo_random` both work.
//! The rule, in order:
//!
//! 1. an existing path is that file (`configs/h200.toml`, `../my_gpu.toml`);
//! 2. anything that looks like a path (it has a `/` or ends in `.toml`) but is not a file is an
//!    error saying so;
//! 3. otherwise it is a name: the config of that name *built into the binary*, the
//!    `configs/<name>.toml` of the source tree the binary was built from (`sim list --configs`).
//!
//! Why embedded rather than searched on disk (the current directory's `configs/`, or beside the
//! binary): a name then means the same file wherever the command runs, as workload names do,
//! and an installed binary needs no checkout. The cost is that an edited `configs/h200.toml`
//! reaches `sim run h200` at the next build (cargo rebuilds when a config changes); until then
//! pass the path. Every report names the config's path, whether it was bundled, and the
//! SHA-256 of its text, so a result always says which numbers produced it.

use super::GpuConfig;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::Path;

/// A loaded config and where it came from.
#[derive(Debug, Clone)]
pub struct FoundConfig {
    /// The validated config; its `path` is [`FoundConfig::path`].
    pub config: GpuConfig,
    /// The name (the file name without `.toml`: `rtx3090`).
    pub name: String,
    /// The file it was read from, as given, or the bundled copy's path in the source tree
    /// (`configs/rtx3090.toml`).
    pub path: String,
    /// Whether it is the copy built into the binary.
    pub bundled: bool,
    /// SHA-256 of the TOML text, in hex (of the file as it is, before [`FoundConfig::sets`]).
    pub sha256: String,
    /// The what-if changes made to the file's values before validation (`--config-set`), in
    /// order: (dotted key, value as typed). Empty for the file as it is.
    pub sets: Vec<super::set::ConfigSet>,
}

/// The SHA-256 of `bytes` in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Resolves `arg` by the rule of this module's docs and loads it.
pub fn find(arg: &str) -> Result<FoundConfig> {
    find_with(arg, &[])
}

/// [`find`], with the what-if changes `sets` made before validation
/// ([`GpuConfig::from_toml_str_with`]).
pub fn find_with(arg: &str, sets: &[super::set::ConfigSet]) -> Result<FoundConfig> {
    let p = Path::new(arg);
    // Anything that exists is read (a device or a pipe too; the read says what is wrong).
    if p.exists() {
        let text = crate::files::read_text(p, "GPU config").map_err(|source| Error::Io {
            path: p.to_path_buf(),
            source,
        })?;
        let config = GpuConfig::from_toml_str_with(&text, arg, sets)?;
        return Ok(FoundConfig {
            config,
            name: p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default(),
            path: arg.to_string(),
            bundled: false,
            sha256: sha256_hex(text.as_bytes()),
            sets: sets.to_vec(),
        });
    }
    let known = || {
        gpumemsim::configs()
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".toml") {
        return Err(Error::UnknownConfig {
            name: arg.to_string(),
            message: format!(
                "no such file (a config is a path to a TOML file or a bundled name: {})",
                known()
            ),
        });
    }
    match gpumemsim::config(arg) {
        Some(c) => Ok(FoundConfig {
            config: GpuConfig::from_toml_str_with(c.toml, c.path, sets)?,
            name: c.name.to_string(),
            path: c.path.to_string(),
            bundled: true,
            sha256: sha256_hex(c.toml.as_bytes()),
            sets: sets.to_vec(),
        }),
        None => Err(Error::UnknownConfig {
            name: arg.to_string(),
            message: format!(
                "no such file and no bundled config of that name (bundled: {}; `sim list \
--configs` shows their GPUs)",
                known()
            ),
        }),
    }
}

/// The provenance tags of a config's comments with how many values cite each, most cited first:
/// `[("[NV]", 40), ("[paper]", 12), ("assumption", 3)]` (`sim list --configs`).
pub fn provenance(text: &str) -> Vec<(String, usize)> {
    const TAGS: [&str; 8] = [
        "[NV]",
        "[paper]",
        "[tool]",
        "[sim]",
        "[derived]",
        "[measured]",
        "hobby",
        "assumption",
    ];
    let mut counts: Vec<(String, usize)> = TAGS
        .iter()
        .map(|t| {
            let n = text
                .lines()
                .filter_map(|l| l.split_once('#').map(|(_, c)| c))
                .filter(|c| c.contains(t))
                .count();
            (t.to_string(), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_paths_and_mistakes() {
        let by_name = find("rtx3090").unwrap();
        assert!(by_name.bundled);
        assert_eq!(by_name.path, "configs/rtx3090.toml");
        assert_eq!(by_name.config.gpu.name, "NVIDIA GeForce RTX 3090");
        assert_eq!(by_name.sha256.len(), 64);
        let e = find("rtx3080").unwrap_err().to_string();
        assert!(
            e.contains("no bundled config") && e.contains("rtx3090"),
            "{e}"
        );
        let e = find("nowhere/rtx3090.toml").unwrap_err().to_string();
        assert!(e.contains("no such file"), "{e}");
    }

    #[test]
    fn provenance_counts_tags_in_comments_only() {
        let t = "a = 1 # [NV] x\nb = 2 # [paper] y; [NV] z\nname = \"[paper]\"\n";
        assert_eq!(
            provenance(t),
            [("[NV]".to_string(), 2), ("[paper]".to_string(), 1)]
        );
    }
}

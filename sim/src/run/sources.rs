//! Finding the source files the PTX's line info names (`.file 1 "/matmul.cu"`), for the source
//! text of the per-line view (`sim run --per-line`).
//!
//! Compilers write the name they were given, or a path of the machine that compiled: NVRTC
//! `"/<name>"` (`crate::compile::compile_nvrtc`), nvcc an absolute path. A name is looked for,
//! first found wins: relative to the workload file (as written without its leading `/`, then
//! its file name alone), beside the CUDA source the workload names (`cuda = "..."`), beside the
//! PTX file and in the directory above it (the bundled kernels' `kernels/ptx/k.ptx` come from
//! `kernels/k.cu`); for a workload on disk also as written (an absolute path, or relative to
//! the current directory). A file that is not found, not UTF-8 or too large is simply not shown:
//! the counts do not depend on it.

use crate::workload::{Source, Take, Workload};
use std::path::Path;

/// A file of the line info, with its text when it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The `.file` index.
    pub index: u32,
    /// The name the PTX gives it.
    pub name: String,
    /// Where it was found (as [`Source::read_relative`] names it: `kernels/ray.cu` for a bundled
    /// file), `None` when it was not.
    pub path: Option<String>,
    /// Its lines (empty when not found).
    pub lines: Vec<String>,
}

impl SourceFile {
    /// The short name reports show: the file name without its directories (`ray.cu`).
    pub fn short_name(&self) -> &str {
        self.name
            .rsplit(['/', '\\'])
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(&self.name)
    }

    /// The text of 1-based line `line`, if the file was found and has it.
    pub fn line(&self, line: u32) -> Option<&str> {
        let i = usize::try_from(line).ok()?.checked_sub(1)?;
        self.lines.get(i).map(String::as_str)
    }
}

/// The files of `line_files` (a run's [`crate::run::WorkloadRun::line_files`]), looked for as
/// the module doc says, for workload `w`.
pub fn find(line_files: &[(u32, String)], w: &Workload) -> Vec<SourceFile> {
    line_files
        .iter()
        .map(|(index, name)| {
            let found = candidates(name, w).into_iter().find_map(|c| read(&c, w));
            let (path, text) = match found {
                Some((p, t)) => (Some(p), t),
                None => (None, String::new()),
            };
            SourceFile {
                index: *index,
                name: name.clone(),
                path,
                lines: text.lines().map(str::to_string).collect(),
            }
        })
        .collect()
}

/// Where to look for `name`: paths relative to the workload file (or, starting with `=`, as
/// written).
fn candidates(name: &str, w: &Workload) -> Vec<String> {
    let trimmed = name.trim_start_matches('/');
    let base = Path::new(name)
        .file_name()
        .map(|b| b.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut v = vec![];
    if !trimmed.is_empty() {
        v.push(trimmed.to_string());
    }
    if !base.is_empty() {
        v.push(base.clone());
        // A workload may name its PTX or CUDA file by an absolute path: what lies beside it is
        // then looked for as written (`=`), not relative to the workload file.
        let at = |d: &Path| {
            let p = d.join(&base).to_string_lossy().replace('\\', "/");
            if d.is_absolute() {
                format!("={p}")
            } else {
                p
            }
        };
        if let Some(dir) = w.cuda.as_deref().and_then(|cu| Path::new(cu).parent()) {
            v.push(at(dir));
        }
        if !w.ptx.is_empty() {
            if let Some(dir) = Path::new(&w.ptx).parent() {
                v.push(at(dir));
                if let Some(up) = dir.parent() {
                    if !dir.as_os_str().is_empty() {
                        v.push(at(up));
                    }
                }
            }
        }
    }
    if !matches!(w.source, Source::Bundled(_)) {
        v.push(format!("={name}"));
        v.push(format!("={trimmed}"));
    }
    v.dedup();
    v
}

/// The text of candidate `c` ([`candidates`]), if it is a readable UTF-8 file.
fn read(c: &str, w: &Workload) -> Option<(String, String)> {
    let (path, bytes) = match c.strip_prefix('=') {
        Some(p) if !p.is_empty() => {
            let data = crate::files::read_limited(
                Path::new(p),
                crate::files::MAX_TEXT_BYTES,
                "CUDA source",
            )
            .ok()?;
            (p.to_string(), data)
        }
        Some(_) => return None,
        None if c.starts_with('/') => return None,
        None => w.source.read_relative(c, Take::Text("CUDA source")).ok()?,
    };
    Some((path, String::from_utf8(bytes).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled(name: &str) -> Workload {
        Workload::resolve(name).expect("a bundled workload")
    }

    #[test]
    fn a_bundled_kernels_nvrtc_file_name_is_found_in_the_catalog() {
        let w = bundled("ray");
        let f = find(&[(1, "/ray.cu".into())], &w);
        assert_eq!(f[0].path.as_deref(), Some("kernels/ray.cu"));
        assert_eq!(f[0].short_name(), "ray.cu");
        let text = gpumemsim::file("ray.cu").unwrap();
        assert_eq!(f[0].line(1), text.lines().next());
        assert_eq!(f[0].line(0), None);
        assert_eq!(f[0].line(1_000_000), None);
    }

    #[test]
    fn a_cu_beside_a_ptx_named_by_an_absolute_path_is_found() {
        let dir = std::env::temp_dir().join(format!("gpumemsim-sources-{}", std::process::id()));
        let (kdir, wdir) = (dir.join("kernels"), dir.join("workloads"));
        std::fs::create_dir_all(&kdir).unwrap();
        std::fs::create_dir_all(&wdir).unwrap();
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/add_one.ptx"),
            kdir.join("add_one.ptx"),
        )
        .unwrap();
        std::fs::write(kdir.join("add_one.cu"), "// line one\n").unwrap();
        let toml = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/add_one.toml"
        ))
        .unwrap()
        .replace(
            "ptx = \"add_one.ptx\"",
            &format!("ptx = {:?}", kdir.join("add_one.ptx").to_string_lossy()),
        );
        std::fs::write(wdir.join("w.toml"), toml).unwrap();
        let w = Workload::resolve(&wdir.join("w.toml").to_string_lossy()).unwrap();
        let f = find(&[(1, "/home/someone/add_one.cu".into())], &w);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(f[0].line(1), Some("// line one"));
    }

    #[test]
    fn a_name_found_nowhere_has_no_text() {
        let w = bundled("ray");
        let f = find(&[(2, "/no/such/file.cu".into())], &w);
        assert_eq!(f[0].path, None);
        assert!(f[0].lines.is_empty());
        assert_eq!(f[0].short_name(), "file.cu");
    }
}

//! Finding ptxas: an explicit path, else the first that runs of the PyPI wheel, a CUDA toolkit
//! and the `PATH` ([`candidates`]); its release (`ptxas --version`) and the `sm_` targets it
//! serves (the allowed values of `--gpu-name` in `ptxas --help`).
//!
//! The PyPI wheel `nvidia-cuda-nvcc-cu12` (12.9.86: ptxas 12.9, x86-64 and aarch64 Linux, no GPU
//! or driver needed) installs `nvidia/cuda_nvcc/bin/ptxas` in a site-packages directory; Python
//! itself says which (`import nvidia.cuda_nvcc`), and where no `python3` runs, the usual
//! site-packages directories are looked at. What was found is remembered for the life of the
//! process.

use super::ptxas::run_bounded;
use super::Ptxas;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How to get ptxas.
pub const PTXAS_HINT: &str = "pip install nvidia-cuda-nvcc-cu12 (ptxas 12.9, no GPU needed), a \
CUDA toolkit in $CUDA_HOME or /usr/local/cuda, or --ptxas PATH";

/// How long `ptxas --version`, `ptxas --help` and the Python probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// A ptxas (or an nvdisasm: [`super::disasm::Disassembler`]) that runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    /// The binary.
    pub path: PathBuf,
    /// Its release, `(12, 9)`.
    pub release: (u32, u32),
    /// Its full version, `12.9.86` (`V12.9.86` in `--version`): part of the cache key.
    pub version: String,
    /// The `sm_` targets its `--help` lists, ascending, suffixes (`sm_90a`) folded; empty when
    /// the help text lists none (then every target is tried).
    pub archs: Vec<(u32, u32)>,
}

impl Tool {
    /// Whether it assembles for `sm_XY` of compute capability `cc`.
    pub fn serves(&self, cc: (u32, u32)) -> bool {
        self.archs.is_empty() || self.archs.contains(&cc)
    }

    /// `sm_50 to sm_121`: the targets it serves, for messages.
    pub fn served_range(&self) -> String {
        match (self.archs.first(), self.archs.last()) {
            (Some(a), Some(b)) => format!("sm_{}{} to sm_{}{}", a.0, a.1, b.0, b.1),
            _ => "targets its --help does not list".to_string(),
        }
    }
}

/// The ptxas of `choice`: `Ok(None)` when it is [`Ptxas::Off`] or none is found
/// ([`Ptxas::Auto`]); an error saying why when the explicit path does not run as a ptxas.
pub fn locate(choice: &Ptxas) -> Result<Option<Tool>, String> {
    match choice {
        Ptxas::Off => Ok(None),
        Ptxas::Path(p) => probe(p).map(Some),
        Ptxas::Auto => {
            static FOUND: OnceLock<Option<Tool>> = OnceLock::new();
            Ok(FOUND
                .get_or_init(|| {
                    candidates()
                        .iter()
                        .filter(|p| p.is_file())
                        .find_map(|p| probe(p).ok())
                })
                .clone())
        }
    }
}

/// Where [`Ptxas::Auto`] looks, in order: the PyPI wheel (where Python imports
/// `nvidia.cuda_nvcc`, then `site-packages`/`dist-packages` of `$VIRTUAL_ENV`, `~/.local`,
/// `/usr/local` and `/usr`), `$CUDA_HOME/bin`, `$CUDA_PATH/bin`, `/usr/local/cuda/bin`, then each
/// directory of `PATH`.
pub fn candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = wheel_dirs_from_python()
        .into_iter()
        .chain(site_package_dirs("nvidia/cuda_nvcc"))
        .map(|d| d.join("bin").join("ptxas"))
        .collect();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(dir) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            out.push(PathBuf::from(dir).join("bin").join("ptxas"));
        }
    }
    out.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
    if let Some(path) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&path).map(|d| d.join("ptxas")));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The directories of the `nvidia.cuda_nvcc` package as `python3` imports it (none when Python
/// or the wheel is missing).
fn wheel_dirs_from_python() -> Vec<PathBuf> {
    let mut cmd = Command::new("python3");
    cmd.args([
        "-c",
        "import nvidia.cuda_nvcc as m; print('\\n'.join(m.__path__))",
    ]);
    match run_bounded(&mut cmd, PROBE_TIMEOUT) {
        Ok(out) if out.status.success() => out
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| PathBuf::from(l.trim()))
            .collect(),
        _ => vec![],
    }
}

/// `rel` (`nvidia/cuda_nvcc`) under the usual site-packages and dist-packages directories, of
/// `$VIRTUAL_ENV`, `~/.local`, `/usr/local` and `/usr`, the newest Python first; whether they
/// exist is the caller's to check.
pub fn site_package_dirs(rel: &str) -> Vec<PathBuf> {
    let mut libs: Vec<PathBuf> = vec![];
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        libs.push(PathBuf::from(v).join("lib"));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        libs.push(PathBuf::from(h).join(".local/lib"));
    }
    libs.push(PathBuf::from("/usr/local/lib"));
    libs.push(PathBuf::from("/usr/lib"));
    let mut out = vec![];
    for lib in libs {
        let Ok(entries) = std::fs::read_dir(&lib) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        pythons.reverse(); // the newest Python first
        for py in pythons {
            for sp in ["site-packages", "dist-packages"] {
                out.push(py.join(sp).join(rel));
            }
        }
    }
    out
}

/// Runs `path --version` and `path --help`; the tool, or why it is not a ptxas that runs.
/// Remembered per path for the life of the process.
fn probe(path: &Path) -> Result<Tool, String> {
    static PROBED: OnceLock<Mutex<HashMap<PathBuf, Result<Tool, String>>>> = OnceLock::new();
    let probed = PROBED.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(r) = probed.lock().ok().and_then(|m| m.get(path).cloned()) {
        return r;
    }
    let r = probe_uncached(path);
    if let Ok(mut m) = probed.lock() {
        m.insert(path.to_path_buf(), r.clone());
    }
    r
}

fn probe_uncached(path: &Path) -> Result<Tool, String> {
    let shown = path.display();
    let out = run_bounded(Command::new(path).arg("--version"), PROBE_TIMEOUT)
        .map_err(|e| format!("cannot run `{shown} --version`: {e}"))?;
    let text = format!("{}{}", out.stdout, out.stderr);
    let (release, version) = parse_version(&text).ok_or_else(|| {
        format!(
            "`{shown} --version` ({}) printed no `release X.Y, VX.Y.Z`: not a ptxas? It printed: {:?}",
            out.status,
            text.trim()
        )
    })?;
    let archs = run_bounded(Command::new(path).arg("--help"), PROBE_TIMEOUT)
        .map(|h| parse_archs(&h.stdout))
        .unwrap_or_default();
    Ok(Tool {
        path: path.to_path_buf(),
        release,
        version,
        archs,
    })
}

/// `((12, 9), "12.9.86")` from `ptxas --version`'s `Cuda compilation tools, release 12.9,
/// V12.9.86`.
pub fn parse_version(text: &str) -> Option<((u32, u32), String)> {
    let line = text.lines().find(|l| l.contains("release "))?;
    let rel = line.split("release ").nth(1)?.split(',').next()?.trim();
    let (major, minor) = rel.split_once('.')?;
    let release = (major.parse().ok()?, minor.parse().ok()?);
    let version = line
        .split(", V")
        .nth(1)
        .map(|v| v.split_whitespace().next().unwrap_or(v).to_string())
        .unwrap_or_else(|| rel.to_string());
    Some((release, version))
}

/// The `sm_` targets of `ptxas --help`'s allowed `--gpu-name` values (`'sm_86'`, `'sm_90a'`):
/// `(8, 6)`, `(9, 0)`, ascending, without duplicates.
pub fn parse_archs(help: &str) -> Vec<(u32, u32)> {
    let mut archs: Vec<(u32, u32)> = help
        .split('\'')
        .filter_map(|t| t.strip_prefix("sm_"))
        .filter_map(|t| {
            let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
            let rest = &t[digits.len()..];
            if digits.len() < 2 || !rest.chars().all(|c| c.is_ascii_lowercase()) {
                return None;
            }
            let (major, minor) = digits.split_at(digits.len() - 1);
            Some((major.parse().ok()?, minor.parse().ok()?))
        })
        .collect();
    archs.sort_unstable();
    archs.dedup();
    archs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_of_the_pypi_wheels_ptxas_parses() {
        // `ptxas --version` of nvidia-cuda-nvcc-cu12 12.9.86, verbatim.
        let text = "ptxas: NVIDIA (R) Ptx optimizing assembler\n\
                    Copyright (c) 2005-2025 NVIDIA Corporation\n\
                    Built on Tue_May_27_02:18:05_PDT_2025\n\
                    Cuda compilation tools, release 12.9, V12.9.86\n\
                    Build cuda_12.9.r12.9/compiler.36037853_0\n";
        assert_eq!(parse_version(text), Some(((12, 9), "12.9.86".to_string())));
        assert_eq!(parse_version("clang version 19.1.7"), None);
    }

    #[test]
    fn the_targets_of_ptxas_help_parse() {
        // An excerpt of `ptxas --help` 12.9 (the allowed values of --gpu-name), verbatim.
        let help = "        'lto_75','lto_80','lto_86','lto_87','lto_89','lto_90','lto_90a','sm_100',\n\
                    'sm_100a','sm_100f','sm_101','sm_101a','sm_101f','sm_103','sm_103a','sm_103f',\n\
                    'sm_120','sm_120a','sm_120f','sm_121','sm_121a','sm_121f','sm_50','sm_52',\n\
                    'sm_53','sm_60','sm_61','sm_62','sm_70','sm_72','sm_75','sm_80','sm_86',\n\
                    'sm_87','sm_89','sm_90','sm_90a'.\n        Default value:  'sm_52'.";
        let archs = parse_archs(help);
        assert_eq!(archs.first(), Some(&(5, 0)));
        assert_eq!(archs.last(), Some(&(12, 1)));
        for cc in [(7, 0), (7, 5), (8, 0), (8, 6), (9, 0), (10, 0)] {
            assert!(archs.contains(&cc), "{cc:?}");
        }
        for cc in [(1, 3), (2, 0), (3, 5), (9, 1)] {
            assert!(!archs.contains(&cc), "{cc:?}");
        }
        let tool = Tool {
            path: "ptxas".into(),
            release: (12, 9),
            version: "12.9.86".into(),
            archs,
        };
        assert_eq!(tool.served_range(), "sm_50 to sm_121");
        assert!(tool.serves((8, 6)) && !tool.serves((3, 5)));
    }

    #[test]
    fn ptxas_choices_parse() {
        assert_eq!("auto".parse::<Ptxas>(), Ok(Ptxas::Auto));
        assert_eq!("off".parse::<Ptxas>(), Ok(Ptxas::Off));
        assert_eq!(
            "/opt/cuda/bin/ptxas".parse::<Ptxas>(),
            Ok(Ptxas::Path("/opt/cuda/bin/ptxas".into()))
        );
        assert!("".parse::<Ptxas>().unwrap_err().contains("allowed"));
    }

    #[test]
    fn a_path_that_is_no_ptxas_is_an_error_saying_so() {
        let e = locate(&Ptxas::Path("/nonexistent/ptxas".into())).unwrap_err();
        assert!(
            e.contains("cannot run `/nonexistent/ptxas --version`"),
            "{e}"
        );
        let e = locate(&Ptxas::Path("/bin/true".into())).unwrap_err();
        assert!(e.contains("not a ptxas?"), "{e}");
    }
}

//! `validate ptx`: compiles the bundled CUDA sources (`kernels/*.cu`) to the PTX that the
//! simulator executes and the validator loads, and checks that the committed PTX is up to date.
//!
//! Every generated file starts with a stamp line naming its source, the SHA-256 of the source's
//! bytes, the compiler and its options, followed by the compiler's PTX unchanged:
//!
//! ```text
//! // gpumemsim: generated from add_constant.cu sha256=3f2a... by NVRTC 12.9 with --gpu-architecture=compute_80 -lineinfo
//! ```
//!
//! Checking a stamp needs no compiler, only the hash, so a machine without CUDA (and CI) can tell
//! that a `.cu` changed without its PTX being regenerated.
//!
//! Two compilers:
//! - NVRTC, NVIDIA's runtime compiler (the same front end and NVVM as nvcc), through cudarc with
//!   the library loaded at run time: `kernels/ptx/<stem>.ptx`, the PTX the bundled workloads use.
//! - clang (`clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib`): `kernels/ptx/clang/<stem>.ptx`,
//!   a fixture for the simulator's PTX parser (clang's PTX differs in style from NVIDIA's).

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// NVRTC's options for every bundled kernel. PTX for `compute_80` runs on sm_80 (A100) and sm_86
/// (RTX 3090) and, JIT-compiled by the driver, on sm_90 (H100, H200); `-lineinfo` keeps `.loc`
/// directives so that per-instruction reports can point back at lines of the `.cu`.
pub const NVRTC_OPTIONS: &[&str] = &["--gpu-architecture=compute_80", "-lineinfo"];

/// clang's arguments (before the input file) for the parser fixture `kernels/ptx/clang/<stem>.ptx`.
pub const CLANG_ARGS: &[&str] = &[
    "-x",
    "cuda",
    "--cuda-device-only",
    "-nocudainc",
    "-nocudalib",
    "--cuda-gpu-arch=sm_80",
    "-O3",
    "-S",
];

/// The clang binary `validate ptx --compiler clang` runs unless `--clang` names another.
pub const DEFAULT_CLANG: &str = "clang-19";

/// How to get a libnvrtc that `validate ptx` finds.
pub const NVRTC_HINT: &str = sim::compile::NVRTC_HINT;

/// The command that regenerates the NVRTC PTX (`kernels/README.md` documents it).
pub const REGENERATE_NVRTC: &str = "cargo run -p validate -- ptx";

/// The command that regenerates the clang PTX fixtures.
pub const REGENERATE_CLANG: &str = "cargo run -p validate -- ptx --compiler clang";

const STAMP_PREFIX: &str = "// gpumemsim: generated from ";

/// Which compiler produced a PTX file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compiler {
    Nvrtc,
    Clang,
}

impl Compiler {
    /// Where this compiler's PTX of `<stem>.cu` lives, relative to `kernels/`.
    pub fn ptx_path(self, stem: &str) -> String {
        match self {
            Compiler::Nvrtc => format!("ptx/{stem}.ptx"),
            Compiler::Clang => format!("ptx/clang/{stem}.ptx"),
        }
    }

    /// The options as the stamp records them.
    pub fn options(self) -> String {
        match self {
            Compiler::Nvrtc => NVRTC_OPTIONS.join(" "),
            Compiler::Clang => CLANG_ARGS.join(" "),
        }
    }

    /// The command that regenerates this compiler's PTX.
    pub fn regenerate(self) -> &'static str {
        match self {
            Compiler::Nvrtc => REGENERATE_NVRTC,
            Compiler::Clang => REGENERATE_CLANG,
        }
    }
}

/// The first line of a generated PTX file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The source's file name (`add_constant.cu`).
    pub source: String,
    /// Lower-case hex SHA-256 of the source's bytes.
    pub sha256: String,
    /// The compiler and its version (`NVRTC 12.9`, `clang 19.1.7`).
    pub compiler: String,
    /// The options, space-separated.
    pub options: String,
}

impl Stamp {
    /// Parses the stamp from the first line of `ptx`; `None` if there is none.
    pub fn parse(ptx: &str) -> Option<Stamp> {
        let line = ptx.lines().next()?.trim_end();
        let rest = line.strip_prefix(STAMP_PREFIX)?;
        let (source, rest) = rest.split_once(" sha256=")?;
        let (sha256, rest) = rest.split_once(' ')?;
        let rest = rest.strip_prefix("by ")?;
        let (compiler, options) = rest.split_once(" with ")?;
        let hex = sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then(|| Stamp {
            source: source.to_string(),
            sha256: sha256.to_ascii_lowercase(),
            compiler: compiler.to_string(),
            options: options.to_string(),
        })
    }
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{STAMP_PREFIX}{} sha256={} by {} with {}",
            self.source, self.sha256, self.compiler, self.options
        )
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The CUDA sources `kernels_dir/*.cu`, sorted.
pub fn sources(kernels_dir: &Path) -> Result<Vec<PathBuf>> {
    let read = fs::read_dir(kernels_dir)
        .with_context(|| format!("reading the kernels directory {}", kernels_dir.display()))?;
    let mut out = Vec::new();
    for entry in read {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "cu") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Why a generated PTX file does not match its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The PTX file does not exist.
    Missing,
    /// The first line is not a gpumemsim stamp.
    NoStamp,
    /// The stamp names another source file.
    WrongSource(String),
    /// The source changed since the PTX was generated.
    Hash { stamped: String, now: String },
    /// The PTX was generated with other options than the current ones.
    Options { stamped: String, now: String },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing => write!(f, "missing"),
            Problem::NoStamp => write!(f, "no `{}` stamp on its first line", STAMP_PREFIX.trim()),
            Problem::WrongSource(s) => write!(f, "stamped as generated from {s}"),
            Problem::Hash { stamped, now } => write!(
                f,
                "stamped sha256={}..., the source is now sha256={}...",
                &stamped[..12],
                &now[..12]
            ),
            Problem::Options { stamped, now } => {
                write!(
                    f,
                    "generated with options `{stamped}`, the current ones are `{now}`"
                )
            }
        }
    }
}

/// A generated PTX file that is out of date.
#[derive(Debug, Clone)]
pub struct Stale {
    pub source: PathBuf,
    pub ptx: PathBuf,
    pub compiler: Compiler,
    pub problem: Problem,
}

/// Checks the stamp of one PTX file against its source's bytes.
pub fn check_one(
    source: &Path,
    source_bytes: &[u8],
    ptx: &Path,
    compiler: Compiler,
) -> Option<Problem> {
    let Ok(text) = sim::files::read_text(ptx, "PTX file") else {
        return Some(Problem::Missing);
    };
    let Some(stamp) = Stamp::parse(&text) else {
        return Some(Problem::NoStamp);
    };
    if stamp.source != file_name(source) {
        return Some(Problem::WrongSource(stamp.source));
    }
    let now = sha256_hex(source_bytes);
    if stamp.sha256 != now {
        return Some(Problem::Hash {
            stamped: stamp.sha256,
            now,
        });
    }
    if stamp.options != compiler.options() {
        return Some(Problem::Options {
            stamped: stamp.options,
            now: compiler.options(),
        });
    }
    None
}

/// Checks every generated PTX file under `kernels_dir`: the NVRTC PTX of every `.cu` must exist,
/// the clang PTX is checked where present. Returns the files checked and the stale ones.
pub fn check(kernels_dir: &Path) -> Result<(Vec<PathBuf>, Vec<Stale>)> {
    let mut checked = Vec::new();
    let mut stale = Vec::new();
    for source in sources(kernels_dir)? {
        let bytes = sim::files::read_limited(&source, sim::files::MAX_TEXT_BYTES, "CUDA source")
            .with_context(|| format!("reading {}", source.display()))?;
        let stem = file_stem(&source);
        for compiler in [Compiler::Nvrtc, Compiler::Clang] {
            let ptx = kernels_dir.join(compiler.ptx_path(&stem));
            if compiler == Compiler::Clang && !ptx.exists() {
                continue;
            }
            if let Some(problem) = check_one(&source, &bytes, &ptx, compiler) {
                stale.push(Stale {
                    source: source.clone(),
                    ptx: ptx.clone(),
                    compiler,
                    problem,
                });
            }
            checked.push(ptx);
        }
    }
    Ok((checked, stale))
}

/// Writes `stamp` and `ptx` to `path`, creating its directory.
fn write_ptx(path: &Path, stamp: &Stamp, ptx: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut text = format!("{stamp}\n{ptx}");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// NVRTC's version, `(major, minor)`, or an error saying how to get libnvrtc
/// ([`sim::compile::nvrtc_version`]).
pub fn nvrtc_version() -> Result<(i32, i32)> {
    sim::compile::nvrtc_version().map_err(anyhow::Error::msg)
}

/// Compiles `source`, the contents of the file `name` (`add_constant.cu`), with [`NVRTC_OPTIONS`]
/// and returns NVRTC's PTX ([`sim::compile::compile_nvrtc`], which names the program `/<name>` so
/// that the PTX carries no path of the machine that made it); a compile error carries the log.
pub fn compile_nvrtc(name: &str, source: &str) -> Result<String> {
    sim::compile::compile_nvrtc(name, source, NVRTC_OPTIONS).map_err(anyhow::Error::msg)
}

/// clang's version (`19.1.7`) from `clang --version`.
pub fn clang_version(clang: &str) -> Result<String> {
    sim::compile::clang_version(clang).map_err(anyhow::Error::msg)
}

/// Compiles `source` with clang and [`CLANG_ARGS`], run in the source's directory with the bare
/// file name so that nothing of this machine's paths ends up in the PTX
/// ([`sim::compile::compile_clang_file`]; the bundled kernels carry their own CUDA shim).
pub fn compile_clang(clang: &str, source: &Path) -> Result<String> {
    sim::compile::compile_clang_file(clang, source, CLANG_ARGS).map_err(anyhow::Error::msg)
}

/// Regenerates `kernels_dir/ptx/<stem>.ptx` for every `.cu` with NVRTC; returns the files written.
pub fn generate_nvrtc(kernels_dir: &Path) -> Result<Vec<PathBuf>> {
    let (major, minor) = nvrtc_version()?;
    let mut written = Vec::new();
    for source in sources(kernels_dir)? {
        let bytes = sim::files::read_limited(&source, sim::files::MAX_TEXT_BYTES, "CUDA source")
            .with_context(|| format!("reading {}", source.display()))?;
        let text = String::from_utf8(bytes.clone())
            .with_context(|| format!("{} is not UTF-8", source.display()))?;
        let name = file_name(&source);
        let ptx = compile_nvrtc(&name, &text)?;
        let stamp = Stamp {
            source: name,
            sha256: sha256_hex(&bytes),
            compiler: format!("NVRTC {major}.{minor}"),
            options: Compiler::Nvrtc.options(),
        };
        let path = kernels_dir.join(Compiler::Nvrtc.ptx_path(&file_stem(&source)));
        write_ptx(&path, &stamp, &ptx)?;
        written.push(path);
    }
    Ok(written)
}

/// Regenerates `kernels_dir/ptx/clang/<stem>.ptx` for every `.cu` with `clang`.
pub fn generate_clang(kernels_dir: &Path, clang: &str) -> Result<Vec<PathBuf>> {
    let version = clang_version(clang)?;
    let mut written = Vec::new();
    for source in sources(kernels_dir)? {
        let bytes = sim::files::read_limited(&source, sim::files::MAX_TEXT_BYTES, "CUDA source")
            .with_context(|| format!("reading {}", source.display()))?;
        let ptx = compile_clang(clang, &source)?;
        let stamp = Stamp {
            source: file_name(&source),
            sha256: sha256_hex(&bytes),
            compiler: format!("clang {version}"),
            options: Compiler::Clang.options(),
        };
        let path = kernels_dir.join(Compiler::Clang.ptx_path(&file_stem(&source)));
        write_ptx(&path, &stamp, &ptx)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_round_trips() {
        let stamp = Stamp {
            source: "add_constant.cu".into(),
            sha256: sha256_hex(b"x"),
            compiler: "NVRTC 12.9".into(),
            options: Compiler::Nvrtc.options(),
        };
        let text = format!("{stamp}\n.version 8.8\n");
        assert_eq!(Stamp::parse(&text), Some(stamp));
        assert_eq!(Stamp::parse(".version 8.8\n"), None);
        assert_eq!(
            Stamp::parse("// gpumemsim: generated from a.cu sha256=12 by x with y"),
            None
        );
    }

    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}

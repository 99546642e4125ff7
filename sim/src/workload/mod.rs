//! Workload files: what to launch, with which buffers, constants and parameters.
//!
//! The format is a public interface (DESIGN.md, "Workload files"): extend it, never rename. A file
//! is resolved by name in the bundled catalog (`gpumemsim::workload`) or read from a path; paths
//! inside it (`ptx`, or `cuda` for a CUDA source the simulator compiles, `file:` inits) are relative
//! to the file. Counts, grid and block sizes and
//! integer arguments are expressions over `[params]`, evaluated by [`expr::eval`].

pub mod expr;
pub mod init;
pub mod npy;
pub mod texture;

use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Parses a `--set NAME=VALUE` override (integer value, non-empty name; spaces trimmed).
pub fn parse_set(s: &str) -> Result<(String, i64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=VALUE"))?;
    let v: i64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: the value must be an integer"))?;
    if k.trim().is_empty() {
        return Err(format!("`{s}`: the name is empty"));
    }
    Ok((k.trim().to_string(), v))
}

/// The largest grid, in blocks per dimension: 2^31 - 1 in x, 65,535 in y and z (CUDA C++
/// Programming Guide, technical specifications per compute capability: "Maximum x-dimension of a
/// grid of thread blocks", "Maximum y- or z-dimension"), so that a grid's block count fits 64 bits.
pub const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65_535, 65_535];

/// The largest block, in threads per dimension: 1,024 in x and y, 64 in z (the same table); the
/// config's `sm.max_threads_per_block` bounds their product.
pub const MAX_BLOCK: [u32; 3] = [1_024, 1_024, 64];

/// An integer literal or an expression over the params (`"ceil_div(n, 1024)"`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Expr {
    /// A literal.
    Int(i64),
    /// An expression.
    Text(String),
}

/// A kernel argument: a buffer name, a param or expression, or a number.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Arg {
    /// Integer literal.
    Int(i64),
    /// Float literal (for `.f32`/`.f64` parameters).
    Float(f64),
    /// Buffer name (becomes its device address) or integer expression.
    Text(String),
}

/// `[[buffer]]`: a global allocation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    /// Name, used in `args`.
    pub name: String,
    /// Element type: i8 i16 i32 i64 u8 u16 u32 u64 f32 f64.
    #[serde(rename = "type")]
    pub ty: String,
    /// Element count.
    pub count: Expr,
    /// `zeros` | `iota` | `value:V` | `random:SEED` | `random:SEED:LO:HI` | `file:PATH`
    /// (docs/workload-format.md).
    #[serde(default = "zeros")]
    pub init: String,
    /// Compared between simulator and GPU.
    #[serde(default)]
    pub output: bool,
    /// The array's dimensions, outermost first (C order), e.g. `[1024, 1024, 4]` for a
    /// 1024x1024 RGBA image; their product must be `count`. Only what `--save-outputs` writes
    /// depends on it (the `.npy` shape, and a PNG for `u8` `[h, w, 4]`); default: `[count]`.
    #[serde(default)]
    pub shape: Option<Vec<Expr>>,
}

fn zeros() -> String {
    "zeros".into()
}

/// `[[constant]]`: initialises a `__constant__` (or `__device__`) symbol of the module.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantSpec {
    /// The PTX symbol.
    pub symbol: String,
    /// Element type.
    #[serde(rename = "type")]
    pub ty: String,
    /// Elements to initialise (default: the whole symbol).
    pub count: Option<Expr>,
    /// As for buffers.
    #[serde(default = "zeros")]
    pub init: String,
}

/// `[[launch]]`: one kernel launch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// Label in reports (`constant`).
    pub label: String,
    /// PTX entry name.
    pub kernel: String,
    /// Blocks per grid, 1 to 3 dimensions.
    pub grid: Vec<Expr>,
    /// Threads per block, 1 to 3 dimensions.
    pub block: Vec<Expr>,
    /// Dynamic shared memory in bytes.
    #[serde(default)]
    pub shared_bytes: Option<Expr>,
    /// The opt-in for more than 48 KB of shared memory per block: the value the host passes to
    /// `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, n)` before the
    /// launch, in bytes (static plus this must fit the config's
    /// `shared.size_per_block_optin_bytes`; `shared_bytes` must not exceed it). Default: no
    /// opt-in, static plus dynamic within `shared.size_per_block_bytes`.
    #[serde(default)]
    pub max_dynamic_shared_bytes: Option<Expr>,
    /// Kernel arguments in PTX parameter order.
    #[serde(default)]
    pub args: Vec<Arg>,
    /// Shared memory bank width in bytes for this launch (4 or 8; default: the config's).
    pub bank_mode: Option<u32>,
    /// `ca` (global loads cached in L1) or `cg` (L2 only); default: the config's.
    pub dlcm: Option<String>,
    /// Registers per thread of the kernel, as `ptxas -v` reports them (0 to the config's
    /// `sm.max_registers_per_thread`), for occupancy; default: estimated from the PTX.
    pub registers: Option<u32>,
}

/// A parsed workload file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Workload name.
    pub name: String,
    /// One line for `sim list`.
    #[serde(default)]
    pub description: String,
    /// PTX file, relative to the workload file (empty when `cuda` names the kernel's source).
    #[serde(default)]
    pub ptx: String,
    /// CUDA source (`.cu`), relative to the workload file, that the simulator compiles to PTX
    /// (NVRTC or clang, for the config's compute capability) instead of reading `ptx`.
    #[serde(default)]
    pub cuda: Option<String>,
    /// Options for the compiler of `cuda` (NVRTC's spelling: `["-DTILE=16", "--use_fast_math"]`),
    /// before those of `--nvrtc-option`; clang takes only `-D`, `-U`, `-I` and `-std=`.
    #[serde(default)]
    pub nvrtc_options: Vec<String>,
    /// Integer parameters, overridable with `--set`.
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    /// Global buffers.
    #[serde(default, rename = "buffer")]
    pub buffers: Vec<BufferSpec>,
    /// Constant-memory initialisers.
    #[serde(default, rename = "constant")]
    pub constants: Vec<ConstantSpec>,
    /// Texture objects over buffers.
    #[serde(default, rename = "texture")]
    pub textures: Vec<texture::TextureSpec>,
    /// Surface objects over buffers.
    #[serde(default, rename = "surface")]
    pub surfaces: Vec<texture::SurfaceSpec>,
    /// Launches, run in order.
    #[serde(default, rename = "launch")]
    pub launches: Vec<LaunchSpec>,
    /// Where the file came from (for messages and relative paths).
    #[serde(skip)]
    pub source: Source,
}

/// Where a workload file came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Source {
    /// Bundled: its path relative to `kernels/`.
    Bundled(String),
    /// A file on disk.
    File(PathBuf),
    /// Given as a string (tests).
    #[default]
    Inline,
}

impl Source {
    /// For messages.
    pub fn display(&self) -> String {
        match self {
            Source::Bundled(p) => format!("kernels/{p}"),
            Source::File(p) => p.display().to_string(),
            Source::Inline => "<inline workload>".into(),
        }
    }

    /// Reads a file referred to from the workload (`ptx`, `cuda`, `file:` inits), relative to
    /// it, as much of it as `take` says ([`crate::files`]: no read without a size limit).
    pub fn read_relative(&self, rel: &str, take: Take) -> Result<(String, Vec<u8>)> {
        let path = match self {
            Source::Bundled(p) => {
                let dir = Path::new(p)
                    .parent()
                    .map(|d| d.to_string_lossy().to_string())
                    .unwrap_or_default();
                let path = if dir.is_empty() {
                    rel.to_string()
                } else {
                    format!("{dir}/{rel}")
                };
                return match gpumemsim::file(&path) {
                    Some(s) => {
                        let mut data = s.as_bytes().to_vec();
                        if let Take::Prefix(n) = take {
                            data.truncate(usize::try_from(n).unwrap_or(usize::MAX));
                        }
                        Ok((format!("kernels/{path}"), data))
                    }
                    None => Err(Error::Workload {
                        path: self.display(),
                        key: "-".into(),
                        message: format!("bundled file `{path}` not found"),
                    }),
                };
            }
            Source::File(p) => p.parent().unwrap_or(Path::new(".")).join(rel),
            Source::Inline => PathBuf::from(rel),
        };
        let data = match take {
            Take::Text(what) => {
                crate::files::read_limited(&path, crate::files::MAX_TEXT_BYTES, what)
            }
            Take::Prefix(n) => crate::files::read_prefix(&path, n),
        };
        match data {
            Ok(d) => Ok((path.display().to_string(), d)),
            Err(source) => Err(Error::Io { path, source }),
        }
    }
}

/// How much of a file [`Source::read_relative`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// All of it, refused past [`crate::files::MAX_TEXT_BYTES`]; the text names the kind of file
    /// in that error (`"PTX file"`).
    Text(&'static str),
    /// The first this many bytes, or all of a shorter file (a `file:` initializer).
    Prefix(u64),
}

impl Workload {
    /// Resolves `name_or_path`: a bundled workload name, else a workload file path.
    pub fn resolve(name_or_path: &str) -> Result<Workload> {
        if let Some(w) = gpumemsim::workload(name_or_path) {
            return Self::from_toml_str(w.toml, Source::Bundled(w.path.to_string()));
        }
        let p = Path::new(name_or_path);
        if p.is_file() {
            let text = crate::files::read_text(p, "workload file").map_err(|e| Error::Io {
                path: p.into(),
                source: e,
            })?;
            return Self::from_toml_str(&text, Source::File(p.into()));
        }
        let known: Vec<&str> = gpumemsim::workloads().iter().map(|w| w.name).collect();
        Err(Error::UnknownWorkload {
            name: name_or_path.into(),
            known: known.join(", "),
        })
    }

    /// Parses workload TOML text; a TOML error names the key path (`launch[0].grid`) and line.
    pub fn from_toml_str(text: &str, source: Source) -> Result<Workload> {
        let mut w: Workload =
            crate::config::toml_error::from_str(text).map_err(|e| Error::Workload {
                path: source.display(),
                key: e.key,
                message: e.message,
            })?;
        w.source = source;
        match (w.ptx.is_empty(), &w.cuda) {
            (true, None) => {
                return Err(w.err(
                    "ptx",
                    "missing: name the kernel's PTX (`ptx = \"kernel.ptx\"`) or its CUDA source \
(`cuda = \"kernel.cu\"`)"
                        .into(),
                ))
            }
            (false, Some(_)) => {
                return Err(w.err("cuda", "give either `ptx` or `cuda`, not both".into()))
            }
            _ => {}
        }
        if w.launches.is_empty() {
            return Err(w.err("launch", "the workload has no [[launch]]".into()));
        }
        Ok(w)
    }

    /// An error about `key` of this file.
    pub fn err(&self, key: &str, message: String) -> Error {
        Error::Workload {
            path: self.source.display(),
            key: key.into(),
            message,
        }
    }

    /// Applies `--set NAME=VALUE` overrides; unknown names are errors listing the known ones.
    pub fn set_params(&mut self, sets: &[(String, i64)]) -> Result<()> {
        for (k, v) in sets {
            match self.params.get_mut(k) {
                Some(x) => *x = *v,
                None => {
                    let known: Vec<&String> = self.params.keys().collect();
                    return Err(self.err(
                        &format!("params.{k}"),
                        format!("no such parameter (known: {known:?})"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Evaluates `e` over the params; `key` names it in errors.
    pub fn eval(&self, e: &Expr, key: &str) -> Result<i64> {
        match e {
            Expr::Int(v) => Ok(*v),
            Expr::Text(t) => expr::eval(t, &self.params).map_err(|m| self.err(key, m)),
        }
    }

    /// Evaluates a 1- to 3-dimensional shape (missing dimensions are 1); dimension `i` must be
    /// 1..=`max[i]` (for a grid, [`MAX_GRID`]).
    pub fn dims(&self, v: &[Expr], key: &str, max: [u32; 3]) -> Result<[u32; 3]> {
        if v.is_empty() || v.len() > 3 {
            return Err(self.err(key, format!("needs 1 to 3 dimensions, found {}", v.len())));
        }
        let mut out = [1u32; 3];
        for (i, e) in v.iter().enumerate() {
            let x = self.eval(e, &format!("{key}[{i}]"))?;
            if !(1..=i64::from(max[i])).contains(&x) {
                return Err(self.err(
                    &format!("{key}[{i}]"),
                    format!("= {x}, allowed: 1 to {}", max[i]),
                ));
            }
            out[i] = x as u32;
        }
        Ok(out)
    }
}

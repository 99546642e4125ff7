//! CUDA to PTX: the compilers the simulator and the validator use.
//!
//! Two compilers, both able to run without a GPU:
//! - NVRTC, NVIDIA's runtime compiler (the front end and optimizer of nvcc), loaded at run time:
//!   libnvrtc from `$GPUMEMSIM_NVRTC`, a versioned library on the loader's path, the PyPI wheel
//!   `nvidia-cuda-nvrtc-cu12` or a CUDA toolkit, in [`nvrtc::candidates`]' order ([`NVRTC_HINT`]);
//! - clang (`clang-19` or `clang`) with `-x cuda --cuda-device-only -nocudainc -nocudalib`, which
//!   needs no CUDA installation at all; a user's source gets [`CUDA_SHIM`] in front of it, the
//!   qualifiers and device intrinsics that nvcc and NVRTC predefine.
//!
//! [`compile_cuda`] compiles a user's `.cu` for a workload file (`cuda = "kernel.cu"`) with the
//! compiler asked for, or the first one found ([`Compiler::Auto`]: NVRTC, then clang), for the
//! architecture of the GPU config, with the user's options (the workload's `nvrtc_options`,
//! then `--nvrtc-option`). NVRTC is given the CUDA headers of the PyPI wheels ([`headers`]:
//! `cuda_fp16.h`, `mma.h`, `cooperative_groups.h`, `cuda/pipeline`, ...). Results are cached in memory for the life of the process;
//! nothing is written to disk. The validator's `validate ptx` uses [`compile_nvrtc`] and
//! [`compile_clang_file`] for the bundled kernels.

pub mod headers;
pub mod nvrtc;

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The header put in front of a user's `.cu` when clang compiles it: `__global__`, `threadIdx`,
/// `atomicAdd`, `__ballot_sync`, `__popc`, ... in terms of clang's NVVM builtins.
pub const CUDA_SHIM: &str = include_str!("cuda_shim.h");

/// How to get a libnvrtc the simulator finds ([`nvrtc::candidates`]: the PyPI wheel's directory is
/// searched, no `LD_LIBRARY_PATH` needed).
pub const NVRTC_HINT: &str = "pip install nvidia-cuda-nvrtc-cu12 (found where pip puts it), or \
install a CUDA toolkit, or set GPUMEMSIM_NVRTC to the path of a libnvrtc.so.12";

/// How to get clang.
pub const CLANG_HINT: &str = "apt-get install clang-19 (Debian, Ubuntu), or any clang 17 or newer \
on the PATH as `clang`";

/// The clang binaries tried, in order.
pub const CLANG_CANDIDATES: &[&str] = &["clang-19", "clang"];

/// The PTX ISA version clang is told it may use (`--cuda-feature=+ptx78`): without a CUDA
/// installation clang enables none, and 7.8 is the first with sm_90 and all the warp-level
/// builtins of [`CUDA_SHIM`].
pub const CLANG_PTX_FEATURE: &str = "+ptx78";

/// Which compiler turns a `.cu` into PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compiler {
    /// NVRTC when libnvrtc can be loaded, else clang.
    #[default]
    Auto,
    /// NVRTC only.
    Nvrtc,
    /// clang only.
    Clang,
}

impl std::str::FromStr for Compiler {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Compiler::Auto),
            "nvrtc" => Ok(Compiler::Nvrtc),
            "clang" => Ok(Compiler::Clang),
            o => Err(format!(
                "unknown compiler `{o}` (allowed: auto, nvrtc, clang)"
            )),
        }
    }
}

/// A compiled `.cu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The PTX.
    pub ptx: String,
    /// The compiler and its version (`NVRTC 12.9`, `clang 19.1.7`).
    pub compiler: String,
    /// The target (`sm_90`).
    pub arch: String,
}

/// The target architecture for a GPU of compute capability `cc`: `sm_XY`, at least `sm_50` (the
/// oldest NVRTC 12 compiles for; older GPUs' configs get sm_50 PTX, which the simulator runs the
/// same way).
pub fn target_arch(cc: (u32, u32)) -> (u32, u32) {
    if cc < (5, 0) {
        (5, 0)
    } else {
        cc
    }
}

/// Whether libnvrtc can be loaded ([`nvrtc::library`]).
pub fn nvrtc_available() -> bool {
    nvrtc::library().is_ok()
}

/// NVRTC's version, `(major, minor)`, or an error saying how to get libnvrtc.
pub fn nvrtc_version() -> std::result::Result<(i32, i32), String> {
    nvrtc::library()?.version()
}

/// Where the libnvrtc in use was loaded from (a path, or a name the dynamic loader resolved).
pub fn nvrtc_source() -> std::result::Result<String, String> {
    Ok(nvrtc::library()?.source.clone())
}

/// Compiles `source`, the contents of the file `name` (`add_constant.cu`), with NVRTC and
/// `options`; returns the PTX, or the compiler's log as the error.
///
/// NVRTC turns a relative program name into an absolute path by prefixing the current directory,
/// and `-lineinfo` writes that path into the PTX's `.file` directive. The program is therefore
/// named `/<name>` (`.file 1 "/add_constant.cu"`): the PTX is the same wherever it is generated
/// and carries no path of the machine that made it.
pub fn compile_nvrtc(
    name: &str,
    source: &str,
    options: &[&str],
) -> std::result::Result<String, String> {
    use std::ffi::CString;
    let lib = nvrtc::library()?;
    let src = CString::new(source).map_err(|_| format!("{name} contains a NUL byte"))?;
    let cname = CString::new(format!("/{name}")).map_err(|_| "source name contains a NUL byte")?;
    lib.compile(&cname, &src, options).map_err(|e| {
        let (what, log) = e.split_once('\n').unwrap_or((&e, ""));
        format!(
            "NVRTC failed to compile {name} with {} ({what}):\n{log}",
            options.join(" ")
        )
    })
}

/// The first clang of [`CLANG_CANDIDATES`] that runs.
pub fn find_clang() -> Option<&'static str> {
    static FOUND: OnceLock<Option<&'static str>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        CLANG_CANDIDATES.iter().copied().find(|c| {
            Command::new(c)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    })
}

/// clang's version (`19.1.7`) from `clang --version`.
pub fn clang_version(clang: &str) -> std::result::Result<String, String> {
    let out = Command::new(clang)
        .arg("--version")
        .output()
        .map_err(|e| format!("running `{clang} --version`: {e} (install it: {CLANG_HINT})"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or("");
    first
        .split_once("clang version ")
        .and_then(|(_, v)| v.split_whitespace().next())
        .map(str::to_string)
        .ok_or_else(|| format!("`{clang} --version` printed no clang version: {first:?}"))
}

/// Compiles the file `source` with clang and `args`, run in the file's directory with the bare
/// file name, so that nothing of this machine's paths ends up in the PTX (the bundled kernels
/// carry their own shim).
pub fn compile_clang_file(
    clang: &str,
    source: &Path,
    args: &[&str],
) -> std::result::Result<String, String> {
    let dir = source.parent().unwrap_or(Path::new("."));
    let name = source.file_name().unwrap_or_default();
    let out = Command::new(clang)
        .args(args)
        .args(["-o", "-"])
        .arg(name)
        .current_dir(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .output()
        .map_err(|e| format!("running {clang}: {e} (install it: {CLANG_HINT})"))?;
    if !out.status.success() {
        return Err(format!(
            "{clang} failed to compile {} ({}):\n{}",
            source.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| "clang's PTX is not UTF-8".to_string())
}

/// The user's options that clang is given: `-D`, `-U`, `-I` and `-std=`, which both compilers
/// spell the same; any other (NVRTC's `--use_fast_math`, `-maxrregcount=N`) is an error naming
/// it, as clang has no equivalent that would give the same PTX.
pub fn clang_options(options: &[String]) -> std::result::Result<Vec<String>, String> {
    options
        .iter()
        .map(|o| {
            if ["-D", "-U", "-I", "-std="].iter().any(|p| o.starts_with(p)) {
                Ok(o.clone())
            } else {
                Err(format!(
                    "compiler option `{o}` is NVRTC's; with clang only -D, -U, -I and -std= are \
passed on (use --compiler nvrtc)"
                ))
            }
        })
        .collect()
}

/// clang's arguments for a user's source on `arch` (reading it from stdin).
pub fn clang_user_args(arch: (u32, u32)) -> Vec<String> {
    [
        "-x",
        "cuda",
        "--cuda-device-only",
        "-nocudainc",
        "-nocudalib",
        &format!("--cuda-gpu-arch=sm_{}{}", arch.0, arch.1),
        &format!("--cuda-feature={CLANG_PTX_FEATURE}"),
        "-O3",
        "-S",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Compiles a user's source with clang: [`CUDA_SHIM`], then the source (its lines numbered as in
/// the file), through stdin; `#include "..."` resolves in `include_dir`.
pub fn compile_clang_user(
    clang: &str,
    name: &str,
    source: &str,
    include_dir: Option<&Path>,
    arch: (u32, u32),
    options: &[String],
) -> std::result::Result<String, String> {
    let mut cmd = Command::new(clang);
    cmd.args(clang_user_args(arch));
    if let Some(d) = include_dir {
        cmd.arg("-I").arg(d);
    }
    cmd.args(options);
    cmd.args(["-o", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("running {clang}: {e} (install it: {CLANG_HINT})"))?;
    let text = format!(
        "{CUDA_SHIM}\n#line 1 \"{}\"\n{source}",
        name.replace('\\', "/").replace('"', "")
    );
    let mut stdin = child.stdin.take().ok_or("clang's stdin is not open")?;
    // A writer thread: clang may fill its stdout pipe before it has read all of stdin.
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {clang}: {e}"))?;
    let _ = writer.join();
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr);
        let mut msg = format!(
            "{clang} failed to compile {name} for sm_{}{} ({}):\n{}",
            arch.0,
            arch.1,
            out.status,
            log.trim_end()
        );
        if log.contains("undeclared identifier") {
            msg.push_str(
                "\n(clang without a CUDA toolkit has no CUDA math library (expf, sinf, ...) and \
only the device intrinsics of gpumemsim's shim; NVRTC has them all: ",
            );
            msg.push_str(NVRTC_HINT);
            msg.push(')');
        }
        return Err(msg);
    }
    String::from_utf8(out.stdout).map_err(|_| "clang's PTX is not UTF-8".to_string())
}

type CacheKey = (String, u64, Compiler, (u32, u32), Vec<String>);

fn cache() -> &'static Mutex<HashMap<CacheKey, Compiled>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Compiled>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Compiles the CUDA source `source` of the file `file` (shown in messages; its directory is
/// searched for `#include "..."` when `include_dir` is given) to PTX for compute capability `cc`
/// with `compiler` and the user's `options` (NVRTC's spelling: `-DTILE=16`, `--use_fast_math`,
/// `-std=c++17`, `-maxrregcount=64`; clang takes only `-D`, `-U`, `-I` and `-std=`, any other
/// is an error naming it). No file is written; a source compiled before in this process with the
/// same options is not compiled again.
pub fn compile_cuda(
    file: &str,
    source: &str,
    include_dir: Option<&Path>,
    cc: (u32, u32),
    compiler: Compiler,
    options: &[String],
) -> Result<Compiled> {
    let arch = target_arch(cc);
    let include_dir = include_dir.filter(|d| !d.as_os_str().is_empty());
    let key = (
        file.to_string(),
        hash(source),
        compiler,
        arch,
        options.to_vec(),
    );
    if let Some(c) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(c);
    }
    let err = |message: String| Error::Compile {
        file: file.to_string(),
        message,
    };
    let name = Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    let use_nvrtc = match compiler {
        Compiler::Nvrtc => true,
        Compiler::Clang => false,
        Compiler::Auto => {
            if nvrtc_available() {
                true
            } else if find_clang().is_some() {
                false
            } else {
                return Err(err(format!(
                    "no CUDA compiler found to turn it into PTX. Either NVRTC: {NVRTC_HINT}; \
or clang: {CLANG_HINT}. (Or point the workload's `ptx` at PTX compiled elsewhere.)"
                )));
            }
        }
    };
    let compiled = if use_nvrtc {
        let (major, minor) = nvrtc_version().map_err(err)?;
        let arch_opt = format!("--gpu-architecture=compute_{}{}", arch.0, arch.1);
        let include = include_dir.map(|d| format!("--include-path={}", d.display()));
        // The source's own directory first, then the CUDA headers, as nvcc searches.
        let cuda = headers::include_options(&headers::cuda_include_dirs());
        // `unsigned __int128` as nvcc accepts it on Linux.
        let mut all = vec![arch_opt.as_str(), "-lineinfo", "--device-int128"];
        all.extend(include.iter().map(String::as_str));
        all.extend(cuda.iter().map(String::as_str));
        all.extend(options.iter().map(String::as_str));
        let ptx = compile_nvrtc(&name, source, &all).map_err(|m| {
            if m.contains("cannot open source file") {
                err(format!("{m}\n({})", headers::HEADERS_HINT))
            } else {
                err(m)
            }
        })?;
        let ptx = headers::unrooted(&ptx, &headers::cuda_include_dirs());
        Compiled {
            ptx,
            compiler: format!("NVRTC {major}.{minor}"),
            arch: format!("sm_{}{}", arch.0, arch.1),
        }
    } else {
        let clang = find_clang().ok_or_else(|| err(format!("clang not found: {CLANG_HINT}")))?;
        let version = clang_version(clang).map_err(err)?;
        let extra = clang_options(options).map_err(err)?;
        Compiled {
            ptx: compile_clang_user(clang, &name, source, include_dir, arch, &extra)
                .map_err(err)?,
            compiler: format!("clang {version}"),
            arch: format!("sm_{}{}", arch.0, arch.1),
        }
    };
    if let Ok(mut c) = cache().lock() {
        c.insert(key, compiled.clone());
    }
    Ok(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_names_parse() {
        assert_eq!("nvrtc".parse::<Compiler>(), Ok(Compiler::Nvrtc));
        assert_eq!("clang".parse::<Compiler>(), Ok(Compiler::Clang));
        assert_eq!("auto".parse::<Compiler>(), Ok(Compiler::Auto));
        assert!("nvcc".parse::<Compiler>().unwrap_err().contains("allowed"));
    }

    #[test]
    fn old_gpus_get_the_oldest_target_nvrtc_compiles_for() {
        assert_eq!(target_arch((3, 5)), (5, 0));
        assert_eq!(target_arch((9, 0)), (9, 0));
        assert_eq!(target_arch((8, 6)), (8, 6));
    }

    #[test]
    fn clang_takes_the_options_both_compilers_spell_alike() {
        let ok: Vec<String> = ["-DTILE=16", "-UX", "-Iinc", "-std=c++17"]
            .map(String::from)
            .to_vec();
        assert_eq!(clang_options(&ok), Ok(ok.clone()));
        let e = clang_options(&["--use_fast_math".to_string()]).unwrap_err();
        assert!(e.contains("`--use_fast_math` is NVRTC's"), "{e}");
    }

    #[test]
    fn clang_is_told_the_target_and_the_ptx_version() {
        let args = clang_user_args((9, 0));
        assert!(args.contains(&"--cuda-gpu-arch=sm_90".to_string()));
        assert!(args.contains(&"--cuda-feature=+ptx78".to_string()));
    }
}

//! The CUDA headers NVRTC is given: NVRTC ships none of the toolkit's headers beyond its
//! built-ins, so `#include <cuda_fp16.h>` fails unless a directory holding it is passed with
//! `--include-path`. NVIDIA publishes them on PyPI, in three wheels (contents read from the
//! installed wheels, release 12.9):
//!
//! | wheel | directory | headers |
//! |---|---|---|
//! | `nvidia-cuda-runtime-cu12` | `nvidia/cuda_runtime/include` | `cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h`, `mma.h`, `cuda_pipeline.h`, `cuda_awbarrier.h` |
//! | `nvidia-cuda-cccl-cu12` | `nvidia/cuda_cccl/include` | `cuda/pipeline`, `cuda/barrier`, `cuda/std/...` (libcu++), `cub/`, `thrust/` |
//! | `nvidia-cuda-nvcc-cu12` | `nvidia/cuda_nvcc/include` | `crt/mma.h`, `crt/mma.hpp` (which `mma.h` includes) |
//!
//! [`cuda_include_dirs`] finds them: `$GPUMEMSIM_CUDA_INCLUDE` (a `:`-separated list) when set,
//! and nothing else then; else those of the wheels' directories that exist (where Python's
//! `nvidia` namespace package lies, then the usual site-packages directories); else a CUDA
//! toolkit's `include` (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`). What was found is
//! remembered for the life of the process.

use crate::sass::find::site_package_dirs;
use crate::sass::ptxas::run_bounded;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// How to get the headers.
pub const HEADERS_HINT: &str = "the CUDA headers come from PyPI: pip install \
nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12 nvidia-cuda-nvcc-cu12 (or set \
GPUMEMSIM_CUDA_INCLUDE to include directories, `:`-separated)";

/// The wheels' include directories under a `site-packages/nvidia` directory, in search order.
pub const WHEEL_INCLUDES: &[&str] = &[
    "cuda_runtime/include",
    "cuda_cccl/include",
    "cuda_nvcc/include",
];

/// The include directories NVRTC is given, in search order (see the module docs); empty when
/// none is found.
pub fn cuda_include_dirs() -> Vec<PathBuf> {
    static FOUND: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            if let Some(list) = std::env::var_os("GPUMEMSIM_CUDA_INCLUDE").filter(|v| !v.is_empty())
            {
                return std::env::split_paths(&list).collect();
            }
            let roots = nvidia_roots_from_python()
                .into_iter()
                .chain(site_package_dirs("nvidia"));
            let wheels = wheel_includes(roots);
            if !wheels.is_empty() {
                return wheels;
            }
            toolkit_includes()
        })
        .clone()
}

/// Each of [`WHEEL_INCLUDES`] from the first of the `nvidia` directories `roots` that has it
/// (pip may put the wheels in different site-packages); those that none has are left out.
fn wheel_includes(roots: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = vec![];
    let roots: Vec<PathBuf> = {
        let mut seen = std::collections::HashSet::new();
        roots.filter(|r| seen.insert(r.clone())).collect()
    };
    for rel in WHEEL_INCLUDES {
        if let Some(d) = roots.iter().map(|r| r.join(rel)).find(|d| d.is_dir()) {
            out.push(d);
        }
    }
    out
}

/// `include` of a CUDA toolkit: `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`, the first that
/// has `cuda_fp16.h`.
fn toolkit_includes() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).filter(|v| !v.is_empty()))
        .map(PathBuf::from)
        .collect();
    homes.push(PathBuf::from("/usr/local/cuda"));
    homes
        .into_iter()
        .map(|h| h.join("include"))
        .find(|d| d.join("cuda_fp16.h").is_file())
        .into_iter()
        .collect()
}

/// The directories of Python's `nvidia` namespace package (none when Python or the wheels are
/// missing).
fn nvidia_roots_from_python() -> Vec<PathBuf> {
    let mut cmd = Command::new("python3");
    cmd.args(["-c", "import nvidia; print('\\n'.join(nvidia.__path__))"]);
    match run_bounded(&mut cmd, Duration::from_secs(20)) {
        Ok(out) if out.status.success() => out
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| PathBuf::from(l.trim()))
            .collect(),
        _ => vec![],
    }
}

/// `ptx` with the header directories `dirs` in its `.file` directives (`-lineinfo` names every
/// header that holds code) replaced by a name of no machine's (`nvidia/cuda_runtime/include`, the
/// wheel's own path, or `cuda/include`), so that the PTX is the same wherever it is made.
pub fn unrooted(ptx: &str, dirs: &[PathBuf]) -> String {
    let mut out = ptx.to_string();
    for d in dirs {
        let full = d.to_string_lossy();
        let label = match full.rfind("/nvidia/") {
            Some(i) => full[i + 1..].to_string(),
            None => "cuda/include".to_string(),
        };
        out = out.replace(&format!("\"{full}/"), &format!("\"{label}/"));
    }
    out
}

/// NVRTC's `--include-path=DIR` options for `dirs`.
pub fn include_options(dirs: &[PathBuf]) -> Vec<String> {
    dirs.iter()
        .map(|d| format!("--include-path={}", d.display()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wheels_directories_are_taken_from_the_first_root_that_has_each() {
        let tmp = std::env::temp_dir().join(format!("gpumemsim-headers-{}", std::process::id()));
        let (a, b) = (tmp.join("a/nvidia"), tmp.join("b/nvidia"));
        std::fs::create_dir_all(a.join("cuda_runtime/include")).unwrap();
        std::fs::create_dir_all(b.join("cuda_runtime/include")).unwrap();
        std::fs::create_dir_all(b.join("cuda_cccl/include")).unwrap();
        let found = wheel_includes([a.clone(), b.clone(), a.clone()].into_iter());
        assert_eq!(
            found,
            vec![a.join("cuda_runtime/include"), b.join("cuda_cccl/include")]
        );
        assert!(wheel_includes([tmp.join("none")].into_iter()).is_empty());
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn header_paths_in_the_ptx_name_no_machine() {
        let ptx = ".file 1 \"/k.cu\"\n.file 2 \"/home/u/.local/lib/python3.11/site-packages/nvidia/cuda_runtime/include/cuda_pipeline_helpers.h\"\n.file 3 \"/usr/local/cuda/include/mma.hpp\"";
        let dirs = [
            PathBuf::from(
                "/home/u/.local/lib/python3.11/site-packages/nvidia/cuda_runtime/include",
            ),
            PathBuf::from("/usr/local/cuda/include"),
        ];
        assert_eq!(
            unrooted(ptx, &dirs),
            ".file 1 \"/k.cu\"\n.file 2 \"nvidia/cuda_runtime/include/cuda_pipeline_helpers.h\"\n.file 3 \"cuda/include/mma.hpp\""
        );
    }

    #[test]
    fn include_options_are_nvrtcs_spelling() {
        assert_eq!(
            include_options(&[PathBuf::from("/x/include")]),
            vec!["--include-path=/x/include".to_string()]
        );
    }
}

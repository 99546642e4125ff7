//! The SASS text of a module: ptxas assembles it with line info (`-lineinfo`, which changes no
//! code: the same registers and instructions) and nvdisasm prints it with each instruction's PTX
//! line (`nvdisasm -gp -c`, from the cubin's `.nv_debug_line_sass` section).
//!
//! nvdisasm comes from the PyPI wheel `nvidia-cuda-nvdisasm` (13.x: `nvidia/cu13/bin/nvdisasm`,
//! x86-64 and aarch64 Linux, no GPU needed; it disassembles sm_75 to sm_121, not sm_70 or older),
//! a CUDA toolkit or the `PATH`. Listings are cached as ptxas's logs are ([`super::cache`]), keyed
//! by both tools' versions, the arguments and the PTX.

use super::cache;
use super::find::{parse_version, Tool};
use super::ptxas::{retarget, run_bounded, run_in_scratch};
use super::{Ptxas, Settings};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// How to get nvdisasm.
pub const NVDISASM_HINT: &str =
    "pip install nvidia-cuda-nvdisasm (no GPU needed), or a CUDA toolkit on the PATH";

/// An nvdisasm that runs: the same facts as a ptxas (path, release, version, the architectures
/// its `--help` lists, as `SM90` there).
pub type Disassembler = Tool;

/// The nvdisasm of `choice`: `Ok(None)` when off or none is found (auto: the first of
/// [`candidates`] that runs, remembered for the process); an error saying why a given path does
/// not run as an nvdisasm.
pub fn locate(choice: &Ptxas) -> Result<Option<Disassembler>, String> {
    static FOUND: OnceLock<Option<Disassembler>> = OnceLock::new();
    match choice {
        Ptxas::Off => Ok(None),
        Ptxas::Path(p) => probe(p).map(Some),
        Ptxas::Auto => Ok(FOUND
            .get_or_init(|| {
                candidates()
                    .iter()
                    .filter(|p| p.is_file())
                    .find_map(|p| probe(p).ok())
            })
            .clone()),
    }
}

/// Where [`locate`] looks, in order: the PyPI wheels under each directory
/// of Python's `nvidia` package (`cu13/bin`, `cuda_nvdisasm/bin`) and under the usual
/// site-packages directories, `$CUDA_HOME/bin`, `/usr/local/cuda/bin`, the `PATH`.
pub fn candidates() -> Vec<PathBuf> {
    let mut out = vec![];
    let mut roots = nvidia_dirs_from_python();
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        let lib = PathBuf::from(h).join(".local/lib");
        if let Ok(entries) = std::fs::read_dir(&lib) {
            let mut pys: Vec<PathBuf> = entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                .map(|e| e.path().join("site-packages/nvidia"))
                .collect();
            pys.sort();
            pys.reverse();
            roots.extend(pys);
        }
    }
    for r in roots {
        for sub in ["cu13/bin", "cuda_nvdisasm/bin"] {
            out.push(r.join(sub).join("nvdisasm"));
        }
    }
    if let Some(dir) = std::env::var_os("CUDA_HOME").filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(dir).join("bin/nvdisasm"));
    }
    out.push(PathBuf::from("/usr/local/cuda/bin/nvdisasm"));
    if let Some(path) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&path).map(|d| d.join("nvdisasm")));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

fn nvidia_dirs_from_python() -> Vec<PathBuf> {
    let mut cmd = Command::new("python3");
    cmd.args(["-c", "import nvidia; print('\\n'.join(nvidia.__path__))"]);
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

fn probe(path: &Path) -> Result<Disassembler, String> {
    let out = run_bounded(Command::new(path).arg("--version"), PROBE_TIMEOUT)
        .map_err(|e| format!("cannot run `{} --version`: {e}", path.display()))?;
    let text = format!("{}{}", out.stdout, out.stderr);
    if !text.contains("disassembler") {
        return Err(format!("{} is not nvdisasm", path.display()));
    }
    let (release, version) =
        parse_version(&text).ok_or_else(|| format!("{}: no version", path.display()))?;
    let archs = run_bounded(Command::new(path).arg("--help"), PROBE_TIMEOUT)
        .map(|h| parse_archs(&h.stdout))
        .unwrap_or_default();
    Ok(Disassembler {
        path: path.to_path_buf(),
        release,
        version,
        archs,
    })
}

/// The `'SM90'`, `'SM86'` values of `nvdisasm --help`'s `--binary` list: `(9, 0)`, `(8, 6)`.
pub fn parse_archs(help: &str) -> Vec<(u32, u32)> {
    let mut archs: Vec<(u32, u32)> = help
        .split('\'')
        .filter_map(|t| t.strip_prefix("SM"))
        .filter(|t| t.len() >= 2 && t.chars().all(|c| c.is_ascii_digit()))
        .filter_map(|t| {
            let (major, minor) = t.split_at(t.len() - 1);
            Some((major.parse().ok()?, minor.parse().ok()?))
        })
        .collect();
    archs.sort_unstable();
    archs.dedup();
    archs
}

/// The `nvdisasm -gp -c` text of `ptx` (named `name` in messages) assembled by `ptxas` for
/// compute capability `cc` with `-lineinfo`, from the cache when it was made before. Errors:
/// ptxas's or nvdisasm's own, or a timeout.
pub fn listing_text(
    ptxas: &Tool,
    nv: &Disassembler,
    cc: (u32, u32),
    ptx: &str,
    name: &str,
    settings: &Settings,
) -> Result<String, String> {
    let mut target = retarget(ptx, cc);
    if let Some(text) = shrink_zero_globals(&target.text) {
        target.text = std::borrow::Cow::Owned(text);
    }
    let args = [
        "-v".to_string(),
        "-lineinfo".to_string(),
        format!("-arch={}", target.arch),
    ];
    let mut keyed = args.to_vec();
    keyed.push(format!("nvdisasm {} -gp -c", nv.version));
    let key = cache::key(&ptxas.version, &keyed, &target.text);
    cache::read_or_make(settings.cache.resolve().as_deref(), &key, || {
        run_in_scratch(ptxas, &target, &args, name, settings, |cubin, _| {
            let mut cmd = Command::new(&nv.path);
            cmd.args(["-gp", "-c"]).arg(cubin);
            let out = run_bounded(&mut cmd, settings.timeout)
                .map_err(|e| format!("{}: {e}", nv.path.display()))?;
            if !out.status.success() {
                let why = out.stderr.lines().next().unwrap_or("no message").trim();
                return Err(format!("nvdisasm failed ({}): {why}", out.status));
            }
            Ok(out.stdout)
        })
    })
}

/// Elements above which a module-scope `.global` array without an initializer is declared with
/// one element for the listing.
const LARGE_GLOBAL: u64 = 1 << 20;

/// `ptx` with each module-scope `.global` array of [`LARGE_GLOBAL`] elements or more and no
/// initializer declared as one element (`None`: there is none). The SASS does not depend on the
/// length of such an array (its address is a relocation), but nvdisasm holds the cubin's
/// zero-filled `.nv.global` section in memory: 1.1 GB and 1.1 s for a 1 GiB array.
fn shrink_zero_globals(ptx: &str) -> Option<String> {
    let mut out = String::new();
    let mut changed = false;
    for line in ptx.split_inclusive('\n') {
        let body = line.trim();
        let decl = ["", ".visible ", ".weak ", ".common "].iter().any(|p| {
            body.strip_prefix(p)
                .is_some_and(|r| r.starts_with(".global "))
        });
        let one_dim = body.matches('[').count() == 1 && !body.contains('=') && body.ends_with(';');
        let shrunk = (decl && one_dim)
            .then(|| body.split_once('[')?.1.split_once(']'))
            .flatten()
            .filter(|(n, _)| n.trim().parse::<u64>().is_ok_and(|n| n >= LARGE_GLOBAL))
            .map(|(n, _)| line.replacen(&format!("[{n}]"), "[1]", 1));
        match shrunk {
            Some(l) => {
                out.push_str(&l);
                changed = true;
            }
            None => out.push_str(line),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_zero_global_arrays_shrink_for_the_listing() {
        let ptx = ".version 8.0\n.global .align 4 .b8 big[1073741824];\n\
                   .visible .global .align 4 .u32 t[2097152];\n\
                   .global .align 4 .b8 small[4096];\n\
                   .global .align 4 .u32 init[2] = {1, 2};\n";
        let s = shrink_zero_globals(ptx).unwrap();
        assert!(s.contains(".b8 big[1];") && s.contains(".u32 t[1];"), "{s}");
        assert!(
            s.contains("small[4096];") && s.contains("init[2] = {1, 2};"),
            "{s}"
        );
        assert_eq!(shrink_zero_globals(".global .b8 small[4096];\n"), None);
    }

    #[test]
    fn the_architectures_of_nvdisasm_help_parse() {
        // `nvdisasm --help` 13.5, the allowed values of --binary, verbatim.
        let help = "        Allowed values for this option:  'SM100','SM100a','SM100f','SM101','SM101a',\n\
                    'SM110f','SM120','SM120a','SM120f','SM121','SM121a','SM121f','SM75','SM80',\n\
                    'SM86','SM87','SM88','SM89','SM90','SM90a'.";
        let a = parse_archs(help);
        assert_eq!(a.first(), Some(&(7, 5)));
        assert_eq!(a.last(), Some(&(12, 1)));
        assert!(a.contains(&(8, 6)) && a.contains(&(9, 0)) && !a.contains(&(7, 0)));
    }
}

//! Running ptxas on a PTX module and reading its `-v` log.
//!
//! The module is assembled whole, as the driver assembles the PTX a program loads
//! (`cuModuleLoadData`): `ptxas -v -arch=sm_XY -o <tmp>/kernel.cubin <tmp>/kernel.ptx`, whole-program
//! mode, default optimization (`-O3`). Whole-program mode matters: with `-c` (relocatable code)
//! a kernel that calls a `.func` keeps the call and its ABI registers (24 instead of 8 registers
//! for a small kernel calling one function, ptxas 12.9 sm_90). ptxas writes its log to stderr:
//!
//! ```text
//! ptxas info    : 0 bytes gmem
//! ptxas info    : Compiling entry function 'copy_row' for 'sm_90'
//! ptxas info    : Function properties for copy_row
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 10 registers, used 0 barriers
//! ptxas info    : Compile time = 1.314 ms
//! ```
//!
//! A module whose `.target` is newer than the GPU (the bundled PTX is `sm_80`; the T4 is
//! `sm_75`) is refused as it stands (`SM version specified by .target is higher than default SM
//! version assumed`), so its `.target` is lowered to the GPU's first, as compiling the same
//! source for that GPU would have written it; PTX that uses what the older target lacks is then
//! refused by ptxas with its own error, and the launch keeps the estimate. For the bundled
//! kernels that gives the counts of the source compiled for the GPU itself: the sm_80 PTX of
//! transpose, conv2d, ray, smem_stride, stencil_1d, transpose_smem, add_constant and reduce,
//! lowered to sm_75 and sm_70, gets from ptxas 12.9 the count of every kernel that NVRTC 12.9's
//! sm_75 and sm_70 PTX of the same `.cu` gets.

use super::cache;
use super::{Settings, Tool};
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a command printed, and how it ended.
#[derive(Debug, Clone)]
pub struct Output {
    /// Its exit status.
    pub status: ExitStatus,
    /// Its standard output (lossy UTF-8).
    pub stdout: String,
    /// Its standard error (lossy UTF-8).
    pub stderr: String,
}

/// Runs `cmd` (stdin closed, stdout and stderr captured), killing it when it takes longer than
/// `timeout`. Errors: it does not start, or it ran out of time.
pub fn run_bounded(cmd: &mut Command, timeout: Duration) -> Result<Output, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    // Readers on their own threads: a full pipe would block the child.
    fn drain(r: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = vec![];
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    }
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                // The readers are left to finish when the pipes close.
                return Err(format!(
                    "no answer after {:.0} s, stopped",
                    timeout.as_secs_f64()
                ));
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("waiting for it: {e}")),
        }
    };
    let text = |h: std::thread::JoinHandle<Vec<u8>>| {
        String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
    };
    Ok(Output {
        status,
        stdout: text(out),
        stderr: text(err),
    })
}

/// A module made ready for ptxas on one GPU: its text and the `-arch` to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    /// The PTX, its `.target` lowered where it named a newer one.
    pub text: Cow<'a, str>,
    /// `sm_86`; `sm_90a` for a module that targets exactly `sm_90a` on an sm_90 GPU.
    pub arch: String,
    /// The `.target` it named when that was lowered (`sm_80`).
    pub lowered_from: Option<String>,
}

/// `ptx` for ptxas on a GPU of compute capability `cc`: a `.target sm_XY` newer than `cc` becomes
/// `cc`'s (other targets, `texmode_independent` and the like, stay as written).
pub fn retarget(ptx: &str, cc: (u32, u32)) -> Target<'_> {
    let mine = format!("sm_{}{}", cc.0, cc.1);
    let mut offset = 0;
    for line in ptx.split_inclusive('\n') {
        let body = line.trim_start();
        let lead = line.len() - body.len();
        if let Some(rest) = body.strip_prefix(".target") {
            let args_at = offset + lead + ".target".len();
            let mut at = args_at;
            for tok in rest.split(|c: char| c == ',' || c.is_ascii_whitespace()) {
                let start = at;
                at += tok.len() + 1;
                let Some(sm) = parse_sm(tok) else { continue };
                if sm.0 > cc {
                    let mut text = String::with_capacity(ptx.len());
                    text.push_str(&ptx[..start]);
                    text.push_str(&mine);
                    text.push_str(&ptx[start + tok.len()..]);
                    return Target {
                        text: Cow::Owned(text),
                        arch: mine,
                        lowered_from: Some(tok.to_string()),
                    };
                }
                let arch = if sm.0 == cc && !sm.1.is_empty() {
                    tok.to_string()
                } else {
                    mine
                };
                return Target {
                    text: Cow::Borrowed(ptx),
                    arch,
                    lowered_from: None,
                };
            }
            break;
        }
        offset += line.len();
    }
    Target {
        text: Cow::Borrowed(ptx),
        arch: mine,
        lowered_from: None,
    }
}

/// `sm_90a` -> `((9, 0), "a")`.
fn parse_sm(tok: &str) -> Option<((u32, u32), &str)> {
    let t = tok.strip_prefix("sm_")?;
    let n = t.bytes().take_while(u8::is_ascii_digit).count();
    if n < 2 {
        return None;
    }
    let (major, minor) = t[..n].split_at(n - 1);
    Some(((major.parse().ok()?, minor.parse().ok()?), &t[n..]))
}

/// Registers per thread of each entry in ptxas's `-v` log, in the log's order: the `Used N
/// registers` line that follows `Compiling entry function 'NAME'`. A `Function properties for F`
/// of another function between the two (a `.func` the entry calls) takes the next `Used` line
/// for itself, so it is not the entry's.
pub fn parse_registers(log: &str) -> Vec<(String, u32)> {
    let mut out = vec![];
    let mut entry: Option<String> = None;
    let mut other = false;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            entry = rest.split('\'').next().map(str::to_string);
            other = false;
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            other = entry.as_deref() != Some(rest.trim());
        } else if let Some(rest) = line.split("Used ").nth(1) {
            let mut words = rest.split_whitespace();
            let n = words.next().and_then(|n| n.parse::<u32>().ok());
            let unit = words.next().unwrap_or_default();
            if let (Some(n), true) = (n, unit.starts_with("register")) {
                if other {
                    other = false;
                } else if let Some(e) = entry.take() {
                    out.push((e, n));
                }
            }
        }
    }
    out
}

/// The first few error lines of a failed ptxas log, on one line, with the temporary file's path
/// shown as `name`.
fn errors(log: &str, tmp: &Path, name: &str) -> String {
    let tmp = tmp.display().to_string();
    let lines: Vec<String> = log
        .lines()
        .filter(|l| l.contains("error") || l.contains("fatal"))
        .filter(|l| !l.contains("Ptx assembly aborted due to errors"))
        .take(3)
        .map(|l| l.replace(&tmp, name).trim().to_string())
        .collect();
    if lines.is_empty() {
        log.lines()
            .last()
            .unwrap_or("no message")
            .trim()
            .to_string()
    } else {
        lines.join("; ")
    }
}

/// Assembles `ptx` (named `name` in messages) with `tool` for compute capability `cc`; ptxas's
/// `-v` log, from the cache when this PTX was assembled before by this ptxas for this target.
/// The error says why there is none: ptxas's own errors, or its timeout.
pub fn assemble(
    tool: &Tool,
    cc: (u32, u32),
    ptx: &str,
    name: &str,
    settings: &Settings,
) -> Result<String, String> {
    let target = retarget(ptx, cc);
    let args = ["-v".to_string(), format!("-arch={}", target.arch)];
    let key = cache::key(&tool.version, &args, &target.text);
    cache::read_or_make(settings.cache.resolve().as_deref(), &key, || {
        run_in_scratch(tool, &target, &args, name, settings, |_, log| {
            Ok(log.to_string())
        })
    })
}

/// Runs `tool` with `args` on `target`'s text in a new scratch directory
/// (`ptxas ARGS -o <tmp>/kernel.cubin <tmp>/NAME.ptx`), then `after` on the cubin's path and
/// ptxas's log; removes the directory. The error is ptxas's (its first error lines), its timeout,
/// or `after`'s.
pub(super) fn run_in_scratch(
    tool: &Tool,
    target: &Target<'_>,
    args: &[String],
    name: &str,
    settings: &Settings,
    after: impl FnOnce(&Path, &str) -> Result<String, String>,
) -> Result<String, String> {
    let lowered = match &target.lowered_from {
        Some(from) => format!(" (its .target {from} lowered to {})", target.arch),
        None => String::new(),
    };
    let file = file_name(name);
    let tmp = cache::scratch_dir().map_err(|e| format!("no temporary directory: {e}"))?;
    let result = (|| {
        let input = tmp.join(&file);
        std::fs::write(&input, target.text.as_bytes())
            .map_err(|e| format!("writing {}: {e}", input.display()))?;
        let cubin = tmp.join("kernel.cubin");
        let mut cmd = Command::new(&tool.path);
        cmd.args(args).arg("-o").arg(&cubin).arg(&input);
        let out = run_bounded(&mut cmd, settings.timeout)
            .map_err(|e| format!("{}: {e}", tool.path.display()))?;
        let log = format!("{}{}", out.stderr, out.stdout);
        if !out.status.success() {
            return Err(format!(
                "{}{lowered} ({})",
                errors(&log, &input, &file),
                out.status
            ));
        }
        after(&cubin, &log)
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// A file name for the module in ptxas's messages: `transpose.ptx` for
/// `kernels/ptx/transpose.ptx`, `histogram.cu.ptx` for `histogram.cu (PTX by NVRTC 12.9 ...)`.
fn file_name(name: &str) -> String {
    let first = name.split_whitespace().next().unwrap_or("kernel");
    let base = first.rsplit(['/', '\\']).next().unwrap_or(first);
    let clean: String = base
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .collect();
    let clean = if clean.is_empty() || clean.starts_with('.') {
        format!("kernel{clean}")
    } else {
        clean
    };
    if clean.ends_with(".ptx") {
        clean
    } else {
        format!("{clean}.ptx")
    }
}

#[cfg(test)]
mod tests;

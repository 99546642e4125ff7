//! Nsight Compute: the counters that the simulator predicts, measured on the GPU.
//!
//! `validate compare` re-runs its own executable under ncu, with the hidden subcommand
//! `profile-once`, which uploads a workload's inputs and runs each launch once:
//!
//! ```text
//! ncu --csv --clock-control none --print-units base --print-kernel-base mangled \
//!     --metrics <every metric the simulator reports> validate profile-once --config C W
//! ```
//!
//! Clocks are left alone (`--clock-control none`, as for the CUDA-event timings) and ncu flushes the
//! caches before every pass (its default `--cache-control all`), so counters are those of a cold
//! launch, which is what `sim run` predicts by default. The k-th profiled kernel is the k-th launch
//! (checked by name). The CSV is parsed by [`csv`], which needs no GPU.

pub mod csv;

use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An Nsight Compute command-line profiler.
#[derive(Debug, Clone)]
pub struct Ncu {
    /// The `ncu` executable.
    pub path: PathBuf,
    /// Its version line (`Version 2025.3.1.0 (build 36398880) (public-release)`).
    pub version: String,
}

/// What [`Ncu::profile`] measured.
#[derive(Debug, Clone, Default)]
pub struct Profiled {
    /// Per launch, in launch order: metric name → value in base units (empty when ncu profiled
    /// no kernel for that launch).
    pub per_launch: Vec<BTreeMap<String, f64>>,
    /// What went wrong short of failing: metrics ncu rejected, kernels that did not match.
    pub warnings: Vec<String>,
}

/// Where ncu is looked for after `PATH`.
const USUAL_PLACES: &[&str] = &["/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"];

impl Ncu {
    /// `explicit` (an error if it does not run), else `ncu` on `PATH` or in the usual CUDA
    /// install places; `Ok(None)` when there is none.
    pub fn find(explicit: Option<&Path>) -> Result<Option<Ncu>> {
        if let Some(p) = explicit {
            return Ncu::at(p).map(Some);
        }
        let on_path: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join("ncu")).collect())
            .unwrap_or_default();
        let usual = USUAL_PLACES.iter().map(PathBuf::from);
        for p in on_path.into_iter().chain(usual) {
            if p.is_file() {
                if let Ok(n) = Ncu::at(&p) {
                    return Ok(Some(n));
                }
            }
        }
        Ok(None)
    }

    fn at(path: &Path) -> Result<Ncu> {
        let out = Command::new(path)
            .arg("--version")
            .output()
            .with_context(|| format!("cannot run ncu at {}", path.display()))?;
        if !out.status.success() {
            bail!("`{} --version` failed ({})", path.display(), out.status);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("unknown version")
            .trim()
            .to_string();
        Ok(Ncu {
            path: path.to_path_buf(),
            version,
        })
    }

    /// Profiles `target` (a command line that runs each launch once) and returns the metrics of
    /// each launch of `kernels` (their PTX entry names, in launch order), plus warnings. Metrics
    /// that ncu does not know on this GPU are dropped (with a warning) and the run is repeated.
    pub fn profile(
        &self,
        metrics: &[String],
        target: &[String],
        kernels: &[String],
    ) -> Result<Profiled> {
        let mut metrics = metrics.to_vec();
        let mut warnings = vec![];
        let (stdout, stderr) = loop {
            let out = Command::new(&self.path)
                .args(["--csv", "--clock-control", "none", "--print-units", "base"])
                .args(["--print-kernel-base", "mangled", "--metrics"])
                .arg(metrics.join(","))
                .args(target)
                .output()
                .with_context(|| format!("cannot run {}", self.path.display()))?;
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            let errors = error_lines(&stdout, &stderr);
            let unknown: Vec<String> = metrics
                .iter()
                .filter(|m| errors.iter().any(|l| l.contains(m.as_str())))
                .cloned()
                .collect();
            if !out.status.success() && !unknown.is_empty() && unknown.len() < metrics.len() {
                warnings.push(format!(
                    "ncu rejected {} (not available on this GPU?): measuring without them",
                    unknown.join(", ")
                ));
                metrics.retain(|m| !unknown.contains(m));
                continue;
            }
            if !out.status.success() {
                return Err(anyhow!(
                    "ncu failed ({}): {}",
                    out.status,
                    summary(&errors, &stdout, &stderr)
                ));
            }
            break (stdout, stderr);
        };
        let profiled = csv::parse(&stdout).map_err(|e| {
            anyhow!(
                "{e}; ncu said: {}",
                summary(&error_lines(&stdout, &stderr), &stdout, &stderr)
            )
        })?;
        if profiled.is_empty() {
            bail!(
                "ncu profiled no kernel: {}",
                summary(&error_lines(&stdout, &stderr), &stdout, &stderr)
            );
        }
        let names: Vec<&str> = profiled.iter().map(|k| k.kernel.as_str()).collect();
        let (assigned, w) = assign(&names, kernels);
        warnings.extend(w);
        let per_launch = assigned
            .iter()
            .map(|a| a.map(|i| profiled[i].metrics.clone()).unwrap_or_default())
            .collect();
        let mut missing: Vec<&str> = assigned
            .iter()
            .flatten()
            .flat_map(|&i| profiled[i].missing.iter().map(String::as_str))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            warnings.push(format!(
                "ncu reported n/a (not measured on this GPU) for {}",
                missing.join(", ")
            ));
        }
        Ok(Profiled {
            per_launch,
            warnings,
        })
    }
}

/// ncu's `==ERROR==` lines and the profiled program's `error:` lines.
fn error_lines(stdout: &str, stderr: &str) -> Vec<String> {
    stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| l.starts_with("==ERROR==") || l.starts_with("error:"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The error lines joined, or else the last lines of the output.
fn summary(errors: &[String], stdout: &str, stderr: &str) -> String {
    if !errors.is_empty() {
        return errors.join(" | ");
    }
    let all: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = &all[all.len().saturating_sub(4)..];
    if tail.is_empty() {
        "no output".into()
    } else {
        tail.join(" | ")
    }
}

/// Maps profiled kernels (names in profiling order) to launches (PTX entries in launch order):
/// position by position when the counts agree, else each launch takes the next profiled kernel of
/// its name. Returns, per launch, the index of its profiled kernel, and warnings.
pub fn assign(profiled: &[&str], launches: &[String]) -> (Vec<Option<usize>>, Vec<String>) {
    let mut warnings = vec![];
    if profiled.len() == launches.len() {
        for (k, (p, l)) in profiled.iter().zip(launches).enumerate() {
            if p != l {
                warnings.push(format!(
                    "ncu's kernel {k} is `{p}` but launch {k} runs `{l}`: its counters may belong to another kernel"
                ));
            }
        }
        return ((0..launches.len()).map(Some).collect(), warnings);
    }
    warnings.push(format!(
        "ncu profiled {} kernels for {} launches: matching them by name",
        profiled.len(),
        launches.len()
    ));
    let mut next = 0;
    let assigned = launches
        .iter()
        .map(|l| {
            let found = profiled[next..]
                .iter()
                .position(|p| p == l)
                .map(|i| next + i);
            match found {
                Some(i) => next = i + 1,
                None => warnings.push(format!("no profiled kernel for launch of `{l}`")),
            }
            found
        })
        .collect();
    (assigned, warnings)
}

/// The metrics to ask ncu for: `predicted` (the simulator's, in its order) plus the time metrics.
pub fn metric_list<'a>(predicted: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut list: Vec<String> = vec![];
    let always = ["gpu__time_duration.sum", "gpc__cycles_elapsed.max"];
    for m in always.into_iter().chain(predicted) {
        if !list.iter().any(|x| x == m) {
            list.push(m.to_string());
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn launches_map_by_position_when_counts_agree() {
        let (a, w) = assign(&["k1", "k2"], &s(&["k1", "k2"]));
        assert_eq!((a, w.len()), (vec![Some(0), Some(1)], 0));
        let (a, w) = assign(&["k1", "kx"], &s(&["k1", "k2"]));
        assert_eq!(a, vec![Some(0), Some(1)]);
        assert!(w[0].contains("`kx`"), "{w:?}");
    }

    #[test]
    fn launches_map_by_name_when_counts_differ() {
        let (a, w) = assign(&["other", "k1", "k2", "k1"], &s(&["k1", "k1", "k3"]));
        assert_eq!(a, vec![Some(1), Some(3), None]);
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn metric_list_has_the_time_metrics_once() {
        let l = metric_list(["idc__requests.sum", "gpu__time_duration.sum"]);
        assert_eq!(
            l,
            s(&[
                "gpu__time_duration.sum",
                "gpc__cycles_elapsed.max",
                "idc__requests.sum"
            ])
        );
    }

    #[test]
    fn failures_are_summarised_from_error_lines() {
        let e = error_lines(
            "==PROF== x\n==ERROR== ERR_NVGPUCTRPERM\n",
            "error: no CUDA\n",
        );
        assert_eq!(e, s(&["==ERROR== ERR_NVGPUCTRPERM", "error: no CUDA"]));
        assert_eq!(summary(&[], "a\nb\n", ""), "a | b");
        assert_eq!(summary(&[], "", ""), "no output");
    }
}

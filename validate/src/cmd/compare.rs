//! `validate compare`: for each workload, the simulator's predictions, the GPU's outputs and event
//! timings, and (with ncu) the GPU's counters, as tables and optionally a JSON report.

use crate::backend::{self, Backend, Run, Simulator};
use crate::cli::CompareArgs;
use crate::cmd::shown;
use crate::gpu::{Gpu, GpuBackend, CUDA_API};
use crate::ncu::{self, Ncu, Profiled};
use crate::outputs::{self, Tolerance};
use crate::report::{self, BufferPlace, LaunchReport, Report, WorkloadReport};
use crate::{configs, plot, table};
use anyhow::{bail, Context, Result};
use sim::config::GpuConfig;
use sim::workload::Workload;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What every workload of one `compare` run shares.
struct Setup<'a> {
    gpu: &'a Gpu,
    cfg: &'a GpuConfig,
    cfg_path: PathBuf,
    ncu: Option<Ncu>,
    exe: PathBuf,
    args: &'a CompareArgs,
    tolerance: Tolerance,
}

/// Runs `validate compare`.
pub fn compare(args: &CompareArgs) -> Result<ExitCode> {
    let names: Vec<String> = if args.workloads.is_empty() {
        gpumemsim::workloads()
            .iter()
            .map(|w| w.name.to_string())
            .collect()
    } else {
        args.workloads.clone()
    };
    let workloads = names
        .iter()
        .map(|n| Workload::resolve(n).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    for (k, _) in &args.set {
        if !workloads.iter().any(|w| w.params.contains_key(k)) {
            bail!("--set {k}=...: none of the workloads has a parameter `{k}`");
        }
    }
    // Before the GPU runs: a refused --out costs no measurement.
    if let Some(out) = &args.out {
        let mut inputs = vec![(PathBuf::from(&args.config), "the GPU config".to_string())];
        for w in &workloads {
            if let sim::workload::Source::File(p) = &w.source {
                inputs.push((p.clone(), "a workload file".to_string()));
            }
        }
        sim::output::check(out, args.force, &inputs)?;
    }
    // Where the plot goes is checked before the measurements, and again when it is written.
    let config = std::path::Path::new(&args.config);
    let plot_inputs: Vec<&std::path::Path> =
        args.out.as_deref().into_iter().chain([config]).collect();
    if let Some(svg) = &args.plot {
        plot::check_target(svg, &plot_inputs, args.force)?;
    }

    let gpu = Gpu::open(args.device)?;
    let device = gpu.info()?;
    let driver = gpu.driver_version()?;
    // A generated config is written to a temporary file for `profile-once` under ncu, removed
    // when `compare` ends.
    let (cfg, cfg_path, cfg_label, _generated_file) = match configs::choose(&args.config, &device)?
    {
        configs::Choice::File(p) => (GpuConfig::load(&p)?, p.clone(), shown(&p), None),
        configs::Choice::Bundled(c) => {
            let file = TempFile::write(c.toml)?;
            let cfg = GpuConfig::from_toml_str(c.toml, c.path)?;
            (
                cfg,
                file.0.clone(),
                format!("{} (bundled)", c.path),
                Some(file),
            )
        }
        configs::Choice::Generated(g) => {
            outln!("{}", generated_line(&device.name, &g))?;
            let file = TempFile::write(&g.skeleton.text)?;
            (g.cfg.clone(), file.0.clone(), g.description(), Some(file))
        }
    };
    outln!(
        "device {}: {} (compute capability {}, {} SMs), driver CUDA {driver}; config {cfg_label}",
        args.device,
        device.name,
        device.compute_capability,
        device.sm_count,
    )?;
    let ncu = if args.no_ncu {
        outln!("ncu disabled (--no-ncu): timing only")?;
        None
    } else {
        match Ncu::find(args.ncu.as_deref())? {
            Some(n) => {
                outln!("ncu: {} ({})", n.path.display(), n.version)?;
                Some(n)
            }
            None => {
                outln!("ncu not found: timing only (install Nsight Compute or pass --ncu PATH)")?;
                None
            }
        }
    };
    let tolerance = Tolerance::default();
    outln!(
        "outputs: {tolerance}; timing: {} warm-ups, then {} single and {} back-to-back launches",
        args.warmup,
        args.repeat,
        args.repeat
    )?;
    let setup = Setup {
        gpu: &gpu,
        cfg: &cfg,
        cfg_path: cfg_path.canonicalize().unwrap_or(cfg_path.clone()),
        exe: std::env::current_exe().context("cannot find validate's own executable")?,
        ncu,
        args,
        tolerance,
    };

    let mut report = Report {
        device,
        driver,
        cuda: CUDA_API.into(),
        ncu: setup.ncu.as_ref().map(|n| n.version.clone()),
        config: cfg_label,
        timestamp: report::now_utc(),
        warmup: args.warmup,
        repeat: args.repeat,
        tolerance,
        workloads: vec![],
    };
    for (name, w) in names.iter().zip(&workloads) {
        let sets = backend::sets_for(w, &args.set);
        let wr = measure(&setup, name, w, &sets).unwrap_or_else(|e| WorkloadReport {
            workload: name.clone(),
            params: params_after(w, &sets),
            error: Some(format!("{e:#}")),
            warnings: vec![],
            buffers: vec![],
            launches: vec![],
        });
        out!("{}", table::workload(&wr))?;
        report.workloads.push(wr);
        // Saved after every workload, so that an interrupted run keeps what it measured.
        if let Some(out) = &args.out {
            report.save(out)?;
        }
    }
    out!("{}", table::summary(&report))?;
    if let Some(out) = &args.out {
        outln!("wrote {}", shown(out))?;
    }
    if let Some(svg) = &args.plot {
        plot::write(&report, svg, &plot_inputs, args.force)?;
        outln!("wrote {}", shown(svg))?;
    }
    let failed = report.workloads.iter().any(|w| w.error.is_some());
    let (matching, all) = crate::compare::outputs_matching(&report);
    Ok(if failed {
        ExitCode::from(2)
    } else if matching < all {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The line `compare` prints when `--config auto` generated the config.
pub fn generated_line(device_name: &str, g: &configs::Generated) -> String {
    format!(
        "--config auto: no config has gpu.name = \"{device_name}\": using one generated from the \
device's attributes (`validate device --write-config PATH` writes it); assumed, taken from {}: {}",
        g.base,
        g.skeleton.assumed_summary()
    )
}

/// A file in the temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn write(text: &str) -> Result<TempFile> {
        let path = std::env::temp_dir().join(format!(
            "validate-generated-config-{}.toml",
            std::process::id()
        ));
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(TempFile(path))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn params_after(w: &Workload, sets: &[(String, i64)]) -> BTreeMap<String, i64> {
    let mut p = w.params.clone();
    p.extend(sets.iter().cloned());
    p
}

/// One workload: predict, run on the GPU, profile with ncu, compare.
fn measure(s: &Setup, name: &str, w: &Workload, sets: &[(String, i64)]) -> Result<WorkloadReport> {
    eprintln!("{name}: simulating");
    let plan = backend::plan(s.cfg, w, sets)?;
    let predicted = Simulator { cfg: s.cfg }.run(&plan)?;
    eprintln!("{name}: running on the GPU");
    let mut gpu = GpuBackend {
        gpu: s.gpu,
        warmup: s.args.warmup,
        repeat: s.args.repeat,
        addresses: vec![],
    };
    let measured = gpu.run(&plan)?;
    let mut warnings = vec![];
    let counters = match &s.ncu {
        Some(n) => {
            eprintln!("{name}: profiling with ncu");
            match profile(s, n, name, sets, &predicted) {
                Ok(p) => {
                    warnings.extend(p.warnings);
                    p.per_launch
                }
                Err(e) => {
                    warnings.push(format!("no counters: {e:#}"));
                    vec![]
                }
            }
        }
        None => vec![],
    };
    let launches = join(
        &plan.workload,
        &predicted,
        &measured,
        &counters,
        s.tolerance,
    );
    Ok(WorkloadReport {
        workload: name.to_string(),
        params: plan.workload.params.clone(),
        error: None,
        warnings,
        buffers: (gpu.addresses.into_iter())
            .map(|(name, address, bytes)| BufferPlace {
                name,
                address: format!("{address:#x}"),
                bytes: bytes as u64,
            })
            .collect(),
        launches,
    })
}

/// Runs `validate profile-once` for the workload under ncu.
fn profile(
    s: &Setup,
    ncu: &Ncu,
    name: &str,
    sets: &[(String, i64)],
    predicted: &[Run],
) -> Result<Profiled> {
    let metrics = ncu::metric_list(
        predicted
            .iter()
            .flat_map(|r| r.metrics.keys().map(String::as_str)),
    );
    let target = profile_command(&s.exe, &s.cfg_path, s.args.device, sets, name);
    let kernels: Vec<String> = predicted.iter().map(|r| r.kernel.clone()).collect();
    ncu.profile(&metrics, &target, &kernels)
}

/// The command line that ncu runs: this executable's `profile-once` for the workload.
pub fn profile_command(
    exe: &Path,
    cfg: &Path,
    device: usize,
    sets: &[(String, i64)],
    workload: &str,
) -> Vec<String> {
    let mut c = vec![
        exe.display().to_string(),
        "profile-once".into(),
        "--config".into(),
        cfg.display().to_string(),
        "--device".into(),
        device.to_string(),
    ];
    for (k, v) in sets {
        c.push("--set".into());
        c.push(format!("{k}={v}"));
    }
    c.push(workload.to_string());
    c
}

/// One [`LaunchReport`] per launch from the simulator's runs, the GPU's and ncu's counters.
pub fn join(
    w: &Workload,
    predicted: &[Run],
    measured: &[Run],
    counters: &[BTreeMap<String, f64>],
    tolerance: Tolerance,
) -> Vec<LaunchReport> {
    let types: Vec<(String, String)> = w
        .buffers
        .iter()
        .map(|b| (b.name.clone(), b.ty.clone()))
        .collect();
    predicted
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let m = measured.get(i);
            let checks = match m {
                Some(m) => outputs::check_launch(&types, &p.outputs, &m.outputs, tolerance),
                None => vec![],
            };
            let mut mismatches: Vec<String> = checks
                .iter()
                .filter(|c| !c.ok())
                .map(|c| c.describe())
                .collect();
            if m.is_none() {
                mismatches.push("the GPU did not run this launch".into());
            }
            LaunchReport {
                label: p.label.clone(),
                kernel: p.kernel.clone(),
                predicted: p.metrics.clone(),
                measured: counters.get(i).cloned().unwrap_or_default(),
                time_us: m.and_then(|m| m.time_us),
                outputs_match: mismatches.is_empty(),
                mismatches,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TimeStats;

    #[test]
    fn ncu_runs_profile_once_with_the_same_workload_arguments() {
        let c = profile_command(
            Path::new("/bin/validate"),
            Path::new("/r/configs/h200.toml"),
            1,
            &[("n".into(), 128_000)],
            "pseudo_random",
        );
        assert_eq!(
            c.join(" "),
            "/bin/validate profile-once --config /r/configs/h200.toml --device 1 --set n=128000 pseudo_random"
        );
    }

    #[test]
    fn a_generated_config_is_announced_with_its_assumed_keys() {
        let dirs = [PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs"
        ))];
        let g = configs::generate_in(&dirs, &crate::skeleton::tests::b200()).unwrap();
        let line = generated_line("NVIDIA B200", &g);
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("no config has gpu.name = \"NVIDIA B200\""),
            "{line}"
        );
        assert!(
            line.contains(
                "configs/h200.toml: gpu.launch_overhead_ns, gpu.host_launch_interval_ns, sm.gpcs,"
            ),
            "{line}"
        );
        assert!(line.contains("l1.*"), "{line}");
        // profile-once under ncu reads it back from the temporary file.
        let file = TempFile::write(&g.skeleton.text).unwrap();
        let back = GpuConfig::load(&file.0).unwrap();
        assert_eq!(back.gpu.name, "NVIDIA B200");
        let path = file.0.clone();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn launches_join_predictions_outputs_timings_and_counters() {
        let w = Workload::resolve("pseudo_random").unwrap();
        let bytes = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let run = |label: &str, sums: &[i32], t: Option<TimeStats>| Run {
            label: label.into(),
            kernel: format!("k_{label}"),
            outputs: vec![("sums".into(), bytes(sums))],
            metrics: [("gpu__time_duration.sum".to_string(), 1000.0)].into(),
            time_us: t,
        };
        let t = TimeStats::from_samples(&[1.0, 2.0], 1.5);
        let predicted = [run("a", &[1, 2], None), run("b", &[3, 4], None)];
        let measured = [run("a", &[1, 2], t), run("b", &[3, 5], t)];
        let counters = vec![[("idc__requests.sum".to_string(), 7.0)].into()];
        let l = join(&w, &predicted, &measured, &counters, Tolerance::default());
        assert!(l[0].outputs_match && !l[1].outputs_match);
        assert_eq!(
            l[1].mismatches,
            ["sums: 1 of 2 elements differ: [1] expected 4, got 5"]
        );
        assert_eq!(l[0].measured["idc__requests.sum"], 7.0);
        assert!(l[1].measured.is_empty());
        assert_eq!(l[0].time_us, t);
        let l = join(&w, &predicted, &measured[..1], &[], Tolerance::default());
        assert!(!l[1].outputs_match);
    }
}

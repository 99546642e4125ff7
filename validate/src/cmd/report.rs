//! `validate report`: re-render saved reports; with `--config`, replace their predictions with the
//! simulator's current ones first (no GPU needed).

use crate::backend::{self, Backend, Simulator};
use crate::cli::ReportArgs;
use crate::cmd::shown;
use crate::report::Report;
use crate::{markdown, plot, table};
use anyhow::{bail, Context, Result};
use sim::workload::Workload;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `validate report`.
pub fn report(args: &ReportArgs) -> Result<ExitCode> {
    if args.plot.is_some() && args.reports.len() > 1 {
        bail!(
            "--plot draws one report, {} were given: run `validate report` once per report",
            args.reports.len()
        );
    }
    let mut inputs: Vec<&Path> = args.reports.iter().map(PathBuf::as_path).collect();
    inputs.extend(args.config.as_deref());
    if let Some(svg) = &args.plot {
        plot::check_target(svg, &inputs, args.force)?;
    }
    for path in &args.reports {
        let mut r = Report::load(path)?;
        if let Some(cfg) = &args.config {
            repredict(&mut r, cfg)?;
        }
        if args.markdown {
            let command = format!(
                "validate report {}{} --markdown",
                shown(path),
                args.config
                    .as_ref()
                    .map(|c| format!(" --config {}", shown(c)))
                    .unwrap_or_default()
            );
            out!("{}", markdown::accuracy(&r, &command))?;
            continue;
        }
        outln!(
            "report {}: {} (compute capability {}), driver CUDA {}, ncu {}, measured {}; \
predictions from {}",
            shown(path),
            r.device.name,
            r.device.compute_capability,
            r.driver,
            r.ncu.as_deref().unwrap_or("not used"),
            r.timestamp,
            r.config
        )?;
        for w in &r.workloads {
            out!("{}", table::workload(w))?;
        }
        out!("{}", table::summary(&r))?;
        if let Some(svg) = &args.plot {
            plot::write(&r, svg, &inputs, args.force)?;
            outln!("wrote {}", shown(svg))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Replaces every launch's `predicted` metrics with the simulator's under the config
/// `cfg_path` (a path, or a bundled config's name as `sim run` takes it), for the workload and
/// parameters recorded in the report.
pub fn repredict(r: &mut Report, cfg_path: &Path) -> Result<()> {
    let found = sim::config::find::find(&cfg_path.to_string_lossy())?;
    let cfg = found.config;
    for w in r.workloads.iter_mut().filter(|w| w.error.is_none()) {
        let workload = Workload::resolve(&w.workload)?;
        let sets: Vec<(String, i64)> = w.params.clone().into_iter().collect();
        let sets = backend::sets_for(&workload, &sets);
        let plan = backend::plan(&cfg, &workload, &sets)
            .with_context(|| format!("re-predicting {}", w.workload))?;
        let runs = Simulator { cfg: &cfg }
            .run(&plan)
            .with_context(|| format!("re-predicting {}", w.workload))?;
        for l in w.launches.iter_mut() {
            match runs.iter().find(|x| x.label == l.label) {
                Some(run) => l.predicted = run.metrics.clone(),
                None => w.warnings.push(format!(
                    "launch `{}` is no longer in the workload: its prediction is the saved one",
                    l.label
                )),
            }
        }
    }
    r.config = if found.bundled {
        format!("{} (bundled)", found.path)
    } else {
        shown(cfg_path)
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn a_report_is_re_predicted_with_the_current_simulator() {
        let mut r = sample();
        r.workloads[0].params.insert("n".into(), 2048);
        let before = r.workloads[0].launches[0].predicted.clone();
        let cfg = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml"));
        repredict(&mut r, cfg).unwrap();
        let after = &r.workloads[0].launches[0].predicted;
        assert_ne!(after, &before);
        assert!(after["gpu__time_duration.sum"] > 0.0);
        assert!(after.contains_key("idc__requests.sum"));
        assert!(r.config.ends_with("h200.toml"), "{}", r.config);
        // The measurements are untouched.
        assert_eq!(
            r.workloads[0].launches[0].measured,
            sample().workloads[0].launches[0].measured
        );
        // By name, as `sim run h200` takes it (issue 42: one convention in both binaries): the
        // bundled copy of the same file gives the same predictions.
        let mut by_name = sample();
        by_name.workloads[0].params.insert("n".into(), 2048);
        repredict(&mut by_name, Path::new("h200")).unwrap();
        assert_eq!(&by_name.workloads[0].launches[0].predicted, after);
        assert_eq!(by_name.config, "configs/h200.toml (bundled)");
        let e = repredict(&mut sample(), Path::new("h300"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("config `h300`") && e.contains("h200"), "{e}");
    }
}

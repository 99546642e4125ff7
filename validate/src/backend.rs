//! One backend interface, two implementations (style.md practice 13): the simulator and the GPU
//! both run a [`Plan`] (a workload made concrete by `sim::run::plan`: PTX text, initial memory,
//! every launch's kernel, arguments and shape) and return, per launch, the output buffers after it
//! and what they measured or predicted. `validate compare` runs both and compares; a test written
//! against [`Backend`] runs on the simulator everywhere and on the GPU where there is one.

use crate::stats::TimeStats;
use anyhow::Result;
use sim::config::GpuConfig;
use sim::run::{Options, Plan};
use sim::workload::Workload;
use std::collections::BTreeMap;

/// What a backend reports for one launch.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Launch label.
    pub label: String,
    /// PTX entry.
    pub kernel: String,
    /// Every `output = true` buffer after this launch: (name, little-endian bytes).
    pub outputs: Vec<(String, Vec<u8>)>,
    /// Metrics keyed by Nsight Compute name (the simulator's predictions; empty for the GPU,
    /// whose counters come from ncu in a separate process).
    pub metrics: BTreeMap<String, f64>,
    /// CUDA-event timings (the GPU only).
    pub time_us: Option<TimeStats>,
}

/// Something that runs a plan's launches in order, on freshly initialised memory that carries
/// results from launch to launch (as the simulator does).
pub trait Backend {
    /// A name for messages (`simulator`, `NVIDIA H200`).
    fn name(&self) -> String;
    /// Runs every launch of `plan` once, in order; one [`Run`] per launch.
    fn run(&mut self, plan: &Plan) -> Result<Vec<Run>>;
}

/// The simulator: predictions for the GPU that `cfg` describes, cold caches per launch
/// (`sim run`'s default, the counterpart of ncu's flushed caches).
pub struct Simulator<'a> {
    /// The GPU config.
    pub cfg: &'a GpuConfig,
}

impl Backend for Simulator<'_> {
    fn name(&self) -> String {
        format!("simulator ({})", self.cfg.gpu.name)
    }

    fn run(&mut self, plan: &Plan) -> Result<Vec<Run>> {
        let opts = Options {
            keep_outputs: true,
            ..Options::default()
        };
        let run = sim::run::execute(self.cfg, plan.clone(), &opts)?;
        Ok(run
            .launches
            .iter()
            .map(|l| Run {
                label: l.label.clone(),
                kernel: l.kernel.clone(),
                metrics: sim::report::launch_metrics(l)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                outputs: l.outputs.clone(),
                time_us: None,
            })
            .collect())
    }
}

/// Plans `workload` with the parameter overrides `sets` for the GPU that `cfg` describes.
pub fn plan(cfg: &GpuConfig, workload: &Workload, sets: &[(String, i64)]) -> Result<Plan> {
    let opts = Options {
        sets: sets.to_vec(),
        ..Options::default()
    };
    Ok(sim::run::plan(cfg, workload, &opts)?)
}

/// The overrides of `sets` that `workload` has a parameter for (one `--set` may serve many
/// workloads).
pub fn sets_for(workload: &Workload, sets: &[(String, i64)]) -> Vec<(String, i64)> {
    sets.iter()
        .filter(|(k, _)| workload.params.contains_key(k))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> GpuConfig {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml");
        GpuConfig::load(std::path::Path::new(path)).unwrap()
    }

    #[test]
    fn the_simulator_backend_reports_outputs_and_every_metric_per_launch() {
        let cfg = h200();
        let w = Workload::resolve("pseudo_random").unwrap();
        let sets = sets_for(&w, &[("n".into(), 2048), ("other".into(), 1)]);
        assert_eq!(sets, [("n".to_string(), 2048)]);
        let p = plan(&cfg, &w, &sets).unwrap();
        let runs = Simulator { cfg: &cfg }.run(&p).unwrap();
        assert_eq!(runs.len(), p.launches.len());
        for r in &runs {
            assert_eq!(r.outputs.len(), 1, "{}: the sums buffer", r.label);
            assert_eq!(r.outputs[0].1.len(), 2048 * 4);
            assert!(r.metrics["gpu__time_duration.sum"] > 0.0);
            assert!(r.metrics.contains_key("idc__requests.sum"));
        }
    }

    #[test]
    fn every_bundled_workload_plans_for_the_h200() {
        let cfg = h200();
        for w in gpumemsim::workloads() {
            let workload = Workload::resolve(w.name).unwrap();
            let p = plan(&cfg, &workload, &[]).unwrap_or_else(|e| panic!("{}: {e:#}", w.name));
            assert!(!p.launches.is_empty(), "{}", w.name);
        }
    }
}

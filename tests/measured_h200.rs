//! The simulator against the committed measurements of a real H200
//! (`validate/measurements/h200/report.json`, made by `validate compare --out ...`, see
//! validate/README.md). CI has no GPU; this keeps every change honest against real hardware:
//!
//! - counters whose rule is exact must equal Nsight Compute's: global load/store requests and
//!   sectors, and shared-memory wavefronts and bank conflicts of the bank-conflict workloads;
//! - counters the model gets close must stay close: L1 load hits, shared wavefronts elsewhere;
//! - the time error (predicted vs ncu's `gpu__time_duration.sum`, one cold launch) must not get
//!   worse than the recorded baseline.

use sim::config::GpuConfig;
use sim::report::launch_metrics;
use sim::run::{run_workload, Options};
use sim::workload::Workload;
use std::collections::HashMap;

/// Mean absolute percentage error of time over all launches (5.4% with the SASS issue model,
/// the constant pipe, block dispatch and the L1 data pipe); a change that makes it worse fails.
/// Lower it when the timing model improves.
const TIME_MAPE_BASELINE: f64 = 0.06;

/// No launch's time may be further off than this (issue 6: "no launch worse than 25%").
const TIME_WORST_BASELINE: f64 = 0.25;

const EXACT_GLOBAL: [&str; 4] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];
const SHARED: [&str; 4] = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
];
/// Workloads whose every shared access is deterministic (one warp or block-local patterns): their
/// shared counters must be exact. Elsewhere (reduce, stencil_1d) the hardware adds a few
/// wavefronts (about 2%) that depend on which warps meet in the pipeline.
const SHARED_EXACT_WORKLOADS: [&str; 6] = [
    "smem_square",
    "smem_square_8byte",
    "smem_rectangle",
    "smem_stride",
    "smem_stride_8byte",
    "transpose_smem",
];

fn report() -> serde_json::Value {
    let path = format!(
        "{}/../validate/measurements/h200/report.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect("committed report"))
        .expect("report parses")
}

#[test]
fn the_simulator_matches_the_h200_measurements() {
    let cfg = GpuConfig::load(std::path::Path::new(&format!(
        "{}/../configs/h200.toml",
        env!("CARGO_MANIFEST_DIR")
    )))
    .unwrap();
    let report = report();
    let mut failures = vec![];
    let mut time_errors = vec![];
    let mut with_sass = 0;
    for w in report["workloads"].as_array().expect("workloads") {
        let name = w["workload"].as_str().unwrap();
        let sets: Vec<(String, i64)> = w["params"]
            .as_object()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
                    .collect()
            })
            .unwrap_or_default();
        let run = run_workload(
            &cfg,
            &Workload::resolve(name).unwrap(),
            &Options {
                sets,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        for l in w["launches"].as_array().unwrap() {
            let label = l["label"].as_str().unwrap();
            let measured = &l["measured"];
            let sim = run
                .launches
                .iter()
                .find(|x| x.label == label)
                .unwrap_or_else(|| panic!("{name}/{label} not simulated"));
            let predicted: HashMap<&str, f64> = launch_metrics(sim).into_iter().collect();
            let m = |k: &str| measured[k].as_f64();
            let mut check = |k: &str, tolerance: f64| {
                if let Some(meas) = m(k) {
                    let pred = predicted[k];
                    if (pred - meas).abs() > tolerance * meas.abs().max(1.0) {
                        failures.push(format!(
                            "{name}/{label} {k}: predicted {pred}, measured {meas}"
                        ));
                    }
                }
            };
            for k in EXACT_GLOBAL {
                check(k, 0.0);
            }
            let shared_tolerance = if SHARED_EXACT_WORKLOADS.contains(&name) {
                0.0
            } else {
                0.03
            };
            for k in SHARED[..2].iter() {
                check(k, shared_tolerance);
            }
            if SHARED_EXACT_WORKLOADS.contains(&name) {
                for k in SHARED[2..].iter() {
                    check(k, 0.0);
                }
            }
            check(
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
                0.01,
            );
            // Counted on the kernel's own SASS where ptxas and nvdisasm are here (sass::count):
            // warp instructions within 3% (issue 37), shared instructions exact, LDC requests
            // within 1% (rounding of predicated copies).
            if sim.instructions_source.is_some() {
                with_sass += 1;
                check("smsp__inst_executed.sum", 0.03);
                check("smsp__sass_inst_executed_op_shared_ld.sum", 0.0);
                check("smsp__sass_inst_executed_op_shared_st.sum", 0.0);
                check("idc__requests.sum", 0.01);
            }
            if let Some(t) = m("gpu__time_duration.sum") {
                let e = (predicted["gpu__time_duration.sum"] - t).abs() / t;
                if e > TIME_WORST_BASELINE {
                    failures.push(format!(
                        "{name}/{label} time: predicted {} ns, measured {t} ns ({:+.1}%)",
                        predicted["gpu__time_duration.sum"],
                        100.0 * (predicted["gpu__time_duration.sum"] - t) / t
                    ));
                }
                time_errors.push(e);
            }
        }
    }
    eprintln!(
        "{with_sass} launches counted on their SASS{}",
        if with_sass == 0 {
            " (none: no ptxas or nvdisasm here; pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm)"
        } else {
            ""
        }
    );
    assert!(
        failures.is_empty(),
        "{} counters differ from the H200:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let mape = time_errors.iter().sum::<f64>() / time_errors.len() as f64;
    eprintln!(
        "time MAPE against the H200 (ncu, cold launches): {:.1}% over {} launches",
        100.0 * mape,
        time_errors.len()
    );
    assert!(
        time_errors.len() >= 80,
        "the report covers every bundled launch"
    );
    assert!(
        mape <= TIME_MAPE_BASELINE,
        "time MAPE {:.1}% is worse than the baseline {:.1}%",
        100.0 * mape,
        100.0 * TIME_MAPE_BASELINE
    );
}

//! Loops ptxas unrolled beyond the PTX, timed per SASS iteration, against the H200
//! (`tests/fixtures/suite38/h200.json`, Nsight Compute).
//!
//! suite38's `spin` is a chain of LCG multiply-adds in a loop that NVVM unrolled 4x and ptxas
//! 4x more (ptxas 12.9, sm_90: 16 IMADs per SASS iteration). A warp waits where the SASS loop
//! branches back, once per 4 PTX iterations (`sim::sass::unroll`, counted by the loop's
//! immediates): one warp's 10,000 steps take 10.30 µs on the H200, where waiting at every PTX
//! iteration predicted 15.65 µs (+52%).

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

#[test]
fn a_warp_waits_once_per_sass_iteration_of_an_unrolled_arithmetic_loop() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let p = root().join("tests/fixtures/suite38/grids.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let opts = Options {
        only: vec!["spin_1x32_i10k".into()],
        ..Options::default()
    };
    let out = run_workload(&cfg, &w, &opts).unwrap_or_else(|e| panic!("{e}"));
    let l = &out.launches[0];
    if l.instructions_source.is_none() {
        println!("skipped: no ptxas or nvdisasm (pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm)");
        return;
    }
    let (us, measured_us) = (l.timing.time_ns / 1e3, 10.30);
    let err = (us - measured_us) / measured_us;
    assert!(
        err.abs() < 0.10,
        "spin_1x32_i10k: {us:.2} µs, measured {measured_us} ({:+.1}%)",
        100.0 * err
    );
}

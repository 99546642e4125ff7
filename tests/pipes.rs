//! The sub-partition's half-rate pipes in timing against the GPU: ubench T's kernels
//! (`tests/fixtures/pipes/`, from validate/measurements/h200/ubench/pipes.cu), 8 warps per
//! sub-partition each running 8 independent chains of one instruction. The expected cycles per
//! warp instruction per sub-partition are the H100's (the H200's SM), 2026-12-07
//! (validate/measurements/h200/ubench/h100_2026-12-07/fifth/pipes.txt; they include the loop's 3
//! instructions per 8): IMAD and the ALU's compare, logic and shift instructions at half rate,
//! FFMA and IADD3 at full rate, and a pair of instructions on different pipes at full rate. The
//! simulator's are the cycles 128 more rounds take (two launches), so launch overheads cancel.

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

/// (kernel, measured cycles per warp instruction per sub-partition).
const MEASURED: [(&str, f64); 9] = [
    ("imad", 2.011),
    ("iadd", 1.413),
    ("imin", 2.259),
    ("xor", 2.259),
    ("ffma", 1.464),
    ("shl", 2.259),
    ("imad_ffma", 1.430),
    ("imad_imin", 1.483),
    ("ffma_imin", 1.468),
];

#[test]
fn integer_multiplies_and_alu_instructions_issue_at_half_rate_as_on_the_gpu() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let p = root().join("tests/fixtures/pipes/pipes.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let out = run_workload(&cfg, &w, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let cycles = |label: &str| {
        let l = (out.launches.iter())
            .find(|l| l.label == label)
            .unwrap_or_else(|| panic!("no launch {label}"));
        l.timing.cycles
    };
    for (kernel, measured) in MEASURED {
        let extra = cycles(&format!("{kernel}_160")) - cycles(&format!("{kernel}_32"));
        // 128 rounds of 8 instructions of 8 warps on each sub-partition.
        let per = extra / (128.0 * 8.0 * 8.0);
        let err = (per - measured) / measured;
        assert!(
            err.abs() < 0.10,
            "{kernel}: {per:.3} cycles per warp instruction, measured {measured} ({:+.1}%)",
            100.0 * err
        );
    }
}

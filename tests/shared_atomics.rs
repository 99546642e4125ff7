//! Shared-memory atomics under same-word contention against the GPU: ubench U's kernels
//! (`tests/fixtures/atoms/`, from validate/measurements/h200/ubench/atoms.cu) with 1 to 32 lanes
//! on each word. The expected data-pipe wavefronts per instruction are Nsight Compute's on an H100
//! (the H200's SM), 2026-12-07: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum` over
//! `smsp__sass_inst_executed_op_shared_atom.sum` of every launch in
//! validate/measurements/h200/ubench/h100_2026-12-07/fifth/atoms_ncu.csv (exact quotients there:
//! e.g. 69,206,016 / 1,081,344 = 64 for a CAS with 32 lanes on a word).

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

/// (kernel, wavefronts per instruction with 1, 2, 4, 8, 16, 32 lanes on each word), measured.
const MEASURED: [(&str, [u64; 6]); 4] = [
    ("add", [1, 2, 4, 8, 16, 32]),
    ("exch", [1, 2, 4, 8, 16, 32]),
    // A compare-and-swap takes two passes per lane on the word, whether it matches or not.
    ("cas_fail", [2, 4, 8, 16, 32, 64]),
    ("cas_hit", [2, 4, 8, 16, 32, 64]),
];

#[test]
fn shared_atomic_wavefronts_per_lane_on_a_word_are_the_gpus() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let p = root().join("tests/fixtures/atoms/atoms.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let out = run_workload(&cfg, &w, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let metric = |l: &sim::run::LaunchResult, name: &str| {
        (l.counters.metric_counts().into_iter())
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no metric {name}"))
            .1
    };
    let mut checked = 0;
    for l in &out.launches {
        let (kernel, lanes) = l.label.rsplit_once("_c").unwrap();
        let k = [1, 2, 4, 8, 16, 32]
            .iter()
            .position(|&c| c.to_string() == lanes)
            .unwrap();
        let want = MEASURED.iter().find(|(n, _)| *n == kernel).unwrap().1[k];
        let inst = metric(l, "smsp__sass_inst_executed_op_shared_atom.sum");
        let wf = metric(l, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum");
        assert!(inst > 0, "{}", l.label);
        assert_eq!(
            wf,
            want * inst,
            "{}: {wf} wavefronts for {inst} instructions",
            l.label
        );
        checked += 1;
    }
    assert_eq!(checked, 24);
}

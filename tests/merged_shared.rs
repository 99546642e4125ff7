//! Shared wavefronts of loads that ptxas merged (issue 37): `tests/fixtures/vector_banks/bcast.ptx`
//! has four scalar `ld.shared.f32` of one float4 that every lane reads; ptxas makes them one
//! `LDS.128 [UR4]`. On an H200 a warp-wide 16-byte broadcast takes 2 wavefronts (one per
//! half-warp: `tests/fixtures/vector_banks/probe1.ncu.csv`, `k128<0>`: 128 wavefronts for 64
//! LDS.128), where the four scalar broadcasts of the PTX would take 4. Without ptxas and nvdisasm
//! the counts stay the PTX's (4 loads, 4 wavefronts a warp), which the test then checks instead.

use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

#[test]
fn merged_broadcast_takes_the_lds128_wavefronts() {
    let cfg = GpuConfig::load(Path::new(&format!("{ROOT}/configs/h200.toml"))).unwrap();
    let w = Workload::resolve(&format!("{ROOT}/tests/fixtures/vector_banks/bcast.toml")).unwrap();
    let opts = Options {
        keep_outputs: true,
        ..Options::default()
    };
    let run = run_workload(&cfg, &w, &opts).unwrap();
    let l = &run.launches[0];
    let c = &l.counters;
    let warps = 4;
    // Every lane adds tile[0..3] = 0 + 1 + 2 + 3.
    let out = &l.outputs.iter().find(|(n, _)| n == "out").unwrap().1;
    let vals: Vec<f32> = (out
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap())))
    .collect();
    assert!(vals.iter().all(|&v| v == 6.0), "{vals:?}");
    if l.instructions_source.is_none() {
        println!("skipped: no ptxas or nvdisasm (pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm)");
        assert_eq!(c.shared_ld_inst, 4 * warps);
        assert_eq!(c.shared_ld_wavefronts, 4 * warps);
        return;
    }
    assert_eq!(c.shared_ld_inst, warps, "one LDS.128 a warp");
    assert_eq!(
        c.shared_ld_wavefronts,
        2 * warps,
        "one wavefront per half-warp"
    );
    assert_eq!(c.shared_ld_conflicts, 0);
}

/// `tests/fixtures/tensor/mma.ptx` stores each lane's four halves with four `st.shared.u16`,
/// which ptxas makes one `STS.64` attributed to the last of them: the store wavefronts are then
/// the H200's (`tests/fixtures/tensor/h200/report.json`: 640 and 256), not four stores' (2560
/// and 1024) nor none.
#[test]
fn merged_half_stores_take_the_h200s_wavefronts() {
    let cfg = GpuConfig::load(Path::new(&format!("{ROOT}/configs/h200.toml"))).unwrap();
    let w = Workload::resolve(&format!("{ROOT}/tests/fixtures/tensor/mma.toml")).unwrap();
    let opts = Options {
        only: vec!["ldmatrix".into(), "ldmatrix_swizzled".into()],
        ..Options::default()
    };
    let run = run_workload(&cfg, &w, &opts).unwrap();
    let st: Vec<u64> = run
        .launches
        .iter()
        .map(|l| l.counters.shared_st_wavefronts)
        .collect();
    if run.launches[0].instructions_source.is_none() {
        println!("skipped: no ptxas or nvdisasm (pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm)");
        assert_eq!(st, [2560, 1024]);
        return;
    }
    assert_eq!(st, [640, 256]);
}

/// One `ld.shared.v4.f32` that every lane reads at the same 16 bytes: 2 wavefronts a warp on
/// the H200 (measured, `probe1.ncu.csv` `k128<0>`) and on the other GPUs since compute 3.x, to
/// which the H200's rule is applied; Fermi (`c2050.toml`) keeps the CUDA guide's quarter-warp
/// requests for 128-bit accesses (CUDA C Programming Guide 4.2 §F.4.3): 4 a warp.
#[test]
fn a_16_byte_broadcast_takes_the_rule_of_its_gpu() {
    let w =
        Workload::resolve(&format!("{ROOT}/tests/fixtures/vector_banks/bcast_v4.toml")).unwrap();
    let warps = 4;
    for (config, per_warp) in [("h200", 2), ("rtx3090", 2), ("c2050", 4)] {
        let cfg = GpuConfig::load(Path::new(&format!("{ROOT}/configs/{config}.toml"))).unwrap();
        let run = run_workload(&cfg, &w, &Options::default()).unwrap();
        let c = &run.launches[0].counters;
        assert_eq!(c.shared_ld_inst, warps, "{config}");
        assert_eq!(c.shared_ld_wavefronts, per_warp * warps, "{config}");
        assert_eq!(c.shared_ld_conflicts, 0, "{config}");
    }
}

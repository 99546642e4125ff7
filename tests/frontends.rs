//! The simulator accepts PTX from NVRTC and from clang for the same CUDA source, and the two give
//! the same counters: the memory behaviour is a property of the kernel, not of the compiler
//! (DESIGN.md: "The simulator must accept PTX from nvcc, NVRTC and clang").

use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::{Source, Workload};

fn config(name: &str) -> GpuConfig {
    GpuConfig::load(std::path::Path::new(&format!(
        "{}/../configs/{name}",
        env!("CARGO_MANIFEST_DIR")
    )))
    .expect("shipped config loads")
}

/// The bundled workload `name`, its `ptx` pointed at `ptx` (relative to `kernels/`).
fn with_ptx(name: &str, ptx: &str) -> Workload {
    let w = gpumemsim::workload(name).expect("bundled workload");
    assert!(
        w.toml.contains("\"ptx/add_constant.ptx\""),
        "{name} names ptx/add_constant.ptx"
    );
    let text = w
        .toml
        .replace("\"ptx/add_constant.ptx\"", &format!("\"{ptx}\""));
    Workload::from_toml_str(&text, Source::Bundled(w.path.to_string())).expect("workload parses")
}

#[test]
fn nvrtc_and_clang_ptx_give_identical_counters() {
    let opts = Options {
        sets: vec![("n".into(), 20_000)],
        keep_outputs: true,
        ..Default::default()
    };
    for cfg in [config("rtx3090.toml"), config("h200.toml")] {
        for name in [
            "one_access_per_block",
            "one_access_per_warp",
            "one_access_per_thread",
            "pseudo_random",
        ] {
            let nvrtc = run_workload(&cfg, &with_ptx(name, "ptx/add_constant.ptx"), &opts)
                .expect("NVRTC PTX runs");
            let clang = run_workload(&cfg, &with_ptx(name, "ptx/clang/add_constant.ptx"), &opts)
                .expect("clang PTX runs");
            assert_eq!(nvrtc.launches.len(), 2);
            for (a, b) in nvrtc.launches.iter().zip(&clang.launches) {
                assert_eq!(
                    a.outputs, b.outputs,
                    "{name}/{}: outputs differ between NVRTC and clang PTX",
                    a.label
                );
                let (mut ca, mut cb) = (a.counters.clone(), b.counters.clone());
                // Instruction counts, and the uniform parameter loads that idc/imc also count, are
                // the compilers' own (NVRTC loads every parameter before the bounds check, clang
                // after it); the memory counters must agree.
                for c in [&mut ca, &mut cb] {
                    c.inst_executed = 0;
                    c.idc_requests = 0;
                    c.idc_hits = 0;
                    c.imc_requests = 0;
                }
                assert_eq!(
                    ca, cb,
                    "{name}/{} on {}: counters differ between NVRTC and clang PTX",
                    a.label, cfg.gpu.name
                );
            }
        }
    }
}

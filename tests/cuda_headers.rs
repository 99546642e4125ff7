//! CUDA headers and compiler options for NVRTC (issue 39): `tests/fixtures/tensor/headers.cu`
//! includes `cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h`, `cuda_pipeline.h`,
//! `cuda/pipeline`, `cuda/barrier` and `mma.h`, which the simulator finds in the PyPI wheels
//! (`sim::compile::headers`; `.ci/run` installs them), and stops with `#error` unless the
//! workload's `nvrtc_options` define `TILE`. Needs NVRTC, as `tests/user_kernel.rs` does.

mod common;

use common::root;
use half::f16;
use sim::compile::{self, Compiler};
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

fn nvrtc_options(extra: &[&str]) -> Options {
    Options {
        keep_outputs: true,
        compiler: Compiler::Nvrtc,
        nvrtc_options: extra.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn workload() -> Workload {
    let p = root().join("tests/fixtures/tensor/headers.toml");
    Workload::resolve(p.to_str().unwrap()).unwrap()
}

#[test]
fn the_wheels_headers_and_the_workloads_options_reach_nvrtc() {
    assert!(
        compile::nvrtc_available(),
        "NVRTC is needed: {}",
        compile::NVRTC_HINT
    );
    let dirs = compile::headers::cuda_include_dirs();
    assert!(
        dirs.iter().any(|d| d.join("cuda_fp16.h").is_file())
            && dirs.iter().any(|d| d.join("cuda/pipeline").is_file())
            && dirs.iter().any(|d| d.join("crt/mma.h").is_file()),
        "headers not found in {dirs:?}: {}",
        compile::headers::HEADERS_HINT
    );
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let run =
        run_workload(&cfg, &workload(), &nvrtc_options(&[])).unwrap_or_else(|e| panic!("{e}"));
    let out = |name: &str| -> Vec<u8> {
        let l = &run.launches[0];
        l.outputs.iter().find(|(n, _)| n == name).unwrap().1.clone()
    };
    let ints: Vec<i32> = out("out")
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let halves: Vec<u16> = out("half")
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(ints.len(), 256);
    for (i, (&v, &h)) in ints.iter().zip(&halves).enumerate() {
        // TILE = 7 from the workload's nvrtc_options; 128 threads a block, 32 a tile.
        let want = 7 * (i % 128) as i32 + (i % 32) as i32;
        assert_eq!(v, want, "out[{i}]");
        assert_eq!(h, f16::from_f32(want as f32).to_bits(), "half[{i}]");
    }
}

#[test]
fn command_line_options_come_after_the_workloads() {
    assert!(compile::nvrtc_available(), "{}", compile::NVRTC_HINT);
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    // `-UTILE` after the workload's `-DTILE=7` undefines it: the source's `#error` fires.
    let Err(e) = run_workload(&cfg, &workload(), &nvrtc_options(&["-UTILE"])) else {
        panic!("TILE undefined: the compilation must fail");
    };
    let e = e.to_string();
    assert!(e.contains("TILE must be defined"), "{e}");
    assert!(e.contains("nvrtc_options"), "{e}");
    // clang takes no NVRTC-only option: an error naming it, before compiling.
    let e = compile::compile_cuda(
        "x.cu",
        "__global__ void k() {}",
        None,
        (9, 0),
        Compiler::Clang,
        &["--use_fast_math".to_string()],
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        e.contains("`--use_fast_math` is NVRTC's") || e.contains("clang not found"),
        "{e}"
    );
}

//! The instructions added for "any kernel" coverage, executed end to end: a hand-written PTX
//! fixture (`tests/fixtures/coverage.ptx`) whose every result is known, and the counters its
//! atomics must produce under their Nsight Compute names.

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn coverage_fixture_computes_the_hand_computed_results() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::resolve(
        root()
            .join("tests/fixtures/coverage.toml")
            .to_str()
            .unwrap(),
    )
    .unwrap();
    let run = run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let l = &run.launches[0];
    let output = |name: &str| {
        l.outputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .unwrap()
    };
    let out = u32s(&output("out"));
    for g in 0..128u32 {
        let (tid, lane) = (g % 64, g % 32);
        let warp_first = g / 32 * 32 % 64;
        let want = [
            g,
            tid % 16,
            tid,
            g.wrapping_add(0xFFFF_FFFF),
            g + u32::from(g >= 1),
            3 * g,
            0xCC00_0000 | (g >> 8 & 0xFF) << 16 | 0xDD00 | (g & 0xFF),
            32 + 1000,
            0xF << (lane & !3),
            (warp_first..warp_first + 32).sum(),
        ];
        let got = &out[g as usize * 10..][..10];
        assert_eq!(got, want, "thread {g}");
    }
    assert_eq!(u32s(&output("counters")), [128, 127 * 128 / 2, 127, 0]);
    assert_eq!(output("fsum"), 64.0f32.to_le_bytes());

    let c = &l.counters;
    // 4 warps; `atom.global.max` with an unused result is a reduction, as ptxas makes it.
    assert_eq!(c.global_atom_inst, 4);
    assert_eq!(c.global_red_inst, 12);
    assert_eq!(c.shared_atom_inst, 8);
    assert_eq!((c.global_atom_requests, c.global_atom_sectors), (4, 4));
    assert_eq!((c.global_red_requests, c.global_red_sectors), (12, 12));
    assert_eq!((c.l2_atom_sectors, c.l2_red_sectors), (4, 12));
    // Every lane of a warp updates the same shared word: 32 wavefronts each, and the CAS two
    // per lane (ubench U: validate/measurements/h200/ubench/README.md).
    assert_eq!(c.shared_atom_wavefronts, 4 * 32 + 4 * 2 * 32);
    let json = sim::report::launch_metrics(l);
    let metric = |k: &str| json.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(
        metric("smsp__sass_inst_executed_op_global_atom.sum"),
        Some(4.0)
    );
    assert_eq!(
        metric("smsp__sass_inst_executed_op_global_red.sum"),
        Some(12.0)
    );
    assert_eq!(
        metric("smsp__sass_inst_executed_op_shared_atom.sum"),
        Some(8.0)
    );
    assert_eq!(
        metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"),
        Some(384.0)
    );
}

/// Distance in units in the last place between two finite doubles of the same sign.
fn ulps64(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64).abs_diff(b.to_bits() as i64)
}

#[test]
fn math_library_calls_and_directed_rounding_match_the_host_within_the_documented_ulps() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::resolve(root().join("tests/fixtures/libm.toml").to_str().unwrap()).unwrap();
    let run = run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let l = &run.launches[0];
    let out = |name: &str| -> Vec<u8> {
        l.outputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .unwrap()
    };
    let f64s = |b: Vec<u8>| -> Vec<f64> {
        b.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let x = f64s(
        sim::workload::init::build("random:5", sim::workload::init::Elem::F64, 1024, &|_, _| {
            Err(String::new())
        })
        .unwrap(),
    );
    let (small, large, pow) = (
        f64s(out("sin_small")),
        f64s(out("sin_large")),
        f64s(out("pow_out")),
    );
    let exp: Vec<f32> = out("exp_out")
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // CUDA C++ Programming Guide, "Mathematical Functions": sin 2 ulp, pow 2 ulp, expf 2 ulp
    // (against the correctly rounded result; the host's libm is within 1 ulp of it).
    for i in 0..1024 {
        let v = x[i];
        assert!(
            ulps64(small[i], (v * 6.0).sin()) <= 3,
            "sin({}) = {}",
            v * 6.0,
            small[i]
        );
        assert!(
            ulps64(large[i], (v * 1e12).sin()) <= 3,
            "sin({}) = {}",
            v * 1e12,
            large[i]
        );
        assert!(
            ulps64(pow[i], (v + 1.0).powf(1.5)) <= 3,
            "pow({}, 1.5) = {}",
            v + 1.0,
            pow[i]
        );
        // NVRTC contracts `x * 20 - 10` into one fma (nvcc's default -fmad=true).
        let e = (v as f32).mul_add(20.0, -10.0).exp();
        assert!(
            (exp[i].to_bits() as i64).abs_diff(e.to_bits() as i64) <= 3,
            "expf = {} vs {e}",
            exp[i]
        );
    }
}

#[test]
fn nvidia_128_bit_division_routine_computes_exact_results() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::resolve(root().join("tests/fixtures/wide.toml").to_str().unwrap()).unwrap();
    let run = run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let u64s = |name: &str| -> Vec<u64> {
        run.launches[0]
            .outputs
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let a: Vec<u64> =
        sim::workload::init::build("random:4", sim::workload::init::Elem::U64, 512, &|_, _| {
            Err(String::new())
        })
        .unwrap()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want_mod: Vec<u64> = a
        .iter()
        .map(|&x| ((u128::from(x) * u128::from(x)) % 1_000_000_007) as u64)
        .collect();
    let want_div: Vec<u64> = a
        .iter()
        .map(|&x| x / 12_345_678_901 + x % 1_000_003)
        .collect();
    assert_eq!(u64s("mod128"), want_mod);
    assert_eq!(u64s("div64"), want_div);
}

fn run_fixture(toml: &str) -> sim::Result<sim::run::WorkloadRun> {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::resolve(root().join(toml).to_str().unwrap()).unwrap();
    run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
}

/// Issue 39: `warpSize` reaches PTX as the predefined constant WARP_SZ (NVRTC's own output).
#[test]
fn warp_sz_is_the_warp_size() {
    let run = run_fixture("tests/fixtures/warp_sz.toml").unwrap_or_else(|e| panic!("{e}"));
    let out = u32s(&run.launches[0].outputs[0].1);
    let want: Vec<u32> = (0..96).map(|t| t / 32 * 100 + t % 32).collect();
    assert_eq!(out, want);
}

/// Issue 39: a texture fetch is no lexer error and does not fail the module; a launch that
/// passes its kernel a number that is no texture object's handle (here 0) is the error, naming
/// the file, line and instruction.
#[test]
fn a_fetch_from_no_texture_object_fails_only_the_launch_of_its_kernel() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/warp_sz.ptx")).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("tex.1d.v4.f32.s32"))
        .unwrap()
        + 1;
    let m = sim::ptx::parse(&text, "warp_sz.ptx").unwrap_or_else(|e| panic!("{e}"));
    assert!(m.entry("gather").is_some() && m.entry("warp_index").is_some());
    let Err(e) = run_fixture("tests/fixtures/texture.toml") else {
        panic!("gather cannot run");
    };
    let e = e.to_string();
    for part in [
        "0x0 is not the handle of one of the workload's 0 texture and surface objects".to_string(),
        format!("PTX line {line}: "),
        "`tex.1d.v4.f32.s32".to_string(),
    ] {
        assert!(e.contains(&part), "{part} not in: {e}");
    }
}

/// Issue 40: `shfl.sync d|p` (PTX ISA "shfl.sync": `d[|p]`) writes `p` true where the source
/// lane is in range, and `d` the lane's own `a` where it is not. One warp, `a` = lane: down by
/// 4 (clamp 31), and up by 3 within segments of 8 lanes (`c` = 0x1800: segment mask 24, clamp
/// 0). ptxas refuses the braces `{%r2, %p2}` (unit test in sim::ptx::decode::operands).
#[test]
fn shfl_writes_its_predicate_output_true_for_lanes_in_range() {
    let run = run_fixture("tests/fixtures/shfl_pred.toml").unwrap_or_else(|e| panic!("{e}"));
    let out = u32s(&run.launches[0].outputs[0].1);
    let mut want = vec![];
    for lane in 0..32u32 {
        let down = lane + 4 <= 31;
        let up = lane % 8 >= 3;
        want.extend([
            if down { lane + 4 } else { lane },
            u32::from(down),
            if up { lane - 3 } else { lane },
            u32::from(up),
        ]);
    }
    assert_eq!(out, want);
    // Exact counts where the rule is exact: 28 lanes in range going down, 5 of 8 going up.
    assert_eq!(out.iter().skip(1).step_by(4).sum::<u32>(), 28);
    assert_eq!(out.iter().skip(3).step_by(4).sum::<u32>(), 20);
}

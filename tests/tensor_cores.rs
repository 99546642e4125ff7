//! Tensor cores and asynchronous copies end to end (issue 39): the kernels of
//! `tests/fixtures/tensor/` (compiled from their `.cu` by NVRTC 12.9 for sm_90 with the CUDA
//! headers of the PyPI wheels; the PTX is committed beside them, `make_ptx.sh`) run on small
//! integers, and every output is recomputed here by plain integer matrix products: exact, so the
//! order of the hardware's additions does not matter. The LDGSTS and LDSM counts are derived by
//! hand from the kernels' access patterns (the comments give the derivations) and the rules of
//! `exec::mem::tensor`: one wavefront per 8x8 matrix whose 8 rows of 16 bytes fall in distinct
//! banks, a shared store's phases for the copies' writes.

mod common;

use common::root;
use half::{bf16, f16};
use sim::config::GpuConfig;
use sim::run::{run_workload, LaunchResult, Options};
use sim::workload::Workload;

fn run(name: &str) -> Vec<LaunchResult> {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let p = root().join(format!("tests/fixtures/tensor/{name}.toml"));
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .launches
}

fn output(l: &LaunchResult, name: &str) -> Vec<u32> {
    common::output_words(l, name)
}

fn ints(l: &LaunchResult, name: &str) -> Vec<i64> {
    output(l, name)
        .into_iter()
        .map(|v| i64::from(v as i32))
        .collect()
}

/// `a` (m x k) times `b` (k x n) plus `c` (m x n, or zeros), row-major, exactly.
fn matmul(a: &[i64], b: &[i64], c: Option<&[i64]>, m: usize, n: usize, k: usize) -> Vec<i64> {
    (0..m * n)
        .map(|x| {
            let (i, j) = (x / n, x % n);
            (0..k).map(|y| a[i * k + y] * b[y * n + j]).sum::<i64>() + c.map_or(0, |c| c[x])
        })
        .collect()
}

fn metric(l: &LaunchResult, name: &str) -> u64 {
    l.counters
        .metric_counts()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .1
}

#[test]
fn cp_async_sgemm_is_exact_and_counted_as_ldgsts() {
    let l = &run("cp_async")[0];
    let (m, n, k) = (32, 32, 40);
    let (a, b) = (ints(l, "A"), ints(l, "B"));
    let want = matmul(&a, &b, None, m, n, k);
    let c: Vec<f32> = output(l, "C").into_iter().map(f32::from_bits).collect();
    for (x, (&got, &want)) in c.iter().zip(&want).enumerate() {
        assert_eq!(got, want as f32, "C[{}][{}]", x / n, x % n);
    }
    // 4 blocks of 8 warps, 3 stages (K = 40, 16 a stage). A: one 4-byte `.ca` copy a warp and
    // stage, two in the last stage (k < K and the zero-fill branch diverge): 4 x 8 x 4 = 128.
    // B: 16-byte `.cg` copies by warps 0 and 1 only (tid < 64): 4 x 2 x 3 = 24.
    // With the SASS (ptxas and nvdisasm found), `smsp__inst_executed_op_ldgsts` also counts the
    // 64 LDGSTS whose lanes are all predicated off, the zero-fill twins ptxas if-converts into
    // stages 1 and 2, which the `sm__sass_*` counts below leave out: 216, as the H200 reads
    // (tests/fixtures/tensor/h200/report.json); without it, the PTX's 152 `cp.async`.
    let issued = if l.instructions_source.is_some() {
        216
    } else {
        152
    };
    assert_eq!(metric(l, "smsp__inst_executed_op_ldgsts.sum"), issued);
    assert_eq!(
        metric(l, "sm__sass_inst_executed_op_ldgsts_cache_access.sum"),
        128
    );
    assert_eq!(
        metric(l, "sm__sass_inst_executed_op_ldgsts_cache_bypass.sum"),
        24
    );
    // `.ca`: half a warp reads 16 ints of a 160-byte row, 2 sectors, 4 a warp; in the last stage
    // 8 ints (1 sector a half) and the zero-filled lanes read nothing: 4 x 8 x (4 + 4 + 2) = 320
    // sectors in 4 x 8 x 3 = 96 requests. `.cg`: 8 rows of 64 bytes (16 sectors) a warp, warp
    // 1's rows past K in the last stage read nothing: 4 x (16 + 16 + 16 + 16 + 16) = 320 sectors
    // in 4 x 5 = 20 requests.
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"
        ),
        116
    );
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"
        ),
        640
    );
    assert_eq!(
        metric(
            l,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum"
        ),
        320
    );
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"
        ),
        320
    );
    // Shared writes by the measured LDGSTS rule (sim::memory::ldgsts, ubench Q): a `.ca` warp
    // takes the most lanes on one bank of its global rows (160 bytes apart: 2) or its shared
    // bytes, a `.cg` warp one wavefront per global row (4 rows of 64 bytes at one shared offset
    // each: at most 8 per warp here). The H200 reads 368 wavefronts (tests/fixtures/tensor/h200); an
    // H100 367, of which 190 `.ca` (here 192) and 176 `.cg` (here 176), and 63 `.ca` conflicts
    // (validate/measurements/h200/ubench/h100_2026-12-07/second/cp_async_ncu.csv).
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"
        ),
        368
    );
    assert_eq!(
        metric(
            l,
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
        ),
        64
    );
    // L1TEX counts the copies' global reads as global loads too, but not as load instructions:
    // the H200 reads 116 requests and 640 sectors, all lookup misses, in `..._global_op_ld`
    // (tests/fixtures/tensor/h200/report.json).
    assert_eq!(
        metric(l, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        116
    );
    assert_eq!(
        metric(l, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        640
    );
    assert_eq!(
        metric(
            l,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"
        ),
        640
    );
    assert_eq!(metric(l, "smsp__sass_inst_executed_op_global_ld.sum"), 0);
}

#[test]
fn ldmatrix_fed_mma_gemm_is_exact_and_the_swizzle_removes_the_conflicts() {
    let ls = run("mma");
    let (m, n, k) = (32, 16, 64);
    let (a, b) = (ints(&ls[0], "A"), ints(&ls[0], "B"));
    let want = matmul(&a, &b, None, m, n, k);
    for (l, buf) in [(&ls[0], "C"), (&ls[1], "C_swizzled")] {
        let c: Vec<f32> = output(l, buf).into_iter().map(f32::from_bits).collect();
        for (x, (&got, &want)) in c.iter().zip(&want).enumerate() {
            assert_eq!(got, want as f32, "{buf}[{}][{}]", x / n, x % n);
        }
    }
    // 4 blocks of one warp, 4 k-steps, one ldmatrix.x4 (A) and one .x2.trans (B) each.
    for l in &ls[..2] {
        assert_eq!(metric(l, "smsp__sass_inst_executed_op_ldsm.sum"), 32);
    }
    // Unswizzled, A's 8 rows of a matrix are 128 bytes apart: the same 4 banks, 8 wavefronts a
    // matrix, 32 an x4 (28 conflicts); B's rows are contiguous: 2 wavefronts an x2.
    let l = &ls[0];
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"
        ),
        16 * 32 + 16 * 2
    );
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"
        ),
        16 * 28
    );
    // Chunk c of row r at c ^ (r % 8): 8 rows in 8 distinct bank groups, 4 wavefronts an x4.
    let l = &ls[1];
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"
        ),
        16 * 4 + 16 * 2
    );
    assert_eq!(
        metric(
            l,
            "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"
        ),
        0
    );
}

#[test]
fn every_mma_form_is_exact() {
    let ls = run("mma");
    let l = &ls[2];
    let (fa, fb, fc) = (ints(l, "FA"), ints(l, "FB"), ints(l, "FC"));
    let forms = output(l, "forms");
    let form = |f: usize| &forms[f * 128..(f + 1) * 128];
    // A's first 8 or 16 columns, B's first rows: the k8 and k16 forms use part of A and B.
    let cols = |k: usize| -> Vec<i64> { (0..16 * k).map(|x| fa[(x / k) * 32 + x % k]).collect() };
    let rows = |k: usize| -> Vec<i64> { fb[..k * 8].to_vec() };
    let k16 = matmul(&cols(16), &rows(16), Some(&fc), 16, 8, 16);
    let k8 = matmul(&cols(8), &rows(8), Some(&fc), 16, 8, 8);
    let f32s = |f: usize| -> Vec<f32> { form(f).iter().map(|&v| f32::from_bits(v)).collect() };
    // bf16 and f16 hold these integers exactly.
    assert!(fa
        .iter()
        .chain(&fb)
        .all(|&v| bf16::from_f32(v as f32).to_f32() == v as f32));
    for (x, want) in k16.iter().enumerate() {
        assert_eq!(f32s(0)[x], *want as f32, "bf16 m16n8k16 D[{x}]");
        assert_eq!(
            form(1)[x],
            u32::from(f16::from_f32(*want as f32).to_bits()),
            "f16 m16n8k16 D[{x}]"
        );
    }
    for (x, want) in k8.iter().enumerate() {
        assert_eq!(f32s(2)[x], *want as f32, "f16 m16n8k8 D[{x}]");
        assert_eq!(f32s(3)[x], *want as f32, "tf32 m16n8k8 D[{x}]");
    }
    // s8 x u8: A's values as s8, B's as u8 (0..15 here, the same either way).
    let k32 = matmul(&fa, &fb, Some(&fc), 16, 8, 32);
    for (x, want) in k32.iter().enumerate() {
        assert_eq!(form(4)[x] as i32, *want as i32, "s8 m16n8k32 D[{x}]");
    }
    assert_eq!(l.counters.mma_inst, 5);
}

#[test]
fn wmma_gemm_is_exact_in_both_store_layouts() {
    let ls = run("wmma");
    let (m, n, k) = (32, 48, 64);
    let (a, bt) = (ints(&ls[0], "A"), ints(&ls[1], "Bt"));
    // Bt is B transposed (n x k): B[y][j] = Bt[j][y].
    let b: Vec<i64> = (0..k * n).map(|x| bt[(x % n) * k + x / n]).collect();
    let want = matmul(&a, &b, None, m, n, k);
    let c: Vec<f32> = output(&ls[2], "C")
        .into_iter()
        .map(f32::from_bits)
        .collect();
    let ccol: Vec<f32> = output(&ls[3], "Ccol")
        .into_iter()
        .map(f32::from_bits)
        .collect();
    for (x, &want) in want.iter().enumerate() {
        let (i, j) = (x / n, x % n);
        assert_eq!(c[x], want as f32, "C[{i}][{j}]");
        assert_eq!(
            ccol[j * m + i],
            want as f32,
            "Ccol[{i}][{j}] (column-major)"
        );
    }
    // 6 blocks of one warp, K / 16 = 4 steps: one wmma.mma each.
    assert_eq!(ls[2].counters.mma_inst, 24);
    // The GPU's fragment layout (mma.m16n8k16's) gives the accesses ptxas emits for sm_90 and
    // Nsight Compute's counts on the H200 (tests/fixtures/tensor/h200/report.json): per f16
    // fragment 4 LDG.E whose 8 rows of 16 bytes are 8 sectors; per row-major f32 store 4
    // STG.E.64, per column-major one 8 STG.E, 32 sectors each. 48 fragment loads, 6 stores.
    for l in [&ls[2], &ls[3]] {
        let ld = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
        let sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
        assert_eq!(
            (metric(l, ld), metric(l, sectors)),
            (192, 1536),
            "{}",
            l.label
        );
        let st = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
        assert_eq!(metric(l, st), 192, "{}", l.label);
    }
    let st = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
    assert_eq!((metric(&ls[2], st), metric(&ls[3], st)), (24, 48));
}

/// `stmatrix` (hand-written PTX): register i of lane l holds the ids `64 i + 2 l` (low half) and
/// `64 i + 2 l + 1`; by the PTX ISA's fragment rule lane l's register is row `l / 4`, columns
/// `2 (l % 4)` and the next of matrix i (with `.trans`, column `l / 4` of rows `2 (l % 4)` and
/// the next), and matrix i's row r goes to the row address of lane `8 i + r`.
#[test]
fn stmatrix_stores_the_isas_fragments() {
    let ls = run("stmatrix");
    let halves = |l: &LaunchResult, name: &str| -> Vec<u16> {
        let b = &l.outputs.iter().find(|(n, _)| n == name).unwrap().1;
        b.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    let (plain, trans) = (halves(&ls[0], "plain"), halves(&ls[1], "trans"));
    for i in 0..4 {
        for r in 0..8 {
            for c in 0..8 {
                let at = (8 * i + r) * 8 + c;
                let (lane, half) = (4 * r + c / 2, c % 2);
                assert_eq!(
                    plain[at] as usize,
                    64 * i + 2 * lane + half,
                    "plain m{i} ({r},{c})"
                );
                let (lane, half) = (4 * c + r / 2, r % 2);
                assert_eq!(
                    trans[at] as usize,
                    64 * i + 2 * lane + half,
                    "trans m{i} ({r},{c})"
                );
            }
        }
    }
    // 32 contiguous rows of 16 bytes: one wavefront a matrix.
    assert_eq!(ls[0].counters.stsm_inst, 1);
    assert_eq!(ls[0].counters.stsm_wavefronts, 4);
}

#[test]
fn a_bulk_copy_pipeline_with_mbarriers_is_exact() {
    // cp.async.bulk global->shared completing an mbarrier's bytes, try_wait.parity over two
    // stages (phases 0, 1, 0 of each), bulk shared->global stores: out = 2 in + 1.
    let l = &run("bulk_copy")[0];
    let (input, out) = (output(l, "in"), output(l, "out"));
    assert_eq!(input.len(), 2 * 5 * 1024);
    for (k, (&x, &y)) in input.iter().zip(&out).enumerate() {
        let want = f32::from_bits(x) * 2.0 + 1.0;
        assert_eq!(f32::from_bits(y), want, "out[{k}]");
    }
}

#[test]
fn mbarrier_and_bulk_copies_need_sm_90() {
    let cfg = GpuConfig::load(&root().join("configs/a100.toml")).unwrap();
    let p = root().join("tests/fixtures/tensor/bulk_copy.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let e = run_workload(&cfg, &w, &Options::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("uses `mbarrier`, which needs compute capability 9.0 (sm_90)")
            && e.contains("is 8.0"),
        "{e}"
    );
}

#[test]
fn an_mbarrier_phase_that_never_completes_stops_the_launch() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let p = root().join("tests/fixtures/tensor/mbarrier_deadlock.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let e = run_workload(&cfg, &w, &Options::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("found its phase incomplete 65536 times in a row") && e.contains("deadlock"),
        "{e}"
    );
}

/// The latency-bound cycles of mma_pipe's launches `only` (tests/fixtures/tensor/pipe/pipe.toml, 4 warps for
/// the ILP-8 launches: one per sub-partition) on the H200 config with `sets` made to it.
fn pipe_cycles(only: &[&str], sets: &[(&str, &str)]) -> Vec<u64> {
    let path = root().join("configs/h200.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg = GpuConfig::from_toml_str_with(&text, "configs/h200.toml", &sets).unwrap();
    assert_eq!(
        (
            cfg.tensor.form[0].shape.as_str(),
            cfg.tensor.form[0].ab_type.as_str()
        ),
        ("m16n8k16", "f16")
    );
    let p = root().join("tests/fixtures/tensor/pipe/pipe.toml");
    let w = Workload::resolve(p.to_str().unwrap()).unwrap();
    let opts = Options {
        only: only.iter().map(|s| s.to_string()).collect(),
        sets: vec![("warps".into(), 4)],
        ..Default::default()
    };
    let r = run_workload(&cfg, &w, &opts).unwrap_or_else(|e| panic!("{e}"));
    // The replay's cycles (the latency bound, which sets these launches' time).
    r.launches
        .iter()
        .map(|l| {
            assert_eq!(l.timing.bound, "latency");
            let (_, c) = l
                .timing
                .bounds
                .iter()
                .find(|(n, _)| *n == "latency")
                .unwrap();
            *c as u64
        })
        .collect()
}

#[test]
fn mma_pipe_chains_pay_the_latency_and_independent_mmas_the_issue_interval() {
    // mma_pipe.cu's kernel: 1024 rounds of ILP mma.sync m16n8k16 f16 -> f32 per warp. One
    // warp, one accumulator: each of the 1024 waits for the one before, so a cycle more of
    // latency is 1024 cycles more. Four warps of 8 accumulators, one warp per sub-partition:
    // each pipe takes 8192 mma back to back (8 x issue_cycles 8 > latency), so a cycle more
    // of issue is 8192 cycles more, and the latency changes only the last one's wait.
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let f = &cfg.tensor.form[0];
    assert!(8 * f.issue_cycles > f.latency_cycles);
    let only = ["f16_k16_ilp1", "f16_k16_ilp8"];
    let base = pipe_cycles(&only, &[]);
    let lat = (f.latency_cycles + 1).to_string();
    let lat = pipe_cycles(&only, &[("tensor.form[0].latency_cycles", &lat)]);
    let issue = (f.issue_cycles + 1).to_string();
    let issue = pipe_cycles(&only, &[("tensor.form[0].issue_cycles", &issue)]);
    assert_eq!(lat[0] - base[0], 1024);
    assert_eq!(issue[0], base[0]);
    // Up to 64 of the 8192 intervals are off the critical path: the end is set by the
    // epilogue's chain of 32 dependent adds, which starts from the first accumulator (its last
    // mma issued 7 intervals before the warp's last).
    let d = issue[1] - base[1];
    assert!((8192 - 64..=8192).contains(&d), "{d}");
    assert!(lat[1] - base[1] <= 1, "{lat:?} {base:?}");
}

#[test]
fn an_mma_form_the_gpu_lacks_is_refused_at_its_launch() {
    // The V100 (sm_70) has wmma m16n16k16 but no mma.m16n8k16; the K40 no tensor cores.
    let run_on = |config: &str, fixture: &str| {
        let cfg = GpuConfig::load(&root().join(format!("configs/{config}.toml"))).unwrap();
        let p = root().join(format!("tests/fixtures/tensor/{fixture}.toml"));
        let w = Workload::resolve(p.to_str().unwrap()).unwrap();
        run_workload(&cfg, &w, &Options::default()).map(|_| ())
    };
    let e = run_on("v100", "mma").unwrap_err().to_string();
    assert!(
        e.contains("launch[0]")
            && e.contains("`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f9,")
            && e.contains("tests/fixtures/tensor/mma.ptx:362)")
            && e.contains(
                "configs/v100.toml (Tesla V100-SXM2-16GB, compute capability 7.0) has no \
                 [[tensor.form]] with shape = \"m16n8k16\", ab_type = \"f16\", cd_type = \"f32\""
            ),
        "{e}"
    );
    let e = run_on("k40", "wmma").unwrap_err().to_string();
    assert!(
        e.contains("launch[2]") && e.contains("shape = \"m16n16k16\"") && e.contains("nor shape"),
        "{e}"
    );
    run_on("v100", "wmma").unwrap();
}

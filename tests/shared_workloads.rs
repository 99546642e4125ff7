//! The bundled shared-memory workloads: every one runs on every config and computes what the
//! CUDA kernel computes, and the bank counts are the textbook's ("Professional CUDA C
//! Programming", ch. 5): the column read of a 32x32 int tile is a 32-way conflict with 4-byte
//! banks and 16-way with Kepler's 8-byte banks, and one word of padding removes it (4-byte banks).

use sim::config::GpuConfig;
use sim::metrics::Counters;
use sim::run::{run_workload, Options, WorkloadRun};
use sim::workload::Workload;

/// Every shipped config except the compute 1.3 C1060, whose 512-thread block limit rejects the
/// 32x32 blocks of smem_square (tested on its own below).
const CONFIGS: [&str; 7] = [
    "rtx3090.toml",
    "h200.toml",
    "a100.toml",
    "v100.toml",
    "t4.toml",
    "k40.toml",
    "c2050.toml",
];
/// Workloads whose blocks fit compute 1.x (at most 512 threads).
const FIT_1X: [&str; 5] = [
    "smem_rectangle",
    "smem_stride",
    "smem_stride_8byte",
    "transpose_smem",
    "reduce",
];

fn config(name: &str) -> GpuConfig {
    let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
    GpuConfig::load(std::path::Path::new(&path)).expect("shipped config loads")
}

fn run(cfg: &GpuConfig, workload: &str, sets: &[(&str, i64)]) -> WorkloadRun {
    let w = Workload::resolve(workload).expect("bundled workload");
    let sets = sets.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    run_workload(
        cfg,
        &w,
        &Options {
            sets,
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{workload} on {}: {e}", cfg.path))
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The one output buffer of a launch, as i32.
fn output(run: &WorkloadRun, label: &str) -> Vec<i32> {
    let l = run
        .launches
        .iter()
        .find(|l| l.label == label)
        .unwrap_or_else(|| panic!("launch {label}"));
    assert_eq!(l.outputs.len(), 1, "{label}: one output buffer");
    i32s(&l.outputs[0].1)
}

fn counters<'a>(run: &'a WorkloadRun, label: &str) -> &'a Counters {
    &run.launches
        .iter()
        .find(|l| l.label == label)
        .unwrap_or_else(|| panic!("launch {label}"))
        .counters
}

#[test]
fn smem_square_computes_the_kernels_results_on_every_config() {
    // Thread (tx, ty) writes idx = ty * 32 + tx; row reads give back idx, column reads the
    // transposed index tx * 32 + ty.
    let identity: Vec<i32> = (0..1024).collect();
    let transposed: Vec<i32> = (0..1024).map(|i| (i % 32) * 32 + i / 32).collect();
    for c in CONFIGS {
        for w in ["smem_square", "smem_square_8byte"] {
            let r = run(&config(c), w, &[]);
            for (label, want) in [
                ("row_row", &identity),
                ("col_col", &identity),
                ("row_col", &transposed),
                ("row_col_pad", &transposed),
                ("row_col_dyn", &transposed),
                ("row_col_dyn_pad", &transposed),
            ] {
                assert_eq!(&output(&r, label), want, "{w}/{label} on {c}");
            }
        }
    }
}

#[test]
fn smem_rectangle_computes_the_kernels_results_on_every_config() {
    // 32x16 block; the column read returns tile[idx % 16][idx / 16] = (idx % 16) * 32 + idx / 16.
    let identity: Vec<i32> = (0..512).collect();
    let col: Vec<i32> = (0..512).map(|i| (i % 16) * 32 + i / 16).collect();
    for c in CONFIGS {
        let r = run(&config(c), "smem_rectangle", &[]);
        for (label, want) in [
            ("row_row", &identity),
            ("col_col", &identity),
            ("row_col", &col),
            ("row_col_pad", &col),
            ("row_col_dyn", &col),
            ("row_col_dyn_pad", &col),
        ] {
            assert_eq!(&output(&r, label), want, "smem_rectangle/{label} on {c}");
        }
    }
}

#[test]
fn smem_stride_reads_word_lane_times_stride() {
    for c in CONFIGS {
        for (w, bytes) in [("smem_stride", 4usize), ("smem_stride_8byte", 8)] {
            let r = run(&config(c), w, &[]);
            for l in &r.launches {
                let stride: i64 = l.label[1..].parse().expect("labels are s<stride>");
                let got: Vec<i64> = l.outputs[0]
                    .1
                    .chunks_exact(bytes)
                    .map(|b| {
                        if bytes == 4 {
                            i64::from(i32::from_le_bytes(b.try_into().unwrap()))
                        } else {
                            i64::from_le_bytes(b.try_into().unwrap())
                        }
                    })
                    .collect();
                let want: Vec<i64> = (0..32).map(|k| (k * stride) % (32 * 33)).collect();
                assert_eq!(got, want, "{w}/{} on {c}", l.label);
                // The strided load: 4-byte words take gcd(stride, 32) wavefronts; 8-byte words on
                // 4-byte banks are read a half-warp at a time, each half gcd(stride, 16)-way.
                let want_conflicts = if bytes == 4 {
                    gcd(stride as u64, 32) - 1
                } else {
                    2 * (gcd(stride as u64, 16) - 1)
                };
                assert_eq!(
                    l.counters.shared_ld_conflicts, want_conflicts,
                    "{w}/{} on {c}",
                    l.label
                );
            }
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn transpose_smem_transposes() {
    for c in CONFIGS {
        let n = 64i64;
        let r = run(&config(c), "transpose_smem", &[("n", n)]);
        for l in &r.launches {
            let got: Vec<f32> = l.outputs[0]
                .1
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            // idata[y * n + x] = y * n + x; odata[x * n + y] = idata[y * n + x].
            let want: Vec<f32> = (0..n * n).map(|i| ((i % n) * n + i / n) as f32).collect();
            assert_eq!(got, want, "transpose_smem/{} on {c}", l.label);
        }
        // Without padding each warp's column read of the tile is 32-way: 31 extra wavefronts for
        // each of the 4 reads of a 32x8 block's warps; padding removes them.
        let blocks = (n / 32) * (n / 32);
        assert_eq!(
            counters(&r, "no_pad").shared_ld_conflicts,
            blocks as u64 * 8 * 4 * 31,
            "on {c}"
        );
        assert_eq!(counters(&r, "pad").shared_ld_conflicts, 0, "on {c}");
    }
}

#[test]
fn reduce_sums_each_block() {
    for c in CONFIGS {
        let n = 128 * 40 + 77;
        let r = run(&config(c), "reduce", &[("n", n)]);
        for l in &r.launches {
            let got = i32s(&l.outputs[0].1);
            // Every input is 1: full blocks sum to 128, the last one to the 77 elements left.
            let mut want = vec![128; 40];
            want.push(77);
            assert_eq!(got, want, "reduce/{} on {c}", l.label);
        }
    }
}

#[test]
fn kepler_column_access_is_32_way_with_4_byte_banks_and_16_way_with_8_byte_banks() {
    let k40 = config("k40.toml");
    let four = run(&k40, "smem_square", &[]);
    let eight = run(&k40, "smem_square_8byte", &[]);
    // 32 warps read one column each: 32 wavefronts per read on 4-byte banks, 16 on 8-byte banks.
    for (label, loads_by_column) in [
        ("row_col", true),
        ("row_col_dyn", true),
        ("col_col", true),
        ("row_row", false),
    ] {
        let (c4, c8) = (counters(&four, label), counters(&eight, label));
        assert_eq!(c4.shared_ld_inst, 32, "{label}");
        let (w4, w8) = if loads_by_column { (32, 16) } else { (1, 1) };
        assert_eq!(c4.shared_ld_wavefronts, 32 * w4, "{label}, 4-byte banks");
        assert_eq!(c8.shared_ld_wavefronts, 32 * w8, "{label}, 8-byte banks");
        assert_eq!(
            c4.shared_ld_conflicts,
            32 * (w4 - 1),
            "{label}, 4-byte banks"
        );
        assert_eq!(
            c8.shared_ld_conflicts,
            32 * (w8 - 1),
            "{label}, 8-byte banks"
        );
    }
    // One word of padding removes the 4-byte conflict.
    for label in ["row_col_pad", "row_col_dyn_pad"] {
        assert_eq!(counters(&four, label).shared_ld_conflicts, 0, "{label}");
        assert_eq!(counters(&four, label).shared_st_conflicts, 0, "{label}");
    }
}

#[test]
fn compute_1x_runs_what_fits_and_rejects_1024_thread_blocks_clearly() {
    let c1060 = config("c1060.toml");
    for w in FIT_1X {
        let sets: &[(&str, i64)] = if w == "transpose_smem" {
            &[("n", 64)]
        } else if w == "reduce" {
            &[("n", 1024)]
        } else {
            &[]
        };
        let r = run(&c1060, w, sets);
        assert!(!r.launches.is_empty(), "{w} on c1060");
    }
    // 16 banks: a half-warp at a time. The 32x16 tile's column read is 16-way per half-warp.
    let rect = run(&c1060, "smem_rectangle", &[]);
    assert_eq!(
        output(&rect, "row_col"),
        (0..512)
            .map(|i| (i % 16) * 32 + i / 16)
            .collect::<Vec<i32>>()
    );
    let e = run_workload(
        &c1060,
        &Workload::resolve("smem_square").unwrap(),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("1024 threads per block exceed the GPU's limit of 512"),
        "{e}"
    );
}

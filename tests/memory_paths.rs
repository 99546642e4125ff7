//! Global and local memory paths per architecture, end to end through bundled workloads and
//! fixtures: the documented rules of gpu-parameters.md "Memory-transaction rules".
//!
//! - local memory is interleaved per thread: a warp reading the same local word takes 4 sectors;
//! - Volta and later move 32-byte sectors whether or not loads are cached in L1; `dlcm = "cg"`
//!   (and `.cg`) never hits L1;
//! - Fermi's L1-cached loads move whole 128-byte lines; Kepler caches global loads in L2 only by
//!   default (32-byte segments) but `__ldg` goes through L1.

use sim::config::GpuConfig;
use sim::metrics::Counters;
use sim::run::{run_workload, Options, WorkloadRun};
use sim::workload::{Source, Workload};

fn config(name: &str) -> GpuConfig {
    let path = format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"));
    GpuConfig::load(std::path::Path::new(&path)).expect("shipped config loads")
}

fn run(cfg: &GpuConfig, w: &Workload, n: i64) -> WorkloadRun {
    let sets = if w.params.contains_key("n") {
        vec![("n".to_string(), n)]
    } else {
        vec![]
    };
    run_workload(
        cfg,
        w,
        &Options {
            sets,
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", w.name))
}

fn bundled(name: &str) -> Workload {
    Workload::resolve(name).expect("bundled workload")
}

/// The bundled workload with `dlcm = "cg"` on every launch.
fn with_cg(name: &str) -> Workload {
    let b = gpumemsim::workload(name).unwrap();
    let text = b
        .toml
        .replace("[[launch]]\n", "[[launch]]\ndlcm = \"cg\"\n");
    Workload::from_toml_str(&text, Source::Bundled(b.path.to_string())).unwrap()
}

fn counters<'a>(r: &'a WorkloadRun, label: &str) -> &'a Counters {
    &r.launches
        .iter()
        .find(|l| l.label == label)
        .unwrap_or_else(|| panic!("launch {label}"))
        .counters
}

#[test]
fn local_memory_is_interleaved_per_thread() {
    let path = format!(
        "{}/../tests/fixtures/local_array.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let w = Workload::resolve(&path).unwrap();
    let r = run(&config("h200.toml"), &w, 0);
    let out: Vec<i32> = r.launches[0].outputs[0]
        .1
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(
        out,
        (0..256).map(|i| (i % 128) * 8 + 3).collect::<Vec<i32>>()
    );
    let c = &r.launches[0].counters;
    // 8 warps; 8 stores and one load each, every one touching 4 sectors: word j of lane l sits at
    // (j * 32 + l) * 4, so a warp's accesses to one word are consecutive.
    assert_eq!((c.local_st_requests, c.local_st_sectors), (64, 256));
    assert_eq!((c.local_ld_requests, c.local_ld_sectors), (8, 32));
}

#[test]
fn offsets_take_4_sectors_aligned_and_5_misaligned_on_volta_and_later() {
    let n = 32 * 1024;
    for cfg in [
        "h200.toml",
        "rtx3090.toml",
        "a100.toml",
        "v100.toml",
        "t4.toml",
    ] {
        let r = run(&config(cfg), &bundled("read_offset"), n);
        for (label, per_request) in [
            ("o0", 4),
            ("o1", 5),
            ("o8", 4),
            ("o11", 5),
            ("o32", 4),
            ("o128", 4),
        ] {
            let c = counters(&r, label);
            assert_eq!(
                c.global_ld_sectors,
                per_request * c.global_ld_requests,
                "{label} on {cfg}"
            );
        }
    }
}

#[test]
fn cg_loads_never_hit_l1() {
    let cg = run(&config("h200.toml"), &with_cg("read_offset"), 32 * 1024);
    let ca = run(&config("h200.toml"), &bundled("read_offset"), 32 * 1024);
    // Misaligned reads re-read the neighbouring warp's line: L1 hits when cached, never with cg.
    assert!(counters(&ca, "o1").l1_ld_hits > 0);
    for l in &cg.launches {
        assert_eq!(l.counters.l1_ld_hits, 0, "{}", l.label);
        assert_eq!(
            l.counters.l1_ld_misses, l.counters.global_ld_sectors,
            "{}",
            l.label
        );
    }
    // The sectors moved are the same either way on sm_90: 32-byte sectors.
    assert_eq!(
        counters(&cg, "o1").global_ld_sectors,
        counters(&ca, "o1").global_ld_sectors
    );
}

#[test]
fn fermi_l1_cached_loads_move_whole_lines_and_kepler_defaults_to_l2_only() {
    let n = 32 * 1024;
    // Fermi: loads cached in L1 by default, 128-byte lines: an aligned warp of floats is one line
    // (4 sectors), a misaligned one two lines (8 sectors).
    let fermi = run(&config("c2050.toml"), &bundled("read_offset"), n);
    assert_eq!(
        counters(&fermi, "o0").global_ld_sectors,
        4 * counters(&fermi, "o0").global_ld_requests
    );
    assert_eq!(
        counters(&fermi, "o1").global_ld_sectors,
        8 * counters(&fermi, "o1").global_ld_requests
    );
    // With dlcm = cg Fermi moves 32-byte segments: 5 for the misaligned warp.
    let fermi_cg = run(&config("c2050.toml"), &with_cg("read_offset"), n);
    assert_eq!(
        counters(&fermi_cg, "o1").global_ld_sectors,
        5 * counters(&fermi_cg, "o1").global_ld_requests
    );
    // Kepler: L2 only by default (32-byte segments, no L1 hits); __ldg goes through L1.
    let kepler = run(&config("k40.toml"), &bundled("read_offset"), n);
    assert_eq!(
        counters(&kepler, "o1").global_ld_sectors,
        5 * counters(&kepler, "o1").global_ld_requests
    );
    assert_eq!(counters(&kepler, "o1").l1_ld_hits, 0);
    let ldg = run(&config("k40.toml"), &bundled("read_ldg"), n);
    assert!(
        counters(&ldg, "o1").l1_ld_hits > 0,
        "__ldg is cached on Kepler"
    );
}

#[test]
fn stride_multiplies_sectors_until_every_lane_has_its_own() {
    let r = run(&config("h200.toml"), &bundled("read_stride"), 32 * 1024);
    for (label, per_request) in [
        ("s1", 4),
        ("s2", 8),
        ("s4", 16),
        ("s8", 32),
        ("s16", 32),
        ("s32", 32),
    ] {
        let c = counters(&r, label);
        assert_eq!(
            c.global_ld_sectors,
            per_request * c.global_ld_requests,
            "{label}"
        );
    }
}

#[test]
fn float4_copies_move_the_same_sectors_in_a_quarter_of_the_requests() {
    let r = run(&config("h200.toml"), &bundled("copy_float4"), 32 * 1024);
    let (s, v) = (counters(&r, "scalar"), counters(&r, "float4"));
    assert_eq!(s.global_ld_sectors, v.global_ld_sectors);
    assert_eq!(s.global_ld_requests, 4 * v.global_ld_requests);
    assert_eq!(v.global_ld_sectors, 16 * v.global_ld_requests);
}

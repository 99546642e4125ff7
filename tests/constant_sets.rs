//! The constant L1 under many warps (issue 38; `validate/measurements/h200/ubench/README.md`, M
//! and N): const_sets' warp rows (`tests/fixtures/const_sets.toml`, 32 words 128 bytes apart per
//! warp, the same every iteration: 8 lines in each of 4 sets of the H200's 4-way constant L1).
//! One warp alone thrashes the LRU: every request misses, as on the H200. With 8 or 16 warps the
//! H200 misses 31% / 22%; the simulator shares fills across the SMSPs' warps at the same LDC
//! (`constant.smsp_merge_cycles`, `sim::memory::constant::merge`): one warp in four misses, plus
//! the first turns' stragglers. With the merge off, every warp thrashes alone again.

use sim::config::GpuConfig;
use sim::report::launch_metrics;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

/// idc__requests_lookup_miss.sum / idc__requests.sum of each launch `only`, on the H200 config
/// with the merge window `window`.
fn miss_rates(window: u32, only: &[&str]) -> Vec<f64> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut cfg = GpuConfig::load(std::path::Path::new(&format!(
        "{root}/../configs/h200.toml"
    )))
    .unwrap();
    cfg.constant.smsp_merge_cycles = window;
    let w = Workload::resolve(&format!("{root}/../tests/fixtures/const_sets.toml")).unwrap();
    let opts = Options {
        sets: vec![("iters".into(), 256)],
        only: only.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let run = run_workload(&cfg, &w, &opts).unwrap();
    only.iter()
        .map(|label| {
            let l = run.launches.iter().find(|l| l.label == *label).unwrap();
            let m: std::collections::HashMap<&str, f64> = launch_metrics(l).into_iter().collect();
            m["idc__requests_lookup_miss.sum"] / m["idc__requests.sum"]
        })
        .collect()
}

const ROWS: [&str; 3] = ["sm1_w1_k32_s128", "sm1_w8_k32_s128", "sm1_w16_k32_s128"];

#[test]
fn warps_of_the_four_smsps_share_the_constant_l1s_fills() {
    let r = miss_rates(256, &ROWS);
    // One warp: all but the kernel's few uniform requests miss.
    assert!(r[0] > 0.99, "1 warp: {r:?}");
    for (warps, rate) in [(8, r[1]), (16, r[2])] {
        assert!((0.245..0.27).contains(&rate), "{warps} warps: {r:?}");
    }
}

#[test]
fn without_the_merge_every_warp_thrashes_alone() {
    for rate in miss_rates(0, &ROWS) {
        assert!(rate > 0.99, "{rate}");
    }
}

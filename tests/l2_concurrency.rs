//! L2 contents under the blocks of a wave running at once, against the H200
//! (`tests/fixtures/suite37/h200.json`, `tests/fixtures/suite38/h200.json`, Nsight Compute).
//!
//! Neighbouring blocks of a stencil read the rows they share at about the same time, so the GPU
//! fetches such a row once; the L2 pass interleaves the requests of a wave's blocks
//! (`sim::pipeline::l2`), where running each block to its end before the next evicted the rows
//! in between (3-D stencil: 2.2x the DRAM reads). A wave of matvec rows 16 KiB apart keeps 4,096
//! lines in flight, which fit the 60 MiB L2 only with a hashed set index (`l2.set_displacement`):
//! by line mod sets, 17 of the rows share each 16-way set.

mod common;

use common::root;
use sim::config::GpuConfig;
use sim::metrics::Counters;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

/// The counters of launch `label` of workload file `file` on the H200 config.
fn counters(file: &str, label: &str) -> Counters {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::resolve(root().join(file).to_str().unwrap()).unwrap();
    let opts = Options {
        only: vec![label.into()],
        ..Options::default()
    };
    let out = run_workload(&cfg, &w, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.launches[0].label, label);
    out.launches[0].counters.clone()
}

fn within(what: &str, got: u64, measured: f64, tolerance: f64) {
    let err = (got as f64 - measured) / measured;
    assert!(
        err.abs() <= tolerance,
        "{what}: {got}, measured {measured} ({:+.1}%)",
        100.0 * err
    );
}

#[test]
fn neighbouring_stencil_blocks_share_the_rows_they_read() {
    // s2d_1024: 92,690 of 225,616 L2 read sectors hit on the H200; blocks in turn gave 123,807.
    let c = counters("tests/fixtures/suite37/stencil.toml", "s2d_1024");
    within("s2d_1024 L2 read hits", c.l2_read_hits, 92_690.0, 0.10);
    // s3d_256: 70.19 MB read from DRAM for a 64 MiB grid; blocks in turn gave 156.8 MB.
    let c = counters("tests/fixtures/suite37/stencil.toml", "s3d_256");
    within(
        "s3d_256 DRAM bytes read",
        c.dram_read_bytes,
        70_194_944.0,
        0.10,
    );
}

#[test]
fn rows_a_power_of_two_apart_spread_over_the_l2_sets() {
    // matvec_rows_n4096: every line of the 64 MiB matrix read once from DRAM (67.14 MB on the
    // H200); with line mod sets the wave's rows evict each other: 99.4 MB.
    let c = counters("tests/fixtures/suite38/memory.toml", "matvec_rows_n4096");
    within(
        "matvec_rows_n4096 DRAM bytes read",
        c.dram_read_bytes,
        67_140_352.0,
        0.05,
    );
}

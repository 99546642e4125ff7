//! The functional pass's order of an SM's accesses agrees with the timing replay's
//! (`sim::exec::turns::Order::Paced`, `sim::timing::Pace`): Kendall's tau between the order in
//! which SM 0's global and local accesses reached the caches and the cycles the replay issued
//! them at (`sim::trace::order::Agreement`), over all pairs of a wave and over pairs near in the
//! functional order, for the bundled workloads and the interleave fixture on the H200 config,
//! against the two orders before it (rounds of turns, and one warp after another).
//!
//! `cargo test --release --test order -- --nocapture` prints the table the note gives.

use sim::config::GpuConfig;
use sim::exec::turns::Order;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

fn path(rel: &str) -> String {
    format!("{}/../{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// (workload, `--set`s): sizes that fill several waves of the H200's 132 SMs in a second or so
/// (a debug build takes a few; ray's fixed 1024x1024 image the longest).
const CASES: &[(&str, &[(&str, i64)])] = &[
    (
        "tests/fixtures/interleave/interleave.toml",
        &[("rows_iters", 128), ("mixed_iters", 64)],
    ),
    ("conv2d", &[("n", 512)]),
    ("ray", &[]),
    ("stencil_1d", &[("n", 1 << 20)]),
    ("transpose", &[("n", 1024)]),
    ("transpose_smem", &[("n", 1024)]),
    ("pseudo_random", &[("n", 1 << 20)]),
    ("read_stride", &[("n", 1 << 18)]),
    ("reduce", &[("n", 1 << 20)]),
    ("aos_vs_soa", &[("n", 1 << 20)]),
];

/// Per launch of `case`: (label, accesses, tau, near tau) under `order`.
fn agreement(case: &(&str, &[(&str, i64)]), order: Order) -> Vec<(String, u64, f64, f64)> {
    let cfg = GpuConfig::load(std::path::Path::new(&path("configs/h200.toml"))).unwrap();
    let name = if case.0.ends_with(".toml") {
        path(case.0)
    } else {
        case.0.to_string()
    };
    let w = Workload::resolve(&name).unwrap();
    let opts = Options {
        sets: case.1.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        order,
        probe_order: true,
        ..Default::default()
    };
    let run = run_workload(&cfg, &w, &opts).unwrap();
    run.launches
        .iter()
        .filter_map(|l| {
            let a = l.order?;
            Some((l.label.clone(), a.accesses, a.tau, a.near_tau))
        })
        .collect()
}

#[test]
fn the_functional_order_agrees_with_the_replay_s() {
    // (launch, accesses, [(tau, near tau); paced, interleaved, rounds, serial])
    let orders = [
        Order::Paced,
        Order::Interleaved,
        Order::Rounds,
        Order::Serial,
    ];
    let mut rows: Vec<(String, u64, [(f64, f64); 4])> = vec![];
    for case in CASES {
        let runs = orders.map(|o| agreement(case, o));
        let file = case.0.rsplit('/').next().unwrap();
        for (i, p) in runs[0].iter().enumerate() {
            let taus = [0, 1, 2, 3].map(|k| (runs[k][i].2, runs[k][i].3));
            rows.push((format!("{file} {}", p.0), p.1, taus));
        }
    }
    println!(
        "| launch | accesses (SM 0) | paced tau | near | interleaved tau | near | rounds tau | near | serial tau | near |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, n, t) in &rows {
        let cells: Vec<String> = t.iter().map(|(a, b)| format!("{a:.3} | {b:.3}")).collect();
        println!("| {name} | {n} | {} |", cells.join(" | "));
    }
    let mean = |k: usize| rows.iter().map(|r| r.2[k].1).sum::<f64>() / rows.len() as f64;
    let m = [0, 1, 2, 3].map(mean);
    println!(
        "mean near tau: paced {:.3}, interleaved {:.3}, rounds {:.3}, serial {:.3}",
        m[0], m[1], m[2], m[3]
    );
    // The replay's order is what the paced orders estimate: they agree with it better than the
    // orders that ignore time.
    assert!(m[0] > m[2] && m[0] > m[3], "{m:?}");
    assert!(m[1] > m[0], "{m:?}");
}

//! Simulation speed: warp instructions simulated per second (criterion's `thrpt`, in elements
//! per second, one element = one warp instruction), release build.
//!
//! Issue 7's targets on a 2-core machine: at least 20 million warp instructions per second, and
//! the main job (`sim run configs/rtx3090.toml pseudo_random`, both launches, 12,800,000 threads)
//! in under 2 seconds. Run: `cargo bench -p sim --bench simulate` (about 2 minutes);
//! `SIM_BENCH_THREADS=1` runs single-threaded.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;
use std::path::Path;
use std::time::Duration;

// As the `sim` binary (src/main.rs): the benchmark measures the allocator the command uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn config(name: &str) -> GpuConfig {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    GpuConfig::load(&root.join("configs").join(name)).expect("bundled config")
}

/// Warp instructions of one run of `workload` (all its launches).
fn warp_instructions(cfg: &GpuConfig, w: &Workload, opts: &Options) -> u64 {
    let run = run_workload(cfg, w, opts).expect("bundled workload runs");
    run.launches.iter().map(|l| l.counters.inst_executed).sum()
}

fn bench(c: &mut Criterion) {
    if let Ok(n) = std::env::var("SIM_BENCH_THREADS") {
        let n: usize = n.parse().expect("SIM_BENCH_THREADS is a number");
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .expect("thread pool");
    }
    // (config, workload): the main job (global + constant, 12.8M threads), a shared-memory, a
    // global-memory and an ALU-heavy workload.
    let cases = [
        ("rtx3090.toml", "pseudo_random"),
        ("rtx3090.toml", "transpose_smem"),
        ("rtx3090.toml", "read_stride"),
        ("rtx3090.toml", "ray"),
    ];
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20));
    for (cfg_name, workload) in cases {
        let cfg = config(cfg_name);
        let w = Workload::resolve(workload).expect("bundled");
        let opts = Options::default();
        g.throughput(Throughput::Elements(warp_instructions(&cfg, &w, &opts)));
        g.bench_function(workload, |b| {
            b.iter(|| run_workload(&cfg, &w, &opts).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

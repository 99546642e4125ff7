//! gpumemsim's simulator: runs a CUDA kernel's PTX warp by warp and models what its memory
//! accesses cost on a GPU described by a TOML config.
//!
//! The modules follow the data flow of one `sim run`:
//! [`config`] (GPU description) → [`workload`] (what to launch) → [`ptx`] (parse the module) →
//! [`exec`] (SIMT execution; each memory instruction becomes a warp-level access) → [`memory`]
//! (coalescer, caches, shared banks, constant cache) → [`timing`] (cycles) → [`metrics`] (Nsight
//! Compute-named counters and reports); [`run`] is where they meet. A workload that names a CUDA
//! source instead of PTX (`cuda = "kernel.cu"`) is compiled first by [`compile`] (NVRTC or clang).
//! Where ptxas is found, [`sass`] assembles the PTX for the config's architecture and each launch
//! gets ptxas's registers per thread (else an estimate from the PTX).
//!
//! From a workload to its counters, the way `sim run configs/h200.toml pseudo_random --set
//! n=4096` does it:
//!
//! ```
//! use sim::{config::GpuConfig, run::{run_workload, Options}, workload::Workload};
//!
//! let cfg = GpuConfig::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/h200.toml")))?;
//! let w = Workload::resolve("pseudo_random")?; // bundled: kernels/pseudo_random.toml
//! let run = run_workload(&cfg, &w, &Options { sets: vec![("n".into(), 4096)], ..Default::default() })?;
//! let constant = &run.launches[0];
//! // 4096 threads = 128 warps, each reading 32 distinct constant addresses: serialized.
//! assert_eq!(constant.counters.ldc_inst, 128);
//! assert_eq!(constant.counters.ldc_requests, 128 * 32);
//! // The global variant coalesces its `inputs` load into 4 sectors per request.
//! let global = &run.launches[1];
//! assert_eq!(global.counters.global_ld_requests, 2 * 128);
//! assert!(constant.timing.time_ns > global.timing.time_ns);
//! # Ok::<(), sim::Error>(())
//! ```
//!
//! The pure models can be used on their own:
//!
//! ```
//! use sim::memory::{coalesce, constant, shared, WarpAccess};
//!
//! let column = WarpAccess::from_fn(4, |lane| 4 * (lane * 32)); // column of a 32x32 int tile
//! assert_eq!(shared::wavefronts(&column, shared::Banks { banks: 32, width: 4 }).wavefronts, 32);
//! let row = WarpAccess::from_fn(4, |lane| 0x1000 + 4 * lane);  // 32 consecutive ints
//! assert_eq!(coalesce::sectors(&row, 32).len(), 4);
//! assert_eq!(constant::requests(&row, 32).len(), 32);           // 32 distinct addresses
//! ```
//!
//! | CUDA / PTX / Nsight Compute | here |
//! |---|---|
//! | PTX module, `.entry`, instruction | [`ptx::Module`], [`ptx::Function`], [`ptx::Instruction`] ([`ptx::inst::Op`]) |
//! | warp of 32 threads, active mask | `exec` warps; [`memory::WarpAccess`] (`mask`, per-lane `addrs`) |
//! | 32-byte sector, 128-byte line | [`memory::coalesce::sectors`], [`memory::cache::SectorCache`] |
//! | shared-memory bank, wavefront, bank conflict | [`memory::shared::wavefronts`] |
//! | constant cache request (IDC), broadcast | [`memory::constant::requests`] |
//! | `l1tex__t_sectors_...`, `idc__requests.sum`, ... | [`metrics::Counters`] (each field names its metric) |
//! | `gpu__time_duration.sum` | [`timing::Timing`] |

#![deny(missing_docs)]

pub mod compile;
pub mod config;
pub mod error;
pub mod exec;
pub mod files;
pub mod memory;
pub mod metrics;
pub mod output;
pub mod pipeline;
pub mod ptx;
pub mod report;
pub mod run;
pub mod sass;
pub mod save;
pub mod sweep;
pub mod timing;
pub mod trace;
pub mod usage;
pub mod workload;

pub use error::{Error, Result};

/// Checks that this CPU has the instruction-set extensions the build targets (the repository's
/// `.cargo/config.toml` builds x86-64 Linux binaries for x86-64-v3: AVX2, BMI2, FMA). `Err` is a
/// message saying how to rebuild; builds for the baseline target always pass.
pub fn check_cpu() -> std::result::Result<(), String> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        let missing: Vec<&str> = [
            ("avx2", std::is_x86_feature_detected!("avx2")),
            ("bmi2", std::is_x86_feature_detected!("bmi2")),
            ("fma", std::is_x86_feature_detected!("fma")),
        ]
        .into_iter()
        .filter_map(|(name, present)| (!present).then_some(name))
        .collect();
        if !missing.is_empty() {
            return Err(format!(
                "this build targets x86-64-v3 and this CPU lacks {}; rebuild for it with \
                 RUSTFLAGS=\"-C target-cpu=x86-64\" cargo build --release",
                missing.join(", ")
            ));
        }
    }
    Ok(())
}

/// What the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod testing {
    /// One step of the tests' 64-bit linear congruential generator (Knuth's MMIX constants):
    /// the state after `x`. Its high bits are the random ones (`x >> 33`).
    pub(crate) fn lcg(x: u64) -> u64 {
        x.wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
    }

    /// `configs/{gpu}.toml`, bundled workload `name`, and options setting its parameters `sets`
    /// and keeping its outputs: what a test runs with [`crate::run::run_workload`]. ptxas is
    /// off: these tests compare two execution paths, which the SASS counts do not enter.
    pub(crate) fn bundled(
        gpu: &str,
        name: &str,
        sets: &[(&str, i64)],
    ) -> (
        crate::config::GpuConfig,
        crate::workload::Workload,
        crate::run::Options,
    ) {
        let path = format!("{}/../configs/{gpu}.toml", env!("CARGO_MANIFEST_DIR"));
        let cfg = crate::config::GpuConfig::load(std::path::Path::new(&path)).unwrap();
        let w = crate::workload::Workload::resolve(name).unwrap();
        let opts = crate::run::Options {
            sets: sets.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            keep_outputs: true,
            ptxas: crate::sass::Settings::off(),
            ..Default::default()
        };
        (cfg, w, opts)
    }

    /// Runs bundled workload `name` with parameters `sets` on `configs/{gpu}.toml` twice, with
    /// the paths `choose(paths, false)` and `choose(paths, true)` set (one of two equivalent
    /// paths, [`crate::exec::Paths`]), and asserts the launches (outputs, counters, per-PC
    /// statistics, timing) are the same.
    pub(crate) fn same_both_ways(
        gpu: &str,
        name: &str,
        sets: &[(&str, i64)],
        choose: impl Fn(&mut crate::exec::Paths, bool),
    ) {
        let (cfg, w, opts) = bundled(gpu, name, sets);
        let run = |on: bool| {
            let mut opts = opts.clone();
            choose(&mut opts.paths, on);
            let r = crate::run::run_workload(&cfg, &w, &opts).unwrap();
            format!("{:?}", r.launches)
        };
        assert_eq!(run(false), run(true), "{gpu} {name}");
    }
}

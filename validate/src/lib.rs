//! gpumemsim's validator: runs the simulator's exact PTX on a real NVIDIA GPU and compares.
//!
//! The binary `validate` loads the same PTX text that `sim` executes onto a GPU through cudarc
//! (the CUDA driver API and NVRTC, both loaded at run time, so this crate builds on machines
//! without CUDA), runs a workload's launches with the workload's inputs, checks the outputs
//! against the simulator's, times the launches with CUDA events, reads the Nsight Compute counters
//! the simulator predicts and prints predicted vs measured (DESIGN.md, "Validation methodology").
//!
//! Modules, in the order data flows through `validate compare`:
//!
//! | module | what | GPU? |
//! |---|---|---|
//! | [`cli`] | the command line (clap) | no |
//! | [`configs`] | `--config auto`: the config whose `gpu.name` is the device's, else one generated from its attributes | no |
//! | [`skeleton`] | a config skeleton from the device's attributes (`device --write-config`) | no |
//! | [`backend`] | the [`backend::Backend`] trait; the simulator as a backend | no |
//! | [`gpu`] | the device, a plan loaded onto it ([`gpu::Program`]), the GPU backend and its event timings (cudarc) | yes |
//! | [`ncu`] | Nsight Compute: running it on `validate profile-once`, parsing its CSV ([`ncu::csv`]) | runs ncu |
//! | [`outputs`] | output buffers compared element by element | no |
//! | [`stats`] | median and spread, error, MAPE, Spearman | no |
//! | [`compare`] | accuracy summaries of a report | no |
//! | [`report`] | the JSON report (serde) | no |
//! | [`table`] | tables for people (tabled) | no |
//! | [`plot`] | `--plot`: predicted against measured, one SVG scatter panel per quantity (plotters) | no |
//! | [`cmd`] | the subcommands | |
//! | [`ptxgen`] | `validate ptx`: the bundled kernels' PTX from NVRTC or clang | NVRTC |
//! | [`calibrate`] | `validate calibrate`: microbenchmarks ([`calibrate::bench`], the GPU part), their analysis, fits and the in-place config edit | `bench` only |
//!
//! CUDA: cudarc 0.19 with `dynamic-loading` and the `cuda-12080` bindings (the CUDA 12.8 driver
//! API: drivers 570 and later), so nothing of CUDA is needed to build or test.

/// `print!` that returns the write's error instead of panicking, so that a closed pipe
/// (`validate report ... | head -c1`) or a full disk (`> /dev/full`) comes back to `main`, which
/// ends quietly on the first and prints one `error:` line for the second (issue 40), as `sim` does.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        anyhow::Context::context(
            write!(std::io::stdout(), $($arg)*),
            "cannot write to standard output",
        )
    }};
}

/// [`out!`] with a newline: `println!` without the panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        anyhow::Context::context(
            writeln!(std::io::stdout(), $($arg)*),
            "cannot write to standard output",
        )
    }};
}

pub mod backend;
pub mod calibrate;
pub mod cli;
pub mod cmd;
pub mod compare;
pub mod configs;
pub mod gpu;
pub mod markdown;
pub mod ncu;
pub mod outputs;
pub mod plot;
pub mod ptxgen;
pub mod report;
pub mod skeleton;
pub mod stats;
pub mod table;

pub use cli::{Cli, Cmd};

use anyhow::Result;
use std::process::ExitCode;

/// Runs a parsed command line; errors are printed by `main` as `error: ...` with exit code 2.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Cmd::Ptx(args) => cmd::ptx::ptx(&args),
        Cmd::Compare(args) => cmd::compare::compare(&args),
        Cmd::Device(args) => cmd::device::device(&args),
        Cmd::Report(args) => cmd::report::report(&args),
        Cmd::Calibrate(args) => cmd::calibrate::calibrate(&args),
        Cmd::ProfileOnce(args) => cmd::profile::profile_once(&args),
    }
}

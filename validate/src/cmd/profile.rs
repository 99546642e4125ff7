//! `validate profile-once` (hidden): what `compare` runs under Nsight Compute. It uploads the
//! workload's inputs and runs each launch once, in order, printing nothing on stdout (which ncu
//! shares with its CSV); errors go to stderr as usual.

use crate::backend;
use crate::cli::ProfileOnceArgs;
use crate::gpu::{self, Gpu};
use anyhow::Result;
use sim::config::GpuConfig;
use sim::workload::Workload;
use std::process::ExitCode;

/// Runs `validate profile-once`.
pub fn profile_once(args: &ProfileOnceArgs) -> Result<ExitCode> {
    let cfg = GpuConfig::load(&args.config)?;
    let w = Workload::resolve(&args.workload)?;
    let plan = backend::plan(&cfg, &w, &args.set)?;
    let gpu = Gpu::open(args.device)?;
    gpu::profile_once(&gpu, &plan)?;
    Ok(ExitCode::SUCCESS)
}

//! gpumemsim's simulator: runs a CUDA kernel's PTX warp by warp and models what its memory
//! accesses cost on a GPU described by a TOML config.
//!
//! The modules follow the data flow of one `sim run`:
//! `config` (GPU description) → `workload` (what to launch) → `ptx` (parse the module) →
//! `exec` (SIMT execution; each memory instruction becomes a warp-level access) → `memory`
//! (coalescer, caches, constant cache) → `timing` (cycles) → `metrics` (Nsight Compute-named
//! counters and reports).

#![deny(missing_docs)]

pub mod config;
pub mod error;
pub mod exec;
pub mod memory;
pub mod metrics;
pub mod ptx;
pub mod run;
pub mod timing;
pub mod workload;

pub use error::{Error, Result};

//! The GPU description: one TOML file per GPU (`configs/rtx3090.toml`, `configs/h200.toml`),
//! loaded into typed structs and strictly validated.
//!
//! What it models: the SM count, clock and occupancy limits; shared memory (size, banks, bank
//! width, latency); constant memory (broadcast width and the per-SM constant cache levels); the
//! per-SM L1 data cache (capacity after the shared carve-out, 128 B lines of 32 B sectors, whether
//! global loads are cached); the L2 (capacity, sectors, latency, bandwidth) and DRAM (bandwidth,
//! latency). Sizes are in bytes, latencies in SM clock cycles (load-to-use, as pointer-chase
//! microbenchmarks measure them), bandwidths in the unit their key names.
//!
//! Where the values come from: every number in a shipped config carries a comment naming its
//! source with the source keys and provenance tags of `gpu-parameters.md` (`[NV]` NVIDIA
//! documentation, `[paper]`, `[tool]` MT4G, `[sim]` Accel-Sim, `[derived]`, `[measured]` on a real
//! GPU); proxies from sibling GPUs and assumptions are labelled as such in the file.
//!
//! Strictness: unknown keys, missing keys, wrong types and out-of-range values or combinations are
//! all [`Error::Config`] naming the file, the dotted key (`l1.sector_bytes`,
//! `constant.cache[1].line_bytes`) and the allowed range. Loading never panics.

mod check;
pub mod find;
mod schema;
pub mod set;
#[cfg(test)]
mod tests;
pub(crate) mod toml_error;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use schema::{
    CacheGeometry, Constant, ConstantCache, Dram, Gpu, Shared, Sm, StorePolicy, Tensor, TensorForm,
    L1, L2,
};

/// A validated GPU description: the TOML file's tables plus the file it came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// The file this config was read from (as given to [`GpuConfig::load`] or
    /// [`GpuConfig::from_toml_str`]). Not a TOML key, and not serialized, so that a serialized
    /// config is again a valid config file.
    #[serde(skip)]
    pub path: String,
    /// `[gpu]`: name, compute capability, launch overhead.
    pub gpu: Gpu,
    /// `[sm]`: SM count, clock, occupancy limits, issue rates.
    pub sm: Sm,
    /// `[shared]`: shared memory size, banks, latency.
    pub shared: Shared,
    /// `[constant]`: constant memory, broadcast width and cache levels.
    pub constant: Constant,
    /// `[l1]`: per-SM L1 data cache.
    pub l1: L1,
    /// `[l2]`: GPU-wide L2 cache.
    pub l2: L2,
    /// `[dram]`: device memory.
    pub dram: Dram,
    /// `[tensor]`: the tensor pipe's forms (optional; none by default).
    #[serde(default)]
    pub tensor: Tensor,
}

impl GpuConfig {
    /// Reads and validates the config at `path`: [`Error::Io`] if the file cannot be read,
    /// [`Error::Config`] if it is not a valid config.
    pub fn load(path: &Path) -> Result<GpuConfig> {
        let text = crate::files::read_text(path, "GPU config").map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// Parses and validates config `text`; `path` is used only in error messages and stored in
    /// [`GpuConfig::path`].
    pub fn from_toml_str(text: &str, path: &str) -> Result<GpuConfig> {
        let mut cfg: GpuConfig = toml_error::from_str(text).map_err(|e| Error::Config {
            path: path.to_string(),
            key: e.key,
            message: e.message,
        })?;
        cfg.path = path.to_string();
        check::validate(&cfg).map_err(|bad| {
            let line = toml_error::key_line(text, &bad.key);
            Error::Config {
                path: path.to_string(),
                message: match line {
                    Some(line) => format!("{} (line {line})", bad.message),
                    None => bad.message,
                },
                key: bad.key,
            }
        })?;
        Ok(cfg)
    }

    /// Like [`GpuConfig::from_toml_str`], with the what-if changes `sets` (dotted key, value as
    /// typed: [`set`]) made to the TOML before it is validated: the same type and range checks,
    /// and an error ends saying which set the value came from.
    pub fn from_toml_str_with(
        text: &str,
        path: &str,
        sets: &[set::ConfigSet],
    ) -> Result<GpuConfig> {
        if sets.is_empty() {
            return Self::from_toml_str(text, path);
        }
        let changed = set::apply(text, sets).map_err(|e| Error::Config {
            path: path.to_string(),
            key: e.key.clone(),
            message: format!("{} {}", e.message, set::note(&e.key, sets)),
        })?;
        // Not TOML: the unchanged text's error says where.
        let Some(changed) = changed else {
            return Self::from_toml_str(text, path);
        };
        Self::from_toml_str(&changed, path).map_err(|e| match e {
            Error::Config { path, key, message } => {
                let message = format!("{message} {}", set::note(&key, sets));
                Error::Config { path, key, message }
            }
            e => e,
        })
    }

    /// Compute capability `(major, minor)` parsed from `gpu.compute_capability` (`"8.6"` ->
    /// `(8, 6)`); `(0, 0)` if the string was changed after validation into something unparsable.
    pub fn compute_capability(&self) -> (u32, u32) {
        check::parse_compute_capability(&self.gpu.compute_capability).unwrap_or((0, 0))
    }

    /// Largest shared memory of one block (static plus dynamic) in bytes with the opt-in
    /// (`shared.size_per_block_optin_bytes`, default `shared.size_per_block_bytes`).
    pub fn shared_per_block_optin_bytes(&self) -> u64 {
        self.shared
            .size_per_block_optin_bytes
            .unwrap_or(self.shared.size_per_block_bytes)
            .into()
    }

    /// SM clock in Hz (`sm.clock_mhz * 1e6`).
    pub fn clock_hz(&self) -> f64 {
        self.sm.clock_mhz * 1e6
    }

    /// DRAM bandwidth in bytes per SM clock cycle (`dram.bandwidth_gb_per_s * 1e9 / clock_hz`).
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.dram.bandwidth_gb_per_s * 1e9 / self.clock_hz()
    }
}

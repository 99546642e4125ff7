//! `validate device`: the GPU's properties as the driver reports them.

use crate::cli::DeviceArgs;
use crate::cmd::shown;
use crate::gpu::Gpu;
use crate::{configs, table};
use anyhow::Result;
use std::process::ExitCode;

/// Runs `validate device`.
pub fn device(args: &DeviceArgs) -> Result<ExitCode> {
    if args.write_config.is_some() {
        eprintln!(
            "validate device --write-config: not implemented yet (start from configs/h200.toml \
and the properties `validate device` prints)"
        );
        return Ok(ExitCode::from(2));
    }
    let gpu = Gpu::open(args.device)?;
    let info = gpu.info()?;
    let driver = gpu.driver_version()?;
    println!("{}", table::device(&info, &driver));
    match configs::resolve("auto", &info.name) {
        Ok(p) => println!("config: {} (what `compare --config auto` uses)", shown(&p)),
        Err(e) => println!("config: none matches: {e:#}"),
    }
    Ok(ExitCode::SUCCESS)
}

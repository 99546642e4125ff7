//! `validate ptx`: regenerate or check the committed PTX of the bundled kernels and of the
//! calibration microbenchmarks ([`crate::ptxgen`]).

use crate::cli::{CompilerChoice, PtxArgs};
use crate::cmd::shown;
use crate::ptxgen;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// The kernels directory of the source tree this binary was built from.
const SOURCE_KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels");

/// The calibration microbenchmarks of the source tree (`validate calibrate`; NVRTC only).
pub const SOURCE_CALIBRATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/calibrate");

/// Runs `validate ptx`.
pub fn ptx(args: &PtxArgs) -> Result<ExitCode> {
    // --kernels names one directory; by default the bundled kernels and the calibration
    // microbenchmarks (whose PTX `validate calibrate` embeds).
    let (kernels, calibrate) = match &args.kernels {
        Some(dir) => (dir.clone(), None),
        None => (
            PathBuf::from(SOURCE_KERNELS),
            Some(PathBuf::from(SOURCE_CALIBRATE)),
        ),
    };
    if args.check {
        let (mut checked, mut stale) = ptxgen::check(&kernels)?;
        if let Some(dir) = &calibrate {
            let (c, s) = ptxgen::check(dir)?;
            checked.extend(c);
            stale.extend(s);
        }
        if stale.is_empty() {
            outln!("ok: {} PTX files match their sources", checked.len())?;
            for path in &checked {
                outln!("  {}", shown(path))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        outln!("stale PTX ({} of {}):", stale.len(), checked.len())?;
        for s in &stale {
            outln!(
                "  {}: {} (source {})",
                shown(&s.ptx),
                s.problem,
                shown(&s.source)
            )?;
        }
        let mut commands: Vec<&str> = stale.iter().map(|s| s.compiler.regenerate()).collect();
        commands.dedup();
        for command in commands {
            outln!("regenerate with: {command}")?;
        }
        return Ok(ExitCode::from(1));
    }
    let mut written = Vec::new();
    if matches!(args.compiler, CompilerChoice::Nvrtc | CompilerChoice::All) {
        written.extend(ptxgen::generate_nvrtc(&kernels)?);
        if let Some(dir) = &calibrate {
            written.extend(ptxgen::generate_nvrtc(dir)?);
        }
    }
    if matches!(args.compiler, CompilerChoice::Clang | CompilerChoice::All) {
        written.extend(ptxgen::generate_clang(&kernels, &args.clang)?);
    }
    for path in &written {
        let text = sim::files::read_text(path, "PTX file")?;
        outln!(
            "wrote {} ({})",
            shown(path),
            text.lines().next().unwrap_or("")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

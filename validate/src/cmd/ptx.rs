//! `validate ptx`: regenerate or check the committed PTX of the bundled kernels ([`crate::ptxgen`]).

use crate::cli::{CompilerChoice, PtxArgs};
use crate::cmd::shown;
use crate::ptxgen;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// The kernels directory of the source tree this binary was built from.
const SOURCE_KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels");

/// Runs `validate ptx`.
pub fn ptx(args: &PtxArgs) -> Result<ExitCode> {
    let kernels = args
        .kernels
        .clone()
        .unwrap_or_else(|| PathBuf::from(SOURCE_KERNELS));
    if args.check {
        let (checked, stale) = ptxgen::check(&kernels)?;
        if stale.is_empty() {
            println!("ok: {} PTX files match their sources", checked.len());
            for path in &checked {
                println!("  {}", shown(path));
            }
            return Ok(ExitCode::SUCCESS);
        }
        println!("stale PTX ({} of {}):", stale.len(), checked.len());
        for s in &stale {
            println!(
                "  {}: {} (source {})",
                shown(&s.ptx),
                s.problem,
                shown(&s.source)
            );
        }
        let mut commands: Vec<&str> = stale.iter().map(|s| s.compiler.regenerate()).collect();
        commands.dedup();
        for command in commands {
            println!("regenerate with: {command}");
        }
        return Ok(ExitCode::from(1));
    }
    let mut written = Vec::new();
    if matches!(args.compiler, CompilerChoice::Nvrtc | CompilerChoice::All) {
        written.extend(ptxgen::generate_nvrtc(&kernels)?);
    }
    if matches!(args.compiler, CompilerChoice::Clang | CompilerChoice::All) {
        written.extend(ptxgen::generate_clang(&kernels, &args.clang)?);
    }
    for path in &written {
        let text = std::fs::read_to_string(path)?;
        println!(
            "wrote {} ({})",
            shown(path),
            text.lines().next().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

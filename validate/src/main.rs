//! The `validate` binary: see `validate --help` and the crate documentation.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(m) = sim::check_cpu() {
        eprintln!("error: {m}");
        return ExitCode::from(2);
    }
    let cli = validate::Cli::parse();
    match validate::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

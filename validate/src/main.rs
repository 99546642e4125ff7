//! The `validate` binary: see `validate --help` and the crate documentation.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(m) = sim::check_cpu() {
        eprintln!("error: {m}");
        return ExitCode::from(2);
    }
    let cli = validate::Cli::parse();
    // Output still buffered at exit would be lost silently on a full disk: flush it here.
    let result = validate::run(cli).and_then(|code| {
        std::io::stdout()
            .flush()
            .map_err(|e| anyhow::Error::new(e).context("cannot write to standard output"))?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        // A reader that stops early (`validate report ... | head`) is not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

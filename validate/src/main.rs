//! The `validate` binary: see `validate --help` and the crate documentation.

use clap::{CommandFactory, Parser};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(m) = sim::check_cpu() {
        eprintln!("error: {m}");
        return ExitCode::from(2);
    }
    let result = match validate::Cli::try_parse() {
        Ok(cli) => validate::run(cli),
        // `--help` and `--version`: clap's own print ignores a failed write (help onto a full
        // disk exited 0), so they go through stdout like every other output.
        Err(e) if !e.use_stderr() => write!(std::io::stdout(), "{}", e.render())
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| anyhow::Error::new(e).context("cannot write to standard output")),
        // `validate` alone prints the help (exit code 2), as clap does.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.exit()
        }
        Err(e) => {
            let cmd = validate::Cli::command();
            eprintln!(
                "error: {}",
                sim::usage::one_line(&e, &cmd, std::env::args_os())
            );
            return ExitCode::from(2);
        }
    };
    // Output still buffered at exit would be lost silently on a full disk: flush it here.
    let result = result.and_then(|code| {
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

//! Command-line usage errors as one line (issue 40: every error is one `error:` line naming the
//! input), for both binaries, `sim` and `validate`.
//!
//! clap's own rendering of a usage error is a paragraph: the error, a blank line, a `tip:`, the
//! usage (two lines for `sim run`) and "For more information, try '--help'.". [`one_line`]
//! keeps clap's message, which names the argument and the value, folds its continuation lines
//! (the missing arguments, the possible values) and tips into that line, and ends it with the
//! `--help` of the subcommand the user typed. `--help` and `--version` are not errors and are
//! printed by the binaries as clap renders them.

use std::ffi::OsString;

/// `err`, a usage error of the command line `args` (as `std::env::args_os()`, the program name
/// first) parsed by `cmd`, as one line without the `error: ` prefix and without control
/// characters (a value the user typed is shown escaped, `\n`, `\u{1b}`): clap's message, its
/// tips in parentheses and `try 'BIN SUBCOMMAND --help'`.
pub fn one_line(
    err: &clap::Error,
    cmd: &clap::Command,
    args: impl IntoIterator<Item = OsString>,
) -> String {
    let args: Vec<OsString> = args.into_iter().collect();
    // A value the user typed is quoted as it is, control characters included (a newline would
    // break the line, an escape sequence reach the terminal): the same command line with them
    // escaped gives the same error, printable.
    let escaped = cmd
        .clone()
        .try_get_matches_from(args.iter().map(|a| escape_controls(a)))
        .err();
    let err = escaped.as_ref().unwrap_or(err);
    // Display of clap's styled text is plain (no colour codes), whatever the terminal.
    let text = err.render().to_string();
    let mut message = String::new();
    let mut tips = Vec::new();
    for paragraph in text.split("\n\n") {
        let paragraph = paragraph.trim();
        if paragraph.starts_with("Usage:") || paragraph.starts_with("For more information") {
            continue;
        }
        for line in paragraph.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(tip) = line.strip_prefix("tip: ") {
                tips.push(tip);
            } else if message.is_empty() {
                message.push_str(line.strip_prefix("error: ").unwrap_or(line));
            } else {
                // "were not provided:" then one argument a line; "[possible values: ...]".
                let sep = if message.ends_with(':') || line.starts_with('[') {
                    " "
                } else {
                    ", "
                };
                message.push_str(sep);
                message.push_str(line);
            }
        }
    }
    if !tips.is_empty() {
        message.push_str(&format!(" (tip: {})", tips.join("; ")));
    }
    message.push_str(&format!("; try '{} --help'", command_path(cmd, args)));
    escape_controls(message.as_ref())
        .into_string()
        .unwrap_or_default()
}

/// `s` with each control character written as its Rust escape (`\n`, `\u{1b}`); not UTF-8:
/// unchanged.
fn escape_controls(s: &std::ffi::OsStr) -> OsString {
    match s.to_str() {
        Some(t) if t.chars().any(char::is_control) => t
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into(),
        _ => s.to_owned(),
    }
}

/// The program and the subcommands the user typed (`sim run`): the words of `args` that name a
/// subcommand, up to the first that does not.
fn command_path(cmd: &clap::Command, args: impl IntoIterator<Item = OsString>) -> String {
    let mut words = vec![cmd.get_bin_name().unwrap_or(cmd.get_name()).to_string()];
    let mut at = cmd;
    for arg in args.into_iter().skip(1) {
        if !at.has_subcommands() {
            break;
        }
        let Some(arg) = arg.to_str() else { break };
        if arg.starts_with('-') {
            continue;
        }
        let Some(sub) = at.find_subcommand(arg) else {
            break;
        };
        words.push(sub.get_name().to_string());
        at = sub;
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, ColorChoice, Command};

    fn cli() -> Command {
        Command::new("tool").color(ColorChoice::Always).subcommand(
            Command::new("run")
                .override_usage("tool run [OPTIONS] CONFIG\n       tool run --config CONFIG")
                .arg(Arg::new("config").required(true).value_name("CONFIG"))
                .arg(Arg::new("more").required(true).value_name("MORE"))
                .arg(
                    Arg::new("format")
                        .long("format")
                        .value_parser(["table", "json"]),
                )
                .arg(
                    Arg::new("threads")
                        .long("threads")
                        .value_parser(clap::value_parser!(u32)),
                )
                .arg(Arg::new("quiet").long("quiet").action(ArgAction::SetTrue)),
        )
    }

    fn line(args: &[&str]) -> String {
        let err = cli().try_get_matches_from(args).unwrap_err();
        one_line(&err, &cli(), args.iter().map(OsString::from))
    }

    #[test]
    fn each_kind_of_usage_error_is_one_plain_line() {
        assert_eq!(
            line(&["tool", "run", "a", "b", "--quite"]),
            "unexpected argument '--quite' found (tip: a similar argument exists: '--quiet'); \
             try 'tool run --help'"
        );
        assert_eq!(
            line(&["tool", "run"]),
            "the following required arguments were not provided: <CONFIG>, <MORE>; \
             try 'tool run --help'"
        );
        assert_eq!(
            line(&["tool", "run", "a", "b", "--format", "xml"]),
            "invalid value 'xml' for '--format <format>' [possible values: table, json]; \
             try 'tool run --help'"
        );
        assert_eq!(
            line(&["tool", "run", "a", "b", "--threads", "x"]),
            "invalid value 'x' for '--threads <threads>': invalid digit found in string; \
             try 'tool run --help'"
        );
        assert_eq!(
            line(&["tool", "rum"]),
            "unrecognized subcommand 'rum' (tip: a similar subcommand exists: 'run'); \
             try 'tool --help'"
        );
    }

    #[test]
    fn control_characters_the_user_typed_are_escaped() {
        assert_eq!(
            line(&["tool", "run", "a", "b", "--threads", "\u{1b}[2J\n"]),
            "invalid value '\\u{1b}[2J\\n' for '--threads <threads>': invalid digit found in \
             string; try 'tool run --help'"
        );
    }
}

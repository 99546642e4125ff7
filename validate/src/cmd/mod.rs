//! The subcommands: each turns its parsed arguments into work and output, and returns the exit
//! code (errors go back to `main`, which prints them as one line and exits 2).

pub mod calibrate;
pub mod compare;
pub mod device;
pub mod profile;
pub mod ptx;
pub mod report;

use std::path::Path;

/// `path` relative to the current directory when it is below it, for shorter messages.
pub fn shown(path: &Path) -> String {
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let abs = if abs.exists() {
        abs
    } else {
        // A missing file: canonicalize its directory instead.
        match (
            path.parent().and_then(|d| d.canonicalize().ok()),
            path.file_name(),
        ) {
            (Some(dir), Some(name)) => dir.join(name),
            _ => path.to_path_buf(),
        }
    };
    std::env::current_dir()
        .ok()
        .and_then(|cwd| abs.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or(abs)
        .display()
        .to_string()
}

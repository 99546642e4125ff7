//! Where a report goes: standard output, or the file of `-o FILE`.
//!
//! A file is written whole or not at all: the report goes to a temporary file beside it, which
//! is renamed over the target at the end, so a failed or interrupted run never leaves half a
//! report under the name. An existing file is replaced only with `--force`, and never when it is
//! one of the run's inputs (the config, a workload file, a PTX or CUDA source it names), even
//! with `--force`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why an output file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The file exists and `--force` was not given.
    #[error("{}: the file exists; pass --force to replace it", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The file is one of the run's inputs.
    #[error("{}: this is an input of the run ({what}); choose another output file", path.display())]
    IsInput {
        /// The file.
        path: PathBuf,
        /// Which input it is (`the GPU config`).
        what: String,
    },
    /// The file could not be created or written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// Checks that `out` may be written: refused when it is one of `inputs` (path, what it is), or
/// when it exists and `force` is false. Call it before the run, so that a refused output costs
/// no simulation.
pub fn check(out: &Path, force: bool, inputs: &[(PathBuf, String)]) -> Result<(), OutputError> {
    if !out.exists() {
        return Ok(());
    }
    let canon = |p: &Path| p.canonicalize().ok();
    if let Some(target) = canon(out) {
        if let Some((_, what)) = inputs
            .iter()
            .find(|(p, _)| canon(p).as_ref() == Some(&target))
        {
            return Err(OutputError::IsInput {
                path: out.to_path_buf(),
                what: what.clone(),
            });
        }
    }
    if !force {
        return Err(OutputError::Exists {
            path: out.to_path_buf(),
        });
    }
    Ok(())
}

/// Writes `bytes` to `out` through a temporary file beside it and a rename.
pub fn write_file(out: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let io_err = |source| OutputError::Io {
        path: out.to_path_buf(),
        source,
    };
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out.file_name().ok_or_else(|| {
        io_err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, out));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_existing_files_and_inputs() {
        let dir = std::env::temp_dir().join(format!("gpumemsim-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.json");
        assert!(check(&f, false, &[]).is_ok());
        write_file(&f, b"one").unwrap();
        assert!(matches!(
            check(&f, false, &[]),
            Err(OutputError::Exists { .. })
        ));
        assert!(check(&f, true, &[]).is_ok());
        let inputs = [(dir.join("./r.json"), "the GPU config".to_string())];
        let e = check(&f, true, &inputs).unwrap_err().to_string();
        assert!(e.contains("input of the run (the GPU config)"), "{e}");
        write_file(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! `validate device`: the GPU's properties as the driver reports them; with `--write-config`, a
//! config skeleton from them.

use crate::cli::DeviceArgs;
use crate::cmd::shown;
use crate::gpu::Gpu;
use crate::{configs, table};
use anyhow::{bail, Context, Result};
use sim::config::GpuConfig;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// Runs `validate device`.
pub fn device(args: &DeviceArgs) -> Result<ExitCode> {
    if let Some(path) = &args.write_config {
        // Before touching the GPU: a file that would not be written is an error at once.
        refuse_existing(path, args.force)?;
    }
    let gpu = Gpu::open(args.device)?;
    let info = gpu.info()?;
    let driver = gpu.driver_version()?;
    outln!("{}", table::device(&info, &driver))?;
    match configs::resolve("auto", &info.name) {
        Ok(p) => outln!("config: {} (what `compare --config auto` uses)", shown(&p))?,
        Err(e) => outln!(
            "config: none matches: {e:#}; `compare --config auto` generates one from the \
attributes (`--write-config PATH` writes it)"
        )?,
    }
    let Some(path) = &args.write_config else {
        return Ok(ExitCode::SUCCESS);
    };
    let (base, skeleton) = configs::skeleton_in(&configs::search_dirs(), &info)?;
    write_config(path, &skeleton.text, args.force)?;
    outln!(
        "wrote {}: a config for {} from its attributes",
        shown(path),
        info.name
    )?;
    outln!(
        "assumed, taken from {base} (the attributes do not give them): {}",
        skeleton.assumed_summary()
    )?;
    match GpuConfig::from_toml_str(&skeleton.text, &path.display().to_string()) {
        Ok(_) => {
            outln!(
                "measure the assumed values on this GPU and replace their comments with sources"
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            outln!("warning: the written config does not load: {e}: fix it by hand")?;
            Ok(ExitCode::from(1))
        }
    }
}

/// An error when `path` exists and `force` is not set.
pub fn refuse_existing(path: &Path, force: bool) -> Result<()> {
    if !force && path.exists() {
        bail!(
            "--write-config {}: the file exists and is not overwritten (pass --force to replace \
it)",
            path.display()
        );
    }
    Ok(())
}

/// Writes `text` to `path`, creating its directory; an existing file is replaced only with
/// `force` (without it, the file is created only if it does not exist, atomically).
pub fn write_config(path: &Path, text: &str, force: bool) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            refuse_existing(path, false)?;
            return Err(e).with_context(|| format!("cannot write {}", path.display()));
        }
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
    };
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_config_is_kept_unless_forced() {
        let dir = std::env::temp_dir().join(format!("validate-device-{}", std::process::id()));
        let path = dir.join("sub/b200.toml");
        write_config(&path, "first", false).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        let e = write_config(&path, "second", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("exists") && e.contains("--force"), "{e}");
        assert!(refuse_existing(&path, false).is_err());
        assert!(refuse_existing(&path, true).is_ok());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        write_config(&path, "third", true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "third");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(refuse_existing(&path, false).is_ok());
    }
}

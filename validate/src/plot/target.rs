//! Where `--plot` may write: a new file whose name ends in `.svg`, never a file the command
//! reads or writes itself (`--plot` onto the report's own path replaced the report, issue 40),
//! an existing file only with `--force`, and never something that is not a regular file
//! (`/dev/stdout`, a directory).

use crate::cmd::shown;
use anyhow::{bail, Result};
use std::io::Write;
use std::path::Path;

/// Refuses `path` for `--plot` unless it is a plain file name ending in `.svg` (no control
/// characters), is none of `inputs`, and does not exist or `force` is set.
pub(super) fn check(path: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    let name = path.file_name().map(|n| n.to_str());
    let name = match name {
        None => bail!("--plot {path:?}: not a file name (expected e.g. report.svg)"),
        Some(None) => bail!("--plot {path:?}: the file name is not UTF-8"),
        Some(Some(n)) => n,
    };
    if path.to_string_lossy().chars().any(char::is_control) {
        bail!("--plot {path:?}: the path has control characters");
    }
    let shown = shown(path);
    if name.len() <= 4 || !name.to_ascii_lowercase().ends_with(".svg") {
        bail!("--plot {shown}: the file name must end in .svg (the plot is an SVG document)");
    }
    if let Some(input) = inputs.iter().find(|i| same_file(path, i)) {
        bail!(
            "--plot {shown}: it is {}, which this command reads or writes; the plot would \
replace it",
            crate::cmd::shown(input)
        );
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if !meta.is_file() {
        bail!("--plot {shown}: it exists and is not a regular file");
    }
    if !force {
        bail!(
            "--plot {shown}: the file exists and is not overwritten (pass --force to replace it)"
        );
    }
    Ok(())
}

/// Writes `text` to `path`: creates it, failing if it appeared since [`check`], unless `force`.
pub(super) fn write_new(path: &Path, text: &str, force: bool) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options.open(path)?.write_all(text.as_bytes())
}

/// Whether `a` and `b` name one file (the same path, a link, a hard link; or, before the file
/// exists, the same absolute path).
fn same_file(a: &Path, b: &Path) -> bool {
    if matches!((std::path::absolute(a), std::path::absolute(b)), (Ok(x), Ok(y)) if x == y) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (x.dev(), x.ino()) == (y.dev(), y.ino());
        }
    }
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_goes_to_a_new_svg_file_that_is_no_input() {
        let dir = std::env::temp_dir().join(format!("validate-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = dir.join("report.json");
        std::fs::write(&report, "{}").unwrap();
        let existing = dir.join("old.svg");
        std::fs::write(&existing, "<svg/>").unwrap();
        let err = |p: &Path, force: bool| check(p, &[&report], force).unwrap_err().to_string();
        assert!(check(&dir.join("new.svg"), &[&report], false).is_ok());
        assert!(err(&report, true).contains("must end in .svg"));
        assert!(err(&existing, false).contains("exists and is not overwritten (pass --force"));
        assert!(check(&existing, &[&report], true).is_ok());
        // The report itself, by another name (a hard link): refused even with --force.
        let link = dir.join("report.svg");
        let _ = std::fs::remove_file(&link);
        std::fs::hard_link(&report, &link).unwrap();
        let e = check(&link, &[&report], true).unwrap_err().to_string();
        assert!(e.contains("which this command reads or writes"), "{e}");
        assert!(err(Path::new(""), false).contains("not a file name"));
        assert!(err(&dir.join("a\u{1b}[2J.svg"), false).contains("control characters"));
        assert!(err(&dir.join(".svg"), false).contains("must end in .svg"));
        let d = dir.join("d.svg");
        std::fs::create_dir_all(&d).unwrap();
        assert!(err(&d, true).contains("not a regular file"));
        // Written once; a second plain write fails rather than replacing it.
        let out = dir.join("w.svg");
        let _ = std::fs::remove_file(&out);
        write_new(&out, "a", false).unwrap();
        assert!(write_new(&out, "b", false).is_err());
        write_new(&out, "c", true).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "c");
    }
}

//! `sim run --save-outputs DIR`: every output buffer (`output = true`) of every launch, as the
//! launch left it, written as a NumPy `.npy` file, and a 2-D image buffer also as a PNG.
//!
//! Files are named `<workload>.<launch label>.<buffer>.npy` (and `.png`) in DIR, each name
//! part with every character other than letters, digits, `_`, `-` and `.` written as `_`. The
//! `.npy` array has the buffer's type (`u8` → `|u1`, `f32` → `<f4`, ...) and its `shape` from
//! the workload file (default: one dimension of `count`). A PNG is written for a `u8` buffer of
//! shape `[h, w, 4]` (RGBA, CUDA's `uchar4` pixels), `[h, w, 3]` (RGB), `[h, w]` or `[h, w, 1]`
//! (grey), and a `u32` buffer of shape `[h, w]` (a `uchar4` per element, `x` the red byte): row
//! 0 at the top. Files go through [`crate::output`]: an existing file is replaced only with
//! `--force`, an input of the run never, and each file is written whole or not at all.

use crate::output::{self, OutputError};
use crate::run::{OutputBuffer, WorkloadRun};
use crate::workload::init::Elem;
use crate::workload::npy;
use crate::workload::{Expr, Workload};
use std::path::{Path, PathBuf};

/// One file to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// Where.
    pub path: PathBuf,
    /// What: `1024x1024x4 u8 array`, `1024x1024 RGBA image`.
    pub what: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A file-name part: `name` with every character but ASCII letters, digits, `_`, `-` and `.`
/// as `_`, and a leading `.` as `_` (no hidden files, no `..`).
pub fn file_part(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s
}

/// The file stem of buffer `buffer` after launch `label` of workload `workload`, in `dir`.
fn stem(dir: &Path, workload: &str, label: &str, buffer: &str) -> PathBuf {
    dir.join(format!(
        "{}.{}.{}",
        file_part(workload),
        file_part(label),
        file_part(buffer)
    ))
}

/// The PNG colour type of an image buffer of type `ty` and dimensions `shape`, with the
/// image's height and width; `None` when the buffer is not an image.
fn image_kind(ty: Elem, shape: &[u64]) -> Option<(png::ColorType, u32, u32)> {
    let (h, w, c) = match (ty, shape) {
        (Elem::U8, [h, w]) => (*h, *w, 1),
        (Elem::U8, [h, w, c]) if matches!(c, 1 | 3 | 4) => (*h, *w, *c),
        (Elem::U32, [h, w]) => (*h, *w, 4),
        _ => return None,
    };
    let kind = match c {
        1 => png::ColorType::Grayscale,
        3 => png::ColorType::Rgb,
        _ => png::ColorType::Rgba,
    };
    Some((kind, u32::try_from(h).ok()?, u32::try_from(w).ok()?))
}

/// The PNG of `data`, an image buffer ([`image_kind`]), with its description; `None` when the
/// buffer is not an image.
pub fn png_of(ty: Elem, shape: &[u64], data: &[u8]) -> Option<Result<(Vec<u8>, String), String>> {
    let (kind, h, w) = image_kind(ty, shape)?;
    let mut out = vec![];
    let result = (|| {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(kind);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(data)?;
        writer.finish()
    })();
    let what = match kind {
        png::ColorType::Grayscale => "grey",
        png::ColorType::Rgb => "RGB",
        _ => "RGBA",
    };
    Some(
        result
            .map(|()| (out, format!("{w}x{h} {what} image")))
            .map_err(|e| format!("PNG encoding failed: {e}")),
    )
}

/// The files of every launch of `run` in `dir`: each output buffer's `.npy`, and a PNG of each
/// image buffer.
pub fn files(run: &WorkloadRun, dir: &Path) -> Result<Vec<OutFile>, String> {
    let mut v = vec![];
    for l in &run.launches {
        for (name, bytes) in &l.outputs {
            let Some(b) = run.outputs.iter().find(|b| &b.name == name) else {
                continue;
            };
            let elem = Elem::parse(&b.ty).ok_or_else(|| format!("unknown type `{}`", b.ty))?;
            let base = stem(dir, &run.workload, &l.label, name);
            let dims = dims_text(b);
            v.push(OutFile {
                path: with_ext(&base, "npy"),
                what: format!("{dims} {} array", b.ty),
                bytes: npy::write(elem, &b.shape, bytes),
            });
            if let Some(png) = png_of(elem, &b.shape, bytes) {
                let (bytes, what) = png.map_err(|e| format!("buffer `{name}`: {e}"))?;
                v.push(OutFile {
                    path: with_ext(&base, "png"),
                    what,
                    bytes,
                });
            }
        }
    }
    Ok(v)
}

fn dims_text(b: &OutputBuffer) -> String {
    b.shape
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_os_string();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// The files a run of `w` may write in `dir` (its launches, or those of `only`, times its output
/// buffers: every `.npy`, and a `.png` where the buffer's shape may make it an image), to check
/// before the run ([`output::check`]) so that a refused file costs no simulation.
pub fn planned(w: &Workload, dir: &Path, only: &[String]) -> Vec<PathBuf> {
    let mut v = vec![];
    for l in w
        .launches
        .iter()
        .filter(|l| only.is_empty() || only.contains(&l.label))
    {
        for b in w.buffers.iter().filter(|b| b.output) {
            let base = stem(dir, &w.name, &l.label, &b.name);
            v.push(with_ext(&base, "npy"));
            let image = match (b.ty.as_str(), b.shape.as_deref()) {
                ("u8", Some([_, _])) | ("u32", Some([_, _])) => true,
                ("u8", Some([_, _, c])) => !matches!(c, Expr::Int(n) if ![1, 3, 4].contains(n)),
                _ => false,
            };
            if image {
                v.push(with_ext(&base, "png"));
            }
        }
    }
    v
}

/// Makes `dir` (and its parents) if it does not exist; an error when it is not a directory.
pub fn make_dir(dir: &Path) -> Result<(), OutputError> {
    if dir.exists() && !dir.is_dir() {
        return Err(OutputError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a directory (--save-outputs needs a directory)",
            ),
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| OutputError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Checks every file of `files` ([`output::check`]) and then writes them; nothing is written
/// when one is refused.
pub fn write_all(
    files: &[OutFile],
    force: bool,
    inputs: &[(PathBuf, String)],
) -> Result<(), OutputError> {
    for f in files {
        output::check(&f.path, force, inputs)?;
    }
    for f in files {
        output::write_file(&f.path, &f.bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_only_safe_characters() {
        assert_eq!(file_part("ray"), "ray");
        assert_eq!(file_part("a b/c\\d"), "a_b_c_d");
        assert_eq!(file_part(".."), "_..");
        assert_eq!(file_part(""), "_");
        assert_eq!(file_part("x\u{1b}[31m"), "x__31m");
    }

    #[test]
    fn image_buffers_become_pngs_of_their_shape() {
        assert!(image_kind(Elem::U8, &[4]).is_none());
        assert!(image_kind(Elem::U8, &[2, 3, 2]).is_none());
        assert!(image_kind(Elem::F32, &[2, 3]).is_none());
        assert!(image_kind(Elem::U8, &[1 << 33, 1]).is_none());
        let rgba: Vec<u8> = (0..2 * 3 * 4).map(|i| i as u8).collect();
        let (bytes, what) = png_of(Elem::U8, &[2, 3, 4], &rgba).unwrap().unwrap();
        assert_eq!(what, "3x2 RGBA image");
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut r = dec.read_info().unwrap();
        let info = r.info();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(info.color_type, png::ColorType::Rgba);
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        r.next_frame(&mut buf).unwrap();
        assert_eq!(buf, rgba);
        let (_, what) = png_of(Elem::U32, &[2, 3], &rgba).unwrap().unwrap();
        assert_eq!(what, "3x2 RGBA image");
        let (_, what) = png_of(Elem::U8, &[2, 12], &rgba).unwrap().unwrap();
        assert_eq!(what, "12x2 grey image");
    }
}

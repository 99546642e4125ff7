//! `file:PATH` of a NumPy `.npy` array: the header is read and checked, the data taken; and
//! [`write`], the `.npy` file of an output buffer (`sim run --save-outputs`).
//!
//! The format (NumPy's `numpy.lib.format`, versions 1.0 to 3.0): the magic `\x93NUMPY`, a major
//! and a minor version byte, the header length (2 bytes little-endian in version 1, 4 in 2 and
//! 3), then the header, a Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (256,), }`, then the elements.
//!
//! The dtype must be the buffer's type, little-endian (`<f4` for `f32`, `|u1` or `<u1` for `u8`):
//! a mismatch is an error, never a reinterpretation of the bytes. A multi-dimensional array must
//! be in C order. The array must hold at least the buffer's `count` elements; the first `count`
//! are taken, as for a raw file.

use super::init::{Elem, ReadFile};

/// The first bytes of every `.npy` file.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Whether `head` (a file's first bytes) starts like a `.npy` file.
pub fn is_npy(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// The `descr` NumPy writes for `elem` (little-endian).
pub fn descr(elem: Elem) -> &'static str {
    match elem {
        Elem::I8 => "|i1",
        Elem::U8 => "|u1",
        Elem::I16 => "<i2",
        Elem::U16 => "<u2",
        Elem::I32 => "<i4",
        Elem::U32 => "<u4",
        Elem::I64 => "<i8",
        Elem::U64 => "<u8",
        Elem::F32 => "<f4",
        Elem::F64 => "<f8",
    }
}

/// The text after `'key':` in the header dict, up to the next top-level `,` or `}`.
fn value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let start = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[start..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}'])?
    };
    Some(rest[..end].trim())
}

/// The `count` elements of type `elem` of the `.npy` file `path`; `spec` names the init in
/// errors.
pub fn read(
    spec: &str,
    path: &str,
    elem: Elem,
    count: usize,
    read_file: &ReadFile,
) -> Result<Vec<u8>, String> {
    let bad = |why: String| format!("`{spec}`: {why}");
    let head = read_file(path, 12)?;
    if !is_npy(&head) || head.len() < 10 {
        return Err(bad("not a .npy file (no \\x93NUMPY magic)".into()));
    }
    let (len, at) = match head[6] {
        1 => (usize::from(u16::from_le_bytes([head[8], head[9]])), 10),
        2 | 3 if head.len() >= 12 => (
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize,
            12,
        ),
        v => {
            return Err(bad(format!(
                ".npy format version {v}: only 1, 2 and 3 exist"
            )))
        }
    };
    if len > 1 << 20 {
        return Err(bad(format!("a .npy header of {len} bytes")));
    }
    let n = count
        .checked_mul(elem.bytes())
        .ok_or_else(|| bad(format!("{count} elements overflow")))?;
    let data = read_file(path, (at + len + n) as u64)?;
    let header = data
        .get(at..at + len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| bad("the .npy header is cut short or not text".into()))?;
    let want = descr(elem);
    let got = value(header, "descr")
        .map(|d| d.trim_matches(|c| c == '\'' || c == '"'))
        .ok_or_else(|| bad(format!("no 'descr' in the .npy header {header:?}")))?;
    let same = got == want || (elem.bytes() == 1 && got.get(1..) == want.get(1..));
    if !same {
        return Err(bad(format!(
            "the array's dtype is '{got}', the buffer's {} needs '{want}' (little-endian); \
convert it with numpy: a.astype('{want}')",
            elem.name()
        )));
    }
    let shape =
        value(header, "shape").ok_or_else(|| bad("no 'shape' in the .npy header".into()))?;
    let dims: Vec<usize> = shape
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad(format!("the shape {shape} is not a tuple of sizes")))?;
    if value(header, "fortran_order") == Some("True") && dims.iter().filter(|&&d| d > 1).count() > 1
    {
        return Err(bad(
            "the array is in Fortran order: save it in C order (numpy.ascontiguousarray)".into(),
        ));
    }
    let elements = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if elements.is_none_or(|e| e < count) {
        return Err(bad(format!(
            "the array of shape {shape} has fewer than the {count} elements needed"
        )));
    }
    let body = &data[at + len..];
    if body.len() < n {
        return Err(bad(format!(
            "the file ends after {} of the {n} data bytes needed",
            body.len()
        )));
    }
    Ok(body[..n].to_vec())
}

/// The `.npy` file (format version 1.0, as `numpy.save` writes it) of the C-order array
/// `data` of `elem`s with dimensions `shape`: the magic, the version, the header dict padded
/// with spaces and a newline so that the data starts at a multiple of 64 bytes, then `data`.
/// The caller gives as many bytes as the shape holds.
pub fn write(elem: Elem, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let tuple = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {tuple}, }}",
        descr(elem)
    );
    // Version 1.0 counts the header in 2 bytes; a longer one (thousands of dimensions) needs
    // version 2.0's 4.
    let long = header.len() + 64 > usize::from(u16::MAX);
    let prefix = if long { 12 } else { 10 };
    while !(prefix + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(prefix + header.len() + data.len());
    out.extend_from_slice(MAGIC);
    if long {
        out.extend([2, 0]);
        out.extend((header.len() as u32).to_le_bytes());
    } else {
        out.extend([1, 0]);
        out.extend((header.len() as u16).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_numpy_writes_and_reads_it_back() {
        // numpy.save of np.arange(6, dtype='<i4').reshape(2, 3): these exact 128 + 24 bytes.
        let data: Vec<u8> = (0..6i32).flat_map(|v| v.to_le_bytes()).collect();
        let f = write(Elem::I32, &[2, 3], &data);
        let dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
        assert_eq!(&f[..6], MAGIC);
        assert_eq!(&f[6..8], [1, 0]);
        assert_eq!(u16::from_le_bytes([f[8], f[9]]), 118);
        assert_eq!(&f[10..10 + dict.len()], dict.as_bytes());
        assert!(f[10 + dict.len()..127].iter().all(|&b| b == b' '));
        assert_eq!(f[127], b'\n');
        assert_eq!(&f[128..], data);
        assert_eq!(f, npy(dict, &data));
        assert_eq!(read("s", "p", Elem::I32, 6, &from(f)).unwrap(), data);
        let one = write(Elem::U8, &[3], &[7, 8, 9]);
        let dict = b"{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }";
        assert_eq!(&one[10..10 + dict.len()], dict);
        assert_eq!(one.len(), 128 + 3);
    }

    /// A version-1 `.npy` file of `data` with header dict `dict`, padded as NumPy pads it.
    fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut header = dict.to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut out = MAGIC.to_vec();
        out.extend([1, 0]);
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    fn from(file: Vec<u8>) -> impl Fn(&str, u64) -> Result<Vec<u8>, String> {
        move |_, n| Ok(file[..file.len().min(n as usize)].to_vec())
    }

    #[test]
    fn reads_the_data_of_a_matching_array() {
        let data: Vec<u8> = (0..8u32).flat_map(|v| v.to_le_bytes()).collect();
        let f = npy(
            "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 4), }",
            &data,
        );
        assert_eq!(
            read("file:a.npy", "a.npy", Elem::U32, 8, &from(f.clone())).unwrap(),
            data
        );
        assert_eq!(
            read("file:a.npy", "a.npy", Elem::U32, 3, &from(f)).unwrap(),
            data[..12]
        );
        let bytes = npy(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
            &[7, 8, 9],
        );
        assert_eq!(
            read("s", "p", Elem::U8, 3, &from(bytes)).unwrap(),
            [7, 8, 9]
        );
    }

    #[test]
    fn mismatches_are_errors_that_say_what_to_do() {
        let f32s = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            &[0; 16],
        );
        let e = read("file:a.npy", "a.npy", Elem::I32, 4, &from(f32s.clone())).unwrap_err();
        assert!(
            e.contains("dtype is '<f4'") && e.contains("astype('<i4')"),
            "{e}"
        );
        let e = read("file:a.npy", "a.npy", Elem::F32, 5, &from(f32s)).unwrap_err();
        assert!(e.contains("fewer than the 5 elements"), "{e}");
        let big = npy(
            "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
            &[0; 16],
        );
        assert!(read("s", "p", Elem::F32, 4, &from(big))
            .unwrap_err()
            .contains("'>f4'"));
        let fortran = npy(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
            &[0; 16],
        );
        assert!(read("s", "p", Elem::F32, 4, &from(fortran))
            .unwrap_err()
            .contains("Fortran"));
        let short = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            &[0; 8],
        );
        assert!(read("s", "p", Elem::F32, 4, &from(short))
            .unwrap_err()
            .contains("ends after 8"));
        assert!(read("s", "p", Elem::F32, 4, &from(vec![1, 2, 3]))
            .unwrap_err()
            .contains("magic"));
    }
}

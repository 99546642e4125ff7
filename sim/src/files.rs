//! Reading the files a user names (configs, workload files, PTX, CUDA sources, `file:` inits),
//! each with a size limit, so that `ptx = "/dev/zero"` or a runaway file is one error naming the
//! file and the limit instead of a read that takes the host's memory (issue 40).
//!
//! The limit is checked while reading (`Read::take`), not from the file's metadata: a device or a
//! pipe reports a length of 0.

use std::io::{self, Read};
use std::path::Path;

/// The largest text file read (a config, a workload file, a PTX module or a CUDA source), in
/// bytes: 64 MiB, over 2,500 times the largest bundled PTX (`kernels/ptx/ray.ptx`, 24 KB); a
/// module that size already takes far more host memory to simulate than it does to read.
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Reads all of `path`, refusing a file longer than `limit` bytes with an
/// [`io::ErrorKind::FileTooLarge`] error that names the limit; `what` names the kind of file in
/// that message (`"PTX file"`).
pub fn read_limited(path: &Path, limit: u64, what: &str) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut data = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut data)?;
    if data.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("longer than {}, the limit for a {what}", size(limit)),
        ));
    }
    Ok(data)
}

/// [`read_limited`] with [`MAX_TEXT_BYTES`], as UTF-8 text (an [`io::ErrorKind::InvalidData`]
/// error otherwise, as [`std::fs::read_to_string`] gives).
pub fn read_text(path: &Path, what: &str) -> io::Result<String> {
    String::from_utf8(read_limited(path, MAX_TEXT_BYTES, what)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// The first `n` bytes of `path`, or all of it when it is shorter: a `file:` initializer reads
/// what its buffer holds and no more.
pub fn read_prefix(path: &Path, n: u64) -> io::Result<Vec<u8>> {
    let mut data = Vec::new();
    std::fs::File::open(path)?.take(n).read_to_end(&mut data)?;
    Ok(data)
}

/// `64 MiB`, `512 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn endless_files_stop_at_the_limit() {
        let e = read_limited(Path::new("/dev/zero"), 1 << 20, "PTX file").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(e.to_string(), "longer than 1 MiB, the limit for a PTX file");
        assert_eq!(
            read_prefix(Path::new("/dev/zero"), 100).unwrap(),
            vec![0; 100]
        );
    }

    #[test]
    fn files_within_the_limit_are_read_whole() {
        let p = std::env::temp_dir().join(format!("gpumemsim-files-{}", std::process::id()));
        std::fs::write(&p, "abc").unwrap();
        assert_eq!(read_limited(&p, 3, "test").unwrap(), b"abc");
        assert!(read_limited(&p, 2, "test").is_err());
        assert_eq!(read_prefix(&p, 2).unwrap(), b"ab");
        assert_eq!(read_prefix(&p, 10).unwrap(), b"abc");
        std::fs::remove_file(&p).unwrap();
    }
}

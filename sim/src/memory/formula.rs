//! Buffer contents given by a formula of the element index (`iota`), read without being stored.
//!
//! A workload's `iota` input is `0, 1, 2, ...`: any byte of it is known from its offset, so the
//! simulated memory keeps such a buffer as its formula until a kernel first writes it
//! ([`super::image::MemoryImage::alloc_formula`]). Loads compute their values; the host writes
//! none of the buffer and reads none of it back. For read_stride's 128 MiB input that was a pass
//! of page faults and writes before the launches and a host cache miss per lane after them (about
//! a tenth of its time in the benchmark, `docs/speed.md`).

/// The contents of a buffer whose element `k` is a pure function of `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formula {
    /// `0, 1, 2, ...` as little-endian integers of 1, 2, 4 or 8 bytes (wrapping to the width),
    /// as `iota` writes an integer buffer.
    IotaInt {
        /// Bytes per element: 1, 2, 4 or 8.
        bytes: u8,
    },
    /// `0.0, 1.0, 2.0, ...` as IEEE 754 binary32 (`k as f32`, round to nearest above 2^24).
    IotaF32,
    /// `0.0, 1.0, 2.0, ...` as IEEE 754 binary64.
    IotaF64,
}

impl Formula {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Formula::IotaInt { bytes } => usize::from(bytes),
            Formula::IotaF32 => 4,
            Formula::IotaF64 => 8,
        }
    }

    /// The bits of element `k` (the low [`Formula::size`] bytes are the element's little-endian
    /// bytes; the others are zero).
    #[inline(always)]
    pub fn element(self, k: usize) -> u64 {
        match self {
            Formula::IotaInt { bytes: 8 } => k as u64,
            Formula::IotaInt { bytes } => k as u64 & ((1u64 << (8 * bytes)) - 1),
            Formula::IotaF32 => u64::from((k as i64 as f32).to_bits()),
            Formula::IotaF64 => (k as i64 as f64).to_bits(),
        }
    }

    /// The `n` (1..=8) little-endian bytes at byte `off` of the buffer: one element when the
    /// access is one whole element, else assembled byte by byte from the elements it spans.
    #[inline(always)]
    pub fn bytes_at(self, off: usize, n: usize) -> u64 {
        let size = self.size();
        if n == size && off & (size - 1) == 0 {
            return self.element(off / size);
        }
        self.bytes_spanning(off, n)
    }

    /// [`Formula::bytes_at`] of an access that is not one whole element, out of line.
    #[inline(never)]
    fn bytes_spanning(self, off: usize, n: usize) -> u64 {
        let size = self.size();
        (0..n).fold(0, |v, j| {
            let b = off + j;
            let byte = (self.element(b / size) >> (8 * (b % size))) & 0xff;
            v | byte << (8 * j)
        })
    }

    /// For each of the 32 lanes `l`, [`Formula::bytes_at`] of `off + l * stride` into `out[l]`:
    /// the kind decided once per warp, the lanes in a loop of their own.
    #[inline]
    pub fn run(self, off: usize, n: usize, stride: usize, out: &mut [u64; 32]) {
        let size = self.size();
        if n == size && (off | stride) & (size - 1) == 0 {
            let (first, step) = (off / size, stride / size);
            // One loop per kind, each with its element's conversion inlined. Floats from 32-bit
            // integers where the elements' numbers fit, as `iota` converts them: the loop
            // vectorises (no vector conversion from 64-bit integers before AVX-512).
            let small = first + 31 * step <= i32::MAX as usize;
            match self {
                Formula::IotaF32 if small => {
                    each(out, first, step, |k| u64::from((k as i32 as f32).to_bits()))
                }
                Formula::IotaF32 => each(out, first, step, |k| Formula::IotaF32.element(k)),
                Formula::IotaF64 => each(out, first, step, |k| Formula::IotaF64.element(k)),
                _ => each(out, first, step, |k| self.element(k)),
            }
        } else {
            for (l, o) in out.iter_mut().enumerate() {
                *o = self.bytes_spanning(off + l * stride, n);
            }
        }
    }

    /// Writes the buffer's first `dst.len()` bytes (whole elements) into `dst`, on every core
    /// for a large buffer when `parallel` (not from inside a launch: a pool thread waiting on
    /// its parts may run another block, which could ask for the same buffer).
    pub fn fill(self, dst: &mut [u8], parallel: bool) {
        let size = self.size();
        debug_assert!(dst.len().is_multiple_of(size));
        match size {
            1 => self.fill_parts::<1>(dst, parallel),
            2 => self.fill_parts::<2>(dst, parallel),
            4 => self.fill_parts::<4>(dst, parallel),
            _ => self.fill_parts::<8>(dst, parallel),
        }
    }

    /// [`Formula::fill`] of elements of `B` bytes (a constant: each element one store).
    fn fill_parts<const B: usize>(self, dst: &mut [u8], parallel: bool) {
        fill_elements(dst, parallel, |k| -> [u8; B] {
            let bytes = self.element(k).to_le_bytes();
            std::array::from_fn(|j| bytes[j])
        });
    }

    /// The buffer's first `bytes` bytes (whole elements).
    pub fn contents(self, bytes: usize) -> Vec<u8> {
        let mut v = vec![0; bytes];
        self.fill(&mut v, true);
        v
    }
}

/// Writes element `k` of `dst` (elements of `B` bytes) as `bytes(k)`. With `parallel`, a buffer
/// of more than [`FILL_PART`] bytes is written a part at a time on every core: its first touch of
/// each page (a page fault) is most of the time, and each element depends only on its index.
/// Without, on this thread alone (from inside a launch: a pool thread waiting on its parts may
/// run another block, which could ask for the same buffer).
pub(crate) fn fill_elements<const B: usize>(
    dst: &mut [u8],
    parallel: bool,
    bytes: impl Fn(usize) -> [u8; B] + Sync,
) {
    use rayon::prelude::*;
    if !parallel || dst.len() <= FILL_PART {
        return fill_from(dst, 0, &bytes);
    }
    // `B` (1, 2, 4 or 8) divides the part's size: part `i` starts at element `i * FILL_PART / B`.
    (dst.par_chunks_mut(FILL_PART).enumerate())
        .for_each(|(i, part)| fill_from(part, i * (FILL_PART / B), &bytes));
}

/// Bytes of a part of a large buffer that [`fill_elements`] writes on one core (512 KiB: eight
/// parts for transpose's 4 MiB matrix, which as one part of 4 MiB was written on one core; about a
/// hundred for the main job's 51 MB buffers).
pub(crate) const FILL_PART: usize = 512 << 10;

/// [`fill_elements`] of `dst` on this core, its elements numbered from `first`.
fn fill_from<const B: usize>(dst: &mut [u8], first: usize, bytes: &impl Fn(usize) -> [u8; B]) {
    for (k, c) in dst.chunks_exact_mut(B).enumerate() {
        c.copy_from_slice(&bytes(first + k));
    }
}

/// `out[l] = element(first + l * step)` for the 32 lanes.
#[inline(always)]
fn each(out: &mut [u64; 32], first: usize, step: usize, element: impl Fn(usize) -> u64) {
    (out.iter_mut().enumerate()).for_each(|(l, o)| *o = element(first + l * step));
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Formula; 6] = [
        Formula::IotaInt { bytes: 1 },
        Formula::IotaInt { bytes: 2 },
        Formula::IotaInt { bytes: 4 },
        Formula::IotaInt { bytes: 8 },
        Formula::IotaF32,
        Formula::IotaF64,
    ];

    /// Little-endian `n` bytes at `off` of `buf`.
    fn le(buf: &[u8], off: usize, n: usize) -> u64 {
        (0..n).fold(0, |v, j| v | u64::from(buf[off + j]) << (8 * j))
    }

    #[test]
    fn every_access_reads_the_filled_bytes() {
        for f in ALL {
            let buf = f.contents(f.size() * 300);
            for n in 1..=8 {
                for off in 0..buf.len() - n {
                    assert_eq!(f.bytes_at(off, n), le(&buf, off, n), "{f:?} {off} {n}");
                }
            }
            for (n, stride) in [
                (f.size(), f.size()),
                (f.size(), 3 * f.size()),
                (2, 6),
                (4, 5),
            ] {
                for off in [0, 1, 4, 8, 16] {
                    let mut out = [0; 32];
                    f.run(off, n, stride, &mut out);
                    for (l, &v) in out.iter().enumerate() {
                        assert_eq!(v, le(&buf, off + l * stride, n), "{f:?} {off} {n} {stride}");
                    }
                }
            }
        }
    }

    #[test]
    fn large_buffers_fill_in_parts_with_the_same_bytes() {
        // Three parts of 512 KiB and a bit: element numbers carry across the parts.
        let f = Formula::IotaInt { bytes: 4 };
        let buf = f.contents(3 * (512 << 10) + 64);
        for k in [0, 131_071, 131_072, 131_073, 393_231] {
            assert_eq!(le(&buf, 4 * k, 4), k as u64);
        }
        assert_eq!(Formula::IotaInt { bytes: 1 }.element(257), 1);
        assert_eq!(Formula::IotaF32.element(3), u64::from(3.0f32.to_bits()));
        // Above 2^24 a float rounds to nearest even, as `k as f32`.
        assert_eq!(
            Formula::IotaF32.element(16_777_217),
            u64::from(16_777_216.0f32.to_bits())
        );
    }
}

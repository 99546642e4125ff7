//! The view of a launch's global allocations that its SMs read and write concurrently
//! ([`GlobalView`]): bounds, single accesses, runs, strided and scattered lanes, word by word
//! where the host's bytes allow, and the formula allocations filled on first touch.

use super::{find_span, nearest, Pending};
use crate::memory::formula::Formula;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};

#[derive(Debug)]
pub(super) struct AllocView<'a> {
    pub(super) name: &'a str,
    pub(super) base: u64,
    pub(super) data: &'a [AtomicU8],
    /// The allocation's formula state, if it had one when the view was made.
    pub(super) pending: Option<&'a Pending>,
}

/// Global memory shared by the threads that execute a launch ([`MemoryImage::view`]).
///
/// [`MemoryImage::view`]: super::MemoryImage::view
#[derive(Debug)]
pub struct GlobalView<'a> {
    pub(super) allocs: Vec<AllocView<'a>>,
}

impl GlobalView<'_> {
    /// Allocation `i`'s formula while its bytes do not hold it ([`MemoryImage::alloc_formula`]):
    /// a read computes its bytes.
    ///
    /// [`MemoryImage::alloc_formula`]: super::MemoryImage::alloc_formula
    #[inline(always)]
    fn formula(&self, i: usize) -> Option<Formula> {
        self.allocs[i].pending.and_then(Pending::formula)
    }

    /// Before a write to allocation `i`: its formula, if it still has one, written into its
    /// bytes (once, by the first writer; the others wait for it).
    #[inline(always)]
    fn settle(&self, i: usize) {
        let a = &self.allocs[i];
        if let Some(p) = a.pending {
            if p.on.load(Acquire) {
                p.settle(a.data);
            }
        }
    }

    /// Index of the allocation holding `[addr, addr+len)` entirely.
    #[inline]
    pub fn find(&self, addr: u64, len: u64) -> Option<usize> {
        find_span(
            &self.allocs,
            |a| (a.base, a.base + a.data.len() as u64),
            addr,
            len,
        )
    }

    /// First and one-past-last address of allocation `i`.
    #[inline]
    pub fn bounds(&self, i: usize) -> (u64, u64) {
        let a = &self.allocs[i];
        (a.base, a.base + a.data.len() as u64)
    }

    /// First and one-past-last address of allocation `i`, if there is one.
    #[inline]
    pub fn try_bounds(&self, i: usize) -> Option<(u64, u64)> {
        let a = self.allocs.get(i)?;
        Some((a.base, a.base + a.data.len() as u64))
    }

    /// Asks the host to bring the bytes `[off, off + len)` of allocation `i` into its caches
    /// (x86-64's `prefetcht0`, a 64-byte line at a time; nothing elsewhere). Only a hint: a
    /// range outside the allocation does nothing.
    #[inline(always)]
    pub fn prefetch(&self, i: usize, off: u64, len: u64) {
        if self.formula(i).is_none() {
            let data = &self.allocs[i].data;
            if off.checked_add(len).is_some_and(|e| e <= data.len() as u64) {
                let p = data.as_ptr().wrapping_add(off as usize);
                let mut k = 0;
                while k < len {
                    crate::memory::prefetch_line(p.wrapping_add(k as usize).cast());
                    k += 64;
                }
            }
        }
    }

    /// Reads `n` (1..=8) little-endian bytes at byte `off` of allocation `i`.
    #[inline]
    pub fn read(&self, i: usize, off: usize, n: usize) -> Option<u64> {
        let b = self.allocs[i].data.get(off..off.checked_add(n)?)?;
        if let Some(f) = self.formula(i) {
            return Some(f.bytes_at(off, n));
        }
        let p = b.as_ptr();
        // Naturally aligned accesses (all PTX allows) are one relaxed load.
        Some(if word_at(p, n) {
            // SAFETY: `p` points at `n` live, aligned bytes of the view (checked above); the
            // atomic types have the layout of the integers.
            unsafe {
                match n {
                    1 => u64::from(b[0].load(Relaxed)),
                    2 => u64::from(AtomicU16::from_ptr(p as *mut u16).load(Relaxed)),
                    4 => u64::from(AtomicU32::from_ptr(p as *mut u32).load(Relaxed)),
                    8 => AtomicU64::from_ptr(p as *mut u64).load(Relaxed),
                    _ => bytes_le(b),
                }
            }
        } else {
            bytes_le(b)
        })
    }

    /// Writes the low `n` (1..=8) bytes of `v` at byte `off` of allocation `i`; `false` when
    /// out of range.
    #[inline]
    pub fn write(&self, i: usize, off: usize, n: usize, v: u64) -> bool {
        let Some(b) = off
            .checked_add(n)
            .and_then(|end| self.allocs[i].data.get(off..end))
        else {
            return false;
        };
        self.settle(i);
        let p = b.as_ptr();
        if word_at(p, n) {
            // SAFETY: as in `read`.
            unsafe {
                match n {
                    1 => b[0].store(v as u8, Relaxed),
                    2 => AtomicU16::from_ptr(p as *mut u16).store(v as u16, Relaxed),
                    4 => AtomicU32::from_ptr(p as *mut u32).store(v as u32, Relaxed),
                    _ => AtomicU64::from_ptr(p as *mut u64).store(v, Relaxed),
                }
            }
        } else {
            for (k, byte) in b.iter().enumerate() {
                byte.store((v >> (8 * k)) as u8, Relaxed);
            }
        }
        true
    }

    /// Reads, for each of the 32 lanes `l`, the `n` (1..=8) little-endian bytes at byte
    /// `off + l * stride` of allocation `i` into `out[l]` (a warp's consecutive elements: one
    /// bounds check and one dispatch on the size for the warp); `false`, having read nothing,
    /// when the last lane's bytes are out of range.
    #[inline]
    pub fn read_run(
        &self,
        i: usize,
        off: usize,
        n: usize,
        stride: usize,
        out: &mut [u64; 32],
    ) -> bool {
        let Some(b) = self.run_bytes(i, off, n, stride) else {
            return false;
        };
        if let Some(f) = self.formula(i) {
            f.run(off, n, stride, out);
            return true;
        }
        let p = b.as_ptr();
        if word_aligned(p, n, stride) {
            // SAFETY: every lane's `n` bytes lie in `b` (checked above) and are aligned (the
            // first lane's are, and the stride is a multiple of `n`).
            unsafe {
                // Consecutive elements with the step a constant, so the lanes are at fixed
                // offsets; another stride out of line (its 32 offsets, worked out first, were
                // hoisted into every caller's path for runs: about a hundred instructions).
                match (n, stride == n) {
                    (1, true) => load_each(p, 1, 1, out),
                    (2, true) => load_each(p, 2, 2, out),
                    (4, true) => load_each(p, 4, 4, out),
                    (8, true) => load_each(p, 8, 8, out),
                    _ => load_strided(p, n, stride, out),
                }
            }
        } else {
            for (l, o) in out.iter_mut().enumerate() {
                *o = bytes_le(&b[l * stride..][..n]);
            }
        }
        true
    }

    /// [`Self::read_run`] of 32 consecutive 32-bit words (`n` and `stride` 4), inlined into the
    /// caller with both constant (a whole warp's word load: no call and no dispatch on the size);
    /// a host buffer not aligned to 4 bytes goes to `read_run`.
    #[inline(always)]
    pub fn read_word_run(&self, i: usize, off: usize, out: &mut [u64; 32]) -> bool {
        let Some(b) = self.run_bytes(i, off, 4, 4) else {
            return false;
        };
        if let Some(f) = self.formula(i) {
            f.run(off, 4, 4, out);
            return true;
        }
        let p = b.as_ptr();
        if !word_aligned(p, 4, 4) {
            return self.read_run(i, off, 4, 4, out);
        }
        // SAFETY: every lane's 4 bytes lie in `b` (checked above) and are aligned (the first
        // lane's are, and the stride is 4).
        unsafe { load_each(p, 4, 4, out) };
        true
    }

    /// Reads, for each lane `l` of `mask`, the `n` (1..=8) little-endian bytes at byte `off(l)`
    /// of allocation `i` into `out[l]` (a warp's scattered elements: one dispatch on the size
    /// for the warp); `false` when a lane's bytes are out of range (`out` then holds some of
    /// the lanes).
    #[inline]
    pub fn read_lanes(
        &self,
        i: usize,
        mask: u32,
        off: impl Fn(usize) -> usize,
        n: usize,
        out: &mut [u64; 32],
    ) -> bool {
        let data = self.allocs[i].data;
        if let Some(f) = self.formula(i) {
            return formula_lanes(f, data.len(), mask, off, n, out);
        }
        let lane = |l: usize| {
            let o = off(l);
            data.get(o..o.checked_add(n)?)
        };
        let mut m = mask;
        macro_rules! each_lane {
            ($b:ident => $v:expr) => {
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let Some($b) = lane(l) else {
                        return false;
                    };
                    out[l] = $v;
                }
            };
        }
        // SAFETY (each load): as in `read`: the lane's `n` bytes lie in `b` (`get` checked them)
        // and are aligned (checked next to the load).
        match n {
            1 => each_lane!(b => u64::from(b[0].load(Relaxed))),
            2 => each_lane!(b => if (b.as_ptr() as usize).is_multiple_of(2) {
                u64::from(unsafe { AtomicU16::from_ptr(b.as_ptr() as *mut u16) }.load(Relaxed))
            } else {
                bytes_le(b)
            }),
            4 => each_lane!(b => if (b.as_ptr() as usize).is_multiple_of(4) {
                u64::from(unsafe { AtomicU32::from_ptr(b.as_ptr() as *mut u32) }.load(Relaxed))
            } else {
                bytes_le(b)
            }),
            8 => each_lane!(b => if (b.as_ptr() as usize).is_multiple_of(8) {
                unsafe { AtomicU64::from_ptr(b.as_ptr() as *mut u64) }.load(Relaxed)
            } else {
                bytes_le(b)
            }),
            _ => each_lane!(b => bytes_le(b)),
        }
        true
    }

    /// Reads, for each of the 32 lanes `l`, the aligned 4-byte little-endian word at byte
    /// `off(l)` of allocation `i` into `out[l]`, sign-extended from bit 31 when `SIGNED` (a whole
    /// warp's scattered 32-bit loads: one pass with the destination, a range and alignment test
    /// of three instructions a lane); `false` when a lane's word is out of range or misaligned
    /// (`out` then holds some of the lanes).
    #[inline]
    pub fn read_words<const SIGNED: bool>(
        &self,
        i: usize,
        off: impl Fn(usize) -> usize,
        out: &mut [u64; 32],
    ) -> bool {
        let data = self.allocs[i].data;
        let p = data.as_ptr();
        let Some(last) = data.len().checked_sub(4) else {
            return false;
        };
        if !(p as usize).is_multiple_of(4) {
            return false;
        }
        if let Some(f) = self.formula(i) {
            // The same range and alignment test, then the word from the formula.
            let word = |at: usize| f.bytes_at(at, 4) as u32;
            return words_with::<SIGNED>(last, off, out, word);
        }
        // SAFETY: `words_with` passes only a multiple of 4 at most `last`, so the word's 4 bytes
        // lie in `data` and are aligned (`p` is); the atomic type has the layout of the integer.
        let word = |at: usize| unsafe { AtomicU32::from_ptr(p.add(at) as *mut u32) }.load(Relaxed);
        words_with::<SIGNED>(last, off, out, word)
    }

    /// Writes, for each of the 32 lanes `l`, the low `n` (1..=8) bytes of `v[l]` at byte
    /// `off + l * stride` of allocation `i` (lanes in order, so a later lane's bytes win where
    /// they overlap); `false`, having written nothing, when the last lane's bytes are out of
    /// range.
    #[inline]
    pub fn write_run(&self, i: usize, off: usize, n: usize, stride: usize, v: &[u64; 32]) -> bool {
        let Some(b) = self.run_bytes(i, off, n, stride) else {
            return false;
        };
        self.settle(i);
        let p = b.as_ptr();
        if word_aligned(p, n, stride) {
            // SAFETY: as in `read_run`.
            unsafe {
                // The step a constant where it can be, as in `read_run`.
                match (n, stride == n) {
                    (1, true) => store_each(p, 1, 1, v),
                    (2, true) => store_each(p, 2, 2, v),
                    (4, true) => store_each(p, 4, 4, v),
                    (8, true) => store_each(p, 8, 8, v),
                    _ => store_strided(p, n, stride, v),
                }
            }
        } else {
            for (l, &x) in v.iter().enumerate() {
                for (k, byte) in b[l * stride..][..n].iter().enumerate() {
                    byte.store((x >> (8 * k)) as u8, Relaxed);
                }
            }
        }
        true
    }

    /// [`Self::write_run`] of 32 consecutive 32-bit words (`n` and `stride` 4), inlined as
    /// [`Self::read_word_run`] is.
    #[inline(always)]
    pub fn write_word_run(&self, i: usize, off: usize, v: &[u64; 32]) -> bool {
        let Some(b) = self.run_bytes(i, off, 4, 4) else {
            return false;
        };
        self.settle(i);
        let p = b.as_ptr();
        if !word_aligned(p, 4, 4) {
            return self.write_run(i, off, 4, 4, v);
        }
        // SAFETY: as in `read_word_run`.
        unsafe { store_each(p, 4, 4, v) };
        true
    }

    /// The bytes of allocation `i` from `off` to the end of the 32nd of `n` bytes every
    /// `stride`, if in range.
    #[inline]
    fn run_bytes(&self, i: usize, off: usize, n: usize, stride: usize) -> Option<&[AtomicU8]> {
        let end = stride.checked_mul(31)?.checked_add(n)?.checked_add(off)?;
        self.allocs[i].data.get(off..end)
    }

    /// Describes where `addr` lies relative to the nearest allocation, for fault reports.
    pub fn nearest(&self, addr: u64) -> String {
        nearest(
            self.allocs
                .iter()
                .map(|a| (a.name, a.base, a.data.len() as u64)),
            addr,
        )
    }
}

/// [`GlobalView::read_lanes`] of an allocation of `len` bytes still given by its formula `f`.
fn formula_lanes(
    f: Formula,
    len: usize,
    mut mask: u32,
    off: impl Fn(usize) -> usize,
    n: usize,
    out: &mut [u64; 32],
) -> bool {
    while mask != 0 {
        let l = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let o = off(l);
        if o.checked_add(n).is_none_or(|end| end > len) {
            return false;
        }
        out[l] = f.bytes_at(o, n);
    }
    true
}

/// [`GlobalView::read_words`]'s loop with `word(at)` the word at byte `at`: `word` is called only
/// with `at` a multiple of 4 at most `last`; another lane's offset returns `false`.
#[inline(always)]
fn words_with<const SIGNED: bool>(
    last: usize,
    off: impl Fn(usize) -> usize,
    out: &mut [u64; 32],
    word: impl Fn(usize) -> u32,
) -> bool {
    for (l, o) in out.iter_mut().enumerate() {
        let at = off(l);
        // A multiple of 4 rotates to `at / 4`; any other offset to above `usize::MAX / 4`, past
        // `last / 4`: one compare for the range and the alignment.
        if at.rotate_right(2) > last / 4 {
            return false;
        }
        let w = word(at);
        *o = if SIGNED {
            w as i32 as i64 as u64
        } else {
            u64::from(w)
        };
    }
    true
}

/// Loads, for each of the 32 lanes `l`, the aligned atomic word of `n` bytes (1, 2, 4 or 8) at
/// `p + l * step` into `out[l]`; inlined, so that a constant `step` is a fixed offset per lane.
///
/// # Safety
/// Every lane's `n` bytes are live bytes of a view, aligned to `n`.
#[inline(always)]
unsafe fn load_each(p: *const AtomicU8, n: usize, step: usize, out: &mut [u64; 32]) {
    // SAFETY: the caller's; the atomic types have the layout of the integers.
    unsafe {
        let at = |l: usize| p.add(l * step);
        match n {
            1 => (out.iter_mut().enumerate())
                .for_each(|(l, o)| *o = u64::from((*at(l)).load(Relaxed))),
            2 => out.iter_mut().enumerate().for_each(|(l, o)| {
                *o = u64::from(AtomicU16::from_ptr(at(l) as *mut u16).load(Relaxed))
            }),
            4 => out.iter_mut().enumerate().for_each(|(l, o)| {
                *o = u64::from(AtomicU32::from_ptr(at(l) as *mut u32).load(Relaxed))
            }),
            _ => out
                .iter_mut()
                .enumerate()
                .for_each(|(l, o)| *o = AtomicU64::from_ptr(at(l) as *mut u64).load(Relaxed)),
        }
    }
}

/// [`load_each`] with a variable step, out of line.
///
/// # Safety
/// As for [`load_each`].
#[inline(never)]
unsafe fn load_strided(p: *const AtomicU8, n: usize, step: usize, out: &mut [u64; 32]) {
    // SAFETY: the caller's.
    unsafe { load_each(p, n, step, out) }
}

/// Stores, for each of the 32 lanes `l` in order, the low `n` bytes (1, 2, 4 or 8) of `v[l]` as
/// one aligned atomic word at `p + l * step`; inlined, so that a constant `step` is a fixed
/// offset per lane.
///
/// # Safety
/// Every lane's `n` bytes are live bytes of a view, aligned to `n`.
#[inline(always)]
unsafe fn store_each(p: *const AtomicU8, n: usize, step: usize, v: &[u64; 32]) {
    // SAFETY: the caller's; the atomic types have the layout of the integers.
    unsafe {
        let at = |l: usize| p.add(l * step);
        match n {
            1 => (v.iter().enumerate()).for_each(|(l, &x)| (*at(l)).store(x as u8, Relaxed)),
            2 => v.iter().enumerate().for_each(|(l, &x)| {
                AtomicU16::from_ptr(at(l) as *mut u16).store(x as u16, Relaxed)
            }),
            4 => v.iter().enumerate().for_each(|(l, &x)| {
                AtomicU32::from_ptr(at(l) as *mut u32).store(x as u32, Relaxed)
            }),
            _ => v
                .iter()
                .enumerate()
                .for_each(|(l, &x)| AtomicU64::from_ptr(at(l) as *mut u64).store(x, Relaxed)),
        }
    }
}

/// [`store_each`] with a variable step, out of line.
///
/// # Safety
/// As for [`store_each`].
#[inline(never)]
unsafe fn store_strided(p: *const AtomicU8, n: usize, step: usize, v: &[u64; 32]) {
    // SAFETY: the caller's.
    unsafe { store_each(p, n, step, v) }
}

/// Whether every lane's `n` bytes of a run from `p` every `stride` bytes are one aligned atomic
/// word (1, 2, 4 or 8 bytes): the first lane's are, and the stride keeps the alignment.
#[inline]
fn word_aligned(p: *const AtomicU8, n: usize, stride: usize) -> bool {
    // A mask, not `is_multiple_of(n)`: with `n` unknown at compile time that was two 64-bit
    // divisions per warp access (slow on the host, whatever their instruction count).
    matches!(n, 1 | 2 | 4 | 8) && ((p as usize) | stride) & (n - 1) == 0
}

/// Whether `p` is aligned to `n` bytes, `n` one of 1, 2, 4 or 8 (a word a single load moves):
/// a mask, not `is_multiple_of(n)`, a division when `n` is not known at compile time.
#[inline(always)]
fn word_at(p: *const AtomicU8, n: usize) -> bool {
    matches!(n, 1 | 2 | 4 | 8) && (p as usize) & (n - 1) == 0
}

fn bytes_le(b: &[AtomicU8]) -> u64 {
    b.iter()
        .enumerate()
        .fold(0, |v, (k, x)| v | u64::from(x.load(Relaxed)) << (8 * k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::image::MemoryImage;

    #[test]
    fn a_formula_allocation_reads_as_its_bytes_until_written_then_as_memory() {
        let f = Formula::IotaInt { bytes: 4 };
        let mut lazy = MemoryImage::new(16);
        lazy.alloc_formula("a", f, 1024).unwrap();
        let mut eager = MemoryImage::new(16);
        eager.alloc("a", f.contents(1024));
        assert_eq!(lazy.allocs[0].contents(), eager.allocs[0].contents());
        {
            let (l, _) = lazy.view();
            let (e, _) = eager.view();
            // Every read path gives the bytes, and refuses what it refuses, as memory does.
            for (off, n) in [(0, 4), (4, 4), (5, 4), (6, 2), (1020, 4), (1021, 4), (3, 8)] {
                assert_eq!(l.read(0, off, n), e.read(0, off, n), "{off} {n}");
            }
            for (off, n, stride) in [(0, 4, 4), (8, 4, 12), (1, 2, 3), (900, 4, 4)] {
                let (mut a, mut b) = ([0; 32], [0; 32]);
                let ok = l.read_run(0, off, n, stride, &mut a);
                assert_eq!(ok, e.read_run(0, off, n, stride, &mut b));
                assert!(!ok || a == b, "{off} {n} {stride}");
            }
            let (mut a, mut b) = ([0; 32], [0; 32]);
            assert!(l.read_word_run(0, 64, &mut a) && e.read_word_run(0, 64, &mut b));
            assert_eq!(a, b);
            let at = |l: usize| (l * 52) % 1000;
            assert!(l.read_lanes(0, u32::MAX, at, 4, &mut a));
            assert!(e.read_lanes(0, u32::MAX, at, 4, &mut b));
            assert_eq!(a, b);
            assert!(!l.read_lanes(0, 1, |_| 1022, 4, &mut a));
            assert!(l.read_words::<true>(0, |l| l * 32, &mut a));
            assert!(e.read_words::<true>(0, |l| l * 32, &mut b));
            assert_eq!(a, b);
            assert!(!l.read_words::<false>(0, |l| l * 2, &mut a));
            // A refused write leaves the formula; the first write puts it in memory.
            assert!(!l.write(0, 1022, 4, 7));
            assert!(l.formula(0).is_some());
            assert!(l.write(0, 8, 4, 0xabcd));
            assert!(l.formula(0).is_none());
            assert_eq!(l.read(0, 8, 4), Some(0xabcd));
            assert_eq!(l.read(0, 12, 4), Some(3));
        }
        let mut want = f.contents(1024);
        want[8..12].copy_from_slice(&0xabcd_u32.to_le_bytes());
        assert_eq!(&*lazy.allocs[0].contents(), &want[..]);
        // Outside a launch: the bytes to change, written from the formula first.
        let mut other = MemoryImage::new(16);
        other.alloc_formula("b", Formula::IotaF32, 64).unwrap();
        other.allocs[0].bytes_mut()[0] = 1;
        assert_eq!(other.allocs[0].contents()[4..8], 1.0f32.to_le_bytes());
        assert_eq!(other.allocs[0].contents()[0], 1);
    }

    #[test]
    fn runs_read_and_write_what_lane_by_lane_accesses_do() {
        let mut m = MemoryImage::new(16);
        m.alloc("a", (0..=255u8).collect());
        let (g, _) = m.view();
        // Aligned and misaligned starts, strides of one and two elements, every size.
        for (off, n, stride) in [
            (0, 4, 4),
            (1, 4, 4),
            (0, 8, 8),
            (2, 2, 4),
            (3, 1, 1),
            (0, 4, 8),
        ] {
            let mut v = [0u64; 32];
            assert!(g.read_run(0, off, n, stride, &mut v), "{off} {n} {stride}");
            for (l, &x) in v.iter().enumerate() {
                assert_eq!(
                    Some(x),
                    g.read(0, off + l * stride, n),
                    "{off} {n} {stride} {l}"
                );
            }
            let w: [u64; 32] = std::array::from_fn(|l| 0x0102_0304_0506_0708 * (l as u64 + 1));
            assert!(g.write_run(0, off, n, stride, &w));
            for (l, &x) in w.iter().enumerate() {
                let mask = if n == 8 { u64::MAX } else { (1 << (8 * n)) - 1 };
                assert_eq!(g.read(0, off + l * stride, n), Some(x & mask));
            }
        }
        // The 32nd element one byte past the end: nothing is read or written.
        // Scattered lanes, some of them, aligned and not.
        for n in [1, 2, 4, 8, 3] {
            let mut v = [0u64; 32];
            let at = |l: usize| (l * 37 + n) % (256 - 8);
            assert!(g.read_lanes(0, 0xdead_beef, at, n, &mut v));
            for l in (0..32).filter(|l| 0xdead_beef_u32 >> l & 1 == 1) {
                assert_eq!(Some(v[l]), g.read(0, at(l), n), "{n} {l}");
            }
            assert!(!g.read_lanes(0, 1 << 5, |_| 255, n.max(2), &mut v));
        }
        // A whole warp's scattered words, as read and signed or not; refused when a lane is
        // misaligned or its word ends past the allocation.
        let mut fresh = MemoryImage::new(16);
        fresh.alloc("b", (0..=255u8).collect());
        let (g, _) = fresh.view();
        let mut v = [0u64; 32];
        let at = |l: usize| (l * 52) % 256;
        assert!(g.read_words::<false>(0, at, &mut v));
        assert_eq!((v[0], v[1]), (0x0302_0100, 0x3736_3534));
        assert!((0..32).all(|l| Some(v[l]) == g.read(0, at(l), 4)));
        assert!(g.read_words::<true>(0, at, &mut v));
        assert_eq!((v[0], v[3]), (0x0302_0100, 0xffff_ffff_9f9e_9d9c));
        assert!(g.read_words::<false>(0, |l| 252 - 4 * l, &mut v));
        assert!(!g.read_words::<false>(0, |l| if l == 9 { 2 } else { 0 }, &mut v));
        assert!(!g.read_words::<false>(0, |l| if l == 9 { 256 } else { 0 }, &mut v));
        assert!(!g.read_words::<false>(0, |l| if l == 9 { 254 } else { 0 }, &mut v));
        let (g, _) = m.view();
        let before = g.read(0, 129, 8);
        assert!(!g.read_run(0, 129, 4, 4, &mut [0; 32]));
        assert!(!g.write_run(0, 129, 4, 4, &[7; 32]));
        assert!(!g.read_word_run(0, 129, &mut [0; 32]));
        assert!(!g.write_word_run(0, 129, &[7; 32]));
        assert!(!g.read_word_run(0, usize::MAX - 3, &mut [0; 32]));
        assert_eq!(g.read(0, 129, 8), before);
    }

    /// Runs of 32 words read and write what `read_run` and `write_run` do, at every start of
    /// an allocation (aligned and not, up to the last that fits), on host buffers aligned and
    /// not; past the end, neither touches anything.
    #[test]
    fn word_runs_are_runs_of_four_bytes() {
        for pad in [0usize, 1, 2, 3] {
            // 300 bytes starting `pad` bytes into a host buffer (aligned to 8).
            let mut host: Vec<u64> = vec![0; 40];
            // SAFETY: `AtomicU8` has the layout of `u8`; the 320 bytes are the vector's, borrowed
            // uniquely for the view's lifetime (as in `MemoryImage::view`).
            let bytes =
                unsafe { std::slice::from_raw_parts(host.as_mut_ptr() as *const AtomicU8, 320) };
            let data = &bytes[pad..pad + 300];
            for (k, b) in data.iter().enumerate() {
                b.store((k * 7 + 3) as u8, Relaxed);
            }
            let g = GlobalView {
                allocs: vec![AllocView {
                    name: "a",
                    base: 0x1000,
                    data,
                    pending: None,
                }],
            };
            for off in 0..=300 - 128 + 3 {
                let (mut a, mut b) = ([1u64; 32], [1u64; 32]);
                let (ra, rb) = (
                    g.read_word_run(0, off, &mut a),
                    g.read_run(0, off, 4, 4, &mut b),
                );
                assert_eq!((ra, a), (rb, b), "{pad} {off}");
                assert_eq!(ra, off + 128 <= 300);
                let w: [u64; 32] = std::array::from_fn(|l| (off * 32 + l) as u64 * 0x0101_0101);
                let before: Vec<u64> = (0..300).filter_map(|k| g.read(0, k, 1)).collect();
                assert_eq!(g.write_word_run(0, off, &w), ra);
                let after: Vec<u64> = (0..300).filter_map(|k| g.read(0, k, 1)).collect();
                if ra {
                    let mut want = before.clone();
                    for (l, x) in w.iter().enumerate() {
                        for k in 0..4 {
                            want[off + 4 * l + k] = x >> (8 * k) & 0xff;
                        }
                    }
                    assert_eq!(after, want, "{pad} {off}");
                } else {
                    assert_eq!(after, before);
                }
            }
        }
    }
}

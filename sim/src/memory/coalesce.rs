//! The global-memory coalescer of compute capability 6.0 and later.
//!
//! "The concurrent accesses of the threads of a warp will coalesce into a number of transactions
//! equal to the number of 32-byte transactions necessary to service all of the threads of the
//! warp" (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"). One warp
//! instruction is one request; its cost is the set of distinct sectors it touches.
//!
//! This file finds the sectors of any access; the shape of a warp's addresses (a run, equal
//! steps, a stride, the span) and the sectors that follow from it in closed form are in `shape`,
//! re-exported here.

use super::WarpAccess;

mod shape;

pub use shape::{
    contiguous, offset_shape, run, sector_run, span, step_of, stepped_sectors, steps_off, stride,
    Shape,
};

/// Sector addresses of one warp access: at most 64 (32 lanes, each straddling two sectors) for
/// accesses of up to 32 bytes a lane, kept inline so the hot path does not allocate.
pub type Sectors = smallvec::SmallVec<[u64; 64]>;

/// The distinct `sector_bytes`-aligned sectors the access touches, ascending. A lane whose bytes
/// straddle a sector boundary touches both. `sector_bytes` must be a power of two.
pub fn sectors(access: &WarpAccess, sector_bytes: u32) -> Sectors {
    let mut out = Sectors::new();
    sectors_into(access, sector_bytes, contiguous(access), &mut out);
    out
}

/// As [`sectors`], into `out` (emptied first: the caller's buffer is not moved around), for an
/// access whose [`contiguous`] run `run` the caller already has. The common run is answered
/// here, in a function small enough to inline without a stack frame; the rest out of line
/// (its frame, with the bitmap's 64 words, and its saved registers cost the run a third).
#[inline]
pub fn sectors_into(access: &WarpAccess, sector_bytes: u32, run: Option<u64>, out: &mut Sectors) {
    out.clear();
    if let Some(a0) = run {
        // The common case: lane l at a0 + l * bytes, every lane active: one run of sectors, at
        // most 17 (16-byte lanes), which fit the inline buffer: written without a capacity
        // check each. `end + 1` does not overflow: the run ends below the top (`run`).
        let shift = sector_bytes.max(1).trailing_zeros();
        let end = a0 + 32 * u64::from(access.bytes.max(1)) - 1;
        out.extend((a0 >> shift..(end >> shift) + 1).map(|s| s << shift));
        return;
    }
    scattered_sectors_into(access, sector_bytes, out);
}

/// [`sectors_into`] for an access that is not one run (`out` comes empty).
#[inline(never)]
fn scattered_sectors_into(access: &WarpAccess, sector_bytes: u32, out: &mut Sectors) {
    let shift = sector_bytes.max(1).trailing_zeros();
    let last_byte = u64::from(access.bytes.max(1)) - 1;
    if access.mask == 0 {
        return;
    }
    if let Some(d) = stride(access.mask, &access.addrs) {
        // A strided access (lane `l` at `a0 + l * d`, `d` at least a sector): one sector per lane,
        // ascending and distinct, unless a lane straddles two.
        if d >> shift != 0 && !straddles(access.mask, &access.addrs, last_byte, shift) {
            out.extend(access.addrs.iter().map(|&a| a >> shift << shift));
            return;
        }
    }
    if ascending_into(access, last_byte, shift, out) || paired_into(access, last_byte, shift, out) {
        return;
    }
    let (lo, hi) = span(access.mask, &access.addrs);
    let (first, last) = (lo >> shift, hi.saturating_add(last_byte) >> shift);
    if last - first < 64 {
        // The common case (coalesced, broadcast, strided within 2 KiB): a bit per sector of the
        // span, no sort.
        let mut bits = 0u64;
        for (_, a) in access.lanes() {
            let (s, e) = (
                (a >> shift) - first,
                (a.saturating_add(last_byte) >> shift) - first,
            );
            bits |= (u64::MAX >> (63 - e)) & (u64::MAX << s);
        }
        while bits != 0 {
            out.push((first + u64::from(bits.trailing_zeros())) << shift);
            bits &= bits - 1;
        }
        return;
    }
    if last - first < 64 * 64 {
        // Scattered within 64 x 64 sectors (128 KiB of 32-byte sectors): a bit per sector in 64
        // words, read out in order (sorting the sectors cost more).
        let mut words = [0u64; 64];
        let mut used = 0u64;
        if !straddles(access.mask, &access.addrs, last_byte, shift) {
            // Each lane in one sector (the common case): one bit a lane.
            for (_, a) in access.lanes() {
                let s = (a >> shift) - first;
                words[(s >> 6 & 63) as usize] |= 1 << (s & 63);
                used |= 1 << (s >> 6 & 63);
            }
        } else {
            for (_, a) in access.lanes() {
                // One sector, or the few of a lane straddling a boundary (`& 63`: below 64 * 64).
                let (s, e) = (
                    (a >> shift) - first,
                    (a.saturating_add(last_byte) >> shift) - first,
                );
                words[(s >> 6 & 63) as usize] |= 1 << (s & 63);
                used |= 1 << (s >> 6 & 63);
                for k in s + 1..=e {
                    words[(k >> 6 & 63) as usize] |= 1 << (k & 63);
                    used |= 1 << (k >> 6 & 63);
                }
            }
        }
        // Read out in one extend: written without a capacity check per sector while they fit
        // the inline buffer.
        out.extend(Bitmap {
            words: &words,
            used,
            bits: 0,
            base: 0,
            first,
            shift,
        });
        return;
    }
    for (_, a) in access.lanes() {
        for s in a >> shift..=a.saturating_add(last_byte) >> shift {
            out.push(s << shift);
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// The sectors of `access` (`bytes - 1` is `last_byte`, sectors of `1 << shift` bytes) into `out`
/// (which comes empty) when its active lanes' addresses never decrease from lane to lane
/// (broadcasts, rows, tiles of rows: conv2d's 16x16 blocks read 16 floats of two rows), and
/// `true`; `false`, `out` left empty, for other accesses. Such an access is a few runs of lanes,
/// each a range of sectors (a lane less than a sector past the one before it adds no gap),
/// ascending: written out in order with no bitmap and no sort. Out of line: inlined, its loops
/// compiled to worse code.
#[inline(never)]
fn ascending_into(access: &WarpAccess, last_byte: u64, shift: u32, out: &mut Sectors) -> bool {
    let mask = access.mask;
    if shift == 0 {
        // 1-byte sectors (no GPU's): the last sector + 1 below would not fit at the top.
        return false;
    }
    let filled: [u64; 32];
    let addrs = if mask == u32::MAX {
        if access.addrs[1].wrapping_sub(access.addrs[0]) >> shift != 0 {
            // Lane 1 a sector or more from lane 0: not one of these (a column, a scatter).
            return false;
        }
        &access.addrs
    } else {
        // An inactive lane takes the address of the active lane before it (of the first active
        // lane, before that one): it neither breaks the order nor starts a run.
        let mut prev = access.addrs[mask.trailing_zeros() as usize & 31];
        filled = std::array::from_fn(|l| {
            if mask >> l & 1 == 1 {
                prev = access.addrs[l];
            }
            prev
        });
        &filled
    };
    // Runs of lanes each less than a sector above the one before, modulo 2^64, broken only where
    // a group of 8 lanes starts (rows of 8, 16 or 32 lanes: 2-D blocks): the other lanes' steps
    // or'ed together in a few vector instructions, the 3 group boundaries one by one.
    const INNER: [u64; 31] = {
        let mut k = [u64::MAX; 31];
        k[7] = 0;
        k[15] = 0;
        k[23] = 0;
        k
    };
    let steps = (addrs[1..].iter().zip(&addrs[..31]).zip(&INNER))
        .fold(0, |acc, ((&a, &p), &k)| acc | (a.wrapping_sub(p) & k));
    if steps >> shift != 0 {
        return false;
    }
    let brk = |l: usize| u32::from(addrs[l].wrapping_sub(addrs[l - 1]) >> shift != 0) << l;
    let mut starts = 1 | brk(8) | brk(16) | brk(24);
    // Each run: the sectors from its first lane's to its last lane's last byte's, less those the
    // run before already wrote (a straddling lane). Within a run each lane is at most a sector
    // above the one before it, modulo 2^64: no wrap past the top when the last lane is not below
    // the first.
    let (mut next, mut below) = (0u64, 0u64);
    while starts != 0 {
        let i = starts.trailing_zeros() as usize & 31;
        starts &= starts - 1;
        let j = if starts == 0 {
            31
        } else {
            (starts.trailing_zeros() as usize - 1) & 31
        };
        let (first, last) = (addrs[i], addrs[j]);
        if first < below || last < first {
            out.clear();
            return false;
        }
        below = last;
        let e = last.saturating_add(last_byte) >> shift;
        out.extend(((first >> shift).max(next)..=e).map(|s| s << shift));
        next = e + 1;
    }
    true
}

/// The sectors of `access` (as [`ascending_into`]) into `out` when every lane is active, lanes
/// 0-15 are strided by a whole number of sectors (`a0 + l * d`, `d` positive) and each lane
/// `l + 16` is lane `l` moved by the same few bytes, in the same sector: the column of a 16x16
/// block (a naive transpose: lanes 0-15 a row apart, lanes 16-31 the next column). Then `true`,
/// one sector a pair, ascending; `false`, `out` untouched, for other accesses.
#[inline(never)]
fn paired_into(access: &WarpAccess, last_byte: u64, shift: u32, out: &mut Sectors) -> bool {
    let a = &access.addrs;
    let sector = 1u64 << shift;
    let (d, delta) = (a[1].wrapping_sub(a[0]), a[16].wrapping_sub(a[0]) as i64);
    if delta.unsigned_abs() >= sector || last_byte >> shift != 0 {
        return false;
    }
    // Lane 0's and lane 16's bytes, as offsets in lane 0's sector: within it. With `d` a whole
    // number of sectors, every pair's are the same.
    let o = (a[0] & (sector - 1)) as i64;
    let (first, last) = (o + delta.min(0), o + delta.max(0) + last_byte as i64);
    if access.mask != u32::MAX
        || d == 0
        || d & (sector - 1) != 0
        || first < 0
        || last >= sector as i64
        || d.checked_mul(15).and_then(|s| a[0].checked_add(s)) != Some(a[15])
    {
        return false;
    }
    // Every step and every move (exact: the ends are in place, and a move stays in its sector).
    // No early exit, so that the loops are a few vector instructions.
    let steps =
        (a[1..16].iter().zip(&a[..15])).fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ d));
    let moves = (a[16..].iter().zip(&a[..16]))
        .fold(0, |acc, (&y, &x)| acc | (y.wrapping_sub(x) ^ delta as u64));
    if steps | moves != 0 {
        return false;
    }
    out.extend(a[..16].iter().map(|&x| x >> shift << shift));
    true
}

/// Whether a lane of `mask` has bytes `a..=a + last_byte` in two sectors of `1 << shift` bytes
/// (or wraps past the top of the address space). Every lane is visited, the inactive ones masked
/// out, so that the loop is a few vector instructions.
#[inline]
fn straddles(mask: u32, addrs: &[u64; 32], last_byte: u64, shift: u32) -> bool {
    let mut any = 0u64;
    for (l, &a) in addrs.iter().enumerate() {
        let e = a.wrapping_add(last_byte);
        let crosses = (e ^ a) >> shift | u64::from(e < a);
        any |= if mask >> l & 1 == 1 { crosses } else { 0 };
    }
    any != 0
}

/// The sectors of a bitmap of 64 x 64 sectors from `first`, ascending.
struct Bitmap<'a> {
    words: &'a [u64; 64],
    /// Words not read yet.
    used: u64,
    /// Bits of the current word not read yet, and the sector number of its bit 0.
    bits: u64,
    base: u64,
    first: u64,
    shift: u32,
}

impl Iterator for Bitmap<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        while self.bits == 0 {
            if self.used == 0 {
                return None;
            }
            let i = self.used.trailing_zeros();
            self.used &= self.used - 1;
            self.bits = self.words[i as usize & 63];
            self.base = self.first + u64::from(i) * 64;
        }
        let b = u64::from(self.bits.trailing_zeros());
        self.bits &= self.bits - 1;
        Some((self.base + b) << self.shift)
    }
}

/// Whether `odd`, the OR of a warp's lanes' differences from what they should be, is zero. Kept
/// one value (`black_box`, out of the optimizer's sight): tested for zero as it stands, LLVM
/// turned the OR of differences into a compare a lane, packed into a mask, about twice the
/// instructions of the vector OR (`run`: 68 for its loop).
#[inline(always)]
pub(crate) fn all_zero(odd: u64) -> bool {
    std::hint::black_box(odd) == 0
}

/// The distinct `line_bytes`-aligned lines among `sectors` (which must be ascending).
pub fn lines(sectors: &[u64], line_bytes: u32) -> usize {
    let mask = !(u64::from(line_bytes) - 1);
    let mut n = 0;
    let mut prev = u64::MAX;
    for s in sectors {
        let l = s & mask;
        if l != prev {
            n += 1;
            prev = l;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_aligned_words_take_four_sectors() {
        let s = sectors(&WarpAccess::from_fn(4, |l| 0x1000 + 4 * l), 32);
        assert_eq!(s.len(), 4);
        assert_eq!(lines(&s, 128), 1);
    }

    #[test]
    fn misaligned_by_one_word_takes_five() {
        assert_eq!(
            sectors(&WarpAccess::from_fn(4, |l| 0x1004 + 4 * l), 32).len(),
            5
        );
    }

    #[test]
    fn broadcast_is_one_sector_and_scatter_is_thirty_two() {
        assert_eq!(sectors(&WarpAccess::from_fn(4, |_| 0x1000), 32).len(), 1);
        assert_eq!(
            sectors(
                &WarpAccess::from_fn(4, |l| 0x1000 + ((l * 1357) % 16384) * 4),
                32
            )
            .len(),
            32
        );
    }

    #[test]
    fn runs_take_every_sector_of_their_bytes() {
        // The run path of `sectors_into` against every lane's sectors, for each element size,
        // aligned and misaligned starts, sectors of 32 and 128 bytes, and runs ending at the top
        // of the address space.
        let mut runs = 0;
        for bytes in [1u32, 2, 4, 8, 16] {
            let b = u64::from(bytes);
            let starts = (0..300u64).map(|k| 0x1000 + k * b / 3 * 3).chain([
                0,
                32 * 4096 - 1,
                u64::MAX - 32 * b + 1,
                u64::MAX - 40 * b,
            ]);
            for a0 in starts {
                let a = WarpAccess::from_fn(bytes, |l| a0.wrapping_add(l * b));
                let Some(run) = contiguous(&a) else {
                    continue;
                };
                runs += 1;
                for sb in [32u32, 128] {
                    let s = u64::from(sb);
                    let naive: std::collections::BTreeSet<u64> = a
                        .lanes()
                        .flat_map(|(_, a)| a / s..=(a + b - 1) / s)
                        .map(|x| x * s)
                        .collect();
                    let mut out = Sectors::new();
                    out.push(7); // emptied first
                    sectors_into(&a, sb, Some(run), &mut out);
                    assert_eq!(out.to_vec(), naive.into_iter().collect::<Vec<_>>());
                }
            }
        }
        assert!(runs > 1000, "{runs}");
    }

    #[test]
    fn scattered_sectors_are_the_distinct_sectors_in_order() {
        // Spans within 2 KiB, within 128 KiB and beyond (each of the paths), lanes straddling
        // sector boundaries, some lanes inactive.
        let mut x = 5u64;
        for span in [2000u64, 100_000, 10_000_000] {
            for bytes in [1, 4, 8, 16] {
                for _ in 0..200 {
                    let mut a = WarpAccess::from_fn(bytes, |_| 0);
                    for addr in a.addrs.iter_mut() {
                        x = crate::testing::lcg(x);
                        *addr = 0x1000 + (x >> 33) % span;
                    }
                    a.mask = (x >> 7) as u32 | 1;
                    let naive: std::collections::BTreeSet<u64> = a
                        .lanes()
                        .flat_map(|(_, a)| a / 32..=(a + u64::from(bytes) - 1) / 32)
                        .map(|s| s * 32)
                        .collect();
                    assert_eq!(
                        sectors(&a, 32).to_vec(),
                        naive.into_iter().collect::<Vec<_>>()
                    );
                }
            }
        }
    }

    #[test]
    fn strided_sectors_are_the_distinct_sectors_in_order() {
        // Steps below, at and above a sector, lanes straddling sectors, descending and wrapping
        // lanes: the same sectors as a lane-by-lane set.
        for bytes in [1u32, 4, 8, 16] {
            for base in [0x1000u64, 0x101c, u64::MAX - 5000] {
                for d in [0u64, 4, 24, 32, 40, 128, 4096, 1 << 40, u64::MAX - 31] {
                    let a = WarpAccess::from_fn(bytes, |l| base.wrapping_add(d.wrapping_mul(l)));
                    if a.addrs.iter().any(|&x| x.checked_add(16).is_none()) {
                        continue;
                    }
                    let naive: std::collections::BTreeSet<u64> = a
                        .lanes()
                        .flat_map(|(_, a)| a / 32..=(a + u64::from(bytes) - 1) / 32)
                        .map(|s| s * 32)
                        .collect();
                    let want: Vec<u64> = naive.into_iter().collect();
                    assert_eq!(sectors(&a, 32).to_vec(), want, "{bytes} {base:x} {d}");
                }
            }
        }
        assert_eq!(
            stride(u32::MAX, &std::array::from_fn(|l| 8 + 40 * l as u64)),
            Some(40)
        );
        assert_eq!(
            stride(u32::MAX >> 1, &std::array::from_fn(|l| 40 * l as u64)),
            None
        );
        assert_eq!(stride(u32::MAX, &[7; 32]), None);
    }

    /// Every active lane's sectors (to the top of the address space at most), sorted, distinct.
    pub(super) fn reference(a: &WarpAccess, sector_bytes: u32) -> Vec<u64> {
        let shift = sector_bytes.trailing_zeros();
        let last_byte = u64::from(a.bytes.max(1)) - 1;
        let mut v: Vec<u64> = a
            .lanes()
            .flat_map(|(_, x)| x >> shift..=x.saturating_add(last_byte) >> shift)
            .map(|s| s << shift)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn ascending_lanes_take_the_sectors_of_every_lane() {
        // Rows, broadcasts, tiles of 4 to 32 lanes a row (rows ascending, descending, overlapping),
        // columns of 16 lanes (pairs in a sector), steps around a sector, lanes straddling sectors, partial masks, the top of the address
        // space; and random addresses near one another: the fast paths (where they answer) and
        // `sectors` against every lane's sectors sorted.
        let mut x = 11u64;
        let mut rand = move || {
            x = crate::testing::lcg(x);
            x >> 16
        };
        let (mut answered, mut paired, mut cases) = (0, 0, 0);
        for sector_bytes in [32u32, 1, 128] {
            let shift = sector_bytes.trailing_zeros();
            for bytes in [1u32, 2, 4, 8, 16] {
                for base in [
                    0x1000u64,
                    0x101c,
                    0x7f00_0000_0ff4,
                    u64::MAX - 300,
                    u64::MAX - 3,
                ] {
                    for group in [4u64, 8, 16, 32] {
                        for step in [0u64, 1, 2, 4, 8, 16, 31, 32, 33, 64, 4096] {
                            let back = |d: i64| d as u64;
                            for pitch in [0, 4, 16, 40, 64, 4096, 4100, back(-4), back(-64)] {
                                let mut a = WarpAccess::from_fn(bytes, |l| {
                                    base.wrapping_add((l % group) * step)
                                        .wrapping_add((l / group).wrapping_mul(pitch))
                                });
                                for mask in [u32::MAX, 0xfffc_fffc, 0x0000_fff0, 1 << 31, 0] {
                                    a.mask = if mask == 0 { rand() as u32 } else { mask };
                                    let want = reference(&a, sector_bytes);
                                    let mut out = Sectors::new();
                                    let last_byte = u64::from(bytes) - 1;
                                    if ascending_into(&a, last_byte, shift, &mut out) {
                                        assert_eq!(out.to_vec(), want, "{a:x?} {sector_bytes}");
                                        answered += 1;
                                    }
                                    out.clear();
                                    if paired_into(&a, last_byte, shift, &mut out) {
                                        assert_eq!(out.to_vec(), want, "{a:x?} {sector_bytes}");
                                        paired += 1;
                                    }
                                    assert_eq!(sectors(&a, sector_bytes).to_vec(), want);
                                    cases += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        for _ in 0..20_000 {
            // Lanes a few sectors apart, sorted or not, some lanes off.
            let bytes = [1u32, 2, 4, 8, 16][(rand() % 5) as usize];
            let base = [0x1000u64, u64::MAX - 200][(rand() % 2) as usize];
            let mut a = WarpAccess::from_fn(bytes, |_| 0);
            for v in a.addrs.iter_mut() {
                *v = base + rand() % 160;
            }
            if rand() % 2 == 0 {
                a.addrs.sort_unstable();
            }
            a.mask = if rand() % 2 == 0 {
                u32::MAX
            } else {
                rand() as u32
            };
            let want = reference(&a, 32);
            let mut out = Sectors::new();
            if ascending_into(&a, u64::from(bytes) - 1, 5, &mut out) {
                assert_eq!(out.to_vec(), want, "{a:x?}");
                answered += 1;
            }
            out.clear();
            if paired_into(&a, u64::from(bytes) - 1, 5, &mut out) {
                assert_eq!(out.to_vec(), want, "{a:x?}");
                paired += 1;
            }
            assert_eq!(sectors(&a, 32).to_vec(), want, "{a:x?}");
            cases += 1;
        }
        for _ in 0..20_000 {
            // Columns of 16 lanes, the second half moved by a few bytes (at times not all by
            // the same), at times one lane off the column, near the top of the address space.
            let bytes = [1u32, 2, 4, 8, 16][(rand() % 5) as usize];
            let base = [0x1000u64, u64::MAX - 70_000, u64::MAX - 15 * 4096 - 31]
                [(rand() % 3) as usize]
                + rand() % 32;
            let pitch = [0u64, 8, 32, 64, 96, 4096][(rand() % 6) as usize];
            let delta = rand() % 40;
            let mut a = WarpAccess::from_fn(bytes, |l| {
                (base.wrapping_add((l % 16) * pitch))
                    .wrapping_add((l / 16) * delta)
                    .wrapping_sub((l / 16) * 20)
            });
            match rand() % 6 {
                // One lane off, or one pair (so off the stride, not the move), or lane 16 far.
                0 => {
                    let l = (rand() % 32) as usize;
                    a.addrs[l] = a.addrs[l].wrapping_add(1 + rand() % 64);
                }
                1 => {
                    let l = 16 + (rand() % 16) as usize;
                    a.addrs[l] = a.addrs[l].wrapping_sub(1 + rand() % 64);
                }
                2 => {
                    let (l, k) = (1 + (rand() % 14) as usize, 32 * (1 + rand() % 4));
                    a.addrs[l] = a.addrs[l].wrapping_add(k);
                    a.addrs[l + 16] = a.addrs[l + 16].wrapping_add(k);
                }
                3 => a.addrs[16] = a.addrs[0].wrapping_add(i64::MAX as u64 - rand() % 2),
                _ => {}
            }
            let want = reference(&a, 32);
            let mut out = Sectors::new();
            if paired_into(&a, u64::from(bytes) - 1, 5, &mut out) {
                assert_eq!(out.to_vec(), want, "{a:x?}");
                paired += 1;
            }
            assert_eq!(sectors(&a, 32).to_vec(), want, "{a:x?}");
            cases += 1;
        }
        // The fast paths answer the usual shapes, not just the odd one.
        assert!(
            answered * 4 > cases && paired > 1000,
            "{answered}, {paired} of {cases}"
        );
    }

    #[test]
    fn straddling_lane_touches_two_sectors() {
        let mut a = WarpAccess::from_fn(8, |_| 0x101c);
        a.mask = 1;
        assert_eq!(sectors(&a, 32).to_vec(), vec![0x1000, 0x1020]);
    }
}

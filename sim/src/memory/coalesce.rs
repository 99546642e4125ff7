//! The global-memory coalescer of compute capability 6.0 and later.
//!
//! "The concurrent accesses of the threads of a warp will coalesce into a number of transactions
//! equal to the number of 32-byte transactions necessary to service all of the threads of the
//! warp" (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"). One warp
//! instruction is one request; its cost is the set of distinct sectors it touches.

use super::WarpAccess;

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

/// What one pass over a warp's addresses finds besides them (the executor's address pass, or
/// [`Shape::of`]): whether the lanes are equally spaced. It answers [`run`], [`stride`] and the
/// alignment check, and gives the sector and bank models their closed forms, without another
/// pass over the lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// `(a0, d)` when every lane is active and lane `l` is at `a0 + l * d`, with `a0 + 31 * d`
    /// below the top of the address space (no wrap); `d` may be 0 (one address for the warp).
    pub step: Option<(u64, u64)>,
}

impl Shape {
    /// The shape of the lanes of `mask` at `addrs` (inactive lanes' addresses ignored).
    #[inline]
    pub fn of(mask: u32, addrs: &[u64; 32]) -> Shape {
        let step = if mask == u32::MAX {
            let d = addrs[1].wrapping_sub(addrs[0]);
            step_of(addrs[0], d, steps_off(addrs, d))
        } else {
            None
        };
        Shape { step }
    }

    /// A value with the fewest trailing zeros of any address in `addrs` (the access's, whose
    /// shape this is, inactive lanes 0): the lanes' common alignment. Equally spaced lanes' is
    /// `a0 | d` (lane 0 is `a0`, and with `a0` and `d` multiples of `2^k` so is every lane),
    /// found without a pass; others' the OR of every lane.
    #[inline(always)]
    pub fn alignment(&self, addrs: &[u64; 32]) -> u64 {
        match self.step {
            Some((a0, d)) => a0 | d,
            None => addrs.iter().fold(0, |acc, &x| acc | x),
        }
    }

    /// [`run`] of the access with `bytes` a lane: its lane 0's address when the lanes are
    /// consecutive elements.
    #[inline]
    pub fn run(&self, bytes: u32) -> Option<u64> {
        let (a0, d) = self.step?;
        let b = u64::from(bytes.max(1));
        // Equal steps of `b` from `a0` with `a0 + 32 * b` in range: `run`'s test, exactly.
        (d == b && a0.checked_add(32 * b).is_some()).then_some(a0)
    }

    /// [`stride`] of the access: the step, when it is not 0.
    #[inline]
    pub fn stride(&self) -> Option<u64> {
        self.step.and_then(|(_, d)| (d != 0).then_some(d))
    }
}

/// A whole warp's addresses, `base[l] + off` (wrapping) for every lane, into `out`, and their
/// [`Shape`]: two passes of a few vector instructions each (the adds, and the steps of `base`,
/// which are the addresses': the offset cancels). An OR of the addresses here as well (for the
/// alignment) was compiled lane by lane, in any form tried: about 190 instructions a warp
/// instead of about 85.
#[inline]
pub fn offset_shape(base: &[u64; 32], off: u64, out: &mut [u64; 32]) -> Shape {
    let d = base[1].wrapping_sub(base[0]);
    *out = std::array::from_fn(|l| base[l].wrapping_add(off));
    Shape {
        step: step_of(base[0].wrapping_add(off), d, steps_off(base, d)),
    }
}

/// The OR of a whole warp's steps' differences from `d` (each lane's address less the one
/// before it, wrapping): zero when every step is `d`. No early exit, so that the loop is a few
/// vector instructions. (Compared instead with running values `addrs[0] + l * d`, four to a
/// register or as products, LLVM built more shuffles or emulated the 64-bit multiplies: 1M
/// instructions more on transpose_smem.)
#[inline(always)]
pub fn steps_off(addrs: &[u64; 32], d: u64) -> u64 {
    (addrs[1..].iter().zip(&addrs[..31])).fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ d))
}

/// [`Shape::step`] of a whole warp from lane 0's address `a0`, the step `d` from lane 0 to
/// lane 1, and [`steps_off`]`(addrs, d)`: equal steps that do not wrap past the top (with the
/// ends in range, equal wrapping steps are exact).
#[inline(always)]
pub fn step_of(a0: u64, d: u64, odd: u64) -> Option<(u64, u64)> {
    let top = d.checked_mul(31).and_then(|x| a0.checked_add(x));
    (all_zero(odd) && top.is_some()).then_some((a0, d))
}

/// The distinct sectors (of `1 << shift` bytes) of an access of `bytes` a lane whose lanes are
/// equally spaced (`step`, its [`Shape::step`]) at most a sector apart, as a run: the first
/// sector's byte address and the count. A gap between two lanes' bytes is then shorter than a
/// sector, so every sector from lane 0's first byte to lane 31's last is touched. `None` for
/// lanes further apart, or a last byte past the top of the address space.
#[inline]
pub fn sector_run(bytes: u32, (a0, d): (u64, u64), shift: u32) -> Option<(u64, u32)> {
    if d > 1 << shift {
        return None;
    }
    // `a0 + 31 * d` does not wrap (`step`).
    let end = (a0 + 31 * d).checked_add(u64::from(bytes.max(1)) - 1)?;
    let (first, last) = (a0 >> shift, end >> shift);
    Some((first << shift, u32::try_from(last - first + 1).ok()?))
}

/// The distinct sectors (of `1 << shift` bytes) of `access`, whose lanes are equally spaced
/// (`step`, its [`Shape::step`]), ascending, into `out` in closed form; returns their number.
/// `None` (`out` unspecified) where the closed form does not apply: more than 32 sectors, a step
/// of a sector or more with a lane straddling two, a last lane's bytes past the top.
#[inline]
pub fn stepped_sectors(
    access: &WarpAccess,
    (a0, d): (u64, u64),
    shift: u32,
    out: &mut [u64; 32],
) -> Option<usize> {
    let last_byte = u64::from(access.bytes.max(1)) - 1;
    if d >> shift == 0 {
        // Lanes less than a sector apart (a run of elements, a broadcast, a small stride): a gap
        // between two lanes' bytes is shorter than a sector, so every sector from lane 0's first
        // byte to lane 31's last is touched. `a0 + 31 * d` does not wrap (`step`).
        let end = (a0 + 31 * d).checked_add(last_byte)?;
        let (first, last) = (a0 >> shift, end >> shift);
        let n = usize::try_from(last - first).ok()?.checked_add(1)?;
        if n > out.len() {
            return None;
        }
        for (k, o) in out[..n].iter_mut().enumerate() {
            *o = (first + k as u64) << shift;
        }
        return Some(n);
    }
    // A sector or more apart: one sector a lane, distinct and ascending, unless a lane straddles
    // two. A step of whole sectors puts every lane at lane 0's offset in its sector, which then
    // answers for all (a lane whose bytes stay in its sector cannot pass the top).
    let sector = 1u64 << shift;
    let straddling = if d & (sector - 1) == 0 {
        ((a0 & (sector - 1)) + last_byte) >> shift != 0
    } else {
        straddles(u32::MAX, &access.addrs, last_byte, shift)
    };
    if straddling {
        return None;
    }
    *out = std::array::from_fn(|l| access.addrs[l] >> shift << shift);
    Some(32)
}

/// The step `d` when every lane of `mask` is active and lane `l` is at `addrs[0] + l * d` (no
/// wrap past the top of the address space), `d` positive.
#[inline]
pub fn stride(mask: u32, addrs: &[u64; 32]) -> Option<u64> {
    let (a0, d) = (addrs[0], addrs[1].wrapping_sub(addrs[0]));
    // Lane 31 first: most scattered accesses fail there.
    if mask != u32::MAX || d == 0 || addrs[31] != a0.checked_add(d.checked_mul(31)?)? {
        return None;
    }
    // Every step `d` (no early exit, so the loop is a few vector instructions). With the ends
    // in place, equal steps cannot wrap.
    let odd = (addrs[1..].iter().zip(&addrs[..31]))
        .fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ d));
    all_zero(odd).then_some(d)
}

/// The lowest and highest address of the lanes of `mask` (`(u64::MAX, 0)` for none). Every lane
/// is visited, the inactive ones masked out, so that the loop is a few vector instructions.
#[inline]
pub fn span(mask: u32, addrs: &[u64; 32]) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for (l, &a) in addrs.iter().enumerate() {
        let on = mask >> l & 1 == 1;
        lo = lo.min(if on { a } else { u64::MAX });
        hi = hi.max(if on { a } else { 0 });
    }
    (lo, hi)
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

/// The address of lane 0 when every lane is active and lane `l` accesses `bytes` at
/// `a0 + l * bytes` (consecutive elements, no gap, no overflow past the last byte).
#[inline]
pub fn contiguous(access: &WarpAccess) -> Option<u64> {
    run(access.mask, &access.addrs, access.bytes)
}

/// [`contiguous`] for the lanes of `mask` at `addrs`, `bytes` each: the address of lane 0 when
/// every lane is active and lane `l` accesses `a0 + l * bytes`.
#[inline]
pub fn run(mask: u32, addrs: &[u64; 32], bytes: u32) -> Option<u64> {
    if mask != u32::MAX {
        return None;
    }
    let a0 = addrs[0];
    let b = u64::from(bytes.max(1));
    a0.checked_add(32 * b)?;
    // The last lane first: most other accesses fail there.
    if addrs[31] != a0 + 31 * b {
        return None;
    }
    // Every step `b` (exact: the run ends before overflowing). No early exit, so that the loop
    // is a few vector instructions rather than a compare and branch per lane.
    let odd = (addrs[1..].iter().zip(&addrs[..31]))
        .fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ b));
    all_zero(odd).then_some(a0)
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
    fn runs_are_consecutive_elements_of_a_full_warp() {
        let naive = |a: &WarpAccess| {
            let b = u64::from(a.bytes.max(1));
            (a.mask == u32::MAX
                && a.addrs[0].checked_add(32 * b).is_some()
                && (0..32).all(|l| a.addrs[l] == a.addrs[0] + l as u64 * b))
            .then_some(a.addrs[0])
        };
        let mut cases = vec![
            WarpAccess::from_fn(4, |l| 0x1000 + 4 * l),
            WarpAccess::from_fn(8, |l| 0x1000 + 8 * l),
            WarpAccess::from_fn(4, |l| 0x1000 + 8 * l),
            WarpAccess::from_fn(4, |_| 0x1000),
            WarpAccess::from_fn(4, |l| u64::MAX - 200 + 4 * l),
            WarpAccess::from_fn(4, |l| u64::MAX - 127 + 4 * l),
            WarpAccess::from_fn(4, |l| (u64::MAX - 60).wrapping_add(4 * l)),
        ];
        let mut one_off = WarpAccess::from_fn(4, |l| 0x1000 + 4 * l);
        one_off.addrs[17] += 1;
        cases.push(one_off);
        let mut partial = WarpAccess::from_fn(4, |l| 0x1000 + 4 * l);
        partial.mask = u32::MAX >> 1;
        cases.push(partial);
        for a in &cases {
            assert_eq!(contiguous(a), naive(a), "{:x?}", a.addrs);
        }
        assert_eq!(contiguous(&cases[0]), Some(0x1000));
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
    fn reference(a: &WarpAccess, sector_bytes: u32) -> Vec<u64> {
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
    fn shapes_answer_run_stride_and_the_sectors_of_equal_steps() {
        // Equally spaced lanes of every element size (runs, broadcasts, steps below, at and
        // above a sector, of whole sectors or not, lanes straddling, wrapping and ending at the
        // top), bent ones and partial masks: `Shape` agrees with `run` and `stride`, and the
        // closed-form sectors, where they answer, with `sectors`.
        let mut x = 29u64;
        let mut rand = move || {
            x = crate::testing::lcg(x);
            x >> 16
        };
        let (mut closed, mut runs, mut cases) = (0, 0, 0);
        let steps = [
            0u64, 1, 2, 4, 8, 12, 16, 24, 31, 32, 33, 40, 64, 96, 128, 132, 4096,
        ];
        for bytes in [1u32, 2, 4, 8, 16] {
            for base in [
                0u64,
                0x1000,
                0x101c,
                0x7f00_0000_0ff4,
                u64::MAX - 5000,
                u64::MAX - 40,
            ] {
                for d in steps.iter().copied().chain([u64::MAX - 31, 1 << 62]) {
                    for bend in 0..3 {
                        let mut a =
                            WarpAccess::from_fn(bytes, |l| base.wrapping_add(d.wrapping_mul(l)));
                        match bend {
                            1 => a.addrs[(rand() % 32) as usize] ^= 1 << (rand() % 12),
                            2 => a.mask = rand() as u32,
                            _ => {}
                        }
                        let shape = Shape::of(a.mask, &a.addrs);
                        if a.mask == u32::MAX {
                            // The executor's pass: from a base row and an offset.
                            let off = (rand() << 20) | (rand() % 64);
                            let base = a.addrs.map(|v| v.wrapping_sub(off));
                            let mut out = [0; 32];
                            assert_eq!(offset_shape(&base, off, &mut out), shape, "{a:x?}");
                            assert_eq!(out, a.addrs);
                        }
                        assert_eq!(shape.run(bytes), run(a.mask, &a.addrs, bytes), "{a:x?}");
                        assert_eq!(shape.stride(), stride(a.mask, &a.addrs), "{a:x?}");
                        // The alignment: the fewest trailing zeros of any active lane.
                        let mut zeroed = a.addrs;
                        for (l, v) in zeroed.iter_mut().enumerate() {
                            if a.mask >> l & 1 == 0 {
                                *v = 0;
                            }
                        }
                        let fewest = a.lanes().map(|(_, v)| v.trailing_zeros()).min();
                        let align = shape.alignment(&zeroed);
                        assert_eq!(align.trailing_zeros(), fewest.unwrap_or(64), "{a:x?}");
                        cases += 1;
                        let Some(st) = shape.step else { continue };
                        for sb in [32u32, 128, 1] {
                            let mut out = [7u64; 32];
                            if a.addrs.iter().any(|&v| v.checked_add(16).is_none()) {
                                // The reference saturates at the top; the closed form declines.
                                if let Some(n) =
                                    stepped_sectors(&a, st, sb.trailing_zeros(), &mut out)
                                {
                                    assert_eq!(out[..n].to_vec(), reference(&a, sb), "{a:x?}");
                                }
                                continue;
                            }
                            if let Some(n) = stepped_sectors(&a, st, sb.trailing_zeros(), &mut out)
                            {
                                assert_eq!(out[..n].to_vec(), reference(&a, sb), "{a:x?} {sb}");
                                closed += 1;
                            }
                            // The run form, where it applies (lanes at most a sector apart).
                            if let Some((first, n)) = sector_run(a.bytes, st, sb.trailing_zeros()) {
                                let s = u64::from(sb);
                                let run: Vec<u64> =
                                    (0..u64::from(n)).map(|k| first + k * s).collect();
                                assert_eq!(run, reference(&a, sb), "{a:x?} {sb}");
                                runs += 1;
                            } else {
                                assert!(st.1 > u64::from(sb), "{a:x?} {sb}");
                            }
                        }
                    }
                }
            }
        }
        assert!(closed * 2 > cases, "{closed} of {cases}");
        assert!(runs * 4 > cases, "{runs} runs of {cases}");
    }

    #[test]
    fn steps_off_is_zero_exactly_when_every_step_is_the_first() {
        // Against the differences of neighbours one by one: equal steps (wrapping past the top
        // too) and ones bent at a random lane by a random amount.
        let mut x = 7u64;
        let mut rand = move || {
            x = crate::testing::lcg(x);
            x >> 11
        };
        for case in 0..20_000 {
            let (a0, d) = match case % 4 {
                0 => (rand(), rand() % 300),
                1 => (u64::MAX - rand() % 5000, rand() % 300),
                2 => (rand(), rand().wrapping_neg()),
                _ => (rand() << 11, rand() << 11),
            };
            let mut addrs: [u64; 32] =
                std::array::from_fn(|l| a0.wrapping_add(d.wrapping_mul(l as u64)));
            if case % 3 != 0 {
                let bend = if case % 2 == 0 { 1 } else { rand() | 1 };
                addrs[(rand() % 32) as usize] ^= bend << (rand() % 64);
            }
            let d = addrs[1].wrapping_sub(addrs[0]);
            let equal = (1..32).all(|l| addrs[l].wrapping_sub(addrs[l - 1]) == d);
            assert_eq!(steps_off(&addrs, d) == 0, equal, "{addrs:x?}");
        }
    }

    #[test]
    fn straddling_lane_touches_two_sectors() {
        let mut a = WarpAccess::from_fn(8, |_| 0x101c);
        a.mask = 1;
        assert_eq!(sectors(&a, 32).to_vec(), vec![0x1000, 0x1020]);
    }
}

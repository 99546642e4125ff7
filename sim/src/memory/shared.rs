//! Shared memory banks: how many wavefronts a warp-level shared access takes.
//!
//! Shared memory is split into `banks` banks of `width` bytes; the bank of a byte address is
//! `(address / width) % banks` (CUDA C Programming Guide 4.2 §F.4.3 for 4-byte banks, §F.5.3.1
//! for Kepler's 8-byte mode). A bank delivers one word per wavefront: lanes reading any bytes of
//! the same word share it (broadcast), while n distinct words in one bank take n wavefronts (an
//! n-way bank conflict). A wavefront moves at most `banks * width` bytes, so an access whose lanes
//! move more than that is processed in phases of `banks * width / bytes` lanes (half-warps for
//! 8-byte and quarter-warps for 16-byte accesses on 32 x 4-byte banks; half-warps on compute 1.x's
//! 16 banks), each phase needing at least one wavefront.
//!
//! Nsight Compute counts `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` (wavefronts) and
//! `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`, the wavefronts beyond the minimum
//! the access needs ([`Wavefronts::conflicts`]).

use super::{WarpAccess, WordSet, WARP};

/// The bank organisation of shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Banks {
    /// Number of banks (32; 16 on compute 1.x).
    pub banks: u32,
    /// Bank width in bytes (4, or 8 in Kepler's 8-byte mode).
    pub width: u32,
}

/// The cost of one warp-level shared access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wavefronts {
    /// Wavefronts the access takes.
    pub wavefronts: u32,
    /// The fewest it could take with no conflict: one per phase with an active lane.
    pub ideal: u32,
}

impl Wavefronts {
    /// Wavefronts beyond the ideal: Nsight Compute's bank conflicts.
    pub fn conflicts(&self) -> u32 {
        self.wavefronts - self.ideal
    }
}

/// Lanes processed together in one phase for accesses of `bytes` per lane.
pub fn lanes_per_phase(bytes: u32, banks: Banks) -> u32 {
    let per_wavefront = banks.banks * banks.width;
    (per_wavefront / bytes.max(1)).clamp(1, banks.banks.min(32))
}

/// Wavefronts of `access` on `banks`.
pub fn wavefronts(access: &WarpAccess, banks: Banks) -> Wavefronts {
    wavefronts_of(access, banks, super::coalesce::contiguous(access))
}

/// As [`wavefronts`], for an access whose [`super::coalesce::contiguous`] run `run` the caller
/// already has. The common coalesced warp is answered here, in a function small enough to need
/// no saved registers or stack; the rest out of line (its prologue cost the coalesced case more
/// than its answer). Not inlined either: in the memory models' caller it changed the code of
/// the other paths (the main job's constant launch ran 0.3% more instructions).
#[inline(never)]
pub fn wavefronts_of(access: &WarpAccess, banks: Banks, run: Option<u64>) -> Wavefronts {
    if let Some(a0) = run {
        if one_phase_run(a0, access.bytes, banks) {
            return Wavefronts {
                wavefronts: 1,
                ideal: 1,
            };
        }
    }
    phased_wavefronts(access, banks, run)
}

/// [`wavefronts_of`] phase by phase.
#[inline(never)]
fn phased_wavefronts(access: &WarpAccess, banks: Banks, run: Option<u64>) -> Wavefronts {
    let phase = lanes_per_phase(access.bytes, banks) as usize;
    let mut out = Wavefronts::default();
    let mut start = 0;
    // Consecutive elements (the common case): a phase whose words span fewer than `banks` words
    // has each in its own bank, found without looking at the lanes.
    let run = run.filter(|_| banks.width.is_power_of_two() && banks.banks.is_power_of_two());
    let shift = banks.width.max(1).trailing_zeros();
    let bytes = u64::from(access.bytes.max(1));
    while start < WARP {
        let mask = access.phase_mask(start, phase);
        if let Some(a0) = run {
            let lo = (a0 + start as u64 * bytes) >> shift;
            let hi = (a0 + (start + phase).min(WARP) as u64 * bytes - 1) >> shift;
            if hi - lo < u64::from(banks.banks.clamp(1, 64)) {
                out.ideal += 1;
                out.wavefronts += 1;
                start += phase;
                continue;
            }
        }
        start += phase;
        if mask != 0 {
            out.ideal += 1;
            out.wavefronts += phase_wavefronts(access, mask, banks);
        }
    }
    out
}

/// Whether a run of 32 consecutive `bytes`-byte elements from `a0` is one phase whose words
/// span fewer than `banks` words (a coalesced warp of 4-byte elements): one wavefront, decided
/// before the phase arithmetic (the first phase of the general loop, without its division).
#[inline(always)]
fn one_phase_run(a0: u64, bytes: u32, banks: Banks) -> bool {
    let pow2 = banks.width.is_power_of_two() && banks.banks.is_power_of_two();
    let bytes = u64::from(bytes.max(1));
    let shift = banks.width.max(1).trailing_zeros();
    pow2 && banks.banks >= WARP as u32
        && WARP as u64 * bytes <= u64::from(banks.banks) * u64::from(banks.width)
        && ((a0 + WARP as u64 * bytes - 1) >> shift) - (a0 >> shift)
            < u64::from(banks.banks.clamp(1, 64))
}

/// The word stride `k` of a whole-warp access whose lane `l` reads within word `w0 + l * k`
/// (words of `1 << shift` bytes), a lane's bytes never straddling two: `addrs[l] = a0 + l * s`
/// with `s` a multiple of the word (no wrap past the top). `None` for any other access.
#[inline]
fn word_stride(access: &WarpAccess, shift: u32) -> Option<u64> {
    let a = &access.addrs;
    let (a0, s) = (a[0], a[1].wrapping_sub(a[0]));
    if !looks_strided(access) {
        return None;
    }
    let width_mask = (1u64 << shift) - 1;
    let last_byte = u64::from(access.bytes.max(1)) - 1;
    // No wrap past the top (then `a[31]` is `top`).
    let top = s.checked_mul(31).and_then(|d| a0.checked_add(d))?;
    if s & width_mask != 0
        || (a0 & width_mask) + last_byte > width_mask
        || top.checked_add(last_byte).is_none()
    {
        return None;
    }
    // Every step `s`, with no early exit, so that the loop is a few vector instructions.
    let odd = (a[1..].iter().zip(&a[..31])).fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ s));
    (odd == 0).then_some(s >> shift)
}

/// Whether every lane of `access` is active and the last lane is where the step from lane 0 to
/// lane 1 leads (wrapping): the cheap test that rejects most scattered accesses before
/// [`word_stride`] looks at every lane.
#[inline(always)]
fn looks_strided(access: &WarpAccess) -> bool {
    let a = &access.addrs;
    let s = a[1].wrapping_sub(a[0]);
    access.mask == u32::MAX && a[31] == a[0].wrapping_add(s.wrapping_mul(31))
}

/// Wavefronts of `lanes` consecutive lanes reading one word each, `k` words apart, on `nbanks`
/// banks (a power of two): lane `l`'s bank is `(b0 + l * k) % nbanks`, which repeats every
/// `nbanks / gcd(k, nbanks)` lanes, each bank of the cycle once; the words are distinct (unless
/// `k` is 0: one word, a broadcast), so the busiest bank serves `ceil(lanes / period)` of them.
#[inline]
fn strided_wavefronts(k: u64, lanes: u32, nbanks: u64) -> u32 {
    if k == 0 {
        return 1;
    }
    let gcd = 1u64 << k.trailing_zeros().min(nbanks.trailing_zeros());
    let period = (nbanks / gcd) as u32;
    lanes.div_ceil(period).max(1)
}

/// Wavefronts of the lanes of `mask` (one phase): the most distinct words any bank holds. Not
/// inlined: its whole-warp passes would be hoisted into the caller's path for runs.
#[inline(never)]
fn phase_wavefronts(access: &WarpAccess, mask: u32, banks: Banks) -> u32 {
    // Bank widths (4, 8) and counts (16, 32) are powers of two: shifts and masks, not divisions
    // (a 64-bit division per lane cost more than the rest of the function).
    debug_assert!(banks.width.is_power_of_two() && banks.banks.is_power_of_two());
    let shift = banks.width.max(1).trailing_zeros();
    let nbanks = u64::from(banks.banks.clamp(1, 64));
    let last_byte = u64::from(access.bytes.max(1)) - 1;
    // A whole warp in one phase, one word per lane a fixed number of words apart (a tile's
    // column, a strided global load): in closed form.
    if mask == u32::MAX && looks_strided(access) {
        if let Some(k) = word_stride(access, shift) {
            return strided_wavefronts(k, WARP as u32, nbanks);
        }
    }
    // Scattered or strided loads without conflict (each lane's bytes in one word, each word in a
    // bank of its own): one wavefront, found in one branch-free pass over the warp.
    if one_word_per_bank(&access.addrs, mask, shift, nbanks, last_byte) {
        return 1;
    }
    if let Some(n) = increasing_wavefronts(&access.addrs, mask, shift, nbanks, last_byte) {
        return n;
    }
    let words_of = |l: u32| {
        let a = access.addrs[l as usize];
        a >> shift..=a.saturating_add(last_byte) >> shift
    };
    // One pass: the span of the words, and whether each lane reads one word in a bank of its
    // own or shared only by lanes reading the same word (scattered or strided loads without
    // conflict: one wavefront, found without the set below). `owner`: the lane whose word a
    // bank holds, valid where `used` has the bank's bit.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let mut owner = [0u8; 64];
    let mut used = 0u64;
    let mut conflict = false;
    for l in bits(mask) {
        let w = words_of(l);
        let (first, last) = (*w.start(), *w.end());
        lo = lo.min(first);
        hi = hi.max(last);
        let b = (first & (nbanks - 1)) as usize;
        if first != last
            || (used >> b & 1 == 1 && access.addrs[usize::from(owner[b])] >> shift != first)
        {
            conflict = true;
        }
        used |= 1 << b;
        owner[b] = l as u8;
    }
    // Fewer words in the span than banks: each word has a bank to itself (coalesced, broadcast).
    if hi - lo < nbanks || !conflict {
        return 1;
    }
    // A phase moves at most `banks * width` bytes, so at most 4 words per lane plus straddles:
    // fewer than 256. Distinct words go through a small open-addressing set, each new one counted
    // in its bank (a sort of the words cost more than the rest of the function).
    let mut seen = WordSet::<256>::new();
    let mut per_bank = [0u8; 64];
    let mut most = 1u8;
    for l in bits(mask) {
        for w in words_of(l) {
            if seen.insert(w) {
                let b = &mut per_bank[(w & (nbanks - 1)) as usize];
                *b += 1;
                most = most.max(*b);
            }
        }
    }
    u32::from(most)
}

/// Whether each lane of `mask` reads bytes `a..=a + last_byte` within one word of `1 << shift`
/// bytes, and no two lanes' words share a bank (`nbanks`, a power of two up to 64): then no bank
/// serves two words, the phase takes one wavefront. Every lane is visited, the inactive ones
/// masked out, so that the loop is a few vector instructions.
#[inline]
fn one_word_per_bank(
    addrs: &[u64; WARP],
    mask: u32,
    shift: u32,
    nbanks: u64,
    last_byte: u64,
) -> bool {
    let (mut banks, mut straddles) = (0u64, 0u64);
    for (l, &a) in addrs.iter().enumerate() {
        let on = u64::from(mask >> l & 1 == 1).wrapping_neg();
        banks |= (1u64 << (a >> shift & (nbanks - 1))) & on;
        // A lane whose last byte is in another word (or wraps past the top) straddles.
        straddles |= ((a.wrapping_add(last_byte) ^ a) >> shift
            | u64::from(a > a.wrapping_add(last_byte)))
            & on;
    }
    straddles == 0 && banks.count_ones() == mask.count_ones()
}

/// Wavefronts of the lanes of `mask` (nonzero) when each lane's words (`1 << shift` bytes,
/// bytes `a..=a + last_byte`) all come after the previous lane's (strided or coalesced accesses,
/// a column of a tile): every word is then distinct, so the answer is the most words any of the
/// `nbanks` banks holds, counted without the set of distinct words. `None` when some lane's
/// words do not come after the previous lane's.
#[inline]
fn increasing_wavefronts(
    addrs: &[u64; WARP],
    mask: u32,
    shift: u32,
    nbanks: u64,
    last_byte: u64,
) -> Option<u32> {
    let words = |l: u32| {
        let a = addrs[l as usize];
        (a >> shift, a.saturating_add(last_byte) >> shift)
    };
    // A phase has fewer than 256 words (see `phase_wavefronts`): a bank's count fits a byte.
    let mut per_bank = [0u8; 64];
    let mut most = 0u8;
    let mut count = |first: u64, last: u64| {
        // One word per lane (the usual case) without a range's bookkeeping.
        let mut w = first;
        loop {
            let b = &mut per_bank[(w & (nbanks - 1)) as usize];
            *b += 1;
            most = most.max(*b);
            if w >= last {
                break;
            }
            w += 1;
        }
    };
    let l0 = mask.trailing_zeros();
    let (first, mut prev) = words(l0);
    count(first, prev);
    for l in bits(mask & mask.wrapping_sub(1)) {
        let (first, last) = words(l);
        if first <= prev {
            return None;
        }
        count(first, last);
        prev = last;
    }
    Some(u32::from(most))
}

/// The set bits of `mask`, ascending.
#[inline]
fn bits(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let l = mask.trailing_zeros();
            mask &= mask - 1;
            l
        })
    })
}

/// Wavefronts of a shared-memory atomic (`atom.shared`, `red.shared`: SASS `ATOMS`). A bank
/// performs one read-modify-write per wavefront, and lanes that update the same word cannot share
/// one (unlike a load's broadcast), so the count is, per phase, the most lanes any bank serves.
/// This is the simulator's model, not a documented rule: Nsight Compute reports the result as
/// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum`.
pub fn atomic_wavefronts(access: &WarpAccess, banks: Banks) -> Wavefronts {
    let phase = lanes_per_phase(access.bytes, banks) as usize;
    let width = u64::from(banks.width);
    let mut out = Wavefronts::default();
    let mut lanes_in_bank = vec![0u32; banks.banks as usize];
    let mut start = 0;
    while start < 32 {
        lanes_in_bank.iter_mut().for_each(|n| *n = 0);
        let mut any = false;
        for (lane, a) in access.lanes() {
            if lane < start || lane >= start + phase {
                continue;
            }
            any = true;
            let last = (a + u64::from(access.bytes.max(1)) - 1) / width;
            for w in a / width..=last {
                lanes_in_bank[(w % u64::from(banks.banks)) as usize] += 1;
            }
        }
        if any {
            out.ideal += 1;
            out.wavefronts += lanes_in_bank.iter().copied().max().unwrap_or(1).max(1);
        }
        start += phase;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const B4: Banks = Banks {
        banks: 32,
        width: 4,
    };
    const B8: Banks = Banks {
        banks: 32,
        width: 8,
    };

    #[test]
    fn row_access_is_conflict_free() {
        let w = wavefronts(&WarpAccess::from_fn(4, |l| 4 * l), B4);
        assert_eq!((w.wavefronts, w.conflicts()), (1, 0));
    }

    #[test]
    fn column_of_a_32x32_int_tile_is_32_way_then_16_way_with_8_byte_banks() {
        let col = WarpAccess::from_fn(4, |l| 4 * (l * 32 + 5));
        assert_eq!(wavefronts(&col, B4).wavefronts, 32);
        assert_eq!(wavefronts(&col, B8).wavefronts, 16);
        let padded = WarpAccess::from_fn(4, |l| 4 * (l * 33 + 5));
        assert_eq!(wavefronts(&padded, B4).wavefronts, 1);
    }

    #[test]
    fn same_word_is_a_broadcast() {
        assert_eq!(
            wavefronts(&WarpAccess::from_fn(4, |_| 64), B4).wavefronts,
            1
        );
        // Two 4-byte halves of one 8-byte word share an 8-byte bank entry.
        assert_eq!(
            wavefronts(&WarpAccess::from_fn(4, |l| 8 * (l / 2) + 4 * (l % 2)), B8).wavefronts,
            1
        );
    }

    #[test]
    fn wide_accesses_take_phases() {
        let w8 = wavefronts(&WarpAccess::from_fn(8, |l| 8 * l), B4);
        assert_eq!((w8.wavefronts, w8.ideal), (2, 2));
        let w16 = wavefronts(&WarpAccess::from_fn(16, |l| 16 * l), B4);
        assert_eq!((w16.wavefronts, w16.ideal), (4, 4));
        // Stride 2 on 8-byte words: each half-warp hits 16 banks pairs twice.
        let s2 = wavefronts(&WarpAccess::from_fn(8, |l| 16 * l), B4);
        assert_eq!((s2.wavefronts, s2.conflicts()), (4, 2));
    }

    #[test]
    fn half_warps_on_16_banks() {
        let b = Banks {
            banks: 16,
            width: 4,
        };
        let w = wavefronts(&WarpAccess::from_fn(4, |l| 4 * l), b);
        assert_eq!((w.wavefronts, w.ideal), (2, 2));
    }

    #[test]
    fn atomics_on_one_word_serialize_and_distinct_banks_do_not() {
        assert_eq!(
            atomic_wavefronts(&WarpAccess::from_fn(4, |_| 64), B4).wavefronts,
            32
        );
        assert_eq!(
            atomic_wavefronts(&WarpAccess::from_fn(4, |l| 4 * l), B4).wavefronts,
            1
        );
        // Four lanes per word, eight words in eight banks: four updates per bank.
        assert_eq!(
            atomic_wavefronts(&WarpAccess::from_fn(4, |l| 4 * (l / 4)), B4).wavefronts,
            4
        );
    }

    #[test]
    fn one_word_per_bank_needs_distinct_banks_and_no_straddle() {
        let scattered: [u64; WARP] =
            std::array::from_fn(|l| 0x1000 + (l as u64 * 1357 % 16384) * 4);
        assert!(one_word_per_bank(&scattered, u32::MAX, 2, 32, 3));
        // Lanes 0 and 32 words apart share bank 0; with lane 1 off, only lane 0 is left.
        let mut two = scattered;
        two[1] = two[0] + 128;
        assert!(!one_word_per_bank(&two, u32::MAX, 2, 32, 3));
        assert!(one_word_per_bank(&two, !2, 2, 32, 3));
        // A lane straddling two words.
        let mut straddle = scattered;
        straddle[5] += 2;
        assert!(!one_word_per_bank(&straddle, u32::MAX, 2, 32, 3));
        assert_eq!(
            wavefronts(
                &WarpAccess {
                    mask: u32::MAX,
                    addrs: scattered,
                    bytes: 4
                },
                B4
            )
            .wavefronts,
            1
        );
    }

    #[test]
    fn increasing_words_are_counted_per_bank() {
        let col: [u64; WARP] = std::array::from_fn(|l| 4 * (l as u64 * 32 + 5));
        assert_eq!(increasing_wavefronts(&col, u32::MAX, 2, 32, 3), Some(32));
        assert_eq!(increasing_wavefronts(&col, 0b1011, 2, 32, 3), Some(3));
        // Stride 2 words: two lanes per bank; 8-byte banks: one.
        let s2: [u64; WARP] = std::array::from_fn(|l| 8 * l as u64);
        assert_eq!(increasing_wavefronts(&s2, u32::MAX, 2, 32, 3), Some(2));
        assert_eq!(increasing_wavefronts(&s2, u32::MAX, 3, 32, 3), Some(1));
        // Straddling lanes count both words; overlapping or repeated words are not increasing.
        let straddle: [u64; WARP] = std::array::from_fn(|l| 128 * l as u64 + 2);
        assert_eq!(increasing_wavefronts(&straddle, 0b11, 2, 32, 3), Some(2));
        assert_eq!(increasing_wavefronts(&straddle, 0b11, 2, 32, 127), None);
        assert_eq!(increasing_wavefronts(&[64; WARP], 0b11, 2, 32, 3), None);
    }

    #[test]
    fn strided_accesses_in_closed_form() {
        // A column of a 32x32 int tile: stride 32 words, one bank; padded: 33, all banks.
        assert_eq!(strided_wavefronts(32, 32, 32), 32);
        assert_eq!(strided_wavefronts(33, 32, 32), 1);
        assert_eq!(strided_wavefronts(16, 32, 32), 16);
        assert_eq!(strided_wavefronts(2, 32, 32), 2);
        assert_eq!(strided_wavefronts(6, 16, 32), 1);
        assert_eq!(strided_wavefronts(0, 32, 32), 1);
        assert_eq!(strided_wavefronts(64, 16, 16), 16);
        let col = WarpAccess::from_fn(4, |l| 4 * (l * 32 + 5));
        assert_eq!(word_stride(&col, 2), Some(32));
        assert_eq!(word_stride(&col, 3), Some(16));
        let s3 = WarpAccess::from_fn(4, |l| 12 * l);
        assert_eq!(word_stride(&s3, 2), Some(3));
        assert_eq!(word_stride(&s3, 3), None); // 12-byte steps of 8-byte words
        assert_eq!(word_stride(&WarpAccess::from_fn(4, |l| 4 * l + 2), 2), None); // straddles
        let mut one_off = col;
        one_off.addrs[7] += 4;
        assert_eq!(word_stride(&one_off, 2), None);
        // Descending addresses wrap: not taken.
        assert_eq!(
            word_stride(&WarpAccess::from_fn(4, |l| 4096 - 4 * l), 2),
            None
        );
        // Stride 6 words on 8-byte banks (48 bytes), and the lane-by-lane path agrees.
        let s6 = WarpAccess::from_fn(8, |l| 48 * l);
        assert_eq!(word_stride(&s6, 3), Some(6));
        assert_eq!(wavefronts(&s6, B8).wavefronts, 2);
        assert_eq!(
            increasing_wavefronts(&s6.addrs, u32::MAX, 3, 32, 7),
            Some(2)
        );
    }

    #[test]
    fn one_phase_runs() {
        assert!(one_phase_run(0x1000, 4, B4));
        // 8-byte elements take two phases; a misaligned run spans 33 words.
        assert!(!one_phase_run(0x1000, 8, B4));
        assert!(!one_phase_run(0x1002, 4, B4));
        assert!(one_phase_run(0x1004, 4, B8));
        let b16 = Banks {
            banks: 16,
            width: 4,
        };
        assert!(!one_phase_run(0x1000, 4, b16));
    }

    #[test]
    fn inactive_lanes_are_ignored() {
        let mut a = WarpAccess::from_fn(4, |l| 4 * (l * 32));
        a.mask = 0b111;
        assert_eq!(wavefronts(&a, B4).wavefronts, 3);
    }
}

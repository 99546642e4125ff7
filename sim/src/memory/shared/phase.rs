//! The wavefronts of one phase of a shared access ([`phase_wavefronts`]): closed forms for a few
//! runs of consecutive words, a column, one word per bank and increasing words, else the most
//! distinct words any bank holds, counted through a small set.

use super::{bits, looks_strided, strided_wavefronts, word_stride, Banks};
use crate::memory::{WarpAccess, WordSet, WARP};

/// Wavefronts of the lanes of `mask` (one phase): the most distinct words any bank holds. Not
/// inlined: its whole-warp passes would be hoisted into the caller's path for runs.
#[inline(never)]
pub(super) fn phase_wavefronts(access: &WarpAccess, mask: u32, banks: Banks) -> u32 {
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
    // A few runs of consecutive words (rows of a 2-D block, partial or not): in closed form.
    if let Some(n) = run_wavefronts(&access.addrs, mask, shift, nbanks, last_byte) {
        return n;
    }
    // Scattered or strided loads without conflict (each lane's bytes in one word, each word in a
    // bank of its own): one wavefront, found in one branch-free pass over the warp.
    if one_word_per_bank(&access.addrs, mask, shift, nbanks, last_byte) {
        return 1;
    }
    if let Some(n) = column_wavefronts(&access.addrs, mask, shift, nbanks, last_byte) {
        return n;
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

/// The most runs [`run_wavefronts`] takes: more are scattered accesses, left to the lane-by-lane
/// paths. A bank's count of partial runs then fits the 4 bit planes of its counter.
const MAX_RUNS: u32 = 8;

/// Wavefronts of the lanes of `mask` (nonzero) when they form at most [`MAX_RUNS`] runs of
/// consecutive elements (lane `l` reads bytes `a..=a + last_byte`; words are `1 << shift`
/// bytes), each run's words after the previous run's: a 2-D block's rows (lanes 0-15 in one
/// row, 16-31 in the next), whole or cut by a mask at the image's edge. `None` for any other
/// access.
///
/// A lane continues the run of the lane before it when both are active and its bytes follow
/// that lane's, so a run's bytes, and its words, are one range; each run's words after the
/// previous run's makes the ranges disjoint. A range of `len` words covers every bank
/// `len / nbanks` times and one more the `len % nbanks` banks from its first word's bank on
/// (mod `nbanks`); the busiest bank serves the sum of the former plus the most of those partial
/// ranges that overlap on it, counted per bank with bit-sliced counters (bit `b` of plane `j`:
/// bit `j` of bank `b`'s count). Whole-warp passes, no per-lane counting: a fraction of
/// [`increasing_wavefronts`]'s cost for the same answer.
#[inline]
fn run_wavefronts(
    addrs: &[u64; WARP],
    mask: u32,
    shift: u32,
    nbanks: u64,
    last_byte: u64,
) -> Option<u32> {
    // Every lane visited, no early exit, so that the loop is a few vector instructions (an
    // equality: AVX2 has no unsigned 64-bit comparison, and emulating one doubled the loop).
    let bytes = last_byte + 1;
    let mut cont = 0u32;
    for l in 1..WARP {
        cont |= u32::from(addrs[l].wrapping_sub(addrs[l - 1]) == bytes) << l;
    }
    cont &= mask & (mask << 1);
    let mut starts = mask & !cont;
    if starts.count_ones() > MAX_RUNS {
        return None;
    }
    // A run ends at an active lane the next lane does not continue.
    let mut ends = mask & !(cont >> 1);
    let bank_mask = if nbanks >= 64 {
        u64::MAX
    } else {
        (1 << nbanks) - 1
    };
    let log_banks = nbanks.trailing_zeros();
    let (mut full, mut planes, mut prev_hi) = (0u64, [0u64; 4], None);
    while starts != 0 {
        let (s, e) = (starts.trailing_zeros(), ends.trailing_zeros());
        starts &= starts - 1;
        ends &= ends - 1;
        // A run that wraps past the top byte, or words not after the previous run's (possibly
        // shared with it): the lane-by-lane paths decide.
        let (a, z) = (addrs[s as usize], addrs[e as usize]);
        let end = z.checked_add(last_byte).filter(|_| z >= a)?;
        let (lo, hi) = (a >> shift, end >> shift);
        if prev_hi.is_some_and(|p| lo <= p) {
            return None;
        }
        prev_hi = Some(hi);
        let len = hi - lo + 1;
        full += len >> log_banks;
        // The partial range's banks, wrapped past the last bank (a rotation for 64 banks).
        let (ones, b) = ((1u64 << (len & (nbanks - 1))) - 1, lo & (nbanks - 1));
        let mut carry = if nbanks == 64 {
            ones.rotate_left(b as u32)
        } else {
            let range = ones << b;
            (range | range >> nbanks) & bank_mask
        };
        for p in &mut planes {
            let c = *p & carry;
            *p ^= carry;
            carry = c;
        }
    }
    // The busiest bank's count, from the top plane down.
    let (mut banks, mut most) = (u64::MAX, 0u64);
    for (j, &p) in planes.iter().enumerate().rev() {
        if banks & p != 0 {
            banks &= p;
            most |= 1 << j;
        }
    }
    Some((full + most) as u32)
}

/// Nonzero when a lane at `a` reading bytes `a..=a + last_byte` leaves its word of `1 << shift`
/// bytes: its last byte is in another word, or wraps past the top of the address space. Branch
/// free, so that the whole-warp loops calling it stay a few vector instructions.
#[inline(always)]
fn straddle_bits(a: u64, last_byte: u64, shift: u32) -> u64 {
    let z = a.wrapping_add(last_byte);
    (z ^ a) >> shift | u64::from(a > z)
}

/// Wavefronts of the lanes of `mask` (nonzero) when each lane reads within one word (`1 <<
/// shift` bytes; lane `l` reads bytes `a..=a + last_byte`) and they form at most [`MAX_RUNS`]
/// columns, each in a bank of its own: a column is consecutive active lanes whose words all lie
/// in one bank, each after the previous lane's (a 2-D block's column: lanes 0-15 down one
/// column of a matrix whose rows are a multiple of the banks apart, lanes 16-31 down the next).
/// A column's words are then distinct, no other column's share its bank, and the busiest bank
/// serves the longest column's words. `None` for any other access.
#[inline]
fn column_wavefronts(
    addrs: &[u64; WARP],
    mask: u32,
    shift: u32,
    nbanks: u64,
    last_byte: u64,
) -> Option<u32> {
    // Every lane visited, no early exit, so that the loop is a few vector instructions.
    let (mut cont, mut straddles) = (0u32, 0u64);
    for l in 1..WARP {
        let (first, prev) = (addrs[l] >> shift, addrs[l - 1] >> shift);
        cont |= u32::from(first > prev && (first ^ prev) & (nbanks - 1) == 0) << l;
    }
    for (l, &a) in addrs.iter().enumerate() {
        let on = u64::from(mask >> l & 1 == 1).wrapping_neg();
        straddles |= straddle_bits(a, last_byte, shift) & on;
    }
    cont &= mask & (mask << 1);
    let mut starts = mask & !cont;
    if straddles != 0 || starts.count_ones() > MAX_RUNS {
        return None;
    }
    // A column ends at an active lane the next lane does not continue.
    let mut ends = mask & !(cont >> 1);
    let (mut banks, mut most) = (0u64, 0u32);
    while starts != 0 {
        let (s, e) = (starts.trailing_zeros(), ends.trailing_zeros());
        starts &= starts - 1;
        ends &= ends - 1;
        let bank = 1u64 << (addrs[s as usize] >> shift & (nbanks - 1));
        if banks & bank != 0 {
            return None;
        }
        banks |= bank;
        most = most.max(e - s + 1);
    }
    Some(most)
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
        straddles |= straddle_bits(a, last_byte, shift) & on;
    }
    straddles == 0 && banks.count_ones() == mask.count_ones()
}

/// Wavefronts of the lanes of `mask` (nonzero) when each lane's words (`1 << shift` bytes,
/// bytes `a..=a + last_byte`) all come after the previous lane's (strided or coalesced accesses,
/// a column of a tile): every word is then distinct, so the answer is the most words any of the
/// `nbanks` banks holds, counted without the set of distinct words. `None` when some lane's
/// words do not come after the previous lane's.
#[inline]
pub(super) fn increasing_wavefronts(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::shared::tests::{random_accesses, reference, B16, B4, B64, B8};
    use crate::memory::shared::{lanes_per_phase, wavefronts};

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
    fn fast_paths_match_the_definition() {
        let (mut runs, mut columns) = (0, 0);
        for access in random_accesses(50_000) {
            for banks in [B4, B8, B16, B64] {
                let phase = lanes_per_phase(access.bytes, banks) as usize;
                for start in (0..WARP).step_by(phase) {
                    let mask = access.phase_mask(start, phase);
                    if mask == 0 {
                        continue;
                    }
                    let want = reference(&access, mask, banks);
                    let shift = banks.width.trailing_zeros();
                    let nbanks = u64::from(banks.banks);
                    let last_byte = u64::from(access.bytes) - 1;
                    let got = run_wavefronts(&access.addrs, mask, shift, nbanks, last_byte);
                    runs += usize::from(got.is_some());
                    assert!(
                        got.is_none_or(|n| n == want),
                        "run_wavefronts {got:?} != {want}: {access:?} {mask:#x} {banks:?}"
                    );
                    let got = column_wavefronts(&access.addrs, mask, shift, nbanks, last_byte);
                    columns += usize::from(got.is_some());
                    assert!(
                        got.is_none_or(|n| n == want),
                        "column_wavefronts {got:?} != {want}: {access:?} {mask:#x} {banks:?}"
                    );
                    let got = increasing_wavefronts(&access.addrs, mask, shift, nbanks, last_byte);
                    assert!(
                        got.is_none_or(|n| n == want),
                        "{access:?} {mask:#x} {banks:?}"
                    );
                    let got = phase_wavefronts(&access, mask, banks);
                    assert_eq!(got, want, "{access:?} {mask:#x} {banks:?}");
                }
            }
        }
        // The runs path was taken often enough to be tested.
        assert!(runs > 25_000 && columns > 2_500, "{runs} {columns}");
    }

    #[test]
    fn runs_of_words_in_closed_form() {
        // Two rows of 16 floats 4096 bytes apart: the same 16 banks twice.
        let rows = WarpAccess::from_fn(4, |l| 0x1000 + (l / 16) * 4096 + (l % 16) * 4);
        assert_eq!(run_wavefronts(&rows.addrs, u32::MAX, 2, 32, 3), Some(2));
        // Cut at an image's edge: lanes 0-1 and 16-17 off.
        assert_eq!(run_wavefronts(&rows.addrs, !0x3_0003, 2, 32, 3), Some(2));
        // Only the first row: one wavefront. Rows 17 words apart: words 0-15 and 17-32, which
        // share bank 0; without lane 31 (word 32), they share none.
        assert_eq!(run_wavefronts(&rows.addrs, 0xffff, 2, 32, 3), Some(1));
        let apart = WarpAccess::from_fn(4, |l| (l / 16) * 68 + (l % 16) * 4);
        assert_eq!(run_wavefronts(&apart.addrs, u32::MAX, 2, 32, 3), Some(2));
        assert_eq!(
            run_wavefronts(&apart.addrs, u32::MAX >> 1, 2, 32, 3),
            Some(1)
        );
        // 8-byte lanes on 4-byte banks: 64 words, each bank twice.
        let wide = WarpAccess::from_fn(8, |l| 8 * l);
        assert_eq!(run_wavefronts(&wide.addrs, u32::MAX, 2, 32, 7), Some(2));
        // The second row before the first, and a row read twice: not taken.
        let back = WarpAccess::from_fn(4, |l| 4096 - (l / 16) * 4096 + (l % 16) * 4);
        assert_eq!(run_wavefronts(&back.addrs, u32::MAX, 2, 32, 3), None);
        let twice = WarpAccess::from_fn(4, |l| (l % 16) * 4);
        assert_eq!(run_wavefronts(&twice.addrs, u32::MAX, 2, 32, 3), None);
        // A column: 32 runs of one word, more than the path takes.
        let col = WarpAccess::from_fn(4, |l| l * 4096);
        assert_eq!(run_wavefronts(&col.addrs, u32::MAX, 2, 32, 3), None);
    }

    #[test]
    fn columns_in_closed_form() {
        // Two columns of a 1024-float matrix: banks 0 and 1, 16 words each.
        let cols = WarpAccess::from_fn(4, |l| (l % 16) * 4096 + (l / 16) * 4);
        assert_eq!(column_wavefronts(&cols.addrs, u32::MAX, 2, 32, 3), Some(16));
        assert_eq!(
            column_wavefronts(&cols.addrs, 0x00ff_0fff, 2, 32, 3),
            Some(12)
        );
        // 8-byte banks: both columns in bank 0 (not taken); rows 33 words apart: not a column.
        assert_eq!(column_wavefronts(&cols.addrs, u32::MAX, 3, 32, 3), None);
        let padded = WarpAccess::from_fn(4, |l| (l % 16) * 132 + (l / 16) * 4);
        assert_eq!(column_wavefronts(&padded.addrs, u32::MAX, 2, 32, 3), None);
        // Straddling lanes, and a column read upwards: not taken.
        assert_eq!(column_wavefronts(&cols.addrs, u32::MAX, 2, 32, 7), None);
        let up = WarpAccess::from_fn(4, |l| (64 - l % 16) * 4096 + (l / 16) * 4);
        assert_eq!(column_wavefronts(&up.addrs, u32::MAX, 2, 32, 3), None);
    }
}

//! Property tests of the shared-memory bank model against a brute-force reference.
//!
//! - wavefronts of a 4-byte access lie in 1..=32, and equal the reference (the most distinct
//!   words any bank serves, per phase of lanes);
//! - all lanes on one word is one wavefront (broadcast);
//! - permuting lanes within a phase changes nothing;
//! - stride s over 4-byte words is conflict-free exactly when s is odd;
//! - padding a 32x32 int tile by one word makes column access conflict-free on 4-byte banks (the
//!   unpadded column is 32-way; on Kepler's 8-byte banks it is 16-way, at most 2-way with one word
//!   of padding, conflict-free with two).

use proptest::prelude::*;
use sim::memory::shared::{wavefronts, Banks};
use sim::memory::WarpAccess;
use std::collections::{HashMap, HashSet};

const B4: Banks = Banks {
    banks: 32,
    width: 4,
};
const B8: Banks = Banks {
    banks: 32,
    width: 8,
};

/// The reference: phases of `128 * width / 4 / bytes` lanes (at most 32, at most `banks`), in
/// each the largest number of distinct `width`-byte words mapped to one bank.
fn reference(mask: u32, addrs: &[u64; 32], bytes: u32, b: Banks) -> u32 {
    let phase = ((b.banks * b.width / bytes).max(1)).min(b.banks.min(32)) as usize;
    let mut total = 0;
    for start in (0..32).step_by(phase) {
        let mut per_bank: HashMap<u64, HashSet<u64>> = HashMap::new();
        let mut any = false;
        for (lane, &addr) in addrs.iter().enumerate().skip(start).take(phase) {
            if mask >> lane & 1 == 0 {
                continue;
            }
            any = true;
            for byte in addr..addr + u64::from(bytes) {
                let word = byte / u64::from(b.width);
                per_bank
                    .entry(word % u64::from(b.banks))
                    .or_default()
                    .insert(word);
            }
        }
        if any {
            total += per_bank.values().map(|s| s.len() as u32).max().unwrap_or(1);
        }
    }
    total
}

fn access(mask: u32, addrs: [u64; 32], bytes: u32) -> WarpAccess {
    WarpAccess { mask, addrs, bytes }
}

fn strided(stride: u64, bytes: u32) -> WarpAccess {
    let mut a = [0u64; 32];
    for (l, x) in a.iter_mut().enumerate() {
        *x = l as u64 * stride * u64::from(bytes);
    }
    access(u32::MAX, a, bytes)
}

fn lanes_and_words() -> impl Strategy<Value = (u32, [u64; 32])> {
    // Word indices from a small range so that banks collide often.
    (any::<u32>(), prop::array::uniform32(0u64..512)).prop_map(|(m, w)| (m | 1, w.map(|x| x * 4)))
}

proptest! {
    #[test]
    fn four_byte_wavefronts_match_the_reference_and_lie_in_1_to_32((mask, addrs) in lanes_and_words()) {
        let got = wavefronts(&access(mask, addrs, 4), B4);
        prop_assert_eq!(got.wavefronts, reference(mask, &addrs, 4, B4));
        prop_assert!((1..=32).contains(&got.wavefronts));
        prop_assert_eq!(got.ideal, 1);
        let got8 = wavefronts(&access(mask, addrs, 4), B8);
        prop_assert_eq!(got8.wavefronts, reference(mask, &addrs, 4, B8));
    }

    #[test]
    fn wide_accesses_match_the_reference((mask, words) in lanes_and_words(), wide in prop::sample::select(vec![8u32, 16])) {
        let addrs = words.map(|a| a / 4 * u64::from(wide));
        for b in [B4, B8] {
            let got = wavefronts(&access(mask, addrs, wide), b);
            prop_assert_eq!(got.wavefronts, reference(mask, &addrs, wide, b));
            prop_assert!(got.wavefronts >= got.ideal);
        }
    }

    #[test]
    fn consecutive_elements_match_the_reference(base in 0u64..100_000, bytes in prop::sample::select(vec![1u32, 2, 4, 8, 16]), aligned in any::<bool>()) {
        // Lane l at base + l * bytes, every lane active: the fast path for consecutive elements,
        // aligned to the element or not (a phase spanning one word more than the banks).
        let base = if aligned { base / u64::from(bytes) * u64::from(bytes) } else { base };
        let addrs: [u64; 32] = std::array::from_fn(|l| base + l as u64 * u64::from(bytes));
        for b in [B4, B8] {
            let got = wavefronts(&access(u32::MAX, addrs, bytes), b);
            prop_assert_eq!(got.wavefronts, reference(u32::MAX, &addrs, bytes, b));
        }
    }

    #[test]
    fn one_word_is_one_wavefront(word in 0u64..4096, mask in 1u32..) {
        // Any bytes of one 4-byte word: a broadcast, on either bank width.
        let mut bytes = [0u64; 32];
        for (l, a) in bytes.iter_mut().enumerate() {
            *a = word * 4 + l as u64 % 4;
        }
        for b in [B4, B8] {
            prop_assert_eq!(wavefronts(&access(mask, bytes, 1), b).wavefronts, 1);
            prop_assert_eq!(wavefronts(&access(mask, [word * 4; 32], 4), b).wavefronts, 1);
        }
    }

    #[test]
    fn scattered_words_in_distinct_banks_match_the_reference(
        rows in prop::array::uniform32(0u64..64),
        seed in any::<u64>(),
        shared in prop::array::uniform32(0usize..32),
        dup in any::<u32>(),
        extra in 0u64..4,
        mask in 1u32..,
    ) {
        // Lane l reads a word of its own bank (a permutation of the banks, any row), or a lane
        // in `dup` reads another lane's word (a broadcast); `extra` > 0 puts a second word in one
        // bank (a conflict). Random words rarely miss every other bank: this covers that case.
        let mut banks: Vec<u64> = (0..32).collect();
        let mut s = seed;
        for i in (1..32).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            banks.swap(i, (s >> 33) as usize % (i + 1));
        }
        let mut words: [u64; 32] = std::array::from_fn(|l| banks[l] + 32 * rows[l]);
        for l in 0..32 {
            if dup >> l & 1 == 1 {
                words[l] = words[shared[l]];
            }
        }
        if extra > 0 {
            words[31] = words[0] + 32 * extra;
        }
        let addrs = words.map(|w| w * 4);
        for b in [B4, B8] {
            prop_assert_eq!(wavefronts(&access(mask, addrs, 4), b).wavefronts, reference(mask, &addrs, 4, b));
        }
    }

    #[test]
    fn permuting_lanes_changes_nothing((mask, addrs) in lanes_and_words(), seed in any::<u64>()) {
        let mut perm: Vec<usize> = (0..32).collect();
        let mut s = seed;
        for i in (1..32).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let mut a2 = [0u64; 32];
        let mut m2 = 0u32;
        for (l, &p) in perm.iter().enumerate() {
            a2[p] = addrs[l];
            m2 |= (mask >> l & 1) << p;
        }
        prop_assert_eq!(wavefronts(&access(mask, addrs, 4), B4), wavefronts(&access(m2, a2, 4), B4));
    }
}

#[test]
fn stride_is_conflict_free_exactly_when_odd() {
    for s in 1..=64u64 {
        let w = wavefronts(&strided(s, 4), B4);
        assert_eq!(w.conflicts() == 0, s % 2 == 1, "stride {s}: {w:?}");
        assert_eq!(
            w.wavefronts,
            reference(u32::MAX, &strided(s, 4).addrs, 4, B4),
            "stride {s}"
        );
    }
}

#[test]
fn padding_a_32x32_tile_removes_the_column_conflict() {
    for col in 0..32u64 {
        let column = |row_words: u64| {
            let mut a = [0u64; 32];
            for (l, x) in a.iter_mut().enumerate() {
                *x = 4 * (l as u64 * row_words + col);
            }
            access(u32::MAX, a, 4)
        };
        assert_eq!(
            wavefronts(&column(32), B4).wavefronts,
            32,
            "column {col}, 4-byte banks"
        );
        assert_eq!(
            wavefronts(&column(32), B8).wavefronts,
            16,
            "column {col}, 8-byte banks"
        );
        assert_eq!(
            wavefronts(&column(33), B4).wavefronts,
            1,
            "column {col}, padded, 4-byte banks"
        );
        // With 8-byte banks one word of padding leaves at most a 2-way conflict; two remove it.
        let one = wavefronts(&column(33), B8).wavefronts;
        assert!(
            one <= 2,
            "column {col}, 1 word of padding, 8-byte banks: {one}"
        );
        assert_eq!(
            one,
            reference(u32::MAX, &column(33).addrs, 4, B8),
            "column {col}"
        );
        assert_eq!(
            wavefronts(&column(34), B8).wavefronts,
            1,
            "column {col}, 2 words of padding, 8-byte banks"
        );
    }
}

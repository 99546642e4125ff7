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
//!
//! This file holds the access as a whole (its phases, the whole-warp closed forms of runs and
//! strides, atomics); the wavefronts of one phase are in `phase`.

use super::{WarpAccess, WARP};

mod phase;

#[cfg(test)]
mod lsu_tests;

use phase::phase_wavefronts;

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

/// As [`wavefronts_of_step`], for an `LDS`/`STS` as the GPU executes it: on 32 banks of 4 bytes
/// (every GPU since Maxwell), 8- and 16-byte accesses follow the rules measured on an H200
/// (sm_90, Nsight Compute, `tests/fixtures/vector_banks/`), which NVIDIA does not document:
///
/// - 8 bytes: one phase for the whole warp when each lane pair (2k, 2k+1) reads one word (the
///   pair is one 8-byte request: a broadcast, a uniform address); else half-warp phases;
/// - 16 bytes: quarter-warp phases, except that the two quarter-warps of a half-warp share their
///   wavefronts when each of its lane pairs reads one word, or each quarter-warp reads at most
///   two distinct 16-byte words (a broadcast per half-warp: 2 wavefronts for a warp-wide
///   broadcast, not 4). All 16 probed patterns follow it (a rule fitted to them: patterns
///   beyond these may differ).
///
/// Other sizes and bank organisations: [`wavefronts_of_step`].
pub fn lsu_wavefronts(
    access: &WarpAccess,
    banks: Banks,
    run: Option<u64>,
    step: Option<(u64, u64)>,
) -> Wavefronts {
    if banks.banks != 32 || banks.width != 4 || !matches!(access.bytes, 8 | 16) {
        return wavefronts_of_step(access, banks, run, step);
    }
    let mut out = Wavefronts::default();
    let mut phase = |mask: u32| {
        if mask != 0 {
            out.ideal += 1;
            out.wavefronts += phase_wavefronts(access, mask, banks);
        }
    };
    let on = |l: usize| access.mask >> l & 1 == 1;
    // Lane pair (2k, 2k+1) reads one word (or has one lane on).
    let pair = |k: usize| {
        let (a, b) = (2 * k, 2 * k + 1);
        !(on(a) && on(b)) || access.addrs[a] == access.addrs[b]
    };
    if access.bytes == 8 {
        if (0..WARP / 2).all(pair) {
            phase(access.mask);
        } else {
            phase(access.mask & 0xffff);
            phase(access.mask & 0xffff_0000);
        }
        return out;
    }
    // At most two distinct addresses among the active lanes of quarter-warp `q`.
    let few = |q: usize| {
        let mut seen: [Option<u64>; 2] = [None; 2];
        (8 * q..8 * q + 8).filter(|&l| on(l)).all(|l| {
            let a = Some(access.addrs[l]);
            if seen.contains(&a) {
                return true;
            }
            match seen.iter().position(Option::is_none) {
                Some(i) => {
                    seen[i] = a;
                    true
                }
                None => false,
            }
        })
    };
    for h in 0..2 {
        let half = access.mask & (0xffff << (16 * h));
        if (8 * h..8 * h + 8).all(pair) || (few(2 * h) && few(2 * h + 1)) {
            phase(half);
        } else {
            phase(half & (0xff << (16 * h)));
            phase(half & (0xff00 << (16 * h)));
        }
    }
    out
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

/// As [`wavefronts_of`], for an access whose whole-warp step `step` ([`Shape::step`]) the caller
/// also has: a tile's column or a strided load (every lane one word, a fixed number of words
/// apart, one phase) is then answered in closed form without a pass over the lanes, what
/// `phased_wavefronts` finds after its pass.
///
/// [`Shape::step`]: super::coalesce::Shape::step
#[inline(always)]
pub fn wavefronts_of_step(
    access: &WarpAccess,
    banks: Banks,
    run: Option<u64>,
    step: Option<(u64, u64)>,
) -> Wavefronts {
    // A coalesced run of 4-byte words (most accesses) is answered in the caller: the call
    // cost more than the answer.
    match run {
        Some(a0) if one_phase_run(a0, access.bytes, banks) => Wavefronts {
            wavefronts: 1,
            ideal: 1,
        },
        _ => stepped_wavefronts(access, banks, run, step),
    }
}

/// [`wavefronts_of_step`] of an access that is not a one-phase run.
#[inline(never)]
fn stepped_wavefronts(
    access: &WarpAccess,
    banks: Banks,
    run: Option<u64>,
    step: Option<(u64, u64)>,
) -> Wavefronts {
    match (run, step) {
        (None, Some((a0, s))) if lanes_per_phase(access.bytes, banks) as usize >= WARP => {
            let shift = banks.width.max(1).trailing_zeros();
            match stepped_word_stride(a0, s, access.bytes, shift) {
                Some(k) => Wavefronts {
                    wavefronts: strided_wavefronts(
                        k,
                        WARP as u32,
                        u64::from(banks.banks.clamp(1, 64)),
                    ),
                    ideal: 1,
                },
                None => phased_wavefronts(access, banks, run),
            }
        }
        _ => phased_wavefronts(access, banks, run),
    }
}

/// [`word_stride`] of a whole warp whose lane `l` is at `a0 + l * s` (no wrap: `s` a
/// [`Shape::step`]'s), from the step alone.
///
/// [`Shape::step`]: super::coalesce::Shape::step
#[inline(always)]
fn stepped_word_stride(a0: u64, s: u64, bytes: u32, shift: u32) -> Option<u64> {
    let width_mask = (1u64 << shift) - 1;
    let last_byte = u64::from(bytes.max(1)) - 1;
    // `a0 + 31 * s` does not wrap (the step's).
    let fits = (a0 + 31 * s).checked_add(last_byte).is_some();
    (s & width_mask == 0 && (a0 & width_mask) + last_byte <= width_mask && fits)
        .then_some(s >> shift)
}

/// [`wavefronts_of`] phase by phase.
#[inline(never)]
fn phased_wavefronts(access: &WarpAccess, banks: Banks, run: Option<u64>) -> Wavefronts {
    let phase = lanes_per_phase(access.bytes, banks) as usize;
    if run.is_none() && phase >= WARP && looks_strided(access) {
        // A whole warp in one phase, one word a lane a fixed number of words apart (a tile's
        // column): the closed form `phase_wavefronts` tries first, without the phase loop
        // and the call.
        let shift = banks.width.max(1).trailing_zeros();
        if let Some(k) = word_stride(access, shift) {
            let nbanks = u64::from(banks.banks.clamp(1, 64));
            return Wavefronts {
                wavefronts: strided_wavefronts(k, WARP as u32, nbanks),
                ideal: 1,
            };
        }
    }
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
    super::coalesce::all_zero(odd).then_some(s >> shift)
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

/// Data-pipe passes of a shared-memory compare-and-swap (`atom.shared.cas`: SASS `ATOMS.CAS`) per
/// wavefront of [`atomic_wavefronts`]: a bank reads the word, compares and writes it in two.
/// \[measured\] ubench U on an H100 (the H200's SM; validate/measurements/h200/ubench, atoms.cu):
/// with 1 to 32 lanes on each word, CAS takes 2.0 cycles per lane on the word per SM where ADD and
/// EXCH take 1.0, whether the compare matches or fails, and Nsight Compute's
/// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum` counts two per such lane.
pub const CAS_PASSES: u32 = 2;

/// L1 data-pipe wavefronts of a global or local access: the L1's data array is the shared-memory
/// banks (\[NV\] CUDA-CC §20.4.3, one array for L1 and shared memory), so as for shared memory a
/// wavefront reads one word per bank, and words of different lines in one bank take a wavefront
/// each (a warp reading one word from each of 16 rows 4 KiB apart takes 16). \[measured\] Nsight
/// Compute's `l1tex__data_pipe_lsu_wavefronts` on an H200 equals these plus the missed sectors
/// within 3% for transpose's copy_col, naive_row and naive_col and conv2d's global kernel, 8% for
/// copy_row, and with shared wavefronts added within 3% for transpose_smem
/// (validate/measurements/h200/ubench/bd.txt).
pub fn data_wavefronts(access: &WarpAccess, banks: Banks) -> u32 {
    let shape = crate::memory::coalesce::Shape::of(access.mask, &access.addrs);
    data_wavefronts_of(access, banks, shape.run(access.bytes), shape.step)
}

/// As [`data_wavefronts`], for an access whose contiguous run
/// ([`crate::memory::coalesce::contiguous`]) and step ([`crate::memory::coalesce::Shape::step`])
/// the caller already has: a strided load's in closed form.
#[inline]
pub fn data_wavefronts_of(
    access: &WarpAccess,
    banks: Banks,
    run: Option<u64>,
    step: Option<(u64, u64)>,
) -> u32 {
    wavefronts_of_step(access, banks, run, step).wavefronts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_words_conflict_per_bank_like_shared_memory() {
        // 32 consecutive words: one wavefront.
        let row = WarpAccess::from_fn(4, |l| 4096 + 4 * l);
        assert_eq!(
            data_wavefronts(
                &row,
                Banks {
                    banks: 32,
                    width: 4
                }
            ),
            1
        );
        // Pairs of lanes read two words of 16 rows 4 KiB apart (transpose copy_col): the rows
        // share banks, 16 wavefronts.
        let col = WarpAccess::from_fn(4, |l| (l / 2) * 4096 + 4 * (l % 2));
        assert_eq!(
            data_wavefronts(
                &col,
                Banks {
                    banks: 32,
                    width: 4
                }
            ),
            16
        );
        // float4 per lane, consecutive: 512 bytes, four quarter-warp phases.
        let v4 = WarpAccess::from_fn(16, |l| 16 * l);
        assert_eq!(
            data_wavefronts(
                &v4,
                Banks {
                    banks: 32,
                    width: 4
                }
            ),
            4
        );
    }
    use phase::increasing_wavefronts;

    pub(super) const B4: Banks = Banks {
        banks: 32,
        width: 4,
    };
    pub(super) const B8: Banks = Banks {
        banks: 32,
        width: 8,
    };
    pub(super) const B16: Banks = Banks {
        banks: 16,
        width: 4,
    };
    pub(super) const B64: Banks = Banks {
        banks: 64,
        width: 4,
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
    fn stepped_accesses_match_the_general_path() {
        // Equally spaced lanes (columns, padded columns, runs, broadcasts, steps of part of a
        // word, straddling lanes, near the top), bent ones and partial masks, on every bank
        // geometry: the step's closed form gives what `wavefronts_of` finds.
        let mut x = 41u64;
        let mut rand = move || {
            x = crate::testing::lcg(x);
            x >> 16
        };
        let mut closed = 0;
        for banks in [B4, B8, B16, B64] {
            for bytes in [1u32, 2, 4, 8, 16] {
                for base in [0u64, 0x1000, 0x1002, 0x2004, u64::MAX - 4000, u64::MAX - 20] {
                    for d in [0u64, 1, 2, 4, 8, 12, 16, 32, 48, 128, 132, 136, 256, 4096] {
                        for bend in 0..3 {
                            let mut a = WarpAccess::from_fn(bytes, |l| {
                                base.wrapping_add(d.wrapping_mul(l))
                            });
                            match bend {
                                1 => a.addrs[(rand() % 32) as usize] ^= 4 << (rand() % 6),
                                2 => a.mask = rand() as u32,
                                _ => {}
                            }
                            let shape = crate::memory::coalesce::Shape::of(a.mask, &a.addrs);
                            let run = shape.run(bytes);
                            assert_eq!(
                                wavefronts_of_step(&a, banks, run, shape.step),
                                wavefronts_of(&a, banks, run),
                                "{a:x?} {banks:?}"
                            );
                            if let (None, Some((a0, s))) = (run, shape.step) {
                                let shift = banks.width.trailing_zeros();
                                closed +=
                                    u32::from(stepped_word_stride(a0, s, bytes, shift).is_some());
                            }
                        }
                    }
                }
            }
        }
        assert!(closed > 500, "{closed}");
    }

    #[test]
    fn one_phase_runs() {
        assert!(one_phase_run(0x1000, 4, B4));
        // 8-byte elements take two phases; a misaligned run spans 33 words.
        assert!(!one_phase_run(0x1000, 8, B4));
        assert!(!one_phase_run(0x1002, 4, B4));
        assert!(one_phase_run(0x1004, 4, B8));
        assert!(!one_phase_run(0x1000, 4, B16));
    }

    /// The most distinct words any bank holds among the lanes of `mask`: the definition.
    pub(super) fn reference(access: &WarpAccess, mask: u32, banks: Banks) -> u32 {
        let width = u64::from(banks.width);
        let mut per_bank = vec![std::collections::BTreeSet::new(); banks.banks as usize];
        for l in bits(mask) {
            let a = access.addrs[l as usize];
            for w in a / width..=a.saturating_add(u64::from(access.bytes.max(1)) - 1) / width {
                per_bank[(w % u64::from(banks.banks)) as usize].insert(w);
            }
        }
        per_bank.iter().map(|s| s.len() as u32).max().unwrap_or(0)
    }

    /// Random accesses, mostly structured: 2-D blocks of rows (any row width, pitch, start and
    /// element size, straddling lanes included), their columns, strides, broadcasts, scatter,
    /// under full, cut or random masks.
    pub(super) fn random_accesses(n: usize) -> Vec<WarpAccess> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        (0..n)
            .map(|_| {
                let bytes = [1, 2, 4, 4, 4, 8, 8, 16, 12][(next() % 9) as usize];
                let base = match next() % 4 {
                    0 => next() % 4096,
                    1 => (next() % 1024) * u64::from(bytes),
                    2 => u64::MAX - next() % 512,
                    _ => 0x10_0000 + (next() % 256) * 4,
                };
                let width = [1, 2, 4, 8, 16, 32][(next() % 6) as usize];
                let pitch = match next() % 4 {
                    0 => 4096,
                    1 => (next() % 64) * 4,
                    2 => u64::from(bytes) * width,
                    _ => next() % 8192,
                };
                let elem = match next() % 3 {
                    0 => u64::from(bytes),
                    1 => u64::from(bytes) + next() % 8,
                    _ => next() % 64,
                };
                let kind = next() % 8;
                let addrs = std::array::from_fn(|l| {
                    let l = l as u64;
                    let (x, y) = (l % width, l / width);
                    match kind {
                        0..=3 => base.wrapping_add(y * pitch + x * elem),
                        4 => base.wrapping_add(x * pitch + y * elem),
                        5 => base.wrapping_add(l * elem),
                        6 => base.wrapping_add(next() % 512),
                        _ => base.wrapping_add((next() % 4096) & !3),
                    }
                });
                let mask = match next() % 5 {
                    0 | 1 => u32::MAX,
                    2 => u32::MAX << (next() % 32),
                    3 => {
                        let cut = (next() % 16) as u32;
                        (u32::MAX << cut) & (u32::MAX >> (next() % 16))
                    }
                    _ => next() as u32,
                };
                WarpAccess { mask, addrs, bytes }
            })
            .collect()
    }

    #[test]
    fn whole_accesses_match_the_definition_phase_by_phase() {
        // `wavefronts` (its runs, its closed form for a whole warp's column, the phase loop)
        // against the definition, phase by phase.
        let mut strided = 0;
        for access in random_accesses(50_000) {
            for banks in [B4, B8, B16, B64] {
                let phase = lanes_per_phase(access.bytes, banks) as usize;
                let mut want = Wavefronts::default();
                for start in (0..WARP).step_by(phase) {
                    let mask = access.phase_mask(start, phase);
                    if mask != 0 {
                        want.ideal += 1;
                        want.wavefronts += reference(&access, mask, banks);
                    }
                }
                assert_eq!(wavefronts(&access, banks), want, "{access:?} {banks:?}");
                let shift = banks.width.trailing_zeros();
                strided += usize::from(
                    phase >= WARP
                        && super::super::coalesce::contiguous(&access).is_none()
                        && looks_strided(&access)
                        && word_stride(&access, shift).is_some(),
                );
            }
        }
        // The closed form for columns was taken often enough to be tested.
        assert!(strided > 1000, "{strided}");
    }

    #[test]
    fn inactive_lanes_are_ignored() {
        let mut a = WarpAccess::from_fn(4, |l| 4 * (l * 32));
        a.mask = 0b111;
        assert_eq!(wavefronts(&a, B4).wavefronts, 3);
    }
}

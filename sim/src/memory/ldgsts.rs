//! The shared-memory side of LDGSTS (`cp.async`): its wavefronts and bank conflicts as Nsight
//! Compute counts them (`smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum`,
//! `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum`).
//!
//! \[measured\] ubench Q (`validate/measurements/h200/ubench/ldgsts.cu`, run on an H100, the
//! H200's SM; `h100_2026-12-07/ldgsts_ncu.csv`): one warp, one LDGSTS of 4, 8 or 16 bytes a lane,
//! shared and global strides of 0 to 128 elements. NVIDIA documents none of this.
//!
//! - `.ca` (LDGSTS.ACCESS): the data passes through L1's data array, whose banks are shared
//!   memory's: the instruction takes as many wavefronts as the most lanes on one bank of either
//!   side, its global bytes (words of different lines in one bank conflict, and lanes on one
//!   global word do too: no broadcast) or its shared ones (in phases, as an STS, but lanes
//!   writing one word do not merge). A warp reading one word from each of 32 lines 128 bytes
//!   apart takes 32 wavefronts however its shared addresses fall; two half-warps copying 64
//!   bytes from rows 192 bytes apart take 1 (their words fall in complementary banks), from rows
//!   128 or 160 apart 2. Lanes that read nothing (`src-size` 0) write in wavefronts of their own
//!   by the shared rule. tests/fixtures/tensor's cp_async GEMM: 192 `.ca` wavefronts and 64
//!   conflicts by this rule, 190 and 63 measured.
//!   The conflicts are the wavefronts beyond the larger of the access's phases (1, 2, 4 for 4-,
//!   8-, 16-byte lanes) and a quarter of its global lines, rounded up: 32 wavefronts over 32 lines
//!   count 24 conflicts.
//! - `.cg` (LDGSTS.BYPASS): the data comes from L2 without L1's line buffer: a wavefront writes
//!   the lanes of one global line whose shared address lies at one offset from the global one
//!   (modulo 128 bytes), by the same bank rule; so a contiguous copy takes a wavefront per line
//!   and a copy that spreads or packs 16-byte pieces one per lane. Of several lanes writing one
//!   shared address one is kept. No wavefront of a
//!   bypassing LDGSTS that reads counts as a conflict (one that only writes zeros counts them as
//!   `.ca` does). Not matched: a 48-byte shared stride over a 16-byte
//!   global one (24 measured, 32 by this rule) and 16 lanes of a contiguous copy (3 against 2).

use super::shared::{atomic_wavefronts, lanes_per_phase, Banks, Wavefronts};
use super::{WarpAccess, WARP};

/// Wavefronts of one LDGSTS: `dst` its lanes' shared addresses and bytes per lane, `src` their
/// global addresses, `reads` the lanes that read global memory (`src-size` above 0), `bypass` for
/// `.cg`. Returns the wavefronts and the ideal count (conflicts = the difference).
pub fn ldgsts_wavefronts(
    dst: &WarpAccess,
    src: &[u64; WARP],
    reads: u32,
    bypass: bool,
    banks: Banks,
) -> Wavefronts {
    let reads = reads & dst.mask;
    let fills = dst.mask & !reads;
    let mut reads = reads;
    if bypass {
        // Of several lanes writing one shared address, one is kept (the last).
        let mut seen: Vec<u64> = Vec::new();
        let all = reads;
        for l in (0..WARP).rev().filter(|&l| all >> l & 1 == 1) {
            if seen.contains(&dst.addrs[l]) {
                reads &= !(1 << l);
            } else {
                seen.push(dst.addrs[l]);
            }
        }
    }
    let reading = || (0..WARP).filter(move |&l| reads >> l & 1 == 1);
    // Reading lanes by global line (in lane order; bypassing, by line and shift within a
    // line), then the lanes that only write zeros.
    let mut groups: Vec<((u64, u64), u32)> = Vec::new();
    for l in reading() {
        let shift = if bypass {
            dst.addrs[l].wrapping_sub(src[l]) % 128
        } else {
            0
        };
        let key = (src[l] / 128, shift);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => *m |= 1 << l,
            None => groups.push((key, 1 << l)),
        }
    }
    let mut lines: Vec<u64> = groups.iter().map(|((line, _), _)| *line).collect();
    lines.sort_unstable();
    lines.dedup();
    let mut wavefronts: u32 = if bypass {
        groups
            .iter()
            .map(|&(_, m)| {
                let bank = atomic_wavefronts(&masked(dst, m), banks).wavefronts;
                bank.max(most_on_one_address(src, m))
            })
            .sum()
    } else if reads == 0 {
        0
    } else {
        let shared = atomic_wavefronts(&masked(dst, reads), banks).wavefronts;
        shared.max(lanes_on_one_bank(src, reads, dst.bytes, banks))
    };
    if fills != 0 {
        wavefronts += atomic_wavefronts(&masked(dst, fills), banks).wavefronts;
    }
    let phase = lanes_per_phase(dst.bytes, banks);
    let phases = (0..32u32.div_ceil(phase))
        .filter(|p| dst.mask >> (p * phase) & phase_mask(phase) != 0)
        .count() as u32;
    let ideal = phases.max((lines.len() as u32).div_ceil(4)).min(wavefronts);
    if bypass && reads != 0 {
        return Wavefronts {
            wavefronts,
            ideal: wavefronts,
        };
    }
    Wavefronts { wavefronts, ideal }
}

fn masked(access: &WarpAccess, mask: u32) -> WarpAccess {
    WarpAccess {
        mask,
        addrs: access.addrs,
        bytes: access.bytes,
    }
}

fn phase_mask(phase: u32) -> u32 {
    if phase >= 32 {
        u32::MAX
    } else {
        (1 << phase) - 1
    }
}

/// The most lanes of `mask` whose global bytes (`bytes` from `src`) lie in one bank of L1's data
/// array, each lane counted (no broadcast).
fn lanes_on_one_bank(src: &[u64; WARP], mask: u32, bytes: u32, banks: Banks) -> u32 {
    let (width, n) = (u64::from(banks.width.max(1)), u64::from(banks.banks.max(1)));
    let mut per = vec![0u32; n as usize];
    for l in (0..WARP).filter(|&l| mask >> l & 1 == 1) {
        let last = (src[l] + u64::from(bytes.max(1)) - 1) / width;
        for w in src[l] / width..=last {
            per[(w % n) as usize] += 1;
        }
    }
    per.into_iter().max().unwrap_or(0)
}

/// The most lanes of `mask` reading one global address.
fn most_on_one_address(src: &[u64; WARP], mask: u32) -> u32 {
    let mut a: Vec<u64> = (0..WARP)
        .filter(|&l| mask >> l & 1 == 1)
        .map(|l| src[l])
        .collect();
    a.sort_unstable();
    a.chunk_by(|x, y| x == y)
        .map(|c| c.len() as u32)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Banks = Banks {
        banks: 32,
        width: 4,
    };

    /// One launch of ubench Q: `size`-byte lanes, shared element stride `s`, global `g`.
    fn q(size: u32, bypass: bool, s: u64, g: u64, lanes: u32, zfill: bool) -> (u32, u32) {
        let mask = if lanes == 32 {
            u32::MAX
        } else {
            (1 << lanes) - 1
        };
        let dst = WarpAccess {
            mask,
            addrs: std::array::from_fn(|l| l as u64 * s * u64::from(size)),
            bytes: size,
        };
        let src = std::array::from_fn(|l| 1 << 30 | l as u64 * g * u64::from(size));
        let w = ldgsts_wavefronts(&dst, &src, if zfill { 0 } else { mask }, bypass, B);
        (w.wavefronts, w.conflicts())
    }

    #[test]
    fn cached_ldgsts_takes_a_wavefront_per_global_line_at_least() {
        // (wavefronts, conflicts) measured on the H100 (ubench Q, ldgsts_ncu.csv).
        assert_eq!(q(4, false, 1, 1, 32, false), (1, 0));
        assert_eq!(q(4, false, 1, 2, 32, false), (2, 1));
        assert_eq!(q(4, false, 1, 8, 32, false), (8, 6));
        assert_eq!(q(4, false, 1, 32, 32, false), (32, 24));
        assert_eq!(q(4, false, 4, 8, 32, false), (8, 6));
        assert_eq!(q(4, false, 8, 8, 32, false), (8, 6));
        assert_eq!(q(4, false, 32, 1, 32, false), (32, 31));
        assert_eq!(q(4, false, 32, 8, 32, false), (32, 30));
        assert_eq!(q(4, false, 32, 32, 32, false), (32, 24));
        assert_eq!(q(8, false, 2, 1, 32, false), (4, 2));
        assert_eq!(q(8, false, 4, 8, 32, false), (16, 12));
        assert_eq!(q(8, false, 32, 8, 32, false), (32, 28));
        assert_eq!(q(16, false, 1, 1, 32, false), (4, 0));
        assert_eq!(q(16, false, 3, 1, 32, false), (4, 0));
        assert_eq!(q(16, false, 4, 1, 32, false), (16, 12));
        assert_eq!(q(16, false, 8, 8, 32, false), (32, 24));
        assert_eq!(q(16, false, 1, 1, 16, false), (2, 0));
        // Zero fill: only the shared side.
        assert_eq!(q(4, false, 2, 1, 32, true), (2, 1));
        assert_eq!(q(16, false, 2, 1, 32, true), (8, 4));
    }

    #[test]
    fn row_pairs_conflict_where_their_words_share_banks() {
        // ubench Q's `rows`: half-warps copy 64 bytes from two rows `pitch` apart into 128
        // contiguous shared bytes; (wavefronts, conflicts) measured.
        for (pitch, off, want) in [
            (64, 0, (1, 0)),
            (128, 0, (2, 1)),
            (128, 96, (2, 1)),
            (160, 64, (2, 1)),
            (192, 0, (1, 0)),
            (192, 96, (1, 0)),
            (4096, 0, (2, 1)),
        ] {
            let dst = WarpAccess::from_fn(4, |l| 4 * l);
            let src = std::array::from_fn(|l| {
                (1 << 30) + (l as u64 / 16) * pitch + off + 4 * (l as u64 % 16)
            });
            let w = ldgsts_wavefronts(&dst, &src, u32::MAX, false, B);
            assert_eq!(
                (w.wavefronts, w.conflicts()),
                want,
                "pitch {pitch} off {off}"
            );
        }
    }

    #[test]
    fn lanes_on_one_address_take_a_wavefront_each() {
        assert_eq!(q(4, false, 0, 1, 32, false), (32, 31));
        assert_eq!(q(4, false, 1, 0, 32, false), (32, 31));
        assert_eq!(q(8, false, 0, 1, 32, false), (32, 30));
        assert_eq!(q(16, false, 0, 1, 32, false), (32, 28));
    }

    #[test]
    fn bypassing_ldgsts_splits_unless_shared_follows_global() {
        assert_eq!(q(16, true, 1, 1, 32, false), (4, 0));
        assert_eq!(q(16, true, 2, 2, 32, false), (8, 0));
        assert_eq!(q(16, true, 1, 2, 32, false), (32, 0));
        assert_eq!(q(16, true, 2, 1, 32, false), (32, 0));
        assert_eq!(q(16, true, 8, 32, 32, false), (32, 0));
        assert_eq!(q(16, true, 1, 0, 32, false), (32, 0));
        // Every lane onto one shared address: one is kept.
        assert_eq!(q(16, true, 0, 1, 32, false), (1, 0));
        assert_eq!(q(16, true, 2, 1, 32, true), (8, 4));
    }
}

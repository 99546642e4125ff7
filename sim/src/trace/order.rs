//! The order of a trace's global and local accesses: the functional pass's, turn by turn
//! ([`Probe`]), and how far the order the timing replay issues them in agrees with it
//! ([`Agreement`]). The caches see the functional order and the replay prices the other: where
//! the two differ, the hit counts belong to an order no replayed warp issued.

use serde::Serialize;
use std::collections::HashMap;

/// The functional order of an SM's global and local accesses, turn by turn: per turn, the
/// block's index in the grid and how many accesses its log holds after the turn
/// ([`super::BlockLog::mems`]), so the turn issued those from the previous turn's count
/// of that block on. At most [`Probe::MAX_TURNS`] turns are kept.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// (block, accesses of its log after the turn), in the order the turns ran.
    pub turns: Vec<(u64, u32)>,
}

impl Probe {
    /// The turns a probe keeps (16 bytes each).
    pub const MAX_TURNS: usize = 1 << 22;

    /// A turn of a warp of block `block` took the block's log from `before` to `after` accesses.
    pub fn turn(&mut self, block: u64, before: usize, after: usize) {
        // Turns without a global or local access add nothing to the order.
        if after > before && self.turns.len() < Self::MAX_TURNS {
            self.turns.push((block, after as u32));
        }
    }
}

/// Agreement of two orders of the same accesses, over the pairs of accesses of one wave:
/// Kendall's tau (`(concordant - discordant) / pairs`, ties in the replay's cycle counting
/// neither), over all pairs of each wave and over the pairs at most [`Agreement::NEAR`] apart
/// in the functional order (the accesses that share the caches' contents: what decides hits).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Agreement {
    /// Accesses compared (those of SM 0 the replay issued).
    pub accesses: u64,
    /// Pairs of accesses of one wave.
    pub pairs: u64,
    /// Kendall's tau over them, -1 to 1.
    pub tau: f64,
    /// Pairs at most [`Agreement::NEAR`] apart in the functional order.
    pub near_pairs: u64,
    /// Kendall's tau over them.
    pub near_tau: f64,
}

impl Agreement {
    /// How far apart in the functional order two accesses may be to count as near: about one
    /// access of each of 64 warps (an SM's most) in four iterations of a loop.
    pub const NEAR: usize = 256;
}

/// The agreement of the functional order `probe` (SM 0's turns) with the replay's issue cycles
/// `issued` ((wave, block, access index in the block's log, cycle), [`crate::timing::SmWork`]).
/// Accesses the replay did not issue (waves a sampled launch skipped) are left out. `None` when
/// fewer than two accesses remain.
pub fn agreement(probe: &Probe, issued: &[(u32, u64, u32, u32)]) -> Option<Agreement> {
    let cycle: HashMap<(u64, u32), (u32, u32)> = issued
        .iter()
        .map(|&(wave, block, i, c)| ((block, i), (wave, c)))
        .collect();
    // The functional order: turn after turn, each turn's accesses in order.
    let mut last: HashMap<u64, u32> = HashMap::new();
    let mut order: Vec<(u32, u32)> = Vec::with_capacity(issued.len());
    for &(block, end) in &probe.turns {
        let start = last.insert(block, end).unwrap_or(0);
        order.extend((start..end).filter_map(|i| cycle.get(&(block, i)).copied()));
    }
    if order.len() < 2 {
        return None;
    }
    let (mut pairs, mut score) = (0u64, 0i64);
    let (mut near_pairs, mut near_score) = (0u64, 0i64);
    for wave in order.chunk_by(|a, b| a.0 == b.0) {
        let cycles: Vec<u32> = wave.iter().map(|&(_, c)| c).collect();
        let n = cycles.len() as u64;
        pairs += n * (n - 1) / 2;
        score += concordance(&cycles);
        for (i, &a) in cycles.iter().enumerate() {
            for &b in &cycles[i + 1..cycles.len().min(i + 1 + Agreement::NEAR)] {
                near_pairs += 1;
                near_score += i64::from(a < b) - i64::from(a > b);
            }
        }
    }
    let tau = |s: i64, p: u64| if p == 0 { 1.0 } else { s as f64 / p as f64 };
    Some(Agreement {
        accesses: order.len() as u64,
        pairs,
        tau: tau(score, pairs),
        near_pairs,
        near_tau: tau(near_score, near_pairs),
    })
}

/// Concordant minus discordant pairs of `cycles` against their positions (ties count neither),
/// by a merge sort that counts the pairs it finds out of order, and the tied pairs from the
/// sorted runs.
fn concordance(cycles: &[u32]) -> i64 {
    let n = cycles.len() as i64;
    let mut v = cycles.to_vec();
    let mut buf = vec![0; v.len()];
    let discordant = inversions(&mut v, &mut buf) as i64;
    let ties: i64 = v
        .chunk_by(|a, b| a == b)
        .map(|r| (r.len() as i64) * (r.len() as i64 - 1) / 2)
        .sum();
    n * (n - 1) / 2 - ties - 2 * discordant
}

/// Sorts `v` and returns the pairs `i < j` with `v[i] > v[j]` it had.
fn inversions(v: &mut [u32], buf: &mut [u32]) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let (a, b) = buf.split_at_mut(mid);
    let mut count = inversions(&mut v[..mid], a) + inversions(&mut v[mid..], b);
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < mid && j < n {
        if v[j] < v[i] {
            count += (mid - i) as u64;
            buf[k] = v[j];
            j += 1;
        } else {
            buf[k] = v[i];
            i += 1;
        }
        k += 1;
    }
    buf[k..k + mid - i].copy_from_slice(&v[i..mid]);
    k += mid - i;
    buf[k..k + n - j].copy_from_slice(&v[j..n]);
    v.copy_from_slice(&buf[..n]);
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concordance_is_kendall_s_count_of_ordered_minus_reversed_pairs() {
        assert_eq!(concordance(&[1, 2, 3, 4]), 6);
        assert_eq!(concordance(&[4, 3, 2, 1]), -6);
        // (3,1) (3,2) reversed, (1,2) ordered; the tie (5,5) counts neither; 5s after all.
        assert_eq!(concordance(&[3, 1, 2, 5, 5]), 1 - 2 + 6);
        let v: Vec<u32> = (0..200).map(|i| (i * 7919 % 211) as u32).collect();
        let brute: i64 = (0..v.len())
            .flat_map(|i| (i + 1..v.len()).map(move |j| (i, j)))
            .map(|(i, j)| i64::from(v[i] < v[j]) - i64::from(v[i] > v[j]))
            .sum();
        assert_eq!(concordance(&v), brute);
    }

    #[test]
    fn the_functional_order_is_turn_by_turn_and_waves_are_compared_apart() {
        // Block 0's turns issued accesses 0..2 then 2..3, block 1's 0..1 in between; the
        // replay issued block 1's access first, then block 0's in order.
        let probe = Probe {
            turns: vec![(0, 2), (1, 1), (0, 3)],
        };
        let issued = [(0, 0, 0, 10), (0, 0, 1, 11), (0, 1, 0, 5), (0, 0, 2, 12)];
        let a = agreement(&probe, &issued).unwrap();
        // Order (0,0) (0,1) (1,0) (0,2) at cycles 10 11 5 12: 4 ordered pairs, 2 reversed.
        assert_eq!((a.accesses, a.pairs), (4, 6));
        assert!((a.tau - 2.0 / 6.0).abs() < 1e-12);
        assert_eq!(a.near_tau, a.tau);
        // The same accesses in two waves: only pairs within a wave count.
        let issued = [(0, 0, 0, 10), (0, 0, 1, 11), (1, 1, 0, 5), (1, 0, 2, 12)];
        let a = agreement(&probe, &issued).unwrap();
        // Functional order (w0,10) (w0,11) (w1,5) (w1,12): one ordered pair in each wave.
        assert_eq!((a.accesses, a.pairs, a.tau), (4, 2, 1.0));
    }
}

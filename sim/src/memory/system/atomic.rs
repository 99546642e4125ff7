//! Global atomics and reductions in the hierarchy: performed in L2.

use super::{
    l2_sectors_of, GlobalOutcome, L1Outcome, L2Model, L2Outcome, MemorySystem, Params, SmCaches,
};
use crate::memory::{coalesce, Level, WarpAccess};

/// One lane's global compare-and-swap ([`crate::trace::BlockLog::cas`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CasLane {
    /// Byte address of the word.
    pub word: u64,
    /// The thread in its block, `warp * 32 + lane`.
    pub thread: u32,
    /// Its compare matched: it swapped.
    pub won: bool,
}

impl SmCaches {
    /// L1 part of a global `atom`/`red`: L1 keeps no copy of a sector an atomic changes (a line
    /// it held is invalidated) and never hits; every sector goes on to L2.
    pub fn atomic(&mut self, p: &Params, access: &WarpAccess) -> L1Outcome {
        let sectors = coalesce::sectors(access, p.l1_sector_bytes);
        for &s in &sectors {
            self.l1.invalidate(s);
        }
        L1Outcome {
            sectors: sectors.len() as u32,
            lines: coalesce::lines(&sectors, p.l1_line_bytes) as u32,
            l1_hits: 0,
            l1_misses: sectors.len() as u32,
            to_l2: sectors,
        }
    }
}

impl L2Model {
    /// Adds the L2 atomic unit's time for warp requests to lines: `lines` holds (line, lanes on
    /// its busiest word) per request ([`crate::trace::BlockLog::atomic_words`]), `cycles` turns
    /// one into cycles (`timing::Costs::atomic_line`).
    pub fn count_atomics(&mut self, lines: &[(u64, u32)], cycles: impl Fn(u32) -> f64) {
        for &(line, most) in lines {
            let unit = atomic_unit(line, self.p.atomic_units);
            *self.atomic_ops.entry(unit).or_default() += cycles(most);
        }
    }

    /// Notes the global CAS lanes of block `block` of wave `wave` ([`crate::trace::BlockLog::cas`])
    /// for [`L2Model::take_busiest_atomic_line`]'s model of CAS-loop contention.
    pub fn count_cas(&mut self, wave: usize, block: u64, lanes: &[CasLane]) {
        for l in lanes {
            let e = self.cas.entry((wave, l.word)).or_default();
            e.0 += 1;
            if l.won {
                e.1 += 1;
                self.cas_winners.insert((wave, l.word, block, l.thread));
            }
        }
    }

    /// The atomic bound of the launch so far, in cycles, and forgets it (one launch's): the most
    /// cycles one L2 atomic unit spent ([`atomic_unit`]), or the longest chain of compare-and-swap
    /// rounds on one word ([`cas_contention`]), whichever is more. `t_op` is the unit's cycles per
    /// operation on one word ([`crate::timing::Costs::atomic_word`]), `round` the cycles from a
    /// CAS's issue to its value's return ([`crate::timing::Costs::global`] of L2).
    ///
    /// The functional execution runs an SM's warps in turns and the SMs one after another, so a
    /// CAS loop meets only the contention of its own warp and turn there; on the GPU every
    /// resident contender retries every round. Per word and wave, the operations the model adds
    /// beyond those executed are charged to the word's line as passes (words of one sector in
    /// parallel, as [`L2Model::count_atomics`]).
    pub fn take_busiest_atomic_line(&mut self, t_op: f64, round: f64) -> f64 {
        let mut winners: rustc_hash::FxHashMap<(usize, u64), u64> = Default::default();
        for &(wave, word, _, _) in &self.cas_winners {
            *winners.entry((wave, word)).or_default() += 1;
        }
        // Per (line, sector), the most operations added on one of its words; per word, the
        // cycles of its chains over the waves.
        let mut extra: rustc_hash::FxHashMap<(u64, u64), u64> = Default::default();
        let mut chains: rustc_hash::FxHashMap<u64, f64> = Default::default();
        for (&(wave, word), &(executed, wins)) in &self.cas {
            let k = winners.get(&(wave, word)).copied().unwrap_or(0);
            let (ops, cycles) = cas_contention(wins, k, t_op, round);
            let e = extra.entry((word / 128, word / 32)).or_default();
            *e = (*e).max(ops.saturating_sub(executed));
            *chains.entry(word).or_default() += cycles;
        }
        for ((line, _), ops) in extra {
            let unit = atomic_unit(line, self.p.atomic_units);
            *self.atomic_ops.entry(unit).or_default() += ops as f64 * t_op;
        }
        let chain = chains.values().copied().fold(0.0, f64::max);
        let most = self.atomic_ops.values().copied().fold(0.0, f64::max);
        self.atomic_ops.clear();
        self.cas.clear();
        self.cas_winners.clear();
        most.max(chain)
    }

    /// The read-modify-write of one L1 sector of an atomic in L2: a missing sector is fetched
    /// from DRAM first, then written, so the line becomes dirty. Lanes updating the same address
    /// are one sector access (the L2 atomic unit serializes them: [`L2Model::count_atomics`],
    /// timed by `timing::estimate`).
    /// Returns where the old value came from.
    pub fn atomic(&mut self, sector: u64, t: &mut L2Outcome) -> Level {
        let level = self.read(sector, t);
        let sb = u64::from(self.p.l2_sector_bytes);
        for l2s in l2_sectors_of(sector, self.p.l1_sector_bytes, self.p.l2_sector_bytes) {
            let r = self.l2.access(l2s, true, true);
            t.dram_write += u64::from(r.writeback_sectors) * sb;
        }
        level
    }
}

/// The L2 atomic unit that performs the atomics on 128-byte line `line` (its address / 128), of
/// `units` (0: the line's own). \[microbenchmark\] `validate/measurements/h200/ubench`, P (on
/// an H100, the H200's GH100 L2): the half-warps of a warp adding to words of two lines take turns
/// where the lines share a unit. Line 0 shares with lines 1, 4 and 5, and with 13 other such
/// groups of four among the first 4096 lines; so do the lines of the groups measured elsewhere
/// (7, 1000, 24581, 300001): the lines of an aligned 8-line block form two sets of four
/// (address bits 7 and 9 pick no unit, bit 8 does), and the sets are spread over the units by a
/// hash of the address (not XOR-linear over the lines measured; set 0's partners are sets 94,
/// 137, 215, ..., 1019, about one per 73), which this model replaces by a rotation per window.
pub fn atomic_unit(line: u64, units: u32) -> u64 {
    if units == 0 {
        return line;
    }
    let (set, units) = ((line >> 3) << 1 | (line >> 1 & 1), u64::from(units));
    // Each window of `units` consecutive sets takes every unit once, rotated by a fixed mix of
    // the window's number (splitmix64's finalizer): nearby sets never share a unit (32
    // consecutive lines, 8 sets, are about 8 times as fast as one: ubench J), far ones by chance.
    let mut z = (set / units).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (set % units + (z ^ (z >> 31)) % units) % units
}

/// L2 atomic-unit operations and serial cycles of `wins` successful compare-and-swaps on one
/// word by `winners` distinct threads resident together (a CAS loop: read, compute, CAS, retry
/// with the returned value until it matched). In each round every contender that holds the
/// word's current value issues its CAS; the first to reach the unit matches, the others fail
/// and retry. So while all `winners` contend (the first `wins - winners` rounds, where threads
/// win more than once) a round costs `winners` operations, and the last `winners` rounds
/// `winners, winners - 1, ..., 1`. A round takes at least `round` cycles (the losers retry only
/// once their failed CAS has returned the new value) and at least its operations at `t_op`
/// cycles each (the unit performs one word's operations one after another:
/// \[microbenchmark\] `validate/measurements/h200/ubench` J). Returns (operations, cycles).
pub fn cas_contention(wins: u64, winners: u64, t_op: f64, round: f64) -> (u64, f64) {
    let k = winners.min(wins);
    let full = wins - k;
    let ops = full * k + k * (k + 1) / 2;
    // Rounds of j operations for j = 1..=k, each max(round, j * t_op): the first m at `round`.
    let m = if t_op > 0.0 {
        ((round / t_op).floor() as u64).min(k)
    } else {
        k
    };
    let tail = m as f64 * round + t_op * (k * (k + 1) / 2 - m * (m + 1) / 2) as f64;
    let cycles = full as f64 * round.max(k as f64 * t_op) + tail;
    (ops, cycles)
}

impl MemorySystem {
    /// A global `atom`/`red` by SM `sm`: one request whose sectors go to L2, where the
    /// read-modify-write happens.
    pub fn atomic(&mut self, sm: usize, access: &WarpAccess) -> GlobalOutcome {
        let l1 = self.sms[sm].atomic(&self.params, access);
        let mut t = L2Outcome::default();
        let level = l1
            .to_l2
            .iter()
            .map(|&s| self.l2.atomic(s, &mut t))
            .max()
            .unwrap_or(Level::L2);
        GlobalOutcome::new(&l1, &t, Some(level))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::GpuConfig;
    use crate::memory::system::MemorySystem;
    use crate::memory::WarpAccess;

    #[test]
    fn lines_share_units_in_sets_of_four_per_eight_line_block() {
        use super::atomic_unit;
        // Measured (ubench P): line 0 with 1, 4, 5; 1000 with 1001, 1004, 1005; 300001 with
        // 300000, 300004, 300005.
        for (a, b) in [
            (0, 1),
            (0, 4),
            (0, 5),
            (1000, 1001),
            (1000, 1005),
            (300001, 300004),
        ] {
            assert_eq!(atomic_unit(a, 73), atomic_unit(b, 73), "{a} {b}");
        }
        // Lines 2 and 3 of a block are the other set.
        assert_ne!(atomic_unit(0, 4096), atomic_unit(2, 4096));
        // Without units, every line its own.
        assert_eq!((atomic_unit(0, 0), atomic_unit(1, 0)), (0, 1));
        // 73 consecutive sets (from set 0: lines 0 to 291) take the 73 units once each.
        let units: std::collections::BTreeSet<u64> =
            (0..292u64).map(|l| atomic_unit(l, 73)).collect();
        assert_eq!(units.len(), 73);
    }

    #[test]
    fn a_cas_loop_of_k_contenders_takes_k_rounds_of_k_to_1_operations() {
        use super::cas_contention;
        // 512 threads on one word, each winning once: 512 + 511 + ... + 1 operations.
        assert_eq!(cas_contention(512, 512, 1.5, 300.0).0, 512 * 513 / 2);
        // Rounds of 1..=200 operations at 1.5 cycles: those up to 200 at 300 cycles each.
        assert_eq!(cas_contention(200, 200, 1.5, 300.0).1, 200.0 * 300.0);
        // 32 lanes of one warp on their own word: 528 operations, 32 rounds of >= 300 cycles.
        assert_eq!(cas_contention(32, 32, 1.5, 300.0), (528, 32.0 * 300.0));
        // 4 threads winning 3 times each: 8 rounds of 4, then 4, 3, 2, 1.
        assert_eq!(
            cas_contention(12, 4, 100.0, 1.0),
            (8 * 4 + 10, 8.0 * 400.0 + 1000.0)
        );
        // No contention: one operation, one round.
        assert_eq!(cas_contention(1, 1, 1.5, 300.0), (1, 300.0));
        assert_eq!(cas_contention(0, 0, 1.5, 300.0), (0, 0.0));
    }

    #[test]
    fn an_atomic_reads_l2_once_per_sector_then_hits() {
        let cfg = GpuConfig::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/h200.toml"
        )))
        .expect("config");
        let mut m = MemorySystem::new(&cfg);
        // 32 lanes on one word: one sector.
        let same = WarpAccess::from_fn(4, |_| 0x10_0000);
        let first = m.atomic(0, &same);
        assert_eq!((first.sectors, first.l2_sectors, first.l2_hits), (1, 1, 0));
        let again = m.atomic(1, &same);
        assert_eq!(
            (again.l2_sectors, again.l2_hits, again.dram_read_bytes),
            (1, 1, 0)
        );
        // A coalesced warp of 4-byte atomics: 4 sectors.
        let row = WarpAccess::from_fn(4, |l| 0x20_0000 + 4 * l);
        assert_eq!(m.atomic(0, &row).sectors, 4);
    }
}

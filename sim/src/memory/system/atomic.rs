//! Global atomics and reductions in the hierarchy: performed in L2.

use super::{
    l2_sectors_of, GlobalOutcome, L1Outcome, L2Model, L2Outcome, MemorySystem, Params, SmCaches,
};
use crate::memory::{coalesce, Level, WarpAccess};

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
            *self.atomic_ops.entry(line).or_default() += cycles(most);
        }
    }

    /// The most cycles the atomic unit spent on one line since the last call, and forgets them
    /// (one launch's).
    pub fn take_busiest_atomic_line(&mut self) -> f64 {
        let most = self.atomic_ops.values().copied().fold(0.0, f64::max);
        self.atomic_ops.clear();
        most
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

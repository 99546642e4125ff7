//! Global atomics and reductions in the hierarchy: performed in L2.

use super::{l2_sectors_of, GlobalOutcome, L2Traffic, MemorySystem};
use crate::memory::{coalesce, Level, WarpAccess};

impl MemorySystem {
    /// A global `atom`/`red` by SM `sm`: one request whose sectors go to L2, where the
    /// read-modify-write happens (a missing sector is fetched from DRAM first, then written, so the
    /// line becomes dirty). L1 keeps no copy of a sector an atomic changed: its lookups never hit,
    /// and a line it held is invalidated. Lanes updating the same address are one sector access
    /// (the L2 atomic unit serializes them; that time is not modelled).
    pub fn atomic(&mut self, sm: usize, access: &WarpAccess) -> GlobalOutcome {
        let sectors = coalesce::sectors(access, self.l1_sector_bytes);
        let mut o = GlobalOutcome {
            sectors: sectors.len() as u32,
            lines: coalesce::lines(&sectors, self.l1_line_bytes) as u32,
            ..Default::default()
        };
        let mut level = Level::L2;
        let mut t = L2Traffic::default();
        for &s in &sectors {
            self.l1[sm].invalidate(s);
            o.l1_misses += 1;
            level = level.max(self.l2_read(s, &mut t));
            for l2s in l2_sectors_of(s, self.l1_sector_bytes, self.l2_sector_bytes) {
                let r = self.l2.access(l2s, true, true);
                t.dram_write += u64::from(r.writeback_sectors) * u64::from(self.l2_sector_bytes);
            }
        }
        (
            o.l2_sectors,
            o.l2_hits,
            o.dram_read_bytes,
            o.dram_write_bytes,
        ) = (t.sectors, t.hits, t.dram_read, t.dram_write);
        o.level = Some(level);
        o
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

//! The L2 shared by every SM, and DRAM behind it ([`L2Model`]): reads and writes of sectors and
//! of lines, with the traffic of one request ([`L2Outcome`], [`LineCounts`]).

use super::lines::L2Lines;
use super::{l2_sectors_of, line_runs, Params};
use crate::memory::cache::{LineOutcome, SectorCache};
use crate::memory::Level;

/// The L2 traffic of one warp-level request, as [`L2Model`] reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct L2Outcome {
    /// L2 sectors looked up.
    pub sectors: u32,
    /// Of those, hits.
    pub hits: u32,
    /// Bytes read from DRAM.
    pub dram_read: u64,
    /// Bytes written to DRAM (dirty evictions).
    pub dram_write: u64,
    /// `fill_bytes` blocks this request fetched from DRAM: inline up to the most sectors one
    /// warp access sends ([`coalesce::Sectors`]), so a scattered load does not allocate.
    ///
    /// [`coalesce::Sectors`]: crate::memory::coalesce::Sectors
    fetched: smallvec::SmallVec<[u64; 64]>,
    /// The largest of them (0 when none): a block above it was not fetched, so ascending
    /// requests (a load's sectors) never scan the list.
    fetched_max: u64,
}

impl L2Outcome {
    /// Whether this request already fetched `block`.
    #[inline]
    fn was_fetched(&self, block: u64) -> bool {
        block <= self.fetched_max && self.fetched.contains(&block)
    }

    /// Counts the read of the `n` sectors `mask` of the line at byte `base` whose lookup found
    /// `r` (sectors of `sb` bytes, each its own DRAM fill); the farthest level they came from.
    #[inline(always)]
    fn add_line(&mut self, base: u64, mask: u32, n: u32, r: LineOutcome, sb: u64) -> Level {
        let mut c = LineCounts::default();
        let mut missed = c.add(mask, n, r);
        self.add_counts(c, sb);
        if missed == 0 {
            return Level::L2;
        }
        while missed != 0 {
            self.note_fetched(base + u64::from(missed.trailing_zeros()) * sb);
            missed &= missed - 1;
        }
        Level::Dram
    }

    /// Adds the counts of lines read ([`LineCounts`]), sectors of `sb` bytes, each missed one its
    /// own DRAM fill.
    #[inline(always)]
    fn add_counts(&mut self, c: LineCounts, sb: u64) {
        self.sectors += c.sectors;
        self.hits += c.hits;
        self.dram_read += u64::from(c.missed) * sb;
        self.dram_write += u64::from(c.written) * sb;
    }

    fn note_fetched(&mut self, block: u64) {
        self.fetched_max = self.fetched_max.max(block);
        self.fetched.push(block);
    }
}

/// The sector counts of lines read or written, in sectors: what `L2Outcome::add_line` adds for
/// one line, and what [`L2Lines`] sums over a request (in registers) for its caller to add once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Sectors looked up.
    pub sectors: u32,
    /// Of those, hits (a write's sectors all count as hits).
    pub hits: u32,
    /// Sectors read that missed, each its own DRAM fill.
    pub missed: u32,
    /// Dirty sectors of evicted lines, written back to DRAM.
    pub written: u32,
}

impl LineCounts {
    /// Counts the read of the `n` sectors `mask` of a line whose lookup found `r`; returns the
    /// sectors of `mask` it missed.
    #[inline(always)]
    fn add(&mut self, mask: u32, n: u32, r: LineOutcome) -> u32 {
        let missed = mask & !r.hits;
        self.sectors += n;
        self.hits += r.hits.count_ones();
        self.missed += missed.count_ones();
        self.written += r.writeback_sectors;
        missed
    }
}

/// The L2 shared by every SM, and DRAM behind it.
#[derive(Debug, Clone)]
pub struct L2Model {
    pub(super) l2: SectorCache,
    pub(super) p: Params,
    /// Cycles of the L2 atomic unit per 128-byte line in the launch so far
    /// ([`L2Model::count_atomics`]).
    pub(super) atomic_ops: rustc_hash::FxHashMap<u64, f64>,
    /// Global CAS lanes per (wave, word address) in the launch so far: executed, and how many
    /// matched ([`L2Model::count_cas`]).
    pub(super) cas: rustc_hash::FxHashMap<(usize, u64), (u64, u64)>,
    /// The distinct threads whose CAS matched, per (wave, word, block, thread in block).
    pub(super) cas_winners: rustc_hash::FxHashSet<(usize, u64, u64, u32)>,
}

impl L2Model {
    /// Reads the L2 sector(s) holding `addr` (an L1 sector or a constant address) for the request
    /// whose traffic `t` accumulates; returns where the data came from. A miss fetches the aligned
    /// `fill_bytes` block from DRAM once per request: sectors of a block this request already
    /// fetched count as misses served by that fetch.
    pub fn read(&mut self, addr: u64, t: &mut L2Outcome) -> Level {
        let (l1_sector, l2_sector) = (self.p.l1_sector_bytes.min(32), self.p.l2_sector_bytes);
        if l1_sector <= l2_sector {
            // The common geometry: the address's one L2 sector (no iterator to set up).
            return self.read_sector(addr & !(u64::from(l2_sector) - 1), t);
        }
        let mut level = Level::L2;
        for s in l2_sectors_of(addr, l1_sector, l2_sector) {
            level = level.max(self.read_sector(s, t));
        }
        level
    }

    /// [`L2Model::read`] of each of `addrs` in turn; the farthest level any came from (L2 when
    /// there are none). In the common geometry (an L1 sector is an L2 sector and a DRAM fill),
    /// the addresses of a line are looked up at once: the outcome of their lookups one by one
    /// ([`SectorCache::access_line`]; none of the line's blocks was fetched earlier in the
    /// request, and each sector comes once).
    pub fn read_all(&mut self, addrs: &[u64], t: &mut L2Outcome) -> Level {
        let sb = self.p.l2_sector_bytes;
        if self.p.l1_sector_bytes.min(32) != sb || self.p.l2_fill_bytes != sb {
            return (addrs.iter().map(|&a| self.read(a, t)))
                .max()
                .unwrap_or(Level::L2);
        }
        let (sb, line_shift) = (
            u64::from(sb),
            self.l2.geometry().line_bytes.trailing_zeros(),
        );
        let mut level = Level::L2;
        let line_of = self.l2.line_map();
        // The common case, every line of the request new to it and each sector once: on the
        // sets taken apart once, up to the first line that is not. (Not for a few sectors, a
        // coalesced access's line or two, where taking the sets apart costs more than it saves.)
        let mut done = 0;
        if let Some(mut sets) = (addrs.len() > 4).then(|| self.l2.ordered_sets()).flatten() {
            for (line, mask, n) in line_runs(addrs, line_of) {
                let base = line << line_shift;
                if mask.count_ones() != n || (t.fetched_max >= base && !t.fetched.is_empty()) {
                    break;
                }
                let r = sets.access_line(line, mask, false, true, false);
                level = level.max(t.add_line(base, mask, n, r, sb));
                done += n as usize;
            }
            if done == addrs.len() {
                return level;
            }
        }
        let mut rest = &addrs[done..];
        for (line, mask, n) in line_runs(rest, line_of) {
            let (run, after) = rest.split_at(n as usize);
            rest = after;
            let base = line << line_shift;
            if mask.count_ones() != n || (t.fetched_max >= base && !t.fetched.is_empty()) {
                // A sector twice, or a block fetched before: one by one.
                for &a in run {
                    level = level.max(self.read(a, t));
                }
                continue;
            }
            let r = self.l2.access_line(line, mask, false, true, false);
            level = level.max(t.add_line(base, mask, n, r, sb));
        }
        level
    }

    /// [`L2Model::read_all`] of a whole load request into `t`, a fresh outcome that no later
    /// read goes on into (the L2 pass's loads): through [`L2Lines::read`] when it applies.
    pub fn read_request(&mut self, addrs: &[u64], t: &mut L2Outcome) -> Level {
        let counts = match (self.lines(), t.fetched.is_empty()) {
            (Some(mut lines), true) => lines.read(addrs),
            _ => None,
        };
        let Some(c) = counts else {
            return self.read_all(addrs, t);
        };
        t.add_counts(c, L2Lines::SECTOR_BYTES);
        c.level()
    }

    /// The L2 as [`L2Lines`], when its geometry is theirs.
    #[inline]
    pub fn lines(&mut self) -> Option<L2Lines<'_>> {
        let (g, p) = (self.l2.geometry(), &self.p);
        let sb = L2Lines::SECTOR_BYTES as u32;
        let common = (
            g.line_bytes,
            g.sector_bytes,
            p.l2_sector_bytes,
            p.l2_fill_bytes,
        ) == (L2Lines::LINE_BYTES as u32, sb, sb, sb)
            && p.l1_sector_bytes == sb;
        if !common {
            return None;
        }
        Some(L2Lines {
            sets: self.l2.ordered_sets()?.sixteen()?,
        })
    }

    /// [`L2Model::read`] of the one L2 sector `s`: L2 or DRAM.
    #[inline]
    fn read_sector(&mut self, s: u64, t: &mut L2Outcome) -> Level {
        let fill = u64::from(self.p.l2_fill_bytes);
        let sb = u64::from(self.p.l2_sector_bytes);
        t.sectors += 1;
        let block = s & !(fill - 1);
        if t.was_fetched(block) {
            return Level::Dram;
        }
        let r = self.l2.access(s, false, true);
        t.dram_write += u64::from(r.writeback_sectors) * sb;
        if r.hit {
            t.hits += 1;
            return Level::L2;
        }
        // The block's other sectors (none when the block is one sector).
        if fill > sb {
            for n in (block..block + fill)
                .step_by(sb as usize)
                .filter(|&n| n != s)
            {
                let f = self.l2.access(n, false, true);
                t.dram_write += u64::from(f.writeback_sectors) * sb;
            }
        }
        t.note_fetched(block);
        t.dram_read += fill;
        Level::Dram
    }

    /// Writes the L1 sectors `written` into L2 (write-back, allocate without fetch).
    pub fn write(&mut self, written: &[u64], t: &mut L2Outcome) {
        if let Some(mut lines) = self.lines() {
            let c = lines.write(written);
            t.add_counts(c, L2Lines::SECTOR_BYTES);
            return;
        }
        let sb = u64::from(self.p.l2_sector_bytes);
        if self.p.l1_sector_bytes <= self.p.l2_sector_bytes {
            // Each L1 sector in one L2 sector: one lookup per line ([`SectorCache::access_line`]
            // has the outcome of the lookups of its sectors one by one; a write's sector counts
            // as a hit, and only a line's first lookup can evict).
            for (line, mask, n) in line_runs(written, self.l2.line_map()) {
                let r = self.l2.access_line(line, mask, true, true, false);
                t.sectors += n;
                t.hits += n;
                t.dram_write += u64::from(r.writeback_sectors) * sb;
            }
            return;
        }
        for &s in written {
            for l2s in l2_sectors_of(s, self.p.l1_sector_bytes, self.p.l2_sector_bytes) {
                t.sectors += 1;
                let r = self.l2.access(l2s, true, true);
                // A write allocates its sector without a fetch (byte masks), so its lookup counts
                // as a hit: measured on an H200, every lts__t_sectors_srcunit_tex_op_write is a
                // lookup hit, even the first write of a cold line.
                t.hits += 1;
                t.dram_write += u64::from(r.writeback_sectors) * sb;
            }
        }
    }
}

impl LineCounts {
    /// Where a read of these counts was served from: DRAM when a sector missed.
    #[inline(always)]
    pub fn level(&self) -> Level {
        if self.missed == 0 {
            Level::L2
        } else {
            Level::Dram
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;
    use crate::memory::system::MemorySystem;

    #[test]
    fn l2_writes_by_line_have_the_outcome_of_writes_by_sector() {
        // The reference: each written sector looked up on its own, as before the writes were
        // grouped by line. A small L2, so that lines are evicted dirty; runs with repeated and
        // unsorted sectors too.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let mut cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        cfg.l2.size_bytes = 16 * 128 * 4;
        let mut l2 = MemorySystem::new(&cfg).l2;
        let mut reference = l2.l2.clone();
        let mut x = 7u64;
        for _ in 0..5000 {
            let mut written = Vec::new();
            for _ in 0..1 + (x >> 60) {
                x = crate::testing::lcg(x);
                written.push((x >> 33) % 4096 * 32);
            }
            if x & 1 == 0 {
                written.sort_unstable();
            }
            let mut t = L2Outcome::default();
            l2.write(&written, &mut t);
            let (mut sectors, mut dram_write) = (0, 0);
            for &s in &written {
                sectors += 1;
                dram_write += u64::from(reference.access(s, true, true).writeback_sectors) * 32;
            }
            assert_eq!(
                (t.sectors, t.hits, t.dram_write),
                (sectors, sectors, dram_write)
            );
        }
    }

    #[test]
    fn l2_reads_by_line_have_the_outcome_of_reads_one_by_one() {
        // The reference: `read` of each address in turn on a copy of the same L2. Sorted sector
        // lists (loads' misses), and unsorted ones with repeats and unaligned addresses (constant
        // misses); a small L2, so that dirty lines are evicted; one-sector and 64-byte fills.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let mut cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        cfg.l2.size_bytes = 16 * 128 * 4;
        for fill in [32, 64] {
            cfg.l2.fill_bytes = fill;
            let mut fused = MemorySystem::new(&cfg).l2;
            let mut reference = fused.clone();
            let mut request = fused.clone();
            let mut x = 11u64;
            let mut next = move || {
                x = crate::testing::lcg(x);
                x >> 33
            };
            for _ in 0..5000 {
                let sorted = next() % 2 == 0;
                let addrs: Vec<u64> = if sorted {
                    let mut v: Vec<u64> = (0..1 + next() % 12).map(|_| next() % 512 * 32).collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                } else {
                    (0..1 + next() % 12).map(|_| next() % 16384).collect()
                };
                if next() % 4 == 0 {
                    // Dirty lines, so that evictions write back.
                    reference.write(&addrs, &mut L2Outcome::default());
                    fused.write(&addrs, &mut L2Outcome::default());
                    request.write(&addrs, &mut L2Outcome::default());
                    continue;
                }
                let (mut t, mut u) = (L2Outcome::default(), L2Outcome::default());
                let level = fused.read_all(&addrs, &mut t);
                let expect = (addrs.iter().map(|&a| reference.read(a, &mut u)))
                    .max()
                    .unwrap_or(Level::L2);
                assert_eq!(level, expect, "{addrs:x?}");
                assert_eq!(
                    (t.sectors, t.hits, t.dram_read, t.dram_write),
                    (u.sectors, u.hits, u.dram_read, u.dram_write),
                    "{addrs:x?}"
                );
                // A whole request, as the L2 pass reads a load's (ascending: without a record
                // of the blocks fetched).
                let mut r = L2Outcome::default();
                assert_eq!(request.read_request(&addrs, &mut r), expect, "{addrs:x?}");
                assert_eq!(
                    (r.sectors, r.hits, r.dram_read, r.dram_write),
                    (u.sectors, u.hits, u.dram_read, u.dram_write),
                    "{addrs:x?}"
                );
            }
        }
    }
}

//! The L2 by lines in the shipped configs' geometry ([`L2Lines`]), and the block log's request
//! list as line records ([`LineRecords`]).

use super::l2::LineCounts;
use crate::memory::cache::{MissList, SixteenWays};

/// The block log's request list as line records ([`Params::line_records`]): per L1 line a
/// global or local access sends sectors of to L2, one entry, the line's first byte address
/// ORed with the mask of those sectors (lines of 128 bytes, four sectors of 32: the mask lies
/// below the address's bits). The L1's readers push a line's misses at once, and the L2 pass
/// takes each line as it stands ([`L2Lines::read_lines`]), with no sectors to group. A
/// request's records are its distinct lines, ascending.
///
/// [`Params::line_records`]: super::Params::line_records
pub struct LineRecords<'a>(pub &'a mut Vec<u64>);

impl LineRecords<'_> {
    /// Bytes per line.
    pub const LINE_BYTES: u64 = 128;
    /// Bytes per sector.
    pub const SECTOR_BYTES: u64 = 32;
    const SHIFTS: (u32, u32) = (
        Self::LINE_BYTES.trailing_zeros(),
        Self::SECTOR_BYTES.trailing_zeros(),
    );

    /// The record of the sectors `mask` of line number `line`.
    #[inline(always)]
    pub fn record(line: u64, mask: u32) -> u64 {
        line << Self::SHIFTS.0 | u64::from(mask)
    }

    /// A record's line number and sector mask.
    #[inline(always)]
    pub fn parts(record: u64) -> (u64, u32) {
        let low = (1 << Self::SHIFTS.0) - 1;
        (record >> Self::SHIFTS.0, (record & low) as u32)
    }

    /// The sectors (byte addresses) of `records`, in order: the request as one address per
    /// sector.
    pub fn sectors(records: &[u64]) -> impl Iterator<Item = u64> + '_ {
        records.iter().flat_map(|&r| {
            let (line, mask) = Self::parts(r);
            (0..Self::LINE_BYTES / Self::SECTOR_BYTES)
                .filter(move |k| mask >> k & 1 != 0)
                .map(move |k| (line << Self::SHIFTS.0) + (k << Self::SHIFTS.1))
        })
    }
}

impl MissList for LineRecords<'_> {
    const LINES: bool = true;

    #[inline(always)]
    fn push_sector(&mut self, sector: u64) {
        let (line_shift, sector_shift) = Self::SHIFTS;
        let bit = 1 << (sector >> sector_shift & ((1 << (line_shift - sector_shift)) - 1));
        self.0.push(Self::record(sector >> line_shift, bit));
    }

    #[inline(always)]
    fn push_line(&mut self, line: u64, mask: u32, shifts: (u32, u32)) {
        debug_assert_eq!(shifts, Self::SHIFTS, "lines of 128 bytes, sectors of 32");
        self.0.push(Self::record(line, mask));
    }
}

/// The L2 in the shipped configs' geometry, borrowed for the requests of a block
/// ([`L2Model::lines`]): 128-byte lines of four 32-byte sectors in 16-way sets kept in recency
/// order, an L1 sector one L2 sector and a miss's DRAM fill one sector. A request's lines are
/// looked up in one loop, with no per-request set-up beyond a check that its sectors ascend, and
/// a line whose four sectors the request reads or writes is taken whole (two loads, not four).
///
/// [`L2Model::lines`]: super::L2Model::lines
pub struct L2Lines<'a> {
    pub(super) sets: SixteenWays<'a>,
}

impl L2Lines<'_> {
    /// Bytes per line.
    pub const LINE_BYTES: u64 = 128;
    /// Bytes per sector (and per DRAM fill).
    pub const SECTOR_BYTES: u64 = 32;
    const LINE_SHIFT: u32 = Self::LINE_BYTES.trailing_zeros();
    const SECTOR_SHIFT: u32 = Self::SECTOR_BYTES.trailing_zeros();
    const PER_LINE: usize = (Self::LINE_BYTES / Self::SECTOR_BYTES) as usize;

    /// [`L2Model::read_request`] of the sectors `addrs` (L1 sectors' byte addresses) into a fresh
    /// outcome: their counts, if the sectors strictly ascend (as an L1's misses do: then no block
    /// comes twice, so the blocks fetched need no record). When they do not, `None`, and nothing
    /// was looked up.
    ///
    /// [`L2Model::read_request`]: super::L2Model::read_request
    #[inline(always)]
    pub fn read(&mut self, addrs: &[u64]) -> Option<LineCounts> {
        ascending(addrs, Self::SECTOR_SHIFT).then(|| self.lines::<false>(addrs, true))
    }

    /// [`L2Model::write`] of the sectors `written` (in any order, repeats allowed): their counts.
    ///
    /// [`L2Model::write`]: super::L2Model::write
    #[inline(always)]
    pub fn write(&mut self, written: &[u64]) -> LineCounts {
        let whole = ascending(written, Self::SECTOR_SHIFT);
        self.lines::<true>(written, whole)
    }

    /// [`L2Lines::read`] of a load request's [`LineRecords`]: their counts (each line's sectors
    /// distinct, as an L1's misses are, so no block comes twice).
    #[inline(always)]
    pub fn read_lines(&mut self, records: &[u64]) -> LineCounts {
        self.records::<false>(records)
    }

    /// [`L2Lines::write`] of a store request's [`LineRecords`]: their counts.
    #[inline(always)]
    pub fn write_lines(&mut self, records: &[u64]) -> LineCounts {
        self.records::<true>(records)
    }

    /// Looks up each of `records`' lines once ([`LineRecords`]), reading (or writing when
    /// `WRITE`): the counts, as [`L2Lines::lines`] finds them for the records' sectors.
    #[inline(always)]
    fn records<const WRITE: bool>(&mut self, records: &[u64]) -> LineCounts {
        let (mut sectors, mut hits, mut written) = (0, 0, 0);
        for &r in records {
            let (line, mask) = LineRecords::parts(r);
            sectors += mask.count_ones();
            let o = self.sets.access_line::<WRITE>(line, mask);
            hits += o.hits.count_ones();
            written += o.writeback_sectors;
        }
        if WRITE {
            hits = sectors;
        }
        LineCounts {
            sectors,
            hits,
            missed: sectors - hits,
            written,
        }
    }

    /// Looks up the runs of consecutive `addrs` in one line, each once, reading (or writing when
    /// `WRITE`): the counts, a write's sectors all hits. `ascending`: the sectors strictly
    /// ascend, so a run of four is a whole line.
    #[inline(always)]
    fn lines<const WRITE: bool>(&mut self, addrs: &[u64], ascending: bool) -> LineCounts {
        let bit = |a: u64| 1u32 << (a >> Self::SECTOR_SHIFT & (Self::PER_LINE as u64 - 1));
        let (mut hits, mut written) = (0, 0);
        let mut i = 0;
        while let Some(&first) = addrs.get(i) {
            let line = first >> Self::LINE_SHIFT;
            let (mask, n) = match addrs.get(i + Self::PER_LINE - 1) {
                // Four distinct sectors of the line: all of them.
                Some(&last) if ascending && last >> Self::LINE_SHIFT == line => {
                    ((1 << Self::PER_LINE) - 1, Self::PER_LINE)
                }
                _ => {
                    let (mut mask, mut j) = (bit(first), i + 1);
                    while let Some(&a) = addrs.get(j) {
                        if a >> Self::LINE_SHIFT != line {
                            break;
                        }
                        mask |= bit(a);
                        j += 1;
                    }
                    (mask, j - i)
                }
            };
            i += n;
            // Per line, only what its lookup found: a line's sectors hit are among those looked
            // up, so the misses are the sectors not hit.
            let r = self.sets.access_line::<WRITE>(line, mask);
            hits += r.hits.count_ones();
            written += r.writeback_sectors;
        }
        let sectors = addrs.len() as u32;
        if WRITE {
            // A write allocates its sectors without a fetch (byte masks): each a hit
            // ([`L2Model::write`]).
            LineCounts {
                sectors,
                hits: sectors,
                missed: 0,
                written,
            }
        } else {
            LineCounts {
                sectors,
                hits,
                missed: sectors - hits,
                written,
            }
        }
    }
}

/// Whether the sectors (of `1 << shift` bytes) of the byte addresses `addrs` strictly ascend:
/// without a branch per address, in windows of four addresses (three pairs, straight-line code
/// that needs no loop per pair), the last window overlapping the one before it.
#[inline(always)]
fn ascending(addrs: &[u64], shift: u32) -> bool {
    let window = |w: &[u64; 4]| {
        let s = w.map(|a| a >> shift);
        (s[0] < s[1]) & (s[1] < s[2]) & (s[2] < s[3])
    };
    let Some(last) = addrs.last_chunk::<4>() else {
        return (addrs.iter().zip(addrs.iter().skip(1)))
            .fold(true, |ok, (&p, &n)| ok & (p >> shift < n >> shift));
    };
    let mut ok = window(last);
    // Windows from the first address on, three addresses apart, up to one before the last
    // window: then the pairs between them and the last window's are all covered.
    let mut rest = &addrs[..addrs.len() - 1];
    while let Some((w, _)) = rest.split_first_chunk::<4>() {
        ok &= window(w);
        rest = &rest[3..];
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;
    use crate::memory::system::{L2Outcome, MemorySystem};

    #[test]
    fn a_sector_pushed_alone_is_its_lines_record() {
        let mut records = vec![];
        let mut list = LineRecords(&mut records);
        for s in [0u64, 32, 96, 128, 0x1234_5660, !31] {
            list.push_sector(s);
        }
        let expect = [0u64, 32, 96, 128, 0x1234_5660, !31];
        assert_eq!(LineRecords::sectors(&records).collect::<Vec<_>>(), expect);
        assert_eq!(LineRecords::parts(records[2]), (0, 0b1000));
        assert_eq!(LineRecords::record(0x2468ac, 0b0101) >> 7, 0x2468ac);
    }

    #[test]
    fn l2_line_records_have_the_outcome_of_their_sectors() {
        // The reference: `L2Lines::read` and `write` of the records' sectors (one address per
        // sector) on a copy of the same L2, then both L2s' contents compared. Records of 1 to
        // 16 distinct lines, ascending, with any masks; a small L2, so that dirty lines are
        // evicted.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let mut cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        cfg.l2.size_bytes = 16 * 128 * 3;
        let mut l2 = MemorySystem::new(&cfg).l2;
        let mut reference = l2.clone();
        let mut x = 9u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for _ in 0..20_000 {
            let mut lines: Vec<u64> = (0..1 + next() % 16).map(|_| next() % 256).collect();
            lines.sort_unstable();
            lines.dedup();
            let records: Vec<u64> = (lines.iter())
                .map(|&l| LineRecords::record(l, 1 + (next() % 15) as u32))
                .collect();
            let sectors: Vec<u64> = LineRecords::sectors(&records).collect();
            let (mut got, mut want) = (l2.lines().unwrap(), reference.lines().unwrap());
            let (c, e) = if next() % 3 == 0 {
                (got.write_lines(&records), want.write(&sectors))
            } else {
                (got.read_lines(&records), want.read(&sectors).unwrap())
            };
            assert_eq!(c, e, "{records:x?}");
        }
        for s in 0..256 * 4 {
            let (mut t, mut u) = (L2Outcome::default(), L2Outcome::default());
            assert_eq!(l2.read(s * 32, &mut t), reference.read(s * 32, &mut u));
            assert_eq!(t, u, "{s}");
        }
    }

    #[test]
    fn ascending_sectors_are_told_as_pair_by_pair() {
        // Every length up to 40 (one window, several, the last overlapping), sectors that
        // mostly ascend, with a repeat or a step back here and there.
        let (mut x, mut told) = (3u64, [0; 2]);
        for _ in 0..20_000 {
            x = crate::testing::lcg(x);
            let n = (x >> 58) as usize % 41;
            let mut a = x >> 40 & 0xfff;
            let addrs: Vec<u64> = (0..n)
                .map(|k| {
                    a = match (x >> (k % 32) & 255, k as u64 * 13 % 32) {
                        (0, _) => a.saturating_sub(40),
                        (1, _) => a | 31,
                        (_, r) => (a + 32) & !31 | r,
                    };
                    a
                })
                .collect();
            let expect = addrs.windows(2).all(|w| w[0] >> 5 < w[1] >> 5);
            assert_eq!(ascending(&addrs, 5), expect, "{addrs:x?}");
            told[usize::from(expect)] += 1;
        }
        assert!(told.iter().all(|&n| n > 1000), "{told:?}");
    }

    #[test]
    fn l2_lines_have_the_outcome_of_the_general_path() {
        // Requests of sectors from a few lines, so that whole lines (the four-sector shortcut),
        // partial ones, repeats and unsorted runs all come; a small L2, so that dirty lines are
        // evicted. The reference: `read_all` of the same reads (which does not go through
        // `L2Lines`) and writes sector by sector, on a copy of the same L2.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let mut cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        cfg.l2.size_bytes = 16 * 128 * 3;
        let mut l2 = MemorySystem::new(&cfg).l2;
        assert!(l2.lines().is_some());
        let mut reference = l2.clone();
        let mut x = 5u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for _ in 0..20_000 {
            let base = next() % 256 * 128;
            let mut addrs: Vec<u64> = (0..1 + next() % 20)
                .map(|_| base + next() % 16 * 32 + next() % 32)
                .collect();
            match next() % 4 {
                0 => {}
                1 => addrs.sort_unstable(),
                _ => {
                    addrs.sort_unstable_by_key(|a| a >> 5);
                    addrs.dedup_by_key(|a| *a >> 5);
                }
            }
            let mut lines = l2.lines().unwrap();
            if next() % 2 == 0 {
                let c = lines.write(&addrs);
                let mut t = L2Outcome::default();
                for &a in &addrs {
                    let r = reference.l2.access(a & !31, true, true);
                    t.sectors += 1;
                    t.hits += 1;
                    t.dram_write += u64::from(r.writeback_sectors) * 32;
                }
                let got = (c.sectors, c.hits, 0, u64::from(c.written) * 32);
                assert_eq!(got, (t.sectors, t.hits, 0, t.dram_write), "{addrs:x?}");
                continue;
            }
            let ascending = addrs.windows(2).all(|w| w[0] >> 5 < w[1] >> 5);
            let Some(c) = lines.read(&addrs) else {
                assert!(!ascending, "{addrs:x?}");
                let mut t = L2Outcome::default();
                let mut u = L2Outcome::default();
                assert_eq!(
                    l2.read_all(&addrs, &mut t),
                    reference.read_all(&addrs, &mut u)
                );
                assert_eq!(t, u);
                continue;
            };
            assert!(ascending, "{addrs:x?}");
            let mut u = L2Outcome::default();
            assert_eq!(c.level(), reference.read_all(&addrs, &mut u), "{addrs:x?}");
            let got = (c.sectors, c.hits, u64::from(c.missed) * 32);
            assert_eq!(got, (u.sectors, u.hits, u.dram_read), "{addrs:x?}");
            assert_eq!(u64::from(c.written) * 32, u.dram_write, "{addrs:x?}");
        }
    }
}

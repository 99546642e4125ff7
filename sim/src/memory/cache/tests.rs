//! Tests of [`SectorCache`] as a whole: misses, hits, replacement, write-backs, the stores it
//! picks (ordered, compact, listed) against each other and a plain LRU, and reads of many
//! sectors against reads one by one.

use super::*;

fn l1() -> SectorCache {
    SectorCache::new(Geometry {
        size_bytes: 1024,
        line_bytes: 128,
        sector_bytes: 32,
        associativity: 2,
    })
}

/// A list with only [`MissList::push_sector`]: the general [`MissList::push_line`].
struct BySector(Vec<u64>);

impl MissList for BySector {
    fn push_sector(&mut self, sector: u64) {
        self.0.push(sector);
    }
}

#[test]
fn a_vec_pushes_a_line_as_its_sectors_one_by_one() {
    // `Vec`'s `push_line` (a whole line of four in one copy, others one by one) against the
    // general one: every mask of lines of 2 to 16
    // sectors, random ones of 32, after what the list held.
    let mut x = 5u64;
    for (line_shift, sector_shift) in [(7, 5), (6, 5), (7, 6), (8, 5), (9, 5), (10, 5)] {
        let per_line = line_shift - sector_shift;
        let masks: Vec<u32> = if per_line <= 4 {
            (1..1u32 << (1 << per_line)).collect()
        } else {
            (0..5000)
                .map(|_| {
                    x = crate::testing::lcg(x);
                    let m = (x >> 20) as u32;
                    // Runs as well as scattered bits.
                    match x >> 60 & 3 {
                        0 => m | 1,
                        1 => (u32::MAX >> (m % 32)) << ((m >> 8) % 8),
                        _ => m.max(1),
                    }
                })
                .filter(|&m| m != 0)
                .collect()
        };
        for mask in masks {
            let line = 0x1_2345 + u64::from(mask);
            let (mut got, mut want) = (vec![7u64], BySector(vec![7u64]));
            got.push_line(line, mask, (line_shift, sector_shift));
            want.push_line(line, mask, (line_shift, sector_shift));
            assert_eq!(got, want.0, "{mask:b} {line_shift} {sector_shift}");
        }
    }
}

#[test]
fn miss_then_hit_per_sector() {
    let mut c = l1();
    assert!(!c.access(0x1000, false, true).hit);
    assert!(c.access(0x1004, false, true).hit);
    // Another sector of the same line was never fetched.
    assert!(!c.access(0x1020, false, true).hit);
}

#[test]
fn lru_evicts_the_oldest_line_of_the_set() {
    let mut c = l1(); // 4 sets x 2 ways; lines 0, 4, 8 map to set 0
    c.access(0, false, true);
    c.access(4 * 128, false, true);
    c.access(0, false, true); // line 0 is now most recent
    c.access(8 * 128, false, true); // evicts line 4
    assert!(c.access(0, false, true).hit);
    assert!(!c.access(4 * 128, false, true).hit);
}

#[test]
fn evict_first_lines_go_before_older_ones() {
    let mut c = l1(); // 4 sets x 2 ways; lines 0, 4, 8 map to set 0
    c.access(0, false, true);
    c.access_as(4 * 128, false, true, true); // streamed: stays least recent
    c.access(8 * 128, false, true); // evicts the streamed line, not line 0
    assert!(c.access(0, false, true).hit);
    assert!(!c.access(4 * 128, false, true).hit);
}

#[test]
fn invalidated_lines_miss_and_are_reused_first() {
    let mut c = l1(); // 4 sets x 2 ways
    c.access(0, false, true);
    c.access(4 * 128, false, true);
    assert!(c.invalidate(0));
    assert!(!c.invalidate(0));
    c.access(8 * 128, false, true); // takes the invalidated way, keeps line 4
    assert!(c.access(4 * 128, false, true).hit);
    assert!(!c.access(0, false, false).hit);
}

#[test]
fn dirty_sectors_are_written_back_on_eviction() {
    let mut c = SectorCache::new(Geometry {
        size_bytes: 128,
        line_bytes: 128,
        sector_bytes: 32,
        associativity: 1,
    });
    c.access(0, true, true);
    c.access(32, true, true);
    assert_eq!(c.access(128, false, true).writeback_sectors, 2);
}

/// Runs the same 200,000 pseudo-random operations on `a` and `b` (lines `0..lines`, every
/// `invalidate_every`-th an invalidation; writes, streamed fills and, with `no_allocate`,
/// lookups without allocation mixed in) and asserts every outcome is the same.
fn same_outcomes(
    a: &mut SectorCache,
    b: &mut SectorCache,
    seed: u64,
    lines: u64,
    invalidate_every: u64,
    no_allocate: bool,
) {
    let mut x = seed;
    for i in 0..200_000u64 {
        x = crate::testing::lcg(x);
        let addr = (x >> 33) % (lines * 128);
        let (write, evict_first) = (x & 1 == 1, x & 6 == 6);
        let allocate = !no_allocate || x & 8 != 8;
        if i % invalidate_every == 0 {
            assert_eq!(a.invalidate(addr), b.invalidate(addr), "op {i}");
        } else {
            assert_eq!(
                a.access_as(addr, write, allocate, evict_first),
                b.access_as(addr, write, allocate, evict_first),
                "op {i}"
            );
        }
    }
}

#[test]
fn ordered_sets_evict_as_recency_lists_do() {
    // 8 sets x 8 ways: ordered; the same cache on recency lists (scanned) is the reference.
    // Fills, streamed fills, writes, hits, lookups without allocation and invalidations all
    // reorder the ways.
    let geom = Geometry {
        size_bytes: 8 * 8 * 128,
        line_bytes: 128,
        sector_bytes: 32,
        associativity: 8,
    };
    let mut ordered = SectorCache::new(geom);
    assert!(ordered.ordered);
    let mut listed = SectorCache::new_as(geom, false);
    same_outcomes(&mut ordered, &mut listed, 777, 120, 5, true);
}

/// A plain LRU cache, the reference: per set its ways (line or [`EMPTY`], valid, dirty),
/// most recent first; a cold set's empty ways are ranked too (a streamed fill goes last,
/// behind them).
struct Naive {
    sets: Vec<Vec<(u64, u32, u32)>>,
    ways: usize,
    /// The set displacement ([`SectorCache::with_set_displacement`]).
    displace: u64,
}

impl Naive {
    fn new(sets: usize, ways: usize) -> Self {
        Naive {
            sets: vec![vec![(EMPTY, 0, 0); ways]; sets],
            ways,
            displace: 0,
        }
    }

    /// The set of `line`: `(line mod sets + displace * (line / sets)) mod sets`, as the
    /// displaced index is specified.
    fn set_of(&self, line: u64) -> usize {
        let n = self.sets.len() as u128;
        let l = u128::from(line);
        ((l % n + u128::from(self.displace) * (l / n)) % n) as usize
    }

    fn access(&mut self, addr: u64, write: bool, allocate: bool, evict_first: bool) -> Outcome {
        let (line, bit) = (addr >> 7, 1u32 << (addr >> 5 & 3));
        let s = self.set_of(line);
        let set = &mut self.sets[s];
        if let Some(p) = set.iter().position(|e| e.0 == line) {
            let mut e = set.remove(p);
            let hit = e.1 & bit != 0;
            if allocate {
                e.1 |= bit;
                e.2 |= if write { bit } else { 0 };
            } else if write && hit {
                e.2 |= bit;
            }
            set.insert(0, e);
            return Outcome {
                hit,
                writeback_sectors: 0,
            };
        }
        if !allocate {
            return Outcome::default();
        }
        let (_, _, dirty) = set.pop().expect("a set has ways");
        let writeback_sectors = dirty.count_ones();
        debug_assert!(set.len() + 1 == self.ways);
        let e = (line, bit, if write { bit } else { 0 });
        if evict_first {
            set.push(e);
        } else {
            set.insert(0, e);
        }
        Outcome {
            hit: false,
            writeback_sectors,
        }
    }

    fn invalidate(&mut self, addr: u64) -> bool {
        let line = addr >> 7;
        let s = self.set_of(line);
        let set = &mut self.sets[s];
        let Some(p) = set.iter().position(|e| e.0 == line) else {
            return false;
        };
        set.remove(p);
        set.push((EMPTY, 0, 0));
        true
    }
}

#[test]
fn ordered_and_listed_caches_are_plain_lru() {
    // 3 sets (a division, not a mask) of 8 ways (ordered), of 1, 2 and 8 ways listed and of
    // 64 and 256 ways (listed, as the shipped L1s), some with their stamps nearly run out,
    // so that they renumber their ways many times on the way. Lines from five times the
    // cache, so that hits, evictions, streamed fills and invalidations all happen. Each also
    // with its set index displaced by 2 sets per multiple of the set count.
    let shapes = [
        (8, true, false),
        (16, true, false),
        (1, false, false),
        (2, false, true),
        (8, false, false),
        (64, false, false),
        (64, false, true),
        (256, false, false),
        (256, false, true),
    ];
    for ((ways, ordered, squeeze), displace) in shapes.iter().flat_map(|&s| [(s, 0), (s, 2)]) {
        let geom = Geometry {
            size_bytes: 3 * ways * 128,
            line_bytes: 128,
            sector_bytes: 32,
            associativity: ways as u32,
        };
        let mut c = SectorCache::new_as(geom, ordered);
        c.displace = displace;
        let mut naive = Naive::new(3, ways as usize);
        naive.displace = displace;
        let mut x = 4242u64;
        for i in 0..100_000u64 {
            if squeeze && i % 5000 == 0 {
                c.listed.squeeze(700);
            }
            x = crate::testing::lcg(x);
            let addr = (x >> 33) % (ways * 5 * 128);
            let (write, allocate, evict_first) = (x & 1 == 1, x & 8 != 8, x & 6 == 6);
            if i % 9 == 0 {
                assert_eq!(c.invalidate(addr), naive.invalidate(addr), "{ways}: op {i}");
            } else {
                assert_eq!(
                    c.access_as(addr, write, allocate, evict_first),
                    naive.access(addr, write, allocate, evict_first),
                    "{ways} ways, ordered {ordered}, squeezed {squeeze}, displaced {displace}: op {i} {addr:#x} {write} {allocate} {evict_first}"
                );
            }
        }
    }
}

#[test]
fn sectors_read_by_line_have_the_outcome_of_reads_by_sector() {
    // An L1 of 4 sets x 256 ways (indexed, listed) and one of 16 ways (ordered); requests
    // of a few sorted, distinct sectors, the reference looks them up one by one. Each also with
    // its set index displaced (3 sets per multiple of the set count).
    for (ways, displace) in [(256u32, 0), (16, 0), (256, 3), (16, 3)] {
        let geom = Geometry {
            size_bytes: 4 * u64::from(ways) * 128,
            line_bytes: 128,
            sector_bytes: 32,
            associativity: ways,
        };
        let mut c = SectorCache::with_set_displacement(geom, displace);
        let mut reference = c.clone();
        let mut x = 31u64;
        for i in 0..20_000 {
            if ways > 16 && i % 1000 == 999 {
                // Stamps nearly run out (on both, which take them at different rates).
                c.listed.squeeze(20);
                reference.listed.squeeze(20);
            }
            x = crate::testing::lcg(x);
            let mut sectors: Vec<u64> = if x & 0x70 == 0x30 {
                // Some sectors of one line (a coalesced load: the one-line path).
                let line = (x >> 20) % (u64::from(ways) * 6);
                let mask = (x >> 8 & 15).max(1);
                (0..4)
                    .filter(|k| mask >> k & 1 == 1)
                    .map(|k| line * 128 + k * 32)
                    .collect()
            } else if x & 0x70 == 0x70 {
                // A run of up to 100 consecutive sectors, some of them skipped: whole lines
                // missed or hit, and more sectors than the 64 of a missed-sector mask.
                let start = (x >> 20) % (u64::from(ways) * 24);
                (0..1 + (x >> 40) % 100)
                    .filter(|k| x >> (k % 61) & 7 != 0)
                    .map(|k| (start + k) * 32)
                    .collect()
            } else {
                (0..1 + (x >> 60))
                    .map(|k| (x >> (k * 3) & 0xffff) % (u64::from(ways) * 24) * 32)
                    .collect()
            };
            sectors.sort_unstable();
            sectors.dedup();
            let evict_first = x & 3 == 3;
            let mut missed = crate::memory::coalesce::Sectors::new();
            let one_line =
                !sectors.is_empty() && sectors[0] >> 7 == sectors[sectors.len() - 1] >> 7;
            let (lines, hits) = if one_line && x & 0x100 != 0 {
                // The one-line read (a coalesced load's), its misses pushed as the caller
                // does.
                let line = sectors[0] >> 7;
                let mask = sectors.iter().fold(0, |m, s| m | 1 << (s >> 5 & 3));
                let hits = c.read_line(line, mask, evict_first);
                missed.extend(
                    sectors
                        .iter()
                        .copied()
                        .filter(|s| hits >> (s >> 5 & 3) & 1 == 0),
                );
                (1, hits.count_ones())
            } else if x & 0x200 != 0
                && !sectors.is_empty()
                && sectors.windows(2).all(|w| w[1] == w[0] + 32)
            {
                // A run: its lines in closed form.
                let mut to = vec![];
                let r = c.read_run(sectors[0], sectors.len() as u32, evict_first, &mut to);
                missed.extend(to);
                r
            } else {
                c.read_sectors(&sectors, evict_first, &mut missed)
            };
            let mut expect = Vec::new();
            for &s in &sectors {
                if !reference.access_as(s, false, true, evict_first).hit {
                    expect.push(s);
                }
            }
            let distinct = (sectors.iter().map(|s| s >> 7))
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            assert_eq!(missed.to_vec(), expect);
            assert_eq!(hits as usize, sectors.len() - expect.len());
            assert_eq!(lines as usize, distinct, "{ways} {sectors:x?}");
        }
    }
}

#[test]
fn compact_sets_are_taken_where_they_hold_the_geometry() {
    let geom = |associativity, line_bytes, sector_bytes| Geometry {
        size_bytes: 3 * 16 * 256,
        line_bytes,
        sector_bytes,
        associativity,
    };
    // 16 ways of lines of one, two or four sectors: compact records.
    for (line, sector) in [(128, 32), (128, 64), (128, 128), (64, 32)] {
        let c = SectorCache::new(geom(16, line, sector));
        assert!(!c.compact.is_empty() && c.tags.is_empty() && c.order.is_empty());
        assert_eq!(c.compact.len() as u64, c.sets);
    }
    // More sectors per line, fewer ways, or ways on recency lists: the general stores.
    for (ways, line, sector, ordered) in [
        (16, 128, 16, true),
        (16, 256, 32, true),
        (8, 128, 32, true),
        (15, 128, 32, true),
        (16, 128, 32, false),
    ] {
        let c = SectorCache::new_as(geom(ways, line, sector), ordered);
        assert!(c.compact.is_empty(), "{ways} {line} {sector} {ordered}");
        assert_eq!(
            c.tags.len(),
            if ordered {
                c.sets as usize * ways as usize
            } else {
                0
            }
        );
    }
    // A record is two host cache lines, aligned.
    assert_eq!(std::mem::size_of::<compact::Set>(), 128);
    assert_eq!(std::mem::align_of::<compact::Set>(), 128);
}

#[test]
fn compact_sets_have_the_outcome_of_the_general_store() {
    // 16 ways, 3 and 5 sets (a division) and 4 (a mask), lines of four, two and one sectors:
    // reads, writes (dirty evictions), streamed fills, lookups without allocation and
    // invalidations, on lines from six times the cache.
    for (sets, sector_bytes) in [(3u64, 32u32), (4, 32), (5, 32), (3, 64), (4, 128)] {
        let geom = Geometry {
            size_bytes: sets * 16 * 128,
            line_bytes: 128,
            sector_bytes,
            associativity: 16,
        };
        let mut compact = SectorCache::new(geom);
        assert!(!compact.compact.is_empty());
        let mut wide = SectorCache::new_wide(geom, true);
        same_outcomes(&mut compact, &mut wide, 99 + sets, sets * 16 * 6, 7, true);
        assert!(!compact.compact.is_empty(), "no line left the records");
    }
}

#[test]
fn a_line_the_records_cannot_hold_moves_the_sets_to_the_general_store() {
    // 3 sets (a division) and 4 (a mask): lines whose quotients fit the records, until one
    // of quotient `Set::EMPTY` or more comes; the cache then goes on in the general store,
    // with the ways, sectors and recency it had. The reference is in the general store
    // throughout. Also with the set index displaced, whose records give back the lines they
    // held when the sets move.
    for (sets, displace) in [(3u64, 0), (4, 0), (3, 2), (4, 3)] {
        let geom = Geometry {
            size_bytes: sets * 16 * 128,
            line_bytes: 128,
            sector_bytes: 32,
            associativity: 16,
        };
        let mut c = SectorCache::with_set_displacement(geom, displace);
        let mut wide = SectorCache::new_wide(geom, true);
        wide.displace = displace;
        let huge = u64::from(compact::Set::EMPTY) * sets;
        let (mut x, mut widened) = (17u64, false);
        for i in 0..30_000u64 {
            x = crate::testing::lcg(x);
            // Lines near 0 and just below the largest quotient the records hold; from op
            // 20,000 on, some beyond it.
            let near = (x >> 20) % (sets * 40);
            let line = match x >> 60 {
                0..=9 => near,
                10..=14 => huge - 1 - near,
                _ if i >= 20_000 => huge + near,
                _ => near,
            };
            let addr = line * 128 + (x >> 8 & 3) * 32;
            let (write, allocate, evict_first) = (x & 1 == 1, x & 8 != 8, x & 6 == 6);
            if i % 11 == 0 {
                assert_eq!(c.invalidate(addr), wide.invalidate(addr), "op {i}");
            } else {
                assert_eq!(
                    c.access_as(addr, write, allocate, evict_first),
                    wide.access_as(addr, write, allocate, evict_first),
                    "{sets} sets: op {i}, line {line:#x}"
                );
            }
            // Invalidating a line the records cannot hold leaves them as they are.
            if i == 10_000 {
                assert!(!c.invalidate(huge * 128) && !c.compact.is_empty());
            }
            widened |= i % 11 != 0 && line >= huge;
            assert_eq!(c.compact.is_empty(), widened, "op {i}");
        }
        assert!(c.compact.is_empty(), "a line beyond the records came");
        assert_eq!((c.tags, c.order), (wide.tags, wide.order));
    }
}

#[test]
fn no_allocate_leaves_the_cache_unchanged() {
    let mut c = l1();
    c.access(0, false, false);
    assert!(!c.access(0, false, false).hit);
}

#[test]
fn a_displaced_index_spreads_lines_a_set_count_apart_over_the_sets() {
    // 17 lines 30 sets apart (rows of a matrix whose pitch is the set count) in a 16-way cache
    // of 30 sets: indexed by line mod sets they share set 0, and the first is evicted by the
    // 17th; displaced by 7 sets per multiple of the set count, line 30k is in set 7k mod 30,
    // 17 different sets, and all 17 hit when read again.
    let geom = Geometry {
        size_bytes: 30 * 16 * 128,
        line_bytes: 128,
        sector_bytes: 32,
        associativity: 16,
    };
    for (displace, hits) in [(0, 0), (7, 17)] {
        let mut c = SectorCache::with_set_displacement(geom, displace);
        let rows: Vec<u64> = (0..17).map(|k| k * 30 * 128).collect();
        for &a in &rows {
            assert!(!c.access(a, false, true).hit);
        }
        let again = rows
            .iter()
            .filter(|&&a| c.access(a, false, true).hit)
            .count();
        assert_eq!(again, hits, "displacement {displace}");
    }
}

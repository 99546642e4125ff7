//! The caches private to one SM ([`SmCaches`]): L1 (loads along their path, stores under the
//! config's policy, by sector lists, runs or single lines) and the constant cache levels.

use super::{line_runs, LoadPath, Params};
use crate::config::StorePolicy;
use crate::memory::cache::{MissList, SectorCache};
use crate::memory::{coalesce, constant, Level, WarpAccess};

/// The caches private to one SM: L1 and the constant cache levels. The executor drives each SM's
/// caches on its own thread; what misses them goes to the shared [`L2Model`] in a second,
/// serial step, in a fixed order, so results do not depend on the thread count.
///
/// [`L2Model`]: super::L2Model
#[derive(Debug, Clone)]
pub struct SmCaches {
    pub(super) l1: SectorCache,
    pub(super) constant: Vec<constant::ConstCache>,
    /// The IDC's waves of LDCs shared across SMSPs ([`constant::merge`]).
    pub(super) merge: constant::merge::Merge,
    /// The IDC's fills in flight ([`constant::fills`]).
    pub(super) fills: constant::fills::PendingFills,
}

/// What a global or local access did in the SM's L1; the sectors that go on to L2.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct L1Outcome {
    /// Distinct sectors the request touched (L1 lookups).
    pub sectors: u32,
    /// Distinct 128-byte lines the request touched (tag lookups).
    pub lines: u32,
    /// Sectors found in L1.
    pub l1_hits: u32,
    /// Sectors that missed L1 (or bypassed it).
    pub l1_misses: u32,
    /// L1-sector addresses sent to L2 (read misses, or the sectors a store writes), ascending.
    pub to_l2: coalesce::Sectors,
}

/// What [`SmCaches::load_run_into`] found: the counts of an [`L1Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    /// Distinct 128-byte lines the run touched (tag lookups).
    pub lines: u32,
    /// Sectors found in L1.
    pub hits: u32,
}

/// What an indexed constant load did in the SM's constant caches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstLevelsOutcome {
    /// Requests: distinct addresses per broadcast group (`idc__requests.sum`).
    pub requests: u32,
    /// Requests that hit the nearest constant cache.
    pub hits: u32,
    /// Requests that missed the nearest constant cache.
    pub misses: u32,
    /// Requests that missed each constant cache level (index = level).
    pub level_misses: [u32; 3],
    /// Where each request was served from, in service order: a constant level, or [`Level::L2`]
    /// for one that missed every level and goes to L2, which finds whether L2 or DRAM serves it
    /// (the addresses are in `to_l2`, in the same order).
    pub served: smallvec::SmallVec<[Level; 32]>,
    /// Addresses of the requests that missed every constant level.
    pub to_l2: constant::Requests,
    /// Misses of the nearest level that merged into a fill of their line already pending
    /// ([`constant::fills`]): no request to the next level of their own.
    pub far_merged: u32,
}

impl SmCaches {
    /// L1 part of a global or local load along `path`.
    pub fn load(&mut self, p: &Params, access: &WarpAccess, path: LoadPath) -> L1Outcome {
        self.load_sectors(p, &coalesce::sectors(access, p.l1_sector_bytes), path)
    }

    /// As [`SmCaches::load`], for an access whose distinct L1 sectors ([`Params::sectors`]) the
    /// caller already has.
    pub fn load_sectors(&mut self, p: &Params, sectors: &[u64], path: LoadPath) -> L1Outcome {
        let mut o = L1Outcome::default();
        self.load_sectors_into(p, sectors, path, &mut o);
        o
    }

    /// As [`SmCaches::load_sectors`], into `o` (overwritten: the caller's buffer is not moved
    /// around).
    pub fn load_sectors_into(
        &mut self,
        p: &Params,
        sectors: &[u64],
        path: LoadPath,
        o: &mut L1Outcome,
    ) {
        let lines;
        let sectors =
            if matches!(path, LoadPath::L1 { .. }) && p.l1_transaction_bytes > p.l1_sector_bytes {
                lines = whole_lines(sectors, p.l1_line_bytes, p.l1_sector_bytes);
                &lines[..]
            } else {
                sectors
            };
        o.sectors = sectors.len() as u32;
        o.l1_hits = 0;
        o.l1_misses = 0;
        o.to_l2.clear();
        let LoadPath::L1 { evict_first } = path else {
            o.lines = coalesce::lines(sectors, p.l1_line_bytes) as u32;
            o.l1_misses = o.sectors;
            o.to_l2.extend_from_slice(sectors);
            return;
        };
        // One tag lookup per line: the sectors come sorted, so a line's are consecutive.
        (o.lines, o.l1_hits) = self.l1.read_sectors(sectors, evict_first, &mut o.to_l2);
        o.l1_misses = o.sectors - o.l1_hits;
    }

    /// [`SmCaches::load_sectors_into`] on a config with [`Params::sector_transactions`]: the
    /// sectors that go on to L2 are pushed straight onto `to_l2` (the block log's request
    /// list, with no buffer to copy them from). Returns the outcome's counts, as
    /// `load_sectors_into`'s.
    #[inline]
    pub fn load_sectors_to(
        &mut self,
        p: &Params,
        sectors: &[u64],
        path: LoadPath,
        to_l2: &mut impl MissList,
    ) -> RunOutcome {
        debug_assert!(p.sector_transactions());
        let (lines, hits) = match path {
            LoadPath::L1 { evict_first } => self.l1.read_sectors(sectors, evict_first, to_l2),
            LoadPath::L2Only => {
                self.l1.pass_on(sectors, to_l2);
                (coalesce::lines(sectors, p.l1_line_bytes) as u32, 0)
            }
        };
        RunOutcome { lines, hits }
    }

    /// [`SmCaches::load_sectors_into`] of the `n` consecutive L1 sectors from byte address
    /// `first` (a coalesced access's run), on a config with [`Params::sector_transactions`]:
    /// the sectors that go on to L2 are pushed straight onto `to_l2` (the block log's request
    /// list); `o.to_l2` is left alone. Returns the outcome's counts, as `load_sectors_into`'s.
    #[inline]
    pub fn load_run_into(
        &mut self,
        p: &Params,
        (first, n): (u64, u32),
        path: LoadPath,
        to_l2: &mut impl MissList,
    ) -> RunOutcome {
        debug_assert!(p.sector_transactions());
        let (lines, hits) = match path {
            LoadPath::L1 { evict_first } => self.l1.read_run(first, n, evict_first, to_l2),
            LoadPath::L2Only => {
                run_line_masks(p, (first, n), |line, mask| {
                    to_l2.push_line(line, mask, p.l1_shifts());
                });
                (run_lines(p, first, n), 0)
            }
        };
        RunOutcome { lines, hits }
    }

    /// [`SmCaches::store_sectors_into`] of the `n` consecutive L1 sectors from byte address
    /// `first`, on a config with [`Params::sector_transactions`]: every one is pushed onto
    /// `to_l2` (the block log's request list). Returns the lines the run touches.
    #[inline]
    pub fn store_run_into(
        &mut self,
        p: &Params,
        (first, n): (u64, u32),
        to_l2: &mut impl MissList,
    ) -> u32 {
        debug_assert!(p.sector_transactions());
        // Once per line, as `store_sectors_into`.
        run_line_masks(p, (first, n), |line, mask| {
            to_l2.push_line(line, mask, p.l1_shifts());
            match p.store_policy {
                StorePolicy::WriteThrough => {
                    self.l1.access_line(line, mask, false, false, false);
                }
                StorePolicy::WriteEvict => {
                    self.l1.invalidate(line << p.l1_line_shift());
                }
            }
        });
        run_lines(p, first, n)
    }

    /// [`SmCaches::load_run_into`] of a run whose sectors `mask` all lie in L1 line `line` (a
    /// coalesced warp's 128 bytes), on a config with [`Params::sector_transactions`]: one
    /// lookup, no loop over lines. Returns the sectors of `mask` L1 holds (none along
    /// [`LoadPath::L2Only`]); the others go on to L2.
    #[inline]
    pub fn load_line(&mut self, line: u64, mask: u32, path: LoadPath) -> u32 {
        match path {
            LoadPath::L1 { evict_first } => self.l1.read_line(line, mask, evict_first),
            LoadPath::L2Only => 0,
        }
    }

    /// [`SmCaches::store_run_into`]'s L1 part for a run whose sectors `mask` all lie in L1 line
    /// `line`: the line made the most recent if present (write-through), or dropped
    /// (write-evict). The sectors themselves go on to L2 (the caller pushes them).
    #[inline]
    pub fn store_line(&mut self, p: &Params, line: u64, mask: u32) {
        match p.store_policy {
            StorePolicy::WriteThrough => self.l1.write_through_line(line, mask),
            StorePolicy::WriteEvict => {
                self.l1.invalidate(line << p.l1_line_shift());
            }
        }
    }

    /// Pushes the ascending L1 sectors `sectors` (byte addresses) onto `list` as they are (a
    /// store's, which all go on to L2).
    #[inline]
    pub fn pass_on(&self, sectors: &[u64], list: &mut impl MissList) {
        self.l1.pass_on(sectors, list);
    }

    /// L1 part of a global or local store: update what L1 holds, or evict the line, as the
    /// config's store policy says; every written sector goes on to L2.
    pub fn store(&mut self, p: &Params, access: &WarpAccess) -> L1Outcome {
        self.store_sectors(p, &coalesce::sectors(access, p.l1_sector_bytes))
    }

    /// As [`SmCaches::store`], for an access whose distinct L1 sectors ([`Params::sectors`]) the
    /// caller already has.
    pub fn store_sectors(&mut self, p: &Params, sectors: &[u64]) -> L1Outcome {
        let mut o = L1Outcome::default();
        self.store_sectors_into(p, sectors, &mut o);
        o
    }

    /// As [`SmCaches::store_sectors`], into `o` (overwritten: the caller's buffer is not moved
    /// around).
    pub fn store_sectors_into(&mut self, p: &Params, sectors: &[u64], o: &mut L1Outcome) {
        o.sectors = sectors.len() as u32;
        o.lines = coalesce::lines(sectors, p.l1_line_bytes) as u32;
        o.l1_hits = 0;
        o.l1_misses = 0;
        // Fermi and Kepler write a line's sectors as one transaction of 1, 2 or 4 aligned
        // segments covering them all (ProfCUDA ch. 4, gpu-parameters.md "Global stores").
        o.to_l2.clear();
        if p.l1_transaction_bytes > p.l1_sector_bytes {
            o.to_l2.extend(covering_segments(
                sectors,
                p.l1_line_bytes,
                p.l1_sector_bytes,
            ));
        } else {
            o.to_l2.extend_from_slice(sectors);
        }
        // Once per line: a lookup without allocation only makes a present line the most
        // recent, and an invalidation drops the whole line, so the line's other sectors would
        // change nothing.
        for (line, mask, _) in line_runs(&o.to_l2, self.l1.line_map()) {
            match p.store_policy {
                StorePolicy::WriteThrough => {
                    self.l1.access_line(line, mask, false, false, false);
                }
                StorePolicy::WriteEvict => {
                    self.l1.invalidate(line << p.l1_line_bytes.trailing_zeros());
                }
            }
        }
    }

    /// Constant-cache part of an indexed constant load (LDC): one request per distinct address
    /// ([`constant::requests`], found here in the same order), each looked up level by level,
    /// filling the levels it missed.
    pub fn constant_load(&mut self, p: &Params, access: &WarpAccess) -> ConstLevelsOutcome {
        let mut o = ConstLevelsOutcome::default();
        self.constant_load_into(p, access, &mut o);
        o
    }

    /// As [`SmCaches::constant_load`], into `o` (overwritten: the caller's buffers are not moved
    /// around).
    #[inline]
    pub fn constant_load_into(
        &mut self,
        p: &Params,
        access: &WarpAccess,
        o: &mut ConstLevelsOutcome,
    ) {
        // The requests: at most one per lane.
        let mut w = constant::Walk::new();
        let n = constant::distinct_words(access, p.broadcast_lanes as usize, &mut w.words);
        self.constant_walk(w, n, o);
    }

    /// Forgets the IDC's waves ([`constant::merge`]): a wave of blocks starts, its cycles
    /// counted from its start.
    pub fn start_wave(&mut self) {
        self.merge.clear();
        self.fills.clear();
    }

    /// [`SmCaches::constant_load_into`] of an LDC that warp `who` issues: its requests to the
    /// lines that the leader of the LDC's wave looked up at the same positions, when the warp
    /// joins it ([`constant::merge::Merge::issue`]), hit the nearest level without a lookup
    /// (their recency is the leader's); the others are looked up as usual, in order.
    pub fn constant_load_issued_into(
        &mut self,
        p: &Params,
        access: &WarpAccess,
        who: constant::merge::Issue,
        o: &mut ConstLevelsOutcome,
    ) {
        let mut w = constant::Walk::new();
        let n = constant::distinct_words(access, p.broadcast_lanes as usize, &mut w.words);
        let shift = match self.constant.first() {
            Some(c) => c.line_shift(),
            None => return self.constant_walk(w, n, o),
        };
        let shared = self.merge.issue(who, &w.words, n, shift);
        let words = w.words;
        if shared == 0 {
            self.constant_walk(w, n, o);
        } else {
            self.constant_walk_shared(w, n, shared, o);
        }
        o.far_merged = 0;
        for (r, s) in o.served.iter().enumerate().take(n) {
            let t = who.cycle + r as u64 * who.spacing;
            if *s != Level::Cache(0) && self.fills.miss(words[r] >> shift, t, who.fill) {
                o.far_merged += 1;
            }
        }
    }

    /// [`SmCaches::constant_walk`] of an LDC whose requests `shared` (bit per request) hit by
    /// sharing a wave's fills ([`constant::merge`]): the others walk the levels, in order.
    fn constant_walk_shared(
        &mut self,
        w: constant::Walk,
        n: usize,
        shared: u32,
        o: &mut ConstLevelsOutcome,
    ) {
        // The requests not shared, in order, walk the levels on their own; then each request's
        // outcome goes back to its place.
        let mut rest = constant::Walk::new();
        let mut m = 0;
        for r in (0..n).filter(|&r| shared >> r & 1 == 0) {
            rest.words[m] = w.words[r];
            m += 1;
        }
        self.constant_walk(rest, m, o);
        let mut served = [Level::Cache(0); 32];
        let mut own = o.served.iter();
        for (r, s) in served.iter_mut().enumerate().take(n) {
            if shared >> r & 1 == 0 {
                *s = *own.next().expect("one outcome per request walked");
            }
        }
        let merged = (n - m) as u32;
        o.requests += merged;
        o.hits += merged;
        o.served = smallvec::SmallVec::from_buf_and_len(served, n);
    }

    /// The level-by-level walk of requests `w.words[..n]` into `o`.
    #[inline]
    fn constant_walk(&mut self, mut w: constant::Walk, n: usize, o: &mut ConstLevelsOutcome) {
        // Level by level: each level sees, in order, the requests every nearer level missed (a
        // miss fills each level it passes, and the levels share nothing), so each level's
        // lookups run in one loop. `w.pending[..left]`: the requests not served yet, in order.
        let mut left = n;
        o.requests = n as u32;
        (o.hits, o.level_misses) = (0, [0; 3]);
        o.to_l2.clear();
        // The two nearest levels in one walk over the requests.
        let mut skip = 0;
        if let [near, far, ..] = &mut self.constant[..] {
            let (missed, kept) = constant::ConstCache::read_two(near, far, &mut w, left);
            o.hits = (left - missed) as u32;
            o.level_misses[0] += missed as u32;
            o.level_misses[1] += kept as u32;
            (left, skip) = (kept, 2);
        } else {
            w.unserved();
        }
        for (k, cache) in self.constant.iter_mut().enumerate().skip(skip) {
            if left == 0 {
                break;
            }
            let kept = cache.read_each(&mut w, left, k as u8);
            if k == 0 {
                o.hits = (left - kept) as u32;
            }
            o.level_misses[k.min(2)] += kept as u32;
            left = kept;
        }
        o.misses = o.requests - o.hits;
        o.served = smallvec::SmallVec::from_buf_and_len(w.served, n);
        o.to_l2
            .extend(w.pending[..left].iter().map(|&r| w.words[usize::from(r)]));
    }
}

/// Per line, the sectors of the smallest aligned block of 1, 2, 4, ... sectors covering the
/// line's sectors in `sectors` (ascending).
fn covering_segments(sectors: &[u64], line_bytes: u32, sector_bytes: u32) -> Vec<u64> {
    let mut out = Vec::with_capacity(sectors.len() * 2);
    let mask = !(u64::from(line_bytes) - 1);
    let step = u64::from(sector_bytes);
    let mut i = 0;
    while i < sectors.len() {
        let line = sectors[i] & mask;
        let mut j = i;
        while j + 1 < sectors.len() && sectors[j + 1] & mask == line {
            j += 1;
        }
        let (first, last) = ((sectors[i] - line) / step, (sectors[j] - line) / step);
        let mut size = 1;
        while first / size != last / size {
            size *= 2;
        }
        let start = first / size * size;
        out.extend((start..start + size).map(|k| line + k * step));
        i = j + 1;
    }
    out
}

/// The L1 lines that the `n` (at least one) consecutive L1 sectors from byte address `first`
/// touch.
#[inline]
fn run_lines(p: &Params, first: u64, n: u32) -> u32 {
    let last = first + u64::from(n - 1) * u64::from(p.l1_sector_bytes);
    let shift = p.l1_line_bytes.trailing_zeros();
    ((last >> shift) - (first >> shift) + 1) as u32
}

/// Calls `f(line, mask)` for each L1 line the `n` consecutive L1 sectors from byte address
/// `first` touch, in order, with the mask of the run's sectors in it (closed form).
#[inline(always)]
fn run_line_masks(p: &Params, (first, n): (u64, u32), mut f: impl FnMut(u64, u32)) {
    let (line_shift, sector_shift) = p.l1_shifts();
    let per_line = line_shift - sector_shift;
    let mut s = first >> sector_shift;
    let end = s + u64::from(n);
    while s < end {
        let line = s >> per_line;
        let next = end.min((line + 1) << per_line);
        // The run's sectors of this line: `next - s` (1 to 32) from bit `s % per line` on.
        f(
            line,
            (u32::MAX >> (32 - (next - s) as u32)) << (s & ((1 << per_line) - 1)),
        );
        s = next;
    }
}

/// Every sector of the lines `sectors` (ascending) touch.
fn whole_lines(sectors: &[u64], line_bytes: u32, sector_bytes: u32) -> Vec<u64> {
    let mut out = Vec::with_capacity(sectors.len() * 4);
    let mask = !(u64::from(line_bytes) - 1);
    for &s in sectors {
        let line = s & mask;
        if out.last().is_some_and(|&l: &u64| l >= line) {
            continue;
        }
        out.extend(
            (0..u64::from(line_bytes / sector_bytes)).map(|k| line + k * u64::from(sector_bytes)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;
    use crate::memory::system::{LineRecords, MemorySystem};

    #[test]
    fn fermi_store_transactions_cover_1_2_or_4_segments() {
        let line = 0x1000;
        let seg = |k: u64| line + 32 * k;
        assert_eq!(covering_segments(&[seg(1)], 128, 32), vec![seg(1)]);
        assert_eq!(
            covering_segments(&[seg(0), seg(1)], 128, 32),
            vec![seg(0), seg(1)]
        );
        // Two segments in one 128-byte line but not in one aligned 64-byte half: all four.
        assert_eq!(
            covering_segments(&[seg(1), seg(2)], 128, 32),
            vec![seg(0), seg(1), seg(2), seg(3)]
        );
        assert_eq!(
            covering_segments(&[seg(3), seg(4)], 128, 32),
            vec![seg(3), seg(4)]
        );
    }

    #[test]
    fn runs_of_sectors_have_the_outcome_of_the_sector_lists() {
        // The reference: `load_sectors_into` / `store_sectors_into` of the run's sectors as a
        // list, on a copy of the same caches. Small and large L1s (sets kept in order, and
        // recency lists with a hash index), both store policies, both load paths; runs of 1 to 40
        // sectors at random sector offsets over few lines, so that hits, partial hits and
        // evictions all happen. Half the runs that lie in one line go through `load_line` /
        // `store_line` instead (the executor's one-line path).
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let base_cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        let mut x = 7u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for (ways, policy) in [
            (4, StorePolicy::WriteThrough),
            (256, StorePolicy::WriteThrough),
            (4, StorePolicy::WriteEvict),
            (256, StorePolicy::WriteEvict),
        ] {
            let mut cfg = base_cfg.clone();
            cfg.l1.associativity = ways;
            cfg.l1.size_bytes = u64::from(ways) * u64::from(cfg.l1.line_bytes) * 4;
            cfg.l1.store_policy = policy;
            let mem = MemorySystem::new(&cfg);
            let p = mem.params;
            assert!(p.sector_transactions());
            let sb = u64::from(p.l1_sector_bytes);
            let (mut fast, mut reference) = (mem.sms[0].clone(), mem.sms[0].clone());
            for _ in 0..20_000 {
                let lines = [8, 64, 4096][(next() % 3) as usize];
                let first = (next() % (lines * 4)) * sb;
                let n = (next() % 40 + 1) as u32;
                let sectors: Vec<u64> = (0..u64::from(n)).map(|k| first + k * sb).collect();
                let mut expect = L1Outcome::default();
                let mut got = vec![1u64];
                let per_line = u64::from(p.l1_line_bytes) / sb;
                let at = first / sb % per_line;
                let by_line = at + u64::from(n) <= per_line && next() % 2 == 0;
                let line = first >> p.l1_line_shift();
                let mask = if by_line {
                    (u32::MAX >> (32 - n)) << at
                } else {
                    0
                };
                if next() % 3 == 0 {
                    reference.store_sectors_into(&p, &sectors, &mut expect);
                    let lines = if by_line {
                        fast.store_line(&p, line, mask);
                        got.extend_from_slice(&sectors);
                        1
                    } else {
                        fast.store_run_into(&p, (first, n), &mut got)
                    };
                    assert_eq!(lines, expect.lines);
                    assert_eq!(expect.sectors, n);
                } else if by_line {
                    let path = match next() % 4 {
                        0 => LoadPath::L2Only,
                        1 => LoadPath::L1 { evict_first: true },
                        _ => LoadPath::L1 { evict_first: false },
                    };
                    reference.load_sectors_into(&p, &sectors, path, &mut expect);
                    let hits = fast.load_line(line, mask, path);
                    assert_eq!(hits & !mask, 0);
                    let missed = (0..u64::from(n)).filter(|k| hits >> (at + k) & 1 == 0);
                    got.extend(missed.map(|k| first + k * sb));
                    assert_eq!((1, hits.count_ones()), (expect.lines, expect.l1_hits));
                } else {
                    let path = match next() % 4 {
                        0 => LoadPath::L2Only,
                        1 => LoadPath::L1 { evict_first: true },
                        _ => LoadPath::L1 { evict_first: false },
                    };
                    reference.load_sectors_into(&p, &sectors, path, &mut expect);
                    let r = fast.load_run_into(&p, (first, n), path, &mut got);
                    assert_eq!((r.lines, r.hits), (expect.lines, expect.l1_hits));
                    assert_eq!(expect.sectors, n);
                }
                // What was there before stays; the run's part is the list's.
                assert_eq!(got[0], 1);
                assert_eq!(got[1..], expect.to_l2[..], "{first:x} {n}");
            }
            // The same contents: every line of the range looked up on both, with allocation.
            for s in 0..4096 * 4 {
                let mut a = L1Outcome::default();
                let mut b = L1Outcome::default();
                let path = LoadPath::L1 { evict_first: false };
                reference.load_sectors_into(&p, &[s * sb], path, &mut a);
                fast.load_sectors_into(&p, &[s * sb], path, &mut b);
                assert_eq!(a, b, "{s}");
            }
        }
    }

    #[test]
    fn sector_lists_pushed_to_l2_have_the_outcome_of_load_sectors_into() {
        // The reference: `load_sectors_into` on a copy of the same caches. Small and large L1s
        // (sets kept in order, and recency lists with a hash index), both load paths and
        // streamed fills; lists of 1 to 64 ascending sectors over few lines (scattered, a few
        // a line, whole lines), so that hits, partial hits and evictions all happen.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let base_cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        let mut x = 17u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for ways in [4, 256] {
            let mut cfg = base_cfg.clone();
            cfg.l1.associativity = ways;
            cfg.l1.size_bytes = u64::from(ways) * u64::from(cfg.l1.line_bytes) * 4;
            let mem = MemorySystem::new(&cfg);
            let p = mem.params;
            let sb = u64::from(p.l1_sector_bytes);
            let (mut fast, mut reference) = (mem.sms[0].clone(), mem.sms[0].clone());
            for _ in 0..20_000 {
                let span = [16, 256, 16384][(next() % 3) as usize] * 4;
                let mut sectors: Vec<u64> =
                    (0..1 + next() % 64).map(|_| next() % span * sb).collect();
                sectors.sort_unstable();
                sectors.dedup();
                let path = match next() % 4 {
                    0 => LoadPath::L2Only,
                    1 => LoadPath::L1 { evict_first: true },
                    _ => LoadPath::L1 { evict_first: false },
                };
                let mut expect = L1Outcome::default();
                reference.load_sectors_into(&p, &sectors, path, &mut expect);
                let mut got = vec![1u64];
                let r = fast.load_sectors_to(&p, &sectors, path, &mut got);
                assert_eq!((r.lines, r.hits), (expect.lines, expect.l1_hits));
                assert_eq!(got[0], 1);
                assert_eq!(got[1..], expect.to_l2[..], "{sectors:x?}");
            }
            // The same contents: every line of the range looked up on both.
            for s in 0..16384 * 4 {
                let (mut a, mut b) = (L1Outcome::default(), L1Outcome::default());
                let path = LoadPath::L1 { evict_first: false };
                reference.load_sectors_into(&p, &[s * sb], path, &mut a);
                fast.load_sectors_into(&p, &[s * sb], path, &mut b);
                assert_eq!(a, b, "{s}");
            }
        }
    }

    #[test]
    fn line_records_have_the_outcome_of_sector_lists() {
        // The reference: the same reads and stores pushing one address per sector (`Vec<u64>`)
        // on a copy of the same caches; the records pushed must be those sectors, a record per
        // line in order. Small and large L1s (sets kept in order, and recency lists with a hash
        // index), both load paths and streamed fills, both store policies; runs of 1 to 40
        // sectors and lists of 1 to 64 over few lines, so that hits, partial hits and evictions
        // all happen.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let base_cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        let mut x = 23u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for (ways, policy) in [
            (4, StorePolicy::WriteThrough),
            (256, StorePolicy::WriteThrough),
            (4, StorePolicy::WriteEvict),
            (256, StorePolicy::WriteEvict),
        ] {
            let mut cfg = base_cfg.clone();
            cfg.l1.associativity = ways;
            cfg.l1.size_bytes = u64::from(ways) * u64::from(cfg.l1.line_bytes) * 4;
            cfg.l1.store_policy = policy;
            let mem = MemorySystem::new(&cfg);
            let p = mem.params;
            // `LineRecords`' geometry (not `p.line_records()`, which a test running meanwhile
            // may turn off).
            assert!(p.sector_transactions() && p.l1_shifts() == (7, 5));
            let sb = u64::from(p.l1_sector_bytes);
            let (mut fast, mut reference) = (mem.sms[0].clone(), mem.sms[0].clone());
            for _ in 0..20_000 {
                let span = [8, 64, 4096][(next() % 3) as usize] * 4;
                let first = next() % span * sb;
                let n = (next() % 40 + 1) as u32;
                let run: Vec<u64> = (0..u64::from(n)).map(|k| first + k * sb).collect();
                let mut list: Vec<u64> = (0..1 + next() % 64).map(|_| next() % span * sb).collect();
                list.sort_unstable();
                list.dedup();
                let path = match next() % 4 {
                    0 => LoadPath::L2Only,
                    1 => LoadPath::L1 { evict_first: true },
                    _ => LoadPath::L1 { evict_first: false },
                };
                let (mut expect, mut records) = (vec![1u64], vec![1u64]);
                let got = &mut LineRecords(&mut records);
                match next() % 5 {
                    0 => {
                        let a = reference.store_run_into(&p, (first, n), &mut expect);
                        assert_eq!(fast.store_run_into(&p, (first, n), got), a);
                    }
                    1 => {
                        let mut o = L1Outcome::default();
                        reference.store_sectors_into(&p, &list, &mut o);
                        expect.extend_from_slice(&o.to_l2);
                        let mut q = L1Outcome::default();
                        fast.store_sectors_into(&p, &list, &mut q);
                        fast.pass_on(&q.to_l2, got);
                        assert_eq!(o, q);
                    }
                    2 => {
                        let a = reference.load_sectors_to(&p, &list, path, &mut expect);
                        assert_eq!(fast.load_sectors_to(&p, &list, path, got), a);
                    }
                    _ => {
                        let a = reference.load_run_into(&p, (first, n), path, &mut expect);
                        assert_eq!(fast.load_run_into(&p, (first, n), path, got), a);
                    }
                }
                // What was there before stays; each record is a distinct line, ascending.
                assert_eq!(records[0], 1);
                let lines: Vec<u64> = records[1..].iter().map(|&r| r >> 7).collect();
                assert!(lines.windows(2).all(|w| w[0] < w[1]), "{records:x?}");
                assert!(records[1..].iter().all(|&r| r & 15 != 0 && r & 127 < 16));
                let sectors: Vec<u64> = LineRecords::sectors(&records[1..]).collect();
                assert_eq!(sectors, expect[1..], "{first:x} {n} {run:x?} {list:x?}");
            }
            // The same contents: every line of the range looked up on both, with allocation.
            for s in 0..4096 * 4 {
                let (mut a, mut b) = (L1Outcome::default(), L1Outcome::default());
                let path = LoadPath::L1 { evict_first: false };
                reference.load_sectors_into(&p, &[s * sb], path, &mut a);
                fast.load_sectors_into(&p, &[s * sb], path, &mut b);
                assert_eq!(a, b, "{s}");
            }
        }
    }

    #[test]
    fn constant_loads_find_the_requests_in_the_order_constant_requests_gives() {
        // The reference: `constant::requests`, then each address looked up level by level, on a
        // copy of the same caches. Few distinct words and lines, so that duplicates, hits at each
        // level and evictions all happen; random masks; whole warps and half-warps.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/rtx3090.toml");
        let mut cfg = GpuConfig::load(std::path::Path::new(path)).unwrap();
        let mut x = 99u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for group in [32, 16] {
            cfg.constant.broadcast_lanes = group;
            let mem = MemorySystem::new(&cfg);
            let (mut fused, mut reference) = (mem.sms[0].clone(), mem.sms[0].clone());
            for _ in 0..3000 {
                let span = [64, 4096, 65536][(next() % 3) as usize];
                let mut a = WarpAccess::from_fn(4, |_| 0);
                for l in 0..32 {
                    a.addrs[l] = next() % span;
                }
                a.mask = (next() as u32) | (next() as u32) << 16;
                let mut expect = ConstLevelsOutcome::default();
                for w in constant::requests(&a, group) {
                    expect.requests += 1;
                    let level = (reference.constant.iter_mut().enumerate()).find_map(|(k, c)| {
                        let hit = c.read(w);
                        if !hit {
                            expect.level_misses[k.min(2)] += 1;
                        }
                        hit.then_some(Level::Cache(k as u8))
                    });
                    if level == Some(Level::Cache(0)) {
                        expect.hits += 1;
                    } else {
                        expect.misses += 1;
                    }
                    if level.is_none() {
                        expect.to_l2.push(w);
                    }
                    expect.served.push(level.unwrap_or(Level::L2));
                }
                assert_eq!(fused.constant_load(&mem.params, &a), expect);
            }
        }
    }

    #[test]
    fn whole_lines_expand_each_touched_line() {
        assert_eq!(
            whole_lines(&[0x1020, 0x1040, 0x1100], 128, 32),
            vec![0x1000, 0x1020, 0x1040, 0x1060, 0x1100, 0x1120, 0x1140, 0x1160]
        );
    }
}

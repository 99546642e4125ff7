//! The memory hierarchy of one GPU: per-SM L1 and constant caches, one L2 shared by all SMs,
//! and DRAM. Each method takes one warp-level access and returns what happened; nothing here
//! counts metrics or cycles.

use super::cache::{Geometry, LineOutcome, MissList, SectorCache, SixteenWays};
use super::{coalesce, constant, Level, WarpAccess};
use crate::config::{GpuConfig, StorePolicy};
use rayon::prelude::*;

/// How a global or local load uses L1 (PTX cache operators and the `dlcm` default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadPath {
    /// Cached in L1 (`.ca`, the read-only `.nc` path, `dlcm=ca`); `evict_first` for `.cs`/`.lu`.
    L1 {
        /// Filled lines are the first evicted.
        evict_first: bool,
    },
    /// L1 is looked up but never hit or filled (`.cg`, `.cv`, `dlcm=cg`).
    L2Only,
}

/// What one global (or local) warp access did in the hierarchy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobalOutcome {
    /// Distinct sectors the request touched (L1 lookups).
    pub sectors: u32,
    /// Distinct 128-byte lines the request touched (tag lookups).
    pub lines: u32,
    /// Sectors found in L1.
    pub l1_hits: u32,
    /// Sectors that missed L1 (or bypassed it).
    pub l1_misses: u32,
    /// Sectors sent from L1 to L2.
    pub l2_sectors: u32,
    /// Of those, L2 hits.
    pub l2_hits: u32,
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    /// Bytes written to DRAM (dirty L2 evictions).
    pub dram_write_bytes: u64,
    /// The farthest level any sector came from (`None` for a store: stores do not wait).
    pub level: Option<Level>,
}

/// What one indexed constant load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstOutcome {
    /// Requests: distinct addresses per broadcast group (`idc__requests.sum`).
    pub requests: u32,
    /// Requests that hit the nearest constant cache.
    pub hits: u32,
    /// Requests that missed the nearest constant cache.
    pub misses: u32,
    /// Requests that missed each constant cache level (index = level).
    pub level_misses: [u32; 3],
    /// Sectors read from L2 by requests that missed every constant level, and L2 hits of those.
    pub l2_sectors: u32,
    /// L2 hits among `l2_sectors`.
    pub l2_hits: u32,
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    /// Where each request was served from, in service order.
    pub served: Vec<Level>,
}

/// Cache parameters both halves of the hierarchy need, read once from the config.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    l1_sector_bytes: u32,
    l1_line_bytes: u32,
    /// Bytes an L1-cached load fetches per line: the sector, or the whole 128-byte line on
    /// Fermi and Kepler ("L1-cached loads move 128-byte lines", CUDA C Programming Guide 4.2 F.4.2).
    l1_transaction_bytes: u32,
    l2_sector_bytes: u32,
    /// What a store does to L1.
    store_policy: StorePolicy,
    /// Bytes an L2 read miss fetches from DRAM (`l2.fill_bytes`).
    l2_fill_bytes: u32,
    broadcast_lanes: u32,
    /// Global accesses carry a memory descriptor each warp loads once (compute capability 8.0
    /// and later), read once here rather than parsed from the config string per warp.
    descriptor: bool,
    /// Loads' and stores' L2 sectors go onto the block log as [`LineRecords`].
    line_records: bool,
}

impl Params {
    /// Whether global and local accesses carry a memory descriptor that each warp loads once
    /// (ULDC, an IDC request): compute capability 8.0 and later.
    #[inline]
    pub fn memory_descriptor(&self) -> bool {
        self.descriptor
    }

    /// Whether an L1 transaction is one sector (Maxwell on), so that a load's or a store's L2
    /// sectors are its own ([`SmCaches::load_run_into`], [`SmCaches::store_run_into`]) rather
    /// than whole lines or covering segments (Fermi, Kepler).
    #[inline]
    pub fn sector_transactions(&self) -> bool {
        self.l1_transaction_bytes <= self.l1_sector_bytes
    }

    /// Whether a global or local access's L2 sectors go onto the block log's request list as
    /// [`LineRecords`] (one per line) rather than one address per sector: on a config with
    /// [`Params::sector_transactions`] whose L1 lines are [`LineRecords`]' and whose L2 is
    /// [`L2Lines`]' (which looks the records up as they stand).
    #[inline]
    pub fn line_records(&self) -> bool {
        self.line_records
    }

    /// log2 of the L1 line size (a power of two): a byte address shifted right by it is its L1
    /// line number.
    #[inline]
    pub fn l1_line_shift(&self) -> u32 {
        self.l1_line_bytes.trailing_zeros()
    }

    /// log2 of the L1 line and sector sizes ([`MissList::push_line`]'s shifts).
    #[inline]
    pub fn l1_shifts(&self) -> (u32, u32) {
        (self.l1_line_shift(), self.l1_sector_bytes.trailing_zeros())
    }

    /// The distinct L1 sectors `access` touches, ascending (byte addresses).
    pub fn sectors(&self, access: &WarpAccess) -> coalesce::Sectors {
        coalesce::sectors(access, self.l1_sector_bytes)
    }

    /// As [`Params::sectors`], into `out`, for an access whose [`coalesce::contiguous`] run
    /// `run` the caller already has ([`coalesce::sectors_into`]).
    #[inline]
    pub fn sectors_into(&self, access: &WarpAccess, run: Option<u64>, out: &mut coalesce::Sectors) {
        coalesce::sectors_into(access, self.l1_sector_bytes, run, out)
    }
}

/// The caches private to one SM: L1 and the constant cache levels. The executor drives each SM's
/// caches on its own thread; what misses them goes to the shared [`L2Model`] in a second,
/// serial step, in a fixed order, so results do not depend on the thread count.
#[derive(Debug, Clone)]
pub struct SmCaches {
    l1: SectorCache,
    constant: Vec<constant::ConstCache>,
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

/// The sector counts of lines read or written, in sectors: what [`L2Outcome::add_line`] adds for
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
    l2: SectorCache,
    p: Params,
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

/// The block log's request list as line records ([`Params::line_records`]): per L1 line a
/// global or local access sends sectors of to L2, one entry, the line's first byte address
/// ORed with the mask of those sectors (lines of 128 bytes, four sectors of 32: the mask lies
/// below the address's bits). The L1's readers push a line's misses at once, and the L2 pass
/// takes each line as it stands ([`L2Lines::read_lines`]), with no sectors to group. A
/// request's records are its distinct lines, ascending.
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
pub struct L2Lines<'a> {
    sets: SixteenWays<'a>,
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
    #[inline(always)]
    pub fn read(&mut self, addrs: &[u64]) -> Option<LineCounts> {
        ascending(addrs, Self::SECTOR_SHIFT).then(|| self.lines::<false>(addrs, true))
    }

    /// [`L2Model::write`] of the sectors `written` (in any order, repeats allowed): their counts.
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

/// Tag state of the whole hierarchy: each SM's private caches and the shared L2.
#[derive(Debug, Clone)]
pub struct MemorySystem {
    /// Per SM.
    pub sms: Vec<SmCaches>,
    /// Shared by all SMs.
    pub l2: L2Model,
    /// Geometry both halves use.
    pub params: Params,
}

impl MemorySystem {
    /// Cold caches for `cfg`.
    pub fn new(cfg: &GpuConfig) -> Self {
        let l1g = Geometry {
            size_bytes: cfg.l1.size_bytes,
            line_bytes: cfg.l1.line_bytes,
            sector_bytes: cfg.l1.sector_bytes,
            associativity: cfg.l1.associativity,
        };
        let l2g = Geometry {
            size_bytes: cfg.l2.size_bytes,
            line_bytes: cfg.l2.line_bytes,
            sector_bytes: cfg.l2.sector_bytes,
            associativity: cfg.l2.associativity,
        };
        let const_levels: Vec<Geometry> = cfg
            .constant
            .cache
            .iter()
            .map(|c| Geometry {
                size_bytes: c.size_bytes,
                line_bytes: c.line_bytes,
                sector_bytes: c.line_bytes,
                associativity: c.associativity,
            })
            .collect();
        let params = Params {
            l1_sector_bytes: l1g.sector_bytes,
            l1_line_bytes: l1g.line_bytes,
            l1_transaction_bytes: cfg.l1.transaction_bytes,
            l2_sector_bytes: l2g.sector_bytes,
            l2_fill_bytes: cfg.l2.fill_bytes,
            store_policy: cfg.l1.store_policy,
            broadcast_lanes: cfg.constant.broadcast_lanes,
            descriptor: cfg.compute_capability().0 >= 8,
            line_records: cfg.l1.transaction_bytes <= l1g.sector_bytes
                && (l1g.line_bytes, l1g.sector_bytes)
                    == (
                        LineRecords::LINE_BYTES as u32,
                        LineRecords::SECTOR_BYTES as u32,
                    ),
        };
        // One SM's cold caches, copied for each SM (a copy costs less than setting up the
        // recency ranks of hundreds of ways again).
        let cold = SmCaches {
            l1: SectorCache::new(l1g),
            constant: const_levels
                .iter()
                .map(|g| constant::ConstCache::new(*g))
                .collect(),
        };
        // Copied on every core: the copies (some MB of tags and ranks) are most of the time.
        let sms = (0..cfg.sm.count)
            .into_par_iter()
            .map(|_| cold.clone())
            .collect();
        let mut l2 = L2Model {
            l2: SectorCache::new(l2g),
            p: params,
        };
        // Line records only where the L2 pass takes them as they stand ([`L2Lines`]).
        let line_records = params.line_records && l2.lines().is_some() && !tests_records_off();
        l2.p.line_records = line_records;
        MemorySystem {
            sms,
            l2,
            params: Params {
                line_records,
                ..params
            },
        }
    }

    /// A global or local load by SM `sm` along `path`, through L1 and L2.
    pub fn load(&mut self, sm: usize, access: &WarpAccess, path: LoadPath) -> GlobalOutcome {
        let l1 = self.sms[sm].load(&self.params, access, path);
        let mut t = L2Outcome::default();
        let mut level = Level::Cache(0);
        for &s in &l1.to_l2 {
            level = level.max(self.l2.read(s, &mut t));
        }
        GlobalOutcome::new(&l1, &t, Some(level))
    }

    /// A global or local store by SM `sm`: through L1 as the config's store policy says, to L2.
    pub fn store(&mut self, sm: usize, access: &WarpAccess) -> GlobalOutcome {
        let l1 = self.sms[sm].store(&self.params, access);
        let mut t = L2Outcome::default();
        self.l2.write(&l1.to_l2, &mut t);
        GlobalOutcome::new(&l1, &t, None)
    }

    /// An indexed constant load (LDC) by SM `sm`: one request per distinct address, each looked
    /// up level by level, filling the levels it missed, and L2 behind them.
    pub fn constant_load(&mut self, sm: usize, access: &WarpAccess) -> ConstOutcome {
        let c = self.sms[sm].constant_load(&self.params, access);
        let mut t = L2Outcome::default();
        let mut far = c.to_l2.iter();
        let served = c
            .served
            .iter()
            .map(|&s| match s {
                Level::L2 => self
                    .l2
                    .read(*far.next().expect("one address per miss"), &mut t),
                l => l,
            })
            .collect();
        ConstOutcome {
            requests: c.requests,
            hits: c.hits,
            misses: c.misses,
            level_misses: c.level_misses,
            l2_sectors: t.sectors,
            l2_hits: t.hits,
            dram_read_bytes: t.dram_read,
            served,
        }
    }
}

impl GlobalOutcome {
    /// Joins the L1 and L2 halves of one access.
    pub fn new(l1: &L1Outcome, l2: &L2Outcome, level: Option<Level>) -> Self {
        GlobalOutcome {
            sectors: l1.sectors,
            lines: l1.lines,
            l1_hits: l1.l1_hits,
            l1_misses: l1.l1_misses,
            l2_sectors: l2.sectors,
            l2_hits: l2.hits,
            dram_read_bytes: l2.dram_read,
            dram_write_bytes: l2.dram_write,
            level,
        }
    }
}

mod atomic;

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

/// Whether a test turned [`LineRecords`] off ([`tests::LINE_RECORDS_OFF`]), to compare the
/// launches with those of one address per sector.
#[cfg(test)]
fn tests_records_off() -> bool {
    tests::LINE_RECORDS_OFF.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(not(test))]
#[inline(always)]
fn tests_records_off() -> bool {
    false
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

/// The runs of consecutive `sectors` in one line (`line_of` as [`SectorCache::line_of`]): the
/// line, the mask of its sectors, and how many of `sectors` the run holds.
#[inline]
fn line_runs<'a>(
    sectors: &'a [u64],
    line_of: impl Fn(u64) -> (u64, u32) + 'a,
) -> impl Iterator<Item = (u64, u32, u32)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        let (line, mut mask) = line_of(*sectors.get(i)?);
        let start = i;
        i += 1;
        while let Some(&s) = sectors.get(i) {
            let (l, bit) = line_of(s);
            if l != line {
                break;
            }
            mask |= bit;
            i += 1;
        }
        Some((line, mask, (i - start) as u32))
    })
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

/// The L2 sectors covering one L1 sector (equal sizes: just itself).
fn l2_sectors_of(addr: u64, l1_sector: u32, l2_sector: u32) -> impl Iterator<Item = u64> {
    let base = addr & !(u64::from(l1_sector) - 1);
    let step = u64::from(l2_sector);
    let n = (l1_sector / l2_sector).max(1);
    (0..u64::from(n)).map(move |i| (base & !(step - 1)) + i * step)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every L2 request of global and local accesses as one address per sector (on all
    /// threads: the outcomes are the same either way, so that other tests running meanwhile are
    /// not disturbed).
    pub(super) static LINE_RECORDS_OFF: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Launches whose L2 requests are [`LineRecords`] give what they give with one address per
    /// sector: the same outputs, counters, per-PC statistics and timing, on loads and stores
    /// that are one run of sectors or not (offsets, strides, 16-byte elements, scattered
    /// lanes), cached in L1, read-only, bypassing it (`dlcm = "cg"`), and local memory; on an
    /// L1 of 256 ways in 4 sets (Ampere) and of 242 ways in 4 sets (Volta). The H200 (64-byte L2
    /// fills) and Tesla (no L2 lines) keep sector lists.
    #[test]
    fn launches_with_line_records_match_those_of_sector_lists() {
        use std::sync::atomic::Ordering::Relaxed;
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        // read_offset and write_offset with every global load bypassing L1.
        let dir = std::env::temp_dir().join(format!("sim-line-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut cg = vec![];
        for name in ["read_offset", "write_offset"] {
            let text = std::fs::read_to_string(format!("{root}/kernels/{name}.toml")).unwrap();
            let text = (text.replace("[[launch]]\n", "[[launch]]\ndlcm = \"cg\"\n"))
                .replace("ptx = \"", &format!("ptx = \"{root}/kernels/"));
            let path = dir.join(format!("{name}_cg.toml"));
            std::fs::write(&path, text).unwrap();
            cg.push(path.to_str().unwrap().to_string());
        }
        let local = format!("{root}/tests/fixtures/local_array.toml");
        let cases: [(&str, &[(&str, i64)]); 11] = [
            ("read_stride", &[("n", 3000)]),
            ("transpose_smem", &[("n", 64)]),
            ("transpose", &[("n", 64)]),
            ("read_offset", &[("n", 3000)]),
            ("write_offset", &[("n", 3000)]),
            ("read_ldg", &[("n", 3000)]),
            ("copy_float4", &[("n", 3000)]),
            ("pseudo_random", &[("n", 20000)]),
            (&cg[0], &[("n", 3000)]),
            (&cg[1], &[("n", 3000)]),
            (&local, &[]),
        ];
        for (gpu, records) in [
            ("rtx3090", true),
            ("v100", true),
            ("h200", false),
            ("c1060", false),
        ] {
            let path = format!("{root}/configs/{gpu}.toml");
            let cfg = GpuConfig::load(std::path::Path::new(&path)).unwrap();
            assert_eq!(
                MemorySystem::new(&cfg).params.line_records(),
                records,
                "{gpu}"
            );
            if !records {
                continue;
            }
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |on| {
                    LINE_RECORDS_OFF.store(on, Relaxed)
                });
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

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

    #[test]
    fn whole_lines_expand_each_touched_line() {
        assert_eq!(
            whole_lines(&[0x1020, 0x1040, 0x1100], 128, 32),
            vec![0x1000, 0x1020, 0x1040, 0x1060, 0x1100, 0x1120, 0x1140, 0x1160]
        );
    }
}

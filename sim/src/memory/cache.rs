//! A set-associative, sectored cache with LRU replacement.
//!
//! Used for L1 and L2 (128-byte lines of four 32-byte sectors: "L1 and L2 cache line size is 128
//! bytes compromised of 4 x 32B sectors", NVIDIA staff on the developer forum; a miss fetches only
//! the missing sectors); the read-only constant caches have their own tag store
//! ([`super::constant::ConstCache`]). The cache tracks tags only; data lives in the
//! [`super::MemoryImage`]. Set index = line number mod sets, or with a set displacement `p`
//! (`l2.set_displacement`) `(line mod sets + p * (line / sets)) mod sets`: real GPUs hash the
//! index and the hash is unpublished; prime displacement (Kharbutli et al., "Using Prime Numbers
//! for Cache Indexing to Eliminate Conflict Misses", HPCA 2004) spreads lines a power-of-two
//! stride apart over the sets as a hash does, and keeps (set, line / sets) naming the line.
//!
//! This file holds the cache ([`SectorCache`]), its outcomes and the reads of many sectors; its
//! tag stores are in their own files: `ordered` (sets kept in recency order, and the borrowed
//! views [`OrderedSets`] and [`SixteenWays`] the L2 pass loops with), `compact` (16-bit records
//! of sets that fit them) and `listed` (recency lists with a hash index, for many ways). The
//! tests of the cache as a whole are in `tests`.

mod compact;
mod listed;
mod ordered;

pub(crate) use ordered::to_front;
use ordered::{ordered_access, way_of, Order};
pub use ordered::{OrderedSets, SixteenWays};

/// Geometry of a cache, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Capacity in bytes (a multiple of `line_bytes * associativity`).
    pub size_bytes: u64,
    /// Line size in bytes (power of two).
    pub line_bytes: u32,
    /// Sector size in bytes (power of two dividing `line_bytes`, at most 32 sectors per line).
    pub sector_bytes: u32,
    /// Ways per set.
    pub associativity: u32,
}

impl Geometry {
    /// Number of sets (at least 1).
    pub fn sets(&self) -> u64 {
        (self.size_bytes / (u64::from(self.line_bytes) * u64::from(self.associativity))).max(1)
    }
}

/// The outcome of one sector lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// The sector was present.
    pub hit: bool,
    /// Dirty sectors of an evicted line that must be written to the next level.
    pub writeback_sectors: u32,
}

/// What [`SectorCache::access_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineOutcome {
    /// The sectors (mask) that were present.
    pub hits: u32,
    /// Dirty sectors of an evicted line that must be written to the next level.
    pub writeback_sectors: u32,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    valid: u32,
    dirty: u32,
}

impl Slot {
    /// A lookup of `sectors` that found this slot's line: the sectors present, which a lookup
    /// with `allocate` fills and a `write` marks dirty (without `allocate`, only those present).
    #[inline(always)]
    fn hit(&mut self, sectors: u32, write: bool, allocate: bool) -> LineOutcome {
        let hits = self.valid & sectors;
        if allocate {
            self.valid |= sectors;
            if write {
                self.dirty |= sectors;
            }
        } else if write {
            self.dirty |= hits;
        }
        LineOutcome {
            hits,
            writeback_sectors: 0,
        }
    }

    /// A miss filling this slot with `sectors` of a new line (dirty when `write`); the dirty
    /// sectors of the line it `held` are written back.
    #[inline(always)]
    fn refill(&mut self, held: bool, sectors: u32, write: bool) -> LineOutcome {
        let writeback_sectors = if held { self.dirty.count_ones() } else { 0 };
        self.valid = sectors;
        self.dirty = if write { sectors } else { 0 };
        LineOutcome {
            hits: 0,
            writeback_sectors,
        }
    }
}

/// Whether a line a miss of `sectors` filled becomes the most recent of its set: a streamed line
/// (`evict_first`) stays least recent, unless a later sector of the same request finds it (as a
/// lookup per sector would).
#[inline(always)]
fn becomes_recent(sectors: u32, evict_first: bool) -> bool {
    !evict_first || sectors.count_ones() > 1
}

const EMPTY: u64 = u64::MAX;
const NIL: u32 = u32::MAX;

/// A list a read's missed sectors are pushed onto, in order: a request's own
/// ([`super::coalesce::Sectors`]) or the block log's request list, as sector byte addresses
/// (`Vec<u64>`) or one record per line ([`super::system::LineRecords`]).
pub trait MissList {
    /// Whether the list keeps a line's sectors in one entry: a reader then pushes each line's
    /// missed sectors with one [`MissList::push_line`] rather than sector by sector.
    const LINES: bool = false;

    /// Pushes the sector at byte address `sector`.
    fn push_sector(&mut self, sector: u64);

    /// Pushes the sectors `mask` (not empty) of line number `line`, in order; `shifts`: log2 of
    /// the line's and the sector's bytes.
    #[inline(always)]
    fn push_line(&mut self, line: u64, mask: u32, (line_shift, sector_shift): (u32, u32)) {
        let mut m = mask;
        while m != 0 {
            let k = u64::from(m.trailing_zeros());
            self.push_sector((line << line_shift) + (k << sector_shift));
            m &= m - 1;
        }
    }
}

impl MissList for Vec<u64> {
    #[inline(always)]
    fn push_sector(&mut self, sector: u64) {
        self.push(sector);
    }

    #[inline(always)]
    fn push_line(&mut self, line: u64, mask: u32, (line_shift, sector_shift): (u32, u32)) {
        let a = line << line_shift;
        if mask == 15 && line_shift - sector_shift == 2 {
            // A whole line of four sectors (the shipped configs'): one copy of four, no loop.
            let step = 1 << sector_shift;
            self.extend_from_slice(&[a, a + step, a + 2 * step, a + 3 * step]);
            return;
        }
        let mut m = mask;
        while m != 0 {
            self.push(a + (u64::from(m.trailing_zeros()) << sector_shift));
            m &= m - 1;
        }
    }
}

impl MissList for super::coalesce::Sectors {
    #[inline(always)]
    fn push_sector(&mut self, sector: u64) {
        self.push(sector);
    }
}

/// Tag state of a sectored cache.
///
/// Recency, exact LRU either way: a cache of up to 16 ways keeps each set's recency order in one
/// word, way numbers in nibbles, most recent first (a hit moves its way's nibble to the front, a
/// fill takes the last one's way), so that no tag or sector state moves. A more associative one
/// finds lines through a hash index and keeps each set's ways in a recency list
/// (`listed::Listed`): a hit moves its way to the front, and the LRU victim is the list's last,
/// found without a search even for the hundreds of ways L1 is modelled with.
#[derive(Debug, Clone)]
pub struct SectorCache {
    geom: Geometry,
    sets: u64,
    /// log2 of the line and sector sizes (powers of two), so the hot path shifts, not divides.
    line_shift: u32,
    sector_shift: u32,
    /// Ways per set (at least 1).
    ways: usize,
    /// `sets - 1` when the set count is a power of two (a mask instead of a division).
    set_mask: Option<u64>,
    /// The set displacement: line `l` is in set `(l mod sets + displace * (l / sets)) mod sets`
    /// (0: `l mod sets`).
    displace: u64,
    /// Of an ordered cache, the line number each way holds ([`EMPTY`] if none), apart from the
    /// rest of the slot so a set's tags are compared in one or two host cache lines.
    tags: Vec<u64>,
    /// Of an ordered cache, the ways' sector state.
    slots: Vec<Slot>,
    /// Sets keep their recency order in `order`; else they are `listed`.
    ordered: bool,
    /// Per set of an ordered cache, its ways most recent first, a nibble each ([`Order`]).
    order: Vec<Order>,
    /// Of an ordered cache of 16 ways and lines of up to four sectors (the shipped configs' L2),
    /// its sets as one record each ([`compact`]), while `tags`, `slots` and `order` stay empty:
    /// until a line the records cannot hold moves the sets there ([`SectorCache::widen`]).
    compact: Vec<compact::Set>,
    /// The tag store of a cache that does not keep its sets in order (empty otherwise).
    listed: listed::Listed,
}

/// Caches with at most this many ways keep their sets in recency order; more associative ones use
/// recency lists and a hash index.
const ORDERED_WAYS: u32 = 16;

impl SectorCache {
    /// An empty (cold) cache.
    pub fn new(geom: Geometry) -> Self {
        Self::new_as(geom, geom.associativity <= ORDERED_WAYS)
    }

    /// An empty cache whose set index is displaced by `displace` sets per multiple of the set
    /// count (`l2.set_displacement`; 0: line number mod sets, as [`SectorCache::new`]).
    pub fn with_set_displacement(geom: Geometry, displace: u64) -> Self {
        let mut c = Self::new(geom);
        c.displace = displace % c.sets;
        c
    }

    /// Empties the cache (invalidates every line), as it was new.
    pub fn clear(&mut self) {
        *self = Self::with_set_displacement(self.geom, self.displace);
    }

    /// An empty cache of geometry `geom` whose sets are `ordered` (at most 16 ways), or ranked by
    /// recency lists; an ordered one in compact records where they hold its sets.
    fn new_as(geom: Geometry, ordered: bool) -> Self {
        let mut c = Self::new_wide(geom, ordered);
        if ordered && c.ways == 16 && c.line_shift - c.sector_shift <= 2 {
            c.tags = Vec::new();
            c.slots = Vec::new();
            c.order = Vec::new();
            c.compact = vec![compact::Set::new(); c.sets as usize];
        }
        c
    }

    /// [`SectorCache::new_as`], an ordered cache's sets in the general store (`tags`, `slots`,
    /// `order`) whatever its geometry.
    fn new_wide(geom: Geometry, ordered: bool) -> Self {
        let sets = geom.sets();
        let ways = geom.associativity.max(1);
        let mut c = SectorCache {
            geom,
            sets,
            line_shift: geom.line_bytes.trailing_zeros(),
            sector_shift: geom.sector_bytes.trailing_zeros(),
            ways: ways as usize,
            set_mask: sets.is_power_of_two().then(|| sets - 1),
            displace: 0,
            tags: Vec::new(),
            slots: Vec::new(),
            ordered,
            order: Vec::new(),
            compact: Vec::new(),
            listed: listed::Listed::new(0, ways as usize),
        };
        c.reset();
        c
    }

    /// Empties every set; way 0 of each is the most recent, the last way the next victim.
    fn reset(&mut self) {
        let (sets, ways) = (self.sets as usize, self.ways);
        if self.ordered {
            self.slots = vec![Slot { valid: 0, dirty: 0 }; sets * ways];
            self.tags = vec![EMPTY; sets * ways];
            self.order = vec![Order::new(ways); sets];
        } else {
            self.listed = listed::Listed::new(sets, ways);
        }
    }

    /// [`SectorCache::access_line`] on a cache whose sets are in recency order. `flags`:
    /// (write, allocate, evict_first).
    #[inline(always)]
    fn access_ordered(
        &mut self,
        line: u64,
        sectors: u32,
        flags: (bool, bool, bool),
    ) -> LineOutcome {
        let (set, q) = split_line(self.set_mask, self.sets, self.displace, line);
        if !self.compact.is_empty() {
            if q < u64::from(compact::Set::EMPTY) {
                return self.compact[set].access(q as u32, sectors, flags);
            }
            self.widen();
        }
        let parts = (&mut self.tags[..], &mut self.slots[..], &mut self.order[..]);
        ordered_access(parts, self.ways, set, line, sectors, flags)
    }

    /// [`SectorCache::access_ordered`] out of line: the lookups of [`SixteenWays`] that its
    /// compact records do not take (none in the shipped configs).
    #[cold]
    #[inline(never)]
    fn access_ordered_cold(
        &mut self,
        line: u64,
        sectors: u32,
        flags: (bool, bool, bool),
    ) -> LineOutcome {
        self.access_ordered(line, sectors, flags)
    }

    /// Moves the sets of a cache in compact records into the general store (a line the records
    /// cannot hold came), ways, sectors and recency as they were.
    #[cold]
    #[inline(never)]
    fn widen(&mut self) {
        let sets = std::mem::take(&mut self.compact);
        let n = sets.len() * self.ways;
        (self.tags, self.slots) = (Vec::with_capacity(n), Vec::with_capacity(n));
        self.order = Vec::with_capacity(sets.len());
        for (s, set) in sets.iter().enumerate() {
            for (w, &q) in set.tags.iter().enumerate() {
                let line = match q {
                    compact::Set::EMPTY => EMPTY,
                    _ => line_at(self.sets, self.displace, s as u64, u64::from(q)),
                };
                self.tags.push(line);
                self.slots.push(set.slot(w));
            }
            self.order.push(set.order);
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> Geometry {
        self.geom
    }

    /// The set line number `line` maps to.
    #[inline]
    fn set_of(&self, line: u64) -> usize {
        split_line(self.set_mask, self.sets, self.displace, line).0
    }

    /// The cache's parts for a caller's loop of many lookups ([`OrderedSets::access_line`]), if
    /// it keeps its sets in recency order (up to 16 ways: the shipped configs' L2).
    #[inline]
    pub fn ordered_sets(&mut self) -> Option<OrderedSets<'_>> {
        if !self.ordered {
            return None;
        }
        Some(OrderedSets { c: self })
    }

    /// Looks up the sector holding byte `addr`. On a miss with `allocate`, the sector is filled
    /// (evicting the set's least recently used line if the line is absent). `write` marks the
    /// sector dirty (write-back); a write miss with `allocate` fills without a fetch (byte masks).
    pub fn access(&mut self, addr: u64, write: bool, allocate: bool) -> Outcome {
        self.access_as(addr, write, allocate, false)
    }

    /// As [`SectorCache::access`]; with `evict_first` a line filled by a miss stays the least
    /// recently used of its set, the first to go (the `.cs` streaming and `.lu` last-use cache
    /// operators, PTX ISA "Cache Operators").
    pub fn access_as(
        &mut self,
        addr: u64,
        write: bool,
        allocate: bool,
        evict_first: bool,
    ) -> Outcome {
        let (line, bit) = self.line_of(addr);
        let o = self.access_line(line, bit, write, allocate, evict_first);
        Outcome {
            hit: o.hits != 0,
            writeback_sectors: o.writeback_sectors,
        }
    }

    /// The line number (`addr / line_bytes`) of byte `addr`, and its sector's bit in a line's
    /// sector mask.
    #[inline]
    pub fn line_of(&self, addr: u64) -> (u64, u32) {
        (self.line_map())(addr)
    }

    /// [`SectorCache::line_of`] as a function that does not borrow the cache (for a loop that
    /// groups sectors by line while it looks the lines up).
    #[inline]
    pub fn line_map(&self) -> impl Fn(u64) -> (u64, u32) + Copy {
        let (line_shift, sector_shift) = (self.line_shift, self.sector_shift);
        move |addr| {
            let line = addr >> line_shift;
            let bit = 1u32 << ((addr & ((1u64 << line_shift) - 1)) >> sector_shift);
            (line, bit)
        }
    }

    /// Looks up the sectors `sectors` (a mask, bit `i` = sector `i`) of line number `line` at
    /// once: the same outcome, sector for sector, as [`SectorCache::access_as`] on each of them in
    /// ascending order, for one tag lookup instead of one per sector.
    #[inline]
    pub fn access_line(
        &mut self,
        line: u64,
        sectors: u32,
        write: bool,
        allocate: bool,
        evict_first: bool,
    ) -> LineOutcome {
        self.access_line_inlined(line, sectors, write, allocate, evict_first)
    }

    /// [`SectorCache::access_line`], always inlined: for a caller's loop over the lines of a
    /// request (an L1 load's), where the call cost a fifth of a hit.
    #[inline(always)]
    pub(crate) fn access_line_inlined(
        &mut self,
        line: u64,
        sectors: u32,
        write: bool,
        allocate: bool,
        evict_first: bool,
    ) -> LineOutcome {
        if self.ordered {
            return self.access_ordered(line, sectors, (write, allocate, evict_first));
        }
        let set = self.set_of(line);
        (self.listed).access(set, line, sectors, (write, allocate, evict_first))
    }

    /// [`SectorCache::access_line`] of a read (allocating, not a write, `evict_first` for a
    /// streamed fill) of the sectors `sectors` of line `line`; returns those present. Out of
    /// line: the one lookup of a coalesced load, whose caller keeps few values live.
    #[inline(never)]
    pub fn read_line(&mut self, line: u64, sectors: u32, evict_first: bool) -> u32 {
        if !self.ordered {
            let set = self.set_of(line);
            return match evict_first {
                false => self.listed.read_one::<false>(set, line, sectors),
                true => self.listed.read_one::<true>(set, line, sectors),
            };
        }
        (self.access_line_inlined(line, sectors, false, true, evict_first)).hits
    }

    /// [`SectorCache::access_line`] of a write-through store's sectors `sectors` of line `line`
    /// (no allocation, nothing marked dirty): a present line becomes the most recent. Out of
    /// line, as [`SectorCache::read_line`].
    #[inline(never)]
    pub fn write_through_line(&mut self, line: u64, sectors: u32) {
        self.access_line_inlined(line, sectors, false, false, false);
    }

    /// Reads (looks up with allocation, as [`SectorCache::access_line`] does) the ascending
    /// sectors `sectors` (byte addresses), one lookup per line; pushes those that missed onto
    /// `missed`, in order. Returns (lines, sectors hit). One loop per request, the kind of
    /// recency store and set index decided once.
    #[inline]
    pub fn read_sectors(
        &mut self,
        sectors: &[u64],
        evict_first: bool,
        missed: &mut impl MissList,
    ) -> (u32, u32) {
        let line_of = self.line_map();
        let shifts = (self.line_shift, self.sector_shift);
        // The listed store's own loops index sets by line mod sets.
        if !self.ordered && self.displace == 0 && sectors.len() <= 64 {
            return (self.listed).read_sorted(sectors, (line_of, shifts), evict_first, missed);
        }
        let read = |line, mask| {
            self.access_line_inlined(line, mask, false, true, evict_first)
                .hits
        };
        read_runs(sectors, (line_of, shifts), read, missed)
    }

    /// [`SectorCache::read_sectors`] of the `n` consecutive sectors from byte address `first`
    /// (a coalesced access's run): the lines and their sector masks come in closed form, with no
    /// list of sectors to build and group; the missed sectors (byte addresses) are pushed onto
    /// `missed` in order (the block log's request list, without a buffer in between). Returns
    /// (lines, sectors hit).
    #[inline]
    pub fn read_run(
        &mut self,
        first: u64,
        n: u32,
        evict_first: bool,
        missed: &mut impl MissList,
    ) -> (u32, u32) {
        let (sector_shift, per_line) = (self.sector_shift, self.line_shift - self.sector_shift);
        let mut s = first >> sector_shift;
        let end = s + u64::from(n);
        let shifts = (self.line_shift, sector_shift);
        if !self.ordered && self.displace == 0 {
            return (self.listed).read_run((s, n), shifts, evict_first, missed);
        }
        let (mut lines, mut hit) = (0, 0);
        while s < end {
            let line = s >> per_line;
            let next = end.min((line + 1) << per_line);
            // The run's sectors of this line: `next - s` (1 to 32) from bit `s % per line` on.
            let mask = (u32::MAX >> (32 - (next - s) as u32)) << (s & ((1 << per_line) - 1));
            let hits = (self.access_line_inlined(line, mask, false, true, evict_first)).hits;
            lines += 1;
            hit += hits.count_ones();
            if hits != mask {
                missed.push_line(line, mask & !hits, shifts);
            }
            s = next;
        }
        (lines, hit)
    }

    /// Pushes the ascending sectors `sectors` (byte addresses) onto `list`, as they are: those
    /// of a load that bypasses the cache, or of a store.
    #[inline]
    pub fn pass_on<M: MissList>(&self, sectors: &[u64], list: &mut M) {
        if !M::LINES {
            sectors.iter().for_each(|&s| list.push_sector(s));
            return;
        }
        let (line_of, shifts) = (self.line_map(), (self.line_shift, self.sector_shift));
        let mut i = 0;
        while i < sectors.len() {
            let (j, line, mask) = line_group(sectors, i, &line_of);
            list.push_line(line, mask, shifts);
            i = j;
        }
    }

    /// Drops the line holding byte `addr`, if present (write-evict stores); returns whether it was.
    pub fn invalidate(&mut self, addr: u64) -> bool {
        let line = addr >> self.line_shift;
        let ways = self.ways;
        let set = self.set_of(line);
        if !self.compact.is_empty() {
            let q = split_line(self.set_mask, self.sets, self.displace, line).1;
            // A line the records cannot hold is in none of them.
            return q < u64::from(compact::Set::EMPTY) && self.compact[set].invalidate(q as u32);
        }
        if self.ordered {
            let base = set * ways;
            let tags = &mut self.tags[base..base + ways];
            let Some(w) = way_of(tags, line) else {
                return false;
            };
            // The emptied way becomes the least recent (the next victim).
            tags[w] = EMPTY;
            let s = &mut self.slots[base + w];
            (s.valid, s.dirty) = (0, 0);
            let order = &mut self.order[set];
            order.move_to_back(order.position(w), ways - 1);
            return true;
        }
        self.listed.invalidate(line, set)
    }
}

/// The set of line number `line` in a cache of `sets` sets displaced by `displace`
/// ([`SectorCache::with_set_displacement`]), and the line's quotient by the set count (which, with the set,
/// names the line: the tag of a compact record). One division gives both; a shift and a mask
/// when the count is a power of two (`set_mask`: `sets - 1`).
#[inline(always)]
fn split_line(set_mask: Option<u64>, sets: u64, displace: u64, line: u64) -> (usize, u64) {
    let (set, q) = match set_mask {
        Some(m) => (line & m, line >> m.count_ones()),
        None => (line % sets, line / sets),
    };
    if displace == 0 {
        return (set as usize, q);
    }
    let shifted = set + (q % sets) * displace;
    let set = match set_mask {
        Some(m) => shifted & m,
        None => shifted % sets,
    };
    (set as usize, q)
}

/// The line number that [`split_line`] splits into (`set`, `q`).
fn line_at(sets: u64, displace: u64, set: u64, q: u64) -> u64 {
    let shift = (q % sets) * displace % sets;
    q * sets + (set + sets - shift) % sets
}

/// The sectors of `sectors` (ascending) from index `i` that lie in `i`'s line: the end of their
/// run, the line and the sectors' bits in it (`line_of` as [`SectorCache::line_map`]).
#[inline(always)]
fn line_group(
    sectors: &[u64],
    i: usize,
    line_of: &impl Fn(u64) -> (u64, u32),
) -> (usize, u64, u32) {
    let (line, mut mask) = line_of(sectors[i]);
    let mut j = i + 1;
    while let Some(&s) = sectors.get(j) {
        let (l, bit) = line_of(s);
        if l != line {
            break;
        }
        mask |= bit;
        j += 1;
    }
    (j, line, mask)
}

/// [`SectorCache::read_sectors`] with `read(line, mask)` the lookup of a line's sectors
/// (returning those present), `line_of` as [`SectorCache::line_map`] and `shifts` its line's and
/// sector's log2 bytes.
#[inline(always)]
fn read_runs<M: MissList>(
    sectors: &[u64],
    (line_of, shifts): (impl Fn(u64) -> (u64, u32), (u32, u32)),
    mut read: impl FnMut(u64, u32) -> u32,
    missed: &mut M,
) -> (u32, u32) {
    let (mut lines, mut hit) = (0u32, 0u32);
    let mut i = 0;
    while i < sectors.len() {
        let (j, line, mask) = line_group(sectors, i, &line_of);
        lines += 1;
        let hits = read(line, mask);
        if hits == mask {
            hit += (j - i) as u32;
        } else if M::LINES {
            hit += hits.count_ones();
            missed.push_line(line, mask & !hits, shifts);
        } else {
            hit += split_hits(&sectors[i..j], hits, &line_of, missed);
        }
        i = j;
    }
    (lines, hit)
}

/// Of `sectors` (all in one line, whose sectors `hits` hit), pushes the missed ones onto `missed`
/// in order and returns how many hit.
#[inline(always)]
fn split_hits(
    sectors: &[u64],
    hits: u32,
    line_of: impl Fn(u64) -> (u64, u32),
    missed: &mut impl MissList,
) -> u32 {
    let mut hit = 0;
    for &s in sectors {
        if hits & line_of(s).1 != 0 {
            hit += 1;
        } else {
            missed.push_sector(s);
        }
    }
    hit
}

#[cfg(test)]
mod tests;

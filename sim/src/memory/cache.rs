//! A set-associative, sectored cache with LRU replacement.
//!
//! Used for L1 and L2 (128-byte lines of four 32-byte sectors: "L1 and L2 cache line size is 128
//! bytes compromised of 4 x 32B sectors", NVIDIA staff on the developer forum; a miss fetches only
//! the missing sectors); the read-only constant caches have their own tag store
//! ([`super::constant::ConstCache`]). The cache tracks tags only; data lives in the
//! [`super::MemoryImage`]. Set index = line number mod sets (real
//! GPUs hash the index; the hash is unpublished).

mod compact;
mod listed;

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
/// ([`listed::Listed`]): a hit moves its way to the front, and the LRU victim is the list's last,
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
        let (set, q) = split_line(self.set_mask, self.sets, line);
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
                    _ => u64::from(q) * self.sets + s as u64,
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
        set_index(self.set_mask, self.sets, line)
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
        if !self.ordered && sectors.len() <= 64 {
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
        if !self.ordered {
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
            let q = split_line(self.set_mask, self.sets, line).1;
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

/// The set of line number `line` in a cache of `sets` sets (`set_mask`: `sets - 1` when a power
/// of two, so that the index is a mask, not a division).
#[inline(always)]
fn set_index(set_mask: Option<u64>, sets: u64, line: u64) -> usize {
    match set_mask {
        Some(m) => (line & m) as usize,
        None => (line % sets) as usize,
    }
}

/// The set of line number `line` in a cache of `sets` sets, and the line's quotient by the set
/// count (which, with the set, names the line: the tag of a compact record). One division gives
/// both; a shift and a mask when the count is a power of two (`set_mask`, as [`set_index`]).
#[inline(always)]
fn split_line(set_mask: Option<u64>, sets: u64, line: u64) -> (usize, u64) {
    match set_mask {
        Some(m) => ((line & m) as usize, line >> m.count_ones()),
        None => ((line % sets) as usize, line / sets),
    }
}

/// [`SectorCache::access_line`] of `line` in set `set` of an ordered cache of `ways` ways: its
/// `tags`, `slots` and recency `order`, all sets'. `flags`: (write, allocate, evict_first).
#[inline(always)]
fn ordered_access(
    (tags, slots, order): (&mut [u64], &mut [Slot], &mut [Order]),
    ways: usize,
    set: usize,
    line: u64,
    sectors: u32,
    flags: (bool, bool, bool),
) -> LineOutcome {
    let base = set * ways;
    let tags = &mut tags[base..base + ways];
    let slots = &mut slots[base..base + ways];
    ordered_set_access(tags, slots, &mut order[set], line, sectors, flags)
}

/// [`ordered_access`] in one set: its ways' `tags` and `slots`, its recency `order`.
#[inline(always)]
fn ordered_set_access(
    tags: &mut [u64],
    slots: &mut [Slot],
    order: &mut Order,
    line: u64,
    sectors: u32,
    (write, allocate, evict_first): (bool, bool, bool),
) -> LineOutcome {
    if let Some(w) = way_of(tags, line) {
        // The way becomes the most recent.
        order.move_to_front(order.position(w));
        return slots[w].hit(sectors, write, allocate);
    }
    if !allocate {
        return LineOutcome::default();
    }
    // The least recent way is the victim.
    let last = tags.len() - 1;
    let w = order.at(last);
    let out = slots[w].refill(tags[w] != EMPTY, sectors, write);
    tags[w] = line;
    if becomes_recent(sectors, evict_first) {
        order.last_to_front(last);
    }
    out
}

/// The sets of a cache that keeps them in recency order, its parts borrowed apart and its set
/// index decided, for a loop of many lookups ([`SectorCache::ordered_sets`]).
pub struct OrderedSets<'a> {
    c: &'a mut SectorCache,
}

impl<'a> OrderedSets<'a> {
    /// [`SectorCache::access_line`].
    #[inline(always)]
    pub fn access_line(
        &mut self,
        line: u64,
        sectors: u32,
        write: bool,
        allocate: bool,
        evict_first: bool,
    ) -> LineOutcome {
        (self.c).access_ordered(line, sectors, (write, allocate, evict_first))
    }

    /// The sets as [`SixteenWays`], if they have 16 ways (the shipped configs' L2).
    #[inline]
    pub fn sixteen(self) -> Option<SixteenWays<'a>> {
        if self.c.ways != 16 {
            return None;
        }
        Some(SixteenWays {
            set_mask: self.c.set_mask,
            sets: std::num::NonZeroU64::new(self.c.sets)?,
            c: self.c,
        })
    }
}

/// The sets of a 16-way cache that keeps them in recency order (the shipped configs' L2), its set
/// index decided ([`OrderedSets::sixteen`]): for the L2 pass's loop over the lines of a block's
/// requests, which its compact records take inline (any other lookup out of line).
pub struct SixteenWays<'a> {
    c: &'a mut SectorCache,
    set_mask: Option<u64>,
    /// Not zero, so that the set index's division needs no check.
    sets: std::num::NonZeroU64,
}

impl SixteenWays<'_> {
    /// [`SectorCache::access_line`] of the sectors `sectors` of line number `line`, allocating
    /// and not streamed: a read, or a write when `WRITE`.
    #[inline(always)]
    pub fn access_line<const WRITE: bool>(&mut self, line: u64, sectors: u32) -> LineOutcome {
        let (set, q) = match self.set_mask {
            Some(m) => ((line & m) as usize, line >> m.count_ones()),
            None => ((line % self.sets) as usize, line / self.sets),
        };
        let flags = (WRITE, true, false);
        if q < u64::from(compact::Set::EMPTY) {
            if let Some(s) = self.c.compact.get_mut(set) {
                return s.access(q as u32, sectors, flags);
            }
        }
        self.c.access_ordered_cold(line, sectors, flags)
    }
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

/// The way of a set's `tags` that holds `line`, if one does. Tags of 16 ways (the shipped
/// configs' L2) are compared all at once, without a branch per way.
#[inline(always)]
fn way_of(tags: &[u64], line: u64) -> Option<usize> {
    if let Ok(sixteen) = <&[u64; 16]>::try_from(tags) {
        // A miss (most of the L2 pass's lookups) is told by the compares ORed together, before
        // the mask of the way that hit is put together.
        if !sixteen.iter().fold(false, |any, &t| any | (t == line)) {
            return None;
        }
        // Four ways at a time, written so that the compares become a few vector instructions
        // (a shift per way did not vectorise).
        let mut hits = 0u16;
        for q in sixteen.chunks_exact(4).rev() {
            let eq = |w: usize| u16::from(q[w] == line) << w;
            hits = hits << 4 | eq(0) | eq(1) | eq(2) | eq(3);
        }
        return (hits != 0).then(|| hits.trailing_zeros() as usize);
    }
    tags.iter().position(|&t| t == line)
}

/// The recency order of a set of up to 16 ways: way numbers a nibble each, position 0 (the low
/// nibble) the most recent; positions from the set's way count on are 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Order(u64);

impl Order {
    const ONES: u64 = 0x1111_1111_1111_1111;

    /// Ways `0..ways` in order, way 0 the most recent (as a cold set's ways are ranked).
    fn new(ways: usize) -> Self {
        Order((0..ways.min(16)).map(|w| (w as u64) << (4 * w)).sum())
    }

    /// The way at position `p`.
    #[inline(always)]
    fn at(self, p: usize) -> usize {
        (self.0 >> (4 * p) & 15) as usize
    }

    /// The position of way `w` (which the set has).
    #[inline(always)]
    fn position(self, w: usize) -> usize {
        // Nibbles equal to `w` become zero; the lowest zero nibble is found exactly (a borrow
        // only runs upwards from a zero nibble), and it lies below the unused positions.
        let x = self.0 ^ (w as u64).wrapping_mul(Self::ONES);
        let zero = x.wrapping_sub(Self::ONES) & !x & (Self::ONES << 3);
        (zero.trailing_zeros() / 4) as usize
    }

    /// Moves the way at position `p` to the front, the ways before it one place on.
    #[inline(always)]
    fn move_to_front(&mut self, p: usize) {
        let below = (1u64 << (4 * p)) - 1;
        let w = self.0 >> (4 * p) & 15;
        let above = self.0 & !(below | 15 << (4 * p));
        self.0 = above | (self.0 & below) << 4 | w;
    }

    /// [`Order::move_to_front`] of the way at position `last`, the set's last: a shift, as the
    /// positions after it are 0 (a miss's refill, the L2 pass's common case).
    #[inline(always)]
    fn last_to_front(&mut self, last: usize) {
        let w = self.0 >> (4 * last);
        let kept = u64::MAX >> (60 - 4 * last);
        self.0 = (self.0 << 4 & kept) | w;
    }

    /// Moves the way at position `p` to position `last` (the set's last), the ways after it one
    /// place back.
    #[inline(always)]
    fn move_to_back(&mut self, p: usize, last: usize) {
        let below = (1u64 << (4 * p)) - 1;
        let upto_last = u64::MAX >> (60 - 4 * last);
        let w = self.0 >> (4 * p) & 15;
        let after = self.0 & upto_last & !(below | 15 << (4 * p));
        self.0 = (self.0 & below) | after >> 4 | w << (4 * last);
    }
}

/// Moves the last element of `v` to the front, the others one place on (`rotate_right(1)`,
/// written out so that it is inlined whatever the optimiser decides for the library's rotation).
#[inline(always)]
pub(crate) fn to_front<T: Copy>(v: &mut [T]) {
    // Up to four elements (the constant caches' sets) in registers; longer runs by one copy.
    match *v {
        [] | [_] => {}
        [ref mut a, ref mut b] => std::mem::swap(a, b),
        [a, b, c] => v.copy_from_slice(&[c, a, b]),
        [a, b, c, d] => v.copy_from_slice(&[d, a, b, c]),
        _ => {
            let last = v[v.len() - 1];
            v.copy_within(..v.len() - 1, 1);
            v[0] = last;
        }
    }
}

#[cfg(test)]
mod tests {
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
    }

    impl Naive {
        fn new(sets: usize, ways: usize) -> Self {
            Naive {
                sets: vec![vec![(EMPTY, 0, 0); ways]; sets],
                ways,
            }
        }

        fn access(&mut self, addr: u64, write: bool, allocate: bool, evict_first: bool) -> Outcome {
            let (line, bit) = (addr >> 7, 1u32 << (addr >> 5 & 3));
            let n = self.sets.len() as u64;
            let set = &mut self.sets[(line % n) as usize];
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
            let n = self.sets.len() as u64;
            let set = &mut self.sets[(line % n) as usize];
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
        // cache, so that hits, evictions, streamed fills and invalidations all happen.
        for (ways, ordered, squeeze) in [
            (8, true, false),
            (16, true, false),
            (1, false, false),
            (2, false, true),
            (8, false, false),
            (64, false, false),
            (64, false, true),
            (256, false, false),
            (256, false, true),
        ] {
            let geom = Geometry {
                size_bytes: 3 * ways * 128,
                line_bytes: 128,
                sector_bytes: 32,
                associativity: ways as u32,
            };
            let mut c = SectorCache::new_as(geom, ordered);
            let mut naive = Naive::new(3, ways as usize);
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
                        "{ways} ways, ordered {ordered}, squeezed {squeeze}: op {i} {addr:#x} {write} {allocate} {evict_first}"
                    );
                }
            }
        }
    }

    #[test]
    fn sectors_read_by_line_have_the_outcome_of_reads_by_sector() {
        // An L1 of 4 sets x 256 ways (indexed, listed) and one of 16 ways (ordered); requests
        // of a few sorted, distinct sectors, the reference looks them up one by one.
        for ways in [256u32, 16] {
            let geom = Geometry {
                size_bytes: 4 * u64::from(ways) * 128,
                line_bytes: 128,
                sector_bytes: 32,
                associativity: ways,
            };
            let mut c = SectorCache::new(geom);
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
    fn sixteen_way_sets_look_lines_up_as_access_line_does() {
        // 4 sets (a mask) and 3 (a division), in compact records and in the general store;
        // reads and writes of a few sectors of lines that compete for the sets, so that hits,
        // dirty evictions and refills all happen. The reference: the same cache in the general
        // store looked up with `access_line`.
        for (sets, widened) in [(4u64, false), (3, false), (4, true), (3, true)] {
            let geom = Geometry {
                size_bytes: sets * 16 * 128,
                line_bytes: 128,
                sector_bytes: 32,
                associativity: 16,
            };
            let mut c = SectorCache::new(geom);
            assert!(c.ordered && !c.compact.is_empty());
            if widened {
                c.widen();
            }
            assert!(SectorCache::new(Geometry {
                associativity: 8,
                ..geom
            })
            .ordered_sets()
            .unwrap()
            .sixteen()
            .is_none());
            let mut reference = SectorCache::new_wide(geom, true);
            let mut x = 2024u64;
            for _ in 0..20_000 {
                x = crate::testing::lcg(x);
                let line = (x >> 20) % (16 * sets * 6);
                let mask = (x >> 40) as u32 & 15 | 1 << (x >> 50 & 3);
                let write = x & 1 == 1;
                let expect = reference.access_line(line, mask, write, true, false);
                let mut ways = c.ordered_sets().unwrap().sixteen().unwrap();
                let got = if write {
                    ways.access_line::<true>(line, mask)
                } else {
                    ways.access_line::<false>(line, mask)
                };
                assert_eq!(got, expect, "{sets} sets, line {line}, mask {mask:b}");
            }
            assert_eq!(c.compact.is_empty(), widened);
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
        // throughout.
        for sets in [3u64, 4] {
            let geom = Geometry {
                size_bytes: sets * 16 * 128,
                line_bytes: 128,
                sector_bytes: 32,
                associativity: 16,
            };
            let mut c = SectorCache::new(geom);
            let mut wide = SectorCache::new_wide(geom, true);
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
    fn recency_orders_move_ways_by_nibbles() {
        let mut o = Order::new(4); // ways 0, 1, 2, 3, most recent first
        assert_eq!(o, Order(0x3210));
        assert_eq!((o.position(0), o.position(2), o.at(3)), (0, 2, 3));
        o.move_to_front(2);
        assert_eq!(o, Order(0x3102));
        o.move_to_back(0, 3);
        assert_eq!(o, Order(0x2310));
        o.move_to_front(3);
        assert_eq!(o, Order(0x3102));
        let mut o = Order::new(16);
        assert_eq!(o, Order(0xfedc_ba98_7654_3210));
        o.move_to_front(15);
        assert_eq!(o, Order(0xedcb_a987_6543_210f));
        assert_eq!(o.position(0xf), 0);
        o.move_to_back(0, 15);
        assert_eq!(o, Order(0xfedc_ba98_7654_3210));
    }

    #[test]
    fn the_last_way_moves_to_the_front_as_any_way_does() {
        // Every set size, orders shuffled by random moves both ways.
        let mut x = 5u64;
        for ways in 1..=16 {
            let mut o = Order::new(ways);
            for _ in 0..2000 {
                x = crate::testing::lcg(x);
                let p = (x >> 33) as usize % ways;
                if x >> 63 == 1 {
                    o.move_to_front(p);
                } else {
                    o.move_to_back(p, ways - 1);
                }
                let (mut a, mut b) = (o, o);
                a.last_to_front(ways - 1);
                b.move_to_front(ways - 1);
                assert_eq!(a, b, "{ways} ways, {o:?}");
            }
        }
    }

    #[test]
    fn no_allocate_leaves_the_cache_unchanged() {
        let mut c = l1();
        c.access(0, false, false);
        assert!(!c.access(0, false, false).hit);
    }
}

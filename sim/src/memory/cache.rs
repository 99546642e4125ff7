//! A set-associative, sectored cache with LRU replacement.
//!
//! Used for L1 and L2 (128-byte lines of four 32-byte sectors: "L1 and L2 cache line size is 128
//! bytes compromised of 4 x 32B sectors", NVIDIA staff on the developer forum; a miss fetches only
//! the missing sectors); the read-only constant caches have their own tag store
//! ([`super::constant::ConstCache`]). The cache tracks tags only; data lives in the
//! [`super::MemoryImage`]. Set index = line number mod sets (real
//! GPUs hash the index; the hash is unpublished).

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
    /// Neighbours in the set's recency list (slot indices; [`NIL`] at the ends).
    prev: u32,
    next: u32,
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

/// Tag state of a sectored cache.
///
/// Recency, exact LRU either way: a cache of up to 16 ways keeps each set's ways
/// in recency order, most recent first (a hit moves its way to the front, a fill takes the last
/// way): a few contiguous words per set, no pointers. A more associative one keeps each set's
/// ways in a doubly linked recency list, most recent first, and finds lines through a hash index,
/// so both a hit and the choice of the LRU victim cost O(1) even for the hundreds of ways L1 is
/// modelled with.
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
    /// The line number each way holds ([`EMPTY`] if none), apart from the rest of the slot so a
    /// set's tags are scanned in one or two host cache lines.
    tags: Vec<u64>,
    slots: Vec<Slot>,
    /// Most and least recently used slot of each set.
    head: Vec<u32>,
    tail: Vec<u32>,
    /// line number → slot index for highly associative caches, so a lookup costs one hash probe;
    /// small sets are scanned, which is faster.
    index: Option<LineIndex>,
    /// Sets keep their ways in recency order (`tags` and `slots` move together; the lists are
    /// unused).
    ordered: bool,
}

/// Caches with at most this many ways keep their sets in recency order; more associative ones use
/// recency lists and a hash index.
const ORDERED_WAYS: u32 = 16;

impl SectorCache {
    /// An empty (cold) cache.
    pub fn new(geom: Geometry) -> Self {
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
            head: Vec::new(),
            tail: Vec::new(),
            index: (ways > ORDERED_WAYS)
                .then(|| LineIndex::new(geom.sets() as usize * ways as usize)),
            ordered: ways <= ORDERED_WAYS,
        };
        c.reset();
        c
    }

    /// Empties every set and links its ways in order.
    fn reset(&mut self) {
        let ways = self.geom.associativity.max(1);
        let n = self.sets as usize * ways as usize;
        self.slots = (0..n as u32)
            .map(|i| {
                let w = i % ways;
                Slot {
                    valid: 0,
                    dirty: 0,
                    prev: if w == 0 { NIL } else { i - 1 },
                    next: if w + 1 == ways { NIL } else { i + 1 },
                }
            })
            .collect();
        self.tags = vec![EMPTY; n];
        self.head = (0..self.sets as u32).map(|s| s * ways).collect();
        self.tail = (0..self.sets as u32).map(|s| s * ways + ways - 1).collect();
        if let Some(index) = &mut self.index {
            index.clear();
        }
    }

    /// [`SectorCache::access_line`] on a cache whose sets are in recency order.
    #[inline(always)]
    fn access_ordered(
        &mut self,
        set: usize,
        line: u64,
        sectors: u32,
        write: bool,
        allocate: bool,
        evict_first: bool,
    ) -> LineOutcome {
        let base = set * self.ways;
        let tags = &mut self.tags[base..base + self.ways];
        let slots = &mut self.slots[base..base + self.ways];
        if let Some(p) = tags.iter().position(|&t| t == line) {
            // The way becomes the most recent.
            to_front(&mut tags[..=p]);
            to_front(&mut slots[..=p]);
            return slots[0].hit(sectors, write, allocate);
        }
        if !allocate {
            return LineOutcome::default();
        }
        // The least recent way is the victim.
        let last = self.ways - 1;
        let out = slots[last].refill(tags[last] != EMPTY, sectors, write);
        tags[last] = line;
        if becomes_recent(sectors, evict_first) {
            to_front(tags);
            to_front(slots);
        }
        out
    }

    /// The geometry.
    pub fn geometry(&self) -> Geometry {
        self.geom
    }

    /// The set line number `line` maps to.
    #[inline]
    fn set_of(&self, line: u64) -> usize {
        match self.set_mask {
            Some(m) => (line & m) as usize,
            None => (line % self.sets) as usize,
        }
    }

    /// Moves slot `i` of `set` to the front of its recency list.
    #[inline(always)]
    fn touch(&mut self, set: usize, i: u32) {
        if self.head[set] == i {
            return;
        }
        let Slot { prev, next, .. } = self.slots[i as usize];
        // `i` is not the head, so it has a predecessor.
        self.slots[prev as usize].next = next;
        if next == NIL {
            self.tail[set] = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
        let old = self.head[set];
        self.slots[i as usize].prev = NIL;
        self.slots[i as usize].next = old;
        self.slots[old as usize].prev = i;
        self.head[set] = i;
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
        let ways = self.ways;
        let set = self.set_of(line);
        if self.ordered {
            return self.access_ordered(set, line, sectors, write, allocate, evict_first);
        }
        let base = set * ways;
        let found = match &self.index {
            Some(index) => index.find(&self.tags, line),
            None => self.tags[base..base + ways]
                .iter()
                .position(|&t| t == line)
                .map(|i| (base + i) as u32),
        };
        if let Some(i) = found {
            self.touch(set, i);
            return self.slots[i as usize].hit(sectors, write, allocate);
        }
        if !allocate {
            return LineOutcome::default();
        }
        let victim = self.tail[set];
        let old_line = self.tags[victim as usize];
        if let (Some(index), true) = (&mut self.index, old_line != EMPTY) {
            index.remove(&self.tags, old_line);
        }
        let out = self.slots[victim as usize].refill(old_line != EMPTY, sectors, write);
        self.tags[victim as usize] = line;
        if becomes_recent(sectors, evict_first) {
            self.touch(set, victim);
        }
        if let Some(index) = &mut self.index {
            index.insert(&self.tags, victim);
        }
        out
    }

    /// Drops the line holding byte `addr`, if present (write-evict stores); returns whether it was.
    pub fn invalidate(&mut self, addr: u64) -> bool {
        let line = addr >> self.line_shift;
        let ways = self.ways;
        let set = self.set_of(line);
        let base = set * ways;
        if self.ordered {
            let tags = &mut self.tags[base..base + ways];
            let Some(p) = tags.iter().position(|&t| t == line) else {
                return false;
            };
            // The emptied way becomes the least recent (the next victim).
            tags[p] = EMPTY;
            tags[p..].rotate_left(1);
            let slots = &mut self.slots[base..base + ways];
            (slots[p].valid, slots[p].dirty) = (0, 0);
            slots[p..].rotate_left(1);
            return true;
        }
        let found = match &mut self.index {
            Some(index) => index.remove(&self.tags, line),
            None => self.tags[base..base + ways]
                .iter()
                .position(|&t| t == line)
                .map(|i| (base + i) as u32),
        };
        let Some(i) = found else { return false };
        self.tags[i as usize] = EMPTY;
        let s = &mut self.slots[i as usize];
        (s.valid, s.dirty) = (0, 0);
        // The empty way becomes the next victim: move it to the tail of the recency list.
        let tail = self.tail[set];
        if tail != i {
            self.touch(set, i);
            // After touch `i` is the head; rotate it to the tail by unlinking and appending.
            let next = self.slots[i as usize].next;
            self.head[set] = next;
            self.slots[next as usize].prev = NIL;
            self.slots[i as usize].next = NIL;
            self.slots[i as usize].prev = tail;
            self.slots[tail as usize].next = i;
            self.tail[set] = i;
        }
        true
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

/// An open-addressing hash index from line number to slot, for caches with hundreds of ways. It
/// stores slot numbers only (4 bytes a bucket) and reads the line from the cache's tags: the
/// lookups of a scattered access miss the host's caches, so a small table is a fast one.
#[derive(Debug, Clone)]
struct LineIndex {
    /// Slot number per bucket, [`NIL`] when empty; a power of two at least twice the slots.
    table: Vec<u32>,
}

impl LineIndex {
    fn new(slots: usize) -> Self {
        LineIndex {
            table: vec![NIL; (slots * 2).next_power_of_two().max(2)],
        }
    }

    fn clear(&mut self) {
        self.table.fill(NIL);
    }

    #[inline]
    fn home(&self, line: u64) -> usize {
        // Fibonacci hashing: the high bits of the product mix every bit of the line number.
        (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (self.table.len() - 1)
    }

    /// The bucket holding `line`, if indexed.
    #[inline]
    fn bucket(&self, tags: &[u64], line: u64) -> Option<usize> {
        let mask = self.table.len() - 1;
        let mut h = self.home(line);
        loop {
            let s = self.table[h];
            if s == NIL {
                return None;
            }
            if tags[s as usize] == line {
                return Some(h);
            }
            h = (h + 1) & mask;
        }
    }

    /// The slot holding `line`, if any.
    #[inline]
    fn find(&self, tags: &[u64], line: u64) -> Option<u32> {
        self.bucket(tags, line).map(|h| self.table[h])
    }

    /// Indexes `slot` under the line `tags[slot]` holds (not indexed yet).
    fn insert(&mut self, tags: &[u64], slot: u32) {
        let mask = self.table.len() - 1;
        let mut h = self.home(tags[slot as usize]);
        while self.table[h] != NIL {
            h = (h + 1) & mask;
        }
        self.table[h] = slot;
    }

    /// Removes `line` (still in `tags`) and returns its slot, if indexed, shifting later entries
    /// of its probe run back so no lookup stops early at the hole.
    fn remove(&mut self, tags: &[u64], line: u64) -> Option<u32> {
        let mask = self.table.len() - 1;
        let mut i = self.bucket(tags, line)?;
        let found = self.table[i];
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.table[j];
            if s == NIL {
                break;
            }
            let k = self.home(tags[s as usize]);
            // The entry at `j` may move to `i` unless its home lies cyclically in (i, j].
            let stays = if i <= j {
                i < k && k <= j
            } else {
                i < k || k <= j
            };
            if !stays {
                self.table[i] = s;
                i = j;
            }
        }
        self.table[i] = NIL;
        Some(found)
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
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
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
    fn the_line_index_finds_what_a_scan_of_the_set_finds() {
        // 2 sets x 64 ways: indexed; the same cache scanning its sets is the reference. Lines
        // come from a small range so that hits, evictions, invalidations and probe-run deletions
        // all happen.
        let geom = Geometry {
            size_bytes: 2 * 64 * 128,
            line_bytes: 128,
            sector_bytes: 32,
            associativity: 64,
        };
        let mut indexed = SectorCache::new(geom);
        assert!(indexed.index.is_some());
        let mut scanned = SectorCache::new(geom);
        scanned.index = None;
        same_outcomes(&mut indexed, &mut scanned, 12345, 400, 7, false);
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
        let mut listed = SectorCache::new(geom);
        listed.ordered = false;
        same_outcomes(&mut ordered, &mut listed, 777, 120, 5, true);
    }

    #[test]
    fn no_allocate_leaves_the_cache_unchanged() {
        let mut c = l1();
        c.access(0, false, false);
        assert!(!c.access(0, false, false).hit);
    }
}

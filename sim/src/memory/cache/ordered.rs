//! The tag store that keeps each set's ways in recency order (up to [`ORDERED_WAYS`](super::ORDERED_WAYS) ways): a
//! line's lookup in one set, the borrowed views of such a cache that the L2 pass loops with
//! ([`OrderedSets`], [`SixteenWays`]), and the recency order of a set as nibbles ([`Order`]).

use super::{becomes_recent, compact, LineOutcome, SectorCache, Slot, EMPTY};

/// [`SectorCache::access_line`] of `line` in set `set` of an ordered cache of `ways` ways: its
/// `tags`, `slots` and recency `order`, all sets'. `flags`: (write, allocate, evict_first).
#[inline(always)]
pub(super) fn ordered_access(
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
    pub(super) c: &'a mut SectorCache,
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
            displace: self.c.displace,
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
    displace: u64,
    /// Not zero, so that the set index's division needs no check.
    sets: std::num::NonZeroU64,
}

impl SixteenWays<'_> {
    /// [`SectorCache::access_line`] of the sectors `sectors` of line number `line`, allocating
    /// and not streamed: a read, or a write when `WRITE`.
    #[inline(always)]
    pub fn access_line<const WRITE: bool>(&mut self, line: u64, sectors: u32) -> LineOutcome {
        let (set, q) = super::split_line(self.set_mask, self.sets.get(), self.displace, line);
        let flags = (WRITE, true, false);
        if q < u64::from(compact::Set::EMPTY) {
            if let Some(s) = self.c.compact.get_mut(set) {
                return s.access(q as u32, sectors, flags);
            }
        }
        self.c.access_ordered_cold(line, sectors, flags)
    }
}

/// The way of a set's `tags` that holds `line`, if one does. Tags of 16 ways (the shipped
/// configs' L2) are compared all at once, without a branch per way.
#[inline(always)]
pub(super) fn way_of(tags: &[u64], line: u64) -> Option<usize> {
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
pub(super) struct Order(u64);

impl Order {
    const ONES: u64 = 0x1111_1111_1111_1111;

    /// Ways `0..ways` in order, way 0 the most recent (as a cold set's ways are ranked).
    pub(super) fn new(ways: usize) -> Self {
        Order((0..ways.min(16)).map(|w| (w as u64) << (4 * w)).sum())
    }

    /// The way at position `p`.
    #[inline(always)]
    pub(super) fn at(self, p: usize) -> usize {
        (self.0 >> (4 * p) & 15) as usize
    }

    /// The position of way `w` (which the set has).
    #[inline(always)]
    pub(super) fn position(self, w: usize) -> usize {
        // Nibbles equal to `w` become zero; the lowest zero nibble is found exactly (a borrow
        // only runs upwards from a zero nibble), and it lies below the unused positions.
        let x = self.0 ^ (w as u64).wrapping_mul(Self::ONES);
        let zero = x.wrapping_sub(Self::ONES) & !x & (Self::ONES << 3);
        (zero.trailing_zeros() / 4) as usize
    }

    /// Moves the way at position `p` to the front, the ways before it one place on.
    #[inline(always)]
    pub(super) fn move_to_front(&mut self, p: usize) {
        let below = (1u64 << (4 * p)) - 1;
        let w = self.0 >> (4 * p) & 15;
        let above = self.0 & !(below | 15 << (4 * p));
        self.0 = above | (self.0 & below) << 4 | w;
    }

    /// [`Order::move_to_front`] of the way at position `last`, the set's last: a shift, as the
    /// positions after it are 0 (a miss's refill, the L2 pass's common case).
    #[inline(always)]
    pub(super) fn last_to_front(&mut self, last: usize) {
        let w = self.0 >> (4 * last);
        let kept = u64::MAX >> (60 - 4 * last);
        self.0 = (self.0 << 4 & kept) | w;
    }

    /// Moves the way at position `p` to position `last` (the set's last), the ways after it one
    /// place back.
    #[inline(always)]
    pub(super) fn move_to_back(&mut self, p: usize, last: usize) {
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
    use crate::memory::cache::Geometry;

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
}

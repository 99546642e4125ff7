//! The tag store of a 16-way cache of lines of at most four sectors (the shipped configs' L2),
//! one 128-byte record per set: the ways' tags, sector state and the recency order side by side,
//! in two adjacent host cache lines, where the general store keeps them in three arrays (a lookup
//! touched four host lines in three places). The record is smaller, too: a tag is the line's
//! quotient by the set count (32 bits; the set is the remainder, so set and quotient name the
//! line, and one division gives both) and a way's sectors one byte (valid bits, dirty bits). An
//! RTX 3090's L2 (3,072 sets) takes 384 KiB, which fits a host core's L2; the general store
//! took 800.
//!
//! A line whose quotient does not fit ([`Set::EMPTY`] or above: addresses beyond 2^50 bytes for
//! that L2) has the cache move to the general store ([`super::SectorCache`] widens), which holds
//! any line.

use super::{becomes_recent, LineOutcome, Order, Slot};

/// One set: its ways' tags and sectors, and their recency order.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(128))]
pub(super) struct Set {
    /// Per way, its line's quotient by the set count ([`Set::EMPTY`] if none).
    pub(super) tags: [u32; 16],
    /// Per way, its valid sectors (low nibble) and dirty ones (high nibble).
    pub(super) state: [u8; 16],
    /// The ways, most recent first.
    pub(super) order: Order,
}

impl Set {
    /// The tag of an empty way.
    pub(super) const EMPTY: u32 = u32::MAX;

    /// A cold set: every way empty, way 0 the most recent.
    pub(super) fn new() -> Self {
        Set {
            tags: [Self::EMPTY; 16],
            state: [0; 16],
            order: Order::new(16),
        }
    }

    /// [`super::SectorCache::access_line`] of the sectors `sectors` (a mask below 16) of the line
    /// of quotient `q` (not [`Set::EMPTY`]) in this set. `flags`: (write, allocate, evict_first).
    #[inline(always)]
    pub(super) fn access(
        &mut self,
        q: u32,
        sectors: u32,
        (write, allocate, evict_first): (bool, bool, bool),
    ) -> LineOutcome {
        if let Some(w) = self.way_of(q) {
            // The way becomes the most recent.
            self.order.move_to_front(self.order.position(w));
            let mut slot = self.slot(w);
            let out = slot.hit(sectors, write, allocate);
            self.put(w, slot);
            return out;
        }
        if !allocate {
            return LineOutcome::default();
        }
        // The least recent way is the victim.
        let w = self.order.at(15);
        let mut slot = self.slot(w);
        let out = slot.refill(self.tags[w] != Self::EMPTY, sectors, write);
        self.put(w, slot);
        self.tags[w] = q;
        if becomes_recent(sectors, evict_first) {
            self.order.last_to_front(15);
        }
        out
    }

    /// Drops the line of quotient `q`, if present; returns whether it was. The emptied way
    /// becomes the least recent (the next victim).
    pub(super) fn invalidate(&mut self, q: u32) -> bool {
        let Some(w) = self.way_of(q) else {
            return false;
        };
        self.tags[w] = Self::EMPTY;
        self.state[w] = 0;
        self.order.move_to_back(self.order.position(w), 15);
        true
    }

    /// The way holding the line of quotient `q`, if one does: the 16 tags compared at once,
    /// four ways at a time (written so that the compares become two vector compares and a
    /// byte mask; a fold over the ways compiled to scalar compares in part).
    #[inline(always)]
    fn way_of(&self, q: u32) -> Option<usize> {
        let mut hits = 0u32;
        for c in self.tags.chunks_exact(4).rev() {
            let eq = |w: usize| u32::from(c[w] == q) << w;
            hits = hits << 4 | eq(0) | eq(1) | eq(2) | eq(3);
        }
        (hits != 0).then(|| hits.trailing_zeros() as usize)
    }

    /// Way `w`'s valid and dirty sectors.
    #[inline(always)]
    pub(super) fn slot(&self, w: usize) -> Slot {
        let s = u32::from(self.state[w]);
        Slot {
            valid: s & 15,
            dirty: s >> 4,
        }
    }

    /// Sets way `w`'s valid and dirty sectors (of at most four sectors).
    #[inline(always)]
    fn put(&mut self, w: usize, slot: Slot) {
        self.state[w] = (slot.valid | slot.dirty << 4) as u8;
    }
}

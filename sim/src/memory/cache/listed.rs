//! The tag store of a cache too associative to keep each set's recency order in one word (L1's
//! hundreds of ways): lines are found through a chained hash index, and the least recent way of
//! a set is found, in the common cases, without a search.
//!
//! Exact LRU by recency stamps: a lookup that finds its line gives the slot the next stamp (one
//! store), and the victim of a miss is the slot with the smallest stamp. Besides, each set keeps
//! its slots in a ring in the order they were filled (or made least recent), each with the stamp
//! it had then (`fill`). The ring's last slot has the smallest `fill`, and no slot's stamp is
//! below its `fill`; so when the last slot's stamp is still its `fill` (no lookup found it since),
//! it is the LRU slot, found in two loads: every miss of a streaming access, and of a cache still
//! filling. Otherwise the set's stamps are searched for the smallest (a few vector instructions
//! per 8 ways), as a cache ranked by stamps alone did for every miss.
//!
//! A slot leaves the index by the link that points at it, found along its old line's chain by
//! slot number (open addressing had to shift the rest of a probe run back, reading the line of
//! every entry it passed). A slot's line, sectors and links lie in one 32-byte node, its stamp in
//! an array of their own (the search reads a set's stamps with vector loads).

use super::{becomes_recent, LineOutcome, Slot, EMPTY, NIL};

/// One slot: its line, sectors, ring and chain links.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// The line held ([`EMPTY`] if none).
    tag: u64,
    slot: Slot,
    /// The slot filled after this one in its set's ring (the ring's first for its last).
    prev: u32,
    /// The slot filled before this one (the ring's last for its first).
    next: u32,
    /// The next slot of its index bucket's chain ([`NIL`]: the last).
    chain: u32,
    /// The slot's stamp when it took its place in the ring.
    fill: u32,
}

/// The middle of the stamps' range: stamps for a slot made the most recent count up from it,
/// for one made the least recent down.
const MID: u32 = 1 << 31;

/// The tag store: `sets` sets of `ways` slots, slot `set * ways + way`.
#[derive(Debug, Clone)]
pub(super) struct Listed {
    nodes: Vec<Node>,
    /// Per slot, its recency stamp (larger: more recent; all distinct).
    stamps: Vec<u32>,
    /// Per set, the first slot of its ring (the one filled last).
    fronts: Vec<u32>,
    /// Per bucket of the line index, the first slot of its chain ([`NIL`]: none); a power of
    /// two at least four times the slots, so that chains are short (lines of a few streams
    /// share buckets by whole blocks, [`Parts::home`]).
    heads: Vec<u32>,
    sets: usize,
    ways: usize,
    /// The next stamps for a slot made the most recent and the least recent.
    clock: Clock,
}

/// The next stamps to hand out ([`MID`]).
#[derive(Debug, Clone, Copy)]
struct Clock {
    newest: u32,
    oldest: u32,
}

impl Listed {
    /// An empty store; in each set way 0 is the most recent and the last way the least (as a
    /// cold set's ways are ranked: the last way is filled first). Built on its first lookup
    /// ([`Listed::warm`]): a launch's SMs copy their cold caches from one, and the copy of
    /// an unbuilt store is a few words (valgrind counts the `rep movsb` of a copy once per
    /// byte, and an SM that runs no block never builds its store).
    pub(super) fn new(sets: usize, ways: usize) -> Self {
        Listed {
            nodes: Vec::new(),
            stamps: Vec::new(),
            fronts: Vec::new(),
            heads: Vec::new(),
            sets,
            ways,
            clock: Clock {
                newest: MID + ways as u32,
                oldest: MID - 1,
            },
        }
    }

    /// Builds the store if it is not yet (the first lookup of a cold cache).
    #[inline(always)]
    fn warm(&mut self) {
        if self.nodes.is_empty() {
            self.build();
        }
    }

    /// The cold store [`Listed::new`] describes: every set's ways in a ring in way order, each
    /// with its stamp as its `fill`, the index empty.
    #[cold]
    #[inline(never)]
    fn build(&mut self) {
        let (sets, ways) = (self.sets, self.ways);
        let n = sets * ways;
        // Filled from values the optimiser cannot see, so that it writes them with vector
        // stores rather than calling `memset` (whose `rep stosb` valgrind counts per byte).
        let nil = std::hint::black_box(NIL);
        let cold = Node {
            tag: EMPTY,
            slot: Slot { valid: 0, dirty: 0 },
            prev: nil,
            next: nil,
            chain: nil,
            fill: nil,
        };
        self.nodes = vec![cold; n];
        self.stamps = Vec::with_capacity(n);
        let last = ways as u32 - 1;
        for (set, nodes) in self.nodes.chunks_exact_mut(ways).enumerate() {
            let base = (set * ways) as u32;
            self.stamps.extend((0..=last).map(|w| MID + last - w));
            for (w, node) in (0..).zip(nodes.iter_mut()) {
                // Way 0's `prev` and the last way's `next` are set after the loop.
                (node.prev, node.next) = ((base + w).wrapping_sub(1), base + w + 1);
                node.fill = MID + last - w;
            }
            // The ring closes: way 0 after the last.
            nodes[0].prev = base + last;
            nodes[last as usize].next = base;
        }
        self.fronts = (0..sets).map(|set| (set * ways) as u32).collect();
        self.heads = vec![nil; (n * 4).next_power_of_two().max(2)];
    }

    /// Puts set `set`'s slots in a ring in the order of their stamps, the most recent first,
    /// each with its stamp as its `fill`.
    fn ring(&mut self, set: usize) {
        let base = set * self.ways;
        let mut order: Vec<u32> = (base..base + self.ways).map(|i| i as u32).collect();
        order.sort_unstable_by_key(|&i| std::cmp::Reverse(self.stamps[i as usize]));
        let n = order.len();
        for (k, &i) in order.iter().enumerate() {
            let node = &mut self.nodes[i as usize];
            node.prev = order[(k + n - 1) % n];
            node.next = order[(k + 1) % n];
            node.fill = self.stamps[i as usize];
        }
        self.fronts[set] = order[0];
    }

    /// Gives every set's slots stamps from [`MID`] on, in their order (when the stamps run out,
    /// after some two billion lookups).
    #[cold]
    fn renumber(&mut self) {
        let ways = self.ways;
        for set in 0..self.fronts.len() {
            let keys = &mut self.stamps[set * ways..(set + 1) * ways];
            let mut order: Vec<usize> = (0..ways).collect();
            order.sort_unstable_by_key(|&w| keys[w]);
            for (rank, w) in order.into_iter().enumerate() {
                keys[w] = MID + rank as u32;
            }
            self.ring(set);
        }
        self.clock = Clock {
            newest: MID + ways as u32,
            oldest: MID - 1,
        };
    }

    /// The store's parts, borrowed for a run of lookups.
    #[inline(always)]
    pub(super) fn parts(&mut self) -> Parts<'_> {
        Parts {
            nodes: &mut self.nodes,
            stamps: &mut self.stamps,
            fronts: &mut self.fronts,
            heads: &mut self.heads,
            ways: self.ways,
        }
    }

    /// The next stamp for a slot made the most recent.
    #[inline(always)]
    fn newest(&mut self) -> u32 {
        if self.clock.newest == u32::MAX {
            self.renumber();
        }
        self.clock.newest += 1;
        self.clock.newest - 1
    }
}

/// A [`Listed`] store's arrays, borrowed as slices (kept in registers across a loop's stores,
/// which cannot change them).
pub(super) struct Parts<'a> {
    nodes: &'a mut [Node],
    stamps: &'a mut [u32],
    fronts: &'a mut [u32],
    heads: &'a mut [u32],
    ways: usize,
}

/// Where a lookup ended: `Ok` with the slot holding the line, or `Err` with the line's index
/// bucket (where a refill indexes it).
pub(super) type Found = Result<u32, usize>;

impl Parts<'_> {
    /// The index bucket of `line`: its low bits (as many as the index has buckets) XOR a hash
    /// of the rest. The lines of an aligned block of as many lines as buckets take distinct
    /// buckets, neighbours in neighbouring ones (a streaming load's lines and the lines they
    /// evict are found and unlinked in a few host cache lines of the index, and share no chain
    /// with the lines held); lines a multiple of the index apart are spread by the hash.
    #[inline(always)]
    fn home(&self, line: u64) -> usize {
        let high = line >> self.heads.len().trailing_zeros();
        // Fibonacci hashing: the high bits of the product mix every bit of `high`.
        (line ^ (high.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32)) as usize & (self.heads.len() - 1)
    }

    /// Looks `line` up in the index.
    #[inline(always)]
    pub(super) fn probe(&self, line: u64) -> Found {
        let h = self.home(line);
        let mut s = self.heads[h];
        while s != NIL {
            let n = &self.nodes[s as usize];
            if n.tag == line {
                return Ok(s);
            }
            s = n.chain;
        }
        Err(h)
    }

    /// The least recent slot of set `set`: the last of its ring when no lookup found it since
    /// it took its place there, else the one with the smallest stamp; and whether it is the
    /// ring's last (then [`Parts::make_recent`] only sets the front: no second look at the ring).
    #[inline(always)]
    fn victim(&self, set: usize) -> (usize, bool) {
        let last = self.nodes[self.fronts[set] as usize].prev as usize;
        if self.stamps[last] == self.nodes[last].fill {
            return (last, true);
        }
        (search(self.stamps, set * self.ways, self.ways), false)
    }

    /// [`Parts::move_to_front`] of a victim `(v, last)` from [`Parts::victim`]: the ring's last
    /// slot becomes its first by the front alone (as `move_to_front` does for it).
    #[inline(always)]
    fn make_recent(&mut self, (v, last): (usize, bool), set: usize) {
        if last {
            self.fronts[set] = v as u32;
        } else {
            self.move_to_front(v, set);
        }
    }
}

/// The slot with the smallest stamp of the set of `ways` slots from slot `base` (`stamps`, all
/// slots'). Out of line, its arguments the stamps alone: a caller's parts stay in registers.
#[inline(never)]
fn search(stamps: &[u32], base: usize, ways: usize) -> usize {
    let keys = &stamps[base..base + ways];
    // `fold` rather than `min`: no Option, one vector reduction. A set of 256 ways (the shipped
    // configs' L1) as a fixed-size array: no loop remainders to set up.
    let least = match <&[u32; 256]>::try_from(keys) {
        Ok(keys) => keys.iter().fold(u32::MAX, |m, &k| m.min(k)),
        Err(_) => keys.iter().fold(u32::MAX, |m, &k| m.min(k)),
    };
    base + keys.iter().position(|&k| k == least).unwrap_or(0)
}

impl Parts<'_> {
    /// Moves slot `i` to the front of set `set`'s ring.
    #[inline(always)]
    fn move_to_front(&mut self, i: usize, set: usize) {
        let front = self.fronts[set] as usize;
        if i == front {
            return;
        }
        self.fronts[set] = i as u32;
        let last = self.nodes[front].prev as usize;
        if i == last {
            // The ring turns: the last slot becomes the first (a miss's refill).
            return;
        }
        let Node { prev, next, .. } = self.nodes[i];
        self.nodes[prev as usize].next = next;
        self.nodes[next as usize].prev = prev;
        self.insert_before(i, front, last);
    }

    /// Moves slot `i` to the back of set `set`'s ring.
    fn move_to_back(&mut self, i: usize, set: usize) {
        let front = self.fronts[set] as usize;
        let last = self.nodes[front].prev as usize;
        if i == last {
            return;
        }
        if i == front {
            // The ring turns: the first slot becomes the last.
            self.fronts[set] = self.nodes[front].next;
            return;
        }
        let Node { prev, next, .. } = self.nodes[i];
        self.nodes[prev as usize].next = next;
        self.nodes[next as usize].prev = prev;
        self.insert_before(i, front, last);
    }

    /// Links slot `i` (out of the ring) between the ring's `last` and its `front`.
    #[inline(always)]
    fn insert_before(&mut self, i: usize, front: usize, last: usize) {
        let n = &mut self.nodes[i];
        (n.prev, n.next) = (last as u32, front as u32);
        self.nodes[last].next = i as u32;
        self.nodes[front].prev = i as u32;
    }

    /// Removes slot `slot` from the chain of `line`'s bucket, where it is indexed (by slot
    /// number: the slot may hold another line by now).
    #[inline(always)]
    fn remove_slot(&mut self, line: u64, slot: u32) {
        let h = self.home(line);
        let after = self.nodes[slot as usize].chain;
        let mut p = self.heads[h];
        if p == slot {
            self.heads[h] = after;
            return;
        }
        loop {
            let n = self.nodes[p as usize].chain;
            if n == slot {
                self.nodes[p as usize].chain = after;
                return;
            }
            p = n;
        }
    }
}

impl Listed {
    /// [`super::SectorCache::access_line`] of `line` in set `set`. `flags`: (write, allocate,
    /// evict_first).
    #[inline(always)]
    pub(super) fn access(
        &mut self,
        set: usize,
        line: u64,
        sectors: u32,
        (write, allocate, evict_first): (bool, bool, bool),
    ) -> LineOutcome {
        self.warm();
        let home = match self.parts().probe(line) {
            Ok(i) => {
                let stamp = self.newest();
                self.stamps[i as usize] = stamp;
                return self.nodes[i as usize].slot.hit(sectors, write, allocate);
            }
            Err(home) => home,
        };
        if !allocate {
            return LineOutcome::default();
        }
        self.refill(set, home, line, sectors, write, evict_first)
    }

    /// A miss of `line` (index bucket `home`) in set `set` with allocation: its least recent
    /// slot takes the line's `sectors`.
    #[inline(always)]
    fn refill(
        &mut self,
        set: usize,
        home: usize,
        line: u64,
        sectors: u32,
        write: bool,
        evict_first: bool,
    ) -> LineOutcome {
        // A line that does not become recent keeps the victim's stamp, the set's smallest, and
        // its place in the ring.
        let stamp = becomes_recent(sectors, evict_first).then(|| self.newest());
        let mut p = self.parts();
        let victim = p.victim(set);
        let v = victim.0;
        let node = &mut p.nodes[v];
        let old = node.tag;
        let out = node.slot.refill(old != EMPTY, sectors, write);
        node.tag = line;
        if let Some(stamp) = stamp {
            p.stamps[v] = stamp;
            p.nodes[v].fill = stamp;
            p.make_recent(victim, set);
        }
        // Out of the old line's chain before the slot's link is rewritten for the new one's.
        if old != EMPTY {
            p.remove_slot(old, v as u32);
        }
        p.nodes[v].chain = p.heads[home];
        p.heads[home] = v as u32;
        out
    }

    /// Drops `line` from set `set` if present; returns whether it was. The emptied slot becomes
    /// the least recent (the next victim).
    pub(super) fn invalidate(&mut self, line: u64, set: usize) -> bool {
        self.warm();
        let Ok(i) = self.parts().probe(line) else {
            return false;
        };
        if self.clock.oldest == 0 {
            self.renumber();
        }
        let stamp = self.clock.oldest;
        self.clock.oldest -= 1;
        let mut p = self.parts();
        p.remove_slot(line, i);
        let n = &mut p.nodes[i as usize];
        n.tag = EMPTY;
        n.slot = Slot { valid: 0, dirty: 0 };
        n.fill = stamp;
        p.stamps[i as usize] = stamp;
        p.move_to_back(i as usize, set);
        true
    }

    /// Runs the stamps out: the next stamp handed out is the last (tests of renumbering).
    #[cfg(test)]
    pub(super) fn squeeze(&mut self, left: u32) {
        self.clock.newest = self.clock.newest.max(u32::MAX - left);
        self.clock.oldest = self.clock.oldest.min(left);
    }
}

impl Parts<'_> {
    /// The read of line `line`'s sectors `mask` (allocating, not a write; `EVICT_FIRST` for a
    /// streamed fill), in set `set_of(line, sets)`, with stamps from `newest` on (a local count,
    /// kept in a register by the caller's loop); returns the sectors present.
    #[inline(always)]
    fn read<const EVICT_FIRST: bool>(
        &mut self,
        line: u64,
        mask: u32,
        set_of: impl Fn(u64, usize) -> usize,
        newest: &mut u32,
    ) -> u32 {
        let home = match self.probe(line) {
            Ok(i) => {
                self.stamps[i as usize] = *newest;
                *newest += 1;
                let slot = &mut self.nodes[i as usize].slot;
                let hits = slot.valid & mask;
                slot.valid |= mask;
                return hits;
            }
            Err(home) => home,
        };
        // As `Listed::refill` (a read's L1 line is never dirty: nothing to write back).
        let set = set_of(line, self.fronts.len());
        let victim = self.victim(set);
        let v = victim.0;
        let node = &mut self.nodes[v];
        let old = node.tag;
        node.slot = Slot {
            valid: mask,
            dirty: 0,
        };
        node.tag = line;
        if becomes_recent(mask, EVICT_FIRST) {
            self.stamps[v] = *newest;
            self.nodes[v].fill = *newest;
            *newest += 1;
            self.make_recent(victim, set);
        }
        if old != EMPTY {
            self.remove_slot(old, v as u32);
        }
        self.nodes[v].chain = self.heads[home];
        self.heads[home] = v as u32;
        0
    }
}

impl Listed {
    /// The parts, the stamps cut to the nodes' length (so that one bounds check covers a
    /// slot's node and stamp), after making room for `n` more stamps: a loop of up to `n`
    /// lookups then counts its stamps in a local, with no check.
    #[inline(always)]
    fn parts_for(&mut self, n: usize) -> (Parts<'_>, u32) {
        self.warm();
        if (u32::MAX - self.clock.newest) as usize <= n {
            self.renumber();
        }
        let nodes = &mut self.nodes[..];
        let parts = Parts {
            stamps: &mut self.stamps[..nodes.len()],
            nodes,
            fronts: &mut self.fronts,
            heads: &mut self.heads,
            ways: self.ways,
        };
        (parts, self.clock.newest)
    }

    /// Reads (looks up with allocation; `evict_first` for streamed fills) the ascending sectors
    /// `sectors` (byte addresses, at most 64; `line_of` as [`super::SectorCache::line_map`],
    /// `shifts` the log2 of its line's and sector's bytes), one lookup per line; pushes those
    /// that missed onto `missed`, in order. Returns (lines, sectors hit). Not inlined: one loop
    /// for every request of sectors.
    #[inline(never)]
    pub(super) fn read_sorted(
        &mut self,
        sectors: &[u64],
        (line_of, shifts): (impl Fn(u64) -> (u64, u32), (u32, u32)),
        evict_first: bool,
        missed: &mut impl super::MissList,
    ) -> (u32, u32) {
        // Whether each sector lies in a line of its own (a scattered access: nearly every load
        // of a table), found without a branch per sector: then the loop groups nothing.
        let shared = (sectors.iter().zip(sectors.iter().skip(1)))
            .fold(false, |acc, (&p, &n)| acc | (line_of(p).0 == line_of(n).0));
        let run = (sectors, (&line_of, shifts), missed);
        match (self.fronts.len().is_power_of_two(), shared, evict_first) {
            // A mask, which also keeps the set's index within `fronts` (no bounds check).
            (true, false, false) => self.read_sorted_with::<false, false, _>(run, mask_set),
            (true, false, true) => self.read_sorted_with::<false, true, _>(run, mask_set),
            (true, true, false) => self.read_sorted_with::<true, false, _>(run, mask_set),
            (true, true, true) => self.read_sorted_with::<true, true, _>(run, mask_set),
            (false, false, false) => self.read_sorted_with::<false, false, _>(run, div_set),
            (false, false, true) => self.read_sorted_with::<false, true, _>(run, div_set),
            (false, true, false) => self.read_sorted_with::<true, false, _>(run, div_set),
            (false, true, true) => self.read_sorted_with::<true, true, _>(run, div_set),
        }
    }

    /// [`Listed::read_sorted`] with `set_of` a line's set (of the number of sets), `GROUPED`
    /// when some sectors share a line.
    #[inline(always)]
    fn read_sorted_with<const GROUPED: bool, const EVICT_FIRST: bool, M: super::MissList>(
        &mut self,
        (sectors, (line_of, shifts), missed): (
            &[u64],
            (&impl Fn(u64) -> (u64, u32), (u32, u32)),
            &mut M,
        ),
        set_of: impl Fn(u64, usize) -> usize + Copy,
    ) -> (u32, u32) {
        assert!(sectors.len() <= 64, "at most 64 sectors a request");
        let (mut p, mut newest) = self.parts_for(sectors.len());
        // Bit `k`: sector `k` missed (pushed onto `missed` at the end, in order): a wholly
        // missed line sets its bits without a test per sector. A list of lines takes each
        // line's misses as the loop finds them (`hit` counts their hits).
        let (mut lines, mut missing, mut hit) = (0u32, 0u64, 0u32);
        let mut i = 0;
        while let Some(&first) = sectors.get(i) {
            let (line, mut mask) = line_of(first);
            let mut j = i + 1;
            while let Some(&s) = sectors.get(j).filter(|_| GROUPED) {
                let (l, bit) = line_of(s);
                if l != line {
                    break;
                }
                mask |= bit;
                j += 1;
            }
            lines += 1;
            let hits = p.read::<EVICT_FIRST>(line, mask, set_of, &mut newest);
            if M::LINES {
                hit += hits.count_ones();
                if hits != mask {
                    missed.push_line(line, mask & !hits, shifts);
                }
            } else if !GROUPED {
                missing |= u64::from(hits == 0) << i;
            } else if hits == 0 {
                missing |= (u64::MAX >> (64 - (j - i))) << i;
            } else if hits != mask {
                for (k, &s) in sectors.iter().enumerate().take(j).skip(i) {
                    missing |= u64::from(hits & line_of(s).1 == 0) << k;
                }
            }
            i = j;
        }
        self.clock.newest = newest;
        if M::LINES {
            return (lines, hit);
        }
        let hit = sectors.len() as u32 - missing.count_ones();
        if missing != 0 && missing == u64::MAX >> (64 - sectors.len()) {
            // Every sector missed (a streaming load's common case): all at once.
            for &s in sectors {
                missed.push_sector(s);
            }
        } else {
            while missing != 0 {
                missed.push_sector(sectors[missing.trailing_zeros() as usize]);
                missing &= missing - 1;
            }
        }
        (lines, hit)
    }

    /// [`Listed::read_sorted`] of the one line `line` of set `set`, its sectors `mask`
    /// (`EVICT_FIRST` for a streamed fill): those present.
    #[inline(always)]
    pub(super) fn read_one<const EVICT_FIRST: bool>(
        &mut self,
        set: usize,
        line: u64,
        mask: u32,
    ) -> u32 {
        let (mut p, mut newest) = self.parts_for(1);
        let hits = p.read::<EVICT_FIRST>(line, mask, |_, _| set, &mut newest);
        self.clock.newest = newest;
        hits
    }

    /// [`Listed::read_sorted`] of the `n` consecutive sectors from sector number `first` (lines
    /// and sectors of `1 << line_shift` and `1 << sector_shift` bytes): the lines and their
    /// masks in closed form, each line's missed sectors pushed onto `missed` at once. Not
    /// inlined, as `read_sorted`.
    #[inline(never)]
    pub(super) fn read_run(
        &mut self,
        (first, n): (u64, u32),
        (line_shift, sector_shift): (u32, u32),
        evict_first: bool,
        missed: &mut impl super::MissList,
    ) -> (u32, u32) {
        let run = (first, n);
        let shifts = (line_shift, sector_shift);
        match (self.fronts.len().is_power_of_two(), evict_first) {
            (true, false) => self.read_run_with::<false>(run, shifts, mask_set, missed),
            (true, true) => self.read_run_with::<true>(run, shifts, mask_set, missed),
            (false, false) => self.read_run_with::<false>(run, shifts, div_set, missed),
            (false, true) => self.read_run_with::<true>(run, shifts, div_set, missed),
        }
    }

    /// [`Listed::read_run`] with `set_of` a line's set.
    #[inline(always)]
    fn read_run_with<const EVICT_FIRST: bool>(
        &mut self,
        (first, n): (u64, u32),
        shifts: (u32, u32),
        set_of: impl Fn(u64, usize) -> usize + Copy,
        missed: &mut impl super::MissList,
    ) -> (u32, u32) {
        let per_line = shifts.0 - shifts.1;
        let (mut p, mut newest) = self.parts_for(n as usize);
        let mut s = first;
        let end = s + u64::from(n);
        let (mut lines, mut hit) = (0, 0);
        while s < end {
            let line = s >> per_line;
            let next = end.min((line + 1) << per_line);
            // The run's sectors of this line: `next - s` (1 to 32) from bit `s % per line` on.
            let mask = (u32::MAX >> (32 - (next - s) as u32)) << (s & ((1 << per_line) - 1));
            let hits = p.read::<EVICT_FIRST>(line, mask, set_of, &mut newest);
            lines += 1;
            hit += hits.count_ones();
            if hits != mask {
                missed.push_line(line, mask & !hits, shifts);
            }
            s = next;
        }
        self.clock.newest = newest;
        (lines, hit)
    }
}

/// The set of line `line` among `sets` sets, a power of two.
#[inline(always)]
fn mask_set(line: u64, sets: usize) -> usize {
    line as usize & (sets - 1)
}

/// The set of line `line` among `sets` sets.
#[inline(always)]
fn div_set(line: u64, sets: usize) -> usize {
    (line % sets as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store's rings: each set's front and every slot's links.
    fn rings(l: &Listed) -> (Vec<u32>, Vec<(u32, u32)>) {
        let links = l.nodes.iter().map(|n| (n.prev, n.next)).collect();
        (l.fronts.clone(), links)
    }

    #[test]
    fn an_aligned_block_of_lines_takes_distinct_neighbouring_buckets() {
        // 4 sets x 256 ways (the shipped L1): 4096 buckets. Each aligned block of 4096 lines
        // (of a few far apart) takes every bucket once, and an aligned 32 of them (a strided
        // load's) a block of 32 buckets.
        let mut l = Listed::new(4, 256);
        l.warm();
        let p = l.parts();
        let n = p.heads.len() as u64;
        assert_eq!(n, 4096);
        for start in [0, n, 7 * n, 12345 * n, 1 << 40] {
            let mut seen = vec![false; n as usize];
            for line in start..start + n {
                let h = p.home(line);
                assert!(!seen[h], "{line}: bucket {h} twice");
                seen[h] = true;
                assert_eq!(h / 32, p.home(line & !31) / 32, "{line}");
            }
        }
    }

    #[test]
    fn make_recent_turns_the_ring_as_move_to_front_does() {
        // Stores of 1 to 256 ways after random hits, misses, streamed fills and invalidations
        // (which leave victims that are not the ring's last): the victim made recent both ways.
        for ways in [1, 2, 8, 256] {
            let mut l = Listed::new(2, ways);
            let mut x = 7u64;
            for i in 0..4000 {
                x = crate::testing::lcg(x);
                let line = (x >> 33) % (ways as u64 * 8);
                let set = (line % 2) as usize;
                if i % 7 == 0 {
                    l.invalidate(line, set);
                } else {
                    let flags = (false, true, x & 0x300 == 0x300);
                    l.access(set, line, 1 << (x >> 20 & 3), flags);
                }
                let (mut fast, mut general) = (l.clone(), l.clone());
                let victim = fast.parts().victim(set);
                fast.parts().make_recent(victim, set);
                general.parts().move_to_front(victim.0, set);
                assert_eq!(rings(&fast), rings(&general), "{ways} ways: op {i}");
            }
        }
    }
}

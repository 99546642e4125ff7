//! The warp schedulers of an SM as resources of the timing replay ([`super::replay`]).
//!
//! [`Port`]: one warp scheduler's issue slots. A scheduler issues at most one SASS instruction per
//! cycle (\[NV\] VoltaWP and later: four sub-cores per SM, each with its own scheduler issuing one
//! warp instruction per clock); a warp asks for the first free cycle at or after the one its
//! operands are ready. Requests come roughly, not strictly, in cycle order (a warp issues in
//! dataflow order within a basic block, and a later wave's warps find the earlier wave's cycles
//! taken), so the port keeps a calendar of taken cycles rather than one next-free cycle.
//! [`Keys`]: the warps waiting to issue ([`Ring`] for waves of up to 64 warps, [`Heap`] beyond).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Which cycles of one warp scheduler are taken, from `base` on (one bit per cycle). Cycles in
/// requests and answers count from the port's origin ([`Port::set_origin`]), the calendar from the
/// start of the launch.
#[derive(Debug, Clone, Default)]
pub struct Port {
    /// Cycle of the launch that requests count from.
    origin: u64,
    /// First cycle the calendar covers (a multiple of 64).
    base: u64,
    /// Bit `c % 64` of word `(c - base) / 64` is set when cycle `c` is free (a request shifts
    /// its word's free bits down without inverting them first).
    words: Vec<u64>,
    /// `base - origin`, kept so that a request finds its word without the two.
    shift: i64,
    /// The calendar holds more than [`TRIM_SPAN`] cycles ([`Port::long`]).
    long: bool,
}

/// Calendars longer than this (cycles) are trimmed to what warps can still ask for.
pub const TRIM_SPAN: u64 = 1 << 14;

/// Free words a calendar grows by past the one a request needs (1,024 cycles with it): a
/// scheduler's requests move past the calendar's end every 64 cycles of its time, which took
/// [`Port::take_on`]'s walk each time.
const GROW: usize = 15;

impl Port {
    /// Empties the calendar (every cycle free).
    pub fn reset(&mut self) {
        self.origin = 0;
        self.base = 0;
        self.words.clear();
        self.shift = 0;
        self.long = false;
    }

    /// Cycles the calendar holds (how far ahead of [`Port::forget_before`] requests went).
    pub fn span(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// Whether the calendar holds more than [`TRIM_SPAN`] cycles (`span() > TRIM_SPAN`, kept as
    /// the calendar grows and is trimmed, so that the replay tests a flag after each warp's
    /// turn).
    #[inline(always)]
    pub fn long(&self) -> bool {
        debug_assert_eq!(self.long, self.span() > TRIM_SPAN);
        self.long
    }

    /// Makes requests count from cycle `origin` of the launch (the calendar stays).
    pub fn set_origin(&mut self, origin: u64) {
        self.origin = origin;
        self.shift = self.base as i64 - origin as i64;
    }

    /// Takes the first free cycle at or after `t` and returns it. A cycle before the forgotten
    /// ones counts as the first one remembered.
    #[inline]
    pub fn take(&mut self, t: u64) -> u64 {
        // Cycle `t` is bit `d % 64` of word `d / 64` (`base` is a multiple of 64); a cycle
        // before `base` wraps to a word past the calendar.
        let d = t.wrapping_sub(self.shift as u64);
        // Most requests find a free cycle in their own word: `k` cycles after `t`.
        if let Some(word) = self.words.get_mut((d / 64) as usize) {
            let free = *word >> (d % 64);
            if free != 0 {
                let k = free.trailing_zeros();
                *word &= !(1 << (d % 64 + u64::from(k)));
                return t + u64::from(k);
            }
        }
        self.take_on(t)
    }

    /// [`Port::take`] past the request's own word, or before the calendar.
    #[cold]
    #[inline(never)]
    fn take_on(&mut self, t: u64) -> u64 {
        // Cycle `t` is bit `d % 64` of word `d / 64` (`base` is a multiple of 64).
        let d = (t as i64 - self.shift).max(0) as u64;
        let mut i = (d / 64) as usize;
        let mut below = (1u64 << (d % 64)) - 1;
        while let Some(word) = self.words.get_mut(i) {
            let free = *word & !below;
            if free != 0 {
                let bit = free.trailing_zeros();
                *word &= !(1 << bit);
                return ((i as u64 * 64 + u64::from(bit)) as i64 + self.shift) as u64;
            }
            i += 1;
            below = 0;
        }
        // Past the calendar's end: it grows to word `i`, all free but the cycles before the
        // request, and [`GROW`] free words past it, so that the next requests find their word
        // in [`Port::take`] (a free word answers as this walk would: the cycle asked for).
        self.words.resize(i + 1 + GROW, !0);
        self.long = self.span() > TRIM_SPAN;
        let bit = (!below).trailing_zeros();
        self.words[i] = !(1 << bit);
        ((i as u64 * 64 + u64::from(bit)) as i64 + self.shift) as u64
    }

    /// Forgets the cycles before `t`: no request will ask for them again.
    pub fn forget_before(&mut self, t: u64) {
        let t = t + self.origin;
        // Whole words before `t` go (rarely: only when the calendar grew long).
        let n = (t.saturating_sub(self.base) / 64).min(self.words.len() as u64);
        self.words.drain(..n as usize);
        self.long = self.span() > TRIM_SPAN;
        self.base += n * 64;
        if self.words.is_empty() {
            self.base = self.base.max(t / 64 * 64);
        }
        self.shift = self.base as i64 - self.origin as i64;
    }
}

/// The warps waiting to issue, as keys `cycle << 32 | warp`, smallest first: what the replay's
/// event loop asks of them. The warp that runs is not in the queue; when it stops behind the
/// next key, [`Keys::switch`] queues it again and hands over to that key's warp.
pub trait Keys {
    /// Empties the queue.
    fn clear(&mut self);
    /// Adds `key`.
    fn push(&mut self, key: u64);
    /// Removes the smallest key and returns it with the smallest of those left (`u64::MAX`:
    /// none).
    fn pop_first(&mut self) -> Option<(u64, u64)>;
    /// Adds `key`, which comes after `top`, the smallest key, removes `top` and returns the
    /// smallest of those left (`u64::MAX`: none).
    fn switch(&mut self, key: u64, top: u64) -> u64;
    /// Removes `top`, the smallest key, and returns the smallest of those left (`u64::MAX`:
    /// none): [`Keys::pop_first`] when the caller knows the smallest key already.
    fn take(&mut self, top: u64) -> u64;
}

/// [`Keys`] of the warps `0..RING` (every wave of the configured GPUs).
///
/// Keys of the next `SLOTS` cycles from `now` sit in a ring of warp bitmaps, one per cycle,
/// with a bitmap of the cycles that have warps and one of that bitmap's words that have bits:
/// the warps of an SM take turns, so nearly every instruction hands over to another warp, and a
/// hand-over is a few bit operations instead of a heap's walk. The ring spans more than a DRAM
/// access's latency, so that warps waiting for memory wait in it too; keys further ahead wait
/// in a heap and move into the ring as it comes to their cycle.
#[derive(Debug, Clone)]
pub struct Ring {
    /// The ring's first cycle: every key in the ring is of a cycle in `now..now + SLOTS`, and
    /// every key in `far` of a later one.
    now: u64,
    /// Per cycle `c` of the ring, bit `w` of slot `c % SLOTS` is set when warp `w` waits for `c`.
    ring: Box<[u64; SLOTS]>,
    /// Bit `s % 64` of word `s / 64` is set when slot `s` has a warp.
    busy: [u64; WORDS],
    /// Bit `i` is set when word `i` of `busy` has a bit.
    words: u64,
    /// The later keys.
    far: BinaryHeap<Reverse<u64>>,
    /// The smallest key in `far` (`u64::MAX`: none), so that the ring's moves look at a field
    /// rather than the heap.
    far_first: u64,
}

/// The warps a [`Ring`] takes (the bits of a slot).
pub const RING: usize = 64;

/// Cycles a [`Ring`] holds: more than an L2 or DRAM access's latency (rtx3090: 220 and 480
/// cycles, h200: 281 and 1050) plus some queueing.
const SLOTS: usize = 4096;

/// Words of [`Ring::busy`] (one bit of [`Ring::words`] each).
const WORDS: usize = SLOTS / 64;

impl Default for Ring {
    fn default() -> Self {
        Ring {
            now: 0,
            ring: Box::new([0; SLOTS]),
            busy: [0; WORDS],
            words: 0,
            far: BinaryHeap::new(),
            far_first: u64::MAX,
        }
    }
}

impl Ring {
    /// Adds `key`, of a cycle from `now` on, to the ring or the heap.
    #[inline(always)]
    fn put(&mut self, key: u64) {
        let c = key >> 32;
        debug_assert!(c >= self.now && (key as u32 as usize) < RING);
        if c - self.now >= SLOTS as u64 {
            self.put_far(key);
            return;
        }
        self.mark(c, key as u32);
    }

    /// Sets warp `w`'s bit in cycle `c`'s slot, of the ring's cycles.
    #[inline(always)]
    fn mark(&mut self, c: u64, w: u32) {
        let s = slot(c);
        self.ring[s] |= 1 << (w % RING as u32);
        self.busy[s / 64] |= 1 << (s % 64);
        self.words |= 1 << (s / 64);
    }

    /// Adds `key`, past the ring's cycles, to the heap.
    #[cold]
    #[inline(never)]
    fn put_far(&mut self, key: u64) {
        self.far.push(Reverse(key));
        self.far_first = self.far_first.min(key);
    }

    /// Moves the ring on to cycle `c` (no key is before it) and the far keys of its cycles
    /// into it.
    #[inline(always)]
    fn move_to(&mut self, c: u64) {
        // Most hand-overs stay in the cycle: every far key is past the ring's cycles already
        // (only keys of later cycles go far, and a move back sends the ring's last ones).
        if c == self.now {
            return;
        }
        self.now = c;
        if self.far_first >> 32 < c + SLOTS as u64 {
            self.pull_far();
        }
    }

    /// Moves the far keys of the ring's cycles into it.
    #[cold]
    #[inline(never)]
    fn pull_far(&mut self) {
        let end = self.now + SLOTS as u64;
        while let Some(&Reverse(k)) = self.far.peek() {
            if k >> 32 >= end {
                break;
            }
            self.far.pop();
            self.mark(k >> 32, k as u32);
        }
        self.far_first = self.far.peek().map_or(u64::MAX, |k| k.0);
    }

    /// Removes the smallest key, the first warp of cycle `now`, and returns the smallest key
    /// left (`u64::MAX`: none).
    #[inline(always)]
    fn take_first(&mut self) -> u64 {
        let s = slot(self.now);
        let word = &mut self.ring[s];
        *word &= word.wrapping_sub(1);
        if *word != 0 {
            return self.now << 32 | u64::from(word.trailing_zeros());
        }
        let b = &mut self.busy[s / 64];
        *b &= !(1 << (s % 64));
        if *b == 0 {
            self.words &= !(1 << (s / 64));
        }
        self.after_now()
    }

    /// The smallest key when cycle `now` has none left (`u64::MAX`: none).
    #[inline]
    fn after_now(&self) -> u64 {
        if self.words == 0 {
            return self.far_first;
        }
        let c = self.first_cycle();
        c << 32 | u64::from(self.ring[slot(c)].trailing_zeros())
    }

    /// The first cycle from `now` on whose slot has a warp (the ring has one).
    #[inline(always)]
    fn first_cycle(&self) -> u64 {
        debug_assert!(self.words != 0);
        let s = slot(self.now);
        let (i, b) = (s / 64, s % 64);
        // Slots from `s` on in its own word.
        let m = self.busy[i] >> b;
        if m != 0 {
            return self.now + u64::from(m.trailing_zeros());
        }
        // The next word with bits after word `i`, around the ring (word `i` itself last, for its
        // slots before `s`, the ring's last cycles).
        let r = self.words.rotate_right((i as u32 + 1) % 64);
        let j = (i + 1 + r.trailing_zeros() as usize) % WORDS;
        let x = j * 64 + self.busy[j].trailing_zeros() as usize;
        self.now + (x.wrapping_sub(s) % SLOTS) as u64
    }

    /// Moves the ring back to cycle `c`, before `now`: ring keys past its cycles go to the heap.
    #[cold]
    fn rebase(&mut self, c: u64) {
        let s0 = slot(self.now);
        let mut words = self.words;
        while words != 0 {
            let i = words.trailing_zeros() as usize;
            words &= words - 1;
            let mut bits = self.busy[i];
            while bits != 0 {
                let s = i * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // The cycle of slot `s` in `now..now + SLOTS`.
                let k = self.now + (s.wrapping_sub(s0) % SLOTS) as u64;
                if k < c + SLOTS as u64 {
                    continue;
                }
                let mut m = std::mem::take(&mut self.ring[s]);
                while m != 0 {
                    self.put_far(k << 32 | u64::from(m.trailing_zeros()));
                    m &= m - 1;
                }
                self.busy[i] &= !(1 << (s % 64));
            }
            if self.busy[i] == 0 {
                self.words &= !(1 << i);
            }
        }
        self.now = c;
    }
}

impl Keys for Ring {
    fn clear(&mut self) {
        self.now = 0;
        // A queue emptied by its pops has an empty ring already.
        while self.words != 0 {
            let i = self.words.trailing_zeros() as usize;
            self.words &= self.words - 1;
            let mut bits = std::mem::take(&mut self.busy[i]);
            while bits != 0 {
                self.ring[i * 64 + bits.trailing_zeros() as usize] = 0;
                bits &= bits - 1;
            }
        }
        self.far.clear();
        self.far_first = u64::MAX;
    }

    fn push(&mut self, key: u64) {
        assert!(
            (key as u32 as usize) < RING,
            "warp {} in a ring",
            key as u32
        );
        if self.words == 0 && self.far_first == u64::MAX {
            // An empty ring starts at the key's cycle (a wave's first warps, whose block may
            // start later than the ring's cycle).
            self.now = key >> 32;
        } else if key >> 32 < self.now {
            self.rebase(key >> 32);
        }
        self.put(key);
    }

    #[inline]
    fn pop_first(&mut self) -> Option<(u64, u64)> {
        let first = if self.words != 0 {
            self.first_cycle()
        } else if self.far_first != u64::MAX {
            self.far_first >> 32
        } else {
            return None;
        };
        self.move_to(first);
        let first = self.now << 32 | u64::from(self.ring[slot(self.now)].trailing_zeros());
        Some((first, self.take_first()))
    }

    #[inline(always)]
    fn switch(&mut self, key: u64, top: u64) -> u64 {
        debug_assert!(key > top);
        // `key` is from `now` on: `top` is.
        self.put(key);
        self.take(top)
    }

    #[inline(always)]
    fn take(&mut self, top: u64) -> u64 {
        self.move_to(top >> 32);
        debug_assert_eq!(self.ring[slot(self.now)].trailing_zeros(), top as u32);
        self.take_first()
    }
}

/// [`Keys`] of any warps, in a heap (waves of more than [`RING`] warps).
#[derive(Debug, Clone, Default)]
pub struct Heap(BinaryHeap<Reverse<u64>>);

impl Keys for Heap {
    fn clear(&mut self) {
        self.0.clear();
    }

    fn push(&mut self, key: u64) {
        self.0.push(Reverse(key));
    }

    fn pop_first(&mut self) -> Option<(u64, u64)> {
        let first = self.0.pop()?.0;
        Some((first, self.0.peek().map_or(u64::MAX, |k| k.0)))
    }

    fn switch(&mut self, key: u64, top: u64) -> u64 {
        // `top` is the root: `key` replaces it.
        if let Some(mut first) = self.0.peek_mut() {
            debug_assert_eq!(first.0, top);
            *first = Reverse(key);
        }
        self.0.peek().map_or(u64::MAX, |k| k.0)
    }

    fn take(&mut self, top: u64) -> u64 {
        let first = self.0.pop();
        debug_assert_eq!(first.map(|k| k.0), Some(top));
        self.0.peek().map_or(u64::MAX, |k| k.0)
    }
}

/// The ring slot of cycle `c`.
#[inline(always)]
fn slot(c: u64) -> usize {
    (c % SLOTS as u64) as usize
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A small random-number generator (xorshift) for the tests (the replay's too).
    pub(crate) fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed | 1;
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    #[test]
    fn a_ring_gives_the_keys_a_heap_gives() {
        let key = |c: u64, w: u64| c << 32 | w;
        for seed in 1..200 {
            let mut r = rng(seed);
            let (mut a, mut b) = (Ring::default(), Heap::default());
            // Warps queued at the start, a few far ahead, some past the ring's cycles.
            let mut base = r(1000);
            for w in 0..1 + r(RING as u64) {
                let span = 500 + 12_000 * r(2);
                let c = base + if r(5) == 0 { r(span) } else { r(8) };
                let k = key(c, w);
                a.push(k);
                b.push(k);
            }
            let mut first = a.pop_first();
            assert_eq!(first, b.pop_first());
            let mut parked = vec![];
            let mut rounds = 0;
            while let Some((k, mut top)) = first {
                rounds += 1;
                // The warp of `k` runs: it hands over a few times, then parks (or retires).
                let mut cur = k;
                for _ in 0..r(6) {
                    if top == u64::MAX {
                        break;
                    }
                    let span = 300 + 9_000 * r(2);
                    let far = if r(9) == 0 { r(span) } else { 0 };
                    let c = (top >> 32).max(cur >> 32) + r(3) + far;
                    let mut next = key(c, cur & 0xffff_ffff);
                    if next < top {
                        next = key((top >> 32) + 1, cur & 0xffff_ffff);
                    }
                    let t = a.switch(next, top);
                    assert_eq!(t, b.switch(next, top), "seed {seed}");
                    cur = top;
                    top = t;
                }
                parked.push(cur & 0xffff_ffff);
                // Now and then (for a while) parked warps come back, at times before the
                // ring's cycle (some far before); else the next warp may take over from `top`.
                if rounds < 300 && r(3) == 0 {
                    let back = 100 + 6_000 * r(2);
                    base = (cur >> 32).saturating_sub(r(back)) + r(200);
                    for w in parked.drain(..) {
                        let k = key(base + r(4), w);
                        a.push(k);
                        b.push(k);
                    }
                } else if top != u64::MAX && r(2) == 0 {
                    let t = a.take(top);
                    assert_eq!(t, b.take(top), "seed {seed}");
                    first = Some((top, t));
                    continue;
                }
                first = a.pop_first();
                assert_eq!(first, b.pop_first(), "seed {seed}");
            }
        }
    }

    #[test]
    fn a_port_gives_each_cycle_once() {
        let mut p = Port::default();
        assert_eq!(p.take(5), 5);
        assert_eq!(p.take(5), 6);
        assert_eq!(p.take(3), 3);
        assert_eq!(p.take(5), 7);
        // Across a word boundary.
        for c in 8..70 {
            assert_eq!(p.take(8), c);
        }
        assert_eq!(p.take(0), 0);
        assert_eq!(p.take(200), 200);
    }

    #[test]
    fn a_port_takes_in_its_word_as_in_general() {
        // Random requests (around the calendar's end, before its start, after an origin moved
        // or the past was forgotten): `take`, which answers most in the request's own word,
        // gives what the general walk gives.
        for seed in 1..200 {
            let mut r = rng(seed);
            let (mut a, mut b) = (Port::default(), Port::default());
            let mut t = r(300);
            for _ in 0..400 {
                match r(40) {
                    0 => {
                        let o = t.saturating_sub(r(200));
                        a.set_origin(o);
                        b.set_origin(o);
                        t -= o;
                    }
                    1 => {
                        let f = t.saturating_sub(r(150));
                        a.forget_before(f);
                        b.forget_before(f);
                    }
                    _ => {
                        t = (t + r(5)).saturating_sub(r(4)) + if r(20) == 0 { r(400) } else { 0 };
                        let ask = t.saturating_sub(if r(10) == 0 { r(300) } else { 0 });
                        assert_eq!(a.take(ask), b.take_on(ask), "seed {seed}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_port_gives_the_first_free_cycle_as_a_set_of_cycles_would() {
        // Random requests, some far past the calendar's end (over the words it grew by, over
        // the free words it holds): the answer is the first cycle from the request on that no
        // earlier request took.
        for seed in 1..100 {
            let mut r = rng(seed);
            let mut p = Port::default();
            let mut taken = std::collections::BTreeSet::new();
            let mut t = r(100);
            for _ in 0..600 {
                t += r(4);
                let ask = match r(30) {
                    0 => t + 64 * (GROW as u64) + r(200),
                    1 => t + r(2000),
                    _ => t.saturating_sub(r(40)),
                };
                let mut want = ask;
                while taken.contains(&want) {
                    want += 1;
                }
                taken.insert(want);
                assert_eq!(p.take(ask), want, "seed {seed}");
            }
        }
    }

    #[test]
    fn a_port_forgets_the_past() {
        let mut p = Port::default();
        for _ in 0..200 {
            p.take(0);
        }
        p.forget_before(130);
        // The calendar grew to words 0 to `GROW` with the first request.
        assert_eq!(p.span(), (1 + GROW as u64) * 64 - 128);
        // Cycles 128..200 are still taken.
        assert_eq!(p.take(130), 200);
        p.forget_before(10_000);
        assert_eq!(p.span(), 0);
        assert_eq!(p.take(0), 9_984);
        // Requests count from the origin; the calendar stays.
        p.set_origin(9_900);
        assert_eq!(p.take(84), 85);
    }
}

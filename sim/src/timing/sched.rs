//! The warp schedulers of an SM as resources of the timing replay ([`super::replay`]).
//!
//! [`Port`]: one warp scheduler's issue slots. A scheduler issues at most one SASS instruction per
//! cycle ([NV] VoltaWP and later: four sub-cores per SM, each with its own scheduler issuing one
//! warp instruction per clock); a warp asks for the first free cycle at or after the one its
//! operands are ready. Requests come roughly, not strictly, in cycle order (a warp issues in
//! dataflow order within a basic block, and a later wave's warps find the earlier wave's cycles
//! taken), so the port keeps a calendar of taken cycles rather than one next-free cycle.
//! [`Queue`]: the warps waiting to issue.

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
    /// Bit `c % 64` of word `(c - base) / 64` is set when cycle `c` is taken.
    words: Vec<u64>,
    /// `base - origin`, kept so that a request finds its word without the two.
    shift: i64,
}

impl Port {
    /// Empties the calendar (every cycle free).
    pub fn reset(&mut self) {
        self.origin = 0;
        self.base = 0;
        self.words.clear();
        self.shift = 0;
    }

    /// Cycles the calendar holds (how far ahead of [`Port::forget_before`] requests went).
    pub fn span(&self) -> u64 {
        self.words.len() as u64 * 64
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
        // Cycle `t` is bit `d % 64` of word `d / 64` (`base` is a multiple of 64).
        let d = (t as i64 - self.shift).max(0) as u64;
        let mut i = (d / 64) as usize;
        let mut below = (1u64 << (d % 64)) - 1;
        // Most requests find a free cycle in their own word.
        if let Some(word) = self.words.get_mut(i) {
            let free = !(*word | below);
            if free != 0 {
                *word |= free & free.wrapping_neg();
                let bit = free.trailing_zeros();
                return ((i as u64 * 64 + u64::from(bit)) as i64 + self.shift) as u64;
            }
            i += 1;
            below = 0;
        }
        loop {
            let Some(word) = self.words.get_mut(i) else {
                self.extend(i);
                continue;
            };
            let w = *word | below;
            if w != u64::MAX {
                let bit = (!w).trailing_zeros();
                *word |= 1 << bit;
                return ((i as u64 * 64 + u64::from(bit)) as i64 + self.shift) as u64;
            }
            i += 1;
            below = 0;
        }
    }

    /// Extends the calendar to word `i` (free cycles).
    #[cold]
    fn extend(&mut self, i: usize) {
        self.words.resize(i + 1, 0);
    }

    /// Forgets the cycles before `t`: no request will ask for them again.
    pub fn forget_before(&mut self, t: u64) {
        let t = t + self.origin;
        // Whole words before `t` go (rarely: only when the calendar grew long).
        let n = (t.saturating_sub(self.base) / 64).min(self.words.len() as u64);
        self.words.drain(..n as usize);
        self.base += n * 64;
        if self.words.is_empty() {
            self.base = self.base.max(t / 64 * 64);
        }
        self.shift = self.base as i64 - self.origin as i64;
    }
}

/// The warps waiting to issue, as keys `cycle << 32 | warp`, smallest first.
///
/// Keys of the next [`RING`] cycles from the earliest one sit in a ring of warp bitmaps, one
/// per cycle, with a bitmap of the cycles that have warps: finding the first key, the second
/// and moving the first to a later cycle are a few bit operations instead of a heap's walk (the
/// warps of an SM take turns, so the first key moves on at nearly every instruction). Keys
/// further ahead (warps waiting for memory) wait in a heap and move into the ring as it comes to
/// their cycle. Warp numbers past 63 do not fit a bitmap: a queue that gets one keeps every key
/// in the heap.
#[derive(Debug, Clone)]
pub struct Queue {
    /// The ring's first cycle: every key in the ring is of a cycle in `now..now + RING`, and
    /// every key in `far` of a later one.
    now: u64,
    /// Per cycle `c` of the ring, bit `w` of word `c % RING` is set when warp `w` waits for `c`.
    ring: [u64; RING],
    /// Bit `c % RING` is set when cycle `c`'s word has a warp.
    busy: u64,
    /// The later keys (all of them once `wide`).
    far: BinaryHeap<Reverse<u64>>,
    /// A warp number past 63 came: the ring is not used.
    wide: bool,
}

/// Cycles the ring holds (the bits of a word).
const RING: usize = 64;

impl Default for Queue {
    fn default() -> Self {
        Queue {
            now: 0,
            ring: [0; RING],
            busy: 0,
            far: BinaryHeap::new(),
            wide: false,
        }
    }
}

impl Queue {
    /// Empties the queue.
    pub fn clear(&mut self) {
        self.now = 0;
        // A queue emptied by its pops has an empty ring already (no memset per wave).
        if self.busy != 0 {
            self.ring = [0; RING];
            self.busy = 0;
        }
        self.far.clear();
        self.wide = false;
    }

    /// The smallest key and the second smallest (`u64::MAX` when there is none). Moves the ring
    /// on to the first key's cycle.
    #[inline]
    pub fn first_two(&mut self) -> Option<(u64, u64)> {
        if self.wide {
            let first = self.far.peek()?.0;
            let second = match *self.far.as_slice() {
                [_, Reverse(a), Reverse(b), ..] => a.min(b),
                [_, Reverse(a)] => a,
                _ => u64::MAX,
            };
            return Some((first, second));
        }
        if self.busy == 0 {
            // Only far keys, if any: the ring starts at the first one's cycle.
            self.now = self.far.peek()?.0 >> 32;
            self.pull();
        } else {
            let ahead = self.busy.rotate_right(slot(self.now)).trailing_zeros();
            if ahead > 0 {
                self.now += u64::from(ahead);
                self.pull();
            }
        }
        let word = self.ring[slot(self.now) as usize];
        let first = self.now << 32 | u64::from(word.trailing_zeros());
        Some((first, self.second(word)))
    }

    /// The second smallest key (`u64::MAX`: none), the ring at the smallest key's cycle and
    /// `word` that cycle's warps.
    #[inline(always)]
    fn second(&self, word: u64) -> u64 {
        let rest = word & word.wrapping_sub(1);
        if rest != 0 {
            return self.now << 32 | u64::from(rest.trailing_zeros());
        }
        let s = slot(self.now);
        let busy = self.busy & !(1 << s);
        if busy != 0 {
            let c = self.now + u64::from(busy.rotate_right(s).trailing_zeros());
            c << 32 | u64::from(self.ring[slot(c) as usize].trailing_zeros())
        } else {
            self.far.peek().map_or(u64::MAX, |k| k.0)
        }
    }

    /// Replaces the smallest key by `key`, of the same warp and after `second`, the second
    /// smallest, and returns [`Queue::first_two`]: `second` comes first, so only the key after
    /// it is looked for.
    #[inline]
    pub fn advance(&mut self, key: u64, second: u64) -> (u64, u64) {
        debug_assert!(key > second);
        if self.wide {
            self.replace_first(key);
            return self.first_two().unwrap_or((u64::MAX, u64::MAX));
        }
        self.pop_ring();
        self.put(key);
        // Every key is from `second` on: the ring moves on to its cycle.
        let c = second >> 32;
        if c != self.now {
            self.now = c;
            self.pull();
        }
        let word = self.ring[slot(c) as usize];
        (second, self.second(word))
    }

    /// Removes the smallest key (after [`Queue::first_two`]).
    #[inline]
    pub fn pop(&mut self) {
        if self.wide {
            self.far.pop();
        } else {
            self.pop_ring();
        }
    }

    /// Adds `key`.
    pub fn push(&mut self, key: u64) {
        if !self.wide && (key as u32 as usize >= RING || key >> 32 < self.now) {
            self.widen();
        }
        if self.wide {
            self.far.push(Reverse(key));
        } else {
            self.put(key);
        }
    }

    /// Replaces the smallest key by `key`, of the same warp and a cycle no earlier (after
    /// [`Queue::first_two`]).
    #[inline]
    pub fn replace_first(&mut self, key: u64) {
        if self.wide {
            if let Some(mut first) = self.far.peek_mut() {
                *first = Reverse(key);
            }
        } else {
            self.pop_ring();
            self.put(key);
        }
    }

    /// Removes the ring's first key (the ring holds the smallest key).
    #[inline(always)]
    fn pop_ring(&mut self) {
        let s = slot(self.now);
        let word = &mut self.ring[s as usize];
        *word &= word.wrapping_sub(1);
        if *word == 0 {
            self.busy &= !(1 << s);
        }
    }

    /// Adds `key`, of a warp below [`RING`] and a cycle from `now` on, to the ring or the heap.
    #[inline(always)]
    fn put(&mut self, key: u64) {
        let c = key >> 32;
        if c - self.now >= RING as u64 {
            self.far.push(Reverse(key));
            return;
        }
        let s = slot(c);
        self.ring[s as usize] |= 1 << (key as u32 % RING as u32);
        self.busy |= 1 << s;
    }

    /// Moves the far keys of the ring's cycles into it.
    #[inline]
    fn pull(&mut self) {
        while let Some(&Reverse(k)) = self.far.peek() {
            if k >> 32 >= self.now + RING as u64 {
                break;
            }
            self.far.pop();
            let s = slot(k >> 32);
            self.ring[s as usize] |= 1 << (k as u32 % RING as u32);
            self.busy |= 1 << s;
        }
    }

    /// Puts every key in the heap and leaves the ring unused.
    #[cold]
    fn widen(&mut self) {
        for (s, &word) in self.ring.iter().enumerate() {
            let mut m = word;
            while m != 0 {
                let w = m.trailing_zeros();
                m &= m - 1;
                // The cycle of slot `s` in `now..now + RING`.
                let c = self.now + (s as u64).wrapping_sub(self.now) % RING as u64;
                self.far.push(Reverse(c << 32 | u64::from(w)));
            }
        }
        self.ring = [0; RING];
        self.busy = 0;
        self.wide = true;
    }
}

/// The ring word of cycle `c`.
#[inline(always)]
fn slot(c: u64) -> u32 {
    (c % RING as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_keeps_its_keys_in_order() {
        let key = |c: u64, w: u64| c << 32 | w;
        // In the ring and past it, and all in the heap once a warp number past 63 came.
        for wide in [false, true] {
            let mut q = Queue::default();
            assert_eq!(q.first_two(), None);
            let mut keys = vec![key(0, 5), key(0, 3), key(2, 9), key(0, 1), key(70, 7)];
            keys.extend([key(500, 4), key(65, 2)]);
            if wide {
                keys.push(key(1, 64));
            }
            keys.iter().for_each(|&k| q.push(k));
            assert_eq!(q.first_two(), Some((key(0, 1), key(0, 3))));
            q.replace_first(key(3, 1));
            assert_eq!(q.first_two(), Some((key(0, 3), key(0, 5))));
            q.pop();
            let after = if wide { key(1, 64) } else { key(2, 9) };
            assert_eq!(q.first_two(), Some((key(0, 5), after)));
            q.replace_first(key(66, 5));
            let mut out = vec![];
            while let Some((k, second)) = q.first_two() {
                out.push(k);
                q.pop();
                if k == key(2, 9) {
                    q.push(key(64, 8));
                }
                assert_eq!(q.first_two().map_or(u64::MAX, |f| f.0), second);
            }
            let mut want = vec![key(2, 9), key(3, 1), key(64, 8), key(65, 2), key(66, 5)];
            want.extend([key(70, 7), key(500, 4)]);
            if wide {
                want.insert(0, key(1, 64));
            }
            assert_eq!(out, want);
        }
    }

    #[test]
    fn advance_is_replace_first_then_first_two() {
        let key = |c: u64, w: u64| c << 32 | w;
        for wide in [false, true] {
            let (mut a, mut b) = (Queue::default(), Queue::default());
            let mut keys = vec![key(0, 5), key(0, 3), key(1, 9), key(2, 1), key(90, 7)];
            if wide {
                keys.push(key(300, 64));
            }
            for &k in &keys {
                a.push(k);
                b.push(k);
            }
            // Warps move on by a few cycles, now and then far ahead (into the heap).
            for step in 0..40u64 {
                let (first, second) = a.first_two().unwrap();
                assert_eq!(b.first_two(), Some((first, second)));
                if second == u64::MAX {
                    break;
                }
                let ahead = if step % 7 == 6 { 100 } else { 1 + step % 3 };
                let next = ((second >> 32) + ahead) << 32 | (first & 0xffff_ffff);
                a.replace_first(next);
                assert_eq!(b.advance(next, second), a.first_two().unwrap());
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
    fn a_port_forgets_the_past() {
        let mut p = Port::default();
        for _ in 0..200 {
            p.take(0);
        }
        p.forget_before(130);
        assert_eq!(p.span(), 128);
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

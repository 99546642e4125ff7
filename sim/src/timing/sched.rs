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

/// The warps waiting to issue, as keys, smallest first: a binary heap whose front warp leaves
/// or comes back with a later key.
#[derive(Debug, Clone, Default)]
pub struct Queue(BinaryHeap<Reverse<u64>>);

impl Queue {
    /// Empties the queue.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The smallest key.
    #[inline]
    pub fn first(&self) -> Option<u64> {
        self.0.peek().map(|k| k.0)
    }

    /// The second smallest key, `u64::MAX` when there is none: a child of the first.
    #[inline]
    pub fn second(&self) -> u64 {
        match *self.0.as_slice() {
            [_, Reverse(a), Reverse(b), ..] => a.min(b),
            [_, Reverse(a)] => a,
            _ => u64::MAX,
        }
    }

    /// Removes the smallest key.
    #[inline]
    pub fn pop(&mut self) {
        self.0.pop();
    }

    /// Adds `key`.
    #[inline]
    pub fn push(&mut self, key: u64) {
        self.0.push(Reverse(key));
    }

    /// Replaces the smallest key by `key` (one sift instead of a pop and a push).
    #[inline]
    pub fn replace_first(&mut self, key: u64) {
        if let Some(mut first) = self.0.peek_mut() {
            *first = Reverse(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_keeps_its_keys_in_order() {
        let mut q = Queue::default();
        assert_eq!(q.first(), None);
        for k in [5, 3, 9, 1, 7] {
            q.push(k);
        }
        assert_eq!((q.first(), q.second()), (Some(1), 3));
        q.replace_first(8);
        assert_eq!((q.first(), q.second()), (Some(3), 5));
        q.replace_first(2);
        assert_eq!((q.first(), q.second()), (Some(2), 5));
        let mut out = vec![];
        while let Some(k) = q.first() {
            out.push(k);
            q.pop();
            if k == 5 {
                q.push(6);
            }
        }
        assert_eq!(out, vec![2, 5, 6, 7, 8, 9]);
        assert_eq!(q.second(), u64::MAX);
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

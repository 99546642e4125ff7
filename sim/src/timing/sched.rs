//! The warp schedulers of an SM as resources of the timing replay ([`super::replay`]).
//!
//! [`Port`]: one warp scheduler's issue slots. A scheduler issues at most one SASS instruction per
//! cycle ([NV] VoltaWP and later: four sub-cores per SM, each with its own scheduler issuing one
//! warp instruction per clock); a warp asks for the first free cycle at or after the one its
//! operands are ready. Requests come roughly, not strictly, in cycle order (a warp issues in
//! dataflow order within a basic block, and a later wave's warps find the earlier wave's cycles
//! taken), so the port keeps a calendar of taken cycles rather than one next-free cycle.

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
}

impl Port {
    /// Empties the calendar (every cycle free).
    pub fn reset(&mut self) {
        self.origin = 0;
        self.base = 0;
        self.words.clear();
    }

    /// Cycles the calendar holds (how far ahead of [`Port::forget_before`] requests went).
    pub fn span(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// Makes requests count from cycle `origin` of the launch (the calendar stays).
    pub fn set_origin(&mut self, origin: u64) {
        self.origin = origin;
    }

    /// Takes the first free cycle at or after `t` and returns it. A cycle before the forgotten
    /// ones counts as the first one remembered.
    #[inline]
    pub fn take(&mut self, t: u64) -> u64 {
        self.take_abs(t + self.origin) - self.origin
    }

    #[inline]
    fn take_abs(&mut self, t: u64) -> u64 {
        let t = t.max(self.base);
        let mut i = ((t - self.base) / 64) as usize;
        let mut below = (1u64 << (t % 64)) - 1;
        loop {
            let Some(word) = self.words.get_mut(i) else {
                self.extend(i);
                continue;
            };
            let w = *word | below;
            if w != u64::MAX {
                let bit = (!w).trailing_zeros();
                *word |= 1 << bit;
                return self.base + i as u64 * 64 + u64::from(bit);
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

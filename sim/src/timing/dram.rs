//! One SM's share of the DRAM bandwidth as a calendar of bytes per time bin.
//!
//! The timing replay reaches a warp's accesses in its stream's order, not in cycle order (within
//! a basic block a warp issues in dataflow order: a load late in the stream may issue before a
//! store early in it), so a queue that only remembers the cycle it is free until would make a
//! request wait for every request the replay happened to reach first, even ones issued after
//! it. The calendar instead keeps how many bytes each bin of [`BIN`] cycles has moved: a request
//! takes capacity from its own issue cycle on, so it waits only for what was booked at or after
//! that cycle, first come first served where the replay reaches requests in cycle order.

use std::collections::VecDeque;

/// Cycles per bin.
pub const BIN: f64 = 32.0;

/// Bins the calendar holds at most (about a million cycles); older ones are forgotten, and a
/// request issued before them counts from the first bin it remembers.
const MAX_BINS: usize = 1 << 15;

/// Bytes booked per bin of one SM's DRAM share, from bin `base` on.
#[derive(Debug, Clone, Default)]
pub struct DramCalendar {
    /// Bytes per cycle of the share; 0 leaves DRAM unqueued.
    share: f64,
    /// Cycle of the calendar that cycle 0 of the current wave is.
    origin: f64,
    /// Index of `used[0]`'s bin.
    base: i64,
    /// Bytes booked in each bin, from `base` on.
    used: VecDeque<f64>,
}

impl DramCalendar {
    /// An empty calendar that moves `share` bytes per cycle (0: no queue).
    pub fn new(share: f64) -> Self {
        Self {
            share,
            ..Default::default()
        }
    }

    /// Bytes per cycle it moves.
    pub fn share(&self) -> f64 {
        self.share
    }

    /// Books `bytes` issued at cycle `now` (of the current wave) and returns the bytes ahead of
    /// them including them: the cycles until they are moved times the share, at least `bytes`.
    /// Zero bytes book nothing and return what is booked ahead of `now` in its bin.
    pub fn take(&mut self, now: f64, bytes: u64) -> u64 {
        if self.share <= 0.0 {
            return bytes;
        }
        let t = now + self.origin;
        let cap = self.share * BIN;
        let mut k = ((t / BIN).floor() as i64).max(self.base);
        let mut start = t.max(k as f64 * BIN);
        let mut left = bytes as f64;
        loop {
            let i = self.slot(k);
            let end = (k + 1) as f64 * BIN;
            // What the bin has left from `start` to its end; bytes booked in it count as ahead.
            let room = cap * (end - start) / BIN - self.used[i];
            if room >= left || left == 0.0 {
                let ahead = self.used[i] + left;
                self.used[i] += left;
                let done = start + ahead / self.share;
                return (((done - t) * self.share).round() as u64).max(bytes);
            }
            if room > 0.0 {
                self.used[i] += room;
                left -= room;
            }
            k += 1;
            start = k as f64 * BIN;
        }
    }

    /// Cycles of the current wave now count from `cycles` later (the next wave's start).
    pub fn advance(&mut self, cycles: u64) {
        self.origin += cycles as f64;
    }

    /// The index in `used` of bin `k` (at least `base`), grown to hold it and trimmed.
    fn slot(&mut self, k: i64) -> usize {
        let mut i = (k - self.base) as usize;
        if i >= self.used.len() + MAX_BINS {
            // Far past everything booked: start over from this bin.
            self.used.clear();
            self.base = k;
            i = 0;
        }
        if i >= self.used.len() {
            self.used.resize(i + 1, 0.0);
        }
        while self.used.len() > MAX_BINS {
            self.used.pop_front();
            self.base += 1;
            i -= 1;
        }
        i
    }
}

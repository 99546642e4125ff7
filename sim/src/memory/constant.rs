//! The indexed constant cache: one request per distinct address.
//!
//! "A request is split into as many separate requests as there are different memory addresses in
//! the initial request, decreasing throughput by a factor equal to the number of separate
//! requests" (CUDA C++ Programming Guide §5.3.2, "Constant Memory"). On compute capability 1.x a
//! warp's request is first split into two half-warp requests (CUDA C Programming Guide 4.2
//! §5.3.2.4), modelled by `broadcast_lanes = 16`. Measured on Hopper: `idc__requests.sum` per LDC
//! equals the number of distinct addresses even when they share a cache line (see
//! reference/anchors.md), so requests are per address, not per line.

use super::cache::{to_front, Geometry};
use super::{WarpAccess, WordSet};

/// One level of the constant cache: set-associative, LRU, read-only, a line filled whole by the
/// request that missed it (one sector per line), so it keeps tags only.
///
/// Each set's tags are kept in recency order, most recent first: a hit moves its line to the
/// front, a miss replaces the last. The same outcomes as a [`super::cache::SectorCache`] of
/// one sector per line read with allocation, for a few words per set and no sector state.
#[derive(Debug, Clone)]
pub struct ConstCache {
    /// Line numbers by set, `ways` a set, [`Self::EMPTY`] for none (unless sets are of four).
    tags: Vec<u64>,
    /// The sets when they are of four ways (the shipped configs' constant caches, most recent
    /// first): one bounds check and no multiply to find a set.
    four: Vec<[u64; 4]>,
    ways: usize,
    sets: u64,
    /// `sets - 1` when the set count is a power of two (a mask instead of a division).
    set_mask: Option<u64>,
    /// log2 of the line size (a power of two).
    line_shift: u32,
}

impl ConstCache {
    const EMPTY: u64 = u64::MAX;

    /// An empty (cold) cache of geometry `g` (its sector size is ignored: a line is one sector).
    pub fn new(g: Geometry) -> Self {
        let ways = g.associativity.max(1) as usize;
        let sets = g.sets();
        let four = ways == 4;
        ConstCache {
            tags: vec![Self::EMPTY; if four { 0 } else { sets as usize * ways }],
            four: vec![[Self::EMPTY; 4]; if four { sets as usize } else { 0 }],
            ways,
            sets,
            set_mask: sets.is_power_of_two().then(|| sets - 1),
            line_shift: g.line_bytes.trailing_zeros(),
        }
    }

    /// Reads the line holding byte `addr`: `true` on a hit; a miss fills the line, evicting the
    /// set's least recently used one.
    #[inline]
    pub fn read(&mut self, addr: u64) -> bool {
        let line = addr >> self.line_shift;
        let set = match self.set_mask {
            Some(m) => line & m,
            None => line % self.sets,
        } as usize;
        if let Some(four) = self.four.get_mut(set) {
            return read_four(four, line);
        }
        let tags = &mut self.tags[set * self.ways..][..self.ways];
        match tags.iter().position(|&t| t == line) {
            Some(p) => {
                to_front(&mut tags[..=p]);
                true
            }
            None => {
                tags[self.ways - 1] = line;
                to_front(tags);
                false
            }
        }
    }
}

impl ConstCache {
    /// [`ConstCache::read`] of `words[r]` for each request `r` of `pending`, in order: `hit(r)`
    /// for each hit; the requests that missed are kept at the front of `pending`, in order, and
    /// counted in the return value. Sets of four indexed by a mask (the shipped configs) in a
    /// loop of their own, the geometry read once.
    #[inline]
    pub fn read_each(
        &mut self,
        words: &[u64; 32],
        pending: &mut [u8],
        mut hit: impl FnMut(u8),
    ) -> usize {
        let mut kept = 0;
        if let (Some(m), false) = (self.set_mask, self.four.is_empty()) {
            let (shift, four) = (self.line_shift, &mut self.four[..]);
            for j in 0..pending.len() {
                let r = pending[j];
                let line = words[usize::from(r) & 31] >> shift;
                if read_four(&mut four[(line & m) as usize], line) {
                    hit(r);
                } else {
                    pending[kept] = r;
                    kept += 1;
                }
            }
            return kept;
        }
        for j in 0..pending.len() {
            let r = pending[j];
            if self.read(words[usize::from(r) & 31]) {
                hit(r);
            } else {
                pending[kept] = r;
                kept += 1;
            }
        }
        kept
    }

    /// [`ConstCache::read_each`] of `near`, then of `far` for the requests `near` missed, in
    /// one walk over the requests (the levels share nothing, so each sees its requests in the
    /// same order): `hit(r, 0)` or `hit(r, 1)` for each request served by `near` or `far`; the
    /// requests both missed are kept at the front of `pending`, in order. Returns how many
    /// `near` missed and how many both missed. Not inlined: out of the caller's loop the walk
    /// keeps its state in registers.
    #[inline(never)]
    pub fn read_two(
        near: &mut ConstCache,
        far: &mut ConstCache,
        words: &[u64; 32],
        pending: &mut [u8],
        mut hit: impl FnMut(u8, u8),
    ) -> (usize, usize) {
        let (Some(nm), Some(fm), false, false) = (
            near.set_mask,
            far.set_mask,
            near.four.is_empty(),
            far.four.is_empty(),
        ) else {
            let missed = near.read_each(words, pending, |r| hit(r, 0));
            return (
                missed,
                far.read_each(words, &mut pending[..missed], |r| hit(r, 1)),
            );
        };
        let (ns, fs) = (near.line_shift, far.line_shift);
        let (nf, ff) = (&mut near.four[..], &mut far.four[..]);
        let (mut missed, mut kept) = (0, 0);
        for j in 0..pending.len() {
            let r = pending[j];
            let addr = words[usize::from(r) & 31];
            let line = addr >> ns;
            if read_four(&mut nf[(line & nm) as usize], line) {
                hit(r, 0);
                continue;
            }
            missed += 1;
            let line = addr >> fs;
            if read_four(&mut ff[(line & fm) as usize], line) {
                hit(r, 1);
            } else {
                pending[kept] = r;
                kept += 1;
            }
        }
        (missed, kept)
    }
}

/// [`ConstCache::read`] of a set of four ways (the shipped configs' constant caches): the
/// compares and the move to the front unrolled, no loop or jump table.
#[inline(always)]
fn read_four(t: &mut [u64; 4], line: u64) -> bool {
    let [a, b, c, d] = *t;
    if a == line {
        return true;
    }
    if b == line {
        *t = [b, a, c, d];
        return true;
    }
    if c == line {
        *t = [c, a, b, d];
        return true;
    }
    // A hit in the last way moves it to the front; a miss replaces it there.
    *t = [line, a, b, c];
    d == line
}

/// The requests of one warp access: at most one per lane, kept inline so the hot path does not
/// allocate.
pub type Requests = smallvec::SmallVec<[u64; 32]>;

/// The distinct addresses of the access, per group of `broadcast_lanes` consecutive lanes (32: the
/// whole warp; 16: each half-warp on its own), in the order they would be served. Two lanes reading
/// any bytes of the same 4-byte word share a request.
pub fn requests(access: &WarpAccess, broadcast_lanes: u32) -> Requests {
    let group = broadcast_lanes.clamp(1, 32) as usize;
    let mut out = Requests::new();
    let mut start = 0;
    while start < 32 {
        // The group's distinct words in lane order, without comparing every pair.
        let mut seen = WordSet::<64>::new();
        for (lane, a) in access.lanes() {
            if lane >= start && lane < start + group && seen.insert(a & !3) {
                out.push(a & !3);
            }
        }
        start += group;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_cache_evicts_the_least_recent_line_as_a_sector_cache_does() {
        use crate::memory::cache::SectorCache;
        let g = Geometry {
            size_bytes: 2048,
            line_bytes: 64,
            sector_bytes: 64,
            associativity: 4,
        };
        let (mut fast, mut reference) = (ConstCache::new(g), SectorCache::new(g));
        // Lines of one set and of others, revisited out of order: hits, misses and evictions.
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let addr = (x >> 33) % (64 * 64) * 4;
            assert_eq!(
                fast.read(addr),
                reference.access(addr, false, true).hit,
                "{addr:#x}"
            );
        }
    }

    #[test]
    fn two_levels_in_one_walk_match_level_by_level() {
        let g = |size_bytes, line_bytes| Geometry {
            size_bytes,
            line_bytes,
            sector_bytes: line_bytes,
            associativity: 4,
        };
        let (near, far) = (ConstCache::new(g(2048, 64)), ConstCache::new(g(8192, 256)));
        let (mut a, mut b) = ((near.clone(), far.clone()), (near, far));
        let mut x = 99u64;
        for _ in 0..500 {
            let mut words = [0u64; 32];
            for w in &mut words {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *w = (x >> 33) % 16384 * 4;
            }
            let n = (x >> 20) as usize % 33;
            let mut pending: [u8; 32] = std::array::from_fn(|i| i as u8);
            let mut served = [9u8; 32];
            let (missed, kept) =
                ConstCache::read_two(&mut a.0, &mut a.1, &words, &mut pending[..n], |r, k| {
                    served[usize::from(r)] = k
                });
            let mut want_pending: [u8; 32] = std::array::from_fn(|i| i as u8);
            let mut want_served = [9u8; 32];
            let want_missed = b.0.read_each(&words, &mut want_pending[..n], |r| {
                want_served[usize::from(r)] = 0
            });
            let want_kept =
                b.1.read_each(&words, &mut want_pending[..want_missed], |r| {
                    want_served[usize::from(r)] = 1
                });
            assert_eq!((missed, kept), (want_missed, want_kept));
            assert_eq!(pending[..kept], want_pending[..kept]);
            assert_eq!(served, want_served);
        }
    }

    #[test]
    fn broadcast_is_one_request() {
        assert_eq!(requests(&WarpAccess::from_fn(4, |_| 64), 32).len(), 1);
    }

    #[test]
    fn distinct_addresses_in_one_line_are_separate_requests() {
        assert_eq!(
            requests(&WarpAccess::from_fn(4, |l| 4 * (l % 8)), 32).len(),
            8
        );
    }

    #[test]
    fn half_warp_broadcast_on_compute_1x() {
        assert_eq!(requests(&WarpAccess::from_fn(4, |_| 64), 16).len(), 2);
        assert_eq!(requests(&WarpAccess::from_fn(4, |l| 4 * l), 16).len(), 32);
    }

    #[test]
    fn inactive_lanes_do_not_count() {
        let mut a = WarpAccess::from_fn(4, |l| 4 * l);
        a.mask = 0b1011;
        assert_eq!(requests(&a, 32).to_vec(), vec![0, 4, 12]);
    }
}

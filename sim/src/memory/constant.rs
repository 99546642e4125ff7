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
use super::{Level, WarpAccess, WordSet, WARP};

pub mod fills;
pub mod merge;

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

    /// log2 of the line size in bytes.
    pub fn line_shift(&self) -> u32 {
        self.line_shift
    }

    /// Empties the cache (invalidates every line).
    pub fn clear(&mut self) {
        self.tags.fill(Self::EMPTY);
        self.four.fill([Self::EMPTY; 4]);
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

/// One warp's requests on their way through the constant levels: the words requested, in
/// service order, where each was served, and the requests no level has served yet. Kept together
/// so that a walk over the requests reaches all three from one pointer and keeps its registers
/// for the lookups.
#[derive(Debug, Clone)]
pub struct Walk {
    /// The requested words, request `r` at `words[r]`.
    pub words: [u64; 32],
    /// Where each request was served (the first as many as there are requests): a level's
    /// walk sets it for the requests that level hit, [`Level::L2`] for those every level missed.
    /// [`ConstCache::read_two`] sets every request's; a walk of [`ConstCache::read_each`] alone
    /// sets only the hits', on requests set to [`Level::L2`] before it.
    pub served: [Level; 32],
    /// The requests not served yet, in order (as many as the walk says).
    pub pending: [u8; 32],
}

impl Walk {
    /// No requests yet. `served` is left for the walk to set: `Level::Cache(0)` is stored as
    /// two defined bytes, a vector store, where `Level::L2`, whose second byte is undefined,
    /// took one byte store per request.
    #[inline]
    pub fn new() -> Self {
        Walk {
            words: [0; 32],
            served: [Level::Cache(0); 32],
            pending: [0; 32],
        }
    }

    /// Readies the requests for walks of [`ConstCache::read_each`] alone: every request
    /// pending, in order, and served by L2 until a level hits it.
    pub fn unserved(&mut self) {
        (self.pending, self.served) = (std::array::from_fn(|i| i as u8), [Level::L2; 32]);
    }
}

impl Default for Walk {
    fn default() -> Self {
        Self::new()
    }
}

impl ConstCache {
    /// [`ConstCache::read`] of `w.words[r]` for each request `r` of `w.pending[..left]`, in
    /// order: `w.served[r]` is `Level::Cache(k)` for each hit (and left as it was for a miss);
    /// the requests that missed are kept at the front of `w.pending`, in order, and counted in
    /// the return value. Sets of four indexed by a mask (the shipped configs) in a loop of their
    /// own, the geometry read once.
    #[inline]
    pub fn read_each(&mut self, w: &mut Walk, left: usize, k: u8) -> usize {
        let mut kept = 0;
        if self.set_mask.is_some() && !self.four.is_empty() {
            // `set_mask` is `four.len() - 1`: masking by it keeps the index in bounds, unchecked.
            let (shift, four) = (self.line_shift, &mut self.four[..]);
            let m = four.len() - 1;
            for j in 0..left.min(32) {
                let r = usize::from(w.pending[j]) & 31;
                let line = w.words[r] >> shift;
                if read_four(&mut four[line as usize & m], line) {
                    w.served[r] = Level::Cache(k);
                } else {
                    w.pending[kept & 31] = r as u8;
                    kept += 1;
                }
            }
            return kept;
        }
        for j in 0..left.min(32) {
            let r = usize::from(w.pending[j]) & 31;
            if self.read(w.words[r]) {
                w.served[r] = Level::Cache(k);
            } else {
                w.pending[kept & 31] = r as u8;
                kept += 1;
            }
        }
        kept
    }

    /// The first two levels' lookups of requests `0..n` (none served yet): [`read_each`] of
    /// `near` over them all, then of `far` over those `near` missed, in one walk over the
    /// requests (the levels share nothing, so each sees its requests in the same order).
    /// `w.served[..n]` says `Level::Cache(0)` or `Level::Cache(1)` for each request served by
    /// `near` or `far`, [`Level::L2`] for one both missed; the requests both missed are put at
    /// the front of `w.pending`, in order.
    /// Returns how many `near` missed and how many both missed. Not inlined: out of the
    /// caller's loop the walk keeps its state in registers.
    ///
    /// [`read_each`]: ConstCache::read_each
    #[inline(never)]
    pub fn read_two(
        near: &mut ConstCache,
        far: &mut ConstCache,
        w: &mut Walk,
        n: usize,
    ) -> (usize, usize) {
        let n = n.min(32);
        if near.set_mask.is_none()
            || far.set_mask.is_none()
            || near.four.is_empty()
            || far.four.is_empty()
        {
            w.unserved();
            let missed = near.read_each(w, n, 0);
            return (missed, far.read_each(w, missed, 1));
        }
        let (ns, fs) = (near.line_shift, far.line_shift);
        let (nf, ff) = (&mut near.four[..], &mut far.four[..]);
        // Each set mask is its level's set count less one: masking by it keeps the set index in
        // bounds, unchecked.
        let (nm, fm) = (nf.len() - 1, ff.len() - 1);
        let (mut missed, mut kept) = (0, 0);
        // Served by `far` unless found otherwise: a request `near` missed and `far` hit (the
        // usual outcome when a warp's requests scatter over more lines than `near` holds)
        // costs no store.
        w.served = [Level::Cache(1); 32];
        for j in 0..n {
            let addr = w.words[j];
            let line = addr >> ns;
            if read_four(&mut nf[line as usize & nm], line) {
                w.served[j] = Level::Cache(0);
                continue;
            }
            missed += 1;
            let line = addr >> fs;
            if !read_four(&mut ff[line as usize & fm], line) {
                w.served[j] = Level::L2;
                w.pending[kept & 31] = j as u8;
                kept += 1;
            }
        }
        (missed, kept)
    }
}

/// [`ConstCache::read`] of a set of four ways (the shipped configs' constant caches): the
/// compares and the move to the front unrolled, no loop or jump table. The portable form of
/// the AVX2 one below, and its reference in the tests.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "avx2"))))]
#[inline(always)]
fn read_four_portable(t: &mut [u64; 4], line: u64) -> bool {
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

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
use read_four_portable as read_four;

/// [`read_four_portable`] with the four compares in one AVX2 instruction: the usual outcomes
/// (a miss, which is most lookups of the nearest level, or a hit in the last way, which a
/// cyclic walk over a set's lines gets at every level) take one shuffle and one store, and the
/// set stays out of the general registers that the walk over the requests needs.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[inline(always)]
fn read_four(t: &mut [u64; 4], line: u64) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: the cfg above builds this only for AVX2 targets (`crate::check_cpu` refuses a CPU
    // without AVX2), and the unaligned load and store cover exactly the 32 bytes of `t`.
    unsafe {
        let v = _mm256_loadu_si256(t.as_ptr().cast());
        let l = _mm256_set1_epi64x(line as i64);
        // Bit i: way i holds the line (at most one way does: `line` is never `EMPTY`).
        let m = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, l)));
        if m & 0b0111 == 0 {
            // A miss or a hit in the last way (the usual outcomes, tested first): the first three
            // move back one way and `line` takes the front.
            let back = _mm256_permute4x64_epi64::<0b10_01_00_00>(v);
            _mm256_storeu_si256(t.as_mut_ptr().cast(), _mm256_blend_epi32::<0b11>(back, l));
            return m != 0;
        }
        if m & 0b0110 != 0 {
            // A hit in the second or third way moves it to the front.
            let [a, b, c, d] = *t;
            *t = if m & 0b0010 != 0 {
                [b, a, c, d]
            } else {
                [c, a, b, d]
            };
        }
        // A hit in the first way changes nothing.
        true
    }
}

/// The requests of one warp access: at most one per lane, kept inline so the hot path does not
/// allocate.
pub type Requests = smallvec::SmallVec<[u64; 32]>;

/// The distinct addresses of the access, per group of `broadcast_lanes` consecutive lanes (32: the
/// whole warp; 16: each half-warp on its own), in the order they would be served. Two lanes reading
/// any bytes of the same 4-byte word share a request.
pub fn requests(access: &WarpAccess, broadcast_lanes: u32) -> Requests {
    let mut words = [0; 32];
    let n = distinct_words(access, broadcast_lanes.clamp(1, 32) as usize, &mut words);
    Requests::from_slice(&words[..n])
}

/// The distinct words (addresses with the low two bits cleared) of the access per group of
/// `group` consecutive lanes (1 to 32), in the order they are served: group by group, each in
/// lane order of its first reader. Written to the front of `words`; returns how many.
///
/// Most warps need no set look-up: the low six bits of each word's index (`word / 4 % 64`) go
/// into a 64-bit mask, and when a group sets as many bits as it has lanes its words differ in
/// those bits alone, so they are all distinct (any stride of an odd number of words, as
/// consecutive or the usual scattered accesses are). One bit set and every word the first is a
/// broadcast. Only the rest go through a `WordSet`.
///
/// Not inlined: inlined where the access is one of two (as resolved or as given), the whole
/// warp's lanes were loaded one by one, each through a choice between the two.
#[inline(never)]
pub fn distinct_words(access: &WarpAccess, group: usize, words: &mut [u64; 32]) -> usize {
    let group = group.clamp(1, 32);
    if group == 32 && access.mask == u32::MAX {
        // The whole warp, every lane active: each lane's word in its own slot, in one
        // vectorizable pass.
        let mut keys = 0u64;
        for (w, &a) in words.iter_mut().zip(&access.addrs) {
            *w = a & !3;
            keys |= 1 << ((a >> 2) & 63);
        }
        return match keys.count_ones() {
            32 => 32,
            _ => dedup(words, 0, 32),
        };
    }
    distinct_words_by_group(access, group, words)
}

/// [`distinct_words`] group by group and lane by lane (`group` 1 to 32), for half-warp
/// broadcasts and partial masks: out of line, so that the whole-warp pass saves no registers.
#[inline(never)]
fn distinct_words_by_group(access: &WarpAccess, group: usize, words: &mut [u64; 32]) -> usize {
    let mut n = 0;
    for start in (0..WARP).step_by(group) {
        let first = n;
        let mut keys = 0u64;
        let mut m = access.phase_mask(start, group);
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = access.addrs[lane];
            // At most 32 words: the mask only saves the bounds check.
            words[n & 31] = a & !3;
            n += 1;
            keys |= 1 << ((a >> 2) & 63);
        }
        if keys.count_ones() as usize != n - first {
            n = dedup(words, first, n);
        }
    }
    n
}

/// Keeps the first of each word of `words[first..n]` (in order, from `first` on); returns the
/// new end. A broadcast (every word the same) is found without a set.
#[inline(never)]
fn dedup(words: &mut [u64; 32], first: usize, n: usize) -> usize {
    let group = &words[first.min(n)..n];
    if group.iter().all(|&w| w == group[0]) {
        return first + 1;
    }
    // The group's distinct words in lane order, without comparing every pair.
    let mut seen = WordSet::<64>::new();
    let mut k = first;
    for i in first..n.min(32) {
        let w = words[i];
        if seen.insert(w) {
            words[k] = w;
            k += 1;
        }
    }
    k
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
            x = crate::testing::lcg(x);
            let addr = (x >> 33) % (64 * 64) * 4;
            assert_eq!(
                fast.read(addr),
                reference.access(addr, false, true).hit,
                "{addr:#x}"
            );
        }
    }

    #[test]
    fn read_four_matches_its_portable_form() {
        // Sets with empty ways and full ones, lines in and out of them, every way hit.
        let mut x = 7u64;
        let (mut fast, mut reference) = ([[ConstCache::EMPTY; 4]; 3], [[ConstCache::EMPTY; 4]; 3]);
        for _ in 0..20_000 {
            x = crate::testing::lcg(x);
            let (set, line) = ((x >> 40) as usize % 3, (x >> 50) % 7);
            assert_eq!(
                read_four(&mut fast[set], line),
                read_four_portable(&mut reference[set], line)
            );
            assert_eq!(fast, reference);
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
            let mut w = Walk::new();
            for word in &mut w.words {
                x = crate::testing::lcg(x);
                *word = (x >> 33) % 16384 * 4;
            }
            let n = (x >> 20) as usize % 33;
            let mut want = w.clone();
            let (missed, kept) = ConstCache::read_two(&mut a.0, &mut a.1, &mut w, n);
            want.pending = std::array::from_fn(|i| i as u8);
            want.served = [Level::L2; 32];
            let want_missed = b.0.read_each(&mut want, n, 0);
            let want_kept = b.1.read_each(&mut want, want_missed, 1);
            assert_eq!((missed, kept), (want_missed, want_kept));
            assert_eq!(w.pending[..kept], want.pending[..kept]);
            assert_eq!(w.served[..n], want.served[..n]);
        }
    }

    #[test]
    fn distinct_words_match_a_search_of_every_earlier_lane() {
        // Broadcasts, strides of odd and even words (keys distinct or colliding), few words and
        // scattered ones, all lanes or random masks, every group size used.
        let mut x = 5u64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            x >> 33
        };
        for i in 0..20_000 {
            let (base, stride, span) = (next() % 4096, next() % 70, [8, 256, 65536][i % 3]);
            let random = i % 4 == 0;
            let mut a = WarpAccess::from_fn(4, |_| 0);
            for l in 0..32 {
                a.addrs[l] = if random {
                    next() % span
                } else {
                    base + l as u64 * stride
                };
            }
            if i % 5 == 1 {
                a.mask = (next() as u32) | (next() as u32) << 16;
            }
            let group = [32, 16, 8, 1, 3][i % 5];
            let mut want = Vec::new();
            for start in (0..32).step_by(group) {
                let first = want.len();
                for (lane, addr) in a.lanes() {
                    let w = addr & !3;
                    if (start..start + group).contains(&lane) && !want[first..].contains(&w) {
                        want.push(w);
                    }
                }
            }
            let mut words = [0; 32];
            let n = distinct_words(&a, group, &mut words);
            assert_eq!(words[..n], want[..], "{i}");
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

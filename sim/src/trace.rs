//! What the functional pass of a block leaves for the two passes after it: the L2 requests its
//! warps made, in issue order, and each warp's instruction stream with the latencies known so far.
//!
//! The functional pass runs the blocks of different SMs on different threads; an access that
//! misses the SM's own caches cannot be priced there, because the L2 it reaches is shared. It
//! leaves a ticket instead ([`Lat::Request`]), which the timing pass prices from what the L2 pass
//! found for the request ([`BlockLog::out`]) once that pass has run the block's requests in order.

use crate::memory::Level;

pub mod order;
mod outcome;
pub use outcome::{Outcome, SharedOp, TexKind};

/// A count of a sampled launch, extrapolated: what the waves before the sample gathered
/// (`first`), the sampled waves' part (`snap - first`) scaled by `factor` (waves stood for per
/// wave simulated) and rounded to the nearest count, and what the last wave added (`now - snap`).
/// Counters, per-PC statistics, the SMs' work and stall cycles all extrapolate by this rule.
pub fn sampled(first: u64, snap: u64, now: u64, factor: f64) -> u64 {
    first + ((snap - first) as f64 * factor).round() as u64 + (now - snap)
}

/// Marks [`Entry::lat`] (or [`MemRec::lat`]) as a ticket: the low bits index [`BlockLog::reqs`].
const TICKET: u32 = 1 << 31;
/// Marks [`Entry::lat`] of a global or local access: the low bits index [`BlockLog::mems`].
const MEM: u32 = 1 << 30;
/// Marks [`Entry::lat`] (or [`MemRec::lat`]) as [`Lat::Served`]: the kind in the next three bits,
/// its payload in the low [`PAYLOAD_BITS`].
const SERVED: u32 = 1 << 29;
/// Bits of a [`Lat::Served`] payload.
const PAYLOAD_BITS: u32 = 26;
const PAYLOAD: u32 = (1 << PAYLOAD_BITS) - 1;

/// What an [`Entry::lat`] or a [`MemRec::lat`] holds (its packing is this module's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lat {
    /// A latency in SM cycles: 0 for an instruction with none, 1 for a branch every active lane
    /// took; any other value a latency the timing pass priced ([`crate::timing::price`]).
    Cycles(u32),
    /// An access the SM served, as the functional pass found it, not yet priced.
    Served(Served),
    /// A request to L2, [`BlockLog::reqs`]`[i]`, whose outcome is [`BlockLog::out`]`[i]`.
    Request(usize),
    /// A global or local access, [`BlockLog::mems`]`[i]`.
    Access(usize),
}

impl Lat {
    /// What `lat` holds.
    #[inline(always)]
    pub fn of(lat: u32) -> Lat {
        if lat & TICKET != 0 {
            Lat::Request((lat & !TICKET) as usize)
        } else if lat & MEM != 0 {
            Lat::Access((lat & !MEM) as usize)
        } else if lat & SERVED != 0 {
            let n = lat & PAYLOAD;
            Lat::Served(match (lat >> PAYLOAD_BITS) & 7 {
                0 => Served::Operand,
                1 => Served::Shared { wavefronts: n },
                2 => Served::L1,
                3 => Served::Acknowledged,
                _ => Served::Ldc(n as usize),
            })
        } else {
            Lat::Cycles(lat)
        }
    }

    /// `lat` is [`Lat::Cycles`] (the common case, tested alone on the replay's hot path).
    #[inline(always)]
    pub fn is_cycles(lat: u32) -> bool {
        lat & (TICKET | MEM | SERVED) == 0
    }

    /// `lat` is [`Lat::Served`].
    #[inline(always)]
    pub fn is_served(lat: u32) -> bool {
        lat & (TICKET | MEM | SERVED) == SERVED
    }
}

/// Where the SM served an access the functional pass leaves for the timing pass to price
/// ([`crate::timing::price`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// A constant operand or a kernel parameter: the immediate constant cache.
    Operand,
    /// Shared memory, in `wavefronts` bank passes.
    Shared {
        /// Bank passes (at most 2^26 - 1).
        wavefronts: u32,
    },
    /// L1: every sector of a global or local load hit.
    L1,
    /// L2's acknowledgement of a store or a reduction.
    Acknowledged,
    /// An LDC the constant caches served: [`BlockLog::ldcs`]`[i]`.
    Ldc(usize),
}

impl Served {
    /// Its [`Entry::lat`]. Panics if a payload is 2^26 or more (an access of 2^26 wavefronts,
    /// or 2^26 LDCs in one block: the instruction budget stops a launch long before).
    #[inline(always)]
    pub fn lat(self) -> u32 {
        let (kind, n) = match self {
            Served::Operand => (0, 0),
            Served::Shared { wavefronts } => (1, wavefronts),
            Served::L1 => (2, 0),
            Served::Acknowledged => (3, 0),
            Served::Ldc(i) => (4, i as u32),
        };
        assert!(n <= PAYLOAD, "a served access's payload fits 26 bits");
        SERVED | kind << PAYLOAD_BITS | n
    }
}

/// An LDC that the constant caches served ([`Served::Ldc`]): its instruction, its requests and
/// where they were served, which the timing pass prices ([`crate::timing::price`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LdcRec {
    /// Its instruction.
    pub pc: u32,
    /// Requests (distinct addresses).
    pub requests: u32,
    /// Requests that missed the first constant level.
    pub misses: u32,
    /// Where each request was served, `BlockLog::levels[start..end]`, when some went past the
    /// second level (`start == end`: none did, the requests and misses say it all).
    pub start: u32,
    /// End of its levels.
    pub end: u32,
}

/// What the timing pass needs of a global or local access besides its latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRec {
    /// Latency in cycles, or a ticket ([`Lat`]).
    pub lat: u32,
    /// L1 data-pipe wavefronts, fills included ([`crate::timing::data_wavefronts`]).
    pub dwf: u32,
    /// Its distinct sector numbers: `BlockLog::sectors[start..end]`.
    pub start: u32,
    /// End of its sectors.
    pub end: u32,
    /// The distinct L1 lines its sectors lie in (the tag lookups the functional pass counted):
    /// the timing pass of a store on a GPU whose L1 merges no stores needs no sector, and the
    /// sectors, written a batch before, are out of the host's caches by then. It fits the
    /// record's padding (20 bytes with it or without it).
    pub lines: u16,
    /// A store.
    pub store: bool,
    /// Every sector hit L1.
    pub hit: bool,
}

// The timing pass reads a record per global access a batch after it was written: it stays small.
const _: () = assert!(std::mem::size_of::<MemRec>() == 20);

/// What the L2 pass found for a request; the timing pass turns it into a latency once it knows
/// the DRAM traffic queued before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReqOut {
    /// Latency when not served by DRAM (cycles).
    pub lat: u32,
    /// Served by DRAM: the latency is the queued DRAM latency.
    pub dram: bool,
    /// DRAM bytes the request moved (read and written), queued on its SM.
    pub dram_bytes: u64,
}

/// A [`ReqOut`] as a log keeps it, in 8 bytes instead of 16 (the timing pass reads the
/// outcomes a batch after the L2 pass wrote them, out of the host's caches): the DRAM bytes with
/// the DRAM flag in their top bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    lat: u32,
    /// [`ReqOut::dram_bytes`] | [`Out::DRAM`] when [`ReqOut::dram`].
    bytes: u32,
}

impl Out {
    /// [`Out::bytes`]' flag for [`ReqOut::dram`].
    const DRAM: u32 = 1 << 31;

    /// The outcome it keeps.
    #[inline]
    pub fn get(self) -> ReqOut {
        ReqOut {
            lat: self.lat,
            dram: self.bytes & Self::DRAM != 0,
            dram_bytes: u64::from(self.bytes & !Self::DRAM),
        }
    }
}

impl From<ReqOut> for Out {
    /// Keeps `o`. Panics if it moved 2 GiB or more (a request is one warp instruction's
    /// traffic: a few KiB at most).
    #[inline]
    fn from(o: ReqOut) -> Self {
        let bytes = u32::try_from(o.dram_bytes)
            .ok()
            .filter(|b| b & Self::DRAM == 0)
            .expect("a request moves less than 2 GiB");
        Out {
            lat: o.lat,
            bytes: bytes | if o.dram { Self::DRAM } else { 0 },
        }
    }
}

/// One warp instruction as executed: its PC and, for loads and stores, the latency in cycles or
/// a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Instruction index in the program.
    pub pc: u32,
    /// Load-to-use or store-acknowledge latency in SM cycles, a ticket, or a global access's
    /// record ([`Lat`]).
    pub lat: u32,
}

/// What an L2 request is. (Plain data: emptying a log's requests reads none of them, where a
/// kind that owned an allocation had each request's tag read, a batch after it was written.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Kind {
    /// A global or local load's L1 misses; its latency is the farthest level's.
    Load,
    /// A global or local store's written sectors (acknowledged by L2, latency known).
    Store,
    /// [`L2Kind::Load`] whose addresses are line records
    /// ([`crate::memory::system::LineRecords`]).
    LoadLines,
    /// [`L2Kind::Store`] whose addresses are line records.
    StoreLines,
    /// A global `atom` (`returns`: its old value is used) or `red`: read-modify-writes in L2.
    Atomic {
        /// The result is read (`atom`), so its latency matters; else acknowledged like a store.
        returns: bool,
    },
    /// An indexed constant load: `BlockLog::consts[i]` (kept apart, so that every request is
    /// 16 bytes).
    Const(u32),
}

/// An indexed constant load's request ([`L2Kind::Const`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConstReq {
    /// Its instruction.
    pub pc: u32,
    /// Where each of its requests was served, `BlockLog::served[start..end]`: `None` for those
    /// that missed every constant level (their addresses are the request's, in order).
    pub start: u32,
    /// End of its levels.
    pub end: u32,
}

/// One warp instruction's traffic to L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Req {
    /// What it is.
    pub kind: L2Kind,
    /// Its L1-sector addresses (loads, stores), line records (their `Lines` kinds) or constant
    /// addresses: `BlockLog::addrs[start..end]`.
    pub start: u32,
    /// End of its addresses in `BlockLog::addrs`.
    pub end: u32,
}

/// The log of one block's functional pass.
#[derive(Debug, Clone, Default)]
pub struct BlockLog {
    /// Linear block index in the grid.
    pub block: u64,
    /// Its wave on its SM.
    pub wave: usize,
    /// Per warp of the block, the instructions it executed in order.
    pub warps: Vec<Vec<Entry>>,
    /// L2 requests in the order the block issued them.
    pub reqs: Vec<L2Req>,
    /// The addresses of all requests, one after another (one allocation for the block).
    pub addrs: Vec<u64>,
    /// What the L2 pass found for each request.
    pub out: Vec<Out>,
    /// Global and local accesses, for the timing pass.
    pub mems: Vec<MemRec>,
    /// Their sector numbers, one after another.
    pub sectors: Vec<u64>,
    /// Some global or local load hit L1 throughout ([`MemRec::hit`]): the timing pass keeps the
    /// fills in flight only for waves with one ([`crate::timing::SmWork::expect_hits`]).
    pub load_hits: bool,
    /// Indexed constant loads' requests ([`L2Kind::Const`]).
    pub consts: Vec<ConstReq>,
    /// Where their requests were served ([`ConstReq::start`]).
    pub served: Vec<Option<Level>>,
    /// Constant-pipe work ([`crate::timing::Costs::ldc_work`]) of the LDCs the constant caches
    /// served, in issue order (from [`BlockLog::ldcs`], by [`crate::timing::price`]), and of
    /// those L2 served, in request order (by the L2 pass): the timing pass adds them to the SM's
    /// work (in that order, as the passes found them), so that the L2 pass of one wave and the
    /// timing pass of the previous one share nothing.
    pub ldc: [Vec<(f64, f64)>; 2],
    /// Requests of its LDCs that missed the SM's nearest constant cache: what the GPC's constant
    /// cache (GCC) was asked for, whichever level then served them (by [`crate::timing::price`]
    /// and the L2 pass).
    pub const_far: u64,
    /// Of those, the ones that merged into a fill of their line the IDC had already requested
    /// ([`crate::memory::constant::fills`]): not requests of their own.
    pub const_merged: u64,
    /// Per global atomic warp instruction, each 128-byte line it updates (its address / 128) and
    /// the passes the L2 atomic unit makes over it: per sector, the lanes on its busiest word
    /// (the L2 pass adds up each line's: [`crate::memory::system::L2Model::count_atomics`]).
    pub atomic_words: Vec<(u64, u32)>,
    /// Per lane of each global `atom.cas`, in execution order: the word's address, the thread
    /// in the block (`warp * 32 + lane`) and whether its compare matched (the L2 pass models the
    /// contention of CAS loops from them: [`crate::memory::system::L2Model::count_cas`]).
    pub cas: Vec<crate::memory::system::CasLane>,
    /// The LDCs the constant caches served, in issue order ([`Served::Ldc`]).
    pub ldcs: Vec<LdcRec>,
    /// Where their requests were served ([`LdcRec::start`]).
    pub levels: Vec<Level>,
}

impl BlockLog {
    /// Empties the log for block `block` of `warps` warps, keeping its allocations.
    pub fn reset(&mut self, block: u64, wave: usize, warps: usize) {
        self.block = block;
        self.wave = wave;
        // Room for a short kernel's stream from the start: growing each warp's stream from empty
        // reallocated it five times per warp of a launch's first blocks.
        self.warps.resize_with(warps, || Vec::with_capacity(64));
        self.warps.iter_mut().for_each(Vec::clear);
        self.reqs.clear();
        self.addrs.clear();
        self.out.clear();
        self.mems.clear();
        self.sectors.clear();
        self.load_hits = false;
        self.consts.clear();
        self.served.clear();
        self.ldc.iter_mut().for_each(Vec::clear);
        self.const_far = 0;
        self.const_merged = 0;
        self.atomic_words.clear();
        self.cas.clear();
        self.ldcs.clear();
        self.levels.clear();
    }

    /// Adds an LDC at `pc` that the constant caches served, `requests` of them, `misses` past
    /// the first level, and `levels`, where each was served when some went past the second
    /// (empty when none did); returns its [`Entry::lat`] ([`Served::Ldc`]).
    pub fn ldc_served(&mut self, pc: u32, requests: u32, misses: u32, levels: &[Level]) -> u32 {
        let start = self.levels.len() as u32;
        self.levels.extend_from_slice(levels);
        self.ldcs.push(LdcRec {
            pc,
            requests,
            misses,
            start,
            end: self.levels.len() as u32,
        });
        Served::Ldc(self.ldcs.len() - 1).lat()
    }

    /// Gives an emptied log ([`BlockLog::reset`]) room for what `like` (the log of another block
    /// of the launch) holds, where it has less: a log kept from an earlier launch (or batch) with
    /// smaller buffers grew them as the block ran, and growing a buffer copies all of its old
    /// allocation (`realloc` does not know that the buffer is nearly empty): cold memory
    /// copied per block and buffer. An empty buffer is replaced instead, copying nothing.
    pub fn make_room(&mut self, like: &BlockLog) {
        fn room<T>(v: &mut Vec<T>, n: usize) {
            if v.capacity() < n {
                debug_assert!(v.is_empty());
                *v = Vec::with_capacity(n);
            }
        }
        for (w, l) in self.warps.iter_mut().zip(&like.warps) {
            room(w, l.len());
        }
        room(&mut self.reqs, like.reqs.len());
        room(&mut self.addrs, like.addrs.len());
        room(&mut self.out, like.reqs.len());
        room(&mut self.mems, like.mems.len());
        room(&mut self.sectors, like.sectors.len());
    }

    /// Adds a global or local access; returns its [`Entry::lat`] ([`Lat::Access`]).
    #[inline]
    pub fn mem(&mut self, rec: MemRec) -> u32 {
        self.load_hits |= rec.hit && !rec.store;
        self.mems.push(rec);
        MEM | (self.mems.len() - 1) as u32
    }

    /// Adds an indexed constant load's request at `pc`: `served`, where each of its requests was
    /// served (`None`: by none of the constant levels), and `addrs`, those of the `None` ones in
    /// order. Returns its ticket, as [`BlockLog::request`].
    pub fn const_request(
        &mut self,
        pc: u32,
        served: impl IntoIterator<Item = Option<Level>>,
        addrs: &[u64],
    ) -> u32 {
        let start = self.served.len() as u32;
        self.served.extend(served);
        let end = self.served.len() as u32;
        self.consts.push(ConstReq { pc, start, end });
        let i = self.consts.len() as u32 - 1;
        self.request(L2Kind::Const(i), addrs)
    }

    /// Adds a request; returns the ticket its latency will be found under.
    #[inline]
    pub fn request(&mut self, kind: L2Kind, addrs: &[u64]) -> u32 {
        let start = self.addrs.len();
        self.addrs.extend_from_slice(addrs);
        self.request_from(kind, start)
    }

    /// Adds a request whose addresses the caller pushed onto `addrs` from `start` on (a model
    /// that writes its misses there directly); returns its ticket, as [`BlockLog::request`].
    #[inline]
    pub fn request_from(&mut self, kind: L2Kind, start: usize) -> u32 {
        self.reqs.push(L2Req {
            kind,
            start: start as u32,
            end: self.addrs.len() as u32,
        });
        TICKET | (self.reqs.len() - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(store: bool, hit: bool) -> MemRec {
        MemRec {
            lat: 0,
            dwf: 1,
            start: 0,
            end: 0,
            lines: 0,
            store,
            hit,
        }
    }

    #[test]
    fn a_log_notes_whether_a_load_hit_until_it_is_reset() {
        // Every sequence of up to four records: `load_hits` is the scan of the records it
        // replaces, and each record's entry indexes it.
        for bits in 0..(1u32 << 8) {
            let mut log = BlockLog::default();
            log.reset(0, 0, 1);
            let n = (bits & 3) as usize + 1;
            let recs: Vec<MemRec> = (0..n)
                .map(|i| rec(bits >> (2 + i) & 1 != 0, bits >> (3 + i) & 1 != 0))
                .collect();
            for (i, &r) in recs.iter().enumerate() {
                assert_eq!(log.mem(r), MEM | i as u32);
            }
            assert_eq!(log.mems, recs);
            let scan = log.mems.iter().any(|m| m.hit && !m.store);
            assert_eq!(log.load_hits, scan, "{bits:b}");
            log.reset(1, 0, 1);
            assert!(!log.load_hits && log.mems.is_empty());
        }
    }

    #[test]
    fn an_emptied_log_gets_room_for_a_like_one_without_shrinking() {
        // A log of a larger block (`like`), a kept log of smaller buffers and one of larger:
        // after `make_room` each buffer holds at least what `like` holds, those that had the
        // room keep their allocation, and every buffer is empty.
        let mut like = BlockLog::default();
        like.reset(0, 0, 3);
        for (w, n) in [5usize, 70, 0].into_iter().enumerate() {
            like.warps[w].extend((0..n as u32).map(|pc| Entry { pc, lat: 0 }));
        }
        for i in 0..40u64 {
            like.request(L2Kind::Load, &[i, i + 1]);
            like.mem(rec(false, false));
            like.sectors.push(i);
        }
        for big in [false, true] {
            let n = if big { 1000 } else { 1 };
            let mut log = BlockLog::default();
            log.reset(0, 0, 3);
            log.warps.iter_mut().for_each(|w| w.reserve_exact(n));
            log.addrs.reserve_exact(n);
            log.sectors.reserve_exact(n);
            let kept = (log.addrs.as_ptr(), log.warps[1].as_ptr());
            log.reset(1, 0, 3);
            log.make_room(&like);
            for (w, l) in log.warps.iter().zip(&like.warps) {
                assert!(w.is_empty() && w.capacity() >= l.len());
            }
            let room = |c: usize, n: usize, len: usize| c >= n && len == 0;
            assert!(room(log.reqs.capacity(), 40, log.reqs.len()));
            assert!(room(log.out.capacity(), 40, log.out.len()));
            assert!(room(log.addrs.capacity(), 80, log.addrs.len()));
            assert!(room(log.mems.capacity(), 40, log.mems.len()));
            assert!(room(log.sectors.capacity(), 40, log.sectors.len()));
            let now = (log.addrs.as_ptr(), log.warps[1].as_ptr());
            assert_eq!(now == kept, big);
        }
    }

    #[test]
    fn requests_are_16_bytes_and_outcomes_8_kept_as_they_were() {
        assert_eq!(std::mem::size_of::<L2Req>(), 16);
        assert_eq!(std::mem::size_of::<Out>(), 8);
        let mut seed = 5u64;
        for k in 0..2000u64 {
            seed = crate::testing::lcg(seed);
            let dram_bytes = match k % 4 {
                0 => 0,
                1 => (1 << 31) - 1,
                _ => (seed >> 40) % (1 << (k % 31)),
            };
            let o = ReqOut {
                lat: (seed >> 7) as u32,
                dram: seed & 1 != 0,
                dram_bytes,
            };
            assert_eq!(Out::from(o).get(), o);
        }
    }

    #[test]
    #[should_panic(expected = "less than 2 GiB")]
    fn an_outcome_of_2_gib_is_refused() {
        let _ = Out::from(ReqOut {
            lat: 1,
            dram: true,
            dram_bytes: 1 << 31,
        });
    }

    #[test]
    fn constant_requests_keep_their_levels_apart() {
        let mut log = BlockLog::default();
        log.reset(0, 0, 2);
        let a = [Some(Level::Cache(0)), None, None];
        let b = [None, Some(Level::Cache(1))];
        let ta = log.const_request(7, a, &[64, 128]);
        let tb = log.const_request(9, b, &[256]);
        assert_eq!((ta, tb), (TICKET, TICKET | 1));
        let levels = |r: &L2Req| match r.kind {
            L2Kind::Const(i) => {
                let ConstReq { pc, start, end } = log.consts[i as usize];
                (pc, log.served[start as usize..end as usize].to_vec())
            }
            _ => unreachable!(),
        };
        assert_eq!(levels(&log.reqs[0]), (7, a.to_vec()));
        assert_eq!(levels(&log.reqs[1]), (9, b.to_vec()));
        assert_eq!(&log.addrs[log.reqs[1].start as usize..], &[256]);
        log.reset(1, 0, 2);
        assert!(log.served.is_empty() && log.reqs.is_empty());
    }
}

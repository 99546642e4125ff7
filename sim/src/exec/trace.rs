//! What the functional pass of a block leaves for the two passes after it: the L2 requests its
//! warps made, in issue order, and each warp's instruction stream with the latencies known so far.
//!
//! The functional pass runs the blocks of different SMs on different threads; an access that
//! misses the SM's own caches cannot be priced there, because the L2 it reaches is shared. It
//! leaves a ticket instead ([`TICKET`] | request index), which the L2 pass replaces with the
//! latency once it has run the block's requests in order, before the timing pass replays the
//! streams.

use crate::memory::Level;

/// Marks [`Entry::lat`] (or [`MemRec::lat`]) as a ticket: the low bits index [`BlockLog::reqs`].
pub const TICKET: u32 = 1 << 31;
/// Marks [`Entry::lat`] of a global or local access: the low bits index [`BlockLog::mems`].
pub const MEM: u32 = 1 << 30;

/// What the timing pass needs of a global or local access besides its latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRec {
    /// Latency in cycles, or [`TICKET`] | request.
    pub lat: u32,
    /// L1 data-pipe wavefronts, fills included ([`crate::timing::data_wavefronts`]).
    pub dwf: u32,
    /// Its distinct sector numbers: `BlockLog::sectors[start..end]`.
    pub start: u32,
    /// End of its sectors.
    pub end: u32,
    /// A store.
    pub store: bool,
    /// Every sector hit L1.
    pub hit: bool,
}

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

/// One warp instruction as executed: its PC and, for loads and stores, the latency in cycles or
/// a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Instruction index in the program.
    pub pc: u32,
    /// Load-to-use or store-acknowledge latency in SM cycles, or [`TICKET`] | request.
    pub lat: u32,
}

/// What an L2 request is.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// An indexed constant load at `pc`: where each request was served, `None` for those that missed
    /// every constant level (their addresses are the request's, in order).
    Const(u32, Vec<Option<Level>>),
}

/// One warp instruction's traffic to L2.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    pub out: Vec<ReqOut>,
    /// Global and local accesses, for the timing pass.
    pub mems: Vec<MemRec>,
    /// Their sector numbers, one after another.
    pub sectors: Vec<u64>,
    /// Constant-pipe work ([`crate::timing::Costs::ldc_work`]) of the LDCs the constant caches
    /// served, in issue order, and of those L2 served, in request order: the timing pass adds
    /// them to the SM's work (in that order, as the passes found them), so that the L2 pass of
    /// one wave and the timing pass of the previous one share nothing.
    pub ldc: [Vec<(f64, f64)>; 2],
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
        self.ldc.iter_mut().for_each(Vec::clear);
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

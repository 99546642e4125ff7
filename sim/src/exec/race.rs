//! racecheck: shared-memory data access hazards, as compute-sanitizer's racecheck tool reports
//! them: two accesses to the same byte of a block's shared memory by different threads, at least
//! one a write, with no barrier between them (write after write, write after read, read after
//! write).
//!
//! Ordered (no hazard): accesses in different barrier intervals of the block (a `bar.sync`
//! released between them), accesses by one thread, the lanes of one warp instruction (they
//! execute together), and accesses of one warp with a `bar.warp.sync` (`__syncwarp()`) between
//! them. Two warp instructions of one warp with no `__syncwarp()` between them are not ordered
//! under independent thread scheduling (Volta and later), and racecheck reports them too.
//! Atomics are never hazards (left out). Each byte keeps its last write and its last read, so a
//! read before the last read of a byte is not checked against later writes (a hazard may be
//! reported with a later pair of the same lines, or missed when only that pair races).
//!
//! Hazards are told apart by kind and the two instructions; each is reported once with its first
//! occurrence and a count of the byte pairs that made it.

use crate::memory::WarpAccess;

/// The most distinct hazards an SM keeps.
pub const MAX_DISTINCT: usize = 100;

/// One access to a byte, as racecheck remembers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Access {
    /// The barrier interval ([`Shadow::epoch`]); 0: no access.
    epoch: u32,
    /// The linear thread index in the block.
    thread: u32,
    /// The warp's issue count at the access ([`super::warp::Warp::clock`]): one instruction.
    clock: u32,
    /// The warp's `bar.warp.sync` count at the access.
    syncs: u32,
    /// The instruction.
    pc: u32,
}

/// The last write and read of one byte.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    write: Access,
    read: Access,
}

/// One distinct hazard: its kind, the earlier and the later access, and how many byte pairs
/// made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    /// `write-after-write`, `write-after-read` or `read-after-write`.
    pub kind: &'static str,
    /// The earlier access: instruction and linear thread index in the block.
    pub first: (u32, u32),
    /// The later access.
    pub second: (u32, u32),
    /// The linear index of the block of the first occurrence.
    pub block: u64,
    /// The shared-memory offset of the first occurrence, bytes.
    pub offset: u64,
    /// Byte pairs that made it.
    pub count: u64,
}

/// Racecheck's state of one resident block: a record per byte of its shared memory.
#[derive(Debug, Default)]
pub struct Shadow {
    cells: Vec<Cell>,
    /// The current barrier interval (never 0; each block starts a new one, so that nothing of
    /// the SM's earlier blocks is a hazard).
    epoch: u32,
    /// The block's linear index.
    block: u64,
}

impl Shadow {
    /// Starts block `block` with `bytes` of shared memory.
    pub fn start(&mut self, block: u64, bytes: usize) {
        self.cells.resize(bytes, Cell::default());
        self.block = block;
        self.next_interval();
    }

    /// A barrier of the block released: a new interval begins.
    pub fn next_interval(&mut self) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        if self.epoch == 1 {
            // Wrapped round (or the first block): clear what an earlier interval 1 left.
            self.cells.fill(Cell::default());
        }
    }

    /// Warp `warp` (issue count `clock`, `syncs` warp barriers so far) accesses `access`
    /// (shared offsets) at `pc`, storing when `store`; new hazards go to `out`.
    pub fn access(
        &mut self,
        (warp, clock, syncs): (u32, u32, u32),
        pc: u32,
        access: &WarpAccess,
        store: bool,
        out: &mut Vec<Hazard>,
    ) {
        for (lane, addr) in access.lanes() {
            let now = Access {
                epoch: self.epoch,
                thread: warp * 32 + lane as u32,
                clock,
                syncs,
                pc,
            };
            let end = (addr + u64::from(access.bytes)).min(self.cells.len() as u64);
            for off in addr..end {
                let cell = &mut self.cells[off as usize];
                let (w, r) = (cell.write, cell.read);
                if store {
                    cell.write = now;
                } else {
                    cell.read = now;
                }
                let mut note = |kind, before: Access| {
                    if races(before, now) {
                        note(out, kind, before, now, self.block, off);
                    }
                };
                if store {
                    note("write-after-write", w);
                    note("write-after-read", r);
                } else {
                    note("read-after-write", w);
                }
            }
        }
    }
}

/// Whether `before` and `now` (by another thread) race: both in one barrier interval, not one
/// instruction of a warp, not separated by a `__syncwarp()` of their warp.
fn races(before: Access, now: Access) -> bool {
    if before.epoch != now.epoch || before.thread == now.thread {
        return false;
    }
    let same_warp = before.thread / 32 == now.thread / 32;
    !(same_warp && (before.clock == now.clock || before.syncs != now.syncs))
}

/// Counts the hazard `kind` between `before` and `now` in `out` (a new one when its kind and
/// instructions are new, up to [`MAX_DISTINCT`]).
fn note(
    out: &mut Vec<Hazard>,
    kind: &'static str,
    before: Access,
    now: Access,
    block: u64,
    off: u64,
) {
    let key = |h: &Hazard| h.kind == kind && h.first.0 == before.pc && h.second.0 == now.pc;
    if let Some(h) = out.iter_mut().find(|h| key(h)) {
        h.count += 1;
    } else if out.len() < MAX_DISTINCT {
        out.push(Hazard {
            kind,
            first: (before.pc, before.thread),
            second: (now.pc, now.thread),
            block,
            offset: off,
            count: 1,
        });
    }
}

/// The hazards of all the SMs of a launch, the earliest block first and each once (its first
/// occurrence, the counts added).
pub fn merge(sms: impl IntoIterator<Item = Vec<Hazard>>) -> Vec<Hazard> {
    let mut all: Vec<Hazard> = sms.into_iter().flatten().collect();
    all.sort_by_key(|h| h.block);
    let mut out: Vec<Hazard> = vec![];
    for h in all {
        match out
            .iter_mut()
            .find(|o| o.kind == h.kind && o.first.0 == h.first.0 && o.second.0 == h.second.0)
        {
            Some(o) => o.count += h.count,
            None => out.push(h),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(lane_addrs: &[(usize, u64)], bytes: u32) -> WarpAccess {
        let mut a = WarpAccess {
            mask: 0,
            addrs: [0; 32],
            bytes,
        };
        for &(l, x) in lane_addrs {
            a.mask |= 1 << l;
            a.addrs[l] = x;
        }
        a
    }

    #[test]
    fn hazards_need_two_threads_one_interval_and_no_warp_barrier() {
        let mut s = Shadow::default();
        s.start(0, 64);
        let mut out = vec![];
        // Warp 0 lane 0 writes bytes 0..4; warp 1 lane 0 (thread 32) reads them: RAW.
        s.access((0, 1, 0), 10, &one(&[(0, 0)], 4), true, &mut out);
        s.access((1, 1, 0), 20, &one(&[(0, 0)], 4), false, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].kind, out[0].first, out[0].second, out[0].count),
            ("read-after-write", (10, 0), (20, 32), 4)
        );
        // Two lanes of one instruction are no hazard (lane 2's word is the one kept); one
        // thread is none either.
        s.access((0, 2, 0), 30, &one(&[(1, 8), (2, 8)], 4), true, &mut out);
        s.access((0, 3, 0), 31, &one(&[(2, 8)], 4), false, &mut out);
        assert_eq!(out.len(), 1);
        // Another lane of the warp after a __syncwarp: ordered; without one: a hazard.
        s.access((0, 4, 1), 32, &one(&[(3, 8)], 4), false, &mut out);
        assert_eq!(out.len(), 1);
        s.access((0, 5, 1), 33, &one(&[(4, 8)], 4), true, &mut out);
        // Lane 2's write (before the __syncwarp) is ordered; lane 3's read (after it) is not.
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(
            (out[1].kind, out[1].first, out[1].second),
            ("write-after-read", (32, 3), (33, 4))
        );
        // After a barrier nothing races with what came before.
        s.next_interval();
        s.access((1, 9, 0), 40, &one(&[(5, 8)], 4), true, &mut out);
        assert_eq!(out.len(), 2);
    }
}

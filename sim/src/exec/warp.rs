//! One warp's architectural state: registers per lane, per-lane program counters, the live mask,
//! and its issue count.

/// A warp of up to 32 threads.
#[derive(Debug, Clone)]
pub struct Warp {
    /// Register file, `[reg * 32 + lane]`, each value in the low bits of a u64.
    pub regs: Vec<u64>,
    /// Per-lane program counter (meaningful while diverged).
    pub pc: [u32; 32],
    /// All live lanes are at `common_pc` (the fast path: no per-lane PC scan).
    pub converged: bool,
    /// The PC of every live lane while converged.
    pub common_pc: u32,
    /// Lanes that exist and have not exited.
    pub live: u32,
    /// Waiting at `bar.sync`.
    pub at_barrier: bool,
    /// The barrier it waits at while `at_barrier`: (barrier number, PC of the `bar.sync`), for
    /// synccheck ([`super::barrier`]).
    pub barrier: (u32, u32),
    /// Lanes set aside so that the warp's other lanes make progress: a group of a diverged warp
    /// that has gone round a loop [`SPIN_YIELD`] times with no store by the warp ([`Warp::spin`]).
    /// [`Warp::next`] picks among the other live lanes until the warp stores, exits lanes or
    /// reaches a warp-wide instruction ([`Warp::progress`]).
    pub parked: u32,
    /// Times part of the warp took the backward branch at `spin_pc` in a row since the warp
    /// last made progress.
    pub spins: u32,
    /// The backward branch `spins` counts.
    pub spin_pc: u32,
    /// `bar.warp.sync`s the warp executed (racecheck: accesses of one warp on either side of
    /// one are ordered).
    pub warp_syncs: u32,
    /// Its last turn yielded with loads in flight ([`super::step::Ctx::yielded`]): the next
    /// turn stalls where it needs their values.
    pub loads_in_flight: bool,
    /// Warp instructions issued since the block started (what `%clock` reads: cycles are only
    /// known after the timing pass).
    pub clock: u32,
    /// Warp index within the block.
    pub index: u32,
    /// Local memory, `local_bytes` per lane, lane-major.
    pub local: Vec<u8>,
    /// Local bytes per lane.
    pub local_bytes: usize,
    /// The memory descriptor of global accesses has been loaded (sm_80+ SASS loads it once
    /// through the uniform datapath, one IDC request).
    pub desc_loaded: bool,
    /// `%tid` of each lane, computed once per block: `tid[dimension][lane]` (rows, so that
    /// `mov %r, %tid.x` reads one contiguous row).
    pub tid: [[u32; 32]; 3],
    /// The warp index and block shape `tid` was computed for: a register file that runs the
    /// same warp of every block (a kernel with barriers) computes it once.
    tid_for: Option<(u32, [u32; 3])>,
    /// Registers whose row holds, for all 32 lanes, the value of its invariant writer
    /// (`exec::fast::LoopEntry::invariant`): it keeps it over the warps and blocks that use this
    /// register file in the launch, so the writer need not run again.
    pub fixed: Vec<bool>,
    /// Invariant entries whose register is not fixed yet in this register file; at 0 the
    /// warp loop leaves them all out.
    pub unsettled: u32,
    /// `mbarrier` waits in a row that found their phase incomplete (`exec::mem::bulk`): a
    /// warp that never sees its phase complete is stopped rather than spinning on.
    pub failed_waits: u32,
}

impl Warp {
    /// A warp with `num_regs` registers and `local_bytes` of local memory per thread.
    pub fn new(num_regs: usize, local_bytes: u64) -> Self {
        Warp {
            regs: vec![0; num_regs * 32],
            pc: [0; 32],
            converged: true,
            common_pc: 0,
            live: 0,
            at_barrier: false,
            barrier: (0, 0),
            parked: 0,
            spins: 0,
            spin_pc: 0,
            warp_syncs: 0,
            loads_in_flight: false,
            clock: 0,
            index: 0,
            local: vec![0; local_bytes as usize * 32],
            local_bytes: local_bytes as usize,
            desc_loaded: false,
            tid: [[0; 32]; 3],
            tid_for: None,
            fixed: vec![false; num_regs],
            unsettled: 0,
            failed_waits: 0,
        }
    }

    /// Makes this register file, kept from an earlier launch, one for a launch of `num_regs`
    /// registers and `local_bytes` of local memory per thread, as [`Warp::new`] would make it
    /// as far as the launch can tell: the rows of the registers in `clear` (those the kernel
    /// may read before writing them: `exec::regs::read_before_written`), or of all when `None`,
    /// are zeroed; the others keep the earlier launch's values, which the kernel writes before
    /// it reads them (zeroing every register file per SM and launch showed in profiles).
    /// Nothing is fixed ([`Warp::fixed`]); `tid` stays valid for its warp and block shape.
    pub fn relaunch(&mut self, num_regs: usize, local_bytes: u64, clear: Option<&[u16]>) {
        match clear {
            Some(rows) => {
                self.regs.resize(num_regs * 32, 0);
                for &r in rows {
                    let at = usize::from(r) * 32;
                    if let Some(row) = self.regs.get_mut(at..at + 32) {
                        row.fill(0);
                    }
                }
            }
            None => {
                self.regs.clear();
                self.regs.resize(num_regs * 32, 0);
            }
        }
        self.local.clear();
        self.local.resize(local_bytes as usize * 32, 0);
        self.local_bytes = local_bytes as usize;
        self.fixed.clear();
        self.fixed.resize(num_regs, false);
        self.unsettled = 0;
    }

    /// Prepares warp `index` of a block of shape `block` to start.
    pub fn reset(&mut self, index: u32, block: [u32; 3]) {
        let threads = block[0] * block[1] * block[2];
        let first = index * 32;
        if self.tid_for != Some((index, block)) {
            self.set_tid(index, block);
        }
        let n = threads.saturating_sub(first).min(32);
        self.live = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        // `pc` is left as it is: a converged warp does not read it, and the step that makes
        // it diverge writes every live lane's (`advance`).
        self.converged = true;
        self.common_pc = 0;
        self.at_barrier = false;
        self.parked = 0;
        self.spins = 0;
        self.loads_in_flight = false;
        self.clock = 0;
        self.desc_loaded = false;
        self.failed_waits = 0;
        self.index = index;
        // Registers are not cleared (nor `fixed`): PTX leaves them undefined until written, and
        // clearing them for every block cost more than any instruction. A read before a write
        // sees what the SM's previous block left, the same on any number of threads.
        if !self.local.is_empty() {
            self.local.fill(0);
        }
    }

    /// Computes `tid` for warp `index` of a block of shape `block`.
    fn set_tid(&mut self, index: u32, block: [u32; 3]) {
        let bx = block[0].max(1);
        if self.tid_for == Some((index.wrapping_sub(1), block)) && self.tid[0][0] + 64 <= bx {
            // The warp after the one `tid` holds, in the same row of the block (a register file
            // that ran the warp before): x moves on by 32, y and z stay.
            self.tid[0].iter_mut().for_each(|x| *x += 32);
            self.tid_for = Some((index, block));
            return;
        }
        self.tid_for = Some((index, block));
        let first = index * 32;
        // The first lane's index by division, the others by counting on (divisions per lane
        // showed in profiles: this runs for every warp of every block).
        let by = block[1].max(1);
        let mut t = [first % bx, first / bx % by, first / (bx * by)];
        if t[0] + 32 <= bx {
            // The warp lies in one row of the block (any block at least 32 wide): x counts on.
            self.tid[0] = std::array::from_fn(|l| t[0] + l as u32);
            self.tid[1] = [t[1]; 32];
            self.tid[2] = [t[2]; 32];
        } else {
            for l in 0..32 {
                for (c, row) in self.tid.iter_mut().enumerate() {
                    row[l] = t[c];
                }
                t[0] += 1;
                if t[0] == bx {
                    t[0] = 0;
                    t[1] += 1;
                    if t[1] == by {
                        t[1] = 0;
                        t[2] += 1;
                    }
                }
            }
        }
    }

    /// The smallest PC among live lanes that are not [`Warp::parked`] (among all live lanes when
    /// every one is) and the mask of lanes at it. Notices reconvergence.
    #[inline]
    pub fn next(&mut self) -> (u32, u32) {
        if self.converged {
            return (self.common_pc, self.live);
        }
        let mut min = u32::MAX;
        let mut mask = 0u32;
        let mut live = self.live & !self.parked;
        if live == 0 {
            self.parked = 0;
            live = self.live;
        }
        while live != 0 {
            let l = live.trailing_zeros();
            live &= live - 1;
            let pc = self.pc[l as usize];
            if pc < min {
                min = pc;
                mask = 1 << l;
            } else if pc == min {
                mask |= 1 << l;
            }
        }
        if mask == self.live {
            self.converged = true;
            self.common_pc = min;
            self.spins = 0;
            self.parked = 0;
        }
        (min, mask)
    }

    /// After executing the instruction at `pc` for the lanes of `mask`: lanes in `taken` go to
    /// `target`, the others of `mask` to `pc + 1`.
    #[inline]
    pub fn advance(&mut self, pc: u32, mask: u32, taken: u32, target: u32) {
        if self.converged {
            if taken == 0 {
                self.common_pc = pc + 1;
                return;
            }
            if taken == mask {
                self.common_pc = target;
                return;
            }
            // Divergence: from here on every lane keeps its own PC.
            self.converged = false;
        }
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            self.pc[l] = if taken >> l & 1 == 1 { target } else { pc + 1 };
        }
    }
}

/// Times in a row that part of a warp takes one backward branch, with no store, exit or
/// warp-wide instruction of the warp in between, before those lanes are set aside for the
/// others ([`Warp::parked`]).
///
/// Volta and later GPUs schedule the threads of a warp independently and guarantee forward
/// progress to each (CUDA C++ Programming Guide, "Independent Thread Scheduling"): a thread
/// spinning on a flag that another thread of its warp sets lets that thread run. The lowest-PC
/// rule of [`Warp::next`] alone would run the spinning lanes forever. A diverged loop of real
/// work that runs this long with no store and no other backward branch in between is rare (then
/// only the interleaving of the warp's accesses changes, never a result); a spin-wait costs
/// the warp about twice this many iterations per store it waits for.
pub const SPIN_YIELD: u32 = 1 << 14;

impl Warp {
    /// The lanes `mask`, part of the warp, took the backward branch at `pc`: after
    /// [`SPIN_YIELD`] times in a row with no progress they are set aside ([`Warp::parked`]).
    #[inline]
    pub fn spin(&mut self, pc: u32, mask: u32) {
        if self.spin_pc != pc {
            self.spin_pc = pc;
            self.spins = 0;
        }
        self.spins += 1;
        if self.spins >= SPIN_YIELD {
            self.spins = 0;
            self.parked |= mask;
        }
    }

    /// The warp made progress others may wait for (a store or atomic, lanes exited, a barrier
    /// or warp-wide instruction): set-aside lanes run again.
    #[inline]
    pub fn progress(&mut self) {
        self.spins = 0;
        self.parked = 0;
    }
}

/// Register `r`'s 32 lanes in register file `regs` (a [`Warp::regs`]): the one way to a
/// register's row (a fixed-size array, so that loops over it need no bounds checks and
/// vectorise).
#[inline(always)]
pub fn row(regs: &[u64], r: u16) -> &[u64; 32] {
    (&regs[usize::from(r) * 32..][..32])
        .try_into()
        .expect("32 lanes")
}

/// Register `r`'s 32 lanes in register file `regs`, to write ([`row`]).
#[inline(always)]
pub fn row_mut(regs: &mut [u64], r: u16) -> &mut [u64; 32] {
    (&mut regs[usize::from(r) * 32..][..32])
        .try_into()
        .expect("32 lanes")
}

#[cfg(test)]
mod tests {
    use super::Warp;

    /// A reset warp keeps the per-lane PCs an earlier warp left, and never reads them: the
    /// step that makes it diverge writes every live lane's, a full warp's or a partial one's.
    #[test]
    fn divergence_after_reset_ignores_old_pcs() {
        for (block, live) in [([64, 1, 1], u32::MAX), ([40, 1, 1], 0xff)] {
            let mut w = Warp::new(1, 0);
            w.pc = std::array::from_fn(|l| l as u32 % 3);
            w.converged = false;
            w.reset(1, block);
            assert_eq!(w.next(), (0, live));
            w.advance(0, live, 0b1010, 5);
            assert!(!w.converged);
            assert_eq!(w.next(), (1, live & !0b1010));
            w.advance(1, live & !0b1010, 0, 0);
            assert_eq!(w.next(), (2, live & !0b1010));
        }
    }

    /// `tid` of a register file reset warp after warp (the shortcut from the warp before, the
    /// same warp again) is that of a fresh register file for each warp (the divisions).
    #[test]
    fn tid_in_turn_matches_fresh() {
        let shapes: [[u32; 3]; 12] = [
            [32, 8, 1],
            [512, 1, 1],
            [64, 2, 2],
            [96, 3, 1],
            [100, 3, 2],
            [16, 16, 1],
            [8, 4, 4],
            [1, 1, 64],
            [33, 1, 1],
            [1024, 1, 1],
            [48, 5, 3],
            [7, 9, 5],
        ];
        let mut turn = Warp::new(1, 0);
        for block in shapes {
            let warps = (block[0] * block[1] * block[2]).div_ceil(32);
            for _ in 0..2 {
                for index in 0..warps {
                    turn.reset(index, block);
                    let mut fresh = Warp::new(1, 0);
                    fresh.reset(index, block);
                    assert_eq!(turn.tid, fresh.tid, "block {block:?} warp {index}");
                    assert_eq!(turn.live, fresh.live);
                    // The same warp again keeps its rows.
                    turn.reset(index, block);
                    assert_eq!(turn.tid, fresh.tid, "block {block:?} warp {index} again");
                }
            }
        }
    }
}

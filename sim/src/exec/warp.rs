//! One warp's architectural state: registers per lane, per-lane program counters, the live mask,
//! and its scoreboard timeline for the timing model.

/// A warp of up to 32 threads.
#[derive(Debug, Clone)]
pub struct Warp {
    /// Register file, `[reg * 32 + lane]`, each value in the low bits of a u64.
    pub regs: Vec<u64>,
    /// Cycle at which each register's value is ready (scoreboard).
    pub ready: Vec<u32>,
    /// Per-lane program counter.
    pub pc: [u32; 32],
    /// Lanes that exist and have not exited.
    pub live: u32,
    /// Waiting at `bar.sync`.
    pub at_barrier: bool,
    /// Issue cycle of the last instruction.
    pub clock: u32,
    /// Warp index within the block.
    pub index: u32,
    /// Local memory, `local_bytes` per lane, lane-major.
    pub local: Vec<u8>,
    /// Local bytes per lane.
    pub local_bytes: usize,
}

impl Warp {
    /// A warp with `num_regs` registers and `local_bytes` of local memory per thread.
    pub fn new(num_regs: usize, local_bytes: u64) -> Self {
        Warp {
            regs: vec![0; num_regs * 32],
            ready: vec![0; num_regs],
            pc: [0; 32],
            live: 0,
            at_barrier: false,
            clock: 0,
            index: 0,
            local: vec![0; local_bytes as usize * 32],
            local_bytes: local_bytes as usize,
        }
    }

    /// Prepares warp `index` of a block of `threads` threads to start.
    pub fn reset(&mut self, index: u32, threads: u32) {
        let first = index * 32;
        let n = threads.saturating_sub(first).min(32);
        self.live = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        self.pc = [0; 32];
        self.at_barrier = false;
        self.clock = 0;
        self.index = index;
        self.regs.fill(0);
        self.ready.fill(0);
        self.local.fill(0);
    }

    /// The smallest PC among live lanes and the mask of lanes at it.
    #[inline]
    pub fn next(&self) -> (u32, u32) {
        let mut min = u32::MAX;
        let mut mask = 0u32;
        let mut live = self.live;
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
        (min, mask)
    }

    /// Cycle at which the warp's last result is ready.
    pub fn finish_time(&self) -> u64 {
        u64::from(self.clock.max(self.ready.iter().copied().max().unwrap_or(0)))
    }
}

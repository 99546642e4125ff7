//! Block-wide reductions at a barrier: `bar.red` (PTX ISA §9.7.13.1). Each warp's threads add
//! their predicates as the warp arrives; when the barrier releases, every arrived thread receives
//! the result.

use super::alu;
use super::warp::Warp;
use crate::ptx::inst::BarRedOp;

/// The pending `bar.red` of one block.
#[derive(Debug, Default)]
pub struct BlockSync {
    /// The reduction of the barrier (the first arrival's; mixing reductions on one barrier is
    /// undefined in PTX).
    op: Option<BarRedOp>,
    /// Arrived threads whose predicate is true.
    true_threads: u64,
    /// Arrived threads.
    threads: u64,
    /// Who waits for the result: (warp index, destination register, lanes).
    waiting: Vec<(u32, u16, u32)>,
}

impl BlockSync {
    /// Warp `warp` arrives at `bar.red.op` with the lanes of `lanes`, `true_lanes` of them with a
    /// true predicate; the result goes to register `dst` of those lanes at the release.
    pub fn arrive(&mut self, op: BarRedOp, warp: u32, dst: u16, lanes: u32, true_lanes: u32) {
        self.op.get_or_insert(op);
        self.true_threads += u64::from(true_lanes.count_ones());
        self.threads += u64::from(lanes.count_ones());
        self.waiting.push((warp, dst, lanes));
    }

    /// The barrier releases: writes the reduction to every waiting thread of `warps` (the
    /// block's; a waiting warp is still running) and resets.
    pub fn release(&mut self, warps: &mut [Warp]) {
        let Some(op) = self.op.take() else {
            return;
        };
        let v = alu::bar_red(op, self.true_threads, self.threads);
        for (index, dst, lanes) in self.waiting.drain(..) {
            if let Some(w) = warps.iter_mut().find(|w| w.index == index && w.live != 0) {
                for l in super::step::lanes(lanes) {
                    w.regs[dst as usize * 32 + l] = v;
                }
            }
        }
        self.true_threads = 0;
        self.threads = 0;
    }
}

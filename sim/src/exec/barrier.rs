//! synccheck: barriers a GPU cannot complete, as compute-sanitizer's synccheck tool and the PTX
//! ISA define them (§9.7.13.1 `bar.sync`/`barrier.sync`).
//!
//! - A *mismatched* barrier: the warps of a block still running all wait, but at different
//!   barriers (`bar.sync 0` and `bar.sync 1`): none of the barriers completes, the block is
//!   deadlocked on the GPU. Always an error (the simulator used to release them together).
//! - A *divergent* barrier (with [`Checks::synccheck`]): `bar.sync` is `.aligned`, so every
//!   non-exited thread of a warp must execute the same one; a warp reaching it with some of its
//!   live lanes elsewhere (a `__syncthreads()` inside divergent code) is undefined behaviour,
//!   which synccheck reports ("Divergent thread(s) in warp").
//!
//! Left out: barriers with a thread count (`bar.sync 1, 64`: named barriers of part of a block)
//! wait for the whole block here, as `bar.sync 0` does.

use super::step::Ctx;
use super::warp::Warp;
use crate::error::{Error, Result};

/// The compute-sanitizer-like checks a launch runs besides memcheck, which always runs
/// (`sim run --check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks {
    /// Shared-memory hazards between threads of a block with no barrier between them
    /// ([`super::race`]).
    pub racecheck: bool,
    /// Divergent barriers are errors.
    pub synccheck: bool,
    /// The most distinct memory errors an SM keeps and a launch's error lists (memcheck;
    /// default [`super::faults::MAX_DISTINCT`]).
    pub memcheck_limit: usize,
}

impl Default for Checks {
    fn default() -> Self {
        Checks {
            racecheck: false,
            synccheck: false,
            memcheck_limit: super::faults::MAX_DISTINCT,
        }
    }
}

/// `(x, y, z)` of linear thread `t` of a block of shape `block`.
pub(crate) fn thread(t: u32, block: [u32; 3]) -> (u32, u32, u32) {
    (
        t % block[0],
        t / block[0] % block[1],
        t / (block[0] * block[1]),
    )
}

impl Ctx<'_> {
    /// Warp `w`'s lanes `mask` arrive at the `bar.sync` `inst` at `pc`: the warp remembers which
    /// barrier it waits at; with synccheck, lanes of the warp elsewhere are an error.
    pub(super) fn arrive(
        &mut self,
        w: &mut Warp,
        inst: &super::decode::DInst,
        pc: u32,
        mask: u32,
    ) -> Result<()> {
        let lane = mask.trailing_zeros() as usize;
        let id = if inst.nsrc > 0 {
            self.read(w, inst.src[0], lane.min(31)) as u32
        } else {
            0
        };
        w.barrier = (id, pc);
        if self.pass.launch.checks.synccheck && mask != w.live {
            let p = self.pass.launch.program;
            let c = self.ctaid;
            let b = self.pass.launch.dims.block;
            let first = thread(w.index * 32 + lane as u32, b);
            let away = (w.live & !mask).trailing_zeros();
            let other = thread(w.index * 32 + away, b);
            return Err(Error::Fault {
                launch: self.pass.launch.label.into(),
                message: format!(
                    "synccheck: divergent barrier: `bar.sync {id}` at {} reached by lanes {mask:#010x} of warp {} of block ({},{},{}) (thread ({},{},{}) first) while its live lanes {:#010x} (thread ({},{},{}) first, at {}) are elsewhere; a barrier must be reached by every non-exited thread of a warp (PTX ISA, bar.sync)",
                    p.place(pc as usize), w.index, c[0], c[1], c[2], first.0, first.1, first.2,
                    w.live & !mask, other.0, other.1, other.2,
                    p.place(w.pc[away as usize] as usize),
                ),
            });
        }
        Ok(())
    }
}

/// Checks that the waiting warps of `block` (every warp still running waits at a barrier) wait
/// at one barrier; otherwise the block is deadlocked: the error names each barrier, the PTX
/// line and the warps (with their threads) waiting there.
pub(crate) fn check_release(launch: &super::Launch, block: &[Warp], ctaid: [u32; 3]) -> Result<()> {
    let waiting = || block.iter().filter(|w| w.live != 0 && w.at_barrier);
    let Some(first) = waiting().next() else {
        return Ok(());
    };
    if waiting().all(|w| w.barrier.0 == first.barrier.0) {
        return Ok(());
    }
    // Each barrier with its line and waiting warps, in order of barrier number.
    let mut groups: Vec<((u32, u32), Vec<&Warp>)> = vec![];
    for w in waiting() {
        match groups.iter_mut().find(|g| g.0 .0 == w.barrier.0) {
            Some(g) => g.1.push(w),
            None => groups.push((w.barrier, vec![w])),
        }
    }
    groups.sort_by_key(|g| g.0 .0);
    let p = launch.program;
    let b = launch.dims.block;
    let parts: Vec<String> = groups
        .iter()
        .map(|((id, pc), ws)| {
            let warps: Vec<String> = ws
                .iter()
                .map(|w| {
                    let lo = thread(w.index * 32 + w.live.trailing_zeros(), b);
                    let hi = thread(w.index * 32 + 31 - w.live.leading_zeros(), b);
                    format!(
                        "warp {} (threads ({},{},{})..({},{},{}))",
                        w.index, lo.0, lo.1, lo.2, hi.0, hi.1, hi.2
                    )
                })
                .collect();
            format!(
                "at `bar.sync {id}` ({}: `{}`): {}",
                p.place(*pc as usize),
                p.texts[*pc as usize],
                warps.join(", ")
            )
        })
        .collect();
    Err(Error::Fault {
        launch: launch.label.into(),
        message: format!(
            "deadlock: block ({},{},{}) waits at {} different barriers, none of which every running thread reaches (on the GPU the block never finishes): {}",
            ctaid[0],
            ctaid[1],
            ctaid[2],
            groups.len(),
            parts.join("; ")
        ),
    })
}

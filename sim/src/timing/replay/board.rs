//! The warps' scoreboards: per register, the cycle its value is ready and the warp state a wait
//! for it counts as; a small fixed-size board for programs of at most [`SMALL`] registers and a
//! wide one over the replay's scratch for the others.

use super::stall::Why;

/// A warp's scoreboard: the cycle each of its registers' value is ready, and the warp state a
/// wait for it counts as.
pub(super) trait Board {
    /// Register `r`'s cycle.
    fn at(&self, r: u16) -> u32;
    /// Sets register `r`'s cycle and the state a wait for it counts as.
    fn set(&mut self, r: u16, t: u32, why: Why);
    /// The state a wait for register `r` counts as.
    fn why(&self, r: u16) -> Why;
    /// The first `n` registers' cycles.
    fn first(&self, n: usize) -> &[u32];
}

/// The scoreboard of a program of any number of registers: its parts of `Scratch::regs` and
/// `Scratch::whys`.
#[derive(Debug)]
pub(super) struct Wide<'a> {
    pub(super) ready: &'a mut [u32],
    pub(super) whys: &'a mut [Why],
}

impl Board for Wide<'_> {
    #[inline(always)]
    fn at(&self, r: u16) -> u32 {
        self.ready[usize::from(r)]
    }

    #[inline(always)]
    fn set(&mut self, r: u16, t: u32, why: Why) {
        self.ready[usize::from(r)] = t;
        self.whys[usize::from(r)] = why;
    }

    fn why(&self, r: u16) -> Why {
        self.whys[usize::from(r)]
    }

    fn first(&self, n: usize) -> &[u32] {
        &self.ready[..n]
    }
}

/// Registers a [`Small`] board holds.
pub(super) const SMALL: usize = 256;

/// Entries of a [`Small`] board: [`SMALL`] and a cache line more, so that the boards of a wave,
/// one after another, do not map a register's line to the same few sets of the host's L1 data
/// cache (1 KiB apart, every fourth board's line of a register falls in the same set of a
/// 4 KiB-periodic cache: conflict misses with 48 warps per SM).
pub(super) const BOARD: usize = SMALL + 16;

/// The scoreboard of a program of at most [`SMALL`] registers: a register's index, below
/// [`SMALL`], is its low byte, so that a look-up needs no bounds check (nor the board's length
/// in a register of the replay's hot loop). `whys` needs no clearing between waves: a register
/// not written in the wave is ready at 0 and never the late one.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Small {
    pub(super) ready: [u32; BOARD],
    pub(super) whys: [Why; SMALL],
}

impl Board for Small {
    #[inline(always)]
    fn at(&self, r: u16) -> u32 {
        debug_assert!(usize::from(r) < SMALL);
        self.ready[usize::from(r as u8)]
    }

    #[inline(always)]
    fn set(&mut self, r: u16, t: u32, why: Why) {
        debug_assert!(usize::from(r) < SMALL);
        self.ready[usize::from(r as u8)] = t;
        self.whys[usize::from(r as u8)] = why;
    }

    fn why(&self, r: u16) -> Why {
        self.whys[usize::from(r as u8)]
    }

    fn first(&self, n: usize) -> &[u32] {
        &self.ready[..n]
    }
}

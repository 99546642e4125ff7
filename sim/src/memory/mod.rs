//! Memory models: what a warp-level access costs.
//!
//! The executor turns each memory instruction into one [`WarpAccess`] (the active lanes'
//! addresses and the bytes each moves). The models here are small and pure where they can be:
//! [`coalesce::sectors`] (global and local: distinct 32-byte sectors), [`constant::requests`]
//! (distinct addresses, per broadcast group), and [`cache::SectorCache`] (a set-associative,
//! sectored, LRU cache used for L1, L2 and the constant caches). [`system::MemorySystem`] wires them
//! into the hierarchy of a config (per-SM L1 and constant caches, one L2, DRAM) and returns what
//! happened; `metrics` counts it and `timing` prices it.

pub mod cache;
pub mod coalesce;
pub mod constant;
pub mod formula;
mod host;
pub mod image;
pub mod ldgsts;
pub mod shared;
pub mod system;

pub(crate) use host::prefetch_line;
pub use host::{check_host_bytes, over_budget, parse_size, size_text, Budget, Limit};
pub use image::MemoryImage;

/// Lanes per warp.
pub const WARP: usize = 32;

/// One warp instruction's memory access: for each active lane, an address and a width.
#[derive(Debug, Clone)]
pub struct WarpAccess {
    /// Bit `i` set: lane `i` takes part.
    pub mask: u32,
    /// Byte address per lane (only lanes in `mask` are meaningful).
    pub addrs: [u64; WARP],
    /// Bytes each lane moves (element size × vector width: 1 to 16).
    pub bytes: u32,
}

impl WarpAccess {
    /// All 32 lanes active, lane `l` at address `f(l)`, `bytes` each.
    pub fn from_fn(bytes: u32, f: impl Fn(u64) -> u64) -> Self {
        WarpAccess {
            mask: u32::MAX,
            addrs: std::array::from_fn(|l| f(l as u64)),
            bytes,
        }
    }

    /// Iterates over the active lanes' (lane, address).
    #[inline]
    pub fn lanes(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let mut m = self.mask;
        std::iter::from_fn(move || {
            if m == 0 {
                return None;
            }
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some((l, self.addrs[l]))
        })
    }

    /// The active lanes of lanes `start..start + n`, as a mask.
    #[inline]
    pub fn phase_mask(&self, start: usize, n: usize) -> u32 {
        let window = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        self.mask & window.checked_shl(start as u32).unwrap_or(0)
    }
}

/// Where a request was served from, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Constant cache level `n` (0 = nearest) or L1.
    Cache(u8),
    /// L2.
    L2,
    /// Device memory.
    Dram,
}

/// A set of at most `N - 1` words (`N` a power of two; `u64::MAX` is not a word), open addressing
/// in `N` slots on the stack: a warp's distinct words found without comparing every pair or
/// sorting them (constant requests, bank conflicts).
pub(crate) struct WordSet<const N: usize> {
    slots: [u64; N],
}

impl<const N: usize> WordSet<N> {
    const EMPTY: u64 = u64::MAX;

    /// An empty set.
    #[inline]
    pub(crate) fn new() -> Self {
        WordSet {
            slots: [Self::EMPTY; N],
        }
    }

    /// Adds `w`; `true` when it was not in the set yet.
    #[inline]
    pub(crate) fn insert(&mut self, w: u64) -> bool {
        // Fibonacci hashing: the top log2(N) bits of the product.
        let mut h = (w.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - N.trailing_zeros())) as usize;
        loop {
            if self.slots[h] == w {
                return false;
            }
            if self.slots[h] == Self::EMPTY {
                self.slots[h] = w;
                return true;
            }
            h = (h + 1) & (N - 1);
        }
    }
}

//! The memory hierarchy of one GPU: per-SM L1 and constant caches, one L2 shared by all SMs,
//! and DRAM. Each method takes one warp-level access and returns what happened; nothing here
//! counts metrics or cycles.
//!
//! This file holds the whole hierarchy ([`MemorySystem`]), the parameters both halves read
//! ([`Params`]) and the outcomes of a whole access; the halves are in their own files, each
//! re-exported here: `sm` (an SM's L1 and constant caches, [`SmCaches`]), `l2` (the shared L2 and
//! DRAM, [`L2Model`]), `lines` (the L2 pass by lines in the shipped configs' geometry,
//! [`L2Lines`], and the block log's line records, [`LineRecords`]) and `atomic` (global atomics
//! and reductions).

use super::cache::{Geometry, SectorCache};
use super::{coalesce, constant, Level, WarpAccess};
use crate::config::{GpuConfig, StorePolicy};
use rayon::prelude::*;

mod atomic;
pub use atomic::{atomic_unit, cas_contention, CasLane};
mod l2;
mod lines;
mod sm;

pub use l2::{L2Model, L2Outcome, LineCounts};
pub use lines::{L2Lines, LineRecords};
pub use sm::{ConstLevelsOutcome, L1Outcome, RunOutcome, SmCaches};

/// How a global or local load uses L1 (PTX cache operators and the `dlcm` default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadPath {
    /// Cached in L1 (`.ca`, the read-only `.nc` path, `dlcm=ca`); `evict_first` for `.cs`/`.lu`.
    L1 {
        /// Filled lines are the first evicted.
        evict_first: bool,
    },
    /// L1 is looked up but never hit or filled (`.cg`, `.cv`, `dlcm=cg`).
    L2Only,
}

/// What one global (or local) warp access did in the hierarchy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobalOutcome {
    /// Distinct sectors the request touched (L1 lookups).
    pub sectors: u32,
    /// Distinct 128-byte lines the request touched (tag lookups).
    pub lines: u32,
    /// Sectors found in L1.
    pub l1_hits: u32,
    /// Sectors that missed L1 (or bypassed it).
    pub l1_misses: u32,
    /// Sectors sent from L1 to L2.
    pub l2_sectors: u32,
    /// Of those, L2 hits.
    pub l2_hits: u32,
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    /// Bytes written to DRAM (dirty L2 evictions).
    pub dram_write_bytes: u64,
    /// The farthest level any sector came from (`None` for a store: stores do not wait).
    pub level: Option<Level>,
}

/// What one indexed constant load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstOutcome {
    /// Requests: distinct addresses per broadcast group (`idc__requests.sum`).
    pub requests: u32,
    /// Requests that hit the nearest constant cache.
    pub hits: u32,
    /// Requests that missed the nearest constant cache.
    pub misses: u32,
    /// Requests that missed each constant cache level (index = level).
    pub level_misses: [u32; 3],
    /// Sectors read from L2 by requests that missed every constant level, and L2 hits of those.
    pub l2_sectors: u32,
    /// L2 hits among `l2_sectors`.
    pub l2_hits: u32,
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    /// Where each request was served from, in service order.
    pub served: Vec<Level>,
}

/// Cache parameters both halves of the hierarchy need, read once from the config.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    l1_sector_bytes: u32,
    l1_line_bytes: u32,
    /// Bytes an L1-cached load fetches per line: the sector, or the whole 128-byte line on
    /// Fermi and Kepler ("L1-cached loads move 128-byte lines", CUDA C Programming Guide 4.2 F.4.2).
    l1_transaction_bytes: u32,
    l2_sector_bytes: u32,
    /// What a store does to L1.
    store_policy: StorePolicy,
    /// Bytes an L2 read miss fetches from DRAM (`l2.fill_bytes`).
    l2_fill_bytes: u32,
    broadcast_lanes: u32,
    /// Global accesses carry a memory descriptor each warp loads once (compute capability 8.0
    /// and later), read once here rather than parsed from the config string per warp.
    descriptor: bool,
    /// Loads' and stores' L2 sectors go onto the block log as [`LineRecords`].
    line_records: bool,
    /// `l2.atomic_units` ([`atomic_unit`]).
    atomic_units: u32,
}

impl Params {
    /// Whether global and local accesses carry a memory descriptor that each warp loads once
    /// (ULDC, an IDC request): compute capability 8.0 and later.
    #[inline]
    pub fn memory_descriptor(&self) -> bool {
        self.descriptor
    }

    /// Whether an L1 transaction is one sector (Maxwell on), so that a load's or a store's L2
    /// sectors are its own ([`SmCaches::load_run_into`], [`SmCaches::store_run_into`]) rather
    /// than whole lines or covering segments (Fermi, Kepler).
    #[inline]
    pub fn sector_transactions(&self) -> bool {
        self.l1_transaction_bytes <= self.l1_sector_bytes
    }

    /// Whether a global or local access's L2 sectors go onto the block log's request list as
    /// [`LineRecords`] (one per line) rather than one address per sector: on a config with
    /// [`Params::sector_transactions`] whose L1 lines are [`LineRecords`]' and whose L2 is
    /// [`L2Lines`]' (which looks the records up as they stand).
    #[inline]
    pub fn line_records(&self) -> bool {
        self.line_records
    }

    /// log2 of the L1 line size (a power of two): a byte address shifted right by it is its L1
    /// line number.
    #[inline]
    pub fn l1_line_shift(&self) -> u32 {
        self.l1_line_bytes.trailing_zeros()
    }

    /// log2 of the L1 line and sector sizes ([`MissList::push_line`]'s shifts).
    ///
    /// [`MissList::push_line`]: super::cache::MissList::push_line
    #[inline]
    pub fn l1_shifts(&self) -> (u32, u32) {
        (self.l1_line_shift(), self.l1_sector_bytes.trailing_zeros())
    }

    /// The distinct L1 sectors `access` touches, ascending (byte addresses).
    pub fn sectors(&self, access: &WarpAccess) -> coalesce::Sectors {
        coalesce::sectors(access, self.l1_sector_bytes)
    }

    /// As [`Params::sectors`], into `out`, for an access whose [`coalesce::contiguous`] run
    /// `run` the caller already has ([`coalesce::sectors_into`]).
    #[inline]
    pub fn sectors_into(&self, access: &WarpAccess, run: Option<u64>, out: &mut coalesce::Sectors) {
        coalesce::sectors_into(access, self.l1_sector_bytes, run, out)
    }
}

/// Tag state of the whole hierarchy: each SM's private caches and the shared L2.
#[derive(Debug, Clone)]
pub struct MemorySystem {
    /// Per SM.
    pub sms: Vec<SmCaches>,
    /// Shared by all SMs.
    pub l2: L2Model,
    /// Geometry both halves use.
    pub params: Params,
}

impl MemorySystem {
    /// Starts another launch on these caches: every SM's L1 and its nearest constant cache
    /// start empty, L2 and the farther constant levels keep what they hold. Measured on an H200
    /// (`validate/measurements/h200/ubench/warm.cu`, H): a line chased in one launch costs the
    /// next launch's first pass 284 cycles per load, an L2 hit, against 41 from L1 within a launch,
    /// whether the launches were queued back to back or a host wait apart; Nsight Compute counts as
    /// many L1 misses in the second launch as in the first. Applied to every GPU: L1 is not
    /// coherent with other SMs' stores, so a launch cannot trust what an earlier one left there.
    pub fn next_launch(&mut self) {
        for sm in &mut self.sms {
            sm.l1.clear();
            if let Some(c) = sm.constant.first_mut() {
                c.clear();
            }
            sm.merge.clear();
        }
    }

    /// Cold caches for `cfg`.
    pub fn new(cfg: &GpuConfig) -> Self {
        Self::with_line_records(cfg, true)
    }

    /// [`MemorySystem::new`], with line records for L2 requests only if `line_records` (and the
    /// L2 can take them); without, every L2 request is one address per sector, with the same
    /// outcomes (tests compare the two).
    pub fn with_line_records(cfg: &GpuConfig, line_records: bool) -> Self {
        let l1g = Geometry {
            size_bytes: cfg.l1.size_bytes,
            line_bytes: cfg.l1.line_bytes,
            sector_bytes: cfg.l1.sector_bytes,
            associativity: cfg.l1.associativity,
        };
        let l2g = Geometry {
            size_bytes: cfg.l2.size_bytes,
            line_bytes: cfg.l2.line_bytes,
            sector_bytes: cfg.l2.sector_bytes,
            associativity: cfg.l2.associativity,
        };
        let const_levels: Vec<Geometry> = cfg
            .constant
            .cache
            .iter()
            .map(|c| Geometry {
                size_bytes: c.size_bytes,
                line_bytes: c.line_bytes,
                sector_bytes: c.line_bytes,
                associativity: c.associativity,
            })
            .collect();
        let params = Params {
            l1_sector_bytes: l1g.sector_bytes,
            l1_line_bytes: l1g.line_bytes,
            l1_transaction_bytes: cfg.l1.transaction_bytes,
            l2_sector_bytes: l2g.sector_bytes,
            l2_fill_bytes: cfg.l2.fill_bytes,
            store_policy: cfg.l1.store_policy,
            broadcast_lanes: cfg.constant.broadcast_lanes,
            atomic_units: cfg.l2.atomic_units,
            descriptor: cfg.compute_capability().0 >= 8,
            line_records: cfg.l1.transaction_bytes <= l1g.sector_bytes
                && (l1g.line_bytes, l1g.sector_bytes)
                    == (
                        LineRecords::LINE_BYTES as u32,
                        LineRecords::SECTOR_BYTES as u32,
                    ),
        };
        // One SM's cold caches, copied for each SM (a copy costs less than setting up the
        // recency ranks of hundreds of ways again).
        let cold = SmCaches {
            l1: SectorCache::new(l1g),
            constant: const_levels
                .iter()
                .map(|g| constant::ConstCache::new(*g))
                .collect(),
            merge: Default::default(),
            fills: Default::default(),
        };
        // Copied on every core: the copies (some MB of tags and ranks) are most of the time.
        let sms = (0..cfg.sm.count)
            .into_par_iter()
            .map(|_| cold.clone())
            .collect();
        let mut l2 = L2Model {
            l2: SectorCache::with_set_displacement(l2g, cfg.l2.set_displacement.into()),
            p: params,
            atomic_ops: Default::default(),
            cas: Default::default(),
            cas_winners: Default::default(),
        };
        // Line records only where the L2 pass takes them as they stand ([`L2Lines`]).
        let line_records = line_records && params.line_records && l2.lines().is_some();
        l2.p.line_records = line_records;
        MemorySystem {
            sms,
            l2,
            params: Params {
                line_records,
                ..params
            },
        }
    }

    /// A global or local load by SM `sm` along `path`, through L1 and L2.
    pub fn load(&mut self, sm: usize, access: &WarpAccess, path: LoadPath) -> GlobalOutcome {
        let l1 = self.sms[sm].load(&self.params, access, path);
        let mut t = L2Outcome::default();
        let mut level = Level::Cache(0);
        for &s in &l1.to_l2 {
            level = level.max(self.l2.read(s, &mut t));
        }
        GlobalOutcome::new(&l1, &t, Some(level))
    }

    /// A global or local store by SM `sm`: through L1 as the config's store policy says, to L2.
    pub fn store(&mut self, sm: usize, access: &WarpAccess) -> GlobalOutcome {
        let l1 = self.sms[sm].store(&self.params, access);
        let mut t = L2Outcome::default();
        self.l2.write(&l1.to_l2, &mut t);
        GlobalOutcome::new(&l1, &t, None)
    }

    /// An indexed constant load (LDC) by SM `sm`: one request per distinct address, each looked
    /// up level by level, filling the levels it missed, and L2 behind them.
    pub fn constant_load(&mut self, sm: usize, access: &WarpAccess) -> ConstOutcome {
        let c = self.sms[sm].constant_load(&self.params, access);
        let mut t = L2Outcome::default();
        let mut far = c.to_l2.iter();
        let served = c
            .served
            .iter()
            .map(|&s| match s {
                Level::L2 => self
                    .l2
                    .read(*far.next().expect("one address per miss"), &mut t),
                l => l,
            })
            .collect();
        ConstOutcome {
            requests: c.requests,
            hits: c.hits,
            misses: c.misses,
            level_misses: c.level_misses,
            l2_sectors: t.sectors,
            l2_hits: t.hits,
            dram_read_bytes: t.dram_read,
            served,
        }
    }
}

impl GlobalOutcome {
    /// Joins the L1 and L2 halves of one access.
    pub fn new(l1: &L1Outcome, l2: &L2Outcome, level: Option<Level>) -> Self {
        GlobalOutcome {
            sectors: l1.sectors,
            lines: l1.lines,
            l1_hits: l1.l1_hits,
            l1_misses: l1.l1_misses,
            l2_sectors: l2.sectors,
            l2_hits: l2.hits,
            dram_read_bytes: l2.dram_read,
            dram_write_bytes: l2.dram_write,
            level,
        }
    }
}

/// The runs of consecutive `sectors` in one line (`line_of` as [`SectorCache::line_of`]): the
/// line, the mask of its sectors, and how many of `sectors` the run holds.
#[inline]
fn line_runs<'a>(
    sectors: &'a [u64],
    line_of: impl Fn(u64) -> (u64, u32) + 'a,
) -> impl Iterator<Item = (u64, u32, u32)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        let (line, mut mask) = line_of(*sectors.get(i)?);
        let start = i;
        i += 1;
        while let Some(&s) = sectors.get(i) {
            let (l, bit) = line_of(s);
            if l != line {
                break;
            }
            mask |= bit;
            i += 1;
        }
        Some((line, mask, (i - start) as u32))
    })
}

/// The L2 sectors covering one L1 sector (equal sizes: just itself).
fn l2_sectors_of(addr: u64, l1_sector: u32, l2_sector: u32) -> impl Iterator<Item = u64> {
    let base = addr & !(u64::from(l1_sector) - 1);
    let step = u64::from(l2_sector);
    let n = (l1_sector / l2_sector).max(1);
    (0..u64::from(n)).map(move |i| (base & !(step - 1)) + i * step)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Launches whose L2 requests are [`LineRecords`] give what they give with one address per
    /// sector: the same outputs, counters, per-PC statistics and timing, on loads and stores
    /// that are one run of sectors or not (offsets, strides, 16-byte elements, scattered
    /// lanes), cached in L1, read-only, bypassing it (`dlcm = "cg"`), and local memory; on an
    /// L1 of 256 ways in 4 sets (Ampere) and of 242 ways in 4 sets (Volta). The H200 (64-byte L2
    /// fills) and Tesla (no L2 lines) keep sector lists.
    #[test]
    fn launches_with_line_records_match_those_of_sector_lists() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        // read_offset and write_offset with every global load bypassing L1.
        let dir = std::env::temp_dir().join(format!("sim-line-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut cg = vec![];
        for name in ["read_offset", "write_offset"] {
            let text = std::fs::read_to_string(format!("{root}/kernels/{name}.toml")).unwrap();
            let text = (text.replace("[[launch]]\n", "[[launch]]\ndlcm = \"cg\"\n"))
                .replace("ptx = \"", &format!("ptx = \"{root}/kernels/"));
            let path = dir.join(format!("{name}_cg.toml"));
            std::fs::write(&path, text).unwrap();
            cg.push(path.to_str().unwrap().to_string());
        }
        let local = format!("{root}/tests/fixtures/local_array.toml");
        let cases: [(&str, &[(&str, i64)]); 11] = [
            ("read_stride", &[("n", 3000)]),
            ("transpose_smem", &[("n", 64)]),
            ("transpose", &[("n", 64)]),
            ("read_offset", &[("n", 3000)]),
            ("write_offset", &[("n", 3000)]),
            ("read_ldg", &[("n", 3000)]),
            ("copy_float4", &[("n", 3000)]),
            ("pseudo_random", &[("n", 20000)]),
            (&cg[0], &[("n", 3000)]),
            (&cg[1], &[("n", 3000)]),
            (&local, &[]),
        ];
        for (gpu, records) in [
            ("rtx3090", true),
            ("v100", true),
            ("h200", false),
            ("c1060", false),
        ] {
            let path = format!("{root}/configs/{gpu}.toml");
            let cfg = GpuConfig::load(std::path::Path::new(&path)).unwrap();
            assert_eq!(
                MemorySystem::new(&cfg).params.line_records(),
                records,
                "{gpu}"
            );
            if !records {
                continue;
            }
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |p, on| p.line_records_off = on);
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

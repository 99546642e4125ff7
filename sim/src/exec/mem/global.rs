//! Global and local accesses in the memory models: the L1 part (one run in one line, inlined; any
//! other access out of line), the sectors that go on to L2 onto the block's log, the counters
//! and the latency.

use super::address::resolved_access;
use crate::exec::step::{lanes, Ctx};
use crate::exec::trace::{L2Kind, MemRec, Outcome, Served};
use crate::exec::warp::Warp;
use crate::memory::coalesce;
use crate::memory::shared::{self, Banks};
use crate::memory::system::{L1Outcome, LineRecords, LoadPath};
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::{CacheOp, MemOp};

/// Base of the addresses local memory is given in the cache model (interleaved per lane).
const LOCAL_MODEL_BASE: u64 = 0x7e00_0000_0000;

impl Ctx<'_> {
    /// The banks of the L1/shared data array as the config has them (global accesses pass
    /// them too: [`shared::data_wavefronts`]).
    #[inline(always)]
    fn data_banks(&self) -> Banks {
        Banks {
            banks: self.pass.cfg.shared.banks,
            width: self.pass.cfg.shared.bank_width_bytes,
        }
    }

    /// [`Self::model`] for a global or local access (`space`, resolved). A global access whose
    /// sectors are one run in one L1 line (a coalesced warp of up to 128 bytes: the common
    /// case) takes [`Self::model_global_line`], inlined here; every other access the general
    /// path, out of line, so that its frame and set-up stay out of the common case's.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn model_global(
        &mut self,
        w: &mut Warp,
        pc: u32,
        m: MemOp,
        space: StateSpace,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        if !w.desc_loaded && self.pass.params.memory_descriptor() {
            // sm_80+ global accesses carry a memory descriptor the warp loads once (ULDC).
            w.desc_loaded = true;
            self.record(pc, Outcome::Uniform { imc: 0, idc: 1 });
        }
        // `m.space` global: `space` is too, and the addresses need no resolving or remapping.
        let line_path = !self.pass.launch.paths.global_general;
        if let (StateSpace::Global, Some(st), true) = (m.space, step, line_path) {
            if let Some(one) = self.one_line_run(access.bytes, st) {
                return self.model_global_line(pc, m, access, run, step, store, one);
            }
        }
        self.model_global_general(w, pc, m, space, access, run, step, store)
    }

    /// The L1 path of a global or local load with operator `m` (stores ignore it).
    #[inline(always)]
    fn load_path(&self, m: MemOp, local: bool) -> LoadPath {
        // The read-only path (`ld.global.nc`) is always cached; `.cs`/`.lu` are cached but
        // evicted first; `.cg`/`.cv` bypass L1; no operator follows the launch's dlcm.
        match (m.nc, m.cache) {
            (true, _) | (_, CacheOp::Ca) => LoadPath::L1 { evict_first: false },
            (_, CacheOp::Cs | CacheOp::Lu) => LoadPath::L1 { evict_first: true },
            (_, CacheOp::Cg | CacheOp::Cv) => LoadPath::L2Only,
            _ if self.pass.launch.cache_global_loads || local => {
                LoadPath::L1 { evict_first: false }
            }
            _ => LoadPath::L2Only,
        }
    }

    /// The sectors of an access of `bytes` a lane with whole-warp step `st`
    /// ([`coalesce::Shape::step`]) when they are one run in one L1 line, on a config with
    /// [`crate::memory::system::Params::sector_transactions`]: the first sector's byte address,
    /// their count, and their mask in the line ([`coalesce::sector_run`]'s run, in one line).
    #[inline(always)]
    fn one_line_run(&self, bytes: u32, st: (u64, u64)) -> Option<LineRun> {
        let shift = self.pass.params.l1_shifts().1;
        let (first, n) = coalesce::sector_run(bytes, st, shift)?;
        let line_shift = self.pass.params.l1_line_shift();
        // `first + (n - 1) sectors` is the run's last sector: no wrap (`sector_run`).
        let last = first + (u64::from(n - 1) << shift);
        if first >> line_shift != last >> line_shift || !self.pass.params.sector_transactions() {
            return None;
        }
        // `n` sectors from the first one's place in its line (at most 32 a line: `Geometry`).
        let at = (first >> shift) & ((1u64 << (line_shift - shift)) - 1);
        let mask = (u32::MAX >> (32 - n)) << at;
        Some(LineRun { first, n, mask })
    }

    /// [`Self::model_global_general`] of a global access whose sectors are one run in one L1
    /// line (`one`, [`Self::one_line_run`]): the same outcome, counts and log entries, with one
    /// L1 lookup and none of the general path's buffers, remapping or loops over lines.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn model_global_line(
        &mut self,
        pc: u32,
        m: MemOp,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
        LineRun { first, n, mask }: LineRun,
    ) -> u32 {
        let shift = self.pass.params.l1_shifts().1;
        let line_shift = self.pass.params.l1_line_shift();
        let line = first >> line_shift;
        let path = self.load_path(m, false);
        let log = &mut *self.log;
        let start = log.sectors.len() as u32;
        let s0 = first >> shift;
        push_steps(&mut log.sectors, s0, 1, n);
        let req = log.addrs.len();
        // The sectors that go on to L2 onto the log's request list, in order: a store's every
        // one, a load's misses (as one line record where the config takes them).
        let records = self.pass.params.line_records();
        let l1_hits = if store {
            self.caches.store_line(self.pass.params, line, mask);
            if records {
                log.addrs.push(LineRecords::record(line, mask));
            } else {
                push_steps(&mut log.addrs, first, 1 << shift, n);
            }
            0
        } else {
            let hits = (self.caches).load_line(line, mask, path);
            if records {
                if hits != mask {
                    log.addrs.push(LineRecords::record(line, mask & !hits));
                }
            } else if hits == 0 {
                push_steps(&mut log.addrs, first, 1 << shift, n);
            } else {
                let top = line << (line_shift - shift);
                let mut miss = mask & !hits;
                while miss != 0 {
                    log.addrs
                        .push((top + u64::from(miss.trailing_zeros())) << shift);
                    miss &= miss - 1;
                }
            }
            hits.count_ones()
        };
        let dwf = shared::data_wavefronts_of(access, self.data_banks(), run, step);
        let counts = L1Counts {
            sectors: n,
            lines: 1,
            hits: l1_hits,
        };
        let (exec, bytes) = (access.mask, m.bytes_per_thread());
        self.finish_global(pc, false, store, (exec, bytes), counts, start, req, dwf)
    }

    /// [`Self::model_global`] of any access: a local one (remapped per lane), a generic one
    /// (resolved), one whose sectors are not one run in one line.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn model_global_general(
        &mut self,
        w: &mut Warp,
        pc: u32,
        m: MemOp,
        space: StateSpace,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        let exec = access.mask;
        let sm = self.sm;
        let bytes = m.bytes_per_thread();
        let local = space == StateSpace::Local;
        let mut remapped = None;
        if local || m.space == StateSpace::Generic {
            let mut a = resolved_access(m.space, access).into_owned();
            if local {
                // Local memory is interleaved: word k of lane l sits at (k * 32 + l) * 4,
                // so a warp reading the same local variable touches consecutive words.
                let base = LOCAL_MODEL_BASE
                    + (sm as u64 * 64 + u64::from(w.index)) * w.local_bytes as u64 * 32;
                for l in lanes(exec) {
                    a.addrs[l] = base + (a.addrs[l] / 4) * 128 + l as u64 * 4 + a.addrs[l] % 4;
                }
            }
            remapped = Some(a);
        }
        // The addresses the models see, their run and their step.
        let (access, run, step) = match &remapped {
            Some(a) => {
                let shape = coalesce::Shape::of(a.mask, &a.addrs);
                (a, shape.run(a.bytes), shape.step)
            }
            None => (access, run, step),
        };
        let path = self.load_path(m, local);
        let shift = self.pass.params.l1_shifts().1;
        // The L1 part: the sectors' numbers onto the log (the timing pass needs them: fills in
        // flight, store merging), and the sectors that go on to L2 onto the log's request list
        // from `req` on. A run of sectors (lanes at most a sector apart: a coalesced access)
        // goes to L1 as the run, with no list of sectors in between; others through the
        // general path, out of line (its buffers would make this frame large).
        let log = &mut *self.log;
        let start = log.sectors.len() as u32;
        let req = log.addrs.len();
        let runs = self.pass.params.sector_transactions();
        let (sectors, lines, l1_hits) = match step
            .and_then(|st| coalesce::sector_run(access.bytes, st, shift).filter(|_| runs))
        {
            Some((first, n)) => {
                log.sectors
                    .extend((0..u64::from(n)).map(|k| (first >> shift) + k));
                let (p, caches) = (self.pass.params, &mut *self.caches);
                let run = (first, n);
                match (store, p.line_records()) {
                    (true, true) => {
                        let lines = caches.store_run_into(p, run, &mut LineRecords(&mut log.addrs));
                        (n, lines, 0)
                    }
                    (true, false) => (n, caches.store_run_into(p, run, &mut log.addrs), 0),
                    (false, true) => {
                        let to_l2 = &mut LineRecords(&mut log.addrs);
                        let r = caches.load_run_into(p, run, path, to_l2);
                        (n, r.lines, r.hits)
                    }
                    (false, false) => {
                        let r = caches.load_run_into(p, run, path, &mut log.addrs);
                        (n, r.lines, r.hits)
                    }
                }
            }
            None => self.global_sectors(access, run, step, shift, path, store),
        };
        // What the timing pass needs: the L1 data pipe, fills in flight, store merging.
        let dwf = shared::data_wavefronts_of(access, self.data_banks(), run, step);
        let counts = L1Counts {
            sectors,
            lines,
            hits: l1_hits,
        };
        self.finish_global(pc, local, store, (exec, bytes), counts, start, req, dwf)
    }

    /// The rest of [`Self::model_global`] once an access's L1 part has put its sectors onto the
    /// log (from `start`) and the sectors going on to L2 onto its request list (from `req`):
    /// the counters (`(exec, bytes)`: the active lanes and each one's bytes), the per-PC and per-SM
    /// counts, the latency (L1 hit, L2 request, or a store acknowledged by L2) and the log's
    /// record for the timing pass (`dwf`: the access's data-pipe wavefronts, before misses).
    /// Returns the record's reference. Shared by the one-line path and the general one.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn finish_global(
        &mut self,
        pc: u32,
        local: bool,
        store: bool,
        (exec, bytes): (u32, u32),
        L1Counts {
            sectors,
            lines,
            hits: l1_hits,
        }: L1Counts,
        start: u32,
        req: usize,
        dwf: u32,
    ) -> u32 {
        // Stores count no misses in L1.
        let misses = if store { 0 } else { sectors - l1_hits };
        let outcome = match self.texture {
            Some(kind) => Outcome::Texture {
                kind,
                sectors,
                hits: l1_hits,
                misses,
                lines,
            },
            None => Outcome::Global {
                local,
                store,
                bytes: exec.count_ones() * bytes,
                sectors,
                hits: l1_hits,
                misses,
                lines,
                async_copy: self.async_copy,
            },
        };
        self.record(pc, outcome);
        let log = &mut *self.log;
        let end = log.sectors.len() as u32;
        let sent = log.addrs.len() > req;
        let hit = !store && !sent;
        let records = self.pass.params.line_records();
        let lat = match (store, sent) {
            // Every sector hit L1.
            (false, false) => Served::L1.lat(),
            (false, true) if records => log.request_from(L2Kind::LoadLines, req),
            (false, true) => log.request_from(L2Kind::Load, req),
            // Stores are acknowledged by L2; the L2 pass still runs their writes.
            (true, true) if records => log.request_from(L2Kind::StoreLines, req),
            (true, true) => log.request_from(L2Kind::Store, req),
            (true, false) => Served::Acknowledged.lat(),
        };
        log.mem(MemRec {
            lat,
            dwf: dwf + misses,
            start,
            end,
            // At most the access's sectors: a few per lane.
            lines: lines as u16,
            store,
            hit,
        })
    }

    /// The L1 part of [`Self::model_global`] for an access whose sectors are not one run (or
    /// a config whose L1 moves whole lines): the distinct sectors (equally spaced lanes' in
    /// closed form into a small array, others by the coalescer), their numbers onto the log,
    /// the L1 lookups, and the sectors that go on to L2 onto the log's request list. Returns
    /// (sectors, lines, L1 hits). Out of line: its buffers stay out of the caller's frame.
    #[inline(never)]
    fn global_sectors(
        &mut self,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        shift: u32,
        path: LoadPath,
        store: bool,
    ) -> (u32, u32, u32) {
        let mut few = [0u64; WARP];
        let mut many = coalesce::Sectors::new();
        let touched: &[u64] =
            match step.and_then(|st| coalesce::stepped_sectors(access, st, shift, &mut few)) {
                Some(n) => &few[..n],
                None => {
                    self.pass.params.sectors_into(access, run, &mut many);
                    &many
                }
            };
        self.l1_sectors(touched, shift, path, store)
    }

    /// The L1 part of an access whose distinct sectors (byte addresses) are `touched`: their
    /// numbers onto the log, the L1 lookups, the sectors that go on to L2 onto the log's
    /// request list. Returns (sectors, lines, L1 hits).
    pub(super) fn l1_sectors(
        &mut self,
        touched: &[u64],
        shift: u32,
        path: LoadPath,
        store: bool,
    ) -> (u32, u32, u32) {
        let log = &mut *self.log;
        log.sectors.extend(touched.iter().map(|s| s >> shift));
        let p = self.pass.params;
        if !store && p.sector_transactions() {
            // A load's misses straight onto the log's request list.
            let r = if p.line_records() {
                let to_l2 = &mut LineRecords(&mut log.addrs);
                self.caches.load_sectors_to(p, touched, path, to_l2)
            } else {
                self.caches
                    .load_sectors_to(p, touched, path, &mut log.addrs)
            };
            return (touched.len() as u32, r.lines, r.hits);
        }
        let mut o = L1Outcome::default();
        if store {
            self.caches.store_sectors_into(p, touched, &mut o);
        } else {
            self.caches.load_sectors_into(p, touched, path, &mut o);
        }
        if p.line_records() {
            self.caches
                .pass_on(&o.to_l2, &mut LineRecords(&mut log.addrs));
        } else {
            log.addrs.extend_from_slice(&o.to_l2);
        }
        (o.sectors, o.lines, o.l1_hits)
    }
}

/// Pushes the `n` values `a`, `a + step`, ... onto `v`: up to 4 (a whole line's sectors in the
/// shipped configs) as one copy of four, cut back to `n` (a few vector instructions, no loop);
/// more one by one.
#[inline(always)]
fn push_steps(v: &mut Vec<u64>, a: u64, step: u64, n: u32) {
    if n <= 4 {
        let len = v.len();
        // Values past the `n`-th are cut off: wrapping, as they may lie past the top.
        let at = |k: u64| a.wrapping_add(k.wrapping_mul(step));
        v.extend_from_slice(&[a, at(1), at(2), at(3)]);
        v.truncate(len + n as usize);
    } else {
        v.extend((0..u64::from(n)).map(|k| a + k * step));
    }
}

/// What an access's L1 part found: its distinct sectors, the L1 lines they lie in (tag
/// lookups), and a load's sectors that hit.
#[derive(Clone, Copy)]
pub(super) struct L1Counts {
    pub(super) sectors: u32,
    pub(super) lines: u32,
    pub(super) hits: u32,
}

/// A global access's sectors that are one run in one L1 line ([`Ctx::one_line_run`]).
#[derive(Debug, Clone, Copy)]
struct LineRun {
    /// The first sector's byte address.
    first: u64,
    /// How many sectors (at least 1).
    n: u32,
    /// Their mask in the line (bit `i`: sector `i` of the line).
    mask: u32,
}

#[cfg(test)]
mod tests {
    /// Global accesses through the one-line path ([`Ctx::model_global_line`]) give what the
    /// general path gives: the same outputs, counters, per-PC statistics and timing, on
    /// workloads of coalesced loads and stores (one line, and not: offsets, strides, 16-byte
    /// elements), the read-only path, on L1s of 256 ways in 4 sets and of 466 ways in 3 sets.
    #[test]
    fn one_line_accesses_match_the_general_path() {
        let cases: [(&str, &[(&str, i64)]); 6] = [
            ("transpose_smem", &[("n", 64)]),
            ("read_stride", &[("n", 3000)]),
            ("read_offset", &[("n", 3000)]),
            ("read_ldg", &[("n", 3000)]),
            ("copy_float4", &[("n", 3000)]),
            ("stencil_1d", &[("n", 4096)]),
        ];
        for gpu in ["rtx3090", "h200"] {
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |p, on| p.global_general = on);
            }
        }
    }
}

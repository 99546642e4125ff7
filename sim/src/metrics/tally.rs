//! The one place where what the functional pass found becomes counts: a memory instruction's
//! [`Outcome`] into the launch's [`Counters`] ([`Counters::tally`]) and its instruction's
//! [`PcStats`] ([`PcStats::tally`]), and executed float operations into their per-thread
//! counters ([`Counters::add_flops`]).

use super::{Counters, PcStats};
use crate::ptx::inst::CacheOp;
use crate::trace::{Outcome, SharedOp, TexKind};

impl Counters {
    /// Counts `o` in the launch's counters. Which Nsight Compute metric each count feeds is the
    /// [`Counters`] table's.
    #[inline(always)]
    pub fn tally(&mut self, o: &Outcome) {
        let c = self;
        match *o {
            Outcome::InRegisters { .. } => {}
            Outcome::Uniform { imc, idc } => {
                c.imc_requests += imc;
                c.idc_requests += idc;
                c.idc_hits += idc;
            }
            Outcome::ConstOperand => {
                c.imc_requests += 1;
                c.const_imm_loads += 1;
            }
            Outcome::Ldc {
                requests,
                hits,
                misses,
                beyond,
            } => {
                c.ldc_inst += 1;
                c.ldc_requests += u64::from(requests);
                c.idc_requests += u64::from(requests);
                c.idc_hits += u64::from(hits);
                c.idc_misses += u64::from(misses);
                c.gcc_requests += u64::from(beyond);
            }
            Outcome::Shared {
                op,
                wavefronts,
                conflicts,
            } => {
                let (n, k) = (u64::from(wavefronts), u64::from(conflicts));
                match op {
                    SharedOp::Load => {
                        c.shared_ld_inst += 1;
                        c.shared_ld_wavefronts += n;
                        c.shared_ld_wavefronts_sass += n;
                        c.shared_ld_conflicts += k;
                    }
                    SharedOp::Store => {
                        c.shared_st_inst += 1;
                        c.shared_st_wavefronts += n;
                        c.shared_st_wavefronts_sass += n;
                        c.shared_st_conflicts += k;
                    }
                    SharedOp::Atom => {
                        c.shared_atom_inst += 1;
                        c.shared_atom_wavefronts += n;
                    }
                    SharedOp::Ldgsts { bypass } => {
                        c.ldgsts_inst += 1;
                        if bypass {
                            c.ldgsts_bypass_inst += 1;
                        } else {
                            c.ldgsts_access_inst += 1;
                        }
                        c.ldgsts_wavefronts += n;
                        c.ldgsts_conflicts += k;
                    }
                    SharedOp::Ldsm => {
                        c.ldsm_inst += 1;
                        c.ldsm_wavefronts += n;
                        c.ldsm_conflicts += k;
                    }
                    SharedOp::Stsm => {
                        c.stsm_inst += 1;
                        c.stsm_wavefronts += n;
                    }
                }
            }
            Outcome::Global {
                local,
                store,
                bytes,
                sectors,
                hits,
                misses,
                lines: _,
                async_copy,
            } => {
                let s = u64::from(sectors);
                if async_copy != CacheOp::Default {
                    let bypass = async_copy == CacheOp::Cg;
                    let requests = u64::from(sectors > 0);
                    c.ldgsts_requests += requests;
                    c.ldgsts_sectors += s;
                    // L1TEX counts an LDGSTS's global read as a global load too (requests,
                    // sectors and lookups of `..._global_op_ld`; measured on the H200,
                    // tests/fixtures/tensor/h200/report.json), but not as a load instruction;
                    // a `.cg` copy's sectors all look up as misses.
                    c.global_ld_requests += requests;
                    c.global_ld_sectors += s;
                    if bypass {
                        c.ldgsts_bypass_sectors += s;
                        c.l1_ld_misses += s;
                    } else {
                        c.ldgsts_access_sectors += s;
                        c.ldgsts_hits += u64::from(hits);
                        c.l1_ld_hits += u64::from(hits);
                        c.l1_ld_misses += s - u64::from(hits);
                    }
                    return;
                }
                match (local, store) {
                    (false, false) => {
                        c.global_ld_inst += 1;
                        c.global_ld_requests += 1;
                        c.global_ld_bytes += u64::from(bytes);
                        c.global_ld_sectors += s;
                        c.l1_ld_hits += u64::from(hits);
                        c.l1_ld_misses += u64::from(misses);
                    }
                    (false, true) => {
                        c.global_st_inst += 1;
                        c.global_st_requests += 1;
                        c.global_st_sectors += s;
                    }
                    (true, false) => {
                        c.local_ld_requests += 1;
                        c.local_ld_sectors += s;
                    }
                    (true, true) => {
                        c.local_st_requests += 1;
                        c.local_st_sectors += s;
                    }
                }
            }
            Outcome::Texture {
                kind,
                sectors,
                hits,
                misses,
                ..
            } => {
                let (s, h) = (u64::from(sectors), u64::from(hits));
                match kind {
                    TexKind::Fetch => {
                        c.tex_inst += 1;
                        c.tex_requests += 1;
                        c.tex_sectors += s;
                        c.tex_hits += h;
                        c.tex_misses += u64::from(misses);
                    }
                    TexKind::SurfaceLoad => {
                        c.surface_ld_inst += 1;
                        c.surface_ld_requests += 1;
                        c.surface_ld_sectors += s;
                        c.surface_ld_hits += h;
                    }
                    TexKind::SurfaceStore => {
                        c.surface_st_inst += 1;
                        c.surface_st_requests += 1;
                        c.surface_st_sectors += s;
                    }
                }
            }
            Outcome::Atomic {
                returns, sectors, ..
            } => {
                let s = u64::from(sectors);
                if returns {
                    c.global_atom_inst += 1;
                    c.global_atom_requests += 1;
                    c.global_atom_sectors += s;
                } else {
                    c.global_red_inst += 1;
                    c.global_red_requests += 1;
                    c.global_red_sectors += s;
                }
            }
        }
    }
}

impl PcStats {
    /// Counts `o`, an outcome of this instruction, in its statistics.
    #[inline(always)]
    pub fn tally(&mut self, o: &Outcome) {
        match *o {
            Outcome::Uniform { .. } | Outcome::ConstOperand => {}
            // The words read, as an indexed LDC's distinct addresses (`sass::count`).
            Outcome::InRegisters { words } => self.requests += u64::from(words),
            Outcome::Ldc {
                requests,
                hits,
                misses,
                ..
            } => {
                self.requests += u64::from(requests);
                self.hits += u64::from(hits);
                self.misses += u64::from(misses);
            }
            Outcome::Shared {
                wavefronts,
                conflicts,
                ..
            } => {
                self.requests += 1;
                self.wavefronts += u64::from(wavefronts);
                self.conflicts += u64::from(conflicts);
            }
            Outcome::Global {
                sectors,
                hits,
                misses,
                ..
            }
            | Outcome::Texture {
                sectors,
                hits,
                misses,
                ..
            } => {
                self.requests += 1;
                self.sectors += u64::from(sectors);
                self.hits += u64::from(hits);
                self.misses += u64::from(misses);
            }
            Outcome::Atomic {
                sectors, misses, ..
            } => {
                self.requests += 1;
                self.sectors += u64::from(sectors);
                self.misses += u64::from(misses);
            }
        }
    }
}

/// A SASS floating-point operation counted per thread (Nsight Compute's
/// `smsp__sass_thread_inst_executed_op_*_pred_on.sum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flop {
    /// f32 add or subtract (FADD).
    Fadd,
    /// f32 multiply (FMUL).
    Fmul,
    /// f32 fused multiply-add (FFMA).
    Ffma,
    /// f64 add or subtract (DADD).
    Dadd,
    /// f64 multiply (DMUL).
    Dmul,
    /// f64 fused multiply-add (DFMA).
    Dfma,
}

impl Flop {
    /// The f32 operations in the order of the straight-line path's kinds
    /// (`exec::fast::FlopKind`: 0 add, 1 multiply, 2 fused multiply-add).
    pub const F32: [Flop; 3] = [Flop::Fadd, Flop::Fmul, Flop::Ffma];
}

impl Counters {
    /// Counts `threads` threads executing `op`.
    #[inline(always)]
    pub fn add_flops(&mut self, op: Flop, threads: u64) {
        *match op {
            Flop::Fadd => &mut self.fadd_threads,
            Flop::Fmul => &mut self.fmul_threads,
            Flop::Ffma => &mut self.ffma_threads,
            Flop::Dadd => &mut self.dadd_threads,
            Flop::Dmul => &mut self.dmul_threads,
            Flop::Dfma => &mut self.dfma_threads,
        } += threads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(outcomes: &[Outcome]) -> (Counters, PcStats) {
        let (mut c, mut ps) = (Counters::default(), PcStats::default());
        for o in outcomes {
            c.tally(o);
            ps.tally(o);
        }
        (c, ps)
    }

    #[test]
    fn a_global_load_counts_its_request_sectors_and_lookups_under_nsight_names() {
        // A warp of 32 lanes reading 4 bytes each, 128 contiguous bytes: 4 sectors, 1 a hit.
        let load = Outcome::Global {
            local: false,
            store: false,
            bytes: 128,
            sectors: 4,
            hits: 1,
            misses: 3,
            lines: 1,
            async_copy: CacheOp::Default,
        };
        let (c, ps) = counted(&[load]);
        let m = |name| c.metric(name).unwrap();
        assert_eq!(m("smsp__sass_inst_executed_op_global_ld.sum"), 1.0);
        assert_eq!(m("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1.0);
        assert_eq!(m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 4.0);
        assert_eq!(
            m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"),
            1.0
        );
        assert_eq!(
            m("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum"),
            3.0
        );
        assert_eq!(c.global_ld_bytes, 128);
        assert_eq!((ps.requests, ps.sectors, ps.hits, ps.misses), (1, 4, 1, 3));
    }

    #[test]
    fn a_store_s_l1_hits_stay_out_of_the_load_lookup_counters() {
        let store = Outcome::Global {
            local: false,
            store: true,
            bytes: 128,
            sectors: 4,
            hits: 4,
            misses: 0,
            lines: 1,
            async_copy: CacheOp::Default,
        };
        let (c, ps) = counted(&[store]);
        assert_eq!(c.global_st_requests, 1);
        assert_eq!(c.global_st_sectors, 4);
        assert_eq!(c.l1_ld_hits + c.l1_ld_misses + c.global_ld_requests, 0);
        assert_eq!(ps.hits, 4);
    }

    #[test]
    fn an_async_copy_is_a_global_load_request_but_no_load_instruction() {
        // The H200's counts for sgemm_cp_async (tests/fixtures/tensor/h200/report.json): 116
        // LDGSTS requests and 640 sectors, the same 116 and 640 in `..._global_op_ld`, all
        // lookups misses, `smsp__sass_inst_executed_op_global_ld.sum` 0.
        let copy = |async_copy, hits| Outcome::Global {
            local: false,
            store: false,
            bytes: 128,
            sectors: 4,
            hits,
            misses: 4 - hits,
            lines: 1,
            async_copy,
        };
        let (c, _) = counted(&[copy(CacheOp::Cg, 0), copy(CacheOp::Ca, 1)]);
        assert_eq!((c.ldgsts_requests, c.ldgsts_sectors), (2, 8));
        assert_eq!((c.global_ld_requests, c.global_ld_sectors), (2, 8));
        assert_eq!((c.l1_ld_hits, c.l1_ld_misses), (1, 7));
        assert_eq!(
            (
                c.ldgsts_bypass_sectors,
                c.ldgsts_access_sectors,
                c.ldgsts_hits
            ),
            (4, 4, 1)
        );
        assert_eq!(c.global_ld_inst, 0);
    }

    #[test]
    fn shared_accesses_count_wavefronts_and_conflicts_by_kind() {
        let ld = |wavefronts| Outcome::Shared {
            op: SharedOp::Load,
            wavefronts,
            conflicts: wavefronts - 1,
        };
        let atom = Outcome::Shared {
            op: SharedOp::Atom,
            wavefronts: 3,
            conflicts: 0,
        };
        let (c, ps) = counted(&[ld(1), ld(32), atom]);
        let m = |name| c.metric(name).unwrap();
        assert_eq!(m("smsp__sass_inst_executed_op_shared_ld.sum"), 2.0);
        assert_eq!(
            m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
            33.0
        );
        assert_eq!(
            m("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
            31.0
        );
        assert_eq!(m("smsp__sass_inst_executed_op_shared_atom.sum"), 1.0);
        assert_eq!(
            m("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"),
            3.0
        );
        assert_eq!((ps.requests, ps.wavefronts, ps.conflicts), (3, 36, 31));
    }

    #[test]
    fn constant_reads_split_between_the_immediate_and_indexed_caches() {
        let ldc = Outcome::Ldc {
            requests: 32,
            hits: 30,
            misses: 2,
            beyond: 2,
        };
        let uniform = Outcome::Uniform { imc: 2, idc: 1 };
        let (c, ps) = counted(&[ldc, uniform, Outcome::ConstOperand]);
        let m = |name| c.metric(name).unwrap();
        assert_eq!(m("idc__requests.sum"), 33.0);
        assert_eq!(m("idc__requests_lookup_hit.sum"), 31.0);
        assert_eq!(m("idc__requests_lookup_miss.sum"), 2.0);
        assert_eq!(m("gcc__cache_requests_type_constant.sum"), 2.0);
        assert_eq!(m("smsp__imc_requests.sum"), 3.0);
        assert_eq!(m("smsp__sass_inst_executed_op_ldc.sum"), 1.0);
        assert_eq!((ps.requests, ps.hits, ps.misses), (32, 30, 2));
    }

    #[test]
    fn atomics_and_reductions_count_apart_and_flops_by_operation() {
        let atom = |returns| Outcome::Atomic {
            returns,
            sectors: 2,
            misses: 2,
            lines: 1,
        };
        let (mut c, _) = counted(&[atom(true), atom(false), atom(false)]);
        assert_eq!((c.global_atom_inst, c.global_atom_sectors), (1, 2));
        assert_eq!((c.global_red_requests, c.global_red_sectors), (2, 4));
        c.add_flops(Flop::Ffma, 32);
        c.add_flops(Flop::Dadd, 5);
        assert_eq!((c.ffma_threads, c.dadd_threads), (32, 5));
        assert_eq!(c.flops(), 69);
    }
}

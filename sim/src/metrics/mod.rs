//! Counters, keyed by the Nsight Compute metrics they predict, and the reports built from them.
//!
//! The executor and memory models fill a [`Counters`] per launch and a [`PcStats`] per PTX
//! instruction; [`Counters::metrics`] turns them into `(metric name, value)` pairs, the contract of
//! `sim run --format json` (DESIGN.md, "Metrics use Nsight Compute's names").

pub mod picture;
pub mod report;

use serde::Serialize;

/// Per-launch event counts. Field docs name the Nsight Compute metric each predicts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// `smsp__inst_executed.sum`: warp instructions executed.
    pub inst_executed: u64,
    /// `smsp__sass_inst_executed_op_global_ld.sum`.
    pub global_ld_inst: u64,
    /// `smsp__sass_inst_executed_op_global_st.sum`.
    pub global_st_inst: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum`: one per warp load instruction.
    pub global_ld_requests: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`.
    pub global_ld_sectors: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_global_op_st.sum`.
    pub global_st_requests: u64,
    /// Bytes the active threads of global loads asked for (for coalescing efficiency: requested
    /// bytes over 32 x sectors; not an Nsight Compute metric).
    pub global_ld_bytes: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum`.
    pub global_st_sectors: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum`.
    pub l1_ld_hits: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum`.
    pub l1_ld_misses: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum`.
    pub local_ld_requests: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum`.
    pub local_ld_sectors: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_local_op_st.sum`.
    pub local_st_requests: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum`.
    pub local_st_sectors: u64,
    /// `smsp__sass_inst_executed_op_shared_ld.sum`.
    pub shared_ld_inst: u64,
    /// `smsp__sass_inst_executed_op_shared_st.sum`.
    pub shared_st_inst: u64,
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`.
    pub shared_ld_wavefronts: u64,
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum`.
    pub shared_st_wavefronts: u64,
    /// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`: wavefronts beyond the ideal.
    pub shared_ld_conflicts: u64,
    /// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum`.
    pub shared_st_conflicts: u64,
    /// `lts__t_sectors_srcunit_tex_op_read.sum`: L2 sectors read by L1 misses.
    pub l2_read_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum`.
    pub l2_read_hits: u64,
    /// `lts__t_sectors_srcunit_tex_op_write.sum`.
    pub l2_write_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum`.
    pub l2_write_hits: u64,
    /// `dram__bytes_read.sum`.
    pub dram_read_bytes: u64,
    /// `dram__bytes_write.sum`.
    pub dram_write_bytes: u64,
    /// Indexed constant loads (LDC) executed (`smsp__sass_inst_executed_op_ldc.sum`).
    pub ldc_inst: u64,
    /// Requests of LDC instructions alone (distinct addresses per warp), without the uniform
    /// parameter and descriptor loads that `idc__requests.sum` also counts.
    pub ldc_requests: u64,
    /// `idc__requests.sum`: LDC requests, one per distinct address per warp, plus uniform loads.
    pub idc_requests: u64,
    /// `idc__requests_lookup_hit.sum`.
    pub idc_hits: u64,
    /// `idc__requests_lookup_miss.sum`.
    pub idc_misses: u64,
    /// `gcc__cache_requests_type_constant.sum`: constant requests reaching the GPC-level cache.
    pub gcc_requests: u64,
    /// `smsp__imc_requests.sum`: warp-uniform constant operands (kernel parameters, constant
    /// variables at a fixed address).
    pub imc_requests: u64,
    /// Constant loads at a fixed address (`ld.const [symbol+offset]`): warp-uniform operands
    /// served by the immediate constant cache, counted in `imc_requests` too.
    pub const_imm_loads: u64,
    /// `smsp__sass_thread_inst_executed_op_fadd_pred_on.sum`: f32 add/sub, per thread.
    pub fadd_threads: u64,
    /// `smsp__sass_thread_inst_executed_op_fmul_pred_on.sum`: f32 multiplies, per thread.
    pub fmul_threads: u64,
    /// `smsp__sass_thread_inst_executed_op_ffma_pred_on.sum`: f32 fused multiply-adds, per thread.
    pub ffma_threads: u64,
    /// `smsp__sass_thread_inst_executed_op_dadd_pred_on.sum`.
    pub dadd_threads: u64,
    /// `smsp__sass_thread_inst_executed_op_dmul_pred_on.sum`.
    pub dmul_threads: u64,
    /// `smsp__sass_thread_inst_executed_op_dfma_pred_on.sum`.
    pub dfma_threads: u64,
    /// `smsp__sass_inst_executed_op_global_atom.sum`: global atomics whose result is used (ATOMG).
    pub global_atom_inst: u64,
    /// `smsp__sass_inst_executed_op_global_red.sum`: global reductions (RED: `red`, and `atom`
    /// whose result is never read).
    pub global_red_inst: u64,
    /// `smsp__sass_inst_executed_op_shared_atom.sum`: shared-memory atomics and reductions (ATOMS).
    pub shared_atom_inst: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum`: one per warp instruction.
    pub global_atom_requests: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum`.
    pub global_atom_sectors: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_global_op_red.sum`.
    pub global_red_requests: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum`.
    pub global_red_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_atom.sum`: L2 sectors of global atomics.
    pub l2_atom_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_red.sum`: L2 sectors of global reductions.
    pub l2_red_sectors: u64,
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum`: shared atomic wavefronts.
    pub shared_atom_wavefronts: u64,
}

impl Counters {
    /// Adds every field of `o`.
    pub fn add(&mut self, o: &Counters) {
        macro_rules! add {
            ($($f:ident)*) => { $( self.$f += o.$f; )* };
        }
        add!(inst_executed global_ld_inst global_st_inst global_ld_requests global_ld_sectors global_st_requests global_ld_bytes
            global_st_sectors l1_ld_hits l1_ld_misses local_ld_requests local_ld_sectors local_st_requests local_st_sectors
            shared_ld_inst shared_st_inst shared_ld_wavefronts shared_st_wavefronts shared_ld_conflicts shared_st_conflicts l2_read_sectors l2_read_hits l2_write_sectors l2_write_hits dram_read_bytes
            dram_write_bytes ldc_inst ldc_requests idc_requests idc_hits idc_misses gcc_requests imc_requests const_imm_loads
            fadd_threads fmul_threads ffma_threads dadd_threads dmul_threads dfma_threads
            global_atom_inst global_red_inst shared_atom_inst global_atom_requests global_atom_sectors
            global_red_requests global_red_sectors l2_atom_sectors l2_red_sectors shared_atom_wavefronts);
    }

    /// Extrapolates a sampled launch: the counts gathered between the snapshots `first` (after
    /// wave 0) and `snap` (before the last wave) stand for `factor` times as many; those before
    /// and after them (the cold first wave, the partial last one) count once.
    pub fn extrapolate(&mut self, first: &Counters, snap: &Counters, factor: f64) {
        macro_rules! ex {
            ($($f:ident)*) => { $( self.$f = first.$f + scale(snap.$f - first.$f, factor) + (self.$f - snap.$f); )* };
        }
        ex!(inst_executed global_ld_inst global_st_inst global_ld_requests global_ld_sectors global_st_requests global_ld_bytes
            global_st_sectors l1_ld_hits l1_ld_misses local_ld_requests local_ld_sectors local_st_requests local_st_sectors
            shared_ld_inst shared_st_inst shared_ld_wavefronts shared_st_wavefronts shared_ld_conflicts shared_st_conflicts l2_read_sectors l2_read_hits l2_write_sectors l2_write_hits dram_read_bytes
            dram_write_bytes ldc_inst ldc_requests idc_requests idc_hits idc_misses gcc_requests imc_requests const_imm_loads
            fadd_threads fmul_threads ffma_threads dadd_threads dmul_threads dfma_threads);
    }

    /// Floating-point operations (a fused multiply-add counts two), the numerator of arithmetic
    /// intensity.
    pub fn flops(&self) -> u64 {
        self.fadd_threads
            + self.fmul_threads
            + 2 * self.ffma_threads
            + self.dadd_threads
            + self.dmul_threads
            + 2 * self.dfma_threads
    }

    /// The counters as (Nsight Compute metric, value), in a stable order.
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let c = self;
        vec![
            ("smsp__inst_executed.sum", c.inst_executed as f64),
            (
                "smsp__sass_inst_executed_op_global_ld.sum",
                c.global_ld_inst as f64,
            ),
            (
                "smsp__sass_inst_executed_op_global_st.sum",
                c.global_st_inst as f64,
            ),
            (
                "smsp__sass_inst_executed_op_shared_ld.sum",
                c.shared_ld_inst as f64,
            ),
            (
                "smsp__sass_inst_executed_op_shared_st.sum",
                c.shared_st_inst as f64,
            ),
            ("smsp__sass_inst_executed_op_ldc.sum", c.ldc_inst as f64),
            (
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                c.shared_ld_wavefronts as f64,
            ),
            (
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                c.shared_st_wavefronts as f64,
            ),
            (
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                c.shared_ld_conflicts as f64,
            ),
            (
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                c.shared_st_conflicts as f64,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                c.global_ld_requests as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                c.global_ld_sectors as f64,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                c.global_st_requests as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                c.global_st_sectors as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
                c.l1_ld_hits as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
                c.l1_ld_misses as f64,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
                c.local_ld_requests as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
                c.local_ld_sectors as f64,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
                c.local_st_requests as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
                c.local_st_sectors as f64,
            ),
            (
                "lts__t_sectors_srcunit_tex_op_read.sum",
                c.l2_read_sectors as f64,
            ),
            (
                "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
                c.l2_read_hits as f64,
            ),
            (
                "lts__t_sectors_srcunit_tex_op_write.sum",
                c.l2_write_sectors as f64,
            ),
            (
                "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
                c.l2_write_hits as f64,
            ),
            ("dram__bytes_read.sum", c.dram_read_bytes as f64),
            ("dram__bytes_write.sum", c.dram_write_bytes as f64),
            ("idc__requests.sum", c.idc_requests as f64),
            ("idc__requests_lookup_hit.sum", c.idc_hits as f64),
            ("idc__requests_lookup_miss.sum", c.idc_misses as f64),
            (
                "gcc__cache_requests_type_constant.sum",
                c.gcc_requests as f64,
            ),
            ("smsp__imc_requests.sum", c.imc_requests as f64),
            (
                "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                c.fadd_threads as f64,
            ),
            (
                "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
                c.fmul_threads as f64,
            ),
            (
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                c.ffma_threads as f64,
            ),
            (
                "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
                c.dadd_threads as f64,
            ),
            (
                "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
                c.dmul_threads as f64,
            ),
            (
                "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
                c.dfma_threads as f64,
            ),
            (
                "smsp__sass_inst_executed_op_global_atom.sum",
                c.global_atom_inst as f64,
            ),
            (
                "smsp__sass_inst_executed_op_global_red.sum",
                c.global_red_inst as f64,
            ),
            (
                "smsp__sass_inst_executed_op_shared_atom.sum",
                c.shared_atom_inst as f64,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                c.global_atom_requests as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
                c.global_atom_sectors as f64,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
                c.global_red_requests as f64,
            ),
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
                c.global_red_sectors as f64,
            ),
            (
                "lts__t_sectors_srcunit_tex_op_atom.sum",
                c.l2_atom_sectors as f64,
            ),
            (
                "lts__t_sectors_srcunit_tex_op_red.sum",
                c.l2_red_sectors as f64,
            ),
            (
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
                c.shared_atom_wavefronts as f64,
            ),
        ]
    }
}

/// Per-PTX-instruction statistics of one launch (index = instruction index of the program).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PcStats {
    /// Warp-level executions.
    pub executed: u64,
    /// Active threads summed over executions.
    pub threads: u64,
    /// Memory requests: global/local requests, or constant requests (distinct addresses).
    pub requests: u64,
    /// Global/local sectors touched.
    pub sectors: u64,
    /// L1 (or nearest constant cache) hits.
    pub hits: u64,
    /// L1 (or nearest constant cache) misses.
    pub misses: u64,
    /// Shared-memory wavefronts.
    pub wavefronts: u64,
    /// Shared-memory bank conflicts (wavefronts beyond the ideal).
    pub conflicts: u64,
    /// The execution with the most wavefronts, kept to draw its banks.
    pub worst: Option<SharedSample>,
}

/// `n` scaled by `factor`, rounded to the nearest count.
pub fn scale(n: u64, factor: f64) -> u64 {
    (n as f64 * factor).round() as u64
}

impl PcStats {
    /// As [`Counters::extrapolate`].
    pub fn extrapolate(&mut self, first: &PcStats, snap: &PcStats, factor: f64) {
        macro_rules! ex {
            ($($f:ident)*) => { $( self.$f = first.$f + scale(snap.$f - first.$f, factor) + (self.$f - snap.$f); )* };
        }
        ex!(executed threads requests sectors hits misses wavefronts conflicts);
    }

    /// Adds `o`'s counts (another SM's) and keeps the sample with more wavefronts (`self`'s
    /// on a tie, so merging SMs in order gives the same result on any number of threads).
    pub fn merge(&mut self, o: PcStats) {
        self.executed += o.executed;
        self.threads += o.threads;
        self.requests += o.requests;
        self.sectors += o.sectors;
        self.hits += o.hits;
        self.misses += o.misses;
        self.wavefronts += o.wavefronts;
        self.conflicts += o.conflicts;
        if let Some(s) = o.worst {
            if self
                .worst
                .as_ref()
                .is_none_or(|w| w.wavefronts < s.wavefronts)
            {
                self.worst = Some(s);
            }
        }
    }
}

/// One warp-level shared access, kept for the bank picture of `--per-instruction`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SharedSample {
    /// Active lanes.
    pub mask: u32,
    /// Shared-memory byte offset per lane (32 entries; inactive lanes 0).
    pub addrs: Vec<u64>,
    /// Bytes per lane.
    pub bytes: u32,
    /// Bank count and width in bytes.
    pub banks: u32,
    /// Bank width in bytes.
    pub width: u32,
    /// Wavefronts it took.
    pub wavefronts: u32,
}

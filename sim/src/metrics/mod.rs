//! Counters, keyed by the Nsight Compute metrics they predict ([`crate::report`] renders them).
//!
//! The executor and memory models fill a [`Counters`] per launch and a [`PcStats`] per PTX
//! instruction; [`Counters::metrics`] turns them into `(metric name, value)` pairs, the contract of
//! `sim run --format json` (DESIGN.md, "Metrics use Nsight Compute's names").

pub mod lines;
pub mod picture;
mod tally;

pub use tally::Flop;

use serde::Serialize;

/// How a counter of the [`Counters`] table combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// An event count: [`Counters::add`] sums it over SMs and parts of a launch, and
    /// [`Counters::extrapolate`] scales the part gathered by the sampled waves.
    Sum,
    /// A high-water mark: `add` keeps the larger value and `extrapolate` leaves it as the
    /// simulated waves reached it (a maximum does not grow with the number of waves).
    Max,
}

/// One row of the [`Counters`] table ([`Counters::TABLE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// The field of [`Counters`].
    pub field: &'static str,
    /// The Nsight Compute metric it predicts, under which `sim run --format json` reports it;
    /// `None` for the simulator's own counters.
    pub metric: Option<&'static str>,
    /// How it combines over SMs and under sampling.
    pub combine: Combine,
}

/// Declares a counter struct from one table, one row per counter:
///
/// ```text
/// /// Docs, with the unit.
/// sum field: u64 => "ncu_metric.sum",   // an event count that ncu reports as ncu_metric.sum
/// sum other: u64,                       // the simulator's own count, not reported as a metric
/// max peak: u64 => "ncu_metric.max",    // a high-water mark
/// ```
///
/// and generates from it the struct (the docs get the metric name and the combine rule
/// appended), `TABLE`, `METRIC_NAMES`, `add`, `extrapolate`, `metrics` and `metric`. Metrics come
/// in the table's order (the order of `sim run`'s table and of [`crate::report::launch_metrics`]).
macro_rules! counter_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])+
                $combine:ident $field:ident: $ty:ty $(=> $metric:literal)?,
            )+
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $(
                $(#[doc = $doc])+
                #[doc = ""]
                $(#[doc = concat!("Nsight Compute: `", $metric, "`. ")])?
                #[doc = counter_table!(@doc $combine)]
                pub $field: $ty,
            )+
        }

        impl $name {
            /// Every counter in table order: its field, its metric and how it combines.
            pub const TABLE: &'static [$crate::metrics::Counter] = &[$(
                $crate::metrics::Counter {
                    field: stringify!($field),
                    metric: counter_table!(@option $($metric)?),
                    combine: counter_table!(@combine $combine),
                },
            )+];

            /// The Nsight Compute metrics of [`Self::metrics`], in its order.
            pub const METRIC_NAMES: &'static [&'static str] = &[$($($metric,)?)+];

            /// Combines `o` (another SM's or another part's counts) into `self`: sums the counts,
            /// keeps the larger of the maxima.
            pub fn add(&mut self, o: &$name) {
                $( counter_table!(@add $combine, self.$field, o.$field); )+
            }

            /// Extrapolates a sampled launch: the counts gathered between the snapshots `first`
            /// (after wave 0) and `snap` (before the last wave) stand for `factor` times as many;
            /// those before and after them (the cold first wave, the partial last one) count
            /// once. Maxima stay as the simulated waves left them.
            pub fn extrapolate(&mut self, first: &$name, snap: &$name, factor: f64) {
                $( counter_table!(@extrapolate $combine, self.$field, first.$field, snap.$field, factor); )+
            }

            /// The counters that predict an Nsight Compute metric, as (metric, value), in
            /// table order.
            pub fn metrics(&self) -> Vec<(&'static str, f64)> {
                vec![$($(($metric, self.$field as f64),)?)+]
            }

            /// [`Self::metrics`] as the exact counts.
            pub fn metric_counts(&self) -> Vec<(&'static str, u64)> {
                vec![$($(($metric, self.$field),)?)+]
            }

            /// The value of one Nsight Compute metric, if a counter predicts it.
            pub fn metric(&self, name: &str) -> Option<f64> {
                match name {
                    $($($metric => Some(self.$field as f64),)?)+
                    _ => None,
                }
            }

            /// Every field in table order, for tests that set them through the table.
            #[cfg(test)]
            fn fields_mut(&mut self) -> Vec<&mut u64> {
                vec![$(&mut self.$field),+]
            }
        }
    };
    (@option) => { None };
    (@option $metric:literal) => { Some($metric) };
    (@combine sum) => { $crate::metrics::Combine::Sum };
    (@combine max) => { $crate::metrics::Combine::Max };
    (@doc sum) => { "Summed over SMs; scaled from the simulated waves when sampled." };
    (@doc max) => { "The maximum over SMs; not scaled when sampled." };
    (@add sum, $s:expr, $o:expr) => { $s += $o };
    (@add max, $s:expr, $o:expr) => { $s = $s.max($o) };
    (@extrapolate sum, $s:expr, $first:expr, $snap:expr, $factor:expr) => {
        $s = $crate::trace::sampled($first, $snap, $s, $factor)
    };
    (@extrapolate max, $s:expr, $first:expr, $snap:expr, $factor:expr) => {};
}

counter_table! {
    /// Per-launch event counts, one table (`counter_table!`): each field's docs give its unit,
    /// the Nsight Compute metric it predicts and how it combines. Counts of instructions and
    /// requests are per warp unless they say per thread; a sector is 32 bytes.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
    pub struct Counters {
        /// Warp instructions executed.
        sum inst_executed: u64 => "smsp__inst_executed.sum",
        /// Global load instructions executed (warp instructions).
        sum global_ld_inst: u64 => "smsp__sass_inst_executed_op_global_ld.sum",
        /// Global store instructions executed (warp instructions).
        sum global_st_inst: u64 => "smsp__sass_inst_executed_op_global_st.sum",
        /// Shared-memory load instructions executed (warp instructions).
        sum shared_ld_inst: u64 => "smsp__sass_inst_executed_op_shared_ld.sum",
        /// Shared-memory store instructions executed (warp instructions).
        sum shared_st_inst: u64 => "smsp__sass_inst_executed_op_shared_st.sum",
        /// Indexed constant loads (LDC) executed (warp instructions).
        sum ldc_inst: u64 => "smsp__sass_inst_executed_op_ldc.sum",
        /// Requests of LDC instructions alone (distinct addresses per warp), without the uniform
        /// parameter and descriptor loads that `idc__requests.sum` also counts.
        sum ldc_requests: u64,
        /// Shared-memory load wavefronts (one per bank pass).
        sum shared_ld_wavefronts: u64 => "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        /// Shared-memory store wavefronts (one per bank pass).
        sum shared_st_wavefronts: u64 => "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        /// Shared-memory load bank conflicts: wavefronts beyond the ideal.
        sum shared_ld_conflicts: u64 => "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        /// Shared-memory store bank conflicts: wavefronts beyond the ideal.
        sum shared_st_conflicts: u64 => "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        /// Global load requests: one per warp load instruction.
        sum global_ld_requests: u64 => "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        /// Sectors (32 bytes) of global loads.
        sum global_ld_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        /// Bytes the active threads of global loads asked for (for coalescing efficiency:
        /// requested bytes over 32 x sectors).
        sum global_ld_bytes: u64,
        /// Global store requests: one per warp store instruction.
        sum global_st_requests: u64 => "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        /// Sectors (32 bytes) of global stores.
        sum global_st_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        /// Sectors (32 bytes) of global loads that hit in L1.
        sum l1_ld_hits: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
        /// Sectors (32 bytes) of global loads that missed in L1.
        sum l1_ld_misses: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
        /// Local load requests: one per warp instruction.
        sum local_ld_requests: u64 => "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
        /// Sectors (32 bytes) of local loads.
        sum local_ld_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
        /// Local store requests: one per warp instruction.
        sum local_st_requests: u64 => "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
        /// Sectors (32 bytes) of local stores.
        sum local_st_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
        /// L2 sectors (32 bytes) read by L1 misses.
        sum l2_read_sectors: u64 => "lts__t_sectors_srcunit_tex_op_read.sum",
        /// L2 read sectors (32 bytes) that hit.
        sum l2_read_hits: u64 => "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
        /// L2 sectors (32 bytes) written by the SMs.
        sum l2_write_sectors: u64 => "lts__t_sectors_srcunit_tex_op_write.sum",
        /// L2 write sectors (32 bytes) that hit.
        sum l2_write_hits: u64 => "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
        /// Bytes read from DRAM.
        sum dram_read_bytes: u64 => "dram__bytes_read.sum",
        /// Bytes written to DRAM.
        sum dram_write_bytes: u64 => "dram__bytes_write.sum",
        /// Requests to the indexed constant cache: LDC requests, one per distinct address per
        /// warp, plus uniform loads.
        sum idc_requests: u64 => "idc__requests.sum",
        /// Indexed constant cache requests that hit.
        sum idc_hits: u64 => "idc__requests_lookup_hit.sum",
        /// Indexed constant cache requests that missed.
        sum idc_misses: u64 => "idc__requests_lookup_miss.sum",
        /// Constant requests reaching the GPC-level cache.
        sum gcc_requests: u64 => "gcc__cache_requests_type_constant.sum",
        /// Requests to the immediate constant cache: warp-uniform constant operands (kernel
        /// parameters, constant variables at a fixed address), one per warp instruction operand.
        sum imc_requests: u64 => "smsp__imc_requests.sum",
        /// Constant loads at a fixed address (`ld.const [symbol+offset]`, warp instructions):
        /// warp-uniform operands served by the immediate constant cache, counted in
        /// `imc_requests` too.
        sum const_imm_loads: u64,
        /// f32 adds and subtracts, per thread.
        sum fadd_threads: u64 => "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
        /// f32 multiplies, per thread.
        sum fmul_threads: u64 => "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
        /// f32 fused multiply-adds, per thread.
        sum ffma_threads: u64 => "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        /// f64 adds and subtracts, per thread.
        sum dadd_threads: u64 => "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
        /// f64 multiplies, per thread.
        sum dmul_threads: u64 => "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
        /// f64 fused multiply-adds, per thread.
        sum dfma_threads: u64 => "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
        /// Global atomics whose result is used (ATOMG; warp instructions).
        sum global_atom_inst: u64 => "smsp__sass_inst_executed_op_global_atom.sum",
        /// Global reductions (RED: `red`, and `atom` whose result is never read; warp
        /// instructions).
        sum global_red_inst: u64 => "smsp__sass_inst_executed_op_global_red.sum",
        /// Shared-memory atomics and reductions (ATOMS; warp instructions).
        sum shared_atom_inst: u64 => "smsp__sass_inst_executed_op_shared_atom.sum",
        /// Global atomic requests: one per warp instruction.
        sum global_atom_requests: u64 => "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        /// Sectors (32 bytes) of global atomics at L1.
        sum global_atom_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        /// Global reduction requests: one per warp instruction.
        sum global_red_requests: u64 => "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
        /// Sectors (32 bytes) of global reductions at L1.
        sum global_red_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
        /// L2 sectors (32 bytes) of global atomics.
        sum l2_atom_sectors: u64 => "lts__t_sectors_srcunit_tex_op_atom.sum",
        /// L2 sectors (32 bytes) of global reductions.
        sum l2_red_sectors: u64 => "lts__t_sectors_srcunit_tex_op_red.sum",
        /// Shared-memory atomic wavefronts (one per bank pass).
        sum shared_atom_wavefronts: u64 => "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
        /// Asynchronous global-to-shared copies (`cp.async`, SASS LDGSTS; warp instructions).
        sum ldgsts_inst: u64 => "smsp__inst_executed_op_ldgsts.sum",
        /// LDGSTS through L1 (`cp.async.ca`; warp instructions).
        sum ldgsts_access_inst: u64 => "sm__sass_inst_executed_op_ldgsts_cache_access.sum",
        /// LDGSTS that bypass L1 (`cp.async.cg`; warp instructions).
        sum ldgsts_bypass_inst: u64 => "sm__sass_inst_executed_op_ldgsts_cache_bypass.sum",
        /// LDGSTS requests at L1: one per warp instruction with a lane that reads global memory.
        sum ldgsts_requests: u64 => "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
        /// Sectors (32 bytes) LDGSTS reads from global memory.
        sum ldgsts_sectors: u64 => "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
        /// LDGSTS sectors through L1 (`.ca`).
        sum ldgsts_access_sectors: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
        /// LDGSTS sectors that bypass L1 (`.cg`).
        sum ldgsts_bypass_sectors: u64 => "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
        /// LDGSTS `.ca` sectors that hit in L1.
        sum ldgsts_hits: u64 => "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access_lookup_hit.sum",
        /// Shared-memory wavefronts of LDGSTS's writes (one per bank pass).
        sum ldgsts_wavefronts: u64 => "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
        /// Shared-memory bank conflicts of LDGSTS's writes.
        sum ldgsts_conflicts: u64 => "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
        /// `ldmatrix` (SASS LDSM; warp instructions).
        sum ldsm_inst: u64 => "smsp__sass_inst_executed_op_ldsm.sum",
        /// Shared-memory wavefronts of LDSM: one per 8x8 matrix without bank conflicts.
        sum ldsm_wavefronts: u64 => "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
        /// Shared-memory bank conflicts of LDSM: wavefronts beyond one per matrix.
        sum ldsm_conflicts: u64 => "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
        /// `stmatrix` (SASS STSM, sm_90; warp instructions).
        sum stsm_inst: u64 => "smsp__sass_inst_executed_op_shared_stsm.sum",
        /// Shared-memory wavefronts of STSM: one per 8x8 matrix without bank conflicts.
        sum stsm_wavefronts: u64 => "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
        /// Shared-memory load wavefronts counted per SASS instruction (as
        /// `shared_ld_wavefronts`). \[measured\] ubench S (`validate/measurements/h200/ubench/
        /// shared_mix.cu`, H100): these equal the instructions' bank rule exactly, while the
        /// hardware counter `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld` adds 0 to 0.4%
        /// (6% in suite37's 2-D stencil) that grow with the grid, with or without global traffic:
        /// wavefronts no instruction's addresses explain, which the simulator does not model.
        sum shared_ld_wavefronts_sass: u64 => "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        /// Shared-memory store wavefronts counted per SASS instruction (as
        /// `shared_st_wavefronts`; the hardware counter adds up to 0.8%: ubench S).
        sum shared_st_wavefronts_sass: u64 => "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        /// `mma.sync` (SASS HMMA, IMMA; warp instructions). The simulator's own count:
        /// ptxas may split one `mma` into several HMMA (m16n8k16 on sm_80+ is one).
        sum mma_inst: u64,
        /// Texture fetches (`tex`, `tld4`: SASS TEX/TLD/TLD4; warp instructions).
        sum tex_inst: u64 => "smsp__inst_executed_op_texture.sum",
        /// Texture requests at L1TEX: one per warp instruction, as for the LSU pipe.
        sum tex_requests: u64 => "l1tex__t_requests_pipe_tex_mem_texture.sum",
        /// Sectors (32 bytes) of the texels texture fetches read.
        sum tex_sectors: u64 => "l1tex__t_sectors_pipe_tex_mem_texture.sum",
        /// Texture sectors that hit L1.
        sum tex_hits: u64 => "l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit.sum",
        /// Texture sectors that missed L1.
        sum tex_misses: u64 => "l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss.sum",
        /// Surface loads (`suld`; warp instructions).
        sum surface_ld_inst: u64 => "smsp__inst_executed_op_surface_ld.sum",
        /// Surface stores (`sust`; warp instructions).
        sum surface_st_inst: u64 => "smsp__inst_executed_op_surface_st.sum",
        /// Surface load requests at L1TEX (one per warp instruction).
        sum surface_ld_requests: u64 => "l1tex__t_requests_pipe_tex_mem_surface_op_ld.sum",
        /// Surface store requests at L1TEX (one per warp instruction).
        sum surface_st_requests: u64 => "l1tex__t_requests_pipe_tex_mem_surface_op_st.sum",
        /// Sectors surface loads read.
        sum surface_ld_sectors: u64 => "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum",
        /// Sectors surface stores write.
        sum surface_st_sectors: u64 => "l1tex__t_sectors_pipe_tex_mem_surface_op_st.sum",
        /// Surface load sectors that hit L1.
        sum surface_ld_hits: u64 => "l1tex__t_sectors_pipe_tex_mem_surface_op_ld_lookup_hit.sum",
    }
}

impl Counters {
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
    /// Warp-cycles per warp state the timing replay attributed to it (serialized as
    /// `{"selected": n, "long_scoreboard_l2": n, ...}`, [`crate::timing::stall`]); sampled
    /// launches extrapolate them with the SM's work.
    pub stalls: crate::timing::stall::Stalls,
}

impl PcStats {
    /// As [`Counters::extrapolate`].
    pub fn extrapolate(&mut self, first: &PcStats, snap: &PcStats, factor: f64) {
        macro_rules! ex {
            ($($f:ident)*) => { $( self.$f = crate::trace::sampled(first.$f, snap.$f, self.$f, factor); )* };
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
        self.stalls.add(&o.stalls);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Counters whose field `i` (table order) is `base + step * i`, set through the table.
    fn distinct(base: u64, step: u64) -> Counters {
        let mut c = Counters::default();
        for (i, f) in c.fields_mut().into_iter().enumerate() {
            *f = base + step * i as u64;
        }
        c
    }

    /// Every field by name, as serde's derive (not the table) lists them.
    fn fields(c: &Counters) -> serde_json::Map<String, Value> {
        match serde_json::to_value(c).unwrap() {
            Value::Object(m) => m,
            v => panic!("{v}"),
        }
    }

    /// Checks every field of `c` (listed by serde, independently of the table) against
    /// `want(i)`, `i` its row in the table.
    fn check(c: &Counters, want: impl Fn(u64) -> u64) {
        let got = fields(c);
        assert_eq!(
            got.len(),
            Counters::TABLE.len(),
            "a field outside the table"
        );
        for (i, row) in Counters::TABLE.iter().enumerate() {
            assert_eq!(got[row.field], want(i as u64), "{}", row.field);
        }
    }

    #[test]
    fn the_table_has_one_row_per_field_and_distinct_metrics() {
        assert_eq!(
            std::mem::size_of::<Counters>(),
            8 * Counters::TABLE.len(),
            "every field is a u64 row of the table"
        );
        let c = distinct(1, 1);
        check(&c, |i| 1 + i);
        let mut names: Vec<&str> = Counters::TABLE.iter().filter_map(|r| r.metric).collect();
        assert_eq!(names, Counters::METRIC_NAMES);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Counters::METRIC_NAMES.len(), "a metric twice");
        let metrics = c.metrics();
        assert_eq!(metrics.len(), Counters::METRIC_NAMES.len());
        for ((name, v), want) in metrics.iter().zip(Counters::METRIC_NAMES) {
            assert_eq!(name, want);
            assert_eq!(c.metric(name), Some(*v), "{name}");
        }
        assert_eq!(c.metric("made__up.sum"), None);
    }

    #[test]
    fn add_combines_every_counter() {
        let mut a = distinct(1, 1);
        a.add(&distinct(1000, 7));
        check(&a, |i| 1 + i + 1000 + 7 * i);
        assert!(Counters::TABLE.iter().all(|r| r.combine == Combine::Sum));
    }

    /// Regression: `extrapolate` once listed its fields by hand and missed the ten atom/red
    /// counters, so sampled launches reported about 1/factor of them.
    #[test]
    fn every_counter_is_extrapolated() {
        // After wave 0: 10 + i; before the last wave: 100 + 3 i; at the end: 1000 + 5 i.
        let first = distinct(10, 1);
        let snap = distinct(100, 3);
        let mut c = distinct(1000, 5);
        c.extrapolate(&first, &snap, 4.0);
        // Wave 0 once, the sampled waves 4 times, the last wave once.
        check(&c, |i| (10 + i) + 4 * (90 + 2 * i) + (900 + 2 * i));
    }

    /// The JSON contract (`sim run --format json`, DESIGN.md): these names, in this order, may
    /// be extended but never renamed.
    #[test]
    fn metric_names_are_the_json_contract() {
        assert_eq!(
            Counters::METRIC_NAMES,
            [
                "smsp__inst_executed.sum",
                "smsp__sass_inst_executed_op_global_ld.sum",
                "smsp__sass_inst_executed_op_global_st.sum",
                "smsp__sass_inst_executed_op_shared_ld.sum",
                "smsp__sass_inst_executed_op_shared_st.sum",
                "smsp__sass_inst_executed_op_ldc.sum",
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
                "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
                "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
                "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
                "lts__t_sectors_srcunit_tex_op_read.sum",
                "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
                "lts__t_sectors_srcunit_tex_op_write.sum",
                "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
                "dram__bytes_read.sum",
                "dram__bytes_write.sum",
                "idc__requests.sum",
                "idc__requests_lookup_hit.sum",
                "idc__requests_lookup_miss.sum",
                "gcc__cache_requests_type_constant.sum",
                "smsp__imc_requests.sum",
                "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
                "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
                "smsp__sass_inst_executed_op_global_atom.sum",
                "smsp__sass_inst_executed_op_global_red.sum",
                "smsp__sass_inst_executed_op_shared_atom.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
                "lts__t_sectors_srcunit_tex_op_atom.sum",
                "lts__t_sectors_srcunit_tex_op_red.sum",
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
                "smsp__inst_executed_op_ldgsts.sum",
                "sm__sass_inst_executed_op_ldgsts_cache_access.sum",
                "sm__sass_inst_executed_op_ldgsts_cache_bypass.sum",
                "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
                "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
                "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access_lookup_hit.sum",
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
                "smsp__sass_inst_executed_op_ldsm.sum",
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
                "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
                "smsp__sass_inst_executed_op_shared_stsm.sum",
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                "smsp__inst_executed_op_texture.sum",
                "l1tex__t_requests_pipe_tex_mem_texture.sum",
                "l1tex__t_sectors_pipe_tex_mem_texture.sum",
                "l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit.sum",
                "l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss.sum",
                "smsp__inst_executed_op_surface_ld.sum",
                "smsp__inst_executed_op_surface_st.sum",
                "l1tex__t_requests_pipe_tex_mem_surface_op_ld.sum",
                "l1tex__t_requests_pipe_tex_mem_surface_op_st.sum",
                "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum",
                "l1tex__t_sectors_pipe_tex_mem_surface_op_st.sum",
                "l1tex__t_sectors_pipe_tex_mem_surface_op_ld_lookup_hit.sum",
            ]
        );
    }

    counter_table! {
        /// A table with both combine rules and a counter without a metric.
        #[derive(Debug, Default, PartialEq)]
        pub struct Toy {
            /// Events.
            sum events: u64 => "toy__events.sum",
            /// The simulator's own count.
            sum own: u64,
            /// A high-water mark.
            max peak: u64 => "toy__peak.max",
        }
    }

    #[test]
    fn maxima_combine_by_max_and_are_not_scaled() {
        let row = |field, metric, combine| Counter {
            field,
            metric,
            combine,
        };
        assert_eq!(
            Toy::TABLE,
            [
                row("events", Some("toy__events.sum"), Combine::Sum),
                row("own", None, Combine::Sum),
                row("peak", Some("toy__peak.max"), Combine::Max),
            ]
        );
        let toy = |events, own, peak| Toy { events, own, peak };
        let mut a = toy(1, 2, 7);
        a.add(&toy(10, 20, 5));
        assert_eq!(a, toy(11, 22, 7));
        a.add(&toy(0, 0, 9));
        assert_eq!(a, toy(11, 22, 9));
        let mut c = toy(30, 30, 9);
        c.extrapolate(&toy(10, 10, 4), &toy(20, 20, 8), 3.0);
        assert_eq!(c, toy(10 + 30 + 10, 10 + 30 + 10, 9));
        assert_eq!(
            c.metrics(),
            [("toy__events.sum", 50.0), ("toy__peak.max", 9.0)]
        );
        assert_eq!(
            c.metric_counts(),
            [("toy__events.sum", 50), ("toy__peak.max", 9)]
        );
        assert_eq!(Toy::METRIC_NAMES, ["toy__events.sum", "toy__peak.max"]);
        assert_eq!(c.metric("toy__peak.max"), Some(9.0));
        assert_eq!(c.fields_mut().len(), 3);
    }
}

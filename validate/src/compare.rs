//! Predicted vs measured: the accuracy summaries of a [`Report`] (DESIGN.md, "Validation
//! methodology": error per workload and metric, mean absolute percentage error, worst case, rank
//! correlation). Pure: it reads a report, so it runs on CI against committed measurements.

use crate::report::{LaunchReport, Report};
use crate::stats::{self, TimeStats};

/// The simulator's time metric (ns), compared with the CUDA-event timings.
pub const TIME_METRIC: &str = "gpu__time_duration.sum";

/// Which event timing a predicted time is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measured {
    /// The median of single launches (each alone between two events).
    Median,
    /// workloads.md's mean of back-to-back launches.
    BackToBack,
}

impl Measured {
    /// The chosen time in µs.
    pub fn of(self, t: &TimeStats) -> f64 {
        match self {
            Measured::Median => t.median,
            Measured::BackToBack => t.mean_back_to_back,
        }
    }
}

/// The predicted time of a launch in µs.
pub fn predicted_us(l: &LaunchReport) -> Option<f64> {
    l.predicted.get(TIME_METRIC).map(|ns| ns / 1000.0)
}

/// Error of the predicted time against the measured one, in percent.
pub fn time_error(l: &LaunchReport, which: Measured) -> Option<f64> {
    stats::error_pct(predicted_us(l)?, which.of(l.time_us.as_ref()?))
}

/// Accuracy over many launches.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    /// Launches with both a prediction and a measurement.
    pub launches: usize,
    /// Mean absolute percentage error.
    pub mape: Option<f64>,
    /// The largest absolute error: (`workload/label`, signed error in percent).
    pub worst: Option<(String, f64)>,
    /// Spearman's rank correlation of predicted and measured values.
    pub spearman: Option<f64>,
}

/// Accuracy of `pairs`: (`workload/label`, predicted, measured).
pub fn accuracy(pairs: &[(String, f64, f64)]) -> Accuracy {
    let values: Vec<(f64, f64)> = pairs.iter().map(|(_, p, m)| (*p, *m)).collect();
    let worst = pairs
        .iter()
        .filter_map(|(n, p, m)| stats::error_pct(*p, *m).map(|e| (n.clone(), e)))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    let (p, m): (Vec<f64>, Vec<f64>) = values.iter().copied().unzip();
    Accuracy {
        launches: pairs.len(),
        mape: stats::mape(&values),
        worst,
        spearman: stats::spearman(&p, &m),
    }
}

/// Every launch of the report with its `workload/label` name.
fn launches(r: &Report) -> impl Iterator<Item = (String, &LaunchReport)> {
    r.workloads.iter().flat_map(|w| {
        w.launches
            .iter()
            .map(move |l| (format!("{}/{}", w.workload, l.label), l))
    })
}

/// Accuracy of the predicted times against the CUDA-event timings.
pub fn time_accuracy(r: &Report, which: Measured) -> Accuracy {
    let pairs: Vec<(String, f64, f64)> = launches(r)
        .filter_map(|(n, l)| Some((n, predicted_us(l)?, which.of(l.time_us.as_ref()?))))
        .collect();
    accuracy(&pairs)
}

/// Accuracy of each metric that Nsight Compute measured, in the order of [`metric_order`].
pub fn metric_accuracy(r: &Report) -> Vec<(String, Accuracy)> {
    let mut names: Vec<&String> = launches(r).flat_map(|(_, l)| l.measured.keys()).collect();
    names.sort_by_key(|n| (metric_order(n), *n));
    names.dedup();
    names
        .into_iter()
        .map(|m| {
            let pairs: Vec<(String, f64, f64)> = launches(r)
                .filter_map(|(n, l)| Some((n, *l.predicted.get(m)?, *l.measured.get(m)?)))
                .collect();
            (m.clone(), accuracy(&pairs))
        })
        .collect()
}

/// How many launches' outputs matched, of how many checked.
pub fn outputs_matching(r: &Report) -> (usize, usize) {
    let all: Vec<bool> = launches(r).map(|(_, l)| l.outputs_match).collect();
    (all.iter().filter(|&&b| b).count(), all.len())
}

/// Short labels for tables (JSON keeps the metric names), in display order: the time, the cycles
/// and every metric of sim's counter table (`sim::metrics::Counters::METRIC_NAMES`; a test checks).
pub const LABELS: &[(&str, &str)] = &[
    ("gpu__time_duration.sum", "time (ns)"),
    ("gpc__cycles_elapsed.max", "cycles"),
    ("smsp__inst_executed.sum", "warp instructions"),
    (
        "smsp__sass_inst_executed_op_global_ld.sum",
        "global load instructions",
    ),
    (
        "smsp__sass_inst_executed_op_global_st.sum",
        "global store instructions",
    ),
    (
        "smsp__sass_inst_executed_op_shared_ld.sum",
        "shared load instructions",
    ),
    (
        "smsp__sass_inst_executed_op_shared_st.sum",
        "shared store instructions",
    ),
    ("smsp__sass_inst_executed_op_ldc.sum", "LDC instructions"),
    ("idc__requests.sum", "IDC requests"),
    ("idc__requests_lookup_hit.sum", "IDC hits"),
    ("idc__requests_lookup_miss.sum", "IDC misses"),
    (
        "gcc__cache_requests_type_constant.sum",
        "GCC constant requests",
    ),
    ("smsp__imc_requests.sum", "IMC requests"),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "shared load wavefronts",
    ),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "shared store wavefronts",
    ),
    (
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "shared load wavefronts (SASS)",
    ),
    (
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "shared store wavefronts (SASS)",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "shared load bank conflicts",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "shared store bank conflicts",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "global load requests",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "global load sectors",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
        "L1 load sector hits",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
        "L1 load sector misses",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "global store requests",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "global store sectors",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
        "local load requests",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
        "local load sectors",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
        "local store requests",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
        "local store sectors",
    ),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "L2 read sectors"),
    (
        "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
        "L2 read hits",
    ),
    (
        "lts__t_sectors_srcunit_tex_op_write.sum",
        "L2 write sectors",
    ),
    (
        "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
        "L2 write hits",
    ),
    ("dram__bytes_read.sum", "DRAM bytes read"),
    ("dram__bytes_write.sum", "DRAM bytes written"),
    (
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
        "FADD thread instructions",
    ),
    (
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
        "FMUL thread instructions",
    ),
    (
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "FFMA thread instructions",
    ),
    (
        "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
        "DADD thread instructions",
    ),
    (
        "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
        "DMUL thread instructions",
    ),
    (
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
        "DFMA thread instructions",
    ),
    (
        "smsp__sass_inst_executed_op_global_atom.sum",
        "global atomic instructions",
    ),
    (
        "smsp__sass_inst_executed_op_global_red.sum",
        "global reduction instructions",
    ),
    (
        "smsp__sass_inst_executed_op_shared_atom.sum",
        "shared atomic instructions",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        "global atomic requests",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        "global atomic sectors",
    ),
    (
        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
        "global reduction requests",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
        "global reduction sectors",
    ),
    (
        "lts__t_sectors_srcunit_tex_op_atom.sum",
        "L2 atomic sectors",
    ),
    (
        "lts__t_sectors_srcunit_tex_op_red.sum",
        "L2 reduction sectors",
    ),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
        "shared atomic wavefronts",
    ),
    ("smsp__inst_executed_op_ldgsts.sum", "LDGSTS instructions"),
    (
        "sm__sass_inst_executed_op_ldgsts_cache_access.sum",
        "LDGSTS .ca instructions",
    ),
    (
        "sm__sass_inst_executed_op_ldgsts_cache_bypass.sum",
        "LDGSTS .cg instructions",
    ),
    (
        "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
        "LDGSTS requests",
    ),
    (
        "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
        "LDGSTS sectors",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
        "LDGSTS .ca sectors",
    ),
    (
        "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
        "LDGSTS .cg sectors",
    ),
    (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access_lookup_hit.sum",
        "LDGSTS .ca L1 hit sectors",
    ),
    (
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
        "LDGSTS shared wavefronts",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
        "LDGSTS shared bank conflicts",
    ),
    ("smsp__sass_inst_executed_op_ldsm.sum", "LDSM instructions"),
    (
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
        "LDSM wavefronts",
    ),
    (
        "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
        "LDSM bank conflicts",
    ),
    (
        "smsp__sass_inst_executed_op_shared_stsm.sum",
        "STSM instructions",
    ),
    (
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
        "STSM wavefronts",
    ),
    ("smsp__inst_executed_op_texture.sum", "texture instructions"),
    (
        "l1tex__t_requests_pipe_tex_mem_texture.sum",
        "texture requests",
    ),
    (
        "l1tex__t_sectors_pipe_tex_mem_texture.sum",
        "texture sectors",
    ),
    (
        "l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit.sum",
        "texture L1 hit sectors",
    ),
    (
        "l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss.sum",
        "texture L1 miss sectors",
    ),
    ("smsp__inst_executed_op_surface_ld.sum", "surface loads"),
    ("smsp__inst_executed_op_surface_st.sum", "surface stores"),
    (
        "l1tex__t_requests_pipe_tex_mem_surface_op_ld.sum",
        "surface load requests",
    ),
    (
        "l1tex__t_requests_pipe_tex_mem_surface_op_st.sum",
        "surface store requests",
    ),
    (
        "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum",
        "surface load sectors",
    ),
    (
        "l1tex__t_sectors_pipe_tex_mem_surface_op_st.sum",
        "surface store sectors",
    ),
    (
        "l1tex__t_sectors_pipe_tex_mem_surface_op_ld_lookup_hit.sum",
        "surface load L1 hit sectors",
    ),
];

/// A metric's short label, or its name when it has none.
pub fn label(metric: &str) -> &str {
    LABELS
        .iter()
        .find(|(m, _)| *m == metric)
        .map_or(metric, |(_, l)| l)
}

/// A metric's place in [`LABELS`]; unknown metrics sort last.
pub fn metric_order(metric: &str) -> usize {
    LABELS
        .iter()
        .position(|(m, _)| *m == metric)
        .unwrap_or(LABELS.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn time_accuracy_against_medians_and_back_to_back_means() {
        let r = sample();
        // constant: 20 µs predicted vs median 23.3 → -14.2%; global: 8 vs 7.15 → +11.9%.
        let a = time_accuracy(&r, Measured::Median);
        assert_eq!(a.launches, 2);
        let want = (100.0 * 3.3 / 23.3 + 100.0 * 0.85 / 7.15) / 2.0;
        assert!((a.mape.unwrap() - want).abs() < 1e-9, "{a:?}");
        let (name, e) = a.worst.unwrap();
        assert_eq!(name, "pseudo_random/constant");
        assert!((e + 100.0 * 3.3 / 23.3).abs() < 1e-9);
        assert_eq!(a.spearman, Some(1.0));
        let b = time_accuracy(&r, Measured::BackToBack);
        assert!(b.mape.unwrap() > a.mape.unwrap());
    }

    #[test]
    fn metric_accuracy_covers_measured_metrics_only() {
        let m = metric_accuracy(&sample());
        let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["gpu__time_duration.sum", "idc__requests.sum"]);
        assert_eq!(m[1].1.mape, Some(0.0));
        assert_eq!(m[0].1.launches, 1);
        assert_eq!(m[0].1.spearman, None);
    }

    #[test]
    fn outputs_and_labels() {
        assert_eq!(outputs_matching(&sample()), (1, 2));
        assert_eq!(label("idc__requests.sum"), "IDC requests");
        assert_eq!(label("made__up.sum"), "made__up.sum");
        for (m, _) in LABELS {
            assert!(m.ends_with(".sum") || m.ends_with(".max"), "{m}");
        }
    }

    /// The labels cover the time, the cycles and every metric of the simulator's counter table
    /// (`sim::metrics::Counters::METRIC_NAMES`), and nothing else: a counter added there needs
    /// its label here.
    #[test]
    fn labels_cover_exactly_the_simulators_counter_metrics() {
        let mut want = vec![TIME_METRIC, "gpc__cycles_elapsed.max"];
        want.extend(sim::metrics::Counters::METRIC_NAMES);
        let mut labelled: Vec<&str> = LABELS.iter().map(|(m, _)| *m).collect();
        want.sort_unstable();
        labelled.sort_unstable();
        assert_eq!(labelled, want);
    }
}

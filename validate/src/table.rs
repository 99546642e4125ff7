//! Tables for people (tabled): per workload, predicted vs measured time and counters; at the end,
//! the accuracy summary; and the device's properties. Pure: it renders a [`Report`].

use crate::compare::{self, Accuracy, Measured};
use crate::report::{DeviceInfo, Report, WorkloadReport};
use crate::stats;
use sim::report::format::{boxed as render, fixed, number, signed_pct as pct};

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn us(v: Option<f64>) -> String {
    fixed(v, 2)
}

/// The tables of one workload: time per launch, then counters when ncu measured any.
pub fn workload(w: &WorkloadReport) -> String {
    let params: Vec<String> = w.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut out = if params.is_empty() {
        format!("== {}\n", w.workload)
    } else {
        format!("== {} ({})\n", w.workload, params.join(", "))
    };
    if let Some(e) = &w.error {
        out += &format!("error: {e}\n");
    }
    for warning in &w.warnings {
        out += &format!("warning: {warning}\n");
    }
    if w.launches.is_empty() {
        return out;
    }
    let mut rows = vec![header(&[
        "launch",
        "predicted µs",
        "median µs",
        "p10-p90 µs",
        "error",
        "back-to-back µs",
        "error",
        "outputs",
    ])];
    for l in &w.launches {
        let t = l.time_us.as_ref();
        rows.push(vec![
            l.label.clone(),
            us(compare::predicted_us(l)),
            us(t.map(|t| t.median)),
            t.map_or("-".into(), |t| format!("{:.2}-{:.2}", t.p10, t.p90)),
            pct(compare::time_error(l, Measured::Median)),
            us(t.map(|t| t.mean_back_to_back)),
            pct(compare::time_error(l, Measured::BackToBack)),
            if l.outputs_match { "match" } else { "DIFFER" }.into(),
        ]);
    }
    out += &render(rows, 1);
    out.push('\n');
    for l in w.launches.iter().filter(|l| !l.mismatches.is_empty()) {
        for m in &l.mismatches {
            out += &format!("outputs of {}: {m}\n", l.label);
        }
    }
    let mut rows = vec![header(&[
        "launch",
        "counter (ncu)",
        "predicted",
        "measured",
        "error",
    ])];
    let mut both_zero = 0;
    for l in &w.launches {
        let mut names: Vec<&String> = l.measured.keys().collect();
        names.sort_by_key(|n| (compare::metric_order(n), *n));
        for m in names {
            let measured = l.measured[m];
            let predicted = l.predicted.get(m).copied();
            if measured == 0.0 && predicted == Some(0.0) {
                both_zero += 1;
                continue;
            }
            rows.push(vec![
                l.label.clone(),
                compare::label(m).to_string(),
                predicted.map_or("-".into(), number),
                number(measured),
                pct(predicted.and_then(|p| stats::error_pct(p, measured))),
            ]);
        }
    }
    if rows.len() > 1 {
        out += &render(rows, 2);
        out.push('\n');
    }
    if both_zero > 0 {
        out +=
            &format!("({both_zero} counters that are 0 both predicted and measured not shown)\n");
    }
    out
}

fn accuracy_line(a: &Accuracy) -> String {
    let worst = a
        .worst
        .as_ref()
        .map_or("-".into(), |(n, e)| format!("{} ({n})", pct(Some(*e))));
    format!(
        "MAPE {}, worst {worst}, Spearman rank correlation {}",
        a.mape.map_or("-".into(), |m| format!("{m:.1}%")),
        a.spearman.map_or("-".into(), |s| format!("{s:.3}")),
    )
}

/// The accuracy summary over every launch of the report.
pub fn summary(r: &Report) -> String {
    let median = compare::time_accuracy(r, Measured::Median);
    let b2b = compare::time_accuracy(r, Measured::BackToBack);
    let (ok, all) = compare::outputs_matching(r);
    let failed = r.workloads.iter().filter(|w| w.error.is_some()).count();
    let mut out = format!(
        "== summary: {} workloads, {} launches on {} (config {})\n",
        r.workloads.len(),
        all,
        r.device.name,
        r.config
    );
    if failed > 0 {
        out += &format!("{failed} workloads failed (see their errors above)\n");
    }
    out += &format!(
        "time vs median of single launches ({} launches): {}\n",
        median.launches,
        accuracy_line(&median)
    );
    out += &format!(
        "time vs back-to-back mean ({} launches): {}\n",
        b2b.launches,
        accuracy_line(&b2b)
    );
    out += &format!("outputs: {ok} of {all} launches match ({})\n", r.tolerance);
    let metrics = compare::metric_accuracy(r);
    if metrics.is_empty() {
        out += "counters: none measured (no ncu)\n";
        return out;
    }
    let mut rows = vec![header(&[
        "counter (ncu)",
        "launches",
        "MAPE",
        "worst",
        "Spearman",
    ])];
    for (m, a) in &metrics {
        rows.push(vec![
            compare::label(m).to_string(),
            a.launches.to_string(),
            a.mape.map_or("-".into(), |m| format!("{m:.1}%")),
            a.worst
                .as_ref()
                .filter(|(_, e)| *e != 0.0)
                .map_or("-".into(), |(n, e)| format!("{} {n}", pct(Some(*e)))),
            a.spearman.map_or("-".into(), |s| format!("{s:.3}")),
        ]);
    }
    out += &render(rows, 1);
    out.push('\n');
    out
}

/// The device's properties, one per row.
pub fn device(d: &DeviceInfo, driver: &str) -> String {
    let opt = |v: Option<u64>| v.map_or("-".into(), |v| number(v as f64));
    let mhz = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0} MHz"));
    let rows = vec![
        header(&["property", "value"]),
        header(&["name", &d.name]),
        header(&["compute capability", &d.compute_capability]),
        header(&["driver (CUDA version)", driver]),
        header(&["SMs", &d.sm_count.to_string()]),
        header(&["SM clock (max)", &mhz(d.sm_clock_mhz)]),
        header(&["memory clock (peak)", &mhz(d.memory_clock_mhz)]),
        header(&["memory bus (bits)", &opt(d.memory_bus_bits.map(u64::from))]),
        header(&["device memory (bytes)", &number(d.memory_bytes as f64)]),
        header(&["L2 (bytes)", &opt(d.l2_bytes)]),
        header(&["shared per SM (bytes)", &opt(d.shared_per_sm_bytes)]),
        header(&["shared per block (bytes)", &opt(d.shared_per_block_bytes)]),
        header(&[
            "shared per block, opt-in (bytes)",
            &opt(d.shared_per_block_optin_bytes),
        ]),
        header(&["constant memory (bytes)", &opt(d.constant_bytes)]),
        header(&["threads per SM", &opt(d.max_threads_per_sm.map(u64::from))]),
        header(&["blocks per SM", &opt(d.max_blocks_per_sm.map(u64::from))]),
        header(&[
            "threads per block",
            &opt(d.max_threads_per_block.map(u64::from)),
        ]),
        header(&["registers per SM", &opt(d.registers_per_sm.map(u64::from))]),
        header(&["warp size", &opt(d.warp_size.map(u64::from))]),
    ];
    render(rows, 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn a_workload_table_shows_times_counters_and_mismatches() {
        let r = sample();
        let t = workload(&r.workloads[0]);
        assert!(t.starts_with("== pseudo_random (n=128000)\n"), "{t}");
        assert!(t.contains("constant"));
        assert!(t.contains("23.30"), "median: {t}");
        assert!(t.contains("-14.2%"), "error vs median: {t}");
        assert!(t.contains("DIFFER"));
        assert!(t.contains("outputs of global: sums: 1 of 128000"));
        assert!(t.contains("IDC requests"));
        assert!(t.contains("1,600,000"));
    }

    #[test]
    fn the_summary_names_the_worst_launch() {
        let s = summary(&sample());
        assert!(s.contains("2 launches on NVIDIA H200"), "{s}");
        assert!(s.contains("worst -14.2% (pseudo_random/constant)"), "{s}");
        assert!(s.contains("outputs: 1 of 2 launches match"), "{s}");
        assert!(s.contains("time (ns)"), "{s}");
    }

    #[test]
    fn the_device_table_lists_properties() {
        let d = device(&sample().device, "13.0");
        assert!(
            d.contains("NVIDIA H200") && d.contains("132") && d.contains("1980 MHz"),
            "{d}"
        );
    }
}

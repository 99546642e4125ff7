//! `sim run --format csv`: one row per launch, Nsight Compute metric names as columns, in the
//! shape of `ncu --csv --page raw --print-units base`, so that a prediction and a measurement
//! load the same way.
//!
//! ```text
//! "ID","Workload","Launch","Kernel Name","Block Size","Grid Size","Device","CC","dram__bytes_read.sum",...
//! "","","","","","","","","byte",...
//! "0","pseudo_random","constant","add_constant_constant_memory","(1024, 1, 1)","(12500, 1, 1)","NVIDIA GeForce RTX 3090","8.6","51200000",...
//! ```
//!
//! As in ncu's raw page the second row holds the units (empty for plain counts) and the metric
//! columns are sorted by name. `ID` counts launches over all workloads from 0. Counts are
//! integers, the time (`gpu__time_duration.sum`, ns) the shortest decimal that reads back as
//! the same double. Quoting is RFC 4180 (the `csv` crate), every field quoted as ncu does.

use super::select::Selection;
use super::{launch_values, metric_names, metric_unit};
use crate::config::GpuConfig;
use crate::run::WorkloadRun;
use std::io::Write;

/// The columns before the metrics.
pub const IDENTITY_COLUMNS: [&str; 8] = [
    "ID",
    "Workload",
    "Launch",
    "Kernel Name",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// `(1024, 1, 1)`, as ncu prints block and grid sizes.
fn dims(d: [u32; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

/// Writes the CSV of `runs` on `cfg` with the metrics `sel` keeps.
pub fn write<W: Write>(
    out: W,
    cfg: &GpuConfig,
    runs: &[WorkloadRun],
    sel: &Selection,
) -> Result<(), ::csv::Error> {
    let mut metrics: Vec<&str> = metric_names()
        .into_iter()
        .filter(|m| sel.keeps(m))
        .collect();
    metrics.sort_unstable();
    let mut w = ::csv::WriterBuilder::new()
        .quote_style(::csv::QuoteStyle::Always)
        .from_writer(out);
    w.write_record(
        IDENTITY_COLUMNS
            .iter()
            .copied()
            .chain(metrics.iter().copied()),
    )?;
    w.write_record(
        IDENTITY_COLUMNS
            .iter()
            .map(|_| "")
            .chain(metrics.iter().map(|m| metric_unit(m))),
    )?;
    let mut id = 0usize;
    for run in runs {
        for l in &run.launches {
            let values = launch_values(l);
            let mut row = vec![
                id.to_string(),
                run.workload.clone(),
                l.label.clone(),
                l.kernel.clone(),
                dims(l.block),
                dims(l.grid),
                cfg.gpu.name.clone(),
                cfg.gpu.compute_capability.clone(),
            ];
            for m in &metrics {
                let v = values.iter().find(|(k, _)| k == m).map(|(_, v)| *v);
                row.push(v.map(|v| v.to_string()).unwrap_or_default());
            }
            w.write_record(&row)?;
            id += 1;
        }
    }
    w.flush()?;
    Ok(())
}

//! `sim run --html FILE`: one self-contained HTML page (inline CSS, script and SVG; nothing
//! fetched) with the launches' summary table, and per launch its bounds, warp states, source
//! view, the bank picture of its worst shared access and, given a `validate` report
//! (`--measured`), its predictions beside the measurements.
//!
//! The page is a minijinja template (`html/report.html`); the summary table is rendered into
//! it, the charts and tables of each launch are drawn by its script from a JSON block, so that
//! the page stays small and a browser test can tell that the script ran.

use super::source::place_name;
use super::stalls::{launch_stalls, top_text};
use crate::config::find::FoundConfig;
use crate::metrics::lines::by_line;
use crate::run::{LaunchResult, WorkloadRun};
use crate::timing::stall::REASONS;
use serde_json::{json, Map, Value};

/// The template.
const TEMPLATE: &str = include_str!("html/report.html");

/// The rows of a launch's source view the page keeps (the JSON report has every line).
const LINES: usize = 200;

/// The launch `label` of workload `workload` in a `validate` report (`validate/measurements/
/// h200/report.json`'s layout: `workloads[].launches[]` with `label`, `predicted`, `measured`,
/// `time_us.median`): the metrics it measured, time in ns as `gpu__time_duration.sum`.
fn measured_launch(report: &Value, workload: &str, label: &str) -> Option<Map<String, Value>> {
    let w = (report["workloads"].as_array()?.iter()).find(|w| w["workload"] == workload)?;
    let l = (w["launches"].as_array()?.iter()).find(|l| l["label"] == label)?;
    let mut m = l["measured"].as_object().cloned().unwrap_or_default();
    if let Some(t) = l["time_us"]["median"].as_f64() {
        m.insert("gpu__time_duration.sum".into(), Value::from(t * 1e3));
    }
    Some(m)
}

/// Checks that `report` has a `validate` report's shape: a `workloads` array.
pub fn check_measured(report: &Value) -> Result<(), String> {
    match report.get("workloads").and_then(Value::as_array) {
        Some(_) => Ok(()),
        None => Err(
            "not a validate report: no `workloads` array (the layout of validate/measurements/h200/report.json)"
                .into(),
        ),
    }
}

fn rate(a: u64, b: u64) -> String {
    super::format::share(a, b, 1)
}

/// What the script draws of launch `l` of `run`.
fn launch_data(run: &WorkloadRun, l: &LaunchResult, measured: Option<&Value>) -> Value {
    let stalls = launch_stalls(l);
    let total_time = stalls.total();
    let mut lines = by_line(&l.per_pc, &l.locs, &l.sass_per_line);
    lines.sort_by_key(|x| std::cmp::Reverse(x.stats.stalls.total()));
    let share = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
    let rows: Vec<Value> = (lines.iter().take(LINES))
        .map(|x| {
            let s = &x.stats;
            json!({
                "place": place_name(x.place, &run.sources, &run.line_files),
                "source": super::source::text_of(x, l, &run.sources),
                "executed": x.warp_insts, "requests": s.requests, "sectors": s.sectors,
                "wavefronts": s.wavefronts, "conflicts": s.conflicts,
                "l1_hit": share(s.hits, s.hits + s.misses),
                "time_share": share(s.stalls.total(), total_time),
                "top": top_text(&s.stalls, 2),
            })
        })
        .collect();
    // The worst shared access of the launch: the most wavefronts.
    let worst = (lines.iter())
        .filter_map(|x| x.stats.worst.as_ref().map(|w| (x, w)))
        .max_by_key(|(_, w)| w.wavefronts);
    let bank = worst.map(|(x, w)| {
        let (phase, cells) = crate::metrics::picture::cells(w);
        json!({
            "place": place_name(x.place, &run.sources, &run.line_files),
            "wavefronts": w.wavefronts, "banks": w.banks, "width": w.width,
            "phase": phase, "cells": cells,
        })
    });
    let c = &l.counters;
    let dram = c.dram_read_bytes + c.dram_write_bytes;
    let roofline = (c.flops() > 0 && dram > 0 && l.timing.cycles > 0.0).then(|| {
        let intensity = c.flops() as f64 / dram as f64;
        let dram_bound = (l.timing.bounds.iter())
            .find(|(n, _)| *n == "dram")
            .map_or(0.0, |b| b.1);
        json!({
            "intensity": intensity,
            "flop_per_cycle": c.flops() as f64 / l.timing.cycles,
            // The DRAM bound's bytes per cycle times the intensity.
            "dram_roof": if dram_bound > 0.0 { intensity * dram as f64 / dram_bound } else { 0.0 },
        })
    });
    let measured = measured
        .and_then(|r| measured_launch(r, &run.workload, &l.label))
        .map(|m| {
            (super::launch_values(l).into_iter())
                .filter_map(|(k, v)| {
                    let got = m.get(k)?.as_f64()?;
                    Some(json!({"metric": k, "predicted": v.as_f64(), "measured": got}))
                })
                .collect::<Vec<_>>()
        });
    json!({
        "bound": l.timing.bound,
        "bounds": l.timing.bounds.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
        "stalls": (REASONS.iter())
            .filter(|(n, _)| *n != "long_scoreboard_l1")
            .map(|(n, _)| json!([n, stalls.reason(n)]))
            .filter(|v| v[1] != 0)
            .collect::<Vec<_>>(),
        "lines": rows,
        "bank": bank,
        "roofline": roofline,
        "measured": measured,
        "not_covered": super::stalls::beyond(l),
    })
}

/// The page of `runs` on `config`; `measured` a `validate` report (checked with
/// [`check_measured`]), `measured_name` how to name it.
///
/// # Errors
/// A template error (a bug: the template is part of the binary), as text.
pub fn page(
    config: &FoundConfig,
    runs: &[WorkloadRun],
    measured: Option<(&Value, &str)>,
) -> Result<String, String> {
    let mut data = Map::new();
    let mut workloads = vec![];
    for run in runs {
        let mut launches = vec![];
        for l in &run.launches {
            let key = format!("{}/{}", run.workload, l.label);
            data.insert(key.clone(), launch_data(run, l, measured.map(|m| m.0)));
            let c = &l.counters;
            launches.push(json!({
                "key": key, "label": l.label, "kernel": l.kernel, "grid": l.grid, "block": l.block,
                "time_us": format!("{:.2}", l.timing.time_ns / 1e3),
                "cycles": format!("{:.0}", l.timing.cycles),
                "warp_insts": c.inst_executed,
                "l1_hit": rate(c.l1_ld_hits, c.l1_ld_hits + c.l1_ld_misses),
                "l2_hit": rate(c.l2_read_hits, c.l2_read_sectors),
                "dram_bytes": c.dram_read_bytes + c.dram_write_bytes,
                "bound": l.timing.bound,
                "top_stalls": top_text(&launch_stalls(l), 3),
                "explain": super::explain(l),
            }));
        }
        workloads.push(json!({
            "workload": run.workload, "description": run.description, "launches": launches,
        }));
    }
    let title = runs
        .iter()
        .map(|r| r.workload.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut env = minijinja::Environment::new();
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| format!("the HTML template: {e}"))?;
    let ctx = json!({
        "title": title,
        "gpu": config.config.gpu.name,
        "config": config.path,
        "version": env!("CARGO_PKG_VERSION"),
        "measured": measured.map(|m| m.1),
        "workloads": workloads,
        "data": {"launches": data},
    });
    env.get_template("report.html")
        .and_then(|t| t.render(minijinja::Value::from(minijinja::value::Serde(&ctx))))
        .map_err(|e| format!("the HTML template: {e}"))
}

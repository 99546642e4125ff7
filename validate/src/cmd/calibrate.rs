//! `validate calibrate`: runs the calibration benchmarks ([`crate::calibrate`]) and writes their
//! results into a copy of the base config; `--plan` lists them without a GPU.

use crate::calibrate::edit::{self, Written};
use crate::calibrate::{self, bench, fit, Calibration, Curve, Raw, SPECS};
use crate::cli::{CalibrateArgs, Format};
use crate::cmd::device::write_config;
use crate::cmd::shown;
use crate::configs;
use crate::gpu::Gpu;
use crate::report::DeviceInfo;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use sim::config::GpuConfig;
use sim::report::format;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Runs `validate calibrate`.
pub fn calibrate(args: &CalibrateArgs) -> Result<ExitCode> {
    for id in &args.only {
        if calibrate::spec(id).is_none() {
            let ids: Vec<&str> = SPECS.iter().map(|s| s.id).collect();
            bail!(
                "--only {id}: no such benchmark; there are {}",
                ids.join(", ")
            );
        }
    }
    if args.plan {
        return plan(args);
    }
    if let Some(out) = &args.out {
        // Before touching the GPU: a file that would not be written is an error at once.
        if out.exists() && !args.force {
            bail!(
                "--out {}: the file exists and is not overwritten (pass --force to replace it)",
                out.display()
            );
        }
    }
    let gpu = Gpu::open(args.device)?;
    let info = gpu.info()?;
    let (base_text, base_label) = match configs::choose(&args.config, &info)? {
        configs::Choice::File(p) => {
            let text = sim::files::read_text(&p, "GPU config")
                .with_context(|| format!("cannot read {}", p.display()))?;
            (text, shown(&p))
        }
        configs::Choice::Bundled(c) => (c.toml.to_string(), format!("{} (bundled)", c.path)),
        configs::Choice::Generated(g) => {
            eprintln!("{}", crate::cmd::compare::generated_line(&info.name, &g));
            (g.skeleton.text.clone(), g.description())
        }
    };
    let base = GpuConfig::from_toml_str(&base_text, &base_label)?;
    eprintln!(
        "calibrate: {} (compute capability {}, {} SMs), base config {base_label}",
        info.name, info.compute_capability, info.sm_count
    );
    let selected = |id: &str| args.only.is_empty() || args.only.iter().any(|o| o == id);
    let started = Instant::now();
    let mut log = |line: &str| eprintln!("calibrate: {line}");
    let raw = bench::run(
        &gpu,
        &info,
        bench::Options {
            selected: &selected,
            log: &mut log,
        },
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let cal = calibrate::analyze(&raw, &base);
    let date = fit::today();
    let stamp = format!("measured: validate calibrate, {}, {date}", info.name);
    let (text, written) = edit::apply(&base_text, &cal.settings, &stamp)?;
    let out_label = args
        .out
        .as_ref()
        .map_or("the calibrated config".to_string(), |p| shown(p));
    let loads = GpuConfig::from_toml_str(&text, &out_label).map(|_| ());

    let run = RunInfo {
        device: &info,
        base: &base_label,
        date: &date,
        seconds,
    };
    match args.format {
        Format::Json => {
            let json = JsonReport {
                device: &info.name,
                compute_capability: &info.compute_capability,
                date: &date,
                base_config: &base_label,
                seconds,
                clock: &cal.clock,
                rows: &cal.rows,
                curves: &cal.curves,
                warnings: &cal.warnings,
                written: &written,
                raw: &raw,
                out: args.out.as_ref().map(|p| p.display().to_string()),
                config_toml: args.out.is_none().then_some(text.as_str()),
                error: loads.as_ref().err().map(|e| e.to_string()),
            };
            outln!("{}", serde_json::to_string_pretty(&json)?)?;
        }
        Format::Table => {
            let report = render(&run, &cal, &written);
            if args.out.is_some() {
                out!("{report}")?;
            } else {
                eprint!("{report}");
            }
        }
    }
    if let Err(e) = loads {
        eprintln!("error: the calibrated config does not load, not written: {e}");
        return Ok(ExitCode::from(1));
    }
    match &args.out {
        Some(path) => {
            write_config(path, &text, args.force)?;
            if args.format == Format::Table {
                outln!(
                    "wrote {}: {} keys measured on {} (the others as in {base_label})",
                    shown(path),
                    written.len(),
                    info.name
                )?;
            }
        }
        None if args.format == Format::Table => {
            std::io::stdout()
                .write_all(text.as_bytes())
                .context("writing the config to stdout")?;
        }
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// What the header of the tables says about the run.
struct RunInfo<'a> {
    device: &'a DeviceInfo,
    base: &'a str,
    date: &'a str,
    seconds: f64,
}

/// `--format json`.
#[derive(Serialize)]
struct JsonReport<'a> {
    device: &'a str,
    compute_capability: &'a str,
    date: &'a str,
    base_config: &'a str,
    seconds: f64,
    clock: &'a calibrate::ClockUsed,
    rows: &'a [calibrate::Row],
    curves: &'a [Curve],
    warnings: &'a [String],
    written: &'a [Written],
    raw: &'a Raw,
    /// The file written, if any.
    out: Option<String>,
    /// The calibrated config, when there is no --out.
    config_toml: Option<&'a str>,
    /// Why the calibrated config does not load, if it does not.
    error: Option<String>,
}

/// A value with sensible decimals.
fn value(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.fract() == 0.0 {
        format::number(v)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The tables of a run: the header, the results, the curves, the warnings.
fn render(run: &RunInfo<'_>, cal: &Calibration, written: &[Written]) -> String {
    let mut out = format!(
        "validate calibrate: {} (compute capability {}), {}, {:.1} s; base config {}\n",
        run.device.name, run.device.compute_capability, run.date, run.seconds, run.base
    );
    let attr = run.device.sm_clock_mhz.map_or(String::new(), |m| {
        format!("; device attribute maximum {m:.0} MHz")
    });
    out += &format!(
        "SM clock used for conversions: {:.1} MHz ({}){attr}\n",
        cal.clock.mhz, cal.clock.source
    );
    let mut rows = vec![vec![
        "benchmark".to_string(),
        "measures".into(),
        "config key".into(),
        "was -> written".into(),
        "value".into(),
        "unit".into(),
    ]];
    for r in &cal.rows {
        let change = r
            .key
            .as_ref()
            .and_then(|k| written.iter().find(|w| &w.key == k))
            .map_or(String::new(), |w| format!("{} -> {}", w.old, w.new));
        rows.push(vec![
            r.bench.to_string(),
            r.quantity.clone(),
            r.key.clone().unwrap_or_else(|| "-".into()),
            change,
            value(r.value),
            r.unit.clone(),
        ]);
    }
    out += &format::boxed(rows, 3);
    out.push('\n');
    for c in &cal.curves {
        out += &curve(c);
    }
    for w in &cal.warnings {
        out += &format!("warning: {w}\n");
    }
    out
}

/// A curve in a few lines: `x y` pairs (and the model's value in brackets).
fn curve(c: &Curve) -> String {
    let mut out = format!("{}: {} by {}:\n", c.bench, c.y, c.x);
    let items: Vec<String> = c
        .points
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            let x = if c.x.contains("bytes") && x >= 1024.0 {
                format!("{}K", x / 1024.0)
            } else {
                value(x)
            };
            match c.model.as_ref().and_then(|m| m.get(i)) {
                Some(m) => format!("{x}: {} ({} wf)", value(y), value(*m)),
                None => format!("{x}: {}", value(y)),
            }
        })
        .collect();
    let mut line = String::from(" ");
    for item in items {
        if line.len() + item.len() + 3 > 100 {
            out += &line;
            out.push('\n');
            line = String::from(" ");
        }
        line += "  ";
        line += &item;
    }
    out += &line;
    out.push('\n');
    out
}

/// `--plan`: the benchmarks; with `--config PATH`, each key's current value.
fn plan(args: &CalibrateArgs) -> Result<ExitCode> {
    let current = match args.config.as_str() {
        "auto" => None,
        choice => match configs::explicit(choice)? {
            configs::Choice::Bundled(c) => Some(c.toml.to_string()),
            _ => {
                let path = Path::new(&args.config);
                let text = sim::files::read_text(path, "GPU config")
                    .with_context(|| format!("--config {}: cannot read it", args.config))?;
                Some(text)
            }
        },
    };
    let selected =
        |id: &str| args.only.is_empty() || id == "clock" || args.only.iter().any(|o| o == id);
    let specs: Vec<&calibrate::Spec> = SPECS.iter().filter(|s| selected(s.id)).collect();
    let value_of = |key: &str| {
        current
            .as_deref()
            .and_then(|t| edit::get(t, key))
            .unwrap_or_else(|| "-".into())
    };
    let total: f64 = (specs.iter().map(|s| s.seconds).sum::<f64>() * 10.0).round() / 10.0;
    if args.format == Format::Json {
        #[derive(Serialize)]
        struct PlanJson<'a> {
            benchmarks: Vec<&'a calibrate::Spec>,
            seconds: f64,
            config: Option<&'a str>,
            current: Vec<(String, String)>,
        }
        let keys: Vec<(String, String)> = specs
            .iter()
            .flat_map(|s| s.keys.iter())
            .map(|k| (k.to_string(), value_of(k)))
            .collect();
        let json = PlanJson {
            benchmarks: specs.clone(),
            seconds: total,
            config: current.as_ref().map(|_| args.config.as_str()),
            current: if current.is_some() { keys } else { vec![] },
        };
        outln!("{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![vec![
        "benchmark".to_string(),
        "measures".into(),
        "unit".into(),
        "config key".into(),
        "now".into(),
        "~s".into(),
    ]];
    for s in &specs {
        let keys: Vec<&str> = if s.keys.is_empty() {
            vec!["(a check: sets nothing)"]
        } else {
            s.keys.to_vec()
        };
        for (i, k) in keys.iter().enumerate() {
            let first = i == 0;
            rows.push(vec![
                if first { s.id.into() } else { String::new() },
                if first {
                    s.measures.into()
                } else {
                    String::new()
                },
                if first { s.unit.into() } else { String::new() },
                k.to_string(),
                if s.keys.is_empty() {
                    String::new()
                } else {
                    value_of(k)
                },
                if first {
                    format!("{:.1}", s.seconds)
                } else {
                    String::new()
                },
            ]);
        }
    }
    outln!(
        "validate calibrate runs {} benchmarks, about {total:.1} s on an H200 plus a second or two \
to load the kernels{}:",
        specs.len(),
        if current.is_some() {
            format!("; `now`: the values in {}", args.config)
        } else {
            String::new()
        }
    )?;
    outln!("{}", format::boxed(rows, 5))?;
    outln!("How:")?;
    for s in &specs {
        outln!("  {}: {}", s.id, s.method)?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_get_sensible_decimals() {
        assert_eq!(value(2048.0), "2,048");
        assert_eq!(value(1979.64), "1979.6");
        assert_eq!(value(33.567), "33.57");
        assert_eq!(value(0.5123), "0.512");
        assert_eq!(value(f64::NAN), "-");
    }

    #[test]
    fn curves_wrap_and_show_the_model() {
        let c = Curve {
            bench: "bank-conflicts",
            x: "stride (4-byte words)",
            y: "cycles",
            points: (1..=32)
                .map(|s| (f64::from(s), f64::from(s) + 0.5))
                .collect(),
            model: Some((1..=32).map(f64::from).collect()),
        };
        let text = curve(&c);
        assert!(text.starts_with("bank-conflicts: cycles by stride (4-byte words):\n"));
        assert!(text.contains("  2: 2.50 (2 wf)"), "{text}");
        assert!(text.lines().all(|l| l.len() <= 100), "{text}");
        let c = Curve {
            bench: "latency-constant",
            x: "working set (bytes)",
            y: "cycles",
            points: vec![(512.0, 17.0), (2048.0, 17.25)],
            model: None,
        };
        assert_eq!(
            curve(&c),
            "latency-constant: cycles by working set (bytes):\n   512: 17  2K: 17.25\n"
        );
    }
}

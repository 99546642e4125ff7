//! Reports of a workload run: a table for people (tabled); JSON and CSV for programs
//! ([`doc`], [`csv`]), with the metrics a `--metrics` selection ([`select`]) keeps.
//!
//! The JSON layout is a contract (docs/report-format.md, whose example tests/tools.rs checks
//! against the real output; [`doc`] says its shape): fields may be added, never renamed. Metrics
//! are keyed by the Nsight Compute metric names they predict.

pub mod csv;
pub mod doc;
pub mod fit;
pub mod format;
pub mod html;
pub mod select;
pub mod source;
pub mod stalls;

pub use source::per_line;

use fit::render;

use crate::config::GpuConfig;
use crate::metrics::PcStats;
use crate::run::{LaunchResult, WorkloadRun};

/// The value of one metric: a count (events, bytes, cycles, registers, blocks), or a real number
/// (the time in nanoseconds). JSON and CSV write counts as integers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricValue {
    /// A whole number.
    Count(u64),
    /// A real number.
    Real(f64),
}

impl MetricValue {
    /// The value as a float (what `validate` compares).
    pub fn as_f64(self) -> f64 {
        match self {
            MetricValue::Count(n) => n as f64,
            MetricValue::Real(x) => x,
        }
    }

    /// The value as JSON: an integer for a count.
    pub fn to_json(self) -> serde_json::Value {
        match self {
            MetricValue::Count(n) => serde_json::Value::from(n),
            MetricValue::Real(x) => serde_json::Value::from(x),
        }
    }
}

impl std::fmt::Display for MetricValue {
    /// `524288` for a count, the shortest text that reads back as the same float otherwise.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricValue::Count(n) => write!(f, "{n}"),
            MetricValue::Real(x) => write!(f, "{x}"),
        }
    }
}

/// The unit of a metric in Nsight Compute's base units (`ncu --print-units base`): `nsecond`,
/// `cycle`, `byte`, `sector`, `request`, `inst`, `register/thread`, `block`, or `""` for a plain
/// count (wavefronts, bank conflicts).
pub fn metric_unit(name: &str) -> &'static str {
    if name == "gpu__time_duration.sum" {
        "nsecond"
    } else if name.starts_with("gpc__cycles") {
        "cycle"
    } else if name.contains("__bytes") {
        "byte"
    } else if name == "launch__registers_per_thread" {
        "register/thread"
    } else if name.starts_with("launch__occupancy_limit") {
        "block"
    } else if name.contains("_sectors") {
        "sector"
    } else if name.contains("requests") {
        "request"
    } else if name.contains("inst_executed") {
        "inst"
    } else {
        ""
    }
}

/// All metrics of a launch, counters plus time plus the launch's registers and occupancy
/// limits: (Nsight Compute name, value), in the order of the counter table.
pub fn launch_values(l: &LaunchResult) -> Vec<(&'static str, MetricValue)> {
    let mut m = vec![
        (
            "gpu__time_duration.sum",
            MetricValue::Real(l.timing.time_ns),
        ),
        (
            "gpc__cycles_elapsed.max",
            // Saturating: cycles are finite and non-negative.
            MetricValue::Count(l.timing.cycles.round() as u64),
        ),
    ];
    m.extend(
        l.counters
            .metric_counts()
            .into_iter()
            .map(|(k, v)| (k, MetricValue::Count(v))),
    );
    m.extend(
        launch_occupancy_metrics(l)
            .into_iter()
            .map(|(k, v)| (k, MetricValue::Count(v as u64))),
    );
    m
}

/// [`launch_values`] as floats: what `validate` compares with Nsight Compute's measurements.
pub fn launch_metrics(l: &LaunchResult) -> Vec<(&'static str, f64)> {
    launch_values(l)
        .into_iter()
        .map(|(k, v)| (k, v.as_f64()))
        .collect()
}

/// The names of [`launch_values`], in its order, without running anything.
pub fn metric_names() -> Vec<&'static str> {
    let mut v = vec!["gpu__time_duration.sum", "gpc__cycles_elapsed.max"];
    v.extend(crate::metrics::Counters::METRIC_NAMES);
    v.extend(OCCUPANCY_METRICS);
    v
}

/// The names of [`launch_occupancy_metrics`], in its order.
pub const OCCUPANCY_METRICS: [&str; 5] = [
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
];

/// Registers per thread and the blocks per SM each occupancy limit allows, under Nsight
/// Compute's `launch__` names. A resource the launch does not use (no shared memory, no
/// registers) reports the SM's block slots, the most it could allow.
pub fn launch_occupancy_metrics(l: &LaunchResult) -> [(&'static str, f64); 5] {
    let o = &l.occupancy;
    let limit = |n: u32| match n {
        crate::exec::occupancy::NO_LIMIT => f64::from(o.limit_blocks),
        n => f64::from(n),
    };
    let values = [
        f64::from(l.allocated_registers),
        limit(o.limit_registers),
        limit(o.limit_shared_mem),
        f64::from(o.limit_warps),
        f64::from(o.limit_blocks),
    ];
    let mut out = [("", 0.0); 5];
    for (i, v) in values.into_iter().enumerate() {
        out[i] = (OCCUPANCY_METRICS[i], v);
    }
    out
}

fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1}", a as f64 / b as f64)
    }
}

/// `a` as a whole percentage of `total`.
fn pct(a: u64, total: u64) -> String {
    format::share(a, total, 0)
}

/// Human-readable byte count (decimal units).
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

/// Arithmetic intensity against DRAM: floating-point operations per DRAM byte (`-` without float
/// work). The table's `FLOP/load B` is the textbook's intensity against the bytes global loads ask
/// for (PMPP ch. 7: 0.25 OP/B for conv2d with the filter in global memory, 0.5 in constant memory).
fn intensity(c: &crate::metrics::Counters) -> String {
    let dram = c.dram_read_bytes + c.dram_write_bytes;
    if c.flops() == 0 {
        "-".into()
    } else if dram == 0 {
        "inf".into()
    } else {
        format!("{:.2}", c.flops() as f64 / dram as f64)
    }
}

/// One line saying why the launch costs what it costs.
pub fn explain(l: &LaunchResult) -> String {
    let c = &l.counters;
    let mut parts = vec![];
    if c.ldc_inst > 0 {
        let per = c.ldc_requests as f64 / c.ldc_inst as f64;
        parts.push(if per <= 1.0 {
            "constant loads are broadcasts (1 address per warp)".to_string()
        } else {
            format!("constant loads serialize: {per:.1} distinct addresses per warp, each a separate request")
        });
    }
    if c.const_imm_loads > 0 {
        parts.push(format!(
            "{} constant loads at fixed addresses are instruction operands: one broadcast each, no address computation",
            c.const_imm_loads
        ));
    }
    if c.global_ld_requests > 0 {
        let per = c.global_ld_sectors as f64 / c.global_ld_requests as f64;
        // Coalescing efficiency: the bytes threads asked for over the bytes the sectors moved.
        let used = c.global_ld_bytes as f64 / (32.0 * c.global_ld_sectors.max(1) as f64);
        parts.push(format!(
            "global loads take {per:.1} sectors per request, {:.0}% of the fetched bytes used{}",
            100.0 * used.min(1.0),
            if used >= 0.8 {
                " (coalesced)"
            } else if used < 0.3 {
                " (scattered)"
            } else {
                ""
            }
        ));
    }
    let shared = c.shared_ld_inst + c.shared_st_inst;
    if shared > 0 {
        let wf = (c.shared_ld_wavefronts + c.shared_st_wavefronts) as f64 / shared as f64;
        parts.push(if c.shared_ld_conflicts + c.shared_st_conflicts == 0 {
            format!("shared accesses are conflict-free ({wf:.1} wavefronts per instruction)")
        } else {
            format!("shared accesses take {wf:.1} wavefronts per instruction: bank conflicts serialize them")
        });
    }
    if c.shared_atom_inst > 0 {
        let wf = c.shared_atom_wavefronts as f64 / c.shared_atom_inst as f64;
        parts.push(format!(
            "shared atomics take {wf:.1} wavefronts per instruction (lanes updating words of one bank serialize)"
        ));
    }
    let atomics = c.global_atom_requests + c.global_red_requests;
    if atomics > 0 {
        let sectors = c.global_atom_sectors + c.global_red_sectors;
        parts.push(format!(
            "{atomics} global atomic requests ({} returning a value), {:.1} sectors each, performed in L2",
            c.global_atom_requests,
            sectors as f64 / atomics as f64
        ));
    }
    if c.tex_requests > 0 {
        parts.push(format!(
            "texture fetches take {:.1} sectors per request through L1TEX's texture pipe, {} of them L1 hits",
            c.tex_sectors as f64 / c.tex_requests as f64,
            pct(c.tex_hits, c.tex_sectors)
        ));
    }
    let surface = c.surface_ld_requests + c.surface_st_requests;
    if surface > 0 {
        parts.push(format!(
            "{surface} surface requests ({} loads), {:.1} sectors each",
            c.surface_ld_requests,
            (c.surface_ld_sectors + c.surface_st_sectors) as f64 / surface as f64
        ));
    }
    parts.push(format!(
        "{} block{} per SM, limited by {} ({} registers per thread, {})",
        l.occupancy.blocks,
        if l.occupancy.blocks == 1 { "" } else { "s" },
        l.occupancy
            .limiters()
            .iter()
            .map(|n| match *n {
                "warps" => "threads",
                "shared_mem" => "shared memory",
                "blocks" => "block slots",
                other => other,
            })
            .collect::<Vec<_>>()
            .join(" and "),
        l.registers,
        l.registers_source.describe()
    ));
    if let Some(b) = l.instructions_source {
        parts.push(format!(
            "{} warp instructions counted on the {b}",
            c.inst_executed
        ));
    }
    let bound = match l.timing.bound {
        "latency" => "memory latency (too few warps to hide it)",
        "issue" => "instruction issue",
        "lsu" => "the load/store unit",
        "l1" => "the L1 data pipe (one wavefront per cycle; scattered words conflict in its banks)",
        "constant" => "the constant cache (requests serialized per distinct address)",
        "shared" => "shared-memory bandwidth (one wavefront per cycle)",
        "l2" => "L2 bandwidth or its atomic unit",
        "dram" => "DRAM bandwidth",
        "host" => "the host's launch rate (back-to-back launches of a short kernel)",
        other => other,
    };
    parts.push(format!("bound by {bound}"));
    format!("{}: {}", l.label, parts.join("; "))
}

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// `s` with every control character but newlines and tabs written as its Rust escape
/// (`\u{1b}`): names and descriptions from a workload file reach the terminal as text, never
/// as terminal escape sequences.
pub fn printable(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The table of one workload run, with the constant/global ratio and the explanations; names
/// and descriptions from the workload file made [`printable`]. `width`: the terminal columns
/// to fit the table to ([`fit::width`]; `None`: its natural width).
pub fn table(cfg: &GpuConfig, run: &WorkloadRun, width: Option<usize>) -> String {
    printable(&table_text(cfg, run, width))
}

fn table_text(cfg: &GpuConfig, run: &WorkloadRun, width: Option<usize>) -> String {
    let mut rows = vec![header(&[
        "launch",
        "time",
        "cycles",
        "warp insts",
        "const req/LDC",
        "global req",
        "ld sectors/req",
        "L1 hit",
        "L2 hit",
        "DRAM",
        "shared wf/inst",
        "bank conflicts",
        "global atomics",
        "smem atom wf/inst",
        "tex sectors/req",
        "tex L1 hit",
        "FLOP/load B",
        "FLOP/DRAM B",
    ])];
    for l in &run.launches {
        let c = &l.counters;
        let shared_inst = c.shared_ld_inst + c.shared_st_inst;
        rows.push(vec![
            l.label.clone(),
            format!("{:.1} us", l.timing.time_ns / 1e3),
            format!("{:.0}", l.timing.cycles),
            c.inst_executed.to_string(),
            ratio(c.ldc_requests, c.ldc_inst),
            (c.global_ld_requests + c.global_st_requests).to_string(),
            ratio(c.global_ld_sectors, c.global_ld_requests),
            pct(c.l1_ld_hits, c.l1_ld_hits + c.l1_ld_misses),
            pct(c.l2_read_hits, c.l2_read_sectors),
            bytes(c.dram_read_bytes + c.dram_write_bytes),
            ratio(c.shared_ld_wavefronts + c.shared_st_wavefronts, shared_inst),
            if shared_inst == 0 {
                "-".into()
            } else {
                (c.shared_ld_conflicts + c.shared_st_conflicts).to_string()
            },
            match c.global_atom_requests + c.global_red_requests {
                0 => "-".into(),
                n => n.to_string(),
            },
            ratio(c.shared_atom_wavefronts, c.shared_atom_inst),
            // Texture fetches and surface accesses, through L1TEX's texture pipe.
            ratio(
                c.tex_sectors + c.surface_ld_sectors + c.surface_st_sectors,
                c.tex_requests + c.surface_ld_requests + c.surface_st_requests,
            ),
            pct(
                c.tex_hits + c.surface_ld_hits,
                c.tex_sectors + c.surface_ld_sectors,
            ),
            if c.flops() == 0 || c.global_ld_bytes == 0 {
                "-".into()
            } else {
                format!("{:.2}", c.flops() as f64 / c.global_ld_bytes as f64)
            },
            intensity(c),
        ]);
    }
    let params: Vec<String> = run.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let title = format!(
        "{} on {} ({}){}",
        run.workload,
        cfg.gpu.name,
        cfg.path,
        if params.is_empty() {
            String::new()
        } else {
            format!(", {}", params.join(" "))
        }
    );
    let mut out = fit::wrap_line(&title, width, 4) + "\n";
    if !run.description.is_empty() {
        out.push_str(&fit::wrap_line(&run.description, width, 4));
        out.push('\n');
    }
    if let Some(c) = &run.compiled {
        let compiled = format!(
            "PTX compiled from {} by {} for {}",
            c.source, c.compiler, c.arch
        );
        out.push_str(&fit::wrap_line(&compiled, width, 4));
        out.push('\n');
    }
    out.push_str(&render(rows, 1, width));
    out.push('\n');
    let find = |label: &str| run.launches.iter().find(|l| l.label == label);
    if let (Some(c), Some(g)) = (find("constant"), find("global")) {
        out.push_str(&format!(
            "constant / global time: {:.2}x\n",
            c.timing.time_ns / g.timing.time_ns
        ));
    }
    let mut line = |text: String| {
        out.push_str(&fit::wrap_line(&text, width, 4));
        out.push('\n');
    };
    for l in &run.launches {
        line(format!("  {}", explain(l)));
        line(format!("  {}", stalls::summary(l)));
        for n in &l.notes {
            line(format!("  {}: note: {n}", l.label));
        }
    }
    out
}

/// The metrics `sel` keeps of one workload run: a row per metric (name, unit), a column per
/// launch; what the table format prints with `--metrics`, within `width` columns as [`table`].
pub fn metric_table(
    cfg: &GpuConfig,
    run: &WorkloadRun,
    sel: &select::Selection,
    width: Option<usize>,
) -> String {
    let mut head = vec!["metric".to_string(), "unit".to_string()];
    head.extend(run.launches.iter().map(|l| l.label.clone()));
    let values: Vec<Vec<(&str, MetricValue)>> = run.launches.iter().map(launch_values).collect();
    let mut rows = vec![head];
    for m in metric_names().into_iter().filter(|m| sel.keeps(m)) {
        let mut row = vec![m.to_string(), metric_unit(m).to_string()];
        for v in &values {
            let x = v.iter().find(|(k, _)| *k == m).map(|(_, x)| *x);
            row.push(x.map_or("-".to_string(), |x| match x {
                MetricValue::Count(n) => n.to_string(),
                MetricValue::Real(x) => format!("{x:.1}"),
            }));
        }
        rows.push(row);
    }
    printable(&format!(
        "{} on {} ({})\n{}",
        run.workload,
        cfg.gpu.name,
        cfg.path,
        fit::render(rows, 2, width)
    ))
}

/// What a report shows besides the summary: `--per-instruction`, `--per-line`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail {
    /// Per PTX instruction (`per_instruction` in the JSON).
    pub per_instruction: bool,
    /// Per CUDA source line (`per_source_line` and `source_files` in the JSON).
    pub per_line: bool,
}

/// Per-instruction tables of every launch: memory instructions only, the most costly over the
/// launch first (sectors, wavefronts or requests summed over its executions:
/// [`crate::metrics::lines::cost`]) so the line to fix is on top, then the bank picture of the
/// worst shared accesses with conflicts.
pub fn per_instruction(run: &WorkloadRun, width: Option<usize>) -> String {
    printable(&per_instruction_text(run, width))
}

fn per_instruction_text(run: &WorkloadRun, width: Option<usize>) -> String {
    let mut out = String::new();
    for l in &run.launches {
        let executed = l.per_pc.iter().filter(|(_, _, s)| s.executed > 0).count();
        let loc_of = |line: u32| {
            l.per_pc
                .iter()
                .position(|(pl, _, _)| *pl == line)
                .and_then(|i| l.locs.get(i).copied().flatten())
                .filter(|loc| loc.line > 0)
                .map_or("-".to_string(), |loc| {
                    source::place_name(
                        crate::metrics::lines::Place::Source {
                            file: loc.file,
                            line: loc.line,
                        },
                        &run.sources,
                        &run.line_files,
                    )
                })
        };
        let mut rows: Vec<&(u32, String, PcStats)> =
            l.per_pc.iter().filter(|(_, _, s)| s.requests > 0).collect();
        let hidden = executed - rows.len();
        let warp_cycles = stalls::launch_stalls(l).total();
        let cost = crate::metrics::lines::cost;
        rows.sort_by(|a, b| {
            cost(&b.2)
                .cmp(&cost(&a.2))
                .then(b.2.executed.cmp(&a.2.executed))
                .then(a.0.cmp(&b.0))
        });
        let mut t = vec![header(&[
            "PTX line",
            "source line",
            "instruction",
            "warp execs",
            "threads/exec",
            "requests/exec",
            "sectors/req",
            "wavefronts/req",
            "conflicts/req",
            "hit rate",
            "cost",
            "time %",
            "top stall",
        ])];
        for (line, text, s) in &rows {
            let shared = s.wavefronts > 0;
            t.push(vec![
                line.to_string(),
                loc_of(*line),
                text.clone(),
                s.executed.to_string(),
                ratio(s.threads, s.executed),
                if shared {
                    "-".into()
                } else {
                    ratio(s.requests, s.executed)
                },
                if s.sectors == 0 {
                    "-".into()
                } else {
                    ratio(s.sectors, s.requests)
                },
                if shared {
                    ratio(s.wavefronts, s.requests)
                } else {
                    "-".into()
                },
                if shared {
                    ratio(s.conflicts, s.requests)
                } else {
                    "-".into()
                },
                pct(s.hits, s.hits + s.misses),
                crate::metrics::lines::cost(s).to_string(),
                pct(s.stalls.total(), warp_cycles),
                stalls::top_text(&s.stalls, 1),
            ]);
        }
        let caption = format!(
            "{} ({}): memory instructions, most costly first ({hidden} other executed \
             instructions not shown)",
            l.label, l.kernel,
        );
        out.push_str(&fit::wrap_line(&caption, width, 4));
        out.push_str(&format!("\n{}\n", render(t, 3, width)));
        for (line, text, s) in rows.iter().filter(|(_, _, s)| s.conflicts > 0).take(3) {
            if let Some(w) = &s.worst {
                out.push_str(&format!(
                    "line {line} `{text}`: banks of its worst execution ({} wavefronts)\n",
                    w.wavefronts
                ));
                out.push_str(&crate::metrics::picture::banks(w));
            }
        }
    }
    out
}

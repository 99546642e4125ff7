//! The per-source-line view of `sim run --per-line`: each launch's counts summed per CUDA source
//! line ([`crate::metrics::lines`]), the most costly line first, with the line's source text
//! when the file was found ([`crate::run::sources`]); a table for people and the JSON
//! `per_source_line` list.
//!
//! Each line's share of the time (`time %`) is its share of the warp-cycles the timing replay
//! attributed to the launch's instructions ([`crate::timing::stall`]), with its top stall
//! reasons; beside it its share of the executed warp instructions (`inst %`) and of the memory
//! cost (`cost %`, [`crate::metrics::lines::cost`]).

use super::{pct, printable, render};
use crate::metrics::lines::{by_line, LineStats, Place};
use crate::run::sources::SourceFile;
use crate::run::{LaunchResult, WorkloadRun};
use serde_json::{json, Value};

/// The most rows of a launch the table shows (the JSON has every line).
pub const TABLE_ROWS: usize = 30;

/// The longest source text the table shows, in characters.
const TEXT_CHARS: usize = 60;

/// What the table says about the shares.
pub const SHARE_NOTE: &str = "time %: share of the launch's warp-cycles (issuing or stalled, \
Nsight Compute's warp states); top stalls: the reasons its warps waited most, as shares of the \
line's warp-cycles; inst %: share of the launch's executed warp instructions; cost %: share of \
its memory cost (sectors of global and local accesses, wavefronts of shared ones, requests of \
constant loads)";

/// `file.cu:LINE` (the file's short name) or `PTX LINE`.
pub fn place_name(place: Place, files: &[SourceFile], line_files: &[(u32, String)]) -> String {
    match place {
        Place::Source { file, line } => {
            let name = files
                .iter()
                .find(|f| f.index == file)
                .map(|f| f.short_name().to_string())
                .or_else(|| {
                    line_files
                        .iter()
                        .rev()
                        .find(|(i, _)| *i == file)
                        .map(|(_, n)| {
                            n.rsplit(['/', '\\'])
                                .next()
                                .filter(|s| !s.is_empty())
                                .unwrap_or(n)
                                .to_string()
                        })
                })
                .unwrap_or_else(|| format!("file{file}"));
            format!("{name}:{line}")
        }
        Place::Ptx { line } => format!("PTX {line}"),
    }
}

/// The source text of `place`, whitespace collapsed (`None`: a PTX line, or the file was not
/// found). PTX lines show the text of their instruction instead ([`source_or_ptx`]).
fn source_text(place: Place, files: &[SourceFile]) -> Option<String> {
    let Place::Source { file, line } = place else {
        return None;
    };
    let f = files.iter().find(|f| f.index == file)?;
    Some(
        f.line(line)?
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The text shown beside a line: its source text, or for a PTX line its instruction.
/// The text shown beside line `l` of `launch`: its source text, or for a PTX line its
/// instruction (`None`: the source file was not found).
pub fn text_of(l: &LineStats, launch: &LaunchResult, files: &[SourceFile]) -> Option<String> {
    source_or_ptx(l, launch, files)
}

fn source_or_ptx(l: &LineStats, launch: &LaunchResult, files: &[SourceFile]) -> Option<String> {
    source_text(l.place, files).or_else(|| match l.place {
        Place::Ptx { line } => launch
            .per_pc
            .iter()
            .find(|(pl, _, _)| *pl == line)
            .map(|(_, t, _)| t.clone()),
        Place::Source { .. } => None,
    })
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(TEXT_CHARS) {
        Some((cut, _)) => format!("{} ...", &s[..cut]),
        None => s.to_string(),
    }
}

/// The per-line tables of every launch of `run`, within `width` columns as [`super::table`].
pub fn per_line(run: &WorkloadRun, width: Option<usize>) -> String {
    let mut out = String::new();
    for l in &run.launches {
        let lines = by_line(&l.per_pc, &l.locs, &l.sass_per_line);
        let total_inst: u64 = lines.iter().map(|x| x.warp_insts).sum();
        let total_cost: u64 = lines.iter().map(|x| x.cost).sum();
        let total_time: u64 = lines.iter().map(|x| x.stats.stalls.total()).sum();
        let with_info = l.locs.iter().any(Option::is_some);
        let caption = format!(
            "{} ({}): source lines, most costly first{}",
            l.label,
            l.kernel,
            if with_info {
                ""
            } else {
                " (the PTX has no .loc line info: PTX lines)"
            }
        );
        out.push_str(&super::fit::wrap_line(&caption, width, 4));
        out.push('\n');
        if lines.is_empty() {
            out.push_str("  no instruction executed\n");
            continue;
        }
        let mut t = vec![super::header(&[
            "line",
            "source",
            "warp insts",
            "inst %",
            "requests",
            "sectors",
            "wavefronts",
            "conflicts",
            "L1 hit",
            "cost",
            "cost %",
            "time %",
            "top stalls",
        ])];
        let dash = |n: u64| {
            if n == 0 {
                "-".to_string()
            } else {
                n.to_string()
            }
        };
        for x in lines.iter().take(TABLE_ROWS) {
            let s = &x.stats;
            t.push(vec![
                place_name(x.place, &run.sources, &run.line_files),
                clip(&source_or_ptx(x, l, &run.sources).unwrap_or_default()),
                x.warp_insts.to_string(),
                pct(x.warp_insts, total_inst),
                dash(s.requests),
                dash(s.sectors),
                dash(s.wavefronts),
                dash(s.conflicts),
                pct(s.hits, s.hits + s.misses),
                dash(x.cost),
                if x.cost == 0 {
                    "-".into()
                } else {
                    pct(x.cost, total_cost)
                },
                pct(s.stalls.total(), total_time),
                super::stalls::top_text(&s.stalls, 2),
            ]);
        }
        out.push_str(&render(t, 2, width));
        out.push('\n');
        if lines.len() > TABLE_ROWS {
            out.push_str(&format!(
                "  ... {} more lines (--format json lists every line)\n",
                lines.len() - TABLE_ROWS
            ));
        }
        out.push_str(&super::fit::wrap_line(&format!("  {SHARE_NOTE}"), width, 4));
        out.push_str("\n\n");
        for x in lines.iter().filter(|x| x.stats.conflicts > 0).take(3) {
            if let Some(w) = &x.stats.worst {
                out.push_str(&format!(
                    "{}: banks of its worst shared access ({} wavefronts)\n",
                    place_name(x.place, &run.sources, &run.line_files),
                    w.wavefronts
                ));
                out.push_str(&crate::metrics::picture::banks(w));
            }
        }
    }
    printable(&out)
}

/// The JSON `per_source_line` list of launch `l` of `run`: every line that executed, the most
/// costly first.
pub fn per_line_json(run: &WorkloadRun, l: &LaunchResult) -> Value {
    let lines = by_line(&l.per_pc, &l.locs, &l.sass_per_line);
    let total_inst: u64 = lines.iter().map(|x| x.warp_insts).sum();
    let total_cost: u64 = lines.iter().map(|x| x.cost).sum();
    let total_time: u64 = lines.iter().map(|x| x.stats.stalls.total()).sum();
    let share = |a: u64, b: u64| {
        if b == 0 {
            Value::Null
        } else {
            Value::from(a as f64 / b as f64)
        }
    };
    lines
        .iter()
        .map(|x| {
            let s = &x.stats;
            let (file, line) = match x.place {
                Place::Source { file, line } => (
                    run.line_files
                        .iter()
                        .rev()
                        .find(|(i, _)| *i == file)
                        .map(|(_, n)| n.clone()),
                    line,
                ),
                Place::Ptx { line } => (None, line),
            };
            json!({
                "place": place_name(x.place, &run.sources, &run.line_files),
                "file": file,
                "line": line,
                "ptx_lines": x.ptx_lines,
                "source": source_text(x.place, &run.sources),
                "warp_inst_executed": x.warp_insts,
                "threads": s.threads,
                "requests": s.requests,
                "sectors": s.sectors,
                "wavefronts": s.wavefronts,
                "bank_conflicts": s.conflicts,
                "l1_hits": s.hits,
                "l1_misses": s.misses,
                "l1_hit_rate": share(s.hits, s.hits + s.misses),
                "cost": x.cost,
                "inst_share": share(x.warp_insts, total_inst),
                "cost_share": share(x.cost, total_cost),
                "warp_cycles": s.stalls.total(),
                "time_share": share(s.stalls.total(), total_time),
                "warp_states": s.stalls,
                "top_stalls": s.stalls.top().into_iter()
                    .map(|(r, c)| json!({"reason": r, "cycles": c, "share": share(c, s.stalls.total())}))
                    .collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The JSON `source_files` list of a workload: the line info's files and where each was found.
pub fn files_json(run: &WorkloadRun) -> Value {
    run.line_files
        .iter()
        .map(|(index, name)| {
            let found = run.sources.iter().find(|f| f.index == *index);
            json!({
                "index": index,
                "name": name,
                "path": found.and_then(|f| f.path.clone()),
            })
        })
        .collect()
}

//! The `sim` command line: run bundled or user workloads on a GPU config and report.

mod cli;

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser};
use cli::{Cli, Command, Format, SweepFormat};
use sim::compile::Compiler;
use sim::config::find::{find_with, FoundConfig};
use sim::report::{self, select::Selection};
use sim::run::{run_workload, Options, WorkloadRun};
use sim::workload::Workload;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

// The simulator allocates and frees per-SM logs, register files and buffers in every launch; glibc's
// malloc/free and the page faults after it trims freed memory were ~8% of transpose_smem's time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `sim sweep FILE`: reads and checks everything it can before the first point runs.
fn sweep(
    out: &mut impl Write,
    file: &std::path::Path,
    format: SweepFormat,
    out_file: Option<PathBuf>,
    force: bool,
) -> Result<()> {
    let text = sim::files::read_text(file, "sweep file")
        .with_context(|| format!("cannot read {}", file.display()))?;
    let spec = sim::sweep::parse(&text, &file.display().to_string())?;
    if let Some(path) = &out_file {
        sim::output::check(
            path,
            force,
            &[(file.to_path_buf(), "the sweep file".into())],
        )?;
    } else if force {
        bail!("--force replaces the file of --out: give it too");
    }
    let total = sim::sweep::points(&spec).len();
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let dir = file.parent().unwrap_or(std::path::Path::new("."));
    let rows = sim::sweep::run_all(&spec, dir, &|done, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    let failed: std::collections::BTreeSet<_> = rows
        .iter()
        .filter(|r| r.get("error").is_some_and(|e| !e.is_null()))
        .filter_map(|r| r.get("point").and_then(|p| p.as_u64()))
        .collect();
    if !failed.is_empty() {
        eprintln!(
            "{} of {total} points failed (their rows say why, in `error`)",
            failed.len()
        );
    }
    let bytes = match format {
        SweepFormat::Csv => sim::sweep::table::to_csv(&rows),
        SweepFormat::Json => sim::sweep::table::to_json(&rows).into_bytes(),
    };
    match &out_file {
        Some(path) => sim::output::write_file(path, &bytes)?,
        None => out.write_all(&bytes)?,
    }
    Ok(())
}

/// A progress bar on stderr for runs longer than a second (hidden when stderr is not a terminal,
/// so pipes and tests see nothing). The simulation itself never depends on it.
fn progress_bar() -> sim::run::Progress {
    let start = std::time::Instant::now();
    let bar: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);
    std::sync::Arc::new(move |label: &str, done: u64, total: u64| {
        let Ok(mut bar) = bar.lock() else { return };
        if bar.is_none() && start.elapsed().as_secs_f64() > 1.0 && done < total {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{msg:>10} [{bar:40}] {pos}/{len} blocks, {eta} left",
            ) {
                b.set_style(style.progress_chars("=> "));
            }
            *bar = Some(b);
        }
        if let Some(b) = bar.as_ref() {
            b.set_message(label.to_string());
            b.set_length(total);
            b.set_position(done);
            if done == total {
                b.finish_and_clear();
                *bar = None;
            }
        }
    })
}

/// `--ptxas`, else `$GPUMEMSIM_PTXAS`, else auto.
fn ptxas_choice(flag: Option<sim::sass::Ptxas>) -> Result<sim::sass::Ptxas> {
    tool_choice(flag, "GPUMEMSIM_PTXAS")
}

/// The flag's choice, else the environment variable `var`'s, else auto.
fn tool_choice(flag: Option<sim::sass::Ptxas>, var: &str) -> Result<sim::sass::Ptxas> {
    if let Some(p) = flag {
        return Ok(p);
    }
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v.parse().map_err(|e| anyhow::anyhow!("{var}: {e}")),
        _ => Ok(sim::sass::Ptxas::Auto),
    }
}

/// `--compiler`, else `$GPUMEMSIM_COMPILER`, else auto.
fn compiler_choice(flag: Option<Compiler>) -> Result<Compiler> {
    if let Some(c) = flag {
        return Ok(c);
    }
    match std::env::var("GPUMEMSIM_COMPILER") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map_err(|e| anyhow::anyhow!("GPUMEMSIM_COMPILER: {e}")),
        _ => Ok(Compiler::Auto),
    }
}

fn main() -> ExitCode {
    if let Err(m) = sim::check_cpu() {
        eprintln!("error: {m}");
        return ExitCode::from(2);
    }
    // Output still buffered at exit would be lost silently on a full disk: flush it here.
    let result = real_main().and_then(|()| Ok(std::io::stdout().flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`sim run ... | head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        // Files are read through `sim::Error::Io` or with a context, which name them: a bare I/O
        // error, without context, is a write to stdout (`sim run ... > /dev/full`).
        Err(e) if e.chain().count() == 1 && e.downcast_ref::<std::io::Error>().is_some() => {
            eprintln!("error: cannot write to standard output: {e:#}");
            ExitCode::from(2)
        }
        Err(e) => {
            let m = sim::report::printable(&format!("{e:#}"));
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<()> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version`: clap's own print ignores a failed write (help onto a full
        // disk exited 0), so they go through stdout like every other output.
        Err(e) if !e.use_stderr() => {
            write!(std::io::stdout(), "{}", e.render())?;
            return Ok(());
        }
        // `sim` alone prints the help (exit code 2), as clap does.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.exit()
        }
        Err(e) => {
            let line = sim::usage::one_line(&e, &Cli::command(), std::env::args_os());
            eprintln!("error: {line}");
            std::process::exit(2)
        }
    };
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Compile {
            source,
            arch,
            compiler,
            nvrtc_options,
        } => {
            let text = sim::files::read_text(&source, "CUDA source")
                .with_context(|| format!("cannot read {}", source.display()))?;
            let name = source.display().to_string();
            let c = sim::compile::compile_cuda(
                &name,
                &text,
                source.parent(),
                arch,
                compiler_choice(compiler)?,
                &nvrtc_options,
            )?;
            eprintln!("{name}: PTX by {} for {}", c.compiler, c.arch);
            write!(out, "{}", c.ptx)?;
            Ok(())
        }
        Command::List { configs, metrics } => list(&mut out, configs, metrics),
        Command::Sweep {
            file,
            format,
            out: out_file,
            force,
            threads,
        } => {
            if let Some(n) = threads {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build_global()
                    .context("starting the simulation threads")?;
            }
            sweep(&mut out, &file, format, out_file, force)
        }
        Command::Run {
            positional,
            config,
            sets,
            config_sets,
            format,
            metrics,
            out: out_file,
            force,
            html,
            measured,
            save_outputs,
            warm,
            per_instruction,
            per_line,
            launches,
            check,
            check_fail,
            memcheck_limit,
            max_warp_instructions,
            max_memory,
            printf,
            printf_fifo_bytes,
            threads,
            sample,
            compiler,
            nvrtc_options,
            registers,
            ptxas,
            nvdisasm,
        } => {
            if let Some(n) = threads {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build_global()
                    .context("starting the simulation threads")?;
            }
            let selection = Selection::parse(&metrics).map_err(anyhow::Error::msg)?;
            let (config, workloads) = match config {
                Some(c) => (c, positional),
                None if positional.len() >= 2 => (positional[0].clone(), positional[1..].to_vec()),
                None => bail!(
                    "sim run needs a config and at least one workload: `sim run CONFIG WORKLOAD...` \
(configs: `sim list --configs`; workloads: `sim list`)"
                ),
            };
            let found = find_with(&config, &config_sets)?;
            // Every workload is read before any runs: a typo costs no simulation.
            let mut resolved = vec![];
            for name in &workloads {
                resolved.push(Workload::resolve(name)?);
            }
            if force
                && out_file.is_none()
                && save_outputs.is_none()
                && printf.is_none()
                && html.is_none()
            {
                bail!(
                    "--force replaces the files of --out, --html or --save-outputs (or --printf): give one of them"
                );
            }
            let mut read = inputs(&found, &resolved);
            let measured = match (&measured, &html) {
                (Some(_), None) => {
                    bail!("--measured REPORT.json is shown by --html FILE: give it too")
                }
                (Some(p), Some(_)) => {
                    let text = std::fs::read_to_string(p)
                        .with_context(|| format!("cannot read {}", p.display()))?;
                    let v: serde_json::Value = serde_json::from_str(&text)
                        .with_context(|| format!("{}: not JSON", p.display()))?;
                    report::html::check_measured(&v)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                    read.push((p.clone(), "the --measured report".to_string()));
                    Some((v, p.display().to_string()))
                }
                (None, _) => None,
            };
            if let Some(path) = &out_file {
                sim::output::check(path, force, &read)?;
            }
            if let Some(path) = &printf {
                sim::output::check(path, force, &read)?;
                if out_file.as_ref() == Some(path) {
                    bail!("--printf and --out name the same file `{}`", path.display());
                }
            }
            if let Some(path) = &html {
                sim::output::check(path, force, &read)?;
                if out_file.as_ref().is_some_and(|o| o == path) {
                    bail!("--html and --out name the same file: {}", path.display());
                }
                if printf.as_ref() == Some(path) {
                    bail!("--html and --printf name the same file: {}", path.display());
                }
            }
            if let Some(dir) = &save_outputs {
                for w in &resolved {
                    for f in sim::save::planned(w, dir, &launches) {
                        sim::output::check(&f, force, &read)?;
                    }
                }
            }
            let opts = Options {
                compiler: compiler_choice(compiler)?,
                nvrtc_options,
                progress: Some(progress_bar()),
                sets,
                warm,
                keep_outputs: save_outputs.is_some(),
                max_warp_instructions,
                max_memory,
                printf_fifo_bytes,
                only: launches,
                sampling: sample,
                registers,
                paths: Default::default(),
                order: Default::default(),
                probe_order: false,
                checks: sim::exec::barrier::Checks {
                    racecheck: check.iter().any(|c| c == "racecheck"),
                    synccheck: check.iter().any(|c| c == "synccheck"),
                    memcheck_limit: memcheck_limit as usize,
                },
                ptxas: sim::sass::Settings {
                    ptxas: ptxas_choice(ptxas)?,
                    nvdisasm: tool_choice(nvdisasm, "GPUMEMSIM_NVDISASM")?,
                    ..Default::default()
                },
            };
            let cfg = &found.config;
            // Tables for people reach the terminal as each workload finishes; the other formats
            // (and any file) are one document, written at the end.
            let stream = format == Format::Table && out_file.is_none() && html.is_none();
            let mut runs = vec![];
            let mut printed: Vec<u8> = vec![];
            let mut failures: Vec<(String, String)> = vec![];
            let detail = report::Detail {
                per_instruction,
                per_line,
            };
            // Tables fit the terminal they reach (COLUMNS, else its width); a pipe or a file
            // gets the natural layout, so that scripts see one (COLUMNS still asks for a width,
            // -o FILE never).
            let width = match out_file {
                Some(_) => None,
                None => report::fit::width(
                    std::env::var("COLUMNS").ok().as_deref(),
                    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| w.0.into()),
                ),
            };
            for (name, w) in workloads.iter().zip(&resolved) {
                let result = run_workload(cfg, w, &opts).map(|mut run| {
                    if per_line || per_instruction || html.is_some() {
                        run.sources = sim::run::sources::find(&run.line_files, w);
                    }
                    run
                });
                let mut hazards = 0usize;
                if let Ok(run) = &result {
                    hazards = race_warnings(run, &opts.checks);
                }
                let result = match (result, &save_outputs) {
                    (Ok(run), Some(dir)) => save(&run, dir, force, &read).map(|()| run),
                    (r, _) => r.map_err(anyhow::Error::from),
                };
                let result = result.and_then(|run| {
                    if check_fail && hazards > 0 {
                        anyhow::bail!("racecheck found {hazards} distinct hazards (--check-fail)")
                    }
                    Ok(run)
                });
                if let Ok(run) = &result {
                    let text: Vec<u8> = run
                        .launches
                        .iter()
                        .flat_map(|l| l.printf.text.clone())
                        .collect();
                    if printf.is_some() {
                        printed.extend(text);
                    } else if stream || out_file.is_some() {
                        out.write_all(&text)?;
                    } else {
                        std::io::stderr().write_all(&text)?;
                    }
                }
                match result {
                    Ok(run) if run.launches.is_empty() => failures.push((
                        name.clone(),
                        format!("no launch matches --launch {:?}", opts.only),
                    )),
                    Ok(run) if stream => {
                        let mut text = vec![];
                        tables(&mut text, cfg, &[run], &selection, detail, width)?;
                        out.write_all(&text)?;
                    }
                    Ok(run) => runs.push(run),
                    // The whole chain: an I/O error says why after "cannot read FILE".
                    Err(e) => failures.push((name.clone(), format!("{e:#}"))),
                }
            }
            let mut text: Vec<u8> = vec![];
            match format {
                Format::Json => {
                    let doc = report::doc::document(&found, &runs, &failures, &selection, detail);
                    writeln!(text, "{}", serde_json::to_string_pretty(&doc)?)?;
                }
                Format::Csv => report::csv::write(&mut text, cfg, &runs, &selection)?,
                Format::Table => tables(&mut text, cfg, &runs, &selection, detail, width)?,
            }
            match &out_file {
                Some(path) => sim::output::write_file(path, &text)?,
                None => out.write_all(&text)?,
            }
            if let Some(path) = &printf {
                sim::output::write_file(path, &printed)?;
            }
            if let Some(path) = &html {
                let m = measured.as_ref().map(|(v, n)| (v, n.as_str()));
                let page = report::html::page(&found, &runs, m).map_err(anyhow::Error::msg)?;
                sim::output::write_file(path, page.as_bytes())?;
                eprintln!("wrote {}", path.display());
            }
            match failures.as_slice() {
                [] => Ok(()),
                [(name, e)] => bail!("workload `{name}`: {e}"),
                all => bail!(
                    "{} of {} workloads failed: {}",
                    all.len(),
                    workloads.len(),
                    all.iter()
                        .map(|(n, e)| format!("workload `{n}`: {e}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }
        }
    }
}

/// With `--check racecheck`: prints each launch's hazards of `run` on stderr as warnings, and a
/// summary per launch; returns how many distinct hazards there were.
fn race_warnings(run: &WorkloadRun, checks: &sim::exec::barrier::Checks) -> usize {
    if !checks.racecheck {
        return 0;
    }
    let mut total = 0;
    for l in &run.launches {
        for h in &l.hazards {
            eprintln!("warning: launch `{}`: {h}", l.label);
        }
        eprintln!(
            "racecheck: launch `{}`: {} distinct hazards",
            l.label,
            l.hazards.len()
        );
        total += l.hazards.len();
    }
    total
}

/// `--save-outputs DIR`: writes the output buffers of `run`'s launches into `dir` and says so
/// on stderr (a sampled launch's outputs lack the blocks it did not simulate: said too).
fn save(
    run: &WorkloadRun,
    dir: &std::path::Path,
    force: bool,
    inputs: &[(PathBuf, String)],
) -> Result<()> {
    let files = sim::save::files(run, dir).map_err(anyhow::Error::msg)?;
    if !files.is_empty() {
        sim::save::make_dir(dir)?;
    }
    sim::save::write_all(&files, force, inputs)?;
    for f in &files {
        eprintln!("wrote {} ({})", f.path.display(), f.what);
    }
    for l in run.launches.iter().filter(|l| l.sampled.is_some()) {
        eprintln!(
            "note: launch `{}` was sampled: its saved outputs lack the blocks it did not simulate (--sample full simulates every block)",
            l.label
        );
    }
    if run.outputs.is_empty() {
        eprintln!(
            "note: workload `{}` has no output buffer (`output = true`): nothing saved",
            run.workload
        );
    }
    Ok(())
}

/// The files a run reads, which `-o` must never replace: (path, what it is).
fn inputs(found: &FoundConfig, workloads: &[Workload]) -> Vec<(PathBuf, String)> {
    let mut v = vec![];
    if !found.bundled {
        v.push((PathBuf::from(&found.path), "the GPU config".to_string()));
    }
    for w in workloads {
        if let sim::workload::Source::File(p) = &w.source {
            v.push((p.clone(), "a workload file".to_string()));
            let dir = p.parent().unwrap_or(std::path::Path::new("."));
            let named = [Some(w.ptx.as_str()), w.cuda.as_deref()];
            let inits = w.buffers.iter().map(|b| b.init.as_str());
            let inits = inits.chain(w.constants.iter().map(|c| c.init.as_str()));
            let files = inits.filter_map(|i| i.strip_prefix("file:"));
            for f in named.into_iter().flatten().chain(files) {
                if !f.is_empty() {
                    v.push((dir.join(f), "a file the workload reads".to_string()));
                }
            }
        }
    }
    v
}

/// The table format: per workload the summary table (or, with --metrics, the selected metrics
/// per launch) and the per-instruction tables, within `width` terminal columns where given.
fn tables(
    out: &mut Vec<u8>,
    cfg: &sim::config::GpuConfig,
    runs: &[WorkloadRun],
    selection: &Selection,
    detail: report::Detail,
    width: Option<usize>,
) -> Result<()> {
    for run in runs {
        if selection.is_all() {
            writeln!(out, "{}", report::table(cfg, run, width))?;
        } else {
            writeln!(out, "{}", report::metric_table(cfg, run, selection, width))?;
        }
        if detail.per_instruction {
            writeln!(out, "{}", report::per_instruction(run, width))?;
        }
        if detail.per_line {
            writeln!(out, "{}", report::per_line(run, width))?;
        }
    }
    Ok(())
}

/// `sim list`: the bundled workloads, or with `--configs` the bundled configs, or with
/// `--metrics` the metric names.
fn list(out: &mut impl Write, configs: bool, metrics: bool) -> Result<()> {
    if metrics {
        for m in report::metric_names() {
            writeln!(out, "{m:<64} {}", report::metric_unit(m))?;
        }
        return Ok(());
    }
    if configs {
        for c in gpumemsim::configs() {
            let gpu = sim::config::GpuConfig::from_toml_str(c.toml, c.path)
                .map(|g| {
                    format!(
                        "{} (sm_{})",
                        g.gpu.name,
                        g.gpu.compute_capability.replace('.', "")
                    )
                })
                .unwrap_or_else(|e| format!("does not load: {e}"));
            let tags: Vec<String> = sim::config::find::provenance(c.toml)
                .into_iter()
                .map(|(t, n)| format!("{t} {n}"))
                .collect();
            writeln!(out, "{:<10} {gpu}", c.name)?;
            writeln!(
                out,
                "{:<10} {}; sources cited: {}",
                "",
                c.path,
                tags.join(", ")
            )?;
        }
        return Ok(());
    }
    for w in gpumemsim::workloads() {
        let desc = Workload::from_toml_str(w.toml, sim::workload::Source::Bundled(w.path.into()))
            .map(|x| x.description)
            .unwrap_or_default();
        writeln!(out, "{:<24} {}", w.name, report::printable(&desc))?;
    }
    Ok(())
}

//! Registers per thread: the estimate from the PTX against what ptxas allocates, and occupancy.

use sim::exec::{self, Program, SymbolAddr};
use std::collections::HashMap;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The kernel `entry` of the PTX `text`, decoded (symbols at dummy addresses: only registers
/// and control flow matter here).
fn program(text: &str, file: &str, entry: &str) -> Program {
    let m = sim::ptx::parse(text, file).expect("PTX parses");
    let f = m.entry(entry).expect("entry exists");
    let f = sim::ptx::inline::inline_calls(&m, f, text, file).expect("inlines");
    let mut symbols = HashMap::new();
    for v in m.globals.iter().chain(&f.locals) {
        symbols.insert(v.name.clone(), SymbolAddr::Global(0));
    }
    for p in &f.params {
        symbols.insert(p.name.clone(), SymbolAddr::Param(0));
    }
    exec::decode(&f, &symbols, text, file).expect("decodes")
}

/// `ptxas -v` counts of `validate/measurements/h200/ptxas-registers.txt` for `arch`:
/// (PTX file as named there, entry, registers).
fn ptxas(arch: &str) -> Vec<(String, String, u32)> {
    let text = std::fs::read_to_string(format!(
        "{ROOT}/validate/measurements/h200/ptxas-registers.txt"
    ))
    .expect("ground truth is committed");
    let (mut file, mut cur_arch, mut entry) = (String::new(), String::new(), String::new());
    let mut out = vec![];
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("== ") {
            let (f, a) = h.rsplit_once(' ').expect("== FILE ARCH");
            (file, cur_arch) = (f.to_string(), a.to_string());
        } else if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            entry = rest.split('\'').next().unwrap_or_default().to_string();
        } else if let Some(rest) = line.split("Used ").nth(1) {
            if cur_arch == arch {
                let n = rest.split(' ').next().unwrap().parse().expect("a count");
                out.push((file.clone(), entry.clone(), n));
            }
        }
    }
    out
}

/// The PTX text of a file named as in the ground truth (relative to `kernels/ptx/`).
fn ptx_text(file: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/kernels/ptx/{file}")).expect("PTX is committed")
}

#[test]
fn explore() {
    for arch in ["sm_90", "sm_86", "sm_80"] {
        let kernels: Vec<(String, u32, Program)> = ptxas(arch)
            .into_iter()
            .map(|(file, entry, n)| {
                let text = ptx_text(&file);
                let p = program(&text, &file, &entry);
                (entry, n, p)
            })
            .collect();
        let errs: Vec<i64> = kernels
            .iter()
            .map(|(_, n, p)| exec::regs::estimate(p) as i64 - *n as i64)
            .collect();
        let mean = errs.iter().map(|e| e.abs()).sum::<i64>() as f64 / errs.len() as f64;
        let bias = errs.iter().sum::<i64>() as f64 / errs.len() as f64;
        println!(
            "{arch}: mean|e| {mean:.2} bias {bias:.2} range {}..{} n {}",
            errs.iter().min().unwrap(),
            errs.iter().max().unwrap(),
            errs.len()
        );
        if arch == "sm_90" {
            let l: Vec<String> = kernels
                .iter()
                .zip(&errs)
                .map(|((e, n, _), err)| {
                    format!("{}:{n}/{}", &e[..e.len().min(12)], *n as i64 + err)
                })
                .collect();
            println!("   {}", l.join(" "));
        }
    }
}

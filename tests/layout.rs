//! The layout of `sim`'s source: its top-level modules import each other without a cycle, so
//! that each stage (ptx, exec, memory, trace, timing, metrics, pipeline, run, report) can be
//! read, tested and replaced on its own, and sim's files stay a readable size.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The `crate::X` modules a source text names outside comments and `#[cfg(test)]` items.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Inside a `#[cfg(test)]` item: the brace depth, and whether the item's body has opened.
    let mut test_item: Option<(i64, bool)> = None;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if line.trim() == "#[cfg(test)]" {
            test_item = Some((0, false));
            continue;
        }
        if let Some((depth, opened)) = &mut test_item {
            *depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
            *opened |= code.contains('{') || code.ends_with(';');
            if *opened && *depth <= 0 {
                test_item = None;
            }
            continue;
        }
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module of each file under `src` (`exec/mem/load.rs` and `exec.rs`: `exec`) to the
/// modules it imports.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let name = rel.file_name().unwrap().to_str().unwrap();
        // Test-only files are not part of the layering.
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let top = top.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        let deps = g.entry(top.clone()).or_default();
        deps.extend(imports(&text).into_iter().filter(|d| *d != top));
    }
    g
}

/// A cycle through `start`, as the list of modules on it, if there is one.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        g: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in g.get(at).into_iter().flatten() {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(g, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(g, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn sims_modules_import_each_other_without_a_cycle() {
    let g = graph(&common::root().join("sim/src"));
    // The stages the pipeline is made of are all there (a renamed module must be renamed here).
    for m in [
        "ptx", "sass", "exec", "memory", "trace", "timing", "metrics", "pipeline", "run",
    ] {
        assert!(g.contains_key(m), "no module {m} in sim/src");
    }
    let cycles: Vec<String> = (g.keys())
        .filter_map(|m| cycle(&g, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

#[test]
fn the_import_scan_sees_a_cycle_and_skips_comments_and_tests() {
    // The scan this layout test rests on, on texts whose imports are known.
    let a = "use crate::b::X;\n// crate::c in a comment\n#[cfg(test)]\nmod tests {\n    use crate::d;\n}\nfn f() { crate::e::g(); }\n";
    assert_eq!(
        imports(a),
        ["b", "e"]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), imports(a));
    g.insert("b".to_string(), imports("use crate::e;"));
    g.insert("e".to_string(), imports("x = crate::a::Y;"));
    assert_eq!(cycle(&g, "a").unwrap(), ["a", "b", "e"]);
    g.insert("e".to_string(), BTreeSet::new());
    assert!(cycle(&g, "a").is_none());
}

#[test]
fn no_source_file_of_sim_is_over_about_800_lines() {
    let mut files = Vec::new();
    rust_files(&common::root().join("sim/src"), &mut files);
    let long: Vec<String> = (files.iter())
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > 850)
        .map(|(f, n)| format!("{} ({n} lines)", f.display()))
        .collect();
    assert!(long.is_empty(), "files to split by topic: {long:#?}");
}

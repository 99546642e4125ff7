//! The validation suites of issues 37 and 38 (`tests/fixtures/suite37`, `tests/fixtures/suite38`)
//! are what their READMEs say: every workload file parses (the simulator's own parser), names the
//! committed `<stem>.ptx` whose stamp is the SHA-256 of `<stem>.cu` now (`make_ptx.sh`), and each
//! launch names an `.entry` of that PTX with as many arguments as it has parameters and a grid and
//! block in range; the launch counts are the READMEs'; and `suite38/split.toml` puts every launch
//! of both suites in exactly one of `fit` and `heldout`. Reads files only (well under a second):
//! nothing is simulated.

use sha2::{Digest, Sha256};
use sim::workload::Workload;
use std::collections::BTreeSet;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const STAMP_PREFIX: &str = "// gpumemsim: generated from ";

/// Each suite's workload files (stems) with their launch counts, as the READMEs list them.
const SUITES: [(&str, &[(&str, usize)]); 2] = [
    (
        "suite37",
        &[
            ("atomics", 4),
            ("gather", 5),
            ("lud", 6),
            ("params", 6),
            ("scan", 6),
            ("sgemm", 5),
            ("stencil", 4),
            ("vcopy", 6),
        ],
    ),
    (
        "suite38",
        &[
            ("atomics", 37),
            ("b2b", 24),
            ("constant", 53),
            ("grids", 19),
            ("memory", 30),
            ("reduce", 22),
            ("tiles", 14),
        ],
    ),
];

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What is wrong with `ptx`'s first-line stamp for the source `cu_name` with bytes `cu`, if
/// anything (make_ptx.sh writes `// gpumemsim: generated from <stem>.cu sha256=<hex> by ...`).
fn stamp_problem(ptx: &str, cu_name: &str, cu: &[u8]) -> Option<String> {
    let Some(rest) = ptx
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(STAMP_PREFIX))
    else {
        return Some(format!("no `{STAMP_PREFIX}...` stamp on the first line"));
    };
    let Some((source, rest)) = rest.split_once(" sha256=") else {
        return Some("the stamp has no sha256=".into());
    };
    if source != cu_name {
        return Some(format!("the stamp names {source}, not {cu_name}"));
    }
    let hash = rest.split(' ').next().unwrap_or("");
    let now = sha256_hex(cu);
    (hash != now).then(|| format!("stale: stamp sha256={hash}, {cu_name} now sha256={now}"))
}

/// The launch labels of `suite/stem.toml`, after checking the file against its PTX.
fn checked_labels(suite: &str, stem: &str) -> Vec<String> {
    let dir = format!("{ROOT}/tests/fixtures/{suite}");
    let file = format!("{dir}/{stem}.toml");
    let regen = format!("regenerate with tests/fixtures/{suite}/make_ptx.sh");
    let w = Workload::resolve(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(w.ptx, format!("{stem}.ptx"), "{file}: ptx");
    let ptx = std::fs::read_to_string(format!("{dir}/{stem}.ptx"))
        .unwrap_or_else(|e| panic!("{dir}/{stem}.ptx: {e}; {regen}"));
    let cu = std::fs::read(format!("{dir}/{stem}.cu")).unwrap();
    if let Some(p) = stamp_problem(&ptx, &format!("{stem}.cu"), &cu) {
        panic!("{suite}/{stem}.ptx: {p}; {regen}");
    }
    let module = sim::ptx::parse(&ptx, &format!("{stem}.ptx")).unwrap();
    let mut labels = vec![];
    for (i, l) in w.launches.iter().enumerate() {
        let entry = module
            .entry(&l.kernel)
            .unwrap_or_else(|| panic!("{file}: launch[{i}] `{}`: no .entry {}", l.label, l.kernel));
        assert_eq!(
            l.args.len(),
            entry.params.len(),
            "{file}: launch[{i}] `{}`: arguments vs .params of {}",
            l.label,
            l.kernel
        );
        w.dims(&l.grid, "grid", [i32::MAX as u32, 65_535, 65_535])
            .unwrap_or_else(|e| panic!("{e}"));
        let b = w
            .dims(&l.block, "block", [1024, 1024, 64])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            b.iter().product::<u32>() <= 1024,
            "{file}: launch[{i}] block {b:?}"
        );
        labels.push(l.label.clone());
    }
    let unique: BTreeSet<&String> = labels.iter().collect();
    assert_eq!(unique.len(), labels.len(), "{file}: launch labels repeat");
    labels
}

/// The `.toml` workload files of a suite folder (split.toml is not one).
fn workload_stems(suite: &str) -> BTreeSet<String> {
    std::fs::read_dir(format!("{ROOT}/tests/fixtures/{suite}"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".toml").map(str::to_string))
        .filter(|s| s != "split")
        .collect()
}

#[test]
fn suites_parse_name_fresh_ptx_and_have_the_readme_launch_counts() {
    for (suite, files) in SUITES {
        let listed: BTreeSet<String> = files.iter().map(|(s, _)| s.to_string()).collect();
        assert_eq!(
            workload_stems(suite),
            listed,
            "{suite}: workload files vs this test's list"
        );
        for (stem, count) in files {
            assert_eq!(
                checked_labels(suite, stem).len(),
                *count,
                "{suite}/{stem}.toml launches"
            );
        }
    }
    let total = |s: &[(&str, usize)]| s.iter().map(|(_, n)| n).sum::<usize>();
    assert_eq!((total(SUITES[0].1), total(SUITES[1].1)), (42, 199));
}

#[test]
fn split_puts_every_launch_in_exactly_one_set() {
    let path = format!("{ROOT}/tests/fixtures/suite38/split.toml");
    let split: toml::Value = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(split["version"].as_integer(), Some(1));
    let mut seen = BTreeSet::new();
    let (mut fit, mut held) = (0, 0);
    for w in split["workload"].as_array().unwrap() {
        let file = w["file"].as_str().unwrap();
        assert!(seen.insert(file.to_string()), "{path}: {file} twice");
        let (suite, stem) = file
            .strip_prefix("tests/fixtures/")
            .and_then(|f| f.strip_suffix(".toml"))
            .and_then(|f| f.split_once('/'))
            .unwrap_or_else(|| panic!("{path}: {file} is not tests/fixtures/<suite>/<stem>.toml"));
        let set = |k: &str| -> Vec<String> {
            w[k].as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
                .collect()
        };
        let (f, h) = (set("fit"), set("heldout"));
        let mut both: Vec<&String> = f.iter().chain(&h).collect();
        both.sort();
        let mut labels = checked_labels(suite, stem);
        labels.sort();
        assert_eq!(
            both,
            labels.iter().collect::<Vec<_>>(),
            "{path}: {file}: fit + heldout vs its launches"
        );
        fit += f.len();
        held += h.len();
    }
    let all: BTreeSet<String> = SUITES
        .iter()
        .flat_map(|(s, fs)| {
            fs.iter()
                .map(move |(f, _)| format!("tests/fixtures/{s}/{f}.toml"))
        })
        .collect();
    assert_eq!(seen, all, "{path}: the workload files of both suites");
    assert_eq!((fit, held), (94, 147), "{path}: launches fit and held out");
}

#[test]
fn a_stale_or_foreign_stamp_is_caught() {
    let cu = b"extern \"C\" __global__ void k() {}\n";
    let ptx = format!(
        "{STAMP_PREFIX}k.cu sha256={} by NVRTC 12.9 with x\n.version 8.8\n",
        sha256_hex(cu)
    );
    assert_eq!(stamp_problem(&ptx, "k.cu", cu), None);
    assert!(
        stamp_problem(&ptx, "k.cu", b"extern \"C\" __global__ void k() { }\n")
            .unwrap()
            .starts_with("stale")
    );
    assert!(stamp_problem(&ptx, "j.cu", cu)
        .unwrap()
        .contains("names k.cu"));
    assert!(stamp_problem(".version 8.8\n", "k.cu", cu)
        .unwrap()
        .starts_with("no "));
}

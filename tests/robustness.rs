//! Bad input never panics: random mutations of valid PTX, workload and config text go through
//! the whole pipeline (parse, decode, lay out, execute with a small instruction budget) and must
//! come back as `Ok` or as an error, never as a panic.

use proptest::prelude::*;
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::{Source, Workload};

const PTX: &str = include_str!("fixtures/add_one.ptx");
const LOCAL_PTX: &str = include_str!("fixtures/local_array.ptx");
const WORKLOAD: &str = include_str!("fixtures/add_one.toml");
const CONFIG: &str = include_str!("../configs/h200.toml");

/// Tokens mutations insert: PTX words, registers, numbers and punctuation.
const TOKENS: &[&str] = &[
    "ld.global.u32",
    "st.shared.v4.f32",
    "bra",
    "$L__BB0_2",
    "%r1",
    "%rd9",
    "%p1",
    "@%p1",
    "@!%p1",
    "[",
    "]",
    "{",
    "}",
    ";",
    ",",
    "-1",
    "0x7fffffff",
    "4294967296",
    "0f7F800000",
    "mul.wide.u64",
    "shr.s32",
    "div.s32",
    "rem.u32",
    "shfl.sync.idx.b32",
    "vote.sync.ballot.b32",
    "bar.sync",
    "cvt.rzi.s32.f32",
    ".reg .b32 %r<100000>;",
    ".local .b8 x[4];",
    "ret;",
    "exit;",
    "%tid.x",
    "%laneid",
    "+",
    "-",
    "\n",
    "",
    "clz.b64",
    "brev.b32",
    "popc.b64",
    "setp.lt.f32",
    "selp.b64",
    "neg.s64",
    "abs.s32",
];

/// Applies `edits` (position, token index, delete length) to `text` at character boundaries.
fn mutate(text: &str, edits: &[(usize, usize, usize)]) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for &(pos, tok, del) in edits {
        let at = pos % (s.len() + 1);
        let end = (at + del % 12).min(s.len());
        s.splice(
            at..end,
            TOKENS[tok % TOKENS.len()]
                .chars()
                .chain(std::iter::once(' ')),
        );
    }
    s.into_iter().collect()
}

fn config() -> GpuConfig {
    GpuConfig::from_toml_str(CONFIG, "configs/h200.toml").unwrap()
}

/// Runs `ptx` as the add_one workload's kernel (written next to a copy of the workload).
fn run_ptx(ptx: &str, dir: &std::path::Path) {
    std::fs::write(dir.join("add_one.ptx"), ptx).unwrap();
    std::fs::write(dir.join("add_one.toml"), WORKLOAD).unwrap();
    if let Ok(w) = Workload::resolve(dir.join("add_one.toml").to_str().unwrap()) {
        let _ = run_workload(
            &config(),
            &w,
            &Options {
                max_warp_instructions: 20_000,
                ..Default::default()
            },
        );
    }
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-robustness-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_ptx_never_panics(edits in prop::collection::vec((any::<usize>(), any::<usize>(), any::<usize>()), 1..6)) {
        let dir = temp_dir("ptx");
        run_ptx(&mutate(PTX, &edits), &dir);
        // The local-array kernel exercises other paths; parse and decode it the same way.
        let _ = sim::ptx::parse_all(&mutate(LOCAL_PTX, &edits), "local_array.ptx");
    }

    #[test]
    fn mutated_workloads_and_configs_never_panic(edits in prop::collection::vec((any::<usize>(), any::<usize>(), any::<usize>()), 1..4)) {
        let _ = GpuConfig::from_toml_str(&mutate(CONFIG, &edits), "configs/h200.toml");
        if let Ok(w) = Workload::from_toml_str(&mutate(WORKLOAD, &edits), Source::Inline) {
            let _ = run_workload(&config(), &w, &Options { max_warp_instructions: 20_000, ..Default::default() });
        }
    }
}

// Inputs the cargo-fuzz targets (sim/fuzz) found, or that their fixes cover: each comes back as an
// error, never as a panic.

/// The add_one workload with `decls` added to its PTX after `.address_size`, planned (run with a
/// small budget); returns the error text, or "" when it ran.
fn run_with_decls(decls: &str, tag: &str) -> String {
    let ptx = PTX.replacen(".address_size 64", &format!(".address_size 64\n{decls}"), 1);
    let dir = temp_dir(tag);
    std::fs::write(dir.join("add_one.ptx"), &ptx).unwrap();
    std::fs::write(dir.join("add_one.toml"), WORKLOAD).unwrap();
    let w = Workload::resolve(dir.join("add_one.toml").to_str().unwrap()).unwrap();
    match run_workload(
        &config(),
        &w,
        &Options {
            max_warp_instructions: 20_000,
            ..Default::default()
        },
    ) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn array_sizes_overflowing_64_bits_are_errors() {
    for decl in [
        ".global .v4 .b32 x[4611686018427387904];",
        ".global .b64 y[4611686018427387904];",
        ".const .b32 z[9223372036854775807];",
    ] {
        let e = run_with_decls(decl, "arraylen");
        assert!(e.contains("array length too large"), "{decl}: {e}");
    }
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .b64 p[4611686018427387904]) { ret; }\n";
    assert!(sim::ptx::parse_all(ptx, "p.ptx").is_err());
}

/// More initial values than elements: planning copied them past the constant bank's end.
#[test]
fn initialisers_longer_than_their_array_are_errors() {
    let e = run_with_decls(
        ".const .b8 pad[65532];\n.const .b8 c[1] = {1, 2, 3, 4, 5};",
        "initlen",
    );
    assert!(
        e.contains("5 initial values for an array of 1 elements"),
        "{e}"
    );
}

/// A `.global` array, or a workload buffer, larger than the host can simulate: planning tried to
/// allocate it and the process aborted.
#[test]
fn arrays_larger_than_host_memory_are_errors() {
    // 2^50 bytes (1 PiB): no 64-bit overflow, far beyond any host.
    let e = run_with_decls(".global .b8 huge[1125899906842624];", "hugeglobal");
    assert!(
        e.contains("global variable `huge` needs 1048576.0 GiB of host memory"),
        "{e}"
    );
    let dir = temp_dir("hugebuffer");
    std::fs::write(dir.join("add_one.ptx"), PTX).unwrap();
    std::fs::write(dir.join("add_one.toml"), WORKLOAD).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["run", "configs/h200.toml"])
        .arg(dir.join("add_one.toml"))
        .args(["--set", "n=281474976710656"]) // 2^48 elements
        .current_dir(env!("CARGO_MANIFEST_DIR").to_owned() + "/..")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("GiB of host memory to simulate"), "{err}");
}

/// Found by the `ptx` fuzz target (session of issue 40, 200 s, `fma.rn.f32!` at the end of a
/// file): a `!` with no operand after it read past the last token (index out of bounds).
#[test]
fn a_bang_at_the_end_of_the_file_is_an_error() {
    for tail in [
        "fma.rn.f32!",
        "@!",
        "setp.eq.s32 %p1, %r1, !",
        "mov.pred %p1, !;",
    ] {
        let text = format!(".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{{\n{tail}");
        let errs = sim::ptx::parse_all(&text, "t.ptx").expect_err(tail);
        assert!(
            errs.iter().all(|e| e.to_string().starts_with("t.ptx:")),
            "{tail}: {errs:?}"
        );
    }
}

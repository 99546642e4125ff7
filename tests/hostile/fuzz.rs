//! Structure-aware fuzzing (issue 40): proptest strategies that build hostile PTX and workloads
//! from add_one, one class of hostile input each (nesting depth, declaration sizes, grid and
//! block sizes, numeric extremes, long lines and large files), and a mix of them. Every case runs
//! the `sim` binary under the 4 GiB address-space limit and must end, within a time bound, in
//! exit code 0, or exit code 2 with one `error:` line on stderr (or clap's usage error, for a
//! command-line value clap refuses); never a panic, an abort (a signal), a stack overflow or a
//! hang.
//!
//! Each property runs `GPUMEMSIM_FUZZ_CASES` cases (default 12, a few seconds in all); a longer
//! run: `GPUMEMSIM_FUZZ_CASES=2000 cargo test -p sim --test hostile fuzz`. Findings are plain
//! tests in `tests/hostile.rs` and its modules.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A case that takes longer than this hangs (the suite's cases take under a second each; the
/// slowest legal case a 2,400-case run drew, 134M threads, 26 s).
const TIME_BOUND: Duration = Duration::from_secs(60);

/// `GPUMEMSIM_FUZZ_CASES`, if set.
fn cases() -> Option<u32> {
    std::env::var("GPUMEMSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
}

/// The suite's 12 cases a property come from a fixed seed, so that its time does not depend on
/// the draw (a legal `--set n=134217728` simulates 134M threads: 26 s in a debug build); a run
/// with `GPUMEMSIM_FUZZ_CASES` draws afresh.
fn config() -> Config {
    Config {
        cases: cases().unwrap_or(12),
        rng_seed: match cases() {
            Some(_) => RngSeed::Random,
            None => RngSeed::Fixed(40),
        },
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}

/// Numbers at and beyond the limits CUDA, PTX and the integer types set, as PTX or TOML text.
fn extreme() -> impl Strategy<Value = String> {
    let named = prop::sample::select(vec![
        "0",
        "1",
        "-1",
        "3",
        "64",
        "65",
        "1024",
        "1025",
        "65535",
        "65536",
        "524288",
        "524289",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "340282366920938463463374607431768211456",
        "0x7fffffffffffffff",
        "0xffffffffffffffff",
        "0x10000000000000000",
        "0x8000000000000000",
        "1.5",
        "-0",
        "1e308",
        "1e309",
        "nan",
        "inf",
        "-inf",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        4 => named,
        1 => any::<i64>().prop_map(|v| v.to_string()),
        1 => any::<u64>().prop_map(|v| v.to_string()),
        1 => (0u32..64).prop_map(|k| (1u64 << k).to_string()),
    ]
}

/// A nesting depth or a length: small, near a power of two, or large.
fn depth() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..40,
        (1u32..18).prop_map(|k| 1usize << k),
        (1u32..18).prop_map(|k| (1usize << k) + 1),
        20_000usize..120_000,
    ]
}

/// One hostile edit of add_one: its PTX, its workload and its command line.
#[derive(Debug, Clone)]
enum Edit {
    /// Nested `{ }` scopes around the kernel's `ret`.
    NestBody(usize),
    /// A `.global` array whose initializer is nested this deep.
    NestInit(usize),
    /// A vector operand nested this deep.
    NestVector(usize),
    /// The grid's x dimension as an expression parenthesised this deep.
    NestParen(usize),
    /// The grid's x dimension as a sum of this many terms.
    LongSum(usize),
    /// `.reg .b32 %r<N>`.
    Regs(String),
    /// An array of `N` elements of `.type` in a state space (`local`, `shared` in the kernel;
    /// `global`, `const`, `shared` at module scope; `param`, a kernel parameter).
    Array(&'static str, &'static str, String),
    /// Grid and block dimensions (TOML values).
    Launch([String; 3], [String; 3]),
    /// The immediate of `add.s32 %r7, %r6, 1` (integer, `0f`/`0d` float bits or decimal).
    Imm(String),
    /// The third argument (the `.u32` `n`) as a TOML value.
    Arg(String),
    /// `--set n=V`.
    Set(String),
    /// The source buffer's `init = "value:V"`.
    Value(String),
    /// A `.maxntid`, `.reqntid`, `.minnctapersm` or `.maxnreg` with these values.
    Tuning(&'static str, String),
    /// `.version`, `.target` or `.align` with this value.
    Directive(&'static str, String),
    /// A comment line, identifier or label this long.
    LongLine(&'static str, usize),
    /// This many kilobytes of comments before the kernel (a large file).
    Padding(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let space = prop::sample::select(vec![
        "local", "shared", "global", "const", "mshared", "param",
    ]);
    let ty = prop::sample::select(vec![".b8", ".b32", ".v4 .b32", ".f64", ".v2 .u64"]);
    let dims = || [extreme(), extreme(), extreme()];
    prop_oneof![
        depth().prop_map(Edit::NestBody),
        depth().prop_map(Edit::NestInit),
        depth().prop_map(Edit::NestVector),
        depth().prop_map(Edit::NestParen),
        depth().prop_map(Edit::LongSum),
        extreme().prop_map(Edit::Regs),
        (space, ty, extreme()).prop_map(|(s, t, n)| Edit::Array(s, t, n)),
        (dims(), dims()).prop_map(|(g, b)| Edit::Launch(g, b)),
        prop_oneof![
            3 => extreme(),
            1 => any::<u32>().prop_map(|b| format!("0f{b:08X}")),
            1 => any::<u64>().prop_map(|b| format!("0d{b:016X}")),
            1 => "[0-9]{20,400}",
        ]
        .prop_map(Edit::Imm),
        extreme().prop_map(Edit::Arg),
        extreme().prop_map(Edit::Set),
        extreme().prop_map(Edit::Value),
        (
            prop::sample::select(vec![".maxntid", ".reqntid", ".minnctapersm", ".maxnreg"]),
            prop::collection::vec(extreme(), 1..4).prop_map(|v| v.join(", "))
        )
            .prop_map(|(d, v)| Edit::Tuning(d, v)),
        (
            prop::sample::select(vec!["version", "target", "align"]),
            prop_oneof![
                extreme(),
                "[0-9]{1,30}\\.[0-9]{1,30}",
                "sm_[0-9]{1,25}[af]?",
            ]
        )
            .prop_map(|(d, v)| Edit::Directive(d, v)),
        (
            prop::sample::select(vec!["comment", "identifier", "label", "register"]),
            depth()
        )
            .prop_map(|(k, n)| Edit::LongLine(k, n)),
        (0usize..4096).prop_map(Edit::Padding),
    ]
}

/// The PTX, the workload and the extra arguments of add_one with `edits` applied in order.
fn apply(edits: &[Edit]) -> (String, String, Vec<String>) {
    let mut ptx = PTX.to_string();
    let mut toml = WORKLOAD.to_string();
    let mut args = vec![];
    let grid_x = "\"ceil_div(n, 256)\"";
    for e in edits {
        match e {
            Edit::NestBody(d) => {
                ptx = ptx.replacen(
                    "\tret;",
                    &format!("{}ret;{}", "{".repeat(*d), "}".repeat(*d)),
                    1,
                )
            }
            Edit::NestInit(d) => {
                let g = format!(
                    ".address_size 64\n.global .b32 g[1] = {}1{};",
                    "{".repeat(*d),
                    "}".repeat(*d)
                );
                ptx = ptx.replacen(".address_size 64", &g, 1);
            }
            Edit::NestVector(d) => {
                let v = format!(
                    "mov.b64 %rd1, {}%r1{};\n\tret;",
                    "{".repeat(*d),
                    "}".repeat(*d)
                );
                ptx = ptx.replacen("\tret;", &v, 1);
            }
            Edit::NestParen(d) => {
                let x = format!("\"{}n{}\"", "(".repeat(*d), ")".repeat(*d));
                toml = toml.replacen(grid_x, &x, 1);
            }
            Edit::LongSum(n) => {
                let x = format!("\"{}\"", vec!["1"; (*n).max(1)].join("+"));
                toml = toml.replacen(grid_x, &x, 1);
            }
            Edit::Regs(n) => ptx = ptx.replacen("%r<8>", &format!("%r<{n}>"), 1),
            Edit::Array(space, ty, n) => {
                let decl = |s: &str| format!(".{s} .align 16 {ty} arr[{n}];");
                ptx = match *space {
                    "local" | "shared" => ptx.replacen(
                        "\t.reg .pred",
                        &format!("\t{}\n\t.reg .pred", decl(space)),
                        1,
                    ),
                    "mshared" => ptx.replacen(
                        ".address_size 64",
                        &format!(".address_size 64\n{}", decl("shared")),
                        1,
                    ),
                    "param" => ptx.replacen(
                        ".param .u32 add_one_param_2",
                        &format!(".param .u32 add_one_param_2,\n\t.param .align 16 {ty} arr[{n}]"),
                        1,
                    ),
                    s => ptx.replacen(
                        ".address_size 64",
                        &format!(".address_size 64\n{}", decl(s)),
                        1,
                    ),
                };
            }
            Edit::Launch(g, b) => {
                toml = toml
                    .replacen(
                        "grid = [\"ceil_div(n, 256)\", 1, 1]",
                        &format!("grid = [{}]", g.join(", ")),
                        1,
                    )
                    .replacen(
                        "block = [256, 1, 1]",
                        &format!("block = [{}]", b.join(", ")),
                        1,
                    )
            }
            Edit::Imm(v) => {
                ptx = ptx.replacen(
                    "add.s32 \t%r7, %r6, 1;",
                    &format!("add.s32 \t%r7, %r6, {v};"),
                    1,
                )
            }
            Edit::Arg(v) => {
                toml = toml.replacen(
                    "args = [\"dst\", \"src\", \"n\"]",
                    &format!("args = [\"dst\", \"src\", {v}]"),
                    1,
                )
            }
            Edit::Set(v) => args.extend(["--set".to_string(), format!("n={v}")]),
            Edit::Value(v) => {
                toml = toml.replacen("init = \"iota\"", &format!("init = \"value:{v}\""), 1)
            }
            Edit::Tuning(d, v) => ptx = ptx.replacen(")\n{", &format!(")\n{d} {v}\n{{"), 1),
            Edit::Directive("version", v) => {
                ptx = ptx.replacen(".version 8.8", &format!(".version {v}"), 1)
            }
            Edit::Directive("target", v) => {
                ptx = ptx.replacen(".target sm_80", &format!(".target {v}"), 1)
            }
            Edit::Directive(_, v) => {
                ptx = ptx.replacen(
                    ".address_size 64",
                    &format!(".address_size 64\n.global .align {v} .b8 aligned[8];"),
                    1,
                )
            }
            Edit::LongLine(kind, n) => {
                let long = "a".repeat((*n).max(1));
                ptx = match *kind {
                    "comment" => ptx.replacen("\tret;", &format!("// {long}\n\tret;"), 1),
                    "identifier" => ptx.replacen(
                        ".address_size 64",
                        &format!(".address_size 64\n.global .b32 {long};"),
                        1,
                    ),
                    "label" => ptx.replacen("\tret;", &format!("${long}:\n\tret;"), 1),
                    _ => ptx.replacen("\tret;", &format!("\tmov.u32 %{long}, 1;\n\tret;"), 1),
                };
            }
            Edit::Padding(kb) => {
                let line = format!("// {}\n", "x".repeat(1021));
                ptx = ptx.replacen(".version", &format!("{}.version", line.repeat(*kb)), 1);
            }
        }
    }
    (ptx, toml, args)
}

static CASE: AtomicUsize = AtomicUsize::new(0);

/// Runs `sim run configs/h200.toml` on add_one with `edits` applied, under the 4 GiB limit, and
/// checks the outcome (module docs); the first failure is the proptest failure.
fn check(edits: &[Edit]) -> Result<(), TestCaseError> {
    let (ptx, toml, extra) = apply(edits);
    let tag = format!("fuzz{}", CASE.fetch_add(1, Ordering::Relaxed));
    let p = workload(&tag, |_| ptx.clone(), |_| toml.clone());
    let mut args = vec!["run", "configs/h200.toml", &p, "--ptxas", "off"];
    args.extend(extra.iter().map(String::as_str));
    let (out, took) = sim_within(&args, TIME_BOUND);
    let _ = std::fs::remove_dir_all(Path::new(&p).parent().unwrap());
    if took > Duration::from_secs(2) {
        eprintln!("slow: {took:?} {edits:?}");
    }
    prop_assert!(took < TIME_BOUND, "took {took:?}\n{out}");
    prop_assert!(!out.stderr.contains("panicked"), "{out}");
    match out.code {
        Some(0) => {}
        Some(2) => {
            // A command-line value clap refuses (`--set n=2^64`) is one line too.
            let lines: Vec<&str> = out.stderr.lines().collect();
            prop_assert!(lines.len() == 1 && lines[0].starts_with("error: "), "{out}");
        }
        _ => prop_assert!(false, "expected exit code 0 or 2\n{out}"),
    }
    Ok(())
}

/// `sim args...` as [`sim`] runs it, killed at `bound`; what it printed and how long it took.
fn sim_within(args: &[&str], bound: Duration) -> (Outcome, Duration) {
    let dir = std::env::temp_dir().join(format!(
        "gpumemsim-fuzz-out-{}-{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (so, se) = (dir.join("stdout"), dir.join("stderr"));
    let mut cmd = limited();
    cmd.args(args)
        .current_dir(root())
        .stdout(std::fs::File::create(&so).unwrap())
        .stderr(std::fs::File::create(&se).unwrap());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("sim runs");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let out = Outcome {
        command: format!("sim {}", args.join(" ")),
        code: status.and_then(|s| s.code()),
        stdout: read(&so),
        stderr: read(&se),
    };
    let _ = std::fs::remove_dir_all(&dir);
    (out, took)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn nesting_depths_end_in_a_run_or_an_error(
        e in prop_oneof![
            depth().prop_map(Edit::NestBody),
            depth().prop_map(Edit::NestInit),
            depth().prop_map(Edit::NestVector),
            depth().prop_map(Edit::NestParen),
            depth().prop_map(Edit::LongSum),
        ]
    ) {
        check(&[e])?;
    }

    #[test]
    fn declaration_sizes_end_in_a_run_or_an_error(
        e in prop_oneof![
            extreme().prop_map(Edit::Regs),
            (
                prop::sample::select(vec!["local", "shared", "global", "const", "mshared", "param"]),
                prop::sample::select(vec![".b8", ".b32", ".v4 .b32", ".f64"]),
                extreme(),
            )
                .prop_map(|(s, t, n)| Edit::Array(s, t, n)),
        ]
    ) {
        check(&[e])?;
    }

    #[test]
    fn grid_and_block_sizes_end_in_a_run_or_an_error(
        g in [extreme(), extreme(), extreme()],
        b in [extreme(), extreme(), extreme()],
    ) {
        check(&[Edit::Launch(g, b)])?;
    }

    #[test]
    fn numeric_extremes_end_in_a_run_or_an_error(
        e in prop_oneof![
            extreme().prop_map(Edit::Imm),
            any::<u32>().prop_map(|b| Edit::Imm(format!("0f{b:08X}"))),
            extreme().prop_map(Edit::Arg),
            extreme().prop_map(Edit::Set),
            extreme().prop_map(Edit::Value),
        ]
    ) {
        check(&[e])?;
    }

    #[test]
    fn long_lines_and_large_files_end_in_a_run_or_an_error(
        e in prop_oneof![
            (
                prop::sample::select(vec!["comment", "identifier", "label", "register"]),
                depth(),
            )
                .prop_map(|(k, n)| Edit::LongLine(k, n)),
            (0usize..4096).prop_map(Edit::Padding),
        ]
    ) {
        check(&[e])?;
    }

    /// Two to four edits of any class together.
    #[test]
    fn mixed_hostile_edits_end_in_a_run_or_an_error(edits in prop::collection::vec(edit(), 2..5)) {
        check(&edits)?;
    }
}

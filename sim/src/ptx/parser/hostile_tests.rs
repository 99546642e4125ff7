//! Issue 40: PTX that overflowed the parser's stack or built huge messages. Each runs on a thread
//! with a 256 KiB stack, smaller than the test harness's (2 MiB) and the main thread's (8 MiB).

use super::*;

const N: usize = 30_000;

/// `add_one`-like module whose kernel body is `body`, after `decls` at module level.
fn module(decls: &str, body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n{decls}\n\
.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
    )
}

/// Parses `src` on a thread with a small stack.
fn parse_small_stack(src: String) -> Result<Module, Vec<Error>> {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || parse_all(&src, "t.ptx"))
        .unwrap()
        .join()
        .expect("no stack overflow")
}

#[test]
fn deeply_nested_scopes_parse_without_recursion() {
    let body = format!("{}mov.u32 %r1, 1;{}", "{".repeat(N), "}".repeat(N));
    let m = parse_small_stack(module("", &body)).unwrap();
    assert_eq!(m.entry("k").unwrap().body.len(), 2); // the mov and the ret
    let e = parse_small_stack(module("", &"{".repeat(N))).unwrap_err();
    assert!(
        e[0].to_string().contains("unclosed function body"),
        "{}",
        e[0]
    );
}

#[test]
fn deeply_nested_initializers_parse_without_recursion() {
    let init = format!("{}7{}", "{".repeat(N), "}".repeat(N));
    let m = parse_small_stack(module(&format!(".global .b32 g[1] = {init};"), "")).unwrap();
    assert_eq!(m.globals[0].init, 7u32.to_le_bytes());
    let m = parse(
        &module(".global .b32 g[5] = {{1, 2}, {}, {3, {4}}, 5,};", ""),
        "t.ptx",
    )
    .unwrap();
    let words: Vec<u32> = m.globals[0]
        .init
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, [1, 2, 3, 4, 5]);
    for bad in ["{1 2}", "{1, {2}", "{,}", "{%r1}"] {
        let src = module(&format!(".global .b32 g[2] = {bad};"), "");
        assert!(parse(&src, "t.ptx").is_err(), "{bad}");
    }
}

#[test]
fn nested_vector_operands_are_errors_naming_the_line() {
    for (open, close) in [("{", "}"), ("(", ")")] {
        let body = format!("mov.b64 %rd1, {}%r1{};", open.repeat(N), close.repeat(N));
        let e = parse_small_stack(module("", &body)).unwrap_err();
        let first = e[0].to_string();
        assert!(
            first.starts_with("t.ptx:9:16: a vector or argument list cannot contain another list"),
            "{first}"
        );
        // The source line is cut, not quoted whole.
        assert!(first.len() < 300, "{} bytes", first.len());
        assert!(first.ends_with(" ...`"), "{first}");
    }
}

/// The first error of `src`, as printed.
fn first_error(src: &str) -> String {
    parse_all(src, "t.ptx").unwrap_err()[0].to_string()
}

#[test]
fn register_counts_are_refused_before_names_are_built() {
    let start = std::time::Instant::now();
    for n in ["2147483648", "100000000", "65536"] {
        let e = first_error(&module("", &format!(".reg .b32 %q<{n}>;")));
        assert!(
            e.starts_with("t.ptx:9:11: more than 65535 registers declared in this function"),
            "{e}"
        );
    }
    assert!(start.elapsed().as_secs() < 2, "{:?}", start.elapsed());
    let e = first_error(&module("", "{ .reg .b32 %q<4294967295>; }"));
    assert!(e.contains("more than 65535 registers"), "{e}");
    assert!(parse(&module("", ".reg .b32 %q<65527>;"), "t.ptx").is_ok());
}

#[test]
fn duplicate_registers_labels_and_parameters_are_errors_naming_the_line() {
    // As ptxas 12.9 refuses them ("Duplicate definition of variable '%r3'", "... of label").
    let e = first_error(&module("", ".reg .b32 %r3;"));
    assert!(
        e.starts_with("t.ptx:9:11: register `%r3` declared twice in one scope"),
        "{e}"
    );
    let e = first_error(&module("", ".reg .b32 %x;\n.reg .f32 %x;"));
    assert!(
        e.starts_with("t.ptx:10:11: register `%x` declared twice"),
        "{e}"
    );
    let e = first_error(&module("", "{ .reg .b32 %x, %x; }"));
    assert!(
        e.contains("register `%x` declared twice in one scope"),
        "{e}"
    );
    let e = first_error(&module("", "L1:\nL1:"));
    assert!(
        e.starts_with("t.ptx:10:1: label defined twice in one scope"),
        "{e}"
    );
    // A nested scope may shadow a register and reuse a label of a sibling scope, as ptxas accepts.
    let ok = module(
        "",
        "{ .reg .b32 %r1; L1: bra L1; }\n{ .reg .b32 %r1; L1: bra L1; }",
    );
    assert!(parse(&ok, "t.ptx").is_ok());
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n\
.visible .entry k(.param .u32 a, .param .u64 a) { ret; }\n";
    assert!(first_error(src).starts_with("t.ptx:4:46: parameter name used twice"));
}

#[test]
fn parameter_space_is_limited_as_ptxas_limits_it() {
    let kernel = |version: &str, target: &str, bytes: u64| {
        format!(
            ".version {version}\n.target {target}\n.address_size 64\n\
.visible .entry k(.param .align 4 .b8 p[{bytes}]) {{ ret; }}\n"
        )
    };
    assert!(parse(&kernel("8.8", "sm_80", 32_764), "t.ptx").is_ok());
    let e = first_error(&kernel("8.8", "sm_80", 32_765));
    assert!(
        e.starts_with("t.ptx:4:17: kernel `k` takes 32765 bytes of parameters; at most 32764"),
        "{e}"
    );
    assert!(parse(&kernel("7.8", "sm_80", 4_352), "t.ptx").is_ok());
    assert!(first_error(&kernel("7.8", "sm_80", 4_353)).contains("at most 4352"));
    assert!(first_error(&kernel("8.8", "sm_60", 5_000)).contains("at most 4352"));
    // 1 GiB of parameters is refused at once.
    assert!(first_error(&kernel("8.8", "sm_90a", 1 << 30)).contains("at most 32764"));
}

#[test]
fn alignments_must_be_powers_of_two() {
    for decl in [
        ".global .align 3 .b8 g[8];",
        ".global .align 0 .b8 g[8];",
        ".global .align -8 .b8 g[8];",
    ] {
        let e = first_error(&module(decl, ""));
        assert!(
            e.starts_with("t.ptx:4:16: alignment must be a power of two"),
            "{decl}: {e}"
        );
    }
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n\
.visible .entry k(.param .align 6 .b8 p[8]) { ret; }\n";
    assert!(first_error(src).starts_with("t.ptx:4:33: alignment must be a power of two"));
    assert!(parse(&module(".global .align 16 .b8 g[8];", ""), "t.ptx").is_ok());
}

#[test]
fn version_and_target_must_open_the_module() {
    // ptxas: "Missing .version directive at start of file", "Missing .target directive",
    // "Unsupported .target 'sm_xyz'".
    let good = module("", "");
    let cases = [
        (
            good.replacen(".version 8.0\n", "", 1),
            "t.ptx:1:1: missing .version directive",
        ),
        (
            good.replacen(".target sm_80\n", "", 1),
            "t.ptx:2:1: missing .target directive",
        ),
        (
            good.replacen(
                ".version 8.0\n.target sm_80\n",
                ".target sm_80\n.version 8.0\n",
                1,
            ),
            "t.ptx:1:1: missing .version",
        ),
        (
            good.replacen("8.0", "8", 1),
            "t.ptx:1:10: malformed .version",
        ),
        (
            good.replacen("8.0", "x.y", 1),
            "t.ptx:1:10: malformed .version",
        ),
        (
            good.replacen("sm_80", "sm_xyz", 1),
            "t.ptx:2:9: unsupported .target",
        ),
        (String::new(), "t.ptx:1:1: missing .version directive"),
    ];
    for (src, want) in cases {
        let e = first_error(&src);
        assert!(e.starts_with(want), "{want}: {e}");
    }
    for t in [
        "sm_90a",
        "sm_100f",
        "compute_70",
        "sm_80, texmode_independent",
    ] {
        assert!(parse(&good.replacen("sm_80", t, 1), "t.ptx").is_ok(), "{t}");
    }
}

/// A kernel `k` whose header ends in `tuning`.
fn tuned(tuning: &str) -> String {
    format!(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{tuning}\n{{ ret; }}\n")
}

#[test]
fn tuning_directives_are_kept_as_ptxas_reads_them() {
    let t = |d: &str| {
        parse(&tuned(d), "t.ptx").unwrap().functions[0]
            .tuning
            .clone()
    };
    let k = t(".maxntid 256, 2 .minnctapersm 3 .maxnreg 40");
    assert_eq!(
        k.maxntid,
        Some(ThreadBound {
            dims: [256, 2, 1],
            line: 5
        })
    );
    assert_eq!(k.maxntid.unwrap().threads(), 512);
    assert_eq!(
        (k.minnctapersm, k.maxnreg, k.reqntid),
        (Some(3), Some(40), None)
    );
    // A directive given twice keeps its last value (ptxas 12.9 writes the last one in the cubin).
    assert_eq!(
        t(".reqntid 16\n.reqntid 32, 1, 2").reqntid.unwrap().dims,
        [32, 1, 2]
    );
    assert_eq!(t(".maxntid 0x40").maxntid.unwrap().dims, [64, 1, 1]);
    // Other directives are skipped with their numbers.
    assert_eq!(
        t(".maxclusterrank 8 .noreturn .maxntid 8")
            .maxntid
            .unwrap()
            .dims,
        [8, 1, 1]
    );
    assert_eq!(t(""), Tuning::default());
}

#[test]
fn tuning_directives_ptxas_refuses_are_errors_naming_the_line() {
    for (d, want) in [
        // ptxas: "Conflicting directives: .maxntid and .reqntid cannot both be specified".
        (
            ".maxntid 64 .reqntid 64",
            "t.ptx:5:13: .maxntid and .reqntid cannot both be given",
        ),
        // ptxas: "Positive non-zero value expected for maxntid".
        (
            ".maxntid 0",
            "t.ptx:5:10: positive non-zero value expected for .maxntid",
        ),
        (
            ".reqntid 32, 0",
            "t.ptx:5:14: positive non-zero value expected for .reqntid",
        ),
        (
            ".minnctapersm 0",
            "t.ptx:5:15: positive non-zero value expected for .minnctapersm",
        ),
        (
            ".maxnreg -1",
            "t.ptx:5:10: positive non-zero value expected for .maxnreg",
        ),
        // ptxas: "Constant overflow".
        (
            ".maxntid 4294967296",
            "t.ptx:5:10: positive non-zero value expected for .maxntid",
        ),
        // ptxas: "syntax error".
        (
            ".maxntid 1, 2, 3, 4",
            "t.ptx:5:17: .maxntid takes at most 3 values",
        ),
        (
            ".maxnreg 1, 2",
            "t.ptx:5:11: .maxnreg takes at most 1 values",
        ),
    ] {
        let e = first_error(&tuned(d));
        assert!(e.starts_with(want), "{d}: {e}");
    }
}

#[test]
fn targets_run_where_the_driver_loads_them() {
    let arch = |t: &str| {
        let m = parse(&module("", "").replacen("sm_80", t, 1), "t.ptx").unwrap();
        assert_eq!(m.target_line, 2);
        m.arch().unwrap()
    };
    // (target, GPU, loads): as ptxas 12.9 -arch=sm_XY answers for the same pair.
    for (t, cc, ok) in [
        ("sm_80", (9, 0), true),
        ("sm_90", (9, 0), true),
        ("sm_100", (9, 0), false),
        ("compute_90", (9, 0), true),
        ("sm_90a", (9, 0), true),
        ("sm_90a", (10, 0), false),
        ("sm_100a", (9, 0), false),
        ("sm_100a", (10, 3), false),
        ("sm_100f", (10, 3), true),
        ("sm_103f", (10, 0), false),
        ("sm_100f", (12, 0), false),
    ] {
        assert_eq!(arch(t).runs_on(cc), ok, "{t} on {cc:?}");
    }
    assert_eq!(arch("sm_120a").cc, (12, 0));
    assert_eq!(arch("sm_100f").variant, ArchVariant::Family);
}

/// Issue 39: instructions the simulator does not execute parse, whatever their operand syntax,
/// and leave the other kernels of the module runnable; decoding the kernel that holds one is the
/// error, naming its line. (`mma`, `ldmatrix`, `cp.async` and 1-D/2-D `tex` are executed since;
/// `tex.3d` and TMA's `cp.async.bulk.tensor` are not.)
#[test]
fn unsupported_instructions_parse_and_fail_only_their_kernel() {
    let src = "\
.version 8.0
.target sm_90
.address_size 64
.visible .entry tensor(.param .u64 p)
{
    .reg .b32 %r<20>;
    .reg .f32 %f<20>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r9];
    cp.async.ca.shared.global [%r1], [%rd1], 16;
    @%p1 tex.3d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f9, %f10, %f11, %f12}];
    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];
    ret;
}
.visible .entry plain(.param .u64 p)
{
    .reg .b32 %r<3>;
    mov.u32 %r1, WARP_SZ;
    add.s32 %r2, %r1, -1;
    ret;
}
";
    let m = parse_all(src, "t.ptx").unwrap_or_else(|e| panic!("{}", e[0]));
    let symbols = Default::default();
    let plain = m.entry("plain").unwrap();
    let p = crate::ptx::decode::decode(plain, &symbols, src, "t.ptx").unwrap();
    assert_eq!(p.insts[0].src[0], crate::ptx::decode::Src::Imm(32));
    let e = crate::ptx::decode::decode(m.entry("tensor").unwrap(), &symbols, src, "t.ptx")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.ptx:13:5: `tex` needs .1d or .2d (3-D, cube"),
        "{e}"
    );
    // Each is kept as an unsupported instruction with its line.
    let lines: Vec<u32> = m
        .entry("tensor")
        .unwrap()
        .body
        .iter()
        .filter_map(|s| match s {
            Statement::Inst(i) if i.op == crate::ptx::inst::Op::Unsupported => Some(i.line),
            _ => None,
        })
        .collect();
    assert_eq!(lines, [13, 14]);
    let e = crate::ptx::inst::unsupported_reason(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
    );
    assert!(e.contains("cp.async.bulk"), "{e}");
    // A guarded one names its opcode, not the guard; an unsupported modifier is named too.
    let text = "@%p1 tex.3d.v4.f32.f32 {%f1}, [%rd2, {%f9, %f10}];";
    assert!(crate::ptx::inst::unsupported_reason(text).starts_with("`tex` needs .1d or .2d"));
    let e = crate::ptx::inst::unsupported_reason("ld.global.L1::evict_last.u32 %r1, [%rd1];");
    assert_eq!(e, "unsupported modifier .L1::evict_last on `ld`");
    // A statement that never ends is still a parse error.
    let bad = src.replace("[%rd1], 16;", "[%rd1], 16 }");
    assert!(parse_all(&bad, "t.ptx").is_err());
}

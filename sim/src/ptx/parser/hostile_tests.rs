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

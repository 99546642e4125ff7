//! Tests of the expression language: what it computes, and every kind of text it refuses.

use super::*;

fn p() -> BTreeMap<String, i64> {
    BTreeMap::from([("n".to_string(), 12_800_000i64), ("k".to_string(), 7)])
}

fn ok(text: &str) -> i64 {
    eval(text, &p()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> String {
    match eval(text, &p()) {
        Ok(v) => panic!("`{text}` evaluated to {v}, expected an error"),
        Err(e) => e,
    }
}

#[test]
fn params_and_functions() {
    assert_eq!(ok("ceil_div(n, 1024)"), 12_500);
    assert_eq!(ok("ceil_div(n + 1, 1024)"), 12_501);
    assert_eq!(ok("min(n, 7) * 2 % 5"), 4);
    assert_eq!(ok("max(n / 1000, 3)"), 12_800);
    assert_eq!(ok("  k  "), 7);
    assert_eq!(ok("42"), 42);
}

#[test]
fn precedence_associativity_and_signs() {
    assert_eq!(ok("1 + 2 * 3"), 7);
    assert_eq!(ok("(1 + 2) * 3"), 9);
    assert_eq!(ok("10 - 4 - 3"), 3);
    assert_eq!(ok("100 / 10 / 5"), 2);
    assert_eq!(ok("2 * 3 % 4"), 2);
    assert_eq!(ok("-k + 10"), 3);
    assert_eq!(ok("2 * -3"), -6);
    assert_eq!(ok("--3"), 3);
    // Truncation toward zero, as C.
    assert_eq!(ok("-7 / 2"), -3);
    assert_eq!(ok("-7 % 2"), -1);
    assert_eq!(ok("max(min(k, 3), ceil_div(k, 2))"), 4);
}

/// Issue 42: evalexpr read `//` as a comment, so this was `(n + 15)`: a 16x larger grid.
#[test]
fn floor_division_spelling_is_an_error() {
    let e = err("(n + 15) // 16");
    assert!(e.contains("unexpected `/` at column 11"), "{e}");
    assert!(e.contains("allowed: integers, params"), "{e}");
}

#[test]
fn anything_outside_the_language_is_an_error() {
    for (text, found) in [
        ("2 ** 3", "unexpected `*`"),
        ("2 ^ 3", "unexpected `^`"),
        ("1.5", "unexpected `.`"),
        ("n == 1", "unexpected `=`"),
        ("n; 1", "unexpected `;`"),
        ("\"n\"", "unexpected `\"`"),
        ("n +", "unexpected end of expression"),
        ("(n", "unexpected end of expression"),
        ("n)", "unexpected `)`"),
        ("n k", "unexpected `k`"),
        ("", "unexpected end of expression"),
        ("+5", "unexpected `+`"),
        ("min(n)", "unexpected `)`"),
        ("min(n, 1, 2)", "unexpected `,`"),
        ("true", "unknown name `true`"),
        ("m * 2", "unknown name `m` (params: k, n)"),
        ("pow(2, 3)", "unknown function `pow`"),
        ("n # comment", "unexpected `#`"),
        ("n\u{3b1}", "unexpected `\u{3b1}` at column 2"),
    ] {
        let e = err(text);
        assert!(e.contains(found), "`{text}`: {e}");
        assert!(
            e.contains(&format!("`{text}`")),
            "quotes the expression: {e}"
        );
    }
}

#[test]
fn arithmetic_is_checked() {
    for (text, found) in [
        ("9223372036854775807 + 1", "overflows 64 bits"),
        ("-9223372036854775807 - 2", "overflows 64 bits"),
        ("4611686018427387904 * 2", "overflows 64 bits"),
        (
            "9223372036854775808",
            "the integer 9223372036854775808 overflows",
        ),
        ("-(-9223372036854775807 - 1)", "overflows 64 bits"),
        ("(-9223372036854775807 - 1) / -1", "overflows 64 bits"),
        ("(-9223372036854775807 - 1) % -1", "overflows 64 bits"),
        ("n / 0", "division by zero"),
        ("n % (k - 7)", "remainder by zero"),
        ("ceil_div(n, 0)", "division by zero"),
        (
            "ceil_div(-9223372036854775807 - 1, -1)",
            "overflows 64 bits",
        ),
    ] {
        let e = err(text);
        assert!(e.contains(found), "`{text}`: {e}");
    }
    assert_eq!(ok("9223372036854775807"), i64::MAX);
    assert_eq!(ok("-9223372036854775807 - 1"), i64::MIN);
}

#[test]
fn ceil_div_rounds_up_for_any_signs_and_never_wraps() {
    for a in -7i64..=7 {
        for b in (-3i64..=3).filter(|&b| b != 0) {
            let want = (a as f64 / b as f64).ceil() as i64;
            assert_eq!(ceil_div(a, b), Some(want), "ceil_div({a}, {b})");
        }
    }
    assert_eq!(ceil_div(i64::MAX, 2), Some(i64::MAX / 2 + 1));
    assert_eq!(ceil_div(-9_223_372_036_854_775_806, -1), Some(i64::MAX - 1));
    assert_eq!(ceil_div(i64::MIN, -1), None);
    assert_eq!(ceil_div(1, 0), None);
}

/// Issue 40: these overflowed the stack; run on a thread with a small stack, as tests are.
#[test]
fn long_and_deep_expressions_are_errors_not_stack_overflows() {
    let long = vec!["1"; 40_000].join("+");
    let deep = format!("{}1{}", "(".repeat(30_000), ")".repeat(30_000));
    let calls = format!("{}1{}", "min(".repeat(30_000), ", 1)".repeat(30_000));
    let t = std::thread::Builder::new().stack_size(512 << 10);
    let r = t.spawn(move || {
        let p = BTreeMap::new();
        (eval(&long, &p), eval(&deep, &p), eval(&calls, &p))
    });
    let (long, deep, calls) = r.unwrap().join().unwrap();
    assert!(long.unwrap_err().contains("allowed: at most 1024"));
    assert!(deep.unwrap_err().contains("allowed: at most 1024"));
    assert!(calls.unwrap_err().contains("allowed: at most 1024"));
    let just = format!("{}1{}", "(".repeat(33), ")".repeat(33));
    assert!(eval(&just, &BTreeMap::new())
        .unwrap_err()
        .contains("nested more than 32"));
    let most = format!("{}1{}", "max(".repeat(32), ", 1)".repeat(32));
    let r = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let long = vec!["1"; 512].join("+");
            let negs = format!("{}1", "-".repeat(1023));
            let p = BTreeMap::new();
            (eval(&most, &p), eval(&long, &p), eval(&negs, &p))
        });
    assert_eq!(r.unwrap().join().unwrap(), (Ok(1), Ok(512), Ok(-1)));
}

//! Integer expressions of workload files, evaluated with the `evalexpr` crate.
//!
//! Supported: integer literals, the workload's params, `+ - * / %`, parentheses, `min(a, b)`,
//! `max(a, b)` (evalexpr built-ins) and `ceil_div(a, b)`. Division truncates toward zero.
//! Arithmetic is checked: a result outside `i64` is an error, never a wrapped value.
//!
//! evalexpr builds and evaluates its tree recursively, so the text is bounded first
//! ([`MAX_LEN`], [`MAX_DEPTH`]): a 40,000-term or deeply parenthesised expression would otherwise
//! overflow the stack (issue 40).

use evalexpr::{
    ContextWithMutableFunctions, ContextWithMutableVariables, DefaultNumericTypes, EvalexprError,
    Function, HashMapContext, Value,
};
use std::collections::BTreeMap;

/// The longest expression accepted, in bytes: far beyond any launch shape, and short enough that
/// evalexpr's recursion stays within a 512 KiB stack.
pub const MAX_LEN: usize = 1024;

/// The deepest nesting of parentheses (a function call's included) accepted.
pub const MAX_DEPTH: usize = 32;

/// `ceil(a / b)` for any signs; `None` when `b` is 0 or the result is outside `i64`.
pub fn ceil_div(a: i64, b: i64) -> Option<i64> {
    let (q, r) = (a.checked_div(b)?, a.checked_rem(b)?);
    // Truncation rounded toward zero; a positive exact quotient was rounded down.
    if r != 0 && (r > 0) == (b > 0) {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

/// Refuses text longer than [`MAX_LEN`] or nested deeper than [`MAX_DEPTH`].
fn check_size(text: &str) -> Result<(), String> {
    if text.len() > MAX_LEN {
        return Err(format!(
            "expression of {} bytes, allowed: at most {MAX_LEN}",
            text.len()
        ));
    }
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => continue,
        }
        if depth > MAX_DEPTH {
            return Err(format!(
                "`{text}`: parentheses nested more than {MAX_DEPTH} deep"
            ));
        }
    }
    Ok(())
}

/// Evaluates `text` to an integer with `params` bound; `Err` is a readable message.
pub fn eval(text: &str, params: &BTreeMap<String, i64>) -> Result<i64, String> {
    check_size(text)?;
    let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
    for (k, v) in params {
        ctx.set_value(k.clone(), Value::Int(*v))
            .map_err(|e| e.to_string())?;
    }
    ctx.set_function(
        "ceil_div".into(),
        Function::new(|arg| {
            let t = arg.as_fixed_len_tuple(2)?;
            let (a, b): (i64, i64) = (t[0].as_int()?, t[1].as_int()?);
            if b == 0 {
                return Err(EvalexprError::CustomMessage("ceil_div by zero".into()));
            }
            ceil_div(a, b).map(Value::Int).ok_or_else(|| {
                EvalexprError::CustomMessage(format!("ceil_div({a}, {b}) overflows 64 bits"))
            })
        }),
    )
    .map_err(|e| e.to_string())?;
    evalexpr::eval_int_with_context(text, &ctx)
        .map_err(|e| format!("cannot evaluate `{text}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_functions() {
        let p = BTreeMap::from([("n".to_string(), 12_800_000i64)]);
        assert_eq!(eval("ceil_div(n, 1024)", &p), Ok(12_500));
        assert_eq!(eval("ceil_div(n + 1, 1024)", &p), Ok(12_501));
        assert_eq!(eval("min(n, 7) * 2 % 5", &p), Ok(4));
        assert_eq!(eval("max(n / 1000, 3)", &p), Ok(12_800));
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
        let e = eval("ceil_div(-9223372036854775807 - 1, -1)", &BTreeMap::new()).unwrap_err();
        assert!(e.contains("overflows 64 bits"), "{e}");
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
                (eval(&most, &BTreeMap::new()), eval(&long, &BTreeMap::new()))
            });
        assert_eq!(r.unwrap().join().unwrap(), (Ok(1), Ok(512)));
    }

    #[test]
    fn unknown_name_is_an_error() {
        let e = eval("m * 2", &BTreeMap::new()).unwrap_err();
        assert!(e.contains("`m * 2`"), "{e}");
    }
}

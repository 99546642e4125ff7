//! Integer expressions of workload files, evaluated with the `evalexpr` crate.
//!
//! Supported: integer literals, the workload's params, `+ - * / %`, parentheses, `min(a, b)`,
//! `max(a, b)` (evalexpr built-ins) and `ceil_div(a, b)`. Division truncates toward zero.

use evalexpr::{
    ContextWithMutableFunctions, ContextWithMutableVariables, DefaultNumericTypes, EvalexprError,
    Function, HashMapContext, Value,
};
use std::collections::BTreeMap;

/// Evaluates `text` to an integer with `params` bound; `Err` is a readable message.
pub fn eval(text: &str, params: &BTreeMap<String, i64>) -> Result<i64, String> {
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
            Ok(Value::Int((a + b - 1).div_euclid(b)))
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
    fn unknown_name_is_an_error() {
        let e = eval("m * 2", &BTreeMap::new()).unwrap_err();
        assert!(e.contains("`m * 2`"), "{e}");
    }
}

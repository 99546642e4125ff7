//! What-if configs: `--config-set KEY=VALUE` (and Python's `Config.replace`) change keys of a
//! config's TOML *before* it is validated, so a changed value meets the same type and range checks
//! as one written in the file, and an error names the key and says the value came from a set.
//!
//! A key is the dotted path of the TOML (`l1.size_bytes`, `constant.line_bytes`), with `[i]` for an
//! element of an array of tables (`constant.cache[1].line_bytes`, 0-based). A value takes the type
//! of the value it replaces where it parses as one (`sm.clock_mhz=1500` stays a float,
//! `l1.global_caching=false` a boolean, `l1.store_policy=write_back` a string); a new key is read
//! as a TOML value (`512`, `0.5`, `true`, `"text"`), else as a string, and an unknown key is then
//! the same error as in a file.

use toml::{Table, Value};

/// One override: the dotted key and the value as typed.
pub type ConfigSet = (String, String);

/// Parses `KEY=VALUE` (the argument of `--config-set`); the key and the value are trimmed.
/// `Err` says what is wrong (no `=`, an empty key or value).
pub fn parse_config_set(s: &str) -> Result<ConfigSet, String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected KEY=VALUE, e.g. l1.size_bytes=512"))?;
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty() {
        return Err(format!("`{s}`: the key is empty"));
    }
    if v.is_empty() {
        return Err(format!("`{s}`: the value is empty"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// A failed override: the key and why (not in the config's tables, an index out of range).
#[derive(Debug, Clone, PartialEq)]
pub struct SetError {
    /// The dotted key as given.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

/// One step of a dotted key: a table key, optionally with an index into an array of tables.
fn steps(key: &str) -> Option<Vec<(&str, Option<usize>)>> {
    key.split('.')
        .map(|part| match part.split_once('[') {
            None if !part.is_empty() => Some((part, None)),
            None => None,
            Some((name, rest)) => {
                let i = rest.strip_suffix(']')?.parse().ok()?;
                (!name.is_empty()).then_some((name, Some(i)))
            }
        })
        .collect()
}

/// `text` (a TOML value) as a value: a TOML literal, else the text as a string.
fn literal(text: &str) -> Value {
    match format!("v = {text}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(text.into())),
        Err(_) => Value::String(text.to_string()),
    }
}

/// The value `text` means in the place of `old`: of `old`'s type where it parses as one (an
/// integer where a float was becomes that float), else [`literal`].
fn typed_like(old: Option<&Value>, text: &str) -> Value {
    let unquoted = text.trim_matches('"');
    match old {
        Some(Value::Float(_)) => text
            .parse::<f64>()
            .map(Value::Float)
            .unwrap_or_else(|_| literal(text)),
        Some(Value::Integer(_)) => text
            .parse::<i64>()
            .map(Value::Integer)
            .unwrap_or_else(|_| literal(text)),
        Some(Value::Boolean(_)) => text
            .parse::<bool>()
            .map(Value::Boolean)
            .unwrap_or_else(|_| literal(text)),
        Some(Value::String(_)) => Value::String(unquoted.to_string()),
        _ => literal(text),
    }
}

/// Sets `key` to `text` in `table` (the parsed config file).
pub fn set(table: &mut Table, key: &str, text: &str) -> Result<(), SetError> {
    let bad = |message: String| SetError {
        key: key.to_string(),
        message,
    };
    let path = steps(key).ok_or_else(|| {
        bad(
            "not a key: expected dotted names, e.g. l1.size_bytes or constant.cache[0].size_bytes"
                .into(),
        )
    })?;
    let (last, tables) = path.split_last().expect("split yields one part at least");
    let mut here = table;
    let mut walked = String::new();
    for (name, index) in tables {
        walked += if walked.is_empty() { "" } else { "." };
        walked += name;
        let next = here
            .get_mut(*name)
            .ok_or_else(|| bad(format!("the config has no table `{walked}`")))?;
        here = match (next, index) {
            (Value::Table(t), None) => t,
            (Value::Array(a), Some(i)) => {
                let len = a.len();
                match a.get_mut(*i) {
                    Some(Value::Table(t)) => t,
                    _ => {
                        return Err(bad(format!(
                            "`{walked}` has {len} tables: index {i} is out of range"
                        )))
                    }
                }
            }
            (Value::Array(_), None) => {
                return Err(bad(format!(
                    "`{walked}` is an array of tables: say which, `{walked}[0]`"
                )))
            }
            _ => return Err(bad(format!("`{walked}` is not a table"))),
        };
        if let Some(i) = index {
            walked += &format!("[{i}]");
        }
    }
    let (name, index) = last;
    if index.is_some() {
        return Err(bad(
            "an index belongs to an array of tables, not to the last key".into(),
        ));
    }
    let value = typed_like(here.get(*name), text);
    here.insert(name.to_string(), value);
    Ok(())
}

/// `text` (a config file) with `sets` applied in order, as TOML text to validate. `Err` if the
/// text is not TOML (validation of the unchanged text then says where) is `None`.
pub fn apply(text: &str, sets: &[ConfigSet]) -> Result<Option<String>, SetError> {
    let Ok(mut table) = text.parse::<Table>() else {
        return Ok(None);
    };
    for (k, v) in sets {
        set(&mut table, k, v)?;
    }
    Ok(Some(
        toml::to_string(&table).expect("a parsed TOML table serializes"),
    ))
}

/// The note an error of a changed config ends with: the set of that key, else all of them.
pub fn note(key: &str, sets: &[ConfigSet]) -> String {
    let same: Vec<&ConfigSet> = sets
        .iter()
        .filter(|(k, _)| k == key || key.starts_with(&format!("{k}.")))
        .collect();
    let shown: Vec<String> = if same.is_empty() {
        sets.iter().collect::<Vec<_>>()
    } else {
        same
    }
    .iter()
    .map(|(k, v)| format!("{k}={v}"))
    .collect();
    format!("(the value comes from --config-set {})", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "[sm]\nclock_mhz = 1695.0\ncount = 82\n[l1]\nglobal_caching = true\npolicy = \"a\"\n\
[[constant.cache]]\nline_bytes = 64\n[[constant.cache]]\nline_bytes = 256\n";

    fn applied(sets: &[(&str, &str)]) -> Result<Table, SetError> {
        let sets: Vec<ConfigSet> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Ok(apply(TEXT, &sets)?.unwrap().parse().unwrap())
    }

    #[test]
    fn values_take_the_type_they_replace() {
        let t = applied(&[
            ("sm.clock_mhz", "1500"),
            ("sm.count", "40"),
            ("l1.global_caching", "false"),
            ("l1.policy", "b"),
            ("constant.cache[1].line_bytes", "128"),
        ])
        .unwrap();
        assert_eq!(t["sm"]["clock_mhz"], Value::Float(1500.0));
        assert_eq!(t["sm"]["count"], Value::Integer(40));
        assert_eq!(t["l1"]["global_caching"], Value::Boolean(false));
        assert_eq!(t["l1"]["policy"], Value::String("b".into()));
        assert_eq!(t["constant"]["cache"][1]["line_bytes"], Value::Integer(128));
        assert_eq!(t["constant"]["cache"][0]["line_bytes"], Value::Integer(64));
    }

    #[test]
    fn new_keys_and_mistyped_values_are_left_to_validation() {
        let t = applied(&[("sm.new_key", "0.5"), ("sm.count", "many")]).unwrap();
        assert_eq!(t["sm"]["new_key"], Value::Float(0.5));
        assert_eq!(t["sm"]["count"], Value::String("many".into()));
    }

    #[test]
    fn bad_paths_are_errors_naming_the_key() {
        let e = applied(&[("l3.size", "1")]).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("l3.size", "the config has no table `l3`")
        );
        let e = applied(&[("constant.cache[2].line_bytes", "1")]).unwrap_err();
        assert_eq!(
            e.message,
            "`constant.cache` has 2 tables: index 2 is out of range"
        );
        let e = applied(&[("constant.cache.line_bytes", "1")]).unwrap_err();
        assert!(e.message.contains("array of tables"), "{}", e.message);
        assert!(applied(&[("sm..count", "1")])
            .unwrap_err()
            .message
            .starts_with("not a key"));
    }

    #[test]
    fn parse_and_note() {
        assert_eq!(
            parse_config_set(" l1.size_bytes = 512 "),
            Ok(("l1.size_bytes".into(), "512".into()))
        );
        assert!(parse_config_set("l1.size_bytes").is_err());
        assert!(parse_config_set("=1").is_err());
        let sets = vec![
            ("l1.size_bytes".to_string(), "0".to_string()),
            ("sm.count".into(), "2".into()),
        ];
        assert_eq!(
            note("l1.size_bytes", &sets),
            "(the value comes from --config-set l1.size_bytes=0)"
        );
        assert_eq!(
            note("l1", &sets),
            "(the value comes from --config-set l1.size_bytes=0, sm.count=2)"
        );
    }
}

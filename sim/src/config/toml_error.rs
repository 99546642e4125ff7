//! Deserializes TOML so that an error names its dotted key path (`l1.flavor`,
//! `constant.cache[1].ways`) and its `line:col`.
//!
//! The key path comes from `serde_path_to_error`, which tracks where the deserializer is while
//! the `toml` deserializer runs; the line from toml's own byte span of the offending text. The
//! configs, the workload files and the sweep files all read their TOML through [`from_str`].

use serde::de::DeserializeOwned;

/// A TOML file that does not deserialize: the dotted key (`-` when no key can be named, as for
/// a syntax error) and a one-line message that starts with, or ends with, the `line N:C`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TomlError {
    /// Dotted key path, `[i]` for the i-th table of an array (`constant.cache[1].ways`), or `-`.
    pub key: String,
    /// What is wrong and where.
    pub message: String,
}

/// Deserializes `text` into `T`, naming the key path and line of any error.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text))
        .map_err(|e| describe(text, &e.path().to_string(), e.inner()))
}

/// The 1-based line of the value at dotted key path `key` (`constant.cache[1].line_bytes`) in
/// `text`, from toml_edit's spans: for the errors found after deserializing (a value out of
/// range). `None` when the text does not parse or has no such key.
pub(crate) fn key_line(text: &str, key: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item = doc.as_item();
    for segment in key.split('.') {
        let (name, index) = match segment.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']')?.parse::<usize>().ok()?)),
            None => (segment, None),
        };
        item = item.get(name)?;
        if let Some(i) = index {
            item = item.get(i)?;
        }
    }
    Some(line_col(text, item.span()?.start).0)
}

/// 1-based line and column (in characters) of byte offset `pos` in `text`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// `table` + `.` + `key`, without a leading dot at the root.
fn join(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// The name between the first pair of backticks after `prefix`, if `msg` has `prefix`.
fn quoted_after<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    let start = msg.find(prefix)? + prefix.len();
    let rest = msg[start..].strip_prefix('`')?;
    rest.find('`').map(|end| &rest[..end])
}

/// The key and message of toml error `err` on `text`, raised at key path `path` (`.` at the
/// root, as `serde_path_to_error` writes it).
fn describe(text: &str, path: &str, err: &toml::de::Error) -> TomlError {
    let path = if path == "." { "" } else { path };
    let msg = err.message().trim().replace('\n', "; ");
    let at = err.span().map(|span| {
        let (line, col) = line_col(text, span.start);
        (span.is_empty(), format!("line {line}:{col}"))
    });
    // serde names the missing field in its message; the path is the table that lacks it.
    if let Some(name) = quoted_after(&msg, "missing field ") {
        let key = join(path, name);
        let message = match (path, at) {
            ("", _) => format!("missing required table or key `{name}` at the top level"),
            (table, Some((false, at))) => {
                format!("missing required key `{name}` in [{table}] (table at {at})")
            }
            (table, _) => format!("missing required key `{name}` in [{table}]"),
        };
        return TomlError { key, message };
    }
    // A duplicate key is a syntax error, found before any value is deserialized: toml's message
    // names the key and its table.
    let key = match quoted_after(&msg, "duplicate key ") {
        Some(name) => join(quoted_after(&msg, "in table ").unwrap_or(""), name),
        None if path.is_empty() => "-".to_string(),
        None => path.to_string(),
    };
    let message = match at {
        Some((_, at)) => format!("{at}: {msg}"),
        None => msg,
    };
    TomlError { key, message }
}

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::workload::{Source, Workload};

    const WORKLOAD: &str = "name = \"w\"\nptx = \"k.ptx\"\n\n[[buffer]]\nname = \"a\"\ntype = \"f32\"\ncount = 4\n\n[[buffer]]\nname = \"b\"\ntype = \"f32\"\ncount = 4\n";

    /// `(key, message)` of the workload error of `text`.
    fn workload_error(text: &str) -> (String, String) {
        match Workload::from_toml_str(text, Source::Inline) {
            Err(Error::Workload { key, message, .. }) => (key, message),
            other => panic!("expected Error::Workload, got {other:?}"),
        }
    }

    #[test]
    fn workload_errors_name_the_key_path_and_line() {
        // an unknown key in the second [[buffer]] (line 13), a mistyped one, a missing one
        let (key, message) = workload_error(&format!("{WORKLOAD}coutn = 4\n"));
        assert_eq!(key, "buffer[1].coutn", "{message}");
        assert!(
            message.starts_with("line 13:1: unknown field `coutn`"),
            "{message}"
        );
        let (key, message) = workload_error(&WORKLOAD.replace(
            "type = \"f32\"\ncount = 4\n\n[[",
            "type = 3\ncount = 4\n\n[[",
        ));
        assert_eq!(key, "buffer[0].type", "{message}");
        assert!(message.starts_with("line 6:"), "{message}");
        let (key, message) = workload_error(&WORKLOAD.replace("name = \"b\"\n", ""));
        assert_eq!(key, "buffer[1].name", "{message}");
        assert!(
            message.contains("missing required key `name` in [buffer[1]]"),
            "{message}"
        );
        let (key, message) =
            workload_error(&WORKLOAD.replace("name = \"w\"\n", "name = \"w\"\nname = \"v\"\n"));
        assert_eq!(key, "name", "{message}");
        assert!(
            message.starts_with("line 2:1: duplicate key `name`"),
            "{message}"
        );
    }
}

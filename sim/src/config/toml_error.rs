//! Turns a `toml::de::Error` (syntax, missing key, unknown key, wrong type) into a dotted key and a
//! message with the `line:col` of the offending text.
//!
//! toml reports the byte span of the problem but not the table it lies in, so the table is found
//! by scanning the `[table]` / `[[array]]` headers above the span. This is for error messages
//! only: when the scan cannot tell, the key is `-`.

/// 1-based line and column (in characters) of byte offset `pos` in `text`.
pub(crate) fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Where a byte offset lies: the dotted path of the enclosing table (`constant.cache[1]`, empty
/// at the root), and the key assigned on that line if the line is `key = value`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Place {
    table: String,
    line_is_header: bool,
    line_key: Option<String>,
}

/// `a . "b"` -> `a.b`.
fn clean_path(raw: &str) -> String {
    let parts: Vec<&str> = raw
        .split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\''))
        .collect();
    parts.join(".")
}

/// The table header on `line`, if it is one: `(path, is_array_of_tables)`.
fn header(line: &str) -> Option<(String, bool)> {
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("[[") {
        return rest.find("]]").map(|end| (clean_path(&rest[..end]), true));
    }
    let rest = t.strip_prefix('[')?;
    rest.find(']').map(|end| (clean_path(&rest[..end]), false))
}

/// The key of a `key = value` line.
fn line_key(line: &str) -> Option<String> {
    let (k, _) = line.split_once('=')?;
    let k = clean_path(k);
    (!k.is_empty() && !k.starts_with('#')).then_some(k)
}

fn place(text: &str, pos: usize) -> Place {
    let (line_no, _) = line_col(text, pos);
    let mut table = String::new();
    let mut arrays: Vec<(String, usize)> = Vec::new();
    let mut out = Place::default();
    for (i, line) in text.lines().take(line_no).enumerate() {
        let is_last = i + 1 == line_no;
        if let Some((path, is_array)) = header(line) {
            table = if is_array {
                let n = match arrays.iter_mut().find(|(p, _)| *p == path) {
                    Some((_, n)) => {
                        *n += 1;
                        *n
                    }
                    None => {
                        arrays.push((path.clone(), 0));
                        0
                    }
                };
                format!("{path}[{n}]")
            } else {
                path
            };
            out.line_is_header = is_last;
        } else if is_last {
            out.line_key = line_key(line);
        }
    }
    out.table = table;
    out
}

/// `table` + `.` + `key`, without a leading dot at the root.
fn join(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// The name between the first pair of backticks after `prefix`, if `msg` starts with `prefix`.
fn quoted_after<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = msg.strip_prefix(prefix)?.strip_prefix('`')?;
    rest.find('`').map(|end| &rest[..end])
}

/// `(key, message)` for a toml error on `text`; `key` is `-` when no key can be named.
pub(crate) fn describe(text: &str, err: &toml::de::Error) -> (String, String) {
    let msg = err.message().trim().replace('\n', "; ");
    let Some(span) = err.span() else {
        return ("-".to_string(), msg);
    };
    let (line, col) = line_col(text, span.start);
    let at = format!("line {line}:{col}");

    if let Some(name) = quoted_after(&msg, "missing field ") {
        if span.is_empty() {
            let message = format!("missing required table or key `{name}` at the top level");
            return (name.to_string(), message);
        }
        let p = place(text, span.start);
        let table = match (&p.line_key, p.line_is_header) {
            (Some(k), false) => join(&p.table, k), // inline table `k = { ... }`
            _ => p.table,
        };
        let message = format!("missing required key `{name}` in [{table}] (table at {at})");
        return (join(&table, name), message);
    }
    let duplicate = msg.find("duplicate key ").map(|i| &msg[i..]);
    if let Some(name) = duplicate.and_then(|m| quoted_after(m, "duplicate key ")) {
        let table = msg
            .split("in table `")
            .nth(1)
            .and_then(|r| r.split('`').next());
        let key = join(table.unwrap_or(""), name);
        return (key, format!("{at}: {msg}"));
    }
    let p = place(text, span.start);
    let key = if let Some(name) = quoted_after(&msg, "unknown field ") {
        if p.line_is_header {
            // an unknown table: its header is the key
            p.table.split('[').next().unwrap_or(name).to_string()
        } else {
            join(&p.table, name)
        }
    } else if msg.starts_with("invalid type") || msg.starts_with("invalid value") {
        match p.line_key {
            Some(k) => join(&p.table, &k),
            None => "-".to_string(),
        }
    } else {
        "-".to_string()
    };
    (key, format!("{at}: {msg}"))
}

//! Measured values written into a config in place (toml_edit): every other byte of the file stays
//! as it was (comments, order, spacing, unmeasured keys).
//!
//! For each measured key:
//! - the value is replaced, keeping the key's type: an integer key gets the measurement rounded to
//!   an integer, a float key the measurement rounded to the setting's decimals;
//! - the comment lines directly above the key (the ones that named the old value's source) are
//!   replaced by one comment saying how it was measured and what the value was before; comment
//!   lines above a blank line belong to the section and are kept;
//! - the trailing comment becomes `# measured: validate calibrate, <device>, <date>`, aligned at
//!   column 32 as in the shipped configs.

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;
use toml_edit::{DocumentMut, Item, TableLike, Value};

/// Column of the trailing comments, as in the shipped configs.
const COMMENT_COLUMN: usize = 32;
/// Width the comment lines above a key are wrapped to.
const WRAP: usize = 100;

/// One value to write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The dotted key, with an index for an array of tables: `l1.latency_cycles`,
    /// `constant.cache[1].latency_cycles`.
    pub key: String,
    /// The measured value in the key's unit.
    pub value: f64,
    /// Decimals kept when the key is a float (integers are rounded).
    pub decimals: u32,
    /// How it was measured, for the comment above the key.
    pub detail: String,
}

/// What was written for one key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Written {
    /// The dotted key.
    pub key: String,
    /// The value before, as written in the base file.
    pub old: String,
    /// The value written.
    pub new: String,
}

/// A segment of a dotted key.
#[derive(Debug, PartialEq)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// `constant.cache[1].latency_cycles` → `constant`, `cache`, 1, `latency_cycles`.
fn segments(key: &str) -> Result<Vec<Segment<'_>>> {
    let mut out = vec![];
    for part in key.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if name.is_empty() {
            bail!("`{key}`: empty key segment");
        }
        out.push(Segment::Key(name));
        if !rest.is_empty() {
            let index = rest
                .strip_suffix(']')
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| anyhow!("`{key}`: bad index `[{rest}`"))?;
            out.push(Segment::Index(index));
        }
    }
    Ok(out)
}

/// The table holding the last segment of `key`, and that segment.
fn parent<'d>(doc: &'d mut DocumentMut, key: &str) -> Result<(&'d mut dyn TableLike, String)> {
    let segs = segments(key)?;
    let Some((Segment::Key(leaf), path)) = segs.split_last() else {
        bail!("`{key}` does not end in a key");
    };
    let mut table: &mut dyn TableLike = doc.as_table_mut();
    let mut i = 0;
    while i < path.len() {
        let Segment::Key(name) = path[i] else {
            bail!("`{key}`: an index must follow a key");
        };
        let item = table
            .get_mut(name)
            .ok_or_else(|| anyhow!("the config has no `{name}` (for `{key}`)"))?;
        table = match path.get(i + 1) {
            Some(Segment::Index(n)) => {
                i += 1;
                let array = item
                    .as_array_of_tables_mut()
                    .ok_or_else(|| anyhow!("`{name}` is not an array of tables (for `{key}`)"))?;
                let len = array.len();
                array
                    .get_mut(*n)
                    .ok_or_else(|| anyhow!("`{name}` has {len} entries, not [{n}] (for `{key}`)"))?
            }
            _ => item
                .as_table_like_mut()
                .ok_or_else(|| anyhow!("`{name}` is not a table (for `{key}`)"))?,
        };
        i += 1;
    }
    Ok((table, leaf.to_string()))
}

/// `v` rounded to `decimals`.
fn round_to(v: f64, decimals: u32) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    (v * scale).round() / scale
}

/// The comment lines for `text`, wrapped at [`WRAP`] columns after `# `.
fn wrap(text: &str) -> Vec<String> {
    let mut lines = vec![];
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() + 2 > WRAP {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The key's new prefix: what `old` holds up to its last blank line (the section's comments),
/// then `comment`, then the key's indentation.
fn new_prefix(old: &str, comment: &[String]) -> String {
    let indent = old.rsplit('\n').next().unwrap_or("");
    let body = &old[..old.len() - indent.len()];
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let keep = lines
        .iter()
        .rposition(|l| l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let mut out: String = lines[..keep].concat();
    for c in comment {
        out.push_str(indent);
        out.push_str("# ");
        out.push_str(c);
        out.push('\n');
    }
    out.push_str(indent);
    out
}

/// The value of `key` in the config text `text`, as written (`38`, `1980.0`); `None` when the
/// text does not parse or has no such key.
pub fn get(text: &str, key: &str) -> Option<String> {
    let mut doc: DocumentMut = text.parse().ok()?;
    let (table, leaf) = parent(&mut doc, key).ok()?;
    let value = table.get(&leaf)?.as_value()?;
    Some(match value {
        Value::Integer(i) => i.display_repr().to_string(),
        Value::Float(f) => f.display_repr().to_string(),
        other => other.to_string().trim().to_string(),
    })
}

/// Writes `settings` into the config text `base`; `stamp` is the trailing comment of each
/// (`measured: validate calibrate, NVIDIA H200, 2026-11-21`). Returns the new text and what was
/// written. Errors name the key that is missing or not a number.
pub fn apply(base: &str, settings: &[Setting], stamp: &str) -> Result<(String, Vec<Written>)> {
    let mut doc: DocumentMut = base.parse().context("the base config is not valid TOML")?;
    let mut written = vec![];
    for s in settings {
        if !s.value.is_finite() {
            bail!("{}: the measurement is not a number ({})", s.key, s.value);
        }
        let (table, leaf) = parent(&mut doc, &s.key)?;
        let (mut key, item) = table
            .get_key_value_mut(&leaf)
            .ok_or_else(|| anyhow!("the config has no key `{}`", s.key))?;
        let old = item
            .as_value()
            .ok_or_else(|| anyhow!("`{}` is not a value", s.key))?;
        let (old_text, mut new) = match old {
            Value::Integer(i) => (
                i.display_repr().to_string(),
                Value::from(s.value.round() as i64),
            ),
            Value::Float(f) => (
                f.display_repr().to_string(),
                Value::from(round_to(s.value, s.decimals)),
            ),
            other => bail!("`{}` is {}, not a number", s.key, other.to_string().trim()),
        };
        let value_prefix = old.decor().prefix().and_then(|p| p.as_str()).unwrap_or(" ");
        let value_prefix = value_prefix.to_string();
        let new_text = new.to_string().trim().to_string();
        let key_text = key.display_repr().to_string();
        let used = key_text.len() + 2 + value_prefix.len() + new_text.len();
        let pad = COMMENT_COLUMN.saturating_sub(used).max(1);
        new.decor_mut().set_prefix(value_prefix);
        new.decor_mut().set_suffix(format!("{:pad$}# {stamp}", ""));
        *item = Item::Value(new);
        let old_prefix = key
            .leaf_decor()
            .prefix()
            .and_then(|p| p.as_str())
            .unwrap_or("")
            .to_string();
        let comment = wrap(&format!("{} (was {old_text})", s.detail));
        key.leaf_decor_mut()
            .set_prefix(new_prefix(&old_prefix, &comment));
        written.push(Written {
            key: s.key.clone(),
            old: old_text,
            new: new_text,
        });
    }
    Ok((doc.to_string(), written))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAMP: &str = "measured: validate calibrate, NVIDIA H200, 2026-11-21";

    fn set(key: &str, value: f64, decimals: u32, detail: &str) -> Setting {
        Setting {
            key: key.into(),
            value,
            decimals,
            detail: detail.into(),
        }
    }

    #[test]
    fn keys_split_into_tables_indices_and_leaves() {
        assert_eq!(
            segments("constant.cache[1].latency_cycles").unwrap(),
            vec![
                Segment::Key("constant"),
                Segment::Key("cache"),
                Segment::Index(1),
                Segment::Key("latency_cycles")
            ]
        );
        assert!(segments("a..b").is_err());
        assert!(segments("a[x].b").is_err());
    }

    #[test]
    fn a_value_and_its_comments_are_replaced_and_nothing_else_moves() {
        let base = "\
# header comment

[l1]
# the section's own comment

# [tool] MT4G H100: the old source
# on two lines
latency_cycles = 38             # [tool] MT4G H100
size_bytes = 1024               # kept

[sm]
clock_mhz = 1980.0              # [measured] nvidia-smi
count = 132
";
        let (text, written) = apply(
            base,
            &[
                set("l1.latency_cycles", 33.6, 0, "pointer chase, 8192 loads"),
                set("sm.clock_mhz", 1979.64, 1, "spin kernel"),
            ],
            STAMP,
        )
        .unwrap();
        assert_eq!(
            text,
            "\
# header comment

[l1]
# the section's own comment

# pointer chase, 8192 loads (was 38)
latency_cycles = 34             # measured: validate calibrate, NVIDIA H200, 2026-11-21
size_bytes = 1024               # kept

[sm]
# spin kernel (was 1980.0)
clock_mhz = 1979.6              # measured: validate calibrate, NVIDIA H200, 2026-11-21
count = 132
"
        );
        assert_eq!(
            written,
            vec![
                Written {
                    key: "l1.latency_cycles".into(),
                    old: "38".into(),
                    new: "34".into()
                },
                Written {
                    key: "sm.clock_mhz".into(),
                    old: "1980.0".into(),
                    new: "1979.6".into()
                },
            ]
        );
    }

    #[test]
    fn arrays_of_tables_are_indexed_and_floats_keep_a_decimal_point() {
        let base = "\
[constant]
addresses_per_cycle = 2.0

[[constant.cache]]
name = \"L1\"
latency_cycles = 17

[[constant.cache]]
name = \"L1.5\"
latency_cycles = 106            # [tool] MT4G
";
        let (text, _) = apply(
            base,
            &[
                set("constant.cache[1].latency_cycles", 99.4, 0, "chase"),
                set("constant.addresses_per_cycle", 2.0004, 2, "fit"),
            ],
            STAMP,
        )
        .unwrap();
        assert!(text.contains(
            "name = \"L1.5\"\n# chase (was 106)\nlatency_cycles = 99             # measured"
        ));
        assert!(text.contains("# fit (was 2.0)\naddresses_per_cycle = 2.0       # measured"));
        assert!(
            text.contains("name = \"L1\"\nlatency_cycles = 17\n"),
            "{text}"
        );
    }

    #[test]
    fn missing_keys_and_non_numbers_are_errors_naming_the_key() {
        let base = "[gpu]\nname = \"x\"\n[[constant.cache]]\nsize_bytes = 1\n";
        let e = |s: Setting| apply(base, &[s], STAMP).unwrap_err().to_string();
        assert!(e(set("gpu.launch_overhead_ns", 1.0, 0, "")).contains("gpu.launch_overhead_ns"));
        assert!(e(set("gpu.name", 1.0, 0, "")).contains("not a number"));
        assert!(e(set("l2.latency_cycles", 1.0, 0, "")).contains("no `l2`"));
        assert!(e(set("constant.cache[3].size_bytes", 1.0, 0, "")).contains("1 entries"));
        assert!(e(set("gpu.name", f64::NAN, 0, "")).contains("not a number"));
    }

    #[test]
    fn values_are_read_as_written() {
        let text = "[sm]\nclock_mhz = 1980.0 # c\n[[constant.cache]]\nsize_bytes = 2048\n";
        assert_eq!(get(text, "sm.clock_mhz").as_deref(), Some("1980.0"));
        assert_eq!(
            get(text, "constant.cache[0].size_bytes").as_deref(),
            Some("2048")
        );
        assert_eq!(get(text, "constant.cache[1].size_bytes"), None);
        assert_eq!(get("not toml [", "sm.clock_mhz"), None);
    }

    #[test]
    fn long_comments_wrap() {
        let text = "word ".repeat(60);
        let lines = wrap(&text);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.len() + 2 <= WRAP), "{lines:?}");
        assert_eq!(lines.join(" "), text.trim());
    }
}

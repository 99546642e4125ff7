//! The rows of a sweep and their CSV and JSON forms. A row keeps its columns in the order they
//! were added (point, config, workload, `param.NAME`..., error, launch, kernel, then the metrics
//! in the order of the JSON report), so the CSV's columns are pandas' for the same rows.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// One row: (column, value) pairs in column order. `Value::Null` is an empty cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row(pub Vec<(String, Value)>);

impl Row {
    /// Appends a column.
    pub fn push(&mut self, column: &str, value: Value) {
        self.0.push((column.to_string(), value));
    }

    /// The value of `column`, if the row has it.
    pub fn get(&self, column: &str) -> Option<&Value> {
        self.0.iter().find(|(c, _)| c == column).map(|(_, v)| v)
    }
}

impl Serialize for Row {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Every column of `rows`, in the order of first appearance (as `pandas.DataFrame(rows)`).
pub fn columns(rows: &[Row]) -> Vec<String> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut out = vec![];
    for r in rows {
        for (c, _) in &r.0 {
            if seen.insert(c.as_str()) {
                out.push(c.clone());
            }
        }
    }
    out
}

/// A cell's text: empty for null or a missing column, strings as they are, numbers as JSON
/// writes them (integers without a fraction; floats shortest round-trip).
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The rows as CSV (RFC 4180 quoting): a header of [`columns`], then one line per row.
pub fn to_csv(rows: &[Row]) -> Vec<u8> {
    let cols = columns(rows);
    let mut w = csv::Writer::from_writer(vec![]);
    // Writing to memory cannot fail; a failure would be a bug in csv, reported as an empty cell.
    let _ = w.write_record(&cols);
    for r in rows {
        let _ = w.write_record(cols.iter().map(|c| cell(r.get(c))));
    }
    w.into_inner().unwrap_or_default()
}

/// The rows as a JSON array of objects (the records of the DataFrame), one line per row.
pub fn to_json(rows: &[Row]) -> String {
    let lines: Vec<String> = rows
        .iter()
        .map(|r| serde_json::to_string(r).unwrap_or_else(|_| "{}".into()))
        .collect();
    format!("[\n{}\n]\n", lines.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(cells: &[(&str, Value)]) -> Row {
        Row(cells
            .iter()
            .map(|(c, v)| (c.to_string(), v.clone()))
            .collect())
    }

    #[test]
    fn csv_has_the_union_of_columns_in_first_order() {
        let rows = [
            row(&[("point", json!(0)), ("error", json!("bad, \"x\""))]),
            row(&[
                ("point", json!(1)),
                ("error", Value::Null),
                ("t", json!(1.5)),
                ("n", json!(7)),
            ]),
        ];
        let text = String::from_utf8(to_csv(&rows)).unwrap();
        assert_eq!(text, "point,error,t,n\n0,\"bad, \"\"x\"\"\",,\n1,,1.5,7\n");
        assert_eq!(
            to_json(&rows[1..]),
            "[\n{\"point\":1,\"error\":null,\"t\":1.5,\"n\":7}\n]\n"
        );
    }
}

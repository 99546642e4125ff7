//! `--metrics`: which metrics a report keeps, in Nsight Compute's `--metrics` syntax.
//!
//! A value is either `regex:EXPR`, every metric whose name the regular expression matches
//! somewhere (as ncu: `^...$` for a whole-name match; the rest of the value is the expression,
//! commas included), or a comma-separated list of exact metric names. The option repeats; a
//! metric is kept when any value selects it. A name that is not a metric, or a regex that selects
//! none, is an error, so a typo never yields a silently empty report. `sim list --metrics` lists
//! the names.
//!
//! ```
//! use sim::report::select::Selection;
//! let s = Selection::parse(&["regex:^dram__".to_string(), "smsp__inst_executed.sum".to_string()]).unwrap();
//! assert!(s.keeps("dram__bytes_read.sum") && s.keeps("smsp__inst_executed.sum"));
//! assert!(!s.keeps("gpu__time_duration.sum"));
//! assert!(Selection::all().keeps("gpu__time_duration.sum"));
//! assert!(Selection::parse(&["dram_bytes".to_string()]).is_err());
//! ```

use regex::Regex;

/// One `--metrics` item.
#[derive(Debug, Clone)]
enum Item {
    /// An exact metric name.
    Name(String),
    /// `regex:EXPR`.
    Pattern(Regex),
}

/// The metrics a report keeps: all of them, or those some `--metrics` item selects.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    items: Vec<Item>,
}

impl Selection {
    /// Every metric (no `--metrics`).
    pub fn all() -> Selection {
        Selection::default()
    }

    /// Parses the `--metrics` values, checking each against [`super::metric_names`]; the error
    /// names the value and says how to list the metrics.
    pub fn parse(values: &[String]) -> Result<Selection, String> {
        let known = super::metric_names();
        let mut items = vec![];
        for v in values {
            if let Some(expr) = v.strip_prefix("regex:") {
                let re = Regex::new(expr).map_err(|e| {
                    format!(
                        "--metrics {v}: not a regular expression: {}",
                        one_line(&e.to_string())
                    )
                })?;
                if !known.iter().any(|n| re.is_match(n)) {
                    return Err(format!(
                        "--metrics {v}: the expression matches no metric (`sim list --metrics` lists them)"
                    ));
                }
                items.push(Item::Pattern(re));
                continue;
            }
            for name in v.split(',').map(str::trim) {
                if !known.contains(&name) {
                    return Err(format!(
                        "--metrics {v}: `{name}` is not a metric the simulator reports (`sim list \
--metrics` lists them; `regex:EXPR` selects by pattern)"
                    ));
                }
                items.push(Item::Name(name.to_string()));
            }
        }
        Ok(Selection { items })
    }

    /// Whether the report keeps metric `name`.
    pub fn keeps(&self, name: &str) -> bool {
        self.items.is_empty()
            || self.items.iter().any(|i| match i {
                Item::Name(n) => n == name,
                Item::Pattern(re) => re.is_match(name),
            })
    }

    /// Whether this is every metric (no `--metrics` given).
    pub fn is_all(&self) -> bool {
        self.items.is_empty()
    }
}

/// The regex crate's multi-line error messages on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(v: &[&str]) -> Result<Selection, String> {
        Selection::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn names_lists_and_patterns() {
        let s = sel(&["dram__bytes_read.sum,dram__bytes_write.sum"]).unwrap();
        assert!(s.keeps("dram__bytes_write.sum") && !s.keeps("idc__requests.sum"));
        // Partial match, as ncu's regex: prefix.
        let s = sel(&["regex:sectors"]).unwrap();
        assert!(s.keeps("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
        assert!(!s.keeps("smsp__inst_executed.sum"));
        // A whole-name match; commas belong to the expression.
        let s = sel(&["regex:^idc__requests(_lookup_hit){0,1}\\.sum$"]).unwrap();
        assert!(s.keeps("idc__requests.sum") && s.keeps("idc__requests_lookup_hit.sum"));
        assert!(!s.keeps("idc__requests_lookup_miss.sum"));
    }

    #[test]
    fn typos_are_errors_naming_the_value() {
        let e = sel(&["dram__bytes_red.sum"]).unwrap_err();
        assert!(e.contains("`dram__bytes_red.sum` is not a metric"), "{e}");
        let e = sel(&["regex:^nothing"]).unwrap_err();
        assert!(e.contains("matches no metric"), "{e}");
        let e = sel(&["regex:("]).unwrap_err();
        assert!(
            e.contains("not a regular expression") && !e.contains('\n'),
            "{e}"
        );
    }
}

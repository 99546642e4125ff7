//! Numbers and tables as both binaries write them for people: one implementation, used by
//! `sim run`'s reports and by `validate`'s tables, its calibration summary and its Markdown
//! accuracy document (docs/accuracy.md).
//!
//! Thousands separators come from `num-format` (the `en` locale: `1,600,000`), tables from
//! `tabled`: [`boxed`] with rounded borders for the terminal, [`markdown`] for documents.

use num_format::{Locale, ToFormattedString};
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};
use tabled::Table;

/// A count with thousands separators (`1,600,000`, `-1,234`); a value that is not a whole number
/// (or is at least 10^15) with one decimal from 100 up (`1234.6`), three below (`12.346`).
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        // exact: a whole number below 10^15 fits an i64
        (v as i64).to_formatted_string(&Locale::en)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// `a` as a percentage of `b` with `decimals` decimals (`12.5%`), `-` when `b` is 0.
pub fn share(a: u64, b: u64, decimals: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.decimals$}%", 100.0 * a as f64 / b as f64)
    }
}

/// A signed percentage with one decimal (`+12.3%`, `-5.0%`), `-` when there is none: an error of
/// a prediction against a measurement.
pub fn signed_pct(e: Option<f64>) -> String {
    e.map_or("-".into(), |e| format!("{e:+.1}%"))
}

/// `v` with `decimals` decimals, `-` when there is none.
pub fn fixed(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// `rows` (the first is the header) as a table with rounded borders, the columns after the first
/// `text_columns` (the numbers) right-aligned.
pub fn boxed(rows: Vec<Vec<String>>, text_columns: usize) -> String {
    aligned(rows, text_columns)
        .with(Style::rounded())
        .to_string()
}

/// `rows` (the first is the header) as a Markdown (GitHub) table, the columns after the first
/// `text_columns` right-aligned in the text.
pub fn markdown(rows: Vec<Vec<String>>, text_columns: usize) -> String {
    aligned(rows, text_columns)
        .with(Style::markdown())
        .to_string()
}

fn aligned(rows: Vec<Vec<String>>, text_columns: usize) -> Table {
    let mut t = tabled::builder::Builder::from(rows).build();
    t.with(Modify::new(Columns::new(text_columns..)).with(Alignment::right()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_percentages() {
        assert_eq!(number(1_600_000.0), "1,600,000");
        assert_eq!(number(-1234.0), "-1,234");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(999.0), "999");
        assert_eq!(number(12.3456), "12.346");
        assert_eq!(number(1234.56), "1234.6");
        assert_eq!(number(1e15), "1000000000000000.0");
        assert_eq!(share(1, 8, 1), "12.5%");
        assert_eq!(share(1, 3, 0), "33%");
        assert_eq!(share(1, 0, 1), "-");
        assert_eq!(signed_pct(Some(12.34)), "+12.3%");
        assert_eq!(signed_pct(Some(-5.0)), "-5.0%");
        assert_eq!(signed_pct(None), "-");
        assert_eq!(fixed(Some(2.0 / 3.0), 2), "0.67");
        assert_eq!(fixed(None, 2), "-");
    }

    #[test]
    fn tables_right_align_the_numbers() {
        let rows = || {
            vec![
                vec!["name".to_string(), "n".to_string()],
                vec!["a".to_string(), "1,024".to_string()],
            ]
        };
        assert_eq!(
            markdown(rows(), 1),
            "| name |     n |\n|------|-------|\n| a    | 1,024 |"
        );
        assert_eq!(
            boxed(rows(), 1),
            "╭──────┬───────╮\n│ name │     n │\n├──────┼───────┤\n│ a    │ 1,024 │\n╰──────┴───────╯"
        );
    }
}

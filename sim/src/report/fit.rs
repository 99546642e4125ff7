//! Tables that fit the terminal (issue 42): the summary table of `sim run` is about 160
//! columns wide; in a narrower terminal it wrapped line by line into an unreadable grid.
//!
//! [`render`] tries layouts from the widest to the narrowest and keeps the first that fits
//! the width: the table as it is; its headers wrapped at spaces (never a value); a column per
//! row (the launches side by side, a row per quantity) when the rows are few; one small table
//! per row, each quantity beside its value, as the last resort wrapped by tabled at word
//! boundaries. Without a width (output that is not a terminal and no `COLUMNS`) the table is
//! the wide one, so that scripts and tests see one layout.

use tabled::settings::formatting::AlignmentStrategy;
use tabled::settings::object::{Cell, Columns, Rows};
use tabled::settings::peaker::PriorityMax;
use tabled::settings::{Alignment, Modify, Style, Width};
use tabled::Table;

/// The width to fit tables to, in terminal columns: `columns` (the `COLUMNS` environment
/// variable, when it holds a positive integer) or else `terminal` (the width of the terminal
/// standard output is, `None` when it is not one); `None`: no limit.
pub fn width(columns: Option<&str>, terminal: Option<usize>) -> Option<usize> {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .or(terminal)
}

/// Renders `rows` (the first is the header) as a rounded table, the columns after the first
/// `text_columns` right-aligned, dropping the columns after the first whose every cell is `-`
/// (say, shared-memory columns of a kernel without shared memory); within `width` columns where
/// one is given (module docs).
pub(crate) fn render(rows: Vec<Vec<String>>, text_columns: usize, width: Option<usize>) -> String {
    let keep: Vec<usize> = (0..rows[0].len())
        .filter(|&c| c == 0 || rows[1..].iter().any(|r| r[c] != "-"))
        .collect();
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| keep.iter().map(|&c| r[c].clone()).collect())
        .collect();
    let wide = table(&rows, text_columns);
    let Some(width) = width else {
        return wide.to_string();
    };
    if wide.total_width() <= width {
        return wide.to_string();
    }
    let wrapped = wrapped_headers(&rows, text_columns);
    if wrapped.total_width() <= width {
        return wrapped.to_string();
    }
    let across = transposed(&rows, text_columns);
    if across.total_width() <= width {
        return across.to_string();
    }
    records(&rows, text_columns, width)
}

fn table(rows: &[Vec<String>], text_columns: usize) -> Table {
    let mut t = tabled::builder::Builder::from(rows.to_vec()).build();
    // Each line of a wrapped header aligned as its column, not the lines as a block.
    t.with(Style::rounded())
        .with(Modify::new(Columns::new(text_columns..)).with(Alignment::right()))
        .with(Modify::new(Columns::new(..)).with(AlignmentStrategy::PerLine));
    t
}

/// The table with each header wrapped at spaces to the width of its column's widest value (or
/// its longest word).
fn wrapped_headers(rows: &[Vec<String>], text_columns: usize) -> Table {
    let mut rows = rows.to_vec();
    for c in 0..rows[0].len() {
        let widest_value = rows[1..].iter().map(|r| text_width(&r[c])).max();
        rows[0][c] = wrap_words(&rows[0][c], widest_value.unwrap_or(0));
    }
    table(&rows, text_columns)
}

/// `s` with its words (split at spaces) put on lines of at most `width` characters, greedily;
/// a longer word on a line of its own. Each line is its own line of the cell, aligned as the
/// column is.
fn wrap_words(s: &str, width: usize) -> String {
    let mut lines: Vec<String> = vec![];
    for word in s.split(' ') {
        match lines.last_mut() {
            Some(l) if text_width(l) + 1 + text_width(word) <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join("\n")
}

/// A row per column of `rows` and a column per row: the first column's values (the launch
/// labels) become the header; the values of the first `text_columns` columns after it stay
/// left-aligned.
fn transposed(rows: &[Vec<String>], text_columns: usize) -> Table {
    let across: Vec<Vec<String>> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].clone()).collect())
        .collect();
    let mut t = table(&across, 1);
    for c in 1..text_columns.min(across.len()) {
        t.with(Modify::new(Rows::single(c)).with(Alignment::left()));
    }
    t
}

/// One two-column table per row of `rows` (each header beside its value, the first as the
/// table's header), the headers wrapped at spaces to leave the values room; wrapped by tabled
/// where that is still too wide (a value may then be cut).
fn records(rows: &[Vec<String>], text_columns: usize, width: usize) -> String {
    // Borders and padding of a two-column table: `│ ` + ` │ ` + ` │`.
    const FRAME: usize = 7;
    let mut out = vec![];
    for r in &rows[1..] {
        let widest_value = r.iter().map(|v| text_width(v)).max().unwrap_or(0);
        let record = |name_width: usize| {
            let mut t = table(&pairs(&rows[0], r, name_width), 1);
            for c in 1..text_columns.min(r.len()) {
                t.with(Modify::new(Cell::new(c, 1)).with(Alignment::left()));
            }
            t
        };
        let mut t = record(usize::MAX);
        if t.total_width() > width {
            t = record(width.saturating_sub(FRAME + widest_value));
        }
        // From single-line cells only: tabled 0.17's word wrap miscounts a cell of several
        // lines (a subtraction overflows).
        let single_lines = !rows[0].iter().chain(r).any(|c| c.contains('\n'));
        if t.total_width() > width && single_lines {
            t = record(usize::MAX);
            t.with(
                Width::wrap(width)
                    .keep_words(true)
                    .priority(PriorityMax::right()),
            );
        }
        out.push(t.to_string());
    }
    out.join("\n")
}

/// `line` (an explanation under a table) in lines of at most `width` characters where a width
/// is given, broken at spaces ([`wrap_words`]), the lines after the first indented by `indent`
/// spaces more than `line`'s own indentation.
pub(crate) fn wrap_line(line: &str, width: Option<usize>, indent: usize) -> String {
    let Some(width) = width.filter(|&w| text_width(line) > w) else {
        return line.to_string();
    };
    let own = line.len() - line.trim_start().len();
    let first = wrap_words(line.trim_start(), width.saturating_sub(own));
    let mut lines = first.lines();
    let mut out = format!("{}{}", &line[..own], lines.next().unwrap_or(""));
    // The rest again, to the narrower width their indentation leaves.
    let rest: Vec<&str> = lines.collect();
    if !rest.is_empty() {
        let pad = own + indent;
        for l in wrap_words(&rest.join(" "), width.saturating_sub(pad)).lines() {
            out.push('\n');
            out.push_str(&" ".repeat(pad));
            out.push_str(l);
        }
    }
    out
}

/// The rows `[header, value]` of one record, each header wrapped to `width` ([`wrap_words`]).
fn pairs(head: &[String], values: &[String], width: usize) -> Vec<Vec<String>> {
    head.iter()
        .zip(values)
        .map(|(h, v)| vec![wrap_words(h, width), v.clone()])
        .collect()
}

/// Display width of the widest line of `s`, in terminal columns (one a character: the cells
/// hold ASCII and box-drawing characters).
fn text_width(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Vec<String>> {
        [
            &[
                "launch",
                "time",
                "warp insts",
                "ld sectors/req",
                "L1 hit",
                "shared wf/inst",
            ],
            &["constant", "2213.7 us", "6800000", "4.0", "0%", "-"],
            &["global", "135.4 us", "7600000", "18.0", "88%", "-"],
        ]
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
    }

    #[test]
    fn explanations_wrap_at_spaces_with_a_hanging_indent() {
        let line = "  constant: constant loads serialize: 32.0 distinct addresses per warp";
        assert_eq!(wrap_line(line, None, 4), line);
        assert_eq!(wrap_line(line, Some(200), 4), line);
        assert_eq!(
            wrap_line(line, Some(30), 4),
            "  constant: constant loads\n      serialize: 32.0 distinct\n      addresses per warp"
        );
    }

    #[test]
    fn the_width_is_columns_else_the_terminals() {
        assert_eq!(width(Some("80"), Some(120)), Some(80));
        assert_eq!(width(Some(" 100 "), None), Some(100));
        assert_eq!(width(Some("0"), Some(120)), Some(120));
        assert_eq!(width(Some("wide"), None), None);
        assert_eq!(width(None, None), None);
    }

    /// The widest line of `t`, in characters.
    fn widest(t: &str) -> usize {
        text_width(t)
    }

    #[test]
    fn each_layout_in_turn_from_the_widest() {
        // The empty column is dropped in every layout.
        let wide = render(rows(), 1, None);
        assert_eq!(
            wide,
            "\
╭──────────┬───────────┬────────────┬────────────────┬────────╮
│ launch   │      time │ warp insts │ ld sectors/req │ L1 hit │
├──────────┼───────────┼────────────┼────────────────┼────────┤
│ constant │ 2213.7 us │    6800000 │            4.0 │     0% │
│ global   │  135.4 us │    7600000 │           18.0 │    88% │
╰──────────┴───────────┴────────────┴────────────────┴────────╯"
        );
        assert_eq!(render(rows(), 1, Some(widest(&wide))), wide);
        let wrapped = render(rows(), 1, Some(widest(&wide) - 1));
        assert_eq!(
            wrapped,
            "\
╭──────────┬───────────┬─────────┬─────────────┬─────╮
│ launch   │      time │    warp │          ld │  L1 │
│          │           │   insts │ sectors/req │ hit │
├──────────┼───────────┼─────────┼─────────────┼─────┤
│ constant │ 2213.7 us │ 6800000 │         4.0 │  0% │
│ global   │  135.4 us │ 7600000 │        18.0 │ 88% │
╰──────────┴───────────┴─────────┴─────────────┴─────╯"
        );
        let across = render(rows(), 1, Some(widest(&wrapped) - 1));
        assert_eq!(
            across,
            "\
╭────────────────┬───────────┬──────────╮
│ launch         │  constant │   global │
├────────────────┼───────────┼──────────┤
│ time           │ 2213.7 us │ 135.4 us │
│ warp insts     │   6800000 │  7600000 │
│ ld sectors/req │       4.0 │     18.0 │
│ L1 hit         │        0% │      88% │
╰────────────────┴───────────┴──────────╯"
        );
        let records = render(rows(), 1, Some(widest(&across) - 1));
        assert_eq!(
            records,
            "\
╭────────────────┬───────────╮
│ launch         │  constant │
├────────────────┼───────────┤
│ time           │ 2213.7 us │
│ warp insts     │   6800000 │
│ ld sectors/req │       4.0 │
│ L1 hit         │        0% │
╰────────────────┴───────────╯
╭────────────────┬──────────╮
│ launch         │   global │
├────────────────┼──────────┤
│ time           │ 135.4 us │
│ warp insts     │  7600000 │
│ ld sectors/req │     18.0 │
│ L1 hit         │      88% │
╰────────────────┴──────────╯"
        );
        // Narrower: the headers wrap, the values stay whole.
        let narrow = render(rows(), 1, Some(widest(&records) - 1));
        assert_eq!(
            narrow.lines().take(9).collect::<Vec<_>>().join("\n"),
            "\
╭─────────────┬───────────╮
│ launch      │  constant │
├─────────────┼───────────┤
│ time        │ 2213.7 us │
│ warp insts  │   6800000 │
│ ld          │       4.0 │
│ sectors/req │           │
│ L1 hit      │        0% │
╰─────────────┴───────────╯"
        );
        // Narrower still: tabled wraps what is left, values included.
        let narrowest = render(rows(), 1, Some(20));
        assert!(
            narrowest.lines().all(|l| l.chars().count() <= 20),
            "{narrowest}"
        );
    }
}

//! Integer expressions of workload files: a small language of our own, strict and checked.
//!
//! ```text
//! expr    := term (("+" | "-") term)*
//! term    := unary (("*" | "/" | "%") unary)*
//! unary   := "-" unary | atom
//! atom    := INTEGER | PARAM | FUNC "(" expr "," expr ")" | "(" expr ")"
//! FUNC    := "ceil_div" | "min" | "max"
//! INTEGER := [0-9]+            PARAM := [A-Za-z_][A-Za-z0-9_]*   (a name in [params])
//! ```
//!
//! Values are `i64`. `/` and `%` truncate toward zero, as in C (`-7 / 2 = -3`, `-7 % 2 = -1`);
//! `ceil_div(a, b)` rounds the quotient up. Every operation is checked: a result outside `i64`,
//! a division or remainder by zero is an error, never a wrapped or made-up value. Anything else
//! (`//`, `**`, `1.5`, `2^3`, `n == 1`, an unknown name or function, a missing operand) is an
//! error that says what was found and where, so a typo cannot quietly change a launch shape
//! (issue 42: with a scripting engine, `(n + 15) // 16` read `//` as a comment, and a grid 16
//! times too large ran without a word).
//!
//! The text is bounded first ([`MAX_LEN`], [`MAX_DEPTH`]) so that the recursive parser cannot
//! overflow the stack (issue 40).

use std::collections::BTreeMap;

/// The longest expression accepted, in bytes: far beyond any launch shape.
pub const MAX_LEN: usize = 1024;

/// The deepest nesting of parentheses (a function call's included) accepted.
pub const MAX_DEPTH: usize = 32;

/// The functions of the language.
pub const FUNCTIONS: [&str; 3] = ["ceil_div", "min", "max"];

/// What the language has, for error messages.
const ALLOWED: &str = "allowed: integers, params, + - * / %, parentheses, ceil_div(a, b), \
min(a, b), max(a, b)";

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

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok<'a> {
    Int(&'a str),
    Name(&'a str),
    Op(char),
}

/// Splits `text` into tokens; any other character is an error naming it and its column.
fn lex(text: &str) -> Result<Vec<(Tok<'_>, usize)>, String> {
    let bytes = text.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push((Tok::Int(&text[start..i]), start));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Name(&text[start..i]), start));
        } else if b"+-*/%(),".contains(&c) {
            out.push((Tok::Op(c as char), start));
            i += 1;
        } else {
            let ch = text[start..].chars().next().unwrap_or('?');
            return Err(unexpected(text, start, &format!("`{ch}`")));
        }
    }
    Ok(out)
}

/// `` `TEXT`: unexpected WHAT at column N; allowed: ... ``
fn unexpected(text: &str, at: usize, what: &str) -> String {
    let col = text[..at.min(text.len())].chars().count() + 1;
    format!("`{text}`: unexpected {what} at column {col}; {ALLOWED}")
}

/// A recursive-descent parser that evaluates as it goes.
struct Parser<'a, 'p> {
    text: &'a str,
    toks: Vec<(Tok<'a>, usize)>,
    pos: usize,
    params: &'p BTreeMap<String, i64>,
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    /// The byte offset of the next token (the end of the text after the last).
    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.text.len(), |(_, o)| *o)
    }

    fn error_here(&self) -> String {
        match self.peek() {
            None => unexpected(self.text, self.at(), "end of expression"),
            Some(Tok::Int(s) | Tok::Name(s)) => unexpected(self.text, self.at(), &format!("`{s}`")),
            Some(Tok::Op(c)) => unexpected(self.text, self.at(), &format!("`{c}`")),
        }
    }

    fn eat(&mut self, op: char) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: char) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn overflow(&self, what: String) -> String {
        format!("`{}`: {what} overflows 64 bits", self.text)
    }

    fn expr(&mut self) -> Result<i64, String> {
        let mut v = self.term()?;
        loop {
            if self.eat('+') {
                let r = self.term()?;
                v = v
                    .checked_add(r)
                    .ok_or_else(|| self.overflow(format!("{v} + {r}")))?;
            } else if self.eat('-') {
                let r = self.term()?;
                v = v
                    .checked_sub(r)
                    .ok_or_else(|| self.overflow(format!("{v} - {r}")))?;
            } else {
                return Ok(v);
            }
        }
    }

    fn term(&mut self) -> Result<i64, String> {
        let mut v = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op(c @ ('*' | '/' | '%'))) => *c,
                _ => return Ok(v),
            };
            self.pos += 1;
            let r = self.unary()?;
            if op != '*' && r == 0 {
                let name = if op == '/' { "division" } else { "remainder" };
                return Err(format!("`{}`: {name} by zero ({v} {op} 0)", self.text));
            }
            let x = match op {
                '*' => v.checked_mul(r),
                '/' => v.checked_div(r),
                _ => v.checked_rem(r),
            };
            v = x.ok_or_else(|| self.overflow(format!("{v} {op} {r}")))?;
        }
    }

    fn unary(&mut self) -> Result<i64, String> {
        if self.eat('-') {
            let v = self.unary()?;
            return v
                .checked_neg()
                .ok_or_else(|| self.overflow(format!("-({v})")));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<i64, String> {
        match self.peek().cloned() {
            Some(Tok::Int(s)) => {
                self.pos += 1;
                s.parse::<i64>()
                    .map_err(|_| format!("`{}`: the integer {s} overflows 64 bits", self.text))
            }
            Some(Tok::Name(name))
                if self.toks.get(self.pos + 1).map(|t| &t.0) == Some(&Tok::Op('(')) =>
            {
                if !FUNCTIONS.contains(&name) {
                    return Err(format!(
                        "`{}`: unknown function `{name}`; {ALLOWED}",
                        self.text
                    ));
                }
                self.pos += 2;
                let a = self.expr()?;
                self.expect(',')?;
                let b = self.expr()?;
                self.expect(')')?;
                match name {
                    "min" => Ok(a.min(b)),
                    "max" => Ok(a.max(b)),
                    _ if b == 0 => Err(format!(
                        "`{}`: ceil_div({a}, 0): division by zero",
                        self.text
                    )),
                    _ => ceil_div(a, b).ok_or_else(|| self.overflow(format!("ceil_div({a}, {b})"))),
                }
            }
            Some(Tok::Name(name)) => {
                self.pos += 1;
                self.params.get(name).copied().ok_or_else(|| {
                    let known: Vec<&str> = self.params.keys().map(String::as_str).collect();
                    format!(
                        "`{}`: unknown name `{name}` (params: {})",
                        self.text,
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    )
                })
            }
            Some(Tok::Op('(')) => {
                self.pos += 1;
                let v = self.expr()?;
                self.expect(')')?;
                Ok(v)
            }
            _ => Err(self.error_here()),
        }
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

/// Evaluates `text` to an integer with `params` bound; `Err` is a readable message quoting the
/// expression (the caller adds the file and key).
pub fn eval(text: &str, params: &BTreeMap<String, i64>) -> Result<i64, String> {
    check_size(text)?;
    let toks = lex(text)?;
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        params,
    };
    let v = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(p.error_here());
    }
    Ok(v)
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;

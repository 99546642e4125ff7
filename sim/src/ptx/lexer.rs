//! PTX lexer: the source text becomes a vector of tokens with byte spans, once.
//!
//! Dotted words (`.global`, `.u32`) are one token each, so `ld.global.u32` lexes as the
//! identifier `ld` followed by two dot-words, and `%tid.x` as `%tid` and `.x`; the parser joins
//! them. Comments and whitespace are skipped; spans let errors name `file:line:col`.

use logos::Logos;
use std::ops::Range;

/// One PTX token. Literals keep their source slice; the parser converts them.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip r"//[^\n]*")]
pub enum Token {
    /// `/* ... */`, skipped (a callback: logos' regexes cannot express "up to the first `*/`").
    #[token("/*", block_comment)]
    BlockComment,
    /// `.word`: directive, state space, type or instruction modifier. A modifier may start with a
    /// digit (`tex.1d`, `cp.async.bulk.tensor.2d`); `8.5` stays one float (the longest match).
    #[regex(r"\.[A-Za-z0-9_][A-Za-z0-9_$]*(::[A-Za-z0-9_]+)*")]
    DotWord,
    /// Identifier: opcode, register (`%r1`), label (`$L__BB0_2`), symbol.
    #[regex(r"[A-Za-z_$%][A-Za-z0-9_$]*")]
    Ident,
    /// Hexadecimal float (`0f3F800000` single, `0d3FF0000000000000` double).
    #[regex(r"0[fF][0-9a-fA-F]{8}")]
    #[regex(r"0[dD][0-9a-fA-F]{16}")]
    HexFloat,
    /// Integer literal: decimal, `0x` hex, `0b` binary, octal, optional `U` suffix.
    #[regex(r"[0-9]+U?")]
    #[regex(r"0[xX][0-9a-fA-F]+U?")]
    #[regex(r"0[bB][01]+U?")]
    Int,
    /// Decimal float literal (`8.5` in `.version 8.5`, `1.0e-3`).
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?")]
    Float,
    /// String literal (`.pragma "nounroll"`, `.file 1 "a.cu"`).
    #[regex(r#""([^"\\]|\\.)*""#)]
    Str,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `=`
    #[token("=")]
    Eq,
    /// `@`
    #[token("@")]
    At,
    /// `!`
    #[token("!")]
    Bang,
    /// `|`
    #[token("|")]
    Pipe,
}

/// Skips to the end of a block comment; an unclosed one is a lexing error.
fn block_comment(lex: &mut logos::Lexer<Token>) -> logos::FilterResult<(), ()> {
    match lex.remainder().find("*/") {
        Some(end) => {
            lex.bump(end + 2);
            logos::FilterResult::Skip
        }
        None => logos::FilterResult::Error(()),
    }
}

/// A token and its byte range in the source.
pub type Spanned = (Token, Range<usize>);

/// Lexes `src`. On a character no token starts with, returns its byte range.
pub fn lex(src: &str) -> Result<Vec<Spanned>, Range<usize>> {
    let mut out = Vec::with_capacity(src.len() / 4);
    let mut lexer = Token::lexer(src);
    while let Some(tok) = lexer.next() {
        match tok {
            Ok(t) => out.push((t, lexer.span())),
            Err(()) => return Err(lexer.span()),
        }
    }
    Ok(out)
}

/// Maps byte offsets of one source to 1-based line and column.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line starts of `src`.
    pub fn new(src: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The text of 1-based `line` of `src` (the source this index was built from), without its
    /// line break.
    pub fn line_text<'s>(&self, src: &'s str, line: usize) -> &'s str {
        let start = self
            .starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(src.len());
        let end = self.starts.get(line).map_or(src.len(), |&e| e - 1);
        src.get(start..end.max(start)).unwrap_or("")
    }

    /// 1-based (line, column) of byte `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset);
        let col = offset - self.starts[line - 1] + 1;
        (line, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token> {
        lex(src).unwrap().into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn opcode_with_modifiers_and_address() {
        use Token::*;
        assert_eq!(
            kinds("ld.global.u32 %r8, [%rd9+-4]; // comment"),
            vec![
                Ident, DotWord, DotWord, Ident, Comma, LBracket, Ident, Plus, Minus, Int, RBracket,
                Semi
            ]
        );
    }

    #[test]
    fn literals() {
        use Token::*;
        assert_eq!(
            kinds("0f3F800000 0x1FU 42 8.5 \"s\""),
            vec![HexFloat, Int, Int, Float, Str]
        );
        assert_eq!(
            kinds("%tid.x /* block */ $L__BB0_2:"),
            vec![Ident, DotWord, Ident, Colon]
        );
    }

    #[test]
    fn modifiers_may_start_with_a_digit() {
        use Token::*;
        assert_eq!(
            kinds("tex.1d.v4.f32.s32 {%f1}, [%rd2, {%r1}]; .version 8.5"),
            vec![
                Ident, DotWord, DotWord, DotWord, DotWord, LBrace, Ident, RBrace, Comma, LBracket,
                Ident, Comma, LBrace, Ident, RBrace, RBracket, Semi, DotWord, Float
            ]
        );
        assert_eq!(kinds("1.5 0.5"), vec![Float, Float]);
    }

    #[test]
    fn bad_character_is_reported_with_its_span() {
        assert_eq!(lex("add.s32 %r1, %r2, #3;"), Err(18..19));
    }

    #[test]
    fn line_col() {
        let idx = LineIndex::new("ab\ncd\n");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(4), (2, 2));
    }
}

//! PTX parser: a recursive-descent pass over the token slice of [`super::lexer`].
//!
//! Recovers per statement: a bad instruction is recorded and parsing resumes after its `;`, so one
//! run reports every problem of a file. Accepts what nvcc, NVRTC and clang emit: `.version`,
//! `.target`, `.address_size`, `.file`/`.loc` line info, `.section` debug blocks (skipped),
//! `.pragma`, linkage directives, `.entry`/`.func` with performance directives, module and
//! function scope variables with initialisers, parameterized register declarations, nested `{}`
//! scopes, guards, vector and address operands.
//!
//! This file holds the entry points, the parser's state, its token access and its errors; the
//! grammar is in `module` (directives, declarations, functions, parameters, variables and their
//! initialisers) and `body` (a function's statements, scopes, register declarations,
//! instructions and operands).

use super::ast::*;
use super::lexer::{lex, LineIndex, Spanned, Token};
use crate::error::{Error, SourceLoc};
use std::ops::Range;

mod body;
mod module;

/// Parses a PTX module. `file` names the source in errors. On failure returns the first problem,
/// its message noting how many more the file has.
pub fn parse(src: &str, file: &str) -> Result<Module, Error> {
    parse_all(src, file).map_err(|mut errs| {
        let more = errs.len() - 1;
        let mut first = errs.swap_remove(0);
        if more > 0 {
            if let Error::Ptx { message, .. } = &mut first {
                let at_least = if errs.len() + 1 >= MAX_ERRORS {
                    "at least "
                } else {
                    ""
                };
                message.push_str(&format!(
                    " (and {at_least}{more} more problem{} in this file)",
                    if more == 1 { "" } else { "s" }
                ));
            }
        }
        first
    })
}

/// Parses a PTX module, returning every problem found (at least one) on failure.
pub fn parse_all(src: &str, file: &str) -> Result<Module, Vec<Error>> {
    let lines = LineIndex::new(src);
    let toks = match lex(src) {
        Ok(t) => t,
        Err(span) => {
            let p = Parser {
                src,
                toks: vec![],
                pos: 0,
                file,
                lines,
                errors: vec![],
                scopes: vec![],
                scope_count: 0,
                fn_regs: Default::default(),
                labels: vec![],
                files: vec![],
                loc: None,
            };
            return Err(vec![p.error_at(span, "unexpected character")]);
        }
    };
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        file,
        lines,
        errors: vec![],
        scopes: vec![],
        scope_count: 0,
        fn_regs: Default::default(),
        labels: vec![],
        files: vec![],
        loc: None,
    };
    let module = p.module();
    if p.errors.is_empty() {
        Ok(module)
    } else {
        Err(p.errors)
    }
}

type PResult<T> = Result<T, Error>;

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Spanned>,
    pos: usize,
    file: &'s str,
    lines: LineIndex,
    errors: Vec<Error>,
    /// Registers declared in the nested `{ }` scopes being parsed, innermost last: each maps a
    /// declared name to the unique name it gets (`%r1` → `%r1$3`), so that a block's `.reg` shadows
    /// the function's register of the same name, as PTX scoping says (NVRTC's math library
    /// declares `{ .reg .u32 %r0, %r1, ...; }` inside functions that have `%r<38>`).
    scopes: Vec<std::collections::HashMap<String, String>>,
    /// Nested scopes opened so far in this module (numbers the renamed registers).
    scope_count: usize,
    /// The register names the function being parsed declares at its own scope, for duplicates.
    fn_regs: std::collections::HashSet<String>,
    /// The labels of the function's scope and of each nested scope being parsed, innermost last:
    /// a label is local to its block (ptxas accepts `L1:` in two sibling blocks, not twice in one).
    labels: Vec<std::collections::HashSet<String>>,
    /// The `.file` directives read so far: (index, name).
    files: Vec<(u32, String)>,
    /// The location the last `.loc` of the function being parsed names.
    loc: Option<LineLoc>,
}

/// The most problems a parse records before it stops (the message says "at least").
pub const MAX_ERRORS: usize = 1000;

/// The most registers one function may declare, nested scopes included: the simulator indexes
/// registers with 16 bits (`ptx::decode`). ptxas itself accepts more virtual registers; this is
/// checked before any register name is built, so `%r<2147483648>` is refused at once.
pub const MAX_REGISTERS: u64 = 65_535;

/// The most bytes of `.param` space a kernel may take: what ptxas 12.9 enforces ("uses too much
/// parameter space (0x9c54 bytes, 0x7ffc max)"): 32,764 bytes with PTX ISA 8.1 or later and a
/// target of sm_70 or later, 4,352 bytes otherwise ("Kernel parameter size larger than 4352
/// bytes requires PTX ISA .version 8.1 or later"). The CUDA C++ Programming Guide ("Function
/// Parameters") states 32,764 bytes from Volta on with CUDA 12.1, 4 KB before.
pub fn max_param_bytes(version: (u32, u32), sm: u32) -> u64 {
    if version >= (8, 1) && sm >= 70 {
        32_764
    } else {
        4_352
    }
}

impl<'s> Parser<'s> {
    // ---- token access -------------------------------------------------------------------

    fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).map(|t| t.0)
    }

    fn peek_at(&self, k: usize) -> Option<Token> {
        self.toks.get(self.pos + k).map(|t| t.0)
    }

    fn text(&self) -> &'s str {
        self.toks
            .get(self.pos)
            .map(|t| &self.src[t.1.clone()])
            .unwrap_or("")
    }

    fn span(&self) -> Range<usize> {
        match self.toks.get(self.pos) {
            Some(t) => t.1.clone(),
            None => self.src.len()..self.src.len(),
        }
    }

    fn bump(&mut self) -> &'s str {
        let t = self.text();
        self.pos += 1;
        t
    }

    fn eat(&mut self, tok: Token) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.peek() == Some(Token::DotWord) && &self.text()[1..] == word {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: Token, what: &str) -> PResult<&'s str> {
        if self.peek() == Some(tok) {
            Ok(self.bump())
        } else {
            Err(self.error(&format!("expected {what}")))
        }
    }

    // ---- errors ---------------------------------------------------------------------------

    /// Records a problem and goes on parsing; after [`MAX_ERRORS`] of them the rest of the file
    /// is skipped, so that a file of a million bad statements costs no more than the first ones.
    fn push_error(&mut self, e: Error) {
        self.errors.push(e);
        if self.errors.len() >= MAX_ERRORS {
            self.pos = self.toks.len();
        }
    }

    fn error_at(&self, span: Range<usize>, message: &str) -> Error {
        let (line, col) = self.lines.line_col(span.start);
        // The whole source line, trimmed (it carries the instruction), cut at `MAX` characters: a
        // line of 30,000 braces is one line of error, not 60 KB of it (issue 40).
        const MAX: usize = 120;
        let line_text = self.lines.line_text(self.src, line).trim();
        // Only the line's first bytes are looked at: every error of a 100 KB line scanned all of
        // it, and the thousands of errors such a line gives took quadratic time (issue 40).
        let line_text = match line_text.char_indices().nth(8 * MAX) {
            Some((cut, _)) => &line_text[..cut],
            None => line_text,
        };
        let text = if span.start >= self.src.len() && line_text.is_empty() {
            "end of file".to_string()
        } else {
            let mut t = String::new();
            for w in line_text.split_whitespace() {
                if !t.is_empty() {
                    t.push(' ');
                }
                t.extend(w.chars().take(MAX + 1));
                if t.len() > MAX {
                    break;
                }
            }
            if let Some((cut, _)) = t.char_indices().nth(MAX) {
                t.truncate(cut);
                t.push_str(" ...");
            }
            t
        };
        Error::Ptx {
            loc: SourceLoc {
                file: self.file.to_string(),
                line,
                col,
            },
            message: message.to_string(),
            text,
        }
    }

    fn error(&self, message: &str) -> Error {
        let found = match self.peek() {
            Some(_) => format!("{message}, found `{}`", self.text()),
            None => format!("{message}, found end of file"),
        };
        self.error_at(self.span(), &found)
    }

    /// Skips past the next `;` (or up to a `}` closing the current scope). Braces opened while
    /// skipping are skipped with their contents: otherwise each `}` of a bad statement's
    /// nested operand (`{{{...}}}`, 30,000 deep) would close a scope and become an error of its
    /// own, each quoting the same long line.
    fn recover(&mut self) {
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            match t {
                Token::Semi if depth == 0 => {
                    self.pos += 1;
                    return;
                }
                Token::RBrace if depth == 0 => return,
                Token::LBrace => {
                    depth += 1;
                    self.pos += 1;
                }
                Token::RBrace => {
                    depth -= 1;
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// A line-info directive (at `.loc` or `.file`), kept where it has the form the PTX ISA gives
    /// ("Debugging Directives"): `.loc FILE LINE COLUMN` sets the location of the instructions
    /// after it (anything after the column, such as `, function_name ..., inlined_at ...`, is
    /// skipped); `.file INDEX "NAME"` (with nvcc's optional `, TIMESTAMP, SIZE`) adds to the
    /// module's file table. Line info never changes what runs: a directive of another shape is
    /// skipped with its line, as before the simulator read them.
    fn line_info(&mut self) {
        let (line, _) = self.lines.line_col(self.span().start);
        let word = &self.bump()[1..];
        let on_line = |p: &Self, k: usize| {
            p.toks
                .get(p.pos + k)
                .filter(|t| p.lines.line_col(t.1.start).0 == line)
                .map(|t| (t.0, &p.src[t.1.clone()]))
        };
        let number = |t: Option<(Token, &str)>| match t {
            Some((Token::Int, text)) => parse_int(text).and_then(|v| u32::try_from(v).ok()),
            _ => None,
        };
        if word == "loc" {
            let (f, l, c) = (
                number(on_line(self, 0)),
                number(on_line(self, 1)),
                number(on_line(self, 2)),
            );
            if let (Some(file), Some(line)) = (f, l) {
                self.loc = Some(LineLoc {
                    file,
                    line,
                    col: c.unwrap_or(0),
                });
            }
        } else if let (Some(index), Some((Token::Str, name))) =
            (number(on_line(self, 0)), on_line(self, 1))
        {
            let name = name
                .strip_prefix('"')
                .and_then(|n| n.strip_suffix('"'))
                .unwrap_or(name);
            self.files.push((index, name.to_string()));
        }
        if self.pos < self.toks.len() && self.lines.line_col(self.toks[self.pos].1.start).0 == line
        {
            self.skip_line();
        }
    }

    /// Skips every token that starts on the same line as the current one (`.loc`, `.file`).
    fn skip_line(&mut self) {
        let (line, _) = self.lines.line_col(self.span().start);
        while self.pos < self.toks.len()
            && self.lines.line_col(self.toks[self.pos].1.start).0 == line
        {
            self.pos += 1;
        }
    }

    fn skip_braced(&mut self) -> PResult<()> {
        self.expect(Token::LBrace, "`{`")?;
        let mut depth = 1;
        while depth > 0 {
            match self.peek() {
                Some(Token::LBrace) => depth += 1,
                Some(Token::RBrace) => depth -= 1,
                None => return Err(self.error("unclosed `{`")),
                _ => {}
            }
            self.pos += 1;
        }
        Ok(())
    }
}

/// Parses a PTX integer literal: decimal, `0x` hex, `0b` binary, leading-0 octal, `U` suffix.
pub fn parse_int(t: &str) -> Option<i64> {
    let t = t.strip_suffix('U').unwrap_or(t);
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse::<u64>().ok()?
    };
    Some(v as i64)
}

#[cfg(test)]
mod hostile_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::inst::Op;

    const CALLER: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.func (.param .b64 func_retval0) twice(.param .b64 twice_param_0)
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [twice_param_0];
    add.s64 %rd2, %rd1, %rd1;
    st.param.b64 [func_retval0+0], %rd2;
    ret;
}
.visible .entry k(.param .u64 k_param_0)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r1, 7;
    {
    .reg .b32 %r1;
    mov.u32 %r1, 9;
    mov.b64 %rd2, {%r1, %r1};
    }
    { // callseq 0, 0
    .param .b64 param0;
    st.param.b64 [param0+0], %rd2;
    .param .b64 retval0;
    call.uni (retval0), twice, (param0);
    ld.param.b64 %rd3, [retval0+0];
    }
    ret;
}
"#;

    #[test]
    fn line_info_gives_each_instruction_the_location_of_the_last_loc_before_it() {
        // nvcc's `.file` with a timestamp and size, NVRTC's at the end of the module, a `.loc`
        // with the `function_name`/`inlined_at` tail of newer PTX, and malformed ones (skipped).
        let src = r#"
.version 8.0
.target sm_90
.address_size 64
.file 2 "/home/u/k.cu", 1700000000, 512
.visible .entry k()
{
    .reg .b32 %r<4>;
    mov.u32 %r1, 1;
    .loc 1 10 5
    mov.u32 %r2, 2;
    add.u32 %r3, %r1, %r2;
    .loc 2 20 0, function_name $L__info_string0, inlined_at 1 10 5
    mov.u32 %r1, 3;
    .loc x y
    .loc 1
    mov.u32 %r1, 4;
    ret;
}
.visible .entry j()
{
    ret;
}
.file 1 "/k2.cu"
"#;
        let m = parse(src, "t.ptx").unwrap();
        assert_eq!(
            m.files,
            [(2, "/home/u/k.cu".to_string()), (1, "/k2.cu".to_string())]
        );
        assert_eq!(m.file_name(1), Some("/k2.cu"));
        assert_eq!(m.file_name(3), None);
        let at = |file, line, col| Some(LineLoc { file, line, col });
        let locs: Vec<Option<LineLoc>> = m.functions[0]
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Inst(i) => Some(i.loc),
                Statement::Label(_) => None,
            })
            .collect();
        assert_eq!(
            locs,
            [
                None,
                at(1, 10, 5),
                at(1, 10, 5),
                at(2, 20, 0),
                at(2, 20, 0),
                at(2, 20, 0)
            ]
        );
        // A function starts without a location.
        let Statement::Inst(ret) = &m.functions[1].body[0] else {
            panic!("ret")
        };
        assert_eq!(ret.loc, None);
    }

    #[test]
    fn a_nested_scope_shadows_the_registers_it_declares() {
        let m = parse(CALLER, "t.ptx").unwrap();
        let k = m.entry("k").unwrap();
        let insts: Vec<&Instruction> = k
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Inst(i) => Some(i),
                _ => None,
            })
            .collect();
        // mov.u32 %r1, 7 writes the function's %r1; the block's mov.u32 %r1, 9 another register.
        assert_eq!(insts[1].args[0], Operand::Reg("%r1".into()));
        let Operand::Reg(inner) = &insts[2].args[0] else {
            panic!("a register")
        };
        assert_ne!(inner, "%r1");
        assert!(k.regs.iter().any(|d| &d.name == inner));
        assert_eq!(
            insts[3].args[1],
            Operand::Vector(vec![
                Operand::Reg(inner.clone()),
                Operand::Reg(inner.clone())
            ])
        );
    }

    #[test]
    fn calls_parse_and_inline_into_moves_and_the_body() {
        let m = parse(CALLER, "t.ptx").unwrap();
        let twice = m.functions.iter().find(|f| f.name == "twice").unwrap();
        assert_eq!(twice.rets.len(), 1);
        let k = m.entry("k").unwrap();
        let call = k
            .body
            .iter()
            .find_map(|s| match s {
                Statement::Inst(i) if i.op == Op::Call => Some(i),
                _ => None,
            })
            .unwrap();
        assert_eq!(call.args.len(), 3);
        let flat = crate::ptx::inline::inline_calls(&m, k, CALLER, "t.ptx").unwrap();
        let ops: Vec<Op> = flat
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Inst(i) => Some(i.op),
                _ => None,
            })
            .collect();
        assert!(!ops.contains(&Op::Call));
        // The argument and the result pass through movs; the callee's ret became a branch.
        assert!(ops.contains(&Op::Bra));
        let movs = ops.iter().filter(|o| matches!(o, Op::Mov(_))).count();
        assert_eq!(
            movs,
            3 + 4,
            "the kernel's three movs and one per parameter slot access"
        );
        // Calling what the module does not define is an error naming it.
        let undefined = CALLER.replace("call.uni (retval0), twice,", "call.uni (retval0), malloc,");
        let m = parse(&undefined, "t.ptx").unwrap();
        let e = crate::ptx::inline::inline_calls(&m, m.entry("k").unwrap(), &undefined, "t.ptx")
            .unwrap_err()
            .to_string();
        assert!(e.contains("malloc") && e.contains("t.ptx:"), "{e}");
    }
}

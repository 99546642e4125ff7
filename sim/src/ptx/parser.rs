//! PTX parser: a recursive-descent pass over the token slice of [`super::lexer`].
//!
//! Recovers per statement: a bad instruction is recorded and parsing resumes after its `;`, so one
//! run reports every problem of a file. Accepts what nvcc, NVRTC and clang emit: `.version`,
//! `.target`, `.address_size`, `.file`/`.loc` line info, `.section` debug blocks (skipped),
//! `.pragma`, linkage directives, `.entry`/`.func` with performance directives, module and
//! function scope variables with initialisers, parameterized register declarations, nested `{}`
//! scopes, guards, vector and address operands.

use super::ast::*;
use super::inst::{self, Op};
use super::lexer::{lex, LineIndex, Spanned, Token};
use crate::error::{Error, SourceLoc};
use std::ops::Range;

/// Parses a PTX module. `file` names the source in errors. On failure returns the first problem,
/// its message noting how many more the file has.
pub fn parse(src: &str, file: &str) -> Result<Module, Error> {
    parse_all(src, file).map_err(|mut errs| {
        let more = errs.len() - 1;
        let mut first = errs.swap_remove(0);
        if more > 0 {
            if let Error::Ptx { message, .. } = &mut first {
                message.push_str(&format!(
                    " (and {more} more problem{} in this file)",
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

    fn error_at(&self, span: Range<usize>, message: &str) -> Error {
        let (line, col) = self.lines.line_col(span.start);
        let text = if span.start >= self.src.len() {
            "end of file".to_string()
        } else {
            // Show the whole source line, trimmed: it carries the instruction.
            self.src[span.start..]
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let line_text = self.src.lines().nth(line - 1).unwrap_or("").trim();
        let text = if line_text.is_empty() {
            text
        } else {
            line_text.to_string()
        };
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
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

    /// Skips past the next `;` (or up to a `}` closing the current scope).
    fn recover(&mut self) {
        while let Some(t) = self.peek() {
            match t {
                Token::Semi => {
                    self.pos += 1;
                    return;
                }
                Token::RBrace => return,
                _ => self.pos += 1,
            }
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

    // ---- module level ---------------------------------------------------------------------

    fn module(&mut self) -> Module {
        let mut m = Module {
            address_size: 64,
            ..Module::default()
        };
        while self.peek().is_some() {
            let start = self.pos;
            if let Err(e) = self.top_level(&mut m) {
                self.errors.push(e);
                if self.pos == start {
                    self.pos += 1;
                }
                self.recover();
            }
        }
        m
    }

    fn top_level(&mut self, m: &mut Module) -> PResult<()> {
        if self.peek() != Some(Token::DotWord) {
            return Err(self.error("expected a directive"));
        }
        let word = &self.text()[1..];
        match word {
            "version" => {
                self.bump();
                let v = self.bump();
                let (a, b) = v.split_once('.').unwrap_or((v, "0"));
                m.version = (a.parse().unwrap_or(0), b.parse().unwrap_or(0));
            }
            "target" => {
                self.bump();
                m.target = self
                    .expect(Token::Ident, "a target such as sm_80")?
                    .to_string();
                while self.eat(Token::Comma) {
                    self.expect(Token::Ident, "a target option")?;
                }
            }
            "address_size" => {
                self.bump();
                let v = self.expect(Token::Int, "32 or 64")?;
                m.address_size = v.parse().unwrap_or(0);
                if m.address_size != 64 && m.address_size != 32 {
                    return Err(self.error_at(
                        self.toks[self.pos - 1].1.clone(),
                        "address size must be 32 or 64",
                    ));
                }
            }
            "file" | "loc" => self.skip_line(),
            "section" => {
                self.bump();
                while self.peek() != Some(Token::LBrace) && self.peek().is_some() {
                    self.pos += 1;
                }
                self.skip_braced()?;
            }
            "pragma" => {
                self.bump();
                self.expect(Token::Str, "a pragma string")?;
                self.expect(Token::Semi, "`;`")?;
            }
            _ => self.declaration(m)?,
        }
        Ok(())
    }

    /// `[.visible|.extern|.weak|.common] (.entry|.func|variable)`.
    fn declaration(&mut self, m: &mut Module) -> PResult<()> {
        let start = self.span().start;
        let mut is_extern = false;
        loop {
            if self.eat_word("visible") || self.eat_word("weak") || self.eat_word("common") {
                continue;
            }
            if self.eat_word("extern") {
                is_extern = true;
                continue;
            }
            break;
        }
        if self.eat_word("entry") {
            let f = self.function(true, start)?;
            if let Some(f) = f {
                m.functions.push(f);
            }
            return Ok(());
        }
        if self.eat_word("func") {
            if let Some(f) = self.function(false, start)? {
                m.functions.push(f);
            }
            return Ok(());
        }
        let v = self.variable(is_extern, start)?;
        m.globals.push(v);
        Ok(())
    }

    /// `name (params) [perf directives] { body }` or `;` for a prototype (returns `None`).
    fn function(&mut self, is_entry: bool, start: usize) -> PResult<Option<Function>> {
        let rets = if !is_entry && self.peek() == Some(Token::LParen) {
            // Return parameters of a .func.
            self.params()?
        } else {
            vec![]
        };
        let name = self.expect(Token::Ident, "a function name")?.to_string();
        let params = if self.peek() == Some(Token::LParen) {
            self.params()?
        } else {
            vec![]
        };
        // Performance-tuning directives: .maxntid 256, 1, 1  .reqntid  .minnctapersm 2  .maxnreg 32 ...
        while self.peek() == Some(Token::DotWord) {
            self.bump();
            while matches!(self.peek(), Some(Token::Int) | Some(Token::Comma)) {
                self.pos += 1;
            }
        }
        let span = start..self.span().start;
        if self.eat(Token::Semi) {
            return Ok(None);
        }
        let mut f = Function {
            name,
            is_entry,
            params,
            rets,
            regs: vec![],
            locals: vec![],
            body: vec![],
            span,
        };
        self.expect(Token::LBrace, "`{` opening the function body")?;
        self.block(&mut f);
        Ok(Some(f))
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect(Token::LParen, "`(`")?;
        let mut out = vec![];
        while !self.eat(Token::RParen) {
            if !self.eat_word("param") && !self.eat_word("reg") {
                return Err(self.error("expected `.param`"));
            }
            let mut align = 0;
            let mut ty = None;
            while self.peek() == Some(Token::DotWord) {
                let w = &self.bump()[1..];
                if w == "align" {
                    align = self.int()? as u32;
                } else if let Some(t) = Type::from_word(w) {
                    ty = Some(t);
                } else if w == "ptr" || matches!(w, "global" | "const" | "shared" | "local") {
                    // `.ptr.global.align 16` annotations: no effect on execution.
                } else {
                    return Err(self.error_at(
                        self.toks[self.pos - 1].1.clone(),
                        "unsupported parameter attribute",
                    ));
                }
            }
            let ty = ty.ok_or_else(|| self.error("expected a parameter type"))?;
            let name = self.expect(Token::Ident, "a parameter name")?.to_string();
            let count = self.array_len(u64::from(ty.bytes()))?.unwrap_or(1);
            out.push(Param {
                name,
                ty,
                align: if align == 0 { ty.bytes() } else { align },
                count,
            });
            if !self.eat(Token::Comma) && self.peek() != Some(Token::RParen) {
                return Err(self.error("expected `,` or `)`"));
            }
        }
        Ok(out)
    }

    fn int(&mut self) -> PResult<i64> {
        let neg = self.eat(Token::Minus);
        let t = self.expect(Token::Int, "an integer")?;
        let v = parse_int(t).ok_or_else(|| {
            self.error_at(self.toks[self.pos - 1].1.clone(), "integer out of range")
        })?;
        Ok(if neg { v.wrapping_neg() } else { v })
    }

    /// `[N]`, `[]` (extern: 0) or nothing.
    /// `[N]` of elements of `elem_bytes` bytes each (`[]` is 0); its size in bytes must fit a u64.
    fn array_len(&mut self, elem_bytes: u64) -> PResult<Option<u64>> {
        if !self.eat(Token::LBracket) {
            return Ok(None);
        }
        if self.eat(Token::RBracket) {
            return Ok(Some(0));
        }
        let n = self.int()?;
        self.expect(Token::RBracket, "`]`")?;
        if n < 0 {
            return Err(self.error_at(self.toks[self.pos - 2].1.clone(), "negative array length"));
        }
        if (n as u64).checked_mul(elem_bytes.max(1)).is_none() {
            return Err(self.error_at(
                self.toks[self.pos - 2].1.clone(),
                "array length too large (its size in bytes overflows 64 bits)",
            ));
        }
        Ok(Some(n as u64))
    }

    /// `.space [.align N] [.v2|.v4] .type name[N] [= init];` (the space word not yet consumed).
    fn variable(&mut self, is_extern: bool, start: usize) -> PResult<Variable> {
        let space_word = self.expect(
            Token::DotWord,
            "a state space (.global, .const, .shared, .local)",
        )?;
        let space = StateSpace::from_word(&space_word[1..])
            .filter(|s| {
                matches!(
                    s,
                    StateSpace::Global | StateSpace::Const | StateSpace::Shared | StateSpace::Local
                )
            })
            .ok_or_else(|| {
                self.error_at(self.toks[self.pos - 1].1.clone(), "unsupported directive")
            })?;
        let mut align = 0;
        let mut vec = 1;
        let mut ty = None;
        while self.peek() == Some(Token::DotWord) {
            let w = &self.bump()[1..];
            match w {
                "align" => align = self.int()? as u32,
                "v2" => vec = 2,
                "v4" => vec = 4,
                _ => match Type::from_word(w) {
                    Some(t) => ty = Some(t),
                    None => {
                        return Err(self.error_at(
                            self.toks[self.pos - 1].1.clone(),
                            "unsupported variable attribute",
                        ))
                    }
                },
            }
        }
        let ty = ty.ok_or_else(|| self.error("expected a variable type"))?;
        let name = self.expect(Token::Ident, "a variable name")?.to_string();
        let mut count = self.array_len(u64::from(ty.bytes()) * vec)?.unwrap_or(1) * vec;
        let mut init = vec![];
        if self.eat(Token::Eq) {
            let vals = self.initializer()?;
            if count == 0 {
                count = vals.len() as u64;
            } else if vals.len() as u64 > count {
                return Err(self.error(&format!(
                    "{} initial values for an array of {count} elements",
                    vals.len()
                )));
            }
            for v in vals {
                init.extend_from_slice(&v.to_le_bytes()[..ty.bytes() as usize]);
            }
        }
        self.expect(Token::Semi, "`;`")?;
        let align = if align == 0 { ty.bytes() } else { align };
        Ok(Variable {
            space,
            name,
            ty,
            align,
            count,
            init,
            is_extern,
            span: start..self.span().start,
        })
    }

    /// `{1, 2, 3}` or a single value; floats as their bits.
    fn initializer(&mut self) -> PResult<Vec<u64>> {
        let braced = self.eat(Token::LBrace);
        let mut out = vec![];
        loop {
            if braced && self.peek() == Some(Token::RBrace) {
                break;
            }
            if self.peek() == Some(Token::LBrace) {
                out.extend(self.initializer()?);
            } else {
                match self.operand()? {
                    Operand::Int(v) => out.push(v as u64),
                    Operand::Float(f) => out.push(f.to_bits()),
                    _ => {
                        return Err(self.error_at(
                            self.toks[self.pos - 1].1.clone(),
                            "unsupported initializer (only numbers)",
                        ))
                    }
                }
            }
            if !braced || !self.eat(Token::Comma) {
                break;
            }
        }
        if braced {
            self.expect(Token::RBrace, "`}`")?;
        }
        Ok(out)
    }

    // ---- function bodies ------------------------------------------------------------------

    /// Statements up to the matching `}` (consumed). Nested `{}` scopes are flattened.
    fn block(&mut self, f: &mut Function) {
        loop {
            match self.peek() {
                None => {
                    self.errors.push(self.error("unclosed function body"));
                    return;
                }
                Some(Token::RBrace) => {
                    self.pos += 1;
                    return;
                }
                Some(Token::LBrace) => {
                    self.pos += 1;
                    self.scope_count += 1;
                    self.scopes.push(std::collections::HashMap::new());
                    self.block(f);
                    self.scopes.pop();
                }
                _ => {
                    let start = self.pos;
                    if let Err(e) = self.statement(f) {
                        self.errors.push(e);
                        if self.pos == start {
                            self.pos += 1;
                        }
                        self.recover();
                    }
                }
            }
        }
    }

    fn statement(&mut self, f: &mut Function) -> PResult<()> {
        if self.peek() == Some(Token::DotWord) {
            let start = self.span().start;
            match &self.text()[1..] {
                "reg" => {
                    self.bump();
                    return self.reg_decl(f);
                }
                "loc" | "file" => {
                    self.skip_line();
                    return Ok(());
                }
                "pragma" => {
                    self.bump();
                    self.expect(Token::Str, "a pragma string")?;
                    self.expect(Token::Semi, "`;`")?;
                    return Ok(());
                }
                "local" | "shared" | "const" | "global" => {
                    let v = self.variable(false, start)?;
                    f.locals.push(v);
                    return Ok(());
                }
                "param" => {
                    // The argument and return slots of a call sequence (`.param .b64 param0;`):
                    // calls are inlined (ptx::inline), which binds them by name and offset.
                    while !matches!(self.peek(), Some(Token::Semi) | None) {
                        self.pos += 1;
                    }
                    self.expect(Token::Semi, "`;`")?;
                    return Ok(());
                }
                _ => return Err(self.error("unsupported directive in a function body")),
            }
        }
        if self.peek() == Some(Token::Ident) && self.peek_at(1) == Some(Token::Colon) {
            let name = self.bump().to_string();
            self.pos += 1;
            f.body.push(Statement::Label(name));
            return Ok(());
        }
        let mut inst = self.instruction()?;
        if !self.scopes.is_empty() {
            self.rename_scoped(&mut inst);
        }
        f.body.push(Statement::Inst(inst));
        Ok(())
    }

    /// The unique name of a register declared in an enclosing nested scope, if any.
    fn scoped(&self, name: &str) -> Option<String> {
        self.scopes.iter().rev().find_map(|m| m.get(name).cloned())
    }

    /// Renames the registers of `inst` that a nested scope declares.
    fn rename_scoped(&self, inst: &mut Instruction) {
        fn walk(p: &Parser, o: &mut Operand) {
            match o {
                Operand::Reg(r) | Operand::NotPred(r) | Operand::Symbol(r) => {
                    if let Some(n) = p.scoped(r) {
                        *r = n;
                    }
                }
                Operand::Address { base: Some(b), .. } => walk(p, b),
                Operand::Vector(v) => v.iter_mut().for_each(|x| walk(p, x)),
                _ => {}
            }
        }
        if let Some(g) = &mut inst.guard {
            if let Some(n) = self.scoped(&g.reg) {
                g.reg = n;
            }
        }
        inst.args.iter_mut().for_each(|a| walk(self, a));
    }

    /// `.reg [.v2] .type %r<10>, %x;` (after `.reg`).
    fn reg_decl(&mut self, f: &mut Function) -> PResult<()> {
        let mut ty = None;
        while self.peek() == Some(Token::DotWord) {
            let w = &self.bump()[1..];
            match Type::from_word(w) {
                Some(t) => ty = Some(t),
                None => {
                    return Err(self.error_at(
                        self.toks[self.pos - 1].1.clone(),
                        "unsupported register type",
                    ))
                }
            }
        }
        let ty = ty.ok_or_else(|| self.error("expected a register type"))?;
        loop {
            let name = self.expect(Token::Ident, "a register name")?.to_string();
            let count = if self.eat(Token::Lt) {
                let n = self.int()?;
                self.expect(Token::Gt, "`>`")?;
                Some(u32::try_from(n).map_err(|_| self.error("register count out of range"))?)
            } else {
                None
            };
            if self.scopes.is_empty() {
                f.regs.push(RegDecl { name, ty, count });
            } else {
                // In a nested scope: one uniquely named register per declared name.
                let names: Vec<String> = match count {
                    Some(n) => (0..n).map(|k| format!("{name}{k}")).collect(),
                    None => vec![name],
                };
                for n in names {
                    let unique = format!("{n}${}", self.scope_count);
                    if let Some(top) = self.scopes.last_mut() {
                        top.insert(n, unique.clone());
                    }
                    f.regs.push(RegDecl {
                        name: unique,
                        ty,
                        count: None,
                    });
                }
            }
            if !self.eat(Token::Comma) {
                break;
            }
        }
        self.expect(Token::Semi, "`;`")?;
        Ok(())
    }

    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.span();
        let guard = if self.eat(Token::At) {
            let negated = self.eat(Token::Bang);
            let reg = self
                .expect(Token::Ident, "a predicate register")?
                .to_string();
            Some(Guard { reg, negated })
        } else {
            None
        };
        let op_span = self.span();
        let opcode = self.expect(Token::Ident, "an instruction")?;
        let mut mods = vec![];
        while self.peek() == Some(Token::DotWord) {
            mods.push(&self.bump()[1..]);
        }
        let op: Op =
            inst::decode(opcode, &mods).map_err(|msg| self.error_at(op_span.clone(), &msg))?;
        let mut args = vec![];
        if self.peek() != Some(Token::Semi) {
            loop {
                let mut a = self.operand()?;
                if self.eat(Token::Pipe) {
                    a = Operand::Vector(vec![a, self.operand()?]);
                }
                args.push(a);
                if !self.eat(Token::Comma) {
                    break;
                }
            }
        }
        self.expect(Token::Semi, "`;` after the operands")?;
        let line = self.lines.line_col(op_span.start).0 as u32;
        Ok(Instruction {
            guard,
            op,
            args,
            span: start.start..self.span().start,
            line,
        })
    }

    fn operand(&mut self) -> PResult<Operand> {
        match self.peek() {
            Some(Token::LBracket) => {
                self.pos += 1;
                let mut base = None;
                let mut offset = 0i64;
                match self.peek() {
                    Some(Token::Ident) => base = Some(Box::new(self.name_operand()?)),
                    _ => offset = self.int()?,
                }
                while matches!(self.peek(), Some(Token::Plus) | Some(Token::Minus)) {
                    let minus = self.peek() == Some(Token::Minus);
                    self.pos += 1;
                    let v = self.int()?;
                    offset = offset.wrapping_add(if minus { v.wrapping_neg() } else { v });
                }
                self.expect(Token::RBracket, "`]`")?;
                Ok(Operand::Address { base, offset })
            }
            Some(Token::LBrace) => {
                self.pos += 1;
                let mut items = vec![];
                loop {
                    items.push(self.operand()?);
                    if !self.eat(Token::Comma) {
                        break;
                    }
                }
                self.expect(Token::RBrace, "`}`")?;
                Ok(Operand::Vector(items))
            }
            Some(Token::LParen) => {
                // The return and argument lists of `call`: `(retval0)`, `(param0, param1)`, `()`.
                self.pos += 1;
                let mut items = vec![];
                while !self.eat(Token::RParen) {
                    items.push(self.operand()?);
                    if !self.eat(Token::Comma) && self.peek() != Some(Token::RParen) {
                        return Err(self.error("expected `,` or `)`"));
                    }
                }
                Ok(Operand::Vector(items))
            }
            Some(Token::Minus) | Some(Token::Int) => {
                if self.peek() == Some(Token::Minus)
                    && matches!(self.peek_at(1), Some(Token::HexFloat) | Some(Token::Float))
                {
                    self.pos += 1;
                    match self.operand()? {
                        Operand::Float(f) => return Ok(Operand::Float(-f)),
                        _ => unreachable!("a float literal parses to a float"),
                    }
                }
                Ok(Operand::Int(self.int()?))
            }
            Some(Token::HexFloat) => {
                let t = self.bump();
                let bits = &t[2..];
                let f = if t.as_bytes()[1].eq_ignore_ascii_case(&b'f') {
                    f64::from(f32::from_bits(u32::from_str_radix(bits, 16).unwrap_or(0)))
                } else {
                    f64::from_bits(u64::from_str_radix(bits, 16).unwrap_or(0))
                };
                Ok(Operand::Float(f))
            }
            Some(Token::Float) => {
                let t = self.bump();
                t.parse().map(Operand::Float).map_err(|_| {
                    self.error_at(self.toks[self.pos - 1].1.clone(), "bad float literal")
                })
            }
            Some(Token::Ident) => self.name_operand(),
            Some(Token::Bang) => {
                self.pos += 1;
                match self.name_operand()? {
                    Operand::Reg(r) => Ok(Operand::NotPred(r)),
                    _ => Err(self.error_at(
                        self.toks[self.pos - 1].1.clone(),
                        "`!` applies to a predicate register",
                    )),
                }
            }
            _ => Err(self.error("expected an operand")),
        }
    }

    /// A register, special register or symbol.
    fn name_operand(&mut self) -> PResult<Operand> {
        let span = self.span();
        let name = self.bump();
        if Special::is_special_name(name) {
            let comp = if self.peek() == Some(Token::DotWord)
                && matches!(&self.text()[1..], "x" | "y" | "z")
            {
                Some(&self.bump()[1..])
            } else {
                None
            };
            return Special::from_parts(name, comp)
                .map(Operand::Special)
                .ok_or_else(|| self.error_at(span, "unsupported special register"));
        }
        if name.starts_with('%') {
            Ok(Operand::Reg(name.to_string()))
        } else {
            Ok(Operand::Symbol(name.to_string()))
        }
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
mod tests {
    use super::*;

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
        let undefined =
            CALLER.replace("call.uni (retval0), twice,", "call.uni (retval0), vprintf,");
        let m = parse(&undefined, "t.ptx").unwrap();
        let e = crate::ptx::inline::inline_calls(&m, m.entry("k").unwrap(), &undefined, "t.ptx")
            .unwrap_err()
            .to_string();
        assert!(e.contains("vprintf") && e.contains("t.ptx:"), "{e}");
    }
}

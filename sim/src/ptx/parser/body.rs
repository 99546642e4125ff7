//! Function bodies: statements up to the closing `}`, nested `{}` scopes and their register
//! renaming, register declarations, instructions with their guards, and operands.

use super::{PResult, Parser};
use crate::ptx::ast::*;
use crate::ptx::inst::{self, Op};
use crate::ptx::lexer::Token;

impl<'s> Parser<'s> {
    /// Statements up to the matching `}` (consumed). Nested `{}` scopes are flattened, in a loop
    /// rather than by recursion: 30,000 nested braces overflowed the stack (issue 40).
    pub(super) fn block(&mut self, f: &mut Function) {
        let outer = self.scopes.len();
        loop {
            match self.peek() {
                None => {
                    self.push_error(self.error("unclosed function body"));
                    self.scopes.truncate(outer);
                    self.labels.truncate(outer + 1);
                    return;
                }
                Some(Token::RBrace) => {
                    self.pos += 1;
                    if self.scopes.len() == outer {
                        return;
                    }
                    self.scopes.pop();
                    self.labels.pop();
                }
                Some(Token::LBrace) => {
                    self.pos += 1;
                    self.scope_count += 1;
                    self.scopes.push(std::collections::HashMap::new());
                    self.labels.push(Default::default());
                }
                _ => {
                    let start = self.pos;
                    if let Err(e) = self.statement(f) {
                        self.push_error(e);
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
                    self.line_info();
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
            let at = self.span();
            let name = self.bump().to_string();
            self.pos += 1;
            if let Some(scope) = self.labels.last_mut() {
                if !scope.insert(name.clone()) {
                    return Err(self.error_at(at, "label defined twice in one scope"));
                }
            }
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
            let at = self.span();
            let name = self.expect(Token::Ident, "a register name")?.to_string();
            let count = if self.eat(Token::Lt) {
                let n = self.int()?;
                self.expect(Token::Gt, "`>`")?;
                Some(
                    u32::try_from(n)
                        .map_err(|_| self.error_at(at.clone(), "register count out of range"))?,
                )
            } else {
                None
            };
            // Counted before a name is built: `%r<2147483648>` would otherwise take 50 GB.
            let declared = f
                .regs
                .iter()
                .map(|d| u64::from(d.count.unwrap_or(1)))
                .sum::<u64>();
            if declared + u64::from(count.unwrap_or(1)) > super::MAX_REGISTERS {
                return Err(self.error_at(
                    at,
                    &format!(
                        "more than {} registers declared in this function",
                        super::MAX_REGISTERS
                    ),
                ));
            }
            let names = (0..count.unwrap_or(1)).map(|k| match count {
                Some(_) => format!("{name}{k}"),
                None => name.clone(),
            });
            if self.scopes.is_empty() {
                for n in names {
                    if !self.fn_regs.insert(n.clone()) {
                        return Err(self.duplicate_reg(at, &n));
                    }
                }
                f.regs.push(RegDecl { name, ty, count });
            } else {
                // In a nested scope: one uniquely named register per declared name.
                for n in names {
                    let unique = format!("{n}${}", self.scope_count);
                    let top = self.scopes.last_mut();
                    if top
                        .and_then(|t| t.insert(n.clone(), unique.clone()))
                        .is_some()
                    {
                        return Err(self.duplicate_reg(at, &n));
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

    /// A register declared twice in one scope (ptxas: "Duplicate definition of variable").
    fn duplicate_reg(&self, at: std::ops::Range<usize>, name: &str) -> crate::error::Error {
        self.error_at(
            at,
            &format!("register `{name}` declared twice in one scope"),
        )
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
        let line = self.lines.line_col(op_span.start).0 as u32;
        let Ok(op) = inst::decode(opcode, &mods) else {
            // Not executed here (`tex`, `mma`, an unsupported modifier): kept as an unsupported
            // instruction, its operands skipped (a texture operand `[tex, {%r1}]` has a syntax of
            // its own), so that the other kernels of the module run; decoding its kernel is the
            // error, naming this line (`ptx::decode`, `inst::unsupported_reason`).
            self.skip_operands()?;
            return Ok(Instruction {
                guard,
                op: Op::Unsupported,
                args: vec![],
                span: start.start..self.span().start,
                line,
                loc: self.loc,
            });
        };
        let mut args = vec![];
        let first = self.span();
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
        // `d|p` is parsed as a vector of two, like `{d, p}`, which ptxas refuses for these
        // instructions: checked here, where the braces are still seen.
        if self.src.as_bytes().get(first.start) == Some(&b'{') && pair_destination(op) {
            return Err(self.error_at(first, &braced_pair(opcode, &args[0])));
        }
        self.expect(Token::Semi, "`;` after the operands")?;
        Ok(Instruction {
            guard,
            op,
            args,
            span: start.start..self.span().start,
            line,
            loc: self.loc,
        })
    }

    /// Skips the operands of an unsupported instruction up to its `;` (the span then ends
    /// there): any tokens, with `{}` `[]` `()` balanced on one statement.
    fn skip_operands(&mut self) -> PResult<()> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.error("expected `;` after the operands")),
                Some(Token::Semi) if depth == 0 => break,
                Some(Token::LBrace | Token::LBracket | Token::LParen) => depth += 1,
                Some(Token::RBrace | Token::RBracket | Token::RParen) => {
                    if depth == 0 {
                        return Err(self.error("expected `;` after the operands"));
                    }
                    depth -= 1;
                }
                Some(Token::Semi) => {
                    return Err(self.error("unbalanced brackets in the operands"));
                }
                _ => {}
            }
            self.pos += 1;
        }
        self.pos += 1;
        Ok(())
    }

    pub(super) fn operand(&mut self) -> PResult<Operand> {
        match self.peek() {
            Some(Token::LBracket) => {
                self.pos += 1;
                let mut base = None;
                let mut offset = 0i64;
                match self.peek() {
                    Some(Token::Ident) => base = Some(Box::new(self.name_operand()?)),
                    _ => offset = self.int()?,
                }
                if let (Some(handle), true) = (&base, self.eat(Token::Comma)) {
                    // `[tex, {x, y}]`: a texture or surface object and its coordinates.
                    let Operand::Vector(coords) = self.operand()? else {
                        return Err(self.error("expected a coordinate vector `{...}`"));
                    };
                    self.expect(Token::RBracket, "`]`")?;
                    return Ok(Operand::Texture {
                        handle: handle.clone(),
                        coords,
                    });
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
                    items.push(self.list_item()?);
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
                    items.push(self.list_item()?);
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
                // Only a name may follow (`!` at the end of the file read past the last token:
                // found by the `ptx` fuzz target).
                if self.peek() != Some(Token::Ident) {
                    return Err(self.error("`!` applies to a predicate register"));
                }
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

    /// An element of a vector operand (`{%r1, %r2}`) or of a call's list: any operand but another
    /// list, which PTX does not nest (and which, nested 30,000 deep, overflowed the stack).
    fn list_item(&mut self) -> PResult<Operand> {
        if matches!(self.peek(), Some(Token::LBrace) | Some(Token::LParen)) {
            return Err(self.error("a vector or argument list cannot contain another list"));
        }
        self.operand()
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
        if let Some(v) = predefined_constant(name) {
            return Ok(Operand::Int(v));
        }
        if name.starts_with('%') {
            Ok(Operand::Reg(name.to_string()))
        } else {
            Ok(Operand::Symbol(name.to_string()))
        }
    }
}

/// The value of a predefined PTX constant (PTX ISA §5.4 "Identifiers", table "Predefined
/// Identifiers": `WARP_SZ`, "the maximum number of threads per warp for the target platform",
/// the one constant among the predefined identifiers; the others are special registers). nvcc
/// and NVRTC write it where CUDA code reads `warpSize` (`div.u32 %r3, %r2, WARP_SZ;`). Every
/// GPU the simulator models has warps of 32 threads (`config::check` allows `sm.warp_size = 32`
/// only), so it is the immediate 32.
pub(super) fn predefined_constant(name: &str) -> Option<i64> {
    match name {
        "WARP_SZ" => Some(32),
        _ => None,
    }
}

/// Whether `op`'s destination may be a register and a predicate, or two predicates, written
/// `d|p` (PTX ISA: `setp` "p[|q]", `shfl.sync` and `match.all.sync` "d[|p]", the `.f16x2` `setp`
/// "p|q"), never as a vector.
fn pair_destination(op: Op) -> bool {
    matches!(
        op,
        Op::Setp { .. } | Op::HalfSetp { .. } | Op::Shfl(_) | Op::Match { .. }
    )
}

/// The error for `{d, p}` written where `d|p` is meant (ptxas 12.9: "Arguments mismatch for
/// instruction 'shfl'"), with the spelling to use.
fn braced_pair(opcode: &str, dst: &Operand) -> String {
    let names: Vec<&str> = match dst {
        Operand::Vector(v) => v
            .iter()
            .filter_map(|o| match o {
                Operand::Reg(r) | Operand::Symbol(r) => Some(r.as_str()),
                _ => None,
            })
            .collect(),
        _ => vec![],
    };
    let spelling = match names[..] {
        [d, p] => format!(" (`{d}|{p}`)"),
        _ => String::new(),
    };
    format!(
        "`{opcode}` writes a second destination after `|`{spelling}, not in a vector `{{...}}` \
(ptxas: \"Arguments mismatch for instruction '{opcode}'\")"
    )
}

//! The module level of the grammar: top-level directives, module-scope declarations, `.entry`
//! and `.func` with their parameters and performance directives, variables and their
//! initialisers.

use super::{max_param_bytes, parse_int, PResult, Parser};
use crate::ptx::ast::*;
use crate::ptx::lexer::Token;

impl<'s> Parser<'s> {
    pub(super) fn module(&mut self) -> Module {
        let mut m = Module {
            address_size: 64,
            ..Module::default()
        };
        while self.peek().is_some() {
            let start = self.pos;
            if let Err(e) = self.top_level(&mut m) {
                self.push_error(e);
                if self.pos == start {
                    self.pos += 1;
                }
                self.recover();
            }
        }
        if m.version == (0, 0) {
            let e = self.error("missing .version directive at the start of the file");
            self.push_error(e);
        }
        m.files = std::mem::take(&mut self.files);
        m
    }

    fn top_level(&mut self, m: &mut Module) -> PResult<()> {
        if self.peek() != Some(Token::DotWord) {
            return Err(self.error("expected a directive"));
        }
        let word = &self.text()[1..];
        // ptxas: "Missing .version directive at start of file", then "Missing .target directive".
        if word != "version" && m.version == (0, 0) {
            m.version = (0, 1); // reported once; the directive itself still parses
            let e = self.error("missing .version directive at the start of the file");
            self.push_error(e);
        }
        if !matches!(word, "version" | "target") && m.target.is_empty() {
            m.target = "?".into(); // reported once
            let e = self.error("missing .target directive after .version");
            self.push_error(e);
        }
        match word {
            "version" => {
                self.bump();
                let at = self.span();
                let v = self.bump();
                let parts = v.split_once('.').and_then(|(a, b)| {
                    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
                    (digits(a) && digits(b)).then(|| (a.parse().ok(), b.parse().ok()))
                });
                match parts {
                    Some((Some(a), Some(b))) if (a, b) != (0, 0) => m.version = (a, b),
                    _ => {
                        m.version = (0, 1);
                        let e =
                            self.error_at(at, "malformed .version: expected MAJOR.MINOR, e.g. 8.0");
                        self.push_error(e);
                    }
                }
            }
            "target" => {
                self.bump();
                let at = self.span();
                m.target = self
                    .expect(Token::Ident, "a target such as sm_80")?
                    .to_string();
                m.target_line = self.lines.line_col(at.start).0 as u32;
                if target_sm(&m.target).is_none() {
                    let e = self.error_at(
                        at,
                        "unsupported .target: expected sm_NN or compute_NN, e.g. sm_80",
                    );
                    self.push_error(e);
                }
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
            "file" | "loc" => self.line_info(),
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
            let name_at = self.span();
            let f = self.function(true, start)?;
            if let Some(f) = f {
                let bytes = f.params.iter().fold(0u64, |end, p| {
                    end.next_multiple_of(u64::from(p.align.max(1)))
                        .saturating_add(p.size_bytes())
                });
                let max = max_param_bytes(m.version, target_sm(&m.target).unwrap_or(0));
                if bytes > max {
                    return Err(self.error_at(
                        name_at,
                        &format!(
                            "kernel `{}` takes {bytes} bytes of parameters; at most {max} with \
.version {}.{} and .target {} (as ptxas enforces)",
                            f.name, m.version.0, m.version.1, m.target
                        ),
                    ));
                }
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
        let tuning = self.tuning()?;
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
            tuning,
        };
        self.expect(Token::LBrace, "`{` opening the function body")?;
        self.fn_regs.clear();
        self.labels = vec![Default::default()];
        self.loc = None;
        self.block(&mut f);
        Ok(Some(f))
    }

    /// The performance-tuning directives after a function's parameters: `.maxntid 256, 1, 1`,
    /// `.reqntid 128`, `.minnctapersm 2`, `.maxnreg 32` kept ([`Tuning`], checked as ptxas 12.9
    /// checks them); others (`.maxclusterrank 8`, `.noreturn`) skipped with their numbers.
    fn tuning(&mut self) -> PResult<Tuning> {
        let mut t = Tuning::default();
        let mut first_ntid: Option<&str> = None;
        while self.peek() == Some(Token::DotWord) {
            let at = self.span();
            let word = &self.bump()[1..];
            let (name, most) = match word {
                "maxntid" | "reqntid" => (word, 3),
                "minnctapersm" | "maxnreg" => (word, 1),
                _ => {
                    while matches!(self.peek(), Some(Token::Int) | Some(Token::Comma)) {
                        self.pos += 1;
                    }
                    continue;
                }
            };
            let mut dims = [1u32; 3];
            for (k, d) in dims.iter_mut().enumerate().take(most) {
                if k > 0 && !self.eat(Token::Comma) {
                    break;
                }
                let v_at = self.span();
                let v = self.int()?;
                *d = match u32::try_from(v) {
                    Ok(v) if v > 0 => v,
                    _ => {
                        let e = self.error_at(
                            v_at,
                            &format!(
                                "positive non-zero value expected for .{name} (at most \
                                 4294967295, as ptxas requires)"
                            ),
                        );
                        self.push_error(e);
                        1
                    }
                };
            }
            if self.peek() == Some(Token::Comma) {
                return Err(self.error(&format!(".{name} takes at most {most} values")));
            }
            let line = self.lines.line_col(at.start).0 as u32;
            let bound = Some(ThreadBound { dims, line });
            match name {
                "maxntid" => t.maxntid = bound,
                "reqntid" => t.reqntid = bound,
                "minnctapersm" => t.minnctapersm = Some(dims[0]),
                _ => t.maxnreg = Some(dims[0]),
            }
            if matches!(name, "maxntid" | "reqntid") {
                match first_ntid {
                    Some(other) if other != name => {
                        // ptxas: "Conflicting directives: .maxntid and .reqntid cannot both be
                        // specified".
                        let e = self.error_at(
                            at,
                            ".maxntid and .reqntid cannot both be given for one function (as \
                             ptxas refuses)",
                        );
                        self.push_error(e);
                    }
                    Some(_) => {}
                    None => first_ntid = Some(name),
                }
            }
        }
        Ok(t)
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect(Token::LParen, "`(`")?;
        let mut out: Vec<Param> = vec![];
        while !self.eat(Token::RParen) {
            if !self.eat_word("param") && !self.eat_word("reg") {
                return Err(self.error("expected `.param`"));
            }
            let mut align = 0;
            let mut ty = None;
            while self.peek() == Some(Token::DotWord) {
                let w = &self.bump()[1..];
                if w == "align" {
                    align = self.align()?;
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
            let name_at = self.span();
            let name = self.expect(Token::Ident, "a parameter name")?.to_string();
            if out.iter().any(|p| p.name == name) {
                let e = self.error_at(name_at, "parameter name used twice");
                self.push_error(e);
            }
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

    /// The `N` of `.align N`: a power of two that fits 32 bits (ptxas: "Alignment must be a
    /// power of two").
    fn align(&mut self) -> PResult<u32> {
        let at = self.span();
        let n = self.int()?;
        match u32::try_from(n) {
            Ok(a) if a.is_power_of_two() => Ok(a),
            _ => {
                // Reported, and parsing goes on with no alignment: one error, not a cascade.
                let e = self.error_at(at, "alignment must be a power of two");
                self.push_error(e);
                Ok(1)
            }
        }
    }

    pub(super) fn int(&mut self) -> PResult<i64> {
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
    pub(super) fn variable(&mut self, is_extern: bool, start: usize) -> PResult<Variable> {
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
                "align" => align = self.align()?,
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

    /// `{1, 2, 3}`, `{{1, 2}, {3, 4}}` or a single value, flattened; floats as their bits. Nested
    /// braces are counted in a loop, not recursed into: 30,000 of them overflowed the stack
    /// (issue 40).
    fn initializer(&mut self) -> PResult<Vec<u64>> {
        let mut out = vec![];
        if !self.eat(Token::LBrace) {
            out.push(self.init_value()?);
            return Ok(out);
        }
        let mut depth = 1usize;
        loop {
            // An item: a value, a nested list, or nothing before a `}` (`{}`, `{1, 2,}`).
            match self.peek() {
                Some(Token::LBrace) => {
                    self.pos += 1;
                    depth += 1;
                    continue;
                }
                Some(Token::RBrace) => {}
                _ => out.push(self.init_value()?),
            }
            // After it: `,` and the next item, or the `}`s that close lists.
            while !self.eat(Token::Comma) {
                self.expect(Token::RBrace, "`}`")?;
                depth -= 1;
                if depth == 0 {
                    return Ok(out);
                }
            }
        }
    }

    /// One number of an initializer.
    fn init_value(&mut self) -> PResult<u64> {
        if matches!(self.peek(), Some(Token::LBrace) | Some(Token::LParen)) {
            return Err(self.error("unsupported initializer (only numbers)"));
        }
        match self.operand()? {
            Operand::Int(v) => Ok(v as u64),
            Operand::Float(f) => Ok(f.to_bits()),
            _ => Err(self.error_at(
                self.toks[self.pos - 1].1.clone(),
                "unsupported initializer (only numbers)",
            )),
        }
    }
}

/// The architecture number of a `.target` (`sm_80` → 80, `sm_90a` → 90, `compute_70` → 70), or
/// `None` for a name that is not one.
pub(super) fn target_sm(t: &str) -> Option<u32> {
    let n = t
        .strip_prefix("sm_")
        .or_else(|| t.strip_prefix("compute_"))?;
    let n = n.strip_suffix(['a', 'f']).unwrap_or(n);
    if n.len() < 2 || !n.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

//! Calls of device functions, inlined before decoding.
//!
//! nvcc and NVRTC keep some functions out of line even at -O3: the slow paths of the CUDA math
//! library (`__internal_trig_reduction_slowpathd` behind `sin`/`cos` of doubles,
//! `__internal_accurate_pow` behind `pow`), `__noinline__` functions. Their PTX passes arguments
//! through `.param` slots of a call sequence:
//!
//! ```text
//! { .param .b64 param0;  st.param.f64 [param0+0], %fd1;  .param .b64 retval0;
//!   call.uni (retval0), f, (param0);  ld.param.f64 %fd2, [retval0+0]; }
//! .func (.param .b64 func_retval0) f(.param .b64 f_param_0) { ld.param.f64 %fd4, [f_param_0+0]; ...
//!   st.param.f64 [func_retval0+0], %fd9; ret; }
//! ```
//!
//! [`inline_calls`] replaces each `call` by a copy of the callee's body: its registers, labels and
//! function-scope variables renamed for that call site, every parameter slot (argument or return
//! value, at each byte offset) a hidden register, so `st.param`/`ld.param` on them become `mov`s,
//! and `ret` a branch to the end of the copy. The result executes exactly as the call would; the
//! `call` and `ret` themselves are not counted as instructions (ptxas inlines many such calls too).
//! printf's `vprintf`, which the module only declares, becomes one [`Op::Vprintf`]
//! ([`crate::exec::printf`]). Recursion, indirect calls and calls of other functions the module
//! only declares (`malloc`) are errors naming the call.

use super::ast::{Function, Instruction, Operand, Param, RegDecl, Statement, Type, Variable};
use super::inst::{MemOp, Op};
use crate::error::{Error, SourceLoc};
use std::collections::{HashMap, HashSet};

/// Deepest nesting of inlined calls.
const MAX_DEPTH: usize = 16;

/// `f` with every `call` replaced by the callee's body (a clone of `f` when it makes none).
pub fn inline_calls(
    module: &super::Module,
    f: &Function,
    src: &str,
    file: &str,
) -> Result<Function, Error> {
    let calls = |f: &Function| {
        f.body
            .iter()
            .any(|s| matches!(s, Statement::Inst(i) if i.op == Op::Call))
    };
    if !calls(f) {
        return Ok(f.clone());
    }
    let mut inl = Inliner {
        module,
        src,
        file,
        sites: 0,
        regs: f.regs.clone(),
        locals: f.locals.clone(),
        hidden: HashSet::new(),
        stack: vec![f.name.clone()],
    };
    let identity = Renamer::default();
    let body = inl.expand(&f.body, &f.regs, &identity, None)?;
    let mut out = f.clone();
    out.body = body;
    let mut hidden: Vec<String> = inl.hidden.into_iter().collect();
    hidden.sort();
    out.regs = inl.regs;
    out.regs.extend(hidden.into_iter().map(|name| RegDecl {
        name,
        ty: Type::B64,
        count: None,
    }));
    out.locals = inl.locals;
    Ok(out)
}

/// How the names of one inlined copy map to the caller's.
#[derive(Default)]
struct Renamer {
    /// Suffix of registers, labels and local variables (`""`: the entry itself, unchanged).
    suffix: String,
    /// Labels and function-scope variables of the callee (renamed); other symbols are global.
    own: HashSet<String>,
    /// The callee's parameters: name → index; and its return parameters' names.
    params: HashMap<String, usize>,
    rets: HashSet<String>,
    /// The call site whose slots the callee's parameters bind to.
    site: usize,
}

impl Renamer {
    /// A register of the copy: a prefix keeps `%r<10>` declarations and their `%r3` uses
    /// consistent (`%r` → `%__call2_r`, `%r3` → `%__call2_r3`).
    fn reg(&self, r: &str) -> String {
        if self.suffix.is_empty() || r == "_" {
            r.to_string()
        } else if let Some(rest) = r.strip_prefix('%') {
            format!("%_{}_{rest}", self.suffix)
        } else {
            format!("_{}_{r}", self.suffix)
        }
    }

    fn symbol(&self, s: &str) -> String {
        if self.own.contains(s) {
            format!("{s}{}", self.suffix)
        } else {
            s.to_string()
        }
    }

    fn operand(&self, o: &Operand, regs: &HashSet<String>) -> Operand {
        match o {
            Operand::Reg(r) => Operand::Reg(self.reg(r)),
            Operand::NotPred(r) => Operand::NotPred(self.reg(r)),
            // A register declared without `%` parses as a symbol.
            Operand::Symbol(s) if regs.contains(s) => Operand::Symbol(self.reg(s)),
            Operand::Symbol(s) => Operand::Symbol(self.symbol(s)),
            Operand::Address { base, offset } => Operand::Address {
                base: base.as_ref().map(|b| Box::new(self.operand(b, regs))),
                offset: *offset,
            },
            Operand::Vector(v) => {
                Operand::Vector(v.iter().map(|x| self.operand(x, regs)).collect())
            }
            o => o.clone(),
        }
    }
}

struct Inliner<'a> {
    module: &'a super::Module,
    src: &'a str,
    file: &'a str,
    sites: usize,
    regs: Vec<RegDecl>,
    locals: Vec<Variable>,
    /// Hidden registers of the parameter slots.
    hidden: HashSet<String>,
    /// Functions being inlined (recursion check).
    stack: Vec<String>,
}

/// The hidden register of argument `p` of call site `site` at byte `offset`.
fn arg_slot(site: usize, p: usize, offset: i64) -> String {
    format!("%__call{site}_arg{p}_{offset}")
}

/// The hidden register of the return value of call site `site` at byte `offset`.
fn ret_slot(site: usize, offset: i64) -> String {
    format!("%__call{site}_ret_{offset}")
}

/// Whether `name` is a hidden register of a parameter slot ([`arg_slot`], [`ret_slot`]): a
/// `.b64` that holds a value of any type the callee's `ld.param`/`st.param` moves, so no operand
/// type is checked against it.
pub(crate) fn is_param_slot(name: &str) -> bool {
    name.starts_with("%__call")
}

/// The symbol and offset of `[sym+off]`.
fn param_address(o: &Operand) -> Option<(&str, i64)> {
    match o {
        Operand::Address {
            base: Some(b),
            offset,
        } => match b.as_ref() {
            Operand::Symbol(s) => Some((s.as_str(), *offset)),
            _ => None,
        },
        _ => None,
    }
}

/// The names of a call's return list and argument list, and the callee.
fn call_parts(i: &Instruction) -> Option<(Vec<String>, String, Vec<String>)> {
    let names = |o: &Operand| match o {
        Operand::Vector(v) => v
            .iter()
            .map(|x| match x {
                Operand::Symbol(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>(),
        _ => None,
    };
    match i.args.as_slice() {
        [Operand::Symbol(f)] => Some((vec![], f.clone(), vec![])),
        [Operand::Symbol(f), a] => Some((vec![], f.clone(), names(a)?)),
        [r, Operand::Symbol(f)] => Some((names(r)?, f.clone(), vec![])),
        [r, Operand::Symbol(f), a] => Some((names(r)?, f.clone(), names(a)?)),
        _ => None,
    }
}

impl Inliner<'_> {
    fn err(&self, i: &Instruction, message: String) -> Error {
        let start = i.span.start.min(self.src.len());
        let line_start = self.src[..start].rfind('\n').map_or(0, |k| k + 1);
        Error::Ptx {
            loc: SourceLoc {
                file: self.file.into(),
                line: i.line as usize,
                col: start - line_start + 1,
            },
            message,
            text: self.src[i.span.start.min(self.src.len())..i.span.end.min(self.src.len())]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    fn mov(
        i: &Instruction,
        guard: Option<super::Guard>,
        ty: Type,
        dst: Operand,
        src: Operand,
    ) -> Statement {
        Statement::Inst(Instruction {
            guard,
            op: Op::Mov(ty),
            args: vec![dst, src],
            span: i.span.clone(),
            line: i.line,
            loc: i.loc,
        })
    }

    /// Expands `body` (of the entry, or of a callee renamed by `rn`); `site` is the call site
    /// `body` was inlined for.
    fn expand(
        &mut self,
        body: &[Statement],
        raw_regs: &[RegDecl],
        rn: &Renamer,
        site: Option<usize>,
    ) -> Result<Vec<Statement>, Error> {
        let regs: HashSet<String> = reg_names(raw_regs);
        // The call sites of this body, in order: (statement index, site number, rets, args).
        let mut calls = vec![];
        for (k, s) in body.iter().enumerate() {
            if let Statement::Inst(i) = s {
                if i.op == Op::Call {
                    let (rets, callee, args) = call_parts(i).ok_or_else(|| {
                        self.err(
                            i,
                            "unsupported form of `call` (only direct calls `call (ret), f, (args)`)"
                                .into(),
                        )
                    })?;
                    self.sites += 1;
                    calls.push((k, self.sites, rets, callee, args));
                }
            }
        }
        let ret_label = site.map(|s| format!("$__call{s}_return"));
        let mut out = Vec::with_capacity(body.len());
        for (k, s) in body.iter().enumerate() {
            let i = match s {
                Statement::Label(l) => {
                    out.push(Statement::Label(rn.symbol(l)));
                    continue;
                }
                Statement::Inst(i) => i,
            };
            let guard = i.guard.as_ref().map(|g| super::Guard {
                reg: rn.reg(&g.reg),
                negated: g.negated,
            });
            match i.op {
                Op::Call => {
                    let (_, site_no, _, callee, args) = calls
                        .iter()
                        .find(|c| c.0 == k)
                        .cloned()
                        .expect("every call was numbered");
                    if i.guard.is_some() {
                        return Err(self.err(i, "a guarded `call` is not supported".into()));
                    }
                    out.extend(self.inline_one(i, &callee, args.len(), site_no)?);
                }
                Op::Ret if site.is_some() => {
                    out.push(Statement::Inst(Instruction {
                        guard,
                        op: Op::Bra,
                        args: vec![Operand::Symbol(ret_label.clone().unwrap_or_default())],
                        span: i.span.clone(),
                        line: i.line,
                        loc: i.loc,
                    }));
                }
                Op::St(m) | Op::Ld(m) if is_param(m) => {
                    let store = matches!(i.op, Op::St(_));
                    let (addr, value) = if store {
                        (&i.args[0], &i.args[1])
                    } else {
                        (&i.args[1], &i.args[0])
                    };
                    let Some((sym, off)) = param_address(addr) else {
                        out.push(Statement::Inst(self.renamed(i, rn, &regs)));
                        continue;
                    };
                    // Which slot: a call argument or return value of this body, or (in a
                    // callee) its own parameter or return value.
                    let slot = |elem: i64| -> Option<String> {
                        let o = off + elem;
                        if store {
                            // An argument of the next call that lists `sym`.
                            if let Some(c) = calls
                                .iter()
                                .find(|c| c.0 > k && c.4.contains(&sym.to_string()))
                            {
                                let p = c.4.iter().position(|a| a == sym).unwrap_or(0);
                                return Some(arg_slot(c.1, p, o));
                            }
                            if rn.rets.contains(sym) {
                                return Some(ret_slot(rn.site, o));
                            }
                        } else {
                            // The return value of the last call that listed `sym`.
                            if let Some(c) = calls
                                .iter()
                                .rev()
                                .find(|c| c.0 < k && c.2.contains(&sym.to_string()))
                            {
                                return Some(ret_slot(c.1, o));
                            }
                            if let Some(p) = rn.params.get(sym) {
                                return Some(arg_slot(rn.site, *p, o));
                            }
                        }
                        None
                    };
                    if slot(0).is_none() {
                        // A kernel parameter (ld.param of an .entry): unchanged.
                        out.push(Statement::Inst(self.renamed(i, rn, &regs)));
                        continue;
                    }
                    let esize = i64::from(m.ty.bytes());
                    let values: Vec<Operand> = match value {
                        Operand::Vector(v) => v.clone(),
                        o => vec![o.clone()],
                    };
                    for (e, v) in values.iter().enumerate() {
                        let name = slot(e as i64 * esize).unwrap_or_default();
                        self.hidden.insert(name.clone());
                        let v = rn.operand(v, &regs);
                        let (dst, src) = if store {
                            (Operand::Reg(name), v)
                        } else {
                            (v, Operand::Reg(name))
                        };
                        out.push(Self::mov(i, guard.clone(), m.ty, dst, src));
                    }
                }
                _ => out.push(Statement::Inst(self.renamed(i, rn, &regs))),
            }
        }
        if let Some(l) = ret_label {
            out.push(Statement::Label(l));
        }
        Ok(out)
    }

    fn renamed(&self, i: &Instruction, rn: &Renamer, regs: &HashSet<String>) -> Instruction {
        Instruction {
            guard: i.guard.as_ref().map(|g| super::Guard {
                reg: rn.reg(&g.reg),
                negated: g.negated,
            }),
            op: i.op,
            args: i.args.iter().map(|a| rn.operand(a, regs)).collect(),
            span: i.span.clone(),
            line: i.line,
            loc: i.loc,
        }
    }

    /// printf's `vprintf(fmt, args)` at call site `site`: one [`Op::Vprintf`] over the call's
    /// argument and return slots.
    fn vprintf(
        &mut self,
        call: &Instruction,
        nargs: usize,
        site: usize,
    ) -> Result<Vec<Statement>, Error> {
        if nargs != 2 {
            return Err(self.err(
                call,
                format!("`vprintf` takes 2 arguments, the call passes {nargs}"),
            ));
        }
        let slots = [
            ret_slot(site, 0),
            arg_slot(site, 0, 0),
            arg_slot(site, 1, 0),
        ];
        self.hidden.extend(slots.iter().cloned());
        Ok(vec![Statement::Inst(Instruction {
            guard: None,
            op: Op::Vprintf,
            args: slots.into_iter().map(Operand::Reg).collect(),
            span: call.span.clone(),
            line: call.line,
            loc: call.loc,
        })])
    }

    /// The body of `callee` for call site `site` (`nargs` arguments).
    fn inline_one(
        &mut self,
        call: &Instruction,
        callee: &str,
        nargs: usize,
        site: usize,
    ) -> Result<Vec<Statement>, Error> {
        let defined = self
            .module
            .functions
            .iter()
            .find(|g| !g.is_entry && g.name == callee);
        if callee == "vprintf" && defined.is_none_or(|f| f.body.is_empty()) {
            return self.vprintf(call, nargs, site);
        }
        let Some(f) = defined else {
            return Err(self.err(
                call,
                format!(
                    "call of `{callee}`, which this module does not define (external functions other than printf's vprintf, such as malloc, are not supported)"
                ),
            ));
        };
        if self.stack.iter().any(|n| n == callee) {
            return Err(self.err(
                call,
                format!("recursive call of `{callee}` is not supported"),
            ));
        }
        if self.stack.len() > MAX_DEPTH {
            return Err(self.err(call, format!("calls nested deeper than {MAX_DEPTH}")));
        }
        if nargs != f.params.len() {
            return Err(self.err(
                call,
                format!(
                    "`{callee}` takes {} arguments, the call passes {nargs}",
                    f.params.len()
                ),
            ));
        }
        let suffix = format!("_call{site}");
        let mut own: HashSet<String> = f
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Label(l) => Some(l.clone()),
                _ => None,
            })
            .collect();
        own.extend(f.locals.iter().map(|v| v.name.clone()));
        let rn = Renamer {
            suffix: suffix.clone(),
            own,
            params: f
                .params
                .iter()
                .enumerate()
                .map(|(k, p): (usize, &Param)| (p.name.clone(), k))
                .collect(),
            rets: f.rets.iter().map(|p| p.name.clone()).collect(),
            site,
        };
        self.regs.extend(f.regs.iter().map(|d| RegDecl {
            name: rn.reg(&d.name),
            ty: d.ty,
            count: d.count,
        }));
        self.locals.extend(f.locals.iter().map(|v| Variable {
            name: format!("{}{suffix}", v.name),
            ..v.clone()
        }));
        self.stack.push(callee.to_string());
        let body = self.expand(&f.body, &f.regs, &rn, Some(site));
        self.stack.pop();
        body
    }
}

/// Every register name `decls` declare.
fn reg_names(decls: &[RegDecl]) -> HashSet<String> {
    decls
        .iter()
        .flat_map(|d| match d.count {
            Some(n) => (0..n).map(|k| format!("{}{k}", d.name)).collect::<Vec<_>>(),
            None => vec![d.name.clone()],
        })
        .collect()
}

fn is_param(m: MemOp) -> bool {
    m.space == super::StateSpace::Param
}

//! Decoding: a parsed PTX function becomes a compact [`Program`] the warp loop runs without
//! touching a string or a map (wasmi's translate-then-execute). Registers become dense indices,
//! labels instruction indices, symbols addresses in their state space, immediates inline bits.

use crate::error::{Error, SourceLoc};
use crate::ptx::ast::{Function, Instruction, Operand, Special, Statement, Type};
use crate::ptx::inst::{AluOp, AtomKind, BitOp, CarryOp, MulMode, Op};
use std::cell::RefCell;
use std::collections::HashMap;

mod half;
mod operands;
mod program;
mod tensor;
mod texture;

pub use program::{LocalMemory, Merge, Overlap, Program};

/// Marks an unused register slot.
pub const NO_REG: u16 = u16::MAX;

/// A source operand, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Src {
    /// Register index.
    Reg(u16),
    /// A predicate register, negated (`!%p`).
    NotPred(u16),
    /// Immediate bits (already converted to the instruction's type).
    Imm(u64),
    /// Special register, read per lane.
    Special(Special),
}

/// A memory operand `[base + offset]`, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Addr {
    /// Base: a register, or an immediate address (a symbol resolved in its own state space).
    pub base: Src,
    /// Byte offset.
    pub offset: i64,
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy)]
pub struct DInst {
    /// The typed operation.
    pub op: Op,
    /// Guard predicate register, or [`NO_REG`].
    pub guard: u16,
    /// `@!p`.
    pub guard_negated: bool,
    /// Destination registers (vector loads use up to 4; `setp p|q` two); unused = [`NO_REG`].
    pub dst: [u16; 4],
    /// Source operands (vector stores use up to 4).
    pub src: [Src; 4],
    /// Number of sources in use.
    pub nsrc: u8,
    /// The memory operand of `ld`/`st`.
    pub addr: Option<Addr>,
    /// Branch target (instruction index) of `bra`.
    pub target: u32,
}

/// Where a symbol lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolAddr {
    /// Byte offset in the kernel parameter buffer.
    Param(u64),
    /// Byte offset in the constant bank.
    Const(u64),
    /// Global device address.
    Global(u64),
    /// Byte offset in the block's shared memory.
    Shared(u64),
    /// Byte offset in the thread's local memory.
    Local(u64),
}

impl SymbolAddr {
    fn value(self) -> u64 {
        match self {
            Self::Param(a)
            | Self::Const(a)
            | Self::Global(a)
            | Self::Shared(a)
            | Self::Local(a) => a,
        }
    }
}

/// Decodes `f` with `symbols` (parameters, variables) resolved by the caller.
pub fn decode(
    f: &Function,
    symbols: &HashMap<String, SymbolAddr>,
    src: &str,
    file: &str,
) -> Result<Program, Error> {
    let mut regs: HashMap<String, u16> = HashMap::new();
    let mut reg_slots: Vec<u8> = vec![];
    let mut reg_types: Vec<Option<Type>> = vec![];
    // Counted before any name is built (issue 40: `%r<2147483648>` took 50 GB to be refused).
    let declared: u64 = f.regs.iter().map(|d| u64::from(d.count.unwrap_or(1))).sum();
    if declared > u64::from(NO_REG) {
        return Err(Error::Ptx {
            loc: SourceLoc {
                file: file.into(),
                line: line_of(src, f.span.start),
                col: 1,
            },
            message: "more than 65535 registers declared".into(),
            text: f.name.clone(),
        });
    }
    for d in &f.regs {
        let names = (0..d.count.unwrap_or(1)).map(|i| match d.count {
            Some(_) => format!("{}{i}", d.name),
            None => d.name.clone(),
        });
        for n in names {
            // Below NO_REG: at most `declared` names, checked above.
            let idx = regs.len();
            let typed = !crate::ptx::inline::is_param_slot(&n);
            if let std::collections::hash_map::Entry::Vacant(e) = regs.entry(n) {
                e.insert(idx as u16);
                reg_slots.push(slots_of(d.ty));
                reg_types.push(typed.then_some(d.ty));
            }
        }
    }
    // The carry flag CC.CF of `add.cc`/`addc` and friends: one hidden register per thread, so
    // that the scoreboard orders a carry chain like any other dependency.
    let cc = regs.len();
    if cc >= NO_REG as usize {
        return Err(Error::Ptx {
            loc: SourceLoc {
                file: file.into(),
                line: line_of(src, f.span.start),
                col: 1,
            },
            message: "more than 65534 registers declared".into(),
            text: f.name.clone(),
        });
    }
    let cc = cc as u16;
    let mut labels = HashMap::new();
    let mut n = 0u32;
    for s in &f.body {
        match s {
            Statement::Label(l) => {
                labels.insert(l.clone(), n);
            }
            Statement::Inst(_) => n += 1,
        }
    }
    let mut p = Program {
        name: f.name.clone(),
        insts: vec![],
        lines: vec![],
        locs: vec![],
        files: vec![],
        texts: vec![],
        num_regs: regs.len() + 1,
        reg_slots: {
            reg_slots.push(0); // the carry flag
            reg_slots
        },
        notes: vec![],
        operands: vec![],
        shared_widths: vec![],
        loop_overlap: vec![],
        local: Default::default(),
    };
    let notes = RefCell::new(vec![]);
    let operands = RefCell::new(vec![]);
    for s in &f.body {
        if let Statement::Inst(i) = s {
            let ctx = Ctx {
                cc,
                regs: &regs,
                reg_types: &reg_types,
                notes: &notes,
                operands: &operands,
                labels: &labels,
                symbols,
                src,
                file,
                inst: i,
            };
            p.insts.push(ctx.decode()?);
            p.lines.push(i.line);
            p.locs.push(i.loc);
            p.texts.push(
                src[i.span.clone()]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    results_unused_become_red(&mut p.insts);
    p.notes = notes.into_inner();
    p.operands = operands.into_inner();
    // A kernel that falls off its end exits.
    p.insts.push(DInst {
        op: Op::Exit,
        guard: NO_REG,
        guard_negated: false,
        dst: [NO_REG; 4],
        src: [Src::Imm(0); 4],
        nsrc: 0,
        addr: None,
        target: 0,
    });
    p.lines.push(p.lines.last().copied().unwrap_or(0));
    p.locs.push(None);
    p.texts.push("(end of kernel)".into());
    Ok(p)
}

/// An `atom` whose destination no instruction ever reads is a reduction: ptxas emits `RED` for it,
/// as for `red` (clang writes `atom` with an unused result where NVVM writes `red`), and it is
/// counted as one. Functionally the two are the same. `.cas` and `.exch` stay atomics: ptxas 12.9
/// keeps `ATOMG.E.CAS`/`ATOMG.E.EXCH` (and `ATOMS.CAS`/`ATOMS.EXCH`) with the result discarded
/// (`RZ`), and Nsight Compute counts them as atomics.
fn results_unused_become_red(insts: &mut [DInst]) {
    let mut read = vec![false; NO_REG as usize];
    let mut mark = |s: &Src| {
        if let Src::Reg(r) | Src::NotPred(r) = s {
            read[*r as usize] = true;
        }
    };
    for i in insts.iter() {
        i.src[..usize::from(i.nsrc)].iter().for_each(&mut mark);
        if let Some(a) = &i.addr {
            mark(&a.base);
        }
        if i.guard != NO_REG {
            mark(&Src::Reg(i.guard));
        }
    }
    for i in insts.iter_mut() {
        if let Op::Atom(a) = i.op {
            let reducible = !matches!(a.kind, AtomKind::Cas | AtomKind::Exch);
            if reducible && (i.dst[0] == NO_REG || !read[i.dst[0] as usize]) {
                i.op = Op::Red(a);
                i.dst = [NO_REG; 4];
            }
        }
    }
}

/// 32-bit registers a value of type `ty` takes: sub-word values take a whole register, 64-bit
/// values an aligned pair; predicates none (they have their own predicate registers).
fn slots_of(ty: Type) -> u8 {
    match ty {
        Type::Pred => 0,
        t => t.bits().div_ceil(32) as u8,
    }
}

fn line_of(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())].matches('\n').count() + 1
}

struct Ctx<'a> {
    /// The hidden carry-flag register.
    cc: u16,
    regs: &'a HashMap<String, u16>,
    /// The declared type of each register index; `None` for the inliner's parameter slots (the
    /// carry flag has no entry).
    reg_types: &'a [Option<Type>],
    /// Notes for the program ([`Program::notes`]).
    notes: &'a RefCell<Vec<String>>,
    /// The program's operand table ([`Program::operands`]).
    operands: &'a RefCell<Vec<u16>>,
    labels: &'a HashMap<String, u32>,
    symbols: &'a HashMap<String, SymbolAddr>,
    src: &'a str,
    file: &'a str,
    inst: &'a Instruction,
}

impl Ctx<'_> {
    fn err(&self, message: String) -> Error {
        let start = self.inst.span.start;
        let line_start = self.src[..start].rfind('\n').map_or(0, |i| i + 1);
        Error::Ptx {
            loc: SourceLoc {
                file: self.file.into(),
                line: self.inst.line as usize,
                col: start - line_start + 1,
            },
            message,
            text: self.src[self.inst.span.clone()].trim().to_string(),
        }
    }

    fn reg(&self, name: &str) -> Result<u16, Error> {
        self.regs
            .get(name)
            .copied()
            .ok_or_else(|| self.err(format!("register `{name}` is not declared")))
    }

    fn dst(&self, o: &Operand) -> Result<[u16; 4], Error> {
        let mut d = [NO_REG; 4];
        match o {
            Operand::Reg(r) => d[0] = self.reg(r)?,
            Operand::Vector(v) if v.len() <= 4 => {
                for (k, x) in v.iter().enumerate() {
                    d[k] = match x {
                        Operand::Reg(r) if r == "_" => NO_REG,
                        Operand::Reg(r) => self.reg(r)?,
                        Operand::Symbol(s) if s == "_" => NO_REG,
                        // A register declared without `%` (`.reg .b32 tmp;`, as clang writes).
                        Operand::Symbol(s) if self.regs.contains_key(s) => self.reg(s)?,
                        _ => {
                            return Err(self.err("a vector destination holds registers only".into()))
                        }
                    };
                }
            }
            Operand::Symbol(s) if s == "_" => {}
            Operand::Symbol(s) if self.regs.contains_key(s) => d[0] = self.reg(s)?,
            _ => return Err(self.err("the destination must be a register".into())),
        }
        Ok(d)
    }

    /// A source operand of type `ty` (immediates are converted to it); a register must fit it
    /// (`operands::fits`, relaxed for `st` and `cvt`).
    fn src(&self, o: &Operand, ty: Type) -> Result<Src, Error> {
        let relaxed = matches!(
            self.inst.op,
            Op::St(_) | Op::Cvt { .. } | Op::HalfCvt(_) | Op::CvtPack { .. }
        );
        let checked = |r: &str, want: Type| -> Result<u16, Error> {
            let i = self.reg(r)?;
            self.check_reg(r, i, want, relaxed)?;
            Ok(i)
        };
        Ok(match o {
            Operand::Reg(r) => Src::Reg(checked(r, ty)?),
            Operand::NotPred(r) => Src::NotPred(checked(r, Type::Pred)?),
            Operand::Special(s) => Src::Special(*s),
            Operand::Int(v) => Src::Imm(if ty.is_float() {
                if ty == Type::F64 {
                    (*v as f64).to_bits()
                } else {
                    u64::from((*v as f32).to_bits())
                }
            } else {
                self.int_imm(*v, ty)
            }),
            Operand::Float(f) => {
                if ty == Type::F64 {
                    Src::Imm(f.to_bits())
                } else if ty.is_float() || ty.bits() == 32 {
                    Src::Imm(u64::from((*f as f32).to_bits()))
                } else if ty.bits() == 64 {
                    Src::Imm(f.to_bits())
                } else {
                    return Err(self.err(format!(
                        "a float immediate cannot be a .{} operand",
                        ty.name()
                    )));
                }
            }
            Operand::Symbol(s) if self.regs.contains_key(s) => Src::Reg(checked(s, ty)?),
            Operand::Symbol(s) => match self.symbols.get(s) {
                Some(a) => Src::Imm(a.value()),
                None => return Err(self.err(format!("unknown symbol `{s}`"))),
            },
            Operand::Address { .. } | Operand::Vector(_) | Operand::Texture { .. } => {
                return Err(self.err("expected a register or an immediate".into()))
            }
        })
    }

    fn addr(&self, o: &Operand) -> Result<Addr, Error> {
        let Operand::Address { base, offset } = o else {
            return Err(self.err("expected a memory operand `[...]`".into()));
        };
        let base = match base.as_deref() {
            None => Src::Imm(0),
            Some(Operand::Reg(r)) => Src::Reg(self.reg(r)?),
            Some(Operand::Symbol(s)) if self.regs.contains_key(s) => Src::Reg(self.reg(s)?),
            Some(Operand::Symbol(s)) => match self.symbols.get(s) {
                Some(a) => Src::Imm(a.value()),
                None => return Err(self.err(format!("unknown symbol `{s}`"))),
            },
            Some(_) => return Err(self.err("unsupported address base".into())),
        };
        Ok(Addr {
            base,
            offset: *offset,
        })
    }

    fn arity(&self, want: std::ops::RangeInclusive<usize>) -> Result<(), Error> {
        let n = self.inst.args.len();
        if want.contains(&n) {
            Ok(())
        } else {
            Err(self.err(format!(
                "expected {} operands, found {n}",
                if want.start() == want.end() {
                    want.start().to_string()
                } else {
                    format!("{} to {}", want.start(), want.end())
                }
            )))
        }
    }

    fn decode(&self) -> Result<DInst, Error> {
        let i = self.inst;
        let a = &i.args;
        let mut d = DInst {
            op: i.op,
            guard: NO_REG,
            guard_negated: false,
            dst: [NO_REG; 4],
            src: [Src::Imm(0); 4],
            nsrc: 0,
            addr: None,
            target: 0,
        };
        if let Some(g) = &i.guard {
            d.guard = self.reg(&g.reg)?;
            d.guard_negated = g.negated;
            if matches!(self.reg_types.get(usize::from(d.guard)), Some(Some(t)) if *t != Type::Pred)
            {
                // ptxas: "Predicate expression expected".
                return Err(self.err(format!("the guard `{}` is not a .pred register", g.reg)));
            }
        }
        // The destination's type: a `mov` into a vector unpacks into elements of its packing.
        let elem = match (i.op, a.first()) {
            (Op::Mov(ty), Some(Operand::Vector(v))) => Some(self.pack_elem(ty, v.len())?),
            (Op::Setp { .. } | Op::HalfSetp { .. }, _) => Some(Type::Pred),
            _ => None,
        };
        self.check_dst(elem)?;
        let srcs = |d: &mut DInst, ops: &[Operand], tys: &[Type]| -> Result<(), Error> {
            for (k, (o, t)) in ops.iter().zip(tys).enumerate() {
                d.src[k] = self.src(o, *t)?;
            }
            d.nsrc = ops.len() as u8;
            Ok(())
        };
        match i.op {
            Op::Ld(m) => {
                self.arity(2..=2)?;
                d.dst = self.dst(&a[0])?;
                let want = usize::from(m.vec);
                if let Operand::Vector(v) = &a[0] {
                    if v.len() != want {
                        return Err(self.err(format!(
                            "`.v{want}` needs {want} destination registers, found {}",
                            v.len()
                        )));
                    }
                } else if want != 1 {
                    return Err(self.err(format!("`.v{want}` needs a vector destination {{...}}")));
                }
                d.addr = Some(self.addr(&a[1])?);
            }
            Op::St(m) => {
                self.arity(2..=2)?;
                d.addr = Some(self.addr(&a[0])?);
                match &a[1] {
                    Operand::Vector(v) => {
                        if v.len() != usize::from(m.vec) {
                            return Err(self.err(format!(
                                "`.v{}` needs {} source values, found {}",
                                m.vec,
                                m.vec,
                                v.len()
                            )));
                        }
                        srcs(&mut d, v, &[m.ty; 4])?;
                    }
                    o => {
                        if m.vec != 1 {
                            return Err(
                                self.err(format!("`.v{}` needs a vector source {{...}}", m.vec))
                            );
                        }
                        srcs(&mut d, std::slice::from_ref(o), &[m.ty])?;
                    }
                }
            }
            Op::Mov(ty) => {
                self.arity(2..=2)?;
                d.dst = self.dst(&a[0])?;
                let vector = |o: &Operand| match o {
                    Operand::Vector(v) => Some(v.len()),
                    _ => None,
                };
                match (vector(&a[0]), vector(&a[1])) {
                    (None, None) => srcs(&mut d, &a[1..], &[ty])?,
                    (None, Some(n)) => {
                        let Operand::Vector(v) = &a[1] else {
                            unreachable!("checked above")
                        };
                        let elem = self.pack_elem(ty, n)?;
                        d.op = Op::MovPack { ty, n: n as u8 };
                        srcs(&mut d, v, &[elem; 4])?;
                    }
                    (Some(n), None) => {
                        self.pack_elem(ty, n)?;
                        d.op = Op::MovUnpack { ty, n: n as u8 };
                        srcs(&mut d, &a[1..], &[ty])?;
                    }
                    (Some(_), Some(_)) => {
                        return Err(self.err("`mov` packs or unpacks, not both".into()))
                    }
                }
            }
            Op::Cvta { .. } => {
                self.arity(2..=2)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[Type::U64])?;
            }
            Op::Cvt { src, .. } => {
                self.arity(2..=2)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[src])?;
            }
            Op::Alu { op, ty, mode, .. } => {
                let n = match op {
                    AluOp::Neg
                    | AluOp::Abs
                    | AluOp::Not
                    | AluOp::CNot
                    | AluOp::Popc
                    | AluOp::Clz
                    | AluOp::Brev
                    | AluOp::Rcp
                    | AluOp::Sqrt
                    | AluOp::Rsqrt
                    | AluOp::Ex2
                    | AluOp::Lg2
                    | AluOp::Sin
                    | AluOp::Cos
                    | AluOp::Tanh => 1,
                    AluOp::Mad | AluOp::Fma | AluOp::Sad | AluOp::Mad24 => 3,
                    _ => 2,
                };
                if !ty.is_float()
                    && matches!(op, AluOp::Fma | AluOp::Rcp | AluOp::Sqrt | AluOp::Rsqrt)
                {
                    return Err(self.err(format!("`{op:?}` needs a float type").to_lowercase()));
                }
                self.arity(n + 1..=n + 1)?;
                d.dst = self.dst(&a[0])?;
                // Shift amounts are .u32 whatever the shifted type; `mad.wide`'s addend is as
                // wide as its result.
                let tys = match op {
                    AluOp::Shl | AluOp::Shr => [ty, Type::U32, ty],
                    AluOp::Mad if mode == MulMode::Wide => [ty, ty, ty.widened()],
                    _ => [ty; 3],
                };
                srcs(&mut d, &a[1..], &tys)?;
            }
            Op::Setp { ty, bool_op, .. } => {
                self.arity(if bool_op.is_some() { 4..=4 } else { 3..=3 })?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty, ty, Type::Pred])?;
            }
            Op::Selp(ty) => {
                self.arity(4..=4)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty, ty, Type::Pred])?;
            }
            Op::Bra => {
                self.arity(1..=1)?;
                let Operand::Symbol(l) = &a[0] else {
                    return Err(self.err("`bra` needs a label".into()));
                };
                d.target = *self
                    .labels
                    .get(l)
                    .ok_or_else(|| self.err(format!("unknown label `{l}`")))?;
            }
            Op::Ret | Op::Exit => self.arity(0..=0)?,
            Op::BarSync => {
                // The barrier number and the thread count (kept for synccheck).
                self.arity(1..=2)?;
                srcs(&mut d, &a[..], &[Type::U32, Type::U32])?;
            }
            Op::WarpSync => self.arity(1..=1)?,
            Op::Shfl(_) => {
                self.arity(5..=5)?;
                d.dst = self.dst(&a[0])?;
                // `b` and `c` are .b32 as ptxas types them (a .f32 register fits), the mask .u32.
                srcs(
                    &mut d,
                    &a[1..],
                    &[Type::B32, Type::B32, Type::B32, Type::U32],
                )?;
            }
            Op::Vote(_) => {
                self.arity(3..=3)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[Type::Pred, Type::U32])?;
            }
            Op::ActiveMask => {
                self.arity(1..=1)?;
                d.dst = self.dst(&a[0])?;
            }
            Op::Atom(m) => {
                let cas = m.kind == crate::ptx::inst::AtomKind::Cas;
                self.arity(if cas { 4..=4 } else { 3..=3 })?;
                d.dst = self.dst(&a[0])?;
                d.addr = Some(self.addr(&a[1])?);
                srcs(&mut d, &a[2..], &[m.ty, m.ty])?;
            }
            Op::Red(m) => {
                self.arity(2..=2)?;
                d.addr = Some(self.addr(&a[0])?);
                srcs(&mut d, &a[1..], &[m.ty])?;
            }
            Op::Bits(b) => {
                use Type::{B32, S32, U32};
                let tys: &[Type] = match b {
                    BitOp::Bfe(t) => &[t, U32, U32],
                    BitOp::Bfi(t) => &[t, t, U32, U32],
                    BitOp::Prmt(_) => &[B32, B32, B32],
                    BitOp::Bfind { ty, .. } => &[ty],
                    BitOp::Fns => &[B32, U32, S32],
                    BitOp::Lop3 => &[B32, B32, B32, B32],
                    BitOp::Shf { .. } => &[B32, B32, U32],
                    BitOp::Dp4a { .. } | BitOp::Dp2a { .. } => &[B32, B32, B32],
                    BitOp::Bmsk { .. } | BitOp::Szext { .. } => &[B32, U32],
                };
                self.arity(tys.len() + 1..=tys.len() + 1)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], tys)?;
            }
            Op::Carry {
                op,
                ty,
                cc_in,
                cc_out,
                ..
            } => {
                let n = if op == CarryOp::Mad { 3 } else { 2 };
                self.arity(n + 1..=n + 1)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty; 3])?;
                if cc_in {
                    d.src[n] = Src::Reg(self.cc);
                    d.nsrc = n as u8 + 1;
                }
                if cc_out {
                    d.dst[1] = self.cc;
                }
            }
            Op::Slct { ty, cty, .. } => {
                self.arity(4..=4)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty, ty, cty])?;
            }
            Op::Set { bool_op, src, .. } => {
                self.arity(if bool_op.is_some() { 4..=4 } else { 3..=3 })?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[src, src, Type::Pred])?;
            }
            Op::Testp { ty, .. } => {
                self.arity(2..=2)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty])?;
            }
            Op::CvtPack { dst } => {
                self.arity(if dst.bits() == 8 { 4..=4 } else { 3..=3 })?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[Type::S32, Type::S32, Type::B32])?;
            }
            Op::MovPack { .. } | Op::MovUnpack { .. } => {
                return Err(self.err("internal: mov forms are made by decoding".into()))
            }
            // Operands of no-ops are not needed (registers, addresses, counts).
            Op::Nop => {}
            Op::BarRed(_) => {
                // bar.red.op d, a[, b], {!}c: the predicate is the last operand.
                self.arity(3..=4)?;
                d.dst = self.dst(&a[0])?;
                // The barrier and thread count are .u32 (checked, not kept: bar.red waits for
                // the block as bar.sync does).
                for o in &a[1..a.len() - 1] {
                    self.src(o, Type::U32)?;
                }
                let last = &a[a.len() - 1];
                srcs(&mut d, std::slice::from_ref(last), &[Type::Pred])?;
            }
            Op::Match { ty, .. } => {
                self.arity(3..=3)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty, Type::U32])?;
            }
            Op::Redux { ty, .. } => {
                self.arity(3..=3)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty, Type::U32])?;
            }
            Op::Call => return Err(self.err(
                "`call` reached the decoder: calls are inlined first (ptx::inline::inline_calls)"
                    .into(),
            )),
            Op::FloatRnd { op, ty, .. } => {
                let n = if matches!(op, AluOp::Mad | AluOp::Fma) {
                    3
                } else {
                    2
                };
                self.arity(n + 1..=n + 1)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[ty; 3])?;
            }
            Op::Isspacep(_) => {
                self.arity(2..=2)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[Type::U64])?;
            }
            Op::Half(_) | Op::HalfSetp { .. } | Op::HalfCvt(_) => self.decode_half(&mut d)?,
            Op::Vprintf => {
                self.arity(3..=3)?;
                d.dst = self.dst(&a[0])?;
                srcs(&mut d, &a[1..], &[Type::U64, Type::U64])?;
            }
            Op::CpAsync(_)
            | Op::CpAsyncCommit
            | Op::CpAsyncWait { .. }
            | Op::CpAsyncBulk { .. }
            | Op::CpAsyncBulkGroup
            | Op::Mbarrier(_)
            | Op::Ldmatrix(_)
            | Op::Stmatrix(_)
            | Op::Mma(_)
            | Op::Wmma(_) => self.decode_tensor(&mut d)?,
            Op::Tex(_) | Op::Suld(_) | Op::Sust(_) => self.decode_texture(&mut d)?,
            Op::Unsupported => {
                let text = &self.src[i.span.clone()];
                return Err(self.err(crate::ptx::inst::unsupported_reason(text)));
            }
        }
        Ok(d)
    }

    /// The element type of `mov.ty` packing or unpacking `n` elements: `.b64` into 2 x 32 bits or
    /// 4 x 16, `.b32` into 2 x 16 or 4 x 8, `.b16` into 2 x 8.
    fn pack_elem(&self, ty: Type, n: usize) -> Result<Type, Error> {
        match (ty.bits(), n) {
            (64, 2) => Ok(Type::B32),
            (64, 4) | (32, 2) => Ok(Type::B16),
            (32, 4) | (16, 2) => Ok(Type::B8),
            _ => Err(self.err(format!(
                "`mov.{}` cannot pack or unpack {n} elements",
                ty.name()
            ))),
        }
    }
}

//! Decoding the operands of the asynchronous-copy and tensor-core instructions
//! ([`Op::CpAsync`], [`Op::CpAsyncWait`], [`Op::Ldmatrix`], [`Op::Stmatrix`], [`Op::Mma`]).
//!
//! `cp.async [dst], [src], cp-size{, src-size}` has two memory operands: the shared destination
//! becomes the instruction's address, the global source's base and offset `src[0]` and
//! `src[1]`, `src-size` (default: `cp-size`) or the `ignore-src` predicate `src[2]`. `mma`
//! reads and writes more registers than a [`DInst`] holds: all of them go to the program's
//! operand table ([`super::Program::operands`]), D, A, B, C in order from `target`; the first
//! four of D and of A are also in `dst` and `src`, for the timing pass's dependencies.

use super::{Ctx, DInst, Src, NO_REG};
use crate::error::Error;
use crate::ptx::ast::{Operand, Type};
use crate::ptx::inst::{mma_reg_type, CacheOp, Op};

impl Ctx<'_> {
    /// The operands of a tensor-core or asynchronous-copy instruction.
    pub(super) fn decode_tensor(&self, d: &mut DInst) -> Result<(), Error> {
        let a = &self.inst.args;
        match self.inst.op {
            Op::CpAsync(mut c) => {
                self.arity(3..=4)?;
                d.addr = Some(self.addr(&a[0])?);
                let src = self.addr(&a[1])?;
                let bytes = match &a[2] {
                    Operand::Int(n @ (4 | 8 | 16)) => *n as u8,
                    _ => return Err(self.err("`cp.async` cp-size must be 4, 8 or 16".into())),
                };
                if c.cache == CacheOp::Cg && bytes != 16 {
                    return Err(self.err("`cp.async.cg` copies 16 bytes".into()));
                }
                c.bytes = bytes;
                d.src[0] = src.base;
                d.src[1] = Src::Imm(src.offset as u64);
                d.src[2] = match a.get(3) {
                    None => Src::Imm(u64::from(bytes)),
                    Some(o @ (Operand::Reg(r) | Operand::Symbol(r))) if self.is_pred(r) => {
                        c.ignore_src = true;
                        self.src(o, Type::Pred)?
                    }
                    Some(o) => self.src(o, Type::U32)?,
                };
                d.nsrc = 3;
                d.op = Op::CpAsync(c);
            }
            Op::CpAsyncCommit => self.arity(0..=0)?,
            Op::CpAsyncBulkGroup => {
                self.arity(0..=1)?;
            }
            Op::CpAsyncBulk { to_shared } => {
                self.arity(if to_shared { 4..=4 } else { 3..=3 })?;
                d.addr = Some(self.addr(&a[0])?);
                let src = self.addr(&a[1])?;
                d.src[0] = src.base;
                d.src[1] = self.src(&a[2], Type::U32)?;
                d.src[3] = Src::Imm(src.offset as u64);
                if to_shared {
                    let bar = self.addr(&a[3])?;
                    d.src[2] = bar.base;
                    d.target = u32::try_from(bar.offset).map_err(|_| {
                        self.err("the mbarrier's offset must be 0 to 2^32 - 1".into())
                    })?;
                }
                d.nsrc = 4;
            }
            Op::Mbarrier(op) => {
                use crate::ptx::inst::MbarrierOp as M;
                let (dst, at, rest) = match op {
                    M::Init | M::ExpectTx | M::CompleteTx => {
                        self.arity(2..=2)?;
                        (None, &a[0], a.get(1))
                    }
                    M::Inval => {
                        self.arity(1..=1)?;
                        (None, &a[0], None)
                    }
                    M::Arrive { expect_tx } => {
                        self.arity(if expect_tx { 3..=3 } else { 2..=3 })?;
                        (Some(&a[0]), &a[1], a.get(2))
                    }
                    M::Wait { .. } => {
                        // An optional suspend-time hint (try_wait) is ignored.
                        self.arity(3..=4)?;
                        (Some(&a[0]), &a[1], a.get(2))
                    }
                };
                if let Some(o) = dst {
                    d.dst = self.dst(o)?;
                }
                d.addr = Some(self.addr(at)?);
                d.src[0] = match (op, rest) {
                    (M::Wait { parity: false }, Some(o)) => self.src(o, Type::B64)?,
                    (_, Some(o)) => self.src(o, Type::U32)?,
                    (_, None) => Src::Imm(1),
                };
                d.nsrc = 1;
            }
            Op::CpAsyncWait { all } => {
                if all {
                    self.arity(0..=0)?;
                } else {
                    self.arity(1..=1)?;
                    let Operand::Int(n) = a[0] else {
                        return Err(self.err("`cp.async.wait_group` needs an integer N".into()));
                    };
                    d.src[0] = Src::Imm(n as u64);
                    d.nsrc = 1;
                }
            }
            Op::Ldmatrix(m) => {
                self.arity(2..=2)?;
                let regs = self.regs_of(&a[0], usize::from(m.count), Type::B32)?;
                for (k, r) in regs.iter().enumerate() {
                    d.dst[k] = *r;
                }
                d.addr = Some(self.addr(&a[1])?);
            }
            Op::Stmatrix(m) => {
                self.arity(2..=2)?;
                d.addr = Some(self.addr(&a[0])?);
                let regs = self.regs_of(&a[1], usize::from(m.count), Type::B32)?;
                for (k, r) in regs.iter().enumerate() {
                    d.src[k] = Src::Reg(*r);
                }
                d.nsrc = m.count;
            }
            Op::Mma(m) => {
                self.arity(4..=4)?;
                let (nd, na, nb, nc) = m.regs();
                let dr = self.regs_of(&a[0], nd, mma_reg_type(m.d))?;
                let ar = self.regs_of(&a[1], na, mma_reg_type(m.a))?;
                let br = self.regs_of(&a[2], nb, mma_reg_type(m.b))?;
                let cr = self.regs_of(&a[3], nc, mma_reg_type(m.c))?;
                let mut table = self.operands.borrow_mut();
                d.target = table.len() as u32;
                for r in dr.iter().chain(&ar).chain(&br).chain(&cr) {
                    table.push(*r);
                }
                for (k, r) in dr.iter().take(4).enumerate() {
                    d.dst[k] = *r;
                }
                for (k, r) in ar.iter().take(4).enumerate() {
                    d.src[k] = Src::Reg(*r);
                }
                d.nsrc = ar.len().min(4) as u8;
            }
            Op::Wmma(op) => {
                use crate::ptx::inst::{WmmaFrag, WmmaOp};
                let acc = |f32: bool| if f32 { Type::F32 } else { Type::B32 };
                let (n, ..) = op.regs();
                let mut table = self.operands.borrow_mut();
                d.target = table.len() as u32;
                match op {
                    WmmaOp::Load { f32, .. } | WmmaOp::Store { f32, .. } => {
                        let store = matches!(op, WmmaOp::Store { .. });
                        self.arity(2..=3)?;
                        let (r, m) = if store {
                            (&a[1], &a[0])
                        } else {
                            (&a[0], &a[1])
                        };
                        let ty = match op {
                            WmmaOp::Load {
                                frag: WmmaFrag::A | WmmaFrag::B,
                                ..
                            } => Type::B32,
                            _ => acc(f32),
                        };
                        let regs = self.regs_of(r, n, ty)?;
                        table.extend(&regs);
                        d.addr = Some(self.addr(m)?);
                        d.src[0] = match a.get(2) {
                            Some(s) => self.src(s, Type::U32)?,
                            None => Src::Imm(16),
                        };
                        d.nsrc = 1;
                        if store {
                            for (k, r) in regs.iter().take(3).enumerate() {
                                d.src[k + 1] = Src::Reg(*r);
                            }
                            d.nsrc = 4;
                        } else {
                            for (k, r) in regs.iter().take(4).enumerate() {
                                d.dst[k] = *r;
                            }
                        }
                    }
                    WmmaOp::Mma { d_f32, c_f32 } => {
                        self.arity(4..=4)?;
                        let dr = self.regs_of(&a[0], n, acc(d_f32))?;
                        let ar = self.regs_of(&a[1], 8, Type::B32)?;
                        let br = self.regs_of(&a[2], 8, Type::B32)?;
                        let cr = self.regs_of(&a[3], op.regs().3, acc(c_f32))?;
                        for r in dr.iter().chain(&ar).chain(&br).chain(&cr) {
                            table.push(*r);
                        }
                        for (k, r) in dr.iter().take(4).enumerate() {
                            d.dst[k] = *r;
                        }
                        for (k, r) in ar.iter().take(4).enumerate() {
                            d.src[k] = Src::Reg(*r);
                        }
                        d.nsrc = 4;
                    }
                }
            }
            _ => return Err(self.err("internal: not a tensor instruction".into())),
        }
        Ok(())
    }

    /// Whether `name` is a declared predicate register.
    fn is_pred(&self, name: &str) -> bool {
        self.regs
            .get(name)
            .and_then(|&i| self.reg_types.get(usize::from(i)).copied().flatten())
            == Some(Type::Pred)
    }

    /// The `n` registers of the vector operand `o` (`{%r1, %r2}`; a lone register when `n` is
    /// 1), each of a 32-bit type (`ty` or any other of its width).
    pub(super) fn regs_of(&self, o: &Operand, n: usize, ty: Type) -> Result<Vec<u16>, Error> {
        let names: Vec<&Operand> = match o {
            Operand::Vector(v) => v.iter().collect(),
            one => vec![one],
        };
        if names.len() != n {
            return Err(self.err(format!(
                "expected a vector of {n} registers, found {}",
                names.len()
            )));
        }
        names
            .into_iter()
            .map(|x| match x {
                Operand::Reg(r) | Operand::Symbol(r) if self.regs.contains_key(r) => {
                    let i = self.reg(r)?;
                    self.check_reg(r, i, ty, true)?;
                    Ok(i)
                }
                _ => Err(self.err("expected registers".into())),
            })
            .collect::<Result<Vec<u16>, Error>>()
            .and_then(|v| {
                if v.contains(&NO_REG) {
                    Err(self.err("expected registers".into()))
                } else {
                    Ok(v)
                }
            })
    }
}

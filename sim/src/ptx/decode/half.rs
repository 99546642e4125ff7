//! Decoding the operands of the half-precision instructions ([`Op::Half`], [`Op::HalfSetp`],
//! [`Op::HalfCvt`]): a half value is an operand of its own type (`.b16` and `.f16` registers for
//! `.f16`/`.bf16`, `.b32` ones for the pairs), an integer immediate its bit pattern
//! (`mov.b16 %rs1, 0x3C00` style), a float immediate its value rounded to nearest even.

use super::{Ctx, DInst, Src};
use crate::error::Error;
use crate::ptx::ast::{Operand, Type};
use crate::ptx::float16::Format;
use crate::ptx::inst::{AluOp, Op, Rounding};

impl Ctx<'_> {
    /// The destination and sources of a half-precision instruction.
    pub(super) fn decode_half(&self, d: &mut DInst) -> Result<(), Error> {
        let a = &self.inst.args;
        let (n, tys): (usize, [Type; 3]) = match self.inst.op {
            Op::Half(h) => {
                let n = match h.op {
                    AluOp::Neg | AluOp::Abs => 1,
                    AluOp::Fma => 3,
                    _ => 2,
                };
                (n, [h.ty; 3])
            }
            Op::HalfSetp { ty, bool_op, .. } => {
                let pair = matches!(ty, Type::F16x2 | Type::BF16x2);
                if pair && !matches!(a.first(), Some(Operand::Vector(v)) if v.len() == 2) {
                    return Err(
                        self.err(format!("`setp.{}` writes two predicates `p|q`", ty.name()))
                    );
                }
                if bool_op.is_some() {
                    (3, [ty, ty, Type::Pred])
                } else {
                    (2, [ty, ty, Type::Pred])
                }
            }
            Op::HalfCvt(c) if matches!(c.dst, Type::F16x2 | Type::BF16x2) => (2, [c.src; 3]),
            Op::HalfCvt(c) => (1, [c.src; 3]),
            _ => return Err(self.err("internal: not a half-precision instruction".into())),
        };
        self.arity(n + 1..=n + 1)?;
        d.dst = self.dst(&a[0])?;
        for (k, o) in a[1..].iter().enumerate() {
            d.src[k] = self.half_src(o, tys[k])?;
        }
        d.nsrc = n as u8;
        Ok(())
    }

    /// A source of type `ty`: immediates of a half type are converted here, the rest as usual.
    fn half_src(&self, o: &Operand, ty: Type) -> Result<Src, Error> {
        let Some((fmt, pair)) = Format::of(ty) else {
            return self.src(o, ty);
        };
        let one = |h: u16| -> u64 {
            let h = u64::from(h);
            if pair {
                h | h << 16
            } else {
                h
            }
        };
        match o {
            Operand::Int(v) => Ok(Src::Imm(*v as u64 & ((1u64 << ty.bits()) - 1))),
            Operand::Float(f) => Ok(Src::Imm(one(fmt.from_f64(*f, Rounding::Rn)))),
            _ => self.src(o, ty),
        }
    }
}

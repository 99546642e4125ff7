//! The decoder of the half-precision forms (PTX ISA §9.7.4 "Half Precision Floating-Point
//! Instructions"; `cvt` §9.7.9.21): `add sub mul fma min max neg abs`, `setp` and `cvt` whose
//! type is `.f16 .bf16 .f16x2` or `.bf16x2`. Each modifier is accepted only where the ISA's
//! syntax for that type has it:
//!
//! ```text
//! add{.rn}{.ftz}{.sat}.f16|.f16x2   add{.rn}.bf16|.bf16x2            (sub, mul the same)
//! fma.rn{.ftz}{.sat}.f16|.f16x2     fma.rn{.ftz}.relu.f16|.f16x2     fma.rn{.relu}.bf16|.bf16x2
//! min{.ftz}{.NaN}{.xorsign.abs}.f16|.f16x2   min{.NaN}{.xorsign.abs}.bf16|.bf16x2   (max)
//! neg{.ftz}.f16|.f16x2   neg.bf16|.bf16x2                            (abs the same)
//! setp.CmpOp{.ftz}.f16 p, a, b      setp.CmpOp{.ftz}.f16x2 p|q, a, b     (and .bf16 .bf16x2)
//! cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype d, a     cvt.rn{.relu}.f16x2.f32 d, a, b
//! ```

use super::decode::{cmp, need_ty, rounding, Mods};
use super::{AluOp, BoolOp, HalfCvt, HalfOp, Op, Rounding};
use crate::ptx::ast::Type;

/// The half-precision form of `opcode`, when its modifiers name a half type and the opcode has
/// one; `None` leaves the instruction to the other decoders.
pub(super) fn decode_half(opcode: &str, m: &mut Mods) -> Option<Result<Op, String>> {
    if !["f16", "bf16", "f16x2", "bf16x2"].iter().any(|w| m.has(w)) {
        return None;
    }
    let op = match opcode {
        "add" => AluOp::Add,
        "sub" => AluOp::Sub,
        "mul" => AluOp::Mul,
        "fma" => AluOp::Fma,
        "min" => AluOp::Min,
        "max" => AluOp::Max,
        "neg" => AluOp::Neg,
        "abs" => AluOp::Abs,
        "setp" => return Some(setp(m)),
        "cvt" => return Some(cvt(m)),
        _ => return None,
    };
    Some(arith(opcode, op, m))
}

fn is_bf16(ty: Type) -> bool {
    matches!(ty, Type::BF16 | Type::BF16x2)
}

fn arith(opcode: &str, op: AluOp, m: &mut Mods) -> Result<Op, String> {
    let rnd = m.take_map(rounding);
    let rounds = matches!(op, AluOp::Add | AluOp::Sub | AluOp::Mul | AluOp::Fma);
    match rnd {
        Some(Rounding::Rn) if rounds => {}
        Some(r) => {
            return Err(format!(
                "unsupported rounding modifier .{} on `{opcode}` of a half type (only .rn on add sub mul fma)",
                format!("{r:?}").to_lowercase()
            ))
        }
        None => {}
    }
    let ftz = m.take("ftz");
    let sat = m.take("sat");
    let relu = m.take("relu");
    let min_max = matches!(op, AluOp::Min | AluOp::Max);
    let nan = min_max && m.take("NaN");
    let xorsign = min_max && m.take("xorsign");
    if xorsign && !m.take("abs") {
        return Err(format!("`{opcode}.xorsign` needs .abs"));
    }
    let ty = need_ty(m, opcode)?;
    if !ty.is_half() {
        return Err(format!(
            "mixed-precision `{opcode}.{}` with a half-precision operand is not supported",
            ty.name()
        ));
    }
    let bf = is_bf16(ty);
    let name = ty.name();
    if ftz && bf {
        return Err(format!(
            "`{opcode}.{name}` has no .ftz (only .f16 and .f16x2 do)"
        ));
    }
    if sat && (bf || !rounds) {
        return Err(format!("`{opcode}.{name}` has no .sat"));
    }
    if relu && (op != AluOp::Fma || sat) {
        return Err(format!(
            "`.relu` applies to `fma` on half types, without .sat (found `{opcode}.relu.{name}`)"
        ));
    }
    Ok(Op::Half(HalfOp {
        op,
        ty,
        ftz,
        sat,
        relu,
        nan,
        xorsign,
    }))
}

fn setp(m: &mut Mods) -> Result<Op, String> {
    let c = m
        .take_map(cmp)
        .ok_or("`setp` needs a comparison (.eq .lt ...)")?;
    let bool_op = m.take_map(|w| match w {
        "and" => Some(BoolOp::And),
        "or" => Some(BoolOp::Or),
        "xor" => Some(BoolOp::Xor),
        _ => None,
    });
    let ftz = m.take("ftz");
    let ty = need_ty(m, "setp")?;
    if !ty.is_half() {
        return Err(format!(
            "`setp.{}` cannot compare a half-precision operand",
            ty.name()
        ));
    }
    if ftz && is_bf16(ty) {
        return Err(format!("`setp.{}` has no .ftz", ty.name()));
    }
    Ok(Op::HalfSetp {
        cmp: c,
        bool_op,
        ty,
        ftz,
    })
}

fn cvt(m: &mut Mods) -> Result<Op, String> {
    let rnd = m.take_map(rounding);
    let ftz = m.take("ftz");
    let sat = m.take("sat");
    let relu = m.take("relu");
    let satfinite = m.take("satfinite");
    let dst = need_ty(m, "cvt")?;
    let src = need_ty(m, "cvt")?;
    if matches!(src, Type::F16x2 | Type::BF16x2) {
        return Err(format!(
            "`cvt` from .{} is not supported (unpack with `mov.b32 {{a, b}}`)",
            src.name()
        ));
    }
    if matches!(dst, Type::F16x2 | Type::BF16x2) && src != Type::F32 {
        return Err(format!(
            "`cvt.{}` packs two .f32 values (found .{})",
            dst.name(),
            src.name()
        ));
    }
    if src == Type::Pred || dst == Type::Pred {
        return Err("`cvt` does not convert predicates".into());
    }
    if (relu || satfinite) && !dst.is_half() {
        return Err("`.relu` and `.satfinite` apply to a half-precision destination".into());
    }
    Ok(Op::HalfCvt(HalfCvt {
        dst,
        src,
        rnd,
        ftz,
        sat,
        relu,
        satfinite,
    }))
}

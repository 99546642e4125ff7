//! The opcodes and forms the decoder gained for "any kernel" coverage ([`decode_ext`]):
//! extended-precision arithmetic, bit-field and byte instructions, `slct`, `set`, `testp`, the
//! other `cvt` forms, fences and hints, barriers' other forms, `match`, `redux`, `call` and
//! `isspacep`, and atomics' ordering and scope.

use super::decode::{atom_type_ok, cmp, need_ty, space_word, Mods};
use super::{
    AluOp, AtomKind, AtomOp, BarRedOp, BitOp, BoolOp, CarryOp, MulMode, Op, PrmtMode, ReduxOp,
    TestpOp,
};
use crate::ptx::ast::{StateSpace, Type};

/// The opcodes and forms added for "any kernel" coverage; `None` when `opcode` is not one of them
/// (the main table decodes it).
pub(super) fn decode_ext(opcode: &str, m: &mut Mods) -> Result<Option<Op>, String> {
    let carry_ty = |m: &mut Mods| -> Result<Type, String> {
        let ty = need_ty(m, opcode)?;
        if !matches!(ty, Type::U32 | Type::S32 | Type::U64 | Type::S64) {
            return Err(format!(
                "`{opcode}` with carry needs .u32 .s32 .u64 or .s64"
            ));
        }
        Ok(ty)
    };
    let mad_mode = |m: &mut Mods| -> Result<MulMode, String> {
        if m.take("lo") {
            Ok(MulMode::Lo)
        } else if m.take("hi") {
            Ok(MulMode::Hi)
        } else {
            Err(format!("`{opcode}` needs .lo or .hi"))
        }
    };
    let two_signs = |m: &mut Mods| -> Result<(bool, bool), String> {
        let mut signed = [false; 2];
        for s in &mut signed {
            *s = match m.ty() {
                Some(Type::S32) => true,
                Some(Type::U32) => false,
                _ => return Err(format!("`{opcode}` needs two types of .u32 or .s32")),
            };
        }
        Ok((signed[0], signed[1]))
    };
    let op = match opcode {
        "atom" | "red" => {
            m.ordering();
            let space = m.take_map(space_word).unwrap_or(StateSpace::Generic);
            if !matches!(
                space,
                StateSpace::Global | StateSpace::Shared | StateSpace::Generic
            ) {
                return Err(format!(
                    "`{opcode}` works on .global or .shared memory (or a generic address), not .{}",
                    space.name()
                ));
            }
            m.ordering();
            let kind = m
                .take_map(|w| {
                    Some(match w {
                        "and" => AtomKind::And,
                        "or" => AtomKind::Or,
                        "xor" => AtomKind::Xor,
                        "cas" => AtomKind::Cas,
                        "exch" => AtomKind::Exch,
                        "add" => AtomKind::Add,
                        "inc" => AtomKind::Inc,
                        "dec" => AtomKind::Dec,
                        "min" => AtomKind::Min,
                        "max" => AtomKind::Max,
                        _ => return None,
                    })
                })
                .ok_or_else(|| {
                    format!("`{opcode}` needs an operation (.add .min .max .inc .dec .and .or .xor .exch .cas)")
                })?;
            let ty = need_ty(m, opcode)?;
            if !atom_type_ok(kind, ty)
                || (opcode == "red" && matches!(kind, AtomKind::Cas | AtomKind::Exch))
            {
                return Err(format!(
                    "`{opcode}.{}.{}` is not supported (the PTX ISA's 32- and 64-bit integer and \
float forms are; `red` has no .cas or .exch)",
                    format!("{kind:?}").to_lowercase(),
                    ty.name()
                ));
            }
            let a = AtomOp { space, kind, ty };
            if opcode == "atom" {
                Op::Atom(a)
            } else {
                Op::Red(a)
            }
        }
        "add" | "sub" if m.has("cc") => {
            m.take("cc");
            Op::Carry {
                op: if opcode == "add" {
                    CarryOp::Add
                } else {
                    CarryOp::Sub
                },
                ty: carry_ty(m)?,
                mode: MulMode::None,
                cc_in: false,
                cc_out: true,
            }
        }
        "addc" | "subc" => {
            let cc_out = m.take("cc");
            Op::Carry {
                op: if opcode == "addc" {
                    CarryOp::Add
                } else {
                    CarryOp::Sub
                },
                ty: carry_ty(m)?,
                mode: MulMode::None,
                cc_in: true,
                cc_out,
            }
        }
        "mad" if m.has("cc") => {
            m.take("cc");
            let mode = mad_mode(m)?;
            Op::Carry {
                op: CarryOp::Mad,
                ty: carry_ty(m)?,
                mode,
                cc_in: false,
                cc_out: true,
            }
        }
        "madc" => {
            let cc_out = m.take("cc");
            let mode = mad_mode(m)?;
            Op::Carry {
                op: CarryOp::Mad,
                ty: carry_ty(m)?,
                mode,
                cc_in: true,
                cc_out,
            }
        }
        "min" | "max" if m.has("NaN") || m.has("xorsign") => {
            let min = opcode == "min";
            m.take("ftz");
            let op = if m.take("NaN") {
                if min {
                    AluOp::MinNan
                } else {
                    AluOp::MaxNan
                }
            } else {
                m.take("xorsign");
                if !m.take("abs") {
                    return Err(format!("`{opcode}.xorsign` needs .abs"));
                }
                if min {
                    AluOp::MinXorsign
                } else {
                    AluOp::MaxXorsign
                }
            };
            let ty = need_ty(m, opcode)?;
            if ty != Type::F32 {
                return Err(format!(
                    "`{opcode}.NaN` and `.xorsign.abs` are supported for .f32 only"
                ));
            }
            Op::Alu {
                op,
                ty,
                mode: MulMode::None,
                sat: false,
            }
        }
        "bfe" | "bfind" => {
            let shiftamt = opcode == "bfind" && m.take("shiftamt");
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::U32 | Type::S32 | Type::U64 | Type::S64) {
                return Err(format!("`{opcode}` needs .u32 .s32 .u64 or .s64"));
            }
            Op::Bits(if opcode == "bfe" {
                BitOp::Bfe(ty)
            } else {
                BitOp::Bfind { ty, shiftamt }
            })
        }
        "bfi" => {
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::B32 | Type::B64) {
                return Err("`bfi` needs .b32 or .b64".into());
            }
            Op::Bits(BitOp::Bfi(ty))
        }
        "prmt" => {
            let mode = m
                .take_map(|w| {
                    Some(match w {
                        "f4e" => PrmtMode::F4e,
                        "b4e" => PrmtMode::B4e,
                        "rc8" => PrmtMode::Rc8,
                        "ecl" => PrmtMode::Ecl,
                        "ecr" => PrmtMode::Ecr,
                        "rc16" => PrmtMode::Rc16,
                        _ => return None,
                    })
                })
                .unwrap_or(PrmtMode::Generic);
            if need_ty(m, opcode)? != Type::B32 {
                return Err("`prmt` needs .b32".into());
            }
            Op::Bits(BitOp::Prmt(mode))
        }
        "fns" | "lop3" => {
            if need_ty(m, opcode)? != Type::B32 {
                return Err(format!("`{opcode}` needs .b32"));
            }
            Op::Bits(if opcode == "fns" {
                BitOp::Fns
            } else {
                BitOp::Lop3
            })
        }
        "shf" => {
            let left = if m.take("l") {
                true
            } else if m.take("r") {
                false
            } else {
                return Err("`shf` needs .l or .r".into());
            };
            let clamp = if m.take("clamp") {
                true
            } else if m.take("wrap") {
                false
            } else {
                return Err("`shf` needs .clamp or .wrap".into());
            };
            if !matches!(need_ty(m, opcode)?, Type::B32 | Type::U32) {
                return Err("`shf` needs .b32".into());
            }
            Op::Bits(BitOp::Shf { left, clamp })
        }
        "dp4a" => {
            let (a_signed, b_signed) = two_signs(m)?;
            Op::Bits(BitOp::Dp4a { a_signed, b_signed })
        }
        "dp2a" => {
            let hi = m.take("hi");
            if !hi && !m.take("lo") {
                return Err("`dp2a` needs .lo or .hi".into());
            }
            let (a_signed, b_signed) = two_signs(m)?;
            Op::Bits(BitOp::Dp2a {
                hi,
                a_signed,
                b_signed,
            })
        }
        "bmsk" | "szext" => {
            let clamp = if m.take("clamp") {
                true
            } else if m.take("wrap") {
                false
            } else {
                return Err(format!("`{opcode}` needs .clamp or .wrap"));
            };
            let ty = need_ty(m, opcode)?;
            if opcode == "bmsk" {
                if ty != Type::B32 {
                    return Err("`bmsk` needs .b32".into());
                }
                Op::Bits(BitOp::Bmsk { clamp })
            } else {
                if !matches!(ty, Type::U32 | Type::S32) {
                    return Err("`szext` needs .u32 or .s32".into());
                }
                Op::Bits(BitOp::Szext {
                    clamp,
                    signed: ty == Type::S32,
                })
            }
        }
        "slct" => {
            let ftz = m.take("ftz");
            let ty = need_ty(m, opcode)?;
            let cty = need_ty(m, opcode)?;
            if !matches!(cty, Type::S32 | Type::F32) {
                return Err("`slct` compares a .s32 or .f32 operand".into());
            }
            if ty == Type::Pred {
                return Err("`slct` selects values, not predicates".into());
            }
            Op::Slct { ty, cty, ftz }
        }
        "set" => {
            let c = m
                .take_map(cmp)
                .ok_or("`set` needs a comparison (.eq .lt ...)")?;
            let bool_op = m.take_map(|w| match w {
                "and" => Some(BoolOp::And),
                "or" => Some(BoolOp::Or),
                "xor" => Some(BoolOp::Xor),
                _ => None,
            });
            m.take("ftz");
            let dst = need_ty(m, opcode)?;
            let src = need_ty(m, opcode)?;
            if !matches!(dst, Type::U32 | Type::S32 | Type::F32 | Type::B32) && !dst.is_half() {
                return Err("`set` writes .u32 .s32 .f32 .f16 .bf16 .f16x2 or .bf16x2".into());
            }
            let pair = |t: Type| matches!(t, Type::F16x2 | Type::BF16x2);
            if pair(dst) && !pair(src) || dst.is_half() && !src.is_half() {
                return Err(format!(
                    "`set.{}.{}`: a half-precision result needs operands of the same kind",
                    dst.name(),
                    src.name()
                ));
            }
            Op::Set {
                cmp: c,
                bool_op,
                dst,
                src,
            }
        }
        "testp" => {
            let op = m
                .take_map(|w| {
                    Some(match w {
                        "finite" => TestpOp::Finite,
                        "infinite" => TestpOp::Infinite,
                        "number" => TestpOp::Number,
                        "notanumber" => TestpOp::NotANumber,
                        "normal" => TestpOp::Normal,
                        "subnormal" => TestpOp::Subnormal,
                        _ => return None,
                    })
                })
                .ok_or(
                    "`testp` needs .finite .infinite .number .notanumber .normal or .subnormal",
                )?;
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::F32 | Type::F64) {
                return Err("`testp` needs .f32 or .f64".into());
            }
            Op::Testp { op, ty }
        }
        "cvt" if m.has("pack") => {
            m.take("pack");
            if !m.take("sat") {
                return Err("`cvt.pack` needs .sat".into());
            }
            let dst = need_ty(m, opcode)?;
            if !matches!(dst, Type::U16 | Type::S16 | Type::U8 | Type::S8) {
                return Err("`cvt.pack` is supported to .u16 .s16 .u8 .s8".into());
            }
            if need_ty(m, opcode)? != Type::S32 {
                return Err("`cvt.pack` converts .s32 values".into());
            }
            if dst.bits() == 8 && need_ty(m, opcode)? != Type::B32 {
                return Err("`cvt.pack` to 8 bits needs a .b32 third type".into());
            }
            Op::CvtPack { dst }
        }
        "membar" => {
            m.take_map(|w| matches!(w, "cta" | "gl" | "sys").then_some(()))
                .ok_or("`membar` needs .cta, .gl or .sys")?;
            Op::Nop
        }
        "fence" => {
            if m.take("mbarrier_init") {
                // Orders mbarrier.init before other threads' use: the simulator's barriers are
                // initialized at once.
                m.ordering();
            } else if m.take("proxy") {
                m.take_map(|w| {
                    matches!(
                        w,
                        "alias"
                            | "async"
                            | "async::global"
                            | "async::shared::cta"
                            | "async::shared::cluster"
                    )
                    .then_some(())
                })
                .ok_or("`fence.proxy` is supported with .alias and .async")?;
                m.take_map(space_word);
            } else {
                let (sem, scope) = m.ordering();
                if sem.is_none() && scope.is_none() {
                    return Err("`fence` needs .sc or .acq_rel and a scope".into());
                }
            }
            Op::Nop
        }
        "nanosleep" => {
            need_ty(m, opcode)?;
            Op::Nop
        }
        "prefetch" | "prefetchu" => {
            m.take_map(space_word);
            m.take_map(|w| {
                matches!(w, "L1" | "L2" | "L2::evict_last" | "L2::evict_normal").then_some(())
            })
            .ok_or_else(|| format!("`{opcode}` needs a cache level (.L1 or .L2)"))?;
            Op::Nop
        }
        "bar" | "barrier" if m.has("arrive") || m.has("red") => {
            m.take("cta");
            m.take("aligned");
            if m.take("arrive") {
                Op::Nop
            } else {
                m.take("red");
                let op = m
                    .take_map(|w| {
                        Some(match w {
                            "popc" => BarRedOp::Popc,
                            "and" => BarRedOp::And,
                            "or" => BarRedOp::Or,
                            _ => return None,
                        })
                    })
                    .ok_or_else(|| format!("`{opcode}.red` needs .popc, .and or .or"))?;
                m.take("aligned");
                let ty = need_ty(m, opcode)?;
                let want = if op == BarRedOp::Popc {
                    Type::U32
                } else {
                    Type::Pred
                };
                if ty != want {
                    return Err(format!(
                        "`{opcode}.red.{}` needs .{}",
                        format!("{op:?}").to_lowercase(),
                        want.name()
                    ));
                }
                Op::BarRed(op)
            }
        }
        "match" => {
            m.take("sync");
            let all = if m.take("all") {
                true
            } else if m.take("any") {
                false
            } else {
                return Err("`match` needs .any or .all".into());
            };
            m.take("sync");
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::B32 | Type::B64) {
                return Err("`match` needs .b32 or .b64".into());
            }
            Op::Match { all, ty }
        }
        "redux" => {
            m.take("sync");
            let op = m
                .take_map(|w| {
                    Some(match w {
                        "add" => ReduxOp::Add,
                        "min" => ReduxOp::Min,
                        "max" => ReduxOp::Max,
                        "and" => ReduxOp::And,
                        "or" => ReduxOp::Or,
                        "xor" => ReduxOp::Xor,
                        _ => return None,
                    })
                })
                .ok_or("`redux` needs .add .min .max .and .or or .xor")?;
            let ty = need_ty(m, opcode)?;
            let ok = match op {
                ReduxOp::Add | ReduxOp::Min | ReduxOp::Max => matches!(ty, Type::U32 | Type::S32),
                _ => ty == Type::B32,
            };
            if !ok {
                return Err(format!(
                    "`redux.sync.{}` is not supported for .{}",
                    format!("{op:?}").to_lowercase(),
                    ty.name()
                ));
            }
            Op::Redux { op, ty }
        }
        "call" => {
            m.take("uni");
            Op::Call
        }
        "isspacep" => {
            let space = m
                .take_map(space_word)
                .filter(|s| !matches!(s, StateSpace::Reg | StateSpace::Generic))
                .ok_or("`isspacep` needs .global .shared .local .const or .param")?;
            Op::Isspacep(space)
        }
        _ => return Ok(None),
    };
    Ok(Some(op))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::inst::{decode, CacheOp, MemOp};

    #[test]
    fn atomics_take_ordering_scope_and_space_in_any_order() {
        let want = |space, kind, ty| Ok(Op::Atom(AtomOp { space, kind, ty }));
        assert_eq!(
            decode("atom", &["global", "add", "u32"]),
            want(StateSpace::Global, AtomKind::Add, Type::U32)
        );
        assert_eq!(
            decode("atom", &["acquire", "gpu", "shared::cta", "cas", "b64"]),
            want(StateSpace::Shared, AtomKind::Cas, Type::B64)
        );
        assert_eq!(
            decode("atom", &["global", "relaxed", "sys", "inc", "u32"]),
            want(StateSpace::Global, AtomKind::Inc, Type::U32)
        );
        assert_eq!(
            decode("red", &["add", "f32"]),
            Ok(Op::Red(AtomOp {
                space: StateSpace::Generic,
                kind: AtomKind::Add,
                ty: Type::F32
            }))
        );
        assert!(decode("atom", &["global", "inc", "s32"]).is_err());
        assert!(decode("red", &["global", "cas", "b32"]).is_err());
        assert!(decode("atom", &["local", "add", "u32"]).is_err());
        let e = decode("atom", &["global", "add", "L2::cache_hint", "u32"]).unwrap_err();
        assert!(e.contains(".L2::cache_hint"), "{e}");
    }

    #[test]
    fn carry_forms() {
        assert_eq!(
            decode("add", &["cc", "u32"]),
            Ok(Op::Carry {
                op: CarryOp::Add,
                ty: Type::U32,
                mode: MulMode::None,
                cc_in: false,
                cc_out: true
            })
        );
        assert_eq!(
            decode("madc", &["hi", "cc", "u64"]),
            Ok(Op::Carry {
                op: CarryOp::Mad,
                ty: Type::U64,
                mode: MulMode::Hi,
                cc_in: true,
                cc_out: true
            })
        );
        assert!(decode("addc", &["f32"]).is_err());
        assert!(decode("mad", &["cc", "u32"]).is_err());
    }

    #[test]
    fn barriers_fences_and_hints() {
        assert_eq!(decode("bar", &["cta", "sync"]), Ok(Op::BarSync));
        assert_eq!(decode("barrier", &["sync", "aligned"]), Ok(Op::BarSync));
        assert_eq!(decode("bar", &["arrive"]), Ok(Op::Nop));
        assert_eq!(
            decode("bar", &["red", "popc", "u32"]),
            Ok(Op::BarRed(BarRedOp::Popc))
        );
        assert_eq!(
            decode("barrier", &["cta", "red", "and", "aligned", "pred"]),
            Ok(Op::BarRed(BarRedOp::And))
        );
        assert!(decode("bar", &["red", "popc", "pred"]).is_err());
        assert_eq!(decode("membar", &["gl"]), Ok(Op::Nop));
        assert_eq!(decode("fence", &["acq_rel", "gpu"]), Ok(Op::Nop));
        assert_eq!(decode("fence", &["sc", "cta"]), Ok(Op::Nop));
        assert_eq!(decode("fence", &["proxy", "async"]), Ok(Op::Nop));
        assert_eq!(decode("nanosleep", &["u32"]), Ok(Op::Nop));
        assert_eq!(decode("prefetch", &["global", "L2"]), Ok(Op::Nop));
        assert_eq!(decode("prefetchu", &["L1"]), Ok(Op::Nop));
        let relaxed = decode("ld", &["relaxed", "gpu", "global", "u32"]);
        assert!(matches!(
            relaxed,
            Ok(Op::Ld(MemOp {
                cache: CacheOp::Cg,
                ..
            }))
        ));
        let cta = decode("ld", &["relaxed", "cta", "global", "u32"]);
        assert!(matches!(
            cta,
            Ok(Op::Ld(MemOp {
                cache: CacheOp::Default,
                ..
            }))
        ));
        assert!(matches!(
            decode("st", &["shared::cta", "v2", "u32"]),
            Ok(Op::St(MemOp {
                space: StateSpace::Shared,
                vec: 2,
                ..
            }))
        ));
    }
}

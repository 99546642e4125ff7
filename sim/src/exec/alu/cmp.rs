//! Comparisons and selects: `setp` on one lane ([`compare`], [`combine`]) and for a whole warp
//! ([`compare_warp`]), the ordering key the integer loops share, `slct`, the value `set` writes
//! and `testp`.

use super::{f32_of, f64_of, from_f32, mask, sext, sext_by, sext_shift, trunc};
use crate::exec::step::for_lanes;
use crate::ptx::ast::Type;
use crate::ptx::inst::{BoolOp, Cmp, TestpOp};

/// `v` as an integer of the width of mask `m` (sign shift `sh`, [`sext_shift`]), mapped so that
/// unsigned order of the results is the type's order: signed values sign-extended with the sign
/// bit flipped, unsigned ones masked.
#[inline(always)]
pub(crate) fn order_key(v: u64, signed: bool, m: u64, sh: u32) -> u64 {
    if signed {
        (sext_by(v, sh) as u64) ^ (1 << 63)
    } else {
        v & m
    }
}

/// `setp` without a second destination or a combining predicate for every lane of `exec`:
/// `out[lane]` = 1 when `a[lane] cmp b[lane]`, else 0. Integer comparisons get a loop each (the
/// comparison and the width decided once); float ones too (`float_compare_warp`).
pub fn compare_warp(
    cmp: Cmp,
    ty: Type,
    a: &[u64; 32],
    b: &[u64; 32],
    exec: u32,
    out: &mut [u64; 32],
) {
    macro_rules! each {
        ($f:expr) => {{
            let f = $f;
            for_lanes!(exec, |l| {
                out[l] = u64::from(f(a[l], b[l]));
            })
        }};
    }
    if ty.is_float() {
        return float_compare_warp(cmp, ty, a, b, exec, out);
    }
    let (bits, signed) = (ty.bits(), ty.is_signed());
    let (m, sh) = (mask(bits), sext_shift(bits));
    let key = |v| order_key(v, signed, m, sh);
    match cmp {
        Cmp::Eq | Cmp::Equ => each!(|x: u64, y: u64| x & m == y & m),
        Cmp::Ne | Cmp::Neu => each!(|x: u64, y: u64| x & m != y & m),
        Cmp::Lt | Cmp::Ltu => each!(|x, y| key(x) < key(y)),
        Cmp::Le | Cmp::Leu => each!(|x, y| key(x) <= key(y)),
        Cmp::Gt | Cmp::Gtu => each!(|x, y| key(x) > key(y)),
        Cmp::Ge | Cmp::Geu => each!(|x, y| key(x) >= key(y)),
        _ => each!(|x, y| compare(cmp, ty, x, y)),
    }
}

/// `setp` comparison of two values of type `ty`.
#[inline]
pub fn compare(cmp: Cmp, ty: Type, a: u64, b: u64) -> bool {
    if ty.is_float() {
        return if ty == Type::F64 {
            float_cmp(cmp, f64_of(a), f64_of(b))
        } else {
            float_cmp(cmp, f32_of(a), f32_of(b))
        };
    }
    let bits = ty.bits();
    let (ua, ub) = (trunc(a, bits), trunc(b, bits));
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let signed = ty.is_signed();
    match cmp {
        Cmp::Eq | Cmp::Equ => ua == ub,
        Cmp::Ne | Cmp::Neu => ua != ub,
        Cmp::Lt | Cmp::Ltu => {
            if signed {
                sa < sb
            } else {
                ua < ub
            }
        }
        Cmp::Le | Cmp::Leu => {
            if signed {
                sa <= sb
            } else {
                ua <= ub
            }
        }
        Cmp::Gt | Cmp::Gtu => {
            if signed {
                sa > sb
            } else {
                ua > ub
            }
        }
        Cmp::Ge | Cmp::Geu => {
            if signed {
                sa >= sb
            } else {
                ua >= ub
            }
        }
        Cmp::Lo => ua < ub,
        Cmp::Ls => ua <= ub,
        Cmp::Hi => ua > ub,
        Cmp::Hs => ua >= ub,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// `x cmp y` for floats of one type (PTX ISA §9.7.3.x `setp`): the ordered comparisons are false
/// and the unordered (`u`) ones true when either value is NaN. Written with the comparisons'
/// own IEEE behaviour (every comparison but `!=` is false on NaN), so no separate NaN test; f32
/// values compare as their exact f64 widenings would.
// `x < y || x > y` is not `x != y` on NaN, and `!(x >= y)` is not `x < y`: the forms are meant.
#[allow(clippy::double_comparisons, clippy::neg_cmp_op_on_partial_ord)]
#[inline(always)]
fn float_cmp<T: PartialOrd>(cmp: Cmp, x: T, y: T) -> bool {
    match cmp {
        Cmp::Eq => x == y,
        Cmp::Ne => x < y || x > y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
        Cmp::Equ => !(x < y || x > y),
        Cmp::Neu => x != y,
        Cmp::Ltu => !(x >= y),
        Cmp::Leu => !(x > y),
        Cmp::Gtu => !(x <= y),
        Cmp::Geu => !(x < y),
        // NaN is the only value not equal to itself.
        #[allow(clippy::eq_op)]
        Cmp::Num => x == x && y == y,
        #[allow(clippy::eq_op)]
        Cmp::Nan => !(x == x && y == y),
        Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
    }
}

/// The float part of [`compare_warp`]: the comparison and the type decided once per warp, one
/// loop of [`float_cmp`] with a constant comparison.
fn float_compare_warp(
    cmp: Cmp,
    ty: Type,
    a: &[u64; 32],
    b: &[u64; 32],
    exec: u32,
    out: &mut [u64; 32],
) {
    macro_rules! each {
        ($cmp:expr) => {{
            if ty == Type::F64 {
                for_lanes!(exec, |l| {
                    out[l] = u64::from(float_cmp($cmp, f64_of(a[l]), f64_of(b[l])));
                })
            } else {
                for_lanes!(exec, |l| {
                    out[l] = u64::from(float_cmp($cmp, f32_of(a[l]), f32_of(b[l])));
                })
            }
        }};
    }
    match cmp {
        Cmp::Eq => each!(Cmp::Eq),
        Cmp::Ne => each!(Cmp::Ne),
        Cmp::Lt => each!(Cmp::Lt),
        Cmp::Le => each!(Cmp::Le),
        Cmp::Gt => each!(Cmp::Gt),
        Cmp::Ge => each!(Cmp::Ge),
        Cmp::Equ => each!(Cmp::Equ),
        Cmp::Neu => each!(Cmp::Neu),
        Cmp::Ltu => each!(Cmp::Ltu),
        Cmp::Leu => each!(Cmp::Leu),
        Cmp::Gtu => each!(Cmp::Gtu),
        Cmp::Geu => each!(Cmp::Geu),
        Cmp::Num => each!(Cmp::Num),
        Cmp::Nan => each!(Cmp::Nan),
        Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => each!(Cmp::Lo),
    }
}

/// Combines a comparison result with a third predicate (`setp.cmp.and` and friends).
#[inline]
pub fn combine(op: Option<BoolOp>, r: bool, c: bool) -> bool {
    match op {
        None => r,
        Some(BoolOp::And) => r && c,
        Some(BoolOp::Or) => r || c,
        Some(BoolOp::Xor) => r ^ c,
    }
}

/// `slct.dtype.ctype d, a, b, c`: `c >= 0 ? a : b` (a float `c` that is NaN selects `b`; `-0.0`
/// selects `a`; with `.ftz` a negative subnormal counts as `-0.0`).
pub fn slct(ty: Type, cty: Type, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let take_a = if cty == Type::F32 {
        let x = f32_of(c);
        let x = if ftz && x.is_subnormal() { 0.0 } else { x };
        x >= 0.0
    } else {
        sext(c, 32) >= 0
    };
    trunc(if take_a { a } else { b }, ty.bits())
}

/// The value `set` writes for a comparison result: 1.0 or 0.0 for `.f32`, all ones or 0 else.
pub fn set_value(dst: Type, r: bool) -> u64 {
    match (dst, r) {
        (Type::F32, true) => from_f32(1.0),
        (_, true) => 0xffff_ffff,
        (_, false) => 0,
    }
}

/// `testp.op.type p, a` (PTX ISA §9.7.3.2; zeros count as normal).
pub fn testp(op: TestpOp, ty: Type, a: u64) -> bool {
    let x = if ty == Type::F64 {
        f64_of(a)
    } else {
        f64::from(f32_of(a))
    };
    let subnormal = if ty == Type::F64 {
        x.is_subnormal()
    } else {
        f32_of(a).is_subnormal()
    };
    match op {
        TestpOp::Finite => x.is_finite(),
        TestpOp::Infinite => x.is_infinite(),
        TestpOp::Number => !x.is_nan(),
        TestpOp::NotANumber => x.is_nan(),
        TestpOp::Normal => x.is_finite() && !subnormal,
        TestpOp::Subnormal => subnormal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::alu::cvt_pack;

    #[test]
    fn signed_compare_uses_the_type_width() {
        assert!(compare(Cmp::Lt, Type::S32, 0xFFFF_FFFF, 0));
        assert!(!compare(Cmp::Lt, Type::U32, 0xFFFF_FFFF, 0));
        assert!(compare(Cmp::Ge, Type::S32, 12_800_000, 12_800_000));
    }

    #[test]
    fn testp_slct_set_and_cvt_pack() {
        use Type::*;
        let t = |op, x: f32| testp(op, F32, from_f32(x));
        assert!(t(TestpOp::Finite, 1.0));
        assert!(!t(TestpOp::Finite, f32::INFINITY));
        assert!(t(TestpOp::Infinite, f32::NEG_INFINITY));
        assert!(t(TestpOp::NotANumber, f32::NAN));
        assert!(!t(TestpOp::Number, f32::NAN));
        assert!(t(TestpOp::Normal, 0.0));
        assert!(t(TestpOp::Subnormal, f32::from_bits(1)));
        assert!(!t(TestpOp::Normal, f32::from_bits(1)));
        assert!(testp(TestpOp::Subnormal, F64, 1));
        assert_eq!(slct(U32, S32, false, 1, 2, 0xFFFF_FFFF), 2);
        assert_eq!(slct(U32, S32, false, 1, 2, 0), 1);
        assert_eq!(slct(U32, F32, false, 1, 2, from_f32(-0.0)), 1);
        assert_eq!(slct(U32, F32, false, 1, 2, from_f32(f32::NAN)), 2);
        let neg_sub = from_f32(-f32::from_bits(1));
        assert_eq!(slct(U32, F32, false, 1, 2, neg_sub), 2);
        assert_eq!(slct(U32, F32, true, 1, 2, neg_sub), 1);
        assert_eq!(set_value(U32, true), 0xFFFF_FFFF);
        assert_eq!(set_value(F32, true), from_f32(1.0));
        assert_eq!(set_value(S32, false), 0);
        assert_eq!(cvt_pack(U16, 70000, (-5i64) as u64, 0), 0xFFFF_0000);
        assert_eq!(cvt_pack(S16, 5, (-70000i64) as u64, 0), 0x0005_8000);
        assert_eq!(cvt_pack(S8, 200, (-200i64) as u64, 0x1234), 0x1234_7F80);
    }
}

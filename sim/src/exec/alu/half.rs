//! Half precision: the `.f16` (IEEE 754 binary16) and `.bf16` (bfloat16) formats, the packed
//! pairs `.f16x2` and `.bf16x2`, and their arithmetic, comparisons and conversions (PTX ISA
//! §9.7.4 "Half Precision Floating-Point Instructions", §9.7.9.21 `cvt`, §9.7.7.1 `setp`).
//!
//! A value is a 16-bit pattern; a pair holds element 0 in bits 0..16 and element 1 in bits
//! 16..32, and every operation works on the two elements independently. Results are bit-exact:
//!
//! - `add sub mul fma` compute in f64 and round once to the format. The product of two halves is
//!   exact in f64 (22 of 53 significand bits), and rounding the f64 sum or fused sum again to 11
//!   (or 8) bits gives the correctly rounded result: double rounding is innocuous when the wider
//!   precision is at least twice the narrower plus one (Figueroa, "When is double rounding
//!   innocuous?", 1995), and where the f64 sum is inexact the smaller term lies far below half an
//!   ulp of the result.
//! - Every NaN result is the canonical NaN `0x7fff` (PTX ISA `min`/`max`: "canonical NaN"; the
//!   same pattern for both formats). `.sat` clamps to [+0.0, 1.0], NaN and -0.0 giving +0.0 (the
//!   bounds CUDA's `__saturatef` documents); `.relu`
//!   (`fma`, `cvt`) gives +0.0 for a negative result and keeps NaN canonical; `.ftz` flushes
//!   subnormal inputs and results to zero of the same sign.
//! - `min`/`max` return the other operand when one is NaN (canonical NaN when both are, or with
//!   `.NaN` when either is), order -0.0 below +0.0, and with `.xorsign.abs` compare magnitudes
//!   and give the result the XOR of the inputs' signs.
//! - Conversions round as `.rn .rz .rm .rp` say, from the exact value of the source (an integer
//!   of up to 64 bits is rounded from its exact value, not through f64); overflow gives infinity
//!   or the largest finite value as the rounding direction does, `.satfinite` the largest finite
//!   value for every overflow and infinity.
//!
//! The `half` crate is the reference the tests compare with bit for bit (its conversions from f32
//! and f64 round to nearest even).

use super::round::round_int;
use crate::ptx::ast::Type;
pub use crate::ptx::float16::{Format, BF16, CANONICAL_NAN, F16};
use crate::ptx::inst::{AluOp, HalfCvt, HalfOp, Rounding};

/// Applies `f` to each element of a value of `ty` (one, or the two halves of a pair).
#[inline]
fn elementwise(pair: bool, a: u64, b: u64, c: u64, f: impl Fn(u16, u16, u16) -> u16) -> u64 {
    let lo = u64::from(f(a as u16, b as u16, c as u16));
    if !pair {
        return lo;
    }
    let hi = u64::from(f((a >> 16) as u16, (b >> 16) as u16, (c >> 16) as u16));
    lo | hi << 16
}

/// One lane of [`Op::Half`](crate::ptx::inst::Op::Half): `add sub mul fma min max neg abs` on
/// the operands' bit patterns (`c` only for `fma`).
pub fn half_arith(h: HalfOp, a: u64, b: u64, c: u64) -> u64 {
    let Some((fmt, pair)) = Format::of(h.ty) else {
        return a;
    };
    elementwise(pair, a, b, c, |a, b, c| element(fmt, h, a, b, c))
}

fn element(fmt: Format, h: HalfOp, a: u16, b: u16, c: u16) -> u16 {
    let (a, b, c) = if h.ftz {
        (fmt.flush(a), fmt.flush(b), fmt.flush(c))
    } else {
        (a, b, c)
    };
    match h.op {
        // The sign bit alone (PTX ISA: "NaN inputs yield an unspecified NaN").
        AluOp::Neg => return a ^ 0x8000,
        AluOp::Abs => return a & 0x7fff,
        AluOp::Min | AluOp::Max => return min_max(fmt, h, a, b),
        _ => {}
    }
    let (x, y, z) = (fmt.to_f64(a), fmt.to_f64(b), fmt.to_f64(c));
    let r = match h.op {
        AluOp::Add => x + y,
        AluOp::Sub => x - y,
        AluOp::Mul => x * y,
        // The product is exact in f64: one rounding of the sum, then one to the format.
        _ => x * y + z,
    };
    let mut d = fmt.from_f64(r, Rounding::Rn);
    if h.ftz {
        d = fmt.flush(d);
    }
    if h.sat {
        d = if fmt.is_nan(d) || d & 0x8000 != 0 {
            0
        } else if fmt.to_f64(d) > 1.0 {
            fmt.from_f64(1.0, Rounding::Rn)
        } else {
            d
        };
    }
    if h.relu && !fmt.is_nan(d) && d & 0x8000 != 0 {
        d = 0;
    }
    d
}

/// `min`/`max` of one element (PTX ISA §9.7.4.7, §9.7.4.8).
fn min_max(fmt: Format, h: HalfOp, a: u16, b: u16) -> u16 {
    let sign = (a ^ b) & 0x8000;
    let (a, b) = if h.xorsign {
        (a & 0x7fff, b & 0x7fff)
    } else {
        (a, b)
    };
    let (an, bn) = (fmt.is_nan(a), fmt.is_nan(b));
    let r = if (an && bn) || (h.nan && (an || bn)) {
        return CANONICAL_NAN;
    } else if an {
        b
    } else if bn {
        a
    } else {
        let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
        let min = h.op == AluOp::Min;
        if x < y {
            if min {
                a
            } else {
                b
            }
        } else if y < x {
            if min {
                b
            } else {
                a
            }
        } else if min {
            // Equal: the same pattern, or zeros of two signs where -0.0 < +0.0.
            a | b
        } else {
            a & b
        }
    };
    if h.xorsign {
        (r & 0x7fff) | sign
    } else {
        r
    }
}

/// `setp` on half types (PTX ISA §9.7.4.9 `setp` with `.f16 .f16x2 .bf16 .bf16x2`): the
/// comparison of each element, element 0 in bit 0 and element 1 in bit 1.
pub fn half_compare(cmp: crate::ptx::inst::Cmp, ty: Type, ftz: bool, a: u64, b: u64) -> u32 {
    let Some((fmt, pair)) = Format::of(ty) else {
        return 0;
    };
    let one = |a: u16, b: u16| -> u32 {
        let (a, b) = if ftz {
            (fmt.flush(a), fmt.flush(b))
        } else {
            (a, b)
        };
        let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
        u32::from(super::compare(cmp, Type::F64, x.to_bits(), y.to_bits()))
    };
    let lo = one(a as u16, b as u16);
    if pair {
        lo | one((a >> 16) as u16, (b >> 16) as u16) << 1
    } else {
        lo
    }
}

/// `set.cmp[.bop].dtype.stype d, a, b[, c]` with a half-precision `stype` (PTX ISA §9.7.4.10):
/// per element, true is 1.0 of a half `dtype` and all ones of an integer one (16 bits per element
/// of a pair), false is 0; `c` is the third predicate `.bop` combines with.
pub fn half_set(
    cmp: crate::ptx::inst::Cmp,
    bool_op: Option<crate::ptx::inst::BoolOp>,
    dst: Type,
    src: Type,
    a: u64,
    b: u64,
    c: bool,
) -> u64 {
    let Some((_, pair)) = Format::of(src) else {
        return 0;
    };
    let r = half_compare(cmp, src, false, a, b);
    let truth = match Format::of(dst) {
        Some((f, _)) => u64::from(f.from_f64(1.0, Rounding::Rn)),
        None if dst == Type::F32 => u64::from(1f32.to_bits()),
        None if pair => 0xffff,
        None => 0xffff_ffff,
    };
    let one = |bit: u32| {
        if super::combine(bool_op, r >> bit & 1 == 1, c) {
            truth
        } else {
            0
        }
    };
    if pair {
        one(0) | one(1) << 16
    } else {
        one(0)
    }
}

/// One lane of [`Op::HalfCvt`](crate::ptx::inst::Op::HalfCvt): `cvt` with a half-precision
/// destination or source. A pair destination converts two f32 sources, `a` into the upper half
/// and `b` into the lower (PTX ISA: "the value converted from input a is stored in the upper
/// half of d").
pub fn half_convert(c: HalfCvt, a: u64, b: u64) -> u64 {
    if let Some((fmt, pair)) = Format::of(c.dst) {
        let one = |v: u64| u64::from(to_half(fmt, c, v));
        return if pair { one(a) << 16 | one(b) } else { one(a) };
    }
    // A half source: its exact value, converted as from an f64 (exact for every destination
    // that can hold it; rounding and saturation as `cvt` from f64 does them).
    let Some((fmt, _)) = Format::of(c.src) else {
        return a;
    };
    let h = a as u16;
    if c.dst == Type::F32 && c.rnd.is_none() && !c.sat {
        // Widening is exact; bf16 is the upper half of an f32, so the bits move over unchanged
        // (NaN payloads too). A subnormal bf16 is a subnormal f32, which `.ftz` flushes.
        if fmt == BF16 {
            let h = if c.ftz { fmt.flush(h) } else { h };
            return u64::from(u32::from(h) << 16);
        }
    }
    let x = fmt.to_f64(h);
    let r = super::convert(c.dst, Type::F64, c.rnd, c.sat, x.to_bits());
    if c.ftz && c.dst == Type::F32 && f32::from_bits(r as u32).is_subnormal() {
        return r & 0x8000_0000;
    }
    r
}

/// One element of a half destination from `v`, of the source type `c.src`.
fn to_half(fmt: Format, c: HalfCvt, v: u64) -> u16 {
    let rnd = c.rnd.unwrap_or(Rounding::Rn);
    let src = c.src;
    let mut h = if let Some((sf, _)) = Format::of(src) {
        let x = sf.to_f64(v as u16);
        float_to_half(fmt, c, x, rnd)
    } else if src.is_float() {
        let x = if src == Type::F64 {
            f64::from_bits(v)
        } else {
            let f = f32::from_bits(v as u32);
            let f = if c.ftz && f.is_subnormal() {
                0.0f32.copysign(f)
            } else {
                f
            };
            f64::from(f)
        };
        float_to_half(fmt, c, x, rnd)
    } else {
        let bits = src.bits();
        let i = if src.is_signed() {
            i128::from(super::sext(v, bits))
        } else {
            i128::from(super::trunc(v, bits))
        };
        let i = if c.sat { i.clamp(0, 1) } else { i };
        fmt.from_int(i, directed(rnd))
    };
    if c.satfinite && !fmt.is_nan(h) && h & 0x7fff == fmt.infinity() {
        h = (h & 0x8000) | fmt.max_finite();
    }
    if c.relu && !fmt.is_nan(h) && h & 0x8000 != 0 {
        h = 0;
    }
    h
}

/// A float `x` (exact) to a half format: integer roundings first round to an integral value.
fn float_to_half(fmt: Format, c: HalfCvt, x: f64, rnd: Rounding) -> u16 {
    if c.sat && (x.is_nan() || x <= 0.0) {
        // `.sat` clamps to [+0.0, 1.0] (NaN and -0.0 included), as the arithmetic does.
        return 0;
    }
    if x.is_nan() {
        return CANONICAL_NAN;
    }
    let (x, rnd) = match rnd {
        Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi => {
            (round_int(x, rnd), Rounding::Rn)
        }
        r => (x, r),
    };
    let x = if c.sat { x.min(1.0) } else { x };
    fmt.from_f64(x, rnd)
}

/// The direction of an integer rounding (`.rni` is `.rn` for a value that is already integral).
fn directed(r: Rounding) -> Rounding {
    match r {
        Rounding::Rni => Rounding::Rn,
        Rounding::Rzi => Rounding::Rz,
        Rounding::Rmi => Rounding::Rm,
        Rounding::Rpi => Rounding::Rp,
        r => r,
    }
}

#[cfg(test)]
mod tests;

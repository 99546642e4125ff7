//! Per-lane arithmetic as the PTX ISA defines it: plain functions of bit patterns.
//!
//! Registers hold up to 64 bits; a value of type `T` lives in the low `T.bits()` bits. Results
//! are returned zero-extended to 64 bits (sign bits above the type's width are cleared), so a
//! later reader truncates or sign-extends as its own type says. Floats are IEEE-754 with
//! round-to-nearest-even, as `.rn` specifies; subnormals are kept (no `.ftz` flush).

use super::step::for_lanes;
use crate::ptx::ast::Type;
use crate::ptx::inst::{
    AluOp, AtomKind, BarRedOp, BitOp, BoolOp, CarryOp, Cmp, MulMode, PrmtMode, ReduxOp, Rounding,
    TestpOp,
};

/// Keeps the low `bits` bits of `v`.
#[inline]
pub fn trunc(v: u64, bits: u32) -> u64 {
    v & mask(bits)
}

/// The mask of the low `bits` bits (all 64 from 64 on): `trunc(v, bits) == v & mask(bits)`.
#[inline]
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The shift that sign-extends values of `bits` bits in [`sext_by`]: `64 - bits` (0 from 64 on).
#[inline]
pub fn sext_shift(bits: u32) -> u32 {
    64 - bits.min(64)
}

/// [`sext`] with the shift of [`sext_shift`] decided once: no branch in a lane loop.
#[inline]
pub fn sext_by(v: u64, shift: u32) -> i64 {
    ((v << shift) as i64) >> shift
}

/// Sign-extends the low `bits` bits of `v`.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    sext_by(v, sext_shift(bits))
}

#[inline]
fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline]
fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

#[inline]
fn from_f32(f: f32) -> u64 {
    u64::from(f.to_bits())
}

/// Computes `op` for every lane of `exec`, writing `out[lane]`. The common integer operations
/// get their own loops (the operation is decided once per warp, not once per lane); the rest
/// fall back to [`alu`] per lane.
#[allow(clippy::too_many_arguments)]
pub fn alu_warp(
    op: AluOp,
    ty: Type,
    mode: MulMode,
    sat: bool,
    a: &[u64; 32],
    b: &[u64; 32],
    c: &[u64; 32],
    exec: u32,
    out: &mut [u64; 32],
) {
    macro_rules! each {
        ($f:expr) => {{
            let f = $f;
            for_lanes!(exec, |l| {
                out[l] = f(a[l], b[l], c[l]);
            })
        }};
    }
    // Float operations: decided once per warp too, in a function of their own.
    if ty.is_float() {
        return float_warp(op, ty, sat, a, b, c, exec, out);
    }
    if sat {
        return each!(|x, y, z| alu(op, ty, mode, sat, x, y, z));
    }
    // Integer operations: the width's mask and sign are decided once, the loops are plain.
    let bits = ty.bits();
    let m = mask(bits);
    let signed = ty.is_signed();
    let sh = sext_shift(bits);
    match (op, mode) {
        (AluOp::Add, MulMode::None) => each!(|x: u64, y: u64, _| x.wrapping_add(y) & m),
        (AluOp::Sub, MulMode::None) => each!(|x: u64, y: u64, _| x.wrapping_sub(y) & m),
        // Bitwise results of operands within the width stay within it: no mask.
        (AluOp::And, _) => each!(|x: u64, y: u64, _| x & y),
        (AluOp::Or, _) => each!(|x: u64, y: u64, _| x | y),
        (AluOp::Xor, _) => each!(|x: u64, y: u64, _| x ^ y),
        (AluOp::Not, MulMode::None) => each!(|x: u64, _, _| !x & m),
        (AluOp::Mul | AluOp::Mad, MulMode::Lo) | (AluOp::Mul | AluOp::Mad, MulMode::None) => {
            let add = op == AluOp::Mad;
            each!(
                |x: u64, y: u64, z: u64| x.wrapping_mul(y).wrapping_add(if add { z } else { 0 })
                    & m
            )
        }
        // `mul.wide` and `mad.wide` of 16- and 32-bit values: the product fits 64 bits.
        (AluOp::Mul | AluOp::Mad, MulMode::Wide) if bits <= 32 => {
            let (add, wm) = (op == AluOp::Mad, mask(bits * 2));
            if signed {
                each!(
                    |x: u64, y: u64, z: u64| (sext_by(x, sh).wrapping_mul(sext_by(y, sh)) as u64)
                        .wrapping_add(if add { z } else { 0 })
                        & wm
                )
            } else {
                each!(
                    |x: u64, y: u64, z: u64| ((x & m) * (y & m)).wrapping_add(if add {
                        z
                    } else {
                        0
                    }) & wm
                )
            }
        }
        (AluOp::Shl, MulMode::None) => {
            each!(|x: u64, y: u64, _| if y & 0xffff_ffff >= u64::from(bits) {
                0
            } else {
                (x << (y & 0xffff_ffff)) & m
            })
        }
        (AluOp::Shr, MulMode::None) if signed => {
            each!(|x: u64, y: u64, _| (sext_by(x, sh)
                >> (y & 0xffff_ffff).min(u64::from(bits)).min(63))
                as u64
                & m)
        }
        (AluOp::Shr, MulMode::None) => {
            each!(|x: u64, y: u64, _| if y & 0xffff_ffff >= u64::from(bits) {
                0
            } else {
                (x & m) >> (y & 0xffff_ffff)
            })
        }
        (AluOp::Min | AluOp::Max, MulMode::None) => {
            let min = op == AluOp::Min;
            let key = |v| order_key(v, signed, m, sh);
            each!(|x: u64, y: u64, _| if (key(x) < key(y)) == min {
                x & m
            } else {
                y & m
            })
        }
        _ => each!(|x, y, z| alu(op, ty, mode, sat, x, y, z)),
    }
}

/// The float part of [`alu_warp`]: the operation and the type are decided once per warp, each
/// common operation gets a plain lane loop computing what [`float_alu`] computes (the same
/// expressions), the rest use [`float_alu`] per lane. `.sat` clamps the results in a second
/// pass, as [`float_alu`] clamps each result after computing it.
#[allow(clippy::too_many_arguments)]
fn float_warp(
    op: AluOp,
    ty: Type,
    sat: bool,
    a: &[u64; 32],
    b: &[u64; 32],
    c: &[u64; 32],
    exec: u32,
    out: &mut [u64; 32],
) {
    macro_rules! each {
        ($f:expr) => {{
            let f = $f;
            for_lanes!(exec, |l| {
                out[l] = f(a[l], b[l], c[l]);
            })
        }};
    }
    macro_rules! each32 {
        ($f:expr) => {{
            let f = $f;
            each!(|x, y, z| from_f32(f(f32_of(x), f32_of(y), f32_of(z))))
        }};
    }
    macro_rules! each64 {
        ($f:expr) => {{
            let f = $f;
            each!(|x, y, z| f(f64_of(x), f64_of(y), f64_of(z)).to_bits())
        }};
    }
    if ty == Type::F64 {
        match op {
            AluOp::Add => each64!(|x: f64, y: f64, _| x + y),
            AluOp::Sub => each64!(|x: f64, y: f64, _| x - y),
            AluOp::Mul => each64!(|x: f64, y: f64, _| x * y),
            AluOp::Mad | AluOp::Fma => each64!(|x: f64, y: f64, z: f64| x.mul_add(y, z)),
            AluOp::Div => each64!(|x: f64, y: f64, _| x / y),
            AluOp::Min => each64!(|x: f64, y: f64, _| fmin(x, y)),
            AluOp::Max => each64!(|x: f64, y: f64, _| fmax(x, y)),
            AluOp::Neg => each64!(|x: f64, _, _| -x),
            AluOp::Abs => each64!(|x: f64, _, _| x.abs()),
            AluOp::Sqrt => each64!(|x: f64, _, _| x.sqrt()),
            _ => return each!(|x, y, z| float_alu(op, ty, sat, x, y, z)),
        }
        if sat {
            for_lanes!(exec, |l| {
                out[l] = saturate(f64_of(out[l])).to_bits();
            });
        }
        return;
    }
    match op {
        AluOp::Add => each32!(|x: f32, y: f32, _| x + y),
        AluOp::Sub => each32!(|x: f32, y: f32, _| x - y),
        AluOp::Mul => each32!(|x: f32, y: f32, _| x * y),
        AluOp::Mad | AluOp::Fma => each32!(|x: f32, y: f32, z: f32| x.mul_add(y, z)),
        AluOp::Div => each32!(|x: f32, y: f32, _| x / y),
        AluOp::Min => each32!(|x: f32, y: f32, _| fmin(f64::from(x), f64::from(y)) as f32),
        AluOp::Max => each32!(|x: f32, y: f32, _| fmax(f64::from(x), f64::from(y)) as f32),
        AluOp::Neg => each32!(|x: f32, _, _| -x),
        AluOp::Abs => each32!(|x: f32, _, _| x.abs()),
        AluOp::Rcp => each32!(|x: f32, _, _| 1.0 / x),
        AluOp::Sqrt => each32!(|x: f32, _, _| x.sqrt()),
        AluOp::Rsqrt => each32!(|x: f32, _, _| 1.0 / x.sqrt()),
        _ => return each!(|x, y, z| float_alu(op, ty, sat, x, y, z)),
    }
    if sat {
        for_lanes!(exec, |l| {
            out[l] = from_f32(saturate(f64::from(f32_of(out[l]))) as f32);
        });
    }
}

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
/// comparison and the width decided once); float ones too ([`float_compare_warp`]).
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

/// Computes `op` on one lane. `a`, `b`, `c` are the source bit patterns (unused ones ignored).
/// Integer division by zero gives all ones (as the hardware does for unsigned), never a panic.
#[inline]
pub fn alu(op: AluOp, ty: Type, mode: MulMode, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    if ty.is_float() {
        return float_alu(op, ty, sat, a, b, c);
    }
    let bits = ty.bits();
    let signed = ty.is_signed();
    let r: u64 = match op {
        AluOp::Add if sat && ty == Type::S32 => {
            (sext(a, 32) + sext(b, 32)).clamp(i32::MIN.into(), i32::MAX.into()) as u64
        }
        AluOp::Sub if sat && ty == Type::S32 => {
            (sext(a, 32) - sext(b, 32)).clamp(i32::MIN.into(), i32::MAX.into()) as u64
        }
        AluOp::Add => a.wrapping_add(b),
        AluOp::Sub => a.wrapping_sub(b),
        AluOp::Mul => mul(mode, bits, signed, a, b),
        AluOp::Mad => {
            let p = mul(mode, bits, signed, a, b);
            let out_bits = if mode == MulMode::Wide {
                bits * 2
            } else {
                bits
            };
            return trunc(p.wrapping_add(c), out_bits);
        }
        AluOp::Div => {
            if trunc(b, bits) == 0 {
                u64::MAX
            } else if signed {
                sext(a, bits).wrapping_div(sext(b, bits)) as u64
            } else {
                trunc(a, bits) / trunc(b, bits)
            }
        }
        AluOp::Rem => {
            if trunc(b, bits) == 0 {
                a
            } else if signed {
                sext(a, bits).wrapping_rem(sext(b, bits)) as u64
            } else {
                trunc(a, bits) % trunc(b, bits)
            }
        }
        AluOp::Min | AluOp::Max => {
            let less = if signed {
                sext(a, bits) < sext(b, bits)
            } else {
                trunc(a, bits) < trunc(b, bits)
            };
            if less == (op == AluOp::Min) {
                a
            } else {
                b
            }
        }
        AluOp::Neg => (sext(a, bits)).wrapping_neg() as u64,
        AluOp::Abs => sext(a, bits).wrapping_abs() as u64,
        AluOp::And => a & b,
        AluOp::Or => a | b,
        AluOp::Xor => a ^ b,
        AluOp::Not => !a,
        AluOp::CNot => u64::from(trunc(a, bits) == 0),
        AluOp::Shl => {
            let s = trunc(b, 32);
            if s >= u64::from(bits) {
                0
            } else {
                a << s
            }
        }
        AluOp::Shr => {
            let s = trunc(b, 32).min(u64::from(bits));
            if signed {
                (sext(a, bits) >> s.min(63)) as u64
            } else if s >= u64::from(bits) {
                0
            } else {
                trunc(a, bits) >> s
            }
        }
        AluOp::Sad => {
            let d = if signed {
                sext(a, bits).abs_diff(sext(b, bits))
            } else {
                trunc(a, bits).abs_diff(trunc(b, bits))
            };
            c.wrapping_add(d)
        }
        AluOp::Mul24 | AluOp::Mad24 => {
            // The low 24 bits of each operand, sign-extended for .s32; the 48-bit product.
            let (x, y) = if signed {
                (sext(a, 24), sext(b, 24))
            } else {
                (trunc(a, 24) as i64, trunc(b, 24) as i64)
            };
            let p = x * y;
            let part = if mode == MulMode::Hi { p >> 16 } else { p };
            let r = if op == AluOp::Mad24 {
                part.wrapping_add(sext(c, 32))
            } else {
                part
            };
            if sat && op == AluOp::Mad24 && signed {
                // mad24.hi.sat.s32 clamps the sum to the s32 range.
                let wide = i128::from(part) + i128::from(sext(c, 32));
                return trunc(wide.clamp(i32::MIN.into(), i32::MAX.into()) as u64, 32);
            }
            r as u64
        }
        AluOp::Popc => u64::from(trunc(a, bits).count_ones()),
        AluOp::Clz => u64::from(trunc(a, bits).leading_zeros() - (64 - bits)),
        AluOp::Brev => trunc(a, bits).reverse_bits() >> (64 - bits),
        // Float-only operations on an integer type are rejected at decode; keep the value.
        AluOp::Fma
        | AluOp::Rcp
        | AluOp::Sqrt
        | AluOp::Rsqrt
        | AluOp::Ex2
        | AluOp::Lg2
        | AluOp::Sin
        | AluOp::Cos
        | AluOp::Tanh
        | AluOp::Copysign
        | AluOp::MinNan
        | AluOp::MaxNan
        | AluOp::MinXorsign
        | AluOp::MaxXorsign => a,
    };
    // `.wide` doubles the width; popc/clz results fit either way.
    trunc(
        r,
        if mode == MulMode::Wide {
            bits * 2
        } else {
            bits
        },
    )
}

#[inline]
fn mul(mode: MulMode, bits: u32, signed: bool, a: u64, b: u64) -> u64 {
    // The full product's 128 bits: signed products fit i128, unsigned ones u128 (a product of
    // two 64-bit values overflows i128).
    let full: u128 = if signed {
        (i128::from(sext(a, bits)) * i128::from(sext(b, bits))) as u128
    } else {
        u128::from(trunc(a, bits)) * u128::from(trunc(b, bits))
    };
    match mode {
        MulMode::Wide => trunc(full as u64, bits * 2),
        // An arithmetic shift keeps the sign of a signed product's high half.
        MulMode::Hi if signed => trunc(((full as i128) >> bits) as u64, bits),
        MulMode::Hi => trunc((full >> bits) as u64, bits),
        MulMode::Lo | MulMode::None => trunc(full as u64, bits),
    }
}

fn float_alu(op: AluOp, ty: Type, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    if ty == Type::F64 {
        let (x, y, z) = (f64_of(a), f64_of(b), f64_of(c));
        let r = match op {
            AluOp::Add => x + y,
            AluOp::Sub => x - y,
            AluOp::Mul => x * y,
            AluOp::Mad | AluOp::Fma => x.mul_add(y, z),
            AluOp::Div => x / y,
            AluOp::Min => fmin(x, y),
            AluOp::Max => fmax(x, y),
            AluOp::Neg => -x,
            AluOp::Abs => x.abs(),
            AluOp::Rcp => 1.0 / x,
            AluOp::Sqrt => x.sqrt(),
            AluOp::Rsqrt => 1.0 / x.sqrt(),
            AluOp::Copysign => y.abs().copysign(x),
            _ => x,
        };
        let r = if sat { saturate(r) } else { r };
        return r.to_bits();
    }
    let (x, y, z) = (f32_of(a), f32_of(b), f32_of(c));
    let r = match op {
        AluOp::Add => x + y,
        AluOp::Sub => x - y,
        AluOp::Mul => x * y,
        // mad.f32 on sm_20+ is a fused multiply-add (PTX ISA: "mad.f32 ... same as fma.rn.f32").
        AluOp::Mad | AluOp::Fma => x.mul_add(y, z),
        AluOp::Div => x / y,
        AluOp::Min => fmin(f64::from(x), f64::from(y)) as f32,
        AluOp::Max => fmax(f64::from(x), f64::from(y)) as f32,
        AluOp::Neg => -x,
        AluOp::Abs => x.abs(),
        AluOp::Rcp => 1.0 / x,
        AluOp::Sqrt => x.sqrt(),
        AluOp::Rsqrt => 1.0 / x.sqrt(),
        // The `.approx` functions, computed in f64 and rounded once to f32: within the error
        // bounds the PTX ISA gives them, not bit-identical to the hardware's approximation.
        AluOp::Ex2 => f64::from(x).exp2() as f32,
        AluOp::Lg2 => f64::from(x).log2() as f32,
        AluOp::Sin => f64::from(x).sin() as f32,
        AluOp::Cos => f64::from(x).cos() as f32,
        AluOp::Tanh => f64::from(x).tanh() as f32,
        AluOp::Copysign => y.abs().copysign(x),
        AluOp::MinNan | AluOp::MaxNan => {
            if x.is_nan() || y.is_nan() {
                f32::from_bits(CANONICAL_NAN_F32)
            } else if op == AluOp::MinNan {
                fmin(f64::from(x), f64::from(y)) as f32
            } else {
                fmax(f64::from(x), f64::from(y)) as f32
            }
        }
        AluOp::MinXorsign | AluOp::MaxXorsign => {
            let negative = x.is_sign_negative() != y.is_sign_negative();
            let (ax, ay) = (f64::from(x.abs()), f64::from(y.abs()));
            let m = if op == AluOp::MinXorsign {
                fmin(ax, ay)
            } else {
                fmax(ax, ay)
            } as f32;
            if m.is_nan() {
                m
            } else if negative {
                -m
            } else {
                m
            }
        }
        _ => x,
    };
    let r = if sat {
        saturate(f64::from(r)) as f32
    } else {
        r
    };
    from_f32(r)
}

/// The canonical NaN of f32 results (`min.NaN`, `redux.sync` and friends): 0x7fffffff.
pub const CANONICAL_NAN_F32: u32 = 0x7fff_ffff;

/// PTX `min`: if one input is NaN the other is returned.
fn fmin(x: f64, y: f64) -> f64 {
    x.min(y)
}

fn fmax(x: f64, y: f64) -> f64 {
    x.max(y)
}

fn saturate(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
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

/// `cvt.rnd.sat.dst.src` on one value (PTX ISA §9.7.9.21). Integer-to-float and narrowing
/// float conversions round as `.rn .rz .rm .rp` say (round to nearest even without one); `.f16`
/// values are IEEE half precision in the low 16 bits.
pub fn convert(dst: Type, src: Type, rnd: Option<Rounding>, sat: bool, a: u64) -> u64 {
    let float_of = |a: u64| match src {
        Type::F64 => f64_of(a),
        Type::F16 => f16_to_f64(a as u16),
        _ => f64::from(f32_of(a)),
    };
    // Widths are looked up in the branches that use them: this runs once per lane.
    match (src.is_float(), dst.is_float()) {
        (false, false) => {
            let (sbits, dbits) = (src.bits(), dst.bits());
            let v = if src.is_signed() {
                sext(a, sbits) as i128
            } else {
                trunc(a, sbits) as i128
            };
            if sat {
                let (lo, hi) = int_range(dst);
                return trunc(v.clamp(lo, hi) as u64, dbits);
            }
            // Widening sign- or zero-extends by the source; narrowing truncates.
            trunc(v as u64, dbits)
        }
        (false, true) => {
            let (signed, sbits) = (src.is_signed(), src.bits());
            let v = if signed {
                sext(a, sbits) as u64
            } else {
                trunc(a, sbits)
            };
            match dst {
                Type::F64 => int64_to_f64(v, signed, rnd).to_bits(),
                // Every integer that does not overflow a half is exact in f64.
                Type::F16 => {
                    let x = if signed { v as i64 as f64 } else { v as f64 };
                    u64::from(f64_to_f16(x, rnd.unwrap_or(Rounding::Rn)))
                }
                // i64/u64 → f32 must round once from the integer, not via f64.
                _ => from_f32(int64_to_f32(v, signed, rnd)),
            }
        }
        (true, false) => {
            let x = float_of(a);
            let r = match rnd {
                Some(Rounding::Rni) | Some(Rounding::Rn) => round_even(x),
                Some(Rounding::Rmi) | Some(Rounding::Rm) => x.floor(),
                Some(Rounding::Rpi) | Some(Rounding::Rp) => x.ceil(),
                _ => x.trunc(),
            };
            float_to_int(r, dst)
        }
        (true, true) => {
            let x = float_of(a);
            // The integer roundings keep the type; the others round when the type narrows.
            let (x, narrow) = match rnd {
                Some(r @ (Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi)) => {
                    (round_int(x, r), None)
                }
                r => (x, r),
            };
            let x = if sat { saturate(x) } else { x };
            match dst {
                Type::F64 => x.to_bits(),
                Type::F16 => u64::from(f64_to_f16(x, narrow.unwrap_or(Rounding::Rn))),
                _ => from_f32(f64_to_f32(x, narrow)),
            }
        }
    }
}

/// An integral (or infinite, or NaN) `r` converted to the integer type `dst`, saturating at the
/// type's range, NaN giving 0 (PTX float-to-integer `cvt` saturates regardless of `.sat`),
/// zero-extended from the type's width. Rust's float-to-integer `as` is that conversion (it
/// truncates, saturates and maps NaN to 0), so the common types need no clamping of their own.
#[inline]
fn float_to_int(r: f64, dst: Type) -> u64 {
    match dst {
        Type::S8 => u64::from(r as i8 as u8),
        Type::S16 => u64::from(r as i16 as u16),
        Type::S32 => u64::from(r as i32 as u32),
        Type::S64 => r as i64 as u64,
        Type::U8 | Type::B8 => u64::from(r as u8),
        Type::U16 | Type::B16 => u64::from(r as u16),
        Type::U32 | Type::B32 => u64::from(r as u32),
        Type::U64 | Type::B64 => r as u64,
        _ => {
            let (lo, hi) = int_range(dst);
            let v = if r.is_nan() {
                0
            } else {
                (r as i128).clamp(lo, hi)
            };
            trunc(v as u64, dst.bits())
        }
    }
}

fn round_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

fn int_range(t: Type) -> (i128, i128) {
    let bits = t.bits();
    if t.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `bfe`, `bfi`, `prmt`, `bfind`, `fns`, `lop3`, `shf`, `dp4a`, `dp2a`, `bmsk`, `szext` on one
/// lane; `s` holds the sources in PTX order (PTX ISA §9.7.1.x, §9.7.8.x).
pub fn bits(op: BitOp, s: [u64; 4]) -> u64 {
    let [a, b, c, d] = s;
    match op {
        BitOp::Bfe(ty) => {
            let n = ty.bits();
            let (pos, len) = ((b & 0xff) as u32, (c & 0xff) as u32);
            let a = trunc(a, n);
            let sbit = if !ty.is_signed() || len == 0 {
                0
            } else {
                (a >> (pos + len - 1).min(n - 1)) & 1
            };
            let kept = if pos < n { len.min(n - pos) } else { 0 };
            let field = if kept == 0 { 0 } else { trunc(a >> pos, kept) };
            let fill = if sbit == 1 {
                trunc(!0 << kept.min(63), n)
            } else {
                0
            };
            // kept == 64 only when pos == 0 and len >= 64: no fill.
            if kept >= 64 {
                field
            } else {
                field | fill
            }
        }
        BitOp::Bfi(ty) => {
            let n = ty.bits();
            let (pos, len) = ((c & 0xff) as u32, (d & 0xff) as u32);
            let kept = if pos < n { len.min(n - pos) } else { 0 };
            let mask = if kept == 0 {
                0
            } else {
                trunc(u64::MAX, kept) << pos
            };
            trunc((b & !mask) | ((a << pos.min(63)) & mask), n)
        }
        BitOp::Prmt(mode) => u64::from(prmt(mode, a as u32, b as u32, c as u32)),
        BitOp::Bfind { ty, shiftamt } => {
            let n = ty.bits();
            let mut v = trunc(a, n);
            if ty.is_signed() && (v >> (n - 1)) & 1 == 1 {
                v = trunc(!v, n);
            }
            if v == 0 {
                0xffff_ffff
            } else {
                let pos = 63 - u64::from(v.leading_zeros());
                if shiftamt {
                    u64::from(n - 1) - pos
                } else {
                    pos
                }
            }
        }
        BitOp::Fns => {
            let (mask, base, offset) = (a as u32, (b & 0x1f) as i64, sext(c, 32));
            let mut out = 0xffff_ffffu64;
            if offset == 0 {
                if (mask >> base) & 1 == 1 {
                    out = base as u64;
                }
            } else {
                let mut count = offset.unsigned_abs() - 1;
                let step = offset.signum();
                let mut pos = base;
                while (0..32).contains(&pos) {
                    if (mask >> pos) & 1 == 1 {
                        if count == 0 {
                            out = pos as u64;
                            break;
                        }
                        count -= 1;
                    }
                    pos += step;
                }
            }
            out
        }
        BitOp::Lop3 => {
            // Bit k of the look-up table is the result for inputs (a, b, c) = the bits of k:
            // immLut = F(0xF0, 0xCC, 0xAA).
            let lut = d as u32;
            let mut r = 0u64;
            for k in 0..8 {
                if (lut >> k) & 1 == 1 {
                    let pick = |bit: u32, x: u64| if k >> bit & 1 == 1 { x } else { !x };
                    r |= pick(2, a) & pick(1, b) & pick(0, c);
                }
            }
            trunc(r, 32)
        }
        BitOp::Shf { left, clamp } => {
            let n = if clamp {
                (c as u32).min(32)
            } else {
                c as u32 & 0x1f
            };
            let wide = (u128::from(trunc(b, 32)) << 32) | u128::from(trunc(a, 32));
            if left {
                trunc(((wide << n) >> 32) as u64, 32)
            } else {
                trunc((wide >> n) as u64, 32)
            }
        }
        BitOp::Dp4a { a_signed, b_signed } => {
            let byte = |x: u64, i: u32, signed: bool| -> i64 {
                let v = (x >> (8 * i)) & 0xff;
                if signed {
                    sext(v, 8)
                } else {
                    v as i64
                }
            };
            let sum: i64 = (0..4)
                .map(|i| byte(a, i, a_signed) * byte(b, i, b_signed))
                .sum();
            trunc((c as i64).wrapping_add(sum) as u64, 32)
        }
        BitOp::Dp2a {
            hi,
            a_signed,
            b_signed,
        } => {
            let half = |i: u32| -> i64 {
                let v = (a >> (16 * i)) & 0xffff;
                if a_signed {
                    sext(v, 16)
                } else {
                    v as i64
                }
            };
            let byte = |i: u32| -> i64 {
                let v = (b >> (8 * i)) & 0xff;
                if b_signed {
                    sext(v, 8)
                } else {
                    v as i64
                }
            };
            let first = if hi { 2 } else { 0 };
            let sum = half(0) * byte(first) + half(1) * byte(first + 1);
            trunc((c as i64).wrapping_add(sum) as u64, 32)
        }
        BitOp::Bmsk { clamp } => {
            let (pos, width) = if clamp {
                ((a as u32).min(32), (b as u32).min(32))
            } else {
                (a as u32 & 0x1f, b as u32 & 0x1f)
            };
            let ones = if width >= 32 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            if pos >= 32 {
                0
            } else {
                trunc(ones << pos, 32)
            }
        }
        BitOp::Szext { clamp, signed } => {
            let width = if clamp {
                (b as u32).min(32)
            } else {
                b as u32 & 0x1f
            };
            if width == 0 {
                0
            } else if width >= 32 {
                trunc(a, 32)
            } else if signed {
                trunc(sext(a, width) as u64, 32)
            } else {
                trunc(a, width)
            }
        }
    }
}

/// `prmt.b32{.mode}`: four bytes picked from the eight of {b, a} (PTX ISA §9.7.8.7).
pub fn prmt(mode: PrmtMode, a: u32, b: u32, c: u32) -> u32 {
    let src = (u64::from(b) << 32) | u64::from(a);
    let byte = |i: u32| ((src >> (8 * (i & 7))) & 0xff) as u32;
    // Source byte of d.b0 .. d.b3 for the two-bit selector of the special modes.
    let table = |sel: u32| -> [u32; 4] {
        let s = sel & 3;
        match mode {
            PrmtMode::F4e => [s, s + 1, s + 2, s + 3],
            PrmtMode::B4e => [s, (s + 7) % 8, (s + 6) % 8, (s + 5) % 8],
            PrmtMode::Rc8 => [s; 4],
            PrmtMode::Ecl => [s, s.max(1), s.max(2), 3],
            PrmtMode::Ecr => [0, s.min(1), s.min(2), s],
            PrmtMode::Rc16 => {
                let lo = 2 * (s & 1);
                [lo, lo + 1, lo, lo + 1]
            }
            PrmtMode::Generic => [0; 4],
        }
    };
    let mut d = 0u32;
    if mode == PrmtMode::Generic {
        for i in 0..4 {
            let sel = (c >> (4 * i)) & 0xf;
            let mut v = byte(sel & 7);
            if sel & 8 != 0 {
                v = if v & 0x80 != 0 { 0xff } else { 0 };
            }
            d |= v << (8 * i);
        }
    } else {
        for (i, src) in table(c).into_iter().enumerate() {
            d |= byte(src) << (8 * i);
        }
    }
    d
}

/// The extended-precision instructions: `add.cc`/`addc`, `sub.cc`/`subc`, `mad.cc`/`madc`
/// (PTX ISA §9.7.2). `cf` is the incoming carry flag of `addc`/`subc`/`madc` (`None` without
/// carry-in). Returns the result and the carry-out CC.CF.
///
/// CC.CF is the carry of an unsigned addition; a subtraction adds the complement, `a + ~b + 1`
/// (`sub.cc`) or `a + ~b + CF` (`subc`), so after a subtraction CF is 1 when nothing was borrowed.
/// The PTX ISA words `subc` as `a - (b + CC.CF)` with a borrow in CF; both readings give the same
/// differences along a chain of subtractions, but code that reads the flag after one (NVIDIA's own
/// 128-bit division: `addc.u32 d, 0, 0` after `subc.cc`) needs the hardware's, implemented here.
#[allow(clippy::too_many_arguments)]
pub fn carry(
    op: CarryOp,
    ty: Type,
    mode: MulMode,
    a: u64,
    b: u64,
    c: u64,
    cf: Option<u64>,
) -> (u64, u64) {
    let n = ty.bits();
    let (a, b, c) = (
        u128::from(trunc(a, n)),
        u128::from(trunc(b, n)),
        u128::from(trunc(c, n)),
    );
    let s = match op {
        CarryOp::Add => a + b + u128::from(cf.unwrap_or(0) & 1),
        CarryOp::Sub => a + (u128::from(trunc(!(b as u64), n))) + u128::from(cf.unwrap_or(1) & 1),
        CarryOp::Mad => {
            let t = u128::from(mul(mode, n, ty.is_signed(), a as u64, b as u64));
            t + c + u128::from(cf.unwrap_or(0) & 1)
        }
    };
    (trunc(s as u64, n), (s >> n) as u64 & 1)
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

/// `cvt.pack.sat.dst.s32[.b32] d, a, b[, c]`: `a` and `b` saturated to `dst`, `a` above `b`;
/// for 8-bit `dst` the low 16 bits of `c` above them (PTX ISA §9.7.9.22).
pub fn cvt_pack(dst: Type, a: u64, b: u64, c: u64) -> u64 {
    let (lo, hi) = int_range(dst);
    let n = dst.bits();
    let sat = |x: u64| trunc(i128::from(sext(x, 32)).clamp(lo, hi) as u64, n);
    let pair = (sat(a) << n) | sat(b);
    if n == 16 {
        pair
    } else {
        trunc((c << (2 * n)) | pair, 32)
    }
}

/// The value an `atom`/`red` of `kind` stores, given the `old` value in memory and the operands
/// `b` (and `c` for `cas`): PTX ISA §9.7.13.5's `operation(*a, b[, c])`. `flush_f32` flushes
/// subnormal inputs and results of `.add.f32` to sign-preserving zero, as atomics on global memory
/// do; shared-memory atomics keep subnormals.
pub fn atom_apply(kind: AtomKind, ty: Type, flush_f32: bool, old: u64, b: u64, c: u64) -> u64 {
    let n = ty.bits();
    let (o, v) = (trunc(old, n), trunc(b, n));
    let r = match kind {
        AtomKind::And => o & v,
        AtomKind::Or => o | v,
        AtomKind::Xor => o ^ v,
        AtomKind::Exch => v,
        AtomKind::Cas => {
            if o == v {
                c
            } else {
                o
            }
        }
        AtomKind::Inc => {
            if o >= v {
                0
            } else {
                o + 1
            }
        }
        AtomKind::Dec => {
            if o == 0 || o > v {
                v
            } else {
                o - 1
            }
        }
        AtomKind::Add => match ty {
            Type::F32 => {
                let flush = |x: f32| {
                    if flush_f32 && x.is_subnormal() {
                        0.0f32.copysign(x)
                    } else {
                        x
                    }
                };
                from_f32(flush(flush(f32_of(o)) + flush(f32_of(v))))
            }
            Type::F64 => (f64_of(o) + f64_of(v)).to_bits(),
            _ => o.wrapping_add(v),
        },
        AtomKind::Min | AtomKind::Max => {
            let less = if ty.is_signed() {
                sext(o, n) < sext(v, n)
            } else {
                o < v
            };
            if less == (kind == AtomKind::Min) {
                o
            } else {
                v
            }
        }
    };
    trunc(r, n)
}

/// `redux.sync.op.type` over the values of the lanes in `vals` (PTX ISA §9.7.13.11).
pub fn redux(op: ReduxOp, ty: Type, vals: impl Iterator<Item = u64>) -> u64 {
    let signed = ty.is_signed();
    let mut acc: Option<u64> = None;
    for v in vals.map(|v| trunc(v, 32)) {
        acc = Some(match acc {
            None => v,
            Some(x) => match op {
                ReduxOp::Add => trunc(x.wrapping_add(v), 32),
                ReduxOp::And => x & v,
                ReduxOp::Or => x | v,
                ReduxOp::Xor => x ^ v,
                ReduxOp::Min | ReduxOp::Max => {
                    let less = if signed {
                        sext(x, 32) < sext(v, 32)
                    } else {
                        x < v
                    };
                    if less == (op == ReduxOp::Min) {
                        x
                    } else {
                        v
                    }
                }
            },
        });
    }
    acc.unwrap_or(0)
}

/// `bar.red` over the predicates of the threads that arrived: the number true (`.popc`), or
/// whether all (`.and`) or any (`.or`) are.
pub fn bar_red(op: BarRedOp, true_threads: u64, threads: u64) -> u64 {
    match op {
        BarRedOp::Popc => true_threads,
        BarRedOp::And => u64::from(true_threads == threads),
        BarRedOp::Or => u64::from(true_threads > 0),
    }
}

/// The value of an IEEE half-precision bit pattern.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let man = f64::from(h & 0x3ff);
    match exp {
        0 => sign * man * 2f64.powi(-24),
        0x1f if man == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(i32::from(e) - 15),
    }
}

/// Rounds `x` to an integer-valued f64 as `rnd` says (`.rn` and `.rni` to nearest even, `.rz`
/// toward zero, `.rm` down, `.rp` up).
fn round_int(x: f64, rnd: Rounding) -> f64 {
    match rnd {
        Rounding::Rn | Rounding::Rni => round_even(x),
        Rounding::Rz | Rounding::Rzi => x.trunc(),
        Rounding::Rm | Rounding::Rmi => x.floor(),
        Rounding::Rp | Rounding::Rpi => x.ceil(),
    }
}

/// `x` rounded once to half precision as `rnd` says (overflow gives infinity or the largest
/// finite value, as the rounding direction does; NaN gives the canonical 0x7fff).
pub fn f64_to_f16(x: f64, rnd: Rounding) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_infinite() {
        return sign | 0x7c00;
    }
    if x == 0.0 {
        return sign;
    }
    // The quantum of the binade of |x| (subnormal binades share 2^-24).
    let e = x.abs().log2().floor() as i32;
    let e = if 2f64.powi(e) > x.abs() { e - 1 } else { e };
    let q = 2f64.powi(e.max(-14) - 10);
    let m = round_int(x / q, rnd).abs();
    let v = m * q;
    if v > 65504.0 {
        // Beyond the largest finite half: infinity unless rounding toward zero from this side.
        let to_inf = match rnd {
            Rounding::Rz | Rounding::Rzi => false,
            Rounding::Rm | Rounding::Rmi => sign != 0,
            Rounding::Rp | Rounding::Rpi => sign == 0,
            Rounding::Rn | Rounding::Rni => true,
        };
        return sign | if to_inf { 0x7c00 } else { 0x7bff };
    }
    if v == 0.0 {
        return sign;
    }
    let e = v.log2().floor() as i32;
    let e = if 2f64.powi(e) > v { e - 1 } else { e };
    if e < -14 {
        sign | (v / 2f64.powi(-24)) as u16
    } else {
        let man = (v / 2f64.powi(e - 10)) as u16 - 1024;
        sign | (((e + 15) as u16) << 10) | man
    }
}

/// The next f32 above (`up`) or below `x`.
fn f32_step(x: f32, up: bool) -> f32 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    f32::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
}

/// The next f64 above (`up`) or below `x`.
fn f64_step(x: f64, up: bool) -> f64 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    f64::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
}

/// Corrects a round-to-nearest result `r` of the exact value into the direction of `rnd`;
/// `cmp` is how `r` compares with the exact value.
fn directed<T: Copy>(
    r: T,
    cmp: std::cmp::Ordering,
    rnd: Option<Rounding>,
    negative: bool,
    step: impl Fn(T, bool) -> T,
) -> T {
    use std::cmp::Ordering::*;
    match (rnd, cmp) {
        (_, Equal) | (None | Some(Rounding::Rn | Rounding::Rni), _) => r,
        (Some(Rounding::Rm | Rounding::Rmi), Greater) => step(r, false),
        (Some(Rounding::Rp | Rounding::Rpi), Less) => step(r, true),
        (Some(Rounding::Rz | Rounding::Rzi), Greater) if !negative => step(r, false),
        (Some(Rounding::Rz | Rounding::Rzi), Less) if negative => step(r, true),
        _ => r,
    }
}

/// Whether `rnd` rounds an inexact integer-to-float or float-to-float result to nearest even, as
/// [`directed`] leaves it.
#[inline]
fn nearest(rnd: Option<Rounding>) -> bool {
    matches!(rnd, None | Some(Rounding::Rn | Rounding::Rni))
}

/// [`int_to_f32`] of a sign-extended (`signed`) or zero-extended 64-bit value `v`: the
/// conversion `as` does in hardware (round to nearest even) where the result is exact (magnitude
/// up to 2^24) or rounds to nearest anyway; the i128 path for directed roundings of larger values.
#[inline]
fn int64_to_f32(v: u64, signed: bool, rnd: Option<Rounding>) -> f32 {
    if signed {
        let s = v as i64;
        if s.unsigned_abs() <= 1 << 24 || nearest(rnd) {
            return s as f32;
        }
        int_to_f32(i128::from(s), rnd)
    } else {
        if v <= 1 << 24 || nearest(rnd) {
            return v as f32;
        }
        int_to_f32(i128::from(v), rnd)
    }
}

/// [`int_to_f64`] of a sign-extended (`signed`) or zero-extended 64-bit value `v`, as
/// [`int64_to_f32`] (exact up to 2^53).
#[inline]
fn int64_to_f64(v: u64, signed: bool, rnd: Option<Rounding>) -> f64 {
    if signed {
        let s = v as i64;
        if s.unsigned_abs() <= 1 << 53 || nearest(rnd) {
            return s as f64;
        }
        int_to_f64(i128::from(s), rnd)
    } else {
        if v <= 1 << 53 || nearest(rnd) {
            return v as f64;
        }
        int_to_f64(i128::from(v), rnd)
    }
}

/// An integer converted to f32 with the rounding of `rnd`.
fn int_to_f32(v: i128, rnd: Option<Rounding>) -> f32 {
    let r = v as f32;
    let cmp = if r.is_infinite() {
        if r > 0.0 {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Less
        }
    } else {
        (r as i128).cmp(&v)
    };
    directed(r, cmp, rnd, v < 0, f32_step)
}

/// An integer converted to f64 with the rounding of `rnd`.
fn int_to_f64(v: i128, rnd: Option<Rounding>) -> f64 {
    let r = v as f64;
    directed(r, (r as i128).cmp(&v), rnd, v < 0, f64_step)
}

/// An f64 narrowed to f32 with the rounding of `rnd`.
fn f64_to_f32(x: f64, rnd: Option<Rounding>) -> f32 {
    let r = x as f32;
    if nearest(rnd) || x.is_nan() || x.is_infinite() {
        return r;
    }
    let cmp = f64::from(r)
        .partial_cmp(&x)
        .unwrap_or(std::cmp::Ordering::Equal);
    directed(r, cmp, rnd, x < 0.0, f32_step)
}

/// `s + e` = `x + y` exactly (Knuth's TwoSum; no overflow assumed).
fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let xp = s - y;
    let yp = s - xp;
    (s, (x - xp) + (y - yp))
}

/// `add sub mul mad fma` with `.rz .rm .rp` (PTX ISA §9.7.3): the exact result rounded once as
/// directed. The exact value is held as an unevaluated sum of two f64 (error-free transformations:
/// TwoSum, the exact f32 product in f64, TwoProd by fma, and Boldo and Muller's ErrFma for f64
/// fma), then the round-to-nearest result is stepped to the directed neighbour where needed.
/// Subnormals are kept; an exact zero sum of opposite-signed values is -0 under `.rm`, as in IEEE
/// 754.
#[allow(clippy::too_many_arguments)]
pub fn float_rounded(op: AluOp, ty: Type, rnd: Rounding, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    use std::cmp::Ordering;
    let (x, y, z) = if ty == Type::F64 {
        (f64_of(a), f64_of(b), f64_of(c))
    } else {
        (
            f64::from(f32_of(a)),
            f64::from(f32_of(b)),
            f64::from(f32_of(c)),
        )
    };
    // The exact result as (s, e) with s the f64 nearest and `e` only its sign used, or (s, 0).
    // `addends` are the two values a final addition summed (for the sign of an exact zero).
    let (s, e, addends): (f64, f64, Option<(f64, f64)>) = match (op, ty) {
        (AluOp::Add, _) => {
            let (s, e) = two_sum(x, y);
            (s, e, Some((x, y)))
        }
        (AluOp::Sub, _) => {
            let (s, e) = two_sum(x, -y);
            (s, e, Some((x, -y)))
        }
        (AluOp::Mul, Type::F64) => {
            let p = x * y;
            (p, x.mul_add(y, -p), None)
        }
        // An f32 product is exact in f64.
        (AluOp::Mul, _) => (x * y, 0.0, None),
        (_, Type::F64) => {
            // ErrFma (Boldo, Muller 2011): x*y + z = r1 + r2 + r3 exactly.
            let r1 = x.mul_add(y, z);
            let u1 = x * y;
            let u2 = x.mul_add(y, -u1);
            let (a1, a2) = two_sum(z, u2);
            let (b1, b2) = two_sum(u1, a1);
            let g = (b1 - r1) + b2;
            let r2 = g + a2;
            let r3 = a2 - (r2 - g);
            (r1, if r2 != 0.0 { r2 } else { r3 }, Some((u1, z)))
        }
        _ => {
            let p = x * y;
            let (s, e) = two_sum(p, z);
            (s, e, Some((p, z)))
        }
    };
    let operands_finite =
        x.is_finite() && y.is_finite() && (z.is_finite() || !matches!(op, AluOp::Mad | AluOp::Fma));
    let zero_sign = |v: f64| -> f64 {
        // x + (-x) is +0 except toward -infinity; -0 + -0 stays -0 (already so in s).
        if v == 0.0 && e == 0.0 && matches!(rnd, Rounding::Rm | Rounding::Rmi) {
            if let Some((p, q)) = addends {
                // Unless both addends are +0.
                if p != 0.0 || q != 0.0 || p.is_sign_negative() || q.is_sign_negative() {
                    return -0.0;
                }
            }
        }
        v
    };
    let r = if ty == Type::F64 {
        let cmp = if !operands_finite || s.is_nan() {
            Ordering::Equal
        } else if s.is_infinite() {
            if s > 0.0 {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        } else {
            0.0.partial_cmp(&e).unwrap_or(Ordering::Equal)
        };
        let r = directed(
            s,
            cmp,
            Some(rnd),
            s < 0.0 || (s == 0.0 && e < 0.0),
            f64_step,
        );
        zero_sign(r)
    } else {
        let r0 = s as f32;
        let cmp = if !operands_finite || s.is_nan() {
            Ordering::Equal
        } else if f64::from(r0) != s {
            f64::from(r0).partial_cmp(&s).unwrap_or(Ordering::Equal)
        } else {
            0.0.partial_cmp(&e).unwrap_or(Ordering::Equal)
        };
        let r = directed(
            r0,
            cmp,
            Some(rnd),
            s < 0.0 || (s == 0.0 && e < 0.0),
            f32_step,
        );
        // Widening to f64 is exact, so is narrowing back.
        let v = zero_sign(f64::from(r));
        return from_f32(if sat { saturate(v) } else { v } as f32);
    };
    if sat {
        saturate(r).to_bits()
    } else {
        r.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random lane values: small, near the width's edges, and with bits beyond any width.
    fn lanes_of(seed: &mut u64) -> [u64; 32] {
        std::array::from_fn(|l| {
            *seed = crate::testing::lcg(*seed);
            let x = *seed >> 7;
            match l % 4 {
                0 => x % 70,
                1 => x | 0xffff_ffff_0000_0000,
                2 => (x & 0xffff_ffff) | 0x8000_0000,
                _ => x,
            }
        })
    }

    #[test]
    fn warp_loops_compute_what_the_lane_functions_compute() {
        // The loops of alu_warp and compare_warp are the per-lane alu/compare with the decisions
        // taken once per warp: they must agree lane for lane, on full and partial warps, whatever
        // bits the registers hold beyond the type's width (bitwise operations aside, which the
        // loops leave unmasked: their operands are within the width in decoded programs).
        let ints = [
            Type::U16,
            Type::S16,
            Type::U32,
            Type::S32,
            Type::U64,
            Type::S64,
            Type::B32,
            Type::B64,
        ];
        let ops = [
            AluOp::Add,
            AluOp::Sub,
            AluOp::Mul,
            AluOp::Mad,
            AluOp::Shl,
            AluOp::Shr,
            AluOp::Min,
            AluOp::Max,
            AluOp::Not,
        ];
        let modes = [MulMode::None, MulMode::Lo, MulMode::Wide, MulMode::Hi];
        let mut seed = 1;
        for &ty in &ints {
            for &op in &ops {
                for &mode in &modes {
                    for exec in [u32::MAX, 0x8000_0f01] {
                        let (a, b, c) = (
                            lanes_of(&mut seed),
                            lanes_of(&mut seed),
                            lanes_of(&mut seed),
                        );
                        let mut out = [7u64; 32];
                        alu_warp(op, ty, mode, false, &a, &b, &c, exec, &mut out);
                        for l in 0..32 {
                            let want = if exec >> l & 1 == 1 {
                                alu(op, ty, mode, false, a[l], b[l], c[l])
                            } else {
                                7
                            };
                            assert_eq!(out[l], want, "{op:?} {ty:?} {mode:?} lane {l}");
                        }
                    }
                }
            }
            for cmp in [
                Cmp::Eq,
                Cmp::Ne,
                Cmp::Lt,
                Cmp::Le,
                Cmp::Gt,
                Cmp::Ge,
                Cmp::Lo,
                Cmp::Hs,
            ] {
                for exec in [u32::MAX, 0x0f0f_00f1] {
                    let (a, mut b) = (lanes_of(&mut seed), lanes_of(&mut seed));
                    b[3] = a[3]; // equal values too
                    let mut out = [7u64; 32];
                    compare_warp(cmp, ty, &a, &b, exec, &mut out);
                    for l in 0..32 {
                        let want = if exec >> l & 1 == 1 {
                            u64::from(compare(cmp, ty, a[l], b[l]))
                        } else {
                            7
                        };
                        assert_eq!(out[l], want, "{cmp:?} {ty:?} lane {l}");
                    }
                }
            }
        }
    }

    /// Float lane values: specials (NaN of both signs, infinities, zeros of both signs, the
    /// largest and smallest values, 0.5 and 1 for `.sat`) and random bit patterns.
    fn float_lanes(seed: &mut u64, f64s: bool) -> [u64; 32] {
        let special32 = [
            f32::NAN.to_bits(),
            (-f32::NAN).to_bits(),
            f32::INFINITY.to_bits(),
            f32::NEG_INFINITY.to_bits(),
            0,
            0x8000_0000,
            f32::MAX.to_bits(),
            1,
            0.5f32.to_bits(),
            1.0f32.to_bits(),
            (-2.5f32).to_bits(),
        ];
        let special64 = [
            f64::NAN.to_bits(),
            (-f64::NAN).to_bits(),
            f64::INFINITY.to_bits(),
            f64::NEG_INFINITY.to_bits(),
            0,
            1 << 63,
            f64::MAX.to_bits(),
            1,
            0.5f64.to_bits(),
            1.0f64.to_bits(),
            (-2.5f64).to_bits(),
        ];
        std::array::from_fn(|l| {
            *seed = crate::testing::lcg(*seed);
            let x = *seed >> 3;
            match (l % 3, f64s) {
                (0, false) => u64::from(special32[(x % 11) as usize]),
                (0, true) => special64[(x % 11) as usize],
                // Small values around 1: `.sat` and ordinary arithmetic.
                (1, false) => from_f32((x % 4000) as f32 / 1000.0 - 2.0),
                (1, true) => ((x % 4000) as f64 / 1000.0 - 2.0).to_bits(),
                (_, false) => x & 0xffff_ffff,
                (_, true) => x,
            }
        })
    }

    /// `setp` on floats as it was first written: both values widened to f64, NaN tested apart.
    fn compare_reference(cmp: Cmp, ty: Type, a: u64, b: u64) -> bool {
        let (x, y) = if ty == Type::F64 {
            (f64_of(a), f64_of(b))
        } else {
            (f64::from(f32_of(a)), f64::from(f32_of(b)))
        };
        let nan = x.is_nan() || y.is_nan();
        match cmp {
            Cmp::Eq => !nan && x == y,
            Cmp::Ne => !nan && x != y,
            Cmp::Lt => !nan && x < y,
            Cmp::Le => !nan && x <= y,
            Cmp::Gt => !nan && x > y,
            Cmp::Ge => !nan && x >= y,
            Cmp::Equ => nan || x == y,
            Cmp::Neu => nan || x != y,
            Cmp::Ltu => nan || x < y,
            Cmp::Leu => nan || x <= y,
            Cmp::Gtu => nan || x > y,
            Cmp::Geu => nan || x >= y,
            Cmp::Num => !nan,
            Cmp::Nan => nan,
            Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
        }
    }

    #[test]
    fn float_warp_loops_compute_what_the_lane_functions_compute() {
        let ops = [
            AluOp::Add,
            AluOp::Sub,
            AluOp::Mul,
            AluOp::Mad,
            AluOp::Fma,
            AluOp::Div,
            AluOp::Min,
            AluOp::Max,
            AluOp::Neg,
            AluOp::Abs,
            AluOp::Rcp,
            AluOp::Sqrt,
            AluOp::Rsqrt,
            AluOp::Copysign,
            AluOp::MinNan,
            AluOp::Ex2,
        ];
        let cmps = [
            Cmp::Eq,
            Cmp::Ne,
            Cmp::Lt,
            Cmp::Le,
            Cmp::Gt,
            Cmp::Ge,
            Cmp::Equ,
            Cmp::Neu,
            Cmp::Ltu,
            Cmp::Leu,
            Cmp::Gtu,
            Cmp::Geu,
            Cmp::Num,
            Cmp::Nan,
            Cmp::Lo,
            Cmp::Hs,
        ];
        let mut seed = 5;
        for ty in [Type::F32, Type::F64] {
            let f64s = ty == Type::F64;
            for round in 0..40 {
                let exec = if round % 2 == 0 {
                    u32::MAX
                } else {
                    0x8000_0f01
                };
                let (a, mut b, c) = (
                    float_lanes(&mut seed, f64s),
                    float_lanes(&mut seed, f64s),
                    float_lanes(&mut seed, f64s),
                );
                b[4] = a[4]; // equal values too
                for &op in &ops {
                    for sat in [false, true] {
                        let mut out = [7u64; 32];
                        alu_warp(op, ty, MulMode::None, sat, &a, &b, &c, exec, &mut out);
                        for l in 0..32 {
                            let want = if exec >> l & 1 == 1 {
                                alu(op, ty, MulMode::None, sat, a[l], b[l], c[l])
                            } else {
                                7
                            };
                            assert_eq!(out[l], want, "{op:?} {ty:?} sat {sat} lane {l}");
                        }
                    }
                }
                for &cmp in &cmps {
                    let mut out = [7u64; 32];
                    compare_warp(cmp, ty, &a, &b, exec, &mut out);
                    for l in 0..32 {
                        let r = compare_reference(cmp, ty, a[l], b[l]);
                        assert_eq!(compare(cmp, ty, a[l], b[l]), r, "{cmp:?} {ty:?}");
                        let want = if exec >> l & 1 == 1 { u64::from(r) } else { 7 };
                        assert_eq!(out[l], want, "{cmp:?} {ty:?} lane {l}");
                    }
                }
            }
        }
        // The saturated f32 sum clamps: NaN to 0, above 1 to 1.
        let sat = |x: f32, y: f32| {
            let mut out = [0u64; 32];
            let (a, b) = ([from_f32(x); 32], [from_f32(y); 32]);
            alu_warp(
                AluOp::Add,
                Type::F32,
                MulMode::None,
                true,
                &a,
                &b,
                &a,
                1,
                &mut out,
            );
            f32_of(out[0])
        };
        assert_eq!(sat(0.75, 0.5), 1.0);
        assert_eq!(sat(-0.75, 0.5), 0.0);
        assert_eq!(sat(f32::NAN, 0.5), 0.0);
        assert_eq!(sat(0.25, 0.5), 0.75);
    }

    /// Integer values around the edges of exactness (2^24, 2^53) and of the 64-bit ranges.
    fn edge_integers() -> Vec<i128> {
        let mut v = vec![0, 1, -1, 3, -3, 1000, -1000];
        for e in [24, 25, 31, 32, 53, 54, 62, 63, 64] {
            let p = 1i128 << e;
            for d in [-3, -2, -1, 0, 1, 2, 3] {
                v.extend([p + d, -(p + d)]);
            }
        }
        v.extend([i128::from(i64::MIN), i128::from(i64::MAX)]);
        v.extend([i128::from(u64::MAX), i128::from(u64::MAX - 1)]);
        // Odd values above 2^24 and 2^53 with low bits set (inexact in both directions).
        v.extend([0x1234_5678_9abc_def1, 0x0fff_ffff_ffff_ffff, 0x1_0000_0003]);
        v
    }

    #[test]
    fn integer_to_float_fast_paths_round_as_the_i128_path() {
        let rounds = [
            None,
            Some(Rounding::Rn),
            Some(Rounding::Rz),
            Some(Rounding::Rm),
            Some(Rounding::Rp),
        ];
        for v in edge_integers() {
            for rnd in rounds {
                if let Ok(s) = i64::try_from(v) {
                    let (r32, r64) = (int_to_f32(v, rnd), int_to_f64(v, rnd));
                    assert_eq!(int64_to_f32(s as u64, true, rnd).to_bits(), r32.to_bits());
                    assert_eq!(int64_to_f64(s as u64, true, rnd).to_bits(), r64.to_bits());
                }
                if let Ok(u) = u64::try_from(v) {
                    let (r32, r64) = (int_to_f32(v, rnd), int_to_f64(v, rnd));
                    assert_eq!(int64_to_f32(u, false, rnd).to_bits(), r32.to_bits(), "{u}");
                    assert_eq!(int64_to_f64(u, false, rnd).to_bits(), r64.to_bits(), "{u}");
                }
            }
        }
        // Exact values: 2^24 - 1 and 2^24 + 1 around the f32 edge, i64::MIN, u64::MAX.
        use Type::*;
        let c = |dst, src, rnd, v: i128| convert(dst, src, rnd, false, v as u64);
        assert_eq!(c(F32, S32, Some(Rounding::Rp), (1 << 24) - 1), 0x4B7F_FFFF);
        assert_eq!(c(F32, S32, Some(Rounding::Rp), (1 << 24) + 1), 0x4B80_0001);
        assert_eq!(c(F32, S32, Some(Rounding::Rm), (1 << 24) + 1), 0x4B80_0000);
        assert_eq!(
            c(F32, S64, Some(Rounding::Rz), i64::MIN.into()),
            0xDF00_0000
        );
        assert_eq!(c(F32, S64, None, i64::MAX.into()), 0x5F00_0000);
        assert_eq!(
            c(F32, S64, Some(Rounding::Rz), i64::MAX.into()),
            0x5EFF_FFFF
        );
        assert_eq!(
            c(F64, S64, Some(Rounding::Rm), i64::MIN.into()),
            0xC3E0_0000_0000_0000
        );
        assert_eq!(c(F64, U64, None, u64::MAX.into()), 0x43F0_0000_0000_0000);
        assert_eq!(
            c(F64, U64, Some(Rounding::Rp), (1 << 53) + 1),
            0x4340_0000_0000_0001
        );
        assert_eq!(
            c(F64, U64, Some(Rounding::Rn), (1 << 53) + 1),
            0x4340_0000_0000_0000
        );
        assert_eq!(c(F16, S32, None, -2049), 0xE800);
    }

    #[test]
    fn float_to_integer_saturates_as_the_i128_path() {
        use Type::*;
        let rounds = [
            None,
            Some(Rounding::Rzi),
            Some(Rounding::Rni),
            Some(Rounding::Rmi),
            Some(Rounding::Rpi),
        ];
        let mut xs: Vec<f64> = vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            -2.5,
            2.5,
            0.49,
            -0.51,
            f64::MAX,
            f64::MIN,
        ];
        for v in edge_integers() {
            xs.extend([v as f64, v as f64 + 0.5, v as f64 - 0.5]);
        }
        for x in xs {
            for dst in [S8, U8, S16, U16, S32, U32, S64, U64] {
                for rnd in rounds {
                    let r = match rnd {
                        Some(Rounding::Rni) => round_even(x),
                        Some(Rounding::Rmi) => x.floor(),
                        Some(Rounding::Rpi) => x.ceil(),
                        _ => x.trunc(),
                    };
                    let (lo, hi) = int_range(dst);
                    let v = if r.is_nan() {
                        0
                    } else {
                        (r as i128).clamp(lo, hi)
                    };
                    let want = trunc(v as u64, dst.bits());
                    assert_eq!(
                        convert(dst, F64, rnd, false, x.to_bits()),
                        want,
                        "{x} {dst:?}"
                    );
                    let x32 = x as f32;
                    let got = convert(dst, F32, rnd, false, from_f32(x32));
                    let r = match rnd {
                        Some(Rounding::Rni) => round_even(f64::from(x32)),
                        Some(Rounding::Rmi) => f64::from(x32).floor(),
                        Some(Rounding::Rpi) => f64::from(x32).ceil(),
                        _ => f64::from(x32).trunc(),
                    };
                    let v = if r.is_nan() {
                        0
                    } else {
                        (r as i128).clamp(lo, hi)
                    };
                    assert_eq!(got, trunc(v as u64, dst.bits()), "{x32} {dst:?}");
                }
            }
        }
        // Exact values at the edges: 2^63 saturates s64, fits u64; -1.5 saturates u32 at 0.
        let c = |dst, x: f64| convert(dst, F64, Some(Rounding::Rzi), false, x.to_bits());
        assert_eq!(c(S64, 9_223_372_036_854_775_808.0), i64::MAX as u64);
        assert_eq!(c(U64, 9_223_372_036_854_775_808.0), 1 << 63);
        assert_eq!(c(S64, -9_223_372_036_854_775_808.0), i64::MIN as u64);
        assert_eq!(c(U64, 1e30), u64::MAX);
        assert_eq!(c(U32, -1.5), 0);
        assert_eq!(c(S32, f64::NAN), 0);
        assert_eq!(c(S32, -2.7) as u32 as i32, -2);
    }

    #[test]
    fn narrowing_to_f32_to_nearest_is_the_hardware_conversion() {
        for x in [
            1.0 + 2f64.powi(-24),
            1.0 + 3.0 * 2f64.powi(-24),
            f64::MAX,
            1e-46,
            -1e-46,
        ] {
            for rnd in [None, Some(Rounding::Rn)] {
                let got = convert(Type::F32, Type::F64, rnd, false, x.to_bits());
                assert_eq!(got, from_f32(x as f32), "{x}");
            }
        }
        let half_up = (1.0 + 3.0 * 2f64.powi(-24)).to_bits();
        assert_eq!(
            convert(Type::F32, Type::F64, None, false, half_up),
            0x3F80_0002
        );
    }

    #[test]
    fn mul_wide_signed_and_unsigned() {
        let m =
            |ty, a: i64, b: i64| alu(AluOp::Mul, ty, MulMode::Wide, false, a as u64, b as u64, 0);
        assert_eq!(m(Type::S32, -3, 4) as i64, -12);
        assert_eq!(m(Type::U32, 0xFFFF_FFFF, 4), 0x3_FFFF_FFFC);
    }

    #[test]
    fn mad_lo_matches_index_arithmetic() {
        // i = blockIdx.x * blockDim.x + threadIdx.x
        assert_eq!(
            alu(AluOp::Mad, Type::S32, MulMode::Lo, false, 12499, 1024, 1023,),
            12_799_999
        );
    }

    #[test]
    fn shifts_saturate_their_count() {
        assert_eq!(
            alu(AluOp::Shl, Type::B32, MulMode::None, false, 1, 40, 0),
            0
        );
        assert_eq!(
            alu(
                AluOp::Shr,
                Type::S32,
                MulMode::None,
                false,
                0x8000_0000,
                40,
                0
            ),
            0xFFFF_FFFF
        );
        assert_eq!(
            alu(
                AluOp::Shr,
                Type::U32,
                MulMode::None,
                false,
                0x8000_0000,
                31,
                0
            ),
            1
        );
    }

    #[test]
    fn division_by_zero_does_not_panic() {
        assert_eq!(
            alu(AluOp::Div, Type::U32, MulMode::None, false, 7, 0, 0),
            0xFFFF_FFFF
        );
        assert_eq!(alu(AluOp::Rem, Type::S32, MulMode::None, false, 7, 0, 0), 7);
        assert_eq!(
            alu(
                AluOp::Div,
                Type::S32,
                MulMode::None,
                false,
                i32::MIN as u32 as u64,
                u32::MAX as u64,
                0
            ),
            0x8000_0000
        );
    }

    #[test]
    fn signed_compare_uses_the_type_width() {
        assert!(compare(Cmp::Lt, Type::S32, 0xFFFF_FFFF, 0));
        assert!(!compare(Cmp::Lt, Type::U32, 0xFFFF_FFFF, 0));
        assert!(compare(Cmp::Ge, Type::S32, 12_800_000, 12_800_000));
    }

    #[test]
    fn conversions() {
        assert_eq!(
            convert(Type::S64, Type::S32, None, false, 0xFFFF_FFFF) as i64,
            -1
        );
        assert_eq!(
            convert(Type::U64, Type::U32, None, false, 0xFFFF_FFFF),
            0xFFFF_FFFF
        );
        assert_eq!(
            f32::from_bits(convert(Type::F32, Type::S32, Some(Rounding::Rn), false, 3) as u32),
            3.0
        );
        assert_eq!(
            convert(
                Type::S32,
                Type::F32,
                Some(Rounding::Rzi),
                false,
                u64::from((-2.7f32).to_bits())
            ) as u32 as i32,
            -2
        );
        assert_eq!(
            convert(
                Type::S32,
                Type::F32,
                Some(Rounding::Rni),
                false,
                u64::from(2.5f32.to_bits())
            ),
            2
        );
        assert_eq!(convert(Type::U8, Type::S32, None, true, 300), 255);
    }

    #[test]
    fn fused_multiply_add_rounds_once() {
        let (a, b, c) = (1.0f32 + f32::EPSILON, 1.0f32 - f32::EPSILON, -1.0f32);
        let r = alu(
            AluOp::Fma,
            Type::F32,
            MulMode::None,
            false,
            from_f32(a),
            from_f32(b),
            from_f32(c),
        );
        assert_eq!(f32::from_bits(r as u32), a.mul_add(b, c));
        assert_ne!(f32::from_bits(r as u32), a * b + c);
    }

    // ---- instructions added for broad coverage: hand-computed values ----------------------

    fn b(op: BitOp, s: &[u64]) -> u64 {
        let mut a = [0u64; 4];
        a[..s.len()].copy_from_slice(s);
        bits(op, a)
    }

    #[test]
    fn bfe_extracts_zero_or_sign_extended_fields() {
        use Type::*;
        assert_eq!(b(BitOp::Bfe(U32), &[0xF0F0_1234, 4, 8]), 0x23);
        assert_eq!(b(BitOp::Bfe(S32), &[0x0000_0F00, 8, 4]), 0xFFFF_FFFF);
        assert_eq!(b(BitOp::Bfe(S32), &[0x0000_0700, 8, 4]), 0x7);
        assert_eq!(b(BitOp::Bfe(S32), &[0xFFFF_FFFF, 8, 0]), 0);
        // The field runs past the msb: unsigned pads with 0, signed with a[31].
        assert_eq!(b(BitOp::Bfe(U32), &[0xA000_0000, 28, 8]), 0xA);
        assert_eq!(b(BitOp::Bfe(S32), &[0xA000_0000, 28, 8]), 0xFFFF_FFFA);
        assert_eq!(b(BitOp::Bfe(S32), &[0x8000_0000, 40, 4]), 0xFFFF_FFFF);
        assert_eq!(b(BitOp::Bfe(U32), &[0x8000_0000, 40, 4]), 0);
        // Only the low 8 bits of pos and len count.
        assert_eq!(b(BitOp::Bfe(U32), &[0xF0F0_1234, 0x104, 0x208]), 0x23);
        assert_eq!(b(BitOp::Bfe(U64), &[0x1234_5678_9ABC_DEF0, 32, 16]), 0x5678);
        assert_eq!(
            b(BitOp::Bfe(S64), &[0x8000_0000_0000_0000, 60, 8]),
            0xFFFF_FFFF_FFFF_FFF8
        );
    }

    #[test]
    fn bfi_inserts_a_field() {
        assert_eq!(
            b(BitOp::Bfi(Type::B32), &[0xAB, 0xFFFF_FFFF, 8, 8]),
            0xFFFF_ABFF
        );
        assert_eq!(
            b(BitOp::Bfi(Type::B32), &[0xAB, 0x1234_5678, 8, 0]),
            0x1234_5678
        );
        assert_eq!(b(BitOp::Bfi(Type::B32), &[0xFF, 0, 28, 8]), 0xF000_0000);
        assert_eq!(b(BitOp::Bfi(Type::B32), &[0xFF, 0, 32, 8]), 0);
        assert_eq!(
            b(BitOp::Bfi(Type::B64), &[0xFFFF, 0, 56, 16]),
            0xFF00_0000_0000_0000
        );
    }

    #[test]
    fn prmt_generic_and_modes() {
        let (a, bb) = (0x3322_1100, 0x7766_5544);
        let p = |mode, c| prmt(mode, a, bb, c);
        assert_eq!(p(PrmtMode::Generic, 0x3210), 0x3322_1100);
        assert_eq!(p(PrmtMode::Generic, 0x4567), 0x4455_6677);
        // Selector msb: replicate the sign of the byte.
        assert_eq!(prmt(PrmtMode::Generic, 0x80, 0, 0x0008), 0x8080_80FF);
        assert_eq!(p(PrmtMode::F4e, 1), 0x4433_2211);
        assert_eq!(p(PrmtMode::B4e, 0), 0x5566_7700);
        assert_eq!(p(PrmtMode::B4e, 1), 0x6677_0011);
        assert_eq!(p(PrmtMode::Rc8, 2), 0x2222_2222);
        assert_eq!(p(PrmtMode::Ecl, 1), 0x3322_1111);
        assert_eq!(p(PrmtMode::Ecr, 2), 0x2222_1100);
        assert_eq!(p(PrmtMode::Rc16, 1), 0x3322_3322);
        assert_eq!(p(PrmtMode::Rc16, 2), 0x1100_1100);
    }

    #[test]
    fn bfind_fns_lop3_shf() {
        use Type::*;
        let bf = |ty, shiftamt, a| b(BitOp::Bfind { ty, shiftamt }, &[a]);
        assert_eq!(bf(U32, false, 0x0001_0000), 16);
        assert_eq!(bf(U32, true, 0x0001_0000), 15);
        assert_eq!(bf(U32, false, 0), 0xFFFF_FFFF);
        assert_eq!(bf(U32, true, 0), 0xFFFF_FFFF);
        assert_eq!(bf(S32, false, 0xFFFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(bf(S32, false, 0xFFFF_0000), 15);
        assert_eq!(bf(U64, false, 1 << 40), 40);
        // PTX ISA's examples of fns.
        let fns = |base, off: i64| b(BitOp::Fns, &[0xaaaa_aaaa, base, off as u64]);
        assert_eq!(fns(3, 1), 3);
        assert_eq!(fns(3, -1), 3);
        assert_eq!(fns(2, 1), 3);
        assert_eq!(fns(2, -1), 1);
        assert_eq!(fns(2, 0), 0xFFFF_FFFF);
        assert_eq!(fns(31, 1), 31);
        assert_eq!(fns(31, 2), 0xFFFF_FFFF);
        // lop3's table is F(0xF0, 0xCC, 0xAA).
        let lop3 = |lut| b(BitOp::Lop3, &[0xF0, 0xCC, 0xAA, lut]);
        assert_eq!(lop3(0x96), 0x96);
        assert_eq!(lop3(0xE8), 0xE8);
        assert_eq!(
            b(BitOp::Lop3, &[0xFFFF_0000, 0xFF00_FF00, 0xF0F0_F0F0, 0x80]),
            0xF000_0000
        );
        let shf = |left, clamp, c| b(BitOp::Shf { left, clamp }, &[0x8000_0001, 3, c]);
        assert_eq!(shf(true, false, 4), 0x38);
        assert_eq!(shf(false, false, 4), 0x3800_0000);
        assert_eq!(shf(true, false, 36), 0x38);
        assert_eq!(shf(true, true, 40), 0x8000_0001);
        assert_eq!(shf(false, true, 40), 3);
        assert_eq!(shf(false, false, 0), 0x8000_0001);
    }

    #[test]
    fn dot_products_and_masks() {
        let d4 = |a_signed, b_signed, a, bb, c| b(BitOp::Dp4a { a_signed, b_signed }, &[a, bb, c]);
        assert_eq!(d4(false, false, 0x0102_0304, 0x0101_0101, 10), 20);
        assert_eq!(d4(true, true, 0xFFFF_FFFF, 0x0202_0202, 0), 0xFFFF_FFF8);
        assert_eq!(d4(false, true, 0xFF00_0000, 0xFF00_0000, 0), 0xFFFF_FF01);
        let d2 = |hi, a, bb, c| {
            b(
                BitOp::Dp2a {
                    hi,
                    a_signed: false,
                    b_signed: false,
                },
                &[a, bb, c],
            )
        };
        assert_eq!(d2(false, 0x0002_0003, 0x0706_0504, 1), 3 * 4 + 2 * 5 + 1);
        assert_eq!(d2(true, 0x0002_0003, 0x0706_0504, 1), 3 * 6 + 2 * 7 + 1);
        let bmsk = |clamp, a, w| b(BitOp::Bmsk { clamp }, &[a, w]);
        assert_eq!(bmsk(true, 4, 8), 0xFF0);
        assert_eq!(bmsk(false, 0, 32), 0);
        assert_eq!(bmsk(true, 0, 32), 0xFFFF_FFFF);
        assert_eq!(bmsk(true, 32, 4), 0);
        assert_eq!(bmsk(true, 30, 8), 0xC000_0000);
        let szext = |signed, a, w| {
            b(
                BitOp::Szext {
                    clamp: true,
                    signed,
                },
                &[a, w],
            )
        };
        assert_eq!(szext(true, 0x80, 8), 0xFFFF_FF80);
        assert_eq!(szext(false, 0x180, 8), 0x80);
        assert_eq!(szext(true, 0x80, 0), 0);
    }

    #[test]
    fn carry_chains_add_and_subtract_multiword_values() {
        use Type::*;
        // 0x1_FFFFFFFF + 0x0_00000001 as two 32-bit words.
        let (lo, cf) = carry(CarryOp::Add, U32, MulMode::None, 0xFFFF_FFFF, 1, 0, None);
        let (hi, cf2) = carry(CarryOp::Add, U32, MulMode::None, 1, 0, 0, Some(cf));
        assert_eq!((lo, cf, hi, cf2), (0, 1, 2, 0));
        // 0x5_00000000 - 0x2_00000001: the low word borrows, so its carry is 0.
        let (lo, c1) = carry(CarryOp::Sub, U32, MulMode::None, 0, 1, 0, None);
        let (hi, c2) = carry(CarryOp::Sub, U32, MulMode::None, 5, 2, 0, Some(c1));
        assert_eq!((lo, c1, hi, c2), (0xFFFF_FFFF, 0, 2, 1));
        // subc with a carry of 1 borrows nothing: 7 - 7 = 0, carry 1; with 0: -1, carry 0.
        assert_eq!(
            carry(CarryOp::Sub, U32, MulMode::None, 7, 7, 0, Some(1)),
            (0, 1)
        );
        assert_eq!(
            carry(CarryOp::Sub, U32, MulMode::None, 7, 7, 0, Some(0)),
            (0xFFFF_FFFF, 0)
        );
        // mad.lo.cc: 0xFFFFFFFF * 2 = 0x1_FFFFFFFE; low word + 3 carries out.
        assert_eq!(
            carry(CarryOp::Mad, U32, MulMode::Lo, 0xFFFF_FFFF, 2, 3, None),
            (1, 1)
        );
        // madc.hi: high word 1, plus c = 0 and the carry.
        assert_eq!(
            carry(CarryOp::Mad, U32, MulMode::Hi, 0xFFFF_FFFF, 2, 0, Some(1)),
            (2, 0)
        );
        assert_eq!(
            carry(CarryOp::Add, U64, MulMode::None, u64::MAX, 1, 0, None),
            (0, 1)
        );
        assert_eq!(
            carry(
                CarryOp::Add,
                S64,
                MulMode::None,
                u64::MAX,
                u64::MAX,
                0,
                Some(1)
            ),
            (u64::MAX, 1)
        );
        assert_eq!(
            carry(CarryOp::Sub, U64, MulMode::None, 3, 5, 0, None),
            (u64::MAX - 1, 0)
        );
    }

    #[test]
    fn mul24_mad24_sad() {
        use Type::*;
        let m = |op, ty, mode, a: u64, bb: u64, c: u64| alu(op, ty, mode, false, a, bb, c);
        assert_eq!(m(AluOp::Mul24, U32, MulMode::Lo, 0x0100_0003, 5, 0), 15);
        assert_eq!(
            m(AluOp::Mul24, U32, MulMode::Hi, 0xFF_FFFF, 0xFF_FFFF, 0),
            0xFFFF_FE00
        );
        assert_eq!(
            m(AluOp::Mul24, S32, MulMode::Lo, 0x00FF_FFFF, 2, 0),
            0xFFFF_FFFE
        );
        assert_eq!(m(AluOp::Mad24, U32, MulMode::Lo, 3, 5, 7), 22);
        assert_eq!(m(AluOp::Sad, U32, MulMode::None, 3, 10, 100), 107);
        assert_eq!(m(AluOp::Sad, S32, MulMode::None, 0xFFFF_FFFB, 5, 1), 11);
        assert_eq!(
            alu(
                AluOp::Mad24,
                S32,
                MulMode::Hi,
                true,
                0x7F_FFFF,
                0x7F_FFFF,
                0x7FFF_FFFF
            ),
            0x7FFF_FFFF
        );
    }

    fn f(op: AluOp, x: f32, y: f32) -> f32 {
        f32::from_bits(alu(
            op,
            Type::F32,
            MulMode::None,
            false,
            from_f32(x),
            from_f32(y),
            0,
        ) as u32)
    }

    #[test]
    fn approximate_functions_copysign_and_nan_aware_min_max() {
        assert_eq!(f(AluOp::Ex2, 3.0, 0.0), 8.0);
        assert_eq!(f(AluOp::Ex2, -1.0, 0.0), 0.5);
        assert_eq!(f(AluOp::Lg2, 8.0, 0.0), 3.0);
        assert_eq!(f(AluOp::Sin, 0.0, 0.0), 0.0);
        assert_eq!(f(AluOp::Cos, 0.0, 0.0), 1.0);
        assert_eq!(f(AluOp::Tanh, 0.0, 0.0), 0.0);
        assert_eq!(f(AluOp::Copysign, -1.0, 2.5), -2.5);
        assert_eq!(f(AluOp::Copysign, 0.0, -3.0), 3.0);
        assert_eq!(f(AluOp::MinNan, f32::NAN, 1.0).to_bits(), CANONICAL_NAN_F32);
        assert_eq!(f(AluOp::Min, f32::NAN, 1.0), 1.0);
        assert_eq!(f(AluOp::MaxNan, 1.0, 2.0), 2.0);
        assert_eq!(f(AluOp::MinXorsign, -2.0, 3.0), -2.0);
        assert_eq!(f(AluOp::MaxXorsign, -2.0, -3.0), 3.0);
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

    #[test]
    fn atomic_operations_store_what_the_ptx_isa_says() {
        use Type::*;
        let ap = |k, ty, old: u64, v: u64, c: u64| atom_apply(k, ty, true, old, v, c);
        assert_eq!(ap(AtomKind::Add, U32, 0xFFFF_FFFF, 2, 0), 1);
        assert_eq!(ap(AtomKind::Inc, U32, 5, 5, 0), 0);
        assert_eq!(ap(AtomKind::Inc, U32, 3, 5, 0), 4);
        assert_eq!(ap(AtomKind::Dec, U32, 0, 5, 0), 5);
        assert_eq!(ap(AtomKind::Dec, U32, 7, 5, 0), 5);
        assert_eq!(ap(AtomKind::Dec, U32, 3, 5, 0), 2);
        assert_eq!(ap(AtomKind::Cas, B32, 4, 4, 9), 9);
        assert_eq!(ap(AtomKind::Cas, B32, 4, 5, 9), 4);
        assert_eq!(ap(AtomKind::Cas, B64, 1 << 40, 1 << 40, 7), 7);
        assert_eq!(ap(AtomKind::Exch, B32, 4, 8, 0), 8);
        assert_eq!(ap(AtomKind::Min, S32, 0xFFFF_FFFF, 3, 0), 0xFFFF_FFFF);
        assert_eq!(ap(AtomKind::Min, U32, 0xFFFF_FFFF, 3, 0), 3);
        assert_eq!(ap(AtomKind::Max, S64, 5, u64::MAX, 0), 5);
        assert_eq!(ap(AtomKind::And, B64, 0xFF00, 0x0FF0, 0), 0x0F00);
        assert_eq!(ap(AtomKind::Or, B32, 0xFF00, 0x0FF0, 0), 0xFFF0);
        assert_eq!(ap(AtomKind::Xor, B32, 0xFF00, 0x0FF0, 0), 0xF0F0);
        assert_eq!(ap(AtomKind::Add, U64, u64::MAX, 1, 0), 0);
        let sub = u64::from(f32::from_bits(1).to_bits());
        // Global atom.add.f32 flushes subnormals to zero; shared keeps them.
        assert_eq!(atom_apply(AtomKind::Add, F32, true, sub, 0, 0), 0);
        assert_eq!(atom_apply(AtomKind::Add, F32, false, sub, 0, 0), sub);
        assert_eq!(
            ap(AtomKind::Add, F32, from_f32(1.5), from_f32(2.25), 0),
            from_f32(3.75)
        );
        assert_eq!(
            ap(AtomKind::Add, F64, 0.5f64.to_bits(), 0.25f64.to_bits(), 0),
            0.75f64.to_bits()
        );
    }

    #[test]
    fn warp_and_block_reductions() {
        assert_eq!(redux(ReduxOp::Add, Type::U32, 1..=32), 528);
        assert_eq!(
            redux(ReduxOp::Min, Type::S32, [4, 0xFFFF_FFFD, 7].into_iter()),
            0xFFFF_FFFD
        );
        assert_eq!(
            redux(ReduxOp::Min, Type::U32, [4, 0xFFFF_FFFD, 7].into_iter()),
            4
        );
        assert_eq!(redux(ReduxOp::Xor, Type::B32, [1, 2, 3].into_iter()), 0);
        assert_eq!(bar_red(BarRedOp::Popc, 5, 8), 5);
        assert_eq!(bar_red(BarRedOp::And, 8, 8), 1);
        assert_eq!(bar_red(BarRedOp::And, 7, 8), 0);
        assert_eq!(bar_red(BarRedOp::Or, 0, 8), 0);
    }

    #[test]
    fn directed_rounding_conversions() {
        use Type::*;
        let x = (1.0f64 + 2f64.powi(-30)).to_bits();
        let to32 = |rnd, a| f32::from_bits(convert(F32, F64, Some(rnd), false, a) as u32);
        assert_eq!(to32(Rounding::Rn, x), 1.0);
        assert_eq!(to32(Rounding::Rz, x), 1.0);
        assert_eq!(to32(Rounding::Rm, x), 1.0);
        assert_eq!(to32(Rounding::Rp, x).to_bits(), 0x3F80_0001);
        let nx = (-(1.0f64 + 2f64.powi(-30))).to_bits();
        assert_eq!(to32(Rounding::Rm, nx).to_bits(), 0xBF80_0001);
        assert_eq!(to32(Rounding::Rz, nx), -1.0);
        assert_eq!(to32(Rounding::Rz, f64::MAX.to_bits()), f32::MAX);
        assert_eq!(to32(Rounding::Rn, f64::MAX.to_bits()), f32::INFINITY);
        // 2^24 + 1 is halfway between two f32s.
        let i = |rnd, v: i64| f32::from_bits(convert(F32, S32, rnd, false, v as u64) as u32);
        assert_eq!(i(Some(Rounding::Rn), 16_777_217), 16_777_216.0);
        assert_eq!(i(Some(Rounding::Rz), 16_777_217), 16_777_216.0);
        assert_eq!(i(Some(Rounding::Rp), 16_777_217), 16_777_218.0);
        assert_eq!(i(Some(Rounding::Rm), -16_777_217), -16_777_218.0);
        assert_eq!(i(None, 16_777_219), 16_777_220.0);
        assert_eq!(
            convert(F32, U64, Some(Rounding::Rz), false, u64::MAX),
            0x5F7F_FFFF
        );
        assert_eq!(
            convert(F32, U64, Some(Rounding::Rn), false, u64::MAX),
            0x5F80_0000
        );
        assert_eq!(
            f64::from_bits(convert(F64, U64, Some(Rounding::Rz), false, u64::MAX)),
            18_446_744_073_709_549_568.0
        );
    }

    #[test]
    fn half_precision_conversions() {
        use Type::*;
        let h = |rnd, x: f32| convert(F16, F32, Some(rnd), false, from_f32(x));
        assert_eq!(h(Rounding::Rn, 1.0), 0x3C00);
        assert_eq!(h(Rounding::Rn, -2.5), 0xC100);
        assert_eq!(h(Rounding::Rn, 65504.0), 0x7BFF);
        assert_eq!(h(Rounding::Rn, 65520.0), 0x7C00);
        assert_eq!(h(Rounding::Rz, 65520.0), 0x7BFF);
        assert_eq!(h(Rounding::Rn, 2f32.powi(-24)), 0x0001);
        assert_eq!(h(Rounding::Rn, 2f32.powi(-25)), 0x0000);
        assert_eq!(h(Rounding::Rp, 2f32.powi(-25)), 0x0001);
        assert_eq!(h(Rounding::Rn, 1.0 / 3.0), 0x3555);
        assert_eq!(h(Rounding::Rz, 1.0 / 3.0), 0x3555);
        assert_eq!(h(Rounding::Rp, 1.0 / 3.0), 0x3556);
        assert_eq!(h(Rounding::Rn, f32::NAN), 0x7FFF);
        assert_eq!(
            f32::from_bits(convert(F32, F16, None, false, 0x3555) as u32),
            0.333_251_95
        );
        assert_eq!(
            convert(S32, F16, Some(Rounding::Rni), false, 0xC100),
            (-2i64) as u64 & 0xFFFF_FFFF
        );
        assert_eq!(convert(F16, S32, Some(Rounding::Rn), false, 3), 0x4200);
    }

    #[test]
    fn directed_rounding_arithmetic() {
        use Type::*;
        let f32r = |op, rnd, x: f32, y: f32, z: f32| {
            f32::from_bits(
                float_rounded(op, F32, rnd, false, from_f32(x), from_f32(y), from_f32(z)) as u32,
            )
        };
        let one_up = f32::from_bits(0x3F80_0001);
        let tiny = 2f32.powi(-30);
        // 1 + 2^-30 lies strictly between 1 and the next f32.
        assert_eq!(f32r(AluOp::Add, Rounding::Rz, 1.0, tiny, 0.0), 1.0);
        assert_eq!(f32r(AluOp::Add, Rounding::Rm, 1.0, tiny, 0.0), 1.0);
        assert_eq!(f32r(AluOp::Add, Rounding::Rp, 1.0, tiny, 0.0), one_up);
        assert_eq!(
            f32r(AluOp::Sub, Rounding::Rz, 1.0, tiny, 0.0),
            f32::from_bits(0x3F7F_FFFF)
        );
        assert_eq!(f32r(AluOp::Sub, Rounding::Rp, 1.0, tiny, 0.0), 1.0);
        // Exact results are not moved.
        assert_eq!(f32r(AluOp::Add, Rounding::Rp, 1.5, 2.25, 0.0), 3.75);
        // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46.
        let a = one_up;
        assert_eq!(
            f32r(AluOp::Mul, Rounding::Rz, a, a, 0.0).to_bits(),
            0x3F80_0002
        );
        assert_eq!(
            f32r(AluOp::Mul, Rounding::Rp, a, a, 0.0).to_bits(),
            0x3F80_0003
        );
        assert_eq!(
            f32r(AluOp::Mul, Rounding::Rm, -a, a, 0.0).to_bits(),
            0xBF80_0003
        );
        // fma rounds once: a*a - 1 = 2^-22 + 2^-46 exactly representable.
        assert_eq!(
            f32r(AluOp::Fma, Rounding::Rz, a, a, -1.0),
            2f32.powi(-22) + 2f32.powi(-46)
        );
        // NVRTC's expf: fma.rm of (x * 252 + 12582913), a round-down to an integer.
        assert_eq!(
            f32r(AluOp::Fma, Rounding::Rm, 0.75, 252.0, 12_582_913.0),
            12_583_102.0
        );
        // Overflow: toward zero stays finite.
        assert_eq!(f32r(AluOp::Mul, Rounding::Rz, f32::MAX, 2.0, 0.0), f32::MAX);
        assert_eq!(
            f32r(AluOp::Mul, Rounding::Rp, f32::MAX, 2.0, 0.0),
            f32::INFINITY
        );
        // x - x is -0 rounding down, +0 otherwise.
        assert!(f32r(AluOp::Sub, Rounding::Rm, 2.0, 2.0, 0.0).is_sign_negative());
        assert!(f32r(AluOp::Sub, Rounding::Rz, 2.0, 2.0, 0.0).is_sign_positive());
        assert!(f32r(AluOp::Add, Rounding::Rm, 0.0, 0.0, 0.0).is_sign_positive());
        let f64r = |op, rnd, x: f64, y: f64, z: f64| {
            f64::from_bits(float_rounded(
                op,
                F64,
                rnd,
                false,
                x.to_bits(),
                y.to_bits(),
                z.to_bits(),
            ))
        };
        let t = 2f64.powi(-60);
        assert_eq!(
            f64r(AluOp::Add, Rounding::Rp, 1.0, t, 0.0),
            1.0 + f64::EPSILON
        );
        assert_eq!(f64r(AluOp::Add, Rounding::Rz, 1.0, t, 0.0), 1.0);
        assert_eq!(
            f64r(AluOp::Add, Rounding::Rm, -1.0, -t, 0.0),
            -1.0 - f64::EPSILON
        );
        let b = 1.0 + f64::EPSILON;
        assert_eq!(
            f64r(AluOp::Mul, Rounding::Rp, b, b, 0.0),
            1.0 + 3.0 * f64::EPSILON
        );
        assert_eq!(
            f64r(AluOp::Mul, Rounding::Rz, b, b, 0.0),
            1.0 + 2.0 * f64::EPSILON
        );
        // fma: b*b + t; the nearest is 1 + 2 eps, the exact value a little above it.
        assert_eq!(
            f64r(AluOp::Fma, Rounding::Rz, b, b, t),
            1.0 + 2.0 * f64::EPSILON
        );
        assert_eq!(
            f64r(AluOp::Fma, Rounding::Rp, b, b, t),
            1.0 + 3.0 * f64::EPSILON
        );
        assert_eq!(f64r(AluOp::Fma, Rounding::Rm, b, b, -t), 1.0 + f64::EPSILON);
    }

    #[test]
    fn mul_hi_of_64_bit_operands_does_not_overflow() {
        let hi = |ty, a: u64, b: u64| alu(AluOp::Mul, ty, MulMode::Hi, false, a, b, 0);
        assert_eq!(hi(Type::U64, u64::MAX, u64::MAX), u64::MAX - 1);
        assert_eq!(hi(Type::S64, u64::MAX, u64::MAX), 0);
        assert_eq!(hi(Type::S64, i64::MIN as u64, 2), u64::MAX);
        assert_eq!(hi(Type::U32, 0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFE);
        assert_eq!(hi(Type::S32, 0xFFFF_FFFF, 2), 0xFFFF_FFFF);
    }
}

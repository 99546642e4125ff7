//! Float arithmetic on f32 and f64: the operations of [`alu`](super::alu) on float types, one
//! lane at a time and as warp loops, `.sat` clamping, the `.approx` functions and NaN-aware
//! `min`/`max`; and `add sub mul mad fma` under the directed roundings `.rz .rm .rp`
//! ([`float_rounded`]).

use super::round::{directed, f32_step, f64_step};
use super::{f32_of, f64_of, from_f32};
use crate::exec::step::for_lanes;
use crate::ptx::ast::Type;
use crate::ptx::inst::{AluOp, Rounding};

/// The float part of [`alu_warp`](super::alu_warp): the operation and the type are decided once
/// per warp, each common operation gets a plain lane loop computing what [`float_alu`] computes
/// (the same expressions), the rest use [`float_alu`] per lane. `.sat` clamps the results in a
/// second pass, as [`float_alu`] clamps each result after computing it.
#[allow(clippy::too_many_arguments)]
pub(super) fn float_warp(
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

pub(super) fn float_alu(op: AluOp, ty: Type, sat: bool, a: u64, b: u64, c: u64) -> u64 {
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

pub(super) fn saturate(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
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
    use crate::exec::alu::{alu, alu_warp, compare, compare_warp};
    use crate::ptx::inst::{Cmp, MulMode};

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
}

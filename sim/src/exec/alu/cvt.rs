//! Conversions: `cvt` between integer, f16, f32 and f64 types with its roundings and saturation
//! ([`convert`]), half-precision encoding and decoding, and `cvt.pack` ([`cvt_pack`]).

use super::float::saturate;
use super::round::{directed, f32_step, f64_step, nearest, round_even, round_int};
use super::{f32_of, f64_of, from_f32, sext, trunc};
use crate::ptx::ast::Type;
use crate::ptx::inst::Rounding;

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

fn int_range(t: Type) -> (i128, i128) {
    let bits = t.bits();
    if t.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

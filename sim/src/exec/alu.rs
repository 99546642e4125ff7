//! Per-lane arithmetic as the PTX ISA defines it: plain functions of bit patterns.
//!
//! Registers hold up to 64 bits; a value of type `T` lives in the low `T.bits()` bits. Results
//! are returned zero-extended to 64 bits (sign bits above the type's width are cleared), so a
//! later reader truncates or sign-extends as its own type says. Floats are IEEE-754 with
//! round-to-nearest-even, as `.rn` specifies; subnormals are kept (no `.ftz` flush).

use crate::ptx::ast::Type;
use crate::ptx::inst::{AluOp, BoolOp, Cmp, MulMode, Rounding};

/// Keeps the low `bits` bits of `v`.
#[inline]
pub fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Sign-extends the low `bits` bits of `v`.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
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
    out: &mut [u64],
) {
    macro_rules! each {
        ($f:expr) => {{
            let f = $f;
            if exec == u32::MAX {
                for l in 0..32 {
                    out[l] = f(a[l], b[l], c[l]);
                }
            } else {
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out[l] = f(a[l], b[l], c[l]);
                }
            }
        }};
    }
    let bits = ty.bits();
    // The common float operations get loops of their own, so the compiler sees the operation
    // instead of a match per lane.
    match (op, ty, sat) {
        (AluOp::Add, Type::F32, false) => return each!(|x, y, _| from_f32(f32_of(x) + f32_of(y))),
        (AluOp::Sub, Type::F32, false) => return each!(|x, y, _| from_f32(f32_of(x) - f32_of(y))),
        (AluOp::Mul, Type::F32, false) => return each!(|x, y, _| from_f32(f32_of(x) * f32_of(y))),
        (AluOp::Mad | AluOp::Fma, Type::F32, false) => {
            return each!(|x, y, z| from_f32(f32_of(x).mul_add(f32_of(y), f32_of(z))))
        }
        (AluOp::Add, Type::F64, false) => return each!(|x, y, _| (f64_of(x) + f64_of(y)).to_bits()),
        (AluOp::Mul, Type::F64, false) => return each!(|x, y, _| (f64_of(x) * f64_of(y)).to_bits()),
        (AluOp::Mad | AluOp::Fma, Type::F64, false) => {
            return each!(|x, y, z| f64_of(x).mul_add(f64_of(y), f64_of(z)).to_bits())
        }
        _ => {}
    }
    if ty.is_float() || sat {
        return each!(|x, y, z| alu(op, ty, mode, sat, x, y, z));
    }
    match (op, mode) {
        (AluOp::Add, _) => each!(|x: u64, y: u64, _| trunc(x.wrapping_add(y), bits)),
        (AluOp::Sub, _) => each!(|x: u64, y: u64, _| trunc(x.wrapping_sub(y), bits)),
        (AluOp::And, _) => each!(|x: u64, y: u64, _| x & y),
        (AluOp::Or, _) => each!(|x: u64, y: u64, _| x | y),
        (AluOp::Xor, _) => each!(|x: u64, y: u64, _| x ^ y),
        (AluOp::Mul | AluOp::Mad, MulMode::Lo) | (AluOp::Mul | AluOp::Mad, MulMode::None) => {
            let add = op == AluOp::Mad;
            each!(|x: u64, y: u64, z: u64| trunc(
                x.wrapping_mul(y).wrapping_add(if add { z } else { 0 }),
                bits
            ))
        }
        _ => each!(|x, y, z| alu(op, ty, mode, sat, x, y, z)),
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
        AluOp::Popc => u64::from(trunc(a, bits).count_ones()),
        AluOp::Clz => u64::from(trunc(a, bits).leading_zeros() - (64 - bits)),
        AluOp::Brev => trunc(a, bits).reverse_bits() >> (64 - bits),
        // Float-only operations on an integer type are rejected at decode; keep the value.
        AluOp::Fma | AluOp::Rcp | AluOp::Sqrt | AluOp::Rsqrt => a,
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
    let full: i128 = if signed {
        i128::from(sext(a, bits)) * i128::from(sext(b, bits))
    } else {
        i128::from(trunc(a, bits)) * i128::from(trunc(b, bits))
    };
    match mode {
        MulMode::Wide => trunc(full as u64, bits * 2),
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
        _ => x,
    };
    let r = if sat {
        saturate(f64::from(r)) as f32
    } else {
        r
    };
    from_f32(r)
}

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
        let (x, y) = if ty == Type::F64 {
            (f64_of(a), f64_of(b))
        } else {
            (f64::from(f32_of(a)), f64::from(f32_of(b)))
        };
        let nan = x.is_nan() || y.is_nan();
        return match cmp {
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

/// `cvt.rnd.sat.dst.src` on one value (PTX ISA §9.7.9.21).
pub fn convert(dst: Type, src: Type, rnd: Option<Rounding>, sat: bool, a: u64) -> u64 {
    let sbits = src.bits();
    let dbits = dst.bits();
    match (src.is_float(), dst.is_float()) {
        (false, false) => {
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
            let v = if src.is_signed() {
                sext(a, sbits) as f64
            } else {
                trunc(a, sbits) as f64
            };
            match dst {
                Type::F64 => v.to_bits(),
                _ => {
                    // i64/u64 → f32 must round once from the integer, not via f64.
                    let f = if src.is_signed() {
                        sext(a, sbits) as f32
                    } else {
                        trunc(a, sbits) as f32
                    };
                    from_f32(f)
                }
            }
        }
        (true, false) => {
            let x = if src == Type::F64 {
                f64_of(a)
            } else {
                f64::from(f32_of(a))
            };
            let r = match rnd {
                Some(Rounding::Rni) | Some(Rounding::Rn) => round_even(x),
                Some(Rounding::Rmi) | Some(Rounding::Rm) => x.floor(),
                Some(Rounding::Rpi) | Some(Rounding::Rp) => x.ceil(),
                _ => x.trunc(),
            };
            // Float to integer saturates in PTX regardless of .sat; NaN gives 0.
            let (lo, hi) = int_range(dst);
            let v = if r.is_nan() {
                0
            } else {
                (r as i128).clamp(lo, hi)
            };
            trunc(v as u64, dbits)
        }
        (true, true) => {
            let x = if src == Type::F64 {
                f64_of(a)
            } else {
                f64::from(f32_of(a))
            };
            let x = match rnd {
                Some(Rounding::Rni) => round_even(x),
                Some(Rounding::Rzi) => x.trunc(),
                Some(Rounding::Rmi) => x.floor(),
                Some(Rounding::Rpi) => x.ceil(),
                _ => x,
            };
            let x = if sat { saturate(x) } else { x };
            match dst {
                Type::F64 => x.to_bits(),
                _ => from_f32(x as f32),
            }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

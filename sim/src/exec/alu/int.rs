//! Integer arithmetic: `add sub mul mad div rem min max neg abs`, the logic operations, shifts,
//! `sad`, `mul24`/`mad24`, `popc clz brev`, on one lane ([`alu`], which hands float types to the
//! float family) and for a whole warp ([`alu_warp`]); and the extended-precision `add.cc`,
//! `addc`, `sub.cc`, `subc`, `mad.cc`, `madc` ([`carry`]).

use super::cmp::order_key;
use super::float::{float_alu, float_warp};
use super::{mask, sext, sext_by, sext_shift, trunc};
use crate::exec::step::for_lanes;
use crate::ptx::ast::Type;
use crate::ptx::inst::{AluOp, CarryOp, MulMode};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::alu::{compare, compare_warp};
    use crate::ptx::inst::Cmp;

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

//! Bit-field and byte instructions on one lane: `bfe bfi prmt bfind fns lop3 shf dp4a dp2a bmsk
//! szext` ([`bits`]) and the byte permute of `prmt` ([`prmt`]).

use super::{sext, trunc};
use crate::ptx::inst::{BitOp, PrmtMode};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::ast::Type;

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
}

//! The bit formats of PTX's 16-bit float types: `.f16` (IEEE 754 binary16) and `.bf16`
//! (bfloat16), with exact decoding ([`Format::to_f64`]) and correctly rounded encoding from an
//! f64 or an integer in every rounding direction ([`Format::from_f64`], [`Format::from_int`]).
//! The decoder uses them for immediates, `exec::alu::half` for arithmetic and conversions.
//!
//! Encoding rounds once from the exact value (`m * 2^e` with a 128-bit `m`: guard and sticky
//! bits are exact); overflow gives infinity or the largest finite value as the direction says
//! (IEEE 754 §7.4), NaN the canonical NaN `0x7fff` that NVIDIA GPUs produce.

use crate::ptx::ast::Type;
use crate::ptx::inst::Rounding;
use std::cmp::Ordering;

/// A 16-bit binary floating-point format: sign, `exp_bits` of biased exponent, `man_bits` of
/// mantissa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    exp_bits: u32,
    man_bits: u32,
}

/// IEEE 754 binary16 (`.f16`): 5 exponent bits, 10 mantissa bits, largest finite 65504.
pub const F16: Format = Format {
    exp_bits: 5,
    man_bits: 10,
};

/// bfloat16 (`.bf16`): 8 exponent bits, 7 mantissa bits: the upper half of an f32.
pub const BF16: Format = Format {
    exp_bits: 8,
    man_bits: 7,
};

/// The canonical NaN of both formats.
pub const CANONICAL_NAN: u16 = 0x7fff;

impl Format {
    /// The format of a half type and whether it is a pair; `None` for other types.
    pub fn of(ty: Type) -> Option<(Format, bool)> {
        match ty {
            Type::F16 => Some((F16, false)),
            Type::BF16 => Some((BF16, false)),
            Type::F16x2 => Some((F16, true)),
            Type::BF16x2 => Some((BF16, true)),
            _ => None,
        }
    }

    fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    fn exp_mask(self) -> u16 {
        (((1u32 << self.exp_bits) - 1) << self.man_bits) as u16
    }

    fn man_mask(self) -> u16 {
        ((1u32 << self.man_bits) - 1) as u16
    }

    /// The positive infinity.
    pub fn infinity(self) -> u16 {
        self.exp_mask()
    }

    /// The largest finite value (65504 for f16, about 3.39e38 for bf16).
    pub fn max_finite(self) -> u16 {
        (self.exp_mask() - (1 << self.man_bits)) | self.man_mask()
    }

    /// Whether `h` is a NaN.
    pub fn is_nan(self, h: u16) -> bool {
        h & 0x7fff > self.exp_mask()
    }

    /// Whether `h` is subnormal (zero exponent, non-zero mantissa).
    pub fn is_subnormal(self, h: u16) -> bool {
        h & self.exp_mask() == 0 && h & self.man_mask() != 0
    }

    /// `.ftz`: a subnormal becomes the zero of its sign.
    pub fn flush(self, h: u16) -> u16 {
        if self.is_subnormal(h) {
            h & 0x8000
        } else {
            h
        }
    }

    /// The exact value of `h` (every half value is an f64).
    pub fn to_f64(self, h: u16) -> f64 {
        let neg = h & 0x8000 != 0;
        let e = i32::from((h & self.exp_mask()) >> self.man_bits);
        let m = f64::from(h & self.man_mask());
        let top = (1i32 << self.exp_bits) - 1;
        let scale = |m: f64, e: i32| m * 2f64.powi(e);
        let v = if e == top {
            if m == 0.0 {
                f64::INFINITY
            } else {
                return f64::NAN;
            }
        } else if e == 0 {
            scale(m, 1 - self.bias() - self.man_bits as i32)
        } else {
            scale(
                m + f64::from(1u32 << self.man_bits),
                e - self.bias() - self.man_bits as i32,
            )
        };
        if neg {
            -v
        } else {
            v
        }
    }

    /// `x` rounded once to this format as `rnd` says (the integer roundings `.rni ...` round as
    /// their direction: they are applied to integral values); NaN gives the canonical NaN.
    pub fn from_f64(self, x: f64, rnd: Rounding) -> u16 {
        if x.is_nan() {
            return CANONICAL_NAN;
        }
        let neg = x.is_sign_negative();
        let sign = if neg { 0x8000 } else { 0 };
        if x.is_infinite() {
            return sign | self.infinity();
        }
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (m, e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, exp - 1075)
        };
        self.round(neg, u128::from(m), e, rnd)
    }

    /// The integer `v` rounded once to this format.
    pub fn from_int(self, v: i128, rnd: Rounding) -> u16 {
        self.round(v < 0, v.unsigned_abs(), 0, rnd)
    }

    /// `(-1)^neg * m * 2^e`, rounded once: the guard and sticky bits come from the exact `m`.
    pub(crate) fn round(self, neg: bool, m: u128, e: i32, rnd: Rounding) -> u16 {
        let sign: u16 = if neg { 0x8000 } else { 0 };
        if m == 0 {
            return sign;
        }
        let mb = self.man_bits as i32;
        let emin = 1 - self.bias();
        let msb = 127 - m.leading_zeros() as i32;
        // The exponent of the result's binade (subnormals share emin), and its quantum.
        let te = (msb + e).max(emin);
        let shift = te - mb - e;
        // The kept bits, and the discarded ones against half a quantum.
        let (mut q, inexact, vs_half) = if shift <= 0 {
            (m << (-shift) as u32, false, Ordering::Less)
        } else if shift >= 128 {
            (0, true, Ordering::Less)
        } else {
            let rem = m & ((1u128 << shift) - 1);
            (m >> shift, rem != 0, rem.cmp(&(1u128 << (shift - 1))))
        };
        let up = match rnd {
            Rounding::Rn | Rounding::Rni => {
                vs_half == Ordering::Greater || (vs_half == Ordering::Equal && q & 1 == 1)
            }
            Rounding::Rz | Rounding::Rzi => false,
            Rounding::Rm | Rounding::Rmi => neg && inexact,
            Rounding::Rp | Rounding::Rpi => !neg && inexact,
        };
        if up {
            q += 1;
        }
        let mut te = te;
        if q >> (mb + 1) != 0 {
            q >>= 1;
            te += 1;
        }
        let biased = if q >> mb == 0 { 0 } else { te + self.bias() };
        if biased >= (1 << self.exp_bits) - 1 {
            let to_inf = match rnd {
                Rounding::Rn | Rounding::Rni => true,
                Rounding::Rz | Rounding::Rzi => false,
                Rounding::Rm | Rounding::Rmi => neg,
                Rounding::Rp | Rounding::Rpi => !neg,
            };
            return sign
                | if to_inf {
                    self.infinity()
                } else {
                    self.max_finite()
                };
        }
        sign | ((biased as u16) << self.man_bits) | (q as u16 & self.man_mask())
    }
}

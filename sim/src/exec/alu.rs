//! Per-lane arithmetic as the PTX ISA defines it: plain functions of bit patterns.
//!
//! Registers hold up to 64 bits; a value of type `T` lives in the low `T.bits()` bits. Results
//! are returned zero-extended to 64 bits (sign bits above the type's width are cleared), so a
//! later reader truncates or sign-extends as its own type says. Floats are IEEE-754 with
//! round-to-nearest-even, as `.rn` specifies; subnormals are kept (no `.ftz` flush).
//!
//! One file per instruction family, each re-exported here: `int` (integer arithmetic, the warp
//! loops of [`alu_warp`], extended precision), `float` (float arithmetic, directed roundings of
//! [`float_rounded`]), `cmp` (comparisons, `setp`, `slct`, `set`, `testp`), `cvt` (conversions), `half` (the `.f16 .bf16` formats and their pairs: arithmetic, `setp`, `cvt`),
//! `bitops` (bit fields, `prmt`, `lop3`, funnel shifts, dot products), `reduce` (the values of
//! atomics, `redux.sync` and `bar.red`) and `round` (rounding steps shared by float arithmetic and
//! conversions). This file holds the bit-pattern helpers they all use.

mod bitops;
mod cmp;
mod cvt;
mod float;
pub mod half;
mod int;
pub mod mma;
mod reduce;
mod round;

pub use bitops::{bits, prmt};
pub(crate) use cmp::order_key;
pub use cmp::{combine, compare, compare_warp, set_value, slct, testp};
pub use cvt::{convert, cvt_pack, f16_to_f64, f64_to_f16};
pub use float::{float_rounded, CANONICAL_NAN_F32};
pub use half::{half_arith, half_compare, half_convert};
pub use int::{alu, alu_warp, carry};
pub use reduce::{atom_apply, bar_red, redux};

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

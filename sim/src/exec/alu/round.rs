//! Rounding steps shared by float arithmetic and conversions: rounding to an integer value, the
//! next float up or down, and correcting a round-to-nearest result into a directed rounding.

use crate::ptx::inst::Rounding;

pub(super) fn round_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

/// Rounds `x` to an integer-valued f64 as `rnd` says (`.rn` and `.rni` to nearest even, `.rz`
/// toward zero, `.rm` down, `.rp` up).
pub(super) fn round_int(x: f64, rnd: Rounding) -> f64 {
    match rnd {
        Rounding::Rn | Rounding::Rni => round_even(x),
        Rounding::Rz | Rounding::Rzi => x.trunc(),
        Rounding::Rm | Rounding::Rmi => x.floor(),
        Rounding::Rp | Rounding::Rpi => x.ceil(),
    }
}

/// The next f32 above (`up`) or below `x`.
pub(super) fn f32_step(x: f32, up: bool) -> f32 {
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
pub(super) fn f64_step(x: f64, up: bool) -> f64 {
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
pub(super) fn directed<T: Copy>(
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
pub(super) fn nearest(rnd: Option<Rounding>) -> bool {
    matches!(rnd, None | Some(Rounding::Rn | Rounding::Rni))
}

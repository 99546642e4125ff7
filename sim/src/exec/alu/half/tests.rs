//! Exact-bit tests of the half-precision formats and operations against the `half` crate (its
//! `from_f32`/`from_f64` round to nearest even, its arithmetic rounds an f32 result: innocuous
//! double rounding for `+ - *` since 24 >= 2 * 11 + 1) and against brute-force references: the
//! sorted list of every finite value for directed rounding, exact 128-bit integer arithmetic for
//! the fused multiply-add.

use super::*;
use crate::ptx::inst::Cmp;
use half::{bf16, f16};

/// A deterministic xorshift stream.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn op(op: AluOp, ty: Type) -> HalfOp {
    HalfOp {
        op,
        ty,
        ftz: false,
        sat: false,
        relu: false,
        nan: false,
        xorsign: false,
    }
}

fn cvt(dst: Type, src: Type, rnd: Option<Rounding>) -> HalfCvt {
    HalfCvt {
        dst,
        src,
        rnd,
        ftz: false,
        sat: false,
        relu: false,
        satfinite: false,
    }
}

#[test]
fn every_pattern_decodes_as_the_half_crate_says() {
    for h in 0..=u16::MAX {
        let (a, b) = (F16.to_f64(h), f16::from_bits(h).to_f64());
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "f16 {h:#06x}"
        );
        let (a, b) = (BF16.to_f64(h), bf16::from_bits(h).to_f64());
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "bf16 {h:#06x}"
        );
        assert_eq!(F16.is_nan(h), f16::from_bits(h).is_nan());
        assert_eq!(BF16.is_nan(h), bf16::from_bits(h).is_nan());
        let sub = f16::from_bits(h).classify() == std::num::FpCategory::Subnormal;
        assert_eq!(F16.is_subnormal(h), sub);
    }
    assert_eq!((F16.max_finite(), BF16.max_finite()), (0x7bff, 0x7f7f));
}

/// Every non-negative finite value of `fmt`, ascending, with its pattern.
fn finite(fmt: Format) -> Vec<(f64, u16)> {
    (0..fmt.infinity()).map(|h| (fmt.to_f64(h), h)).collect()
}

/// The pattern `rnd` gives `x` by brute force: the neighbours of |x| among every finite value.
fn reference(fmt: Format, all: &[(f64, u16)], x: f64, rnd: Rounding) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let m = x.abs();
    let i = all.partition_point(|(v, _)| *v <= m); // all[i - 1] <= m < all[i]
    let (lo, lo_h) = all[i - 1];
    let max = all[all.len() - 1].0;
    // The next value above the largest finite one, as IEEE overflow rounding sees it.
    let (hi, hi_h) = all
        .get(i)
        .copied()
        .unwrap_or((max + (max - all[all.len() - 2].0), fmt.infinity()));
    let pick = |up: bool| sign | if up { hi_h } else { lo_h };
    if lo == m {
        return sign | lo_h;
    }
    let neg = sign != 0;
    let d = match rnd {
        Rounding::Rz => pick(false),
        Rounding::Rp => pick(!neg),
        Rounding::Rm => pick(neg),
        _ => {
            let (dl, dh) = (m - lo, hi - m);
            pick(dh < dl || (dh == dl && lo_h & 1 == 1))
        }
    };
    // Past the largest finite value: infinity, or the largest finite value toward zero.
    if d & 0x7fff == fmt.infinity() && !(matches!(rnd, Rounding::Rn)) {
        let toward_inf = matches!((rnd, neg), (Rounding::Rp, false) | (Rounding::Rm, true));
        if !toward_inf {
            return sign | fmt.max_finite();
        }
    }
    d
}

/// Values around every finite pattern: itself, the midpoints to its neighbours and a hair to
/// either side of them, beyond the range, deep in and below the subnormals.
fn probes(all: &[(f64, u16)]) -> Vec<f64> {
    let mut out = vec![];
    for w in all.windows(2) {
        let (a, b) = (w[0].0, w[1].0);
        let mid = (a + b) / 2.0;
        out.extend([
            a,
            mid,
            mid * (1.0 + 1e-12),
            mid * (1.0 - 1e-12),
            a + (b - a) / 4.0,
        ]);
    }
    let max = all[all.len() - 1].0;
    let ulp = max - all[all.len() - 2].0;
    out.extend([
        max + ulp / 2.0,
        max + ulp / 4.0,
        max + ulp,
        1e300,
        f64::MIN_POSITIVE,
        1e-320,
    ]);
    let tiny = all[1].0;
    out.extend([
        tiny / 2.0,
        tiny / 4.0,
        tiny * 0.75,
        tiny / 2.0 * (1.0 + 1e-9),
    ]);
    let neg: Vec<f64> = out.iter().map(|x| -x).collect();
    out.extend(neg);
    out
}

#[test]
fn encoding_rounds_as_the_reference_in_every_direction() {
    for (fmt, name) in [(F16, "f16"), (BF16, "bf16")] {
        let all = finite(fmt);
        let probes = probes(&all);
        for rnd in [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp] {
            for &x in &probes {
                let want = reference(fmt, &all, x, rnd);
                assert_eq!(fmt.from_f64(x, rnd), want, "{name} {x:e} {rnd:?}");
            }
        }
        // Round to nearest even, as the half crate does it from an f32 (its `from_f64` rounds
        // twice, through f32: 2^-25 * (1 + 1e-9) gives 0 where the nearest f16 is 2^-24).
        for &x in probes.iter().filter(|&&x| f64::from(x as f32) == x) {
            let want = if fmt == F16 {
                f16::from_f32(x as f32).to_bits()
            } else {
                bf16::from_f32(x as f32).to_bits()
            };
            assert_eq!(fmt.from_f64(x, Rounding::Rn), want, "{name} {x:e}");
        }
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..200_000 {
        let f = f32::from_bits(rng(&mut seed) as u32);
        if f.is_nan() {
            assert_eq!(F16.from_f64(f64::from(f), Rounding::Rn), CANONICAL_NAN);
            continue;
        }
        let x = f64::from(f);
        assert_eq!(
            F16.from_f64(x, Rounding::Rn),
            f16::from_f32(f).to_bits(),
            "{f:e}"
        );
        assert_eq!(
            BF16.from_f64(x, Rounding::Rn),
            bf16::from_f32(f).to_bits(),
            "{f:e}"
        );
    }
}

#[test]
fn specific_roundings() {
    let rn = Rounding::Rn;
    // 65504 + 16 is the midpoint to 65536: ties to even gives infinity; just below stays.
    assert_eq!(F16.from_f64(65520.0, rn), 0x7c00);
    assert_eq!(F16.from_f64(65519.99, rn), 0x7bff);
    assert_eq!(F16.from_f64(1e6, Rounding::Rz), 0x7bff);
    assert_eq!(F16.from_f64(-1e6, Rounding::Rp), 0xfbff);
    assert_eq!(F16.from_f64(-1e6, Rounding::Rm), 0xfc00);
    // Half the smallest subnormal ties to zero (even); a hair more rounds up.
    let tiny = 2f64.powi(-24);
    assert_eq!(F16.from_f64(tiny / 2.0, rn), 0x0000);
    assert_eq!(F16.from_f64(tiny * 1.5, rn), 0x0002);
    assert_eq!(F16.from_f64(-tiny / 4.0, Rounding::Rm), 0x8001);
    assert_eq!(F16.from_f64(f64::NAN, rn), 0x7fff);
    // 1 + 2^-11 ties to 1.0, 1 + 3 * 2^-11 to 1 + 2^-9 (even mantissas).
    assert_eq!(F16.from_f64(1.0 + 2f64.powi(-11), rn), 0x3c00);
    assert_eq!(F16.from_f64(1.0 + 3.0 * 2f64.powi(-11), rn), 0x3c02);
    // An integer is rounded from its exact value: 2^63 + 2^55 + 1 lies just above a bf16
    // midpoint; through f64 it would become the midpoint and round down to even.
    let v = (1i128 << 63) + (1 << 55) + 1;
    assert_eq!(
        BF16.from_int(v, rn),
        bf16::from_f64(2f64.powi(63) + 2f64.powi(56)).to_bits()
    );
    assert_eq!(BF16.from_int((1i128 << 63) + (1 << 55), rn), 0x5f00);
    assert_eq!(F16.from_int(65520, rn), 0x7c00);
    assert_eq!(F16.from_int(-2049, Rounding::Rz), 0xe800);
    assert_eq!(F16.from_int(-2049, Rounding::Rm), 0xe801);
}

/// The exact value of `h` as `n * 2^-24` (f16 only: every f16 is a multiple of 2^-24).
fn exact(h: u16) -> i128 {
    (F16.to_f64(h) * 2f64.powi(24)) as i128
}

#[test]
fn f16_arithmetic_matches_the_half_crate_and_fma_the_exact_product() {
    let mut seed = 0x1234_5678_9abc_def1;
    for _ in 0..200_000 {
        let (a, b, c) = (
            rng(&mut seed) as u16,
            rng(&mut seed) as u16,
            rng(&mut seed) as u16,
        );
        let (fa, fb) = (f16::from_bits(a), f16::from_bits(b));
        let check = |got: u64, want: f16, what: &str| {
            if want.is_nan() {
                assert_eq!(got, 0x7fff, "{what} {a:#06x} {b:#06x}");
            } else {
                assert_eq!(got, u64::from(want.to_bits()), "{what} {a:#06x} {b:#06x}");
            }
        };
        let args = (u64::from(a), u64::from(b), u64::from(c));
        check(
            half_arith(op(AluOp::Add, Type::F16), args.0, args.1, 0),
            fa + fb,
            "add",
        );
        check(
            half_arith(op(AluOp::Sub, Type::F16), args.0, args.1, 0),
            fa - fb,
            "sub",
        );
        check(
            half_arith(op(AluOp::Mul, Type::F16), args.0, args.1, 0),
            fa * fb,
            "mul",
        );
        let (ba, bb) = (bf16::from_bits(a), bf16::from_bits(b));
        let got = half_arith(op(AluOp::Add, Type::BF16), args.0, args.1, 0);
        let want = ba + bb;
        if want.is_nan() {
            assert_eq!(got, 0x7fff);
        } else {
            assert_eq!(got, u64::from(want.to_bits()), "bf16 add {a:#06x} {b:#06x}");
        }
        let got = half_arith(op(AluOp::Mul, Type::BF16), args.0, args.1, 0);
        let want = ba * bb;
        if !want.is_nan() {
            assert_eq!(got, u64::from(want.to_bits()), "bf16 mul {a:#06x} {b:#06x}");
        }
        // fma of finite values: the exact a * b + c as n * 2^-48, rounded once.
        if [a, b, c].iter().all(|&h| h & 0x7c00 != 0x7c00) {
            let n = exact(a) * exact(b) + (exact(c) << 24);
            let got = half_arith(op(AluOp::Fma, Type::F16), args.0, args.1, args.2);
            let want = F16.round(n < 0, n.unsigned_abs(), -48, Rounding::Rn);
            let want = if n == 0 {
                // An exact zero sum: +0 unless both terms are -0 (round to nearest).
                let pz = F16.to_f64(a) * F16.to_f64(b);
                if pz.is_sign_negative() && c & 0x8000 != 0 {
                    0x8000u64
                } else {
                    0
                }
            } else {
                u64::from(want)
            };
            assert_eq!(got, want, "fma {a:#06x} {b:#06x} {c:#06x}");
        }
    }
}

#[test]
fn modifiers_of_the_arithmetic() {
    let h = |o: AluOp| op(o, Type::F16);
    let sub = 0x0001; // the smallest subnormal
                      // .ftz: subnormal inputs and results become zero of their sign.
    let ftz = HalfOp {
        ftz: true,
        ..h(AluOp::Add)
    };
    assert_eq!(half_arith(ftz, sub, sub, 0), 0);
    assert_eq!(half_arith(h(AluOp::Add), sub, sub, 0), 2);
    assert_eq!(
        half_arith(
            HalfOp {
                ftz: true,
                ..h(AluOp::Mul)
            },
            0x0400,
            0xb800,
            0
        ),
        0x8000
    );
    // .sat: [0, 1], NaN to +0.
    let sat = HalfOp {
        sat: true,
        ..h(AluOp::Add)
    };
    assert_eq!(half_arith(sat, 0x3c00, 0x3800, 0), 0x3c00); // 1 + 0.5 -> 1
    assert_eq!(half_arith(sat, 0xbc00, 0x3800, 0), 0x0000); // -0.5 -> 0
    assert_eq!(half_arith(sat, 0x7c00, 0xfc00, 0), 0x0000); // inf - inf = NaN -> 0
    assert_eq!(half_arith(sat, 0x3400, 0x3400, 0), 0x3800); // 0.25 + 0.25
                                                            // NaN results are canonical; infinities overflow as IEEE says.
    assert_eq!(half_arith(h(AluOp::Add), 0x7c00, 0xfc00, 0), 0x7fff);
    assert_eq!(half_arith(h(AluOp::Mul), 0x7e01, 0x3c00, 0), 0x7fff);
    assert_eq!(half_arith(h(AluOp::Add), 0x7bff, 0x7bff, 0), 0x7c00);
    // .relu on fma: negative to +0, NaN canonical.
    let relu = HalfOp {
        relu: true,
        ..h(AluOp::Fma)
    };
    assert_eq!(half_arith(relu, 0x4000, 0xbc00, 0x3c00), 0x0000); // 2 * -1 + 1 = -1
    assert_eq!(half_arith(relu, 0x4000, 0x3c00, 0x3c00), 0x4200); // 3
    assert_eq!(half_arith(relu, 0x7c00, 0x0000, 0x3c00), 0x7fff); // inf * 0
                                                                  // neg/abs flip or clear the sign bit; with .ftz a subnormal first becomes zero.
    assert_eq!(half_arith(h(AluOp::Neg), 0x3c00, 0, 0), 0xbc00);
    assert_eq!(half_arith(h(AluOp::Abs), 0xfc00, 0, 0), 0x7c00);
    assert_eq!(
        half_arith(
            HalfOp {
                ftz: true,
                ..h(AluOp::Neg)
            },
            0x8001,
            0,
            0
        ),
        0x0000
    );
    // Pairs work element by element.
    let x2 = op(AluOp::Add, Type::F16x2);
    assert_eq!(half_arith(x2, 0x4000_3c00, 0x3c00_3c00, 0), 0x4200_4000);
    let bx2 = op(AluOp::Fma, Type::BF16x2);
    assert_eq!(
        half_arith(bx2, 0x4000_3f80, 0x3f80_4040, 0x3f80_3f80),
        0x4040_4080
    );
}

#[test]
fn min_and_max() {
    let mn = op(AluOp::Min, Type::F16);
    let mx = op(AluOp::Max, Type::F16);
    let nan = 0x7e00;
    assert_eq!(half_arith(mn, 0x3c00, 0xbc00, 0), 0xbc00);
    assert_eq!(half_arith(mx, 0x3c00, 0xbc00, 0), 0x3c00);
    // -0.0 < +0.0.
    assert_eq!(half_arith(mn, 0x0000, 0x8000, 0), 0x8000);
    assert_eq!(half_arith(mx, 0x8000, 0x0000, 0), 0x0000);
    // One NaN: the other value; two: canonical NaN; with .NaN either gives canonical NaN.
    assert_eq!(half_arith(mn, nan, 0x3c00, 0), 0x3c00);
    assert_eq!(half_arith(mx, 0x3c00, nan, 0), 0x3c00);
    assert_eq!(half_arith(mn, nan, 0x7d00, 0), 0x7fff);
    assert_eq!(
        half_arith(HalfOp { nan: true, ..mn }, nan, 0x3c00, 0),
        0x7fff
    );
    // .xorsign.abs: the smaller magnitude, with sign(a) ^ sign(b).
    let xs = HalfOp {
        xorsign: true,
        ..mn
    };
    assert_eq!(half_arith(xs, 0xc000, 0x3c00, 0), 0xbc00); // min(|-2|, |1|) = 1, negative
    assert_eq!(
        half_arith(
            HalfOp {
                xorsign: true,
                ..mx
            },
            0xc000,
            0xbc00,
            0
        ),
        0x4000
    );
    // .ftz: a subnormal is zero before comparing.
    assert_eq!(
        half_arith(HalfOp { ftz: true, ..mn }, 0x0001, 0x8000, 0),
        0x8000
    );
    assert_eq!(
        half_arith(op(AluOp::Max, Type::BF16x2), 0x3f80_c000, 0x4000_bf80, 0),
        0x4000_bf80
    );
}

#[test]
fn comparisons() {
    let one = 0x3c00;
    assert_eq!(half_compare(Cmp::Lt, Type::F16, false, 0xbc00, one), 1);
    assert_eq!(half_compare(Cmp::Eq, Type::F16, false, 0x8000, 0x0000), 1);
    assert_eq!(half_compare(Cmp::Lt, Type::F16, false, 0x7e00, one), 0);
    assert_eq!(half_compare(Cmp::Ltu, Type::F16, false, 0x7e00, one), 1);
    assert_eq!(half_compare(Cmp::Nan, Type::BF16, false, 0x7fc0, 0x3f80), 1);
    // .ftz: subnormals equal zero.
    assert_eq!(half_compare(Cmp::Gt, Type::F16, false, 0x0001, 0x0000), 1);
    assert_eq!(half_compare(Cmp::Gt, Type::F16, true, 0x0001, 0x0000), 0);
    // A pair: element 0 in bit 0, element 1 in bit 1.
    assert_eq!(
        half_compare(Cmp::Lt, Type::F16x2, false, 0x4000_3c00, 0x3c00_4000),
        0b01
    );
    assert_eq!(
        half_compare(Cmp::Ge, Type::BF16x2, false, 0x4000_3f80, 0x3f80_4000),
        0b10
    );
}

#[test]
fn conversions() {
    let rn = Some(Rounding::Rn);
    let f = |x: f32| u64::from(x.to_bits());
    // f32 -> f16 in every direction, against the brute-force reference.
    let all = finite(F16);
    let mut seed = 0xdead_beef_cafe_f00d;
    for _ in 0..50_000 {
        let x = f32::from_bits(rng(&mut seed) as u32);
        if !x.is_finite() {
            continue;
        }
        for r in [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp] {
            let got = half_convert(cvt(Type::F16, Type::F32, Some(r)), f(x), 0);
            let want = reference(F16, &all, f64::from(x), r);
            assert_eq!(got, u64::from(want), "{x:e} {r:?}");
        }
        let bf = half_convert(cvt(Type::BF16, Type::F32, rn), f(x), 0);
        assert_eq!(bf, u64::from(bf16::from_f32(x).to_bits()), "{x:e}");
    }
    // Pairs: a into the upper half, b into the lower.
    let pack = half_convert(cvt(Type::F16x2, Type::F32, rn), f(2.0), f(1.0));
    assert_eq!(pack, 0x4000_3c00);
    let pack = half_convert(cvt(Type::BF16x2, Type::F32, rn), f(-1.0), f(3.0));
    assert_eq!(pack, 0xbf80_4040);
    // NaN is canonical; .satfinite keeps overflow finite, .relu clamps negatives.
    assert_eq!(
        half_convert(cvt(Type::F16, Type::F32, rn), f(f32::NAN), 0),
        0x7fff
    );
    let satf = HalfCvt {
        satfinite: true,
        ..cvt(Type::F16, Type::F32, rn)
    };
    assert_eq!(half_convert(satf, f(1e9), 0), 0x7bff);
    assert_eq!(half_convert(satf, f(f32::NEG_INFINITY), 0), 0xfbff);
    let relu = HalfCvt {
        relu: true,
        ..cvt(Type::BF16, Type::F32, rn)
    };
    assert_eq!(half_convert(relu, f(-3.0), 0), 0);
    assert_eq!(half_convert(relu, f(f32::NAN), 0), 0x7fff);
    let sat = HalfCvt {
        sat: true,
        ..cvt(Type::F16, Type::F32, rn)
    };
    assert_eq!(half_convert(sat, f(7.0), 0), 0x3c00);
    assert_eq!(half_convert(sat, f(-0.0), 0), 0);
    assert_eq!(half_convert(sat, f(f32::NAN), 0), 0);
    assert_eq!(half_convert(sat, f(0.5), 0), 0x3800);
    // Widening is exact; bf16 moves into the upper half of an f32.
    assert_eq!(
        half_convert(cvt(Type::F32, Type::F16, None), 0x0001, 0),
        f(2f32.powi(-24))
    );
    assert_eq!(
        half_convert(cvt(Type::F32, Type::BF16, None), 0xc049, 0),
        0xc049_0000
    );
    assert_eq!(
        half_convert(cvt(Type::F64, Type::F16, None), 0x7bff, 0),
        65504f64.to_bits()
    );
    // To integers with the integer roundings; NaN gives 0 and the range saturates.
    let to_s32 = |r, h| half_convert(cvt(Type::S32, Type::F16, Some(r)), h, 0) as u32 as i32;
    assert_eq!(to_s32(Rounding::Rni, 0x4100), 2); // 2.5 -> 2 (even)
    assert_eq!(to_s32(Rounding::Rni, 0x4300), 4); // 3.5 -> 4
    assert_eq!(to_s32(Rounding::Rmi, 0xc100), -3);
    assert_eq!(to_s32(Rounding::Rzi, 0x7fff), 0);
    assert_eq!(
        half_convert(cvt(Type::U8, Type::F16, Some(Rounding::Rzi)), 0x7bff, 0),
        255
    );
    // From integers and between the formats.
    assert_eq!(
        half_convert(cvt(Type::F16, Type::S32, rn), (-3i64) as u64, 0),
        0xc200
    );
    assert_eq!(
        half_convert(cvt(Type::F16, Type::U64, Some(Rounding::Rz)), 1 << 40, 0),
        0x7bff
    );
    assert_eq!(
        half_convert(cvt(Type::BF16, Type::U64, rn), u64::MAX, 0),
        0x5f80
    );
    assert_eq!(
        half_convert(cvt(Type::BF16, Type::F16, rn), 0x3c01, 0),
        0x3f80
    );
    assert_eq!(
        half_convert(cvt(Type::F16, Type::F64, rn), 1e-10f64.to_bits(), 0),
        0
    );
    // .ftz flushes a subnormal f32 source (rounding up would give the smallest subnormal).
    let tiny = f(f32::from_bits(1));
    assert_eq!(
        half_convert(cvt(Type::F16, Type::F32, Some(Rounding::Rp)), tiny, 0),
        1
    );
    let ftz = HalfCvt {
        ftz: true,
        ..cvt(Type::F16, Type::F32, Some(Rounding::Rp))
    };
    assert_eq!(half_convert(ftz, tiny, 0), 0);
}

//! Half precision end to end (issue 39): `tests/fixtures/half/half.cu`, compiled by NVRTC with the
//! real `cuda_fp16.h` and `cuda_bf16.h`, runs on random bit patterns, and every output is
//! recomputed here, bit for bit, from the `half` crate (whose `+ - *` round an f32 result once
//! more, exactly for these formats) and from brute-force references written from the PTX ISA's
//! wording, never by the simulator's own functions.

mod common;

use common::root;
use half::{bf16, f16};
use sim::config::GpuConfig;
use sim::run::{run_workload, Options};
use sim::workload::Workload;

fn words<const N: usize>(bytes: &[u8]) -> Vec<[u8; N]> {
    bytes
        .chunks_exact(N)
        .map(|c| c.try_into().unwrap())
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    words::<4>(b).into_iter().map(u32::from_le_bytes).collect()
}

fn u16s(b: &[u8]) -> Vec<u16> {
    words::<2>(b).into_iter().map(u16::from_le_bytes).collect()
}

const NAN: u16 = 0x7fff;

/// A result of the `half` crate as the GPU writes it: every NaN canonical.
fn h(x: f16) -> u16 {
    if x.is_nan() {
        NAN
    } else {
        x.to_bits()
    }
}

fn b(x: bf16) -> u16 {
    if x.is_nan() {
        NAN
    } else {
        x.to_bits()
    }
}

/// fma.rn.f16 by exact integer arithmetic: every finite f16 is k * 2^-24, so a * b + c is
/// n * 2^-48 exactly; the result is the nearest finite f16 (ties to the even pattern) or infinity
/// past 65520 (the midpoint above 65504).
fn fma16(a: u16, bb: u16, c: u16) -> u16 {
    let (fa, fb, fc) = (f16::from_bits(a), f16::from_bits(bb), f16::from_bits(c));
    if !(fa.is_finite() && fb.is_finite() && fc.is_finite()) {
        let r = fa.to_f64() * fb.to_f64() + fc.to_f64();
        return if r.is_nan() {
            NAN
        } else {
            f16::from_f64(r).to_bits()
        };
    }
    let k = |x: f16| (x.to_f64() * 2f64.powi(24)) as i128;
    let n = k(fa) * k(fb) + (k(fc) << 24);
    if n == 0 {
        let product_negative = fa.is_sign_negative() != fb.is_sign_negative();
        return if product_negative && fc.is_sign_negative() {
            0x8000
        } else {
            0
        };
    }
    let sign = if n < 0 { 0x8000 } else { 0 };
    let m = n.abs();
    if m >= 65520i128 << 48 {
        return sign | 0x7c00;
    }
    // The finite non-negative f16 patterns are ordered like their values.
    let value = |p: u16| k(f16::from_bits(p)) << 24;
    let (mut lo, mut hi) = (0u16, 0x7bff);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if value(mid) <= m {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let below = lo;
    if value(below) == m {
        return sign | below;
    }
    let above = below + 1;
    let (dl, du) = (m - value(below), value(above) - m);
    let up = du < dl || (du == dl && below & 1 == 1);
    sign | if up { above } else { below }
}

/// `min`/`max` as the PTX ISA words them: a NaN operand gives the other, two give NaN, and
/// -0.0 is below +0.0.
fn min_max(a: u16, bb: u16, max: bool) -> u16 {
    let (fa, fb) = (f16::from_bits(a), f16::from_bits(bb));
    match (fa.is_nan(), fb.is_nan()) {
        (true, true) => NAN,
        (true, false) => bb,
        (false, true) => a,
        _ if fa == fb => {
            if max {
                a & bb
            } else {
                a | bb
            }
        }
        _ if (fa < fb) != max => a,
        _ => bb,
    }
}

/// f32 to f16 toward zero: the nearest, stepped back one ulp where it rounded away from zero.
fn f16_rz(x: f32) -> u16 {
    if x.is_nan() {
        return NAN;
    }
    let r = f16::from_f32(x);
    if r.is_infinite() && x.is_finite() {
        return (r.to_bits() & 0x8000) | 0x7bff;
    }
    if r.to_f64().abs() > f64::from(x).abs() {
        r.to_bits() - 1
    } else {
        r.to_bits()
    }
}

#[test]
fn half_kernels_compute_what_the_half_crate_computes() {
    let cfg = GpuConfig::load(&root().join("configs/h200.toml")).unwrap();
    let w = Workload::resolve(
        root()
            .join("tests/fixtures/half/half.toml")
            .to_str()
            .unwrap(),
    )
    .unwrap();
    let run = run_workload(
        &cfg,
        &w,
        &Options {
            keep_outputs: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = |launch: usize, name: &str| -> Vec<u8> {
        run.launches[launch]
            .outputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .unwrap()
    };

    // haxpy: out = a * x + y per element, a = f16(-1.75) in both halves.
    let a = f16::from_f32(-1.75).to_bits();
    let (x, y, out) = (
        u32s(&output(0, "x")),
        u32s(&output(0, "y")),
        u32s(&output(0, "axpy")),
    );
    assert_eq!(out.len(), 1000);
    let mut specials = 0;
    for i in 0..out.len() {
        let lo = fma16(a, x[i] as u16, y[i] as u16);
        let hi = fma16(a, (x[i] >> 16) as u16, (y[i] >> 16) as u16);
        specials += usize::from(lo == NAN || lo & 0x7c00 == 0x7c00 || lo & 0x7c00 == 0);
        assert_eq!(
            out[i],
            u32::from(lo) | u32::from(hi) << 16,
            "pair {i}: x {:#010x} y {:#010x}",
            x[i],
            y[i]
        );
    }
    assert!(
        specials > 10,
        "random patterns include NaN, infinities and subnormals"
    );

    // bf16_warp_sum: each warp's 32 values summed by xor shuffles, as bf16 additions.
    let fin: Vec<f32> = words::<4>(&output(1, "fin"))
        .into_iter()
        .map(f32::from_le_bytes)
        .collect();
    let back = u32s(&output(1, "back"));
    let sums = u16s(&output(1, "sums"));
    for (i, v) in fin.iter().enumerate() {
        assert_eq!(back[i], bf16::from_f32(*v).to_f32().to_bits(), "value {i}");
    }
    for (wi, s) in sums.iter().enumerate() {
        let mut v: Vec<bf16> = fin[wi * 32..][..32]
            .iter()
            .map(|&f| bf16::from_f32(f))
            .collect();
        for o in [16, 8, 4, 2, 1] {
            v = (0..32).map(|l| v[l] + v[l ^ o]).collect();
        }
        assert_eq!(*s, b(v[0]), "warp {wi}");
    }

    // half_ops: one pair of random patterns per thread.
    let pairs = u32s(&output(2, "pairs"));
    let ops = u32s(&output(2, "ops"));
    for (i, &p) in pairs.iter().enumerate() {
        let (ab, bb) = (p as u16, (p >> 16) as u16);
        let (fa, fb) = (f16::from_bits(ab), f16::from_bits(bb));
        let f = f32::from_bits(p);
        let sat = |x: f16| -> u16 {
            if x.is_nan() || x.to_f32() <= 0.0 {
                0
            } else if x.to_f32() > 1.0 {
                0x3c00
            } else {
                x.to_bits()
            }
        };
        let m = u32::from(sat(fa * fb));
        let to_f32 = if fa.is_nan() {
            // cvt.f32.f16 of a NaN: the simulator's choice, the quiet NaN of f64 -> f32.
            0x7fc0_0000
        } else {
            fa.to_f32().to_bits()
        };
        let to_int = if fa.is_nan() {
            0
        } else {
            fa.to_f64().round_ties_even() as i32 as u32
        };
        let c = bf16::from_f32(f);
        let want = [
            u32::from(h(fa * fb)),
            u32::from(h(fa - fb)),
            u32::from(min_max(ab, bb, false)) | u32::from(min_max(ab, bb, true)) << 16,
            u32::from(ab ^ 0x8000) | u32::from(bb & 0x7fff) << 16,
            // setp.lt, setp.geu (true when unordered), set.nan.
            u32::from(fa < fb)
                | u32::from(fa >= fb || fa.is_nan() || fb.is_nan()) << 1
                | u32::from(fa.is_nan()) << 2,
            m | m << 16,
            // __hblt2(ab, ba): a < b in one half and b < a in the other, never both.
            0,
            to_f32,
            to_int,
            u32::from(f16_rz(f)) | u32::from(h(f16::from_f32(p as i32 as f32))) << 16,
            u32::from(b(c)) | u32::from(b(c * c)) << 16,
            u32::from(h(f16::from_f32(f))) | u32::from(h(f16::from_f32(fb.to_f32()))) << 16,
        ];
        assert_eq!(ops[i * 12..][..12], want, "pair {i}: {p:#010x}");
    }
}

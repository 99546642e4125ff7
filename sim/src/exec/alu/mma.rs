//! `mma.sync.aligned` (PTX ISA §9.7.14.5.14): D = A·B + C for one warp, from and into the
//! fragments each thread holds, laid out as the ISA's figures "Matrix Fragments for
//! mma.m16n8k16" (and `m16n8k8`, `m16n8k32`) give them. With `groupID = lane >> 2` and
//! `threadID_in_group = lane % 4`, and `p` elements in a 32-bit register (2 for f16/bf16, 1 for
//! tf32, 4 for s8/u8):
//!
//! - A (M x K, row-major): register `r`, element `e` is row `groupID + 8 (r & 1)`, column
//!   `threadID_in_group · p + e + (K / 2)(r >> 1)`;
//! - B (K x N, column-major): register `r`, element `e` is row `threadID_in_group · p + e +
//!   (K / 2) r`, column `groupID`;
//! - C and D (M x N): a 32-bit element in register `r` is row `groupID + 8 (r >> 1)`, column
//!   `2 threadID_in_group + (r & 1)`; an f16 pair in register `r` is row `groupID + 8 r`,
//!   columns `2 threadID_in_group + e`.
//!
//! Arithmetic: the integer forms are exact (s32 wraps, `.satfinite` clamps). The float forms
//! are computed as the exact products (an f16, bf16 or tf32 product is exact in f64), summed
//! in f64 in order of k and added to C, then rounded once to nearest even into D's type; a tf32
//! operand is its f32 register with the 13 low mantissa bits cleared. The hardware's adder
//! aligns and truncates differently (its last bits can differ when sums cancel or span many
//! binades); sums that f64 holds exactly and that D's type represents exactly (small integers,
//! the tests' inputs) are the same either way.

use crate::ptx::float16::{BF16, F16};
use crate::ptx::inst::{MmaOp, MmaType, Rounding, WmmaFrag};

/// A warp's fragments of one operand: `regs[r][lane]`.
pub type Fragments = Vec<[u32; 32]>;

/// Element `e` of register value `v` of type `t`, as a number.
fn value(t: MmaType, v: u32, e: usize) -> f64 {
    let bits = t.bits() as usize;
    let raw = if bits == 32 {
        v
    } else {
        (v >> (e * bits)) & ((1u32 << bits) - 1)
    };
    match t {
        MmaType::F16 => F16.to_f64(raw as u16),
        MmaType::BF16 => BF16.to_f64(raw as u16),
        MmaType::TF32 => f64::from(f32::from_bits(raw & 0xffff_e000)),
        MmaType::F32 => f64::from(f32::from_bits(raw)),
        MmaType::S8 => f64::from(raw as u8 as i8),
        MmaType::U8 => f64::from(raw as u8),
        MmaType::S32 => f64::from(raw as i32),
    }
}

/// Elements per 32-bit register.
fn per(t: MmaType) -> usize {
    (32 / t.bits()) as usize
}

/// (row, column) of A's register `r`, element `e`, for `lane`.
pub fn a_cell(op: &MmaOp, lane: usize, r: usize, e: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    (
        g + 8 * (r & 1),
        t * per(op.a) + e + usize::from(op.k / 2) * (r >> 1),
    )
}

/// (row, column) of B's register `r`, element `e`, for `lane`.
pub fn b_cell(op: &MmaOp, lane: usize, r: usize, e: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    (t * per(op.b) + e + usize::from(op.k / 2) * r, g)
}

/// (row, column) of a C or D register `r`, element `e`, of type `ty`, for `lane`.
pub fn cd_cell(ty: MmaType, lane: usize, r: usize, e: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    if ty == MmaType::F16 {
        (g + 8 * r, 2 * t + e)
    } else {
        (g + 8 * (r >> 1), 2 * t + (r & 1))
    }
}

/// D's fragments of `op` from those of A, B and C.
pub fn mma(op: &MmaOp, a: &Fragments, b: &Fragments, c: &Fragments) -> Fragments {
    let (m, n, k) = (usize::from(op.m), usize::from(op.n), usize::from(op.k));
    let mut am = vec![vec![0f64; k]; m];
    let mut bm = vec![vec![0f64; n]; k];
    let mut cm = vec![vec![0f64; n]; m];
    for lane in 0..32 {
        for (r, regs) in a.iter().enumerate() {
            for e in 0..per(op.a) {
                let (i, j) = a_cell(op, lane, r, e);
                am[i][j] = value(op.a, regs[lane], e);
            }
        }
        for (r, regs) in b.iter().enumerate() {
            for e in 0..per(op.b) {
                let (i, j) = b_cell(op, lane, r, e);
                bm[i][j] = value(op.b, regs[lane], e);
            }
        }
        for (r, regs) in c.iter().enumerate() {
            for e in 0..per(op.c) {
                let (i, j) = cd_cell(op.c, lane, r, e);
                cm[i][j] = value(op.c, regs[lane], e);
            }
        }
    }
    let integer = op.d == MmaType::S32;
    let dm: Vec<Vec<u32>> = (0..m)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if integer {
                        // Exact: |a·b| < 2^16, 32 of them and C fit an i64.
                        let s = (0..k)
                            .map(|x| am[i][x] as i64 * bm[x][j] as i64)
                            .sum::<i64>()
                            + cm[i][j] as i64;
                        if op.satfinite {
                            s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                        } else {
                            s as i32 as u32
                        }
                    } else {
                        let s = (0..k).fold(0f64, |acc, x| acc + am[i][x] * bm[x][j]) + cm[i][j];
                        match op.d {
                            MmaType::F16 => u32::from(F16.from_f64(s, Rounding::Rn)),
                            _ => (s as f32).to_bits(),
                        }
                    }
                })
                .collect()
        })
        .collect();
    let nd = op.regs().0;
    let mut d = vec![[0u32; 32]; nd];
    for lane in 0..32 {
        for (r, regs) in d.iter_mut().enumerate() {
            for e in 0..per(op.d) {
                let (i, j) = cd_cell(op.d, lane, r, e);
                let bits = op.d.bits() as usize;
                regs[lane] |= if bits == 32 {
                    dm[i][j]
                } else {
                    (dm[i][j] & 0xffff) << (e * bits)
                };
            }
        }
    }
    d
}

/// (row, column) of element `i` (0 to 7) that `lane` holds of a 16 x 16 `wmma` fragment of
/// matrix `frag` (C for the accumulators, D's too). The PTX ISA leaves the layout unspecified
/// (§9.7.14.4.1); this is the GPU's, `mma.m16n8k16`'s fragments (PTX ISA §9.7.14.5.8) side by
/// side: lane `l` is group `g = l / 4`, thread `t = l % 4`; A's and C's element pairs are rows
/// `g` and `g + 8`, columns `2t, 2t + 1` and those plus 8; B's are the transposed positions.
/// That is how ptxas loads them for sm_90: 4 `LDG.E` of 4 bytes per `.f16` fragment, the second
/// of a row 16 bytes on (tests/fixtures/tensor's wmma, whose global load requests and sectors
/// are then the H200's: 192 and 1536, and 24 `STG.E.64` per row-major f32 store).
pub fn wmma_cell(frag: WmmaFrag, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    let (pair, high) = (2 * t + (i & 1), 8 * ((i >> 1) & 1));
    match frag {
        WmmaFrag::A | WmmaFrag::C => (g + high, pair + 8 * (i >> 2)),
        WmmaFrag::B => (pair + high, g + 8 * (i >> 2)),
    }
}

/// `wmma.mma` m16n16k16 with `.f16` A and B: D's fragments (`.f32` when `d_f32`, else `.f16`
/// pairs) from A's and B's (8 `.f16x2` registers, the first 4 distinct) and C's; computed as
/// [`mma`] computes the f16 forms.
pub fn wmma(d_f32: bool, c_f32: bool, a: &Fragments, b: &Fragments, c: &Fragments) -> Fragments {
    let half = |regs: &Fragments, lane: usize, i: usize| {
        F16.to_f64((regs[i / 2][lane] >> (16 * (i % 2))) as u16)
    };
    let mut am = [[0f64; 16]; 16];
    let mut bm = [[0f64; 16]; 16];
    let mut cm = [[0f64; 16]; 16];
    for lane in 0..32 {
        for i in 0..8 {
            let (r, col) = wmma_cell(WmmaFrag::A, lane, i);
            am[r][col] = half(a, lane, i);
            let (r, col) = wmma_cell(WmmaFrag::B, lane, i);
            bm[r][col] = half(b, lane, i);
            let (r, col) = wmma_cell(WmmaFrag::C, lane, i);
            cm[r][col] = if c_f32 {
                f64::from(f32::from_bits(c[i][lane]))
            } else {
                half(c, lane, i)
            };
        }
    }
    let mut d = vec![[0u32; 32]; if d_f32 { 8 } else { 4 }];
    #[allow(clippy::needless_range_loop)] // `lane` indexes the second dimension of `d`
    for lane in 0..32 {
        for i in 0..8 {
            let (r, col) = wmma_cell(WmmaFrag::C, lane, i);
            let s = (0..16).fold(0f64, |acc, x| acc + am[r][x] * bm[x][col]) + cm[r][col];
            if d_f32 {
                d[i][lane] = (s as f32).to_bits();
            } else {
                d[i / 2][lane] |= u32::from(F16.from_f64(s, Rounding::Rn)) << (16 * (i % 2));
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(k: u8, d: MmaType, a: MmaType) -> MmaOp {
        MmaOp {
            m: 16,
            n: 8,
            k,
            d,
            a,
            b: a,
            c: d,
            satfinite: false,
        }
    }

    /// Every cell of A, B and C/D is held by exactly one (lane, register, element): the
    /// layouts are permutations of the matrices, as the ISA's figures show.
    #[test]
    fn each_cell_has_one_owner() {
        for o in [
            op(16, MmaType::F32, MmaType::F16),
            op(16, MmaType::F16, MmaType::F16),
            op(8, MmaType::F32, MmaType::TF32),
            op(8, MmaType::F16, MmaType::F16),
            op(32, MmaType::S32, MmaType::S8),
            op(16, MmaType::S32, MmaType::S8),
        ] {
            let (nd, na, nb, _) = o.regs();
            let (m, n, k) = (16, 8, usize::from(o.k));
            let mut seen = vec![0; m * k];
            for lane in 0..32 {
                for r in 0..na {
                    for e in 0..per(o.a) {
                        let (i, j) = a_cell(&o, lane, r, e);
                        seen[i * k + j] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "A of {o:?}");
            let mut seen = vec![0; k * n];
            for lane in 0..32 {
                for r in 0..nb {
                    for e in 0..per(o.b) {
                        let (i, j) = b_cell(&o, lane, r, e);
                        seen[i * n + j] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "B of {o:?}");
            let mut seen = vec![0; m * n];
            for lane in 0..32 {
                for r in 0..nd {
                    for e in 0..per(o.d) {
                        let (i, j) = cd_cell(o.d, lane, r, e);
                        seen[i * n + j] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "D of {o:?}");
        }
    }

    #[test]
    fn isa_examples_of_the_layout() {
        let o = op(16, MmaType::F32, MmaType::F16);
        // Lane 5: groupID 1, threadID_in_group 1.
        assert_eq!(a_cell(&o, 5, 0, 1), (1, 3));
        assert_eq!(a_cell(&o, 5, 3, 0), (9, 10));
        assert_eq!(b_cell(&o, 5, 1, 1), (11, 1));
        assert_eq!(cd_cell(MmaType::F32, 5, 2, 0), (9, 2));
        let i8 = op(32, MmaType::S32, MmaType::S8);
        assert_eq!(a_cell(&i8, 5, 2, 3), (1, 23));
        assert_eq!(b_cell(&i8, 5, 1, 0), (20, 1));
    }
}

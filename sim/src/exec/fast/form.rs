//! The pre-decoded forms ([`AluForm`]): which instructions have one ([`AluForm::of`]) and the one
//! plain 32-lane loop per kernel that runs it for a warp ([`AluForm::run`]).

use super::kernel::{LaneOp, Opd, Ord4};
use crate::exec::alu::{mask, order_key, sext_by, sext_shift};
use crate::exec::decode::{DInst, Src, NO_REG};
use crate::ptx::ast::Type;
use crate::ptx::inst::{AluOp, Cmp, MulMode, Op};

/// The f32 value of the low 32 bits of `v` (a register holds an f32 there).
#[inline(always)]
fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

/// An f32 result as its register value.
#[inline(always)]
fn from_f32(f: f32) -> u64 {
    u64::from(f.to_bits())
}

/// An instruction in pre-decoded form: `d[l] = kernel(a[l], b[l], c[l])` for the active lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AluForm {
    /// The operation.
    pub kernel: LaneOp,
    /// Destination register.
    pub d: u16,
    /// Sources (`Imm(0)` where the kernel takes fewer).
    pub a: Opd,
    /// Second source.
    pub b: Opd,
    /// Third source.
    pub c: Opd,
}

/// `$dst = out` where `out[l] = e(x, y, z)` of lane `l` of the sources `$s`: row `a`, and
/// second and third sources `b` and `c` ([`Lanes`]), for all 32 lanes.
macro_rules! each {
    ($s:ident, $dst:expr, |$x:ident, $y:ident, $z:ident| $e:expr) => {{
        let (a, b, c) = $s;
        let mut out = [0u64; 32];
        for l in 0..32 {
            let ($x, $y, $z) = (a[l], b.at(l), c.at(l));
            out[l] = $e;
        }
        $dst = out;
    }};
}

/// `$body` with `$c` bound to third source `$opd` ([`Lanes`]): row `$r[i]` of a register, or
/// one value for an immediate (so that `mul`'s addend of 0 folds away rather than being read
/// from a row of zeros). Only the kernels that read a third source resolve it.
macro_rules! with_c {
    ($opd:expr, $r:expr, |$c:ident| $body:expr) => {{
        match $opd {
            Opd::Reg(i) => {
                let $c: &[u64; 32] = &$r[usize::from(i)];
                $body
            }
            Opd::Imm(v) => {
                let $c = Splat(v);
                $body
            }
        }
    }};
}

/// `$dst[l] = kernel($a[l], $b[l], $c[l])` for all 32 lanes `l`: one loop per kernel, so the
/// compiler sees the operation (and vectorizes most), each arm writing the destination row
/// itself (through a row returned from the match, the compiler went through the stack).
/// `$c` is the third source's [`Opd`], resolved in rows `$r` by the kernels that read it.
macro_rules! compute {
    ($k:expr, $a:expr, $b:expr, $c:expr, $r:expr, $dst:expr) => {{
        let (a, b): (&[u64; 32], _) = ($a, $b);
        let s = (a, b, Splat(0));
        match $k {
            LaneOp::Add(m) => each!(s, $dst, |x, y, _z| x.wrapping_add(y) & m),
            LaneOp::Sub(m) => each!(s, $dst, |x, y, _z| x.wrapping_sub(y) & m),
            LaneOp::And => each!(s, $dst, |x, y, _z| x & y),
            LaneOp::Or => each!(s, $dst, |x, y, _z| x | y),
            LaneOp::Xor => each!(s, $dst, |x, y, _z| x ^ y),
            LaneOp::MulLo(m) => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| x.wrapping_mul(y).wrapping_add(z) & m)
            }),
            LaneOp::MulLo32(m) => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| ((x & 0xffff_ffff) * (y & 0xffff_ffff))
                    .wrapping_add(z)
                    & m)
            }),
            LaneOp::WideS32 { wm } => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| ((x as i32 as i64 * y as i32 as i64)
                    as u64)
                    .wrapping_add(z)
                    & wm)
            }),
            LaneOp::WideS { sh, wm } => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(
                    s,
                    $dst,
                    |x, y, z| (sext_by(x, sh).wrapping_mul(sext_by(y, sh)) as u64).wrapping_add(z)
                        & wm
                )
            }),
            LaneOp::WideU { m, wm } => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| ((x & m) * (y & m)).wrapping_add(z) & wm)
            }),
            LaneOp::Shl { bits, m } => {
                each!(s, $dst, |x, y, _z| if y & 0xffff_ffff >= bits {
                    0
                } else {
                    (x << (y & 0xffff_ffff)) & m
                })
            }
            LaneOp::ShrU { bits, m } => {
                each!(s, $dst, |x, y, _z| if y & 0xffff_ffff >= bits {
                    0
                } else {
                    (x & m) >> (y & 0xffff_ffff)
                })
            }
            LaneOp::ShrS { bits, sh, m } => {
                each!(
                    s,
                    $dst,
                    |x, y, _z| (sext_by(x, sh) >> (y & 0xffff_ffff).min(bits).min(63)) as u64 & m
                )
            }
            LaneOp::Mask(m) => each!(s, $dst, |x, _y, _z| x & m),
            LaneOp::Sext { sh, m } => {
                each!(s, $dst, |x, _y, _z| sext_by(x, sh) as u64 & m)
            }
            LaneOp::Eq(m) => each!(s, $dst, |x, y, _z| u64::from(x & m == y & m)),
            LaneOp::Ne(m) => each!(s, $dst, |x, y, _z| u64::from(x & m != y & m)),
            LaneOp::Order32 { cmp } => {
                let key = |v: u64| v as i32 as i64;
                match cmp {
                    Ord4::Lt => each!(s, $dst, |x, y, _z| u64::from(key(x) < key(y))),
                    Ord4::Le => each!(s, $dst, |x, y, _z| u64::from(key(x) <= key(y))),
                    Ord4::Gt => each!(s, $dst, |x, y, _z| u64::from(key(x) > key(y))),
                    Ord4::Ge => each!(s, $dst, |x, y, _z| u64::from(key(x) >= key(y))),
                }
            }
            LaneOp::Order { cmp, signed, m, sh } => {
                let key = |v| order_key(v, signed, m, sh);
                match cmp {
                    Ord4::Lt => each!(s, $dst, |x, y, _z| u64::from(key(x) < key(y))),
                    Ord4::Le => each!(s, $dst, |x, y, _z| u64::from(key(x) <= key(y))),
                    Ord4::Gt => each!(s, $dst, |x, y, _z| u64::from(key(x) > key(y))),
                    Ord4::Ge => each!(s, $dst, |x, y, _z| u64::from(key(x) >= key(y))),
                }
            }
            // The expressions of `alu::float_warp`, so the results (NaNs included) are its.
            LaneOp::FAdd => each!(s, $dst, |x, y, _z| from_f32(f32_of(x) + f32_of(y))),
            LaneOp::FSub => each!(s, $dst, |x, y, _z| from_f32(f32_of(x) - f32_of(y))),
            LaneOp::FMul => each!(s, $dst, |x, y, _z| from_f32(f32_of(x) * f32_of(y))),
            LaneOp::FFma => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| from_f32(
                    f32_of(x).mul_add(f32_of(y), f32_of(z))
                ))
            }),
        }
    }};
}

impl AluForm {
    /// The pre-decoded form of `inst`, or `None` when it takes the general path.
    pub fn of(inst: &DInst) -> Option<AluForm> {
        let opd = |k: usize| -> Option<Opd> {
            if k >= usize::from(inst.nsrc) {
                return Some(Opd::Imm(0));
            }
            match inst.src[k] {
                Src::Reg(r) => Some(Opd::Reg(r)),
                Src::Imm(v) => Some(Opd::Imm(v)),
                Src::NotPred(_) | Src::Special(_) => None,
            }
        };
        let d = inst.dst[0];
        if d == NO_REG || inst.dst[1] != NO_REG {
            return None;
        }
        let (kernel, a, b, c) = match inst.op {
            Op::Mov(ty) => {
                // From an immediate or a special register the general path writes one value.
                let Some(Opd::Reg(r)) = opd(0) else {
                    return None;
                };
                (
                    LaneOp::Mask(mask(ty.bits().max(8))),
                    Opd::Reg(r),
                    Opd::Imm(0),
                    Opd::Imm(0),
                )
            }
            Op::Cvta { to_space, space } => {
                let window = crate::memory::image::window(space);
                let delta = if to_space {
                    window.wrapping_neg()
                } else {
                    window
                };
                (LaneOp::Add(u64::MAX), opd(0)?, Opd::Imm(delta), Opd::Imm(0))
            }
            Op::Cvt { dst, src, sat, .. }
                if !sat && !src.is_float() && !dst.is_float() && inst.nsrc >= 1 =>
            {
                let dm = mask(dst.bits());
                let k = if src.is_signed() {
                    LaneOp::Sext {
                        sh: sext_shift(src.bits()),
                        m: dm,
                    }
                } else {
                    LaneOp::Mask(mask(src.bits()) & dm)
                };
                (k, opd(0)?, Opd::Imm(0), Opd::Imm(0))
            }
            Op::Alu { op, ty, mode, sat } if !ty.is_float() && !sat => {
                let bits = ty.bits();
                let (m, sh) = (mask(bits), sext_shift(bits));
                let k = match (op, mode) {
                    (AluOp::Add, MulMode::None) => LaneOp::Add(m),
                    (AluOp::Sub, MulMode::None) => LaneOp::Sub(m),
                    (AluOp::And, _) => LaneOp::And,
                    (AluOp::Or, _) => LaneOp::Or,
                    (AluOp::Xor, _) => LaneOp::Xor,
                    (AluOp::Mul | AluOp::Mad, MulMode::Lo | MulMode::None) if bits <= 32 => {
                        LaneOp::MulLo32(m)
                    }
                    (AluOp::Mul | AluOp::Mad, MulMode::Lo | MulMode::None) => LaneOp::MulLo(m),
                    (AluOp::Mul | AluOp::Mad, MulMode::Wide) if bits <= 32 => {
                        let wm = mask(bits * 2);
                        if ty.is_signed() && bits == 32 {
                            LaneOp::WideS32 { wm }
                        } else if bits == 32 {
                            // The common `mul.wide.u32`: `WideU`'s 32-bit factor masks and
                            // 64-bit result mask are `MulLo32`'s with `m` of 64 bits, whose
                            // constant factor masks let the compiler use a 32 x 32 -> 64-bit
                            // vector multiply (a runtime mask made it a 64-bit one).
                            LaneOp::MulLo32(wm)
                        } else if ty.is_signed() {
                            LaneOp::WideS { sh, wm }
                        } else {
                            LaneOp::WideU { m, wm }
                        }
                    }
                    (AluOp::Shl, MulMode::None) => LaneOp::Shl {
                        bits: u64::from(bits),
                        m,
                    },
                    (AluOp::Shr, MulMode::None) if ty.is_signed() => LaneOp::ShrS {
                        bits: u64::from(bits),
                        sh,
                        m,
                    },
                    (AluOp::Shr, MulMode::None) => LaneOp::ShrU {
                        bits: u64::from(bits),
                        m,
                    },
                    _ => return None,
                };
                // `mul` has no addend: the general path reads a third source of zeros.
                let c = if op == AluOp::Mad {
                    opd(2)?
                } else {
                    Opd::Imm(0)
                };
                (k, opd(0)?, opd(1)?, c)
            }
            // The common f32 arithmetic: `.ftz` and `.rn` compute as without them on the
            // general path too; directed rounding is `Op::FloatRnd`, `.sat` stays general.
            Op::Alu {
                op,
                ty: Type::F32,
                mode: MulMode::None,
                sat: false,
            } => {
                let k = match op {
                    AluOp::Add => LaneOp::FAdd,
                    AluOp::Sub => LaneOp::FSub,
                    AluOp::Mul => LaneOp::FMul,
                    AluOp::Mad | AluOp::Fma => LaneOp::FFma,
                    _ => return None,
                };
                // A third source only for the fused forms (the general path reads zeros).
                let c = if k == LaneOp::FFma {
                    opd(2)?
                } else {
                    Opd::Imm(0)
                };
                (k, opd(0)?, opd(1)?, c)
            }
            Op::Setp {
                cmp,
                bool_op: None,
                ty,
            } if !ty.is_float() => {
                let (bits, signed) = (ty.bits(), ty.is_signed());
                let (m, sh) = (mask(bits), sext_shift(bits));
                let order = |cmp| {
                    if signed && bits == 32 {
                        LaneOp::Order32 { cmp }
                    } else {
                        LaneOp::Order { cmp, signed, m, sh }
                    }
                };
                let k = match cmp {
                    Cmp::Eq | Cmp::Equ => LaneOp::Eq(m),
                    Cmp::Ne | Cmp::Neu => LaneOp::Ne(m),
                    Cmp::Lt | Cmp::Ltu => order(Ord4::Lt),
                    Cmp::Le | Cmp::Leu => order(Ord4::Le),
                    Cmp::Gt | Cmp::Gtu => order(Ord4::Gt),
                    Cmp::Ge | Cmp::Geu => order(Ord4::Ge),
                    _ => return None,
                };
                (k, opd(0)?, opd(1)?, Opd::Imm(0))
            }
            _ => return None,
        };
        Some(AluForm { kernel, d, a, b, c })
    }

    /// Executes the form on register file `regs` (`[reg * 32 + lane]`) for the lanes of `exec`;
    /// the other lanes' destination values stay as they were.
    ///
    /// A full warp reads the source rows in place and writes the destination row in the same
    /// arm, once they are read (each lane reads only its own lane of the sources, and a source
    /// may be the destination itself), so the compiler keeps the lanes in vector registers; an
    /// immediate second source stays one value rather than a row spread on the stack.
    #[inline]
    pub fn run(&self, regs: &mut [u64], exec: u32) {
        self.run_inline(regs, exec);
    }

    /// [`AluForm::run`], inlined into the warp loop's straight-line path.
    #[inline(always)]
    pub(crate) fn run_inline(&self, regs: &mut [u64], exec: u32) {
        if exec == u32::MAX {
            self.run_full(regs);
        } else {
            self.run_lanes(regs, exec);
        }
    }

    /// [`AluForm::run`] for all 32 lanes.
    #[inline(always)]
    fn run_full(&self, regs: &mut [u64]) {
        let rows = regs.as_chunks_mut::<32>().0;
        let d = usize::from(self.d);
        let r: &[[u64; 32]] = rows;
        // An immediate first source is built on the stack only when present.
        let sa;
        let a = match self.a {
            Opd::Reg(i) => &r[usize::from(i)],
            Opd::Imm(v) => {
                sa = [v; 32];
                &sa
            }
        };
        match self.b {
            Opd::Reg(i) => compute!(self.kernel, a, &r[usize::from(i)], self.c, r, rows[d]),
            Opd::Imm(v) => compute!(self.kernel, a, Splat(v), self.c, r, rows[d]),
        }
    }

    /// [`AluForm::run`] for a partial warp, out of line (rare: divergence, guards, a partial last
    /// warp): all 32 lanes, then the other lanes' old values back.
    #[inline(never)]
    fn run_lanes(&self, regs: &mut [u64], exec: u32) {
        let d0 = usize::from(self.d) * 32;
        let old: [u64; 32] = regs[d0..][..32].try_into().expect("32 lanes");
        self.run_full(regs);
        let dst = &mut regs[d0..][..32];
        let mut m = !exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            dst[l] = old[l];
        }
    }
}

/// A source's value per lane: a register's row, or one value for every lane ([`Splat`]), so
/// that the compiler keeps an immediate in a register instead of reading a row of copies.
trait Lanes: Copy {
    /// The value of lane `l`.
    fn at(self, l: usize) -> u64;
}

impl Lanes for &[u64; 32] {
    #[inline(always)]
    fn at(self, l: usize) -> u64 {
        self[l]
    }
}

/// One value for every lane.
#[derive(Clone, Copy)]
struct Splat(u64);

impl Lanes for Splat {
    #[inline(always)]
    fn at(self, _: usize) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::alu;
    use crate::exec::fast::tests::inst;
    use crate::ptx::ast::StateSpace;

    /// A deterministic stream of values that mixes small, signed-looking and full-width bits.
    fn values(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 4 {
                0 => x % 70,
                1 => x | 0xffff_ffff_0000_0000,
                2 => x & 0xffff_ffff,
                _ => x,
            }
        }
    }

    /// Runs `inst`'s form on random registers r1..r3 (or its immediates) under `exec` and checks
    /// each lane against `reference(a, b, c)`, inactive lanes unchanged.
    fn check(inst: &DInst, exec: u32, seed: u64, reference: impl Fn(u64, u64, u64) -> u64) {
        let form = AluForm::of(inst).unwrap_or_else(|| panic!("{:?} has a form", inst.op));
        let mut next = values(seed);
        let mut regs: Vec<u64> = (0..4 * 32).map(|_| next()).collect();
        let before = regs.clone();
        form.run(&mut regs, exec);
        let val = |k: usize, l: usize| match inst.src.get(k) {
            Some(Src::Reg(r)) if k < usize::from(inst.nsrc) => before[usize::from(*r) * 32 + l],
            Some(Src::Imm(v)) if k < usize::from(inst.nsrc) => *v,
            _ => 0,
        };
        for l in 0..32 {
            let want = if exec >> l & 1 == 1 {
                reference(val(0, l), val(1, l), val(2, l))
            } else {
                before[l]
            };
            assert_eq!(regs[l], want, "{:?} lane {l}", inst.op);
        }
    }

    const INT_TYPES: [Type; 8] = [
        Type::U16,
        Type::S16,
        Type::U32,
        Type::S32,
        Type::B32,
        Type::U64,
        Type::S64,
        Type::B64,
    ];

    #[test]
    fn integer_alu_forms_compute_what_alu_warp_computes() {
        let ops = [
            (AluOp::Add, MulMode::None, 2),
            (AluOp::Sub, MulMode::None, 2),
            (AluOp::And, MulMode::None, 2),
            (AluOp::Or, MulMode::None, 2),
            (AluOp::Xor, MulMode::None, 2),
            (AluOp::Mul, MulMode::Lo, 2),
            (AluOp::Mad, MulMode::Lo, 3),
            (AluOp::Mul, MulMode::Wide, 2),
            (AluOp::Mad, MulMode::Wide, 3),
            (AluOp::Shl, MulMode::None, 2),
            (AluOp::Shr, MulMode::None, 2),
        ];
        let mut seed = 1;
        for ty in INT_TYPES {
            for (op, mode, n) in ops {
                if mode == MulMode::Wide && ty.bits() > 32 {
                    continue;
                }
                let alu_op = Op::Alu {
                    op,
                    ty,
                    mode,
                    sat: false,
                };
                let reference = |a: u64, b: u64, c: u64| {
                    let (mut out, exec) = ([0u64; 32], 1);
                    alu::alu_warp(
                        op, ty, mode, false, &[a; 32], &[b; 32], &[c; 32], exec, &mut out,
                    );
                    out[0]
                };
                let regs = [Src::Reg(1), Src::Reg(2), Src::Reg(3)];
                let imm = [Src::Reg(1), Src::Imm(seed % 40), Src::Reg(3)];
                for exec in [u32::MAX, 0x8000_0001, 0x00ff_ff00] {
                    seed += 1;
                    check(&inst(alu_op, &regs[..n]), exec, seed, reference);
                    check(&inst(alu_op, &imm[..n]), exec, seed, reference);
                }
            }
        }
    }

    /// f32 values with the edge cases in their low 32 bits: zeros of both signs, subnormals,
    /// infinities, NaNs (quiet, signalling, with payloads), the largest finite values; random
    /// bits (NaNs among them) otherwise, and high bits set, which the forms ignore.
    fn f32_values(seed: u64) -> impl FnMut() -> u64 {
        const EDGES: [u32; 14] = [
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_1234,
            0x7f80_0001,
            0x7fa0_0000,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x3f80_0000,
        ];
        let mut next = values(seed);
        move || {
            let x = next();
            match x % 5 {
                0 => u64::from(EDGES[(x >> 8) as usize % EDGES.len()]),
                1 => u64::from(f32::to_bits((x >> 16) as i16 as f32 / 7.0)),
                2 => x | 0xdead_0000_0000_0000,
                _ => x & 0xffff_ffff,
            }
        }
    }

    #[test]
    fn f32_forms_compute_what_alu_warp_computes() {
        let ops = [
            (AluOp::Add, 2),
            (AluOp::Sub, 2),
            (AluOp::Mul, 2),
            (AluOp::Fma, 3),
            (AluOp::Mad, 3),
        ];
        let mut seed = 500;
        for (op, n) in ops {
            let alu_op = Op::Alu {
                op,
                ty: Type::F32,
                mode: MulMode::None,
                sat: false,
            };
            let imm = [Src::Reg(1), Src::Imm(0x4040_0000), Src::Imm(0)];
            let srcs: [&[Src]; 3] = [
                &[Src::Reg(1), Src::Reg(2), Src::Reg(3)][..n],
                &imm[..n],
                // The destination as a source (`fma %f1, %f2, %f3, %f1`).
                &[Src::Reg(2), Src::Reg(3), Src::Reg(0)][..n],
            ];
            for exec in [u32::MAX, 0x8000_0001, 0x00ff_ff00, 0] {
                for s in srcs {
                    seed += 1;
                    let inst = inst(alu_op, s);
                    let form = AluForm::of(&inst).unwrap_or_else(|| panic!("{op:?} has a form"));
                    assert!(form.kernel.flops().is_some());
                    for round in 0..20 {
                        let mut next = f32_values(seed * 100 + round);
                        let mut regs: Vec<u64> = (0..4 * 32).map(|_| next()).collect();
                        // The general path's sources: rows of the registers or immediates.
                        let row = |k: usize| -> [u64; 32] {
                            match s.get(k) {
                                Some(Src::Reg(r)) => {
                                    regs[usize::from(*r) * 32..][..32].try_into().unwrap()
                                }
                                Some(Src::Imm(v)) => [*v; 32],
                                _ => [0; 32],
                            }
                        };
                        let (a, b, c) = (row(0), row(1), row(2));
                        let mut want: [u64; 32] = regs[..32].try_into().unwrap();
                        alu::alu_warp(
                            op,
                            Type::F32,
                            MulMode::None,
                            false,
                            &a,
                            &b,
                            &c,
                            exec,
                            &mut want,
                        );
                        form.run(&mut regs, exec);
                        // Rust leaves a NaN result's payload open (LLVM may swap an `fadd`'s
                        // operands, and a release build does), so any NaN matches any NaN.
                        let nan_as_one = |v: u64| {
                            if f32::from_bits(v as u32).is_nan() {
                                v & !0xffff_ffff | 0x7fc0_0000
                            } else {
                                v
                            }
                        };
                        let got = regs[..32].iter().map(|&v| nan_as_one(v));
                        assert!(
                            got.eq(want.iter().map(|&v| nan_as_one(v))),
                            "{op:?} {s:?} exec {exec:#x}: {:?} against {want:?}",
                            &regs[..32]
                        );
                    }
                }
            }
        }
        // `.sat`, f64 and the operations without a form keep the general path.
        let general = [
            (AluOp::Add, Type::F32, true),
            (AluOp::Add, Type::F64, false),
            (AluOp::Fma, Type::F64, false),
            (AluOp::Div, Type::F32, false),
            (AluOp::Min, Type::F32, false),
        ];
        for (op, ty, sat) in general {
            let op = Op::Alu {
                op,
                ty,
                mode: MulMode::None,
                sat,
            };
            assert_eq!(AluForm::of(&inst(op, &[Src::Reg(1), Src::Reg(2)])), None);
        }
    }

    #[test]
    fn integer_setp_forms_compute_what_compare_warp_computes() {
        let cmps = [
            Cmp::Eq,
            Cmp::Ne,
            Cmp::Lt,
            Cmp::Le,
            Cmp::Gt,
            Cmp::Ge,
            Cmp::Ltu,
            Cmp::Geu,
        ];
        let mut seed = 100;
        for ty in INT_TYPES {
            for cmp in cmps {
                let op = Op::Setp {
                    cmp,
                    bool_op: None,
                    ty,
                };
                let reference = |a: u64, b: u64, _| {
                    let mut out = [0u64; 32];
                    alu::compare_warp(cmp, ty, &[a; 32], &[b; 32], 1, &mut out);
                    out[0]
                };
                for exec in [u32::MAX, 0x0f0f_0f0f] {
                    seed += 1;
                    check(
                        &inst(op, &[Src::Reg(1), Src::Reg(2)]),
                        exec,
                        seed,
                        reference,
                    );
                    check(
                        &inst(op, &[Src::Reg(1), Src::Imm(7)]),
                        exec,
                        seed,
                        reference,
                    );
                    // Equal operands: the order comparisons' boundary.
                    check(
                        &inst(op, &[Src::Reg(1), Src::Reg(1)]),
                        exec,
                        seed,
                        reference,
                    );
                }
            }
        }
    }

    #[test]
    fn mov_cvt_and_cvta_forms_compute_what_the_warp_loop_computes() {
        let mut seed = 1000;
        for ty in INT_TYPES {
            let m = alu::mask(ty.bits().max(8));
            seed += 1;
            check(
                &inst(Op::Mov(ty), &[Src::Reg(1)]),
                u32::MAX,
                seed,
                |a, _, _| a & m,
            );
            for src in INT_TYPES {
                let op = Op::Cvt {
                    dst: ty,
                    src,
                    rnd: None,
                    sat: false,
                };
                seed += 1;
                check(&inst(op, &[Src::Reg(1)]), 0xffff_0000, seed, |a, _, _| {
                    alu::convert(ty, src, None, false, a)
                });
            }
        }
        for space in [StateSpace::Global, StateSpace::Shared, StateSpace::Local] {
            for to_space in [true, false] {
                let window = crate::memory::image::window(space);
                let op = Op::Cvta { to_space, space };
                seed += 1;
                check(&inst(op, &[Src::Reg(1)]), u32::MAX, seed, |a, _, _| {
                    if to_space {
                        a.wrapping_sub(window)
                    } else {
                        a.wrapping_add(window)
                    }
                });
            }
        }
    }
}

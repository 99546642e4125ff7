//! Pre-decoded forms of the common integer instructions (wasmi's idea: decide once per launch what
//! an instruction is, not once per execution).
//!
//! Index arithmetic dominates ordinary kernels: `mad.lo.s32`, `mul.wide.s32`, `add.s64`,
//! `cvt.u64.u32`, `cvta.to.global.u64`, `setp.ge.s32` and the like, each on registers or an
//! immediate. [`Form::of`] turns such an instruction into a [`Kernel`] (the operation with its
//! widths and masks worked out) and resolved operands; [`Form::run`] executes it for a warp with
//! one dispatch and one plain 32-lane loop. Everything else (floats, `.sat`, `.hi`, special
//! registers, negated predicates, other operations) keeps the general path of the warp loop
//! (`exec::step`), which [`Form::of`] signals with `None`.
//!
//! Each kernel computes exactly what the general path computes ([`super::alu::alu_warp`],
//! [`super::alu::compare_warp`] and the `mov`, `cvt` and `cvta` arms of the warp loop); the tests
//! below check that for every kernel on random operands and masks.

use super::alu::{mask, order_key, sext_by, sext_shift};
use super::decode::{DInst, Src, NO_REG};
use crate::ptx::inst::{AluOp, Cmp, MulMode, Op};

/// A source operand of a pre-decoded form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opd {
    /// A register's 32 lanes.
    Reg(u16),
    /// One value for every lane.
    Imm(u64),
}

/// What a form computes per lane from sources `x`, `y`, `z` (unused ones ignored). Masks are the
/// low-bits masks of [`mask`]; `sh` a sign-extension shift of [`sext_shift`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `(x + y) & m`.
    Add(u64),
    /// `(x - y) & m`.
    Sub(u64),
    /// `x & y` (bitwise results of operands within the width stay within it).
    And,
    /// `x | y`.
    Or,
    /// `x ^ y`.
    Xor,
    /// `(x * y + z) & m`: `mul.lo`, `mad.lo` (`z` is 0 for `mul`).
    MulLo(u64),
    /// `mul.wide`/`mad.wide` of signed values of shift `sh`: `(sext(x) * sext(y) + z) & wm`.
    WideS {
        /// Sign-extension shift of the source width.
        sh: u32,
        /// Mask of twice the source width.
        wm: u64,
    },
    /// `mul.wide`/`mad.wide` of unsigned values: `((x & m) * (y & m) + z) & wm`.
    WideU {
        /// Mask of the source width.
        m: u64,
        /// Mask of twice the source width.
        wm: u64,
    },
    /// `shl`: `x << y` within `bits` (0 once `y` reaches the width).
    Shl {
        /// Type width.
        bits: u64,
        /// Its mask.
        m: u64,
    },
    /// Logical `shr`.
    ShrU {
        /// Type width.
        bits: u64,
        /// Its mask.
        m: u64,
    },
    /// Arithmetic `shr`.
    ShrS {
        /// Type width.
        bits: u64,
        /// Its sign-extension shift.
        sh: u32,
        /// Its mask.
        m: u64,
    },
    /// `x & m`: `mov` of a register, `cvt` between unsigned integers.
    Mask(u64),
    /// `sext(x) & m`: `cvt` from a signed integer of shift `sh`.
    Sext {
        /// Sign-extension shift of the source width.
        sh: u32,
        /// Mask of the destination width.
        m: u64,
    },
    /// `setp.eq` of integers: `x & m == y & m`.
    Eq(u64),
    /// `setp.ne` of integers.
    Ne(u64),
    /// `setp` ordering integers by [`super::alu::order_key`] (unsigned order of the keys is
    /// the type's order).
    Order {
        /// The comparison: `Lt`, `Le`, `Gt` or `Ge`.
        cmp: Ord4,
        /// A signed type.
        signed: bool,
        /// The width's mask.
        m: u64,
        /// The width's sign-extension shift.
        sh: u32,
    },
}

/// The four ordering comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ord4 {
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// An instruction in pre-decoded form: `d[l] = kernel(a[l], b[l], c[l])` for the active lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// The operation.
    pub kernel: Kernel,
    /// Destination register.
    pub d: u16,
    /// Sources (`Imm(0)` where the kernel takes fewer).
    pub a: Opd,
    /// Second source.
    pub b: Opd,
    /// Third source.
    pub c: Opd,
}

impl Form {
    /// The pre-decoded form of `inst`, or `None` when it takes the general path.
    pub fn of(inst: &DInst) -> Option<Form> {
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
                    Kernel::Mask(mask(ty.bits().max(8))),
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
                (Kernel::Add(u64::MAX), opd(0)?, Opd::Imm(delta), Opd::Imm(0))
            }
            Op::Cvt { dst, src, sat, .. }
                if !sat && !src.is_float() && !dst.is_float() && inst.nsrc >= 1 =>
            {
                let dm = mask(dst.bits());
                let k = if src.is_signed() {
                    Kernel::Sext {
                        sh: sext_shift(src.bits()),
                        m: dm,
                    }
                } else {
                    Kernel::Mask(mask(src.bits()) & dm)
                };
                (k, opd(0)?, Opd::Imm(0), Opd::Imm(0))
            }
            Op::Alu { op, ty, mode, sat } if !ty.is_float() && !sat => {
                let bits = ty.bits();
                let (m, sh) = (mask(bits), sext_shift(bits));
                let k = match (op, mode) {
                    (AluOp::Add, MulMode::None) => Kernel::Add(m),
                    (AluOp::Sub, MulMode::None) => Kernel::Sub(m),
                    (AluOp::And, _) => Kernel::And,
                    (AluOp::Or, _) => Kernel::Or,
                    (AluOp::Xor, _) => Kernel::Xor,
                    (AluOp::Mul | AluOp::Mad, MulMode::Lo | MulMode::None) => Kernel::MulLo(m),
                    (AluOp::Mul | AluOp::Mad, MulMode::Wide) if bits <= 32 => {
                        let wm = mask(bits * 2);
                        if ty.is_signed() {
                            Kernel::WideS { sh, wm }
                        } else {
                            Kernel::WideU { m, wm }
                        }
                    }
                    (AluOp::Shl, MulMode::None) => Kernel::Shl {
                        bits: u64::from(bits),
                        m,
                    },
                    (AluOp::Shr, MulMode::None) if ty.is_signed() => Kernel::ShrS {
                        bits: u64::from(bits),
                        sh,
                        m,
                    },
                    (AluOp::Shr, MulMode::None) => Kernel::ShrU {
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
            Op::Setp {
                cmp,
                bool_op: None,
                ty,
            } if !ty.is_float() => {
                let (bits, signed) = (ty.bits(), ty.is_signed());
                let (m, sh) = (mask(bits), sext_shift(bits));
                let order = |cmp| Kernel::Order { cmp, signed, m, sh };
                let k = match cmp {
                    Cmp::Eq | Cmp::Equ => Kernel::Eq(m),
                    Cmp::Ne | Cmp::Neu => Kernel::Ne(m),
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
        Some(Form { kernel, d, a, b, c })
    }

    /// Executes the form on register file `regs` (`[reg * 32 + lane]`) for the lanes of `exec`;
    /// the other lanes' destination values stay as they were.
    #[inline]
    pub fn run(&self, regs: &mut [u64], exec: u32) {
        let out = {
            let regs: &[u64] = regs;
            // Immediates are spread on the stack only when present (no zeroed scratch rows).
            let (sa, sb, sc);
            let a = match self.a {
                Opd::Reg(r) => reg_row(regs, r),
                Opd::Imm(v) => {
                    sa = [v; 32];
                    &sa
                }
            };
            let b = match self.b {
                Opd::Reg(r) => reg_row(regs, r),
                Opd::Imm(0) => &ZEROS,
                Opd::Imm(v) => {
                    sb = [v; 32];
                    &sb
                }
            };
            let c = match self.c {
                Opd::Reg(r) => reg_row(regs, r),
                Opd::Imm(0) => &ZEROS,
                Opd::Imm(v) => {
                    sc = [v; 32];
                    &sc
                }
            };
            compute(self.kernel, a, b, c)
        };
        let dst: &mut [u64; 32] = (&mut regs[usize::from(self.d) * 32..][..32])
            .try_into()
            .expect("32 lanes");
        if exec == u32::MAX {
            *dst = out;
        } else {
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                dst[l] = out[l];
            }
        }
    }
}

/// 32 lanes of zeros: the value of a source a kernel does not read.
static ZEROS: [u64; 32] = [0; 32];

/// Register `r`'s 32 lanes.
#[inline(always)]
fn reg_row(regs: &[u64], r: u16) -> &[u64; 32] {
    (&regs[usize::from(r) * 32..][..32])
        .try_into()
        .expect("32 lanes")
}

/// `kernel(a[l], b[l], c[l])` for all 32 lanes `l`: one loop per kernel, so the compiler
/// sees the operation (and vectorizes most).
#[inline(always)]
fn compute(k: Kernel, a: &[u64; 32], b: &[u64; 32], c: &[u64; 32]) -> [u64; 32] {
    macro_rules! each {
        (|$x:ident, $y:ident, $z:ident| $e:expr) => {{
            std::array::from_fn(|l| {
                let ($x, $y, $z) = (a[l], b[l], c[l]);
                $e
            })
        }};
    }
    match k {
        Kernel::Add(m) => each!(|x, y, _z| x.wrapping_add(y) & m),
        Kernel::Sub(m) => each!(|x, y, _z| x.wrapping_sub(y) & m),
        Kernel::And => each!(|x, y, _z| x & y),
        Kernel::Or => each!(|x, y, _z| x | y),
        Kernel::Xor => each!(|x, y, _z| x ^ y),
        Kernel::MulLo(m) => each!(|x, y, z| x.wrapping_mul(y).wrapping_add(z) & m),
        Kernel::WideS { sh, wm } => {
            each!(
                |x, y, z| (sext_by(x, sh).wrapping_mul(sext_by(y, sh)) as u64).wrapping_add(z) & wm
            )
        }
        Kernel::WideU { m, wm } => each!(|x, y, z| ((x & m) * (y & m)).wrapping_add(z) & wm),
        Kernel::Shl { bits, m } => {
            each!(|x, y, _z| if y & 0xffff_ffff >= bits {
                0
            } else {
                (x << (y & 0xffff_ffff)) & m
            })
        }
        Kernel::ShrU { bits, m } => {
            each!(|x, y, _z| if y & 0xffff_ffff >= bits {
                0
            } else {
                (x & m) >> (y & 0xffff_ffff)
            })
        }
        Kernel::ShrS { bits, sh, m } => {
            each!(|x, y, _z| (sext_by(x, sh) >> (y & 0xffff_ffff).min(bits).min(63)) as u64 & m)
        }
        Kernel::Mask(m) => each!(|x, _y, _z| x & m),
        Kernel::Sext { sh, m } => each!(|x, _y, _z| sext_by(x, sh) as u64 & m),
        Kernel::Eq(m) => each!(|x, y, _z| u64::from(x & m == y & m)),
        Kernel::Ne(m) => each!(|x, y, _z| u64::from(x & m != y & m)),
        Kernel::Order { cmp, signed, m, sh } => {
            let key = |v| order_key(v, signed, m, sh);
            match cmp {
                Ord4::Lt => each!(|x, y, _z| u64::from(key(x) < key(y))),
                Ord4::Le => each!(|x, y, _z| u64::from(key(x) <= key(y))),
                Ord4::Gt => each!(|x, y, _z| u64::from(key(x) > key(y))),
                Ord4::Ge => each!(|x, y, _z| u64::from(key(x) >= key(y))),
            }
        }
    }
}

/// The pre-decoded form of each instruction of a program (`None`: the general path), made once
/// per launch.
pub fn forms(insts: &[DInst]) -> Vec<Option<Form>> {
    insts.iter().map(Form::of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::alu;
    use crate::ptx::ast::{StateSpace, Type};

    /// An instruction `op d=r0, sources` (registers r1.. or immediates).
    fn inst(op: Op, srcs: &[Src]) -> DInst {
        let mut src = [Src::Imm(0); 4];
        src[..srcs.len()].copy_from_slice(srcs);
        DInst {
            op,
            guard: NO_REG,
            guard_negated: false,
            dst: [0, NO_REG, NO_REG, NO_REG],
            src,
            nsrc: srcs.len() as u8,
            addr: None,
            target: 0,
        }
    }

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
        let form = Form::of(inst).unwrap_or_else(|| panic!("{:?} has a form", inst.op));
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

    #[test]
    fn other_instructions_keep_the_general_path() {
        let float_add = Op::Alu {
            op: AluOp::Add,
            ty: Type::F32,
            mode: MulMode::None,
            sat: false,
        };
        let sat_add = Op::Alu {
            op: AluOp::Add,
            ty: Type::S32,
            mode: MulMode::None,
            sat: true,
        };
        let mul_hi = Op::Alu {
            op: AluOp::Mul,
            ty: Type::S32,
            mode: MulMode::Hi,
            sat: false,
        };
        let two = [Src::Reg(1), Src::Reg(2)];
        assert_eq!(Form::of(&inst(float_add, &two)), None);
        assert_eq!(Form::of(&inst(sat_add, &two)), None);
        assert_eq!(Form::of(&inst(mul_hi, &two)), None);
        // A special register or a negated predicate as a source, a mov of an immediate.
        let tid = Src::Special(crate::ptx::ast::Special::Tid(0));
        let add = Op::Alu {
            op: AluOp::Add,
            ty: Type::U32,
            mode: MulMode::None,
            sat: false,
        };
        assert_eq!(Form::of(&inst(add, &[tid, Src::Reg(1)])), None);
        assert_eq!(Form::of(&inst(add, &[Src::NotPred(1), Src::Reg(1)])), None);
        assert_eq!(Form::of(&inst(Op::Mov(Type::U32), &[Src::Imm(3)])), None);
        assert!(Form::of(&inst(add, &two)).is_some());
    }
}

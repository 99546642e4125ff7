//! Pre-decoded forms of the common integer instructions (wasmi's idea: decide once per launch what
//! an instruction is, not once per execution).
//!
//! Index arithmetic dominates ordinary kernels: `mad.lo.s32`, `mul.wide.s32`, `add.s64`,
//! `cvt.u64.u32`, `cvta.to.global.u64`, `setp.ge.s32` and the like, each on registers or an
//! immediate. [`Form::of`] turns such an instruction into a [`Kernel`] (the operation with its
//! widths and masks worked out) and resolved operands; [`Form::run`] executes it for a warp with
//! one dispatch and one plain 32-lane loop. The common f32 arithmetic (`add`, `sub`, `mul`,
//! `fma`/`mad` to nearest, without `.sat`) has forms too. Everything else (other floats, `.sat`,
//! `.hi`, special registers, negated predicates, other operations) keeps the general path of the
//! warp loop (`exec::step`), which [`Form::of`] signals with `None`.
//!
//! [`forms`] makes the table the warp loop reads, one [`Pre`] per instruction: the forms, and
//! the [`Fast`] entries a converged warp runs without the general path (kernel parameters, moves
//! of values uniform over a launch or a block, `%tid`, branches and exits).
//!
//! Each kernel computes exactly what the general path computes ([`super::alu::alu_warp`],
//! [`super::alu::compare_warp`] and the `mov`, `cvt` and `cvta` arms of the warp loop); the tests
//! below check that for every kernel on random operands and masks.

use super::alu::{mask, order_key, sext_by, sext_shift};
use super::decode::{Addr, DInst, Src, NO_REG};
use crate::memory::image::read_le;
use crate::ptx::ast::{Special, StateSpace, Type};
use crate::ptx::inst::{AluOp, Cmp, MemOp, MulMode, Op};

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
    /// [`Kernel::MulLo`] of a width up to 32 bits: the low 32 bits of the product only depend
    /// on those of the factors, so one 32 x 32 -> 64-bit multiply per lane does. With `m` of
    /// 64 bits it is also `mul.wide.u32`/`mad.wide.u32` ([`Kernel::WideU`] of 32-bit sources).
    MulLo32(u64),
    /// `mul.wide`/`mad.wide` of signed values of shift `sh`: `(sext(x) * sext(y) + z) & wm`.
    WideS {
        /// Sign-extension shift of the source width.
        sh: u32,
        /// Mask of twice the source width.
        wm: u64,
    },
    /// [`Kernel::WideS`] of 32-bit sources (the common `mul.wide.s32`): a signed 32 x 32 ->
    /// 64-bit multiply per lane.
    WideS32 {
        /// Mask of 64 bits.
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
    /// `setp` ordering signed 32-bit integers (the common `setp.lt.s32` and the like): their
    /// sign extensions compared as `i64`, which orders them as [`super::alu::order_key`] does.
    Order32 {
        /// The comparison: `Lt`, `Le`, `Gt` or `Ge`.
        cmp: Ord4,
    },
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
    /// `add.f32` (`.rn` or none, no `.sat`): the f32 sum of the low 32 bits of `x` and `y`.
    FAdd,
    /// `sub.f32`.
    FSub,
    /// `mul.f32`.
    FMul,
    /// `fma.rn.f32` and `mad.f32` (fused, PTX ISA: `mad.f32` is `fma.rn.f32` on sm_20+).
    FFma,
}

/// The kind of thread-level float operation a kernel counts as ([`Kernel::flops`]): its index
/// in `[fadd, fmul, ffma]` of the counters.
pub type FlopKind = usize;

impl Kernel {
    /// The float counter a kernel adds its threads to (`Counters::fadd_threads`, `fmul_threads`,
    /// `ffma_threads` as 0, 1, 2), as the general path's `count_flops` does; `None` for integer
    /// kernels.
    #[inline(always)]
    pub fn flops(self) -> Option<FlopKind> {
        match self {
            Kernel::FAdd | Kernel::FSub => Some(0),
            Kernel::FMul => Some(1),
            Kernel::FFma => Some(2),
            _ => None,
        }
    }
}

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
            Kernel::Add(m) => each!(s, $dst, |x, y, _z| x.wrapping_add(y) & m),
            Kernel::Sub(m) => each!(s, $dst, |x, y, _z| x.wrapping_sub(y) & m),
            Kernel::And => each!(s, $dst, |x, y, _z| x & y),
            Kernel::Or => each!(s, $dst, |x, y, _z| x | y),
            Kernel::Xor => each!(s, $dst, |x, y, _z| x ^ y),
            Kernel::MulLo(m) => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| x.wrapping_mul(y).wrapping_add(z) & m)
            }),
            Kernel::MulLo32(m) => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| ((x & 0xffff_ffff) * (y & 0xffff_ffff))
                    .wrapping_add(z)
                    & m)
            }),
            Kernel::WideS32 { wm } => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| ((x as i32 as i64 * y as i32 as i64)
                    as u64)
                    .wrapping_add(z)
                    & wm)
            }),
            Kernel::WideS { sh, wm } => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(
                    s,
                    $dst,
                    |x, y, z| (sext_by(x, sh).wrapping_mul(sext_by(y, sh)) as u64).wrapping_add(z)
                        & wm
                )
            }),
            Kernel::WideU { m, wm } => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| ((x & m) * (y & m)).wrapping_add(z) & wm)
            }),
            Kernel::Shl { bits, m } => {
                each!(s, $dst, |x, y, _z| if y & 0xffff_ffff >= bits {
                    0
                } else {
                    (x << (y & 0xffff_ffff)) & m
                })
            }
            Kernel::ShrU { bits, m } => {
                each!(s, $dst, |x, y, _z| if y & 0xffff_ffff >= bits {
                    0
                } else {
                    (x & m) >> (y & 0xffff_ffff)
                })
            }
            Kernel::ShrS { bits, sh, m } => {
                each!(
                    s,
                    $dst,
                    |x, y, _z| (sext_by(x, sh) >> (y & 0xffff_ffff).min(bits).min(63)) as u64 & m
                )
            }
            Kernel::Mask(m) => each!(s, $dst, |x, _y, _z| x & m),
            Kernel::Sext { sh, m } => {
                each!(s, $dst, |x, _y, _z| sext_by(x, sh) as u64 & m)
            }
            Kernel::Eq(m) => each!(s, $dst, |x, y, _z| u64::from(x & m == y & m)),
            Kernel::Ne(m) => each!(s, $dst, |x, y, _z| u64::from(x & m != y & m)),
            Kernel::Order32 { cmp } => {
                let key = |v: u64| v as i32 as i64;
                match cmp {
                    Ord4::Lt => each!(s, $dst, |x, y, _z| u64::from(key(x) < key(y))),
                    Ord4::Le => each!(s, $dst, |x, y, _z| u64::from(key(x) <= key(y))),
                    Ord4::Gt => each!(s, $dst, |x, y, _z| u64::from(key(x) > key(y))),
                    Ord4::Ge => each!(s, $dst, |x, y, _z| u64::from(key(x) >= key(y))),
                }
            }
            Kernel::Order { cmp, signed, m, sh } => {
                let key = |v| order_key(v, signed, m, sh);
                match cmp {
                    Ord4::Lt => each!(s, $dst, |x, y, _z| u64::from(key(x) < key(y))),
                    Ord4::Le => each!(s, $dst, |x, y, _z| u64::from(key(x) <= key(y))),
                    Ord4::Gt => each!(s, $dst, |x, y, _z| u64::from(key(x) > key(y))),
                    Ord4::Ge => each!(s, $dst, |x, y, _z| u64::from(key(x) >= key(y))),
                }
            }
            // The expressions of `alu::float_warp`, so the results (NaNs included) are its.
            Kernel::FAdd => each!(s, $dst, |x, y, _z| from_f32(f32_of(x) + f32_of(y))),
            Kernel::FSub => each!(s, $dst, |x, y, _z| from_f32(f32_of(x) - f32_of(y))),
            Kernel::FMul => each!(s, $dst, |x, y, _z| from_f32(f32_of(x) * f32_of(y))),
            Kernel::FFma => with_c!($c, $r, |c| {
                let s = (a, b, c);
                each!(s, $dst, |x, y, z| from_f32(
                    f32_of(x).mul_add(f32_of(y), f32_of(z))
                ))
            }),
        }
    }};
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
                    (AluOp::Mul | AluOp::Mad, MulMode::Lo | MulMode::None) if bits <= 32 => {
                        Kernel::MulLo32(m)
                    }
                    (AluOp::Mul | AluOp::Mad, MulMode::Lo | MulMode::None) => Kernel::MulLo(m),
                    (AluOp::Mul | AluOp::Mad, MulMode::Wide) if bits <= 32 => {
                        let wm = mask(bits * 2);
                        if ty.is_signed() && bits == 32 {
                            Kernel::WideS32 { wm }
                        } else if bits == 32 {
                            // The common `mul.wide.u32`: `WideU`'s 32-bit factor masks and
                            // 64-bit result mask are `MulLo32`'s with `m` of 64 bits, whose
                            // constant factor masks let the compiler use a 32 x 32 -> 64-bit
                            // vector multiply (a runtime mask made it a 64-bit one).
                            Kernel::MulLo32(wm)
                        } else if ty.is_signed() {
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
            // The common f32 arithmetic: `.ftz` and `.rn` compute as without them on the
            // general path too; directed rounding is `Op::FloatRnd`, `.sat` stays general.
            Op::Alu {
                op,
                ty: Type::F32,
                mode: MulMode::None,
                sat: false,
            } => {
                let k = match op {
                    AluOp::Add => Kernel::FAdd,
                    AluOp::Sub => Kernel::FSub,
                    AluOp::Mul => Kernel::FMul,
                    AluOp::Mad | AluOp::Fma => Kernel::FFma,
                    _ => return None,
                };
                // A third source only for the fused forms (the general path reads zeros).
                let c = if k == Kernel::FFma {
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
                        Kernel::Order32 { cmp }
                    } else {
                        Kernel::Order { cmp, signed, m, sh }
                    }
                };
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
    ///
    /// A full warp reads the source rows in place and writes the destination row in the same
    /// arm, once they are read (each lane reads only its own lane of the sources, and a source
    /// may be the destination itself), so the compiler keeps the lanes in vector registers; an
    /// immediate second source stays one value rather than a row spread on the stack.
    #[inline]
    pub fn run(&self, regs: &mut [u64], exec: u32) {
        self.run_inline(regs, exec);
    }

    /// [`Form::run`], inlined into the warp loop's straight-line path.
    #[inline(always)]
    pub(crate) fn run_inline(&self, regs: &mut [u64], exec: u32) {
        if exec == u32::MAX {
            self.run_full(regs);
        } else {
            self.run_lanes(regs, exec);
        }
    }

    /// [`Form::run`] for all 32 lanes.
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

    /// [`Form::run`] for a partial warp, out of line (rare: divergence, guards, a partial last
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

/// What the warp loop does with one instruction, decided once per launch ([`forms`]).
///
/// Besides the integer [`Form`]s, the instructions whose value is the same for every lane of a
/// launch or a block (kernel parameters, `%ntid`, `%ctaid`, immediates and symbol addresses),
/// the `%tid` rows and the control flow of a converged warp run in the warp loop's straight-line
/// path (`exec::step`), which does each one's bookkeeping itself. Every variant but
/// [`Fast::Form`], [`Fast::Bra`] and [`Fast::Nop`] is made for unguarded instructions only.
///
/// An explicit one-byte tag (`repr(u8)`), so that the warp loop's dispatch on it is one jump
/// table (a tag in a niche of [`Kernel`]'s was first mapped to the variant's index by a few
/// instructions per entry).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum Fast {
    /// The general path of the warp loop.
    General,
    /// An integer form.
    Form(Form),
    /// `d[l] = v` (`mov` of an immediate, a symbol's address, `%ntid` or `%nctaid`); `imc`:
    /// the source is a constant-bank operand, one IMC request (`%ntid`, `%nctaid`).
    Bcast {
        /// Destination register.
        d: u16,
        /// The value, masked to the type.
        v: u64,
        /// Counts an IMC request.
        imc: bool,
    },
    /// `ld.param` of one scalar at a fixed offset: `d[l] = v`, through the uniform datapath
    /// (`exec::mem`'s `param_model`: an IDC request that hits for 8 bytes, else an IMC request;
    /// the IMC latency).
    Param {
        /// Destination register.
        d: u16,
        /// The parameter's value, sign-extended by a signed type.
        v: u64,
        /// An 8-byte parameter.
        wide: bool,
    },
    /// `mov` from `%ctaid.c`: `d[l] = ctaid[c] & m`.
    Ctaid {
        /// Destination register.
        d: u16,
        /// Dimension, below 3.
        c: u8,
        /// The type's mask.
        m: u64,
    },
    /// `mov` from `%tid.c`: `d[l] = tid[c][l] & m`.
    Tid {
        /// Destination register.
        d: u16,
        /// Dimension, below 3.
        c: u8,
        /// The type's mask.
        m: u64,
    },
    /// `bra` to `target`.
    Bra {
        /// Instruction index.
        target: u32,
    },
    /// `ret` or `exit`.
    Exit,
    /// `bar.warp.sync`: nothing to do for a simulator whose warps run in lock step.
    Nop,
    /// `ld` or `st` (guarded or not): the straight-line path hands it to the memory path
    /// itself rather than leaving for the general path (`exec::step`'s `mem_step`), with what
    /// its plan decided once for the launch.
    Mem(MemPlan),
}

/// What kind of whole-warp 32-bit access a load or store is ([`MemPlan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// None of the others: the general memory path.
    General,
    /// `ld.global` of one 32-bit element into a register.
    GlobalLoad,
    /// `st.global` of one 32-bit register.
    GlobalStore,
    /// `ld.shared` of one 32-bit element into a register.
    SharedLoad,
    /// `st.shared` of one 32-bit register.
    SharedStore,
}

/// A load or store decided once per launch: which of the common whole-warp accesses of 32-bit
/// scalars it is (`exec::mem`'s `word_access`: a named global or shared space, a register base,
/// a register destination or value), with its operands, so that each execution skips the
/// general path's dispatch on the operation, the space, the width and the operands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemPlan {
    /// The kind; [`Word::General`] leaves the other fields unused.
    pub word: Word,
    /// The load's or store's details.
    pub m: MemOp,
    /// The address's base register.
    pub base: u16,
    /// The address's byte offset, as the general path adds it (wrapping).
    pub off: u64,
    /// A load's destination register, a store's value register.
    pub reg: u16,
}

impl MemPlan {
    /// The plan of load or store `inst`.
    pub fn of(inst: &DInst) -> MemPlan {
        let general = MemPlan {
            word: Word::General,
            m: MemOp {
                space: StateSpace::Generic,
                cache: crate::ptx::inst::CacheOp::Default,
                vec: 1,
                ty: Type::U32,
                volatile: false,
                nc: false,
            },
            base: NO_REG,
            off: 0,
            reg: NO_REG,
        };
        #[cfg(test)]
        if tests::WORD_GENERAL.get() {
            return general;
        }
        let (m, store) = match inst.op {
            Op::Ld(m) => (m, false),
            Op::St(m) => (m, true),
            _ => return general,
        };
        let Some(Addr {
            base: Src::Reg(base),
            offset,
        }) = inst.addr
        else {
            return general;
        };
        let reg = match (store, inst.src[0]) {
            (true, Src::Reg(r)) => r,
            (false, _) if inst.dst[0] != NO_REG => inst.dst[0],
            _ => return general,
        };
        if m.vec != 1 || m.ty.bytes() != 4 {
            return general;
        }
        let word = match (m.space, store) {
            (StateSpace::Global, false) => Word::GlobalLoad,
            (StateSpace::Global, true) => Word::GlobalStore,
            (StateSpace::Shared, false) => Word::SharedLoad,
            (StateSpace::Shared, true) => Word::SharedStore,
            _ => return general,
        };
        MemPlan {
            word,
            m,
            base,
            off: offset as u64,
            reg,
        }
    }
}

/// The pre-decoded entry of one instruction: what it is and its guard.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pre {
    /// What the warp loop does.
    pub op: Fast,
    /// Guard predicate register, or [`NO_REG`].
    pub guard: u16,
    /// `@!p`.
    pub negated: bool,
    /// The end of the run of [`Pre::plain`] entries from this one: the first PC at or after
    /// this one whose entry is not plain (this PC itself when its entry is not).
    pub run_end: u32,
    /// The end of the segment from this entry ([`Pre::in_segment`]): the first PC at or after
    /// this one whose entry is in none (this PC itself when its entry is not in one).
    pub seg_end: u32,
    /// A plain entry whose value is the same whenever it runs in the launch on one register
    /// file: a kernel parameter, a broadcast, `%tid` where each register file runs one warp of
    /// every block ([`forms`]), or a form of immediates and such entries' registers, each the
    /// only writer of its register in the program. Once it has filled its register's row for
    /// all lanes of a register file (and its sources theirs), running it again writes the same
    /// values over them, which the warp loop skips ([`invariants`]).
    pub invariant: bool,
    /// The first PC after this one whose entry is not invariant (the program's length when
    /// none is): a settled register file steps from entry to entry by it, leaving the
    /// invariant ones out ([`mark_next`]).
    pub next: u32,
}

impl Pre {
    /// An entry a converged warp runs for all its live lanes with nothing to decide or count
    /// apart: unguarded, and neither control flow nor the general path.
    pub fn plain(&self) -> bool {
        self.guard == NO_REG
            && matches!(
                self.op,
                Fast::Form(_)
                    | Fast::Bcast { .. }
                    | Fast::Param { .. }
                    | Fast::Ctaid { .. }
                    | Fast::Tid { .. }
                    | Fast::Nop
            )
    }

    /// An entry a full, converged warp runs in a segment (`exec::step`'s `Ctx::segment`): a
    /// plain entry, a load or store whose plan is a whole-warp access of 32-bit words
    /// ([`MemPlan`]), guarded or not (its guard is tested there), a branch (guarded or not:
    /// one that no lane takes goes on in the segment, one that every lane takes ends it) or an
    /// exit. Such a run of entries needs its bookkeeping once: each executes once for every
    /// lane, in order, unless a word access leaves its instruction to the memory path or a
    /// branch diverges, which ends the segment there.
    pub fn in_segment(&self) -> bool {
        match self.op {
            Fast::Mem(p) => p.word != Word::General,
            Fast::Bra { .. } | Fast::Exit => true,
            _ => self.plain(),
        }
    }

    /// The destination register of a parameter, broadcast, `%tid` or form, and the form's
    /// source registers.
    pub fn writes(&self) -> Option<(u16, [Option<u16>; 3])> {
        let reg = |o: Opd| match o {
            Opd::Reg(r) => Some(r),
            Opd::Imm(_) => None,
        };
        match self.op {
            Fast::Bcast { d, .. } | Fast::Param { d, .. } | Fast::Tid { d, .. } => {
                Some((d, [None; 3]))
            }
            Fast::Form(f) => Some((f.d, [reg(f.a), reg(f.b), reg(f.c)])),
            _ => None,
        }
    }
}

impl Fast {
    /// The entry of `inst` in `launch`, or [`Fast::General`].
    pub fn of(inst: &DInst, launch: &super::Launch) -> Fast {
        if let Some(f) = Form::of(inst) {
            return Fast::Form(f);
        }
        match inst.op {
            Op::Bra => {
                return Fast::Bra {
                    target: inst.target,
                }
            }
            Op::WarpSync => return Fast::Nop,
            #[cfg(test)]
            Op::Ld(_) | Op::St(_) if tests::MEM_GENERAL.get() => return Fast::General,
            // Not an `ld.param` at a fixed offset ([`Fast::Param`], below).
            Op::Ld(m) if param(inst, m, &launch.params).is_none() || inst.guard != NO_REG => {
                return Fast::Mem(MemPlan::of(inst))
            }
            Op::St(_) => return Fast::Mem(MemPlan::of(inst)),
            _ => {}
        }
        let d = inst.dst[0];
        if inst.guard != NO_REG || (d == NO_REG && !matches!(inst.op, Op::Exit | Op::Ret)) {
            return Fast::General;
        }
        match inst.op {
            Op::Exit | Op::Ret => Fast::Exit,
            Op::Mov(ty) if inst.nsrc >= 1 => {
                let m = mask(ty.bits().max(8));
                let block = launch.dims.block;
                match inst.src[0] {
                    Src::Imm(v) => Fast::Bcast {
                        d,
                        v: v & m,
                        imc: false,
                    },
                    Src::Special(Special::Ntid(c)) if c < 3 => Fast::Bcast {
                        d,
                        v: u64::from(block[usize::from(c)]) & m,
                        imc: true,
                    },
                    Src::Special(Special::Nctaid(c)) if c < 3 => Fast::Bcast {
                        d,
                        v: u64::from(launch.dims.grid[usize::from(c)]) & m,
                        imc: true,
                    },
                    Src::Special(Special::Ctaid(c)) if c < 3 => Fast::Ctaid { d, c, m },
                    Src::Special(Special::Tid(c)) if c < 3 => Fast::Tid { d, c, m },
                    _ => Fast::General,
                }
            }
            Op::Ld(m) => param(inst, m, &launch.params).unwrap_or(Fast::Mem(MemPlan::of(inst))),
            _ => Fast::General,
        }
    }
}

/// The [`Fast::Param`] of `ld.param` instruction `inst` (one element at a fixed offset inside
/// the parameter buffer `params`), with the value `exec::mem` reads.
fn param(inst: &DInst, m: MemOp, params: &[u8]) -> Option<Fast> {
    let Some(Addr {
        base: Src::Imm(base),
        offset,
    }) = inst.addr
    else {
        return None;
    };
    if m.space != StateSpace::Param || m.vec != 1 {
        return None;
    }
    let at = base.wrapping_add(offset as u64) as usize;
    let x = read_le(params, at, m.ty.bytes() as usize)?;
    let v = if m.ty.is_signed() {
        super::alu::sext(x, m.ty.bits()) as u64
    } else {
        x
    };
    Some(Fast::Param {
        d: inst.dst[0],
        v,
        wide: m.ty.bytes() == 8,
    })
}

/// The pre-decoded entry of each instruction of `launch`'s program, made once per launch.
/// `tid_fixed`: each register file runs one warp of every block (a kernel with barriers, whose
/// warps each have their own file: `exec::run_batch_on_sm`), so that `%tid` is invariant too.
pub fn forms(launch: &super::Launch, tid_fixed: bool) -> Vec<Pre> {
    let mut pre: Vec<Pre> = launch
        .program
        .insts
        .iter()
        .map(|i| Pre {
            op: Fast::of(i, launch),
            guard: i.guard,
            negated: i.guard_negated,
            run_end: 0,
            seg_end: 0,
            invariant: false,
            next: 0,
        })
        .collect();
    mark_runs(&mut pre);
    invariants(&mut pre, &launch.program.insts, tid_fixed);
    mark_next(&mut pre);
    pre
}

/// The registers the invariant entries of `pre` write ([`Pre::invariant`]).
pub fn invariant_registers(pre: &[Pre]) -> Vec<u16> {
    (pre.iter().filter(|p| p.invariant))
        .filter_map(|p| p.writes().map(|(d, _)| d))
        .collect()
}

/// Sets each entry's [`Pre::next`] (once [`invariants`] has marked them), from the last back.
pub fn mark_next(pre: &mut [Pre]) {
    let mut next = pre.len() as u32;
    for (pc, p) in pre.iter_mut().enumerate().rev() {
        p.next = next;
        if !p.invariant {
            next = pc as u32;
        }
    }
}

/// Marks the invariant entries ([`Pre::invariant`]) of the program `insts` (whose entries are
/// `pre`): parameters and broadcasts first (and `%tid` when `tid_fixed`: each register file runs
/// the same warp of every block, with the same `%tid`), then forms of their registers, until
/// none is added.
pub fn invariants(pre: &mut [Pre], insts: &[DInst], tid_fixed: bool) {
    let regs = insts
        .iter()
        .flat_map(|i| i.dst)
        .filter(|&d| d != NO_REG)
        .map(|d| usize::from(d) + 1)
        .max()
        .unwrap_or(0);
    let mut writers = vec![0u32; regs];
    for d in insts.iter().flat_map(|i| i.dst).filter(|&d| d != NO_REG) {
        writers[usize::from(d)] += 1;
    }
    // Registers whose only writer is an invariant entry.
    let mut fixed = vec![false; regs];
    loop {
        let mut added = false;
        for p in pre.iter_mut().filter(|p| !p.invariant && p.plain()) {
            let Some((d, srcs)) = p.writes() else {
                continue;
            };
            let sole = writers.get(usize::from(d)) == Some(&1);
            let from_fixed = srcs
                .iter()
                .flatten()
                .all(|&r| r != d && fixed.get(usize::from(r)) == Some(&true));
            let varies =
                matches!(p.op, Fast::Nop) || (!tid_fixed && matches!(p.op, Fast::Tid { .. }));
            if sole && from_fixed && !varies {
                p.invariant = true;
                fixed[usize::from(d)] = true;
                added = true;
            }
        }
        if !added {
            return;
        }
    }
}

/// Sets each entry's [`Pre::run_end`] and [`Pre::seg_end`], from the last entry back. A
/// segment ends after an exit or an unguarded branch: no warp runs on past them in it (and a
/// segment copies the stream entries of all its PCs before it runs: those of the PCs after
/// would only be taken back).
fn mark_runs(pre: &mut [Pre]) {
    let (mut end, mut seg) = (pre.len() as u32, pre.len() as u32);
    for (pc, p) in pre.iter_mut().enumerate().rev() {
        if !p.plain() {
            end = pc as u32;
        }
        if !p.in_segment() {
            seg = pc as u32;
        } else if matches!(p.op, Fast::Exit)
            || (matches!(p.op, Fast::Bra { .. }) && p.guard == NO_REG)
        {
            seg = pc as u32 + 1;
        }
        p.run_end = end;
        p.seg_end = seg;
        #[cfg(test)]
        if tests::SEGMENTS_OFF.get() {
            p.seg_end = pc as u32;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    thread_local! {
        /// Loads and stores take the general path rather than [`Fast::Mem`] (in launches
        /// whose entries are made on this thread), to compare the two.
        pub(crate) static MEM_GENERAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Loads and stores of converged warps get [`Word::General`] plans (in launches whose
        /// entries are made on this thread): the memory path rather than `word_access`.
        pub(crate) static WORD_GENERAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// No entry is in a segment (in launches whose entries are made on this thread): the
        /// straight-line path runs entry by entry, and loads and stores go to the memory path.
        pub(crate) static SEGMENTS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
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
                    let form = Form::of(&inst).unwrap_or_else(|| panic!("{op:?} has a form"));
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
            assert_eq!(Form::of(&inst(op, &[Src::Reg(1), Src::Reg(2)])), None);
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

    /// A launch of `insts` with parameter buffer `params`, grid (5, 1, 1) of blocks (96, 2, 1).
    fn launch_of<'a>(
        program: &'a super::super::Program,
        params: Vec<u8>,
    ) -> super::super::Launch<'a> {
        super::super::Launch {
            label: "t",
            program,
            params,
            dims: super::super::Dims {
                grid: [5, 1, 1],
                block: [96, 2, 1],
            },
            shared_bytes: 0,
            local_bytes: 0,
            registers: 16,
            cache_global_loads: true,
            bank_width: 4,
            max_warp_instructions: 1000,
            progress: None,
            sampling: super::super::Sampling::Full,
        }
    }

    /// Whole-warp word plans for 32-bit scalars of the global and shared spaces at a register
    /// base; the general plan for everything else.
    #[test]
    fn memory_plans_pick_the_word_accesses() {
        use crate::ptx::inst::CacheOp;
        let mem = |space, ty: Type, vec, store: bool, base: Src, reg: Src| {
            let m = MemOp {
                space,
                cache: CacheOp::Default,
                vec,
                ty,
                volatile: false,
                nc: false,
            };
            let mut i = inst(if store { Op::St(m) } else { Op::Ld(m) }, &[reg]);
            if store {
                i.dst[0] = NO_REG;
            } else {
                i.nsrc = 0;
                i.dst[0] = 5;
            }
            i.addr = Some(Addr { base, offset: -8 });
            MemPlan::of(&i)
        };
        let (g, sh) = (StateSpace::Global, StateSpace::Shared);
        let (r, v) = (Src::Reg(2), Src::Reg(7));
        let p = mem(g, Type::F32, 1, false, r, v);
        assert_eq!(
            (p.word, p.base, p.off, p.reg),
            (Word::GlobalLoad, 2, (-8i64) as u64, 5)
        );
        let p = mem(sh, Type::S32, 1, true, r, v);
        assert_eq!((p.word, p.base, p.reg), (Word::SharedStore, 2, 7));
        assert_eq!(mem(g, Type::U32, 1, true, r, v).word, Word::GlobalStore);
        assert_eq!(mem(sh, Type::B32, 1, false, r, v).word, Word::SharedLoad);
        for p in [
            mem(g, Type::U64, 1, false, r, v),
            mem(g, Type::U32, 2, false, r, v),
            mem(g, Type::U16, 1, true, r, v),
            mem(StateSpace::Generic, Type::U32, 1, false, r, v),
            mem(StateSpace::Local, Type::U32, 1, true, r, v),
            mem(StateSpace::Const, Type::U32, 1, false, r, v),
            mem(g, Type::U32, 1, false, Src::Imm(64), v),
            mem(sh, Type::U32, 1, true, r, Src::Imm(3)),
        ] {
            assert_eq!(p.word, Word::General);
        }
    }

    #[test]
    fn uniform_movs_params_and_control_flow_have_entries() {
        use crate::ptx::ast::Special;
        use crate::ptx::inst::{CacheOp, MemOp};
        let ld = |ty: Type, offset: i64| {
            let mut i = inst(
                Op::Ld(MemOp {
                    space: StateSpace::Param,
                    cache: CacheOp::Default,
                    vec: 1,
                    ty,
                    volatile: false,
                    nc: false,
                }),
                &[],
            );
            i.addr = Some(Addr {
                base: Src::Imm(0),
                offset,
            });
            i
        };
        let mut bra = inst(Op::Bra, &[]);
        (bra.dst[0], bra.target, bra.guard) = (NO_REG, 7, 3);
        let mut guarded_mov = inst(Op::Mov(Type::U32), &[Src::Imm(3)]);
        guarded_mov.guard = 3;
        let mut ret = inst(Op::Ret, &[]);
        ret.dst[0] = NO_REG;
        let insts = vec![
            ld(Type::U64, 0),
            ld(Type::S32, 8),
            ld(Type::U32, 8),
            ld(Type::U32, 12),
            inst(Op::Mov(Type::U16), &[Src::Imm(0x1_2345)]),
            inst(Op::Mov(Type::U32), &[Src::Special(Special::Ntid(1))]),
            inst(Op::Mov(Type::U32), &[Src::Special(Special::Ctaid(0))]),
            inst(Op::Mov(Type::U32), &[Src::Special(Special::Tid(2))]),
            inst(Op::Mov(Type::U32), &[Src::Special(Special::LaneId)]),
            guarded_mov,
            bra,
            ret,
        ];
        let program = super::super::Program {
            name: "t".into(),
            lines: vec![0; insts.len()],
            texts: vec![String::new(); insts.len()],
            insts,
            num_regs: 4,
            reg_slots: vec![1; 4],
        };
        let mut params = 0x1122_3344_5566_7788u64.to_le_bytes().to_vec();
        params.extend((-2i32).to_le_bytes());
        let launch = launch_of(&program, params);
        let got: Vec<Fast> = forms(&launch, false).iter().map(|p| p.op).collect();
        let want = [
            Fast::Param {
                d: 0,
                v: 0x1122_3344_5566_7788,
                wide: true,
            },
            Fast::Param {
                d: 0,
                v: (-2i64) as u64,
                wide: false,
            },
            Fast::Param {
                d: 0,
                v: 0xffff_fffe,
                wide: false,
            },
            // Past the end of the buffer: the memory path reports it.
            Fast::Mem(MemPlan::of(&program.insts[3])),
            Fast::Bcast {
                d: 0,
                v: 0x2345,
                imc: false,
            },
            Fast::Bcast {
                d: 0,
                v: 2,
                imc: true,
            },
            Fast::Ctaid {
                d: 0,
                c: 0,
                m: 0xffff_ffff,
            },
            Fast::Tid {
                d: 0,
                c: 2,
                m: 0xffff_ffff,
            },
            Fast::General,
            Fast::General,
            Fast::Bra { target: 7 },
            Fast::Exit,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn other_instructions_keep_the_general_path() {
        let float_add = Op::Alu {
            op: AluOp::Add,
            ty: Type::F64,
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

    /// Runs of plain entries end at the next entry that is not plain, or at the program's end;
    /// segments at the next entry neither plain, a word access, a branch nor an exit, or after
    /// an unguarded branch or an exit.
    #[test]
    fn runs_end_at_entries_that_are_not_plain() {
        let pre = |op: Fast, guard: u16| Pre {
            op,
            guard,
            negated: false,
            run_end: 0,
            seg_end: 0,
            invariant: false,
            next: 0,
        };
        let bcast = Fast::Bcast {
            d: 0,
            v: 1,
            imc: false,
        };
        let general = MemPlan::of(&inst(Op::Exit, &[]));
        let word = MemPlan {
            word: Word::SharedLoad,
            ..general
        };
        let mut p = vec![
            pre(bcast, NO_REG),
            pre(Fast::Nop, NO_REG),
            pre(Fast::Bra { target: 0 }, NO_REG),
            pre(bcast, NO_REG),
            pre(Fast::Nop, 3), // guarded
            pre(Fast::General, NO_REG),
            pre(bcast, NO_REG),
            pre(Fast::Mem(word), NO_REG),
            pre(Fast::Mem(word), 3), // guarded: tested in the segment
            pre(bcast, NO_REG),
            pre(Fast::Mem(general), NO_REG),
            pre(Fast::Mem(word), NO_REG),
        ];
        mark_runs(&mut p);
        let ends: Vec<u32> = p.iter().map(|p| p.run_end).collect();
        assert_eq!(ends, [2, 2, 2, 4, 4, 5, 7, 7, 8, 10, 10, 11]);
        let segs: Vec<u32> = p.iter().map(|p| p.seg_end).collect();
        assert_eq!(segs, [3, 3, 3, 4, 4, 5, 10, 10, 10, 10, 10, 12]);
    }

    /// Parameters and broadcasts are invariant, and forms of their registers, when each is
    /// its register's only writer; a register written by a general instruction, twice, or by
    /// the form itself is not.
    #[test]
    fn invariant_entries_follow_their_sources() {
        let with_dst = |d: u16| {
            let mut i = inst(Op::Exit, &[]);
            i.dst[0] = d;
            i
        };
        let form = |d: u16, a: Opd, b: Opd| {
            Fast::Form(Form {
                kernel: Kernel::Add(u64::MAX),
                d,
                a,
                b,
                c: Opd::Imm(0),
            })
        };
        let bcast = |d: u16| Fast::Bcast {
            d,
            v: 7,
            imc: false,
        };
        let ops = [
            form(2, Opd::Reg(1), Opd::Imm(4)), // r2 = r1 + 4: invariant once r1 is
            bcast(1),                          // r1 = 7
            Fast::General,                     // r4 = a load
            form(3, Opd::Reg(2), Opd::Reg(4)), // r3 = r2 + r4: r4 varies
            bcast(5),                          // r5 = 7, written twice
            bcast(5),
            form(6, Opd::Reg(6), Opd::Imm(1)), // r6 = r6 + 1: itself
            Fast::Param {
                d: 7,
                v: 1,
                wide: true,
            },
            Fast::Tid {
                d: 8,
                c: 0,
                m: u64::MAX,
            },
            form(9, Opd::Reg(8), Opd::Reg(7)), // r9 = %tid.x + r7: invariant with %tid
            Fast::Ctaid {
                d: 10,
                c: 0,
                m: u64::MAX,
            },
        ];
        let dsts = [2, 1, 4, 3, 5, 5, 6, 7, 8, 9, 10];
        let insts: Vec<DInst> = dsts.iter().map(|&d| with_dst(d)).collect();
        let mut pre: Vec<Pre> = ops
            .iter()
            .map(|&op| Pre {
                op,
                guard: NO_REG,
                negated: false,
                run_end: 0,
                seg_end: 0,
                invariant: false,
                next: 0,
            })
            .collect();
        let fresh = pre.clone();
        invariants(&mut pre, &insts, false);
        let got: Vec<bool> = pre.iter().map(|p| p.invariant).collect();
        let (t, f) = (true, false);
        assert_eq!(got, [t, t, f, f, f, f, f, t, f, f, f]);
        // Register files that each run one warp of every block: `%tid` is invariant too.
        let mut pre = fresh;
        invariants(&mut pre, &insts, true);
        let got: Vec<bool> = pre.iter().map(|p| p.invariant).collect();
        assert_eq!(got, [t, t, f, f, f, f, f, t, t, t, f]);
        // Each entry's next entry that is not invariant.
        mark_next(&mut pre);
        let next: Vec<u32> = pre.iter().map(|p| p.next).collect();
        assert_eq!(next, [2, 2, 3, 4, 5, 6, 10, 10, 10, 10, 11]);
    }
}

//! The operations of the pre-decoded forms ([`LaneOp`]: each with its widths and masks worked
//! out), their operands ([`Opd`]), the ordering comparisons and the float counter a kernel adds
//! to.

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
///
/// [`mask`]: crate::exec::alu::mask
/// [`sext_shift`]: crate::exec::alu::sext_shift
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneOp {
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
    /// [`LaneOp::MulLo`] of a width up to 32 bits: the low 32 bits of the product only depend
    /// on those of the factors, so one 32 x 32 -> 64-bit multiply per lane does. With `m` of
    /// 64 bits it is also `mul.wide.u32`/`mad.wide.u32` ([`LaneOp::WideU`] of 32-bit sources).
    MulLo32(u64),
    /// `mul.wide`/`mad.wide` of signed values of shift `sh`: `(sext(x) * sext(y) + z) & wm`.
    WideS {
        /// Sign-extension shift of the source width.
        sh: u32,
        /// Mask of twice the source width.
        wm: u64,
    },
    /// [`LaneOp::WideS`] of 32-bit sources (the common `mul.wide.s32`): a signed 32 x 32 ->
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
    /// sign extensions compared as `i64`, which orders them as `alu::order_key` does.
    Order32 {
        /// The comparison: `Lt`, `Le`, `Gt` or `Ge`.
        cmp: Ord4,
    },
    /// `setp` ordering integers by `alu::order_key` (unsigned order of the keys is
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

/// The kind of thread-level float operation a kernel counts as ([`LaneOp::flops`]): its index
/// in `[fadd, fmul, ffma]` of the counters.
pub type FlopKind = usize;

impl LaneOp {
    /// The float counter a kernel adds its threads to (`Counters::fadd_threads`, `fmul_threads`,
    /// `ffma_threads` as 0, 1, 2), as the general path's `count_flops` does; `None` for integer
    /// kernels.
    #[inline(always)]
    pub fn flops(self) -> Option<FlopKind> {
        match self {
            LaneOp::FAdd | LaneOp::FSub => Some(0),
            LaneOp::FMul => Some(1),
            LaneOp::FFma => Some(2),
            _ => None,
        }
    }
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

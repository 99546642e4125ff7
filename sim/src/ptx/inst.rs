//! Typed PTX operations: an opcode and its modifiers, checked at parse time.
//!
//! `ld.global.ca.v4.f32` becomes `Op::Ld(MemOp { space: Global, cache: Ca, vec: 4, ty: F32, .. })`.
//! Modifiers may come in any order; one the simulator does not model is an error naming it (a
//! silently dropped cache operator would falsify the counters). Section names refer to the PTX ISA
//! manual (version 8.x), chapter 9 "Instruction Set".
//!
//! This file holds the operations and their modifiers ([`Op`]); the decoder of an opcode and
//! its modifiers ([`decode`](fn@decode)) is in `decode`, and the opcodes and forms it gained for
//! "any kernel" coverage in `ext`.

use crate::ptx::ast::{StateSpace, Type};

mod decode;
mod ext;
mod half;
mod tensor;
mod texture;

pub use decode::{decode, SUPPORTED};
pub use tensor::{mma_reg_type, CpAsync, MatrixOp, MmaOp, MmaType, WmmaFrag, WmmaOp};
pub use texture::{SurfClamp, SurfOp, TexDim, TexOp};

/// Cache operator of a load or store (PTX ISA §9.7.9.1 "Cache Operators").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheOp {
    /// No operator given: `.ca` for loads, `.wb` for stores.
    #[default]
    Default,
    /// `.ca`: cache at all levels.
    Ca,
    /// `.cg`: cache in L2, not L1.
    Cg,
    /// `.cs`: streaming, evict first.
    Cs,
    /// `.lu`: last use.
    Lu,
    /// `.cv`: volatile, fetch again.
    Cv,
    /// `.wb`: write back.
    Wb,
    /// `.wt`: write through.
    Wt,
}

/// The details of `ld`/`st` (PTX ISA §9.7.9.8 `ld`, §9.7.9.10 `st`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemOp {
    /// State space (`Generic` when none given).
    pub space: StateSpace,
    /// Cache operator.
    pub cache: CacheOp,
    /// Vector width: 1, 2 or 4 elements.
    pub vec: u8,
    /// Element type.
    pub ty: Type,
    /// `.volatile`.
    pub volatile: bool,
    /// `ld.global.nc`: the non-coherent read-only (texture) path.
    pub nc: bool,
}

impl MemOp {
    /// Bytes one thread moves (element size × vector width).
    pub fn bytes_per_thread(&self) -> u32 {
        self.ty.bytes() * u32::from(self.vec)
    }
}

/// Integer and floating-point operations that compute one value per lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AluOp {
    Add,
    Sub,
    Mul,
    Mad,
    Fma,
    Div,
    Rem,
    Min,
    Max,
    Neg,
    Abs,
    And,
    Or,
    Xor,
    Not,
    CNot,
    Shl,
    Shr,
    Popc,
    Clz,
    Brev,
    Rcp,
    Sqrt,
    Rsqrt,
    /// `ex2.approx`: 2^a (computed exactly, then rounded to the type).
    Ex2,
    /// `lg2.approx`: log2(a).
    Lg2,
    /// `sin.approx`.
    Sin,
    /// `cos.approx`.
    Cos,
    /// `tanh.approx`.
    Tanh,
    /// `copysign d, a, b`: b's magnitude with a's sign.
    Copysign,
    /// `sad d, a, b, c`: c + |a - b|.
    Sad,
    /// `mul24.{lo,hi}`: product of the low 24 bits.
    Mul24,
    /// `mad24.{lo,hi}`: `mul24` plus c.
    Mad24,
    /// `min.NaN`: a NaN input gives the canonical NaN.
    MinNan,
    /// `max.NaN`.
    MaxNan,
    /// `min.xorsign.abs`: min(|a|, |b|) with the sign sign(a) xor sign(b).
    MinXorsign,
    /// `max.xorsign.abs`.
    MaxXorsign,
}

/// Which part of a product `mul`/`mad` keeps (PTX ISA §9.7.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MulMode {
    /// Not a multiply, or a float multiply.
    None,
    /// `.lo`: low half.
    Lo,
    /// `.hi`: high half.
    Hi,
    /// `.wide`: the full product, twice the width.
    Wide,
}

/// Comparison of `setp` (PTX ISA §9.7.7.1 "Comparison").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    // Float: ordered/unordered.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// The boolean combination of `setp.cmp.bop` (`.and .or .xor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Rounding modifier of `cvt` and float arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Rounding {
    Rn,
    Rz,
    Rm,
    Rp,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// Lane-exchange mode of `shfl.sync` (PTX ISA §9.7.8.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// Reduction of `vote.sync` (PTX ISA §9.7.13.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// The read-modify-write operation of `atom` and `red` (PTX ISA §9.7.13.5, §9.7.13.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AtomKind {
    And,
    Or,
    Xor,
    Cas,
    Exch,
    Add,
    Inc,
    Dec,
    Min,
    Max,
}

/// The details of `atom` and `red`: `atom{.sem}{.scope}{.space}.op.type`.
///
/// The memory-ordering qualifiers (`.relaxed .acquire .release .acq_rel`, scopes `.cta .gpu .sys
/// .cluster`) are accepted and need no modelling: the simulator performs every access in program
/// order, one warp at a time, which every ordering allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomOp {
    /// `.global`, `.shared` or `Generic`.
    pub space: StateSpace,
    /// The operation.
    pub kind: AtomKind,
    /// The operand type.
    pub ty: Type,
}

/// Byte-selection mode of `prmt` (PTX ISA §9.7.8.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum PrmtMode {
    /// No mode: four 4-bit selectors in `c`.
    Generic,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// Bit and byte manipulations that read up to four sources (PTX ISA §9.7.1, §9.7.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    /// `bfe.type d, a, pos, len`: extract a bit field, zero- or sign-extended.
    Bfe(Type),
    /// `bfi.type f, a, b, pos, len`: insert the low `len` bits of `a` into `b` at `pos`.
    Bfi(Type),
    /// `prmt.b32{.mode} d, a, b, c`: pick four bytes of {b, a}.
    Prmt(PrmtMode),
    /// `bfind{.shiftamt}.type d, a`: position of the most significant non-sign bit.
    Bfind {
        /// Operand type.
        ty: Type,
        /// `.shiftamt`: the left shift that moves it to the msb instead.
        shiftamt: bool,
    },
    /// `fns.b32 d, mask, base, offset`: the n-th set bit from `base`.
    Fns,
    /// `lop3.b32 d, a, b, c, immLut`: any logic function of three inputs.
    Lop3,
    /// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`: funnel shift of {b, a}.
    Shf {
        /// `.l` (else `.r`).
        left: bool,
        /// `.clamp` (else `.wrap`).
        clamp: bool,
    },
    /// `dp4a.atype.btype d, a, b, c`: four-way byte dot product plus c.
    Dp4a {
        /// `a` is `.s32`.
        a_signed: bool,
        /// `b` is `.s32`.
        b_signed: bool,
    },
    /// `dp2a.{lo,hi}.atype.btype d, a, b, c`: two-way 16-bit by 8-bit dot product plus c.
    Dp2a {
        /// `.hi`: bytes 2 and 3 of `b` (else 0 and 1).
        hi: bool,
        /// `a` is `.s32`.
        a_signed: bool,
        /// `b` is `.s32`.
        b_signed: bool,
    },
    /// `bmsk.{clamp,wrap}.b32 d, a, b`: a mask of `b` ones starting at bit `a`.
    Bmsk {
        /// `.clamp` (else `.wrap`).
        clamp: bool,
    },
    /// `szext.{clamp,wrap}.{s32,u32} d, a, b`: sign- or zero-extend the low `b` bits of `a`.
    Szext {
        /// `.clamp` (else `.wrap`).
        clamp: bool,
        /// `.s32`: sign-extend.
        signed: bool,
    },
}

/// The carry-chain instructions (PTX ISA §9.7.2 "Extended-Precision Integer Arithmetic").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CarryOp {
    Add,
    Sub,
    Mad,
}

/// The property `testp` checks (PTX ISA §9.7.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum TestpOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// The reduction of `bar.red` (PTX ISA §9.7.13.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BarRedOp {
    Popc,
    And,
    Or,
}

/// The reduction of `redux.sync` (PTX ISA §9.7.13.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// Half-precision arithmetic: `add sub mul fma min max neg abs` on `.f16 .bf16 .f16x2 .bf16x2`
/// (PTX ISA §9.7.4 "Half Precision Floating-Point Instructions"), computed by
/// `exec::alu::half_arith`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HalfOp {
    /// `Add Sub Mul Fma Min Max Neg Abs`.
    pub op: AluOp,
    /// `.f16 .bf16 .f16x2 .bf16x2`.
    pub ty: Type,
    /// `.ftz` (`.f16` and `.f16x2` only).
    pub ftz: bool,
    /// `.sat`: clamp to [0.0, 1.0] (`add sub mul fma` on `.f16` and `.f16x2`).
    pub sat: bool,
    /// `.relu`: negative results become +0.0 (`fma`).
    pub relu: bool,
    /// `.NaN` of `min`/`max`: a NaN input gives the canonical NaN.
    pub nan: bool,
    /// `.xorsign.abs` of `min`/`max`.
    pub xorsign: bool,
}

/// `cvt` with a half-precision destination or source (PTX ISA §9.7.9.21):
/// `cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype d, a[, b]`, computed by
/// `exec::alu::half_convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HalfCvt {
    /// Destination type; `.f16x2`/`.bf16x2` pack two converted `.f32` sources.
    pub dst: Type,
    /// Source type.
    pub src: Type,
    /// Rounding (round to nearest even without one).
    pub rnd: Option<Rounding>,
    /// `.ftz`: a subnormal `.f32` source or result is zero.
    pub ftz: bool,
    /// `.sat`: clamp to [0.0, 1.0].
    pub sat: bool,
    /// `.relu`: a negative result is +0.0.
    pub relu: bool,
    /// `.satfinite`: infinities and overflows give the largest finite value.
    pub satfinite: bool,
}

/// A typed PTX operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `ld`.
    Ld(MemOp),
    /// `st`.
    St(MemOp),
    /// `mov.type d, a`.
    Mov(Type),
    /// `cvta.space.size d, a` (to generic) or `cvta.to.space.size` (from generic).
    Cvta {
        /// `.to`: generic → space.
        to_space: bool,
        /// The non-generic space.
        space: StateSpace,
    },
    /// `cvt.frnd.sat.dtype.atype d, a`.
    Cvt {
        /// Destination type.
        dst: Type,
        /// Source type.
        src: Type,
        /// Rounding.
        rnd: Option<Rounding>,
        /// `.sat`.
        sat: bool,
    },
    /// An arithmetic or logic operation.
    Alu {
        /// Operation.
        op: AluOp,
        /// Type (the source type for `.wide`).
        ty: Type,
        /// `.lo/.hi/.wide` for integer multiplies.
        mode: MulMode,
        /// `.sat` (clamp: s32 add/sub, float to 0..=1).
        sat: bool,
    },
    /// `setp.cmp[.bop].type p[|q], a, b[, c]`.
    Setp {
        /// Comparison.
        cmp: Cmp,
        /// Combination with a third predicate operand.
        bool_op: Option<BoolOp>,
        /// Operand type.
        ty: Type,
    },
    /// `selp.type d, a, b, p`.
    Selp(Type),
    /// `bra[.uni] label`.
    Bra,
    /// `ret`.
    Ret,
    /// `exit`.
    Exit,
    /// `bar.sync 0` / `barrier.sync 0` / `bar.sync 0, n`.
    BarSync,
    /// `bar.warp.sync membermask`: the lanes of a warp reconverge (a no-op in lock-step execution).
    WarpSync,
    /// `shfl.sync.mode.b32 d[|p], a, b, c, membermask`.
    Shfl(ShflMode),
    /// `vote.sync.mode.{pred,b32} d, {!}a, membermask`.
    Vote(VoteMode),
    /// `activemask.b32 d`.
    ActiveMask,
    /// `atom`: read-modify-write, returns the old value.
    Atom(AtomOp),
    /// `red`: read-modify-write without a result.
    Red(AtomOp),
    /// Bit and byte manipulations.
    Bits(BitOp),
    /// `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`: arithmetic with the carry flag.
    Carry {
        /// The operation.
        op: CarryOp,
        /// Type (`.u32 .s32 .u64 .s64`).
        ty: Type,
        /// `.lo`/`.hi` of `mad`.
        mode: MulMode,
        /// Adds the carry flag (`addc`, `subc`, `madc`).
        cc_in: bool,
        /// Writes the carry flag (`.cc`).
        cc_out: bool,
    },
    /// `slct.dtype.ctype d, a, b, c`: `c >= 0 ? a : b`.
    Slct {
        /// Type of `d`, `a`, `b`.
        ty: Type,
        /// Type of `c` (`.s32` or `.f32`).
        cty: Type,
        /// `.ftz`: a subnormal `c` counts as zero.
        ftz: bool,
    },
    /// `set.cmp[.bop].dtype.stype d, a, b[, c]`: a comparison as all ones or 1.0.
    Set {
        /// Comparison.
        cmp: Cmp,
        /// Combination with a third predicate operand.
        bool_op: Option<BoolOp>,
        /// Destination type (`.u32 .s32 .f32`).
        dst: Type,
        /// Operand type.
        src: Type,
    },
    /// `testp.op.type p, a`.
    Testp {
        /// The property.
        op: TestpOp,
        /// `.f32` or `.f64`.
        ty: Type,
    },
    /// `mov.bN d, {a, b, ...}`: packs `n` elements of `bits / n` bits, the first lowest (made by
    /// decoding, from a `mov` with a vector source).
    MovPack {
        /// The packed type.
        ty: Type,
        /// Number of elements.
        n: u8,
    },
    /// `mov.bN {a, b, ...}, s`: unpacks (made by decoding, from a `mov` with a vector destination).
    MovUnpack {
        /// The packed type.
        ty: Type,
        /// Number of elements.
        n: u8,
    },
    /// `cvt.pack.sat.{u16,s16,u8,s8}.s32[.b32] d, a, b[, c]`: saturate and pack.
    CvtPack {
        /// The type each value is saturated to.
        dst: Type,
    },
    /// Instructions with no functional effect here: `membar`, `fence`, `nanosleep`, `prefetch`,
    /// `prefetchu`, `bar.arrive` / `barrier.arrive` (the arriving warp goes on without waiting,
    /// and a `bar.sync` waits for the warps of its block still running).
    Nop,
    /// `bar.red.popc.u32 d, a[, b], {!}c` and `bar.red.{and,or}.pred p, a[, b], {!}c`.
    BarRed(BarRedOp),
    /// `match.{any,all}.sync.type d[|p], a, membermask`.
    Match {
        /// `.all` (else `.any`).
        all: bool,
        /// `.b32` or `.b64`.
        ty: Type,
    },
    /// `redux.sync.op.type d, a, membermask`.
    Redux {
        /// The reduction.
        op: ReduxOp,
        /// `.u32 .s32 .b32`.
        ty: Type,
    },
    /// `isspacep.space p, a`: whether a generic address falls in a state space.
    Isspacep(StateSpace),
    /// `call{.uni} [(ret), ] func, (args)`: a direct call of a `.func` of the module. Calls are
    /// inlined before decoding (`ptx::inline`), so the executor never sees one.
    Call,
    /// `add sub mul mad fma` on `.f32`/`.f64` with `.rz .rm .rp`: rounded exactly as directed.
    FloatRnd {
        /// `Add`, `Sub`, `Mul`, `Mad` or `Fma`.
        op: AluOp,
        /// `.f32` or `.f64`.
        ty: Type,
        /// The rounding direction.
        rnd: Rounding,
        /// `.sat`: clamp to [0, 1] after rounding.
        sat: bool,
    },
    /// An instruction the simulator does not execute (`tex`, `mma`, an unsupported modifier):
    /// parsed, so that the other kernels of its module run, and an error naming its PTX line
    /// when a launch decodes the kernel that holds it ([`unsupported_reason`] says why).
    Unsupported,
    /// Half-precision arithmetic.
    Half(HalfOp),
    /// `setp.cmp[.bop][.ftz].{f16,bf16,f16x2,bf16x2} p[|q], a, b[, c]`: a pair compares both
    /// elements, element 0 into `p` and element 1 into `q`.
    HalfSetp {
        /// Comparison.
        cmp: Cmp,
        /// Combination with a third predicate operand.
        bool_op: Option<BoolOp>,
        /// Operand type.
        ty: Type,
        /// `.ftz`.
        ftz: bool,
    },
    /// `cvt` to or from a half-precision type.
    HalfCvt(HalfCvt),
    /// `cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}`: decoded with the
    /// shared destination as the address, the global source's base and offset in `src[0..2]`,
    /// `src-size` (or `ignore-src`) in `src[2]`.
    CpAsync(CpAsync),
    /// `cp.async.commit_group`: closes the thread's group of copies issued since the last one.
    CpAsyncCommit,
    /// `cp.async.wait_group N` (N in `src[0]`) or `cp.async.wait_all`.
    CpAsyncWait {
        /// `wait_all`: every copy, committed or not.
        all: bool,
    },
    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 r, [p]`.
    Ldmatrix(MatrixOp),
    /// `stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [p], r`.
    Stmatrix(MatrixOp),
    /// `mma.sync.aligned`: its D, A, B and C registers are the program's
    /// [`operands`](crate::ptx::decode::Program::operands) from `target` on, in that order.
    Mma(MmaOp),
    /// `wmma.load`, `wmma.store`, `wmma.mma` (m16n16k16, f16 multiplicands): their fragment
    /// registers are the program's operand table from `target` on (D or the fragment, then A,
    /// B, C for `mma`); the memory forms' stride is `src[0]`.
    Wmma(WmmaOp),
    /// `call (ret), vprintf, (fmt, args)`, printf's device side, which the module only declares:
    /// made by the inliner ([`crate::ptx::inline`]), never parsed. `dst` the return value,
    /// `src[0]` the format string's generic address, `src[1]` the argument buffer's.
    Vprintf,
    /// `mbarrier.*.shared{::cta}.b64` on a barrier object in shared memory (sm_80/sm_90):
    /// the object's address is the instruction's, `dst[0]` the state or predicate result,
    /// `src[0]` the count, transaction bytes, state or phase parity operand.
    Mbarrier(MbarrierOp),
    /// `cp.async.bulk` (sm_90, 1-D): `to_shared`: `.shared::cluster.global.mbarrier::complete_tx
    /// ::bytes [dst], [src], size, [mbar]`, else `.global.shared::cta.bulk_group [dst], [src],
    /// size`. The destination is the address; `src[0]` the source's base, `src[1]` the size,
    /// `src[2]` the mbarrier's base, `src[3]` the source's offset; `target` the mbarrier's offset.
    CpAsyncBulk {
        /// Global to shared memory (with an mbarrier), else shared to global (a bulk group).
        to_shared: bool,
    },
    /// `tex.{1d,2d}.v4.dtype.ctype d, [tex, {x(, y)}]` and `tld4.comp.2d.v4.dtype.f32`: the
    /// handle is the address's base, the coordinates `src[0..dims]`, the four results `dst`.
    Tex(TexOp),
    /// `suld.b.{1d,2d}{.vec}.btype.clamp d, [surf, {x(, y)}]`: decoded as [`Op::Tex`] (x in bytes).
    Suld(SurfOp),
    /// `sust.b.{1d,2d}{.vec}.btype.clamp [surf, {x(, y)}], v`: the handle is the address's base,
    /// the coordinates `src[0..dims]`, the values the program's operand table from `target` on.
    Sust(SurfOp),
    /// `cp.async.bulk.commit_group` and `cp.async.bulk.wait_group{.read} N`: copies complete at
    /// issue here, so nothing is left to wait for.
    CpAsyncBulkGroup,
}

/// The `mbarrier` operations (PTX ISA, "Parallel Synchronization and Communication
/// Instructions: mbarrier").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarrierOp {
    /// `mbarrier.init [a], count`.
    Init,
    /// `mbarrier.arrive{.expect_tx} state, [a]{, count | tx}`.
    Arrive {
        /// `.expect_tx`: `src[0]` is transaction bytes added before the arrival (of one).
        expect_tx: bool,
    },
    /// `mbarrier.expect_tx [a], tx`.
    ExpectTx,
    /// `mbarrier.complete_tx [a], tx`.
    CompleteTx,
    /// `mbarrier.test_wait{.parity}` / `try_wait{.parity}` `p, [a], state | parity`.
    Wait {
        /// `.parity`: `src[0]` is a phase parity, else a state from `arrive`.
        parity: bool,
    },
    /// `mbarrier.inval [a]`.
    Inval,
}

/// Why the instruction whose source text is `text` (guard, opcode, modifiers, operands) is
/// [`Op::Unsupported`]: what [`decode`](fn@decode) says of its opcode and modifiers.
pub fn unsupported_reason(text: &str) -> String {
    use crate::ptx::lexer::{lex, Token};
    let toks = lex(text).unwrap_or_default();
    let mut it = toks.iter().peekable();
    // Skip a guard `@p` / `@!p`.
    if matches!(it.peek(), Some((Token::At, _))) {
        it.next();
        if matches!(it.peek(), Some((Token::Bang, _))) {
            it.next();
        }
        it.next();
    }
    let Some((Token::Ident, r)) = it.next() else {
        return "unsupported instruction".into();
    };
    let opcode = &text[r.clone()];
    let mods: Vec<&str> = it
        .take_while(|(t, _)| *t == Token::DotWord)
        .map(|(_, r)| &text[r.start + 1..r.end])
        .collect();
    match decode(opcode, &mods) {
        Err(m) => m,
        Ok(_) => format!("unsupported form of `{opcode}`"),
    }
}

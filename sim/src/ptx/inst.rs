//! Typed PTX operations: an opcode and its modifiers, checked at parse time.
//!
//! `ld.global.ca.v4.f32` becomes `Op::Ld(MemOp { space: Global, cache: Ca, vec: 4, ty: F32, .. })`.
//! Modifiers may come in any order; one the simulator does not model is an error naming it (a
//! silently dropped cache operator would falsify the counters). Section names refer to the PTX ISA
//! manual (version 8.x), chapter 9 "Instruction Set".

use crate::ptx::ast::{StateSpace, Type};

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
    /// `prefetchu`, `bar.arrive` / `barrier.arrive` (warps run one after another, so an arrival
    /// never has to be waited for).
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
}

/// Consumes the modifiers of one instruction; whatever is left at the end is unsupported.
struct Mods<'a> {
    words: Vec<&'a str>,
}

impl<'a> Mods<'a> {
    fn take(&mut self, w: &str) -> bool {
        match self.words.iter().position(|x| *x == w) {
            Some(i) => {
                self.words.remove(i);
                true
            }
            None => false,
        }
    }

    fn take_map<T>(&mut self, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        let (i, v) = self
            .words
            .iter()
            .enumerate()
            .find_map(|(i, w)| f(w).map(|v| (i, v)))?;
        self.words.remove(i);
        Some(v)
    }

    fn ty(&mut self) -> Option<Type> {
        self.take_map(Type::from_word)
    }

    fn has(&self, w: &str) -> bool {
        self.words.contains(&w)
    }

    /// Takes the memory-ordering qualifiers (`.relaxed .acquire .release .acq_rel .sc .weak` and
    /// the scopes `.cta .cluster .gpu .sys`); returns (strong semantics, scope) when given.
    fn ordering(&mut self) -> (Option<&'static str>, Option<&'static str>) {
        let sem = self.take_map(|w| match w {
            "relaxed" => Some("relaxed"),
            "acquire" => Some("acquire"),
            "release" => Some("release"),
            "acq_rel" => Some("acq_rel"),
            "sc" => Some("sc"),
            _ => None,
        });
        self.take("weak");
        let scope = self.take_map(|w| match w {
            "cta" => Some("cta"),
            "cluster" => Some("cluster"),
            "gpu" => Some("gpu"),
            "sys" => Some("sys"),
            _ => None,
        });
        (sem, scope)
    }
}

/// A state space word, with the sub-qualifiers PTX allows (`shared::cta`; `shared::cluster`,
/// which for a cluster of one CTA, the only kind launched here, is the CTA's shared memory;
/// `param::entry`).
fn space_word(w: &str) -> Option<StateSpace> {
    match w {
        "shared::cta" | "shared::cluster" => Some(StateSpace::Shared),
        "param::entry" => Some(StateSpace::Param),
        _ => StateSpace::from_word(w),
    }
}

/// Decodes an opcode and its modifiers (without dots). `Err` says what is unsupported.
pub fn decode(opcode: &str, modifiers: &[&str]) -> Result<Op, String> {
    let mut m = Mods {
        words: modifiers.to_vec(),
    };
    let op = decode_inner(opcode, &mut m)?;
    if !m.words.is_empty() {
        let list: Vec<String> = m.words.iter().map(|w| format!(".{w}")).collect();
        return Err(format!(
            "unsupported modifier {} on `{opcode}`",
            list.join(" ")
        ));
    }
    Ok(op)
}

fn need_ty(m: &mut Mods, opcode: &str) -> Result<Type, String> {
    m.ty()
        .ok_or_else(|| format!("`{opcode}` needs a type (.u32, .f32, ...)"))
}

fn rounding(w: &str) -> Option<Rounding> {
    Some(match w {
        "rn" => Rounding::Rn,
        "rz" => Rounding::Rz,
        "rm" => Rounding::Rm,
        "rp" => Rounding::Rp,
        "rni" => Rounding::Rni,
        "rzi" => Rounding::Rzi,
        "rmi" => Rounding::Rmi,
        "rpi" => Rounding::Rpi,
        _ => return None,
    })
}

fn cmp(w: &str) -> Option<Cmp> {
    Some(match w {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" => Cmp::Lt,
        "le" => Cmp::Le,
        "gt" => Cmp::Gt,
        "ge" => Cmp::Ge,
        "lo" => Cmp::Lo,
        "ls" => Cmp::Ls,
        "hi" => Cmp::Hi,
        "hs" => Cmp::Hs,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

fn mem_op(opcode: &str, m: &mut Mods, is_load: bool) -> Result<MemOp, String> {
    let space = m.take_map(space_word).unwrap_or(StateSpace::Generic);
    if space == StateSpace::Reg {
        return Err(format!("`{opcode}` cannot address .reg"));
    }
    let volatile = m.take("volatile");
    let nc = is_load && m.take("nc");
    // `.relaxed`/`.acquire` loads at GPU or system scope must see other SMs' writes: SASS makes
    // them strong loads that do not hit in L1, as `.cg` does. Stores write through either way.
    let (sem, scope) = m.ordering();
    let strong_beyond_cta = sem.is_some() && matches!(scope, Some("gpu" | "sys") | None);
    // L2 prefetch-size hints change no counter the simulator reports.
    m.take_map(|w| match w {
        "L2::64B" | "L2::128B" | "L2::256B" => Some(()),
        _ => None,
    });
    let cache = m
        .take_map(|w| match (w, is_load) {
            ("ca", true) => Some(CacheOp::Ca),
            ("cg", _) => Some(CacheOp::Cg),
            ("cs", _) => Some(CacheOp::Cs),
            ("lu", true) => Some(CacheOp::Lu),
            ("cv", true) => Some(CacheOp::Cv),
            ("wb", false) => Some(CacheOp::Wb),
            ("wt", false) => Some(CacheOp::Wt),
            _ => None,
        })
        .unwrap_or(if strong_beyond_cta && is_load {
            CacheOp::Cg
        } else {
            CacheOp::Default
        });
    let vec = m
        .take_map(|w| match w {
            "v2" => Some(2),
            "v4" => Some(4),
            _ => None,
        })
        .unwrap_or(1);
    let ty = need_ty(m, opcode)?;
    if nc && space != StateSpace::Global {
        return Err(format!("`{opcode}.nc` needs the .global state space"));
    }
    Ok(MemOp {
        space,
        cache,
        vec,
        ty,
        volatile,
        nc,
    })
}

fn decode_inner(opcode: &str, m: &mut Mods) -> Result<Op, String> {
    let alu = |m: &mut Mods, op: AluOp| -> Result<Op, String> {
        let mode = if m.take("lo") {
            MulMode::Lo
        } else if m.take("hi") {
            MulMode::Hi
        } else if m.take("wide") {
            MulMode::Wide
        } else {
            MulMode::None
        };
        // Float arithmetic rounds to nearest even; approximate forms are computed exactly
        // (IEEE), which is what `.rn` gives and within the error bounds `.approx` allows.
        let rnd = m.take_map(rounding);
        let directed = rnd.filter(|r| *r != Rounding::Rn);
        if let Some(r) = directed {
            // Directed rounding of the basic float operations is exact (FloatRnd); the other
            // operations round to nearest only.
            let ok = matches!(
                (op, r),
                (
                    AluOp::Add | AluOp::Sub | AluOp::Mul | AluOp::Mad | AluOp::Fma,
                    Rounding::Rz | Rounding::Rm | Rounding::Rp
                )
            );
            if !ok {
                return Err(format!(
                    "unsupported rounding modifier .{r:?} on `{opcode}` (only .rn; .rz .rm .rp on add sub mul mad fma)"
                )
                .to_lowercase());
            }
        }
        m.take("approx");
        m.take("full");
        m.take("ftz");
        let sat = m.take("sat");
        let ty = need_ty(m, opcode)?;
        if mode != MulMode::None && ty.is_float() {
            return Err(format!(
                "`{opcode}` .lo/.hi/.wide apply to integer types only"
            ));
        }
        check_alu_type(opcode, op, ty, mode)?;
        if let Some(rnd) = directed {
            if !ty.is_float() {
                return Err(format!(
                    "`{opcode}` rounding modifiers apply to float types only"
                ));
            }
            return Ok(Op::FloatRnd { op, ty, rnd, sat });
        }
        Ok(Op::Alu { op, ty, mode, sat })
    };
    if let Some(op) = decode_ext(opcode, m)? {
        return Ok(op);
    }
    Ok(match opcode {
        "ld" => Op::Ld(mem_op(opcode, m, true)?),
        "ldu" => Op::Ld(mem_op(opcode, m, true)?),
        "st" => Op::St(mem_op(opcode, m, false)?),
        "mov" => Op::Mov(need_ty(m, opcode)?),
        "cvta" => {
            let to_space = m.take("to");
            let space = m
                .take_map(StateSpace::from_word)
                .filter(|s| {
                    matches!(
                        s,
                        StateSpace::Global
                            | StateSpace::Shared
                            | StateSpace::Local
                            | StateSpace::Const
                            | StateSpace::Param
                    )
                })
                .ok_or("`cvta` needs .global, .shared, .local, .const or .param")?;
            need_ty(m, opcode)?;
            Op::Cvta { to_space, space }
        }
        "cvt" => {
            let rnd = m.take_map(rounding);
            m.take("ftz");
            let sat = m.take("sat");
            let dst = need_ty(m, opcode)?;
            let src = need_ty(m, opcode)?;
            Op::Cvt { dst, src, rnd, sat }
        }
        "add" => alu(m, AluOp::Add)?,
        "sub" => alu(m, AluOp::Sub)?,
        "mul" => alu(m, AluOp::Mul)?,
        "mad" => alu(m, AluOp::Mad)?,
        "fma" => alu(m, AluOp::Fma)?,
        "div" => alu(m, AluOp::Div)?,
        "rem" => alu(m, AluOp::Rem)?,
        "min" => alu(m, AluOp::Min)?,
        "max" => alu(m, AluOp::Max)?,
        "neg" => alu(m, AluOp::Neg)?,
        "abs" => alu(m, AluOp::Abs)?,
        "and" => alu(m, AluOp::And)?,
        "or" => alu(m, AluOp::Or)?,
        "xor" => alu(m, AluOp::Xor)?,
        "not" => alu(m, AluOp::Not)?,
        "cnot" => alu(m, AluOp::CNot)?,
        "shl" => alu(m, AluOp::Shl)?,
        "shr" => alu(m, AluOp::Shr)?,
        "popc" => alu(m, AluOp::Popc)?,
        "clz" => alu(m, AluOp::Clz)?,
        "brev" => alu(m, AluOp::Brev)?,
        "rcp" => alu(m, AluOp::Rcp)?,
        "sqrt" => alu(m, AluOp::Sqrt)?,
        "rsqrt" => alu(m, AluOp::Rsqrt)?,
        "ex2" => alu(m, AluOp::Ex2)?,
        "lg2" => alu(m, AluOp::Lg2)?,
        "sin" => alu(m, AluOp::Sin)?,
        "cos" => alu(m, AluOp::Cos)?,
        "tanh" => alu(m, AluOp::Tanh)?,
        "copysign" => alu(m, AluOp::Copysign)?,
        "sad" => alu(m, AluOp::Sad)?,
        "mul24" => alu(m, AluOp::Mul24)?,
        "mad24" => alu(m, AluOp::Mad24)?,
        "setp" => {
            let c = m
                .take_map(cmp)
                .ok_or("`setp` needs a comparison (.eq .lt ...)")?;
            let bool_op = m.take_map(|w| match w {
                "and" => Some(BoolOp::And),
                "or" => Some(BoolOp::Or),
                "xor" => Some(BoolOp::Xor),
                _ => None,
            });
            m.take("ftz");
            let ty = need_ty(m, opcode)?;
            if ty == Type::F16 {
                return Err(F16_ARITHMETIC.into());
            }
            Op::Setp {
                cmp: c,
                bool_op,
                ty,
            }
        }
        "selp" => Op::Selp(need_ty(m, opcode)?),
        "bra" => {
            m.take("uni");
            Op::Bra
        }
        "ret" => {
            m.take("uni");
            Op::Ret
        }
        "exit" => Op::Exit,
        "bar" if m.take("warp") => {
            if !m.take("sync") {
                return Err("only `bar.warp.sync` is supported".into());
            }
            Op::WarpSync
        }
        "shfl" => {
            m.take("sync");
            let mode = m
                .take_map(|w| match w {
                    "up" => Some(ShflMode::Up),
                    "down" => Some(ShflMode::Down),
                    "bfly" => Some(ShflMode::Bfly),
                    "idx" => Some(ShflMode::Idx),
                    _ => None,
                })
                .ok_or("`shfl` needs a mode (.up .down .bfly .idx)")?;
            if need_ty(m, opcode)?.bits() != 32 {
                return Err("`shfl` moves .b32 values".into());
            }
            Op::Shfl(mode)
        }
        "vote" => {
            m.take("sync");
            let mode = m
                .take_map(|w| match w {
                    "all" => Some(VoteMode::All),
                    "any" => Some(VoteMode::Any),
                    "uni" => Some(VoteMode::Uni),
                    "ballot" => Some(VoteMode::Ballot),
                    _ => None,
                })
                .ok_or("`vote` needs a mode (.all .any .uni .ballot)")?;
            need_ty(m, opcode)?;
            Op::Vote(mode)
        }
        "activemask" => {
            need_ty(m, opcode)?;
            Op::ActiveMask
        }
        "bar" | "barrier" => {
            // bar.sync and barrier.sync (with the optional .cta and .aligned) wait for the CTA.
            m.take("cta");
            if !m.take("sync") {
                return Err(format!(
                    "only `{opcode}.sync`, `{opcode}.arrive` and `{opcode}.red` are supported"
                ));
            }
            m.take("aligned");
            Op::BarSync
        }
        _ => {
            return Err(format!(
                "unsupported instruction `{opcode}`; supported: {SUPPORTED}"
            ))
        }
    })
}

const F16_ARITHMETIC: &str =
    "f16 arithmetic is not supported (f16 values can be moved, loaded, stored and converted with cvt)";

/// Type rules of the arithmetic operations beyond "an integer or a float type".
fn check_alu_type(opcode: &str, op: AluOp, ty: Type, mode: MulMode) -> Result<(), String> {
    if ty == Type::F16 {
        return Err(F16_ARITHMETIC.into());
    }
    let float_only = matches!(
        op,
        AluOp::Ex2
            | AluOp::Lg2
            | AluOp::Sin
            | AluOp::Cos
            | AluOp::Tanh
            | AluOp::Copysign
            | AluOp::MinNan
            | AluOp::MaxNan
            | AluOp::MinXorsign
            | AluOp::MaxXorsign
    );
    if float_only && !ty.is_float() {
        return Err(format!("`{opcode}` needs a float type (.f32)"));
    }
    if matches!(
        op,
        AluOp::Ex2 | AluOp::Lg2 | AluOp::Sin | AluOp::Cos | AluOp::Tanh
    ) && ty != Type::F32
    {
        return Err(format!("`{opcode}` is supported for .f32 only"));
    }
    if matches!(op, AluOp::Sad | AluOp::Mul24 | AluOp::Mad24) && ty.is_float() {
        return Err(format!("`{opcode}` needs an integer type"));
    }
    if matches!(op, AluOp::Mul24 | AluOp::Mad24) {
        if !matches!(ty, Type::U32 | Type::S32) {
            return Err(format!("`{opcode}` needs .u32 or .s32"));
        }
        if !matches!(mode, MulMode::Lo | MulMode::Hi) {
            return Err(format!("`{opcode}` needs .lo or .hi"));
        }
    }
    Ok(())
}

/// Whether `atom`/`red` `kind` exists for `ty` (PTX ISA §9.7.13.5: bitwise operations on
/// `.b32 .b64`, `cas` also `.b16`; `add` on `.u32 .s32 .u64 .f32 .f64`; `inc dec` on `.u32`;
/// `min max` on `.u32 .s32 .u64 .s64`). Integer types of the right width are accepted for the
/// bitwise ones, as ptxas does.
fn atom_type_ok(kind: AtomKind, ty: Type) -> bool {
    use Type::*;
    match kind {
        AtomKind::And | AtomKind::Or | AtomKind::Xor | AtomKind::Exch => {
            matches!(ty, B32 | B64 | U32 | S32 | U64 | S64)
        }
        AtomKind::Cas => matches!(ty, B16 | U16 | S16 | B32 | B64 | U32 | S32 | U64 | S64),
        AtomKind::Add => matches!(ty, U32 | S32 | U64 | S64 | F32 | F64),
        AtomKind::Inc | AtomKind::Dec => ty == U32,
        AtomKind::Min | AtomKind::Max => matches!(ty, U32 | S32 | U64 | S64),
    }
}

/// The opcodes and forms added for "any kernel" coverage; `None` when `opcode` is not one of them
/// (the main table decodes it).
fn decode_ext(opcode: &str, m: &mut Mods) -> Result<Option<Op>, String> {
    let carry_ty = |m: &mut Mods| -> Result<Type, String> {
        let ty = need_ty(m, opcode)?;
        if !matches!(ty, Type::U32 | Type::S32 | Type::U64 | Type::S64) {
            return Err(format!(
                "`{opcode}` with carry needs .u32 .s32 .u64 or .s64"
            ));
        }
        Ok(ty)
    };
    let mad_mode = |m: &mut Mods| -> Result<MulMode, String> {
        if m.take("lo") {
            Ok(MulMode::Lo)
        } else if m.take("hi") {
            Ok(MulMode::Hi)
        } else {
            Err(format!("`{opcode}` needs .lo or .hi"))
        }
    };
    let two_signs = |m: &mut Mods| -> Result<(bool, bool), String> {
        let mut signed = [false; 2];
        for s in &mut signed {
            *s = match m.ty() {
                Some(Type::S32) => true,
                Some(Type::U32) => false,
                _ => return Err(format!("`{opcode}` needs two types of .u32 or .s32")),
            };
        }
        Ok((signed[0], signed[1]))
    };
    let op = match opcode {
        "atom" | "red" => {
            m.ordering();
            let space = m.take_map(space_word).unwrap_or(StateSpace::Generic);
            if !matches!(
                space,
                StateSpace::Global | StateSpace::Shared | StateSpace::Generic
            ) {
                return Err(format!(
                    "`{opcode}` works on .global or .shared memory (or a generic address), not .{}",
                    space.name()
                ));
            }
            m.ordering();
            let kind = m
                .take_map(|w| {
                    Some(match w {
                        "and" => AtomKind::And,
                        "or" => AtomKind::Or,
                        "xor" => AtomKind::Xor,
                        "cas" => AtomKind::Cas,
                        "exch" => AtomKind::Exch,
                        "add" => AtomKind::Add,
                        "inc" => AtomKind::Inc,
                        "dec" => AtomKind::Dec,
                        "min" => AtomKind::Min,
                        "max" => AtomKind::Max,
                        _ => return None,
                    })
                })
                .ok_or_else(|| {
                    format!("`{opcode}` needs an operation (.add .min .max .inc .dec .and .or .xor .exch .cas)")
                })?;
            let ty = need_ty(m, opcode)?;
            if !atom_type_ok(kind, ty)
                || (opcode == "red" && matches!(kind, AtomKind::Cas | AtomKind::Exch))
            {
                return Err(format!(
                    "`{opcode}.{}.{}` is not supported (the PTX ISA's 32- and 64-bit integer and \
float forms are; `red` has no .cas or .exch)",
                    format!("{kind:?}").to_lowercase(),
                    ty.name()
                ));
            }
            let a = AtomOp { space, kind, ty };
            if opcode == "atom" {
                Op::Atom(a)
            } else {
                Op::Red(a)
            }
        }
        "add" | "sub" if m.has("cc") => {
            m.take("cc");
            Op::Carry {
                op: if opcode == "add" {
                    CarryOp::Add
                } else {
                    CarryOp::Sub
                },
                ty: carry_ty(m)?,
                mode: MulMode::None,
                cc_in: false,
                cc_out: true,
            }
        }
        "addc" | "subc" => {
            let cc_out = m.take("cc");
            Op::Carry {
                op: if opcode == "addc" {
                    CarryOp::Add
                } else {
                    CarryOp::Sub
                },
                ty: carry_ty(m)?,
                mode: MulMode::None,
                cc_in: true,
                cc_out,
            }
        }
        "mad" if m.has("cc") => {
            m.take("cc");
            let mode = mad_mode(m)?;
            Op::Carry {
                op: CarryOp::Mad,
                ty: carry_ty(m)?,
                mode,
                cc_in: false,
                cc_out: true,
            }
        }
        "madc" => {
            let cc_out = m.take("cc");
            let mode = mad_mode(m)?;
            Op::Carry {
                op: CarryOp::Mad,
                ty: carry_ty(m)?,
                mode,
                cc_in: true,
                cc_out,
            }
        }
        "min" | "max" if m.has("NaN") || m.has("xorsign") => {
            let min = opcode == "min";
            m.take("ftz");
            let op = if m.take("NaN") {
                if min {
                    AluOp::MinNan
                } else {
                    AluOp::MaxNan
                }
            } else {
                m.take("xorsign");
                if !m.take("abs") {
                    return Err(format!("`{opcode}.xorsign` needs .abs"));
                }
                if min {
                    AluOp::MinXorsign
                } else {
                    AluOp::MaxXorsign
                }
            };
            let ty = need_ty(m, opcode)?;
            if ty != Type::F32 {
                return Err(format!(
                    "`{opcode}.NaN` and `.xorsign.abs` are supported for .f32 only"
                ));
            }
            Op::Alu {
                op,
                ty,
                mode: MulMode::None,
                sat: false,
            }
        }
        "bfe" | "bfind" => {
            let shiftamt = opcode == "bfind" && m.take("shiftamt");
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::U32 | Type::S32 | Type::U64 | Type::S64) {
                return Err(format!("`{opcode}` needs .u32 .s32 .u64 or .s64"));
            }
            Op::Bits(if opcode == "bfe" {
                BitOp::Bfe(ty)
            } else {
                BitOp::Bfind { ty, shiftamt }
            })
        }
        "bfi" => {
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::B32 | Type::B64) {
                return Err("`bfi` needs .b32 or .b64".into());
            }
            Op::Bits(BitOp::Bfi(ty))
        }
        "prmt" => {
            let mode = m
                .take_map(|w| {
                    Some(match w {
                        "f4e" => PrmtMode::F4e,
                        "b4e" => PrmtMode::B4e,
                        "rc8" => PrmtMode::Rc8,
                        "ecl" => PrmtMode::Ecl,
                        "ecr" => PrmtMode::Ecr,
                        "rc16" => PrmtMode::Rc16,
                        _ => return None,
                    })
                })
                .unwrap_or(PrmtMode::Generic);
            if need_ty(m, opcode)? != Type::B32 {
                return Err("`prmt` needs .b32".into());
            }
            Op::Bits(BitOp::Prmt(mode))
        }
        "fns" | "lop3" => {
            if need_ty(m, opcode)? != Type::B32 {
                return Err(format!("`{opcode}` needs .b32"));
            }
            Op::Bits(if opcode == "fns" {
                BitOp::Fns
            } else {
                BitOp::Lop3
            })
        }
        "shf" => {
            let left = if m.take("l") {
                true
            } else if m.take("r") {
                false
            } else {
                return Err("`shf` needs .l or .r".into());
            };
            let clamp = if m.take("clamp") {
                true
            } else if m.take("wrap") {
                false
            } else {
                return Err("`shf` needs .clamp or .wrap".into());
            };
            if !matches!(need_ty(m, opcode)?, Type::B32 | Type::U32) {
                return Err("`shf` needs .b32".into());
            }
            Op::Bits(BitOp::Shf { left, clamp })
        }
        "dp4a" => {
            let (a_signed, b_signed) = two_signs(m)?;
            Op::Bits(BitOp::Dp4a { a_signed, b_signed })
        }
        "dp2a" => {
            let hi = m.take("hi");
            if !hi && !m.take("lo") {
                return Err("`dp2a` needs .lo or .hi".into());
            }
            let (a_signed, b_signed) = two_signs(m)?;
            Op::Bits(BitOp::Dp2a {
                hi,
                a_signed,
                b_signed,
            })
        }
        "bmsk" | "szext" => {
            let clamp = if m.take("clamp") {
                true
            } else if m.take("wrap") {
                false
            } else {
                return Err(format!("`{opcode}` needs .clamp or .wrap"));
            };
            let ty = need_ty(m, opcode)?;
            if opcode == "bmsk" {
                if ty != Type::B32 {
                    return Err("`bmsk` needs .b32".into());
                }
                Op::Bits(BitOp::Bmsk { clamp })
            } else {
                if !matches!(ty, Type::U32 | Type::S32) {
                    return Err("`szext` needs .u32 or .s32".into());
                }
                Op::Bits(BitOp::Szext {
                    clamp,
                    signed: ty == Type::S32,
                })
            }
        }
        "slct" => {
            let ftz = m.take("ftz");
            let ty = need_ty(m, opcode)?;
            let cty = need_ty(m, opcode)?;
            if !matches!(cty, Type::S32 | Type::F32) {
                return Err("`slct` compares a .s32 or .f32 operand".into());
            }
            if ty == Type::Pred {
                return Err("`slct` selects values, not predicates".into());
            }
            Op::Slct { ty, cty, ftz }
        }
        "set" => {
            let c = m
                .take_map(cmp)
                .ok_or("`set` needs a comparison (.eq .lt ...)")?;
            let bool_op = m.take_map(|w| match w {
                "and" => Some(BoolOp::And),
                "or" => Some(BoolOp::Or),
                "xor" => Some(BoolOp::Xor),
                _ => None,
            });
            m.take("ftz");
            let dst = need_ty(m, opcode)?;
            let src = need_ty(m, opcode)?;
            if !matches!(dst, Type::U32 | Type::S32 | Type::F32 | Type::B32) {
                return Err("`set` writes .u32 .s32 or .f32".into());
            }
            if src == Type::F16 {
                return Err(F16_ARITHMETIC.into());
            }
            Op::Set {
                cmp: c,
                bool_op,
                dst,
                src,
            }
        }
        "testp" => {
            let op = m
                .take_map(|w| {
                    Some(match w {
                        "finite" => TestpOp::Finite,
                        "infinite" => TestpOp::Infinite,
                        "number" => TestpOp::Number,
                        "notanumber" => TestpOp::NotANumber,
                        "normal" => TestpOp::Normal,
                        "subnormal" => TestpOp::Subnormal,
                        _ => return None,
                    })
                })
                .ok_or(
                    "`testp` needs .finite .infinite .number .notanumber .normal or .subnormal",
                )?;
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::F32 | Type::F64) {
                return Err("`testp` needs .f32 or .f64".into());
            }
            Op::Testp { op, ty }
        }
        "cvt" if m.has("pack") => {
            m.take("pack");
            if !m.take("sat") {
                return Err("`cvt.pack` needs .sat".into());
            }
            let dst = need_ty(m, opcode)?;
            if !matches!(dst, Type::U16 | Type::S16 | Type::U8 | Type::S8) {
                return Err("`cvt.pack` is supported to .u16 .s16 .u8 .s8".into());
            }
            if need_ty(m, opcode)? != Type::S32 {
                return Err("`cvt.pack` converts .s32 values".into());
            }
            if dst.bits() == 8 && need_ty(m, opcode)? != Type::B32 {
                return Err("`cvt.pack` to 8 bits needs a .b32 third type".into());
            }
            Op::CvtPack { dst }
        }
        "membar" => {
            m.take_map(|w| matches!(w, "cta" | "gl" | "sys").then_some(()))
                .ok_or("`membar` needs .cta, .gl or .sys")?;
            Op::Nop
        }
        "fence" => {
            if m.take("proxy") {
                m.take_map(|w| {
                    matches!(
                        w,
                        "alias"
                            | "async"
                            | "async::global"
                            | "async::shared::cta"
                            | "async::shared::cluster"
                    )
                    .then_some(())
                })
                .ok_or("`fence.proxy` is supported with .alias and .async")?;
                m.take_map(space_word);
            } else {
                let (sem, scope) = m.ordering();
                if sem.is_none() && scope.is_none() {
                    return Err("`fence` needs .sc or .acq_rel and a scope".into());
                }
            }
            Op::Nop
        }
        "nanosleep" => {
            need_ty(m, opcode)?;
            Op::Nop
        }
        "prefetch" | "prefetchu" => {
            m.take_map(space_word);
            m.take_map(|w| {
                matches!(w, "L1" | "L2" | "L2::evict_last" | "L2::evict_normal").then_some(())
            })
            .ok_or_else(|| format!("`{opcode}` needs a cache level (.L1 or .L2)"))?;
            Op::Nop
        }
        "bar" | "barrier" if m.has("arrive") || m.has("red") => {
            m.take("cta");
            m.take("aligned");
            if m.take("arrive") {
                Op::Nop
            } else {
                m.take("red");
                let op = m
                    .take_map(|w| {
                        Some(match w {
                            "popc" => BarRedOp::Popc,
                            "and" => BarRedOp::And,
                            "or" => BarRedOp::Or,
                            _ => return None,
                        })
                    })
                    .ok_or_else(|| format!("`{opcode}.red` needs .popc, .and or .or"))?;
                m.take("aligned");
                let ty = need_ty(m, opcode)?;
                let want = if op == BarRedOp::Popc {
                    Type::U32
                } else {
                    Type::Pred
                };
                if ty != want {
                    return Err(format!(
                        "`{opcode}.red.{}` needs .{}",
                        format!("{op:?}").to_lowercase(),
                        want.name()
                    ));
                }
                Op::BarRed(op)
            }
        }
        "match" => {
            m.take("sync");
            let all = if m.take("all") {
                true
            } else if m.take("any") {
                false
            } else {
                return Err("`match` needs .any or .all".into());
            };
            m.take("sync");
            let ty = need_ty(m, opcode)?;
            if !matches!(ty, Type::B32 | Type::B64) {
                return Err("`match` needs .b32 or .b64".into());
            }
            Op::Match { all, ty }
        }
        "redux" => {
            m.take("sync");
            let op = m
                .take_map(|w| {
                    Some(match w {
                        "add" => ReduxOp::Add,
                        "min" => ReduxOp::Min,
                        "max" => ReduxOp::Max,
                        "and" => ReduxOp::And,
                        "or" => ReduxOp::Or,
                        "xor" => ReduxOp::Xor,
                        _ => return None,
                    })
                })
                .ok_or("`redux` needs .add .min .max .and .or or .xor")?;
            let ty = need_ty(m, opcode)?;
            let ok = match op {
                ReduxOp::Add | ReduxOp::Min | ReduxOp::Max => matches!(ty, Type::U32 | Type::S32),
                _ => ty == Type::B32,
            };
            if !ok {
                return Err(format!(
                    "`redux.sync.{}` is not supported for .{}",
                    format!("{op:?}").to_lowercase(),
                    ty.name()
                ));
            }
            Op::Redux { op, ty }
        }
        "call" => {
            m.take("uni");
            Op::Call
        }
        "isspacep" => {
            let space = m
                .take_map(space_word)
                .filter(|s| !matches!(s, StateSpace::Reg | StateSpace::Generic))
                .ok_or("`isspacep` needs .global .shared .local .const or .param")?;
            Op::Isspacep(space)
        }
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The opcodes the simulator executes, for error messages.
pub const SUPPORTED: &str =
    "ld ldu st mov cvta cvt cvt.pack isspacep prefetch prefetchu atom red add sub mul mad fma div \
rem min max neg abs sad mul24 mad24 add.cc addc sub.cc subc mad.cc madc and or xor not cnot lop3 \
shl shr shf popc clz brev bfe bfi bfind fns prmt bmsk szext dp4a dp2a rcp sqrt rsqrt ex2 lg2 sin \
cos tanh copysign testp setp set selp slct bra call ret exit bar.sync barrier.sync bar.arrive \
barrier.arrive bar.red barrier.red bar.warp.sync membar fence nanosleep shfl.sync vote.sync \
match.sync redux.sync activemask";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_modifiers_in_any_order() {
        let want = Op::Ld(MemOp {
            space: StateSpace::Global,
            cache: CacheOp::Ca,
            vec: 4,
            ty: Type::F32,
            volatile: false,
            nc: false,
        });
        assert_eq!(decode("ld", &["global", "ca", "v4", "f32"]), Ok(want));
        assert_eq!(decode("ld", &["v4", "f32", "ca", "global"]), Ok(want));
    }

    #[test]
    fn unknown_modifier_is_named() {
        let e = decode("ld", &["global", "L1::evict_last", "u32"]).unwrap_err();
        assert!(e.contains(".L1::evict_last"), "{e}");
        let e = decode("add", &["s32", "relu"]).unwrap_err();
        assert_eq!(e, "unsupported modifier .relu on `add`");
    }

    #[test]
    fn unsupported_instruction_lists_what_is() {
        let e = decode("tex", &["2d"]).unwrap_err();
        assert!(
            e.starts_with("unsupported instruction `tex`; supported: ld "),
            "{e}"
        );
    }

    #[test]
    fn mul_wide() {
        assert_eq!(
            decode("mul", &["wide", "u32"]),
            Ok(Op::Alu {
                op: AluOp::Mul,
                ty: Type::U32,
                mode: MulMode::Wide,
                sat: false
            })
        );
    }

    #[test]
    fn atomics_take_ordering_scope_and_space_in_any_order() {
        let want = |space, kind, ty| Ok(Op::Atom(AtomOp { space, kind, ty }));
        assert_eq!(
            decode("atom", &["global", "add", "u32"]),
            want(StateSpace::Global, AtomKind::Add, Type::U32)
        );
        assert_eq!(
            decode("atom", &["acquire", "gpu", "shared::cta", "cas", "b64"]),
            want(StateSpace::Shared, AtomKind::Cas, Type::B64)
        );
        assert_eq!(
            decode("atom", &["global", "relaxed", "sys", "inc", "u32"]),
            want(StateSpace::Global, AtomKind::Inc, Type::U32)
        );
        assert_eq!(
            decode("red", &["add", "f32"]),
            Ok(Op::Red(AtomOp {
                space: StateSpace::Generic,
                kind: AtomKind::Add,
                ty: Type::F32
            }))
        );
        assert!(decode("atom", &["global", "inc", "s32"]).is_err());
        assert!(decode("red", &["global", "cas", "b32"]).is_err());
        assert!(decode("atom", &["local", "add", "u32"]).is_err());
        let e = decode("atom", &["global", "add", "L2::cache_hint", "u32"]).unwrap_err();
        assert!(e.contains(".L2::cache_hint"), "{e}");
    }

    #[test]
    fn carry_forms() {
        assert_eq!(
            decode("add", &["cc", "u32"]),
            Ok(Op::Carry {
                op: CarryOp::Add,
                ty: Type::U32,
                mode: MulMode::None,
                cc_in: false,
                cc_out: true
            })
        );
        assert_eq!(
            decode("madc", &["hi", "cc", "u64"]),
            Ok(Op::Carry {
                op: CarryOp::Mad,
                ty: Type::U64,
                mode: MulMode::Hi,
                cc_in: true,
                cc_out: true
            })
        );
        assert!(decode("addc", &["f32"]).is_err());
        assert!(decode("mad", &["cc", "u32"]).is_err());
    }

    #[test]
    fn barriers_fences_and_hints() {
        assert_eq!(decode("bar", &["cta", "sync"]), Ok(Op::BarSync));
        assert_eq!(decode("barrier", &["sync", "aligned"]), Ok(Op::BarSync));
        assert_eq!(decode("bar", &["arrive"]), Ok(Op::Nop));
        assert_eq!(
            decode("bar", &["red", "popc", "u32"]),
            Ok(Op::BarRed(BarRedOp::Popc))
        );
        assert_eq!(
            decode("barrier", &["cta", "red", "and", "aligned", "pred"]),
            Ok(Op::BarRed(BarRedOp::And))
        );
        assert!(decode("bar", &["red", "popc", "pred"]).is_err());
        assert_eq!(decode("membar", &["gl"]), Ok(Op::Nop));
        assert_eq!(decode("fence", &["acq_rel", "gpu"]), Ok(Op::Nop));
        assert_eq!(decode("fence", &["sc", "cta"]), Ok(Op::Nop));
        assert_eq!(decode("fence", &["proxy", "async"]), Ok(Op::Nop));
        assert_eq!(decode("nanosleep", &["u32"]), Ok(Op::Nop));
        assert_eq!(decode("prefetch", &["global", "L2"]), Ok(Op::Nop));
        assert_eq!(decode("prefetchu", &["L1"]), Ok(Op::Nop));
        let relaxed = decode("ld", &["relaxed", "gpu", "global", "u32"]);
        assert!(matches!(
            relaxed,
            Ok(Op::Ld(MemOp {
                cache: CacheOp::Cg,
                ..
            }))
        ));
        let cta = decode("ld", &["relaxed", "cta", "global", "u32"]);
        assert!(matches!(
            cta,
            Ok(Op::Ld(MemOp {
                cache: CacheOp::Default,
                ..
            }))
        ));
        assert!(matches!(
            decode("st", &["shared::cta", "v2", "u32"]),
            Ok(Op::St(MemOp {
                space: StateSpace::Shared,
                vec: 2,
                ..
            }))
        ));
    }

    #[test]
    fn what_stays_unsupported_is_named() {
        for (op, mods) in [
            ("tex", &["2d", "v4", "f32", "s32"][..]),
            (
                "mma",
                &[
                    "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32",
                ],
            ),
            (
                "wmma",
                &["load", "a", "sync", "aligned", "row", "m16n16k16", "f16"],
            ),
            ("cp", &["async", "ca", "shared", "global"]),
        ] {
            let e = decode(op, mods).unwrap_err();
            assert!(
                e.starts_with(&format!("unsupported instruction `{op}`")),
                "{e}"
            );
        }
        assert_eq!(decode("add", &["f16"]).unwrap_err(), F16_ARITHMETIC);
        assert!(decode("cvt", &["rn", "f16", "f32"]).is_ok());
    }
}

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
    let space = m
        .take_map(StateSpace::from_word)
        .unwrap_or(StateSpace::Generic);
    if space == StateSpace::Reg {
        return Err(format!("`{opcode}` cannot address .reg"));
    }
    let volatile = m.take("volatile");
    let nc = is_load && m.take("nc");
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
        .unwrap_or_default();
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
        if let Some(r) = rnd {
            if r != Rounding::Rn {
                return Err(format!(
                    "unsupported rounding modifier .{r:?} on `{opcode}` (only .rn)"
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
        Ok(Op::Alu { op, ty, mode, sat })
    };
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
            Op::Setp {
                cmp: c,
                bool_op,
                ty: need_ty(m, opcode)?,
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
            // bar.sync and barrier.sync (with the optional .aligned) wait for the whole CTA.
            if !(m.take("sync") || m.take("cta") && m.take("sync")) {
                return Err(format!("only `{opcode}.sync` is supported"));
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

/// The opcodes the simulator executes, for error messages.
pub const SUPPORTED: &str =
    "ld ldu st mov cvta cvt add sub mul mad fma div rem min max neg abs and or xor not cnot \
shl shr popc clz brev rcp sqrt rsqrt setp selp bra ret exit bar.sync barrier.sync bar.warp.sync \
shfl.sync vote.sync activemask";

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
        let e = decode("add", &["s32", "cc"]).unwrap_err();
        assert_eq!(e, "unsupported modifier .cc on `add`");
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
}

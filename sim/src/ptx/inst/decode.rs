//! The decoder ([`decode`]): an opcode and its modifiers, taken in any order, to an [`Op`]; the
//! main table of opcodes, the modifiers' helpers and the type rules.

use super::ext::decode_ext;
use super::{
    AluOp, AtomKind, BoolOp, CacheOp, Cmp, MemOp, MulMode, Op, Rounding, ShflMode, VoteMode,
};
use crate::ptx::ast::{StateSpace, Type};

/// Consumes the modifiers of one instruction; whatever is left at the end is unsupported.
pub(super) struct Mods<'a> {
    words: Vec<&'a str>,
}

impl<'a> Mods<'a> {
    pub(super) fn take(&mut self, w: &str) -> bool {
        match self.words.iter().position(|x| *x == w) {
            Some(i) => {
                self.words.remove(i);
                true
            }
            None => false,
        }
    }

    pub(super) fn take_map<T>(&mut self, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        let (i, v) = self
            .words
            .iter()
            .enumerate()
            .find_map(|(i, w)| f(w).map(|v| (i, v)))?;
        self.words.remove(i);
        Some(v)
    }

    pub(super) fn ty(&mut self) -> Option<Type> {
        self.take_map(Type::from_word)
    }

    pub(super) fn has(&self, w: &str) -> bool {
        self.words.contains(&w)
    }

    /// Takes the memory-ordering qualifiers (`.relaxed .acquire .release .acq_rel .sc .weak` and
    /// the scopes `.cta .cluster .gpu .sys`); returns (strong semantics, scope) when given.
    pub(super) fn ordering(&mut self) -> (Option<&'static str>, Option<&'static str>) {
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
pub(super) fn space_word(w: &str) -> Option<StateSpace> {
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

pub(super) fn need_ty(m: &mut Mods, opcode: &str) -> Result<Type, String> {
    m.ty()
        .ok_or_else(|| format!("`{opcode}` needs a type (.u32, .f32, ...)"))
}

pub(super) fn rounding(w: &str) -> Option<Rounding> {
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

pub(super) fn cmp(w: &str) -> Option<Cmp> {
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

pub(super) fn mem_op(opcode: &str, m: &mut Mods, is_load: bool) -> Result<MemOp, String> {
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
    if let Some(op) = super::half::decode_half(opcode, m) {
        return op;
    }
    if let Some(op) = super::tensor::decode_tensor(opcode, m) {
        return op;
    }
    if let Some(op) = super::texture::decode_texture(opcode, m) {
        return op;
    }
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

pub(super) const F16_ARITHMETIC: &str =
    "this operation is not supported on half-precision types (add sub mul fma min max neg abs setp cvt are)";

/// Type rules of the arithmetic operations beyond "an integer or a float type".
fn check_alu_type(opcode: &str, op: AluOp, ty: Type, mode: MulMode) -> Result<(), String> {
    if ty.is_half() {
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
pub(super) fn atom_type_ok(kind: AtomKind, ty: Type) -> bool {
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

/// The opcodes the simulator executes, for error messages.
pub const SUPPORTED: &str =
    "ld ldu st mov cvta cvt cvt.pack isspacep prefetch prefetchu atom red add sub mul mad fma div \
rem min max neg abs sad mul24 mad24 add.cc addc sub.cc subc mad.cc madc and or xor not cnot lop3 \
shl shr shf popc clz brev bfe bfi bfind fns prmt bmsk szext dp4a dp2a rcp sqrt rsqrt ex2 lg2 sin \
cos tanh copysign testp setp set selp slct bra call ret exit bar.sync barrier.sync bar.arrive \
barrier.arrive bar.red barrier.red bar.warp.sync membar fence nanosleep shfl.sync vote.sync \
match.sync redux.sync activemask cp.async cp.async.commit_group cp.async.wait_group \
cp.async.wait_all ldmatrix stmatrix mma.sync (m16n8k8, m16n8k16, m16n8k32) wmma (m16n16k16 .f16) tex.1d tex.2d tld4.2d \
suld.b sust.b (texture and surface objects)";

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
        let e = decode("surf", &["2d"]).unwrap_err();
        assert!(
            e.starts_with("unsupported instruction `surf`; supported: ld "),
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
    fn what_stays_unsupported_is_named() {
        let mods = [
            "mma_async",
            "sync",
            "aligned",
            "m64n64k16",
            "f32",
            "f16",
            "f16",
        ];
        let e = decode("wgmma", &mods).unwrap_err();
        assert!(e.starts_with("unsupported instruction `wgmma`"), "{e}");
        assert_eq!(
            decode("rcp", &["approx", "f16"]).unwrap_err(),
            F16_ARITHMETIC
        );
        assert!(decode("add", &["f16"]).is_ok());
        assert!(decode("cvt", &["rn", "f16", "f32"]).is_ok());
    }
}

//! Operand types as ptxas checks them, before anything runs: a register whose declared type does
//! not fit the instruction's operand is an error naming the line, as ptxas refuses it
//! ("Arguments mismatch for instruction 'add'"); an integer immediate wider than its operand
//! keeps its low bits, as ptxas keeps them, with a note saying so.
//!
//! The rules are the PTX ISA's ("Operand Type Information", "Type Checking Rules"; "Operand Size
//! Exceeding Instruction-Type Size", "Relaxed Type-checking Rules"), and each was tried on ptxas
//! 12.9 for sm_90:
//! - an operand of a bit-size type (`.b32`) takes a register of any type of its size;
//! - a signed or unsigned one (`.s32`, `.u32`) a bit-size, signed or unsigned register of its size,
//!   never a float one (`add.u32 %r, %f, ...` is refused);
//! - a float one (`.f32`) a bit-size or float register of its size, never an integer one;
//! - a predicate only a predicate register, and a predicate register nothing else;
//! - the data operands of `ld`, `st` and `cvt` (the relaxed rules) may be registers wider than
//!   the type, of the kinds above, except that a float type takes only a float register of its
//!   own size (`ld.global.f32 %rd1` is accepted, `ld.global.f32 %fd1` refused).
//!
//! - the warp-level and pack instructions, tried one operand at a time on ptxas 12.9 (sm_90):
//!   `shfl.sync` `d[|p], a, b, c, membermask` takes `.b32` for `d`, `a`, `b`, `c` (a float
//!   register fits) and `.u32` for the mask (a float register does not); `vote.sync.ballot.b32`'s
//!   `d` is `.b32`, the other votes' a predicate; `match.sync`'s `d` and `bar.red.popc`'s `d`,
//!   `a`, `b` are `.u32` (`.s32` fits, `.f32` does not); `bar.red.and/or`'s `d` is a predicate;
//!   `cvt.pack`'s operands follow the relaxed rules of `cvt` (`d` `.u32`, `a`, `b` `.s32`, `c`
//!   `.b32`: a `.b64` register fits, a `.f32` one fits only `c`). Only `shfl` and `match.all` take
//!   a predicate output `d|p` ("Predicate output not allowed for instruction 'vote'").
//!
//! An immediate of an integer operand narrower than 64 bits holds from the signed minimum to the
//! unsigned maximum of its width (`-2^31` to `2^32 - 1` for 32 bits); ptxas accepts a wider one
//! without a word and keeps its low bits (`add.u32 %r1, %r2, 0x1200000005` assembles to the same
//! cubin as `add.u32 %r1, %r2, 5`), and so does the simulator, with a note naming the line.

use super::Ctx;
use crate::error::Error;
use crate::ptx::ast::{Operand, Type};
use crate::ptx::inst::{AluOp, BarRedOp, BitOp, MulMode, Op, VoteMode};

/// Whether a register declared `reg` may be an operand of type `want`; `relaxed` for the data
/// operands of `ld`, `st` and `cvt`, which may be wider (see the module docs).
pub(super) fn fits(reg: Type, want: Type, relaxed: bool) -> bool {
    if reg == Type::Pred || want == Type::Pred {
        return reg == want;
    }
    let size = if relaxed {
        reg.bits() >= want.bits()
    } else {
        reg.bits() == want.bits()
    };
    if want.is_bits() {
        size
    } else if want.is_float() {
        if reg.is_bits() {
            size
        } else {
            reg.is_float() && reg.bits() == want.bits()
        }
    } else {
        !reg.is_float() && size
    }
}

/// The type of an instruction's destination operand and whether the relaxed rules apply; `None`
/// where the destination is not checked or the instruction has none. The optional predicate
/// output of `shfl` and `match.all` (`d|p`) is [`pred_output`]'s.
pub(super) fn dst_type(op: Op) -> Option<(Type, bool)> {
    Some(match op {
        Op::Shfl(_) | Op::Vote(VoteMode::Ballot) => (Type::B32, false),
        Op::Vote(_) | Op::BarRed(BarRedOp::And | BarRedOp::Or) => (Type::Pred, false),
        Op::Match { .. } | Op::BarRed(BarRedOp::Popc) => (Type::U32, false),
        Op::CvtPack { .. } => (Type::U32, true),
        Op::Ld(m) => (m.ty, true),
        Op::Cvt { dst, .. } => (dst, true),
        Op::Mov(ty) | Op::Selp(ty) => (ty, false),
        Op::Cvta { .. } => (Type::U64, false),
        Op::Alu { op, ty, mode, .. } => match op {
            AluOp::Popc | AluOp::Clz => (Type::U32, false),
            AluOp::Mul | AluOp::Mad if mode == MulMode::Wide => (ty.widened(), false),
            _ => (ty, false),
        },
        Op::Setp { .. } | Op::Testp { .. } | Op::Isspacep(_) | Op::HalfSetp { .. } => {
            (Type::Pred, false)
        }
        Op::Half(h) => (h.ty, false),
        Op::HalfCvt(c) => (c.dst, true),
        Op::Set { dst, .. } => (dst, false),
        Op::Carry { ty, mode, .. } if mode != MulMode::Wide => (ty, false),
        Op::Slct { ty, .. } | Op::FloatRnd { ty, .. } | Op::Redux { ty, .. } => (ty, false),
        Op::Atom(m) => (m.ty, false),
        Op::Bits(b) => match b {
            BitOp::Bfe(t) | BitOp::Bfi(t) => (t, false),
            BitOp::Bfind { .. } => (Type::U32, false),
            _ => (Type::B32, false),
        },
        _ => return None,
    })
}

/// For the instructions whose destination is one register and may be followed by a predicate
/// output (`shfl.sync d|p`, `match.all.sync d|p`): whether that output is allowed. `None` for
/// the other instructions, whose vector destinations are checked element by element.
pub(super) fn pred_output(op: Op) -> Option<bool> {
    match op {
        Op::Shfl(_) => Some(true),
        Op::Match { all, .. } => Some(all),
        Op::Vote(_) | Op::BarRed(_) | Op::CvtPack { .. } => Some(false),
        _ => None,
    }
}

impl Ctx<'_> {
    /// Checks that register `name` (index `i`) fits an operand of type `want` ([`fits`]).
    pub(super) fn check_reg(
        &self,
        name: &str,
        i: u16,
        want: Type,
        relaxed: bool,
    ) -> Result<(), Error> {
        let Some(&Some(reg)) = self.reg_types.get(usize::from(i)) else {
            return Ok(()); // a parameter slot, or the hidden carry flag
        };
        if fits(reg, want, relaxed) {
            return Ok(());
        }
        let what = if reg == Type::Pred {
            format!("`{name}` is a .pred register, not a .{} value", want.name())
        } else if want == Type::Pred {
            format!("`{name}` is a .{} register, not a predicate", reg.name())
        } else {
            format!(
                "`{name}` is declared .{}, which does not fit the .{} operand",
                reg.name(),
                want.name()
            )
        };
        Err(self.err(format!(
            "{what} (ptxas: \"Arguments mismatch for instruction '{}'\")",
            self.opcode()
        )))
    }

    /// Checks the destination registers of the instruction against [`dst_type`]; a vector of
    /// `mov` unpacks into elements of `elem` (its packing), one of `setp` holds two predicates.
    pub(super) fn check_dst(&self, elem: Option<Type>) -> Result<(), Error> {
        let (Some((want, relaxed)), Some(o)) = (dst_type(self.inst.op), self.inst.args.first())
        else {
            return Ok(());
        };
        if let (Some(allowed), Operand::Vector(v)) = (pred_output(self.inst.op), o) {
            return self.check_pred_output(v, want, allowed);
        }
        let names: Vec<&str> = match o {
            Operand::Reg(r) | Operand::Symbol(r) => vec![r],
            Operand::Vector(v) => v
                .iter()
                .filter_map(|x| match x {
                    Operand::Reg(r) | Operand::Symbol(r) => Some(r.as_str()),
                    _ => None,
                })
                .collect(),
            _ => vec![],
        };
        let want = match (o, elem) {
            (Operand::Vector(_), Some(e)) => e,
            _ => want,
        };
        for n in names {
            if let Some(&i) = self.regs.get(n) {
                self.check_reg(n, i, want, relaxed)?;
            }
        }
        Ok(())
    }

    /// The destination `d|p` (parsed as a vector of two) of an instruction whose `d` has type
    /// `want`, where a predicate output is `allowed` ([`pred_output`]); ptxas's words.
    fn check_pred_output(&self, v: &[Operand], want: Type, allowed: bool) -> Result<(), Error> {
        let op = self.opcode();
        if !allowed {
            let op = match self.inst.op {
                Op::Match { .. } => "match.any".to_string(),
                _ => op,
            };
            return Err(self.err(format!(
                "`{op}` writes one register, not a vector or `d|p` (ptxas: \"Predicate output \
not allowed for instruction '{op}'\")"
            )));
        }
        let mut regs = vec![];
        for x in v {
            match x {
                Operand::Reg(r) | Operand::Symbol(r) => regs.push((r.as_str(), self.reg(r)?)),
                _ => break,
            }
        }
        let [(d, di), (p, pi)] = regs[..] else {
            return Err(self.err(format!(
                "`{op}` writes one register and an optional predicate `d|p` (ptxas: \"Arguments \
mismatch for instruction '{op}'\")"
            )));
        };
        self.check_reg(d, di, want, false)?;
        if self.reg_types.get(usize::from(pi)) != Some(&Some(Type::Pred)) {
            return Err(self.err(format!(
                "`{p}` after `|` must be a .pred register (ptxas: \"Predicate output expected for \
instruction '{op}'\")"
            )));
        }
        Ok(())
    }

    /// The bits of integer immediate `v` for an operand of type `ty`: `v` where the type's width
    /// holds it, else its low bits as ptxas keeps them, with a note naming the line.
    pub(super) fn int_imm(&self, v: i64, ty: Type) -> u64 {
        if ty == Type::Pred || ty.bits() >= 64 || ty.holds_int(v) {
            return v as u64;
        }
        let kept = v as u64 & ((1u64 << ty.bits()) - 1); // bits < 64, checked above
        self.notes.borrow_mut().push(format!(
            "{}:{}: the immediate {v} does not fit the .{} operand of `{}`: ptxas keeps its low \
             {} bits ({kept}), and so does the simulator",
            self.file,
            self.inst.line,
            ty.name(),
            self.text(),
            ty.bits()
        ));
        kept
    }

    /// The instruction's text on one line.
    fn text(&self) -> String {
        let t = &self.src[self.inst.span.clone()];
        t.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The opcode as ptxas names it in its messages (`add`, `mul.wide`).
    fn opcode(&self) -> String {
        let t = &self.src[self.inst.span.clone()];
        let word = t
            .split_whitespace()
            .find(|w| !w.starts_with('@'))
            .unwrap_or("");
        let mut parts = word.split('.');
        let first = parts.next().unwrap_or("");
        match (first, parts.next()) {
            (_, Some("wide")) | ("bar", Some("red")) | ("cvt", Some("pack")) => {
                format!("{first}.{}", word.split('.').nth(1).unwrap_or(""))
            }
            _ => first.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::decode::{decode, Program};
    use Type::*;

    /// Decodes kernel `k` with the registers of every kind declared, and `body`.
    fn decoded(body: &str) -> Result<Program, Error> {
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .pred %p<3>; .reg .b32 %r<5>; .reg .b64 %rd<5>; .reg .f32 %f<3>;\n\
             .reg .b16 %h<3>;\n{body}\nret;\n}}\n"
        );
        let m = crate::ptx::parse(&text, "t.ptx").unwrap();
        decode(m.entry("k").unwrap(), &Default::default(), &text, "t.ptx")
    }

    #[test]
    fn destinations_and_wide_operands_are_typed_per_instruction() {
        for ok in [
            "mad.wide.u32 %rd1, %r1, %r2, %rd2;", // the addend is as wide as the result
            "mul.wide.u16 %r1, %h1, %h2;",
            "popc.b64 %r1, %rd1;", // popc and clz count into a .u32
            "clz.b64 %r1, %rd1;",
            "bfind.u64 %r1, %rd1;",
            "mov.b64 {%r1, %r2}, %rd1;",
            "mov.b32 %r1, {%h1, %h2};",
            "setp.lt.and.f32 %p1|%p2, %f1, %f2, !%p0;",
            "selp.f32 %f1, %r1, %f2, %p1;",
            "shl.b64 %rd1, %rd1, %r1;",
            "cvt.rn.f32.u16 %f1, %r1;",
            "and.pred %p1, %p1, %p2;",
            "@!%p1 mov.u32 %r1, 0xffffffff;",
        ] {
            let p = decoded(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert!(p.notes.is_empty(), "{ok}: {:?}", p.notes);
        }
        for (bad, want) in [
            ("mul.wide.u32 %r1, %r1, %r2;", "'mul.wide'"),
            (
                "mad.wide.u32 %rd1, %r1, %r2, %r3;",
                "`%r3` is declared .b32",
            ),
            (
                "shl.b64 %rd1, %rd1, %rd2;",
                "`%rd2` is declared .b64, which does not fit the .u32",
            ),
            (
                "mov.b64 {%rd1, %r2}, %rd1;",
                "`%rd1` is declared .b64, which does not fit the .b32",
            ),
            ("popc.b64 %rd1, %rd1;", "does not fit the .u32 operand"),
            ("cvt.rn.f32.u32 %f1, %f2;", "`%f2` is declared .f32"),
            (
                "selp.b32 %r1, %r2, %r3, %r4;",
                "`%r4` is a .b32 register, not a predicate",
            ),
            ("vote.sync.any.pred %p1, %r1, -1;", "not a predicate"),
            ("@%r1 ret;", "the guard `%r1` is not a .pred register"),
        ] {
            let e = decoded(bad).map(|_| ()).unwrap_err().to_string();
            assert!(e.starts_with("t.ptx:8:") && e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn a_wide_immediate_keeps_its_low_bits_with_a_note() {
        let p = decoded("add.u32 %r1, %r2, 0x1200000005;").unwrap();
        assert_eq!(p.insts[0].src[1], crate::ptx::decode::Src::Imm(5));
        assert_eq!(p.notes.len(), 1);
        assert!(
            p.notes[0].starts_with("t.ptx:8: the immediate 77309411333"),
            "{:?}",
            p.notes
        );
        // The signed minimum to the unsigned maximum of the width: no note.
        for fits in ["-2147483648", "4294967295", "-1"] {
            let p = decoded(&format!("add.s32 %r1, %r2, {fits};")).unwrap();
            assert!(p.notes.is_empty(), "{fits}");
        }
        let p = decoded("add.u16 %h1, %h2, 65536;").unwrap();
        assert_eq!(p.insts[0].src[1], crate::ptx::decode::Src::Imm(0));
        assert!(p.notes[0].contains("low 16 bits (0)"), "{:?}", p.notes);
    }

    /// `d|p` in braces, `{%r2, %p2}`: ptxas 12.9 refuses it ("Arguments mismatch for
    /// instruction 'shfl'", and 'setp', 'match'); it was taken as `d|p`. `ld.v2` still takes a
    /// vector of two.
    #[test]
    fn a_pair_destination_in_braces_is_refused_as_ptxas_refuses_it() {
        let text = |body: &str| {
            format!(
                ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
                 .reg .pred %p<3>; .reg .b32 %r<5>; .reg .b64 %rd<5>;\n{body}\nret;\n}}\n"
            )
        };
        for (bad, op, spelling) in [
            (
                "shfl.sync.down.b32 {%r2, %p2}, %r1, 4, 31, -1;",
                "shfl",
                "%r2|%p2",
            ),
            ("setp.lt.s32 {%p1, %p2}, %r1, 4;", "setp", "%p1|%p2"),
            (
                "match.all.sync.b32 {%r2, %p2}, %r1, -1;",
                "match",
                "%r2|%p2",
            ),
        ] {
            let e = crate::ptx::parse(&text(bad), "t.ptx")
                .unwrap_err()
                .to_string();
            assert_eq!(
                e.lines().next().unwrap(),
                format!(
                    "t.ptx:7:{}: `{op}` writes a second destination after `|` (`{spelling}`), \
                     not in a vector `{{...}}` (ptxas: \"Arguments mismatch for instruction \
                     '{op}'\"): `{bad}`",
                    bad.find('{').unwrap() + 1
                ),
                "{bad}"
            );
        }
        crate::ptx::parse(&text("ld.global.v2.u32 {%r2, %r3}, [%rd1];"), "t.ptx").unwrap();
    }

    /// Each case as ptxas 12.9 (`-arch=sm_90`) answered it: accepted, or its message.
    #[test]
    fn warp_and_pack_operands_are_typed_as_ptxas_types_them() {
        for ok in [
            "shfl.sync.idx.b32 %f1, %r1, 1, 31, -1;",
            "shfl.sync.idx.b32 %r2|%p2, %f1, %f2, %f1, -1;",
            "shfl.sync.down.b32 %r2, %r1, %r3, 31, %r4;",
            "vote.sync.ballot.b32 %f1, %p1, -1;",
            "vote.sync.all.pred %p2, !%p1, -1;",
            "match.any.sync.b32 %r2, %f1, -1;",
            "match.any.sync.b64 %r2, %rd1, -1;",
            "match.all.sync.b64 %r2|%p2, %rd1, -1;",
            "bar.red.popc.u32 %r2, 0, !%p1;",
            "bar.red.popc.u32 %r2, %r1, 64, %p1;",
            "bar.red.and.pred %p2, 0, %p1;",
            "cvt.pack.sat.u16.s32 %rd2, %rd1, %r3;",
            "cvt.pack.sat.u8.s32.b32 %r2, %r1, %r3, %f1;",
        ] {
            decoded(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        let mismatch = |op: &str| format!("(ptxas: \"Arguments mismatch for instruction '{op}'\")");
        for (bad, want) in [
            ("shfl.sync.idx.b32 %rd2, %r1, 1, 31, -1;", mismatch("shfl")),
            ("shfl.sync.idx.b32 %h2, %r1, 1, 31, -1;", mismatch("shfl")),
            (
                "shfl.sync.idx.b32 %p2, %r1, 1, 31, -1;",
                "is a .pred register".into(),
            ),
            (
                "shfl.sync.idx.b32 %rd2|%p2, %r1, 1, 31, -1;",
                mismatch("shfl"),
            ),
            (
                "shfl.sync.idx.b32 %r2|%r3, %r1, 1, 31, -1;",
                "(ptxas: \"Predicate output expected for instruction 'shfl'\")".into(),
            ),
            (
                "shfl.sync.idx.b32 %r2, %r1, %rd1, 31, -1;",
                mismatch("shfl"),
            ),
            ("shfl.sync.idx.b32 %r2, %r1, 1, 31, %f1;", mismatch("shfl")),
            ("vote.sync.ballot.b32 %rd2, %p1, -1;", mismatch("vote")),
            (
                "vote.sync.ballot.b32 %p2, %p1, -1;",
                "is a .pred register".into(),
            ),
            ("vote.sync.any.pred %r2, %p1, -1;", "not a predicate".into()),
            ("vote.sync.uni.pred %p2, %p1, %f1;", mismatch("vote")),
            (
                "vote.sync.ballot.b32 %r2|%p2, %p1, -1;",
                "(ptxas: \"Predicate output not allowed for instruction 'vote'\")".into(),
            ),
            ("match.any.sync.b32 %f2, %r1, -1;", mismatch("match")),
            ("match.any.sync.b64 %rd2, %rd1, -1;", mismatch("match")),
            ("match.all.sync.b32 %f2|%p2, %r1, -1;", mismatch("match")),
            (
                "match.any.sync.b32 %r2|%p2, %r1, -1;",
                "(ptxas: \"Predicate output not allowed for instruction 'match.any'\")".into(),
            ),
            ("bar.red.popc.u32 %f2, 0, %p1;", mismatch("bar.red")),
            ("bar.red.popc.u32 %rd2, 0, %p1;", mismatch("bar.red")),
            ("bar.red.popc.u32 %r2, %f1, %p1;", mismatch("bar.red")),
            ("bar.red.popc.u32 %r2, 0, %rd1, %p1;", mismatch("bar.red")),
            ("bar.red.or.pred %r2, 0, %p1;", "not a predicate".into()),
            (
                "bar.red.popc.u32 %r2|%p2, 0, %p1;",
                "(ptxas: \"Predicate output not allowed for instruction 'bar.red'\")".into(),
            ),
            ("cvt.pack.sat.u16.s32 %f2, %r1, %r3;", mismatch("cvt.pack")),
            ("cvt.pack.sat.u16.s32 %h2, %r1, %r3;", mismatch("cvt.pack")),
            ("cvt.pack.sat.u16.s32 %r2, %f1, %r3;", mismatch("cvt.pack")),
            (
                "cvt.pack.sat.u8.s32.b32 %r2, %r1, %r3, %h1;",
                mismatch("cvt.pack"),
            ),
        ] {
            let e = decoded(bad).map(|_| ()).unwrap_err().to_string();
            assert!(e.starts_with("t.ptx:8:") && e.contains(&want), "{bad}: {e}");
        }
    }

    #[test]
    fn register_types_fit_as_ptxas_checks_them() {
        // (register, operand, relaxed, fits): each as ptxas 12.9 answered it for sm_90.
        for (reg, want, relaxed, ok) in [
            (B64, S32, false, false),  // add.s32 %r1, %rd1, %r2
            (B32, S64, false, false),  // add.s64 %rd1, %r1, %rd2
            (Pred, U32, false, false), // add.u32 %r1, %p1, 1
            (B32, Pred, false, false), // selp.b32 %r1, %r2, %r3, %r4
            (B32, F32, false, true),   // add.f32 %f1, %r1, %r2
            (U32, F32, false, false),  // add.f32 %f1, %u1, %f2
            (F32, U32, false, false),  // add.u32 %u1, %f1, %u2
            (U32, S32, false, true),   // add.s32 %u1, %u1, %u2
            (F64, S64, false, false),  // add.s64 %rd1, %fd1, %rd2
            (F32, B32, false, true),   // and.b32 %r1, %f1, %r2
            (U8, U32, false, false),   // add.u32 %c1, %c1, 1
            (B16, F16, false, true),   // add.f16 %h1, %h1, %h2
            (U16, F16, false, false),  // add.f16 %w1, %w1, %w2
            (B64, U32, true, true),    // ld.global.u32 %rd1, [%rd2]
            (B32, U64, true, false),   // ld.global.u64 %r1, [%rd2]
            (B64, F32, true, true),    // ld.global.f32 %rd1, [%rd2]
            (F64, F32, true, false),   // ld.global.f32 %fd1, [%rd2]
            (F64, B32, true, true),    // ld.global.b32 %fd1, [%rd2]
            (F64, U32, true, false),   // ld.global.u32 %fd1, [%rd2]
            (S64, U8, true, true),     // st.global.u8 [%rd2], %s1
            (B32, F16, true, true),    // cvt.f32.f16 %f1, %r1
            (U16, F16, true, false),   // cvt.f32.f16 %f1, %w1
            (Pred, U32, true, false),  // ld.global.u32 %p1, [%rd2]
        ] {
            assert_eq!(
                fits(reg, want, relaxed),
                ok,
                "{reg:?} as {want:?}, relaxed {relaxed}"
            );
        }
    }
}

//! The entries of the table the warp loop reads, one a PC ([`LoopEntry`], made by [`forms`]): what
//! the loop does with the instruction ([`EntryOp`]), a load's or store's [`MemPlan`], and the ends
//! of the runs of plain entries and of the segments.

use super::form::AluForm;
use super::invariant::{invariants, mark_next};
use super::kernel::Opd;
use crate::exec::alu::mask;
use crate::exec::decode::{Addr, DInst, Src, NO_REG};
use crate::memory::image::read_le;
use crate::ptx::ast::{Special, StateSpace, Type};
use crate::ptx::inst::{MemOp, Op};

/// What the warp loop does with one instruction, decided once per launch ([`forms`]).
///
/// Besides the integer [`AluForm`]s, the instructions whose value is the same for every lane of a
/// launch or a block (kernel parameters, `%ntid`, `%ctaid`, immediates and symbol addresses),
/// the `%tid` rows and the control flow of a converged warp run in the warp loop's straight-line
/// path (`exec::step`), which does each one's bookkeeping itself. Every variant but
/// [`EntryOp::AluForm`], [`EntryOp::Bra`] and [`EntryOp::Nop`] is made for unguarded instructions only.
///
/// An explicit one-byte tag (`repr(u8)`), so that the warp loop's dispatch on it is one jump
/// table (a tag in a niche of [`LaneOp`]'s was first mapped to the variant's index by a few
/// instructions per entry).
///
/// [`LaneOp`]: super::LaneOp
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum EntryOp {
    /// The general path of the warp loop.
    General,
    /// An integer form.
    AluForm(AluForm),
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
pub struct LoopEntry {
    /// What the warp loop does.
    pub op: EntryOp,
    /// Guard predicate register, or [`NO_REG`].
    pub guard: u16,
    /// `@!p`.
    pub negated: bool,
    /// The end of the run of [`LoopEntry::plain`] entries from this one: the first PC at or after
    /// this one whose entry is not plain (this PC itself when its entry is not).
    pub run_end: u32,
    /// The end of the segment from this entry ([`LoopEntry::in_segment`]): the first PC at or after
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

impl LoopEntry {
    /// An entry a converged warp runs for all its live lanes with nothing to decide or count
    /// apart: unguarded, and neither control flow nor the general path.
    pub fn plain(&self) -> bool {
        self.guard == NO_REG
            && matches!(
                self.op,
                EntryOp::AluForm(_)
                    | EntryOp::Bcast { .. }
                    | EntryOp::Param { .. }
                    | EntryOp::Ctaid { .. }
                    | EntryOp::Tid { .. }
                    | EntryOp::Nop
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
            EntryOp::Mem(p) => p.word != Word::General,
            EntryOp::Bra { .. } | EntryOp::Exit => true,
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
            EntryOp::Bcast { d, .. } | EntryOp::Param { d, .. } | EntryOp::Tid { d, .. } => {
                Some((d, [None; 3]))
            }
            EntryOp::AluForm(f) => Some((f.d, [reg(f.a), reg(f.b), reg(f.c)])),
            _ => None,
        }
    }
}

impl EntryOp {
    /// The entry of `inst` in `launch`, or [`EntryOp::General`].
    pub fn of(inst: &DInst, launch: &crate::exec::Launch) -> EntryOp {
        if let Some(f) = AluForm::of(inst) {
            return EntryOp::AluForm(f);
        }
        match inst.op {
            Op::Bra => {
                return EntryOp::Bra {
                    target: inst.target,
                }
            }
            Op::WarpSync => return EntryOp::Nop,
            Op::Ld(_) | Op::St(_) if launch.paths.mem_general => return EntryOp::General,
            // Not an `ld.param` at a fixed offset ([`EntryOp::Param`], below).
            Op::Ld(m) if param(inst, m, &launch.params).is_none() || inst.guard != NO_REG => {
                return EntryOp::Mem(MemPlan::of(inst))
            }
            Op::St(_) => return EntryOp::Mem(MemPlan::of(inst)),
            _ => {}
        }
        let d = inst.dst[0];
        if inst.guard != NO_REG || (d == NO_REG && !matches!(inst.op, Op::Exit | Op::Ret)) {
            return EntryOp::General;
        }
        match inst.op {
            Op::Exit | Op::Ret => EntryOp::Exit,
            Op::Mov(ty) if inst.nsrc >= 1 => {
                let m = mask(ty.bits().max(8));
                let block = launch.dims.block;
                match inst.src[0] {
                    Src::Imm(v) => EntryOp::Bcast {
                        d,
                        v: v & m,
                        imc: false,
                    },
                    Src::Special(Special::Ntid(c)) if c < 3 => EntryOp::Bcast {
                        d,
                        v: u64::from(block[usize::from(c)]) & m,
                        imc: true,
                    },
                    Src::Special(Special::Nctaid(c)) if c < 3 => EntryOp::Bcast {
                        d,
                        v: u64::from(launch.dims.grid[usize::from(c)]) & m,
                        imc: true,
                    },
                    Src::Special(Special::Ctaid(c)) if c < 3 => EntryOp::Ctaid { d, c, m },
                    Src::Special(Special::Tid(c)) if c < 3 => EntryOp::Tid { d, c, m },
                    _ => EntryOp::General,
                }
            }
            Op::Ld(m) => param(inst, m, &launch.params).unwrap_or(EntryOp::Mem(MemPlan::of(inst))),
            _ => EntryOp::General,
        }
    }
}

/// The [`EntryOp::Param`] of `ld.param` instruction `inst` (one element at a fixed offset inside
/// the parameter buffer `params`), with the value `exec::mem` reads.
fn param(inst: &DInst, m: MemOp, params: &[u8]) -> Option<EntryOp> {
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
        crate::exec::alu::sext(x, m.ty.bits()) as u64
    } else {
        x
    };
    Some(EntryOp::Param {
        d: inst.dst[0],
        v,
        wide: m.ty.bytes() == 8,
    })
}

/// The pre-decoded entry of each instruction of `launch`'s program, made once per launch.
/// `tid_fixed`: each register file runs one warp of every block (a kernel with barriers, whose
/// warps each have their own file: `exec::run_batch_on_sm`), so that `%tid` is invariant too.
pub fn forms(launch: &crate::exec::Launch, tid_fixed: bool) -> Vec<LoopEntry> {
    let mut pre: Vec<LoopEntry> = launch
        .program
        .insts
        .iter()
        .map(|i| LoopEntry {
            op: EntryOp::of(i, launch),
            guard: i.guard,
            negated: i.guard_negated,
            run_end: 0,
            seg_end: 0,
            invariant: false,
            next: 0,
        })
        .collect();
    if launch.paths.word_general {
        for p in &mut pre {
            if let EntryOp::Mem(plan) = &mut p.op {
                plan.word = Word::General;
            }
        }
    }
    mark_runs(&mut pre);
    if launch.paths.segments_off {
        for (pc, p) in pre.iter_mut().enumerate() {
            p.seg_end = pc as u32;
        }
    }
    invariants(&mut pre, &launch.program.insts, tid_fixed);
    mark_next(&mut pre);
    pre
}

/// Sets each entry's [`LoopEntry::run_end`] and [`LoopEntry::seg_end`], from the last entry back. A
/// segment ends after an exit or an unguarded branch: no warp runs on past them in it (and a
/// segment copies the stream entries of all its PCs before it runs: those of the PCs after
/// would only be taken back).
fn mark_runs(pre: &mut [LoopEntry]) {
    let (mut end, mut seg) = (pre.len() as u32, pre.len() as u32);
    for (pc, p) in pre.iter_mut().enumerate().rev() {
        if !p.plain() {
            end = pc as u32;
        }
        if !p.in_segment() {
            seg = pc as u32;
        } else if matches!(p.op, EntryOp::Exit)
            || (matches!(p.op, EntryOp::Bra { .. }) && p.guard == NO_REG)
        {
            seg = pc as u32 + 1;
        }
        p.run_end = end;
        p.seg_end = seg;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::fast::tests::inst;
    use crate::ptx::inst::{AluOp, MulMode};

    /// A launch of `insts` with parameter buffer `params`, grid (5, 1, 1) of blocks (96, 2, 1).
    fn launch_of<'a>(
        program: &'a crate::exec::Program,
        params: Vec<u8>,
    ) -> crate::exec::Launch<'a> {
        crate::exec::Launch {
            label: "t",
            program,
            params,
            dims: crate::exec::Dims {
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
            sampling: crate::exec::Sampling::Full,
            paths: Default::default(),
            order: Default::default(),
            checks: Default::default(),
            probe_order: false,
            objects: &[],
            memory_left: None,
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
        let program = crate::exec::Program {
            name: "t".into(),
            lines: vec![0; insts.len()],
            locs: vec![None; insts.len()],
            files: vec![],
            texts: vec![String::new(); insts.len()],
            insts,
            num_regs: 4,
            reg_slots: vec![1; 4],
            notes: vec![],
            operands: vec![],
            shared_widths: vec![],
            loop_overlap: vec![],
            local: Default::default(),
        };
        let mut params = 0x1122_3344_5566_7788u64.to_le_bytes().to_vec();
        params.extend((-2i32).to_le_bytes());
        let launch = launch_of(&program, params);
        let got: Vec<EntryOp> = forms(&launch, false).iter().map(|p| p.op).collect();
        let want = [
            EntryOp::Param {
                d: 0,
                v: 0x1122_3344_5566_7788,
                wide: true,
            },
            EntryOp::Param {
                d: 0,
                v: (-2i64) as u64,
                wide: false,
            },
            EntryOp::Param {
                d: 0,
                v: 0xffff_fffe,
                wide: false,
            },
            // Past the end of the buffer: the memory path reports it.
            EntryOp::Mem(MemPlan::of(&program.insts[3])),
            EntryOp::Bcast {
                d: 0,
                v: 0x2345,
                imc: false,
            },
            EntryOp::Bcast {
                d: 0,
                v: 2,
                imc: true,
            },
            EntryOp::Ctaid {
                d: 0,
                c: 0,
                m: 0xffff_ffff,
            },
            EntryOp::Tid {
                d: 0,
                c: 2,
                m: 0xffff_ffff,
            },
            EntryOp::General,
            EntryOp::General,
            EntryOp::Bra { target: 7 },
            EntryOp::Exit,
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
        assert_eq!(AluForm::of(&inst(float_add, &two)), None);
        assert_eq!(AluForm::of(&inst(sat_add, &two)), None);
        assert_eq!(AluForm::of(&inst(mul_hi, &two)), None);
        // A special register or a negated predicate as a source, a mov of an immediate.
        let tid = Src::Special(crate::ptx::ast::Special::Tid(0));
        let add = Op::Alu {
            op: AluOp::Add,
            ty: Type::U32,
            mode: MulMode::None,
            sat: false,
        };
        assert_eq!(AluForm::of(&inst(add, &[tid, Src::Reg(1)])), None);
        assert_eq!(
            AluForm::of(&inst(add, &[Src::NotPred(1), Src::Reg(1)])),
            None
        );
        assert_eq!(AluForm::of(&inst(Op::Mov(Type::U32), &[Src::Imm(3)])), None);
        assert!(AluForm::of(&inst(add, &two)).is_some());
    }

    /// Runs of plain entries end at the next entry that is not plain, or at the program's end;
    /// segments at the next entry neither plain, a word access, a branch nor an exit, or after
    /// an unguarded branch or an exit.
    #[test]
    fn runs_end_at_entries_that_are_not_plain() {
        let pre = |op: EntryOp, guard: u16| LoopEntry {
            op,
            guard,
            negated: false,
            run_end: 0,
            seg_end: 0,
            invariant: false,
            next: 0,
        };
        let bcast = EntryOp::Bcast {
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
            pre(EntryOp::Nop, NO_REG),
            pre(EntryOp::Bra { target: 0 }, NO_REG),
            pre(bcast, NO_REG),
            pre(EntryOp::Nop, 3), // guarded
            pre(EntryOp::General, NO_REG),
            pre(bcast, NO_REG),
            pre(EntryOp::Mem(word), NO_REG),
            pre(EntryOp::Mem(word), 3), // guarded: tested in the segment
            pre(bcast, NO_REG),
            pre(EntryOp::Mem(general), NO_REG),
            pre(EntryOp::Mem(word), NO_REG),
        ];
        mark_runs(&mut p);
        let ends: Vec<u32> = p.iter().map(|p| p.run_end).collect();
        assert_eq!(ends, [2, 2, 2, 4, 4, 5, 7, 7, 8, 10, 10, 11]);
        let segs: Vec<u32> = p.iter().map(|p| p.seg_end).collect();
        assert_eq!(segs, [3, 3, 3, 4, 4, 5, 10, 10, 10, 10, 10, 12]);
    }
}

//! `atom` and `red`: the functional read-modify-write, lane by lane, and the warp-level access
//! handed to the memory models (global atomics to L2, shared atomics to the banks).

use super::{note_worst, resolve, resolved};
use crate::error::Result;
use crate::exec::alu;
use crate::exec::decode::{DInst, Src, NO_REG};
use crate::exec::step::{lanes, Ctx};
use crate::exec::trace::{L2Kind, Outcome, Served, SharedOp};
use crate::exec::warp::Warp;
use crate::memory::shared::{self, Banks};
use crate::memory::system::CasLane;
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::{StateSpace, Type};
use crate::ptx::inst::{AtomKind, AtomOp, Op};

impl Ctx<'_> {
    /// Executes `atom` (returns the old value) or `red`: the active lanes in ascending order, each
    /// atomically (one valid order of a warp's atomics). Returns the latency of the result (`atom`)
    /// or of the acknowledgement (`red`).
    pub fn atomic(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        a: AtomOp,
        exec: u32,
    ) -> Result<u32> {
        let returns = matches!(inst.op, Op::Atom(_)) && inst.dst[0] != NO_REG;
        let addrs = self.addresses(w, inst, exec);
        let bytes = a.ty.bytes() as usize;
        for l in lanes(exec) {
            let (sp, ea) = resolve(a.space, addrs[l]);
            let what = if !matches!(sp, StateSpace::Global | StateSpace::Shared) {
                Some("atomic (only global and shared memory)")
            } else if ea % bytes as u64 != 0 {
                Some("misaligned atomic")
            } else {
                None
            };
            let old = match what {
                None => self.access(w, l, sp, ea, bytes, None),
                Some(_) => None,
            };
            let Some(old) = old else {
                self.note_fault(w, pc, l, what.unwrap_or("atomic"), sp, ea, bytes as u32);
                return Ok(0);
            };
            let b = self.read(w, inst.src[0], l);
            let c = self.read(w, inst.src[1], l);
            let new = alu::atom_apply(a.kind, a.ty, sp == StateSpace::Global, old, b, c);
            if self.access(w, l, sp, ea, bytes, Some(new)).is_none() {
                self.note_fault(w, pc, l, "atomic", sp, ea, bytes as u32);
                return Ok(0);
            }
            if returns {
                w.regs[inst.dst[0] as usize * 32 + l] = old;
            }
            if a.kind == AtomKind::Cas && sp == StateSpace::Global {
                self.log.cas.push(CasLane {
                    word: ea,
                    thread: w.index * 32 + l as u32,
                    won: (old ^ b) & (u64::MAX >> (64 - a.ty.bits())) == 0,
                });
            }
        }
        if exec == 0 {
            return Ok(0);
        }
        let space = resolve(a.space, addrs[exec.trailing_zeros() as usize]).0;
        let popc = popc_increment(inst, a, returns);
        Ok(self.model_atomic(w, pc, a, exec, space, &addrs, returns, popc))
    }

    /// Counts one warp-level atomic in the memory models; returns its latency.
    #[allow(clippy::too_many_arguments)]
    fn model_atomic(
        &mut self,
        w: &mut Warp,
        pc: u32,
        a: AtomOp,
        exec: u32,
        space: StateSpace,
        addrs: &[u64; WARP],
        returns: bool,
        popc: bool,
    ) -> u32 {
        let access = WarpAccess {
            mask: exec,
            addrs: resolved(a.space, addrs),
            bytes: a.ty.bytes(),
        };
        if space == StateSpace::Shared {
            let banks = Banks {
                banks: self.pass.cfg.shared.banks,
                width: self.pass.launch.bank_width,
            };
            let mut wf = if popc {
                // ATOMS.POPC.INC adds, per word, the number of lanes on it: lanes on one word
                // share its wavefront, as a load's lanes do.
                shared::wavefronts(&access, banks)
            } else {
                shared::atomic_wavefronts(&access, banks)
            };
            if a.kind == AtomKind::Cas {
                wf.wavefronts *= shared::CAS_PASSES;
            }
            self.record(
                pc,
                Outcome::Shared {
                    op: SharedOp::Atom,
                    wavefronts: wf.wavefronts,
                    conflicts: 0,
                },
            );
            let ps = &mut self.per_pc[pc as usize];
            note_worst(&mut ps.worst, &access, access.bytes, banks, wf.wavefronts);
            return Served::Shared {
                wavefronts: wf.wavefronts,
            }
            .lat();
        }
        if !w.desc_loaded && self.pass.params.memory_descriptor() {
            // sm_80+ global accesses carry a memory descriptor the warp loads once (ULDC).
            w.desc_loaded = true;
            self.record(pc, Outcome::Uniform { imc: 0, idc: 1 });
        }
        let o = self.caches.atomic(self.pass.params, &access);
        note_words(&mut self.log.atomic_words, &access);
        self.record(
            pc,
            Outcome::Atomic {
                returns,
                sectors: o.sectors,
                misses: o.l1_misses,
                lines: o.lines,
            },
        );
        let ticket = self.log.request(L2Kind::Atomic { returns }, &o.to_l2);
        if returns {
            ticket
        } else {
            // Acknowledged by L2, like a store.
            Served::Acknowledged.lat()
        }
    }
}

/// Whether ptxas makes this instruction `ATOMS.POPC.INC`: a shared-memory `add.u32` of the
/// immediate 1 whose result is discarded (ptxas 12.9, sm_90: `red.shared.add.u32 [a], 1` and an
/// `atom` of it with an unread result; `.s32`, other constants and a returned value stay
/// `ATOMS.ADD`). \[measured\] On an H200 its `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom`
/// is one per instruction with 1, 8 or 32 lanes on each word (suite38's `sh_inc_c*`), where
/// `ATOMS.ADD` takes one wavefront per lane on the busiest bank.
fn popc_increment(inst: &DInst, a: AtomOp, returns: bool) -> bool {
    !returns
        && a.kind == AtomKind::Add
        && a.ty == Type::U32
        && a.space != StateSpace::Global
        && inst.src[0] == Src::Imm(1)
}

/// Appends to `lines` each 128-byte line `access` updates, with the passes the L2 atomic unit
/// makes over it: per 32-byte sector of the line, the lanes on its busiest word.
fn note_words(lines: &mut Vec<(u64, u32)>, access: &WarpAccess) {
    let mut lanes: smallvec::SmallVec<[u64; WARP]> = (0..WARP)
        .filter(|&l| access.mask >> l & 1 == 1)
        .map(|l| access.addrs[l])
        .collect();
    lanes.sort_unstable();
    for line in lanes.chunk_by(|a, b| a / 128 == b / 128) {
        let passes: usize = line
            .chunk_by(|a, b| a / 32 == b / 32)
            .map(|sector| {
                sector
                    .chunk_by(|a, b| a == b)
                    .map(<[u64]>::len)
                    .max()
                    .unwrap_or(0)
            })
            .sum();
        lines.push((line[0] / 128, passes as u32));
    }
}

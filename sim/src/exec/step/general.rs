//! The general path's instruction families that need the warp's context: float counts,
//! shuffles, operands and special registers, and the ALU arms.

use super::*;

impl Ctx<'_> {
    /// Counts a float instruction per active thread under the SASS operation it becomes.
    pub(super) fn count_flops(&mut self, op: AluOp, ty: Type, exec: u32) {
        let double = ty == Type::F64;
        let flop = match (op, double) {
            (AluOp::Add | AluOp::Sub, false) => Flop::Fadd,
            (AluOp::Add | AluOp::Sub, true) => Flop::Dadd,
            (AluOp::Mul, false) => Flop::Fmul,
            (AluOp::Mul, true) => Flop::Dmul,
            (AluOp::Mad | AluOp::Fma, false) => Flop::Ffma,
            (AluOp::Mad | AluOp::Fma, true) => Flop::Dfma,
            _ => return,
        };
        (self.counters).add_flops(flop, u64::from(exec.count_ones()));
    }

    /// `shfl.sync`: each lane reads `a` of a source lane chosen by the mode, `b` and the clamp
    /// and segment mask packed in `c` (PTX ISA §9.7.8.6); out-of-range lanes read their own.
    pub(super) fn shfl(&self, w: &mut Warp, inst: &DInst, mode: ShflMode, exec: u32) {
        let [sa, sb, sc, _] = inst.src;
        let a = self.gather(w, sa, u32::MAX);
        let (b, c) = (self.gather(w, sb, exec), self.gather(w, sc, exec));
        let (d, p) = (inst.dst[0], inst.dst[1]);
        for l in lanes(exec) {
            let lane = l as i64;
            let bval = (b[l] & 0x1f) as i64;
            let cval = (c[l] & 0x1f) as i64;
            let segmask = ((c[l] >> 8) & 0x1f) as i64;
            let max_lane = (lane & segmask) | (cval & !segmask);
            let min_lane = lane & segmask;
            let (j, ok) = match mode {
                ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                ShflMode::Idx => {
                    let j = min_lane | (bval & !segmask);
                    (j, j <= max_lane)
                }
            };
            let src = if ok { j as usize } else { l };
            if d != NO_REG {
                w.regs[d as usize * 32 + l] = alu::trunc(a[src], 32);
            }
            if p != NO_REG {
                w.regs[p as usize * 32 + l] = u64::from(ok);
            }
        }
    }

    /// Reads a source operand for every lane of `exec` (others are 0).
    #[inline]
    pub(crate) fn gather(&self, w: &Warp, s: Src, exec: u32) -> [u64; 32] {
        match s {
            Src::Imm(v) => [v; 32],
            Src::Reg(r) => *crate::exec::warp::row(&w.regs, r),
            Src::Special(sp) => self.special_warp(w, sp),
            Src::NotPred(_) => {
                let mut out = [0u64; 32];
                for l in lanes(exec) {
                    out[l] = self.read(w, s, l);
                }
                out
            }
        }
    }

    /// The destination row of register `d` and the rows of the sources `srcs[..n]` (the rest
    /// zeros), read in place where a source is another register and built in `tmp` otherwise
    /// (an immediate, a special register, a negated predicate, or the destination itself), so
    /// that an instruction's lane loop copies nothing.
    #[inline]
    pub(crate) fn operands<'t>(
        &self,
        w: &'t mut Warp,
        d: u16,
        srcs: [Src; 3],
        n: usize,
        exec: u32,
        tmp: &'t mut [Option<[u64; 32]>; 3],
    ) -> (&'t mut [u64; 32], [&'t [u64; 32]; 3]) {
        let d0 = usize::from(d) * 32;
        for k in 0..n {
            match srcs[k] {
                Src::Reg(r) if usize::from(r) * 32 != d0 => {}
                s => tmp[k] = Some(self.gather(w, s, exec)),
            }
        }
        let tmp: &'t [Option<[u64; 32]>; 3] = tmp;
        let (lo, rest) = w.regs.split_at_mut(d0);
        let (out, hi) = rest.split_at_mut(32);
        let out: &'t mut [u64; 32] = out.try_into().expect("32 lanes");
        let (lo, hi): (&'t [u64], &'t [u64]) = (lo, hi);
        let mut rows: [&'t [u64; 32]; 3] = [&ZEROS; 3];
        for (k, row) in rows.iter_mut().enumerate().take(n) {
            *row = match (srcs[k], &tmp[k]) {
                (_, Some(t)) => t,
                (Src::Reg(r), None) if usize::from(r) * 32 < d0 => lo[usize::from(r) * 32..][..32]
                    .try_into()
                    .expect("32 lanes"),
                (Src::Reg(r), None) => hi[usize::from(r) * 32 - d0 - 32..][..32]
                    .try_into()
                    .expect("32 lanes"),
                (_, None) => unreachable!("sources other than registers are built above"),
            };
        }
        (out, rows)
    }

    /// A special register for all 32 lanes: one match, then a plain loop.
    pub(super) fn special_warp(&self, w: &Warp, s: Special) -> [u64; 32] {
        match s {
            Special::Tid(c) => std::array::from_fn(|l| u64::from(w.tid[c as usize][l])),
            Special::LaneId => std::array::from_fn(|l| l as u64),
            _ if warp_uniform(s) => [self.special(w, s, 0); 32],
            _ => std::array::from_fn(|l| self.special(w, s, l)),
        }
    }

    /// The value of source `s` when it is the same for every lane by its kind (an immediate, a
    /// warp-uniform special register), without reading the warp's registers.
    #[inline]
    pub(super) fn uniform(&self, w: &Warp, s: Src) -> Option<u64> {
        match s {
            Src::Imm(v) => Some(v),
            Src::Special(sp) if warp_uniform(sp) => Some(self.special(w, sp, 0)),
            _ => None,
        }
    }

    #[inline(never)]
    pub(super) fn special(&self, w: &Warp, s: Special, lane: usize) -> u64 {
        let b = self.pass.launch.dims.block;
        let l = lane;
        let lane = lane as u32;
        u64::from(match s {
            Special::Tid(c) => w.tid[c as usize][l],
            Special::Ntid(c) => b[c as usize],
            Special::Ctaid(c) => self.ctaid[c as usize],
            Special::Nctaid(c) => self.pass.launch.dims.grid[c as usize],
            Special::LaneId => lane,
            Special::WarpId => w.index,
            Special::NWarpId => self.pass.cfg.sm.max_warps,
            Special::SmId => self.sm as u32,
            Special::NSmId => self.pass.cfg.sm.count,
            Special::LaneMaskEq => 1 << lane,
            Special::LaneMaskLt => (1u32 << lane) - 1,
            Special::LaneMaskLe => ((1u64 << (lane + 1)) - 1) as u32,
            Special::LaneMaskGt => !(((1u64 << (lane + 1)) - 1) as u32),
            Special::LaneMaskGe => !((1u32 << lane) - 1),
            Special::Clock | Special::Clock64 | Special::GlobalTimer => return u64::from(w.clock),
        })
    }

    pub(super) fn alu(&mut self, w: &mut Warp, inst: &DInst, exec: u32) {
        let [s0, s1, s2, _] = inst.src;
        let d0 = inst.dst[0] as usize * 32;
        match inst.op {
            Op::Mov(ty) => {
                if let Src::Special(Special::Ntid(_) | Special::Nctaid(_)) = s0 {
                    // %ntid and %nctaid live in constant bank 0: a warp-uniform constant operand.
                    self.counters.tally(&Outcome::Uniform { imc: 1, idc: 0 });
                }
                let m = alu::mask(ty.bits().max(8));
                if let Some(v) = self.uniform(w, s0) {
                    // `%ctaid`, `%ntid`, an immediate or a symbol's address: one value.
                    let out = &mut w.regs[d0..][..32];
                    for_lanes!(exec, |l| {
                        out[l] = v & m;
                    });
                    return;
                }
                let mut tmp = [None; 3];
                let (out, [a, _, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 1, exec, &mut tmp);
                for_lanes!(exec, |l| {
                    out[l] = a[l] & m;
                });
            }
            Op::Cvta { to_space, space } => {
                let window = crate::memory::image::window(space);
                let mut tmp = [None; 3];
                let (out, [a, _, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 1, exec, &mut tmp);
                // Both directions wrap: to the space's window offset or back to generic.
                let delta = if to_space {
                    window.wrapping_neg()
                } else {
                    window
                };
                for_lanes!(exec, |l| {
                    out[l] = a[l].wrapping_add(delta);
                });
            }
            Op::Cvt { dst, src, rnd, sat } => {
                let mut tmp = [None; 3];
                let (out, [a, _, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 1, exec, &mut tmp);
                if !sat && !src.is_float() && !dst.is_float() {
                    // Integer widening and narrowing (index arithmetic: cvt.u64.u32 and the
                    // like): sign- or zero-extend by the source, truncate to the destination.
                    let (sh, dm) = (alu::sext_shift(src.bits()), alu::mask(dst.bits()));
                    if src.is_signed() {
                        for_lanes!(exec, |l| {
                            out[l] = alu::sext_by(a[l], sh) as u64 & dm;
                        });
                    } else {
                        let m = alu::mask(src.bits()) & dm;
                        for_lanes!(exec, |l| {
                            out[l] = a[l] & m;
                        });
                    }
                    return;
                }
                for_lanes!(exec, |l| {
                    out[l] = alu::convert(dst, src, rnd, sat, a[l]);
                });
            }
            Op::Alu { op, ty, mode, sat } => {
                // Sources past `nsrc` are not read.
                let mut tmp = [None; 3];
                let n = usize::from(inst.nsrc);
                let (out, [a, b, c]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], n, exec, &mut tmp);
                alu::alu_warp(op, ty, mode, sat, a, b, c, exec, out);
            }
            Op::Setp { cmp, bool_op, ty } if inst.dst[1] == NO_REG && bool_op.is_none() => {
                // The common `setp` with one destination: a loop per comparison.
                let mut tmp = [None; 3];
                let (out, [a, b, _]) =
                    self.operands(w, inst.dst[0], [s0, s1, s2], 2, exec, &mut tmp);
                alu::compare_warp(cmp, ty, a, b, exec, out);
            }
            Op::Setp { cmp, bool_op, ty } => {
                let d1 = inst.dst[1];
                let tp;
                let (a, b) = (self.gather(w, s0, exec), self.gather(w, s1, exec));
                let p = if bool_op.is_some() {
                    tp = self.gather(w, s2, exec);
                    &tp
                } else {
                    &ZEROS
                };
                for l in lanes(exec) {
                    let r = alu::compare(cmp, ty, a[l], b[l]);
                    let c = bool_op.is_none() || p[l] & 1 == 1;
                    w.regs[d0 + l] = u64::from(alu::combine(bool_op, r, c));
                    if d1 != NO_REG {
                        w.regs[d1 as usize * 32 + l] = u64::from(alu::combine(bool_op, !r, c));
                    }
                }
            }
            Op::Vote(mode) => {
                let p = self.gather(w, s0, exec);
                let mut yes = 0u32;
                for l in lanes(exec) {
                    yes |= ((p[l] & 1) as u32) << l;
                }
                let v = match mode {
                    VoteMode::All => u64::from(yes == exec),
                    VoteMode::Any => u64::from(yes != 0),
                    VoteMode::Uni => u64::from(yes == 0 || yes == exec),
                    VoteMode::Ballot => u64::from(yes),
                };
                for l in lanes(exec) {
                    w.regs[d0 + l] = v;
                }
            }
            Op::ActiveMask => {
                for l in lanes(exec) {
                    w.regs[d0 + l] = u64::from(exec);
                }
            }
            Op::Selp(ty) => {
                for l in lanes(exec) {
                    let v = if self.read(w, s2, l) & 1 == 1 {
                        self.read(w, s0, l)
                    } else {
                        self.read(w, s1, l)
                    };
                    w.regs[d0 + l] = alu::trunc(v, ty.bits());
                }
            }
            _ => self.alu_ext(w, inst, exec),
        }
    }
}

/// Special registers with one value for the whole warp.
#[inline]
pub(super) fn warp_uniform(s: Special) -> bool {
    matches!(
        s,
        Special::Ntid(_)
            | Special::Ctaid(_)
            | Special::Nctaid(_)
            | Special::WarpId
            | Special::NWarpId
            | Special::SmId
            | Special::NSmId
            | Special::Clock
            | Special::Clock64
            | Special::GlobalTimer
    )
}

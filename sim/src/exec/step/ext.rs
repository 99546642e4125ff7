//! The warp-level arms of the instructions added for broad PTX coverage: bit manipulation,
//! carry chains, selects, packing, warp-wide match and reduction, `isspacep`, and the arrival
//! at `bar.red`, and the half-precision arithmetic, `setp` and `cvt`. Each lane's value comes from a plain function of [`crate::exec::alu`].

use super::{lanes, Ctx};
use crate::exec::alu;
use crate::exec::decode::{DInst, NO_REG};
use crate::exec::mem::resolve;
use crate::exec::warp::Warp;
use crate::ptx::ast::{StateSpace, Type};
use crate::ptx::inst::{BarRedOp, CarryOp, Op};

impl Ctx<'_> {
    /// Executes the instructions of this module (any other is left alone).
    pub(super) fn alu_ext(&mut self, w: &mut Warp, inst: &DInst, exec: u32) {
        let d0 = inst.dst[0];
        let write = |w: &mut Warp, reg: u16, l: usize, v: u64| {
            if reg != NO_REG {
                w.regs[reg as usize * 32 + l] = v;
            }
        };
        let src = |k: usize| inst.src[k];
        match inst.op {
            Op::Bits(b) => {
                let n = usize::from(inst.nsrc);
                for l in lanes(exec) {
                    let mut s = [0u64; 4];
                    for (k, v) in s.iter_mut().enumerate().take(n) {
                        *v = self.read(w, src(k), l);
                    }
                    write(w, d0, l, alu::bits(b, s));
                }
            }
            Op::Carry {
                op,
                ty,
                mode,
                cc_in,
                ..
            } => {
                let n = if op == CarryOp::Mad { 3 } else { 2 };
                for l in lanes(exec) {
                    let a = self.read(w, src(0), l);
                    let b = self.read(w, src(1), l);
                    let c = if n == 3 { self.read(w, src(2), l) } else { 0 };
                    let cf = cc_in.then(|| self.read(w, src(n), l));
                    let (r, carry) = alu::carry(op, ty, mode, a, b, c, cf);
                    write(w, d0, l, r);
                    write(w, inst.dst[1], l, carry);
                }
            }
            Op::Slct { ty, cty, ftz } => {
                for l in lanes(exec) {
                    let (a, b, c) = (
                        self.read(w, src(0), l),
                        self.read(w, src(1), l),
                        self.read(w, src(2), l),
                    );
                    write(w, d0, l, alu::slct(ty, cty, ftz, a, b, c));
                }
            }
            Op::Set {
                cmp,
                bool_op,
                dst,
                src: sty,
            } => {
                for l in lanes(exec) {
                    let (a, b) = (self.read(w, src(0), l), self.read(w, src(1), l));
                    let c = bool_op.is_none() || self.read(w, src(2), l) & 1 == 1;
                    if sty.is_half() {
                        write(
                            w,
                            d0,
                            l,
                            alu::half::half_set(cmp, bool_op, dst, sty, a, b, c),
                        );
                        continue;
                    }
                    let r = alu::compare(cmp, sty, a, b);
                    write(w, d0, l, alu::set_value(dst, alu::combine(bool_op, r, c)));
                }
            }
            Op::Testp { op, ty } => {
                for l in lanes(exec) {
                    let r = alu::testp(op, ty, self.read(w, src(0), l));
                    write(w, d0, l, u64::from(r));
                }
            }
            Op::CvtPack { dst } => {
                for l in lanes(exec) {
                    let (a, b, c) = (
                        self.read(w, src(0), l),
                        self.read(w, src(1), l),
                        self.read(w, src(2), l),
                    );
                    write(w, d0, l, alu::cvt_pack(dst, a, b, c));
                }
            }
            Op::MovPack { ty, n } => {
                let width = ty.bits() / u32::from(n);
                for l in lanes(exec) {
                    let mut v = 0u64;
                    for k in 0..usize::from(n) {
                        v |= alu::trunc(self.read(w, src(k), l), width) << (k as u32 * width);
                    }
                    write(w, d0, l, alu::trunc(v, ty.bits()));
                }
            }
            Op::MovUnpack { ty, n } => {
                let width = ty.bits() / u32::from(n);
                for l in lanes(exec) {
                    let v = self.read(w, src(0), l);
                    for k in 0..usize::from(n) {
                        write(
                            w,
                            inst.dst[k],
                            l,
                            alu::trunc(v >> (k as u32 * width), width),
                        );
                    }
                }
            }
            Op::Match { all, ty } => {
                let vals: Vec<(usize, u64)> = lanes(exec)
                    .map(|l| (l, alu::trunc(self.read(w, src(0), l), ty.bits())))
                    .collect();
                let same = |v: u64| -> u32 {
                    vals.iter()
                        .filter(|(_, x)| *x == v)
                        .fold(0, |m, (l, _)| m | 1 << l)
                };
                let uniform = vals.first().is_none_or(|(_, v)| same(*v) == exec);
                for &(l, v) in &vals {
                    if all {
                        write(w, d0, l, if uniform { u64::from(exec) } else { 0 });
                        write(w, inst.dst[1], l, u64::from(uniform));
                    } else {
                        write(w, d0, l, u64::from(same(v)));
                    }
                }
            }
            Op::Redux { op, ty } => {
                let v = alu::redux(op, ty, lanes(exec).map(|l| self.read(w, src(0), l)));
                for l in lanes(exec) {
                    write(w, d0, l, v);
                }
            }
            Op::FloatRnd { op, ty, rnd, sat } => {
                for l in lanes(exec) {
                    let (a, b, c) = (
                        self.read(w, src(0), l),
                        self.read(w, src(1), l),
                        self.read(w, src(2), l),
                    );
                    write(w, d0, l, alu::float_rounded(op, ty, rnd, sat, a, b, c));
                }
            }
            Op::Isspacep(space) => {
                for l in lanes(exec) {
                    let a = self.read(w, src(0), l);
                    let (s, _) = resolve(StateSpace::Generic, a);
                    write(
                        w,
                        d0,
                        l,
                        u64::from(s == space && space != StateSpace::Param),
                    );
                }
            }
            Op::Half(h) => {
                for l in lanes(exec) {
                    let (a, b, c) = (
                        self.read(w, src(0), l),
                        self.read(w, src(1), l),
                        self.read(w, src(2), l),
                    );
                    write(w, d0, l, alu::half_arith(h, a, b, c));
                }
            }
            Op::HalfSetp {
                cmp,
                bool_op,
                ty,
                ftz,
            } => {
                for l in lanes(exec) {
                    let (a, b) = (self.read(w, src(0), l), self.read(w, src(1), l));
                    let r = alu::half_compare(cmp, ty, ftz, a, b);
                    let c = bool_op.is_none() || self.read(w, src(2), l) & 1 == 1;
                    let p = alu::combine(bool_op, r & 1 == 1, c);
                    write(w, d0, l, u64::from(p));
                    // A pair's second element goes to `q`; one value's `q` is `!p` as for `setp`.
                    let q = if matches!(ty, Type::F16x2 | Type::BF16x2) {
                        alu::combine(bool_op, r & 2 == 2, c)
                    } else {
                        alu::combine(bool_op, r & 1 == 0, c)
                    };
                    write(w, inst.dst[1], l, u64::from(q));
                }
            }
            Op::HalfCvt(c) => {
                for l in lanes(exec) {
                    let (a, b) = (self.read(w, src(0), l), self.read(w, src(1), l));
                    write(w, d0, l, alu::half_convert(c, a, b));
                }
            }
            _ => {}
        }
    }

    /// A warp reaches `bar.red`: its active threads add their predicates to the block's pending
    /// reduction; the result is written when the barrier releases.
    pub(super) fn bar_red_arrive(&mut self, w: &Warp, inst: &DInst, op: BarRedOp, exec: u32) {
        let mut yes = 0u32;
        for l in lanes(exec) {
            yes |= ((self.read(w, inst.src[0], l) & 1) as u32) << l;
        }
        self.sync.arrive(op, w.index, inst.dst[0], exec, yes);
    }

    /// `mma.sync.aligned` for the whole warp: its registers are the program's operand table
    /// from `inst.target` (D, A, B, C), computed by [`alu::mma::mma`].
    pub(super) fn mma(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        op: crate::ptx::inst::MmaOp,
        exec: u32,
    ) -> crate::error::Result<()> {
        let prog = self.pass.launch.program;
        if exec != u32::MAX {
            return Err(crate::error::Error::Fault {
                launch: self.pass.launch.label.into(),
                message: format!(
                    "mma.sync.aligned executed by lanes {exec:#010x} of a warp, not all 32; PTX line {}: `{}`",
                    prog.lines[pc as usize], prog.texts[pc as usize]
                ),
            });
        }
        let (nd, na, nb, nc) = op.regs();
        let regs = &prog.operands[inst.target as usize..][..nd + na + nb + nc];
        let frags = |rs: &[u16]| -> alu::mma::Fragments {
            rs.iter()
                .map(|&r| std::array::from_fn(|l| w.regs[r as usize * 32 + l] as u32))
                .collect()
        };
        let (a, b, c) = (
            frags(&regs[nd..nd + na]),
            frags(&regs[nd + na..nd + na + nb]),
            frags(&regs[nd + na + nb..]),
        );
        let d = alu::mma::mma(&op, &a, &b, &c);
        for (r, vals) in regs[..nd].iter().zip(&d) {
            for (l, v) in vals.iter().enumerate() {
                w.regs[*r as usize * 32 + l] = u64::from(*v);
            }
        }
        self.counters.mma_inst += 1;
        Ok(())
    }

    /// `wmma.mma` m16n16k16 for the whole warp ([`alu::mma::wmma`]).
    pub(super) fn wmma_mma(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        d_f32: bool,
        c_f32: bool,
        exec: u32,
    ) -> crate::error::Result<()> {
        let prog = self.pass.launch.program;
        if exec != u32::MAX {
            return Err(crate::error::Error::Fault {
                launch: self.pass.launch.label.into(),
                message: format!(
                    "wmma.mma executed by lanes {exec:#010x} of a warp, not all 32; PTX line {}: `{}`",
                    prog.lines[pc as usize], prog.texts[pc as usize]
                ),
            });
        }
        let nd = if d_f32 { 8 } else { 4 };
        let nc = if c_f32 { 8 } else { 4 };
        let regs = &prog.operands[inst.target as usize..][..nd + 16 + nc];
        let frags = |rs: &[u16]| -> alu::mma::Fragments {
            rs.iter()
                .map(|&r| std::array::from_fn(|l| w.regs[r as usize * 32 + l] as u32))
                .collect()
        };
        let (a, b, c) = (
            frags(&regs[nd..nd + 8]),
            frags(&regs[nd + 8..nd + 16]),
            frags(&regs[nd + 16..]),
        );
        let d = alu::mma::wmma(d_f32, c_f32, &a, &b, &c);
        for (r, vals) in regs[..nd].iter().zip(&d) {
            for (l, v) in vals.iter().enumerate() {
                w.regs[*r as usize * 32 + l] = u64::from(*v);
            }
        }
        self.counters.mma_inst += 1;
        Ok(())
    }
}

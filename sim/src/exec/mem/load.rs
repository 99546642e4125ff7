//! Loads: `ld` of every state space, the functional read (a global load inside one allocation,
//! a shared or constant load in range, a kernel parameter, else lane by lane) and the access
//! handed to the models.

use super::address::{fits_step, misaligned_lane, resolve, row_mut};
use crate::error::Result;
use crate::exec::decode::{DInst, Src, NO_REG};
use crate::exec::step::{for_lanes, lanes, Ctx};
use crate::exec::warp::Warp;
use crate::memory::coalesce;
use crate::memory::image::read_le;
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::MemOp;

impl Ctx<'_> {
    /// Executes a load; returns its load-to-use latency in cycles. Inlined into the warp loop
    /// (as `store` is): out of line, its call and frame cost about 40 instructions a load.
    #[inline(always)]
    pub fn load(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        exec: u32,
    ) -> Result<u32> {
        // A kernel parameter at a fixed offset: one value for the warp, no lane addresses.
        if self.load_param(w, inst, m, exec) {
            return Ok(if exec == 0 {
                0
            } else {
                self.param_model(pc, m)
            });
        }
        // The addresses come back by value into the access, as the helper is inlined: filled
        // through a reference, the access was zeroed first (a 256-byte store a memory
        // instruction that nothing read).
        let (addrs, shape) = self.addresses_and_shape(w, inst, exec);
        let access = WarpAccess {
            mask: exec,
            addrs,
            bytes: m.bytes_per_thread(),
        };
        let addrs = &access.addrs;
        if let Some(l) = misaligned_lane(exec, addrs, shape.alignment(addrs), access.bytes) {
            let (sp, a) = resolve(m.space, addrs[l]);
            self.note_fault(w, pc, l, "misaligned read", sp, a, access.bytes);
            return Ok(0);
        }
        let first = exec.trailing_zeros() as usize;
        let space = if exec == 0 {
            m.space
        } else {
            resolve(m.space, addrs[first]).0
        };
        // Consecutive elements (the common case), found once for the functional access and the
        // models; not needed by constant loads.
        let run = match space {
            StateSpace::Const | StateSpace::Param => None,
            _ => shape.run(access.bytes),
        };
        // A lane outside its state space: the error is recorded, the warp goes on past the load.
        if !self.load_from_one_allocation(w, inst, pc, m, exec, addrs, space, run, shape)
            && !self.load_from_shared_or_constant(w, inst, m, exec, addrs, shape.step)
            && !self.load_per_lane(w, inst, pc, m, exec, addrs)
        {
            return Ok(0);
        }
        if exec == 0 {
            return Ok(0);
        }
        Ok(self.model(w, inst, pc, m, space, &access, run, shape.step, false))
    }

    /// The common case of a global load: every lane inside one allocation. Reads straight from
    /// it; returns `false` (having done nothing) when the case does not apply. `shape`: the
    /// addresses' (`run` its [`coalesce::Shape::run`]).
    #[allow(clippy::too_many_arguments)]
    fn load_from_one_allocation(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        exec: u32,
        addrs: &[u64; WARP],
        space: StateSpace,
        run: Option<u64>,
        shape: coalesce::Shape,
    ) -> bool {
        if space != StateSpace::Global {
            return false;
        }
        let Some((i, base)) = self.one_allocation(m, pc, exec, addrs, run) else {
            return false;
        };
        let esize = m.ty.bytes() as u64;
        let g = self.pass.global;
        let (signed, bits) = (m.ty.is_signed(), m.ty.bits());
        if let Some(a0) = run {
            // Consecutive elements: each vector element of every lane in one pass.
            let stride = (esize * u64::from(m.vec)) as usize;
            for k in 0..usize::from(m.vec) {
                let off = (a0 - base) as usize + k * esize as usize;
                let d = inst.dst[k];
                if d != NO_REG && !signed {
                    // Straight into the destination: no second pass over the warp's values.
                    let out: &mut [u64; WARP] = (&mut w.regs[d as usize * 32..][..32])
                        .try_into()
                        .expect("32 lanes");
                    let ok = g.read_run(i, off, esize as usize, stride, out);
                    debug_assert!(ok, "bounds checked above");
                    continue;
                }
                // Zeroed only here: the common case above needs no buffer.
                let mut v = [0u64; WARP];
                let ok = g.read_run(i, off, esize as usize, stride, &mut v);
                debug_assert!(ok, "bounds checked above");
                if d == NO_REG {
                    continue;
                }
                let out = &mut w.regs[d as usize * 32..][..32];
                if signed {
                    for (o, &x) in out.iter_mut().zip(&v) {
                        *o = crate::exec::alu::sext(x, bits) as u64;
                    }
                } else {
                    out.copy_from_slice(&v);
                }
            }
            return true;
        }
        // Strided or scattered elements: each vector element of every lane in one pass, a
        // strided warp's with one bounds check.
        let stride = shape.stride();
        if stride.is_none() && exec == u32::MAX && esize == 4 {
            // A whole warp's scattered 32-bit words (the main job's pseudo-random load): read
            // straight into the destination with its sign, no per-lane dispatch or second pass.
            // A misaligned lane falls back to the general path below, which rewrites every lane.
            let mut all = true;
            for k in 0..usize::from(m.vec) {
                let d = inst.dst[k];
                if d == NO_REG {
                    continue;
                }
                let at = |l: usize| (addrs[l] - base) as usize + k * 4;
                let out: &mut [u64; WARP] = (&mut w.regs[d as usize * 32..][..32])
                    .try_into()
                    .expect("32 lanes");
                all &= if signed {
                    g.read_words::<true>(i, at, out)
                } else {
                    g.read_words::<false>(i, at, out)
                };
                if !all {
                    break;
                }
            }
            if all {
                return true;
            }
        }
        let mut v = [0u64; WARP];
        for k in 0..usize::from(m.vec) {
            let at = |l: usize| (addrs[l] - base) as usize + k * esize as usize;
            let ok = match stride {
                Some(s) => g.read_run(i, at(0), esize as usize, s as usize, &mut v),
                None => g.read_lanes(i, exec, at, esize as usize, &mut v),
            };
            debug_assert!(ok, "bounds checked above");
            let d = inst.dst[k];
            if d == NO_REG {
                continue;
            }
            let out = &mut w.regs[d as usize * 32..][..32];
            for_lanes!(exec, |l| {
                out[l] = if signed {
                    crate::exec::alu::sext(v[l], bits) as u64
                } else {
                    v[l]
                };
            });
        }
        true
    }

    /// The common case of a shared or constant load (named space, every lane in range): reads
    /// straight from the block's shared memory or the constant bank; `false` (having done
    /// nothing) when the case does not apply. `step`: the addresses' [`coalesce::Shape::step`].
    fn load_from_shared_or_constant(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        m: MemOp,
        exec: u32,
        addrs: &[u64; WARP],
        step: Option<(u64, u64)>,
    ) -> bool {
        let buf: &[u8] = match m.space {
            StateSpace::Shared => self.shared,
            StateSpace::Const => self.pass.constant,
            _ => return false,
        };
        let esize = m.ty.bytes() as usize;
        let span = (esize * usize::from(m.vec)) as u64;
        if exec == 0 || !fits_step(addrs, step, span, buf.len()) {
            return false;
        }
        let (signed, bits) = (m.ty.is_signed(), m.ty.bits());
        // A whole warp of 32-bit words (most shared and constant loads): every lane in order,
        // no dispatch on the size or the sign per lane.
        if exec == u32::MAX && esize == 4 && m.vec == 1 {
            // A scalar (a tile's row or column): one load a lane, with no loop over the vector
            // elements around it (the loop below hoisted the 32 lanes' pointers out of it and
            // spilled them to the stack: about 350 instructions a warp instead of about 100).
            let d = inst.dst[0];
            if d != NO_REG {
                let out = row_mut(&mut w.regs, d);
                // SAFETY: every lane's 4 bytes lie in `buf` (`fits_step`, checked above).
                unsafe {
                    if signed {
                        shared_words::<true>(buf, addrs, out);
                    } else {
                        shared_words::<false>(buf, addrs, out);
                    }
                }
            }
            return true;
        }
        if exec == u32::MAX && esize == 4 {
            let shift = if signed { 32 } else { 0 };
            for k in 0..usize::from(m.vec) {
                let d = inst.dst[k];
                if d == NO_REG {
                    continue;
                }
                let out = &mut w.regs[d as usize * 32..][..32];
                for (o, &a) in out.iter_mut().zip(addrs) {
                    let at = a as usize + k * 4;
                    // SAFETY: `at + 4 <= buf.len()`: every lane's `span` bytes lie in `buf`
                    // (`fits`, checked above). A bounds check here was 4
                    // instructions of the 8 per lane (transpose_smem: 2% of all).
                    let b = unsafe { buf.get_unchecked(at..at + 4) };
                    let word = u32::from_le_bytes(b.try_into().expect("4 bytes"));
                    *o = crate::exec::alu::sext_by(u64::from(word), shift) as u64;
                }
            }
            return true;
        }
        for k in 0..usize::from(m.vec) {
            let d = inst.dst[k];
            if d == NO_REG {
                continue;
            }
            let out = &mut w.regs[d as usize * 32..][..32];
            for l in lanes(exec) {
                let v = read_le(buf, addrs[l] as usize + k * esize, esize).expect("in range");
                out[l] = if signed {
                    crate::exec::alu::sext(v, bits) as u64
                } else {
                    v
                };
            }
        }
        true
    }

    /// `ld.param` of a kernel parameter at a fixed offset: one value for every lane.
    fn load_param(&mut self, w: &mut Warp, inst: &DInst, m: MemOp, exec: u32) -> bool {
        let Some(crate::exec::decode::Addr {
            base: Src::Imm(base),
            offset,
        }) = inst.addr
        else {
            return false;
        };
        if m.space != StateSpace::Param {
            return false;
        }
        let esize = m.ty.bytes() as usize;
        let at = base.wrapping_add(offset as u64) as usize;
        let mut vals = [0u64; 4];
        for (k, v) in vals.iter_mut().enumerate().take(usize::from(m.vec)) {
            match read_le(&self.pass.launch.params, at + k * esize, esize) {
                Some(x) if m.ty.is_signed() => *v = crate::exec::alu::sext(x, m.ty.bits()) as u64,
                Some(x) => *v = x,
                None => return false,
            }
        }
        for (k, &d) in inst.dst.iter().enumerate().take(usize::from(m.vec)) {
            if d != NO_REG {
                let out = &mut w.regs[d as usize * 32..][..32];
                for_lanes!(exec, |l| {
                    out[l] = vals[k];
                });
            }
        }
        true
    }

    /// Any load, lane by lane; `false` when a lane's address is outside its state space (the
    /// error is recorded, [`Ctx::note_fault`], and the lanes after it load nothing).
    fn load_per_lane(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        exec: u32,
        addrs: &[u64; WARP],
    ) -> bool {
        let esize = m.ty.bytes() as usize;
        for l in lanes(exec) {
            let (sp, a) = resolve(m.space, addrs[l]);
            for k in 0..usize::from(m.vec) {
                let ea = a.wrapping_add((k * esize) as u64);
                let v = if sp == StateSpace::Param {
                    read_le(&self.pass.launch.params, ea as usize, esize)
                } else {
                    self.access(w, l, sp, ea, esize, None)
                };
                let Some(v) = v else {
                    self.note_fault(w, pc, l, "read", sp, ea, esize as u32);
                    return false;
                };
                let v = if m.ty.is_signed() {
                    crate::exec::alu::sext(v, m.ty.bits()) as u64
                } else {
                    v
                };
                let d = inst.dst[k];
                if d != NO_REG {
                    w.regs[d as usize * 32 + l] = v;
                }
            }
        }
        true
    }
}

/// Reads the 32-bit word at byte `addrs[l]` of `buf` (shared memory or the constant bank) into
/// `out[l]` for every lane `l`,
/// sign-extended when `SIGNED`: one loop for each, so that the sign is not chosen per lane (a
/// select per lane was 5 instructions a lane instead of 3).
///
/// # Safety
/// `addrs[l] + 4 <= buf.len()` for every lane.
#[inline(always)]
pub(super) unsafe fn shared_words<const SIGNED: bool>(
    buf: &[u8],
    addrs: &[u64; WARP],
    out: &mut [u64; WARP],
) {
    for (o, &a) in out.iter_mut().zip(addrs) {
        let at = a as usize;
        // SAFETY: the caller's: the lane's 4 bytes lie in `buf`.
        let b = unsafe { buf.get_unchecked(at..at + 4) };
        let word = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        *o = if SIGNED {
            word as i32 as i64 as u64
        } else {
            u64::from(word)
        };
    }
}

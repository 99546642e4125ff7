//! The memory path of the warp loop: address generation, the functional load or store, and the
//! warp-level access handed to the `memory` models, whose outcome is counted here.

use super::decode::{DInst, Src, NO_REG};
use super::fast::{MemPlan, Word};
use super::step::{for_lanes, lanes, Ctx};
use super::trace::{L2Kind, MemRec};
use super::warp::Warp;
use crate::error::{Error, Result};
use crate::memory::coalesce;
use crate::memory::image::{
    read_le, write_le, CONST_WINDOW, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_BYTES,
};
use crate::memory::shared::{self, Banks};
use crate::memory::system::{ConstLevelsOutcome, L1Outcome, LineRecords, LoadPath};
use crate::memory::{Level, WarpAccess, WARP};
use crate::metrics::SharedSample;
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::{CacheOp, MemOp};

mod atomic;

/// Base of the addresses local memory is given in the cache model (interleaved per lane).
const LOCAL_MODEL_BASE: u64 = 0x7e00_0000_0000;

/// Resolves a generic address to its state space and the offset (or global address) in it.
pub fn resolve(space: StateSpace, addr: u64) -> (StateSpace, u64) {
    if space != StateSpace::Generic {
        return (space, addr);
    }
    for (s, base) in [
        (StateSpace::Shared, SHARED_WINDOW),
        (StateSpace::Local, LOCAL_WINDOW),
        (StateSpace::Const, CONST_WINDOW),
    ] {
        if addr >= base && addr < base + WINDOW_BYTES {
            return (s, addr - base);
        }
    }
    (StateSpace::Global, addr)
}

impl Ctx<'_> {
    fn addresses(&self, w: &Warp, inst: &DInst, exec: u32) -> [u64; WARP] {
        self.addresses_and_shape(w, inst, exec).0
    }

    /// The active lanes' addresses (inactive lanes 0), with their [`coalesce::Shape`], found in
    /// the same pass (the alignment check, the run, the stride and the models' closed forms need no
    /// other pass over the lanes).
    #[inline(always)]
    fn addresses_and_shape(
        &self,
        w: &Warp,
        inst: &DInst,
        exec: u32,
    ) -> ([u64; WARP], coalesce::Shape) {
        let a = inst.addr.expect("decoded ld/st carry an address");
        let off = a.offset as u64;
        if let Src::Reg(r) = a.base {
            // The common case: one pass over the base register's lanes, no match per lane (a
            // fixed-size row, so that the adds are a few vector instructions).
            let base: &[u64; WARP] = (w.regs[r as usize * WARP..][..WARP])
                .try_into()
                .expect("32 lanes");
            if exec == u32::MAX {
                return warp_addresses(base, off);
            }
            let out = std::array::from_fn(|l| {
                if exec >> l & 1 == 0 {
                    0
                } else {
                    base[l].wrapping_add(off)
                }
            });
            return (out, coalesce::Shape { step: None });
        }
        if let Src::Imm(v) = a.base {
            // A fixed address (a symbol: conv2d's filter taps `[F+4]`): one value for every
            // active lane, without a read per lane.
            let at = v.wrapping_add(off);
            let out = std::array::from_fn(|l| if exec >> l & 1 == 0 { 0 } else { at });
            let step = (exec == u32::MAX).then_some((at, 0));
            return (out, coalesce::Shape { step });
        }
        let mut out = [0; WARP];
        for l in lanes(exec) {
            out[l] = self.read(w, a.base, l).wrapping_add(off);
        }
        let shape = coalesce::Shape::of(exec, &out);
        (out, shape)
    }

    /// [`Ctx::load`] or [`Ctx::store`] of the instruction at `pc` for every lane of a full warp
    /// when its plan `p` is a whole-warp access of 32-bit scalars in global
    /// or shared memory and the access is the common case: every lane aligned, inside the block's
    /// shared memory or inside the instruction's last global allocation.
    /// Returns the latency, with the same values, outcome, counts and log entries as the general
    /// path; `None`, having done nothing, when the case does not apply (the general path then
    /// finds what else to do, or the fault).
    #[inline(always)]
    pub(super) fn word_access(&mut self, w: &mut Warp, pc: u32, p: MemPlan) -> Option<u32> {
        let exec = u32::MAX;
        let base = row(&w.regs, p.base);
        let (addrs, shape) = warp_addresses(base, p.off);
        // Misaligned lanes fault on the general path.
        if shape.alignment(&addrs) & 3 != 0 {
            return None;
        }
        let access = WarpAccess {
            mask: exec,
            addrs,
            bytes: 4,
        };
        #[cfg(test)]
        tests::WORD_ACCESSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (run, step) = (shape.run(4), shape.step);
        let addrs = &access.addrs;
        let signed = p.m.ty.is_signed();
        match p.word {
            Word::GlobalLoad => {
                let (i, base) = self.word_allocation(pc, addrs, step)?;
                let g = self.global;
                match step {
                    Some((a0, d)) if d != 0 => {
                        // Equally spaced lanes: one pass, straight into the destination.
                        let out = row_mut(&mut w.regs, p.reg);
                        let off = (a0 - base) as usize;
                        let ok = if d == 4 {
                            g.read_word_run(i, off, out)
                        } else {
                            g.read_run(i, off, 4, d as usize, out)
                        };
                        debug_assert!(ok, "bounds checked above");
                        if signed {
                            for o in out.iter_mut() {
                                *o = *o as u32 as i32 as i64 as u64;
                            }
                        }
                    }
                    _ => {
                        // Scattered lanes (the main job's pseudo-random load) or one word for
                        // the warp: as `load_from_one_allocation` reads them, into a copy first
                        // so that nothing is written when the host's buffer is not aligned
                        // (the general path then reads byte by byte).
                        let at = |l: usize| (addrs[l] - base) as usize;
                        let mut v = [0u64; WARP];
                        let ok = if signed {
                            g.read_words::<true>(i, at, &mut v)
                        } else {
                            g.read_words::<false>(i, at, &mut v)
                        };
                        if !ok {
                            return None;
                        }
                        *row_mut(&mut w.regs, p.reg) = v;
                    }
                }
                Some(self.model_global(w, pc, p.m, StateSpace::Global, &access, run, step, false))
            }
            Word::GlobalStore => {
                let (i, base) = self.word_allocation(pc, addrs, step)?;
                let (g, v) = (self.global, row(&w.regs, p.reg));
                match step {
                    Some((a0, d)) if d != 0 => {
                        // Equally spaced lanes do not overlap: one pass.
                        let off = (a0 - base) as usize;
                        let ok = if d == 4 {
                            g.write_word_run(i, off, v)
                        } else {
                            g.write_run(i, off, 4, d as usize, v)
                        };
                        debug_assert!(ok, "bounds checked above");
                    }
                    _ => {
                        // Lane by lane in order: a later lane's word wins where lanes meet.
                        for (&a, &x) in addrs.iter().zip(v) {
                            let ok = g.write(i, (a - base) as usize, 4, x);
                            debug_assert!(ok, "bounds checked above");
                        }
                    }
                }
                Some(self.model_global(w, pc, p.m, StateSpace::Global, &access, run, step, true))
            }
            Word::SharedLoad => {
                let buf: &[u8] = self.shared;
                if !fits_step(addrs, step, 4, buf.len()) {
                    return None;
                }
                let out = row_mut(&mut w.regs, p.reg);
                // SAFETY: every lane's 4 bytes lie in `buf` (`fits_step`, checked above).
                unsafe {
                    if signed {
                        shared_words::<true>(buf, addrs, out);
                    } else {
                        shared_words::<false>(buf, addrs, out);
                    }
                }
                Some(self.model_shared(pc, p.m, &access, run, step, false))
            }
            Word::SharedStore => {
                if !fits_step(addrs, step, 4, self.shared.len()) {
                    return None;
                }
                let v = row(&w.regs, p.reg);
                let buf = &mut self.shared[..];
                if let Some(a0) = run {
                    // Consecutive words: as in `store_to_shared`.
                    let words: [[u8; 4]; WARP] =
                        std::array::from_fn(|l| (v[l] as u32).to_le_bytes());
                    buf[a0 as usize..][..WARP * 4].copy_from_slice(words.as_flattened());
                } else {
                    // Lane by lane in order: a later lane's word wins where lanes meet.
                    for (&x, &a) in v.iter().zip(addrs) {
                        let at = a as usize;
                        // SAFETY: as for the shared load above.
                        let b = unsafe { buf.get_unchecked_mut(at..at + 4) };
                        b.copy_from_slice(&(x as u32).to_le_bytes());
                    }
                }
                Some(self.model_shared(pc, p.m, &access, run, step, true))
            }
            Word::General => None,
        }
    }

    /// The global allocation (index, base address) of a whole-warp access of 32-bit words at
    /// `addrs` (with [`coalesce::Shape::step`] `step`) when every lane's word lies in the one the
    /// instruction at `pc` last fell in: what [`Self::one_allocation`] finds then (for equally
    /// spaced ascending lanes from the ends, for others by a compare a lane), with its prefetch of
    /// the next run. `None` otherwise (the general path looks the allocation up).
    #[inline(always)]
    fn word_allocation(
        &mut self,
        pc: u32,
        addrs: &[u64; WARP],
        step: Option<(u64, u64)>,
    ) -> Option<(usize, u64)> {
        let hint = self.alloc_hints[pc as usize] as usize;
        let (base, end) = self.global.try_bounds(hint)?;
        match step {
            Some((a0, d)) if d != 0 => {
                // `a0 + 31 * d` does not wrap (the step's).
                let top = (a0 + 31 * d).checked_add(4)?;
                if a0 < base || top > end {
                    return None;
                }
                if d == 4 {
                    self.prefetch_next_run(pc, hint, a0, base, 32 * 4);
                }
            }
            _ => {
                let limit = (end - base).checked_sub(4)?;
                let out = (addrs.iter()).fold(0u64, |any, &a| {
                    any | u64::from(a.wrapping_sub(base) > limit)
                });
                if out != 0 {
                    return None;
                }
            }
        }
        Some((hint, base))
    }

    #[allow(clippy::too_many_arguments)] // one report needs every one of them
    fn fault(
        &self,
        w: &Warp,
        pc: u32,
        lane: usize,
        what: &str,
        space: StateSpace,
        addr: u64,
        bytes: u32,
    ) -> Error {
        let b = self.launch.dims.block;
        let linear = w.index * 32 + lane as u32;
        let tid = (linear % b[0], linear / b[0] % b[1], linear / (b[0] * b[1]));
        let c = self.ctaid;
        let where_ = match space {
            StateSpace::Global => self.global.nearest(addr),
            StateSpace::Shared => format!(
                "outside the block's {} bytes of shared memory",
                self.shared.len()
            ),
            StateSpace::Local => format!(
                "outside the thread's {} bytes of local memory",
                w.local_bytes
            ),
            StateSpace::Const => format!(
                "outside the {} bytes of constant memory",
                self.constant.len()
            ),
            _ => format!(
                "outside the {} bytes of kernel parameters",
                self.launch.params.len()
            ),
        };
        let p = self.launch.program;
        Error::Fault {
            launch: self.launch.label.into(),
            message: format!(
                "invalid {} {what} of {bytes} bytes at address {addr:#x} by thread ({},{},{}) in block ({},{},{}): {where_}; PTX line {}: `{}`",
                space.name(),
                tid.0,
                tid.1,
                tid.2,
                c[0],
                c[1],
                c[2],
                p.lines[pc as usize],
                p.texts[pc as usize]
            ),
        }
    }

    /// The global allocation holding `[addr, addr + len)`: the one the last access fell in when
    /// it does (most accesses of a warp do), else looked up; remembered for the next access.
    #[inline]
    fn allocation(&mut self, addr: u64, len: u64) -> Option<usize> {
        let i = match self.last_alloc {
            Some(i)
                if {
                    let (lo, hi) = self.global.bounds(i);
                    lo <= addr && addr.checked_add(len).is_some_and(|e| e <= hi)
                } =>
            {
                i
            }
            _ => self.global.find(addr, len)?,
        };
        self.last_alloc = Some(i);
        Some(i)
    }

    /// Functional access of `n` bytes at `addr` in `space` for `lane`: reads, or writes `value`.
    fn access(
        &mut self,
        w: &mut Warp,
        lane: usize,
        space: StateSpace,
        addr: u64,
        n: usize,
        value: Option<u64>,
    ) -> Option<u64> {
        let (buf, off): (&mut [u8], u64) = match space {
            StateSpace::Global => {
                let i = self.allocation(addr, n as u64)?;
                let off = usize::try_from(addr - self.global.bounds(i).0).ok()?;
                return match value {
                    None => self.global.read(i, off, n),
                    Some(v) => self.global.write(i, off, n, v).then_some(0),
                };
            }
            StateSpace::Const => {
                return read_le(self.constant, usize::try_from(addr).ok()?, n)
                    .filter(|_| value.is_none());
            }
            StateSpace::Shared => (&mut self.shared[..], addr),
            StateSpace::Local => {
                let lb = w.local_bytes;
                (&mut w.local[lane * lb..(lane + 1) * lb], addr)
            }
            StateSpace::Param | StateSpace::Reg | StateSpace::Generic => return None,
        };
        let off = usize::try_from(off).ok()?;
        match value {
            None => read_le(buf, off, n),
            Some(v) => write_le(buf, off, n, v).then_some(0),
        }
    }

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
            return Ok(if exec == 0 { 0 } else { self.param_model(m) });
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
            return Err(self.fault(w, pc, l, "misaligned read", sp, a, access.bytes));
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
        if !self.load_from_one_allocation(w, inst, pc, m, exec, addrs, space, run, shape)
            && !self.load_from_shared_or_constant(w, inst, m, exec, addrs, shape.step)
        {
            self.load_per_lane(w, inst, pc, m, exec, addrs)?;
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
        let g = self.global;
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
            StateSpace::Const => self.constant,
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
        let Some(super::decode::Addr {
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
            match read_le(&self.launch.params, at + k * esize, esize) {
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

    /// Any load, lane by lane, faulting on the first lane outside its state space.
    fn load_per_lane(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        exec: u32,
        addrs: &[u64; WARP],
    ) -> Result<()> {
        let esize = m.ty.bytes() as usize;
        for l in lanes(exec) {
            let (sp, a) = resolve(m.space, addrs[l]);
            for k in 0..usize::from(m.vec) {
                let ea = a.wrapping_add((k * esize) as u64);
                let v = if sp == StateSpace::Param {
                    read_le(&self.launch.params, ea as usize, esize)
                } else {
                    self.access(w, l, sp, ea, esize, None)
                };
                let v = v.ok_or_else(|| self.fault(w, pc, l, "read", sp, ea, esize as u32))?;
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
        Ok(())
    }

    /// Executes a store; returns the cycles until it is acknowledged.
    pub fn store(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        exec: u32,
    ) -> Result<u32> {
        let (addrs, shape) = self.addresses_and_shape(w, inst, exec);
        let access = WarpAccess {
            mask: exec,
            addrs,
            bytes: m.bytes_per_thread(),
        };
        let addrs = &access.addrs;
        if let Some(l) = misaligned_lane(exec, addrs, shape.alignment(addrs), access.bytes) {
            let (sp, a) = resolve(m.space, addrs[l]);
            return Err(self.fault(w, pc, l, "misaligned write", sp, a, access.bytes));
        }
        let esize = m.ty.bytes() as usize;
        let first = exec.trailing_zeros() as usize;
        let run = match m.space {
            StateSpace::Const | StateSpace::Param => None,
            _ => shape.run(access.bytes),
        };
        // Only a global or generic store can lie in a global allocation: a shared one skips
        // the (out-of-line) search that would find none.
        let global = matches!(m.space, StateSpace::Global | StateSpace::Generic);
        let done = (global && self.store_to_one_allocation(w, inst, pc, m, exec, addrs, run))
            || self.store_to_shared(w, inst, m, exec, addrs, run, shape.step);
        for l in lanes(if done { 0 } else { exec }) {
            let (sp, a) = resolve(m.space, addrs[l]);
            if matches!(sp, StateSpace::Const | StateSpace::Param) {
                return Err(self.fault(
                    w,
                    pc,
                    l,
                    "write (read-only state space)",
                    sp,
                    a,
                    esize as u32,
                ));
            }
            for k in 0..usize::from(m.vec) {
                let v = self.read(w, inst.src[k], l);
                let ea = a.wrapping_add((k * esize) as u64);
                self.access(w, l, sp, ea, esize, Some(v))
                    .ok_or_else(|| self.fault(w, pc, l, "write", sp, ea, esize as u32))?;
            }
        }
        if exec == 0 {
            return Ok(0);
        }
        let space = resolve(m.space, addrs[first]).0;
        Ok(self.model(w, inst, pc, m, space, &access, run, shape.step, true))
    }

    /// The allocation (index, base address) that holds every byte the active lanes of a global
    /// or generic access touch, if one does (the common case, served without per-lane dispatch).
    /// `run`: the access's [`coalesce::run`], whose first and last lane are its lowest and
    /// highest address; `pc` the instruction's.
    #[inline]
    fn one_allocation(
        &mut self,
        m: MemOp,
        pc: u32,
        exec: u32,
        addrs: &[u64; WARP],
        run: Option<u64>,
    ) -> Option<(usize, u64)> {
        if let (Some(a0), StateSpace::Global) = (run, m.space) {
            // A global run inside the instruction's last allocation (the common case): what
            // the general path finds first, without its frame and its other cases. `a0 + 32 *
            // span` does not overflow (`run`).
            let span = m.ty.bytes() as u64 * u64::from(m.vec);
            let hint = self.alloc_hints[pc as usize] as usize;
            if let Some((base, end)) = self.global.try_bounds(hint) {
                if base <= a0 && a0 < end && a0 + 32 * span <= end {
                    self.prefetch_next_run(pc, hint, a0, base, 32 * span);
                    return Some((hint, base));
                }
            }
        }
        self.one_allocation_general(m, pc, exec, addrs, run)
    }

    /// Asks the host to fetch, into its caches, the run of `bytes` that instruction `pc` would
    /// access next if its runs keep their step (the last run at `a0` in allocation `i` at
    /// `base`). The warps of a block run an instruction one after another, each a row further
    /// (transpose's tiles: 4 KiB apart), which the host's own prefetchers do not follow: they
    /// see one load instruction of the simulator serving every PC. Only a hint: nothing is
    /// read, and a wrong guess costs a fetch.
    #[inline(always)]
    fn prefetch_next_run(&mut self, pc: u32, i: usize, a0: u64, base: u64, bytes: u64) {
        let last = std::mem::replace(&mut self.last_runs[pc as usize], a0);
        let next = a0.wrapping_add(a0.wrapping_sub(last));
        if next != a0 {
            self.global.prefetch(i, next.wrapping_sub(base), bytes);
        }
    }

    /// [`Self::one_allocation`] for any access.
    #[inline(never)]
    fn one_allocation_general(
        &mut self,
        m: MemOp,
        pc: u32,
        exec: u32,
        addrs: &[u64; WARP],
        run: Option<u64>,
    ) -> Option<(usize, u64)> {
        if exec == 0 || (m.space != StateSpace::Global && m.space != StateSpace::Generic) {
            return None;
        }
        let span = m.ty.bytes() as u64 * u64::from(m.vec);
        if run.is_none() && exec == u32::MAX && m.space == StateSpace::Global {
            // A whole warp not in one run (conv2d's two rows of 16): every lane inside the
            // instruction's last allocation, by one vectorized compare a lane, is what the
            // general test below finds (its lowest address in the allocation, its highest
            // `span` bytes in it), without the lowest and highest address first.
            let hint = self.alloc_hints[pc as usize] as usize;
            if let Some((base, end)) = self.global.try_bounds(hint) {
                if let Some(limit) = end.checked_sub(base).and_then(|n| n.checked_sub(span)) {
                    let out = addrs.iter().fold(0u64, |any, &a| {
                        any | u64::from(a.wrapping_sub(base) > limit)
                    });
                    if out == 0 {
                        return Some((hint, base));
                    }
                }
            }
        }
        let (lo, hi) = match run {
            Some(a0) => (a0, a0 + 31 * span),
            None => coalesce::span(exec, addrs),
        };
        if resolve(m.space, lo).0 != StateSpace::Global
            || resolve(m.space, hi).0 != StateSpace::Global
        {
            return None;
        }
        // The allocation this instruction's last whole-warp access fell in, when `lo` is in it
        // (a warp's accesses alternate between buffers, so one cache for every instruction
        // missed at each access; each instruction's usually stays in one buffer).
        let hint = &mut self.alloc_hints[pc as usize];
        let (i, (base, end)) = match self.global.try_bounds(*hint as usize) {
            Some((b, e)) if b <= lo && lo < e => (*hint as usize, (b, e)),
            _ => {
                let i = self.global.find(lo, 1)?;
                *hint = i as u32;
                (i, self.global.bounds(i))
            }
        };
        if hi.checked_add(span).is_none_or(|e| e > end) {
            return None;
        }
        Some((i, base))
    }

    /// The row of source `s` when it is a register, read in place (no call, no copy of its 32
    /// values); the caller gathers other sources ([`Ctx::gather`], which gives a register's row
    /// as it is) into a variable initialised only then, so that a register source zeroes no
    /// buffer either.
    #[inline(always)]
    fn reg_row(w: &Warp, s: Src) -> Option<&[u64; WARP]> {
        match s {
            Src::Reg(r) => Some(
                (w.regs[r as usize * WARP..][..WARP])
                    .try_into()
                    .expect("32 lanes"),
            ),
            _ => None,
        }
    }

    /// The common case of a global store: every lane inside one allocation. Writes straight into
    /// it; returns `false` (having done nothing) when the case does not apply.
    #[allow(clippy::too_many_arguments)]
    fn store_to_one_allocation(
        &mut self,
        w: &Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        exec: u32,
        addrs: &[u64; WARP],
        run: Option<u64>,
    ) -> bool {
        let Some((i, base)) = self.one_allocation(m, pc, exec, addrs, run) else {
            return false;
        };
        let esize = m.ty.bytes() as u64;
        for k in 0..usize::from(m.vec) {
            let gathered;
            let v = match Self::reg_row(w, inst.src[k]) {
                Some(row) => row,
                None => {
                    gathered = self.gather(w, inst.src[k], exec);
                    &gathered
                }
            };
            let g = self.global;
            if let Some(a0) = run {
                // Consecutive elements: the warp's values in one pass.
                let stride = (esize * u64::from(m.vec)) as usize;
                let off = (a0 - base) as usize + k * esize as usize;
                let ok = g.write_run(i, off, esize as usize, stride, v);
                debug_assert!(ok, "bounds checked above");
                continue;
            }
            for_lanes!(exec, |l| {
                let off = (addrs[l] - base) as usize + k * esize as usize;
                let ok = g.write(i, off, esize as usize, v[l]);
                debug_assert!(ok, "bounds checked above");
            });
        }
        true
    }

    /// The common case of a shared store (named space, every lane in range, elements of 1 to 8
    /// bytes): writes straight into the block's shared memory, lane by lane and each lane's
    /// elements in order as the general path does (a later lane's bytes win where lanes
    /// overlap); `false` (having done nothing) when the case does not apply. `run`: the access's
    /// [`coalesce::run`], `step` its [`coalesce::Shape::step`].
    #[allow(clippy::too_many_arguments)]
    fn store_to_shared(
        &mut self,
        w: &Warp,
        inst: &DInst,
        m: MemOp,
        exec: u32,
        addrs: &[u64; WARP],
        run: Option<u64>,
        step: Option<(u64, u64)>,
    ) -> bool {
        let esize = m.ty.bytes() as usize;
        if m.space != StateSpace::Shared || exec == 0 || !(1..=8).contains(&esize) {
            return false;
        }
        let span = (esize * usize::from(m.vec)) as u64;
        if !fits_step(addrs, step, span, self.shared.len()) {
            return false;
        }
        // A warp of 32-bit scalars (most shared stores): one value row, no dispatch per lane.
        if m.vec == 1 && esize == 4 {
            let gathered;
            let v = match Self::reg_row(w, inst.src[0]) {
                Some(row) => row,
                None => {
                    gathered = self.gather(w, inst.src[0], exec);
                    &gathered
                }
            };
            let buf = &mut self.shared[..];
            if let Some(a0) = run {
                // Consecutive words (a tile's row): the lanes do not overlap, so the 32 words
                // built as one array and copied as the 128 bytes, a few vector instructions (a
                // copy per lane's 4 bytes was a scalar load and store a lane).
                let words: [[u8; 4]; WARP] = std::array::from_fn(|l| (v[l] as u32).to_le_bytes());
                buf[a0 as usize..][..WARP * 4].copy_from_slice(words.as_flattened());
                return true;
            }
            for_lanes!(exec, |l| {
                let at = addrs[l] as usize;
                // SAFETY: `at + 4 <= buf.len()`: every lane's 4 bytes lie in `buf` (`fits`,
                // checked above); as in `load_from_shared_or_constant`.
                let b = unsafe { buf.get_unchecked_mut(at..at + 4) };
                b.copy_from_slice(&(v[l] as u32).to_le_bytes());
            });
            return true;
        }
        let mut vals = [[0u64; WARP]; 4];
        for (k, row) in vals.iter_mut().enumerate().take(usize::from(m.vec)) {
            *row = self.gather(w, inst.src[k], exec);
        }
        let buf = &mut self.shared[..];
        for l in lanes(exec) {
            for (k, row) in vals.iter().enumerate().take(usize::from(m.vec)) {
                let ok = write_le(buf, addrs[l] as usize + k * esize, esize, row[l]);
                debug_assert!(ok, "bounds checked above");
            }
        }
        true
    }

    /// A kernel-parameter load in the models: counted, with the constant-operand latency.
    fn param_model(&mut self, m: MemOp) -> u32 {
        // A pointer parameter is loaded through the uniform datapath (ULDC, an IDC request that
        // hits); a scalar one becomes a constant operand (IMC). This is what ptxas emits for
        // sm_80 and later; counted per warp.
        let c = &mut *self.counters;
        if m.ty.bytes() == 8 {
            c.idc_requests += 1;
            c.idc_hits += 1;
        } else {
            c.imc_requests += 1;
        }
        self.costs.imc
    }

    /// Hands the warp-level access to the memory models and counts the outcome; returns latency.
    /// `access`: the warp's addresses as generated (generic ones not yet resolved), `run` its
    /// [`coalesce::run`] (`None` where not needed: constant loads), `step` its
    /// [`coalesce::Shape::step`]. Only the dispatch on the
    /// space, inlined into the callers: each space's model is its own function with the frame
    /// and set-up it needs (one function for all had the global path's 2 KiB frame and a set-up
    /// of some 45 instructions that every shared access paid as well).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn model(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MemOp,
        space: StateSpace,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        match space {
            StateSpace::Param => self.param_model(m),
            StateSpace::Const => self.model_const(inst, pc, m, access),
            StateSpace::Global | StateSpace::Local => {
                self.model_global(w, pc, m, space, access, run, step, store)
            }
            StateSpace::Shared => self.model_shared(pc, m, access, run, step, store),
            StateSpace::Reg | StateSpace::Generic => 0,
        }
    }

    /// [`Self::model`] for an indexed or fixed constant load.
    #[inline(never)]
    fn model_const(&mut self, inst: &DInst, pc: u32, m: MemOp, access: &WarpAccess) -> u32 {
        let c = &mut *self.counters;
        let ps = &mut self.per_pc[pc as usize];
        let fixed = matches!(inst.addr.map(|a| a.base), Some(Src::Imm(_)))
            && self.costs.sass.is_const_operand(pc); // timing::sass: LDC when if-converted
        if fixed {
            // A constant at a fixed address is an operand of the instruction (IMC,
            // DESIGN.md). ptxas sometimes loads such values with LDC instead: on an H200
            // conv2d's filter taps count as IDC requests while stencil_1d's count as IMC.
            c.imc_requests += 1;
            c.const_imm_loads += 1;
            return self.costs.imc;
        }
        let mut o = ConstLevelsOutcome::default();
        (self.caches).constant_load_into(self.params, &resolved_access(m.space, access), &mut o);
        c.ldc_inst += 1;
        c.ldc_requests += u64::from(o.requests);
        c.idc_requests += u64::from(o.requests);
        c.idc_hits += u64::from(o.hits);
        c.idc_misses += u64::from(o.misses);
        c.gcc_requests += u64::from(o.level_misses[0]);
        ps.requests += u64::from(o.requests);
        ps.hits += u64::from(o.hits);
        ps.misses += u64::from(o.misses);
        if !o.to_l2.is_empty() {
            // Priced by the L2 pass, which knows where the misses were served.
            let served = o.served.iter().map(|&l| (l != Level::L2).then_some(l));
            return self.log.const_request(pc, served, &o.to_l2);
        }
        // Every request was served by a constant level.
        let served = &o.served[..];
        // LDC is served by the constant caches, not the LSU/L1TEX pipeline (GA102's
        // separate L0 "VL" constant cache, Huerta25 §5.4): it costs constant-pipe time.
        // Latency and work in one walk over the levels (`Costs::ldc_work` apart), or
        // none when no request went past the second level (the usual case).
        let (lat, work) = match o.level_misses[1] {
            0 => (self.costs).constant_costs_near(o.requests, o.misses),
            _ => self.costs.constant_costs(served),
        };
        if self.costs.sass.at(pc).ldc > 0 {
            self.log.ldc[0].push(work);
        }
        lat
    }

    /// [`Self::model`] for a global or local access (`space`, resolved). A global access whose
    /// sectors are one run in one L1 line (a coalesced warp of up to 128 bytes: the common
    /// case) takes [`Self::model_global_line`], inlined here; every other access the general
    /// path, out of line, so that its frame and set-up stay out of the common case's.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn model_global(
        &mut self,
        w: &mut Warp,
        pc: u32,
        m: MemOp,
        space: StateSpace,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        if !w.desc_loaded && self.params.memory_descriptor() {
            // sm_80+ global accesses carry a memory descriptor the warp loads once (ULDC).
            w.desc_loaded = true;
            self.counters.idc_requests += 1;
            self.counters.idc_hits += 1;
        }
        // `m.space` global: `space` is too, and the addresses need no resolving or remapping.
        let line_path = cfg!(not(test)) || !tests_general();
        if let (StateSpace::Global, Some(st), true) = (m.space, step, line_path) {
            if let Some(one) = self.one_line_run(access.bytes, st) {
                return self.model_global_line(pc, m, access, run, step, store, one);
            }
        }
        self.model_global_general(w, pc, m, space, access, run, step, store)
    }

    /// The L1 path of a global or local load with operator `m` (stores ignore it).
    #[inline(always)]
    fn load_path(&self, m: MemOp, local: bool) -> LoadPath {
        // The read-only path (`ld.global.nc`) is always cached; `.cs`/`.lu` are cached but
        // evicted first; `.cg`/`.cv` bypass L1; no operator follows the launch's dlcm.
        match (m.nc, m.cache) {
            (true, _) | (_, CacheOp::Ca) => LoadPath::L1 { evict_first: false },
            (_, CacheOp::Cs | CacheOp::Lu) => LoadPath::L1 { evict_first: true },
            (_, CacheOp::Cg | CacheOp::Cv) => LoadPath::L2Only,
            _ if self.launch.cache_global_loads || local => LoadPath::L1 { evict_first: false },
            _ => LoadPath::L2Only,
        }
    }

    /// The sectors of an access of `bytes` a lane with whole-warp step `st`
    /// ([`coalesce::Shape::step`]) when they are one run in one L1 line, on a config with
    /// [`crate::memory::system::Params::sector_transactions`]: the first sector's byte address,
    /// their count, and their mask in the line ([`coalesce::sector_run`]'s run, in one line).
    #[inline(always)]
    fn one_line_run(&self, bytes: u32, st: (u64, u64)) -> Option<LineRun> {
        let shift = self.costs.l1_sector.trailing_zeros();
        let (first, n) = coalesce::sector_run(bytes, st, shift)?;
        let line_shift = self.params.l1_line_shift();
        // `first + (n - 1) sectors` is the run's last sector: no wrap (`sector_run`).
        let last = first + (u64::from(n - 1) << shift);
        if first >> line_shift != last >> line_shift || !self.params.sector_transactions() {
            return None;
        }
        // `n` sectors from the first one's place in its line (at most 32 a line: `Geometry`).
        let at = (first >> shift) & ((1u64 << (line_shift - shift)) - 1);
        let mask = (u32::MAX >> (32 - n)) << at;
        Some(LineRun { first, n, mask })
    }

    /// [`Self::model_global_general`] of a global access whose sectors are one run in one L1
    /// line (`one`, [`Self::one_line_run`]): the same outcome, counts and log entries, with one
    /// L1 lookup and none of the general path's buffers, remapping or loops over lines.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn model_global_line(
        &mut self,
        pc: u32,
        m: MemOp,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
        LineRun { first, n, mask }: LineRun,
    ) -> u32 {
        let shift = self.costs.l1_sector.trailing_zeros();
        let line_shift = self.params.l1_line_shift();
        let line = first >> line_shift;
        let path = self.load_path(m, false);
        let log = &mut *self.log;
        let start = log.sectors.len() as u32;
        let s0 = first >> shift;
        push_steps(&mut log.sectors, s0, 1, n);
        let req = log.addrs.len();
        // The sectors that go on to L2 onto the log's request list, in order: a store's every
        // one, a load's misses (as one line record where the config takes them).
        let records = self.params.line_records();
        let l1_hits = if store {
            self.caches.store_line(self.params, line, mask);
            if records {
                log.addrs.push(LineRecords::record(line, mask));
            } else {
                push_steps(&mut log.addrs, first, 1 << shift, n);
            }
            0
        } else {
            let hits = (self.caches).load_line(line, mask, path);
            if records {
                if hits != mask {
                    log.addrs.push(LineRecords::record(line, mask & !hits));
                }
            } else if hits == 0 {
                push_steps(&mut log.addrs, first, 1 << shift, n);
            } else {
                let top = line << (line_shift - shift);
                let mut miss = mask & !hits;
                while miss != 0 {
                    log.addrs
                        .push((top + u64::from(miss.trailing_zeros())) << shift);
                    miss &= miss - 1;
                }
            }
            hits.count_ones()
        };
        let dwf = crate::timing::data_wavefronts_of(access, self.costs.banks, run, step);
        let counts = L1Counts {
            sectors: n,
            lines: 1,
            hits: l1_hits,
        };
        let (exec, bytes) = (access.mask, m.bytes_per_thread());
        self.finish_global(pc, false, store, (exec, bytes), counts, start, req, dwf)
    }

    /// [`Self::model_global`] of any access: a local one (remapped per lane), a generic one
    /// (resolved), one whose sectors are not one run in one line.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn model_global_general(
        &mut self,
        w: &mut Warp,
        pc: u32,
        m: MemOp,
        space: StateSpace,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        let exec = access.mask;
        let sm = self.sm;
        let bytes = m.bytes_per_thread();
        let local = space == StateSpace::Local;
        let mut remapped = None;
        if local || m.space == StateSpace::Generic {
            let mut a = resolved_access(m.space, access).into_owned();
            if local {
                // Local memory is interleaved: word k of lane l sits at (k * 32 + l) * 4,
                // so a warp reading the same local variable touches consecutive words.
                let base = LOCAL_MODEL_BASE
                    + (sm as u64 * 64 + u64::from(w.index)) * w.local_bytes as u64 * 32;
                for l in lanes(exec) {
                    a.addrs[l] = base + (a.addrs[l] / 4) * 128 + l as u64 * 4 + a.addrs[l] % 4;
                }
            }
            remapped = Some(a);
        }
        // The addresses the models see, their run and their step.
        let (access, run, step) = match &remapped {
            Some(a) => {
                let shape = coalesce::Shape::of(a.mask, &a.addrs);
                (a, shape.run(a.bytes), shape.step)
            }
            None => (access, run, step),
        };
        let path = self.load_path(m, local);
        let shift = self.costs.l1_sector.trailing_zeros();
        // The L1 part: the sectors' numbers onto the log (the timing pass needs them: fills in
        // flight, store merging), and the sectors that go on to L2 onto the log's request list
        // from `req` on. A run of sectors (lanes at most a sector apart: a coalesced access)
        // goes to L1 as the run, with no list of sectors in between; others through the
        // general path, out of line (its buffers would make this frame large).
        let log = &mut *self.log;
        let start = log.sectors.len() as u32;
        let req = log.addrs.len();
        let runs = self.params.sector_transactions();
        let (sectors, lines, l1_hits) = match step
            .and_then(|st| coalesce::sector_run(access.bytes, st, shift).filter(|_| runs))
        {
            Some((first, n)) => {
                log.sectors
                    .extend((0..u64::from(n)).map(|k| (first >> shift) + k));
                let (p, caches) = (self.params, &mut *self.caches);
                let run = (first, n);
                match (store, p.line_records()) {
                    (true, true) => {
                        let lines = caches.store_run_into(p, run, &mut LineRecords(&mut log.addrs));
                        (n, lines, 0)
                    }
                    (true, false) => (n, caches.store_run_into(p, run, &mut log.addrs), 0),
                    (false, true) => {
                        let to_l2 = &mut LineRecords(&mut log.addrs);
                        let r = caches.load_run_into(p, run, path, to_l2);
                        (n, r.lines, r.hits)
                    }
                    (false, false) => {
                        let r = caches.load_run_into(p, run, path, &mut log.addrs);
                        (n, r.lines, r.hits)
                    }
                }
            }
            None => self.global_sectors(access, run, step, shift, path, store),
        };
        // What the timing pass needs: the L1 data pipe, fills in flight, store merging.
        let dwf = crate::timing::data_wavefronts_of(access, self.costs.banks, run, step);
        let counts = L1Counts {
            sectors,
            lines,
            hits: l1_hits,
        };
        self.finish_global(pc, local, store, (exec, bytes), counts, start, req, dwf)
    }

    /// The rest of [`Self::model_global`] once an access's L1 part has put its sectors onto the
    /// log (from `start`) and the sectors going on to L2 onto its request list (from `req`):
    /// the counters (`(exec, bytes)`: the active lanes and each one's bytes), the per-PC and per-SM
    /// counts, the latency (L1 hit, L2 request, or a store acknowledged by L2) and the log's
    /// record for the timing pass (`dwf`: the access's data-pipe wavefronts, before misses).
    /// Returns the record's reference. Shared by the one-line path and the general one.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn finish_global(
        &mut self,
        pc: u32,
        local: bool,
        store: bool,
        (exec, bytes): (u32, u32),
        L1Counts {
            sectors,
            lines,
            hits: l1_hits,
        }: L1Counts,
        start: u32,
        req: usize,
        dwf: u32,
    ) -> u32 {
        let c = &mut *self.counters;
        let ps = &mut self.per_pc[pc as usize];
        let work = &mut *self.work;
        let log = &mut *self.log;
        let end = log.sectors.len() as u32;
        // Stores count neither hits nor misses in L1.
        let l1_misses = if store { 0 } else { sectors - l1_hits };
        match (local, store) {
            (false, false) => {
                c.global_ld_inst += 1;
                c.global_ld_requests += 1;
                c.global_ld_bytes += u64::from(exec.count_ones() * bytes);
                c.global_ld_sectors += u64::from(sectors);
                c.l1_ld_hits += u64::from(l1_hits);
                c.l1_ld_misses += u64::from(l1_misses);
            }
            (false, true) => {
                c.global_st_inst += 1;
                c.global_st_requests += 1;
                c.global_st_sectors += u64::from(sectors);
            }
            (true, false) => {
                c.local_ld_requests += 1;
                c.local_ld_sectors += u64::from(sectors);
            }
            (true, true) => {
                c.local_st_requests += 1;
                c.local_st_sectors += u64::from(sectors);
            }
        }
        ps.requests += 1;
        ps.sectors += u64::from(sectors);
        ps.hits += u64::from(l1_hits);
        ps.misses += u64::from(l1_misses);
        work.mem_insts += 1;
        work.l1_sectors += u64::from(sectors);
        work.l1_tags += u64::from(lines);
        let sent = log.addrs.len() > req;
        let hit = !store && !sent;
        let records = self.params.line_records();
        let lat = match (store, sent) {
            // Every sector hit L1.
            (false, false) => self.costs.global(Level::Cache(0)),
            (false, true) if records => log.request_from(L2Kind::LoadLines, req),
            (false, true) => log.request_from(L2Kind::Load, req),
            // Stores are acknowledged by L2; the L2 pass still runs their writes.
            (true, true) if records => log.request_from(L2Kind::StoreLines, req),
            (true, true) => log.request_from(L2Kind::Store, req),
            (true, false) => self.costs.l2,
        };
        log.mem(MemRec {
            lat,
            dwf: dwf + l1_misses,
            start,
            end,
            // At most the access's sectors: a few per lane.
            lines: lines as u16,
            store,
            hit,
        })
    }

    /// The L1 part of [`Self::model_global`] for an access whose sectors are not one run (or
    /// a config whose L1 moves whole lines): the distinct sectors (equally spaced lanes' in
    /// closed form into a small array, others by the coalescer), their numbers onto the log,
    /// the L1 lookups, and the sectors that go on to L2 onto the log's request list. Returns
    /// (sectors, lines, L1 hits). Out of line: its buffers stay out of the caller's frame.
    #[inline(never)]
    fn global_sectors(
        &mut self,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        shift: u32,
        path: LoadPath,
        store: bool,
    ) -> (u32, u32, u32) {
        let mut few = [0u64; WARP];
        let mut many = coalesce::Sectors::new();
        let touched: &[u64] =
            match step.and_then(|st| coalesce::stepped_sectors(access, st, shift, &mut few)) {
                Some(n) => &few[..n],
                None => {
                    self.params.sectors_into(access, run, &mut many);
                    &many
                }
            };
        let log = &mut *self.log;
        log.sectors.extend(touched.iter().map(|s| s >> shift));
        let p = self.params;
        if !store && p.sector_transactions() {
            // A load's misses straight onto the log's request list.
            let r = if p.line_records() {
                let to_l2 = &mut LineRecords(&mut log.addrs);
                self.caches.load_sectors_to(p, touched, path, to_l2)
            } else {
                self.caches
                    .load_sectors_to(p, touched, path, &mut log.addrs)
            };
            return (touched.len() as u32, r.lines, r.hits);
        }
        let mut o = L1Outcome::default();
        if store {
            self.caches.store_sectors_into(p, touched, &mut o);
        } else {
            self.caches.load_sectors_into(p, touched, path, &mut o);
        }
        if p.line_records() {
            self.caches
                .pass_on(&o.to_l2, &mut LineRecords(&mut log.addrs));
        } else {
            log.addrs.extend_from_slice(&o.to_l2);
        }
        (o.sectors, o.lines, o.l1_hits)
    }

    /// [`Self::model`] for a shared access.
    #[inline(never)]
    fn model_shared(
        &mut self,
        pc: u32,
        m: MemOp,
        access: &WarpAccess,
        run: Option<u64>,
        step: Option<(u64, u64)>,
        store: bool,
    ) -> u32 {
        let c = &mut *self.counters;
        let ps = &mut self.per_pc[pc as usize];
        let work = &mut *self.work;
        let bytes = m.bytes_per_thread();
        let banks = Banks {
            banks: self.cfg.shared.banks,
            width: self.launch.bank_width,
        };
        let access = resolved_access(m.space, access);
        let (run, step) = match m.space {
            StateSpace::Generic => {
                let shape = coalesce::Shape::of(access.mask, &access.addrs);
                (shape.run(access.bytes), shape.step)
            }
            _ => (run, step),
        };
        let wf = shared::wavefronts_of_step(&access, banks, run, step);
        let (n, k) = (u64::from(wf.wavefronts), u64::from(wf.conflicts()));
        if store {
            c.shared_st_inst += 1;
            c.shared_st_wavefronts += n;
            c.shared_st_conflicts += k;
        } else {
            c.shared_ld_inst += 1;
            c.shared_ld_wavefronts += n;
            c.shared_ld_conflicts += k;
        }
        ps.requests += 1;
        ps.wavefronts += n;
        ps.conflicts += k;
        note_worst(&mut ps.worst, &access, bytes, banks, wf.wavefronts);
        work.mem_insts += 1;
        work.shared_wavefronts += n;
        // Conflicting wavefronts are served one after another.
        self.cfg.shared.latency_cycles + wf.wavefronts - 1
    }
}

/// Whether a test asked for every global access to take the general path
/// ([`tests::GLOBAL_GENERAL`]), to compare it with the one-line path.
#[cfg(test)]
fn tests_general() -> bool {
    tests::GLOBAL_GENERAL.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(not(test))]
#[inline(always)]
fn tests_general() -> bool {
    false
}

/// Pushes the `n` values `a`, `a + step`, ... onto `v`: up to 4 (a whole line's sectors in the
/// shipped configs) as one copy of four, cut back to `n` (a few vector instructions, no loop);
/// more one by one.
#[inline(always)]
fn push_steps(v: &mut Vec<u64>, a: u64, step: u64, n: u32) {
    if n <= 4 {
        let len = v.len();
        // Values past the `n`-th are cut off: wrapping, as they may lie past the top.
        let at = |k: u64| a.wrapping_add(k.wrapping_mul(step));
        v.extend_from_slice(&[a, at(1), at(2), at(3)]);
        v.truncate(len + n as usize);
    } else {
        v.extend((0..u64::from(n)).map(|k| a + k * step));
    }
}

/// What an access's L1 part found: its distinct sectors, the L1 lines they lie in (tag
/// lookups), and a load's sectors that hit.
#[derive(Clone, Copy)]
struct L1Counts {
    sectors: u32,
    lines: u32,
    hits: u32,
}

/// A global access's sectors that are one run in one L1 line ([`Ctx::one_line_run`]).
#[derive(Debug, Clone, Copy)]
struct LineRun {
    /// The first sector's byte address.
    first: u64,
    /// How many sectors (at least 1).
    n: u32,
    /// Their mask in the line (bit `i`: sector `i` of the line).
    mask: u32,
}

/// Keeps the shared access `access` (`bytes` per lane, on `banks`, taking `wavefronts`) as an
/// instruction's `worst` (the bank picture of `--per-instruction`) when it took more wavefronts
/// than the one kept.
#[inline(always)]
fn note_worst(
    worst: &mut Option<SharedSample>,
    access: &WarpAccess,
    bytes: u32,
    banks: Banks,
    wavefronts: u32,
) {
    if worst.as_ref().is_none_or(|s| s.wavefronts < wavefronts) {
        *worst = Some(SharedSample {
            mask: access.mask,
            addrs: access.addrs.to_vec(),
            bytes,
            banks: banks.banks,
            width: banks.width,
            wavefronts,
        });
    }
}

/// The first lane of `exec` whose address is not a multiple of `bytes`, the access's size
/// (element size times vector width: a power of two for every `ld`/`st` PTX has), if any. PTX
/// requires naturally aligned addresses (PTX ISA, "Addresses as Operands": a vector access is
/// aligned to its whole size), and a GPU stops the kernel with `CUDA_ERROR_MISALIGNED_ADDRESS`
/// when one is not; a memory checker reports it per thread.
/// `align`: the lanes' common alignment ([`coalesce::Shape::alignment`]).
#[inline(always)]
fn misaligned_lane(exec: u32, addrs: &[u64; WARP], align: u64, bytes: u32) -> Option<usize> {
    let low = if bytes.is_power_of_two() {
        u64::from(bytes) - 1
    } else {
        0
    };
    // The lanes' alignment answers the usual, aligned case without walking the mask.
    if align & low == 0 {
        return None;
    }
    lanes(exec).find(|&l| addrs[l] & low != 0)
}

/// Reads the 32-bit word at byte `addrs[l]` of `buf` (shared memory or the constant bank) into
/// `out[l]` for every lane `l`,
/// sign-extended when `SIGNED`: one loop for each, so that the sign is not chosen per lane (a
/// select per lane was 5 instructions a lane instead of 3).
///
/// # Safety
/// `addrs[l] + 4 <= buf.len()` for every lane.
#[inline(always)]
unsafe fn shared_words<const SIGNED: bool>(buf: &[u8], addrs: &[u64; WARP], out: &mut [u64; WARP]) {
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

/// A whole warp's addresses, `base[l] + off` (wrapping) for every lane, and their
/// [`coalesce::Shape`].
#[inline(always)]
fn warp_addresses(base: &[u64; WARP], off: u64) -> ([u64; WARP], coalesce::Shape) {
    let d = base[1].wrapping_sub(base[0]);
    let out = std::array::from_fn(|l| base[l].wrapping_add(off));
    // The steps read the row again through a reference the compiler cannot see through: from
    // the values the adds had loaded, it built each lane's step with three shuffles instead of
    // a second, unaligned load. (The offset cancels in the steps: they are the addresses'.)
    let odd = coalesce::steps_off(std::hint::black_box(base), d);
    let step = coalesce::step_of(base[0].wrapping_add(off), d, odd);
    (out, coalesce::Shape { step })
}

/// Register `r`'s 32 lanes (of register file `regs`).
#[inline(always)]
fn row(regs: &[u64], r: u16) -> &[u64; WARP] {
    (&regs[usize::from(r) * WARP..][..WARP])
        .try_into()
        .expect("32 lanes")
}

/// Register `r`'s 32 lanes, to write.
#[inline(always)]
fn row_mut(regs: &mut [u64], r: u16) -> &mut [u64; WARP] {
    (&mut regs[usize::from(r) * WARP..][..WARP])
        .try_into()
        .expect("32 lanes")
}

/// Whether `span` bytes from each of a warp's addresses as [`Ctx::addresses_and_shape`] leaves them
/// (inactive lanes 0, which fit whenever any lane can) lie in a buffer of `len` bytes: a plain
/// pass over all 32 without a walk over the mask's bits, one unsigned compare a lane that the
/// compiler vectorizes (a running maximum was a scalar compare and move a lane).
#[inline]
fn fits(addrs: &[u64; WARP], span: u64, len: usize) -> bool {
    let Some(limit) = (len as u64).checked_sub(span) else {
        return false;
    };
    addrs
        .iter()
        .fold(0u64, |any, &a| any | u64::from(a > limit))
        == 0
}

/// [`fits`] for an access whose [`coalesce::Shape::step`] is `step`: equally spaced lanes (a
/// run, a tile's column) ascend without wrapping, so the last lane's bytes are the highest, one
/// compare instead of a pass over the lanes.
#[inline]
fn fits_step(addrs: &[u64; WARP], step: Option<(u64, u64)>, span: u64, len: usize) -> bool {
    match step {
        // `a0 + 31 * d` does not wrap (the step's).
        Some((a0, d)) => (len as u64)
            .checked_sub(span)
            .is_some_and(|limit| a0 + 31 * d <= limit),
        None => fits(addrs, span, len),
    }
}

/// Per-lane addresses with generic windows removed.
fn resolved(space: StateSpace, addrs: &[u64; WARP]) -> [u64; WARP] {
    let mut out = *addrs;
    for a in &mut out {
        *a = resolve(space, *a).1;
    }
    out
}

/// `access` with generic windows removed: itself (not copied) unless its space is generic.
fn resolved_access(space: StateSpace, access: &WarpAccess) -> std::borrow::Cow<'_, WarpAccess> {
    match space {
        StateSpace::Generic => std::borrow::Cow::Owned(WarpAccess {
            addrs: resolved(space, &access.addrs),
            ..*access
        }),
        _ => std::borrow::Cow::Borrowed(access),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every global access takes [`Ctx::model_global_general`] (on all threads: the outcomes are
    /// the same either way, so that other tests running meanwhile are not disturbed).
    pub(super) static GLOBAL_GENERAL: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Accesses that reached [`Ctx::word_access`]'s paths (most then complete there): so that
    /// the tests comparing it with the general path know it ran.
    pub(super) static WORD_ACCESSES: std::sync::atomic::AtomicU64 =
        std::sync::atomic::AtomicU64::new(0);

    /// Global accesses through the one-line path ([`Ctx::model_global_line`]) give what the
    /// general path gives: the same outputs, counters, per-PC statistics and timing, on
    /// workloads of coalesced loads and stores (one line, and not: offsets, strides, 16-byte
    /// elements), the read-only path, on L1s of 256 ways in 4 sets and of 466 ways in 3 sets.
    #[test]
    fn one_line_accesses_match_the_general_path() {
        use std::sync::atomic::Ordering::Relaxed;
        let cases: [(&str, &[(&str, i64)]); 6] = [
            ("transpose_smem", &[("n", 64)]),
            ("read_stride", &[("n", 3000)]),
            ("read_offset", &[("n", 3000)]),
            ("read_ldg", &[("n", 3000)]),
            ("copy_float4", &[("n", 3000)]),
            ("stencil_1d", &[("n", 4096)]),
        ];
        for gpu in ["rtx3090", "h200"] {
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |on| {
                    GLOBAL_GENERAL.store(on, Relaxed)
                });
            }
        }
    }

    /// Whole-warp word accesses through [`Ctx::word_access`] give what the general memory path
    /// gives: the same outputs, counters, per-PC statistics and timing, on workloads of global
    /// and shared 32-bit loads and stores (runs, strides, columns, scattered lanes, guards).
    #[test]
    fn word_accesses_match_the_general_path() {
        let cases: [(&str, &[(&str, i64)]); 6] = [
            ("transpose_smem", &[("n", 64)]),
            ("read_stride", &[("n", 3000)]),
            ("reduce", &[("n", 8192)]),
            ("stencil_1d", &[("n", 4096)]),
            ("smem_stride", &[]),
            ("pseudo_random", &[("n", 20000)]),
        ];
        for gpu in ["rtx3090", "h200"] {
            for (name, sets) in cases {
                crate::testing::same_both_ways(gpu, name, sets, |on| {
                    crate::exec::fast::tests::WORD_GENERAL.set(on)
                });
            }
        }
    }

    /// The fixture `word_mix.ptx` (loads and stores of words at addresses `(tid * a + b) & mask`
    /// and of a random table, global and shared, signed, unsigned and f32, guarded and not)
    /// gives the same results, and the same faults, through [`Ctx::word_access`] and through the
    /// general path, for edge and random patterns: runs, strides up to and past a line,
    /// broadcasts, descending lanes, lanes that meet, offsets; misaligned and out-of-range
    /// loads.
    #[test]
    fn word_accesses_match_the_general_path_on_random_patterns() {
        let dir = std::env::temp_dir().join(format!("sim-word-mix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("word_mix.ptx"),
            include_str!("../../../tests/fixtures/word_mix.ptx"),
        )
        .unwrap();
        let edges = [
            0u32,
            1,
            2,
            3,
            4,
            7,
            8,
            16,
            31,
            32,
            33,
            64,
            255,
            u32::MAX,
            0xffff_fff0,
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x = crate::testing::lcg(x);
            (x >> 32) as u32
        };
        let mut launches = String::new();
        for k in 0..40 {
            let mut pick = || {
                let r = next();
                if k % 2 == 0 {
                    edges[r as usize % edges.len()]
                } else {
                    r >> (r % 32)
                }
            };
            let args: [u32; 6] = std::array::from_fn(|_| pick());
            let [a, b, c, d, e, f] = args;
            launches += &format!(
                "[[launch]]\nlabel = \"l{k}\"\nkernel = \"word_mix\"\ngrid = [\"n\", 1, 1]\n\
                 block = [256, 1, 1]\nargs = [\"dst\", \"src\", \"idx\", {a}, {b}, {c}, {d}, \
                 {e}, {f}, 0]\n\n"
            );
        }
        // Faults: misaligned (2), past the shared memory and the buffer (4096, 1 << 20).
        let faults = [2u64, 4096, 1 << 20].map(|g| {
            format!(
                "[[launch]]\nlabel = \"f\"\nkernel = \"word_mix\"\ngrid = [\"n\", 1, 1]\n\
                 block = [256, 1, 1]\nargs = [\"dst\", \"src\", \"idx\", 1, 0, 1, 0, 32, 0, {g}]\n"
            )
        });
        let head = "name = \"word_mix\"\ndescription = \"test\"\nptx = \"word_mix.ptx\"\n\
                    [params]\nn = 6\n\
                    [[buffer]]\nname = \"dst\"\ntype = \"u32\"\ncount = \"n * 1024\"\n\
                    init = \"zeros\"\noutput = true\n\
                    [[buffer]]\nname = \"src\"\ntype = \"u32\"\ncount = \"4097\"\n\
                    init = \"random:7\"\n\
                    [[buffer]]\nname = \"idx\"\ntype = \"u32\"\ncount = \"n * 256\"\n\
                    init = \"random:3\"\n\n";
        let mut texts = vec![format!("{head}{launches}")];
        texts.extend(faults.iter().map(|f| format!("{head}{f}")));
        for (k, text) in texts.iter().enumerate() {
            let path = dir.join(format!("word_mix_{k}.toml"));
            std::fs::write(&path, text).unwrap();
            for gpu in ["rtx3090", "h200"] {
                let cfg = format!("{}/../configs/{gpu}.toml", env!("CARGO_MANIFEST_DIR"));
                let cfg = crate::config::GpuConfig::load(std::path::Path::new(&cfg)).unwrap();
                let w = crate::workload::Workload::resolve(path.to_str().unwrap()).unwrap();
                let opts = crate::run::Options {
                    keep_outputs: true,
                    ..Default::default()
                };
                let run = |general: bool| {
                    crate::exec::fast::tests::WORD_GENERAL.set(general);
                    let r = crate::run::run_workload(&cfg, &w, &opts);
                    crate::exec::fast::tests::WORD_GENERAL.set(false);
                    match r {
                        Ok(r) => format!("{:?}", r.launches),
                        Err(e) => format!("error: {e}"),
                    }
                };
                let before = WORD_ACCESSES.load(std::sync::atomic::Ordering::Relaxed);
                let (fast, general) = (run(false), run(true));
                assert!(WORD_ACCESSES.load(std::sync::atomic::Ordering::Relaxed) > before);
                // The patterns run, and each fault case faults.
                assert_eq!(
                    general.starts_with("error"),
                    k > 0,
                    "{gpu} {k}: {general:.300}"
                );
                assert_eq!(fast, general, "{gpu} {k}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    fn size(ty: crate::ptx::ast::Type, vec: u8) -> u32 {
        ty.bytes() * u32::from(vec)
    }

    /// [`super::misaligned_lane`] with the OR of the active lanes found here.
    fn misaligned_lane(exec: u32, addrs: &[u64; WARP], bytes: u32) -> Option<usize> {
        let align = coalesce::Shape::of(exec, addrs).alignment(addrs);
        super::misaligned_lane(exec, addrs, align, bytes)
    }

    #[test]
    fn misaligned_lanes_are_found_by_the_whole_access_size() {
        use crate::ptx::ast::Type;
        let words: [u64; WARP] = std::array::from_fn(|l| 0x1000 + 4 * l as u64);
        assert_eq!(misaligned_lane(u32::MAX, &words, size(Type::U32, 1)), None);
        // A v2.u32 needs 8-byte alignment: lane 1 (0x1004) is the first that lacks it.
        assert_eq!(
            misaligned_lane(u32::MAX, &words, size(Type::U32, 2)),
            Some(1)
        );
        // Only active lanes count: with odd lanes off, every address is 8-byte aligned.
        assert_eq!(
            misaligned_lane(0x5555_5555, &words, size(Type::U32, 2)),
            None
        );
        let mut off = words;
        off[7] += 2;
        assert_eq!(misaligned_lane(u32::MAX, &off, size(Type::U32, 1)), Some(7));
        assert_eq!(misaligned_lane(u32::MAX, &off, size(Type::U16, 1)), None);
        assert_eq!(misaligned_lane(u32::MAX, &off, size(Type::U8, 2)), None);
        // u8.v4 moves 4 bytes and needs their alignment.
        assert_eq!(misaligned_lane(u32::MAX, &off, size(Type::U8, 4)), Some(7));
        assert_eq!(misaligned_lane(!(1 << 7), &off, size(Type::U32, 1)), None);
    }

    #[test]
    fn fits_of_equal_steps_is_the_pass_over_the_lanes() {
        // Runs and strided lanes near the buffer's end and near the top of the address space,
        // and accesses that are neither, of every element size: the one compare agrees with the
        // pass.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for span in [1u64, 2, 4, 8, 16, 32] {
            for len in [0usize, 1, 64, 4096, 4224, 48 * 1024] {
                let mut starts = vec![0u64, u64::MAX - 32 * span, u64::MAX - 31 * span];
                for k in 0..40u64 {
                    starts.push((len as u64).wrapping_sub(32 * span).wrapping_add(k) & !(span - 1));
                    starts.push(next() % (2 * len as u64 + 1));
                }
                for a0 in starts {
                    for d in [span, 0, 2 * span, 128, 132, u64::MAX - span + 1] {
                        let addrs: [u64; WARP] =
                            std::array::from_fn(|l| a0.wrapping_add((l as u64).wrapping_mul(d)));
                        let mut bent = addrs;
                        bent[(next() % 32) as usize] ^= 1 << (next() % 14);
                        for a in [addrs, bent] {
                            let step = coalesce::Shape::of(u32::MAX, &a).step;
                            assert_eq!(
                                fits_step(&a, step, span, len),
                                fits(&a, span, len),
                                "a0 {:#x} span {span} len {len} step {step:?}",
                                a[0]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn uniform_strides() {
        use coalesce::stride as uniform_stride;
        let s: [u64; WARP] = std::array::from_fn(|l| 0x1000 + 128 * l as u64);
        assert_eq!(uniform_stride(u32::MAX, &s), Some(128));
        assert_eq!(uniform_stride(!1, &s), None);
        let mut bent = s;
        bent[9] += 4;
        assert_eq!(uniform_stride(u32::MAX, &bent), None);
        // One address for every lane, and descending addresses, are not strides.
        assert_eq!(uniform_stride(u32::MAX, &[64; WARP]), None);
        let down: [u64; WARP] = std::array::from_fn(|l| 0x1000 - 4 * l as u64);
        assert_eq!(uniform_stride(u32::MAX, &down), None);
    }
}

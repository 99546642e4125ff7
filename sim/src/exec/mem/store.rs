//! Stores: `st` of every state space, the functional write (a global store inside one
//! allocation, a shared store in range, else lane by lane) and the access handed to the models.

use super::address::{fits_step, misaligned_lane, resolve};
use crate::error::Result;
use crate::exec::decode::{DInst, Src};
use crate::exec::step::{for_lanes, lanes, Ctx};
use crate::exec::warp::Warp;
use crate::memory::image::write_le;
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::MemOp;

impl Ctx<'_> {
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
            self.note_fault(w, pc, l, "misaligned write", sp, a, access.bytes);
            return Ok(0);
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
                let what = "write (read-only state space)";
                self.note_fault(w, pc, l, what, sp, a, esize as u32);
                return Ok(0);
            }
            for k in 0..usize::from(m.vec) {
                let v = self.read(w, inst.src[k], l);
                let ea = a.wrapping_add((k * esize) as u64);
                if self.access(w, l, sp, ea, esize, Some(v)).is_none() {
                    self.note_fault(w, pc, l, "write", sp, ea, esize as u32);
                    return Ok(0);
                }
            }
        }
        if exec == 0 {
            return Ok(0);
        }
        let space = resolve(m.space, addrs[first]).0;
        Ok(self.model(w, inst, pc, m, space, &access, run, shape.step, true))
    }

    /// The row of source `s` when it is a register, read in place (no call, no copy of its 32
    /// values); the caller gathers other sources ([`Ctx::gather`], which gives a register's row
    /// as it is) into a variable initialised only then, so that a register source zeroes no
    /// buffer either.
    #[inline(always)]
    fn reg_row(w: &Warp, s: Src) -> Option<&[u64; WARP]> {
        match s {
            Src::Reg(r) => Some(crate::exec::warp::row(&w.regs, r)),
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
            let g = self.pass.global;
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
    ///
    /// [`coalesce::run`]: crate::memory::coalesce::run
    /// [`coalesce::Shape::step`]: crate::memory::coalesce::Shape::step
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
}

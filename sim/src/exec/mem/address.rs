//! Addresses: the active lanes' addresses and their shape, generic addresses resolved to their
//! state space, the global allocation an access falls in (remembered per instruction, with a
//! prefetch of the next run), alignment and bounds checks, one lane's functional access, and the
//! fault report of an access outside its state space.

use crate::error::Error;
use crate::exec::decode::{DInst, Src};
use crate::exec::step::{lanes, Ctx};
use crate::exec::warp::Warp;
use crate::memory::coalesce;
use crate::memory::image::{
    read_le, write_le, CONST_WINDOW, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_BYTES,
};
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::StateSpace;
use crate::ptx::inst::MemOp;

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
    pub(super) fn addresses(&self, w: &Warp, inst: &DInst, exec: u32) -> [u64; WARP] {
        self.addresses_and_shape(w, inst, exec).0
    }

    /// The active lanes' addresses (inactive lanes 0), with their [`coalesce::Shape`], found in
    /// the same pass (the alignment check, the run, the stride and the models' closed forms need no
    /// other pass over the lanes).
    #[inline(always)]
    pub(super) fn addresses_and_shape(
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
            let base: &[u64; WARP] = row(&w.regs, r);
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

    /// Records a memory error of lane `lane` at `pc` ([`crate::exec::faults`]): its report is
    /// built only for the first occurrence of the instruction's kind of error.
    #[allow(clippy::too_many_arguments)] // one report needs every one of them
    #[cold]
    pub(crate) fn note_fault(
        &mut self,
        w: &Warp,
        pc: u32,
        lane: usize,
        what: &'static str,
        space: StateSpace,
        addr: u64,
        bytes: u32,
    ) {
        if (self.faults).counted(pc, what, self.pass.launch.checks.memcheck_limit) {
            return;
        }
        let message = match self.fault(w, pc, lane, what, space, addr, bytes) {
            Error::Fault { message, .. } => message,
            e => e.to_string(),
        };
        let g = self.pass.launch.dims.grid;
        let c = self.ctaid;
        let block = u64::from(c[0])
            + u64::from(g[0]) * (u64::from(c[1]) + u64::from(g[1]) * u64::from(c[2]));
        self.faults.push(block, pc, what, message);
    }

    #[allow(clippy::too_many_arguments)] // one report needs every one of them
    pub(super) fn fault(
        &self,
        w: &Warp,
        pc: u32,
        lane: usize,
        what: &str,
        space: StateSpace,
        addr: u64,
        bytes: u32,
    ) -> Error {
        let b = self.pass.launch.dims.block;
        let linear = w.index * 32 + lane as u32;
        let tid = (linear % b[0], linear / b[0] % b[1], linear / (b[0] * b[1]));
        let c = self.ctaid;
        let where_ = match space {
            StateSpace::Global => self.pass.global.nearest(addr),
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
                self.pass.constant.len()
            ),
            _ => format!(
                "outside the {} bytes of kernel parameters",
                self.pass.launch.params.len()
            ),
        };
        let p = self.pass.launch.program;
        Error::Fault {
            launch: self.pass.launch.label.into(),
            message: format!(
                "invalid {} {what} of {bytes} bytes at address {addr:#x} by thread ({},{},{}) in block ({},{},{}): {where_}; {}: `{}`",
                space.name(),
                tid.0,
                tid.1,
                tid.2,
                c[0],
                c[1],
                c[2],
                p.place(pc as usize),
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
                    let (lo, hi) = self.pass.global.bounds(i);
                    lo <= addr && addr.checked_add(len).is_some_and(|e| e <= hi)
                } =>
            {
                i
            }
            _ => self.pass.global.find(addr, len)?,
        };
        self.last_alloc = Some(i);
        Some(i)
    }

    /// Functional access of `n` bytes at `addr` in `space` for `lane`: reads, or writes `value`.
    pub(crate) fn access(
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
                let off = usize::try_from(addr - self.pass.global.bounds(i).0).ok()?;
                return match value {
                    None => self.pass.global.read(i, off, n),
                    Some(v) => self.pass.global.write(i, off, n, v).then_some(0),
                };
            }
            StateSpace::Const => {
                return read_le(self.pass.constant, usize::try_from(addr).ok()?, n)
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

    /// The allocation (index, base address) that holds every byte the active lanes of a global
    /// or generic access touch, if one does (the common case, served without per-lane dispatch).
    /// `run`: the access's [`coalesce::run`], whose first and last lane are its lowest and
    /// highest address; `pc` the instruction's.
    #[inline]
    pub(super) fn one_allocation(
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
            if let Some((base, end)) = self.pass.global.try_bounds(hint) {
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
    pub(super) fn prefetch_next_run(&mut self, pc: u32, i: usize, a0: u64, base: u64, bytes: u64) {
        let last = std::mem::replace(&mut self.last_runs[pc as usize], a0);
        let next = a0.wrapping_add(a0.wrapping_sub(last));
        if next != a0 {
            self.pass.global.prefetch(i, next.wrapping_sub(base), bytes);
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
            if let Some((base, end)) = self.pass.global.try_bounds(hint) {
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
        let (i, (base, end)) = match self.pass.global.try_bounds(*hint as usize) {
            Some((b, e)) if b <= lo && lo < e => (*hint as usize, (b, e)),
            _ => {
                let i = self.pass.global.find(lo, 1)?;
                *hint = i as u32;
                (i, self.pass.global.bounds(i))
            }
        };
        if hi.checked_add(span).is_none_or(|e| e > end) {
            return None;
        }
        Some((i, base))
    }
}

/// The first lane of `exec` whose address is not a multiple of `bytes`, the access's size
/// (element size times vector width: a power of two for every `ld`/`st` PTX has), if any. PTX
/// requires naturally aligned addresses (PTX ISA, "Addresses as Operands": a vector access is
/// aligned to its whole size), and a GPU stops the kernel with `CUDA_ERROR_MISALIGNED_ADDRESS`
/// when one is not; a memory checker reports it per thread.
/// `align`: the lanes' common alignment ([`coalesce::Shape::alignment`]).
#[inline(always)]
pub(super) fn misaligned_lane(
    exec: u32,
    addrs: &[u64; WARP],
    align: u64,
    bytes: u32,
) -> Option<usize> {
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

/// A whole warp's addresses, `base[l] + off` (wrapping) for every lane, and their
/// [`coalesce::Shape`].
#[inline(always)]
pub(super) fn warp_addresses(base: &[u64; WARP], off: u64) -> ([u64; WARP], coalesce::Shape) {
    let d = base[1].wrapping_sub(base[0]);
    let out = std::array::from_fn(|l| base[l].wrapping_add(off));
    // The steps read the row again through a reference the compiler cannot see through: from
    // the values the adds had loaded, it built each lane's step with three shuffles instead of
    // a second, unaligned load. (The offset cancels in the steps: they are the addresses'.)
    let odd = coalesce::steps_off(std::hint::black_box(base), d);
    let step = coalesce::step_of(base[0].wrapping_add(off), d, odd);
    (out, coalesce::Shape { step })
}

pub(super) use crate::exec::warp::{row, row_mut};

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
pub(super) fn fits_step(
    addrs: &[u64; WARP],
    step: Option<(u64, u64)>,
    span: u64,
    len: usize,
) -> bool {
    match step {
        // `a0 + 31 * d` does not wrap (the step's).
        Some((a0, d)) => (len as u64)
            .checked_sub(span)
            .is_some_and(|limit| a0 + 31 * d <= limit),
        None => fits(addrs, span, len),
    }
}

/// Per-lane addresses with generic windows removed.
pub(super) fn resolved(space: StateSpace, addrs: &[u64; WARP]) -> [u64; WARP] {
    let mut out = *addrs;
    for a in &mut out {
        *a = resolve(space, *a).1;
    }
    out
}

/// `access` with generic windows removed: itself (not copied) unless its space is generic.
pub(super) fn resolved_access(
    space: StateSpace,
    access: &WarpAccess,
) -> std::borrow::Cow<'_, WarpAccess> {
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

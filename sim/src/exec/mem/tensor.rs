//! The memory side of the asynchronous copies and the tensor-core loads: `cp.async` (LDGSTS),
//! `ldmatrix` (LDSM) and `stmatrix` (STSM), functionally and in the memory models.
//!
//! `cp.async` lands at issue. The PTX ISA (§9.7.9.25.3.1) lets the copy complete at any time
//! before the `cp.async.wait_group`/`wait_all` that covers it, and a program that reads the
//! destination (or writes the source) before that wait has a data race whose outcome the ISA
//! leaves undefined; landing at issue is one of the allowed outcomes and needs no queue of
//! copies per thread. The global read goes through the L1 model as a load of `cp-size` bytes
//! per lane (`.ca`: cached in L1, `.cg`: L2 only) and is counted as LDGSTS; lanes whose
//! `src-size` is 0 (or whose `ignore-src` is true) read nothing and only write zeros. The shared
//! write is counted as LDGSTS's shared wavefronts by the measured rule of
//! [`crate::memory::ldgsts`] (the most lanes on one bank of its global or its shared bytes).
//!
//! `ldmatrix`/`stmatrix` move 8x8 matrices of 16-bit elements; each matrix is 8 rows of 16
//! bytes whose addresses lanes 8i..8i+7 give for matrix i (PTX ISA §9.7.14.5.15). The
//! hardware serves one matrix (8 rows of 16 bytes, 128 bytes: every bank once) per wavefront
//! when its rows fall in distinct banks, as it serves the quarter-warp phase of a 16-byte
//! LDS.128: the shared model's phase rule for 16-byte accesses, with one phase per matrix. Rows
//! that share banks take more wavefronts: the 8-way conflict of an unswizzled 128-byte-strided
//! tile and its XOR-swizzle fix, as CUTLASS's and others' swizzle discussions describe it
//! (e.g. "Tensor cores II: fragments & swizzling", Vizuara Kernel Engineering).

use crate::error::{Error, Result};
use crate::exec::decode::{DInst, Src};
use crate::exec::step::{lanes, Ctx};
use crate::exec::warp::Warp;
use crate::memory::shared::{self, Banks};
use crate::memory::{coalesce, ldgsts};
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::{StateSpace, Type};
use crate::ptx::inst::{CacheOp, CpAsync, MatrixOp, MemOp};
use crate::trace::{Outcome, Served, SharedOp};

impl Ctx<'_> {
    /// The shared banks of the launch.
    fn shared_banks(&self) -> Banks {
        Banks {
            banks: self.pass.cfg.shared.banks,
            width: self.pass.launch.bank_width,
        }
    }

    /// An error of a warp-wide instruction executed by only part of its warp.
    fn partial_warp(&self, pc: u32, exec: u32) -> Error {
        let p = self.pass.launch.program;
        Error::Fault {
            launch: self.pass.launch.label.into(),
            message: format!(
                "a .sync.aligned instruction executed by lanes {exec:#010x} of a warp, not all 32, in block ({},{},{}); PTX line {}: `{}`",
                self.ctaid[0], self.ctaid[1], self.ctaid[2],
                p.lines[pc as usize],
                p.texts[pc as usize]
            ),
        }
    }

    /// Executes `cp.async` for the lanes of `exec`; returns the stream entry's latency field.
    pub(crate) fn cp_async(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        c: CpAsync,
        exec: u32,
    ) -> Result<u32> {
        let bytes = u32::from(c.bytes);
        let dst = self.addresses(w, inst, exec);
        let off = match inst.src[1] {
            Src::Imm(v) => v,
            _ => 0,
        };
        let mut src = [0u64; WARP];
        let mut size = [0u32; WARP];
        let mut reads = 0u32;
        for l in lanes(exec) {
            src[l] = self.read(w, inst.src[0], l).wrapping_add(off);
            let s = self.read(w, inst.src[2], l);
            size[l] = match (c.ignore_src, s) {
                (true, s) => bytes * u32::from(s & 1 == 0),
                (false, s) => u32::try_from(s).unwrap_or(u32::MAX),
            };
            if size[l] > bytes {
                self.note_fault(
                    w,
                    pc,
                    l,
                    "cp.async src-size above cp-size",
                    StateSpace::Global,
                    src[l],
                    size[l],
                );
                return Ok(0);
            }
            if !dst[l].is_multiple_of(u64::from(bytes)) {
                self.note_fault(
                    w,
                    pc,
                    l,
                    "misaligned write",
                    StateSpace::Shared,
                    dst[l],
                    bytes,
                );
                return Ok(0);
            }
            if size[l] > 0 {
                if !src[l].is_multiple_of(u64::from(bytes)) {
                    self.note_fault(
                        w,
                        pc,
                        l,
                        "misaligned read",
                        StateSpace::Global,
                        src[l],
                        bytes,
                    );
                    return Ok(0);
                }
                reads |= 1 << l;
            }
        }
        // The functional copy: `src-size` bytes, then zeros up to `cp-size`.
        for l in lanes(exec) {
            let mut k = 0;
            while k < bytes {
                let n = if bytes - k >= 8 { 8 } else { 4 };
                let mut v = 0u64;
                for b in (0..n).filter(|b| k + b < size[l]) {
                    let a = src[l] + u64::from(k + b);
                    let Some(x) = self.access(w, l, StateSpace::Global, a, 1, None) else {
                        self.note_fault(w, pc, l, "read", StateSpace::Global, a, 1);
                        return Ok(0);
                    };
                    v |= x << (8 * b);
                }
                let a = dst[l] + u64::from(k);
                if self
                    .access(w, l, StateSpace::Shared, a, n as usize, Some(v))
                    .is_none()
                {
                    self.note_fault(w, pc, l, "write", StateSpace::Shared, a, n);
                    return Ok(0);
                }
                k += n;
            }
        }
        if exec == 0 {
            return Ok(0);
        }
        let mut lat = 0;
        if reads != 0 {
            let access = WarpAccess {
                mask: reads,
                addrs: src,
                bytes,
            };
            let shape = coalesce::Shape::of(reads, &access.addrs);
            let m = MemOp {
                space: StateSpace::Global,
                cache: c.cache,
                vec: (bytes / 4) as u8,
                ty: Type::U32,
                volatile: false,
                nc: false,
            };
            self.async_copy = c.cache;
            lat = self.model_global(
                w,
                pc,
                m,
                StateSpace::Global,
                &access,
                shape.run(bytes),
                shape.step,
                false,
            );
            self.async_copy = CacheOp::Default;
        }
        let access = WarpAccess {
            mask: exec,
            addrs: dst,
            bytes,
        };
        let bypass = c.cache == CacheOp::Cg;
        let wf = ldgsts::ldgsts_wavefronts(&access, &src, reads, bypass, self.shared_banks());
        self.record(
            pc,
            Outcome::Shared {
                op: SharedOp::Ldgsts { bypass },
                wavefronts: wf.wavefronts,
                conflicts: wf.conflicts(),
            },
        );
        if reads == 0 {
            lat = Served::Shared {
                wavefronts: wf.wavefronts,
            }
            .lat();
        }
        Ok(lat)
    }

    /// The row addresses of `ldmatrix`/`stmatrix` `m` (lanes 0 to 8·count − 1), checked: in
    /// the block's shared memory and 16-byte aligned. `None` when a lane's is not (the fault is
    /// recorded).
    fn matrix_rows(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MatrixOp,
        exec: u32,
    ) -> Result<Option<[u64; WARP]>> {
        if exec != u32::MAX {
            return Err(self.partial_warp(pc, exec));
        }
        let rows = 8 * usize::from(m.count);
        let addrs = self.addresses(w, inst, exec);
        for (l, &a) in addrs.iter().enumerate().take(rows) {
            let (sp, a) = crate::exec::mem::resolve(StateSpace::Shared, a);
            let what = if !a.is_multiple_of(16) {
                "misaligned matrix row"
            } else if a + 16 > self.shared.len() as u64 {
                "matrix row"
            } else {
                continue;
            };
            self.note_fault(w, pc, l, what, sp, a, 16);
            return Ok(None);
        }
        Ok(Some(addrs))
    }

    /// Counts the shared access of `ldmatrix`/`stmatrix` (`op`) with row addresses `rows`.
    fn model_matrix(&mut self, pc: u32, m: MatrixOp, rows: &[u64; WARP], op: SharedOp) -> u32 {
        let n = 8 * u32::from(m.count);
        let access = WarpAccess {
            mask: if n == 32 { u32::MAX } else { (1 << n) - 1 },
            addrs: *rows,
            bytes: 16,
        };
        let banks = self.shared_banks();
        let wf = shared::wavefronts(&access, banks);
        self.record(
            pc,
            Outcome::Shared {
                op,
                wavefronts: wf.wavefronts,
                conflicts: wf.conflicts(),
            },
        );
        let ps = &mut self.per_pc[pc as usize];
        super::note_worst(&mut ps.worst, &access, 16, banks, wf.wavefronts);
        Served::Shared {
            wavefronts: wf.wavefronts,
        }
        .lat()
    }

    /// Executes `ldmatrix` (the whole warp); returns the stream entry's latency field.
    pub(crate) fn ldmatrix(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MatrixOp,
        exec: u32,
    ) -> Result<u32> {
        let Some(rows) = self.matrix_rows(w, inst, pc, m, exec)? else {
            return Ok(0);
        };
        for i in 0..usize::from(m.count) {
            let mut mat = [[0u16; 8]; 8];
            for (r, row) in mat.iter_mut().enumerate() {
                let a = rows[8 * i + r] as usize;
                for (c, e) in row.iter_mut().enumerate() {
                    *e = u16::from_le_bytes([self.shared[a + 2 * c], self.shared[a + 2 * c + 1]]);
                }
            }
            let d = inst.dst[i];
            for lane in 0..WARP {
                let v = matrix_fragment(&mat, lane, m.trans);
                w.regs[d as usize * 32 + lane] = u64::from(v);
            }
        }
        Ok(self.model_matrix(pc, m, &rows, SharedOp::Ldsm))
    }

    /// Executes `stmatrix` (the whole warp); returns the stream entry's latency field.
    pub(crate) fn stmatrix(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        m: MatrixOp,
        exec: u32,
    ) -> Result<u32> {
        let Some(rows) = self.matrix_rows(w, inst, pc, m, exec)? else {
            return Ok(0);
        };
        for i in 0..usize::from(m.count) {
            let mut mat = [[0u16; 8]; 8];
            for lane in 0..WARP {
                let v = self.read(w, inst.src[i], lane) as u32;
                for (k, (r, c)) in fragment_cells(lane, m.trans).into_iter().enumerate() {
                    mat[r][c] = (v >> (16 * k)) as u16;
                }
            }
            for (r, row) in mat.iter().enumerate() {
                let a = rows[8 * i + r] as usize;
                for (c, e) in row.iter().enumerate() {
                    self.shared[a + 2 * c..a + 2 * c + 2].copy_from_slice(&e.to_le_bytes());
                }
            }
        }
        Ok(self.model_matrix(pc, m, &rows, SharedOp::Stsm))
    }
}

/// The two cells (row, column) of an 8x8 matrix that lane `lane`'s register holds, low half
/// first (PTX ISA §9.7.14.5.15, "ldmatrix fragment"): row `lane / 4`, columns `2 (lane % 4)`
/// and the next; with `.trans` the transposed matrix's, i.e. column `lane / 4` of rows
/// `2 (lane % 4)` and the next.
pub fn fragment_cells(lane: usize, trans: bool) -> [(usize, usize); 2] {
    let (r, c) = (lane / 4, 2 * (lane % 4));
    if trans {
        [(c, r), (c + 1, r)]
    } else {
        [(r, c), (r, c + 1)]
    }
}

/// Lane `lane`'s register of the 8x8 matrix `mat` ([`fragment_cells`]).
pub fn matrix_fragment(mat: &[[u16; 8]; 8], lane: usize, trans: bool) -> u32 {
    let [(r0, c0), (r1, c1)] = fragment_cells(lane, trans);
    u32::from(mat[r0][c0]) | u32::from(mat[r1][c1]) << 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_are_the_isas_layout() {
        // Lane 0 holds row 0, columns 0 and 1; lane 5 row 1, columns 2 and 3; lane 31 row 7,
        // columns 6 and 7 (PTX ISA, "ldmatrix fragment").
        assert_eq!(fragment_cells(0, false), [(0, 0), (0, 1)]);
        assert_eq!(fragment_cells(5, false), [(1, 2), (1, 3)]);
        assert_eq!(fragment_cells(31, false), [(7, 6), (7, 7)]);
        assert_eq!(fragment_cells(5, true), [(2, 1), (3, 1)]);
        let mut mat = [[0u16; 8]; 8];
        for (r, row) in mat.iter_mut().enumerate() {
            for (c, e) in row.iter_mut().enumerate() {
                *e = (r * 8 + c) as u16;
            }
        }
        assert_eq!(matrix_fragment(&mat, 5, false), 10 | 11 << 16);
        assert_eq!(matrix_fragment(&mat, 5, true), 17 | 25 << 16);
    }
}

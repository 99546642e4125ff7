//! `wmma.load` and `wmma.store` (m16n16k16): a warp's fragments from and into a 16 x 16 matrix
//! in global or shared memory, row- or column-major with a stride in elements.
//!
//! The PTX ISA leaves the fragment layout unspecified (§9.7.14.4.1: "the mapping of matrix
//! elements into fragments is unspecified"); a program sees it only through `wmma.mma` and
//! `wmma.store`, which use the same one. The simulator uses the GPU's
//! ([`crate::exec::alu::mma::wmma_cell`]: `mma.m16n8k16`'s fragments), so that its accesses are
//! the ones ptxas emits: an f32 accumulator holds one element a register, an f16 one two; A and
//! B (`.f16x2`, 8 registers) hold theirs in registers 0 to 3, and registers 4 to 7 repeat them.
//!
//! In the memory models each pair of elements (an `.f16x2` register, two f32 registers) is one
//! warp access where the two are adjacent in memory (4 or 8 bytes a lane), else one access an
//! element. On the H200 that is what ptxas 12.9 emits for sm_90 (`LDG.E` per `.f16x2` register,
//! `STG.E.64` per f32 pair of a row-major store, `STG.E` per element of a column-major one), with
//! the requests and sectors Nsight Compute counts (tests/fixtures/tensor, wmma and wmma_col).
//! From shared memory ptxas may use LDSM instead; that is not modelled.

use crate::error::{Error, Result};
use crate::exec::alu::mma::wmma_cell;
use crate::exec::decode::DInst;
use crate::exec::step::{lanes, Ctx};
use crate::exec::warp::Warp;
use crate::memory::coalesce;
use crate::memory::{WarpAccess, WARP};
use crate::ptx::ast::{StateSpace, Type};
use crate::ptx::inst::{CacheOp, MemOp, WmmaFrag, WmmaOp};

use super::resolve;

/// What one `wmma.load`/`wmma.store` moves: its registers, element size and layout.
struct Frag {
    regs: Vec<u16>,
    /// Registers whose elements are in memory (A and B: the first 4 of 8).
    distinct: usize,
    /// Bytes of an element.
    eb: u32,
    /// Which matrix (C for accumulators, loaded or stored).
    matrix: WmmaFrag,
    col: bool,
    space: StateSpace,
}

impl Ctx<'_> {
    fn wmma_frag(&self, inst: &DInst, op: WmmaOp) -> Frag {
        let (n, ..) = op.regs();
        let regs = &self.pass.launch.program.operands[inst.target as usize..][..n];
        let (f32, col, space, matrix) = match op {
            WmmaOp::Load {
                frag,
                col,
                space,
                f32,
            } => (f32, col, space, frag),
            WmmaOp::Store { col, space, f32 } => (f32, col, space, WmmaFrag::C),
            WmmaOp::Mma { .. } => (true, false, StateSpace::Generic, WmmaFrag::C),
        };
        Frag {
            regs: regs.to_vec(),
            distinct: if matrix == WmmaFrag::C { n } else { 4 },
            eb: if f32 { 4 } else { 2 },
            matrix,
            col,
            space,
        }
    }

    fn wmma_partial(&self, pc: u32, exec: u32) -> Error {
        let p = self.pass.launch.program;
        Error::Fault {
            launch: self.pass.launch.label.into(),
            message: format!(
                "wmma executed by lanes {exec:#010x} of a warp, not all 32; PTX line {}: `{}`",
                p.lines[pc as usize], p.texts[pc as usize]
            ),
        }
    }

    /// The addresses of register `r`'s elements (1 or 2) for every lane.
    fn wmma_addrs(&self, w: &Warp, inst: &DInst, f: &Frag, r: usize) -> Vec<[u64; WARP]> {
        let base = self.addresses(w, inst, u32::MAX);
        let per = if f.eb == 4 { 1 } else { 2 };
        (0..per)
            .map(|e| {
                std::array::from_fn(|l| {
                    let (row, col) = wmma_cell(f.matrix, l, per * r + e);
                    let stride = self.read(w, inst.src[0], l);
                    let (major, minor) = if f.col { (col, row) } else { (row, col) };
                    let k = (major as u64)
                        .wrapping_mul(stride)
                        .wrapping_add(minor as u64);
                    base[l].wrapping_add(k.wrapping_mul(u64::from(f.eb)))
                })
            })
            .collect()
    }

    /// The warp accesses of one pair of elements (`elems`: each lane's address of either) in the
    /// models: one of twice the element's bytes where the pair is adjacent in memory, else one an
    /// element. Returns the last one's latency field.
    fn wmma_model(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        f: &Frag,
        elems: &[[u64; WARP]],
        store: bool,
    ) -> u32 {
        let adjacent = elems.len() == 2
            && (0..WARP).all(|l| elems[1][l] == elems[0][l].wrapping_add(u64::from(f.eb)));
        let (list, bytes): (&[[u64; WARP]], u32) = if adjacent {
            (&elems[..1], 2 * f.eb)
        } else {
            (elems, f.eb)
        };
        let mut lat = 0;
        for addrs in list {
            let (space, _) = resolve(f.space, addrs[0]);
            let access = WarpAccess {
                mask: u32::MAX,
                addrs: *addrs,
                bytes,
            };
            let shape = coalesce::Shape::of(u32::MAX, addrs);
            let m = MemOp {
                space: f.space,
                cache: CacheOp::Default,
                vec: 1,
                ty: match bytes {
                    8 => Type::B64,
                    4 => Type::B32,
                    _ => Type::B16,
                },
                volatile: false,
                nc: false,
            };
            lat = self.model(
                w,
                inst,
                pc,
                m,
                space,
                &access,
                shape.run(bytes),
                shape.step,
                store,
            );
        }
        lat
    }

    /// Executes `wmma.load` (the whole warp); returns the stream entry's latency field.
    pub(crate) fn wmma_load(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        op: WmmaOp,
        exec: u32,
    ) -> Result<u32> {
        if exec != u32::MAX {
            return Err(self.wmma_partial(pc, exec));
        }
        let f = self.wmma_frag(inst, op);
        let regs = f.regs.clone();
        let mut lat = 0;
        // Element pairs: an `.f16x2` register, or two f32 registers.
        let pair = if f.eb == 4 { 2 } else { 1 };
        let mut group: Vec<[u64; WARP]> = Vec::with_capacity(2);
        for (r, &reg) in regs.iter().enumerate().take(f.distinct) {
            let elems = self.wmma_addrs(w, inst, &f, r);
            let mut vals = [0u64; WARP];
            for (e, addrs) in elems.iter().enumerate() {
                for l in lanes(exec) {
                    let (sp, a) = resolve(f.space, addrs[l]);
                    let Some(v) = self.access(w, l, sp, a, f.eb as usize, None) else {
                        self.note_fault(w, pc, l, "read", sp, a, f.eb);
                        return Ok(0);
                    };
                    vals[l] |= v << (16 * e);
                }
            }
            for (l, &v) in vals.iter().enumerate() {
                w.regs[reg as usize * 32 + l] = v;
                if f.distinct == 4 {
                    w.regs[regs[r + 4] as usize * 32 + l] = v;
                }
            }
            group.extend_from_slice(&elems);
            if (r + 1) % pair == 0 {
                lat = self.wmma_model(w, inst, pc, &f, &group, false);
                group.clear();
            }
        }
        Ok(lat)
    }

    /// Executes `wmma.store` (the whole warp); returns the stream entry's latency field.
    pub(crate) fn wmma_store(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        op: WmmaOp,
        exec: u32,
    ) -> Result<u32> {
        if exec != u32::MAX {
            return Err(self.wmma_partial(pc, exec));
        }
        let f = self.wmma_frag(inst, op);
        let regs = f.regs.clone();
        let mut lat = 0;
        let pair = if f.eb == 4 { 2 } else { 1 };
        let mut group: Vec<[u64; WARP]> = Vec::with_capacity(2);
        for (r, &reg) in regs.iter().enumerate() {
            let elems = self.wmma_addrs(w, inst, &f, r);
            for (e, addrs) in elems.iter().enumerate() {
                for l in lanes(exec) {
                    let v = w.regs[reg as usize * 32 + l] >> (16 * e);
                    let v = if f.eb == 2 {
                        v & 0xffff
                    } else {
                        v & 0xffff_ffff
                    };
                    let (sp, a) = resolve(f.space, addrs[l]);
                    if self.access(w, l, sp, a, f.eb as usize, Some(v)).is_none() {
                        self.note_fault(w, pc, l, "write", sp, a, f.eb);
                        return Ok(0);
                    }
                }
            }
            group.extend_from_slice(&elems);
            if (r + 1) % pair == 0 {
                lat = self.wmma_model(w, inst, pc, &f, &group, true);
                group.clear();
            }
        }
        Ok(lat)
    }
}

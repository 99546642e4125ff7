//! The memory side of `tex`, `tld4`, `suld.b` and `sust.b`: each lane's object (by the handle
//! in its register), the texels it reads or the element it writes ([`crate::exec::texture`]),
//! and the warp's access through L1TEX's texture pipe: the distinct 32-byte sectors of every
//! texel the active lanes touch (up to four a lane for a bilinear or `tld4` footprint; none for
//! a texel outside the texture, which reads as zero) go through the same L1 and L2 as global
//! loads, cached in L1 whatever the launch's `dlcm`, and are counted under the texture pipe's
//! names ([`Outcome::Texture`]). A surface store writes through L1 as a global store does.
//!
//! Surfaces (PTX ISA §9.7.11.1): x is a byte offset, aligned to the access's size (a misaligned
//! one is a memory error); out of range, `.trap` is a memory error reported like memcheck's,
//! `.clamp` takes the nearest element inside, `.zero` loads zeros and drops stores.

use crate::error::{Error, Result};
use crate::exec::decode::DInst;
use crate::exec::step::{lanes, Ctx};
use crate::exec::texture::{footprint, ObjectKind, TexObject};
use crate::exec::warp::Warp;
use crate::memory::system::LoadPath;
use crate::memory::WARP;
use crate::ptx::ast::{StateSpace, Type};
use crate::ptx::inst::{SurfClamp, SurfOp, TexDim, TexOp};
use crate::trace::TexKind;

impl Ctx<'_> {
    /// A launch error at `pc` saying `what` of its texture or surface operand.
    fn object_error(&self, pc: u32, what: String) -> Error {
        let p = self.pass.launch.program;
        Error::Fault {
            launch: self.pass.launch.label.into(),
            message: format!(
                "{what}; {}: `{}`",
                p.place(pc as usize),
                p.texts[pc as usize]
            ),
        }
    }

    /// The index in the launch's objects of the one lane `l`'s handle names, of the kind the
    /// instruction needs.
    fn object_of(
        &self,
        w: &Warp,
        inst: &DInst,
        pc: u32,
        l: usize,
        surface: bool,
        dim: TexDim,
    ) -> Result<usize> {
        let base = inst
            .addr
            .map(|a| a.base)
            .unwrap_or(crate::exec::Src::Imm(0));
        let h = self.read(w, base, l);
        let objects = self.pass.launch.objects;
        let index = h.checked_sub(1).map_or(usize::MAX, |i| i as usize);
        let Some(o) = objects.get(index) else {
            return Err(self.object_error(
                pc,
                format!(
                    "{h:#x} is not the handle of one of the workload's {} texture and surface objects \
(pass a [[texture]] or [[surface]] by its name)",
                    objects.len()
                ),
            ));
        };
        let want = if surface { "surface" } else { "texture" };
        let is = if o.kind == ObjectKind::Surface {
            "surface"
        } else {
            "texture"
        };
        if want != is {
            return Err(self.object_error(pc, format!("`{}` is a {is}, not a {want}", o.name)));
        }
        if (dim == TexDim::D2) != o.two_d {
            return Err(self.object_error(
                pc,
                format!(
                    "a {}-D access of `{}`, which is {}-D",
                    dim.coords(),
                    o.name,
                    if o.two_d { 2 } else { 1 }
                ),
            ));
        }
        Ok(index)
    }

    /// Reads `n` (up to 16) bytes at global `addr` for lane `l`; `None` (the fault recorded)
    /// outside the buffers.
    fn read_bytes(
        &mut self,
        w: &mut Warp,
        pc: u32,
        l: usize,
        addr: u64,
        n: u64,
    ) -> Option<[u8; 16]> {
        let mut out = [0u8; 16];
        let mut k = 0;
        while k < n {
            let m = (n - k).min(8);
            let Some(v) = self.access(w, l, StateSpace::Global, addr + k, m as usize, None) else {
                self.note_fault(w, pc, l, "texture read", StateSpace::Global, addr, n as u32);
                return None;
            };
            out[k as usize..(k + m) as usize].copy_from_slice(&v.to_le_bytes()[..m as usize]);
            k += m;
        }
        Some(out)
    }

    /// Executes `tex`/`tld4` for the lanes of `exec`; returns the stream entry's latency field.
    pub(crate) fn tex(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        t: TexOp,
        exec: u32,
    ) -> Result<u32> {
        let shift = self.pass.params.l1_shifts().1;
        let objects = self.pass.launch.objects;
        let mut touched: Vec<u64> = Vec::with_capacity(4 * WARP);
        let mut results = [[0u64; 4]; WARP];
        for l in lanes(exec) {
            let o = &objects[self.object_of(w, inst, pc, l, false, t.dim)?];
            if o.kind == ObjectKind::Linear && t.coord == Type::F32 {
                return Err(self.object_error(
                    pc,
                    format!(
                        "float coordinates (tex1D) on `{}`, a texture over linear memory, which \
tex1Dfetch reads by integer index (tex1D needs a CUDA array, not supported)",
                        o.name
                    ),
                ));
            }
            let xy = [
                self.read(w, inst.src[0], l),
                if o.two_d {
                    self.read(w, inst.src[1], l)
                } else {
                    0
                },
            ];
            let fp = footprint(o, xy, t.coord == Type::S32, t.gather.is_some());
            let mut acc = [0f64; 4];
            let mut gathered = [0f64; 4];
            for (k, tap) in fp.taps[..fp.n].iter().enumerate() {
                let Some(texel) = tap.texel else { continue };
                let a = o.texel_address(texel);
                touched.push(a >> shift << shift);
                let Some(raw) = self.read_bytes(w, pc, l, a, o.texel_bytes()) else {
                    return Ok(0);
                };
                match t.gather {
                    Some(c) => gathered[k] = o.channel(&raw, usize::from(c)),
                    None => {
                        for (c, v) in acc.iter_mut().enumerate() {
                            *v += tap.weight * o.channel(&raw, c);
                        }
                    }
                }
            }
            results[l] = match t.gather {
                // A channel the format lacks gathers as the missing channel's value.
                Some(c) if usize::from(c) >= usize::from(o.channels) => {
                    [o.result_bits(&[0.0; 4], usize::from(c)); 4]
                }
                Some(_) => std::array::from_fn(|k| o.result_bits(&[gathered[k]; 4], 0)),
                None => std::array::from_fn(|c| o.result_bits(&acc, c)),
            };
        }
        for l in lanes(exec) {
            for (k, &d) in inst.dst.iter().enumerate() {
                if d != crate::exec::NO_REG {
                    w.regs[d as usize * 32 + l] = results[l][k];
                }
            }
        }
        Ok(self.model_texture(pc, exec, &mut touched, TexKind::Fetch))
    }

    /// The byte address of lane `l`'s surface element, after the out-of-range mode: `None`
    /// when the access is dropped (`.zero`) or faulted (recorded).
    #[allow(clippy::too_many_arguments)]
    fn surface_address(
        &mut self,
        w: &Warp,
        inst: &DInst,
        pc: u32,
        l: usize,
        s: SurfOp,
        o: &TexObject,
        store: bool,
    ) -> Option<u64> {
        let bytes = i64::from(s.bytes());
        let mut x = self.read(w, inst.src[0], l) as u32 as i32 as i64;
        let mut y = if o.two_d {
            self.read(w, inst.src[1], l) as u32 as i32 as i64
        } else {
            0
        };
        let row = (o.width * o.texel_bytes()) as i64;
        let at = |x: i64, y: i64| {
            o.base
                .wrapping_add((y as u64).wrapping_mul(o.pitch))
                .wrapping_add(x as u64)
        };
        if x.rem_euclid(bytes) != 0 {
            let what = if store {
                "misaligned surface write"
            } else {
                "misaligned surface read"
            };
            self.note_fault(w, pc, l, what, StateSpace::Global, at(x, y), s.bytes());
            return None;
        }
        let inside = x >= 0 && x + bytes <= row && y >= 0 && y < o.height as i64;
        if !inside {
            match s.clamp {
                SurfClamp::Zero => return None,
                SurfClamp::Clamp if row >= bytes => {
                    x = x.clamp(0, (row - bytes) / bytes * bytes);
                    y = y.clamp(0, o.height as i64 - 1);
                }
                _ => {
                    let what = if store {
                        "surface write out of range"
                    } else {
                        "surface read out of range"
                    };
                    self.note_fault(w, pc, l, what, StateSpace::Global, at(x, y), s.bytes());
                    return None;
                }
            }
        }
        Some(at(x, y))
    }

    /// Executes `suld.b` for the lanes of `exec`; returns the stream entry's latency field.
    pub(crate) fn suld(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        s: SurfOp,
        exec: u32,
    ) -> Result<u32> {
        let shift = self.pass.params.l1_shifts().1;
        let objects = self.pass.launch.objects;
        let mut touched: Vec<u64> = Vec::with_capacity(WARP);
        let eb = u64::from(s.bits) / 8;
        for l in lanes(exec) {
            let o = &objects[self.object_of(w, inst, pc, l, true, s.dim)?];
            let raw = match self.surface_address(w, inst, pc, l, s, o, false) {
                Some(a) => {
                    touched.push(a >> shift << shift);
                    match self.read_bytes(w, pc, l, a, u64::from(s.bytes())) {
                        Some(r) => r,
                        None => return Ok(0),
                    }
                }
                None if s.clamp == SurfClamp::Zero => [0u8; 16],
                None => return Ok(0),
            };
            for k in 0..usize::from(s.vec) {
                let d = inst.dst[k];
                if d == crate::exec::NO_REG {
                    continue;
                }
                let mut b = [0u8; 8];
                let at = k * eb as usize;
                b[..eb as usize].copy_from_slice(&raw[at..at + eb as usize]);
                w.regs[d as usize * 32 + l] = u64::from_le_bytes(b);
            }
        }
        Ok(self.model_texture(pc, exec, &mut touched, TexKind::SurfaceLoad))
    }

    /// Executes `sust.b` for the lanes of `exec`; returns the stream entry's latency field.
    pub(crate) fn sust(
        &mut self,
        w: &mut Warp,
        inst: &DInst,
        pc: u32,
        s: SurfOp,
        exec: u32,
    ) -> Result<u32> {
        let shift = self.pass.params.l1_shifts().1;
        let objects = self.pass.launch.objects;
        let mut touched: Vec<u64> = Vec::with_capacity(WARP);
        let eb = u64::from(s.bits) / 8;
        let values = &self.pass.launch.program.operands;
        let regs: Vec<u16> = values
            .get(inst.target as usize..inst.target as usize + usize::from(s.vec))
            .unwrap_or(&[])
            .to_vec();
        for l in lanes(exec) {
            let o = &objects[self.object_of(w, inst, pc, l, true, s.dim)?];
            let Some(a) = self.surface_address(w, inst, pc, l, s, o, true) else {
                if s.clamp == SurfClamp::Zero {
                    continue;
                }
                return Ok(0);
            };
            touched.push(a >> shift << shift);
            for (k, &r) in regs.iter().enumerate() {
                let v = w.regs[r as usize * 32 + l];
                let at = a + k as u64 * eb;
                if self
                    .access(w, l, StateSpace::Global, at, eb as usize, Some(v))
                    .is_none()
                {
                    self.note_fault(w, pc, l, "surface write", StateSpace::Global, at, eb as u32);
                    return Ok(0);
                }
            }
        }
        Ok(self.model_texture(pc, exec, &mut touched, TexKind::SurfaceStore))
    }

    /// The warp's texture-pipe access of the sectors `touched` (byte addresses, repeats
    /// allowed) in the memory models, counted as `kind`; returns the latency field.
    fn model_texture(&mut self, pc: u32, exec: u32, touched: &mut Vec<u64>, kind: TexKind) -> u32 {
        if exec == 0 {
            return 0;
        }
        touched.sort_unstable();
        touched.dedup();
        let shift = self.pass.params.l1_shifts().1;
        let store = kind == TexKind::SurfaceStore;
        let start = self.log.sectors.len() as u32;
        let req = self.log.addrs.len();
        // The texture path caches in L1 whatever the launch's dlcm (as `ld.global.nc` does).
        let path = LoadPath::L1 { evict_first: false };
        let (sectors, lines, hits) = self.l1_sectors(touched, shift, path, store);
        self.texture = Some(kind);
        let counts = super::global::L1Counts {
            sectors,
            lines,
            hits,
        };
        // The data pipe: one wavefront per L1 line, as a coalesced load's.
        let lat = self.finish_global(pc, false, store, (exec, 0), counts, start, req, lines);
        self.texture = None;
        lat
    }
}

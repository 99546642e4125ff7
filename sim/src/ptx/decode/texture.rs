//! Decoding the operands of the texture and surface instructions ([`Op::Tex`], [`Op::Suld`],
//! [`Op::Sust`]): the object's handle becomes the address's base (offset 0), the coordinates
//! `src[0..dims]`; `tex`/`tld4`/`suld` write `dst`, and `sust`'s values, which with two
//! coordinates are more sources than a [`DInst`] holds, go to the program's operand table
//! ([`super::Program::operands`]) from `target` on.

use super::{Addr, Ctx, DInst, Src};
use crate::error::Error;
use crate::ptx::ast::{Operand, Type};
use crate::ptx::inst::{Op, TexDim};

impl Ctx<'_> {
    /// The operands of a texture or surface instruction.
    pub(super) fn decode_texture(&self, d: &mut DInst) -> Result<(), Error> {
        let a = &self.inst.args;
        self.arity(2..=2)?;
        let (dim, coord_ty) = match self.inst.op {
            Op::Tex(t) => (t.dim, t.coord),
            Op::Suld(s) | Op::Sust(s) => (s.dim, Type::S32),
            _ => return Ok(()),
        };
        let store = matches!(self.inst.op, Op::Sust(_));
        let (object, data) = if store {
            (&a[0], &a[1])
        } else {
            (&a[1], &a[0])
        };
        let Operand::Texture { handle, coords } = object else {
            return Err(
                self.err("expected a texture or surface operand `[handle, {coordinates}]`".into())
            );
        };
        let base = match handle.as_ref() {
            Operand::Reg(r) => Src::Reg(self.reg(r)?),
            Operand::Symbol(s) if self.regs.contains_key(s) => Src::Reg(self.reg(s)?),
            _ => {
                return Err(self.err(
                    "the handle must be a register holding a texture or surface object \
(texture references, `.texref` variables, are not supported)"
                        .into(),
                ))
            }
        };
        d.addr = Some(Addr { base, offset: 0 });
        // `tex.1d` may give its one coordinate as a vector of one; a 2-D access needs both.
        let want = dim.coords();
        if coords.len() != want {
            return Err(self.err(format!(
                "expected {want} coordinate{} for a .{} access, found {}",
                if want == 1 { "" } else { "s" },
                if dim == TexDim::D1 { "1d" } else { "2d" },
                coords.len()
            )));
        }
        for (k, c) in coords.iter().enumerate() {
            d.src[k] = self.src(c, coord_ty)?;
        }
        d.nsrc = want as u8;
        match self.inst.op {
            Op::Tex(_) => {
                d.dst = self.dst(data)?;
                if !matches!(data, Operand::Vector(v) if v.len() == 4) {
                    return Err(self.err("`tex` and `tld4` write a vector of 4 registers".into()));
                }
            }
            Op::Suld(s) => {
                if !matches!(data, Operand::Vector(v) if v.len() == usize::from(s.vec)) {
                    return Err(self.err(format!(
                        "`suld` with {} element{} writes a vector of as many registers",
                        s.vec,
                        if s.vec == 1 { "" } else { "s" }
                    )));
                }
                d.dst = self.dst(data)?;
            }
            Op::Sust(s) => {
                let regs = self.regs_of(data, usize::from(s.vec), s.reg_type())?;
                let mut table = self.operands.borrow_mut();
                d.target = table.len() as u32;
                table.extend(regs);
            }
            _ => {}
        }
        Ok(())
    }
}

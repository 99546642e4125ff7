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

#[cfg(test)]
mod tests {
    use crate::ptx::decode::{decode, Src, NO_REG};
    use crate::ptx::inst::{Op, SurfClamp, SurfOp, TexDim};

    /// The decoding error (or `Ok`'s program) of a kernel whose body is `line`.
    fn kernel(line: &str) -> Result<crate::ptx::decode::Program, String> {
        let src = format!(
            ".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
    .reg .b16 %rs<9>;\n    .reg .b32 %r<9>;\n    .reg .f32 %f<9>;\n    .reg .b64 %rd<9>;\n    {line}\n    ret;\n}}\n"
        );
        let m = crate::ptx::parse(&src, "t.ptx").map_err(|e| e.to_string())?;
        decode(m.entry("k").unwrap(), &Default::default(), &src, "t.ptx").map_err(|e| e.to_string())
    }

    #[test]
    fn handle_coordinates_and_results_decode_into_their_places() {
        let p = kernel("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f5, %f6}];").unwrap();
        let i = &p.insts[0];
        assert!(matches!(i.op, Op::Tex(_)));
        assert!(matches!(i.addr.unwrap().base, Src::Reg(_)));
        assert!(matches!(i.src[0], Src::Reg(_)) && matches!(i.src[1], Src::Reg(_)));
        assert_eq!(i.nsrc, 2);
        assert!(i.dst.iter().all(|&d| d != NO_REG));
        let p =
            kernel("sust.b.2d.v4.b8.zero [%rd1, {%r1, %r2}], {%rs1, %rs2, %rs3, %rs4};").unwrap();
        let i = &p.insts[0];
        assert_eq!(
            i.op,
            Op::Sust(SurfOp {
                dim: TexDim::D2,
                vec: 4,
                bits: 8,
                clamp: SurfClamp::Zero
            })
        );
        assert_eq!(p.operands.len(), 4);
        assert_eq!(i.target, 0);
    }

    #[test]
    fn malformed_operands_are_errors_naming_the_line() {
        for (line, want) in [
            (
                "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f5}];",
                "expected 2 coordinates for a .2d access, found 1",
            ),
            (
                "tex.1d.v4.f32.s32 {%f1, %f2}, [%rd2, {%r1}];",
                "write a vector of 4 registers",
            ),
            (
                "suld.b.2d.v2.b32.trap {%r1}, [%rd1, {%r2, %r3}];",
                "writes a vector of as many registers",
            ),
            (
                "sust.b.1d.v2.b16.trap [%rd1, {%r2}], {%rs1};",
                "expected a vector of 2 registers",
            ),
            (
                "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [7, {%r1}];",
                "expected `]`",
            ),
            (
                "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd2];",
                "expected a texture or surface operand",
            ),
        ] {
            let e = kernel(line).err().unwrap_or_default();
            assert!(
                e.starts_with("t.ptx:10:") && e.contains(want),
                "{line}: {e}"
            );
        }
    }
}

//! The texture and surface instructions' modifiers: `tex`, `tld4` (PTX ISA §9.7.10 "Texture
//! Instructions") and `suld.b`, `sust.b` (§9.7.11 "Surface Instructions"), in the unified
//! texture mode with texture and surface objects (`cudaTextureObject_t`, a `.u64` handle in a
//! register), the forms nvcc and NVRTC emit for `tex1Dfetch`, `tex2D`, `tex2Dgather`,
//! `surf1Dread/write` and `surf2Dread/write`. What they do is `exec::mem::texture`'s.

use super::decode::Mods;
use super::Op;
use crate::ptx::ast::Type;

/// Dimensionality of a texture or surface access (`.1d`, `.2d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TexDim {
    /// `.1d`: one coordinate.
    D1,
    /// `.2d`: two coordinates (x, y).
    D2,
}

impl TexDim {
    /// Coordinates the instruction takes.
    pub fn coords(self) -> usize {
        match self {
            TexDim::D1 => 1,
            TexDim::D2 => 2,
        }
    }
}

/// `tex.geom.v4.dtype.ctype d, [a, c]` and `tld4.comp.2d.v4.dtype.f32 d, [a, c]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexOp {
    /// `.1d` or `.2d`.
    pub dim: TexDim,
    /// Result type: `.f32`, `.s32` or `.u32` (four of it).
    pub dst: Type,
    /// Coordinate type: `.s32` (texel indices, `tex1Dfetch`) or `.f32`.
    pub coord: Type,
    /// `tld4`'s component (`.r .g .b .a`: 0 to 3), `None` for `tex`.
    pub gather: Option<u8>,
}

/// What `suld`/`sust` do with a coordinate outside the surface (PTX ISA §9.7.11.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfClamp {
    /// `.trap`: an error (the launch's memory error, as memcheck reports it).
    Trap,
    /// `.clamp`: the nearest element inside the surface.
    Clamp,
    /// `.zero`: a load returns zeros, a store is dropped.
    Zero,
}

/// `suld.b.geom{.vec}.btype.clamp d, [a, c]` and `sust.b.geom{.vec}.btype.clamp [a, c], b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfOp {
    /// `.1d` or `.2d`.
    pub dim: TexDim,
    /// Elements per access: 1, 2 or 4 (`.v2`, `.v4`).
    pub vec: u8,
    /// Element bits: 8, 16, 32 or 64 (`.b8` to `.b64`).
    pub bits: u8,
    /// Out-of-range mode.
    pub clamp: SurfClamp,
}

impl SurfOp {
    /// Bytes one lane moves (the x coordinate is a byte offset aligned to it).
    pub fn bytes(&self) -> u32 {
        u32::from(self.vec) * u32::from(self.bits) / 8
    }

    /// The register type of its elements.
    pub fn reg_type(&self) -> Type {
        match self.bits {
            8 => Type::B8,
            16 => Type::B16,
            32 => Type::B32,
            _ => Type::B64,
        }
    }
}

/// The texture or surface form of `opcode`, or `None` when it is not one.
pub(super) fn decode_texture(opcode: &str, m: &mut Mods) -> Option<Result<Op, String>> {
    Some(match opcode {
        "tex" => tex(m, None),
        "tld4" => {
            let comp = m.take_map(|w| match w {
                "r" => Some(0),
                "g" => Some(1),
                "b" => Some(2),
                "a" => Some(3),
                _ => None,
            });
            match comp {
                Some(c) => tex(m, Some(c)),
                None => Err("`tld4` needs a component (.r .g .b .a)".into()),
            }
        }
        "suld" | "sust" => surface(opcode, m),
        _ => return None,
    })
}

fn dim(m: &mut Mods, opcode: &str) -> Result<TexDim, String> {
    if m.take("1d") {
        Ok(TexDim::D1)
    } else if m.take("2d") {
        Ok(TexDim::D2)
    } else {
        Err(format!(
            "`{opcode}` needs .1d or .2d (3-D, cube, array and multisample textures and \
surfaces, which need CUDA arrays, are not supported)"
        ))
    }
}

fn tex(m: &mut Mods, gather: Option<u8>) -> Result<Op, String> {
    let opcode = if gather.is_some() { "tld4" } else { "tex" };
    // `.base` is the default level of detail; `.level` and `.grad` need mipmapped CUDA arrays.
    m.take("base");
    let dim = dim(m, opcode)?;
    if gather.is_some() && dim != TexDim::D2 {
        return Err("`tld4` takes .2d textures".into());
    }
    if !m.take("v4") {
        return Err(format!("`{opcode}` needs .v4"));
    }
    let dst = m
        .ty()
        .filter(|t| matches!(t, Type::F32 | Type::S32 | Type::U32))
        .ok_or(format!("`{opcode}` needs a result type of .f32 .s32 .u32"))?;
    let coord = m
        .ty()
        .filter(|t| matches!(t, Type::F32 | Type::S32))
        .ok_or(format!(
            "`{opcode}` needs a coordinate type of .s32 or .f32"
        ))?;
    if gather.is_some() && coord != Type::F32 {
        return Err("`tld4` takes .f32 coordinates".into());
    }
    Ok(Op::Tex(TexOp {
        dim,
        dst,
        coord,
        gather,
    }))
}

fn surface(opcode: &str, m: &mut Mods) -> Result<Op, String> {
    if !m.take("b") {
        return Err(format!(
            "`{opcode}` is supported in its .b form (raw bits; `.p`, formatted, needs a CUDA array's format)"
        ));
    }
    let dim = dim(m, opcode)?;
    let vec = if m.take("v2") {
        2
    } else if m.take("v4") {
        4
    } else {
        1
    };
    let bits = match m.ty() {
        Some(Type::B8) => 8,
        Some(Type::B16) => 16,
        Some(Type::B32) => 32,
        Some(Type::B64) if vec < 4 => 64,
        _ => {
            return Err(format!(
                "`{opcode}` needs .b8 .b16 .b32 or .b64 (not .v4.b64)"
            ))
        }
    };
    let clamp = m
        .take_map(|w| match w {
            "trap" => Some(SurfClamp::Trap),
            "clamp" => Some(SurfClamp::Clamp),
            "zero" => Some(SurfClamp::Zero),
            _ => None,
        })
        .unwrap_or(SurfClamp::Trap);
    // Cache operators (`.ca .cg .cs .cv`, `.wb .cg .cs .wt`) are hints the surface path takes
    // as it takes `ld`'s default.
    for c in ["ca", "cg", "cs", "cv", "wb", "wt"] {
        m.take(c);
    }
    let s = SurfOp {
        dim,
        vec,
        bits,
        clamp,
    };
    Ok(if opcode == "suld" {
        Op::Suld(s)
    } else {
        Op::Sust(s)
    })
}

#[cfg(test)]
mod tests {
    use super::super::decode;
    use super::*;

    #[test]
    fn the_forms_nvrtc_emits_decode() {
        // tex1Dfetch<float>, tex2D<float4>, tex2Dgather(.., 1), surf2Dwrite<uchar4>(.., Zero).
        assert_eq!(
            decode("tex", &["1d", "v4", "f32", "s32"]),
            Ok(Op::Tex(TexOp {
                dim: TexDim::D1,
                dst: Type::F32,
                coord: Type::S32,
                gather: None
            }))
        );
        assert_eq!(
            decode("tex", &["2d", "v4", "u32", "f32"]),
            Ok(Op::Tex(TexOp {
                dim: TexDim::D2,
                dst: Type::U32,
                coord: Type::F32,
                gather: None
            }))
        );
        assert_eq!(
            decode("tld4", &["g", "2d", "v4", "f32", "f32"]),
            Ok(Op::Tex(TexOp {
                dim: TexDim::D2,
                dst: Type::F32,
                coord: Type::F32,
                gather: Some(1)
            }))
        );
        let s = decode("sust", &["b", "2d", "v4", "b8", "zero"]).unwrap();
        assert_eq!(
            s,
            Op::Sust(SurfOp {
                dim: TexDim::D2,
                vec: 4,
                bits: 8,
                clamp: SurfClamp::Zero
            })
        );
        assert_eq!(
            decode("suld", &["b", "1d", "b32", "trap"]),
            Ok(Op::Suld(SurfOp {
                dim: TexDim::D1,
                vec: 1,
                bits: 32,
                clamp: SurfClamp::Trap
            }))
        );
    }

    #[test]
    fn unsupported_forms_say_why() {
        let e = decode("tex", &["3d", "v4", "f32", "f32"]).unwrap_err();
        assert!(e.contains("needs .1d or .2d"), "{e}");
        let e = decode("suld", &["p", "2d", "v4", "b32", "trap"]).unwrap_err();
        assert!(e.contains(".b form"), "{e}");
        let e = decode("tld4", &["2d", "v4", "f32", "f32"]).unwrap_err();
        assert!(e.contains("component"), "{e}");
        let e = decode("tex", &["level", "2d", "v4", "f32", "f32"]).unwrap_err();
        assert!(e.contains(".level"), "{e}");
    }
}

//! `[[texture]]` and `[[surface]]`: texture and surface objects over a workload's buffers
//! (docs/workload-format.md, "Textures and surfaces"). A kernel argument that names one passes
//! its handle to the kernel's `.u64` parameter (`cudaTextureObject_t`, `cudaSurfaceObject_t`).
//! What the keys mean is `exec::texture`'s; `run::texture` checks them against the buffers.

use super::Expr;
use serde::Deserialize;

/// `[[texture]]`: a texture object over a buffer: linear memory (`dims = "1d"`,
/// `cudaResourceTypeLinear`, read by `tex1Dfetch`) or pitched 2-D memory (`dims = "2d"`,
/// `cudaResourceTypePitch2D`, read by `tex2D` and `tex2Dgather`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextureSpec {
    /// Name, used in `args`.
    pub name: String,
    /// The `[[buffer]]` whose memory it reads.
    pub buffer: String,
    /// `"1d"` or `"2d"`.
    pub dims: String,
    /// Channel format: `u8 s8 u16 s16 u32 s32 f16 f32`.
    pub format: String,
    /// Channels per texel: 1, 2 or 4 (default 1).
    #[serde(default)]
    pub channels: Option<Expr>,
    /// Width in texels (1-D default: as many as the buffer holds).
    #[serde(default)]
    pub width: Option<Expr>,
    /// Height in texels (2-D only).
    #[serde(default)]
    pub height: Option<Expr>,
    /// Bytes from one row to the next (2-D only; default: width times the texel's bytes).
    #[serde(default)]
    pub pitch_bytes: Option<Expr>,
    /// `clamp` (2-D default), `border` (1-D: the only one), `wrap`, `mirror` (with
    /// normalized coordinates).
    #[serde(default)]
    pub address_mode: Option<String>,
    /// `point` (default) or `linear` (2-D, float results).
    #[serde(default)]
    pub filter_mode: Option<String>,
    /// `element` (default) or `normalized_float` (8- and 16-bit integer formats).
    #[serde(default)]
    pub read_mode: Option<String>,
    /// Coordinates in `[0, 1)` instead of texels (2-D; default false).
    #[serde(default)]
    pub normalized_coords: bool,
}

/// `[[surface]]`: a surface object over a buffer, 1-D or 2-D, read and written by
/// `surf1Dread/write` and `surf2Dread/write` (x in bytes).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurfaceSpec {
    /// Name, used in `args`.
    pub name: String,
    /// The `[[buffer]]` that holds its elements, row after row.
    pub buffer: String,
    /// `"1d"` or `"2d"`.
    pub dims: String,
    /// Channel format, as for textures.
    pub format: String,
    /// Channels per element: 1, 2 or 4 (default 1).
    #[serde(default)]
    pub channels: Option<Expr>,
    /// Width in elements (1-D default: as many as the buffer holds).
    #[serde(default)]
    pub width: Option<Expr>,
    /// Height in elements (2-D only).
    #[serde(default)]
    pub height: Option<Expr>,
}

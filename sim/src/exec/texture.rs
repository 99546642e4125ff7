//! Texture and surface objects and what a fetch reads: the pure part of `tex`, `tld4`, `suld`
//! and `sust` (the memory side is `exec::mem::texture`'s).
//!
//! A launch holds the workload's objects ([`TexObject`]); a kernel's `.u64` parameter holds one
//! as its handle ([`TexObject::handle`]). Texels are laid out row by row, `pitch` bytes apart, from
//! the buffer's address: a texture over linear memory (`cudaResourceTypeLinear`, 1-D) or over
//! pitched 2-D memory (`cudaResourceTypePitch2D`), and a surface with the layout of a pitched 2-D
//! array (the layout of the CUDA array behind a real surface is the driver's and undocumented).
//!
//! The rules are the CUDA C++ Programming Guide's, appendix "Texture Fetching" (nearest-point
//! sampling, linear filtering, the address modes; [`footprint`]) and section "Texture Memory"
//! (read modes: an 8- or 16-bit integer element read as a normalized float maps `[0, max]` to
//! `[0.0, 1.0]` and `[min, max]` to `[-1.0, 1.0]`; [`TexObject::channel`]):
//!
//! - point: `tex(x) = T[i]`, `i = floor(x)`;
//! - linear: `tex(x) = (1 - α) T[i] + α T[i + 1]`, `i = floor(xB)`, `α = frac(xB)`,
//!   `xB = x - 0.5`, and in 2-D `(1-α)(1-β) T[i,j] + α(1-β) T[i+1,j] + (1-α)β T[i,j+1] +
//!   αβ T[i+1,j+1]`; "α is stored in 9-bit fixed point format with 8 bits of fractional value"
//!   (rounded to the nearest 1/256 here, an assumption: the guide does not say how);
//! - normalized coordinates are multiplied by the width (height) first; wrap replaces `x` by
//!   `frac(x)`, mirror by `frac(x)` or `1 - frac(x)` as `floor(x)` is even or odd; texel indices
//!   outside the texture are then clamped (clamp, and the other side of wrap and mirror: modulo,
//!   reflected) or read as zero (border);
//! - a linear texture (1-D, `tex1Dfetch`) is addressed by integer texel indices, unfiltered; one
//!   outside it reads as zero (the address mode has no effect on linear memory: CUDA Driver API,
//!   `cuTexRefSetAddressMode`).
//!
//! The filtered value is the formula's exact value with those weights, rounded once to f32.
//! Channels a format lacks read as 0, and the fourth as 1 (1.0 for float results): Direct3D's
//! convention, assumed, not checked on a GPU. `tld4` returns one channel of the four texels of
//! linear filtering's footprint "in counter-clockwise order starting at lower left" (PTX ISA
//! §9.7.10.4): `(i, j+1)`, `(i+1, j+1)`, `(i+1, j)`, `(i, j)`.

/// The element type of a texel's channels (`cudaChannelFormatDesc`: kind and bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Format {
    U8,
    S8,
    U16,
    S16,
    U32,
    S32,
    F16,
    F32,
}

impl Format {
    /// The format named `s` (`u8 s8 u16 s16 u32 s32 f16 f32`).
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "u8" => Format::U8,
            "s8" | "i8" => Format::S8,
            "u16" => Format::U16,
            "s16" | "i16" => Format::S16,
            "u32" => Format::U32,
            "s32" | "i32" => Format::S32,
            "f16" => Format::F16,
            "f32" => Format::F32,
            _ => return None,
        })
    }

    /// Bytes of one channel.
    pub fn bytes(self) -> u64 {
        match self {
            Format::U8 | Format::S8 => 1,
            Format::U16 | Format::S16 | Format::F16 => 2,
            _ => 4,
        }
    }

    /// A float format (f16, f32): fetches return floats and may be filtered.
    pub fn is_float(self) -> bool {
        matches!(self, Format::F16 | Format::F32)
    }

    /// An 8- or 16-bit integer format, which may be read as normalized floats.
    pub fn is_small_int(self) -> bool {
        matches!(self, Format::U8 | Format::S8 | Format::U16 | Format::S16)
    }
}

/// What happens to a texel index outside the texture (`cudaTextureAddressMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    /// `cudaAddressModeClamp`: the nearest texel inside.
    Clamp,
    /// `cudaAddressModeBorder`: zero (the border color's default).
    Border,
    /// `cudaAddressModeWrap` (normalized coordinates only): the texture repeats.
    Wrap,
    /// `cudaAddressModeMirror` (normalized coordinates only): it repeats mirrored.
    Mirror,
}

/// The kind of object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// A texture over linear memory (`cudaResourceTypeLinear`): 1-D, integer coordinates.
    Linear,
    /// A texture over pitched 2-D memory (`cudaResourceTypePitch2D`).
    Pitch2D,
    /// A surface (`suld`/`sust`), 1-D or 2-D.
    Surface,
}

/// A texture or surface object of a launch.
#[derive(Debug, Clone, PartialEq)]
pub struct TexObject {
    /// Its name in the workload (`[[texture]]`/`[[surface]]` `name`).
    pub name: String,
    /// Its handle, the value its `.u64` kernel parameter holds (1, 2, ...: the order of the
    /// workload's objects, textures first).
    pub handle: u64,
    /// What it is.
    pub kind: ObjectKind,
    /// The workload buffer it reads (texel (0, 0) at its start).
    pub buffer: String,
    /// Device address of texel (0, 0).
    pub base: u64,
    /// Channel format.
    pub format: Format,
    /// Channels per texel: 1, 2 or 4.
    pub channels: u8,
    /// Width in texels.
    pub width: u64,
    /// Height in texels (1 for a 1-D object).
    pub height: u64,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// Two-dimensional (a 2-D surface, or a pitched texture).
    pub two_d: bool,
    /// Address mode (both dimensions).
    pub address: AddressMode,
    /// Linear filtering (`cudaFilterModeLinear`), else nearest point.
    pub linear_filter: bool,
    /// `cudaReadModeNormalizedFloat` (8- and 16-bit integer formats).
    pub normalized_float: bool,
    /// Normalized coordinates (`[0, 1)` spans the texture).
    pub normalized_coords: bool,
}

/// One texel of a fetch's footprint and its weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tap {
    /// Texel (column, row) inside the texture; `None`: outside, reads as zero (border).
    pub texel: Option<(u64, u64)>,
    /// Its weight in the filtered value (1 for point sampling; `tld4`'s are 1 each).
    pub weight: f64,
}

/// The texels a fetch reads (up to four).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// The taps, `n` of them in use.
    pub taps: [Tap; 4],
    /// Taps in use.
    pub n: usize,
}

impl TexObject {
    /// Bytes of one texel.
    pub fn texel_bytes(&self) -> u64 {
        self.format.bytes() * u64::from(self.channels)
    }

    /// The device address of texel (`i`, `j`).
    pub fn texel_address(&self, (i, j): (u64, u64)) -> u64 {
        self.base + j * self.pitch + i * self.texel_bytes()
    }

    /// Fetches return floats (a float format, or a normalized read).
    pub fn float_results(&self) -> bool {
        self.format.is_float() || self.normalized_float
    }

    /// Channel `c` of the texel whose bytes are `raw`, as the fetch returns it: a float's
    /// value, or an integer's 32 bits (sign-extended) as an f64 holding them exactly.
    pub fn channel(&self, raw: &[u8], c: usize) -> f64 {
        let b = self.format.bytes() as usize;
        let Some(v) = raw.get(c * b..c * b + b) else {
            return 0.0;
        };
        let n = self.normalized_float;
        match self.format {
            Format::U8 if n => f64::from(v[0]) / 255.0,
            Format::S8 if n => (f64::from(v[0] as i8) / 127.0).max(-1.0),
            Format::U16 | Format::S16 | Format::F16 => {
                let h = u16::from_le_bytes([v[0], v[1]]);
                match self.format {
                    Format::F16 => crate::ptx::float16::F16.to_f64(h),
                    Format::U16 if n => f64::from(h) / 65535.0,
                    Format::S16 if n => (f64::from(h as i16) / 32767.0).max(-1.0),
                    Format::U16 => f64::from(h),
                    _ => f64::from(h as i16),
                }
            }
            Format::U8 => f64::from(v[0]),
            Format::S8 => f64::from(v[0] as i8),
            Format::U32 => f64::from(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            Format::S32 => f64::from(i32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            Format::F32 => f64::from(f32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        }
    }

    /// The register bits of result channel `c` from channel values `v` (`v[c]` for the
    /// channels the format has): an f32, or the integer's 32 bits; a missing channel is 0, the
    /// fourth 1.
    pub fn result_bits(&self, v: &[f64; 4], c: usize) -> u64 {
        let missing = c >= usize::from(self.channels);
        let x = if missing {
            if c == 3 {
                1.0
            } else {
                0.0
            }
        } else {
            v[c]
        };
        if self.float_results() {
            u64::from((x as f32).to_bits())
        } else {
            u64::from(x as i64 as u32)
        }
    }
}

/// The texel index `i` of a texture `n` texels wide under `mode`: `None` outside it in border
/// mode (and for a linear texture, whose mode is border).
pub fn resolve(i: i64, n: u64, mode: AddressMode) -> Option<u64> {
    let n = n as i64;
    if (0..n).contains(&i) {
        return Some(i as u64);
    }
    match mode {
        AddressMode::Border => None,
        AddressMode::Clamp => Some(i.clamp(0, n - 1) as u64),
        AddressMode::Wrap => Some(i.rem_euclid(n) as u64),
        AddressMode::Mirror => {
            let k = i.rem_euclid(2 * n);
            Some(if k < n { k } else { 2 * n - 1 - k } as u64)
        }
    }
}

/// A float coordinate in texels: normalized ones wrapped or mirrored as the mode says, then
/// scaled by `n`.
fn texel_coord(x: f32, n: u64, o: &TexObject) -> f64 {
    let mut x = f64::from(x);
    if !o.normalized_coords {
        return x;
    }
    match o.address {
        AddressMode::Wrap => x -= x.floor(),
        AddressMode::Mirror => {
            let f = x.floor();
            x = if (f as i64).rem_euclid(2) == 0 {
                x - f
            } else {
                1.0 - (x - f)
            };
        }
        _ => {}
    }
    x * n as f64
}

/// `floor` of a texel coordinate as an index: NaN as 0, far values (infinities) held to
/// ±2^40, beyond any texture (so that the next index does not overflow).
fn floor_index(x: f64) -> i64 {
    const FAR: f64 = (1u64 << 40) as f64;
    x.floor().clamp(-FAR, FAR) as i64
}

/// A linear-filter weight: `frac`, in 9-bit fixed point with 8 fractional bits.
fn weight(frac: f64) -> f64 {
    (frac * 256.0).round() / 256.0
}

/// The footprint of a fetch from `o` at coordinates `xy` (`ints`: `.s32` coordinates, texel
/// indices, as `tex1Dfetch` gives them; else f32 bits), `gather`: `tld4`'s (linear filtering's
/// footprint in its order, unweighted).
pub fn footprint(o: &TexObject, xy: [u64; 2], ints: bool, gather: bool) -> Footprint {
    let none = Tap {
        texel: None,
        weight: 0.0,
    };
    let mut f = Footprint {
        taps: [none; 4],
        n: 1,
    };
    let mode = if o.kind == ObjectKind::Linear {
        AddressMode::Border
    } else {
        o.address
    };
    let at = |i: i64, j: i64| -> Option<(u64, u64)> {
        let i = resolve(i, o.width, mode)?;
        let j = resolve(j, o.height, mode)?;
        Some((i, j))
    };
    if ints {
        let i = xy[0] as u32 as i32 as i64;
        let j = if o.two_d {
            xy[1] as u32 as i32 as i64
        } else {
            0
        };
        f.taps[0] = Tap {
            texel: at(i, j),
            weight: 1.0,
        };
        return f;
    }
    let x = texel_coord(f32::from_bits(xy[0] as u32), o.width, o);
    let y = if o.two_d {
        texel_coord(f32::from_bits(xy[1] as u32), o.height, o)
    } else {
        0.5
    };
    if !o.linear_filter && !gather {
        let j = if o.two_d { floor_index(y) } else { 0 };
        f.taps[0] = Tap {
            texel: at(floor_index(x), j),
            weight: 1.0,
        };
        return f;
    }
    let (xb, yb) = (x - 0.5, y - 0.5);
    let (i, j) = (floor_index(xb), floor_index(yb));
    let a = weight(xb - xb.floor());
    let b = weight(yb - yb.floor());
    if !o.two_d {
        f.taps[0] = Tap {
            texel: at(i, 0),
            weight: 1.0 - a,
        };
        f.taps[1] = Tap {
            texel: at(i + 1, 0),
            weight: a,
        };
        f.n = 2;
        return f;
    }
    let taps = if gather {
        [
            (i, j + 1, 1.0),
            (i + 1, j + 1, 1.0),
            (i + 1, j, 1.0),
            (i, j, 1.0),
        ]
    } else {
        [
            (i, j, (1.0 - a) * (1.0 - b)),
            (i + 1, j, a * (1.0 - b)),
            (i, j + 1, (1.0 - a) * b),
            (i + 1, j + 1, a * b),
        ]
    };
    for (k, (ti, tj, w)) in taps.into_iter().enumerate() {
        f.taps[k] = Tap {
            texel: at(ti, tj),
            weight: w,
        };
    }
    f.n = 4;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tex2d(w: u64, h: u64, address: AddressMode, linear: bool, norm: bool) -> TexObject {
        TexObject {
            name: "t".into(),
            handle: 1,
            kind: ObjectKind::Pitch2D,
            buffer: "b".into(),
            base: 0,
            format: Format::F32,
            channels: 1,
            width: w,
            height: h,
            pitch: w * 4,
            two_d: true,
            address,
            linear_filter: linear,
            normalized_float: false,
            normalized_coords: norm,
        }
    }

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn address_modes_follow_the_guide() {
        assert_eq!(resolve(-1, 4, AddressMode::Clamp), Some(0));
        assert_eq!(resolve(9, 4, AddressMode::Clamp), Some(3));
        assert_eq!(resolve(4, 4, AddressMode::Border), None);
        assert_eq!(resolve(-1, 4, AddressMode::Wrap), Some(3));
        assert_eq!(resolve(5, 4, AddressMode::Wrap), Some(1));
        // Mirror: ... 1 0 | 0 1 2 3 | 3 2 ...
        assert_eq!(resolve(-1, 4, AddressMode::Mirror), Some(0));
        assert_eq!(resolve(4, 4, AddressMode::Mirror), Some(3));
        assert_eq!(resolve(6, 4, AddressMode::Mirror), Some(1));
    }

    #[test]
    fn bilinear_weights_are_9_bit_fixed_point() {
        // x = 1.3 texels: xB = 0.8, i = 0, α = round(0.8 * 256) / 256 = 205/256.
        let o = tex2d(4, 4, AddressMode::Clamp, true, false);
        let fp = footprint(&o, [f(1.3), f(2.0)], false, false);
        let a = 205.0 / 256.0;
        let b = 0.5; // y = 2.0: yB = 1.5, j = 1, β = 0.5.
        let want = [
            (Some((0, 1)), (1.0 - a) * (1.0 - b)),
            (Some((1, 1)), a * (1.0 - b)),
            (Some((0, 2)), (1.0 - a) * b),
            (Some((1, 2)), a * b),
        ];
        assert_eq!(fp.n, 4);
        for (t, (texel, w)) in fp.taps.iter().zip(want) {
            assert_eq!((t.texel, t.weight), (texel, w));
        }
    }

    #[test]
    fn point_sampling_floors_and_normalized_coords_scale() {
        let o = tex2d(8, 2, AddressMode::Wrap, false, true);
        // x = 1.3 (normalized, wrapped to 0.3) * 8 = 2.4 -> 2; y = 0.75 * 2 = 1.5 -> 1.
        let fp = footprint(&o, [f(1.3), f(0.75)], false, false);
        assert_eq!(fp.n, 1);
        assert_eq!(fp.taps[0].texel, Some((2, 1)));
    }

    #[test]
    fn gather_is_counter_clockwise_from_lower_left() {
        let o = tex2d(4, 4, AddressMode::Border, false, false);
        let fp = footprint(&o, [f(1.5), f(1.5)], false, true);
        let t: Vec<_> = fp.taps.iter().map(|t| t.texel).collect();
        assert_eq!(t, [Some((1, 2)), Some((2, 2)), Some((2, 1)), Some((1, 1))]);
        // At the corner the border texels read as zero.
        let fp = footprint(&o, [f(0.25), f(0.25)], false, true);
        assert_eq!(fp.taps[3].texel, None);
        assert_eq!(fp.taps[1].texel, Some((0, 0)));
    }

    #[test]
    fn infinite_and_nan_coordinates_clamp_or_read_zero() {
        for mode in [AddressMode::Clamp, AddressMode::Border, AddressMode::Wrap] {
            let o = tex2d(4, 4, mode, true, mode == AddressMode::Wrap);
            for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX] {
                let fp = footprint(&o, [f(x), f(x)], false, false);
                assert_eq!(fp.n, 4);
                for t in &fp.taps[..4] {
                    assert!(t.texel.is_none_or(|(i, j)| i < 4 && j < 4), "{x} {mode:?}");
                }
            }
        }
    }

    #[test]
    fn linear_textures_read_zero_outside() {
        let mut o = tex2d(10, 1, AddressMode::Clamp, false, false);
        o.kind = ObjectKind::Linear;
        o.two_d = false;
        let fp = footprint(&o, [(-1i32) as u32 as u64, 0], true, false);
        assert_eq!(fp.taps[0].texel, None);
        let fp = footprint(&o, [9, 0], true, false);
        assert_eq!(fp.taps[0].texel, Some((9, 0)));
    }

    #[test]
    fn channels_decode_by_read_mode() {
        let mut o = tex2d(1, 1, AddressMode::Clamp, false, false);
        o.format = Format::U8;
        o.channels = 4;
        o.normalized_float = true;
        assert_eq!(o.channel(&[255, 0, 51, 1], 0), 1.0);
        assert_eq!(o.channel(&[255, 0, 51, 1], 2), 0.2);
        o.format = Format::S8;
        assert_eq!(o.channel(&[0x80, 0, 0, 0], 0), -1.0);
        o.normalized_float = false;
        assert_eq!(o.result_bits(&[-3.0, 0.0, 0.0, 0.0], 0), 0xffff_fffd);
        o.channels = 1;
        assert_eq!(o.result_bits(&[-3.0, 0.0, 0.0, 0.0], 3), 1);
    }
}

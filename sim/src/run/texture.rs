//! The workload's `[[texture]]` and `[[surface]]` tables made into the launch's objects
//! ([`objects`]), checked against their buffers as `cudaCreateTextureObject` and
//! `cudaCreateSurfaceObject` check their descriptors; an error names the table's key.

use crate::error::Result;
use crate::exec::texture::{AddressMode, Format, ObjectKind, TexObject};
use crate::workload::{Expr, Workload};
use std::collections::HashMap;

/// A buffer's device address and size in bytes.
pub(super) type BufferAt = (u64, u64);

/// The objects of `w`, textures first (handles 1, 2, ...), over `buffers` (name to address and
/// bytes).
pub(super) fn objects(w: &Workload, buffers: &HashMap<String, BufferAt>) -> Result<Vec<TexObject>> {
    let mut out: Vec<TexObject> = vec![];
    let mut add = |o: TexObject, key: &str| -> Result<()> {
        if buffers.contains_key(&o.name) || out.iter().any(|x| x.name == o.name) {
            return Err(w.err(
                &format!("{key}.name"),
                format!("`{}` names a buffer or another texture or surface", o.name),
            ));
        }
        out.push(o);
        Ok(())
    };
    for (i, t) in w.textures.iter().enumerate() {
        let key = format!("texture[{i}]");
        let o = texture(w, t, buffers, &key)?;
        add(o, &key)?;
    }
    for (i, s) in w.surfaces.iter().enumerate() {
        let key = format!("surface[{i}]");
        let t = crate::workload::texture::TextureSpec {
            name: s.name.clone(),
            buffer: s.buffer.clone(),
            dims: s.dims.clone(),
            format: s.format.clone(),
            channels: s.channels.clone(),
            width: s.width.clone(),
            height: s.height.clone(),
            pitch_bytes: None,
            address_mode: None,
            filter_mode: None,
            read_mode: None,
            normalized_coords: false,
        };
        let mut o = shape(w, &t, buffers, &key)?;
        o.kind = ObjectKind::Surface;
        add(o, &key)?;
    }
    for (k, o) in out.iter_mut().enumerate() {
        o.handle = k as u64 + 1;
    }
    Ok(out)
}

/// A positive integer key, or `default` when absent.
fn positive(w: &Workload, e: &Option<Expr>, key: &str, default: Option<i64>) -> Result<u64> {
    let v = match (e, default) {
        (Some(e), _) => w.eval(e, key)?,
        (None, Some(d)) => d,
        (None, None) => return Err(w.err(key, "missing".into())),
    };
    if v < 1 {
        return Err(w.err(key, format!("= {v}, must be at least 1")));
    }
    Ok(v as u64)
}

/// The buffer, format, channels and extent of a texture or surface (`t`), unchecked modes.
fn shape(
    w: &Workload,
    t: &crate::workload::texture::TextureSpec,
    buffers: &HashMap<String, BufferAt>,
    key: &str,
) -> Result<TexObject> {
    let Some(&(base, size)) = buffers.get(&t.buffer) else {
        let known: Vec<&String> = buffers.keys().collect();
        return Err(w.err(
            &format!("{key}.buffer"),
            format!("no [[buffer]] named `{}` (buffers: {known:?})", t.buffer),
        ));
    };
    let format = Format::parse(&t.format).ok_or_else(|| {
        w.err(
            &format!("{key}.format"),
            format!(
                "unknown format `{}`; allowed: u8 s8 u16 s16 u32 s32 f16 f32",
                t.format
            ),
        )
    })?;
    let channels = positive(w, &t.channels, &format!("{key}.channels"), Some(1))?;
    if ![1, 2, 4].contains(&channels) {
        return Err(w.err(
            &format!("{key}.channels"),
            format!("= {channels}, allowed: 1, 2 or 4"),
        ));
    }
    let texel = format.bytes() * channels;
    let two_d = match t.dims.as_str() {
        "1d" => false,
        "2d" => true,
        d => {
            return Err(w.err(
                &format!("{key}.dims"),
                format!("= \"{d}\", allowed: \"1d\" or \"2d\""),
            ))
        }
    };
    let all = i64::try_from(size / texel).unwrap_or(i64::MAX);
    let width = positive(
        w,
        &t.width,
        &format!("{key}.width"),
        (!two_d).then_some(all),
    )?;
    let height = if two_d {
        positive(w, &t.height, &format!("{key}.height"), None)?
    } else {
        if t.height.is_some() {
            return Err(w.err(
                &format!("{key}.height"),
                "a 1-D object has no height".into(),
            ));
        }
        1
    };
    let row = width.saturating_mul(texel);
    let pitch = match &t.pitch_bytes {
        None => row,
        Some(_) if !two_d => {
            return Err(w.err(
                &format!("{key}.pitch_bytes"),
                "a 1-D texture has no pitch".into(),
            ))
        }
        Some(e) => {
            let k = format!("{key}.pitch_bytes");
            let p = positive(w, &Some(e.clone()), &k, None)?;
            if p < row {
                return Err(w.err(
                    &k,
                    format!("= {p}, below the row's {row} bytes ({width} texels of {texel} bytes)"),
                ));
            }
            // cudaCreateTextureObject: pitchInBytes a multiple of the device's
            // texturePitchAlignment (32 bytes on every GPU since Fermi; CUDA Runtime API,
            // cudaDeviceProp::texturePitchAlignment).
            if p % 32 != 0 {
                return Err(w.err(
                    &k,
                    format!("= {p}, must be a multiple of the texture pitch alignment, 32 bytes"),
                ));
            }
            p
        }
    };
    let bytes = pitch.saturating_mul(height - 1).saturating_add(row);
    if bytes > size {
        return Err(w.err(
            &format!("{key}.{}", if two_d { "height" } else { "width" }),
            format!(
                "{width}x{height} texels of {texel} bytes{} need {bytes} bytes; buffer `{}` has {size}",
                if two_d { format!(", rows {pitch} bytes apart") } else { String::new() },
                t.buffer
            ),
        ));
    }
    Ok(TexObject {
        name: t.name.clone(),
        handle: 0,
        kind: if two_d {
            ObjectKind::Pitch2D
        } else {
            ObjectKind::Linear
        },
        buffer: t.buffer.clone(),
        base,
        format,
        channels: channels as u8,
        width,
        height,
        pitch,
        two_d,
        address: AddressMode::Clamp,
        linear_filter: false,
        normalized_float: false,
        normalized_coords: false,
    })
}

/// A `[[texture]]` with its modes checked.
fn texture(
    w: &Workload,
    t: &crate::workload::texture::TextureSpec,
    buffers: &HashMap<String, BufferAt>,
    key: &str,
) -> Result<TexObject> {
    let mut o = shape(w, t, buffers, key)?;
    let k = |s: &str| format!("{key}.{s}");
    o.normalized_float = match t.read_mode.as_deref() {
        None | Some("element") => false,
        Some("normalized_float") if o.format.is_small_int() => true,
        Some("normalized_float") => {
            return Err(w.err(
                &k("read_mode"),
                format!(
                    "normalized_float reads 8- and 16-bit integer formats, not `{}`",
                    t.format
                ),
            ))
        }
        Some(m) => {
            return Err(w.err(
                &k("read_mode"),
                format!("= \"{m}\", allowed: \"element\" or \"normalized_float\""),
            ))
        }
    };
    o.linear_filter = match t.filter_mode.as_deref() {
        None | Some("point") => false,
        Some("linear") if !o.two_d => {
            return Err(w.err(
                &k("filter_mode"),
                "a linear texture (1d, tex1Dfetch) is not filtered (CUDA C++ Programming Guide, tex1Dfetch)".into(),
            ))
        }
        // cudaErrorInvalidFilterSetting: "a non-float texture was being accessed with linear
        // filtering".
        Some("linear") if !o.float_results() => {
            return Err(w.err(
                &k("filter_mode"),
                format!(
                    "linear filtering needs float results: a float format or read_mode = \"normalized_float\" (format `{}`)",
                    t.format
                ),
            ))
        }
        Some("linear") => true,
        Some(m) => {
            return Err(w.err(
                &k("filter_mode"),
                format!("= \"{m}\", allowed: \"point\" or \"linear\""),
            ))
        }
    };
    if t.normalized_coords && !o.two_d {
        return Err(w.err(
            &k("normalized_coords"),
            "tex1Dfetch takes texel indices: a linear texture has no normalized coordinates".into(),
        ));
    }
    o.normalized_coords = t.normalized_coords;
    o.address = match (t.address_mode.as_deref(), o.two_d) {
        (None, false) | (Some("border"), false) => AddressMode::Border,
        (Some(m), false) => {
            return Err(w.err(
                &k("address_mode"),
                format!(
                    "= \"{m}\": the address mode has no effect on linear memory, whose out-of-range fetches read zero; allowed: \"border\""
                ),
            ))
        }
        (None | Some("clamp"), true) => AddressMode::Clamp,
        (Some("border"), true) => AddressMode::Border,
        (Some(m @ ("wrap" | "mirror")), true) if !o.normalized_coords => {
            return Err(w.err(
                &k("address_mode"),
                format!("= \"{m}\" needs normalized_coords = true (CUDA C++ Programming Guide, texture addressing)"),
            ))
        }
        (Some("wrap"), true) => AddressMode::Wrap,
        (Some("mirror"), true) => AddressMode::Mirror,
        (Some(m), true) => {
            return Err(w.err(
                &k("address_mode"),
                format!("= \"{m}\", allowed: \"clamp\", \"border\", \"wrap\", \"mirror\""),
            ))
        }
    };
    Ok(o)
}

//! Buffer and constant initialisers: `zeros`, `iota`, `value:V`, `random:SEED`,
//! `random:SEED:LO:HI`, `file:PATH` (raw little-endian bytes, or a NumPy `.npy` array).
//!
//! `random:SEED` draws from SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014), the same sequence on every machine: integers uniform over the
//! type's range, floats uniform in [0, 1). `random:SEED:LO:HI` maps the same draws into a range:
//! integers uniform in LO..=HI (Lemire's multiply-shift, so an index buffer can be in bounds),
//! floats uniform in [LO, HI).

use crate::memory::formula::{fill_elements, Formula};

/// An element type of buffers and constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Elem {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

impl Elem {
    /// Parses `i32` and friends.
    pub fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "i8" => Elem::I8,
            "i16" => Elem::I16,
            "i32" => Elem::I32,
            "i64" => Elem::I64,
            "u8" => Elem::U8,
            "u16" => Elem::U16,
            "u32" => Elem::U32,
            "u64" => Elem::U64,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F64)
    }

    /// Its name in a workload file (`i32`, `f64`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Elem::I8 => "i8",
            Elem::I16 => "i16",
            Elem::I32 => "i32",
            Elem::I64 => "i64",
            Elem::U8 => "u8",
            Elem::U16 => "u16",
            Elem::U32 => "u32",
            Elem::U64 => "u64",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }

    /// The integers `value:V` takes for an integer element: from the signed minimum of its
    /// width to the unsigned maximum (a negative value is stored as two's complement).
    fn int_range(self) -> (i128, i128) {
        let bits = 8 * self.bytes() as u32;
        (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
    }

    /// `v` is in [`Elem::int_range`].
    fn holds(self, v: i64) -> bool {
        let (lo, hi) = self.int_range();
        (lo..=hi).contains(&i128::from(v))
    }

    /// Little-endian bytes of the element whose value is `v` (integers wrap to the width).
    fn encode_int(self, v: i64, out: &mut Vec<u8>) {
        match self {
            Elem::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            Elem::F64 => out.extend_from_slice(&(v as f64).to_le_bytes()),
            _ => out.extend_from_slice(&v.to_le_bytes()[..self.bytes()]),
        }
    }

    /// Appends `count` elements, element `k` of value `value(k)` as [`Elem::encode_int`] encodes
    /// it, with the type decided once (buffers of tens of millions of elements).
    #[cfg(test)]
    fn encode_each(self, count: usize, out: &mut Vec<u8>, value: impl Fn(usize) -> i64 + Sync) {
        let start = out.len();
        out.resize(start + count * self.bytes(), 0);
        self.encode_into(&mut out[start..], value);
    }

    /// Writes element `k` of `dst` (whole elements) as [`Elem::encode_int`] encodes `value(k)`,
    /// with the type decided once: the buffer comes zeroed from the allocator, so it is written
    /// once, not cleared first.
    fn encode_into(self, dst: &mut [u8], value: impl Fn(usize) -> i64 + Sync) {
        let b = self.bytes();
        // The element size is a constant in each arm, so a copy is a store, not a `memcpy` call
        // per element.
        match (self, b) {
            (Elem::F32, _) => fill(dst, |k| (value(k) as f32).to_le_bytes()),
            (Elem::F64, _) => fill(dst, |k| (value(k) as f64).to_le_bytes()),
            (_, 1) => fill(dst, |k| [value(k) as u8]),
            (_, 2) => fill(dst, |k| (value(k) as u16).to_le_bytes()),
            (_, 4) => fill(dst, |k| (value(k) as u32).to_le_bytes()),
            _ => fill(dst, |k| value(k).to_le_bytes()),
        }
    }

    fn encode_float(self, v: f64, out: &mut Vec<u8>) {
        match self {
            Elem::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            Elem::F64 => out.extend_from_slice(&v.to_le_bytes()),
            _ => self.encode_int(v as i64, out),
        }
    }
}

/// [`fill_elements`] on every core for a large buffer.
fn fill<const B: usize>(dst: &mut [u8], bytes: impl Fn(usize) -> [u8; B] + Sync) {
    fill_elements(dst, true, bytes);
}

/// Reads the first `n` bytes of a `file:` initializer's path (fewer if the file is shorter), never
/// more; `Err` is a readable message naming the file.
pub type ReadFile<'a> = dyn Fn(&str, u64) -> Result<Vec<u8>, String> + 'a;

/// The bytes of `count` elements initialised by `spec`. `read_file(path, n)` reads the first `n`
/// bytes of a `file:` path (fewer if the file is shorter), never more.
/// `Err` is a readable message.
pub fn build(
    spec: &str,
    elem: Elem,
    count: usize,
    read_file: &ReadFile,
) -> Result<Vec<u8>, String> {
    let n = count
        .checked_mul(elem.bytes())
        .ok_or_else(|| format!("{count} elements of {} bytes overflow", elem.bytes()))?;
    let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
    let too_big = |m: String| format!("{count} elements of {} bytes: {m}", elem.bytes());
    if kind == "zeros" {
        return crate::memory::image::host_zeros(n).map_err(too_big);
    }
    if kind == "iota" {
        let mut out = crate::memory::image::host_zeros(n).map_err(too_big)?;
        iota_into(elem, &mut out);
        return Ok(out);
    }
    // An integer buffer takes an integer that fits its width (negative values as two's
    // complement, `value:-1` on a u8 is 255); a u64 one also takes values past i64::MAX.
    let int = match (kind, elem.is_float()) {
        ("value", false) => Some(
            arg.parse::<i64>()
                .ok()
                .filter(|&v| elem.holds(v))
                .or_else(|| {
                    (elem == Elem::U64)
                        .then(|| arg.parse::<u64>().ok().map(|u| u as i64))
                        .flatten()
                })
                .ok_or_else(|| {
                    let (lo, hi) = elem.int_range();
                    format!(
                        "`{spec}` on an {} buffer: the value must be an integer from {lo} to {hi}",
                        elem.name()
                    )
                })?,
        ),
        _ => arg.parse::<i64>().ok().filter(|_| kind == "value"),
    };
    if let Some(v) = int {
        let mut out = crate::memory::image::host_zeros(n).map_err(too_big)?;
        elem.encode_into(&mut out, |_| v);
        return Ok(out);
    }
    let mut out = crate::memory::image::host_buffer(n).map_err(too_big)?;
    match kind {
        "value" => {
            if let Ok(v) = arg.parse::<f64>() {
                let mut one = Vec::with_capacity(8);
                elem.encode_float(v, &mut one);
                (0..count).for_each(|_| out.extend_from_slice(&one));
            } else {
                return Err(format!("`{spec}`: value must be a number"));
            }
        }
        "random" => {
            let (seed, range) = match arg.split_once(':') {
                Some((seed, range)) => (seed, Some(range)),
                None => (arg, None),
            };
            let mut state: u64 = seed
                .parse()
                .map_err(|_| format!("`{spec}`: the seed must be an unsigned integer"))?;
            match range.map(|r| Range::parse(spec, r, elem)).transpose()? {
                None => {
                    for _ in 0..count {
                        let r = splitmix64(&mut state);
                        if elem.is_float() {
                            elem.encode_float(unit(r), &mut out);
                        } else {
                            elem.encode_int(r as i64, &mut out);
                        }
                    }
                }
                Some(Range::Int { lo, span }) => {
                    for _ in 0..count {
                        let r = u128::from(splitmix64(&mut state));
                        let v = lo + ((r * span) >> 64) as i128;
                        elem.encode_int(v as i64, &mut out);
                    }
                }
                Some(Range::Float { lo, hi }) => {
                    for _ in 0..count {
                        let v = lo + (hi - lo) * unit(splitmix64(&mut state));
                        elem.encode_float(v, &mut out);
                    }
                }
            }
        }
        "file" => {
            // A .npy array: its header is checked against the buffer and skipped (workload::npy).
            let head = read_file(arg, 12)?;
            if super::npy::is_npy(&head) || arg.ends_with(".npy") {
                out.extend_from_slice(&super::npy::read(spec, arg, elem, count, read_file)?);
                return Ok(out);
            }
            let data = read_file(arg, n as u64)?;
            if data.len() < n {
                return Err(format!(
                    "`{spec}`: the file has {} bytes, {n} are needed",
                    data.len()
                ));
            }
            out.extend_from_slice(&data[..n]);
        }
        _ => {
            return Err(format!(
                "unknown init `{spec}` (zeros | iota | value:V | random:SEED | random:SEED:LO:HI | \
file:PATH)"
            ))
        }
    }
    Ok(out)
}

/// A draw's top 53 bits as a double in [0, 1).
fn unit(r: u64) -> f64 {
    (r >> 11) as f64 / (1u64 << 53) as f64
}

/// The range of `random:SEED:LO:HI`.
enum Range {
    /// Integers `lo..lo + span` (`span` = HI - LO + 1, up to 2^64).
    Int { lo: i128, span: u128 },
    /// Floats in `[lo, hi)`.
    Float { lo: f64, hi: f64 },
}

impl Range {
    /// Parses `LO:HI` of `spec` for `elem`: integers its width holds with LO <= HI, or finite
    /// floats with LO < HI.
    fn parse(spec: &str, range: &str, elem: Elem) -> Result<Range, String> {
        let bad = |why: &str| format!("`{spec}`: {why} (random:SEED:LO:HI)");
        let (lo, hi) = range
            .split_once(':')
            .ok_or_else(|| bad("give both ends of the range"))?;
        if elem.is_float() {
            let (lo, hi) = match (lo.parse::<f64>(), hi.parse::<f64>()) {
                (Ok(l), Ok(h)) if l.is_finite() && h.is_finite() => (l, h),
                _ => return Err(bad("LO and HI must be finite numbers")),
            };
            if lo >= hi {
                return Err(bad("LO must be below HI"));
            }
            return Ok(Range::Float { lo, hi });
        }
        let (min, max) = elem.int_range();
        let (min, max) = (
            if elem.name().starts_with('u') { 0 } else { min },
            if elem.name().starts_with('u') {
                max
            } else {
                max >> 1
            },
        );
        let (lo, hi) = match (lo.parse::<i128>(), hi.parse::<i128>()) {
            (Ok(l), Ok(h)) if (min..=max).contains(&l) && (min..=max).contains(&h) => (l, h),
            _ => {
                return Err(bad(&format!(
                    "on an {} buffer LO and HI must be integers from {min} to {max}",
                    elem.name()
                )))
            }
        };
        if lo > hi {
            return Err(bad("LO must not be above HI"));
        }
        Ok(Range::Int {
            lo,
            span: (hi - lo + 1) as u128,
        })
    }
}

/// The formula of a buffer initialised by `spec` whose contents are one (`iota`), which the
/// simulated memory keeps instead of the bytes until a kernel writes the buffer
/// ([`crate::memory::formula`]); `None` for the other initialisers. Its bytes are those
/// [`build`] writes.
pub fn formula(spec: &str, elem: Elem) -> Option<Formula> {
    (spec == "iota").then(|| match elem {
        Elem::F32 => Formula::IotaF32,
        Elem::F64 => Formula::IotaF64,
        _ => Formula::IotaInt {
            bytes: elem.bytes() as u8,
        },
    })
}

/// Writes `0, 1, 2, ...` into `dst` as elements of type `elem` ([`Elem::encode_int`]). Float
/// elements below 2^31 convert from 32-bit integers, which vectorises (there is no vector
/// conversion from 64-bit integers before AVX-512) and rounds the same integer the same way.
fn iota_into(elem: Elem, dst: &mut [u8]) {
    let small = dst.len() / elem.bytes() <= 1 << 31;
    match elem {
        Elem::F32 if small => fill(dst, |k| (k as i32 as f32).to_le_bytes()),
        Elem::F64 if small => fill(dst, |k| f64::from(k as i32).to_le_bytes()),
        _ => elem.encode_into(dst, |k| k as i64),
    }
}

/// One step of SplitMix64.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::formula::FILL_PART;

    /// Every element type.
    const ALL: [Elem; 10] = [
        Elem::I8,
        Elem::I16,
        Elem::I32,
        Elem::I64,
        Elem::U8,
        Elem::U16,
        Elem::U32,
        Elem::U64,
        Elem::F32,
        Elem::F64,
    ];

    #[test]
    fn an_iota_formula_has_the_bytes_iota_builds() {
        for elem in ALL {
            let f = formula("iota", elem).expect("iota has a formula");
            // Past 256 and 65,536: 1- and 2-byte integers wrap.
            let count = 70_000;
            let built = build("iota", elem, count, &no_files).unwrap();
            assert_eq!(f.contents(built.len()), built, "{elem:?}");
        }
        assert_eq!(formula("zeros", Elem::F32), None);
        assert_eq!(formula("random:1", Elem::F32), None);
    }

    fn no_files(_: &str, _: u64) -> Result<Vec<u8>, String> {
        Err("no files".into())
    }

    #[test]
    fn an_integer_buffer_takes_an_integer_of_its_width() {
        for (spec, elem) in [
            ("value:1.5", Elem::I32),
            ("value:nan", Elem::U8),
            ("value:256", Elem::U8),
            ("value:-129", Elem::I8),
            ("value:4294967296", Elem::U32),
        ] {
            let e = build(spec, elem, 1, &no_files).unwrap_err();
            assert!(
                e.contains(spec) && e.contains("must be an integer from"),
                "{e}"
            );
        }
        assert_eq!(build("value:255", Elem::U8, 1, &no_files).unwrap(), [255]);
        assert_eq!(build("value:-128", Elem::U8, 1, &no_files).unwrap(), [128]);
        assert_eq!(
            build("value:18446744073709551615", Elem::U64, 1, &no_files).unwrap(),
            [255; 8]
        );
        // A float buffer still takes an integer or a float, NaN included.
        assert_eq!(
            build("value:nan", Elem::F32, 1, &no_files).unwrap(),
            f32::NAN.to_le_bytes()
        );
    }

    #[test]
    fn iota_and_value() {
        assert_eq!(
            build("iota", Elem::I32, 3, &no_files).unwrap(),
            vec![0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(
            build("value:-1", Elem::I16, 2, &no_files).unwrap(),
            vec![0xff; 4]
        );
        assert_eq!(
            build("value:1.5", Elem::F32, 1, &no_files).unwrap(),
            1.5f32.to_le_bytes().to_vec()
        );
    }

    #[test]
    fn whole_buffers_encode_as_element_by_element() {
        // iota and value fill whole buffers with the type decided once: the same bytes as
        // encoding each element, for every type (floats round, integers wrap to the width).
        for e in ALL {
            let mut want = Vec::new();
            (0..300).for_each(|k| e.encode_int(k as i64 * 65_599, &mut want));
            let mut got = Vec::new();
            e.encode_each(300, &mut got, |k| k as i64 * 65_599);
            assert_eq!(got, want, "{e:?}");
            let mut want = Vec::new();
            (0..5).for_each(|_| e.encode_int(-3, &mut want));
            assert_eq!(build("value:-3", e, 5, &no_files).unwrap(), want, "{e:?}");
        }
    }

    #[test]
    fn a_large_buffer_filled_by_parts_is_the_one_filled_in_a_row() {
        // Two and a half parts: the parts' first elements follow on from the previous part's.
        for e in [Elem::U8, Elem::I32, Elem::F64] {
            let count = FILL_PART * 5 / 2 / e.bytes() + 3;
            let mut row = vec![0; count * e.bytes()];
            match e {
                Elem::U8 => fill_elements(&mut row, false, |k| [k as u8]),
                Elem::I32 => fill_elements(&mut row, false, |k| (k as u32).to_le_bytes()),
                _ => fill_elements(&mut row, false, |k| (k as f64).to_le_bytes()),
            }
            assert_eq!(build("iota", e, count, &no_files).unwrap(), row, "{e:?}");
        }
    }

    #[test]
    fn iota_of_floats_converts_from_32_bit_integers_as_from_64_bit_ones() {
        for e in [Elem::F32, Elem::F64, Elem::I32, Elem::U8] {
            let mut want = Vec::new();
            (0..300).for_each(|k| e.encode_int(k, &mut want));
            assert_eq!(build("iota", e, 300, &no_files).unwrap(), want, "{e:?}");
        }
        // Beyond 2^24 floats round: the same way from either width.
        for k in [(1i64 << 24) + 1, (1 << 30) + 65, (1 << 31) - 1] {
            assert_eq!((k as i32 as f32).to_bits(), (k as f32).to_bits());
        }
    }

    /// Issue 42: `random:SEED` on an integer index buffer spans the whole type, so the indices
    /// were out of bounds at once; a range keeps them in.
    #[test]
    fn random_with_a_range_stays_in_it_and_hits_both_ends() {
        let ints = |spec: &str, elem: Elem| -> Vec<i128> {
            let b = build(spec, elem, 4000, &no_files).unwrap();
            b.chunks(elem.bytes())
                .map(|c| {
                    let mut w = [0u8; 16];
                    w[..c.len()].copy_from_slice(c);
                    let v = i128::from_le_bytes(w);
                    let bits = 8 * c.len() as u32;
                    match elem {
                        Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64
                            if v >> (bits - 1) & 1 == 1 =>
                        {
                            v - (1i128 << bits)
                        }
                        _ => v,
                    }
                })
                .collect()
        };
        let v = ints("random:7:0:15", Elem::I32);
        assert!(v.iter().all(|x| (0..=15).contains(x)));
        assert!(v.contains(&0) && v.contains(&15));
        let v = ints("random:3:-5:5", Elem::I8);
        assert!(v.iter().all(|x| (-5..=5).contains(x)) && v.contains(&-5) && v.contains(&5));
        let v = ints("random:1:0:18446744073709551615", Elem::U64);
        assert!(
            v.iter().any(|&x| x > i64::MAX as i128),
            "the whole u64 range"
        );
        assert_eq!(
            build("random:9:4:4", Elem::U16, 10, &no_files).unwrap(),
            [4u8, 0].repeat(10)
        );
        // The same seed without a range is the old sequence, unchanged.
        assert_eq!(
            build("random:7", Elem::U32, 10, &no_files).unwrap(),
            build("random:7", Elem::U32, 10, &no_files).unwrap()
        );
        let f = build("random:5:-1.5:2.5", Elem::F64, 1000, &no_files).unwrap();
        let f: Vec<f64> = f
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert!(f.iter().all(|x| (-1.5..2.5).contains(x)));
        assert!(f.iter().any(|&x| x < -1.0) && f.iter().any(|&x| x > 2.0));
        for (spec, elem, why) in [
            ("random:1:5:4", Elem::I32, "LO must not be above HI"),
            ("random:1:0:256", Elem::U8, "integers from 0 to 255"),
            ("random:1:-1:3", Elem::U32, "integers from 0 to 4294967295"),
            ("random:1:0:1.5", Elem::I32, "integers from"),
            ("random:1:7", Elem::I32, "give both ends"),
            ("random:1:2:1", Elem::F32, "LO must be below HI"),
            ("random:1:0:inf", Elem::F32, "finite numbers"),
            (
                "random:x:0:1",
                Elem::I32,
                "the seed must be an unsigned integer",
            ),
        ] {
            let e = build(spec, elem, 4, &no_files).unwrap_err();
            assert!(e.contains(why) && e.contains(spec), "{spec}: {e}");
        }
    }

    #[test]
    fn random_is_reproducible_and_floats_in_unit_interval() {
        let a = build("random:7", Elem::F32, 100, &no_files).unwrap();
        assert_eq!(a, build("random:7", Elem::F32, 100, &no_files).unwrap());
        for c in a.chunks(4) {
            let f = f32::from_le_bytes(c.try_into().unwrap());
            assert!((0.0..=1.0).contains(&f));
        }
    }

    #[test]
    fn bad_specs() {
        assert!(build("ones", Elem::I32, 1, &no_files)
            .unwrap_err()
            .contains("unknown init"));
        assert!(build("file:x.bin", Elem::I32, 1, &no_files).is_err());
    }
}

//! The C format directives of CUDA's device `printf` over its argument buffer.
//!
//! nvcc and NVRTC compile `printf(fmt, ...)` into `vprintf(fmt, buf)`: the arguments are stored
//! in a local buffer, each at the next multiple of its own size (`int`, `unsigned`, `char` as
//! 4 bytes; `long`, `long long`, pointers, `%s` strings' addresses and `double`s, to which
//! `float`s are promoted, as 8). The host formats the text after the kernel with the C
//! library's rules (CUDA C++ Programming Guide, "Formatted Output": `%[flags][width]
//! [.precision][size]type`, at most 32 arguments); these are C11's (§7.21.6.1) for the
//! directives below.
//!
//! Supported: flags `- + space # 0`, width and precision as numbers or `*`, sizes `hh h l ll z
//! j t`, types `d i u o x X c s p f F e E g G a A %`. `%n` and unknown directives print as
//! written, as the GPU's printf does not support them (it prints the directive's text).

/// Where a format reads its arguments: the argument buffer and the strings `%s` points to.
pub trait Args {
    /// `bytes` (4 or 8) little-endian bytes at byte `offset` of the argument buffer; `None`
    /// past its end.
    fn word(&mut self, offset: usize, bytes: usize) -> Option<u64>;
    /// The NUL-terminated string at generic address `addr` (without the NUL); `None` when it
    /// cannot be read.
    fn string(&mut self, addr: u64) -> Option<Vec<u8>>;
}

/// Most arguments one call formats (CUDA C++ Programming Guide, "Format Specifiers": at most
/// 32 arguments besides the format string; the rest are ignored).
pub const MAX_ARGS: usize = 32;

/// What one call printed: its text, the argument bytes it read, and the arguments it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatted {
    /// The text, bytes as the format and the strings hold them.
    pub text: Vec<u8>,
    /// The end of the last argument read, in bytes of the buffer.
    pub arg_bytes: usize,
    /// Arguments used (vprintf's return value).
    pub args: u32,
}

#[derive(Default, Clone, Copy)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

/// Formats `fmt` (without its NUL) with the arguments of `args`.
pub fn format(fmt: &[u8], args: &mut dyn Args) -> Formatted {
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut off = 0usize;
    let mut used = 0u32;
    let mut i = 0;
    // The next argument of `bytes` bytes, aligned to its size; zero past the 32nd or the end.
    let mut next = |bytes: usize, args: &mut dyn Args| -> u64 {
        let at = off.next_multiple_of(bytes);
        if used as usize >= MAX_ARGS {
            return 0;
        }
        used += 1;
        off = at + bytes;
        args.word(at, bytes).unwrap_or(0)
    };
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut s = Spec::default();
        while let Some(&c) = fmt.get(i) {
            match c {
                b'-' => s.left = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                b'0' => s.zero = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            let w = next(4, args) as u32 as i32;
            s.left |= w < 0;
            s.width = w.unsigned_abs() as usize;
            i += 1;
        } else {
            s.width = number(fmt, &mut i);
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                let p = next(4, args) as u32 as i32;
                s.precision = usize::try_from(p).ok();
                i += 1;
            } else {
                s.precision = Some(number(fmt, &mut i));
            }
        }
        let mut size = 4usize;
        let mut narrow = 0u32; // bits of h (16) or hh (8)
        while let Some(&c) = fmt.get(i) {
            match c {
                b'l' | b'z' | b'j' | b't' | b'L' => size = 8,
                b'h' => narrow = if narrow == 16 { 8 } else { 16 },
                _ => break,
            }
            i += 1;
        }
        let Some(&ty) = fmt.get(i) else {
            out.extend_from_slice(&fmt[start..]);
            break;
        };
        i += 1;
        let body: Vec<u8> = match ty {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let v = next(size, args);
                let v = signed(v, size, narrow);
                let digits = with_precision(v.unsigned_abs().to_string(), s.precision);
                let sign = sign(v < 0, s);
                pad_number(sign, "", digits, s)
            }
            b'u' | b'o' | b'x' | b'X' => {
                let v = unsigned(next(size, args), size, narrow);
                let text = match ty {
                    b'u' => v.to_string(),
                    b'o' => format!("{v:o}"),
                    b'x' => format!("{v:x}"),
                    _ => format!("{v:X}"),
                };
                let mut digits = with_precision(text, s.precision);
                let prefix = match ty {
                    b'x' if s.alt && v != 0 => "0x",
                    b'X' if s.alt && v != 0 => "0X",
                    b'o' if s.alt && !digits.starts_with('0') => {
                        digits.insert(0, '0');
                        ""
                    }
                    _ => "",
                };
                pad_number("", prefix, digits, s)
            }
            b'c' => {
                let c = next(4, args) as u8;
                pad(vec![c], s)
            }
            b's' => {
                let a = next(8, args);
                let mut t = if a == 0 {
                    b"(null)".to_vec()
                } else {
                    args.string(a).unwrap_or_else(|| b"(null)".to_vec())
                };
                if let Some(p) = s.precision {
                    t.truncate(p);
                }
                pad(t, s)
            }
            b'p' => {
                let a = next(8, args);
                let t = if a == 0 {
                    "(nil)".to_string()
                } else {
                    format!("0x{a:x}")
                };
                pad(t.into_bytes(), Spec { zero: false, ..s })
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(next(8, args));
                float(v, ty, s)
            }
            _ => {
                // Unsupported (`%n`, unknown): the directive's text.
                out.extend_from_slice(&fmt[start..i]);
                continue;
            }
        };
        out.extend_from_slice(&body);
    }
    Formatted {
        text: out,
        arg_bytes: off,
        args: used,
    }
}

fn number(fmt: &[u8], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d) = fmt.get(*i).filter(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
        *i += 1;
    }
    n.min(1 << 16)
}

fn signed(v: u64, size: usize, narrow: u32) -> i64 {
    match (size, narrow) {
        (8, _) => v as i64,
        (_, 8) => i64::from(v as u8 as i8),
        (_, 16) => i64::from(v as u16 as i16),
        _ => i64::from(v as u32 as i32),
    }
}

fn unsigned(v: u64, size: usize, narrow: u32) -> u64 {
    match (size, narrow) {
        (8, _) => v,
        (_, 8) => u64::from(v as u8),
        (_, 16) => u64::from(v as u16),
        _ => u64::from(v as u32),
    }
}

fn sign(negative: bool, s: Spec) -> &'static str {
    match (negative, s.plus, s.space) {
        (true, ..) => "-",
        (false, true, _) => "+",
        (false, false, true) => " ",
        _ => "",
    }
}

/// An integer's digits with at least `precision` of them (`%.0d` of 0 prints nothing).
fn with_precision(digits: String, precision: Option<usize>) -> String {
    match precision {
        Some(0) if digits == "0" => String::new(),
        Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
        _ => digits,
    }
}

/// Sign, prefix and digits padded to the width: zeros after the sign with `0` (not with `-`,
/// nor for integers with a precision), else spaces.
fn pad_number(sign: &str, prefix: &str, digits: String, s: Spec) -> Vec<u8> {
    let len = sign.len() + prefix.len() + digits.len();
    let fill = s.width.saturating_sub(len);
    let mut t = String::with_capacity(len + fill);
    if s.left {
        t.push_str(sign);
        t.push_str(prefix);
        t.push_str(&digits);
        t.push_str(&" ".repeat(fill));
    } else if s.zero && s.precision.is_none() {
        t.push_str(sign);
        t.push_str(prefix);
        t.push_str(&"0".repeat(fill));
        t.push_str(&digits);
    } else {
        t.push_str(&" ".repeat(fill));
        t.push_str(sign);
        t.push_str(prefix);
        t.push_str(&digits);
    }
    t.into_bytes()
}

/// `text` padded with spaces to the width.
fn pad(mut text: Vec<u8>, s: Spec) -> Vec<u8> {
    let fill = s.width.saturating_sub(text.len());
    if s.left {
        text.extend(std::iter::repeat_n(b' ', fill));
        text
    } else {
        let mut t = vec![b' '; fill];
        t.extend(text);
        t
    }
}

/// `%f %e %g %a` (and capitals) of `v`, C11 §7.21.6.1.
fn float(v: f64, ty: u8, s: Spec) -> Vec<u8> {
    let upper = ty.is_ascii_uppercase();
    let sign = sign(v.is_sign_negative(), s);
    let a = v.abs();
    if !a.is_finite() {
        let t = if a.is_nan() { "nan" } else { "inf" };
        let t = if upper { t.to_uppercase() } else { t.into() };
        return pad_number(sign, "", t, Spec { zero: false, ..s });
    }
    let p = s.precision.unwrap_or(6);
    let digits = match ty.to_ascii_lowercase() {
        b'f' => fixed(a, p, s.alt),
        b'e' => exponent(a, p, s.alt),
        b'g' => general(a, p, s.alt),
        _ => hex_float(a, s.precision),
    };
    let digits = if upper { digits.to_uppercase() } else { digits };
    let prefix = "";
    pad_number(
        sign,
        prefix,
        digits,
        Spec {
            precision: None,
            ..s
        },
    )
}

fn fixed(a: f64, p: usize, alt: bool) -> String {
    let mut t = format!("{a:.p$}");
    if alt && p == 0 {
        t.push('.');
    }
    t
}

/// `d.ddde±XX`: Rust's `{:.pe}` is `d.ddde3`; C writes the exponent's sign and 2 digits or more.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let t = format!("{a:.p$e}");
    let (mant, exp) = t.split_once('e').unwrap_or((&t, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if alt && p == 0 { "." } else { "" };
    format!(
        "{mant}{dot}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    )
}

/// `%g`: precision P (0 counts as 1) significant digits; `%e` style when the exponent X of the
/// `%e` form is below -4 or at least P, else `%f` with P - 1 - X decimals; trailing zeros (and
/// a trailing point) removed unless `#`.
fn general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    let e = format!("{a:.prec$e}", prec = p - 1);
    let x: i64 = e.split_once('e').map_or(0, |(_, x)| x.parse().unwrap_or(0));
    let mut t = if x < -4 || x >= p as i64 {
        exponent(a, p - 1, alt)
    } else {
        fixed(a, (p as i64 - 1 - x) as usize, alt)
    };
    if !alt {
        let (mant, exp) = match t.find('e') {
            Some(k) => (t[..k].to_string(), t[k..].to_string()),
            None => (t.clone(), String::new()),
        };
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            mant
        };
        t = mant + &exp;
    }
    t
}

/// `%a`: `0x1.hhhp±d` (glibc's form: a leading 1 for normal numbers, 0 for subnormals; without
/// a precision, the shortest exact mantissa).
fn hex_float(a: f64, precision: Option<usize>) -> String {
    if a == 0.0 {
        return match precision {
            Some(p) if p > 0 => format!("0x0.{}p+0", "0".repeat(p)),
            _ => "0x0p+0".into(),
        };
    }
    let bits = a.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1 << 52) - 1);
    let (lead, exp) = if raw_exp == 0 {
        (0u64, -1022)
    } else {
        (1u64, raw_exp - 1023)
    };
    let mut lead = lead;
    let mut hex = format!("{mant:013x}");
    if let Some(p) = precision.filter(|&p| p < 13) {
        // Round the 52-bit mantissa to p hex digits, half to even.
        let drop = 4 * (13 - p) as u32;
        let rem = mant & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        mant >>= drop;
        if rem > half || (rem == half && mant & 1 == 1) {
            mant += 1;
            if p == 0 || mant >> (4 * p) != 0 {
                mant &= (1u64 << (4 * p)) - 1;
                // glibc keeps the carry in the leading digit (`0x2.0p+0`).
                lead += 1;
            }
        }
        hex = if p == 0 {
            String::new()
        } else {
            format!("{mant:0p$x}")
        };
    } else if precision.is_none() {
        hex = hex.trim_end_matches('0').to_string();
    } else if let Some(p) = precision {
        hex.push_str(&"0".repeat(p - 13));
    }
    let dot = if hex.is_empty() { "" } else { "." };
    format!(
        "0x{lead}{dot}{hex}p{}{}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An argument buffer of 8-byte-aligned words written by the test, and one string.
    struct Buf(Vec<u8>);
    impl Args for Buf {
        fn word(&mut self, offset: usize, bytes: usize) -> Option<u64> {
            let b = self.0.get(offset..offset + bytes)?;
            let mut v = [0u8; 8];
            v[..bytes].copy_from_slice(b);
            Some(u64::from_le_bytes(v))
        }
        fn string(&mut self, addr: u64) -> Option<Vec<u8>> {
            (addr == 0x100).then(|| b"hello".to_vec())
        }
    }

    /// The buffer vprintf reads for these arguments (each at a multiple of its size).
    fn buf(args: &[(usize, u64)]) -> Buf {
        let mut b = vec![];
        for &(n, v) in args {
            while b.len() % n != 0 {
                b.push(0);
            }
            b.extend_from_slice(&v.to_le_bytes()[..n]);
        }
        Buf(b)
    }

    fn f(fmt: &str, args: &[(usize, u64)]) -> String {
        String::from_utf8(format(fmt.as_bytes(), &mut buf(args)).text).unwrap()
    }

    fn d(v: f64) -> (usize, u64) {
        (8, v.to_bits())
    }

    // Expected strings are what glibc's printf prints for the same directives and values.
    #[test]
    fn integers() {
        let m = (-42i32) as u32 as u64;
        assert_eq!(
            f(
                "%d|%i|%5d|%-5d|%05d|%+d|% d",
                &[(4, m), (4, 7), (4, 7), (4, 7), (4, m), (4, 7), (4, 7)]
            ),
            "-42|7|    7|7    |-0042|+7| 7"
        );
        assert_eq!(
            f(
                "%u %x %X %#x %o %#o %.3d %.0d|",
                &[
                    (4, m),
                    (4, 255),
                    (4, 255),
                    (4, 255),
                    (4, 8),
                    (4, 8),
                    (4, 5),
                    (4, 0)
                ]
            ),
            "4294967254 ff FF 0xff 10 010 005 |"
        );
        let big = (-1234567890123i64) as u64;
        assert_eq!(
            f(
                "%ld %lu %lld %llu %lx",
                &[(8, big), (8, u64::MAX), (8, big), (8, big), (8, 255)]
            ),
            "-1234567890123 18446744073709551615 -1234567890123 18446742839141661493 ff"
        );
        assert_eq!(
            f("%hd %hhu %hhd", &[(4, 0x1_8000), (4, 0x1ff), (4, 0x80)]),
            "-32768 255 -128"
        );
        assert_eq!(
            f(
                "%*d|%-*d|%.*d",
                &[(4, 4), (4, 1), (4, 3), (4, 2), (4, 3), (4, 9)]
            ),
            "   1|2  |009"
        );
    }

    #[test]
    fn chars_strings_pointers_and_percent() {
        assert_eq!(
            f(
                "%c%c %s %.3s %8s|%-6s| %p %p %% %n",
                &[
                    (4, 111),
                    (4, 107),
                    (8, 0x100),
                    (8, 0x100),
                    (8, 0x100),
                    (8, 0),
                    (8, 0x1234),
                    (8, 0)
                ]
            ),
            "ok hello hel    hello|(null)| 0x1234 (nil) % %n"
        );
    }

    #[test]
    fn floats() {
        assert_eq!(
            f(
                "%f %.2f %10.3f %-8.1f| %+.0f %#.0f",
                &[d(1.5), d(2.675), d(-3.14159), d(2.25), d(2.5), d(3.0)]
            ),
            "1.500000 2.67     -3.142 2.2     | +2 3."
        );
        assert_eq!(
            f(
                "%e %.2e %E %.0e %e",
                &[d(1234.5678), d(0.000123), d(-1e100), d(5.5), d(0.0)]
            ),
            "1.234568e+03 1.23e-04 -1.000000E+100 6e+00 0.000000e+00"
        );
        assert_eq!(
            f(
                "%g %g %g %g %g %.3g %#g %G",
                &[
                    d(100000.0),
                    d(1000000.0),
                    d(0.0001),
                    d(0.00001),
                    d(1.0 / 3.0),
                    d(2.0 / 3.0),
                    d(1.0),
                    d(1e-10)
                ]
            ),
            "100000 1e+06 0.0001 1e-05 0.333333 0.667 1.00000 1E-10"
        );
        assert_eq!(
            f(
                "%f %F %e %g %5.1f%%",
                &[
                    d(f64::INFINITY),
                    d(f64::NEG_INFINITY),
                    d(f64::NAN),
                    d(-0.0),
                    d(99.5)
                ]
            ),
            "inf -INF nan -0  99.5%"
        );
        assert_eq!(
            f(
                "%a %a %.1a %A %a",
                &[d(1.0), d(0.1), d(1.96875), d(-2.5), d(0.0)]
            ),
            "0x1p+0 0x1.999999999999ap-4 0x2.0p+0 -0X1.4P+1 0x0p+0"
        );
    }

    #[test]
    fn arguments_are_aligned_and_counted() {
        // int, double, int, long: offsets 0, 8, 16, 24; 32 bytes, 4 arguments.
        let r = format(b"%d %f %d %ld", &mut buf(&[(4, 1), d(2.0), (4, 3), (8, 4)]));
        assert_eq!(String::from_utf8(r.text).unwrap(), "1 2.000000 3 4");
        assert_eq!((r.arg_bytes, r.args), (32, 4));
        // Past the buffer's end an argument reads as zero; a lone `%` at the end prints itself.
        assert_eq!(f("%d %d %", &[(4, 5)]), "5 0 %");
    }
}

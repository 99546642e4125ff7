//! Comparing output buffers between the simulator and the GPU (DESIGN.md, "Validation
//! methodology": the simulator is functionally exact). Integer elements must agree bit for bit;
//! floating-point elements within [`Tolerance`], because the PTX ISA lets ptxas contract a
//! `mul.f32` and an `add.f32` without a rounding modifier into one `fma`, and leaves the last bits
//! of approximate instructions (`sin.approx`, `rcp.approx`, `ex2.approx`) unspecified.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use sim::workload::init::Elem;

/// How elements of each type are printed and compared.
trait Element {
    fn show(self, b: &[u8]) -> String;
    fn agree(self, e: &[u8], a: &[u8], tol: Tolerance) -> bool;
}

impl Element for Elem {
    fn show(self, b: &[u8]) -> String {
        use Elem::*;
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(w);
        match self {
            I8 => (u as u8 as i8).to_string(),
            I16 => (u as u16 as i16).to_string(),
            I32 => (u as u32 as i32).to_string(),
            I64 => (u as i64).to_string(),
            U8 | U16 | U32 | U64 => u.to_string(),
            F32 => format!("{:e} (0x{:08x})", f32::from_bits(u as u32), u as u32),
            F64 => format!("{:e} (0x{u:016x})", f64::from_bits(u)),
        }
    }

    /// Whether two encoded elements agree: bits for integers, [`Tolerance`] for floats.
    fn agree(self, e: &[u8], a: &[u8], tol: Tolerance) -> bool {
        match self {
            Elem::F32 => tol.agree(
                f32::from_le_bytes(e.try_into().unwrap()).into(),
                f32::from_le_bytes(a.try_into().unwrap()).into(),
            ),
            Elem::F64 => tol.agree(
                f64::from_le_bytes(e.try_into().unwrap()),
                f64::from_le_bytes(a.try_into().unwrap()),
            ),
            _ => e == a,
        }
    }
}

/// How close floating-point outputs must be: `|actual - expected| <= absolute + relative *
/// |expected|`. NaN matches NaN, and infinities must match exactly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Relative tolerance.
    pub relative: f64,
    /// Absolute tolerance.
    pub absolute: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            relative: 1e-5,
            absolute: 1e-6,
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "integers bit for bit; floats within relative {:e} + absolute {:e}",
            self.relative, self.absolute
        )
    }
}

impl Tolerance {
    fn agree(self, e: f64, a: f64) -> bool {
        if e.is_nan() || a.is_nan() {
            return e.is_nan() && a.is_nan();
        }
        if e.is_infinite() || a.is_infinite() {
            return e == a;
        }
        (a - e).abs() <= self.absolute + self.relative * e.abs()
    }
}

/// One differing element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Element index.
    pub index: usize,
    /// The simulator's value.
    pub expected: String,
    /// The GPU's value.
    pub actual: String,
}

/// The result of comparing one buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferCheck {
    /// Buffer name.
    pub name: String,
    /// Elements compared.
    pub elements: usize,
    /// How many differ.
    pub differing: usize,
    /// The first few differing elements.
    pub first: Vec<Mismatch>,
    /// A problem that prevents an element-wise comparison (sizes differ), if any.
    pub problem: Option<String>,
}

impl BufferCheck {
    /// Whether the buffers agree.
    pub fn ok(&self) -> bool {
        self.differing == 0 && self.problem.is_none()
    }

    /// One line: `sums: 3 of 1000 elements differ: [7] expected 7, got 0; ...`.
    pub fn describe(&self) -> String {
        if let Some(p) = &self.problem {
            return format!("{}: {p}", self.name);
        }
        if self.ok() {
            return format!("{}: {} elements match", self.name, self.elements);
        }
        let first: Vec<String> = self
            .first
            .iter()
            .map(|m| format!("[{}] expected {}, got {}", m.index, m.expected, m.actual))
            .collect();
        format!(
            "{}: {} of {} elements differ: {}",
            self.name,
            self.differing,
            self.elements,
            first.join("; ")
        )
    }
}

/// How many differing elements a [`BufferCheck`] lists.
pub const SHOWN_MISMATCHES: usize = 5;

/// Compares `actual` (the GPU's bytes) with `expected` (the simulator's) as elements of `elem`.
pub fn compare(
    name: &str,
    elem: Elem,
    expected: &[u8],
    actual: &[u8],
    tol: Tolerance,
) -> BufferCheck {
    let w = elem.bytes();
    let mut check = BufferCheck {
        name: name.to_string(),
        elements: expected.len() / w,
        differing: 0,
        first: vec![],
        problem: None,
    };
    if expected.len() != actual.len() || !expected.len().is_multiple_of(w) {
        check.problem = Some(format!(
            "sizes differ: simulator {} bytes, GPU {} bytes",
            expected.len(),
            actual.len()
        ));
        return check;
    }
    for (i, (e, a)) in expected
        .chunks_exact(w)
        .zip(actual.chunks_exact(w))
        .enumerate()
    {
        if !elem.agree(e, a, tol) {
            check.differing += 1;
            if check.first.len() < SHOWN_MISMATCHES {
                check.first.push(Mismatch {
                    index: i,
                    expected: elem.show(e),
                    actual: elem.show(a),
                });
            }
        }
    }
    check
}

/// Compares the output buffers of one launch: `expected` from the simulator, `actual` from the
/// GPU, each (name, bytes); `types` gives each buffer's element type (`i32`), from the workload.
pub fn check_launch(
    types: &[(String, String)],
    expected: &[(String, Vec<u8>)],
    actual: &[(String, Vec<u8>)],
    tol: Tolerance,
) -> Vec<BufferCheck> {
    expected
        .iter()
        .map(|(name, e)| {
            let ty = types
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.as_str());
            let elem = ty.and_then(Elem::parse).unwrap_or(Elem::U8);
            match actual.iter().find(|(n, _)| n == name) {
                Some((_, a)) => compare(name, elem, e, a, tol),
                None => BufferCheck {
                    name: name.clone(),
                    elements: e.len() / elem.bytes(),
                    differing: 0,
                    first: vec![],
                    problem: Some("not read back from the GPU".into()),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn integers_agree_bit_for_bit_and_mismatches_are_listed() {
        let tol = Tolerance::default();
        let c = compare("s", Elem::I32, &i32s(&[1, 2, 3]), &i32s(&[1, 2, 3]), tol);
        assert!(c.ok());
        assert_eq!(c.describe(), "s: 3 elements match");
        let e: Vec<i32> = (0..10).collect();
        let mut a = e.clone();
        for x in &mut a[2..9] {
            *x = -1;
        }
        let c = compare("s", Elem::I32, &i32s(&e), &i32s(&a), tol);
        assert_eq!((c.differing, c.first.len()), (7, SHOWN_MISMATCHES));
        assert_eq!(
            c.first[0],
            Mismatch {
                index: 2,
                expected: "2".into(),
                actual: "-1".into()
            }
        );
        assert!(c
            .describe()
            .starts_with("s: 7 of 10 elements differ: [2] expected 2, got -1; [3]"));
    }

    #[test]
    fn floats_agree_within_the_tolerance() {
        let tol = Tolerance::default();
        let e = f32s(&[1.0, 1000.0, 0.0, f32::NAN, f32::INFINITY]);
        let a = f32s(&[1.000_005, 1000.009, 5e-7, f32::NAN, f32::INFINITY]);
        assert!(compare("f", Elem::F32, &e, &a, tol).ok());
        let a = f32s(&[1.0001, 1000.0, 0.0, 0.0, f32::NEG_INFINITY]);
        let c = compare("f", Elem::F32, &e, &a, tol);
        assert_eq!(c.differing, 3);
        assert!(c.first[0].expected.starts_with("1e0 (0x3f800000)"));
    }

    #[test]
    fn size_differences_are_a_problem() {
        let c = compare("b", Elem::I64, &[0; 16], &[0; 8], Tolerance::default());
        assert!(!c.ok());
        assert!(c.describe().contains("sizes differ"));
    }

    #[test]
    fn a_launch_checks_each_output_by_its_type() {
        let types = vec![
            ("a".to_string(), "i32".to_string()),
            ("b".into(), "f32".into()),
        ];
        let e = vec![("a".to_string(), i32s(&[1, 2])), ("b".into(), f32s(&[1.0]))];
        let a = vec![
            ("a".to_string(), i32s(&[1, 3])),
            ("b".into(), f32s(&[1.000_001])),
        ];
        let c = check_launch(&types, &e, &a, Tolerance::default());
        assert_eq!((c[0].ok(), c[1].ok()), (false, true));
        let c = check_launch(&types, &e, &a[..1], Tolerance::default());
        assert!(c[1].describe().contains("not read back"));
    }

    #[test]
    fn every_workload_type_parses() {
        for (s, n) in [
            ("i8", 1),
            ("u16", 2),
            ("i32", 4),
            ("f32", 4),
            ("u64", 8),
            ("f64", 8),
        ] {
            assert_eq!(Elem::parse(s).unwrap().bytes(), n);
        }
        assert_eq!(Elem::parse("f16"), None);
        assert_eq!(Elem::I8.show(&[0xff]), "-1");
    }
}

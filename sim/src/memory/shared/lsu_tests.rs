//! [`lsu_wavefronts`] against the H200 probes of `tests/fixtures/vector_banks/` (Nsight Compute:
//! wavefronts and bank conflicts per instruction of one warp, each lane at word `f(lane)`).

use super::{lsu_wavefronts, Banks};
use crate::memory::WarpAccess;

const B: Banks = Banks {
    banks: 32,
    width: 4,
};

/// Wavefronts and conflicts of a whole warp of `bytes`-byte loads, lane `l` at word `f(l)`.
fn probe(bytes: u32, f: impl Fn(u64) -> u64) -> (u32, u32) {
    let a = WarpAccess::from_fn(bytes, |l| 0x100 + f(l) * u64::from(bytes));
    let w = lsu_wavefronts(&a, B, None, None);
    (w.wavefronts, w.conflicts())
}

#[test]
fn lds128_probe1() {
    assert_eq!(probe(16, |_| 0), (2, 0));
    assert_eq!(probe(16, |l| (l / 16) * 4), (2, 0));
    assert_eq!(probe(16, |l| l % 16), (4, 0));
    assert_eq!(probe(16, |l| l), (4, 0));
    assert_eq!(probe(16, |l| l / 8), (2, 0));
    assert_eq!(probe(16, |l| (l / 8) * 8), (4, 2));
    assert_eq!(probe(16, |l| l % 8), (4, 0));
    assert_eq!(probe(16, |l| (l & 1) * 8), (4, 2));
}

#[test]
fn lds128_probe2() {
    assert_eq!(probe(16, |l| l / 4).0, 2);
    assert_eq!(probe(16, |l| l % 4).0, 4);
    assert_eq!(probe(16, |l| (l % 16) / 6).0, 2);
    assert_eq!(probe(16, |l| (l % 16) / 2).0, 2);
    assert_eq!(probe(16, |l| (l % 16) / 3).0, 4);
    assert_eq!(probe(16, |l| (l % 16) / 4).0, 2);
    assert_eq!(probe(16, |l| l % 2).0, 2);
    assert_eq!(probe(16, |l| (l % 16) / 8 * 4 + l % 2).0, 2);
}

#[test]
fn lds64_probes() {
    assert_eq!(probe(8, |_| 0), (1, 0));
    assert_eq!(probe(8, |l| (l / 16) * 8), (1, 0));
    assert_eq!(probe(8, |l| l % 16), (2, 0));
    assert_eq!(probe(8, |l| l), (2, 0));
    assert_eq!(probe(8, |l| l / 4), (1, 0));
    assert_eq!(probe(8, |l| l % 4), (2, 0));
    assert_eq!(probe(8, |l| l / 8), (1, 0));
    assert_eq!(probe(8, |l| l % 8), (2, 0));
}

#[test]
fn other_sizes_and_banks_keep_the_general_rule() {
    let a = WarpAccess::from_fn(16, |_| 0x100);
    let k8 = Banks {
        banks: 32,
        width: 8,
    };
    assert_eq!(
        lsu_wavefronts(&a, k8, None, None),
        super::wavefronts(&a, k8)
    );
    let a4 = WarpAccess::from_fn(4, |l| l * 128);
    assert_eq!(lsu_wavefronts(&a4, B, None, None).wavefronts, 32);
}

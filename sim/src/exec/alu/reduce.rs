//! The values of atomics and reductions: what an `atom`/`red` stores ([`atom_apply`]),
//! `redux.sync` over a warp's lanes ([`redux`]) and `bar.red` over a block's threads
//! ([`bar_red`]).

use super::{f32_of, f64_of, from_f32, sext, trunc};
use crate::ptx::ast::Type;
use crate::ptx::inst::{AtomKind, BarRedOp, ReduxOp};

/// The value an `atom`/`red` of `kind` stores, given the `old` value in memory and the operands
/// `b` (and `c` for `cas`): PTX ISA §9.7.13.5's `operation(*a, b[, c])`. `flush_f32` flushes
/// subnormal inputs and results of `.add.f32` to sign-preserving zero, as atomics on global memory
/// do; shared-memory atomics keep subnormals.
pub fn atom_apply(kind: AtomKind, ty: Type, flush_f32: bool, old: u64, b: u64, c: u64) -> u64 {
    let n = ty.bits();
    let (o, v) = (trunc(old, n), trunc(b, n));
    let r = match kind {
        AtomKind::And => o & v,
        AtomKind::Or => o | v,
        AtomKind::Xor => o ^ v,
        AtomKind::Exch => v,
        AtomKind::Cas => {
            if o == v {
                c
            } else {
                o
            }
        }
        AtomKind::Inc => {
            if o >= v {
                0
            } else {
                o + 1
            }
        }
        AtomKind::Dec => {
            if o == 0 || o > v {
                v
            } else {
                o - 1
            }
        }
        AtomKind::Add => match ty {
            Type::F32 => {
                let flush = |x: f32| {
                    if flush_f32 && x.is_subnormal() {
                        0.0f32.copysign(x)
                    } else {
                        x
                    }
                };
                from_f32(flush(flush(f32_of(o)) + flush(f32_of(v))))
            }
            Type::F64 => (f64_of(o) + f64_of(v)).to_bits(),
            _ => o.wrapping_add(v),
        },
        AtomKind::Min | AtomKind::Max => {
            let less = if ty.is_signed() {
                sext(o, n) < sext(v, n)
            } else {
                o < v
            };
            if less == (kind == AtomKind::Min) {
                o
            } else {
                v
            }
        }
    };
    trunc(r, n)
}

/// `redux.sync.op.type` over the values of the lanes in `vals` (PTX ISA §9.7.13.11).
pub fn redux(op: ReduxOp, ty: Type, vals: impl Iterator<Item = u64>) -> u64 {
    let signed = ty.is_signed();
    let mut acc: Option<u64> = None;
    for v in vals.map(|v| trunc(v, 32)) {
        acc = Some(match acc {
            None => v,
            Some(x) => match op {
                ReduxOp::Add => trunc(x.wrapping_add(v), 32),
                ReduxOp::And => x & v,
                ReduxOp::Or => x | v,
                ReduxOp::Xor => x ^ v,
                ReduxOp::Min | ReduxOp::Max => {
                    let less = if signed {
                        sext(x, 32) < sext(v, 32)
                    } else {
                        x < v
                    };
                    if less == (op == ReduxOp::Min) {
                        x
                    } else {
                        v
                    }
                }
            },
        });
    }
    acc.unwrap_or(0)
}

/// `bar.red` over the predicates of the threads that arrived: the number true (`.popc`), or
/// whether all (`.and`) or any (`.or`) are.
pub fn bar_red(op: BarRedOp, true_threads: u64, threads: u64) -> u64 {
    match op {
        BarRedOp::Popc => true_threads,
        BarRedOp::And => u64::from(true_threads == threads),
        BarRedOp::Or => u64::from(true_threads > 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_operations_store_what_the_ptx_isa_says() {
        use Type::*;
        let ap = |k, ty, old: u64, v: u64, c: u64| atom_apply(k, ty, true, old, v, c);
        assert_eq!(ap(AtomKind::Add, U32, 0xFFFF_FFFF, 2, 0), 1);
        assert_eq!(ap(AtomKind::Inc, U32, 5, 5, 0), 0);
        assert_eq!(ap(AtomKind::Inc, U32, 3, 5, 0), 4);
        assert_eq!(ap(AtomKind::Dec, U32, 0, 5, 0), 5);
        assert_eq!(ap(AtomKind::Dec, U32, 7, 5, 0), 5);
        assert_eq!(ap(AtomKind::Dec, U32, 3, 5, 0), 2);
        assert_eq!(ap(AtomKind::Cas, B32, 4, 4, 9), 9);
        assert_eq!(ap(AtomKind::Cas, B32, 4, 5, 9), 4);
        assert_eq!(ap(AtomKind::Cas, B64, 1 << 40, 1 << 40, 7), 7);
        assert_eq!(ap(AtomKind::Exch, B32, 4, 8, 0), 8);
        assert_eq!(ap(AtomKind::Min, S32, 0xFFFF_FFFF, 3, 0), 0xFFFF_FFFF);
        assert_eq!(ap(AtomKind::Min, U32, 0xFFFF_FFFF, 3, 0), 3);
        assert_eq!(ap(AtomKind::Max, S64, 5, u64::MAX, 0), 5);
        assert_eq!(ap(AtomKind::And, B64, 0xFF00, 0x0FF0, 0), 0x0F00);
        assert_eq!(ap(AtomKind::Or, B32, 0xFF00, 0x0FF0, 0), 0xFFF0);
        assert_eq!(ap(AtomKind::Xor, B32, 0xFF00, 0x0FF0, 0), 0xF0F0);
        assert_eq!(ap(AtomKind::Add, U64, u64::MAX, 1, 0), 0);
        let sub = u64::from(f32::from_bits(1).to_bits());
        // Global atom.add.f32 flushes subnormals to zero; shared keeps them.
        assert_eq!(atom_apply(AtomKind::Add, F32, true, sub, 0, 0), 0);
        assert_eq!(atom_apply(AtomKind::Add, F32, false, sub, 0, 0), sub);
        assert_eq!(
            ap(AtomKind::Add, F32, from_f32(1.5), from_f32(2.25), 0),
            from_f32(3.75)
        );
        assert_eq!(
            ap(AtomKind::Add, F64, 0.5f64.to_bits(), 0.25f64.to_bits(), 0),
            0.75f64.to_bits()
        );
    }

    #[test]
    fn warp_and_block_reductions() {
        assert_eq!(redux(ReduxOp::Add, Type::U32, 1..=32), 528);
        assert_eq!(
            redux(ReduxOp::Min, Type::S32, [4, 0xFFFF_FFFD, 7].into_iter()),
            0xFFFF_FFFD
        );
        assert_eq!(
            redux(ReduxOp::Min, Type::U32, [4, 0xFFFF_FFFD, 7].into_iter()),
            4
        );
        assert_eq!(redux(ReduxOp::Xor, Type::B32, [1, 2, 3].into_iter()), 0);
        assert_eq!(bar_red(BarRedOp::Popc, 5, 8), 5);
        assert_eq!(bar_red(BarRedOp::And, 8, 8), 1);
        assert_eq!(bar_red(BarRedOp::And, 7, 8), 0);
        assert_eq!(bar_red(BarRedOp::Or, 0, 8), 0);
    }
}

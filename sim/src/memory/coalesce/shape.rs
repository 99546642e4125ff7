//! The shape of a warp's addresses ([`Shape`]): a run of consecutive elements, equal steps, a
//! stride, the span; and what follows from it in closed form (a run's sectors, the distinct
//! sectors of equally spaced lanes).

use super::{all_zero, straddles};
use crate::memory::WarpAccess;

/// What one pass over a warp's addresses finds besides them (the executor's address pass, or
/// [`Shape::of`]): whether the lanes are equally spaced. It answers [`run`], [`stride`] and the
/// alignment check, and gives the sector and bank models their closed forms, without another
/// pass over the lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// `(a0, d)` when every lane is active and lane `l` is at `a0 + l * d`, with `a0 + 31 * d`
    /// below the top of the address space (no wrap); `d` may be 0 (one address for the warp).
    pub step: Option<(u64, u64)>,
}

impl Shape {
    /// The shape of the lanes of `mask` at `addrs` (inactive lanes' addresses ignored).
    #[inline]
    pub fn of(mask: u32, addrs: &[u64; 32]) -> Shape {
        let step = if mask == u32::MAX {
            let d = addrs[1].wrapping_sub(addrs[0]);
            step_of(addrs[0], d, steps_off(addrs, d))
        } else {
            None
        };
        Shape { step }
    }

    /// A value with the fewest trailing zeros of any address in `addrs` (the access's, whose
    /// shape this is, inactive lanes 0): the lanes' common alignment. Equally spaced lanes' is
    /// `a0 | d` (lane 0 is `a0`, and with `a0` and `d` multiples of `2^k` so is every lane),
    /// found without a pass; others' the OR of every lane.
    #[inline(always)]
    pub fn alignment(&self, addrs: &[u64; 32]) -> u64 {
        match self.step {
            Some((a0, d)) => a0 | d,
            None => addrs.iter().fold(0, |acc, &x| acc | x),
        }
    }

    /// [`run`] of the access with `bytes` a lane: its lane 0's address when the lanes are
    /// consecutive elements.
    #[inline]
    pub fn run(&self, bytes: u32) -> Option<u64> {
        let (a0, d) = self.step?;
        let b = u64::from(bytes.max(1));
        // Equal steps of `b` from `a0` with `a0 + 32 * b` in range: `run`'s test, exactly.
        (d == b && a0.checked_add(32 * b).is_some()).then_some(a0)
    }

    /// [`stride`] of the access: the step, when it is not 0.
    #[inline]
    pub fn stride(&self) -> Option<u64> {
        self.step.and_then(|(_, d)| (d != 0).then_some(d))
    }
}

/// A whole warp's addresses, `base[l] + off` (wrapping) for every lane, into `out`, and their
/// [`Shape`]: two passes of a few vector instructions each (the adds, and the steps of `base`,
/// which are the addresses': the offset cancels). An OR of the addresses here as well (for the
/// alignment) was compiled lane by lane, in any form tried: about 190 instructions a warp
/// instead of about 85.
#[inline]
pub fn offset_shape(base: &[u64; 32], off: u64, out: &mut [u64; 32]) -> Shape {
    let d = base[1].wrapping_sub(base[0]);
    *out = std::array::from_fn(|l| base[l].wrapping_add(off));
    Shape {
        step: step_of(base[0].wrapping_add(off), d, steps_off(base, d)),
    }
}

/// The OR of a whole warp's steps' differences from `d` (each lane's address less the one
/// before it, wrapping): zero when every step is `d`. No early exit, so that the loop is a few
/// vector instructions. (Compared instead with running values `addrs[0] + l * d`, four to a
/// register or as products, LLVM built more shuffles or emulated the 64-bit multiplies: 1M
/// instructions more on transpose_smem.)
#[inline(always)]
pub fn steps_off(addrs: &[u64; 32], d: u64) -> u64 {
    (addrs[1..].iter().zip(&addrs[..31])).fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ d))
}

/// [`Shape::step`] of a whole warp from lane 0's address `a0`, the step `d` from lane 0 to
/// lane 1, and [`steps_off`]`(addrs, d)`: equal steps that do not wrap past the top (with the
/// ends in range, equal wrapping steps are exact).
#[inline(always)]
pub fn step_of(a0: u64, d: u64, odd: u64) -> Option<(u64, u64)> {
    let top = d.checked_mul(31).and_then(|x| a0.checked_add(x));
    (all_zero(odd) && top.is_some()).then_some((a0, d))
}

/// The distinct sectors (of `1 << shift` bytes) of an access of `bytes` a lane whose lanes are
/// equally spaced (`step`, its [`Shape::step`]) at most a sector apart, as a run: the first
/// sector's byte address and the count. A gap between two lanes' bytes is then shorter than a
/// sector, so every sector from lane 0's first byte to lane 31's last is touched. `None` for
/// lanes further apart, or a last byte past the top of the address space.
#[inline]
pub fn sector_run(bytes: u32, (a0, d): (u64, u64), shift: u32) -> Option<(u64, u32)> {
    if d > 1 << shift {
        return None;
    }
    // `a0 + 31 * d` does not wrap (`step`).
    let end = (a0 + 31 * d).checked_add(u64::from(bytes.max(1)) - 1)?;
    let (first, last) = (a0 >> shift, end >> shift);
    Some((first << shift, u32::try_from(last - first + 1).ok()?))
}

/// The distinct sectors (of `1 << shift` bytes) of `access`, whose lanes are equally spaced
/// (`step`, its [`Shape::step`]), ascending, into `out` in closed form; returns their number.
/// `None` (`out` unspecified) where the closed form does not apply: more than 32 sectors, a step
/// of a sector or more with a lane straddling two, a last lane's bytes past the top.
#[inline]
pub fn stepped_sectors(
    access: &WarpAccess,
    (a0, d): (u64, u64),
    shift: u32,
    out: &mut [u64; 32],
) -> Option<usize> {
    let last_byte = u64::from(access.bytes.max(1)) - 1;
    if d >> shift == 0 {
        // Lanes less than a sector apart (a run of elements, a broadcast, a small stride): a gap
        // between two lanes' bytes is shorter than a sector, so every sector from lane 0's first
        // byte to lane 31's last is touched. `a0 + 31 * d` does not wrap (`step`).
        let end = (a0 + 31 * d).checked_add(last_byte)?;
        let (first, last) = (a0 >> shift, end >> shift);
        let n = usize::try_from(last - first).ok()?.checked_add(1)?;
        if n > out.len() {
            return None;
        }
        for (k, o) in out[..n].iter_mut().enumerate() {
            *o = (first + k as u64) << shift;
        }
        return Some(n);
    }
    // A sector or more apart: one sector a lane, distinct and ascending, unless a lane straddles
    // two. A step of whole sectors puts every lane at lane 0's offset in its sector, which then
    // answers for all (a lane whose bytes stay in its sector cannot pass the top).
    let sector = 1u64 << shift;
    let straddling = if d & (sector - 1) == 0 {
        ((a0 & (sector - 1)) + last_byte) >> shift != 0
    } else {
        straddles(u32::MAX, &access.addrs, last_byte, shift)
    };
    if straddling {
        return None;
    }
    *out = std::array::from_fn(|l| access.addrs[l] >> shift << shift);
    Some(32)
}

/// The step `d` when every lane of `mask` is active and lane `l` is at `addrs[0] + l * d` (no
/// wrap past the top of the address space), `d` positive.
#[inline]
pub fn stride(mask: u32, addrs: &[u64; 32]) -> Option<u64> {
    let (a0, d) = (addrs[0], addrs[1].wrapping_sub(addrs[0]));
    // Lane 31 first: most scattered accesses fail there.
    if mask != u32::MAX || d == 0 || addrs[31] != a0.checked_add(d.checked_mul(31)?)? {
        return None;
    }
    // Every step `d` (no early exit, so the loop is a few vector instructions). With the ends
    // in place, equal steps cannot wrap.
    let odd = (addrs[1..].iter().zip(&addrs[..31]))
        .fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ d));
    all_zero(odd).then_some(d)
}

/// The lowest and highest address of the lanes of `mask` (`(u64::MAX, 0)` for none). Every lane
/// is visited, the inactive ones masked out, so that the loop is a few vector instructions.
#[inline]
pub fn span(mask: u32, addrs: &[u64; 32]) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for (l, &a) in addrs.iter().enumerate() {
        let on = mask >> l & 1 == 1;
        lo = lo.min(if on { a } else { u64::MAX });
        hi = hi.max(if on { a } else { 0 });
    }
    (lo, hi)
}

/// The address of lane 0 when every lane is active and lane `l` accesses `bytes` at
/// `a0 + l * bytes` (consecutive elements, no gap, no overflow past the last byte).
#[inline]
pub fn contiguous(access: &WarpAccess) -> Option<u64> {
    run(access.mask, &access.addrs, access.bytes)
}

/// [`contiguous`] for the lanes of `mask` at `addrs`, `bytes` each: the address of lane 0 when
/// every lane is active and lane `l` accesses `a0 + l * bytes`.
#[inline]
pub fn run(mask: u32, addrs: &[u64; 32], bytes: u32) -> Option<u64> {
    if mask != u32::MAX {
        return None;
    }
    let a0 = addrs[0];
    let b = u64::from(bytes.max(1));
    a0.checked_add(32 * b)?;
    // The last lane first: most other accesses fail there.
    if addrs[31] != a0 + 31 * b {
        return None;
    }
    // Every step `b` (exact: the run ends before overflowing). No early exit, so that the loop
    // is a few vector instructions rather than a compare and branch per lane.
    let odd = (addrs[1..].iter().zip(&addrs[..31]))
        .fold(0, |acc, (&n, &p)| acc | (n.wrapping_sub(p) ^ b));
    all_zero(odd).then_some(a0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::coalesce::tests::reference;

    #[test]
    fn runs_are_consecutive_elements_of_a_full_warp() {
        let naive = |a: &WarpAccess| {
            let b = u64::from(a.bytes.max(1));
            (a.mask == u32::MAX
                && a.addrs[0].checked_add(32 * b).is_some()
                && (0..32).all(|l| a.addrs[l] == a.addrs[0] + l as u64 * b))
            .then_some(a.addrs[0])
        };
        let mut cases = vec![
            WarpAccess::from_fn(4, |l| 0x1000 + 4 * l),
            WarpAccess::from_fn(8, |l| 0x1000 + 8 * l),
            WarpAccess::from_fn(4, |l| 0x1000 + 8 * l),
            WarpAccess::from_fn(4, |_| 0x1000),
            WarpAccess::from_fn(4, |l| u64::MAX - 200 + 4 * l),
            WarpAccess::from_fn(4, |l| u64::MAX - 127 + 4 * l),
            WarpAccess::from_fn(4, |l| (u64::MAX - 60).wrapping_add(4 * l)),
        ];
        let mut one_off = WarpAccess::from_fn(4, |l| 0x1000 + 4 * l);
        one_off.addrs[17] += 1;
        cases.push(one_off);
        let mut partial = WarpAccess::from_fn(4, |l| 0x1000 + 4 * l);
        partial.mask = u32::MAX >> 1;
        cases.push(partial);
        for a in &cases {
            assert_eq!(contiguous(a), naive(a), "{:x?}", a.addrs);
        }
        assert_eq!(contiguous(&cases[0]), Some(0x1000));
    }

    #[test]
    fn shapes_answer_run_stride_and_the_sectors_of_equal_steps() {
        // Equally spaced lanes of every element size (runs, broadcasts, steps below, at and
        // above a sector, of whole sectors or not, lanes straddling, wrapping and ending at the
        // top), bent ones and partial masks: `Shape` agrees with `run` and `stride`, and the
        // closed-form sectors, where they answer, with `sectors`.
        let mut x = 29u64;
        let mut rand = move || {
            x = crate::testing::lcg(x);
            x >> 16
        };
        let (mut closed, mut runs, mut cases) = (0, 0, 0);
        let steps = [
            0u64, 1, 2, 4, 8, 12, 16, 24, 31, 32, 33, 40, 64, 96, 128, 132, 4096,
        ];
        for bytes in [1u32, 2, 4, 8, 16] {
            for base in [
                0u64,
                0x1000,
                0x101c,
                0x7f00_0000_0ff4,
                u64::MAX - 5000,
                u64::MAX - 40,
            ] {
                for d in steps.iter().copied().chain([u64::MAX - 31, 1 << 62]) {
                    for bend in 0..3 {
                        let mut a =
                            WarpAccess::from_fn(bytes, |l| base.wrapping_add(d.wrapping_mul(l)));
                        match bend {
                            1 => a.addrs[(rand() % 32) as usize] ^= 1 << (rand() % 12),
                            2 => a.mask = rand() as u32,
                            _ => {}
                        }
                        let shape = Shape::of(a.mask, &a.addrs);
                        if a.mask == u32::MAX {
                            // The executor's pass: from a base row and an offset.
                            let off = (rand() << 20) | (rand() % 64);
                            let base = a.addrs.map(|v| v.wrapping_sub(off));
                            let mut out = [0; 32];
                            assert_eq!(offset_shape(&base, off, &mut out), shape, "{a:x?}");
                            assert_eq!(out, a.addrs);
                        }
                        assert_eq!(shape.run(bytes), run(a.mask, &a.addrs, bytes), "{a:x?}");
                        assert_eq!(shape.stride(), stride(a.mask, &a.addrs), "{a:x?}");
                        // The alignment: the fewest trailing zeros of any active lane.
                        let mut zeroed = a.addrs;
                        for (l, v) in zeroed.iter_mut().enumerate() {
                            if a.mask >> l & 1 == 0 {
                                *v = 0;
                            }
                        }
                        let fewest = a.lanes().map(|(_, v)| v.trailing_zeros()).min();
                        let align = shape.alignment(&zeroed);
                        assert_eq!(align.trailing_zeros(), fewest.unwrap_or(64), "{a:x?}");
                        cases += 1;
                        let Some(st) = shape.step else { continue };
                        for sb in [32u32, 128, 1] {
                            let mut out = [7u64; 32];
                            if a.addrs.iter().any(|&v| v.checked_add(16).is_none()) {
                                // The reference saturates at the top; the closed form declines.
                                if let Some(n) =
                                    stepped_sectors(&a, st, sb.trailing_zeros(), &mut out)
                                {
                                    assert_eq!(out[..n].to_vec(), reference(&a, sb), "{a:x?}");
                                }
                                continue;
                            }
                            if let Some(n) = stepped_sectors(&a, st, sb.trailing_zeros(), &mut out)
                            {
                                assert_eq!(out[..n].to_vec(), reference(&a, sb), "{a:x?} {sb}");
                                closed += 1;
                            }
                            // The run form, where it applies (lanes at most a sector apart).
                            if let Some((first, n)) = sector_run(a.bytes, st, sb.trailing_zeros()) {
                                let s = u64::from(sb);
                                let run: Vec<u64> =
                                    (0..u64::from(n)).map(|k| first + k * s).collect();
                                assert_eq!(run, reference(&a, sb), "{a:x?} {sb}");
                                runs += 1;
                            } else {
                                assert!(st.1 > u64::from(sb), "{a:x?} {sb}");
                            }
                        }
                    }
                }
            }
        }
        assert!(closed * 2 > cases, "{closed} of {cases}");
        assert!(runs * 4 > cases, "{runs} runs of {cases}");
    }

    #[test]
    fn steps_off_is_zero_exactly_when_every_step_is_the_first() {
        // Against the differences of neighbours one by one: equal steps (wrapping past the top
        // too) and ones bent at a random lane by a random amount.
        let mut x = 7u64;
        let mut rand = move || {
            x = crate::testing::lcg(x);
            x >> 11
        };
        for case in 0..20_000 {
            let (a0, d) = match case % 4 {
                0 => (rand(), rand() % 300),
                1 => (u64::MAX - rand() % 5000, rand() % 300),
                2 => (rand(), rand().wrapping_neg()),
                _ => (rand() << 11, rand() << 11),
            };
            let mut addrs: [u64; 32] =
                std::array::from_fn(|l| a0.wrapping_add(d.wrapping_mul(l as u64)));
            if case % 3 != 0 {
                let bend = if case % 2 == 0 { 1 } else { rand() | 1 };
                addrs[(rand() % 32) as usize] ^= bend << (rand() % 64);
            }
            let d = addrs[1].wrapping_sub(addrs[0]);
            let equal = (1..32).all(|l| addrs[l].wrapping_sub(addrs[l - 1]) == d);
            assert_eq!(steps_off(&addrs, d) == 0, equal, "{addrs:x?}");
        }
    }
}

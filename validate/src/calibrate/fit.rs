//! The arithmetic of `validate calibrate`, pure and exact: a straight-line fit (the cost of each
//! extra constant address, of each shared-memory wavefront), cache levels from a latency curve
//! (the constant caches' sizes and latencies), cache sizes the config accepts, per-SM rates from
//! per-block clock readings, unit conversions (clock, bandwidth) and the date of a run.

use serde::Serialize;

/// A straight line `y = intercept + slope * x` fitted by least squares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Line {
    /// dy/dx.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Coefficient of determination, 1 for points on the line (1 as well when every y is equal).
    pub r2: f64,
}

/// The least-squares line through `points` (x, y); `None` with fewer than two distinct x.
pub fn linear(points: &[(f64, f64)]) -> Option<Line> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let residual: f64 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let r2 = if syy == 0.0 {
        1.0
    } else {
        1.0 - residual / syy
    };
    Some(Line {
        slope,
        intercept,
        r2,
    })
}

/// The median of `values`, NaNs left out ([`crate::stats::median`]).
pub use crate::stats::median;

/// A plateau of a latency-versus-working-set curve: one cache level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    /// The smallest working set on the plateau, in bytes.
    pub first_bytes: f64,
    /// The largest working set on the plateau: the level holds at least this much.
    pub last_bytes: f64,
    /// The next working set measured, where the latency had left the plateau: the level holds
    /// less than this. `None` when the plateau runs to the end of the sweep (size not resolved).
    pub next_bytes: Option<f64>,
    /// The median latency on the plateau.
    pub latency: f64,
    /// Points on the plateau.
    pub points: usize,
}

/// Relative tolerance of a plateau: a point within 15% (or [`LEVEL_ABS`] cycles) of the median of
/// the points before it on the plateau stays on it.
pub const LEVEL_REL: f64 = 0.15;
/// Absolute tolerance of a plateau, in the curve's unit (cycles).
pub const LEVEL_ABS: f64 = 3.0;

/// The cache levels of a latency curve `points` (working-set bytes, latency), sorted by working set.
///
/// Consecutive points are grouped while each stays within [`LEVEL_REL`] (or [`LEVEL_ABS`]) of the
/// median of its group so far. Groups of two or more points are plateaus (levels); so are the first
/// and the last group whatever their size (the sweep's ends). A single point between two plateaus
/// is a transition (a working set that partly fits) and belongs to no level.
pub fn levels(points: &[(f64, f64)]) -> Vec<Level> {
    let mut sorted: Vec<(f64, f64)> = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut groups: Vec<Vec<(f64, f64)>> = vec![];
    for p in sorted {
        let joins = groups.last().is_some_and(|g| {
            let m = median(&g.iter().map(|q| q.1).collect::<Vec<_>>()).unwrap_or(p.1);
            (p.1 - m).abs() <= (LEVEL_REL * m.abs()).max(LEVEL_ABS)
        });
        match groups.last_mut() {
            Some(g) if joins => g.push(p),
            _ => groups.push(vec![p]),
        }
    }
    let count = groups.len();
    let mut out = vec![];
    for (i, g) in groups.iter().enumerate() {
        if g.len() < 2 && i != 0 && i + 1 != count {
            continue;
        }
        let latencies: Vec<f64> = g.iter().map(|q| q.1).collect();
        out.push(Level {
            first_bytes: g[0].0,
            last_bytes: g[g.len() - 1].0,
            next_bytes: groups.get(i + 1).map(|n| n[0].0),
            latency: median(&latencies).unwrap_or(f64::NAN),
            points: g.len(),
        });
    }
    out
}

/// The largest cache size of at most `bytes` that the config accepts for `line_bytes` lines and
/// `associativity` ways: `line * ways * 2^k` (a power-of-two number of sets); `None` when even one
/// set does not fit.
pub fn cache_size(bytes: f64, line_bytes: u64, associativity: u64) -> Option<u64> {
    let set = line_bytes.checked_mul(associativity)?;
    if set == 0 || bytes.is_nan() || bytes < set as f64 {
        return None;
    }
    let mut size = set;
    while ((size * 2) as f64) <= bytes {
        size *= 2;
    }
    Some(size)
}

/// Greatest common divisor.
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A step through `n` elements that visits each once per cycle (coprime with `n`), near the golden
/// section of `n` so that consecutive elements of a pointer chain lie far apart: the chain defeats
/// prefetching and row-buffer locality. 1 for `n <= 2`.
pub fn coprime_step(n: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut step = ((n as f64) * 0.618_033_988_75).round().max(1.0) as u64;
    while gcd(step, n) != 1 {
        step += 1;
    }
    step
}

/// One block's clock readings: the SM it ran on, its first clock and its cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTime {
    /// `%smid`.
    pub sm: u32,
    /// clock64 at the block's start.
    pub start: u64,
    /// Cycles from start to end.
    pub cycles: u64,
}

/// Work per cycle of each SM that ran blocks, sorted by SM: the blocks' work over the span from the
/// first start to the last end on that SM (blocks sharing an SM share its throughput).
pub fn per_sm_rates(blocks: &[BlockTime], work_per_block: f64) -> Vec<f64> {
    let mut sms: Vec<u32> = blocks.iter().map(|b| b.sm).collect();
    sms.sort_unstable();
    sms.dedup();
    sms.iter()
        .filter_map(|&sm| {
            let on: Vec<&BlockTime> = blocks.iter().filter(|b| b.sm == sm).collect();
            let start = on.iter().map(|b| b.start).min()?;
            let end = on.iter().map(|b| b.start + b.cycles).max()?;
            (end > start).then(|| work_per_block * on.len() as f64 / (end - start) as f64)
        })
        .collect()
}

/// The SM clock in MHz from two spin launches: `c1` and `c2` cycles taking `ms1` and `ms2`
/// milliseconds of event time. The difference cancels the launch overhead both contain.
pub fn clock_mhz(c1: f64, ms1: f64, c2: f64, ms2: f64) -> Option<f64> {
    (ms2 > ms1 && c2 > c1).then(|| (c2 - c1) / ((ms2 - ms1) * 1e3))
}

/// Bandwidth in GB/s (1e9 bytes per second) of `bytes` moved in `ms` milliseconds.
pub fn gb_per_s(bytes: f64, ms: f64) -> f64 {
    bytes / ms / 1e6
}

/// Bytes per SM clock cycle of `bytes` moved in `ms` milliseconds at `mhz`.
pub fn bytes_per_cycle(bytes: f64, ms: f64, mhz: f64) -> f64 {
    bytes / (ms * mhz * 1e3)
}

/// Nanoseconds of `cycles` at `mhz`.
pub fn cycles_to_ns(cycles: f64, mhz: f64) -> f64 {
    cycles * 1e3 / mhz
}

/// The UTC date `YYYY-MM-DD` of `unix_seconds` (proleptic Gregorian calendar).
pub fn date(unix_seconds: u64) -> String {
    crate::report::format_utc(unix_seconds, "%Y-%m-%d")
}

/// Today's UTC date.
pub fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_exact_points() {
        // Constant-cache cost: 2 + 0.5 cycles per distinct address.
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&d| (d, 2.0 + 0.5 * d))
            .collect();
        let l = linear(&pts).unwrap();
        assert_eq!((l.slope, l.intercept, l.r2), (0.5, 2.0, 1.0));
        // Least squares: (0,0), (1,1), (2,1), (3,2): slope 0.6, intercept 0.1, R² = 0.9.
        let l = linear(&[(0.0, 0.0), (1.0, 1.0), (2.0, 1.0), (3.0, 2.0)]).unwrap();
        assert!((l.slope - 0.6).abs() < 1e-12 && (l.intercept - 0.1).abs() < 1e-12);
        assert!((l.r2 - 0.9).abs() < 1e-12, "{}", l.r2);
        assert_eq!(linear(&[(1.0, 1.0)]), None);
        assert_eq!(linear(&[(1.0, 1.0), (1.0, 2.0)]), None);
        let flat = linear(&[(1.0, 3.0), (2.0, 3.0)]).unwrap();
        assert_eq!((flat.slope, flat.intercept, flat.r2), (0.0, 3.0, 1.0));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    fn kib(k: f64) -> f64 {
        k * 1024.0
    }

    #[test]
    fn a_sharp_step_gives_two_levels_and_the_size_between_them() {
        // H100-like constant caches: 17 cycles up to 2 KiB, 106 beyond, no second step by 64 KiB.
        let pts: Vec<(f64, f64)> = [
            0.5, 1.0, 1.5, 2.0, 2.25, 2.5, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0,
        ]
        .iter()
        .map(|&k| (kib(k), if k <= 2.0 { 17.0 } else { 106.0 }))
        .collect();
        let l = levels(&pts);
        assert_eq!(
            l,
            vec![
                Level {
                    first_bytes: 512.0,
                    last_bytes: 2048.0,
                    next_bytes: Some(2304.0),
                    latency: 17.0,
                    points: 4
                },
                Level {
                    first_bytes: 2304.0,
                    last_bytes: 65536.0,
                    next_bytes: None,
                    latency: 106.0,
                    points: 8
                },
            ]
        );
    }

    #[test]
    fn a_ramp_point_belongs_to_no_level_and_noise_stays_on_its_plateau() {
        let pts = [
            (kib(1.0), 20.0),
            (kib(2.0), 21.0),
            (kib(4.0), 60.0), // partly fits: a transition
            (kib(8.0), 100.0),
            (kib(16.0), 104.0),
            (kib(32.0), 108.0),
            (kib(48.0), 250.0), // the next level, one point at the sweep's end
        ];
        let l = levels(&pts);
        assert_eq!(l.len(), 3, "{l:?}");
        assert_eq!(
            (l[0].last_bytes, l[0].next_bytes),
            (kib(2.0), Some(kib(4.0)))
        );
        assert_eq!(l[0].latency, 20.5);
        assert_eq!((l[1].first_bytes, l[1].last_bytes), (kib(8.0), kib(32.0)));
        assert_eq!((l[1].latency, l[1].next_bytes), (104.0, Some(kib(48.0))));
        assert_eq!(
            (l[2].points, l[2].next_bytes, l[2].latency),
            (1, None, 250.0)
        );
        // Input order does not matter; a flat curve is one unresolved level.
        let mut rev = pts.to_vec();
        rev.reverse();
        assert_eq!(levels(&rev), l);
        let flat = levels(&[(1.0, 5.0), (2.0, 6.0), (3.0, 5.5)]);
        assert_eq!(flat.len(), 1);
        assert_eq!((flat[0].next_bytes, flat[0].latency), (None, 5.5));
        assert!(levels(&[]).is_empty());
    }

    #[test]
    fn cache_sizes_the_config_accepts() {
        // 64 B lines, 4 ways: sets of 256 B, a power of two of them.
        assert_eq!(cache_size(2048.0, 64, 4), Some(2048));
        assert_eq!(cache_size(2112.0, 64, 4), Some(2048));
        assert_eq!(cache_size(3000.0, 64, 4), Some(2048));
        assert_eq!(cache_size(4096.0, 64, 4), Some(4096));
        assert_eq!(cache_size(256.0, 64, 4), Some(256));
        assert_eq!(cache_size(255.0, 64, 4), None);
        assert_eq!(cache_size(f64::NAN, 64, 4), None);
        assert_eq!(cache_size(49152.0, 256, 4), Some(32768));
    }

    #[test]
    fn steps_are_coprime_and_visit_every_element() {
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(7, 0), 7);
        assert_eq!(coprime_step(1), 1);
        assert_eq!(coprime_step(2), 1);
        assert_eq!(coprime_step(64), 41); // 0.618 * 64 = 39.6 -> 40 (even) -> 41
        assert_eq!(coprime_step(4096), 2531);
        for n in [3u64, 10, 64, 100, 4096, 65536] {
            let s = coprime_step(n);
            let mut seen = vec![false; n as usize];
            for j in 0..n {
                seen[((j * s) % n) as usize] = true;
            }
            assert!(seen.iter().all(|&v| v), "n={n} step={s}");
        }
    }

    #[test]
    fn per_sm_rates_share_an_sm_between_its_blocks() {
        let blocks = [
            BlockTime {
                sm: 3,
                start: 100,
                cycles: 1000,
            },
            BlockTime {
                sm: 0,
                start: 0,
                cycles: 500,
            },
            // Two blocks on SM 1 overlapping: 2 x 1000 bytes over cycles 0..2000.
            BlockTime {
                sm: 1,
                start: 0,
                cycles: 2000,
            },
            BlockTime {
                sm: 1,
                start: 500,
                cycles: 1500,
            },
        ];
        assert_eq!(per_sm_rates(&blocks, 1000.0), vec![2.0, 1.0, 1.0]);
        assert!(per_sm_rates(
            &[BlockTime {
                sm: 0,
                start: 5,
                cycles: 0
            }],
            1.0
        )
        .is_empty());
    }

    #[test]
    fn unit_conversions() {
        // 1,000,000 and 21,000,000 cycles in 0.6 and 10.6 ms: 20e6 cycles in 10 ms = 2000 MHz.
        assert_eq!(clock_mhz(1e6, 0.6, 21e6, 10.6), Some(2000.0));
        assert_eq!(clock_mhz(1e6, 0.6, 21e6, 0.6), None);
        // 1 GiB in 0.25 ms: 4294.967296 GB/s.
        assert_eq!(gb_per_s(1073741824.0, 0.25), 4294.967296);
        // 4 MB in 1 ms at 2000 MHz: 2 bytes per cycle.
        assert_eq!(bytes_per_cycle(4e6, 1.0, 2000.0), 2.0);
        assert_eq!(cycles_to_ns(864.0, 1980.0), 436.3636363636364);
    }

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400), "2000-02-29");
        assert_eq!(date(1_763_683_200), "2025-11-21");
        assert_eq!(date(1_798_761_599), "2026-12-31");
        assert_eq!(today().len(), 10);
    }
}

//! Summary statistics of a comparison: the spread of repeated timings, the error of a prediction,
//! the mean absolute percentage error over many, and Spearman's rank correlation. Pure functions,
//! no GPU.

use serde::{Deserialize, Serialize};

/// Repeated timings of one launch, in microseconds (the `time_us` object of a report).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeStats {
    /// Median of the single launches (each between its own pair of CUDA events).
    pub median: f64,
    /// Fastest single launch.
    pub min: f64,
    /// Slowest single launch.
    pub max: f64,
    /// 10th percentile of the single launches (nearest rank).
    pub p10: f64,
    /// 90th percentile of the single launches (nearest rank).
    pub p90: f64,
    /// workloads.md's convention: R launches back to back between two events, divided by R.
    pub mean_back_to_back: f64,
    /// How many single launches were timed (R).
    pub repeats: u32,
}

impl TimeStats {
    /// Statistics of single-launch `samples` (µs) and the back-to-back mean (µs); `None` when
    /// there are no samples.
    pub fn from_samples(samples: &[f64], mean_back_to_back: f64) -> Option<TimeStats> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        Some(TimeStats {
            median: median_sorted(&s),
            min: s[0],
            max: s[s.len() - 1],
            p10: percentile_sorted(&s, 10.0),
            p90: percentile_sorted(&s, 90.0),
            mean_back_to_back,
            repeats: s.len() as u32,
        })
    }
}

/// The median of `values` (the mean of the middle two for an even count), NaNs left out; `None`
/// when none is left.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(median_sorted(&v))
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Nearest-rank percentile of sorted, non-empty `s`.
fn percentile_sorted(s: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

/// Signed error of `predicted` against `measured` in percent: `100 (p - m) / m`. `None` when
/// `measured` is 0 and `predicted` is not (no relative error exists); `Some(0)` when both are 0.
pub fn error_pct(predicted: f64, measured: f64) -> Option<f64> {
    if !predicted.is_finite() || !measured.is_finite() {
        return None;
    }
    if measured == 0.0 {
        return (predicted == 0.0).then_some(0.0);
    }
    Some(100.0 * (predicted - measured) / measured)
}

/// Mean absolute percentage error over (predicted, measured) pairs, skipping pairs without a
/// relative error (see [`error_pct`]); `None` when none is left.
pub fn mape(pairs: &[(f64, f64)]) -> Option<f64> {
    let errs: Vec<f64> = pairs
        .iter()
        .filter_map(|&(p, m)| error_pct(p, m))
        .map(f64::abs)
        .collect();
    (!errs.is_empty()).then(|| errs.iter().sum::<f64>() / errs.len() as f64)
}

/// Ranks of `xs` starting at 1, ties getting the mean of the ranks they span.
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut r = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        let mean_rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = mean_rank;
        }
        i = j + 1;
    }
    r
}

/// Pearson's correlation coefficient; `None` for fewer than 2 points or a constant series.
pub fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 2 || n != ys.len() {
        return None;
    }
    let mx = xs.iter().sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Spearman's rank correlation: Pearson's correlation of the ranks (ties averaged). 1 means the
/// prediction orders the launches exactly as the GPU does.
pub fn spearman(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() {
        return None;
    }
    pearson(&ranks(xs), &ranks(ys))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn time_stats_of_odd_and_even_samples() {
        let t = TimeStats::from_samples(&[5.0, 1.0, 3.0], 2.5).unwrap();
        assert_eq!((t.median, t.min, t.max, t.repeats), (3.0, 1.0, 5.0, 3));
        let t = TimeStats::from_samples(&[4.0, 1.0, 3.0, 2.0], 0.0).unwrap();
        assert_eq!(t.median, 2.5);
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        let t = TimeStats::from_samples(&s, 0.0).unwrap();
        assert_eq!((t.p10, t.p90, t.median), (10.0, 90.0, 50.5));
        assert!(TimeStats::from_samples(&[], 1.0).is_none());
    }

    #[test]
    fn error_is_relative_to_the_measurement() {
        assert_eq!(error_pct(110.0, 100.0), Some(10.0));
        assert_eq!(error_pct(50.0, 100.0), Some(-50.0));
        assert_eq!(error_pct(0.0, 0.0), Some(0.0));
        assert_eq!(error_pct(3.0, 0.0), None);
        assert_eq!(error_pct(f64::NAN, 1.0), None);
    }

    #[test]
    fn mape_averages_absolute_errors_and_skips_undefined_ones() {
        let m = mape(&[(110.0, 100.0), (80.0, 100.0), (5.0, 0.0)]).unwrap();
        assert!(close(m, 15.0), "{m}");
        assert_eq!(mape(&[(1.0, 0.0)]), None);
        assert_eq!(mape(&[]), None);
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[10.0, 30.0, 20.0, 20.0]), vec![1.0, 4.0, 2.5, 2.5]);
    }

    #[test]
    fn spearman_on_known_data() {
        // Monotone but not linear: rank correlation 1, reversed -1.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [1.0, 4.0, 9.0, 16.0, 100.0];
        assert!(close(spearman(&x, &y).unwrap(), 1.0));
        let rev: Vec<f64> = y.iter().rev().copied().collect();
        assert!(close(spearman(&x, &rev).unwrap(), -1.0));
        // Textbook example: d = (0, 0, 1, -1, 0) → rho = 1 - 6*2 / (5*24) = 0.9.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [1.0, 2.0, 4.0, 3.0, 5.0];
        assert!(close(spearman(&a, &b).unwrap(), 0.9));
        assert_eq!(spearman(&[1.0], &[2.0]), None);
        assert_eq!(spearman(&[1.0, 1.0], &[2.0, 3.0]), None);
    }
}

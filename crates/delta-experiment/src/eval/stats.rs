//! The estimators of `delta eval report` and `compare`, as pure functions over rewards:
//! the mean with its standard error (clustered by task when a task has several trials)
//! and 95% confidence interval, pass@k and pass^k, the paired bootstrap and the exact sign
//! test. Formulas and sources are in docs/eval.md; each is checked against hand-worked
//! values (and Inspect AI's definitions where they overlap) in the tests below.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Resamples of the paired bootstrap.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// The bootstrap's seed: fixed, so a comparison is reproducible to the last digit.
pub const BOOTSTRAP_SEED: u64 = 26;

/// A mean with its uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// Its standard error; `None` when undefined (fewer than 2 values, or fewer than 2
    /// clusters when clustered).
    pub stderr: Option<f64>,
    /// The 95% confidence interval `mean ± t(0.975, df) · stderr`; `None` with `stderr`.
    pub ci95: Option<[f64; 2]>,
    /// How many values.
    pub n: usize,
    /// Whether the standard error is clustered (by task).
    pub clustered: bool,
}

/// The mean of `values` and its uncertainty, `values` grouped by cluster (one group per
/// task). With `clustered`, the standard error is the cluster-robust one of Inspect AI's
/// `stderr(cluster=…)` (Appendix A of arXiv 2411.00640 with the finite-cluster correction
/// G/(G−1)) and the interval has G−1 degrees of freedom; otherwise it is sd/√n with n−1.
/// `None` when there are no values.
#[must_use]
pub fn estimate(groups: &[Vec<f64>], clustered: bool) -> Option<Estimate> {
    let values: Vec<f64> = groups.iter().flatten().copied().collect();
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let (stderr, df) = if clustered {
        let clusters: Vec<&Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).collect();
        let g = clusters.len();
        let spread: f64 = clusters
            .iter()
            .map(|cluster| cluster.iter().map(|x| x - mean).sum::<f64>().powi(2))
            .sum();
        let stderr = (g >= 2).then(|| (spread * g as f64 / (g as f64 - 1.0)).sqrt() / n as f64);
        (stderr, g.saturating_sub(1))
    } else {
        let stderr = (n >= 2).then(|| {
            let variance =
                values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
            (variance / n as f64).sqrt()
        });
        (stderr, n - 1)
    };
    let ci95 = stderr.and_then(|se| {
        let t = t_quantile_975(df)?;
        Some([mean - t * se, mean + t * se])
    });
    Some(Estimate {
        mean,
        stderr,
        ci95,
        n,
        clustered,
    })
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (`None` for 0).
#[must_use]
pub fn t_quantile_975(df: usize) -> Option<f64> {
    if df == 0 {
        return None;
    }
    StudentsT::new(0.0, 1.0, df as f64)
        .ok()
        .map(|t| t.inverse_cdf(0.975))
}

/// pass@k of one task with `c` successes in `n` trials: the unbiased estimator of Chen et
/// al. 2021, `1 − C(n−c, k)/C(n, k)`, in the product form `1 − ∏_{i=n−c+1}^{n} (1 − k/i)`
/// that stays finite for large n (Inspect AI's). `None` when `n < k` (undefined).
#[must_use]
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    let product: f64 = (n - c + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    Some(1.0 - product)
}

/// pass^k of one task (τ-bench, Yao et al. 2024): the probability that k trials drawn
/// without replacement all succeed, `C(c, k)/C(n, k) = ∏_{i<k} (c−i)/(n−i)`. `None` when
/// `n < k`.
#[must_use]
pub fn pass_hat_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    Some((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

/// The mean over tasks of a per-task estimator, over the tasks where it is defined, with
/// how many tasks that was; `None` when it is defined for none.
#[must_use]
pub fn mean_over_tasks(per_task: impl IntoIterator<Item = Option<f64>>) -> Option<(f64, usize)> {
    let defined: Vec<f64> = per_task.into_iter().flatten().collect();
    if defined.is_empty() {
        return None;
    }
    Some((
        defined.iter().sum::<f64>() / defined.len() as f64,
        defined.len(),
    ))
}

/// The exact two-sided sign test over paired differences: `positive` tasks improved,
/// `negative` regressed (ties are left out). `p = min(1, 2·P(X ≤ min(positive,
/// negative)))` with X ~ Binomial(positive + negative, ½), summed in log space so that
/// thousands of tasks do not underflow. 1 when nothing changed.
#[must_use]
pub fn sign_test(positive: usize, negative: usize) -> f64 {
    let n = positive + negative;
    if n == 0 {
        return 1.0;
    }
    let low = positive.min(negative);
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    let terms: Vec<f64> = (0..=low)
        .map(|i| statrs::function::factorial::ln_binomial(n as u64, i as u64) - ln_half_n)
        .collect();
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = max.exp() * terms.iter().map(|t| (t - max).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// The paired bootstrap 95% interval of the mean of `differences` (one per task):
/// `resamples` means of tasks drawn with replacement, from a generator seeded with `seed`,
/// and their 2.5th and 97.5th percentiles (nearest rank). `None` without differences.
#[must_use]
pub fn bootstrap_ci(differences: &[f64], resamples: usize, seed: u64) -> Option<[f64; 2]> {
    let n = differences.len();
    if n == 0 || resamples == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| differences[rng.usize(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let rank = |p: f64| {
        let rank = (p * resamples as f64).ceil() as usize;
        means[rank.clamp(1, resamples) - 1]
    };
    Some([rank(0.025), rank(0.975)])
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPSILON: f64 = 1e-9;

    fn close(actual: f64, expected: f64) {
        assert!(
            (actual - expected).abs() < EPSILON,
            "{actual} is not {expected} to 1e-9"
        );
    }

    fn close_pair(actual: Option<[f64; 2]>, expected: [f64; 2]) {
        let actual = actual.expect("an interval");
        close(actual[0], expected[0]);
        close(actual[1], expected[1]);
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Student's t, 0.975 quantile (scipy.stats.t.ppf and Inspect AI's _t_inv_cdf agree
        // with these to 1e-13).
        for (df, t) in [
            (1, 12.706204736174694),
            (2, 4.302652729749462),
            (4, 2.7764451051977934),
            (9, 2.262157162798205),
            (29, 2.045229642132703),
            (100, 1.9839715185235518),
        ] {
            close(t_quantile_975(df).expect("df > 0"), t);
        }
        assert_eq!(t_quantile_975(0), None);
    }

    #[test]
    fn clustered_mean_of_three_tasks_by_hand() {
        // Tasks a = [1, 0], b = [1, 1], c = [0, 0]: N = 6, mean 1/2. Deviation sums by
        // cluster: 0, +1, −1, so Σ² = 2, G = 3: SE = √(3/2 · 2)/6 = √3/6. df = G − 1 = 2.
        let groups = vec![vec![1.0, 0.0], vec![1.0, 1.0], vec![0.0, 0.0]];
        let e = estimate(&groups, true).expect("values");
        close(e.mean, 0.5);
        let se = 3f64.sqrt() / 6.0;
        close(e.stderr.expect("G = 3"), se);
        let t = 4.302652729749464;
        close_pair(e.ci95, [0.5 - t * se, 0.5 + t * se]);
        // Inspect AI 0.3.285 (stderr(cluster=), ci(method="t", cluster=)) gives
        // 0.28867513459481287 and [-0.7420688558751631, 1.7420688558751631].
        close(e.stderr.expect("G = 3"), 0.28867513459481287);
        close_pair(e.ci95, [-0.7420688558751631, 1.7420688558751631]);
        assert_eq!((e.n, e.clustered), (6, true));
    }

    #[test]
    fn clustered_mean_of_unequal_clusters_by_hand() {
        // a = [0.5, 1, 0], b = [1], c = [0.25, 0.75]: N = 6, mean 3.5/6 = 7/12.
        // Deviation sums: 1.5 − 3·7/12 = −0.25, 1 − 7/12 = 5/12, 1 − 2·7/12 = −1/6.
        // Σ² = 9/144 + 25/144 + 4/144 = 38/144; SE = √(3/2 · 38/144)/6.
        let groups = vec![vec![0.5, 1.0, 0.0], vec![1.0], vec![0.25, 0.75]];
        let e = estimate(&groups, true).expect("values");
        close(e.mean, 7.0 / 12.0);
        let se = (1.5 * 38.0 / 144.0f64).sqrt() / 6.0;
        close(e.stderr.expect("G = 3"), se);
        // Inspect AI: 0.10485881160098265, ci [0.1321622813600815, 1.0345043853065852].
        close(se, 0.10485881160098265);
        close_pair(e.ci95, [0.1321622813600815, 1.0345043853065852]);
    }

    #[test]
    fn unclustered_mean_is_sd_over_root_n() {
        // [1, 0, 0.5, 1, 0.25]: mean 0.55; squared deviations 0.2025, 0.3025, 0.0025,
        // 0.2025, 0.09 sum to 0.8; sd² = 0.8/4 = 0.2; SE = √(0.2/5) = 0.2; df 4.
        let groups = vec![vec![1.0], vec![0.0], vec![0.5], vec![1.0], vec![0.25]];
        let e = estimate(&groups, false).expect("values");
        close(e.mean, 0.55);
        close(e.stderr.expect("n = 5"), 0.2);
        let t = 2.7764451051977934;
        close_pair(e.ci95, [0.55 - 0.2 * t, 0.55 + 0.2 * t]);
        // Inspect AI: ci [-0.005289021039558084, 1.105289021039558].
        close_pair(e.ci95, [-0.005289021039558084, 1.105289021039558]);
    }

    #[test]
    fn too_few_values_or_clusters_leave_the_error_undefined() {
        let one = estimate(&[vec![0.7]], false).expect("a value");
        assert_eq!((one.stderr, one.ci95), (None, None));
        close(one.mean, 0.7);
        let one_cluster = estimate(&[vec![1.0, 0.0, 1.0]], true).expect("values");
        assert_eq!((one_cluster.stderr, one_cluster.ci95), (None, None));
        assert_eq!(estimate(&[], true), None);
        assert_eq!(estimate(&[vec![], vec![]], false), None);
    }

    #[test]
    fn pass_at_k_is_chens_unbiased_estimator() {
        // n = 5, c = 2: 1 − C(3,k)/C(5,k) = 1 − 3/5, 1 − 3/10, 1 − 1/10, 1, 1.
        for (k, expected) in [(1, 0.4), (2, 0.7), (3, 0.9), (4, 1.0), (5, 1.0)] {
            close(pass_at_k(5, 2, k).expect("n ≥ k"), expected);
        }
        // n = 10, c = 3, k = 2: 1 − C(7,2)/C(10,2) = 1 − 21/45 = 8/15; k = 5: 1 − 21/252.
        close(pass_at_k(10, 3, 2).expect("n ≥ k"), 8.0 / 15.0);
        close(pass_at_k(10, 3, 5).expect("n ≥ k"), 1.0 - 21.0 / 252.0);
        // Inspect AI's pass_at reducer: 0.5333333333333332 and 0.9166666666666666.
        close(pass_at_k(10, 3, 2).expect("n ≥ k"), 0.5333333333333332);
        close(pass_at_k(10, 3, 5).expect("n ≥ k"), 0.9166666666666666);
        assert_eq!(pass_at_k(2, 0, 2), Some(0.0));
        assert_eq!(pass_at_k(2, 2, 1), Some(1.0));
        assert_eq!(pass_at_k(1, 1, 2), None);
        assert_eq!(pass_at_k(3, 1, 0), None);
    }

    #[test]
    fn pass_hat_k_is_all_k_succeed() {
        // n = 5, c = 2: C(2,1)/C(5,1) = 2/5, C(2,2)/C(5,2) = 1/10, then 0.
        for (k, expected) in [(1, 0.4), (2, 0.1), (3, 0.0), (5, 0.0)] {
            close(pass_hat_k(5, 2, k).expect("n ≥ k"), expected);
        }
        // n = 10, c = 3, k = 3: 1/C(10,3) = 1/120.
        close(pass_hat_k(10, 3, 3).expect("n ≥ k"), 1.0 / 120.0);
        assert_eq!(pass_hat_k(2, 2, 2), Some(1.0));
        assert_eq!(pass_hat_k(1, 1, 2), None);
    }

    #[test]
    fn mean_over_tasks_skips_undefined_tasks() {
        let (mean, tasks) = mean_over_tasks([Some(1.0), None, Some(0.5)]).expect("defined");
        close(mean, 0.75);
        assert_eq!(tasks, 2);
        assert_eq!(mean_over_tasks([None, None]), None);
    }

    #[test]
    fn the_sign_test_is_exact() {
        // 5 improved, 0 regressed: 2 · (1/2)^5 = 1/16.
        close(sign_test(5, 0), 0.0625);
        // 8 vs 2: 2 · (1 + 10 + 45)/1024 = 112/1024.
        close(sign_test(8, 2), 112.0 / 1024.0);
        close(sign_test(2, 8), 112.0 / 1024.0);
        // 3 vs 3 and no change at all: 1.
        close(sign_test(3, 3), 1.0);
        close(sign_test(0, 0), 1.0);
        // 2000 tasks do not underflow: 1000 vs 1000 is 1, 1500 vs 500 tiny but positive.
        close(sign_test(1000, 1000), 1.0);
        let p = sign_test(1500, 500);
        assert!(p > 0.0 && p < 1e-100, "{p}");
    }

    #[test]
    fn the_bootstrap_is_reproducible_and_brackets_the_mean() {
        let d = [1.0, 0.0, 0.5, -0.5, 1.0, 0.0];
        let a = bootstrap_ci(&d, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED).expect("differences");
        let b = bootstrap_ci(&d, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED).expect("differences");
        assert_eq!(a, b);
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert!(a[0] < mean && mean < a[1], "{a:?}");
        // Every resample of a constant difference is that constant.
        assert_eq!(
            bootstrap_ci(&[0.25; 4], BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED),
            Some([0.25, 0.25])
        );
        assert_eq!(bootstrap_ci(&[], 10, 1), None);
    }
}

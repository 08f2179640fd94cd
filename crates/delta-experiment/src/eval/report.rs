//! `delta eval report`: the scores of an eval recomputed from `results.jsonl` — counts,
//! the mean reward with its standard error and 95% interval counted both with errored
//! trials as 0 and over verified trials only, pass@k and pass^k, tokens, cost and wall
//! time — overall and per task.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dir::{Manifest, TrialResult, TrialStatus};
use super::stats::{self, Estimate};

/// The scores of a set of trials (the whole eval, or one task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    /// Trials recorded.
    pub trials: usize,
    /// Verified with main reward ≥ 1.
    pub passed: usize,
    /// Verified below 1.
    pub failed: usize,
    /// Without a valid reward (reported apart, never as failures silently).
    pub errored: usize,
    /// Trials of the eval not recorded yet.
    pub pending: usize,
    /// Trials asked per task (`-k`).
    pub attempts: u32,
    /// Whether the standard errors are clustered by task.
    pub clustered: bool,
    /// Mean reward over every recorded trial, errored ones counted as 0.
    pub mean_reward: Option<f64>,
    /// Its standard error.
    pub stderr: Option<f64>,
    /// Its 95% confidence interval.
    pub ci95: Option<[f64; 2]>,
    /// Mean reward over verified trials only.
    pub mean_reward_verified: Option<f64>,
    /// Its standard error.
    pub stderr_verified: Option<f64>,
    /// Its 95% confidence interval.
    pub ci95_verified: Option<[f64; 2]>,
    /// pass@k by k, errored trials counted as failures (mean over tasks with ≥ k trials).
    pub pass_at_k: BTreeMap<u32, Option<f64>>,
    /// pass^k by k, likewise.
    pub pass_hat_k: BTreeMap<u32, Option<f64>>,
    /// pass@k over verified trials only (tasks with fewer than k verified trials left out).
    pub pass_at_k_verified: BTreeMap<u32, Option<f64>>,
    /// pass^k over verified trials only.
    pub pass_hat_k_verified: BTreeMap<u32, Option<f64>>,
    /// Errored trials by class.
    pub errors: BTreeMap<String, usize>,
    /// Input tokens of the agents' runs.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Estimated cost, US dollars.
    pub cost_usd: f64,
    /// Cost divided by passed trials; `None` when none passed.
    pub cost_per_solved_usd: Option<f64>,
    /// Wall time of a trial, milliseconds.
    pub wall_ms: Wall,
}

/// Percentiles of the trials' wall time (nearest rank).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wall {
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
}

/// The whole report: the eval's scores and each task's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Over every task.
    #[serde(flatten)]
    pub overall: Scores,
    /// By task name.
    pub tasks: BTreeMap<String, Scores>,
}

/// The report of `manifest`'s trials from their `results` (latest line per trial).
#[must_use]
pub fn report(manifest: &Manifest, results: &BTreeMap<String, TrialResult>) -> Report {
    let mut by_task: Vec<(String, Vec<&TrialResult>, usize)> = Vec::new();
    for task in &manifest.tasks {
        let mut recorded = Vec::new();
        let mut pending = 0;
        for attempt in 1..=manifest.attempts {
            match results.get(&super::dir::trial_id(&task.id, attempt)) {
                Some(result) => recorded.push(result),
                None => pending += 1,
            }
        }
        by_task.push((task.name.clone(), recorded, pending));
    }
    let groups: Vec<Vec<&TrialResult>> = by_task.iter().map(|(_, r, _)| r.clone()).collect();
    let pending = by_task.iter().map(|(_, _, p)| p).sum();
    let overall = scores(&groups, pending, manifest.attempts, manifest.attempts > 1);
    let tasks = by_task
        .iter()
        .map(|(name, recorded, pending)| {
            (
                name.clone(),
                scores(
                    std::slice::from_ref(recorded),
                    *pending,
                    manifest.attempts,
                    false,
                ),
            )
        })
        .collect();
    Report { overall, tasks }
}

/// The scores of trials grouped by task.
fn scores(groups: &[Vec<&TrialResult>], pending: usize, attempts: u32, clustered: bool) -> Scores {
    let all: Vec<&TrialResult> = groups.iter().flatten().copied().collect();
    let count = |status| all.iter().filter(|r| r.status == status).count();
    let passed = count(TrialStatus::Passed);
    let everything: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| g.iter().map(|r| r.reward_or_zero()).collect())
        .collect();
    let verified: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| g.iter().filter_map(|r| r.reward).collect())
        .collect();
    let all_estimate = stats::estimate(&everything, clustered);
    let verified_estimate = stats::estimate(&verified, clustered);
    let mut pass_at_k = BTreeMap::new();
    let mut pass_hat_k = BTreeMap::new();
    let mut pass_at_k_verified = BTreeMap::new();
    let mut pass_hat_k_verified = BTreeMap::new();
    // (n, c) per task: every trial (errored ones failing), and verified trials only.
    let every: Vec<(usize, usize)> = groups
        .iter()
        .map(|g| {
            (
                g.len(),
                g.iter().filter(|r| r.status == TrialStatus::Passed).count(),
            )
        })
        .collect();
    let verified_only: Vec<(usize, usize)> = groups
        .iter()
        .map(|g| {
            let verified = g
                .iter()
                .filter(|r| r.status != TrialStatus::Errored)
                .count();
            let c = g.iter().filter(|r| r.status == TrialStatus::Passed).count();
            (verified, c)
        })
        .collect();
    for k in 1..=attempts {
        let over = |counts: &[(usize, usize)], f: fn(usize, usize, usize) -> Option<f64>| {
            stats::mean_over_tasks(counts.iter().map(|&(n, c)| f(n, c, k as usize)))
                .map(|(mean, _)| mean)
        };
        pass_at_k.insert(k, over(&every, stats::pass_at_k));
        pass_hat_k.insert(k, over(&every, stats::pass_hat_k));
        pass_at_k_verified.insert(k, over(&verified_only, stats::pass_at_k));
        pass_hat_k_verified.insert(k, over(&verified_only, stats::pass_hat_k));
    }
    let mut errors = BTreeMap::new();
    for error in all.iter().filter_map(|r| r.error.as_ref()) {
        *errors.entry(error.class.as_str().to_owned()).or_insert(0) += 1;
    }
    let (input_tokens, output_tokens) = all.iter().fold((0, 0), |(i, o), r| {
        let (ri, ro) = r.tokens();
        (i + ri, o + ro)
    });
    let cost_usd: f64 = all.iter().map(|r| r.cost_usd).sum();
    let mut walls: Vec<u64> = all.iter().map(|r| r.durations_ms.total).collect();
    walls.sort_unstable();
    let part = |e: Option<Estimate>| {
        (
            e.map(|e| e.mean),
            e.and_then(|e| e.stderr),
            e.and_then(|e| e.ci95),
        )
    };
    let (mean_reward, stderr, ci95) = part(all_estimate);
    let (mean_reward_verified, stderr_verified, ci95_verified) = part(verified_estimate);
    Scores {
        trials: all.len(),
        passed,
        failed: count(TrialStatus::Failed),
        errored: count(TrialStatus::Errored),
        pending,
        attempts,
        clustered,
        mean_reward,
        stderr,
        ci95,
        mean_reward_verified,
        stderr_verified,
        ci95_verified,
        pass_at_k,
        pass_hat_k,
        pass_at_k_verified,
        pass_hat_k_verified,
        errors,
        input_tokens,
        output_tokens,
        cost_usd,
        cost_per_solved_usd: (passed > 0).then(|| cost_usd / passed as f64),
        wall_ms: Wall {
            p50: crate::batch::percentile(&walls, 50),
            p95: crate::batch::percentile(&walls, 95),
        },
    }
}

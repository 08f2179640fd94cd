//! `delta eval compare A B`: two evals of the same tasks side by side — per task the mean
//! reward of each (errored trials as 0) and their paired difference B − A, the mean
//! difference with a paired bootstrap 95% interval (fixed seed, so reproducible) and the
//! exact sign test over the tasks that changed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::dir::{Manifest, TrialResult, trial_id};
use super::stats::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_ci, sign_test};

/// How a task's mean reward moved from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// B's mean is higher.
    Improved,
    /// B's mean is lower.
    Regressed,
    /// The same.
    Same,
}

/// One task of both evals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskDiff {
    /// The task's name.
    pub task: String,
    /// A's mean reward (errored trials as 0) over its recorded trials.
    pub mean_a: f64,
    /// B's.
    pub mean_b: f64,
    /// `mean_b − mean_a`.
    pub difference: f64,
    /// Trials recorded in A.
    pub trials_a: usize,
    /// In B.
    pub trials_b: usize,
    /// Which way it moved.
    pub change: Change,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The tasks recorded in both, by name.
    pub tasks: Vec<TaskDiff>,
    /// Tasks with trials only in A (left out of the statistics).
    pub only_a: Vec<String>,
    /// Tasks with trials only in B.
    pub only_b: Vec<String>,
    /// The mean over tasks of B − A.
    pub mean_difference: Option<f64>,
    /// Its paired bootstrap 95% interval.
    pub ci95: Option<[f64; 2]>,
    /// Tasks whose mean rose.
    pub improved: usize,
    /// Tasks whose mean fell.
    pub regressed: usize,
    /// Tasks whose mean stayed.
    pub same: usize,
    /// The exact two-sided sign test's p-value over improved and regressed tasks.
    pub sign_test_p: f64,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// The bootstrap's seed.
    pub seed: u64,
}

/// Compares eval B with eval A.
#[must_use]
pub fn compare(
    a: (&Manifest, &BTreeMap<String, TrialResult>),
    b: (&Manifest, &BTreeMap<String, TrialResult>),
) -> Comparison {
    let means_a = task_means(a.0, a.1);
    let means_b = task_means(b.0, b.1);
    let mut tasks = Vec::new();
    for (task, &(mean_a, trials_a)) in &means_a {
        let Some(&(mean_b, trials_b)) = means_b.get(task) else {
            continue;
        };
        let difference = mean_b - mean_a;
        let change = if difference > 0.0 {
            Change::Improved
        } else if difference < 0.0 {
            Change::Regressed
        } else {
            Change::Same
        };
        tasks.push(TaskDiff {
            task: task.clone(),
            mean_a,
            mean_b,
            difference,
            trials_a,
            trials_b,
            change,
        });
    }
    let only = |x: &BTreeMap<String, (f64, usize)>, y: &BTreeMap<String, (f64, usize)>| {
        x.keys().filter(|t| !y.contains_key(*t)).cloned().collect()
    };
    let differences: Vec<f64> = tasks.iter().map(|t| t.difference).collect();
    let count = |change| tasks.iter().filter(|t| t.change == change).count();
    let (improved, regressed) = (count(Change::Improved), count(Change::Regressed));
    Comparison {
        mean_difference: (!differences.is_empty())
            .then(|| differences.iter().sum::<f64>() / differences.len() as f64),
        ci95: bootstrap_ci(&differences, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED),
        improved,
        regressed,
        same: count(Change::Same),
        sign_test_p: sign_test(improved, regressed),
        resamples: BOOTSTRAP_RESAMPLES,
        seed: BOOTSTRAP_SEED,
        only_a: only(&means_a, &means_b),
        only_b: only(&means_b, &means_a),
        tasks,
    }
}

/// Each task's mean reward (errored as 0) and recorded trials; tasks without any recorded
/// trial are left out.
fn task_means(
    manifest: &Manifest,
    results: &BTreeMap<String, TrialResult>,
) -> BTreeMap<String, (f64, usize)> {
    let mut means = BTreeMap::new();
    for task in &manifest.tasks {
        let rewards: Vec<f64> = (1..=manifest.attempts)
            .filter_map(|attempt| results.get(&trial_id(&task.id, attempt)))
            .map(TrialResult::reward_or_zero)
            .collect();
        if !rewards.is_empty() {
            let mean = rewards.iter().sum::<f64>() / rewards.len() as f64;
            means.insert(task.name.clone(), (mean, rewards.len()));
        }
    }
    means
}

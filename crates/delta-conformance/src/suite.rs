//! The suite: every scenario of `fixtures/scenarios/`, loaded and checked up front,
//! selected by tag and name, and run in parallel.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::report::{Failure, Report, ScenarioResult, Status};
use crate::runner::{self, RunnerConfig};
use crate::scenario::{self, LoadedScenario, ScenarioChecks as _, ScenarioError};
use crate::schemas::{self, SchemaSet};

/// A suite that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The scenarios directory cannot be listed.
    #[error("cannot list {}: {source}", dir.display())]
    ReadDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A scenario file is broken.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// Two scenarios share a name.
    #[error("two scenarios are named {name:?}: {} and {}", first.display(), second.display())]
    DuplicateName {
        /// The name.
        name: String,
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// A scenario's inline mock script breaks the mock-script schema.
    #[error("{}: mock: {problems}", path.display())]
    MockScript {
        /// The scenario file.
        path: PathBuf,
        /// The violations.
        problems: String,
    },
}

/// Loads every `*.yaml` in `dir`, sorted by file name, and checks each (including inline
/// mock scripts against `mock-script.schema.json` when that schema is present).
pub fn load_dir(dir: &Path, schemas: &SchemaSet) -> Result<Vec<LoadedScenario>, SuiteError> {
    let entries = std::fs::read_dir(dir).map_err(|source| SuiteError::ReadDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml"))
        })
        .collect();
    paths.sort();
    let mut loaded: Vec<LoadedScenario> = Vec::new();
    for path in paths {
        let scenario = scenario::load(&path)?;
        if let Some(other) = loaded
            .iter()
            .find(|l| l.scenario.name == scenario.scenario.name)
        {
            return Err(SuiteError::DuplicateName {
                name: scenario.scenario.name.clone(),
                first: other.path.clone(),
                second: path,
            });
        }
        if let Some(mock) = &scenario.scenario.mock
            && schemas.has(schemas::MOCK_SCRIPT)
        {
            let problems = schemas
                .validate(schemas::MOCK_SCRIPT, mock)
                .map_err(|err| SuiteError::MockScript {
                    path: path.clone(),
                    problems: err.to_string(),
                })?;
            if !problems.is_empty() {
                return Err(SuiteError::MockScript {
                    path,
                    problems: problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                });
            }
        }
        check_schema_names(&scenario, schemas)?;
        loaded.push(scenario);
    }
    Ok(loaded)
}

/// Every `schema:` a text matcher names must be a schema of the set (when one is loaded:
/// `list` may run without), so a typo fails the load instead of a scenario.
fn check_schema_names(loaded: &LoadedScenario, schemas: &SchemaSet) -> Result<(), SuiteError> {
    if schemas.kinds().next().is_none() {
        return Ok(());
    }
    for (i, step) in loaded.scenario.steps.iter().enumerate() {
        for (what, matcher) in step.expect.text_matchers() {
            if let Some(kind) = &matcher.schema
                && !schemas.has(kind)
            {
                return Err(SuiteError::Scenario(ScenarioError::Invalid {
                    path: loaded.path.clone(),
                    message: format!(
                        "steps[{i}].expect ({what}): schema {kind:?}: {} does not exist",
                        schemas.path_of(kind).display()
                    ),
                }));
            }
        }
    }
    Ok(())
}

/// Which scenarios to run.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Keep scenarios with any of these tags (all when empty).
    pub tags: Vec<String>,
    /// Then drop scenarios with any of these tags.
    pub exclude_tags: Vec<String>,
    /// Keep scenarios whose name contains any of these texts (all when empty).
    pub filters: Vec<String>,
    /// Keep scenarios with at least one check at this level or a stricter one.
    pub level: Option<crate::scenario::Level>,
}

impl Selection {
    /// The selected scenarios, in their original order.
    pub fn apply(&self, all: Vec<LoadedScenario>) -> Vec<LoadedScenario> {
        let tags: BTreeSet<&str> = self.tags.iter().map(String::as_str).collect();
        let excluded: BTreeSet<&str> = self.exclude_tags.iter().map(String::as_str).collect();
        all.into_iter()
            .filter(|l| {
                tags.is_empty() || l.scenario.tags.iter().any(|t| tags.contains(t.as_str()))
            })
            .filter(|l| {
                !l.scenario
                    .tags
                    .iter()
                    .any(|t| excluded.contains(t.as_str()))
            })
            .filter(|l| {
                self.filters.is_empty()
                    || self
                        .filters
                        .iter()
                        .any(|f| l.scenario.name.contains(f.as_str()))
            })
            .filter(|l| {
                self.level.is_none_or(|level| {
                    l.scenario
                        .declared_checks()
                        .iter()
                        .any(|c| c.level <= level)
                })
            })
            .collect()
    }
}

/// Runs `scenarios`, at most `jobs` at a time, calling `on_result` as each one finishes
/// (in completion order), and returns the report (sorted by name).
pub async fn run(
    scenarios: Vec<LoadedScenario>,
    config: RunnerConfig,
    jobs: usize,
    mut on_result: impl FnMut(&ScenarioResult),
) -> Report {
    let started = Instant::now();
    let config = Arc::new(config);
    let permits = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let expected: Vec<(String, PathBuf, Vec<String>, Option<String>)> = scenarios
        .iter()
        .map(|l| {
            let s = &l.scenario;
            (
                s.name.clone(),
                l.path.clone(),
                s.tags.clone(),
                s.seed.clone(),
            )
        })
        .collect();
    for loaded in scenarios {
        let config = Arc::clone(&config);
        let permits = Arc::clone(&permits);
        let sender = sender.clone();
        tokio::spawn(async move {
            // The semaphore is never closed, so acquiring only waits.
            let _permit = permits.acquire_owned().await;
            let result = runner::run_scenario(&loaded, &config).await;
            // The receiver lives until every sender is gone.
            let _ignored = sender.send(result);
        });
    }
    drop(sender);
    let mut results = Vec::new();
    while let Some(result) = receiver.recv().await {
        on_result(&result);
        results.push(result);
    }
    // A scenario task that died without a result (a bug in the runner) still counts.
    for (name, file, tags, seed) in expected {
        if !results.iter().any(|r| r.name == name) {
            let lost = ScenarioResult {
                name,
                file,
                tags,
                seed,
                status: Status::Fail,
                reason: None,
                checks: Vec::new(),
                failures: vec![Failure {
                    step: None,
                    expected: "a result".to_string(),
                    observed: "the runner's task for this scenario ended without one".to_string(),
                }],
                duration_ms: 0,
                dir: None,
            };
            on_result(&lost);
            results.push(lost);
        }
    }
    let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Report::new(config.implementation.clone(), results, elapsed)
}

//! Running one scenario: its throw-away directory, agent copy, mock-llm, setup files and
//! canaries (`setup`), then its steps in order (`steps`), then the canaries; and, for
//! a scenario that uses the sessions implementation, that implementation on PATH and its
//! sessions ended afterwards (`teardown`). What a finished step is checked against is
//! [`crate::check`]'s.
//!
//! Every check is reported: after a failed check the later steps still run, except those
//! that declare `depends_on` a check that failed, which are reported `blocked by` it.

mod config;
mod outcome;
mod setup;
mod steps;
mod teardown;

use std::path::Path;
use std::time::Instant;

pub use self::config::{API_KEY, RunnerConfig};
use self::outcome::{setup_check, setup_failure};
use self::setup::Scene;
pub use self::teardown::TEARDOWN;
use crate::report::{CheckResult, Failure, ScenarioResult, Status};
use crate::scenario::{LoadedScenario, SESSIONS_PROGRAM, Scenario};

/// Runs one scenario to its result; never panics on a bad scenario or implementation.
pub async fn run_scenario(loaded: &LoadedScenario, config: &RunnerConfig) -> ScenarioResult {
    let started = Instant::now();
    let scenario = &loaded.scenario;
    let mut result = ScenarioResult {
        name: scenario.name.clone(),
        file: loaded.path.clone(),
        tags: scenario.tags.clone(),
        seed: scenario.seed.clone(),
        status: Status::Pass,
        reason: None,
        checks: Vec::new(),
        failures: Vec::new(),
        duration_ms: 0,
        dir: None,
    };
    if let Some(reason) = &scenario.skip {
        result.status = Status::Skip;
        result.reason = Some(reason.clone());
        return result;
    }
    if scenario.needs_sessions() && config.sessions.is_none() {
        result.status = Status::NotRun;
        result.reason = Some(format!(
            "not run (no --impl-sessions): no {SESSIONS_PROGRAM} beside the --impl program or \
             on PATH"
        ));
        return result;
    }
    if let Some(reason) = missing_program(scenario) {
        result.status = Status::Skip;
        result.reason = Some(reason);
        return result;
    }
    let temp = match tempfile::Builder::new()
        .prefix(&format!("delta-conformance-{}-", scenario.name))
        .tempdir()
    {
        Ok(temp) => temp,
        Err(err) => {
            result.checks = vec![setup_check(
                scenario,
                setup_failure("a temporary directory", err.to_string()),
            )];
            result.finish(config.level);
            return result;
        }
    };
    let root = temp
        .path()
        .canonicalize()
        .unwrap_or_else(|_| temp.path().to_path_buf());
    result.checks = run_in(loaded, config, &root).await;
    result.finish(config.level);
    if config.keep {
        result.dir = Some(temp.keep());
    }
    result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    result
}

fn missing_program(scenario: &Scenario) -> Option<String> {
    scenario
        .requires
        .iter()
        .filter(|program| *program != SESSIONS_PROGRAM)
        .find(|program| crate::locate::on_path(program).is_none())
        .map(|program| format!("`{program}` is not on PATH"))
}

async fn run_in(loaded: &LoadedScenario, config: &RunnerConfig, root: &Path) -> Vec<CheckResult> {
    let scenario = &loaded.scenario;
    let mut checks = match run_steps(loaded, config, root).await {
        Ok(checks) => checks,
        Err(failure) => vec![setup_check(scenario, failure)],
    };
    // The directory's name is random: reports name it `{tmp}` so that two runs of the
    // suite give the same report, and the schemas `schemas/` so that it reads the same on
    // any machine.
    let shown = root.to_string_lossy().into_owned();
    let schemas = format!("{}/", config.schemas.dir().display());
    for failure in checks.iter_mut().flat_map(|c| c.failures.iter_mut()) {
        for text in [&mut failure.expected, &mut failure.observed] {
            *text = text.replace(&shown, "{tmp}");
            if !config.schemas.dir().as_os_str().is_empty() {
                *text = text.replace(&schemas, "schemas/");
            }
        }
    }
    checks
}

async fn run_steps(
    loaded: &LoadedScenario,
    config: &RunnerConfig,
    root: &Path,
) -> Result<Vec<CheckResult>, Failure> {
    let scenario = &loaded.scenario;
    let (mut scene, llm) = Scene::set_up(loaded, config, root).await?;
    let mut checks = Vec::new();
    let first_blocked = steps::run_all(scenario, config, &mut scene, &mut checks).await;
    llm.stop().await;
    checks.extend(teardown::sessions(scenario, &scene).await);
    checks.extend(teardown::canaries(scenario, &scene.vars, first_blocked));
    Ok(checks)
}

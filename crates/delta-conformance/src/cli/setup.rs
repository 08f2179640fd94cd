//! What the commands share: the schemas and fixtures found, the scenarios loaded and
//! selected, the implementations under test with their adapters and baselines, and the
//! suite run on a runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::args::{Common, Locations};
use super::output::Fatal;
use crate::report;
use crate::runner::RunnerConfig;
use crate::scenario::{self, Level, LoadedScenario};
use crate::schemas::{self, SchemaSet};
use crate::suite::{self, Selection};
use crate::{adapter, baseline, locate};

pub(super) fn schema_set(dir: Option<&Path>) -> Result<SchemaSet, Fatal> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => locate::default_schemas().ok_or_else(|| {
            Fatal::new(
                "cannot find the schemas/ directory",
                "pass --schemas DIR (the repository's schemas/)",
            )
        })?,
    };
    SchemaSet::load(&dir).map_err(|e| Fatal::new(e.to_string(), "pass --schemas DIR"))
}

fn fixtures_dir(dir: Option<&Path>) -> Result<PathBuf, Fatal> {
    match dir {
        Some(dir) => Ok(dir.to_path_buf()),
        None => locate::default_fixtures().ok_or_else(|| {
            Fatal::new(
                "cannot find the fixtures/ directory",
                "pass --fixtures DIR (the repository's fixtures/, holding scenarios/ and agents/)",
            )
        }),
    }
}

pub(super) fn load_selected(
    locations: &Locations,
    schemas: &SchemaSet,
    selection: &Selection,
) -> Result<(PathBuf, Vec<LoadedScenario>), Fatal> {
    let fixtures = fixtures_dir(locations.fixtures.as_deref())?;
    let all = suite::load_dir(&fixtures.join("scenarios"), schemas).map_err(|e| {
        let help = match &e {
            suite::SuiteError::Scenario(inner) => inner.help(),
            suite::SuiteError::ReadDir { .. } => "pass --fixtures DIR",
            suite::SuiteError::DuplicateName { .. } => "rename one of them",
            suite::SuiteError::MockScript { .. } => "see schemas/mock-script.schema.json",
        };
        Fatal::new(e.to_string(), help)
    })?;
    let selected = selection.apply(all);
    if selected.is_empty() {
        return Err(Fatal::new(
            "no scenario matches the selection",
            "check --tag and --filter against `delta-conformance list`",
        ));
    }
    Ok((fixtures, selected))
}

/// A command-line option's command, split into words with existing relative paths made
/// absolute (scenarios run in their own directories).
fn command_words(flag: &str, line: &str) -> Result<Vec<String>, Fatal> {
    let words = shlex::split(line)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| {
            Fatal::new(
                format!("cannot split {flag} {line:?} into words"),
                format!("quote it like a shell command, e.g. {flag} \"node dist/index.js\""),
            )
        })?;
    Ok(locate::absolutize_command(&words))
}

/// One implementation to run: its name, command, sessions command and adapter.
pub(super) struct Target {
    pub(super) implementation: Vec<String>,
    pub(super) sessions: Option<Vec<String>>,
    pub(super) commands: adapter::Commands,
}

pub(super) fn target(
    implementation: Option<&str>,
    sessions: Option<&str>,
    adapter_file: Option<&Path>,
) -> Result<Target, Fatal> {
    let adapter = match adapter_file {
        Some(file) => adapter::load(file).map_err(|e| {
            Fatal::new(
                e.to_string(),
                "see docs/conformance.md (adapters) and schemas/conformance-adapter.schema.json",
            )
        })?,
        None => adapter::Loaded::default(),
    };
    let implementation = match implementation.filter(|line| !line.trim().is_empty()) {
        Some(line) => command_words("--impl", line)?,
        None => adapter.implementation.clone().ok_or_else(|| {
            Fatal::new(
                "no implementation: give --impl COMMAND, or an adapter with `impl:`",
                "e.g. --impl target/debug/delta",
            )
        })?,
    };
    // Not finding one is no error: the scenarios that need it are reported not run.
    let sessions = match sessions {
        Some(line) => Some(command_words("--impl-sessions", line)?),
        None => adapter.sessions.clone().or_else(|| {
            locate::beside_implementation(&implementation, scenario::SESSIONS_PROGRAM)
                .map(|path| vec![path.to_string_lossy().into_owned()])
        }),
    };
    Ok(Target {
        implementation,
        sessions,
        commands: adapter.commands,
    })
}

/// What every run of the suite shares: schemas, scenarios, mock-llm, limits.
pub(super) struct Prepared {
    pub(super) fixtures: PathBuf,
    pub(super) selected: Vec<LoadedScenario>,
    pub(super) schemas: Arc<SchemaSet>,
    pub(super) mock_llm: PathBuf,
    pub(super) jobs: usize,
}

pub(super) fn prepare(common: &Common) -> Result<Prepared, Fatal> {
    let schemas = schema_set(common.locations.schemas.as_deref())?;
    schemas.require(schemas::RUNNER_KINDS).map_err(|e| {
        Fatal::new(
            e.to_string(),
            "the runner validates journals, metadata.json, RunResult and list-runs output; pass --schemas DIR with all four",
        )
    })?;
    let selection = common.filters.selection(common.level.map(Level::from));
    let (fixtures, selected) = load_selected(&common.locations, &schemas, &selection)?;
    let mock_llm = match &common.mock_llm {
        Some(path) => path.clone(),
        None => locate::sibling_or_on_path("mock-llm").ok_or_else(|| {
            Fatal::new(
                "cannot find mock-llm next to delta-conformance or on PATH",
                "build it (`cargo build -p mock-llm`) or pass --mock-llm PATH",
            )
        })?,
    };
    let jobs = common
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
    Ok(Prepared {
        fixtures,
        selected,
        schemas: Arc::new(schemas),
        mock_llm,
        jobs,
    })
}

pub(super) fn run_suite(
    prepared: &Prepared,
    common: &Common,
    target: Target,
    on_result: impl FnMut(&report::ScenarioResult),
) -> Result<report::Report, Fatal> {
    let config = RunnerConfig {
        implementation: target.implementation,
        sessions: target.sessions,
        mock_llm: prepared.mock_llm.clone(),
        fixtures: prepared.fixtures.clone(),
        schemas: Arc::clone(&prepared.schemas),
        step_timeout: Duration::from_secs(common.timeout_secs),
        keep: common.keep,
        pass_env: common.pass_env.clone(),
        level: common.level.map(Level::from),
        commands: target.commands,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Fatal::new(
                format!("cannot start the async runtime: {e}"),
                "check the system's limits",
            )
        })?;
    Ok(runtime.block_on(suite::run(
        prepared.selected.clone(),
        config,
        prepared.jobs,
        on_result,
    )))
}

pub(super) fn load_baseline(file: &Path) -> Result<baseline::Baseline, Fatal> {
    baseline::load(file).map_err(|e| {
        Fatal::new(
            e.to_string(),
            "see docs/conformance.md (baselines) and schemas/conformance-baseline.schema.json",
        )
    })
}

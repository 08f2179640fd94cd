//! Paths of the binaries and fixtures, and running the runner to a parsed report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// This checkout's `fixtures/` (scenarios and agents). Always passed to the runner
/// explicitly: its own search starts beside its executable, so with `CARGO_TARGET_DIR`
/// inside another checkout it would test that checkout's fixtures instead.
pub fn fixtures() -> PathBuf {
    repo().join("fixtures")
}

/// This checkout's `schemas/`, passed explicitly for the same reason as [`fixtures`].
pub fn schemas() -> PathBuf {
    repo().join("schemas")
}

/// The runner under test.
pub fn runner() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_delta-conformance"))
}

/// A binary of another workspace package, built into the same directory as the runner.
/// `cargo test --workspace` (what CI runs) builds it; a narrower `cargo test -p
/// delta-conformance` may not, hence the message.
pub fn sibling(name: &str) -> PathBuf {
    let path = runner().parent().unwrap().join(name);
    assert!(
        path.is_file(),
        "{} is missing: run the tests with `cargo test --workspace` (or `cargo build --workspace` first)",
        path.display()
    );
    path
}

/// `delta-conformance ARGS` run from the repository root.
pub fn run_runner(args: &[&str]) -> Output {
    Command::new(runner())
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

/// The outcome of a whole suite run.
pub struct SuiteRun {
    /// Scenario name → PASS, FAIL or SKIP.
    pub statuses: BTreeMap<String, String>,
    /// The JSON report.
    pub report: serde_json::Value,
    /// The runner's exit code.
    pub code: Option<i32>,
}

impl SuiteRun {
    /// The names with this status.
    pub fn with_status(&self, status: &str) -> Vec<&str> {
        self.statuses
            .iter()
            .filter(|(_, s)| *s == status)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// The failures of one scenario, for assertion messages.
    pub fn failures_of(&self, name: &str) -> String {
        self.report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| serde_json::to_string_pretty(&s["failures"]).unwrap())
            .unwrap_or_default()
    }

    /// Every failure, for assertion messages.
    pub fn all_failures(&self) -> String {
        self.with_status("FAIL")
            .iter()
            .map(|n| format!("{n}: {}", self.failures_of(n)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs the suite against `implementation` (a command line) with `--format json` and the
/// extra runner arguments (e.g. a selection).
pub fn run_suite(implementation: &str, extra: &[&str]) -> SuiteRun {
    run_suite_with(&runner(), implementation, extra)
}

/// [`run_suite`] with the runner executable at `runner` (a copy of the one under test).
pub fn run_suite_with(runner: &Path, implementation: &str, extra: &[&str]) -> SuiteRun {
    let mock = sibling("mock-llm");
    let (fixtures, schemas) = (fixtures(), schemas());
    let mut args = vec![
        "run",
        "--impl",
        implementation,
        "--format",
        "json",
        // Two scenarios at a time, as on the 2-core CI machine: the suite's signal and
        // timeout scenarios are timing-sensitive, and tests of this binary run in parallel.
        "--jobs",
        "2",
        "--mock-llm",
        mock.to_str().unwrap(),
        "--fixtures",
        fixtures.to_str().unwrap(),
        "--schemas",
        schemas.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = Command::new(runner)
        .args(&args)
        .current_dir(repo())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "the report is not JSON ({err}); stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let statuses = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    SuiteRun {
        statuses,
        report,
        code: output.status.code(),
    }
}

/// Suite runs that several tests read, each made once per test binary: a test that needs
/// one another test is making waits for it instead of running the suite again.
pub fn shared_run(key: &str, run: impl FnOnce() -> SuiteRun) -> Arc<SuiteRun> {
    type Cells = BTreeMap<String, Arc<OnceLock<Arc<SuiteRun>>>>;
    static RUNS: OnceLock<Mutex<Cells>> = OnceLock::new();
    let cell = {
        let mut runs = RUNS.get_or_init(Mutex::default).lock().unwrap();
        Arc::clone(runs.entry(key.to_string()).or_default())
    };
    Arc::clone(cell.get_or_init(|| Arc::new(run())))
}

/// The whole suite against the workspace's `delta`, run once for every test that reads it.
pub fn real_run() -> Arc<SuiteRun> {
    shared_run("delta", || run_suite(&quoted(&sibling("delta")), &[]))
}

/// The shell-quoted path, for an `--impl` command line.
pub fn quoted(path: &Path) -> String {
    shlex::try_quote(path.to_str().unwrap())
        .unwrap()
        .into_owned()
}

/// Every scenario name of fixtures/scenarios/.
pub fn all_scenarios() -> Vec<String> {
    scenarios_without_tag(None)
}

/// The scenario names of fixtures/scenarios/ without `tag` (all with `None`), sorted.
pub fn scenarios_without_tag(tag: Option<&str>) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("fixtures/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| delta_conformance::scenario::load(&p).unwrap().scenario)
        .filter(|s| tag.is_none_or(|tag| !s.tags.iter().any(|t| t == tag)))
        .map(|s| s.name)
        .collect();
    names.sort();
    names
}

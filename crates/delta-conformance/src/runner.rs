//! Running one scenario: its throw-away directory, agent copy, mock-llm, setup files and
//! canaries, then its steps in order (stopping at the first failing step), then the
//! canaries; and, for a scenario that uses the sessions implementation, that
//! implementation on PATH and its sessions ended afterwards.
//!
//! Every check is reported: after a failed check the later steps still run, except those
//! that declare `depends_on` a check that failed, which are reported `blocked by` it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::check::{self, StepContext, StepFindings, flag_value};
use crate::exec::{self, Invocation, PlannedSignal};
use crate::matcher::Mismatch;
use crate::mock::{self, MockLlm};
use crate::reap;
use crate::report::{CheckResult, CheckStatus, Failure, ScenarioResult, Status};
use crate::scenario::{
    Action, CanaryState, CheckInfo, Command, Level, LlmEndpoint, LoadedScenario, SESSIONS_PROGRAM,
    Scenario, ScenarioChecks as _, Step,
};
use crate::schemas::SchemaSet;
use crate::vars::Vars;

/// The fake API key every implementation is given; a scenario can check that it is never
/// written to disk (`{api_key}`).
pub const API_KEY: &str = "sk-delta-conformance-0000000000000000";

/// What every scenario run shares.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The implementation's command line (relative paths already made absolute).
    pub implementation: Vec<String>,
    /// The sessions implementation's command line (`delta-sessions`), when there is one.
    /// Scenarios that need it are skipped without it.
    pub sessions: Option<Vec<String>>,
    /// The mock-llm program.
    pub mock_llm: PathBuf,
    /// The fixtures directory (holding `agents/`).
    pub fixtures: PathBuf,
    /// The schemas.
    pub schemas: Arc<SchemaSet>,
    /// The default time limit of a step.
    pub step_timeout: Duration,
    /// Keep each scenario's directory instead of deleting it.
    pub keep: bool,
    /// Variables passed through from the runner's environment (besides `PATH`).
    pub pass_env: Vec<String>,
    /// Report only checks at this level or stricter (`None`: every level).
    pub level: Option<Level>,
    /// The words each command of a scenario becomes (an adapter may respell them).
    pub commands: crate::adapter::Commands,
}

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

/// The `setup` check, failed: nothing of the scenario could run.
fn setup_check(scenario: &Scenario, failure: Failure) -> CheckResult {
    let info = scenario.runner_check("setup".to_string(), Level::Spec, "-");
    CheckResult {
        id: info.id,
        level: info.level,
        reference: None,
        status: CheckStatus::Fail,
        blocked_by: None,
        failures: vec![failure],
    }
}

fn setup_failure(what: &str, observed: String) -> Failure {
    Failure {
        step: None,
        expected: format!("setup: {what}"),
        observed,
    }
}

/// The scenario's directories, all inside its root.
struct Dirs {
    root: PathBuf,
    agent: PathBuf,
    workspace: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    runner: PathBuf,
}

impl Dirs {
    fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            agent: root.join("agent"),
            workspace: root.join("workspace"),
            home: root.join("home"),
            tmp: root.join("tmp"),
            runner: root.join(".conformance"),
        }
    }
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
    let dirs = Dirs::new(root);
    let mut vars = Vars::default();
    let path_text = |p: &Path| p.to_string_lossy().into_owned();
    vars.set("tmp", path_text(&dirs.root));
    vars.set("agent", path_text(&dirs.agent));
    vars.set("workspace", path_text(&dirs.workspace));
    vars.set("home", path_text(&dirs.home));
    vars.set("api_key", API_KEY);
    vars.set(
        "impl",
        shlex::try_join(config.implementation.iter().map(String::as_str))
            .unwrap_or_else(|_| config.implementation.join(" ")),
    );

    for dir in [&dirs.home, &dirs.tmp, &dirs.runner] {
        if let Err(err) = std::fs::create_dir_all(dir) {
            return Err(setup_failure(
                &format!("create {}", dir.display()),
                err.to_string(),
            ));
        }
    }
    prepare_agent(scenario, config, &dirs.agent)?;
    let mock = start_llm(loaded, config, &dirs, &vars).await?;
    let base_url = match &mock {
        LlmServer::Mock(server) => server.base_url(),
        LlmServer::Unreachable(port) => format!("http://127.0.0.1:{port}/v1"),
    };
    vars.set("base_url", base_url.as_str());
    let record = match &mock {
        LlmServer::Mock(server) => Some(server.record_file().to_path_buf()),
        LlmServer::Unreachable(_) => None,
    };
    if let Err(failure) = write_setup(scenario, &dirs, &vars) {
        stop(mock).await;
        return Err(failure);
    }

    let mut env = base_env(config, &dirs, &base_url);
    let sessions = config
        .sessions
        .as_deref()
        .filter(|_| scenario.needs_sessions());
    if let Some(sessions) = sessions {
        match install_sessions_shim(sessions, &dirs) {
            Ok(bin) => prepend_path(&mut env, &bin),
            Err(err) => {
                stop(mock).await;
                return Err(setup_failure(
                    &format!("put {SESSIONS_PROGRAM} on PATH"),
                    err.to_string(),
                ));
            }
        }
    }
    env.extend(
        scenario
            .env
            .iter()
            .map(|(k, v)| (k.clone(), vars.expand(v))),
    );
    let mut checks: Vec<CheckResult> = Vec::new();
    let mut first_blocked: Option<String> = None;
    for (index, step) in scenario.steps.iter().enumerate() {
        let label = crate::scenario::label(step, index);
        let main = scenario.step_check(index);
        let named = scenario.named_checks(index);
        let blocker = step.depends_on.iter().find(|dep| {
            checks
                .iter()
                .any(|c| &c.id == *dep && c.status != CheckStatus::Pass)
        });
        if let Some(blocker) = blocker {
            first_blocked.get_or_insert_with(|| main.id.clone());
            for info in std::iter::once(main).chain(named.into_iter().map(|(info, _)| info)) {
                checks.push(CheckResult {
                    id: info.id,
                    level: info.level,
                    reference: info.reference,
                    status: CheckStatus::Blocked,
                    blocked_by: Some(blocker.clone()),
                    failures: Vec::new(),
                });
            }
            continue;
        }
        let expects: Vec<&crate::scenario::Expect> = named.iter().map(|(_, e)| *e).collect();
        let findings = run_step(
            step,
            &expects,
            config,
            &dirs,
            &env,
            record.as_deref(),
            &mut vars,
        )
        .await;
        let step_id = main.id.clone();
        let mut push = |info: CheckInfo, mismatches: Vec<Mismatch>| {
            checks.push(checked(info, &label, mismatches));
        };
        push(main, findings.expect);
        for ((info, _), mismatches) in named.into_iter().zip(findings.named) {
            push(info, mismatches);
        }
        for (check, mismatches) in findings.runner {
            let (level, seed) = check.level();
            let info = scenario.runner_check(format!("{step_id}/{}", check.name()), level, seed);
            push(info, mismatches);
        }
    }
    stop(mock).await;
    if let Some(sessions) = sessions {
        end_sessions(sessions, &dirs, &env).await;
        let info = scenario.runner_check("teardown".to_string(), Level::Spec, "000 §2.3.2");
        let left = reap_leftovers(&dirs).await;
        checks.push(checked(info, "teardown", left.into_iter().collect()));
    }
    if !scenario.canaries.is_empty() {
        let level = scenario.level();
        let info = scenario.runner_check("canaries".to_string(), level, "-");
        let info = CheckInfo {
            reference: scenario.seed.clone().or(info.reference),
            ..info
        };
        // A damaged canary is worth reporting even after a failed step: it is the evidence
        // of an injection. Whether one meant to be destroyed was is only known once every
        // step has run.
        let found = check_canaries(scenario, &vars, first_blocked.is_none());
        let mut result = checked(info, "canaries", found);
        if result.status == CheckStatus::Pass
            && let Some(blocker) = first_blocked
            && scenario
                .canaries
                .iter()
                .any(|c| c.expect == CanaryState::Destroyed)
        {
            result.status = CheckStatus::Blocked;
            result.blocked_by = Some(blocker);
        }
        checks.push(result);
    }
    Ok(checks)
}

/// A check that ran: passed without mismatches, else failed with them.
fn checked(info: CheckInfo, label: &str, mismatches: Vec<Mismatch>) -> CheckResult {
    let failures: Vec<Failure> = mismatches
        .into_iter()
        .map(|m| Failure {
            step: Some(label.to_string()),
            expected: m.expected,
            observed: m.observed,
        })
        .collect();
    CheckResult {
        id: info.id,
        level: info.level,
        reference: info.reference,
        status: if failures.is_empty() {
            CheckStatus::Pass
        } else {
            CheckStatus::Fail
        },
        blocked_by: None,
        failures,
    }
}

/// What answers LLM requests.
enum LlmServer {
    Mock(Box<MockLlm>),
    Unreachable(u16),
}

async fn stop(server: LlmServer) {
    match server {
        LlmServer::Mock(mock) => mock.stop().await,
        LlmServer::Unreachable(_) => {}
    }
}

/// Copies the agent fixture to `{agent}` and writes `agent_files` over it.
fn prepare_agent(scenario: &Scenario, config: &RunnerConfig, target: &Path) -> Result<(), Failure> {
    let Some(name) = &scenario.agent else {
        return Ok(());
    };
    let source = config.fixtures.join("agents").join(name);
    if !source.is_dir() {
        return Err(setup_failure(
            &format!("the agent fixture {name:?}"),
            format!("{} is not a directory", source.display()),
        ));
    }
    copy_dir(&source, target).map_err(|err| {
        setup_failure(
            &format!("copy {} to {}", source.display(), target.display()),
            err.to_string(),
        )
    })?;
    for (rel, content) in &scenario.agent_files {
        let path = target.join(rel);
        write_file(&path, content, false)
            .map_err(|err| setup_failure(&format!("write {}", path.display()), err.to_string()))?;
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            // std::fs::copy keeps the permission bits, so executable scripts stay so.
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn write_file(path: &Path, content: &str, executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, content)?;
    if executable {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

async fn start_llm(
    loaded: &LoadedScenario,
    config: &RunnerConfig,
    dirs: &Dirs,
    vars: &Vars,
) -> Result<LlmServer, Failure> {
    let scenario = &loaded.scenario;
    match scenario.llm {
        LlmEndpoint::Unreachable => mock::unused_port()
            .map(LlmServer::Unreachable)
            .map_err(|err| setup_failure("a free port", err.to_string())),
        LlmEndpoint::Mock => {
            let script = match (&scenario.mock, &scenario.mock_file) {
                (Some(inline), _) => inline.clone(),
                (None, Some(file)) => {
                    let path = loaded.dir().join(file);
                    let text = std::fs::read_to_string(&path).map_err(|err| {
                        setup_failure(&format!("read {}", path.display()), err.to_string())
                    })?;
                    serde_saphyr::from_str::<Value>(&text).map_err(|err| {
                        setup_failure(&format!("parse {}", path.display()), err.to_string())
                    })?
                }
                (None, None) => serde_json::json!({"steps": []}),
            };
            let script_path = dirs.runner.join("mock-script.json");
            let record_path = dirs.runner.join("requests.jsonl");
            let text = serde_json::to_string_pretty(&vars.expand_value(&script))
                .map_err(|err| setup_failure("serialize the mock script", err.to_string()))?;
            std::fs::write(&script_path, text)
                .map_err(|err| setup_failure("write the mock script", err.to_string()))?;
            let strict = scenario.mock_profile.strict_name();
            MockLlm::start(&config.mock_llm, &script_path, &record_path, strict)
                .await
                .map(|server| LlmServer::Mock(Box::new(server)))
                .map_err(|err| setup_failure("start mock-llm", err.to_string()))
        }
    }
}

/// A path from the scenario, with placeholders, that must stay inside `{tmp}`.
fn inside_root(dirs: &Dirs, vars: &Vars, raw: &str) -> Result<PathBuf, Failure> {
    let expanded = PathBuf::from(vars.expand(raw));
    let inside = expanded.starts_with(&dirs.root)
        && expanded
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
    if inside {
        Ok(expanded)
    } else {
        Err(setup_failure(
            &format!("{raw:?} is inside the scenario directory"),
            expanded.display().to_string(),
        ))
    }
}

fn write_setup(scenario: &Scenario, dirs: &Dirs, vars: &Vars) -> Result<(), Failure> {
    for file in &scenario.files {
        let path = inside_root(dirs, vars, &file.path)?;
        write_file(&path, &file.content, file.executable)
            .map_err(|err| setup_failure(&format!("write {}", path.display()), err.to_string()))?;
    }
    for canary in &scenario.canaries {
        let path = inside_root(dirs, vars, &canary.path)?;
        write_file(&path, &canary_content(&path), false)
            .map_err(|err| setup_failure(&format!("write {}", path.display()), err.to_string()))?;
    }
    Ok(())
}

fn canary_content(path: &Path) -> String {
    format!("delta-conformance canary: {}\n", path.display())
}

fn check_canaries(scenario: &Scenario, vars: &Vars, all_steps_ran: bool) -> Vec<Mismatch> {
    scenario
        .canaries
        .iter()
        .filter(|canary| all_steps_ran || canary.expect == CanaryState::Intact)
        .filter_map(|canary| {
            let path = PathBuf::from(vars.expand(&canary.path));
            let content = std::fs::read_to_string(&path).ok();
            let (holds, expected) = match canary.expect {
                CanaryState::Intact => (
                    content.as_deref() == Some(canary_content(&path).as_str()),
                    "is intact (present, content unchanged)",
                ),
                CanaryState::Destroyed => (!path.exists(), "was destroyed"),
            };
            (!holds).then(|| Mismatch {
                expected: format!("canary {} {expected}", path.display()),
                observed: match content {
                    Some(text) => format!("present: {}", crate::matcher::quote(&text)),
                    None if path.exists() => "present, unreadable".to_string(),
                    None => "absent".to_string(),
                },
            })
        })
        .collect()
}

/// Writes `{tmp}/.conformance/bin/delta-sessions`, a script that runs the sessions
/// implementation, and returns its directory: an agent's tools find `delta-sessions` on
/// PATH whatever command line the implementation has (`node dist/sessions.js` too).
fn install_sessions_shim(sessions: &[String], dirs: &Dirs) -> std::io::Result<PathBuf> {
    let bin = dirs.runner.join("bin");
    let command = shlex::try_join(sessions.iter().map(String::as_str))
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidInput, err))?;
    let script = format!(
        "#!/bin/sh\n# delta-conformance: the sessions implementation under test.\nexec {command} \"$@\"\n"
    );
    write_file(&bin.join(SESSIONS_PROGRAM), &script, true)?;
    Ok(bin)
}

fn prepend_path(env: &mut Vec<(String, String)>, dir: &Path) {
    let dir = dir.to_string_lossy();
    match env.iter_mut().find(|(name, _)| name == "PATH") {
        Some((_, path)) => *path = format!("{dir}:{path}"),
        None => env.push(("PATH".to_string(), dir.into_owned())),
    }
}

/// How long each teardown command may take.
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// `SESSIONS ARGS` in `cwd`, for the teardown.
fn teardown_invocation(
    sessions: &[String],
    args: Vec<String>,
    cwd: &Path,
    env: &[(String, String)],
) -> Option<Invocation> {
    let (program, fixed) = sessions.split_first()?;
    Some(Invocation {
        program: program.clone(),
        args: fixed.iter().cloned().chain(args).collect(),
        cwd: cwd.to_path_buf(),
        env: env.to_vec(),
        stdin: None,
        timeout: TEARDOWN_TIMEOUT,
        signal: None,
    })
}

/// Ends every session a scenario left running, so that no shell outlives it (a session
/// leaves the step's process group on purpose). Through the commands of the spec: `list`
/// in `{tmp}` and in `{workspace}`, whose `.sessions/` directories hold the sessions of
/// `sessions` steps and of an agent's tools, then `end` for each active one. Sessions a
/// scenario keeps elsewhere (`--sessions-dir`) it must end itself.
async fn end_sessions(sessions: &[String], dirs: &Dirs, env: &[(String, String)]) {
    for dir in [&dirs.root, &dirs.workspace] {
        if !dir.is_dir() {
            continue;
        }
        let Some(list) = teardown_invocation(sessions, vec!["list".into()], dir, env) else {
            return;
        };
        let listed = exec::run(list).await;
        let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(&listed.stdout) else {
            continue;
        };
        let active = entries
            .iter()
            .filter(|entry| entry.get("status").and_then(Value::as_str) == Some("active"))
            .filter_map(|entry| entry.get("session_id").and_then(Value::as_str));
        for id in active {
            let args = vec!["end".to_string(), id.to_string()];
            if let Some(end) = teardown_invocation(sessions, args, dir, env) {
                // Best effort: a session that will not end is the implementation's failure
                // to report, not the runner's to fix.
                let _ignored = exec::run(end).await;
            }
        }
    }
}

/// How long processes may take to finish exiting once their sessions were ended.
const REAP_GRACE: Duration = Duration::from_secs(2);

/// Once the sessions are ended nothing may be left running in the scenario's directory:
/// what is (a session's interpreter or background job that `end` missed, or a session
/// that could not be listed) is a failure of the scenario, and is killed.
async fn reap_leftovers(dirs: &Dirs) -> Option<Mismatch> {
    let deadline = Instant::now() + REAP_GRACE;
    let mut left = reap::inside(&dirs.root);
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = reap::inside(&dirs.root);
    }
    if left.is_empty() {
        return None;
    }
    reap::kill_all(&left);
    Some(Mismatch {
        expected: format!(
            "no process is left running in {} once its sessions are ended",
            dirs.root.display()
        ),
        observed: left
            .iter()
            .map(|p| {
                // An interpreter's command line can hold a whole script.
                let mut command: String = p.command.chars().take(160).collect();
                if command.len() < p.command.len() {
                    command.push_str(" …");
                }
                format!("pid {} ({command})", p.pid)
            })
            .collect::<Vec<_>>()
            .join("; "),
    })
}

fn base_env(config: &RunnerConfig, dirs: &Dirs, base_url: &str) -> Vec<(String, String)> {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let mut env: Vec<(String, String)> = vec![
        ("HOME".into(), text(&dirs.home)),
        ("TMPDIR".into(), text(&dirs.tmp)),
        ("LC_ALL".into(), "C".into()),
        ("NO_COLOR".into(), "1".into()),
        ("TERM".into(), "dumb".into()),
        ("DELTA_API_KEY".into(), API_KEY.into()),
        ("OPENAI_API_KEY".into(), API_KEY.into()),
        ("DELTA_BASE_URL".into(), base_url.into()),
        ("OPENAI_BASE_URL".into(), base_url.into()),
    ];
    for name in std::iter::once("PATH").chain(config.pass_env.iter().map(String::as_str)) {
        if let Ok(value) = std::env::var(name) {
            env.push((name.to_string(), value));
        }
    }
    env
}

async fn run_step(
    step: &Step,
    named: &[&crate::scenario::Expect],
    config: &RunnerConfig,
    dirs: &Dirs,
    env: &[(String, String)],
    record: Option<&Path>,
    vars: &mut Vars,
) -> StepFindings {
    let unusable = |m: Mismatch| StepFindings {
        runner: Vec::new(),
        expect: vec![m.clone()],
        named: named.iter().map(|_| vec![m.clone()]).collect(),
    };
    let action = match step.action() {
        Ok(action) => action,
        Err(err) => return unusable(Mismatch::new("the step", "is valid", err)),
    };
    let (command, words, program, args) = match action {
        Action::Impl(command, args) => {
            let words: Vec<String> = match crate::scenario::words(args) {
                Ok(words) => words.iter().map(|w| vars.expand(w)).collect(),
                Err(err) => {
                    return unusable(Mismatch::new(
                        "the step's arguments",
                        "split into words",
                        err,
                    ));
                }
            };
            let base = match command {
                Command::Sessions => config.sessions.as_deref().unwrap_or_default(),
                Command::Run
                | Command::Continue
                | Command::ListRuns
                | Command::ToolExpand
                | Command::Exec => config.implementation.as_slice(),
            };
            let Some((program, fixed)) = base.split_first() else {
                let what = if command == Command::Sessions {
                    "the sessions implementation"
                } else {
                    "the implementation"
                };
                return unusable(Mismatch::new(what, "is a command", "none"));
            };
            let mut all: Vec<String> = fixed.to_vec();
            all.extend(config.commands.prefix(command));
            all.extend(words.iter().cloned());
            (Some(command), words, program.clone(), all)
        }
        Action::Shell(script) => (
            None,
            Vec::new(),
            "sh".to_string(),
            vec!["-c".to_string(), vars.expand(script)],
        ),
    };
    let workspace = flag_value(&words, &["-w", "--work-dir"])
        .map(|w| dirs.root.join(w))
        .unwrap_or_else(|| dirs.workspace.clone());
    let delta_dir = workspace.join(".delta");
    let before = check::run_dirs(&delta_dir);

    let mut step_env = env.to_vec();
    step_env.extend(step.env.iter().map(|(k, v)| (k.clone(), vars.expand(v))));
    let timeout = step
        .timeout_secs
        .map_or(config.step_timeout, Duration::from_secs);
    let signal = step.signal.as_ref().map(|s| PlannedSignal {
        signal: s.signal,
        after_lines: (s.after_requests > 0)
            .then(|| record.map(|r| (r.to_path_buf(), s.after_requests)))
            .flatten(),
        delay: Duration::from_millis(s.after_ms),
    });
    let outcome = exec::run(Invocation {
        program,
        args,
        cwd: dirs.root.clone(),
        env: step_env,
        stdin: step.stdin.as_ref().map(|s| vars.expand(s)),
        timeout,
        signal,
    })
    .await;

    let run_dir = match command {
        Some(c) if c.is_run() => {
            let run_id = find_run_id(&words, &outcome.stdout, &before, &delta_dir);
            if let Some(run_id) = &run_id {
                vars.set("run_id", run_id.as_str());
            }
            // Only a plain name can be a run directory; a refused `--run-id ../x` must not
            // send the checks outside `.delta/`.
            run_id
                .filter(|id| !id.contains('/') && crate::scenario::is_relative_inside(id))
                .map(|id| delta_dir.join(id))
                .filter(|dir| dir.is_dir())
        }
        Some(_) | None => None,
    };
    if command == Some(Command::Sessions)
        && outcome.code == Some(0)
        && check::sessions_subcommand(&words) == Some("start")
        && let Ok(started) = serde_json::from_str::<Value>(&outcome.stdout)
        && let Some(id) = started.get("session_id").and_then(Value::as_str)
    {
        vars.set("session_id", id);
    }
    let ctx = StepContext {
        command,
        words: &words,
        outcome: &outcome,
        run_dir,
        delta_dir,
        record_file: record,
        schemas: &config.schemas,
        vars,
        timeout,
    };
    let mut findings = check::check_step(&ctx, &step.expect, named);
    if let (Some(spec), Some(note)) = (&step.signal, &outcome.signal_note)
        && !note.ends_with("sent to the process group")
    {
        findings.expect.push(Mismatch::new(
            &format!("{:?}", spec.signal),
            "is sent while the command runs",
            note.clone(),
        ));
    }
    findings
}

/// The run id of a `run`/`continue` step: `--run-id`, else `run_id` in JSON stdout, else
/// the one new directory in `.delta/`.
fn find_run_id(
    words: &[String],
    stdout: &str,
    before: &[String],
    delta_dir: &Path,
) -> Option<String> {
    if let Some(id) = flag_value(words, &["--run-id"]) {
        return Some(id.to_string());
    }
    if let Ok(value) = serde_json::from_str::<Value>(stdout)
        && let Some(id) = value.get("run_id").and_then(Value::as_str)
    {
        return Some(id.to_string());
    }
    let after = check::run_dirs(delta_dir);
    let new: Vec<&String> = after.iter().filter(|d| !before.contains(d)).collect();
    match new.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

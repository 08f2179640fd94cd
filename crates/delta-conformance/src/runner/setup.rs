//! A scenario's directory made ready for its first step: the directories and
//! placeholders, the agent fixture copied, mock-llm started (or a port where nothing
//! listens), setup files and canaries written, the sessions implementation put on PATH,
//! and the steps' environment.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::{API_KEY, RunnerConfig};
use super::outcome::setup_failure;
use crate::mock::{self, MockLlm};
use crate::report::Failure;
use crate::scenario::{LlmEndpoint, LoadedScenario, SESSIONS_PROGRAM, Scenario};
use crate::vars::Vars;

/// The scenario's directories, all inside its root.
pub(super) struct Dirs {
    pub(super) root: PathBuf,
    pub(super) agent: PathBuf,
    pub(super) workspace: PathBuf,
    pub(super) home: PathBuf,
    pub(super) tmp: PathBuf,
    pub(super) runner: PathBuf,
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

/// What answers LLM requests.
pub(super) enum LlmServer {
    Mock(Box<MockLlm>),
    Unreachable(u16),
}

impl LlmServer {
    /// The base URL the implementation is given (`{base_url}`).
    fn base_url(&self) -> String {
        match self {
            LlmServer::Mock(server) => server.base_url(),
            LlmServer::Unreachable(port) => format!("http://127.0.0.1:{port}/v1"),
        }
    }

    /// mock-llm's record of the requests it received.
    fn record_file(&self) -> Option<PathBuf> {
        match self {
            LlmServer::Mock(server) => Some(server.record_file().to_path_buf()),
            LlmServer::Unreachable(_) => None,
        }
    }

    pub(super) async fn stop(self) {
        match self {
            LlmServer::Mock(mock) => mock.stop().await,
            LlmServer::Unreachable(_) => {}
        }
    }
}

/// What the steps run in: the scenario's directories, the placeholders' values, the
/// environment, and where mock-llm records requests.
pub(super) struct Scene {
    pub(super) dirs: Dirs,
    pub(super) vars: Vars,
    pub(super) env: Vec<(String, String)>,
    /// mock-llm's record of requests (none for an unreachable LLM).
    pub(super) record: Option<PathBuf>,
    /// The sessions implementation, when the scenario uses it.
    pub(super) sessions: Option<Vec<String>>,
}

impl Scene {
    /// Makes `root` ready for the first step: directories, the agent, the LLM server
    /// (which the caller stops), setup files and canaries, the environment.
    pub(super) async fn set_up(
        loaded: &LoadedScenario,
        config: &RunnerConfig,
        root: &Path,
    ) -> Result<(Self, LlmServer), Failure> {
        let scenario = &loaded.scenario;
        let dirs = Dirs::new(root);
        let mut vars = placeholders(&dirs, config);
        for dir in [&dirs.home, &dirs.tmp, &dirs.runner] {
            std::fs::create_dir_all(dir).map_err(|err| {
                setup_failure(&format!("create {}", dir.display()), err.to_string())
            })?;
        }
        prepare_agent(scenario, config, &dirs.agent)?;
        let llm = start_llm(loaded, config, &dirs, &vars).await?;
        let base_url = llm.base_url();
        vars.set("base_url", base_url.as_str());
        let sessions = config
            .sessions
            .clone()
            .filter(|_| scenario.needs_sessions());
        let ready = write_setup(scenario, &dirs, &vars).and_then(|()| {
            environment(
                scenario,
                config,
                &dirs,
                &vars,
                &base_url,
                sessions.as_deref(),
            )
        });
        let env = match ready {
            Ok(env) => env,
            Err(failure) => {
                llm.stop().await;
                return Err(failure);
            }
        };
        let scene = Scene {
            dirs,
            vars,
            env,
            record: llm.record_file(),
            sessions,
        };
        Ok((scene, llm))
    }
}

/// The placeholders known before the LLM server starts.
fn placeholders(dirs: &Dirs, config: &RunnerConfig) -> Vars {
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
    vars
}

/// Every step's environment: the runner's, the sessions implementation on PATH when the
/// scenario uses it, then the scenario's own.
fn environment(
    scenario: &Scenario,
    config: &RunnerConfig,
    dirs: &Dirs,
    vars: &Vars,
    base_url: &str,
    sessions: Option<&[String]>,
) -> Result<Vec<(String, String)>, Failure> {
    let mut env = base_env(config, dirs, base_url);
    if let Some(sessions) = sessions {
        let bin = install_sessions_shim(sessions, dirs).map_err(|err| {
            setup_failure(&format!("put {SESSIONS_PROGRAM} on PATH"), err.to_string())
        })?;
        prepend_path(&mut env, &bin);
    }
    env.extend(
        scenario
            .env
            .iter()
            .map(|(k, v)| (k.clone(), vars.expand(v))),
    );
    Ok(env)
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

pub(super) fn canary_content(path: &Path) -> String {
    format!("delta-conformance canary: {}\n", path.display())
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

//! One way to start a run and drive it to its end, for every command that runs agents
//! (`delta run`, `delta continue`, and the commands to come: batch, fork, replay).
//!
//! [`Launch::prepare`] does everything that can refuse before anything is created: it
//! loads the agent, chooses the workspace (asking the caller's [`Frontend`] the reuse
//! question), resolves the credentials once, reads the LLM and output settings from the
//! environment and, for a continued run, checks that the run can be taken over. Then
//! [`Launch::drive`] installs the signal handlers, creates the run (or takes it over),
//! drives it with the caller's [`Observer`] and returns the [`Finished`] run, its result
//! read back from the `metadata.json` on disk. The library never prints: warnings, the
//! question and the takeover report go through the [`Frontend`], every step through the
//! [`Observer`].

mod question;
mod settings;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use question::{MAX_QUESTIONS, Reuse, ask_reuse};
pub use settings::{
    BACKOFF_MS_ENV, MAX_ATTEMPTS_ENV, OUTPUT_LIMIT_MB_ENV, TIMEOUT_MS_ENV, client_settings,
    env_var, output_limit,
};

use crate::answer::{OutputSchema, SchemaFileError};
use crate::budget::{Budget, Exceeded, Spent};
use crate::config::{self, Agent, ConfigError};
use crate::engine::{
    self, ActiveRun, DEFAULT_MAX_ITERATIONS, HumanInput, Limits, NewRun, Observer, Origin, Shutdown,
};
use crate::journal::FsyncPolicy;
use crate::llm::{ChatModel, LlmClient, resolve_credentials};
use crate::output::{OutputError, RunResult};
use crate::process::OutputPolicy;
use crate::resume::{self, ContinueOptions, Entry, ResumeError, ResumeReport};
use crate::run::{ReplayRef, RunId, RunPaths, RunStateError};
use crate::secrets::Redactor;
use crate::workspace::{
    AgentWorkspace, WORKSPACES_DIR, WorkspaceError, check_workspace_path, create_next_workspace,
    ensure_workspace, last_used, parse_workspace_name, set_last_used,
};

/// How many generated ids are tried before a collision is reported.
const GENERATED_ID_ATTEMPTS: u32 = 5;

/// What to run.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// A new run, or an existing one to continue.
    pub start: Start,
    /// The iteration budget of this process [default: agent.yaml's, else
    /// [`DEFAULT_MAX_ITERATIONS`]].
    pub max_iterations: Option<u32>,
    /// Money, tokens and time over the run's life; each limit given here wins over
    /// agent.yaml's, which wins over what a continued run recorded.
    pub budget: Budget,
    /// A JSON Schema file the final answer must satisfy (wins over agent.yaml's).
    pub output_schema: Option<PathBuf>,
    /// `Some(false)`: never offer `ask_human` (wins over agent.yaml's `ask_human`).
    pub ask_human: Option<bool>,
}

/// Which run a [`LaunchSpec`] drives.
#[derive(Debug, Clone)]
pub enum Start {
    /// A new run of an agent.
    New {
        /// The agent directory (or its agent.yaml / config.yaml), relative to `cwd`.
        agent: PathBuf,
        /// The directory relative paths start from, and `${CWD}` of the first load.
        cwd: PathBuf,
        /// The task: the run's first user message.
        task: String,
        /// The workspace (created when missing); `None`: one of the agent's numbered
        /// workspaces, the last used one when the [`Frontend`] says so.
        workspace: Option<PathBuf>,
        /// The client's run id; `None`: a generated one.
        run_id: Option<RunId>,
    },
    /// An existing run, continued from its journal with the agent as configured now.
    Continue {
        /// The workspace that holds the run (absolute).
        workspace: PathBuf,
        /// The run.
        run_id: RunId,
        /// An instruction, or the answer to the run's question.
        message: Option<String>,
        /// Take over a RUNNING run recorded on another host.
        force: bool,
    },
    /// A new run whose LLM answers come from a recording instead of the configured
    /// endpoint (`delta replay`): no credentials are resolved and nothing is sent anywhere.
    Replay(Box<ReplayStart>),
}

/// A new run of [`Start::Replay`].
#[derive(Debug, Clone)]
pub struct ReplayStart {
    /// The agent directory (absolute).
    pub agent: PathBuf,
    /// The workspace (absolute; created when missing).
    pub workspace: PathBuf,
    /// The run's id.
    pub run_id: RunId,
    /// The task: the run's first user message.
    pub task: String,
    /// What answers the requests.
    pub model: Arc<dyn ChatModel>,
    /// The recorded run played back, for the new run's metadata.
    pub replay_of: ReplayRef,
}

/// What a launch needs from the one who started it, since the library neither prints nor
/// reads a terminal.
pub trait Frontend {
    /// A warning about the agent's configuration, before anything is created.
    fn warning(&mut self, message: &str);

    /// Whether to run in `previous`, the agent's workspace used last, or in a new one.
    /// Answer [`Reuse::New`] when nobody can be asked; [`ask_reuse`] asks on a terminal.
    ///
    /// # Errors
    /// When the question cannot be answered; nothing has been created.
    fn reuse_workspace(&mut self, previous: &str) -> Result<Reuse, LaunchError>;

    /// A continued run was taken over: what the takeover did that the user should know.
    fn took_over(&mut self, report: &ResumeReport);
}

/// Why a run could not be started, continued or recorded (the loop's own outcomes are
/// run statuses, not errors).
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The agent's configuration is unusable; its `Display` is the complete diagnostic.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No usable API key or base URL.
    #[error("{0}")]
    Credentials(#[from] crate::llm::CredentialsError),
    /// A `DELTA_LLM_*` variable has a value out of its range.
    #[error("{variable}={value:?} is not {expected}")]
    Setting {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// `DELTA_FSYNC` has an unknown value.
    #[error(transparent)]
    Fsync(crate::journal::JournalError),
    /// The LLM client cannot be set up.
    #[error(transparent)]
    Client(#[from] crate::llm::LlmError),
    /// The workspace cannot be chosen or created.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// Reading the answer to the workspace question failed.
    #[error("cannot read the answer from standard input: {0}")]
    Prompt(#[source] std::io::Error),
    /// The workspace question got no answer it understood, [`MAX_QUESTIONS`] times.
    #[error(
        "no clear answer to \"Reuse workspace {previous}?\" after {MAX_QUESTIONS} tries; \
         nothing was created"
    )]
    NoAnswer {
        /// The workspace offered.
        previous: String,
    },
    /// The run cannot be taken over (unknown, still active, other host, needs `-m`…).
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The run cannot be created or recorded (the id is taken, the disk refuses).
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    /// The async runtime or the signal handlers cannot be set up.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The finished run's metadata cannot be read back.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// `--output-schema` names no usable schema.
    #[error(transparent)]
    OutputSchema(#[from] SchemaFileError),
    /// A cost budget for a model whose price is unknown cannot be kept.
    #[error("a cost budget needs the price of {model}, which is not known")]
    UnknownPrice {
        /// The model.
        model: String,
    },
    /// The run to continue stopped on a budget that is still spent.
    #[error("{}; the run cannot go on within it", exceeded.message())]
    BudgetSpent {
        /// The budget, its limit and use.
        exceeded: Exceeded,
    },
}

impl LaunchError {
    /// How to fix it, when the message does not already say.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        if let Some(path) = self.denied_path() {
            return Some(format!(
                "check the permissions of {} (the workspace's .delta/ must be writable), or \
                 pass a workspace you can write to with -w",
                path.display()
            ));
        }
        match self {
            LaunchError::Setting { variable, .. } => {
                Some(format!("fix {variable}, or unset it for the default"))
            }
            LaunchError::Engine(engine::EngineError::RunState(RunStateError::RunExists {
                run_id,
                workspace,
            })) => Some(format!(
                "choose another --run-id, or resume that run with `delta continue --run-id \
                 {run_id} -w {}`",
                workspace.display()
            )),
            LaunchError::Workspace(error) => error.help(),
            LaunchError::OutputSchema(_) => {
                Some("pass a JSON Schema file (draft 2020-12) to --output-schema".to_owned())
            }
            LaunchError::UnknownPrice { .. } => Some(
                "give the model's prices under llm.pricing in agent.yaml (input_per_million, \
                 output_per_million), or drop the cost budget"
                    .to_owned(),
            ),
            LaunchError::BudgetSpent { exceeded } => Some(format!(
                "give a larger budget: {} with more than {}",
                exceeded.budget.flag(),
                exceeded.budget.show(exceeded.used)
            )),
            LaunchError::NoAnswer { previous } => Some(format!(
                "answer y (reuse {previous}) or n (a new workspace); -y always creates a new \
                 one and -w PATH names the workspace, both without asking"
            )),
            LaunchError::Config(_)
            | LaunchError::Credentials(_)
            | LaunchError::Fsync(_)
            | LaunchError::Client(_)
            | LaunchError::Prompt(_)
            | LaunchError::Resume(_)
            | LaunchError::Engine(_)
            | LaunchError::Runtime(_)
            | LaunchError::Output(_) => None,
        }
    }
}

impl LaunchError {
    /// The workspace's `.delta/` or the run directory the OS refused to create (no
    /// permission, a read-only file system): something the user must grant or choose
    /// differently, unlike a full disk.
    #[must_use]
    pub fn denied_path(&self) -> Option<&Path> {
        if let LaunchError::Engine(engine::EngineError::RunState(RunStateError::Denied(denied))) =
            self
        {
            return Some(&denied.path);
        }
        None
    }
}

/// A run ready to be driven: everything checked, nothing of the run created yet (a new
/// run's workspace aside).
#[derive(Debug)]
pub struct Launch {
    limits: Limits,
    agent: Agent,
    llm: Arc<dyn ChatModel>,
    output: OutputPolicy,
    fsync: FsyncPolicy,
    max_iterations: u32,
    pending: Pending,
}

/// The run [`Launch::drive`] creates or takes over.
#[derive(Debug)]
enum Pending {
    New {
        workspace: PathBuf,
        workspace_id: Option<String>,
        run_id: Option<RunId>,
        task: String,
        replay_of: Option<ReplayRef>,
    },
    Continue {
        workspace: PathBuf,
        run_id: RunId,
        message: Option<String>,
        force: bool,
    },
}

/// A run driven to its end.
#[derive(Debug)]
pub struct Finished {
    /// The run's files.
    pub paths: RunPaths,
    /// Its RunResult, read back from the `metadata.json` on disk.
    pub result: RunResult,
}

impl Launch {
    /// Checks everything the run of `spec` needs, in the order a user fixes them.
    ///
    /// A new run: the agent (its warnings to `frontend`), the `-w` path, the workspace
    /// choice (the reuse question, nothing created yet), the credentials (once, with the
    /// chosen workspace's `.env`), the LLM and output settings, `DELTA_FSYNC`; then the
    /// workspace is created and the agent reloaded with `${CWD}` = the workspace.
    ///
    /// A continued run: the run and its metadata, `DELTA_FSYNC`, what its state needs
    /// (host, live owner, `-m`), the agent reloaded from the run's `agent_home` (so an
    /// edited agent takes effect), the credentials and settings.
    ///
    /// # Errors
    /// Every [`LaunchError`] but those of driving; nothing of the run exists yet.
    pub fn prepare(spec: LaunchSpec, frontend: &mut dyn Frontend) -> Result<Self, LaunchError> {
        let asked = spec.limits();
        match spec.start {
            Start::New {
                agent,
                cwd,
                task,
                workspace,
                run_id,
            } => prepare_new(
                &agent,
                &cwd,
                task,
                workspace.as_deref(),
                run_id,
                (spec.max_iterations, &asked),
                frontend,
            ),
            Start::Continue {
                workspace,
                run_id,
                message,
                force,
            } => prepare_continue(
                workspace,
                run_id,
                message,
                force,
                (spec.max_iterations, &asked),
                frontend,
            ),
            Start::Replay(replay) => {
                prepare_replay(*replay, (spec.max_iterations, &asked), frontend)
            }
        }
    }

    /// The agent the run uses.
    #[must_use]
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Drives the run to its end: the signal handlers (SIGINT, SIGTERM) installed first,
    /// so that no signal can leave the run RUNNING; the run created (a generated id that
    /// happens to be taken is replaced, a client's is not) or taken over (its report to
    /// `frontend`); `ask_human` answered by `human` when given, else the run pauses; every
    /// step reported to `observer`.
    ///
    /// # Errors
    /// When the run cannot be created, taken over or recorded, or its result read back.
    pub fn drive(
        self,
        observer: &mut dyn Observer,
        human: Option<Arc<dyn HumanInput>>,
        frontend: &mut dyn Frontend,
    ) -> Result<Finished, LaunchError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(LaunchError::Runtime)?;
        let paths = runtime.block_on(async {
            let shutdown = Shutdown::on_signals().map_err(LaunchError::Runtime)?;
            let mut active = match self.begin(frontend)? {
                Begun::Active(active) => active.with_limits(self.limits.clone()),
                Begun::Finished(paths) => return Ok(paths),
            };
            if let Some(human) = human {
                active = active.with_human(human);
            }
            let paths = active
                .drive(&self.agent, self.llm.as_ref(), observer, shutdown)
                .await?;
            Ok::<_, LaunchError>(paths)
        })?;
        let result = RunResult::load(&paths)?;
        Ok(Finished { paths, result })
    }

    /// The run as an [`ActiveRun`]: created, or taken over; or, taken over, already at
    /// its end ([`Entry::Finished`]).
    fn begin(&self, frontend: &mut dyn Frontend) -> Result<Begun, LaunchError> {
        match &self.pending {
            Pending::New {
                workspace,
                workspace_id,
                run_id,
                task,
                replay_of,
            } => {
                let mut attempts = 0;
                loop {
                    let id = match run_id {
                        Some(id) => id.clone(),
                        None => RunId::generate(chrono::Utc::now()),
                    };
                    let new = NewRun {
                        workspace,
                        workspace_id: workspace_id.clone(),
                        run_id: id,
                        task,
                        max_iterations: self.max_iterations,
                        fsync: self.fsync,
                        replay_of: replay_of.clone(),
                    };
                    attempts += 1;
                    match ActiveRun::begin(Origin::New(new), &self.agent, self.output.clone()) {
                        Err(engine::EngineError::RunState(RunStateError::RunExists { .. }))
                            if run_id.is_none() && attempts < GENERATED_ID_ATTEMPTS => {}
                        other => {
                            return other
                                .map(|active| Begun::Active(Box::new(active)))
                                .map_err(LaunchError::from);
                        }
                    }
                }
            }
            Pending::Continue {
                workspace,
                run_id,
                message,
                force,
            } => {
                let options = ContinueOptions {
                    message: message.as_deref(),
                    force: *force,
                    max_iterations: self.max_iterations,
                    fsync: self.fsync,
                    redactor: self.output.redactor.clone(),
                };
                let resumed = resume::take_over(workspace, run_id, &options)?;
                frontend.took_over(&resumed.report);
                if resumed.report.entry == Entry::Finished {
                    return Ok(Begun::Finished(resumed.paths));
                }
                Ok(Begun::Active(Box::new(ActiveRun::begin(
                    Origin::Continued(Box::new(resumed)),
                    &self.agent,
                    self.output.clone(),
                )?)))
            }
        }
    }
}

/// What [`Launch::begin`] made of the run.
enum Begun {
    /// Ready to be driven.
    Active(Box<ActiveRun>),
    /// Nothing left to drive: its result is on disk.
    Finished(RunPaths),
}

fn prepare_new(
    agent_path: &Path,
    cwd: &Path,
    task: String,
    work_dir: Option<&Path>,
    run_id: Option<RunId>,
    (max_iterations, asked): (Option<u32>, &AskedLimits),
    frontend: &mut dyn Frontend,
) -> Result<Launch, LaunchError> {
    let agent = config::load_agent(agent_path, cwd)?;
    for warning in &agent.warnings {
        frontend.warning(warning);
    }
    // Before the credentials, which read `-w`'s .env: a file given as `-w` is reported
    // as such, not as an unreadable `afile/.env`.
    if let Some(dir) = work_dir {
        check_workspace_path(dir)?;
    }
    let choice = choose_workspace(&agent, work_dir, frontend)?;
    // A missing key fails here, before anything is created.
    let credentials = resolve_credentials(&choice.env_dir(&agent.home), &agent.home, env_var)?;
    let settings = client_settings(env_var)?;
    let output_limit = output_limit(env_var)?;
    let fsync = FsyncPolicy::from_env().map_err(LaunchError::Fsync)?;
    // What the limits refuse (an unknown price, a bad schema) is refused before anything
    // is created; they are decided again below from the agent as reloaded.
    asked.decide(&agent, Budget::default())?;

    let (workspace, workspace_id) = choice.create(&agent.home)?;
    let agent = config::load_agent(agent_path, &workspace)?;
    let output = OutputPolicy::new(output_limit, Redactor::for_run(&credentials, env_var));
    let llm = Arc::new(LlmClient::new(credentials, settings)?);
    let max_iterations = budget(max_iterations, &agent);
    let limits = asked.decide(&agent, Budget::default())?;
    Ok(Launch {
        limits,
        agent,
        llm,
        output,
        fsync,
        max_iterations,
        pending: Pending::New {
            workspace,
            workspace_id,
            run_id,
            task,
            replay_of: None,
        },
    })
}

/// A new run answered by a recording: the agent as configured now, loaded with `${CWD}` =
/// the workspace; no credentials (the redactor still knows the keys tools inherit).
fn prepare_replay(
    replay: ReplayStart,
    (max_iterations, asked): (Option<u32>, &AskedLimits),
    frontend: &mut dyn Frontend,
) -> Result<Launch, LaunchError> {
    let workspace = ensure_workspace(&replay.workspace)?.root().to_path_buf();
    let agent = config::load_agent(&replay.agent, &workspace)?;
    for warning in &agent.warnings {
        frontend.warning(warning);
    }
    let output = OutputPolicy::new(output_limit(env_var)?, Redactor::inherited(env_var));
    let fsync = FsyncPolicy::from_env().map_err(LaunchError::Fsync)?;
    let limits = asked.decide(&agent, Budget::default())?;
    let workspace_id = numbered_id(&agent.home, &workspace);
    Ok(Launch {
        limits,
        max_iterations: budget(max_iterations, &agent),
        agent,
        llm: replay.model,
        output,
        fsync,
        pending: Pending::New {
            workspace,
            workspace_id,
            run_id: Some(replay.run_id),
            task: replay.task,
            replay_of: Some(replay.replay_of),
        },
    })
}

fn prepare_continue(
    workspace: PathBuf,
    run_id: RunId,
    message: Option<String>,
    force: bool,
    (max_iterations, asked): (Option<u32>, &AskedLimits),
    frontend: &mut dyn Frontend,
) -> Result<Launch, LaunchError> {
    let (paths, recorded) = resume::inspect(&workspace, &run_id)?;
    let fsync = FsyncPolicy::from_env().map_err(LaunchError::Fsync)?;
    let options = ContinueOptions {
        message: message.as_deref(),
        force,
        max_iterations: DEFAULT_MAX_ITERATIONS,
        fsync,
        // The preflight only reads; the run's redactor is known once its credentials are.
        redactor: Redactor::default(),
    };
    resume::preflight(&paths, &recorded, &options)?;

    let agent = config::load_agent(&recorded.agent_home, &workspace)?;
    for warning in &agent.warnings {
        frontend.warning(warning);
    }
    let credentials = resolve_credentials(&workspace, &agent.home, env_var)?;
    let settings = client_settings(env_var)?;
    let output = OutputPolicy::new(
        output_limit(env_var)?,
        Redactor::for_run(&credentials, env_var),
    );
    let llm = Arc::new(LlmClient::new(credentials, settings)?);
    let max_iterations = budget(max_iterations, &agent);
    let recorded_budget = recorded
        .budget
        .as_ref()
        .map(Budget::recorded)
        .unwrap_or_default();
    let limits = asked.decide(&agent, recorded_budget)?;
    if let Some(report) = &recorded.budget {
        let spent = Spent {
            cost_usd: recorded.usage.total_cost_usd,
            tokens: recorded.usage.input_tokens + recorded.usage.output_tokens,
            duration: std::time::Duration::from_secs_f64(report.duration_s.used),
        };
        if let Some(exceeded) = limits.budget.exceeded(spent) {
            return Err(LaunchError::BudgetSpent { exceeded });
        }
    }
    Ok(Launch {
        limits,
        agent,
        llm,
        output,
        fsync,
        max_iterations,
        pending: Pending::Continue {
            workspace,
            run_id,
            message,
            force,
        },
    })
}

/// The limits a command asked for, before agent.yaml and the run's record fill the gaps.
struct AskedLimits {
    budget: Budget,
    output_schema: Option<PathBuf>,
    ask_human: Option<bool>,
}

impl LaunchSpec {
    fn limits(&self) -> AskedLimits {
        AskedLimits {
            budget: self.budget,
            output_schema: self.output_schema.clone(),
            ask_human: self.ask_human,
        }
    }
}

impl AskedLimits {
    /// The run's [`Limits`]: what was asked, else `agent`'s, else `recorded` (a continued
    /// run's budget). A cost budget needs the model's price.
    fn decide(&self, agent: &Agent, recorded: Budget) -> Result<Limits, LaunchError> {
        let budget = self.budget.or(agent.budget).or(recorded);
        if budget.max_cost_usd.is_some()
            && crate::llm::cost_usd(&agent.llm.model, 0, 0, price(agent)).is_none()
        {
            return Err(LaunchError::UnknownPrice {
                model: agent.llm.model.clone(),
            });
        }
        let output_schema = match &self.output_schema {
            Some(path) => Some(OutputSchema::load(path)?),
            None => agent.output_schema.clone(),
        };
        Ok(Limits {
            budget,
            output_schema,
            ask_human: self.ask_human.unwrap_or(agent.ask_human),
        })
    }
}

/// agent.yaml's `llm.pricing` as the price table's override.
fn price(agent: &Agent) -> Option<(f64, f64)> {
    agent
        .llm
        .pricing
        .map(|p| (p.input_per_million, p.output_per_million))
}

/// `--max-iterations`, else agent.yaml's, else [`DEFAULT_MAX_ITERATIONS`].
fn budget(asked: Option<u32>, agent: &Agent) -> u32 {
    asked
        .or(agent.max_iterations)
        .unwrap_or(DEFAULT_MAX_ITERATIONS)
}

/// The workspace a new run goes to, decided but not yet created.
enum Choice {
    /// `-w PATH`.
    Dir(PathBuf),
    /// The agent's workspace used last.
    Last(AgentWorkspace),
    /// A new numbered workspace of the agent.
    Next,
}

/// `-w PATH`, or one of the agent's numbered workspaces: the last used one when the
/// frontend says so (it asks, or answers "new" when nobody can be asked), else a new one.
fn choose_workspace(
    agent: &Agent,
    work_dir: Option<&Path>,
    frontend: &mut dyn Frontend,
) -> Result<Choice, LaunchError> {
    if let Some(dir) = work_dir {
        return Ok(Choice::Dir(dir.to_path_buf()));
    }
    Ok(match last_used(&agent.home) {
        Some(previous) => match frontend.reuse_workspace(&previous.id)? {
            Reuse::Last => Choice::Last(previous),
            Reuse::New => Choice::Next,
        },
        None => Choice::Next,
    })
}

impl Choice {
    /// The directory whose `.env` is the credentials' workspace layer. A workspace yet to
    /// be created has no `.env`: the agent's own stands in, as it does for the agent layer.
    fn env_dir(&self, agent_home: &Path) -> PathBuf {
        match self {
            Choice::Dir(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            Choice::Last(workspace) => workspace.path.clone(),
            Choice::Next => agent_home.to_path_buf(),
        }
    }

    /// Creates the workspace when needed (`-w`'s when missing, the next `W00N`), and
    /// names a numbered one in `LAST_USED`. Returns its absolute path and its `W00N`.
    fn create(self, agent_home: &Path) -> Result<(PathBuf, Option<String>), LaunchError> {
        let workspace = match self {
            Choice::Dir(dir) => {
                let workspace = ensure_workspace(&dir)?;
                let path = workspace.root().to_path_buf();
                let id = numbered_id(agent_home, &path);
                return Ok((path, id));
            }
            Choice::Last(workspace) => workspace,
            Choice::Next => create_next_workspace(agent_home)?,
        };
        set_last_used(agent_home, &workspace.id)?;
        Ok((workspace.path, Some(workspace.id)))
    }
}

/// `W003` when `path` is `{agent_home}/workspaces/W003`.
fn numbered_id(agent_home: &Path, path: &Path) -> Option<String> {
    let parent = path.parent()?;
    let name = path.file_name()?.to_str()?;
    let workspaces = agent_home.join(WORKSPACES_DIR).canonicalize().ok()?;
    (parent == workspaces && parse_workspace_name(name).is_some()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path_error::Denied;

    #[test]
    fn the_os_refusing_the_run_directory_is_a_permission_error() {
        let run_dir = |kind| {
            let refused = std::io::Error::from(kind);
            LaunchError::Engine(engine::EngineError::RunState(Denied::sort(
                Path::new("/w/.delta/r1"),
                refused,
            )))
        };
        for kind in [
            std::io::ErrorKind::PermissionDenied,
            std::io::ErrorKind::ReadOnlyFilesystem,
        ] {
            let error = run_dir(kind);
            assert_eq!(error.denied_path(), Some(Path::new("/w/.delta/r1")));
            assert!(
                error
                    .help()
                    .unwrap()
                    .starts_with("check the permissions of /w/.delta/r1 "),
                "{error:?}"
            );
        }
        let full = run_dir(std::io::ErrorKind::StorageFull);
        assert_eq!(full.denied_path(), None);
        assert_eq!(full.help(), None);
    }
}

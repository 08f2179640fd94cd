//! One way to start a run and drive it to its end, for every command that runs agents:
//! `delta run`, `delta continue` (and `delta fork`, which continues the fork it made),
//! `delta replay`; `delta batch` runs each task as a child `delta run`.
//!
//! [`Launch::prepare`] does everything that can refuse before anything is created: it
//! loads the agent, chooses the workspace (asking the caller's [`Frontend`] the reuse
//! question), resolves the credentials once, reads the LLM and output settings from the
//! environment and, for a continued run, checks that the run can be taken over. Then
//! [`Launch::drive`] installs the signal handlers, creates the run (or takes it over),
//! drives it with the caller's [`Observer`] and returns the [`Finished`] run, its result
//! read back from the `metadata.json` on disk. The library never prints: warnings, the
//! question and the takeover report go through the [`Frontend`], every step through the
//! [`Observer`]. Its errors, with their help lines, are in `error.rs`; the workspace
//! choice is [`crate::workspace::Choice`].

mod child;
mod error;
mod question;
mod settings;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use child::{ChildAnswers, ChildModels, ChildStart, LaunchSpawner};
pub use error::LaunchError;
pub use question::ask_reuse;
pub use settings::{
    BACKOFF_MS_ENV, MAX_ATTEMPTS_ENV, OUTPUT_LIMIT_MB_ENV, TIMEOUT_MS_ENV, client_settings,
    env_var, output_limit,
};

pub use crate::workspace::{MAX_QUESTIONS, Reuse};

use crate::answer::OutputSchema;
use crate::budget::{Budget, Spent};
use crate::config::{self, Agent};
use crate::engine::{
    self, ActiveRun, DEFAULT_MAX_ITERATIONS, HumanInput, Limits, NewRun, Observer, Origin,
    Shutdown, Tree,
};
use crate::environment::{self, Ending, Environment, EnvironmentChoice, Kind, Prepared, Setting};
use crate::journal::FsyncPolicy;
use crate::llm::{ChatModel, LlmClient, ModelApi, env_files, prices, resolve_credentials_for};
use crate::output::RunResult;
use crate::process::OutputPolicy;
use crate::resume::{self, ContinueOptions, Entry, ResumeReport};
use crate::run::{CalledBy, ReplayRef, RunId, RunPaths, RunStateError, RunStatus};
use crate::secrets::Redactor;
use crate::subagent::subtree_of;
use crate::workspace::{Choice, check_workspace_path, ensure_workspace, numbered_id};

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
    /// `--environment`, `--environment-image` (win over agent.yaml's `environment:`).
    pub environment: EnvironmentChoice,
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
    /// A sub-agent run an agent tool's call starts (driven with
    /// [`Launch::drive_nested`] inside its caller's process).
    Child(Box<ChildStart>),
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
    /// The recordings of its sub-agents, which answer the replay's sub-agents.
    pub children: Option<Arc<dyn ChildModels>>,
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
    /// The recordings that answer the run's sub-agents (a replay).
    children: Option<Arc<dyn ChildModels>>,
    /// Where the tools will run, checked (its image built), not started yet.
    environment: Prepared,
    /// The run's record says it ran in a container before (a continued run).
    had_container: bool,
    /// The command line's `--environment` choice, which the run's sub-agents inherit.
    choice: EnvironmentChoice,
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
        called_by: Option<CalledBy>,
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
        let choice = &spec.environment;
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
                (spec.max_iterations, &asked, choice),
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
                (spec.max_iterations, &asked, choice),
                frontend,
            ),
            Start::Replay(replay) => {
                prepare_replay(*replay, (spec.max_iterations, &asked, choice), frontend)
            }
            Start::Child(child) => {
                child::prepare_child(*child, (spec.max_iterations, &asked, choice), frontend)
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
    /// step reported to `observer`. Its sub-agents run in this process, on the same
    /// runtime, stopped by the same signals.
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
        runtime.block_on(async {
            let shutdown = Shutdown::on_signals().map_err(LaunchError::Runtime)?;
            let spawner =
                LaunchSpawner::new(human.clone(), self.children.clone(), self.choice.clone());
            let tree = Tree::root(&self.agent, Arc::new(spawner));
            self.drive_nested(observer, human, frontend, shutdown, tree)
                .await
        })
    }

    /// What [`Launch::drive`] does once the runtime and the signal handlers exist: the
    /// run's environment started, the run created or taken over and driven, at its place
    /// `tree` in a tree of runs. A sub-agent is driven this way inside its caller's
    /// process.
    ///
    /// # Errors
    /// As [`Launch::drive`].
    pub async fn drive_nested(
        self,
        observer: &mut dyn Observer,
        human: Option<Arc<dyn HumanInput>>,
        frontend: &mut dyn Frontend,
        shutdown: Shutdown,
        tree: Tree,
    ) -> Result<Finished, LaunchError> {
        let (begun, environment) = self.begin(frontend).await?;
        let mut active = match begun {
            Begun::Active(active) => active.with_tree(tree).with_limits(self.limits.clone()),
            Begun::Finished(paths) => {
                environment.shutdown(Ending::Paused);
                let result = RunResult::load(&paths)?;
                return Ok(Finished { paths, result });
            }
        };
        active = match active.with_environment(&environment) {
            Ok(active) => active,
            Err(error) => {
                environment.shutdown(Ending::Paused);
                return Err(error.into());
            }
        };
        if let Some(human) = human {
            active = active.with_human(human);
        }
        let driven = active
            .drive(&self.agent, self.llm.as_ref(), observer, shutdown)
            .await;
        // A run that waits for an answer (or whose end could not be recorded) keeps its
        // container for `delta continue`.
        let ending = match &driven {
            Ok(paths) => match crate::run::read_metadata(&paths.metadata()) {
                Ok(metadata) if metadata.status != RunStatus::WaitingForInput => Ending::Over,
                Ok(_) | Err(_) => Ending::Paused,
            },
            Err(_) => Ending::Paused,
        };
        environment.shutdown(ending);
        let paths = driven?;
        let result = RunResult::load(&paths)?;
        Ok(Finished { paths, result })
    }

    /// Starts the run's environment and checks the tools' programs in it: nothing of the
    /// run exists yet, and a failure leaves nothing behind.
    async fn start_environment(&self, run_id: &RunId) -> Result<Environment, LaunchError> {
        let environment = self
            .environment
            .start(run_id.as_str(), self.had_container)?;
        if let Err(error) = environment.check_programs().await {
            // A container made for this attempt goes with it; one a continued run found
            // keeps what its earlier processes left there.
            let made_now = environment
                .report()
                .is_some_and(|report| report.container_created == Some(true));
            environment.shutdown(if made_now {
                Ending::Over
            } else {
                Ending::Paused
            });
            return Err(error.into());
        }
        Ok(environment)
    }

    /// The run as an [`ActiveRun`]: created, or taken over; or, taken over, already at
    /// its end ([`Entry::Finished`]); with its environment, started first, so that RUN_START
    /// can say what it enforces and nothing of the run exists when it cannot be started.
    async fn begin(
        &self,
        frontend: &mut dyn Frontend,
    ) -> Result<(Begun, Environment), LaunchError> {
        match &self.pending {
            Pending::New {
                workspace,
                workspace_id,
                run_id,
                task,
                replay_of,
                called_by,
            } => {
                let mut attempts = 0;
                loop {
                    let id = match run_id {
                        Some(id) => id.clone(),
                        None => RunId::generate(chrono::Utc::now()),
                    };
                    attempts += 1;
                    // A generated id that is taken is replaced before a container is
                    // named after it.
                    if run_id.is_none()
                        && attempts < GENERATED_ID_ATTEMPTS
                        && RunPaths::new(workspace, &id).dir().exists()
                    {
                        continue;
                    }
                    let environment = self.start_environment(&id).await?;
                    let new = NewRun {
                        workspace,
                        workspace_id: workspace_id.clone(),
                        run_id: id,
                        task,
                        max_iterations: self.max_iterations,
                        fsync: self.fsync,
                        replay_of: replay_of.clone(),
                        called_by: called_by.clone(),
                        environment: environment.report().cloned().map(Box::new),
                    };
                    match ActiveRun::begin(
                        Origin::New(Box::new(new)),
                        &self.agent,
                        self.output.clone(),
                    ) {
                        Err(engine::EngineError::RunState(RunStateError::RunExists { .. }))
                            if run_id.is_none() && attempts < GENERATED_ID_ATTEMPTS =>
                        {
                            environment.shutdown(Ending::Over);
                        }
                        Ok(active) => return Ok((Begun::Active(Box::new(active)), environment)),
                        Err(error) => {
                            environment.shutdown(Ending::Over);
                            return Err(error.into());
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
                let environment = self.start_environment(run_id).await?;
                let resumed = match resume::take_over(workspace, run_id, &options) {
                    Ok(resumed) => resumed,
                    Err(error) => {
                        environment.shutdown(Ending::Paused);
                        return Err(error.into());
                    }
                };
                frontend.took_over(&resumed.report);
                if resumed.report.entry == Entry::Finished {
                    return Ok((Begun::Finished(resumed.paths), environment));
                }
                let active = ActiveRun::begin(
                    Origin::Continued(Box::new(resumed)),
                    &self.agent,
                    self.output.clone(),
                );
                match active {
                    Ok(active) => Ok((Begun::Active(Box::new(active)), environment)),
                    Err(error) => {
                        environment.shutdown(Ending::Paused);
                        Err(error.into())
                    }
                }
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
    (max_iterations, asked, choice): (Option<u32>, &AskedLimits, &EnvironmentChoice),
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
    let workspace_choice = Choice::decide(&agent.home, work_dir, |previous| {
        frontend.reuse_workspace(previous)
    })?;
    // A missing key fails here, before anything is created.
    let (llm, output, key_file) = connect(
        agent.llm.api,
        &workspace_choice.env_dir(&agent.home),
        &agent.home,
    )?;
    let fsync = FsyncPolicy::from_env().map_err(LaunchError::Fsync)?;
    // What the limits refuse (an unknown price, a bad schema) is refused before anything
    // is created; they are decided again below from the agent as reloaded.
    asked.decide(&agent, Budget::default())?;

    let (workspace, workspace_id) = workspace_choice.create(&agent.home)?;
    let agent = config::load_agent(agent_path, &workspace)?;
    let max_iterations = budget(max_iterations, &agent);
    let limits = asked.decide(&agent, Budget::default())?;
    let environment =
        prepare_environment(&agent, &workspace, choice, key_file.as_deref(), &output)?;
    Ok(Launch {
        limits,
        agent,
        llm,
        output,
        fsync,
        max_iterations,
        environment,
        had_container: false,
        choice: choice.clone(),
        pending: Pending::New {
            workspace,
            workspace_id,
            run_id,
            task,
            replay_of: None,
            called_by: None,
        },
        children: None,
    })
}

/// A new run answered by a recording: the agent as configured now, loaded with `${CWD}` =
/// the workspace; no credentials (the redactor still knows the keys tools inherit).
fn prepare_replay(
    replay: ReplayStart,
    (max_iterations, asked, choice): (Option<u32>, &AskedLimits, &EnvironmentChoice),
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
    let environment = prepare_environment(&agent, &workspace, choice, None, &output)?;
    Ok(Launch {
        limits,
        max_iterations: budget(max_iterations, &agent),
        agent,
        llm: replay.model,
        output,
        fsync,
        environment,
        had_container: false,
        choice: choice.clone(),
        pending: Pending::New {
            workspace,
            workspace_id,
            run_id: Some(replay.run_id),
            task: replay.task,
            replay_of: Some(replay.replay_of),
            called_by: None,
        },
        children: replay.children,
    })
}

fn prepare_continue(
    workspace: PathBuf,
    run_id: RunId,
    message: Option<String>,
    force: bool,
    (max_iterations, asked, choice): (Option<u32>, &AskedLimits, &EnvironmentChoice),
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
    let (llm, output, key_file) = connect(agent.llm.api, &workspace, &agent.home)?;
    let max_iterations = budget(max_iterations, &agent);
    let recorded_budget = recorded
        .budget
        .as_ref()
        .map(Budget::recorded)
        .unwrap_or_default();
    let limits = asked.decide(&agent, recorded_budget)?;
    if let Some(report) = &recorded.budget {
        // A parent's budget covers its sub-agents: what its whole tree spent.
        let usage = subtree_of(&recorded).usage;
        let spent = Spent {
            cost_usd: usage.total_cost_usd,
            tokens: usage.tokens(),
            duration: std::time::Duration::from_secs_f64(report.duration_s.used),
        };
        if let Some(exceeded) = limits.budget.exceeded(spent) {
            return Err(LaunchError::BudgetSpent { exceeded });
        }
    }
    let environment =
        prepare_environment(&agent, &workspace, choice, key_file.as_deref(), &output)?;
    let had_container = recorded
        .environment
        .as_ref()
        .is_some_and(|report| report.kind == Kind::Container);
    Ok(Launch {
        limits,
        agent,
        llm,
        output,
        fsync,
        max_iterations,
        environment,
        had_container,
        choice: choice.clone(),
        pending: Pending::Continue {
            workspace,
            run_id,
            message,
            force,
        },
        children: None,
    })
}

/// The model a run talks to (through `api`) and what happens to the output of its
/// processes: the credentials resolved once (`env_dir`'s `.env`, then the agent's, then the environment),
/// the `DELTA_LLM_*` settings, and the output limit with the redactor of those credentials
/// and the inherited key variables, which every writer of the run's files is handed.
fn connect(
    api: ModelApi,
    env_dir: &Path,
    agent_home: &Path,
) -> Result<(Arc<LlmClient>, OutputPolicy, Option<PathBuf>), LaunchError> {
    let credentials = resolve_credentials_for(api, env_dir, agent_home, env_var)?;
    let settings = client_settings(env_var)?;
    let output = OutputPolicy::new(
        output_limit(env_var)?,
        Redactor::for_run(&credentials, env_var),
    );
    let key_file = credentials
        .api_key_origin()
        .and_then(|origin| origin.source.env_file())
        .map(Path::to_path_buf);
    let llm = Arc::new(LlmClient::new(credentials, settings)?);
    Ok((llm, output, key_file))
}

/// The run's environment checked (and a container's image built) before anything of the
/// run is created: agent.yaml's `environment:` with the command line's choice.
pub(super) fn prepare_environment(
    agent: &Agent,
    workspace: &Path,
    choice: &EnvironmentChoice,
    key_file: Option<&Path>,
    output: &OutputPolicy,
) -> Result<Prepared, LaunchError> {
    let config = agent.environment.with_choice(choice)?;
    let setting = Setting {
        config: &config,
        agent_home: &agent.home,
        workspace,
        tools: &agent.tools,
        key_file,
        env_files: env_files(workspace, &agent.home),
        redactor: &output.redactor,
    };
    Ok(environment::prepare(&setting)?)
}

/// Checks what a new run of `agent` would take from the environment `env` and refuse:
/// the credentials (`env_dir`'s `.env`, the agent's, then `env`), the `DELTA_LLM_*`
/// settings, the output limit, `DELTA_FSYNC`, and a price for the cost budget. `delta
/// batch` checks each task with it, `env` being the task's `env` over the driver's
/// environment (what its child `delta run` sees), before any task runs.
///
/// # Errors
/// The first [`LaunchError`] the run would stop on.
pub fn check_settings(
    env_dir: &Path,
    agent: &Agent,
    max_cost_usd: Option<f64>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), LaunchError> {
    resolve_credentials_for(agent.llm.api, env_dir, &agent.home, &env)?;
    client_settings(&env)?;
    output_limit(&env)?;
    FsyncPolicy::parse(env(crate::journal::FSYNC_ENV).as_deref()).map_err(LaunchError::Fsync)?;
    check_cost_budget(agent, max_cost_usd.or(agent.budget.max_cost_usd))
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
        check_cost_budget(agent, budget.max_cost_usd)?;
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

/// Refuses a cost budget for a model whose price is unknown (its cost cannot be
/// estimated); `delta batch` checks its tasks with it before any of them runs.
///
/// # Errors
/// [`LaunchError::UnknownPrice`].
pub fn check_cost_budget(agent: &Agent, max_cost_usd: Option<f64>) -> Result<(), LaunchError> {
    if max_cost_usd.is_some()
        && prices(agent.llm.api, &agent.llm.model, agent.llm.pricing).is_none()
    {
        return Err(LaunchError::UnknownPrice {
            model: agent.llm.model.clone(),
        });
    }
    Ok(())
}

/// `--max-iterations`, else agent.yaml's, else [`DEFAULT_MAX_ITERATIONS`].
fn budget(asked: Option<u32>, agent: &Agent) -> u32 {
    asked
        .or(agent.max_iterations)
        .unwrap_or(DEFAULT_MAX_ITERATIONS)
}

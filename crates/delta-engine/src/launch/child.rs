//! Sub-agent runs through the one launch path: the [`Spawner`] the engine calls for an
//! agent tool's call ([`LaunchSpawner`]), which prepares the child like any run (its
//! agent, its own credentials and `llm:`, its workspace) and drives it inside the caller's
//! process with [`Launch::drive_nested`]; or, for a child an earlier process started,
//! finds how it stopped and continues it as `delta continue` would.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::{
    AskedLimits, EnvironmentChoice, Frontend, Launch, LaunchError, LaunchSpec, Pending, Reuse,
    Start, budget, connect, env_var, output_limit, prepare_environment,
};
use crate::budget::Budget;
use crate::config;
use crate::engine::{
    ChildCall, ChildOutcome, EngineEvent, HumanInput, Level, LocalFuture, Observer, Shutdown,
    Spawner, Tree,
};
use crate::journal::FsyncPolicy;
use crate::llm::ChatModel;
use crate::output::RunResult;
use crate::process::OutputPolicy;
use crate::resume::ResumeReport;
use crate::run::{ErrorType, ReplayRef, RunId, RunPaths, RunStateError, RunStatus, read_metadata};
use crate::secrets::Redactor;
use crate::workspace::{ensure_workspace, numbered_id};

/// A sub-agent run to create ([`Start::Child`]).
#[derive(Debug, Clone)]
pub struct ChildStart {
    /// What the calling run asks for.
    pub call: ChildCall,
    /// What answers its requests instead of its agent's endpoint (a replay's recording).
    pub model: Option<Arc<dyn ChatModel>>,
    /// The recorded run it replays.
    pub replay_of: Option<ReplayRef>,
}

/// The recorded sub-agents that answer a replay's sub-agents.
pub trait ChildModels: fmt::Debug + Send + Sync {
    /// The recording of the `ordinal`-th sub-agent (from 1) of the recorded run, to answer
    /// the replay's child `run_id` in `workspace`.
    ///
    /// # Errors
    /// Why there is none (the recording started fewer, or its files are unreadable): what
    /// the replay's model reads as the call's result.
    fn child(&self, ordinal: u32, run_id: &RunId, workspace: &Path)
    -> Result<ChildAnswers, String>;
}

/// What answers one replayed sub-agent.
#[derive(Debug, Clone)]
pub struct ChildAnswers {
    /// Its recorded LLM answers.
    pub model: Arc<dyn ChatModel>,
    /// Its recorded answers to `ask_human`.
    pub human: Arc<dyn HumanInput>,
    /// The recordings of its own sub-agents.
    pub children: Arc<dyn ChildModels>,
    /// The recorded run, for its metadata.
    pub replay_of: ReplayRef,
}

/// Starts sub-agents for the runs of one tree: each child with the terminal's (or the
/// recording's) answers to `ask_human`.
#[derive(Debug, Clone)]
pub struct LaunchSpawner {
    human: Option<Arc<dyn HumanInput>>,
    models: Option<Arc<dyn ChildModels>>,
    /// The top run's `--environment` choice: every run of the tree takes it.
    environment: EnvironmentChoice,
}

impl LaunchSpawner {
    /// A spawner whose children ask `human` (`-i`), answered by `models` when replayed,
    /// and run their tools where their agent.yaml says, with `environment` applied.
    #[must_use]
    pub fn new(
        human: Option<Arc<dyn HumanInput>>,
        models: Option<Arc<dyn ChildModels>>,
        environment: EnvironmentChoice,
    ) -> Self {
        Self {
            human,
            models,
            environment,
        }
    }

    async fn run(
        &self,
        call: ChildCall,
        observer: &mut dyn Observer,
        shutdown: Shutdown,
    ) -> ChildOutcome {
        let (model, human, models, replay_of) = match &self.models {
            Some(models) => match models.child(call.ordinal, &call.run_id, &call.workspace) {
                Ok(answers) => (
                    Some(answers.model),
                    Some(answers.human),
                    Some(answers.children),
                    Some(answers.replay_of),
                ),
                Err(reason) => return ChildOutcome::NotStarted(reason),
            },
            None => (None, self.human.clone(), None, None),
        };
        let start = if call.resume {
            match taken_up(&call) {
                Taken::Done(result) => return ChildOutcome::Ended(result),
                Taken::Continue(message) => Start::Continue {
                    workspace: call.workspace.clone(),
                    run_id: call.run_id.clone(),
                    message,
                    force: false,
                },
                Taken::Create => new_child(&call, model, replay_of),
            }
        } else {
            new_child(&call, model, replay_of)
        };
        let spec = LaunchSpec {
            start,
            max_iterations: None,
            budget: Budget::default(),
            output_schema: None,
            ask_human: (!call.ask_human).then_some(false),
            environment: self.environment.clone(),
        };
        let mut frontend = ChildFrontend::default();
        let prepared = Launch::prepare(spec, &mut frontend);
        for message in frontend.warnings.drain(..) {
            observer.on_event(&EngineEvent::Warning { message });
        }
        let launch = match prepared {
            Ok(launch) => launch,
            Err(error) => return ChildOutcome::NotStarted(describe(&error)),
        };
        let spawner = LaunchSpawner {
            human: human.clone(),
            models,
            environment: self.environment.clone(),
        };
        let tree = Tree {
            depth: call.called_by.depth,
            max_depth: call.max_depth.min(launch.agent().subagents.max_depth),
            spawner: Some(Arc::new(spawner)),
            parent: Some(call.parent.clone()),
        };
        let driven = launch
            .drive_nested(observer, human, &mut frontend, shutdown, tree)
            .await;
        if let Some(report) = frontend.took_over.take() {
            observer.detail(
                Level::Info,
                format!(
                    "sub-agent run {} continued from {}",
                    call.run_id, report.previous_status
                ),
            );
        }
        match driven {
            Ok(finished) => ChildOutcome::Ended(Box::new(finished.result)),
            Err(error) => ChildOutcome::NotStarted(describe(&error)),
        }
    }
}

impl Spawner for LaunchSpawner {
    fn spawn<'a>(
        &'a self,
        call: ChildCall,
        observer: &'a mut dyn Observer,
        shutdown: Shutdown,
    ) -> LocalFuture<'a, ChildOutcome> {
        Box::pin(self.run(call, observer, shutdown))
    }
}

fn new_child(
    call: &ChildCall,
    model: Option<Arc<dyn ChatModel>>,
    replay_of: Option<ReplayRef>,
) -> Start {
    Start::Child(Box::new(ChildStart {
        call: call.clone(),
        model,
        replay_of,
    }))
}

/// What becomes of a child an earlier process started and whose call is still open.
enum Taken {
    /// It ended for its own reasons (or waits for an answer nobody gave): its result.
    Done(Box<RunResult>),
    /// It stopped for the tree's sake (a signal, a crash, an ancestor's budget, a question
    /// now answered): continue it, with the answer when it has one.
    Continue(Option<String>),
    /// It never came to exist (the process died between the call and the child's
    /// creation): create it.
    Create,
}

fn taken_up(call: &ChildCall) -> Taken {
    let paths = RunPaths::new(&call.workspace, &call.run_id);
    let metadata = match read_metadata(&paths.metadata()) {
        Ok(metadata) => metadata,
        Err(RunStateError::MetadataMissing { .. }) => return Taken::Create,
        // Unreadable: continuing reports why, as `delta continue` would.
        Err(_) => return Taken::Continue(None),
    };
    let done = || match RunResult::load(&paths) {
        Ok(result) => Taken::Done(Box::new(result)),
        Err(_) => Taken::Continue(None),
    };
    match metadata.status {
        RunStatus::Running => Taken::Continue(None),
        RunStatus::Completed | RunStatus::Failed => done(),
        RunStatus::WaitingForInput => match &call.answer {
            Some(answer) => Taken::Continue(Some(answer.clone())),
            None => done(),
        },
        RunStatus::Interrupted => {
            let error_type = metadata.error.as_ref().map(|e| &e.error_type);
            let own_budget = metadata.budget.is_some_and(|report| {
                Budget::recorded(&report)
                    .exceeded(crate::budget::Spent {
                        cost_usd: report.cost_usd.used,
                        tokens: report.tokens.used,
                        duration: std::time::Duration::from_secs_f64(report.duration_s.used),
                    })
                    .is_some()
            });
            match error_type {
                Some(ErrorType::MaxIterationsReached | ErrorType::OutputTruncated) => done(),
                Some(ErrorType::BudgetExceeded) if own_budget => done(),
                Some(_) | None => Taken::Continue(None),
            }
        }
    }
}

/// One line for the model: the error and how to fix it.
fn describe(error: &LaunchError) -> String {
    match error.help() {
        Some(help) => format!("{error} ({help})"),
        None => error.to_string(),
    }
}

/// A child's [`Frontend`]: nobody to ask; warnings and the takeover report go to its
/// caller's observer.
#[derive(Default)]
struct ChildFrontend {
    warnings: Vec<String>,
    took_over: Option<ResumeReport>,
}

impl Frontend for ChildFrontend {
    fn warning(&mut self, message: &str) {
        self.warnings.push(message.to_owned());
    }

    fn reuse_workspace(&mut self, _previous: &str) -> Result<Reuse, LaunchError> {
        Ok(Reuse::New)
    }

    fn took_over(&mut self, report: &ResumeReport) {
        self.took_over = Some(report.clone());
    }
}

/// A new sub-agent run: its agent loaded with `${CWD}` = its workspace (created when
/// missing), its own credentials (its workspace's and agent's `.env`, then the
/// environment) unless a recording answers it, its own `llm:`, its own `environment:`
/// with the tree's `--environment` choice applied.
pub(super) fn prepare_child(
    child: ChildStart,
    (max_iterations, asked, choice): (Option<u32>, &AskedLimits, &EnvironmentChoice),
    frontend: &mut dyn Frontend,
) -> Result<Launch, LaunchError> {
    let call = child.call;
    let workspace = ensure_workspace(&call.workspace)?.root().to_path_buf();
    let agent = config::load_agent(&call.agent, &workspace)?;
    for warning in &agent.warnings {
        frontend.warning(warning);
    }
    let (llm, output, key_file): (Arc<dyn ChatModel>, OutputPolicy, _) = match child.model {
        Some(model) => (
            model,
            OutputPolicy::new(output_limit(env_var)?, Redactor::inherited(env_var)),
            None,
        ),
        None => {
            let (llm, output, key_file) = connect(agent.llm.api, &workspace, &agent.home)?;
            (llm, output, key_file)
        }
    };
    let fsync = FsyncPolicy::from_env().map_err(LaunchError::Fsync)?;
    let limits = asked.decide(&agent, Budget::default())?;
    let workspace_id = numbered_id(&agent.home, &workspace);
    let environment =
        prepare_environment(&agent, &workspace, choice, key_file.as_deref(), &output)?;
    Ok(Launch {
        limits,
        max_iterations: budget(max_iterations, &agent),
        agent,
        llm,
        output,
        fsync,
        environment,
        had_container: false,
        choice: choice.clone(),
        pending: Pending::New {
            workspace,
            workspace_id,
            run_id: Some(call.run_id),
            task: call.task,
            replay_of: child.replay_of,
            called_by: Some(call.called_by),
        },
        children: None,
    })
}

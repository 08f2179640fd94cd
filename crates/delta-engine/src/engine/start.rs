//! The one way an [`ActiveRun`] comes to be: a new run created in its workspace, or a run
//! taken over by [`crate::resume::take_over`] for `delta continue`. Either way the run is
//! locked, RUNNING under this process and journaled up to now, and [`ActiveRun::drive`]
//! goes on from its journal.

use std::path::Path;

use std::time::Duration;

use super::limits::Limits;
use super::subagent::Tree;
use super::{ActiveRun, EngineError, EngineLog};
use crate::budget::Budget;
use crate::config::Agent;
use crate::environment::{Environment, EnvironmentReport, Placement};
use crate::hooks::HookRunner;
use crate::hooks::claude::{ClaudeRunner, StartSource};
use crate::journal::{
    EventPayload, FsyncPolicy, Journal, MessageLevel, RunStart, SystemMessage, read_journal,
};
use crate::process::OutputPolicy;
use crate::resume::{Entry, ResumeReport, Resumed};
use crate::run::{
    CalledBy, Metadata, MetadataInit, ProcessIdentity, ReplayRef, RunId, RunLock, RunPaths,
    RunStateError, Timestamp, create_run, reclaim_abandoned, write_metadata,
};
use crate::subagent::{Ledger, Spend, subtree_of};

/// What a new run starts from.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    /// The workspace (absolute): tools' working directory, home of `.delta/`.
    pub workspace: &'a Path,
    /// `W001`… when the workspace is one of the agent's numbered workspaces.
    pub workspace_id: Option<String>,
    /// The run's id (validated; unique in the workspace or [`ActiveRun::begin`] fails).
    pub run_id: RunId,
    /// The task (`-m`).
    pub task: &'a str,
    /// The iteration budget of this process.
    pub max_iterations: u32,
    /// When the journal is fsynced (`DELTA_FSYNC`, validated by the caller up front).
    pub fsync: FsyncPolicy,
    /// The recorded run whose answers this run replays (`delta replay`).
    pub replay_of: Option<ReplayRef>,
    /// The run whose agent tool starts this one (a sub-agent).
    pub called_by: Option<CalledBy>,
    /// What the run's environment enforces (`None`: the host), for RUN_START.
    pub environment: Option<Box<EnvironmentReport>>,
}

/// Where an [`ActiveRun`] comes from.
#[derive(Debug)]
pub enum Origin<'a> {
    /// A run to create.
    New(Box<NewRun<'a>>),
    /// A run this process has taken over (`delta continue`).
    Continued(Box<Resumed>),
}

impl ActiveRun {
    /// The run of `origin`, driven with `agent` (as configured now) and `output` (what
    /// happens to the output of every tool, generator and hook of the run: the limit, and
    /// the redactor of the run's API key, which also cleans `engine.log`).
    ///
    /// A new run is created with one atomic `mkdir` of `.delta/{run_id}` (the uniqueness
    /// check, so an existing id fails here before anything else is touched), the lock,
    /// RUNNING metadata with this process's identity, and RUN_START with the task. A
    /// continued run brings its lock, journal writer (at its next seq) and RUNNING metadata
    /// from the takeover, which is recorded in `engine.log`; its iteration budget is the
    /// metadata's fresh `max_iterations`.
    ///
    /// # Errors
    /// For a new run: [`crate::run::RunStateError::RunExists`] (inside
    /// [`EngineError::RunState`]) when the id is taken; I/O errors.
    pub fn begin(
        origin: Origin<'_>,
        agent: &Agent,
        output: OutputPolicy,
    ) -> Result<ActiveRun, EngineError> {
        let mut answered = None;
        let mut pending_calls = Vec::new();
        let mut open_children = Vec::new();
        let mut approval = None;
        let (source, prompt) = match &origin {
            Origin::New(new) => (StartSource::Startup, Some(new.task.to_owned())),
            Origin::Continued(resumed) => (StartSource::Resume, instruction(&resumed.report)),
        };
        let (paths, lock, journal, metadata) = match origin {
            Origin::New(new) => create(&new, agent, &output)?,
            Origin::Continued(resumed) => {
                let resumed = *resumed;
                let log = EngineLog::open(&resumed.paths.engine_log(), output.redactor.clone());
                let Resumed {
                    paths,
                    lock,
                    journal,
                    mut metadata,
                    report,
                } = resumed;
                // Issue 30: a call made just before the process was killed was never
                // counted in metadata.json; the invocation records have it.
                if super::usage::rebuild(&paths, &mut metadata, &agent.llm) {
                    write_metadata(&paths.metadata(), &metadata, &output.redactor)?;
                }
                log_takeover(log, &report, &metadata);
                answered = report.repairs.answered.and_then(|request| {
                    let result = report.repairs.events.iter().find_map(|event| {
                        event
                            .as_action_result()
                            .filter(|result| result.action_id == request.action_id)
                    })?;
                    Some((request, result.clone()))
                });
                pending_calls = report.repairs.to_run;
                open_children = report.repairs.subagents;
                approval = report.repairs.approval;
                (paths, lock, journal, metadata)
            }
        };
        let active_before = metadata.budget.map_or(Duration::ZERO, |b| {
            Duration::from_secs_f64(b.duration_s.used)
        });
        // A continued parent has spent what its children did too.
        let tree_spent = subtree_of(&metadata).usage;
        let ledger = Ledger::new(
            metadata.run_id.clone(),
            None,
            Budget::default(),
            Spend {
                cost_usd: tree_spent.total_cost_usd,
                tokens: tree_spent.tokens(),
            },
            active_before,
        );
        let ordinals = subagent_calls(&paths)?;
        Ok(ActiveRun {
            hooks: HookRunner::new(agent.hooks.clone(), &paths, output.clone()),
            claude: ClaudeRunner::new(
                agent.claude_hooks.clone(),
                &paths,
                &agent.home,
                output.clone(),
            ),
            source,
            prompt,
            compacted: 0,
            approval,
            paths,
            _lock: lock,
            journal,
            metadata,
            human: None,
            output,
            mcp: None,
            answered,
            pending_calls,
            open_children,
            ledger,
            tree: Tree::default(),
            ordinals,
            limits: Limits::default(),
            repairs: 0,
            placement: Placement::Host,
            call_environment: None,
            context_file: crate::config::ContextCache::default(),
        })
    }

    /// Runs the run's tools in `environment`: recorded in the metadata (that of the process
    /// that took the run last) and, when the run's container had to be made anew, told to
    /// the model in a SYSTEM_MESSAGE.
    ///
    /// # Errors
    /// When the note cannot be journaled.
    pub fn with_environment(mut self, environment: &Environment) -> Result<Self, EngineError> {
        self.placement = environment.placement().clone();
        self.call_environment = environment.call_record();
        self.metadata.environment = environment.report().cloned();
        if let Some(report) = environment.report() {
            EngineLog::open(&self.paths.engine_log(), self.output.redactor.clone())
                .info(&format!("tools run in {}", report.summary()));
        }
        if let Some(note) = environment.note() {
            self.journal
                .append(EventPayload::SystemMessage(SystemMessage {
                    level: MessageLevel::Warn,
                    content: note.to_owned(),
                }))?;
        }
        Ok(self)
    }
}

/// How many sub-agents the run has started: its ACTION_REQUESTs that name one (0 for a new
/// run, whose journal holds only RUN_START).
fn subagent_calls(paths: &RunPaths) -> Result<u32, EngineError> {
    let events = read_journal(&paths.journal())?.events;
    let count = events
        .iter()
        .filter(|event| {
            matches!(&event.payload, EventPayload::ActionRequest(request) if request.subagent.is_some())
        })
        .count();
    Ok(u32::try_from(count).unwrap_or(u32::MAX))
}

/// The parts of a newly created run.
fn create(
    new: &NewRun<'_>,
    agent: &Agent,
    output: &OutputPolicy,
) -> Result<(RunPaths, RunLock, Journal, Metadata), EngineError> {
    let (paths, lock) = match create_run(new.workspace, &new.run_id) {
        Ok(paths) => {
            let lock = RunLock::try_acquire(&paths.lock())?;
            (paths, lock)
        }
        // A creation killed before anything was recorded leaves only the id behind: the
        // id is free again (issue 12 item 2).
        Err(error @ RunStateError::RunExists { .. }) => {
            match reclaim_abandoned(new.workspace, &new.run_id)? {
                Some(reclaimed) => reclaimed,
                None => return Err(error.into()),
            }
        }
        Err(error) => return Err(error.into()),
    };
    let mut metadata = Metadata::new(
        MetadataInit {
            run_id: new.run_id.clone(),
            agent_name: agent.name.clone(),
            agent_home: agent.home.clone(),
            work_dir: new.workspace.to_path_buf(),
            workspace_id: new.workspace_id.clone(),
            task: new.task.to_owned(),
            max_iterations: new.max_iterations,
        },
        &ProcessIdentity::current(),
        Timestamp::now(),
    );
    metadata.replay_of.clone_from(&new.replay_of);
    metadata.called_by.clone_from(&new.called_by);
    metadata.environment = new.environment.as_deref().cloned();
    write_metadata(&paths.metadata(), &metadata, &output.redactor)?;
    let journal = Journal::open_with(&paths.journal(), new.fsync, output.redactor.clone())?;
    journal.append(EventPayload::RunStart(RunStart {
        run_id: new.run_id.clone(),
        task: new.task.to_owned(),
        agent_ref: agent.home.display().to_string(),
        environment: new.environment.as_deref().cloned(),
    }))?;
    journal.sync()?;
    let mut log = EngineLog::open(&paths.engine_log(), output.redactor.clone());
    log.info(&format!(
        "run {} started: agent '{}' ({}), workspace {}, model {}, max_iterations {}, pid {}",
        new.run_id.as_str(),
        agent.name,
        agent.home.display(),
        new.workspace.display(),
        agent.llm.model,
        new.max_iterations,
        metadata.pid
    ));
    Ok((paths, lock, journal, metadata))
}

/// The instruction a continued run was given, which UserPromptSubmit judges: `-m` as a
/// user message (an answer to a question is not one, unless no question was pending).
fn instruction(report: &ResumeReport) -> Option<String> {
    match &report.entry {
        Entry::UserMessage(text) => Some(text.clone()),
        Entry::Answer { text, .. } if report.answer_as_user_message => Some(text.clone()),
        Entry::Answer { .. } | Entry::Resume | Entry::Finished => None,
    }
}

/// Records in `engine.log` what the takeover of a continued run did.
fn log_takeover(mut log: EngineLog, report: &ResumeReport, metadata: &Metadata) {
    if let Some(janitor) = &report.janitor {
        log.warn(&janitor.to_string());
    }
    if report.run_start_restored {
        log.warn("the journal was empty; RUN_START was journaled from metadata.json's task");
    }
    if let Some(tail) = &report.torn_tail {
        log.warn(&format!(
            "journal line {} was torn ({} bytes) and was cut off; it began: {}",
            tail.line, tail.len, tail.preview
        ));
    }
    for action_id in &report.repairs.interrupted_actions {
        log.warn(&format!(
            "action {action_id} was in progress when the run stopped; answered with ERROR, \
             not run again"
        ));
    }
    for call_id in &report.repairs.not_run_calls {
        log.warn(&format!(
            "tool call {call_id} never started before the run stopped; answered with ERROR"
        ));
    }
    for action_id in &report.repairs.recovered_answers {
        log.info(&format!(
            "action {action_id}: the journaled answer was delivered"
        ));
    }
    let entry = match &report.entry {
        Entry::Resume => "no new message".to_owned(),
        Entry::Finished => "nothing left to do (its end was journaled)".to_owned(),
        Entry::UserMessage(_) => "a new user message".to_owned(),
        Entry::Answer { source, .. } if report.answer_as_user_message => {
            format!(
                "an answer from {source}, journaled as a user message (no question was pending)"
            )
        }
        Entry::Answer { source, .. } => format!("the answer to ask_human from {source}"),
    };
    log.info(&format!(
        "run {} continued from {} with {entry}: pid {}, host {}, max_iterations {}",
        metadata.run_id,
        report.previous_status,
        metadata.pid,
        metadata.hostname,
        metadata.max_iterations
    ));
}

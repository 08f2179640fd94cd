//! `delta replay` (issue 17): a recorded run played again as a new run of the same agent
//! on the same task, its LLM answers served in order from the recording's
//! `io/invocations/` instead of a model, its tools, hooks and `ask_human` questions
//! happening for real (the answers to the questions also come from the recording).
//!
//! The recording plugs into the one launch path as a [`ChatModel`] ([`ReplayModel`]) and
//! a [`HumanInput`] ([`RecordedHuman`]); the engine's loop is the same as for any run.
//! Before serving answer N the model compares the request the engine built with the
//! recorded one (`compare`: messages and tools, ids and times masked), and the tool
//! results the replay journaled since with the recorded observations. The first
//! difference is the outcome; a request that differs ends the replay (the recorded
//! answers no longer fit it), and so does any difference with `--until-divergence`.

mod compare;
mod recording;

use std::collections::{HashSet, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde_json::Value;

pub use compare::{Masks, first_difference, request_view, text_difference};
pub use recording::{RecordedCall, RecordedHook, RecordedResult, Recording};

use crate::budget::Budget;
use crate::engine::HumanInput;
use crate::journal::{ActionResult, Event, EventPayload, JournalError};
use crate::launch::{ChildAnswers, ChildModels, LaunchSpec, ReplayStart, Start};
use crate::llm::{
    Answering, CallProgress, ChatModel, LlmError, completion_from_record, conversation_keys,
};
use crate::run::{
    InteractionRequest, ReplayRef, RunId, RunPaths, RunStateError, RunStatus, read_metadata,
};
use crate::workspace::{WorkspaceError, seed_workspace};

/// What the live stream and `engine.log` name as the model's endpoint.
const ENDPOINT: &str = "replay";

/// Why a replay could not be prepared. Nothing of the recording changes in any case.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The recorded run is missing or unreadable.
    #[error(transparent)]
    Run(#[from] RunStateError),
    /// The recorded journal cannot be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The fresh workspace of `--workspace-from` could not be made.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// An `io/invocations/` record of the recording is missing or unreadable.
    #[error("cannot replay from {}: {reason}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl ReplayError {
    /// How to fix it, when there is something to say beyond the message.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            ReplayError::Workspace(error) => error.help(),
            ReplayError::Record { .. } => Some(
                "a run can be replayed while its io/invocations/ records are complete; \
                 replay another run, or fork this one before the damaged step"
                    .to_owned(),
            ),
            ReplayError::Run(_) | ReplayError::Journal(_) => None,
        }
    }
}

/// What to replay.
#[derive(Debug, Clone)]
pub struct ReplaySpec {
    /// The workspace holding the recorded run (absolute).
    pub workspace: PathBuf,
    /// The recorded run.
    pub run_id: RunId,
    /// The replay's id [default: a generated one].
    pub new_run_id: Option<RunId>,
    /// Replay in a fresh numbered workspace of the agent seeded with a copy of this
    /// directory, instead of in the recording's workspace.
    pub workspace_from: Option<PathBuf>,
    /// Stop at the first divergence, an observation's included.
    pub until_divergence: bool,
    /// Where the replay's tools run (`--environment`, `--environment-image`).
    pub environment: crate::environment::EnvironmentChoice,
}

/// A replay ready to be launched.
#[derive(Debug)]
pub struct Replay {
    /// The new run, for [`crate::launch::Launch::prepare`].
    pub launch: LaunchSpec,
    /// The recorded answers; ask it for the [`Outcome`] once the run ended.
    pub model: Arc<ReplayModel>,
    /// The recorded answers to `ask_human`.
    pub human: Arc<RecordedHuman>,
}

/// Reads the recording and sets up its replay (a seeded workspace is created; the run is
/// not).
///
/// # Errors
/// When the recording cannot be read or the seeded workspace made.
pub fn prepare(spec: &ReplaySpec) -> Result<Replay, ReplayError> {
    let recording = Recording::load(&spec.workspace, &spec.run_id)?;
    let workspace = match &spec.workspace_from {
        Some(dir) => seed_workspace(&recording.metadata.agent_home, dir)?.path,
        None => recording.workspace.clone(),
    };
    let run_id = spec
        .new_run_id
        .clone()
        .unwrap_or_else(|| RunId::generate(chrono::Utc::now()));
    let masks = Masks::new(vec![
        (path_text(&recording.workspace), "<workspace>"),
        (path_text(&workspace), "<workspace>"),
        (recording.run_id.as_str().to_owned(), "<run_id>"),
        (run_id.as_str().to_owned(), "<run_id>"),
    ]);
    let replay_of = ReplayRef {
        run_id: recording.run_id.clone(),
        work_dir: (workspace != recording.workspace).then(|| recording.workspace.clone()),
    };
    let human = Arc::new(RecordedHuman {
        answers: Mutex::new(recording.human_answers.iter().cloned().collect()),
    });
    let recording = Arc::new(recording);
    let model = Arc::new(ReplayModel {
        recording: Arc::clone(&recording),
        journal: RunPaths::new(&workspace, &run_id).journal(),
        masks,
        until_divergence: spec.until_divergence,
        state: Mutex::new(State::default()),
        children: Mutex::new(Vec::new()),
    });
    let launch = LaunchSpec {
        start: Start::Replay(Box::new(ReplayStart {
            agent: recording.metadata.agent_home.clone(),
            workspace,
            run_id,
            task: recording.metadata.task.clone(),
            model: Arc::clone(&model) as Arc<dyn ChatModel>,
            replay_of,
            children: Some(Arc::clone(&model) as Arc<dyn ChildModels>),
        })),
        max_iterations: Some(recording.max_iterations()),
        budget: Budget::default(),
        output_schema: None,
        ask_human: None,
        environment: spec.environment.clone(),
    };
    Ok(Replay {
        launch,
        model,
        human,
    })
}

fn path_text(path: &std::path::Path) -> String {
    path.display().to_string()
}

/// What differed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// A request the engine built is not the recorded one.
    Request,
    /// A tool result is not the recorded observation.
    Observation,
    /// The replay ended elsewhere than the recording (status, steps left unplayed).
    End,
    /// A Claude Code hook fired by the loop decided otherwise (or did not fire).
    Hook,
}

impl DivergenceKind {
    /// `request`, `observation`, `end` or `hook`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Request => "request",
            DivergenceKind::Observation => "observation",
            DivergenceKind::End => "end",
            DivergenceKind::Hook => "hook",
        }
    }
}

/// The first difference between the replay and the recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// What differed.
    pub kind: DivergenceKind,
    /// The recording's seq where it happened: the THOUGHT the request was answered by,
    /// the ACTION_RESULT of the observation, the recording's last event for an end.
    pub seq: u64,
    /// The replay's seq of the same event, when it has one (an observation).
    pub replay_seq: Option<u64>,
    /// One line: which request or which tool's observation.
    pub what: String,
    /// The first differing line, recorded (`-`) and replayed (`+`).
    pub diff: String,
}

/// A replay's outcome, as `delta replay` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// `identical` or `divergence`.
    pub outcome: &'static str,
    /// The replay's run id.
    pub run_id: RunId,
    /// The recorded run's id.
    pub replay_of: RunId,
    /// The replay's workspace.
    pub work_dir: PathBuf,
    /// How the replay run ended.
    pub status: RunStatus,
    /// Recorded answers served.
    pub answers_replayed: usize,
    /// Recorded answers in all.
    pub answers_recorded: usize,
    /// Tool results compared with the recording.
    pub observations_compared: usize,
    /// The first divergence, its own or else its sub-agents'; `None` when identical.
    pub divergence: Option<Divergence>,
    /// The outcomes of its sub-agents' replays, in the order they started.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<Outcome>,
}

impl Outcome {
    /// Whether nothing diverged.
    #[must_use]
    pub fn identical(&self) -> bool {
        self.divergence.is_none()
    }
}

/// The recording's answers as the run's model.
#[derive(Debug)]
pub struct ReplayModel {
    recording: Arc<Recording>,
    /// The replay run's journal, read for its tool results before each answer.
    journal: PathBuf,
    masks: Masks,
    until_divergence: bool,
    state: Mutex<State>,
    /// The replays of its sub-agents, with the replay runs they answer.
    children: Mutex<Vec<(RunPaths, Arc<ReplayModel>)>>,
}

/// How far the replay got.
#[derive(Debug, Default)]
struct State {
    /// Answers served.
    served: usize,
    /// The replay's tool results already compared.
    compared: usize,
    /// The replay's Claude Code hook firings already compared.
    hooks_compared: usize,
    /// Bytes of the replay's journal already read.
    read: u64,
    /// Tool call ids whose observations diverged: their answers are left out of later
    /// request comparisons, as the difference is already reported.
    reported: HashSet<String>,
    first: Option<Divergence>,
}

impl ReplayModel {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer to request `body`, or why the recording has none.
    fn serve(&self, body: &[u8]) -> Result<crate::llm::Completion, LlmError> {
        let mut state = self.state();
        self.compare_results(&mut state);
        if self.until_divergence && state.first.is_some() {
            return Err(replay_error(
                "stopped at the first divergence (--until-divergence)",
            ));
        }
        let index = state.served;
        let number = index + 1;
        let Some(call) = self.recording.calls.get(index) else {
            let recorded = self.recording.calls.len();
            diverge(
                &mut state,
                Divergence {
                    kind: DivergenceKind::Request,
                    seq: self.recording.last_seq,
                    replay_seq: None,
                    what: format!("request {number}: the recording has only {recorded}"),
                    diff: format!(
                        "- (no request {number}: the recording ended)\n+ request {number}"
                    ),
                },
            );
            return Err(replay_error(&format!(
                "request {number} has no recorded answer (the recording made {recorded})"
            )));
        };
        let replayed: Value = serde_json::from_slice(body).unwrap_or_default();
        // Equal as sent is equal once masked: the masks are only needed when they differ.
        let same = conversation_keys(call.api)
            .iter()
            .all(|key| call.request.get(*key) == replayed.get(*key));
        let diff = if same {
            None
        } else {
            first_difference(
                &request_view(call.api, &call.request, &self.masks, &state.reported),
                &request_view(call.api, &replayed, &self.masks, &state.reported),
            )
        };
        if let Some(diff) = diff {
            diverge(
                &mut state,
                Divergence {
                    kind: DivergenceKind::Request,
                    seq: call.seq,
                    replay_seq: None,
                    what: format!("request {number} (recorded THOUGHT seq {})", call.seq),
                    diff,
                },
            );
            return Err(replay_error(&format!(
                "request {number} differs from the recorded one, so its recorded answer no \
                 longer fits"
            )));
        }
        state.served = number;
        completion_from_record(call.api, call.response.clone(), call.stream.clone()).map_err(
            |reason| {
                replay_error(&format!(
                    "the recorded answer to request {number} is no completion: {reason}"
                ))
            },
        )
    }

    /// Compares the replay's tool results not compared yet with the recorded ones. Only
    /// the journal lines appended since the last look are read (the engine wrote them:
    /// complete lines, one event each).
    fn compare_results(&self, state: &mut State) {
        for seen in self.new_results(state) {
            let (seq, result) = match seen {
                Seen::Result(seq, result) => (seq, result),
                Seen::Hook(hook) => {
                    self.compare_hook(state, &hook);
                    continue;
                }
            };
            let index = state.compared;
            state.compared = index + 1;
            let Some(recorded) = self.recording.results.get(index) else {
                diverge(
                    state,
                    Divergence {
                        kind: DivergenceKind::Observation,
                        seq: self.recording.last_seq,
                        replay_seq: Some(seq),
                        what: format!("tool result {}: the recording has none", index + 1),
                        diff: format!("- (none)\n+ {}", result.status.as_str()),
                    },
                );
                continue;
            };
            let diff = if recorded.status == result.status {
                text_difference(
                    "observation",
                    &self.masks.text(&recorded.observation),
                    &self.masks.text(&result.observation_content),
                )
            } else {
                Some(format!(
                    "status:\n- {}\n+ {}",
                    recorded.status.as_str(),
                    result.status.as_str()
                ))
            };
            if let Some(diff) = diff {
                state.reported.insert(result.tool_call_id.clone());
                diverge(
                    state,
                    Divergence {
                        kind: DivergenceKind::Observation,
                        seq: recorded.seq,
                        replay_seq: Some(seq),
                        what: format!("observation of `{}`", recorded.tool_name),
                        diff,
                    },
                );
            }
        }
    }

    /// The ACTION_RESULTs and compared hook firings of the complete journal lines after
    /// `state.read`.
    fn new_results(&self, state: &mut State) -> Vec<Seen> {
        let Ok(mut file) = std::fs::File::open(&self.journal) else {
            return Vec::new();
        };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(state.read)).is_err() || file.read_to_end(&mut bytes).is_err()
        {
            return Vec::new();
        }
        let complete = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |end| end + 1);
        state.read += complete as u64;
        bytes
            .get(..complete)
            .unwrap_or_default()
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice::<Event>(line).ok())
            .filter_map(|event| match event.payload {
                EventPayload::ActionResult(result) => Some(Seen::Result(event.seq, result)),
                EventPayload::ClaudeHook(hook) => {
                    RecordedHook::of(event.seq, &hook).map(Seen::Hook)
                }
                EventPayload::RunStart(_)
                | EventPayload::UserMessage(_)
                | EventPayload::Thought(_)
                | EventPayload::ActionRequest(_)
                | EventPayload::HumanInputRequest(_)
                | EventPayload::HumanInputReceived(_)
                | EventPayload::SystemMessage(_)
                | EventPayload::HookExecutionAudit(_)
                | EventPayload::RunEnd(_) => None,
            })
            .collect()
    }

    /// Compares the replay's next Claude Code hook firing with the recording's.
    fn compare_hook(&self, state: &mut State, hook: &RecordedHook) {
        let index = state.hooks_compared;
        state.hooks_compared = index + 1;
        let number = index + 1;
        let describe = |h: &RecordedHook| format!("{} `{}`: {}", h.event, h.command, h.decision);
        let (seq, recorded) = match self.recording.hooks.get(index) {
            Some(recorded)
                if recorded.event == hook.event
                    && recorded.command == hook.command
                    && recorded.decision == hook.decision =>
            {
                return;
            }
            Some(recorded) => (recorded.seq, describe(recorded)),
            None => (self.recording.last_seq, "(none)".to_owned()),
        };
        diverge(
            state,
            Divergence {
                kind: DivergenceKind::Hook,
                seq,
                replay_seq: Some(hook.seq),
                what: format!("hook firing {number}"),
                diff: format!("- {recorded}\n+ {}", describe(hook)),
            },
        );
    }

    /// The outcome once the replay run `paths` ended: the tool results after the last
    /// request compared, then whether it ended as the recording did.
    #[must_use]
    pub fn outcome(&self, paths: &RunPaths) -> Outcome {
        let mut state = self.state();
        self.compare_results(&mut state);
        let status = read_metadata(&paths.metadata()).map_or(RunStatus::Running, |m| m.status);
        let recorded_status = self.recording.metadata.status;
        let (served, recorded) = (state.served, self.recording.calls.len());
        let (compared, results) = (state.compared, self.recording.results.len());
        if served < recorded || compared < results || status != recorded_status {
            diverge(
                &mut state,
                Divergence {
                    kind: DivergenceKind::End,
                    seq: self.recording.last_seq,
                    replay_seq: None,
                    what: "the replay ended elsewhere than the recording".to_owned(),
                    diff: format!(
                        "- {recorded_status} after {recorded} answers and {results} tool \
                         results\n+ {status} after {served} answers and {compared} tool results"
                    ),
                },
            );
        }
        let fired = state.hooks_compared;
        if let Some(unfired) = self.recording.hooks.get(fired) {
            diverge(
                &mut state,
                Divergence {
                    kind: DivergenceKind::Hook,
                    seq: unfired.seq,
                    replay_seq: None,
                    what: format!("hook firing {}", fired + 1),
                    diff: format!(
                        "- {} `{}`: {}\n+ (none)",
                        unfired.event, unfired.command, unfired.decision
                    ),
                },
            );
        }
        let own = state.first.clone();
        drop(state);
        let children: Vec<(RunPaths, Arc<ReplayModel>)> = self
            .children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let subagents: Vec<Outcome> = children
            .iter()
            .map(|(paths, model)| model.outcome(paths))
            .collect();
        // The tree is identical when every run of it is; a child's divergence is the tree's.
        let divergence = own.or_else(|| {
            subagents.iter().find_map(|child| {
                child.divergence.clone().map(|divergence| Divergence {
                    what: format!("sub-agent run {}: {}", child.run_id, divergence.what),
                    ..divergence
                })
            })
        });
        Outcome {
            outcome: if divergence.is_some() {
                "divergence"
            } else {
                "identical"
            },
            run_id: paths.run_id().clone(),
            replay_of: self.recording.run_id.clone(),
            work_dir: paths.workspace().to_path_buf(),
            status,
            answers_replayed: served,
            answers_recorded: recorded,
            observations_compared: compared,
            divergence,
            subagents,
        }
    }
}

impl ChildModels for ReplayModel {
    fn child(
        &self,
        ordinal: u32,
        run_id: &RunId,
        workspace: &Path,
    ) -> Result<ChildAnswers, String> {
        let index = usize::try_from(ordinal)
            .unwrap_or(usize::MAX)
            .saturating_sub(1);
        let Some(recorded) = self.recording.subagents.get(index) else {
            return Err(format!(
                "the recording {} started {} sub-agent(s), so it has no answers for sub-agent {ordinal}",
                self.recording.run_id,
                self.recording.subagents.len()
            ));
        };
        let recorded_workspace = recorded
            .work_dir
            .clone()
            .unwrap_or_else(|| self.recording.workspace.clone());
        let recording = Recording::load(&recorded_workspace, &recorded.run_id)
            .map_err(|error| format!("its recording cannot be read: {error}"))?;
        let masks = self.masks.with(vec![
            (path_text(&recorded_workspace), "<workspace>"),
            (path_text(workspace), "<workspace>"),
            (recorded.run_id.as_str().to_owned(), "<run_id>"),
            (run_id.as_str().to_owned(), "<run_id>"),
        ]);
        let human = Arc::new(RecordedHuman {
            answers: Mutex::new(recording.human_answers.iter().cloned().collect()),
        });
        let replay_of = ReplayRef {
            run_id: recorded.run_id.clone(),
            work_dir: (workspace != recorded_workspace).then(|| recorded_workspace.clone()),
        };
        let model = Arc::new(ReplayModel {
            recording: Arc::new(recording),
            journal: RunPaths::new(workspace, run_id).journal(),
            masks,
            until_divergence: self.until_divergence,
            state: Mutex::new(State::default()),
            children: Mutex::new(Vec::new()),
        });
        self.children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((RunPaths::new(workspace, run_id), Arc::clone(&model)));
        Ok(ChildAnswers {
            model: Arc::clone(&model) as Arc<dyn ChatModel>,
            human,
            children: model,
            replay_of,
        })
    }
}

/// A line of the replay's journal the comparison looks at.
enum Seen {
    /// A tool result, with its seq.
    Result(u64, ActionResult),
    /// A Claude Code hook firing of the loop.
    Hook(RecordedHook),
}

/// Keeps the first divergence.
fn diverge(state: &mut State, divergence: Divergence) {
    state.first.get_or_insert(divergence);
}

fn replay_error(reason: &str) -> LlmError {
    LlmError::Replay {
        reason: reason.to_owned(),
    }
}

impl ChatModel for ReplayModel {
    fn endpoint(&self) -> &str {
        ENDPOINT
    }

    fn answer<'a>(
        &'a self,
        body: &'a [u8],
        _on_progress: &'a mut dyn FnMut(CallProgress<'_>),
    ) -> Answering<'a> {
        Box::pin(std::future::ready(self.serve(body)))
    }
}

/// The recording's answers to `ask_human`, in order; when they run out the replay pauses
/// for an answer as the recording did.
#[derive(Debug)]
pub struct RecordedHuman {
    answers: Mutex<VecDeque<String>>,
}

impl HumanInput for RecordedHuman {
    fn ask(&self, _request: &InteractionRequest) -> std::io::Result<Option<String>> {
        Ok(self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front())
    }

    fn abandon(&self) {}
}

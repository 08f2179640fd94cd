//! A run read back for people and other tools: its metadata, its journal grouped into
//! iterations, and the `io/` records each step points to (LLM call metadata, tool
//! durations). `delta export` and `delta view` are renderings of one [`Trajectory`].
//!
//! Reading never changes the run and works while it is still going: a torn last line is
//! skipped, a missing record leaves its fields empty.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::journal::{
    ActionRequest, ActionResult, Event, EventPayload, JournalError, Thought, read_journal,
};
use crate::llm::ModelApi;
use crate::run::{Metadata, RunId, RunPaths, RunStateError, Timestamp, open_run, read_metadata};

/// What can go wrong reading a run back.
#[derive(Debug, thiserror::Error)]
pub enum TrajectoryError {
    /// The run directory or its metadata could not be read.
    #[error(transparent)]
    RunState(#[from] RunStateError),
    /// The journal could not be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// `io/invocations/{id}/metadata.json` as the engine writes it; every field optional so a
/// record from another implementation (or a call still in flight) still reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LlmCall {
    /// The invocation id (the THOUGHT's `llm_invocation_ref`).
    pub invocation_id: String,
    /// The model asked for.
    pub model: Option<String>,
    /// The model that answered, as the server names it.
    pub response_model: Option<String>,
    /// SUCCESS, FAILED or CANCELLED.
    pub status: Option<String>,
    /// When the call started.
    pub started_at: Option<Timestamp>,
    /// Wall time of the call, retries included.
    pub duration_ms: Option<u64>,
    /// The API called (chat when the record names none).
    pub api: Option<ModelApi>,
    /// Token counts the API reported.
    pub token_usage: Option<TokenUsage>,
    /// The call's estimated cost in USD as the run counted it (`llm.pricing` and cached
    /// tokens included), when it was known.
    #[serde(rename = "cost_usd")]
    pub recorded_cost_usd: Option<f64>,
    /// Why the model stopped (`stop`, `tool_calls`, `length`…).
    pub finish_reason: Option<String>,
    /// HTTP attempts made.
    pub attempts: Option<u64>,
    /// The error of a failed call.
    pub error: Option<String>,
    /// The run's iteration the call belongs to (counted over the run's life).
    pub iteration: Option<u32>,
}

/// `token_usage` of an invocation record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct TokenUsage {
    /// Prompt tokens, the cached and cache-written ones included.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
}

impl LlmCall {
    /// The model that answered, else the one asked for.
    #[must_use]
    pub fn model_name(&self) -> Option<&str> {
        self.response_model.as_deref().or(self.model.as_deref())
    }

    /// Estimated cost in USD: as the run counted it when the record says, else from the
    /// built-in list prices (None when the model's price is unknown; a `pricing:` override
    /// of agent.yaml is not seen then).
    #[must_use]
    pub fn cost_usd(&self) -> Option<f64> {
        if self.recorded_cost_usd.is_some() {
            return self.recorded_cost_usd;
        }
        let usage = self.token_usage?;
        let model = self.model.as_deref().or(self.response_model.as_deref())?;
        let prices = crate::llm::prices(self.api.unwrap_or_default(), model, None)?;
        Some(prices.cost_usd(&usage.into()))
    }
}

impl From<TokenUsage> for crate::llm::TokenUsage {
    fn from(usage: TokenUsage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.prompt_tokens + usage.completion_tokens,
            cached_tokens: usage.cached_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            reasoning_tokens: None,
        }
    }
}

/// One tool call of an iteration: its request and, once it finished, its result.
#[derive(Debug, Clone, Copy)]
pub struct ToolStep<'a> {
    /// The ACTION_REQUEST event.
    pub request_event: &'a Event,
    /// Its payload.
    pub request: &'a ActionRequest,
    /// The ACTION_RESULT event and payload (None while running, or when a crash lost it).
    pub result: Option<(&'a Event, &'a ActionResult)>,
    /// `io/tool_executions/{id}/duration_ms.txt`, when the command ran.
    pub duration_ms: Option<u64>,
}

/// One Think-Act-Observe iteration: the model's answer, the tools it ran, and every other
/// event in between (hooks, human input, system and user messages), in journal order.
#[derive(Debug, Clone)]
pub struct Iteration<'a> {
    /// 1-based; 0 is the prologue (what happened before the first answer).
    pub number: u32,
    /// The THOUGHT (None for the prologue and for an iteration whose call failed).
    pub thought: Option<(&'a Event, &'a Thought)>,
    /// The LLM call behind the THOUGHT.
    pub call: Option<&'a LlmCall>,
    /// The tool calls, in order.
    pub tools: Vec<ToolStep<'a>>,
    /// Every event of the iteration, THOUGHT and tool events included, in order.
    pub events: Vec<&'a Event>,
}

/// A run read back from its directory.
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// The run's files.
    pub paths: RunPaths,
    /// `metadata.json`.
    pub metadata: Metadata,
    /// The journal's intact events.
    pub events: Vec<Event>,
    /// Every invocation record of `io/invocations/` by id: answered calls, and calls that
    /// failed or were cut off before an answer (no THOUGHT names those).
    pub calls: HashMap<String, LlmCall>,
    /// Tool durations by action id.
    pub durations: HashMap<String, u64>,
}

impl Trajectory {
    /// Reads run `run_id` of `workspace`.
    ///
    /// # Errors
    /// [`TrajectoryError`] when the run, its metadata or its journal cannot be read.
    pub fn load(workspace: &Path, run_id: &RunId) -> Result<Self, TrajectoryError> {
        let paths = open_run(workspace, run_id)?;
        Self::load_paths(paths)
    }

    /// Reads the run at `paths`.
    ///
    /// # Errors
    /// As [`Self::load`].
    pub fn load_paths(paths: RunPaths) -> Result<Self, TrajectoryError> {
        let metadata = read_metadata(&paths.metadata())?;
        let events = read_journal(&paths.journal())?.events;
        let calls = read_calls(&paths);
        let mut durations = HashMap::new();
        for event in &events {
            match &event.payload {
                EventPayload::ActionResult(result) => {
                    let duration =
                        std::fs::read_to_string(paths.tool_duration_ms(&result.action_id))
                            .ok()
                            .and_then(|text| text.trim().parse().ok());
                    if let Some(duration) = duration {
                        durations.insert(result.action_id.clone(), duration);
                    }
                }
                EventPayload::RunStart(_)
                | EventPayload::Thought(_)
                | EventPayload::UserMessage(_)
                | EventPayload::ActionRequest(_)
                | EventPayload::HumanInputRequest(_)
                | EventPayload::HumanInputReceived(_)
                | EventPayload::SystemMessage(_)
                | EventPayload::HookExecutionAudit(_)
                | EventPayload::ClaudeHook(_)
                | EventPayload::RunEnd(_) => {}
            }
        }
        Ok(Self {
            paths,
            metadata,
            events,
            calls,
            durations,
        })
    }

    /// The run's id.
    #[must_use]
    pub fn run_id(&self) -> &str {
        self.paths.run_id().as_str()
    }

    /// The record of invocation `invocation_id`, when it was read.
    #[must_use]
    pub fn llm_call(&self, invocation_id: &str) -> Option<&LlmCall> {
        self.calls.get(invocation_id)
    }

    /// The LLM calls in journal order.
    pub fn llm_calls(&self) -> impl Iterator<Item = &LlmCall> {
        self.events
            .iter()
            .filter_map(|e| e.payload.as_thought())
            .filter_map(|t| self.calls.get(&t.llm_invocation_ref))
    }

    /// Every invocation record in the order the calls started, answered or not.
    #[must_use]
    pub fn all_calls(&self) -> Vec<&LlmCall> {
        let mut calls: Vec<&LlmCall> = self.calls.values().collect();
        calls.sort_by(|a, b| {
            (a.started_at, &a.invocation_id).cmp(&(b.started_at, &b.invocation_id))
        });
        calls
    }

    /// The calls no THOUGHT names: they failed, were cancelled, or their answer was lost
    /// with the process that asked, in the order they started.
    #[must_use]
    pub fn unanswered_calls(&self) -> Vec<&LlmCall> {
        let answered: std::collections::HashSet<&str> = self
            .events
            .iter()
            .filter_map(|e| e.payload.as_thought())
            .map(|t| t.llm_invocation_ref.as_str())
            .collect();
        self.all_calls()
            .into_iter()
            .filter(|call| !answered.contains(call.invocation_id.as_str()))
            .collect()
    }

    /// The model of the first call (answered or not), else the first model of the usage
    /// totals.
    #[must_use]
    pub fn model(&self) -> Option<&str> {
        self.llm_calls()
            .find_map(LlmCall::model_name)
            .or_else(|| self.all_calls().into_iter().find_map(LlmCall::model_name))
            .or_else(|| {
                self.metadata
                    .usage
                    .model_usage
                    .keys()
                    .next()
                    .map(String::as_str)
            })
    }

    /// When the run last stopped, else its last event (a run still going).
    #[must_use]
    pub fn end_time(&self) -> Timestamp {
        self.metadata
            .end_time
            .or_else(|| self.events.last().map(|e| e.timestamp))
            .unwrap_or(self.metadata.updated_at)
    }

    /// Wall time from creation to [`Self::end_time`], in milliseconds.
    #[must_use]
    pub fn duration_ms(&self) -> u64 {
        self.end_time().millis_since(self.metadata.created_at)
    }

    /// The `io/tool_executions/{id}/` directory of an action, relative to the run
    /// directory (what a page next to the run links to).
    #[must_use]
    pub fn tool_output_ref(action_id: &str) -> String {
        format!("io/tool_executions/{action_id}/")
    }

    /// The run directory.
    #[must_use]
    pub fn dir(&self) -> PathBuf {
        self.paths.dir().to_path_buf()
    }

    /// The sub-agent runs this run's tool calls started, by the action id of the call, in
    /// journal order: an agent tool's child (its ACTION_REQUEST names it), or the run a
    /// command tool started with `delta run|continue --run-id X` (its resolved command
    /// says so). Only runs whose files can be read back are returned.
    #[must_use]
    pub fn subagents(&self) -> Vec<(String, Trajectory)> {
        let own = self.paths.workspace();
        // A fork keeps its parent's calls, whose children live beside the parent.
        let fork_parent = self
            .metadata
            .parent
            .as_ref()
            .and_then(|parent| parent.work_dir.clone());
        let mut found = Vec::new();
        for event in &self.events {
            let EventPayload::ActionRequest(request) = &event.payload else {
                continue;
            };
            let candidates: Vec<RunPaths> = if let Some(subagent) = &request.subagent {
                let workspace = subagent
                    .work_dir
                    .clone()
                    .unwrap_or_else(|| own.to_path_buf());
                std::iter::once(workspace)
                    .chain(fork_parent.clone())
                    .map(|workspace| RunPaths::new(&workspace, &subagent.run_id))
                    .collect()
            } else if let Some(sub) = SubRun::of(request)
                && let Ok(run_id) = RunId::parse(&sub.run_id)
            {
                let dir = sub.dir(own);
                dir.parent()
                    .and_then(Path::parent)
                    .map(|workspace| RunPaths::new(workspace, &run_id))
                    .into_iter()
                    .collect()
            } else {
                Vec::new()
            };
            if let Some(child) = candidates
                .into_iter()
                .find_map(|paths| Trajectory::load_paths(paths).ok())
            {
                found.push((request.action_id.clone(), child));
            }
        }
        found
    }

    /// The journal grouped into iterations: a THOUGHT opens one; the hooks that prepare a
    /// call (`on_iteration_start`, `pre_llm_request`), user messages, and what follows
    /// them before the THOUGHT belong to the iteration they lead to. The prologue
    /// (number 0) holds what comes before the first of those.
    #[must_use]
    pub fn iterations(&self) -> Vec<Iteration<'_>> {
        let mut iterations = vec![Iteration {
            number: 0,
            thought: None,
            call: None,
            tools: Vec::new(),
            events: Vec::new(),
        }];
        let mut pending: Vec<&Event> = Vec::new();
        let mut results: HashMap<&str, (&Event, &ActionResult)> = HashMap::new();
        for event in &self.events {
            if let EventPayload::ActionResult(result) = &event.payload {
                results.insert(result.action_id.as_str(), (event, result));
            }
        }
        for event in &self.events {
            let current = iterations.len() - 1;
            let opens_next = match &event.payload {
                EventPayload::HookExecutionAudit(hook) => {
                    matches!(
                        hook.hook_name.as_str(),
                        "on_iteration_start" | "pre_llm_request"
                    )
                }
                EventPayload::UserMessage(_) => true,
                EventPayload::RunStart(_)
                | EventPayload::ClaudeHook(_)
                | EventPayload::Thought(_)
                | EventPayload::ActionRequest(_)
                | EventPayload::ActionResult(_)
                | EventPayload::HumanInputRequest(_)
                | EventPayload::HumanInputReceived(_)
                | EventPayload::SystemMessage(_)
                | EventPayload::RunEnd(_) => false,
            };
            if let EventPayload::Thought(thought) = &event.payload {
                let number = u32::try_from(iterations.len()).unwrap_or(u32::MAX);
                let mut events = std::mem::take(&mut pending);
                events.push(event);
                iterations.push(Iteration {
                    number,
                    thought: Some((event, thought)),
                    call: self.calls.get(&thought.llm_invocation_ref),
                    tools: Vec::new(),
                    events,
                });
                continue;
            }
            if opens_next || !pending.is_empty() {
                // A RUN_END closes whatever is pending: it belongs to the last iteration.
                if matches!(event.payload, EventPayload::RunEnd(_)) {
                    let drained = std::mem::take(&mut pending);
                    if let Some(last) = iterations.get_mut(current) {
                        last.events.extend(drained);
                        last.events.push(event);
                    }
                } else {
                    pending.push(event);
                }
                continue;
            }
            let Some(iteration) = iterations.get_mut(current) else {
                continue;
            };
            if let EventPayload::ActionRequest(request) = &event.payload {
                iteration.tools.push(ToolStep {
                    request_event: event,
                    request,
                    result: results.get(request.action_id.as_str()).copied(),
                    duration_ms: self.durations.get(&request.action_id).copied(),
                });
            }
            iteration.events.push(event);
        }
        if let Some(last) = iterations.last_mut() {
            last.events.extend(pending);
        }
        self.add_unanswered_iteration(&mut iterations);
        iterations
    }

    /// An iteration is counted when its LLM call starts: when the metadata counts one more
    /// than there are answers, the last call brought none (it failed or was interrupted).
    /// What the journal holds after the last answer's tool results is that iteration's.
    fn add_unanswered_iteration<'a>(&'a self, iterations: &mut Vec<Iteration<'a>>) {
        let answered = iterations.len() - 1;
        let counted = usize::try_from(self.metadata.iterations).unwrap_or(usize::MAX);
        let Some(last) = iterations.last_mut() else {
            return;
        };
        if counted <= answered {
            return;
        }
        // The prologue keeps the task; an answered iteration its answer and tool results.
        let after = last
            .events
            .iter()
            .rposition(|e| {
                matches!(
                    e.payload,
                    EventPayload::Thought(_) | EventPayload::ActionResult(_)
                ) || (answered == 0 && matches!(e.payload, EventPayload::RunStart(_)))
            })
            .map_or(0, |index| index + 1);
        let since = last.thought.map(|(event, _)| event.timestamp);
        let events = last.events.split_off(after);
        // The call of the unanswered iteration: the last one that started after the last
        // answer and brought none.
        let call =
            self.unanswered_calls()
                .into_iter()
                .rev()
                .find(|call| match (since, call.started_at) {
                    (Some(since), Some(started)) => started >= since,
                    (None, _) | (_, None) => true,
                });
        iterations.push(Iteration {
            number: u32::try_from(answered + 1).unwrap_or(u32::MAX),
            thought: None,
            call,
            tools: Vec::new(),
            events,
        });
    }
}

/// Every readable `io/invocations/*/metadata.json` of the run, by invocation id (the
/// directory's name, when a record does not say).
pub(crate) fn read_calls(paths: &RunPaths) -> HashMap<String, LlmCall> {
    let Ok(entries) = std::fs::read_dir(paths.invocations_dir()) else {
        return HashMap::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let id = entry.file_name().to_str()?.to_owned();
            let mut call = read_json::<LlmCall>(&paths.invocation_metadata(&id))?;
            if call.invocation_id.is_empty() {
                call.invocation_id.clone_from(&id);
            }
            Some((id, call))
        })
        .collect()
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// A sub-agent run started by a tool call: the command the tool ran (or the script of a
/// `shell:` tool) is `delta run` or `delta continue` with `--run-id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubRun {
    /// The `--run-id` value.
    pub run_id: String,
    /// The `-w`/`--work-dir` value, when given (relative to the parent's workspace).
    pub work_dir: Option<String>,
}

impl SubRun {
    /// The sub-run found in `request`'s resolved command, if any.
    #[must_use]
    pub fn of(request: &ActionRequest) -> Option<Self> {
        let words = program_words(request.resolved_command.as_deref()?)?;
        let program = words.first()?;
        if Path::new(program)
            .file_name()
            .is_none_or(|name| name != "delta")
        {
            return None;
        }
        let rest = words.get(1..)?;
        if !matches!(rest.first().map(String::as_str), Some("run" | "continue")) {
            return None;
        }
        let option = |names: &[&str]| {
            rest.iter().enumerate().find_map(|(index, word)| {
                names.iter().find_map(|name| {
                    if word == name {
                        rest.get(index + 1).cloned()
                    } else {
                        word.strip_prefix(&format!("{name}=")).map(str::to_owned)
                    }
                })
            })
        };
        Some(Self {
            run_id: option(&["--run-id"])?,
            work_dir: option(&["-w", "--work-dir"]),
        })
    }

    /// The sub-run's directory, given the parent's workspace.
    #[must_use]
    pub fn dir(&self, parent_workspace: &Path) -> PathBuf {
        let workspace = match &self.work_dir {
            Some(dir) => parent_workspace.join(dir),
            None => parent_workspace.to_path_buf(),
        };
        workspace.join(crate::run::DELTA_DIR).join(&self.run_id)
    }
}

/// The words of the program a resolved command runs: the command itself, or for
/// `sh -c SCRIPT -- ARGS…` (a `shell:` tool) the script's words with `"$N"` replaced by
/// the arguments.
fn program_words(command: &str) -> Option<Vec<String>> {
    let words = shlex::split(command)?;
    let shell = words.first().is_some_and(|w| {
        matches!(
            Path::new(w).file_name().and_then(|n| n.to_str()),
            Some("sh" | "bash")
        )
    });
    if !(shell && words.get(1).is_some_and(|w| w == "-c")) {
        return Some(words);
    }
    let args: Vec<&String> = words.iter().skip(4).collect();
    let script = shlex::split(words.get(2)?)?;
    Some(
        script
            .into_iter()
            .map(|word| {
                word.strip_prefix('$')
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|n| args.get(n).map(|a| (*a).clone()))
                    .unwrap_or(word)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn request(command: &str) -> ActionRequest {
        ActionRequest {
            action_id: "a".into(),
            tool_call_id: "c".into(),
            tool_name: "delegate".into(),
            tool_args: serde_json::Map::new(),
            resolved_command: Some(command.into()),
            subagent: None,
            environment: None,
        }
    }

    #[test]
    fn a_tool_running_delta_run_with_a_run_id_is_a_sub_run() {
        let sub = SubRun::of(&request(
            "delta run --agent sub -w ../w2 --run-id child-1 -m 'x y'",
        ));
        assert_eq!(
            sub,
            Some(SubRun {
                run_id: "child-1".into(),
                work_dir: Some("../w2".into()),
            })
        );
        assert_eq!(
            sub.unwrap().dir(Path::new("/ws")),
            Path::new("/ws/../w2/.delta/child-1")
        );
        let sub = SubRun::of(&request("/usr/bin/delta continue --run-id=r2")).unwrap();
        assert_eq!((sub.run_id.as_str(), sub.work_dir), ("r2", None));
        // A `shell:` tool: the id travels as a positional parameter.
        let sub = SubRun::of(&request("sh -c 'delta run --run-id \"$1\" -m go' -- kid-7")).unwrap();
        assert_eq!(sub.run_id, "kid-7");
    }

    #[test]
    fn other_commands_are_not_sub_runs() {
        for command in [
            "delta run -m 'no id'",
            "delta list-runs --run-id r",
            "echo delta run --run-id r",
            "deltas run --run-id r",
            "sh -c 'echo \"$1\"' -- 'delta run --run-id r'",
        ] {
            assert_eq!(SubRun::of(&request(command)), None, "{command}");
        }
    }
}

//! A recorded run read back for `delta replay`: its metadata, the answer of every THOUGHT
//! (`io/invocations/{ref}/request.json` and `response.json`) in journal order, its tool
//! results, and the answers its `ask_human` questions got.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ReplayError;
use crate::config::ClaudeEvent;
use crate::journal::{
    ActionStatus, ClaudeHook, EventPayload, HookStatus, SubagentRef, read_journal,
};
use crate::llm::ModelApi;
use crate::run::{Metadata, RunId, RunPaths, open_run, read_metadata};

/// One LLM call of the recording: what the engine sent and what the model answered.
#[derive(Debug)]
pub struct RecordedCall {
    /// The seq of the THOUGHT the answer became.
    pub seq: u64,
    /// The API it was made to (the invocation record's `api`; chat when it names none,
    /// as runs recorded before there were others).
    pub api: ModelApi,
    /// `request.json`, parsed.
    pub request: Value,
    /// `response.json`, as recorded.
    pub response: Vec<u8>,
    /// `response.sse`, when the call was streamed.
    pub stream: Option<Vec<u8>>,
}

/// One tool result of the recording.
#[derive(Debug, Clone)]
pub struct RecordedResult {
    /// Its ACTION_RESULT's seq.
    pub seq: u64,
    /// The tool, as its ACTION_REQUEST names it.
    pub tool_name: String,
    /// SUCCESS, FAILED or ERROR.
    pub status: ActionStatus,
    /// What the model read.
    pub observation: String,
}

/// One firing of a Claude Code hook inside the loop (PreToolUse, PostToolUse,
/// PostToolUseFailure, Stop): what a replay fires again in the same order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedHook {
    /// Its CLAUDE_HOOK's seq.
    pub seq: u64,
    /// The event.
    pub event: String,
    /// The hook's command.
    pub command: String,
    /// What it decided (`allow`, `deny`, …; `none`; `failed` when its answer was lost).
    pub decision: String,
}

impl RecordedHook {
    /// The firing `hook` (journaled at `seq`) when it is one a replay compares.
    #[must_use]
    pub fn of(seq: u64, hook: &ClaudeHook) -> Option<Self> {
        let compared = [
            ClaudeEvent::PreToolUse,
            ClaudeEvent::PostToolUse,
            ClaudeEvent::PostToolUseFailure,
            ClaudeEvent::Stop,
        ];
        // Not SessionStart/End, Notification or UserPromptSubmit: they follow the
        // processes that drove the run (a replay is one), not the model's answers.
        if !compared.iter().any(|event| event.as_str() == hook.event) {
            return None;
        }
        let decision = match (hook.status, hook.decision) {
            (HookStatus::Failed, _) => "failed",
            (HookStatus::Success | HookStatus::Skipped, Some(decision)) => decision.as_str(),
            (HookStatus::Success | HookStatus::Skipped, None) => "none",
        };
        Some(Self {
            seq,
            event: hook.event.clone(),
            command: hook.command.clone(),
            decision: decision.to_owned(),
        })
    }
}

/// A recorded run.
#[derive(Debug)]
pub struct Recording {
    /// Its id.
    pub run_id: RunId,
    /// Its workspace (absolute).
    pub workspace: PathBuf,
    /// Its `metadata.json`.
    pub metadata: Metadata,
    /// Its LLM answers, in journal order.
    pub calls: Vec<RecordedCall>,
    /// Its tool results (`ask_human` included), in journal order.
    pub results: Vec<RecordedResult>,
    /// The answers its `ask_human` questions (and hooks' approval questions) got, in
    /// journal order (not those relayed to its sub-agents: they are in the sub-agents'
    /// recordings).
    pub human_answers: Vec<String>,
    /// The sub-agent runs its agent tools started, in journal order.
    pub subagents: Vec<SubagentRef>,
    /// Its Claude Code hook firings inside the loop, in journal order.
    pub hooks: Vec<RecordedHook>,
    /// The seq of its last event.
    pub last_seq: u64,
}

impl Recording {
    /// Reads run `run_id` of `workspace`.
    ///
    /// # Errors
    /// When the run, its journal or the `io/` record of one of its THOUGHTs cannot be read.
    pub fn load(workspace: &Path, run_id: &RunId) -> Result<Self, ReplayError> {
        let paths = open_run(workspace, run_id)?;
        let metadata = read_metadata(&paths.metadata())?;
        let events = read_journal(&paths.journal())?.events;
        let mut tools: HashMap<&str, &str> = HashMap::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        let mut human_answers = Vec::new();
        let mut subagents = Vec::new();
        let mut relayed: Vec<&str> = Vec::new();
        let mut hooks = Vec::new();
        for event in &events {
            match &event.payload {
                EventPayload::Thought(thought) => {
                    calls.push(recorded_call(
                        &paths,
                        event.seq,
                        &thought.llm_invocation_ref,
                    )?);
                }
                EventPayload::ActionRequest(request) => {
                    tools.insert(&request.action_id, &request.tool_name);
                    if let Some(subagent) = &request.subagent {
                        subagents.push(subagent.clone());
                        relayed.push(request.action_id.as_str());
                    }
                }
                EventPayload::ActionResult(result) => results.push(RecordedResult {
                    seq: event.seq,
                    tool_name: tools
                        .get(result.action_id.as_str())
                        .map_or_else(String::new, |name| (*name).to_owned()),
                    status: result.status,
                    observation: result.observation_content.clone(),
                }),
                EventPayload::HumanInputReceived(received)
                    if !relayed.contains(&received.request_id.as_str()) =>
                {
                    human_answers.push(received.response.clone());
                }
                EventPayload::ClaudeHook(hook) => {
                    hooks.extend(RecordedHook::of(event.seq, hook));
                }
                EventPayload::RunStart(_)
                | EventPayload::UserMessage(_)
                | EventPayload::HumanInputRequest(_)
                | EventPayload::SystemMessage(_)
                | EventPayload::HumanInputReceived(_)
                | EventPayload::HookExecutionAudit(_)
                | EventPayload::RunEnd(_) => {}
            }
        }
        Ok(Recording {
            run_id: run_id.clone(),
            workspace: paths.workspace().to_path_buf(),
            metadata,
            calls,
            results,
            human_answers,
            subagents,
            hooks,
            last_seq: events.last().map_or(0, |event| event.seq),
        })
    }

    /// The iteration budget that lets the replay take every recorded step and stop where
    /// the recording's budget stopped it: the recorded budget, or more when the run was
    /// continued past it.
    #[must_use]
    pub fn max_iterations(&self) -> u32 {
        let steps = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        self.metadata.max_iterations.max(steps).max(1)
    }
}

/// The request and answer of THOUGHT `seq`, whose invocation is `invocation`.
fn recorded_call(
    paths: &RunPaths,
    seq: u64,
    invocation: &str,
) -> Result<RecordedCall, ReplayError> {
    // The ref comes from the engine, but a journal is a file: never read outside io/.
    if invocation.is_empty() || invocation.contains('/') || invocation.starts_with('.') {
        return Err(ReplayError::Record {
            path: paths.journal(),
            reason: format!("THOUGHT {seq} names no invocation record ({invocation:?})"),
        });
    }
    let read = |path: PathBuf| {
        std::fs::read(&path).map_err(|source| ReplayError::Record {
            reason: format!("cannot read it: {source}"),
            path,
        })
    };
    let request_path = paths.invocation_request(invocation);
    let request = serde_json::from_slice(&read(request_path.clone())?).map_err(|error| {
        ReplayError::Record {
            path: request_path,
            reason: format!("not JSON: {error}"),
        }
    })?;
    let response = read(paths.invocation_response(invocation))?;
    let stream = std::fs::read(paths.invocation_stream(invocation)).ok();
    let api = std::fs::read(paths.invocation_metadata(invocation))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|record| serde_json::from_value(record["api"].clone()).ok())
        .unwrap_or_default();
    Ok(RecordedCall {
        seq,
        api,
        request,
        response,
        stream,
    })
}

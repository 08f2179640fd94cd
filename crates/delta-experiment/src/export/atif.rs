//! Harbor's Agent Trajectory Interchange Format (ATIF-v1.7, RFC 0001 of the Harbor
//! framework): the run's task as a `user` step, each model answer as an `agent` step
//! carrying its tool calls, their observations and the call's metrics, engine notices as
//! `system` steps; hooks and human input in the agent step's `extra`. The sub-agent runs
//! below it go with it: embedded in `subagent_trajectories`, or as files beside it
//! ([`Subagents`]), each referred to from the observation of the call that started it.
//!
//! Rules of the format kept here (its validators reject the document otherwise): steps
//! are numbered 1, 2, 3…; an observation result names a tool call of its own step;
//! `model_name`, `tool_calls` and `metrics` appear only on agent steps; every object is
//! closed (no unknown keys outside `extra`).

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value, json};

use super::Content;
use delta_engine::journal::{Event, EventPayload};
use delta_engine::trajectory::{Iteration, ToolStep, Trajectory};

/// The `schema_version` written.
pub const SCHEMA_VERSION: &str = "ATIF-v1.7";

/// How the trajectories of a run's sub-agents go with its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subagents<'a> {
    /// In the root document's `subagent_trajectories`, every descendant at the root (where
    /// ATIF resolves a `trajectory_id` reference), each referred to by its run id.
    Embedded,
    /// One file per descendant beside the root's, named `{stem}.{run_id}.json`, referred to
    /// by that name (`trajectory_path`) and by its run id.
    Files(&'a str),
}

/// The ATIF document of `trajectory`, its sub-agents' trajectories embedded.
#[must_use]
pub fn trajectory(trajectory: &Trajectory, content: Content) -> Value {
    documents(trajectory, content, Subagents::Embedded)
        .into_iter()
        .next()
        .map_or(Value::Null, |(_, document)| document)
}

/// The ATIF documents of `trajectory` and of every sub-agent run below it (read back
/// from their own files), with the file name each goes to: one document when
/// [`Subagents::Embedded`] (named after the run), else the root's then one per descendant.
#[must_use]
pub fn documents(
    trajectory: &Trajectory,
    content: Content,
    subagents: Subagents<'_>,
) -> Vec<(String, Value)> {
    let (root_refs, descendants) = descendants(trajectory);
    let reference = |run_id: &str| match subagents {
        Subagents::Embedded => json!({"trajectory_id": run_id, "session_id": run_id}),
        Subagents::Files(stem) => json!({
            "trajectory_id": run_id,
            "session_id": run_id,
            "trajectory_path": child_file(stem, run_id),
        }),
    };
    let document_of = |run: &Trajectory, refs: &HashMap<String, String>| {
        document(run, content, &|action_id: &str| {
            refs.get(action_id).map(|run_id| reference(run_id))
        })
    };
    let mut root = document_of(trajectory, &root_refs);
    let children: Vec<(String, Value)> = descendants
        .iter()
        .map(|(run, refs)| (run.run_id().to_owned(), document_of(run, refs)))
        .collect();
    match subagents {
        Subagents::Embedded => {
            if !children.is_empty() {
                insert(
                    &mut root,
                    "subagent_trajectories",
                    Value::Array(children.into_iter().map(|(_, doc)| doc).collect()),
                );
            }
            vec![(format!("{}.json", trajectory.run_id()), root)]
        }
        Subagents::Files(stem) => std::iter::once((format!("{stem}.json"), root))
            .chain(
                children
                    .into_iter()
                    .map(|(run_id, doc)| (child_file(stem, &run_id), doc)),
            )
            .collect(),
    }
}

/// The file a descendant's trajectory goes to, beside the root's `{stem}.json`.
fn child_file(stem: &str, run_id: &str) -> String {
    format!("{stem}.{run_id}.json")
}

/// The sub-agent runs of each call of `root` (action id → run id), and every run below
/// it, breadth first, each with its own calls' sub-agents. A run met twice is exported
/// once.
#[allow(
    clippy::type_complexity,
    reason = "a private pair of maps, named where used"
)]
fn descendants(
    root: &Trajectory,
) -> (
    HashMap<String, String>,
    Vec<(Trajectory, HashMap<String, String>)>,
) {
    let mut seen: HashSet<std::path::PathBuf> = HashSet::from([root.dir()]);
    let mut queue = VecDeque::new();
    let mut refs_of = |run: &Trajectory, queue: &mut VecDeque<Trajectory>| {
        let mut refs = HashMap::new();
        for (action_id, child) in run.subagents() {
            refs.insert(action_id, child.run_id().to_owned());
            if seen.insert(child.dir()) {
                queue.push_back(child);
            }
        }
        refs
    };
    let root_refs = refs_of(root, &mut queue);
    let mut found = Vec::new();
    while let Some(run) = queue.pop_front() {
        let refs = refs_of(&run, &mut queue);
        found.push((run, refs));
    }
    (root_refs, found)
}

/// The document of one run; `subagent` gives the reference of a call's sub-agent run.
fn document(
    trajectory: &Trajectory,
    content: Content,
    subagent: &dyn Fn(&str) -> Option<Value>,
) -> Value {
    let metadata = &trajectory.metadata;
    let mut steps: Vec<Value> = Vec::new();
    for iteration in trajectory.iterations() {
        iteration_steps(&iteration, content, subagent, &mut steps);
    }
    if steps.is_empty() {
        // ATIF needs one step; a run whose journal is still empty has its task.
        steps.push(step(
            "user",
            content.text(&metadata.task),
            Some(metadata.created_at.to_string()),
        ));
    }
    for (index, step) in steps.iter_mut().enumerate() {
        if let Value::Object(map) = step {
            map.insert("step_id".into(), json!(index + 1));
        }
    }

    let mut agent = Map::new();
    agent.insert("name".into(), json!(metadata.agent_name));
    agent.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
    if let Some(model) = trajectory.model() {
        agent.insert("model_name".into(), json!(model));
    }
    if let Some(tools) = tool_definitions(trajectory) {
        agent.insert("tool_definitions".into(), tools);
    }
    agent.insert(
        "extra".into(),
        json!({
            "engine": "delta-engine",
            "agent_home": metadata.agent_home.display().to_string(),
        }),
    );

    // ATIF's totals include the sub-agents; the run's own usage is in extra.delta.
    let usage = metadata
        .subtree
        .as_ref()
        .map_or(&metadata.usage, |subtree| &subtree.usage);
    let mut final_metrics = Map::new();
    final_metrics.insert("total_prompt_tokens".into(), json!(usage.input_tokens));
    final_metrics.insert("total_completion_tokens".into(), json!(usage.output_tokens));
    if usage.cached_input_tokens > 0 {
        final_metrics.insert(
            "total_cached_tokens".into(),
            json!(usage.cached_input_tokens),
        );
    }
    final_metrics.insert("total_cost_usd".into(), json!(usage.total_cost_usd));
    final_metrics.insert("total_steps".into(), json!(steps.len()));
    final_metrics.insert(
        "extra".into(),
        json!({
            "iterations": metadata.iterations,
            "llm_calls": trajectory.llm_calls().count(),
            "duration_ms": trajectory.duration_ms(),
        }),
    );

    let mut delta = Map::new();
    delta.insert("run_id".into(), json!(trajectory.run_id()));
    delta.insert("status".into(), json!(metadata.status));
    delta.insert("iterations".into(), json!(metadata.iterations));
    delta.insert("max_iterations".into(), json!(metadata.max_iterations));
    delta.insert("created_at".into(), json!(metadata.created_at));
    delta.insert("end_time".into(), json!(metadata.end_time));
    delta.insert(
        "work_dir".into(),
        json!(metadata.work_dir.display().to_string()),
    );
    delta.insert("error".into(), json!(metadata.error));
    delta.insert(
        "result".into(),
        metadata
            .result
            .as_ref()
            .map_or(Value::Null, |result| content.value(result)),
    );
    delta.insert("usage".into(), json!(metadata.usage));
    if let Some(subtree) = &metadata.subtree {
        delta.insert("subtree".into(), json!(subtree));
    }
    if let Some(called_by) = &metadata.called_by {
        delta.insert("called_by".into(), json!(called_by));
    }
    if content.redact {
        delta.insert("content_redacted".into(), json!(true));
    }

    json!({
        "schema_version": SCHEMA_VERSION,
        "session_id": trajectory.run_id(),
        "trajectory_id": trajectory.run_id(),
        "agent": agent,
        "steps": steps,
        "notes": format!(
            "Exported by delta-engine {} from the journal of run {} (status {}).",
            env!("CARGO_PKG_VERSION"),
            trajectory.run_id(),
            metadata.status
        ),
        "final_metrics": final_metrics,
        "extra": {"delta": delta},
    })
}

/// The steps of one iteration, appended to `steps`.
fn iteration_steps(
    iteration: &Iteration<'_>,
    content: Content,
    subagent: &dyn Fn(&str) -> Option<Value>,
    steps: &mut Vec<Value>,
) {
    let mut agent_step: Option<Value> = None;
    // Hooks and human input before the answer wait for its step; after it, they join it.
    let mut notes: Vec<Value> = Vec::new();
    for event in &iteration.events {
        let timestamp = Some(event.timestamp.to_string());
        let fields = match &event.payload {
            EventPayload::RunStart(start) => {
                steps.push(step("user", content.text(&start.task), timestamp));
                continue;
            }
            EventPayload::UserMessage(message) => {
                steps.push(step("user", content.text(&message.content), timestamp));
                continue;
            }
            EventPayload::SystemMessage(message) => {
                flush(&mut agent_step, &mut notes, steps);
                let mut system = step("system", &message.content, timestamp);
                insert(&mut system, "extra", json!({"level": message.level}));
                steps.push(system);
                continue;
            }
            EventPayload::Thought(_) => {
                agent_step = Some(answer_step(iteration, event, content, subagent));
                continue;
            }
            EventPayload::ActionRequest(_) | EventPayload::ActionResult(_) => continue,
            EventPayload::HookExecutionAudit(hook) => json!({
                "hook": hook.hook_name,
                "status": hook.status,
                "io_path_ref": hook.io_path_ref,
            }),
            EventPayload::ClaudeHook(hook) => json!({
                "claude_hook": hook.event,
                "command": content.text(&hook.command),
                "status": hook.status,
                "exit_code": hook.exit_code,
                "ended": hook.ended,
                "decision": hook.decision,
                "reason": hook.reason.as_deref().map(|reason| content.text(reason)),
                "duration_ms": hook.duration_ms,
                "tool_use_id": hook.tool_use_id,
                "updated_input": hook.updated_input.as_ref().map(|input| content.arguments(input)),
                "io_path_ref": hook.io_path_ref,
            }),
            EventPayload::HumanInputRequest(question) => json!({
                "human_input_request": content.text(&question.prompt),
                "input_type": question.input_type,
                "sensitive": question.sensitive,
            }),
            EventPayload::HumanInputReceived(answer) => json!({
                "human_input_received": content.text(&answer.response),
            }),
            EventPayload::RunEnd(end) => json!({
                "run_end": end.status,
                "error": end.error,
            }),
        };
        let mut note = Map::new();
        note.insert("seq".into(), json!(event.seq));
        note.insert("timestamp".into(), json!(event.timestamp));
        if let Value::Object(fields) = fields {
            note.extend(fields);
        }
        notes.push(Value::Object(note));
    }
    flush(&mut agent_step, &mut notes, steps);
}

/// Ends the current agent step (with the notes gathered) or, without one, writes the
/// notes as a system step.
fn flush(agent_step: &mut Option<Value>, notes: &mut Vec<Value>, steps: &mut Vec<Value>) {
    let events = std::mem::take(notes);
    match agent_step.take() {
        Some(mut agent) => {
            if !events.is_empty()
                && let Some(Value::Object(extra)) = agent.get_mut("extra")
            {
                extra.insert("events".into(), Value::Array(events));
            }
            steps.push(agent);
        }
        None if !events.is_empty() => {
            let timestamp = events
                .first()
                .and_then(|e| e.get("timestamp"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let mut system = step("system", "", timestamp);
            insert(&mut system, "extra", json!({"events": events}));
            steps.push(system);
        }
        None => {}
    }
}

/// The agent step of a THOUGHT: its text, tool calls, observations and metrics.
fn answer_step(
    iteration: &Iteration<'_>,
    event: &Event,
    content: Content,
    subagent: &dyn Fn(&str) -> Option<Value>,
) -> Value {
    let Some((_, thought)) = iteration.thought else {
        return step("agent", "", Some(event.timestamp.to_string()));
    };
    let mut agent = step(
        "agent",
        content.text(&thought.content),
        Some(event.timestamp.to_string()),
    );
    if let Some(model) = iteration.call.and_then(|call| call.model_name()) {
        insert(&mut agent, "model_name", json!(model));
    }
    if !thought.tool_calls.is_empty() {
        let calls: Vec<Value> = thought
            .tool_calls
            .iter()
            .map(|call| {
                let arguments = match serde_json::from_str::<Value>(&call.arguments) {
                    Ok(Value::Object(map)) => content.arguments(&map),
                    // Invalid or non-object arguments are kept as the model sent them.
                    Ok(_) | Err(_) => {
                        let mut raw = Map::new();
                        raw.insert("_raw".into(), json!(content.text(&call.arguments)));
                        raw
                    }
                };
                json!({
                    "tool_call_id": call.id,
                    "function_name": call.name,
                    "arguments": arguments,
                })
            })
            .collect();
        insert(&mut agent, "tool_calls", Value::Array(calls));
    }
    let known: Vec<&str> = thought.tool_calls.iter().map(|c| c.id.as_str()).collect();
    let results: Vec<Value> = iteration
        .tools
        .iter()
        .filter(|tool| known.contains(&tool.request.tool_call_id.as_str()))
        .filter_map(|tool| observation(tool, content, subagent))
        .collect();
    if !results.is_empty() {
        insert(&mut agent, "observation", json!({"results": results}));
    }
    let mut extra = Map::new();
    extra.insert("iteration".into(), json!(iteration.number));
    extra.insert("seq".into(), json!(event.seq));
    extra.insert(
        "llm_invocation_ref".into(),
        json!(thought.llm_invocation_ref),
    );
    if let Some(call) = iteration.call {
        let mut metrics = Map::new();
        if let Some(usage) = call.token_usage {
            metrics.insert("prompt_tokens".into(), json!(usage.prompt_tokens));
            metrics.insert("completion_tokens".into(), json!(usage.completion_tokens));
            // ATIF's `prompt_tokens` includes the cached ones, as the engine's does.
            if usage.cached_tokens > 0 {
                metrics.insert("cached_tokens".into(), json!(usage.cached_tokens));
            }
        }
        if let Some(cost) = call.cost_usd() {
            metrics.insert("cost_usd".into(), json!(cost));
        }
        if !metrics.is_empty() {
            insert(&mut agent, "metrics", Value::Object(metrics));
        }
        insert(&mut agent, "llm_call_count", json!(1));
        extra.insert("finish_reason".into(), json!(call.finish_reason));
        extra.insert("llm_duration_ms".into(), json!(call.duration_ms));
        extra.insert("llm_attempts".into(), json!(call.attempts));
    }
    insert(&mut agent, "extra", Value::Object(extra));
    agent
}

/// The observation result of a finished tool call; a call that started a sub-agent run
/// refers to that run's trajectory.
fn observation(
    tool: &ToolStep<'_>,
    content: Content,
    subagent: &dyn Fn(&str) -> Option<Value>,
) -> Option<Value> {
    let (_, result) = tool.result?;
    let mut extra = Map::new();
    extra.insert("action_id".into(), json!(result.action_id));
    extra.insert("status".into(), json!(result.status));
    extra.insert("exit_code".into(), json!(result.exit_code));
    extra.insert("duration_ms".into(), json!(tool.duration_ms));
    extra.insert(
        "resolved_command".into(),
        tool.request
            .resolved_command
            .as_deref()
            .map_or(Value::Null, |command| json!(content.text(command))),
    );
    extra.insert(
        "full_output".into(),
        json!(Trajectory::tool_output_ref(&result.execution_ref)),
    );
    let mut value = json!({
        "source_call_id": result.tool_call_id,
        "content": content.text(&result.observation_content),
        "extra": extra,
    });
    if let Some(reference) = subagent(&result.action_id) {
        insert(&mut value, "subagent_trajectory_ref", json!([reference]));
    }
    Some(value)
}

fn step(source: &str, message: &str, timestamp: Option<String>) -> Value {
    let mut map = Map::new();
    map.insert("step_id".into(), json!(0));
    if let Some(timestamp) = timestamp {
        map.insert("timestamp".into(), json!(timestamp));
    }
    map.insert("source".into(), json!(source));
    map.insert("message".into(), json!(message));
    Value::Object(map)
}

fn insert(object: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = object {
        map.insert(key.to_owned(), value);
    }
}

/// The tools offered to the model, from the first recorded request (OpenAI's
/// function-calling schema, which is what ATIF asks for).
fn tool_definitions(trajectory: &Trajectory) -> Option<Value> {
    let first = trajectory
        .events
        .iter()
        .find_map(|e| e.payload.as_thought())?;
    let bytes = std::fs::read(
        trajectory
            .paths
            .invocation_request(&first.llm_invocation_ref),
    )
    .ok()?;
    let request: Value = serde_json::from_slice(&bytes).ok()?;
    match request.get("tools") {
        Some(Value::Array(tools)) if !tools.is_empty() => Some(Value::Array(tools.clone())),
        Some(_) | None => None,
    }
}

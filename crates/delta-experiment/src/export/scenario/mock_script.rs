//! The model's recorded answers as a sequential mock-llm script: each THOUGHT's
//! `io/invocations/*/response.json`, in journal order.

use delta_scenario::mock_script::{MessageStep, Script, Step, ToolCall, Usage};
use serde_json::Value;

use delta_engine::llm::{Completion, ModelApi, completion_from_record};

use super::error::ScenarioError;
use super::places::Places;
use delta_engine::trajectory::Trajectory;

/// The recorded answers, in journal order.
pub(super) fn mock_script(
    trajectory: &Trajectory,
    places: &Places,
) -> Result<Script, ScenarioError> {
    let mut steps = Vec::new();
    for event in &trajectory.events {
        let Some(thought) = event.payload.as_thought() else {
            continue;
        };
        let path = trajectory
            .paths
            .invocation_response(&thought.llm_invocation_ref);
        let record = |why: String| ScenarioError::Record {
            seq: event.seq,
            path: path.clone(),
            why,
        };
        // std::fs, not fs_err: the error names the file already.
        let body = std::fs::read(&path).map_err(|e| record(e.to_string()))?;
        let api = trajectory
            .llm_call(&thought.llm_invocation_ref)
            .and_then(|call| call.api)
            .unwrap_or_default();
        let completion = completion_from_record(api, body, None).map_err(record)?;
        steps.push(Step::Message(answer(api, &completion, places)));
    }
    Ok(Script {
        steps,
        ..Script::default()
    })
}

/// One answer, whichever API gave it: its text, tool calls (arguments verbatim, as the
/// model sent them: mock-llm sends a string argument as is), reasoning, usage, and its
/// finish reason when not the default (chat's own; of the other APIs a cut answer, as
/// chat's `length`, which mock-llm gives each API in its own words).
fn answer(api: ModelApi, completion: &Completion, places: &Places) -> MessageStep {
    let message = &completion.message;
    let tool_calls: Vec<ToolCall> = message
        .tool_calls
        .iter()
        .map(|call| ToolCall {
            id: Some(call.id.clone()),
            name: call.name.clone(),
            arguments: Some(Value::String(places.abstracted(&call.arguments))),
        })
        .collect();
    MessageStep {
        content: message.content.as_deref().map(|c| places.abstracted(c)),
        tool_calls,
        usage: completion.usage.map(|usage| Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cached_tokens: usage.cached_tokens,
            cache_write_tokens: usage.cache_write_tokens,
        }),
        finish_reason: match api {
            ModelApi::Chat => {
                let default = if message.tool_calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                };
                completion
                    .finish_reason
                    .clone()
                    .filter(|reason| reason != default)
            }
            ModelApi::Anthropic | ModelApi::Responses => {
                completion.truncated.then(|| "length".to_owned())
            }
        },
        reasoning: message
            .reasoning
            .as_deref()
            .map(|text| places.abstracted(text)),
        ..MessageStep::default()
    }
}

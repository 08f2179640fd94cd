//! The model's recorded answers as a sequential mock-llm script: each THOUGHT's
//! `io/invocations/*/response.json`, in journal order.

use delta_scenario::mock_script::{MessageStep, Script, Step, ToolCall, Usage};
use serde_json::Value;

use super::error::ScenarioError;
use super::places::Places;
use crate::trajectory::Trajectory;

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
        let text = std::fs::read_to_string(&path).map_err(|e| record(e.to_string()))?;
        let response: Value =
            serde_json::from_str(&text).map_err(|e| record(format!("not JSON: {e}")))?;
        let message = response["choices"][0]
            .get("message")
            .ok_or_else(|| record("no choices[0].message".into()))?;
        steps.push(Step::Message(answer(&response, message, places)));
    }
    Ok(Script {
        steps,
        ..Script::default()
    })
}

/// One answer (`message`, the first choice's of `response`): its text, tool calls
/// (arguments verbatim, as the model sent them: mock-llm sends a string argument as is),
/// usage, and its finish reason when not the default.
fn answer(response: &Value, message: &Value, places: &Places) -> MessageStep {
    let tool_calls: Vec<ToolCall> = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|call| ToolCall {
                    id: call["id"].as_str().map(str::to_string),
                    name: call["function"]["name"].as_str().unwrap_or_default().into(),
                    arguments: Some(Value::String(places.abstracted(
                        &call["function"]["arguments"].as_str().map_or_else(
                            || call["function"]["arguments"].to_string(),
                            str::to_string,
                        ),
                    ))),
                })
                .collect()
        })
        .unwrap_or_default();
    let default_reason = if tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let usage = &response["usage"];
    MessageStep {
        content: message["content"].as_str().map(|c| places.abstracted(c)),
        tool_calls,
        usage: match (
            usage["prompt_tokens"].as_u64(),
            usage["completion_tokens"].as_u64(),
        ) {
            (Some(prompt_tokens), Some(completion_tokens)) => Some(Usage {
                prompt_tokens,
                completion_tokens,
                ..Usage::default()
            }),
            _ => None,
        },
        finish_reason: response["choices"][0]["finish_reason"]
            .as_str()
            .filter(|reason| *reason != default_reason)
            .map(str::to_string),
        ..MessageStep::default()
    }
}

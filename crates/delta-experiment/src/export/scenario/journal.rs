//! What the run's journal says the replay must do: how many answers, tool calls and
//! command ends it holds, and each tool call in order with its arguments and status.

use std::collections::BTreeMap;

use delta_scenario::{EventExpect, JournalExpect, ValueMatch};
use serde_json::Value;

use super::places::Places;
use delta_engine::journal::EventPayload;
use delta_engine::trajectory::Trajectory;

/// The event type whose count is the number of tool calls.
pub(super) const TOOL_CALLS: &str = "ACTION_REQUEST";

/// The journal expectations of the last step: the counts and the tool calls.
pub(super) fn expectations(trajectory: &Trajectory, places: &Places) -> JournalExpect {
    JournalExpect {
        count: counts(trajectory),
        events: tool_calls(trajectory, places),
        ..JournalExpect::default()
    }
}

/// How many answers, tool calls and command ends the run's journal holds.
fn counts(trajectory: &Trajectory) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = ["THOUGHT", TOOL_CALLS, "ACTION_RESULT", "RUN_END"]
        .into_iter()
        .map(|kind| (kind.to_string(), 0))
        .collect();
    for event in &trajectory.events {
        if let Some(count) = counts.get_mut(event.payload.type_name()) {
            *count += 1;
        }
    }
    counts
}

/// Each tool call in order: its name and arguments, and its result's status.
fn tool_calls(trajectory: &Trajectory, places: &Places) -> Vec<EventExpect> {
    let mut expectations = Vec::new();
    let mut requests = 0;
    let mut results = 0;
    for event in &trajectory.events {
        match &event.payload {
            EventPayload::ActionRequest(request) => {
                let mut payload = BTreeMap::new();
                payload.insert(
                    "/tool_name".into(),
                    ValueMatch::exactly(request.tool_name.as_str()),
                );
                payload.insert(
                    "/tool_args".into(),
                    ValueMatch::exactly(places.value(&Value::Object(request.tool_args.clone()))),
                );
                expectations.push(EventExpect {
                    type_: TOOL_CALLS.into(),
                    nth: requests,
                    payload,
                });
                requests += 1;
            }
            EventPayload::ActionResult(result) => {
                let mut payload = BTreeMap::new();
                payload.insert(
                    "/status".into(),
                    ValueMatch::exactly(result.status.as_str()),
                );
                expectations.push(EventExpect {
                    type_: "ACTION_RESULT".into(),
                    nth: results,
                    payload,
                });
                results += 1;
            }
            EventPayload::RunStart(_)
            | EventPayload::UserMessage(_)
            | EventPayload::Thought(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => {}
        }
    }
    expectations
}

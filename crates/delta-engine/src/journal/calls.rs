//! Ids for journals that do not record them: fills in what the conversation rebuild (and
//! `delta continue`'s repairs) need when another implementation wrote the journal (seed
//! 001 §7.2 has no `tool_call_id`, THOUGHT need not list its calls, seed 000 §2.5.4's
//! human input has no `request_id`).
//!
//! A chat request must pair every tool message with a call of the assistant message before
//! it, by id. The ids filled in are derived from the journal alone, so every rebuild gives
//! the same conversation:
//! - an ACTION_REQUEST without `tool_call_id` executes the call at its position among the
//!   requests following its THOUGHT (the k-th request, the k-th call), or, when the THOUGHT
//!   lists no calls, a call whose id is the request's `action_id`; that call (with the
//!   request's tool name and arguments) is added to the THOUGHT;
//! - an ACTION_RESULT without `tool_call_id` answers the call of the ACTION_REQUEST with
//!   its `action_id` (else the `action_id` itself);
//! - a HUMAN_INPUT_REQUEST without `request_id` takes the `action_id` of the `ask_human`
//!   request before it (as this engine writes it), and a HUMAN_INPUT_RECEIVED without one
//!   answers the last HUMAN_INPUT_REQUEST before it.
//!
//! Journals this engine writes always carry the ids, and are left untouched.

use std::collections::HashMap;

use super::{Event, EventPayload, Thought, ToolCall};
use crate::tool::ASK_HUMAN_TOOL;

/// The THOUGHT whose calls the ACTION_REQUESTs being read execute.
struct Cycle {
    /// Its index in the events.
    thought: usize,
    /// Whether it listed no calls, so they are rebuilt from its ACTION_REQUESTs.
    rebuilt: bool,
    /// Position of the next ACTION_REQUEST among its calls.
    next: usize,
}

/// Fills in missing call ids (and the calls of THOUGHTs that list none) in place; see the
/// module documentation for the rules.
pub(super) fn fill_call_ids(events: &mut [Event]) {
    if !needs_filling(events) {
        return;
    }
    let mut cycle: Option<Cycle> = None;
    let mut call_of_action: HashMap<String, String> = HashMap::new();
    // The `action_id` of the last `ask_human` request, and the id of the last question.
    let mut last_ask: Option<String> = None;
    let mut last_question: Option<String> = None;
    for index in 0..events.len() {
        let (before, rest) = events.split_at_mut(index);
        let Some(event) = rest.first_mut() else {
            break;
        };
        match &mut event.payload {
            EventPayload::Thought(thought) => {
                cycle = Some(Cycle {
                    thought: index,
                    rebuilt: thought.tool_calls.is_empty(),
                    next: 0,
                });
            }
            // A new turn: requests after it belong to no earlier THOUGHT.
            EventPayload::RunStart(_) | EventPayload::UserMessage(_) => cycle = None,
            EventPayload::ActionRequest(request) => {
                let thought = cycle
                    .as_mut()
                    .and_then(|c| thought_at(before, c.thought).map(|t| (c, t)));
                match thought {
                    Some((cycle, thought)) => {
                        if request.tool_call_id.is_empty() {
                            request.tool_call_id = match thought.tool_calls.get(cycle.next) {
                                Some(call) if !cycle.rebuilt => call.id.clone(),
                                Some(_) | None => request.action_id.clone(),
                            };
                        }
                        if cycle.rebuilt {
                            thought.tool_calls.push(ToolCall {
                                id: request.tool_call_id.clone(),
                                name: request.tool_name.clone(),
                                arguments: serde_json::Value::Object(request.tool_args.clone())
                                    .to_string(),
                            });
                        }
                        cycle.next += 1;
                    }
                    None if request.tool_call_id.is_empty() => {
                        request.tool_call_id = request.action_id.clone();
                    }
                    None => {}
                }
                call_of_action.insert(request.action_id.clone(), request.tool_call_id.clone());
                if request.tool_name == ASK_HUMAN_TOOL {
                    last_ask = Some(request.action_id.clone());
                }
            }
            EventPayload::HumanInputRequest(question) => {
                if question.request_id.is_empty()
                    && let Some(action_id) = &last_ask
                {
                    question.request_id.clone_from(action_id);
                }
                last_question = Some(question.request_id.clone());
            }
            EventPayload::HumanInputReceived(answer) if answer.request_id.is_empty() => {
                if let Some(request_id) = &last_question {
                    answer.request_id.clone_from(request_id);
                }
            }
            EventPayload::ActionResult(result) if result.tool_call_id.is_empty() => {
                result.tool_call_id = call_of_action
                    .get(&result.action_id)
                    .cloned()
                    .unwrap_or_else(|| result.action_id.clone());
            }
            EventPayload::ActionResult(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => {}
        }
    }
}

/// Whether anything is missing: a request or result without a call id, a request after a
/// THOUGHT that lists no calls, or human input without a request id. One pass without allocating, so reading our own journals
/// (before every LLM call) costs nothing more.
fn needs_filling(events: &[Event]) -> bool {
    let mut thought_lists_no_calls = false;
    events.iter().any(|event| match &event.payload {
        EventPayload::Thought(thought) => {
            thought_lists_no_calls = thought.tool_calls.is_empty();
            false
        }
        EventPayload::RunStart(_) | EventPayload::UserMessage(_) => {
            thought_lists_no_calls = false;
            false
        }
        EventPayload::ActionRequest(request) => {
            request.tool_call_id.is_empty() || thought_lists_no_calls
        }
        EventPayload::ActionResult(result) => result.tool_call_id.is_empty(),
        EventPayload::HumanInputRequest(question) => question.request_id.is_empty(),
        EventPayload::HumanInputReceived(answer) => answer.request_id.is_empty(),
        EventPayload::SystemMessage(_)
        | EventPayload::HookExecutionAudit(_)
        | EventPayload::ClaudeHook(_)
        | EventPayload::RunEnd(_) => false,
    })
}

fn thought_at(events: &mut [Event], index: usize) -> Option<&mut Thought> {
    match events.get_mut(index).map(|event| &mut event.payload) {
        Some(EventPayload::Thought(thought)) => Some(thought),
        Some(
            EventPayload::RunStart(_)
            | EventPayload::UserMessage(_)
            | EventPayload::ActionRequest(_)
            | EventPayload::ActionResult(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_),
        )
        | None => None,
    }
}

//! The journal events that make a stopped run's conversation whole again before the loop
//! goes on: every tool call gets exactly one result, and no tool runs twice.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::hooks::claude::{approves, refused_observation};
use crate::journal::{
    ActionRequest, ActionResult, ActionStatus, Event, EventPayload, HumanInputReceived, ToolCall,
    dangling_action_requests,
};
use crate::tool::ASK_HUMAN_TOOL;

/// What the model reads for a tool call that was in progress when the run's process died.
/// The call is never run again: it may have had its effects already.
pub const INTERRUPTED_NOT_RERUN: &str = "Error: interrupted; not re-run. The run stopped (its \
    process was killed or crashed) while this tool call was in progress, so the call may have \
    done some or all of its work. It was not run again: check its effects before you call it \
    again.";

/// What the model reads for a tool call it asked for that never started (the process died
/// between the model's answer and the call).
pub const NOT_RUN: &str = "Error: not run. The run stopped before this tool call started, so it \
    had no effect. Call the tool again if you still need it.";

/// The events to append, in order, and what they answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repairs {
    /// The payloads, in journal order.
    pub events: Vec<EventPayload>,
    /// Action ids of calls that were in progress, answered with [`INTERRUPTED_NOT_RERUN`].
    pub interrupted_actions: Vec<String>,
    /// Tool call ids of calls that never started, answered with [`NOT_RUN`].
    pub not_run_calls: Vec<String>,
    /// Action ids of `ask_human` calls whose answer was journaled (HUMAN_INPUT_RECEIVED)
    /// but whose ACTION_RESULT was not: a `delta continue` that died half-way.
    pub recovered_answers: Vec<String>,
    /// The pending `ask_human` call that the given answer went to; `None` when no question
    /// was pending (the caller then delivers the answer as a user message).
    pub answered: Option<ActionRequest>,
    /// Calls the model made in the same turn as the answered `ask_human` (or as open
    /// sub-agent calls) and that never started: the run paused at the question, so they
    /// run now, after the answer, as they do when the question is answered on the
    /// terminal (`-i`).
    pub to_run: Vec<ToolCall>,
    /// The tool call a PreToolUse hook held for a human's approval, with the answer given
    /// now (its HUMAN_INPUT_RECEIVED is journaled, its result is not: the engine runs the
    /// call, or refuses it, first thing).
    pub approval: Option<(ActionRequest, String)>,
    /// Agent tool calls whose sub-agent run had not ended for its caller: they stay
    /// unanswered in the journal, and the run continues their children (it never starts
    /// them again) before anything else.
    pub subagents: Vec<OpenChild>,
    /// The given answer went to a sub-agent's question (see [`OpenChild::answer`]).
    pub relayed: bool,
}

/// An agent tool call left open, and the answer its sub-agent's question got, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenChild {
    /// The call.
    pub request: ActionRequest,
    /// The answer to deliver to the child waiting for one: just given, or journaled by
    /// a `delta continue` that died before delivering it.
    pub answer: Option<String>,
}

impl Repairs {
    /// Adds what `other` did (a later pass over the same journal).
    pub fn absorb(&mut self, other: Repairs) {
        self.events.extend(other.events);
        self.interrupted_actions.extend(other.interrupted_actions);
        self.not_run_calls.extend(other.not_run_calls);
        self.recovered_answers.extend(other.recovered_answers);
        self.answered = self.answered.take().or(other.answered);
        self.to_run.extend(other.to_run);
        // Open calls stay open through every pass: the later pass knows their answers.
        self.subagents = other.subagents;
        self.relayed |= other.relayed;
        self.approval = self.approval.take().or(other.approval);
    }
}

/// Plans the repairs of a journal whose events are `events`, delivering `answer` (the
/// answer of a WAITING_FOR_INPUT run) to the pending `ask_human` call.
///
/// - An ACTION_REQUEST without ACTION_RESULT gets an ERROR result
///   ([`INTERRUPTED_NOT_RERUN`]), except an `ask_human` whose answer is journaled (it gets
///   that answer) and the pending `ask_human` when `answer` is given (HUMAN_INPUT_RECEIVED,
///   then a SUCCESS result with the answer).
/// - An agent tool call (its ACTION_REQUEST names a sub-agent) gets no result: its child
///   is continued ([`Repairs::subagents`]); when `answer` answers the child's question
///   (relayed as this run's HUMAN_INPUT_REQUEST), HUMAN_INPUT_RECEIVED is journaled and
///   the answer goes to the child.
/// - A call a PreToolUse hook held for approval (an ACTION_REQUEST of another tool with a
///   HUMAN_INPUT_REQUEST of its id) is never run by the repair: given `answer`, the answer
///   is journaled and the call handed to the engine ([`Repairs::approval`]); with an
///   approval already journaled (a `continue` that died) it may have run, so it gets
///   [`INTERRUPTED_NOT_RERUN`]; with a refusal journaled, the refusal; unanswered, it
///   never ran: [`NOT_RUN`].
/// - A tool call of the last THOUGHT that has no result after it, and no ACTION_REQUEST,
///   gets an ACTION_REQUEST (no command) and an ERROR result ([`NOT_RUN`]), so that every
///   call the model made is answered before the next LLM request, as chat APIs require;
///   after an answered question or open agent calls, it runs instead ([`Repairs::to_run`]).
#[must_use]
pub fn plan(events: &[Event], answer: Option<&str>) -> Repairs {
    let mut repairs = Repairs::default();
    let received: HashMap<&str, &str> = events
        .iter()
        .filter_map(|e| {
            if let EventPayload::HumanInputReceived(r) = &e.payload {
                Some((r.request_id.as_str(), r.response.as_str()))
            } else {
                None
            }
        })
        .collect();
    let dangling = dangling_action_requests(events);
    let gated = approval_requests(events, &dangling);
    let approval = answer.and_then(|_| pending_approval(events, &gated, &received));
    let pending = answer
        .filter(|_| approval.is_none())
        .and_then(|_| pending_question(events, &dangling, &received));
    let mut answered_calls: HashSet<String> = HashSet::new();
    for request in &dangling {
        if request.subagent.is_some() {
            let answer = if let (Some((action_id, request_id)), Some(text)) = (&pending, answer)
                && *action_id == request.action_id
            {
                repairs
                    .events
                    .push(EventPayload::HumanInputReceived(HumanInputReceived {
                        request_id: request_id.clone(),
                        response: text.to_owned(),
                    }));
                repairs.relayed = true;
                Some(text.to_owned())
            } else {
                received
                    .get(request.action_id.as_str())
                    .map(|text| (*text).to_owned())
            };
            answered_calls.insert(request.tool_call_id.clone());
            repairs.subagents.push(OpenChild {
                request: (*request).clone(),
                answer,
            });
            continue;
        }
        let is_ask = request.tool_name == ASK_HUMAN_TOOL;
        let gate = gated.contains(request.action_id.as_str());
        let (status, observation, exit_code) = if let (true, Some(response)) =
            (gate, received.get(request.action_id.as_str()))
        {
            if approves(response) {
                repairs.interrupted_actions.push(request.action_id.clone());
                (ActionStatus::Error, INTERRUPTED_NOT_RERUN.to_owned(), None)
            } else {
                (ActionStatus::Error, refused_observation(response), None)
            }
        } else if let (true, Some(text)) = (gate, answer)
            && approval.as_deref() == Some(request.action_id.as_str())
        {
            repairs
                .events
                .push(EventPayload::HumanInputReceived(HumanInputReceived {
                    request_id: request.action_id.clone(),
                    response: text.to_owned(),
                }));
            repairs.approval = Some(((*request).clone(), text.to_owned()));
            answered_calls.insert(request.tool_call_id.clone());
            continue;
        } else if gate {
            repairs.not_run_calls.push(request.tool_call_id.clone());
            (ActionStatus::Error, NOT_RUN.to_owned(), None)
        } else if let (true, Some(response)) = (is_ask, received.get(request.action_id.as_str())) {
            repairs.recovered_answers.push(request.action_id.clone());
            (ActionStatus::Success, (*response).to_owned(), Some(0))
        } else if let (Some((action_id, request_id)), Some(text)) = (&pending, answer)
            && *action_id == request.action_id
        {
            repairs
                .events
                .push(EventPayload::HumanInputReceived(HumanInputReceived {
                    request_id: request_id.clone(),
                    response: text.to_owned(),
                }));
            repairs.answered = Some((*request).clone());
            (ActionStatus::Success, text.to_owned(), Some(0))
        } else {
            repairs.interrupted_actions.push(request.action_id.clone());
            (ActionStatus::Error, INTERRUPTED_NOT_RERUN.to_owned(), None)
        };
        answered_calls.insert(request.tool_call_id.clone());
        repairs
            .events
            .push(EventPayload::ActionResult(ActionResult {
                action_id: request.action_id.clone(),
                tool_call_id: request.tool_call_id.clone(),
                status,
                observation_content: observation,
                exit_code,
                execution_ref: request.action_id.clone(),
                subagent: None,
            }));
    }
    for call in unanswered_calls_of_last_thought(events) {
        if answered_calls.contains(&call.id) {
            continue;
        }
        // The run paused at the question it just got the answer to: these calls wait for
        // it, they were not lost to a crash (issue 12 item 4).
        if repairs.answered.is_some() || !repairs.subagents.is_empty() || repairs.approval.is_some()
        {
            repairs.to_run.push(call.clone());
            continue;
        }
        let action_id = uuid::Uuid::new_v4().to_string();
        let tool_args = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(map)) => map,
            Ok(_) | Err(_) => Map::new(),
        };
        repairs
            .events
            .push(EventPayload::ActionRequest(ActionRequest {
                action_id: action_id.clone(),
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                tool_args,
                resolved_command: None,
                subagent: None,
                environment: None,
            }));
        repairs
            .events
            .push(EventPayload::ActionResult(ActionResult {
                action_id: action_id.clone(),
                tool_call_id: call.id.clone(),
                status: ActionStatus::Error,
                observation_content: NOT_RUN.to_owned(),
                exit_code: None,
                execution_ref: action_id,
                subagent: None,
            }));
        repairs.not_run_calls.push(call.id.clone());
    }
    repairs
}

/// The `ask_human` call an answer belongs to, as `(action_id, request_id)`: the one named
/// by the last unanswered HUMAN_INPUT_REQUEST (the engine uses the action id as the
/// request id), else the last unanswered `ask_human` call.
fn pending_question(
    events: &[Event],
    dangling: &[&ActionRequest],
    received: &HashMap<&str, &str>,
) -> Option<(String, String)> {
    let last_request = events.iter().rev().find_map(|e| {
        if let EventPayload::HumanInputRequest(r) = &e.payload
            && !received.contains_key(r.request_id.as_str())
        {
            Some(r.request_id.clone())
        } else {
            None
        }
    });
    // A sub-agent's question is pending only when this run relayed it.
    let open_asks: Vec<&ActionRequest> = dangling
        .iter()
        .copied()
        .filter(|r| !received.contains_key(r.action_id.as_str()))
        .filter(|r| {
            r.tool_name == ASK_HUMAN_TOOL
                || (r.subagent.is_some() && last_request.as_deref() == Some(r.action_id.as_str()))
        })
        .collect();
    if let Some(request_id) = &last_request
        && let Some(ask) = open_asks.iter().find(|r| &r.action_id == request_id)
    {
        return Some((ask.action_id.clone(), request_id.clone()));
    }
    open_asks.last().map(|ask| {
        (
            ask.action_id.clone(),
            last_request.unwrap_or_else(|| ask.action_id.clone()),
        )
    })
}

/// The action ids of the dangling calls a PreToolUse hook held for a human's approval: a
/// HUMAN_INPUT_REQUEST carries their id. Not `ask_human`, nor an agent call, whose id a
/// question relayed from its sub-agent carries.
fn approval_requests<'a>(events: &[Event], dangling: &[&'a ActionRequest]) -> HashSet<&'a str> {
    let asked: HashSet<&str> = events
        .iter()
        .filter_map(|e| {
            if let EventPayload::HumanInputRequest(r) = &e.payload {
                Some(r.request_id.as_str())
            } else {
                None
            }
        })
        .collect();
    dangling
        .iter()
        .filter(|r| {
            r.tool_name != ASK_HUMAN_TOOL
                && r.subagent.is_none()
                && asked.contains(r.action_id.as_str())
        })
        .map(|r| r.action_id.as_str())
        .collect()
}

/// The held call an answer belongs to: the one the last unanswered HUMAN_INPUT_REQUEST
/// names, when that is a held call.
fn pending_approval(
    events: &[Event],
    gated: &HashSet<&str>,
    received: &HashMap<&str, &str>,
) -> Option<String> {
    events.iter().rev().find_map(|e| {
        if let EventPayload::HumanInputRequest(r) = &e.payload
            && !received.contains_key(r.request_id.as_str())
        {
            Some(
                gated
                    .contains(r.request_id.as_str())
                    .then(|| r.request_id.clone()),
            )
        } else {
            None
        }
    })?
}

/// The tool calls of the last THOUGHT that no later ACTION_RESULT answers (by
/// `tool_call_id`; ids are only unique within one THOUGHT, so earlier results do not count).
fn unanswered_calls_of_last_thought(events: &[Event]) -> Vec<&crate::journal::ToolCall> {
    let Some(last) = events
        .iter()
        .rposition(|e| matches!(e.payload, EventPayload::Thought(_)))
    else {
        return Vec::new();
    };
    let EventPayload::Thought(thought) = &events[last].payload else {
        return Vec::new();
    };
    let answered: HashSet<&str> = events[last + 1..]
        .iter()
        .filter_map(|e| {
            if let EventPayload::ActionResult(r) = &e.payload {
                Some(r.tool_call_id.as_str())
            } else {
                None
            }
        })
        .collect();
    thought
        .tool_calls
        .iter()
        .filter(|call| !answered.contains(call.id.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::context::tests::events as journal;
    use crate::journal::{HumanInputRequest, Thought};
    use crate::run::InputType;

    /// A turn of two `write` calls, the first held by a hook for approval.
    fn held(answered: Option<&str>) -> Vec<Event> {
        let call = |id: &str| ToolCall {
            id: id.to_owned(),
            name: "write".to_owned(),
            arguments: "{}".to_owned(),
        };
        let mut payloads = vec![
            EventPayload::Thought(Thought {
                content: String::new(),
                llm_invocation_ref: "i1".to_owned(),
                tool_calls: vec![call("c1"), call("c2")],
                reasoning: None,
                passback: None,
                usage: None,
            }),
            EventPayload::ActionRequest(ActionRequest {
                action_id: "a1".to_owned(),
                tool_call_id: "c1".to_owned(),
                tool_name: "write".to_owned(),
                tool_args: json!({"path": "x"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                resolved_command: Some("tee x".to_owned()),
                subagent: None,
                environment: None,
            }),
            EventPayload::HumanInputRequest(HumanInputRequest {
                request_id: "a1".to_owned(),
                prompt: "A PreToolUse hook asks…".to_owned(),
                input_type: InputType::Confirmation,
                sensitive: false,
            }),
        ];
        if let Some(answer) = answered {
            payloads.push(EventPayload::HumanInputReceived(HumanInputReceived {
                request_id: "a1".to_owned(),
                response: answer.to_owned(),
            }));
        }
        journal(payloads)
    }

    fn results(repairs: &Repairs) -> Vec<(&str, ActionStatus, &str)> {
        repairs
            .events
            .iter()
            .filter_map(EventPayload::as_action_result)
            .map(|r| {
                (
                    r.tool_call_id.as_str(),
                    r.status,
                    r.observation_content.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn an_answer_hands_the_held_call_to_the_engine_unrun() {
        for answer in ["yes", "no, use staging"] {
            let repairs = plan(&held(None), Some(answer));
            let (request, given) = repairs.approval.clone().unwrap_or_else(|| {
                panic!("no approval for {answer:?}");
            });
            assert_eq!((request.action_id.as_str(), given.as_str()), ("a1", answer));
            assert_eq!(
                repairs.events,
                [EventPayload::HumanInputReceived(HumanInputReceived {
                    request_id: "a1".to_owned(),
                    response: answer.to_owned(),
                })],
                "the answer is journaled, no result: the engine runs or refuses the call"
            );
            let waiting: Vec<&str> = repairs.to_run.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(waiting, ["c2"], "the call after it waited for the answer");
            assert_eq!(repairs.answered, None);
        }
    }

    #[test]
    fn a_held_call_is_never_run_by_a_repair() {
        // An approval journaled by a continue that died: the call may have run.
        let approved = plan(&held(Some("yes")), None);
        assert_eq!(
            results(&approved),
            [
                ("c1", ActionStatus::Error, INTERRUPTED_NOT_RERUN),
                ("c2", ActionStatus::Error, NOT_RUN)
            ]
        );
        // A refusal journaled: the call never ran, and the refusal is its result.
        let refused = plan(&held(Some("no")), None);
        assert_eq!(
            results(&refused)[0],
            (
                "c1",
                ActionStatus::Error,
                "Error: the human did not approve this call, so it was not run. Their \
                 answer: no"
            )
        );
        // Never answered (the process died while asking): it never ran.
        let unanswered = plan(&held(None), None);
        assert_eq!(
            results(&unanswered)[0],
            ("c1", ActionStatus::Error, NOT_RUN)
        );
        for repairs in [approved, refused, unanswered] {
            assert_eq!(repairs.approval, None);
        }
    }
}

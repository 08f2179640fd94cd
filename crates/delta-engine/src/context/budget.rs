//! Fitting a request into a token budget: sources over their own `max_tokens` are cut
//! with a marker, and when the whole is over the budget the journal's oldest complete
//! iterations are left out first, never the task and never a tool call without its
//! result, with one marker message saying how many were left out and where the full
//! journal is. The journal on disk is never touched.

use std::path::Path;

use serde::Serialize;

use super::tokens::{BYTES_PER_TOKEN, json_string_bytes, message_tokens, messages_tokens};
use crate::llm::ChatMessage;

/// What the budget did to one request, for `io/invocations/{id}/metadata.json`, the
/// engine log and `delta run -v`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ContextReport {
    /// Estimated tokens of the messages sent (the estimator of [`super::tokens`]).
    pub estimated_tokens: u64,
    /// The messages' budget in estimated tokens, when there was one.
    pub budget_tokens: Option<u64>,
    /// Complete iterations of the journal left out.
    pub left_out_iterations: usize,
    /// Messages of the journal left out (those iterations, with their tool results).
    pub left_out_messages: usize,
    /// Messages of the journal kept besides the task: 0 when nothing more can be left out.
    pub kept_messages: usize,
    /// Sources cut to their `max_tokens`, one line each.
    pub cut_sources: Vec<String>,
    /// Whether the messages are within the budget. False only when the parts that are
    /// never left out (file sources, the task, the marker) are over it: the messages are
    /// then those parts alone.
    pub fits: bool,
}

impl ContextReport {
    /// Whether anything was left out or cut.
    #[must_use]
    pub fn trimmed(&self) -> bool {
        self.left_out_iterations > 0 || self.left_out_messages > 0 || !self.cut_sources.is_empty()
    }
}

/// One source's contribution, before the budget is applied.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// A file source's message: included whole (it was already cut to its own limit).
    Fixed(ChatMessage),
    /// The conversation rebuilt from the journal.
    Journal(Conversation),
}

/// The journal source's messages, grouped so that leaving out never splits an iteration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conversation {
    /// Never left out: the task.
    pub head: Vec<ChatMessage>,
    /// Oldest first: each iteration is an assistant message, the tool messages answering
    /// its calls, and the user or system messages just before it. A trailing group
    /// without an assistant message (a user message awaiting its answer) is last.
    pub groups: Vec<Group>,
    /// The source's own `max_tokens`.
    pub max_tokens: Option<u64>,
}

/// Consecutive messages left out or kept together.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub messages: Vec<ChatMessage>,
    /// Whether the group holds an assistant message (is an iteration).
    pub iteration: bool,
}

impl Conversation {
    /// Groups `messages` (as [`super::conversation`] returns them); `has_task` says the
    /// first one is the task.
    pub fn new(messages: Vec<ChatMessage>, has_task: bool, max_tokens: Option<u64>) -> Self {
        let mut messages = messages.into_iter();
        let head = if has_task {
            messages.next().into_iter().collect()
        } else {
            Vec::new()
        };
        let mut groups: Vec<Group> = Vec::new();
        // User and system messages since the last assistant or tool message: they lead
        // into the next assistant message.
        let mut lead: Vec<ChatMessage> = Vec::new();
        for message in messages {
            match message {
                ChatMessage::Assistant(_) => {
                    lead.push(message);
                    groups.push(Group {
                        messages: std::mem::take(&mut lead),
                        iteration: true,
                    });
                }
                ChatMessage::Tool { .. } => match groups.last_mut() {
                    Some(group) if lead.is_empty() => group.messages.push(message),
                    // The conversation never puts a tool message anywhere but right after
                    // its assistant message; keep any other order together, unsplit.
                    Some(_) | None => lead.push(message),
                },
                ChatMessage::System { .. } | ChatMessage::User { .. } => lead.push(message),
            }
        }
        if !lead.is_empty() {
            groups.push(Group {
                messages: lead,
                iteration: false,
            });
        }
        Conversation {
            head,
            groups,
            max_tokens,
        }
    }
}

/// The marker placed after the task when iterations were left out.
pub(crate) fn marker(left_out: usize, journal_path: &Path) -> ChatMessage {
    ChatMessage::system(format!(
        "[Delta Engine] {left_out} earlier iteration(s) of this run are left out of this \
         request to keep it within the model's context window. The full record is the \
         journal {}.",
        journal_path.display()
    ))
}

/// Applies `budget` (tokens the messages may take, by the estimator) to `parts`, in
/// source order. `report` receives what was left out; its `cut_sources` are kept.
pub(crate) fn fit(
    parts: Vec<Part>,
    budget: Option<u64>,
    journal_path: &Path,
    report: &mut ContextReport,
) -> Vec<ChatMessage> {
    let marker_tokens = message_tokens(&marker(usize::MAX, journal_path));
    let fixed: u64 = parts
        .iter()
        .map(|part| match part {
            Part::Fixed(message) => message_tokens(message),
            Part::Journal(conversation) => messages_tokens(&conversation.head),
        })
        .sum();
    let mut remaining = budget.map(|budget| budget.saturating_sub(fixed));
    report.budget_tokens = budget;
    let mut messages = Vec::new();
    for part in parts {
        match part {
            Part::Fixed(message) => messages.push(message),
            Part::Journal(conversation) => {
                let head_tokens = messages_tokens(&conversation.head);
                let own = conversation
                    .max_tokens
                    .map(|max| max.saturating_sub(head_tokens));
                let available = match (remaining, own) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                let tokens: Vec<u64> = conversation
                    .groups
                    .iter()
                    .map(|group| messages_tokens(&group.messages))
                    .collect();
                let total: u64 = tokens.iter().sum();
                let keep_from = match available {
                    Some(available) if total > available => {
                        let room = available.saturating_sub(marker_tokens);
                        // The newest groups that fit, as one unbroken run up to the end.
                        let mut used = 0;
                        let mut start = tokens.len();
                        while start > 0 && used + tokens[start - 1] <= room {
                            used += tokens[start - 1];
                            start -= 1;
                        }
                        start
                    }
                    Some(_) | None => 0,
                };
                let (dropped, kept) = conversation.groups.split_at(keep_from);
                let used: u64 = tokens[keep_from..].iter().sum();
                messages.extend(conversation.head);
                if !dropped.is_empty() {
                    let left_out = dropped.iter().filter(|group| group.iteration).count();
                    report.left_out_iterations += left_out;
                    report.left_out_messages += dropped
                        .iter()
                        .map(|group| group.messages.len())
                        .sum::<usize>();
                    messages.push(marker(left_out, journal_path));
                }
                for group in kept {
                    report.kept_messages += group.messages.len();
                    messages.extend(group.messages.iter().cloned());
                }
                let spent = used + if dropped.is_empty() { 0 } else { marker_tokens };
                remaining = remaining.map(|r| r.saturating_sub(spent));
            }
        }
    }
    report.estimated_tokens = messages_tokens(&messages);
    report.fits = budget.is_none_or(|budget| report.estimated_tokens <= budget);
    messages
}

/// `text` cut to about `max_tokens` tokens, keeping its start, with a line saying so;
/// `None` when it fits.
pub(crate) fn cut_text(text: &str, max_tokens: u64, name: &str, path: &Path) -> Option<String> {
    let estimated = message_tokens(&ChatMessage::system(text));
    if estimated <= max_tokens {
        return None;
    }
    let over = format!("its max_tokens of {max_tokens}");
    Some(cut_to(text, max_tokens, (estimated, &over), name, path))
}

/// The start of `text` that fits in `max_tokens` with the line saying that the source,
/// about `estimated` tokens in all, is cut there for being `over` a limit.
pub(crate) fn cut_to(
    text: &str,
    max_tokens: u64,
    (estimated, over): (u64, &str),
    name: &str,
    path: &Path,
) -> String {
    let note = format!(
        "\n\n[Delta Engine: context source {name} is cut here: it is about {estimated} tokens, \
         over {over}; the whole text is in {}]",
        path.display()
    );
    let note_tokens = message_tokens(&ChatMessage::system(note.as_str()));
    let room = max_tokens.saturating_sub(note_tokens) * BYTES_PER_TOKEN;
    // Walk the text once, charging each character what it costs as JSON.
    let mut used = 0;
    let mut end = 0;
    let mut buffer = [0u8; 4];
    for (index, ch) in text.char_indices() {
        used += json_string_bytes(ch.encode_utf8(&mut buffer)) - 2;
        if used > room {
            break;
        }
        end = index + ch.len_utf8();
    }
    format!("{}{note}", &text[..end])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::context::conversation;
    use crate::context::tests::events;
    use crate::journal::{
        ActionResult, ActionStatus, Event, EventPayload, MessageLevel, RunStart, SystemMessage,
        Thought, ToolCall, UserMessage,
    };
    use crate::llm::AssistantMessage;
    use crate::run::RunId;

    /// One iteration of a random journal: an optional user message, a THOUGHT with up to
    /// three calls, and results for some of them (a crash leaves calls unanswered), with
    /// an engine notice now and then.
    #[derive(Debug, Clone)]
    struct Cycle {
        user: Option<usize>,
        text: usize,
        results: Vec<Option<usize>>,
        notice: bool,
    }

    fn cycle() -> impl Strategy<Value = Cycle> {
        (
            proptest::option::of(0usize..400),
            0usize..300,
            proptest::collection::vec(proptest::option::weighted(0.9, 0usize..2000), 0..4),
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(user, text, results, notice)| Cycle {
                user,
                text,
                results,
                notice,
            })
    }

    fn journal(task: usize, cycles: &[Cycle]) -> Vec<Event> {
        let mut payloads = vec![EventPayload::RunStart(RunStart {
            run_id: RunId::parse("r1").unwrap(),
            task: "t".repeat(task),
            agent_ref: "/a".to_owned(),
            environment: None,
        })];
        for (n, cycle) in cycles.iter().enumerate() {
            if let Some(len) = cycle.user {
                payloads.push(EventPayload::UserMessage(UserMessage {
                    content: "u".repeat(len),
                }));
            }
            let ids: Vec<String> = (0..cycle.results.len())
                .map(|i| format!("call_{n}_{i}"))
                .collect();
            payloads.push(EventPayload::Thought(Thought {
                content: "a".repeat(cycle.text),
                llm_invocation_ref: format!("inv{n}"),
                reasoning: None,
                tool_calls: ids
                    .iter()
                    .map(|id| ToolCall {
                        id: id.clone(),
                        name: "t".to_owned(),
                        arguments: "{}".to_owned(),
                    })
                    .collect(),
                passback: None,
                usage: None,
            }));
            for (id, result) in ids.iter().zip(&cycle.results) {
                if cycle.notice {
                    payloads.push(EventPayload::SystemMessage(SystemMessage {
                        level: MessageLevel::Warn,
                        content: "notice \"quoted\"\n".to_owned(),
                    }));
                }
                if let Some(len) = result {
                    payloads.push(EventPayload::ActionResult(ActionResult {
                        action_id: format!("a-{id}"),
                        tool_call_id: id.clone(),
                        status: ActionStatus::Success,
                        observation_content: "line\n".repeat(*len / 5),
                        exit_code: Some(0),
                        execution_ref: format!("a-{id}"),
                        subagent: None,
                    }));
                }
            }
        }
        events(payloads)
    }

    /// Each assistant message is followed by exactly one tool message per call, in order,
    /// and every tool message answers the assistant message just before it.
    fn assert_calls_answered(messages: &[ChatMessage]) -> Result<(), TestCaseError> {
        let mut index = 0;
        while index < messages.len() {
            match &messages[index] {
                ChatMessage::Assistant(AssistantMessage { tool_calls, .. }) => {
                    for (offset, call) in tool_calls.iter().enumerate() {
                        let answer = messages.get(index + 1 + offset);
                        let answered = matches!(
                            answer,
                            Some(ChatMessage::Tool { tool_call_id, .. }) if *tool_call_id == call.id
                        );
                        prop_assert!(answered, "call {} unanswered at {}", call.id, index);
                    }
                    index += 1 + tool_calls.len();
                }
                ChatMessage::Tool { tool_call_id, .. } => {
                    prop_assert!(false, "tool message {tool_call_id} without its call");
                }
                ChatMessage::System { .. } | ChatMessage::User { .. } => index += 1,
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_built_context_keeps_the_task_whole_iterations_and_the_budget(
            task in 1usize..600,
            cycles in proptest::collection::vec(cycle(), 0..25),
            prompt in 0usize..800,
            budget in proptest::option::weighted(0.9, 0u64..6000),
            journal_max in proptest::option::weighted(0.2, 0u64..4000),
        ) {
            let events = journal(task, &cycles);
            let full = conversation(&events, None);
            let system = ChatMessage::system("s".repeat(prompt));
            let parts = vec![
                Part::Fixed(system.clone()),
                Part::Journal(Conversation::new(full.clone(), true, journal_max)),
            ];
            let mut report = ContextReport::default();
            let path = Path::new("/w/.delta/r1/journal.jsonl");
            let messages = fit(parts, budget, path, &mut report);

            // The system prompt and the task, always, in their places.
            prop_assert_eq!(&messages[0], &system);
            prop_assert_eq!(&messages[1], &full[0]);
            assert_calls_answered(&messages)?;
            // Within the budget by the estimator whenever the fixed parts allow it.
            prop_assert_eq!(report.estimated_tokens, messages_tokens(&messages));
            let floor = messages_tokens(&messages[..2]) + message_tokens(&marker(usize::MAX, path));
            if let Some(budget) = budget {
                if report.fits {
                    prop_assert!(report.estimated_tokens <= budget);
                } else {
                    prop_assert!(floor > budget);
                    prop_assert_eq!(report.kept_messages, 0);
                }
            }
            // What is kept is the newest part of the conversation, whole.
            let kept = &messages[messages.len() - report.kept_messages..];
            prop_assert_eq!(kept, &full[full.len() - report.kept_messages..]);
            prop_assert_eq!(
                report.kept_messages + report.left_out_messages,
                full.len() - 1
            );
            // One marker exactly when something was left out.
            let markers = messages
                .iter()
                .filter(|m| matches!(m, ChatMessage::System { content } if content.starts_with("[Delta Engine]")))
                .count();
            prop_assert_eq!(markers, usize::from(report.left_out_messages > 0));
            if report.left_out_messages == 0 {
                prop_assert_eq!(&messages[1..], &full[..]);
            }
        }
    }

    #[test]
    fn a_long_source_is_cut_to_its_max_tokens_keeping_its_start() {
        let text = "word \"quoted\"\n".repeat(500);
        let path = Path::new("/a/guide.md");
        let cut = cut_text(&text, 300, "'guide'", path).unwrap();
        assert!(message_tokens(&ChatMessage::system(cut.as_str())) <= 300);
        assert!(cut.starts_with("word \"quoted\"\nword"));
        assert!(cut.ends_with(
            "[Delta Engine: context source 'guide' is cut here: it is about 2854 tokens, over \
             its max_tokens of 300; the whole text is in /a/guide.md]"
        ));
        assert_eq!(cut_text("short", 300, "'guide'", path), None);
    }
}

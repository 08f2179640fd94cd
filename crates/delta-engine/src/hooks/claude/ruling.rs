//! The hooks of one firing, folded in the order they ran into what the engine applies.
//!
//! Claude Code runs a firing's hooks in parallel and keeps whichever `updatedInput`
//! finishes last (anthropics/claude-code#15897). Delta runs them one after another, in
//! the configured order: each PreToolUse hook sees the input the ones before it produced,
//! the final input is what runs, and the strongest decision wins (`deny > defer > ask >
//! allow`, an exit 2 counting as deny), whatever the order.

use serde_json::{Map, Value};

use super::reply::Reply;
use crate::journal::ClaudeDecision;

/// What a firing's hooks decided together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ruling {
    /// PreToolUse: the tool input as the hooks left it; `None` when none rewrote it.
    pub tool_input: Option<Map<String, Value>>,
    /// The strongest decision made, if any.
    pub decision: Option<ClaudeDecision>,
    /// The reasons of the hooks that made that decision, in order.
    pub reasons: Vec<String>,
    /// `continue: false` of the first hook that said so: its stopReason.
    pub stop: Option<String>,
    /// The texts for the model, in order.
    pub context: Vec<String>,
    /// The user-facing messages (`systemMessage`), in order.
    pub system_messages: Vec<String>,
}

impl Ruling {
    /// Adds the answer of the next hook.
    pub fn absorb(&mut self, reply: Reply) {
        if let Some(decision) = reply.decision {
            let current = self.decision.map_or(0, rank);
            if rank(decision) > current {
                self.decision = Some(decision);
                self.reasons.clear();
            }
            if rank(decision) >= current {
                self.reasons.extend(reply.reason);
            }
        }
        // A deferring hook's rewrite is ignored, as Claude Code documents; a denying
        // hook's would never run.
        let rewrites = !matches!(
            reply.decision,
            Some(ClaudeDecision::Defer | ClaudeDecision::Deny)
        );
        if let (true, Some(input)) = (rewrites, reply.updated_input) {
            self.tool_input = Some(input);
        }
        if self.stop.is_none() {
            self.stop = reply.stop;
        }
        self.context.extend(reply.context);
        self.system_messages.extend(reply.system_message);
    }

    /// The reasons as one text.
    #[must_use]
    pub fn reason(&self) -> String {
        self.reasons.join("\n")
    }
}

/// Which decision wins: `deny` (and a block) over `defer` over `ask` over `allow`.
fn rank(decision: ClaudeDecision) -> u8 {
    match decision {
        ClaudeDecision::Allow => 1,
        ClaudeDecision::Ask => 2,
        ClaudeDecision::Defer => 3,
        ClaudeDecision::Deny | ClaudeDecision::Block | ClaudeDecision::Stop => 4,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn said(decision: Option<ClaudeDecision>, reason: &str, input: Option<Value>) -> Reply {
        Reply {
            decision,
            reason: Some(reason.to_owned()),
            updated_input: input.and_then(|v| v.as_object().cloned()),
            ..Reply::default()
        }
    }

    #[test]
    fn rewrites_compose_in_order_and_the_last_one_runs() {
        let mut ruling = Ruling::default();
        ruling.absorb(said(None, "a", Some(json!({"text": "x A"}))));
        ruling.absorb(said(
            Some(ClaudeDecision::Allow),
            "b",
            Some(json!({"text": "x A B"})),
        ));
        ruling.absorb(said(None, "c", None));
        assert_eq!(
            ruling.tool_input,
            json!({"text": "x A B"}).as_object().cloned()
        );
        assert_eq!(ruling.decision, Some(ClaudeDecision::Allow));
    }

    #[test]
    fn the_strongest_decision_wins_whatever_the_order() {
        for order in [
            [
                ClaudeDecision::Deny,
                ClaudeDecision::Ask,
                ClaudeDecision::Allow,
            ],
            [
                ClaudeDecision::Allow,
                ClaudeDecision::Deny,
                ClaudeDecision::Defer,
            ],
            [
                ClaudeDecision::Defer,
                ClaudeDecision::Allow,
                ClaudeDecision::Deny,
            ],
        ] {
            let mut ruling = Ruling::default();
            for decision in order {
                ruling.absorb(said(Some(decision), decision.as_str(), None));
            }
            assert_eq!(ruling.decision, Some(ClaudeDecision::Deny), "{order:?}");
            assert_eq!(ruling.reason(), "deny");
        }
        let mut ruling = Ruling::default();
        ruling.absorb(said(Some(ClaudeDecision::Ask), "first", None));
        ruling.absorb(said(Some(ClaudeDecision::Defer), "second", None));
        ruling.absorb(said(Some(ClaudeDecision::Defer), "third", None));
        assert_eq!(ruling.decision, Some(ClaudeDecision::Defer));
        assert_eq!(ruling.reason(), "second\nthird");
    }

    #[test]
    fn a_deferring_or_denying_hooks_rewrite_is_ignored() {
        let mut ruling = Ruling::default();
        ruling.absorb(said(None, "", Some(json!({"a": 1}))));
        ruling.absorb(said(Some(ClaudeDecision::Defer), "", Some(json!({"a": 2}))));
        ruling.absorb(said(Some(ClaudeDecision::Deny), "", Some(json!({"a": 3}))));
        assert_eq!(ruling.tool_input, json!({"a": 1}).as_object().cloned());
    }

    #[test]
    fn the_first_stop_counts_and_every_context_is_kept() {
        let mut ruling = Ruling::default();
        for (stop, context) in [(None, "one"), (Some("first"), "two"), (Some("second"), "")] {
            ruling.absorb(Reply {
                stop: stop.map(str::to_owned),
                context: vec![context.to_owned()]
                    .into_iter()
                    .filter(|c| !c.is_empty())
                    .collect(),
                ..Reply::default()
            });
        }
        assert_eq!(ruling.stop.as_deref(), Some("first"));
        assert_eq!(ruling.context, ["one", "two"]);
    }
}

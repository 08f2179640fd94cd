//! A PreToolUse hook's `ask` or `defer`: the question put to the human about the call, how
//! the answer reads, and what the model is told when the call does not run.
//!
//! The question goes through `ask_human`'s machinery (asked at once with `-i`, else the run
//! pauses with exit 101 until `delta continue -m yes|no`), so these texts are the only part
//! of an approval that is its own.

use serde_json::{Map, Value};

use crate::journal::ClaudeDecision;

/// The most characters of the tool input a question shows.
const INPUT_SHOWN_CHARS: usize = 4_000;

/// Whether `answer` approves the call: its first word is yes, y, allow or approve, in any
/// case. Anything else refuses it, and the answer goes to the model as the human's words.
#[must_use]
pub fn approves(answer: &str) -> bool {
    let first = answer
        .trim()
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_lowercase();
    matches!(first.as_str(), "yes" | "y" | "allow" | "approve")
}

/// The question: which hook decision, the tool, its input (cut when long) and the hook's
/// reason.
#[must_use]
pub fn approval_prompt(
    tool_name: &str,
    input: &Map<String, Value>,
    decision: ClaudeDecision,
    reason: &str,
) -> String {
    let asked = match decision {
        ClaudeDecision::Defer => "deferred this tool call to you",
        ClaudeDecision::Allow
        | ClaudeDecision::Ask
        | ClaudeDecision::Deny
        | ClaudeDecision::Block
        | ClaudeDecision::Stop => "asks for your approval before this tool call runs",
    };
    let input = Value::Object(input.clone()).to_string();
    let count = input.chars().count();
    let shown = if count > INPUT_SHOWN_CHARS {
        let head: String = input.chars().take(INPUT_SHOWN_CHARS).collect();
        format!("{head}… ({count} characters; the whole input is in the journal's ACTION_REQUEST)")
    } else {
        input
    };
    let reason = if reason.trim().is_empty() {
        String::new()
    } else {
        format!("\nThe hook's reason: {}", reason.trim())
    };
    format!(
        "A PreToolUse hook {asked}.\nTool: {tool_name}\nInput: {shown}{reason}\nAnswer yes to \
         run it, or no to refuse it (what you write goes to the model)."
    )
}

/// What the model reads when a hook denied the call.
#[must_use]
pub fn denied_observation(reason: &str) -> String {
    format!(
        "Error: a PreToolUse hook blocked this call: {}",
        reason.trim()
    )
}

/// What the model reads when a hook asked for a human and nobody can be asked.
#[must_use]
pub fn unattended_observation(reason: &str) -> String {
    let reason = if reason.trim().is_empty() {
        String::new()
    } else {
        format!(" The hook's reason: {}", reason.trim())
    };
    format!(
        "Error: a PreToolUse hook asks a human to approve this call, and nobody can be asked \
         in this run (ask_human is off), so it was not run.{reason}"
    )
}

/// What the model reads when the human did not approve the call.
#[must_use]
pub fn refused_observation(answer: &str) -> String {
    format!(
        "Error: the human did not approve this call, so it was not run. Their answer: {}",
        answer.trim()
    )
}

/// What the model reads for a call a hook's `continue: false` left unrun.
#[must_use]
pub fn stopped_observation(reason: &str) -> String {
    let reason = if reason.trim().is_empty() {
        "continue: false".to_owned()
    } else {
        reason.trim().to_owned()
    };
    format!("Error: not run: a hook stopped the run ({reason}).")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_a_yes_approves() {
        for answer in ["yes", "Y", "yes, go ahead", " Allow", "approve it"] {
            assert!(approves(answer), "{answer}");
        }
        for answer in ["no", "", "yesterday", "no, use staging", "ok"] {
            assert!(!approves(answer), "{answer}");
        }
    }

    #[test]
    fn the_question_names_the_tool_its_input_and_the_reason() {
        let input = json!({"path": "prod.db"});
        assert_eq!(
            approval_prompt(
                "write_file",
                input.as_object().unwrap_or(&Map::new()),
                ClaudeDecision::Ask,
                "writes need approval"
            ),
            "A PreToolUse hook asks for your approval before this tool call runs.\nTool: \
             write_file\nInput: {\"path\":\"prod.db\"}\nThe hook's reason: writes need \
             approval\nAnswer yes to run it, or no to refuse it (what you write goes to the \
             model)."
        );
        let long = json!({"content": "x".repeat(5000)});
        let prompt = approval_prompt(
            "w",
            long.as_object().unwrap_or(&Map::new()),
            ClaudeDecision::Defer,
            "",
        );
        assert!(prompt.starts_with("A PreToolUse hook deferred this tool call to you."));
        assert!(
            prompt.contains(
                "… (5014 characters; the whole input is in the journal's ACTION_REQUEST)"
            )
        );
    }
}

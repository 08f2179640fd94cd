//! One hook's answer, read as Claude Code's hooks reference documents it: the exit code
//! first (0 success, 2 a block, anything else a non-blocking error), then stdout as JSON
//! when it starts with `{`, else as text (context for UserPromptSubmit and SessionStart).
//!
//! Where the reference changed, the current contract is read because it only adds to the
//! classic one: JSON is also read on exit 2 (its reason wins over stderr; the block stays)
//! and on other exit codes (valid JSON then decides, as it does on exit 0).

use serde_json::{Map, Value};

use crate::config::ClaudeEvent;
use crate::journal::ClaudeDecision;

/// The most characters of one text a hook hands the model (a reason, a context); Claude
/// Code caps hook output at the same length.
pub const CLAUDE_TEXT_LIMIT: usize = 10_000;

/// What one hook said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// Its decision for the event, when it made one.
    pub decision: Option<ClaudeDecision>,
    /// The reason it gave for it.
    pub reason: Option<String>,
    /// PreToolUse: the tool input that replaces the call's (`updatedInput`).
    pub updated_input: Option<Map<String, Value>>,
    /// Texts for the model (`additionalContext`, plain stdout of the prompt events).
    pub context: Vec<String>,
    /// `continue: false`: the run stops, with this `stopReason` (empty when none).
    pub stop: Option<String>,
    /// `systemMessage`: a warning for the user.
    pub system_message: Option<String>,
    /// `suppressOutput`: keep stdout out of the log.
    pub suppress_output: bool,
}

impl Reply {
    /// The decision to journal: `stop` when the hook stopped the run, else its decision.
    #[must_use]
    pub fn journaled_decision(&self) -> Option<ClaudeDecision> {
        if self.stop.is_some() {
            Some(ClaudeDecision::Stop)
        } else {
            self.decision
        }
    }

    /// The reason to journal: the stopReason when it stopped the run, else its reason.
    #[must_use]
    pub fn journaled_reason(&self) -> Option<&str> {
        match &self.stop {
            Some(reason) if !reason.is_empty() => Some(reason),
            Some(_) | None => self.reason.as_deref(),
        }
    }
}

/// Reads the answer of a hook of `event` that exited with `code`.
///
/// # Errors
/// A non-blocking error, worded for the journal: another exit code without a usable JSON
/// answer, JSON whose fields do not fit the protocol, an exit 2 where nothing can be
/// blocked.
pub fn parse(event: ClaudeEvent, code: i32, stdout: &str, stderr: &str) -> Result<Reply, String> {
    let json = json_object(stdout);
    let reply = match (code, json) {
        (0, Some(Ok(object))) => from_json(event, &object)?,
        // Stdout that is not a JSON object is text, as Claude Code reads it.
        (0, Some(Err(_)) | None) => plain(event, stdout),
        (2, json) => {
            // A block whatever the JSON says; JSON that does not fit is ignored, as Claude
            // Code does, and stderr is the reason.
            let answered = json.and_then(Result::ok).map(|o| from_json(event, &o));
            block(
                event,
                answered.and_then(Result::ok).unwrap_or_default(),
                stderr,
            )?
        }
        (_, Some(Ok(object))) => from_json(event, &object).map_err(|problem| {
            format!(
                "exited with code {code}{}; its stdout: {problem}",
                stderr_excerpt(stderr)
            )
        })?,
        (_, Some(Err(_)) | None) => {
            return Err(format!("exited with code {code}{}", stderr_excerpt(stderr)));
        }
    };
    Ok(capped(reply))
}

/// Stdout as a JSON object: `None` when it does not start with `{` (text), `Some(Err)`
/// when it does but is no JSON object.
fn json_object(stdout: &str) -> Option<Result<Map<String, Value>, String>> {
    let trimmed = stdout.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    Some(match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err("not a JSON object".to_owned()),
        Err(error) => Err(error.to_string()),
    })
}

/// A plain-text answer on exit 0: context for the two events whose stdout is context.
fn plain(event: ClaudeEvent, stdout: &str) -> Reply {
    let text = stdout.trim();
    let context = match event {
        ClaudeEvent::UserPromptSubmit | ClaudeEvent::SessionStart if !text.is_empty() => {
            vec![text.to_owned()]
        }
        ClaudeEvent::UserPromptSubmit
        | ClaudeEvent::SessionStart
        | ClaudeEvent::PreToolUse
        | ClaudeEvent::PostToolUse
        | ClaudeEvent::PostToolUseFailure
        | ClaudeEvent::Notification
        | ClaudeEvent::PreCompact
        | ClaudeEvent::Stop
        | ClaudeEvent::SessionEnd => Vec::new(),
    };
    Reply {
        context,
        ..Reply::default()
    }
}

/// Exit 2: what it blocks at `event`, with `reply`'s reason if it gave one, else stderr.
fn block(event: ClaudeEvent, mut reply: Reply, stderr: &str) -> Result<Reply, String> {
    let decision = match event {
        ClaudeEvent::PreToolUse => ClaudeDecision::Deny,
        ClaudeEvent::PostToolUse
        | ClaudeEvent::PostToolUseFailure
        | ClaudeEvent::UserPromptSubmit
        | ClaudeEvent::Stop => ClaudeDecision::Block,
        ClaudeEvent::SessionStart
        | ClaudeEvent::Notification
        | ClaudeEvent::PreCompact
        | ClaudeEvent::SessionEnd => {
            return Err(format!(
                "exited with code 2, which blocks nothing at {}{}",
                event.as_str(),
                stderr_excerpt(stderr)
            ));
        }
    };
    let stderr = stderr.trim();
    if reply.reason.is_none() {
        reply.reason = Some(if stderr.is_empty() {
            format!(
                "blocked by a {} hook (exit code 2, nothing on stderr)",
                event.as_str()
            )
        } else {
            stderr.to_owned()
        });
    }
    reply.decision = Some(decision);
    Ok(reply)
}

/// The JSON answer of a hook of `event`. Fields Claude Code defines for other events, and
/// fields it does not define, are ignored (newer scripts may send more).
fn from_json(event: ClaudeEvent, object: &Map<String, Value>) -> Result<Reply, String> {
    let mut reply = Reply {
        suppress_output: boolean(object, "suppressOutput")?.unwrap_or(false),
        system_message: string(object, "systemMessage")?,
        ..Reply::default()
    };
    if boolean(object, "continue")? == Some(false) {
        reply.stop = Some(string(object, "stopReason")?.unwrap_or_default());
    }
    let reason = string(object, "reason")?;
    let legacy = match string(object, "decision")?.as_deref() {
        None => None,
        Some("block") => Some(ClaudeDecision::Block),
        // The classic contract's approval: PreToolUse's allow, nothing elsewhere.
        Some("approve") => Some(ClaudeDecision::Allow),
        Some(other) => {
            return Err(format!(
                "`decision` must be \"block\" (or \"approve\"), not {other:?}"
            ));
        }
    };
    let specific = match object.get("hookSpecificOutput") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(specific)) => specific.clone(),
        Some(_) => return Err("`hookSpecificOutput` must be an object".to_owned()),
    };
    if let Some(name) = string(&specific, "hookEventName")?
        && name != event.as_str()
    {
        return Err(format!(
            "hookSpecificOutput.hookEventName is {name:?} in a {} hook",
            event.as_str()
        ));
    }
    if let Some(context) = string(&specific, "additionalContext")? {
        reply.context.push(context);
    }
    match event {
        ClaudeEvent::PreToolUse => {
            let permission = match string(&specific, "permissionDecision")?.as_deref() {
                None => None,
                Some("allow") => Some(ClaudeDecision::Allow),
                Some("ask") => Some(ClaudeDecision::Ask),
                Some("defer") => Some(ClaudeDecision::Defer),
                Some("deny") => Some(ClaudeDecision::Deny),
                Some(other) => {
                    return Err(format!(
                        "hookSpecificOutput.permissionDecision must be allow, deny, ask or \
                         defer, not {other:?}"
                    ));
                }
            };
            // hookSpecificOutput wins over the deprecated top-level decision.
            (reply.decision, reply.reason) = match permission {
                Some(decision) => (
                    Some(decision),
                    string(&specific, "permissionDecisionReason")?,
                ),
                None => (
                    legacy.map(|decision| match decision {
                        ClaudeDecision::Block => ClaudeDecision::Deny,
                        ClaudeDecision::Allow
                        | ClaudeDecision::Ask
                        | ClaudeDecision::Defer
                        | ClaudeDecision::Deny
                        | ClaudeDecision::Stop => decision,
                    }),
                    reason,
                ),
            };
            reply.updated_input = match specific.get("updatedInput") {
                None | Some(Value::Null) => None,
                Some(Value::Object(input)) => Some(input.clone()),
                Some(_) => {
                    return Err("hookSpecificOutput.updatedInput must be an object".to_owned());
                }
            };
        }
        ClaudeEvent::PostToolUse
        | ClaudeEvent::PostToolUseFailure
        | ClaudeEvent::UserPromptSubmit
        | ClaudeEvent::Stop => {
            if legacy == Some(ClaudeDecision::Block) {
                reply.decision = Some(ClaudeDecision::Block);
                reply.reason = reason;
            }
        }
        ClaudeEvent::SessionStart
        | ClaudeEvent::Notification
        | ClaudeEvent::PreCompact
        | ClaudeEvent::SessionEnd => {}
    }
    Ok(reply)
}

fn string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

fn boolean(object: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(*value)),
        Some(_) => Err(format!("`{key}` must be true or false")),
    }
}

/// `: ` and the first line of stderr, or nothing when stderr is empty.
fn stderr_excerpt(stderr: &str) -> String {
    match stderr.lines().map(str::trim).find(|line| !line.is_empty()) {
        Some(line) => format!(": {}", cap(line, 500)),
        None => String::new(),
    }
}

/// The texts of `reply` that reach the model, each at most [`CLAUDE_TEXT_LIMIT`]
/// characters.
fn capped(mut reply: Reply) -> Reply {
    reply.reason = reply.reason.map(|text| cap(&text, CLAUDE_TEXT_LIMIT));
    reply.stop = reply.stop.map(|text| cap(&text, CLAUDE_TEXT_LIMIT));
    reply.context = reply
        .context
        .iter()
        .map(|text| cap(text, CLAUDE_TEXT_LIMIT))
        .collect();
    reply
}

fn cap(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_owned();
    }
    let kept: String = text.chars().take(limit).collect();
    format!(
        "{kept}\n[cut to {limit} of {count} characters; the whole output is in the hook's record]"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PRE: ClaudeEvent = ClaudeEvent::PreToolUse;

    fn decision(reply: &Result<Reply, String>) -> Option<(ClaudeDecision, &str)> {
        let reply = reply.as_ref().ok()?;
        Some((reply.decision?, reply.reason.as_deref().unwrap_or_default()))
    }

    #[test]
    fn exit_2_blocks_with_stderr_or_the_json_reason() {
        assert_eq!(
            decision(&parse(PRE, 2, "", "rm -rf is not allowed\n")),
            Some((ClaudeDecision::Deny, "rm -rf is not allowed"))
        );
        // Even a JSON allow cannot undo an exit 2; its reason wins over stderr.
        let allow = json!({"hookSpecificOutput": {"permissionDecision": "allow",
            "permissionDecisionReason": "from JSON"}});
        assert_eq!(
            decision(&parse(PRE, 2, &allow.to_string(), "from stderr")),
            Some((ClaudeDecision::Deny, "from JSON"))
        );
        assert_eq!(
            decision(&parse(ClaudeEvent::Stop, 2, "", "run the tests")),
            Some((ClaudeDecision::Block, "run the tests"))
        );
        assert_eq!(
            decision(&parse(PRE, 2, "", "")),
            Some((
                ClaudeDecision::Deny,
                "blocked by a PreToolUse hook (exit code 2, nothing on stderr)"
            ))
        );
        assert_eq!(
            parse(ClaudeEvent::Notification, 2, "", "oops"),
            Err("exited with code 2, which blocks nothing at Notification: oops".to_owned())
        );
    }

    #[test]
    fn other_exit_codes_are_non_blocking_unless_their_json_decides() {
        assert_eq!(
            parse(PRE, 1, "", "\nTraceback: boom\nmore"),
            Err("exited with code 1: Traceback: boom".to_owned())
        );
        assert_eq!(
            parse(PRE, 127, "", "sh: 1: ./missing.sh: not found"),
            Err("exited with code 127: sh: 1: ./missing.sh: not found".to_owned())
        );
        let deny = json!({"hookSpecificOutput": {"permissionDecision": "deny"}});
        assert_eq!(
            decision(&parse(PRE, 1, &deny.to_string(), "")),
            Some((ClaudeDecision::Deny, ""))
        );
    }

    #[test]
    fn pre_tool_use_json_decides_rewrites_and_adds_context() {
        let answer = json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "safe",
            "updatedInput": {"command": "ls -a"},
            "additionalContext": "prod is read-only"}});
        let reply = parse(PRE, 0, &format!("  {answer}\n"), "").unwrap();
        assert_eq!(reply.decision, Some(ClaudeDecision::Allow));
        assert_eq!(reply.reason.as_deref(), Some("safe"));
        assert_eq!(
            reply.updated_input,
            json!({"command": "ls -a"}).as_object().cloned()
        );
        assert_eq!(reply.context, ["prod is read-only"]);
        for (written, expected) in [
            ("ask", ClaudeDecision::Ask),
            ("defer", ClaudeDecision::Defer),
            ("deny", ClaudeDecision::Deny),
        ] {
            let answer = json!({"hookSpecificOutput": {"permissionDecision": written}});
            assert_eq!(
                parse(PRE, 0, &answer.to_string(), "").unwrap().decision,
                Some(expected)
            );
        }
        // The deprecated top-level form: approve is allow, block is deny.
        let legacy = json!({"decision": "block", "reason": "no"});
        assert_eq!(
            decision(&parse(PRE, 0, &legacy.to_string(), "")),
            Some((ClaudeDecision::Deny, "no"))
        );
        let approve = json!({"decision": "approve"});
        assert_eq!(
            parse(PRE, 0, &approve.to_string(), "").unwrap().decision,
            Some(ClaudeDecision::Allow)
        );
    }

    #[test]
    fn continue_false_stops_and_is_journaled_as_stop() {
        let answer = json!({"continue": false, "stopReason": "quota reached",
            "decision": "block", "reason": "r"});
        let reply = parse(ClaudeEvent::PostToolUse, 0, &answer.to_string(), "").unwrap();
        assert_eq!(reply.stop.as_deref(), Some("quota reached"));
        assert_eq!(reply.journaled_decision(), Some(ClaudeDecision::Stop));
        assert_eq!(reply.journaled_reason(), Some("quota reached"));
    }

    #[test]
    fn plain_stdout_is_context_only_where_claude_code_says() {
        let said = "✓ Fixed markdown formatting in README.md\n";
        assert_eq!(
            parse(ClaudeEvent::UserPromptSubmit, 0, said, "")
                .unwrap()
                .context,
            [said.trim()]
        );
        assert_eq!(
            parse(ClaudeEvent::SessionStart, 0, said, "")
                .unwrap()
                .context,
            [said.trim()]
        );
        assert_eq!(
            parse(ClaudeEvent::PostToolUse, 0, said, ""),
            Ok(Reply::default())
        );
        // Invalid JSON is text too.
        assert_eq!(
            parse(ClaudeEvent::SessionStart, 0, "{not json", "")
                .unwrap()
                .context,
            ["{not json"]
        );
    }

    #[test]
    fn json_that_does_not_fit_the_protocol_is_a_non_blocking_error() {
        for (answer, problem) in [
            (
                json!({"hookSpecificOutput": {"permissionDecision": "maybe"}}),
                "hookSpecificOutput.permissionDecision must be allow, deny, ask or defer, not \"maybe\"",
            ),
            (
                json!({"continue": "no"}),
                "`continue` must be true or false",
            ),
            (
                json!({"decision": "reject"}),
                "`decision` must be \"block\" (or \"approve\"), not \"reject\"",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "Stop"}}),
                "hookSpecificOutput.hookEventName is \"Stop\" in a PreToolUse hook",
            ),
            (
                json!({"hookSpecificOutput": {"updatedInput": "ls"}}),
                "hookSpecificOutput.updatedInput must be an object",
            ),
        ] {
            assert_eq!(
                parse(PRE, 0, &answer.to_string(), ""),
                Err(problem.to_owned()),
                "{answer}"
            );
        }
    }

    #[test]
    fn long_texts_are_cut_for_the_model() {
        let long = "x".repeat(CLAUDE_TEXT_LIMIT + 5);
        let reply = parse(ClaudeEvent::SessionStart, 0, &long, "").unwrap();
        assert!(reply.context[0].starts_with(&"x".repeat(CLAUDE_TEXT_LIMIT)));
        assert!(
            reply.context[0].ends_with(&format!(
                "[cut to {CLAUDE_TEXT_LIMIT} of {} characters; the whole output is in the hook's record]",
                CLAUDE_TEXT_LIMIT + 5
            ))
        );
    }
}

//! Claude Code hooks: `hooks.json` of the agent directory and `claude_hooks:` of hooks.yaml
//! validated into the handlers the engine runs, each event's in a fixed order.
//!
//! A published configuration loads as written: events Delta never fires are accepted with
//! a warning. What Delta cannot honour and a guard may depend on (hook types other than
//! `command`, `if`, background hooks) is refused, since a guard that silently never runs
//! is worse than a refusal; so is an unknown event name or a matcher that does not compile.

use std::path::Path;
use std::time::Duration;

use super::error::{ConfigError, sanitize};
use super::names::{CLAUDE_EVENTS_NEVER_FIRED, ClaudeEvent};
use super::raw::{ClaudeHandlerYaml, ClaudeHookEvents, ClaudeHooksJson};
use super::suggest;

/// A hook's timeout when it sets none (Claude Code's classic default; its current one is
/// 600 s, which would stall an unattended run for ten minutes on a stuck hook).
pub const CLAUDE_DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The file in the agent directory that holds Claude Code hooks.
pub const HOOKS_JSON: &str = "hooks.json";

/// Where a handler was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaudeSource {
    /// `hooks.json` of the agent directory.
    HooksJson,
    /// `claude_hooks:` of hooks.yaml.
    HooksYaml,
}

impl ClaudeSource {
    /// `hooks.json` or `hooks.yaml`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ClaudeSource::HooksJson => "hooks.json",
            ClaudeSource::HooksYaml => "hooks.yaml",
        }
    }
}

/// Which firings a matcher group's hooks take part in.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `*`, empty or absent; or any matcher of an event that has none.
    All,
    /// Only letters, digits, `_`, `-`, spaces, `,` and `|`: these exact names.
    Names(Vec<String>),
    /// Anything else: an unanchored regular expression.
    Regex(regex::Regex),
}

impl Matcher {
    /// The matcher as written, for `event` (whose matcher may be meaningless).
    ///
    /// # Errors
    /// The regular expression does not compile; the message says why.
    pub fn parse(written: Option<&str>, event: ClaudeEvent) -> Result<Matcher, String> {
        let Some(text) = written.filter(|_| event.has_matcher()) else {
            return Ok(Matcher::All);
        };
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed == "*" {
            return Ok(Matcher::All);
        }
        let plain = trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if plain {
            return Ok(Matcher::Names(
                trimmed
                    .split(['|', ','])
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ));
        }
        regex::Regex::new(text)
            .map(Matcher::Regex)
            .map_err(|error| error.to_string())
    }

    /// Whether a firing whose matched value is `value` (`None`: the event has none) is
    /// selected. Case-sensitive, as in Claude Code.
    #[must_use]
    pub fn matches(&self, value: Option<&str>) -> bool {
        match (self, value) {
            (Matcher::All, _) => true,
            (Matcher::Names(names), Some(value)) => names.iter().any(|name| name == value),
            (Matcher::Regex(regex), Some(value)) => regex.is_match(value),
            (Matcher::Names(_) | Matcher::Regex(_), None) => true,
        }
    }
}

/// How a hook's command runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ClaudeCommand {
    /// `sh -c LINE` (or `bash -c LINE`), as Claude Code runs `command`.
    Shell {
        /// `sh` or `bash`.
        shell: String,
        /// The command line, exactly as written.
        line: String,
    },
    /// `command` with `args`, no shell.
    Exec {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

impl ClaudeCommand {
    /// The command as written, for records and messages.
    #[must_use]
    pub fn display(&self) -> String {
        match self {
            ClaudeCommand::Shell { line, .. } => line.clone(),
            ClaudeCommand::Exec { program, args } => {
                let mut words = vec![program.clone()];
                words.extend(args.iter().cloned());
                crate::quote::command_line(&words)
            }
        }
    }
}

/// One configured hook.
#[derive(Debug, Clone)]
pub struct ClaudeHandler {
    /// The event it fires on.
    pub event: ClaudeEvent,
    /// The group's matcher as written (`None`: none), for records.
    pub matcher_text: Option<String>,
    /// The group's matcher.
    pub matcher: Matcher,
    /// What runs.
    pub command: ClaudeCommand,
    /// When its process group is killed.
    pub timeout: Duration,
    /// Whether the API key variables are passed to it.
    pub pass_api_key: bool,
    /// Where it was configured.
    pub source: ClaudeSource,
    /// Its place in that file, e.g. `hooks.PreToolUse[0].hooks[1]`.
    pub place: String,
}

/// The Claude Code hooks of an agent: hooks.json's, then hooks.yaml's, in document order.
#[derive(Debug, Clone, Default)]
pub struct ClaudeHooks {
    handlers: Vec<ClaudeHandler>,
}

impl ClaudeHooks {
    /// Whether no hook is configured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.handlers.is_empty()
    }

    /// Every handler, in the order they run.
    pub fn iter(&self) -> impl Iterator<Item = &ClaudeHandler> {
        self.handlers.iter()
    }

    /// The handlers of one firing of `event` whose matched value is `value`, in the order
    /// they run. A handler that would run twice (the same command configured in two groups
    /// or both files) runs once, at its first place, as Claude Code deduplicates them.
    #[must_use]
    pub fn matching(&self, event: ClaudeEvent, value: Option<&str>) -> Vec<&ClaudeHandler> {
        let mut selected: Vec<&ClaudeHandler> = Vec::new();
        for handler in &self.handlers {
            if handler.event == event
                && handler.matcher.matches(value)
                && !selected.iter().any(|s| s.command == handler.command)
            {
                selected.push(handler);
            }
        }
        selected
    }

    /// `later` runs after these.
    pub(crate) fn extend(&mut self, later: ClaudeHooks) {
        self.handlers.extend(later.handlers);
    }
}

/// Reads `hooks.json` of `home` when there is one: its hooks and the warnings they raise.
///
/// # Errors
/// The file is not JSON of the documented shape, or a hook cannot be run as written.
pub(crate) fn load_hooks_json(home: &Path) -> Result<(ClaudeHooks, Vec<String>), ConfigError> {
    let file = home.join(HOOKS_JSON);
    if !file.exists() {
        return Ok((ClaudeHooks::default(), Vec::new()));
    }
    let text = super::yaml::read(&file)?;
    parse_hooks_json(&text, &file)
}

/// Parses and validates the text of a `hooks.json` read from `file`: its hooks, and the
/// warnings they raise (events Delta never fires).
///
/// # Errors
/// The text is not JSON of the documented shape, or a hook cannot be run as written.
pub fn parse_hooks_json(
    text: &str,
    file: &Path,
) -> Result<(ClaudeHooks, Vec<String>), ConfigError> {
    let parsed: ClaudeHooksJson = serde_json::from_str(text).map_err(|error| {
        let mut config = ConfigError::new(file, format!("invalid hooks.json: {error}")).help(
            "hooks.json holds {\"hooks\": {EVENT: [{\"matcher\": \"...\", \"hooks\": \
             [{\"type\": \"command\", \"command\": \"...\"}]}]}} (copy the `hooks` object of \
             a Claude Code settings file); docs/hooks.md lists the fields Delta reads",
        );
        if error.line() > 0 {
            config.line = Some(error.line() as u64);
            config.column = Some(error.column() as u64);
        }
        config
    })?;
    if parsed.disable_all_hooks {
        return Ok((ClaudeHooks::default(), Vec::new()));
    }
    validate(&parsed.hooks, file, ClaudeSource::HooksJson, "hooks")
}

/// Validates Claude Code hooks read from `file` (`prefix`: where the event map is in it).
///
/// # Errors
/// An unknown event, an unsupported hook type or field, a missing command, a timeout that
/// is not positive, a matcher that does not compile.
pub(crate) fn validate(
    events: &ClaudeHookEvents,
    file: &Path,
    source: ClaudeSource,
    prefix: &str,
) -> Result<(ClaudeHooks, Vec<String>), ConfigError> {
    let mut handlers = Vec::new();
    let mut warnings = Vec::new();
    // The order of events never matters (one firing is one event); within one, groups and
    // hooks keep the order they were written in.
    for (name, groups) in &events.0 {
        let Some(event) = ClaudeEvent::from_name(name) else {
            if let Some((_, why)) = CLAUDE_EVENTS_NEVER_FIRED.iter().find(|(n, _)| n == name) {
                if !groups.is_empty() {
                    warnings.push(format!(
                        "{}: `{name}` hooks never fire in Delta ({why}); they are ignored",
                        file.display()
                    ));
                }
                continue;
            }
            return Err(unknown_event(name, file));
        };
        for (g, group) in groups.iter().enumerate() {
            let at = format!("{prefix}.{name}[{g}]");
            let matcher = Matcher::parse(group.matcher.as_deref(), event).map_err(|error| {
                ConfigError::new(
                    file,
                    format!(
                        "{at}.matcher `{}` is not a valid regular expression: {error}",
                        sanitize(group.matcher.as_deref().unwrap_or_default())
                    ),
                )
                .help(
                    "write exact tool names separated by `|` (e.g. \"Bash|Write\"), or a \
                     regular expression in Rust's regex syntax (no look-around)",
                )
            })?;
            for (h, written) in group.hooks.iter().enumerate() {
                let place = format!("{at}.hooks[{h}]");
                let (command, timeout) = handler_command(written, file, &place)?;
                handlers.push(ClaudeHandler {
                    event,
                    matcher_text: group.matcher.clone().filter(|_| event.has_matcher()),
                    matcher: matcher.clone(),
                    command,
                    timeout,
                    pass_api_key: written.pass_api_key.unwrap_or(false),
                    source,
                    place,
                });
            }
        }
    }
    Ok((ClaudeHooks { handlers }, warnings))
}

/// The command and timeout of a handler, or why it cannot run.
fn handler_command(
    written: &ClaudeHandlerYaml,
    file: &Path,
    place: &str,
) -> Result<(ClaudeCommand, Duration), ConfigError> {
    let refuse = |message: String, help: &str| Err(ConfigError::new(file, message).help(help));
    if written.kind != "command" {
        return refuse(
            format!(
                "{place}: hooks of type `{}` are not supported",
                sanitize(&written.kind)
            ),
            "Delta runs `type: command` hooks only (http, prompt, agent and mcp_tool hooks \
             need Claude Code); write the check as a command that reads the event on stdin",
        );
    }
    if written.condition.is_some() {
        return refuse(
            format!("{place}: `if` is not supported"),
            "Delta has no permission rules to evaluate; remove `if` and test the tool input \
             inside the hook (it is on stdin as tool_input)",
        );
    }
    if written.run_async == Some(true) || written.async_rewake == Some(true) {
        return refuse(
            format!("{place}: background hooks (`async`, `asyncRewake`) are not supported"),
            "remove `async`/`asyncRewake`: Delta waits for every hook's answer",
        );
    }
    let Some(command) = written.command.clone().filter(|c| !c.trim().is_empty()) else {
        return refuse(
            format!("{place}: `command` is missing or empty"),
            "give the shell command line to run, e.g. \"command\": \"$CLAUDE_PROJECT_DIR/hooks/check.sh\"",
        );
    };
    let timeout = match written.timeout {
        None => CLAUDE_DEFAULT_TIMEOUT,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
        }
        Some(seconds) => {
            return refuse(
                format!("{place}: `timeout` is {seconds}"),
                "give a positive number of seconds, or omit it for 60",
            );
        }
    };
    let command = match (&written.args, written.shell.as_deref()) {
        (Some(args), _) => ClaudeCommand::Exec {
            program: command,
            args: args.clone(),
        },
        (None, None | Some("sh")) => ClaudeCommand::Shell {
            shell: "sh".to_owned(),
            line: command,
        },
        (None, Some("bash")) => ClaudeCommand::Shell {
            shell: "bash".to_owned(),
            line: command,
        },
        (None, Some(other)) => {
            return refuse(
                format!("{place}: shell `{}` is not supported", sanitize(other)),
                "use `sh` (the default) or `bash`",
            );
        }
    };
    Ok((command, timeout))
}

fn unknown_event(name: &str, file: &Path) -> ConfigError {
    let fired = ClaudeEvent::ALL.map(ClaudeEvent::as_str);
    let known = fired
        .into_iter()
        .chain(CLAUDE_EVENTS_NEVER_FIRED.iter().map(|(name, _)| *name));
    let message = match suggest::closest(name, known) {
        Some(best) => format!(
            "unknown Claude Code hook event `{}`; did you mean `{best}`?",
            sanitize(name)
        ),
        None => format!("unknown Claude Code hook event `{}`", sanitize(name)),
    };
    ConfigError::new(file, message).help(format!(
        "events Delta fires: {} (names are case-sensitive)",
        fired.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::config::raw::ClaudeMatcherGroup;

    fn matcher(text: &str) -> Matcher {
        Matcher::parse(Some(text), ClaudeEvent::PreToolUse).unwrap()
    }

    #[test]
    fn matchers_follow_claude_codes_rules() {
        for (written, name, selected) in [
            ("*", "anything", true),
            ("", "anything", true),
            ("Bash", "Bash", true),
            ("Bash", "BashOutput", false),
            ("Bash", "bash", false),
            ("Edit|Write", "Write", true),
            ("Edit, Write", "Write", true),
            ("Edit|Write", "NotebookEdit", false),
            ("write_.*", "write_file", true),
            ("Edit.*", "NotebookEdit", true),
            ("^Edit$", "NotebookEdit", false),
            ("mcp__memory", "mcp__memory__create", false),
            ("mcp__memory__.*", "mcp__memory__create", true),
        ] {
            assert_eq!(
                matcher(written).matches(Some(name)),
                selected,
                "{written:?} on {name:?}"
            );
        }
        // UserPromptSubmit and Stop ignore their matcher, as Claude Code does.
        let ignored = Matcher::parse(Some("nothing"), ClaudeEvent::Stop).unwrap();
        assert!(ignored.matches(None));
        assert!(Matcher::parse(Some("(unclosed"), ClaudeEvent::PreToolUse).is_err());
    }

    fn handler(json: &str) -> ClaudeHandlerYaml {
        serde_json::from_str(json).unwrap()
    }

    fn events(event: &str, hooks: Vec<ClaudeHandlerYaml>) -> ClaudeHookEvents {
        ClaudeHookEvents(BTreeMap::from([(
            event.to_owned(),
            vec![ClaudeMatcherGroup {
                matcher: Some("Bash".to_owned()),
                hooks,
            }],
        )]))
    }

    fn check(events: &ClaudeHookEvents) -> Result<(ClaudeHooks, Vec<String>), String> {
        validate(
            events,
            Path::new("hooks.json"),
            ClaudeSource::HooksJson,
            "hooks",
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_command_hook_loads_with_its_defaults() {
        let (hooks, warnings) = check(&events(
            "PreToolUse",
            vec![handler(r#"{"type": "command", "command": "./guard.sh"}"#)],
        ))
        .unwrap();
        assert!(warnings.is_empty());
        let found = hooks.matching(ClaudeEvent::PreToolUse, Some("Bash"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].timeout, CLAUDE_DEFAULT_TIMEOUT);
        assert_eq!(found[0].place, "hooks.PreToolUse[0].hooks[0]");
        assert_eq!(
            found[0].command,
            ClaudeCommand::Shell {
                shell: "sh".to_owned(),
                line: "./guard.sh".to_owned()
            }
        );
        assert!(
            hooks
                .matching(ClaudeEvent::PreToolUse, Some("Write"))
                .is_empty()
        );
    }

    #[test]
    fn the_same_command_twice_runs_once() {
        let twice = vec![
            handler(r#"{"type": "command", "command": "./a.sh"}"#),
            handler(r#"{"type": "command", "command": "./b.sh"}"#),
            handler(r#"{"type": "command", "command": "./a.sh", "timeout": 5}"#),
        ];
        let (hooks, _) = check(&events("Stop", twice)).unwrap();
        let found = hooks.matching(ClaudeEvent::Stop, None);
        let places: Vec<&str> = found.iter().map(|h| h.place.as_str()).collect();
        assert_eq!(places, ["hooks.Stop[0].hooks[0]", "hooks.Stop[0].hooks[1]"]);
    }

    #[test]
    fn events_delta_never_fires_load_with_a_warning() {
        let (hooks, warnings) = check(&events(
            "PermissionRequest",
            vec![handler(r#"{"type": "command", "command": "true"}"#)],
        ))
        .unwrap();
        assert!(hooks.is_empty());
        assert_eq!(
            warnings,
            [
                "hooks.json: `PermissionRequest` hooks never fire in Delta (Delta has no \
              permission dialog; a PreToolUse hook's ask or defer is its approval); they \
              are ignored"
            ]
        );
    }

    #[test]
    fn what_delta_cannot_honour_is_refused_with_the_fix() {
        let cases = [
            (
                "PreToolUze",
                r#"{"type": "command", "command": "true"}"#,
                "unknown Claude Code hook event `PreToolUze`; did you mean `PreToolUse`?",
            ),
            (
                "PreToolUse",
                r#"{"type": "prompt", "command": "x"}"#,
                "hooks.PreToolUse[0].hooks[0]: hooks of type `prompt` are not supported",
            ),
            (
                "PreToolUse",
                r#"{"type": "command", "command": "x", "if": "Bash(rm *)"}"#,
                "hooks.PreToolUse[0].hooks[0]: `if` is not supported",
            ),
            (
                "PreToolUse",
                r#"{"type": "command", "command": "x", "async": true}"#,
                "hooks.PreToolUse[0].hooks[0]: background hooks (`async`, `asyncRewake`) are not supported",
            ),
            (
                "PreToolUse",
                r#"{"type": "command", "command": " "}"#,
                "hooks.PreToolUse[0].hooks[0]: `command` is missing or empty",
            ),
            (
                "PreToolUse",
                r#"{"type": "command", "command": "x", "timeout": 0}"#,
                "hooks.PreToolUse[0].hooks[0]: `timeout` is 0",
            ),
            (
                "PreToolUse",
                r#"{"type": "command", "command": "x", "shell": "powershell"}"#,
                "hooks.PreToolUse[0].hooks[0]: shell `powershell` is not supported",
            ),
        ];
        for (event, json, message) in cases {
            let error = check(&events(event, vec![handler(json)])).unwrap_err();
            assert!(
                error.starts_with(&format!("error: {message}\n")),
                "{event} {json}: {error}"
            );
        }
        let mut bad_regex = events(
            "PreToolUse",
            vec![handler(r#"{"type": "command", "command": "x"}"#)],
        );
        if let Some(groups) = bad_regex.0.get_mut("PreToolUse") {
            groups[0].matcher = Some("write_(".to_owned());
        }
        let error = check(&bad_regex).unwrap_err();
        assert!(
            error.starts_with(
                "error: hooks.PreToolUse[0].matcher `write_(` is not a valid regular expression"
            ),
            "{error}"
        );
    }

    #[test]
    fn args_run_the_command_without_a_shell() {
        let (hooks, _) = check(&events(
            "PreToolUse",
            vec![handler(
                r#"{"type": "command", "command": "./check", "args": ["--strict", "a b"], "shell": "bash"}"#,
            )],
        ))
        .unwrap();
        let found = hooks.matching(ClaudeEvent::PreToolUse, Some("Bash"));
        assert_eq!(found[0].command.display(), "./check --strict 'a b'");
    }
}

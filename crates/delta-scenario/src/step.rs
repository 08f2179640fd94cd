//! A scenario's steps: the one action each runs ([`Action`], [`Command`]), its options
//! (stdin, environment, timeout, a signal sent while it runs) and its expectations.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::expect::Expect;
use crate::level::Level;
use crate::matcher::OneOrMany;

/// A command line: one string (split like a POSIX shell would, without expansions) or a
/// list of words. Placeholders are substituted in each word after splitting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Args {
    /// Words in one string, e.g. `--agent {agent} -m "hello world"`.
    Line(String),
    /// The words.
    List(Vec<String>),
}

/// One step: exactly one action (`run`, `continue`, `list-runs`, `tool-expand`, `exec`,
/// `sessions` or `shell`), its options, and its expectations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [
    {"required": ["run"]},
    {"required": ["continue"]},
    {"required": ["list-runs"]},
    {"required": ["tool-expand"]},
    {"required": ["exec"]},
    {"required": ["sessions"]},
    {"required": ["shell"]}
]))]
pub struct Step {
    /// A label for reports (default: the action and its first words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The id of the step's check, for `depends_on` and baselines (default: `step-N`,
    /// N from 1). Lowercase letters, digits and `-`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The level of the step's `expect` (default: the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The seed section of the step's `expect` (default: the scenario's `seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// The sentence(s) of the step's `seed` its `expect` rests on (given with `seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<OneOrMany>,
    /// The docs/decisions.md section of an `extension` step (default: the scenario's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Checks of earlier steps this step needs to have passed (`step-1`, or
    /// `step-1/NAME` for a named check). When one failed or was blocked, the step is not
    /// run and its checks are reported `blocked by` it; without `depends_on` a step runs
    /// whatever happened before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// `IMPL run ARGS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Args>,
    /// `IMPL continue ARGS`.
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<Args>,
    /// `IMPL list-runs ARGS`.
    #[serde(default, rename = "list-runs", skip_serializing_if = "Option::is_none")]
    pub list_runs: Option<Args>,
    /// `IMPL tool expand ARGS`.
    #[serde(
        default,
        rename = "tool-expand",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_expand: Option<Args>,
    /// `IMPL ARGS`: any other command of the implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<Args>,
    /// `SESSIONS ARGS`: the implementation's `delta-sessions` (`--impl-sessions`), e.g.
    /// `start`, `[exec, "{session_id}", "pwd"]`. Its stdout is checked against the
    /// `sessions-*` schemas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Args>,
    /// `sh -c SCRIPT` in `{tmp}` (not the implementation), e.g. to prepare or inspect
    /// files. Unless `expect.exit` says otherwise it must exit 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Text written to the command's standard input (default: none, stdin is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Environment variables for this step only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Seconds before the command is killed (default: the runner's `--timeout-secs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// A signal sent to the command's process group while it runs, as a terminal's Ctrl+C
    /// would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<SignalSpec>,
    /// What must be observed when the command has ended.
    #[serde(default)]
    pub expect: Expect,
    /// More checks of the same command, each with its own id and level, e.g. an
    /// `extension` detail beside the `spec` expectations of `expect`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<NamedCheck>,
}

/// A named group of expectations of a step, with its own level and reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedCheck {
    /// The check's name; its id is `STEP/NAME`. Lowercase letters, digits and `-`.
    pub id: String,
    /// Its level (default: the step's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// Its seed section (default: the step's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// The sentence(s) of its `seed` it rests on (given with `seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<OneOrMany>,
    /// Its docs/decisions.md section (default: the step's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// What must be observed.
    pub expect: Expect,
}

/// Which implementation command a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `run`: starts a run; its run directory is checked.
    Run,
    /// `continue`: continues a run; its run directory is checked.
    Continue,
    /// `list-runs`.
    ListRuns,
    /// `tool expand`.
    ToolExpand,
    /// Any other command line.
    Exec,
    /// A command of the `delta-sessions` implementation.
    Sessions,
}

impl Command {
    /// The words placed before the step's arguments.
    pub fn prefix(self) -> &'static [&'static str] {
        match self {
            Self::Run => &["run"],
            Self::Continue => &["continue"],
            Self::ListRuns => &["list-runs"],
            Self::ToolExpand => &["tool", "expand"],
            Self::Exec | Self::Sessions => &[],
        }
    }

    /// The key that names it in a scenario.
    pub fn key(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Continue => "continue",
            Self::ListRuns => "list-runs",
            Self::ToolExpand => "tool-expand",
            Self::Exec => "exec",
            Self::Sessions => "sessions",
        }
    }

    /// Whether the command runs the engine (and so leaves a run directory to check).
    pub fn is_run(self) -> bool {
        matches!(self, Self::Run | Self::Continue)
    }
}

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action<'a> {
    /// Runs the implementation.
    Impl(Command, &'a Args),
    /// Runs `sh -c`.
    Shell(&'a str),
}

impl Step {
    /// The step's action, or why it has none or several.
    pub fn action(&self) -> Result<Action<'_>, String> {
        let mut found = Vec::new();
        let impls = [
            (Command::Run, &self.run),
            (Command::Continue, &self.continue_),
            (Command::ListRuns, &self.list_runs),
            (Command::ToolExpand, &self.tool_expand),
            (Command::Exec, &self.exec),
            (Command::Sessions, &self.sessions),
        ];
        for (command, args) in impls {
            if let Some(args) = args {
                found.push((command.key(), Action::Impl(command, args)));
            }
        }
        if let Some(script) = &self.shell {
            found.push(("shell", Action::Shell(script)));
        }
        match found.as_slice() {
            [(_, action)] => Ok(*action),
            [] => Err(
                "a step needs one of run, continue, list-runs, tool-expand, exec, sessions, shell"
                    .to_string(),
            ),
            several => Err(format!(
                "a step has exactly one action, found {}",
                several
                    .iter()
                    .map(|(key, _)| *key)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// A signal sent while a step runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalSpec {
    /// Which signal. Default: `SIGINT`.
    #[serde(default)]
    pub signal: SignalName,
    /// Wait until mock-llm has received this many chat requests in total (so the engine is
    /// known to be inside an LLM call). Default: 0.
    #[serde(default)]
    pub after_requests: u64,
    /// Then wait this many milliseconds. Default: 0.
    #[serde(default)]
    pub after_ms: u64,
}

/// A signal a step may send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SignalName {
    /// Interrupt (Ctrl+C).
    #[default]
    #[serde(alias = "INT")]
    SIGINT,
    /// Terminate.
    #[serde(alias = "TERM")]
    SIGTERM,
    /// Hang up.
    #[serde(alias = "HUP")]
    SIGHUP,
    /// Kill (cannot be handled).
    #[serde(alias = "KILL")]
    SIGKILL,
}

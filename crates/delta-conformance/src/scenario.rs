//! The scenario format (`fixtures/scenarios/*.yaml`): its serde/schemars types, loading
//! with file/line/column errors, and the checks serde cannot express (one action per step,
//! regular expressions that compile, placeholders that exist).
//!
//! `schemas/scenario.schema.json` is generated from these types ([`scenario_schema`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_saphyr::MessageFormatter as _;

use delta_scenario::MockProfile;

use crate::matcher::{ExitMatch, TextMatch, ValueMatch};
use crate::vars::{self, Vars};

/// One conformance scenario: a throw-away directory, an agent, a scripted LLM, and
/// commands run in order, each with what must be observed afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "delta-conformance scenario")]
pub struct Scenario {
    /// Unique name: lowercase letters, digits and `-`; by convention the file's stem.
    pub name: String,
    /// What the scenario proves, in a sentence or two.
    pub description: String,
    /// Groups for `--tag` and the per-tag summary (`core`, `v1.7-security`, `output` …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Where the spec requires the behaviour, e.g. `003 §10 Test 2.1` (required when a
    /// check is at level `spec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// The normative level of every check of the scenario, unless a step or check says
    /// otherwise. Default: `spec`. A scenario whose setup relies on a choice the spec
    /// leaves open is `extension` as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// For checks at level `extension`: the section of docs/decisions.md that makes the
    /// choice, e.g. `Continuing runs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Why this scenario is skipped (reported as SKIP with this reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<String>,
    /// Programs that must be on PATH; when one is missing the scenario is skipped.
    /// `delta-sessions` means the sessions implementation (`--impl-sessions`), which the
    /// runner then puts on PATH under that name (for agents whose tools run it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// A directory under `fixtures/agents/`, copied to `{agent}` before the first step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Files written into `{agent}` after the copy (path relative to the agent directory →
    /// content), replacing any file of the fixture. Not subject to placeholders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent_files: BTreeMap<String, String>,
    /// What answers the implementation's LLM requests. Default: `mock`.
    #[serde(default)]
    pub llm: LlmEndpoint,
    /// The mock-llm script, inline (see `schemas/mock-script.schema.json`). Placeholders
    /// are substituted in its strings. Without `mock` or `mock_file` the mock has no
    /// steps: every request gets HTTP 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock: Option<Value>,
    /// The mock-llm script as a file, relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock_file: Option<String>,
    /// Whose request validation mock-llm reproduces (`mock-llm --strict`): a request that
    /// server would refuse gets its error status and body. Default: `openai`.
    #[serde(default, skip_serializing_if = "MockProfile::is_default")]
    pub mock_profile: MockProfile,
    /// Files created before the first step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SetupFile>,
    /// Files created before the first step and checked after the last one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canaries: Vec<Canary>,
    /// Environment variables for every step (on top of the runner's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The commands, in order.
    pub steps: Vec<Step>,
}

/// The program name under which the sessions implementation is known: in `requires`, and
/// on the PATH of scenarios that need it.
pub const SESSIONS_PROGRAM: &str = "delta-sessions";

/// What a report says about one check before it runs: its id, level and reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckInfo {
    /// `step-2`, `step-2/NAME`, or a runner check such as `step-2/journal`.
    pub id: String,
    /// Its level.
    pub level: Level,
    /// Its seed section (`spec`, `recommended`) or docs/decisions.md section
    /// (`extension`), as `decisions.md: SECTION`.
    pub reference: Option<String>,
}

impl Scenario {
    /// The level of checks that say none.
    pub fn level(&self) -> Level {
        self.level.unwrap_or_default()
    }

    /// The id of step `index`'s check: its `id`, else `step-N` (N from 1).
    pub fn step_id(&self, index: usize) -> String {
        self.steps
            .get(index)
            .and_then(|s| s.id.clone())
            .unwrap_or_else(|| format!("step-{}", index + 1))
    }

    fn info(
        &self,
        id: String,
        layers: [(Option<Level>, Option<&String>, Option<&String>); 2],
    ) -> CheckInfo {
        let [inner, outer] = layers;
        let level = inner.0.or(outer.0).unwrap_or_else(|| self.level());
        let seed = inner.1.or(outer.1).or(self.seed.as_ref());
        let decision = inner.2.or(outer.2).or(self.decision.as_ref());
        let reference = match level {
            Level::Extension => decision.map(|d| format!("decisions.md: {d}")),
            Level::Spec | Level::Recommended => seed.cloned(),
        };
        CheckInfo {
            id,
            level,
            reference,
        }
    }

    /// The check of step `index`'s `expect`.
    pub fn step_check(&self, index: usize) -> CheckInfo {
        let step = &self.steps[index];
        let own = (step.level, step.seed.as_ref(), step.decision.as_ref());
        self.info(self.step_id(index), [own, (None, None, None)])
    }

    /// The named checks of step `index` (`checks:`), with their expectations.
    pub fn named_checks(&self, index: usize) -> Vec<(CheckInfo, &Expect)> {
        let step = &self.steps[index];
        let own = (step.level, step.seed.as_ref(), step.decision.as_ref());
        step.checks
            .iter()
            .map(|c| {
                let id = format!("{}/{}", self.step_id(index), c.id);
                let layer = (c.level, c.seed.as_ref(), c.decision.as_ref());
                (self.info(id, [layer, own]), &c.expect)
            })
            .collect()
    }

    /// A check the runner adds (schemas, canaries …) at `level`, or at the scenario's
    /// level when that is looser: a check cannot be stricter than its scenario's setup.
    pub fn runner_check(&self, id: String, level: Level, seed: &str) -> CheckInfo {
        let level = level.max(self.level());
        let reference = match level {
            Level::Extension if self.level() == Level::Extension => {
                self.decision.as_ref().map(|d| format!("decisions.md: {d}"))
            }
            Level::Spec | Level::Recommended | Level::Extension => Some(seed.to_string()),
        };
        CheckInfo {
            id,
            level,
            reference,
        }
    }

    /// Every check the scenario declares (steps and named checks), in order.
    pub fn declared_checks(&self) -> Vec<CheckInfo> {
        (0..self.steps.len())
            .flat_map(|i| {
                std::iter::once(self.step_check(i))
                    .chain(self.named_checks(i).into_iter().map(|(info, _)| info))
            })
            .collect()
    }

    /// Whether the scenario runs the sessions implementation: a `sessions` step, or
    /// `delta-sessions` in `requires` (an agent whose tools run it).
    pub fn needs_sessions(&self) -> bool {
        self.requires.iter().any(|p| p == SESSIONS_PROGRAM)
            || self.steps.iter().any(|step| step.sessions.is_some())
    }
}

/// How strongly the spec demands what a check checks.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A seed section requires it (cite it in `seed`).
    #[default]
    Spec,
    /// A seed example or a SHOULD: expected, but another reading is possible.
    Recommended,
    /// This project's own choice where the seeds are silent, named in docs/decisions.md
    /// (cite the section in `decision`).
    Extension,
}

impl Level {
    /// All levels, strictest first.
    pub const ALL: [Level; 3] = [Level::Spec, Level::Recommended, Level::Extension];

    /// `spec`, `recommended` or `extension`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Spec => "spec",
            Self::Recommended => "recommended",
            Self::Extension => "extension",
        }
    }
}

/// Where the implementation's LLM requests go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LlmEndpoint {
    /// A mock-llm process serving the scenario's script.
    #[default]
    Mock,
    /// A port on 127.0.0.1 where nothing listens.
    Unreachable,
}

/// A file created before the first step (its parent directories too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetupFile {
    /// Where, e.g. `{workspace}/sample.txt`. Must be inside `{tmp}`.
    pub path: String,
    /// The content, verbatim (placeholders are not substituted).
    #[serde(default)]
    pub content: String,
    /// Make it executable (mode 755).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
}

/// A file that must survive, or (for a demonstration of `:raw`) must be destroyed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    /// Where, e.g. `{tmp}/delta_test_marker`. Must be inside `{tmp}`.
    pub path: String,
    /// What must be true after the last step.
    pub expect: CanaryState,
}

/// The state of a canary after the last step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CanaryState {
    /// Present, with the content it was created with.
    Intact,
    /// Gone.
    Destroyed,
}

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

impl Args {
    /// The words, before placeholder substitution.
    pub fn words(&self) -> Result<Vec<String>, String> {
        match self {
            Self::Line(line) => shlex::split(line)
                .ok_or_else(|| format!("cannot split {line:?} into words (unbalanced quote?)")),
            Self::List(words) => Ok(words.clone()),
        }
    }
}

/// One step: exactly one action (`run`, `continue`, `list-runs`, `tool-expand`, `exec`,
/// `sessions` or `shell`), its options, and its expectations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

    /// The label used in reports.
    pub fn label(&self, index: usize) -> String {
        if let Some(name) = &self.name {
            return format!("step {} ({name})", index + 1);
        }
        let what = match self.action() {
            Ok(Action::Impl(command, args)) => {
                let words = args.words().unwrap_or_default();
                let mut shown: Vec<&str> = if command == Command::Sessions {
                    vec![SESSIONS_PROGRAM]
                } else {
                    command.prefix().to_vec()
                };
                shown.extend(words.iter().take(3).map(String::as_str));
                let more = if words.len() > 3 { " …" } else { "" };
                format!("{}{more}", shown.join(" "))
            }
            Ok(Action::Shell(script)) => {
                let first = script.lines().next().unwrap_or_default();
                format!("shell: {}", first.chars().take(40).collect::<String>())
            }
            Err(_) => "invalid".to_string(),
        };
        format!("step {} ({what})", index + 1)
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

/// What must be observed after a step. Every given expectation must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The exit code (one, or a list of acceptable ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ExitMatch>,
    /// Standard output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<TextMatch>,
    /// Standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<TextMatch>,
    /// `.delta/{run_id}/metadata.json` of the step's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MetadataExpect>,
    /// `.delta/{run_id}/journal.jsonl` of the step's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalExpect>,
    /// The chat requests mock-llm has received so far (all steps together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestsExpect>,
    /// `io/tool_executions/{execution_ref}/` of the run's tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_executions: Vec<ToolExecutionExpect>,
    /// Files that must exist (with some content) or not exist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileExpect>,
    /// The number of run directories in `{workspace}/.delta/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_count: Option<usize>,
    /// Texts that no file under a directory may contain (e.g. the API key).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_file_contains: Vec<NoFileContains>,
}

impl Expect {
    /// Every text matcher, with the kind of text it is for (for load-time checks).
    pub fn text_matchers(&self) -> Vec<(&'static str, &TextMatch)> {
        let mut all: Vec<(&'static str, &TextMatch)> = Vec::new();
        all.extend(self.stdout.iter().map(|t| ("stdout", t)));
        all.extend(self.stderr.iter().map(|t| ("stderr", t)));
        all.extend(
            self.files
                .iter()
                .flat_map(|f| &f.text)
                .map(|t| ("files", t)),
        );
        for exec in &self.tool_executions {
            all.extend(
                [&exec.stdout, &exec.stderr]
                    .into_iter()
                    .flatten()
                    .map(|t| ("tool_executions", t)),
            );
        }
        for request in self.requests.iter().flat_map(|r| r.items.iter()) {
            all.extend(
                [&request.text, &request.body]
                    .into_iter()
                    .flatten()
                    .map(|t| ("requests", t)),
            );
        }
        all
    }
}

/// Checks on `metadata.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetadataExpect {
    /// The `status` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// JSON pointer → matcher.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, ValueMatch>,
}

/// Checks on the journal's events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalExpect {
    /// The event types, exactly, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// Event types that must appear in this order, others allowed in between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types_in_order: Option<Vec<String>>,
    /// The type of the first event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// The type of the last event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// Event type → exactly how many events of that type.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub count: BTreeMap<String, usize>,
    /// Checks on single events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventExpect>,
}

/// Checks on one journal event, picked by type and position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventExpect {
    /// The event type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Which event of that type: 0 is the first, -1 the last. Default: 0.
    #[serde(default)]
    pub nth: i64,
    /// JSON pointer into the event's `payload` → matcher.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub payload: BTreeMap<String, ValueMatch>,
}

/// Checks on the chat requests mock-llm received.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestsExpect {
    /// How many, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Checks on single requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<RequestExpect>,
}

/// Checks on one chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestExpect {
    /// Which request, from 0 in arrival order; -1 is the last.
    pub index: i64,
    /// The text of all its messages (each message's content, tool calls' arguments
    /// included), one per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextMatch>,
    /// The request body as compact JSON text (strings JSON-escaped), e.g. to find a tool
    /// description among the offered tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<TextMatch>,
    /// JSON pointer into the request body → matcher.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub json: BTreeMap<String, ValueMatch>,
}

/// Checks on the recorded execution of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolExecutionExpect {
    /// Which call: the n-th `ACTION_RESULT` of the journal, from 0; -1 is the last.
    #[serde(default)]
    pub nth: i64,
    /// `stdout.log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<TextMatch>,
    /// `stderr.log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<TextMatch>,
    /// The number in `exit_code.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
}

/// A file that must (or must not) exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileExpect {
    /// The path, with placeholders (e.g. `{workspace}/.delta/VERSION`).
    pub path: String,
    /// Whether it must exist. Default: true.
    #[serde(default = "yes")]
    pub exists: bool,
    /// Its content (implies `exists`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextMatch>,
}

fn yes() -> bool {
    true
}

/// A text that must not appear in any file under a directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFileContains {
    /// The directory, searched recursively (symbolic links are not followed).
    pub dir: String,
    /// The text.
    pub text: String,
}

/// A scenario that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The YAML does not parse into a scenario.
    #[error("{}{}: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line and column, when known.
        location: Option<(u64, u64)>,
        /// What is wrong.
        message: String,
    },
    /// It parses but breaks a rule the types cannot express.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, where in the scenario.
        message: String,
    },
}

impl ScenarioError {
    /// How to fix it, for the `= help:` line.
    pub fn help(&self) -> &'static str {
        match self {
            Self::Read { .. } => "check the path and its permissions",
            Self::Parse { .. } | Self::Invalid { .. } => {
                "see docs/conformance.md and schemas/scenario.schema.json for the scenario format"
            }
        }
    }
}

/// A scenario and the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    /// Its file.
    pub path: PathBuf,
}

impl LoadedScenario {
    /// The directory of the scenario file (for `mock_file`).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// Reads and checks one scenario file.
pub fn load(path: &Path) -> Result<LoadedScenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let scenario = parse(&text).map_err(|(location, message)| ScenarioError::Parse {
        path: path.to_path_buf(),
        location,
        message,
    })?;
    check(&scenario).map_err(|message| ScenarioError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(LoadedScenario {
        scenario,
        path: path.to_path_buf(),
    })
}

/// Parses scenario YAML; errors carry the line and column when known.
pub fn parse(text: &str) -> Result<Scenario, (Option<(u64, u64)>, String)> {
    serde_saphyr::from_str(text).map_err(|err| {
        let plain = err.without_snippet();
        let message = serde_saphyr::DefaultMessageFormatter
            .format_message(plain)
            .into_owned();
        let location = plain
            .location()
            .filter(|loc| loc.line() > 0)
            .map(|loc| (loc.line(), loc.column()));
        (location, message)
    })
}

/// The rules serde cannot express. The message names the step and field.
pub fn check(scenario: &Scenario) -> Result<(), String> {
    let name_ok = !scenario.name.is_empty()
        && scenario
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !name_ok {
        return Err(format!(
            "name {:?}: use lowercase letters, digits, '-' and '.'",
            scenario.name
        ));
    }
    if scenario.steps.is_empty() {
        return Err("steps: a scenario needs at least one step".to_string());
    }
    if scenario.mock.is_some() && scenario.mock_file.is_some() {
        return Err("give the mock script either inline (mock) or as a file (mock_file)".into());
    }
    if scenario.llm == LlmEndpoint::Unreachable
        && (scenario.mock.is_some() || scenario.mock_file.is_some())
    {
        return Err("llm: unreachable takes no mock script".to_string());
    }
    for rel in scenario.agent_files.keys() {
        if scenario.agent.is_none() {
            return Err(format!(
                "agent_files: {rel:?} needs an agent fixture (agent:)"
            ));
        }
        if !is_relative_inside(rel) {
            return Err(format!(
                "agent_files: {rel:?} must be a relative path inside the agent directory"
            ));
        }
    }
    check_levels(scenario)?;
    let mut texts: Vec<(String, &str)> = Vec::new();
    for (i, file) in scenario.files.iter().enumerate() {
        texts.push((format!("files[{i}].path"), &file.path));
    }
    for (i, canary) in scenario.canaries.iter().enumerate() {
        texts.push((format!("canaries[{i}].path"), &canary.path));
    }
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = format!("steps[{i}]");
        let action = step.action().map_err(|e| format!("{at}: {e}"))?;
        if let Action::Impl(_, args) = action {
            let words = args.words().map_err(|e| format!("{at}: {e}"))?;
            for word in words {
                check_placeholders(&format!("{at} argument"), &word)?;
            }
        }
        if let Some(signal) = &step.signal
            && signal.after_requests > 0
            && scenario.llm != LlmEndpoint::Mock
        {
            return Err(format!(
                "{at}.signal.after_requests needs llm: mock (it counts mock-llm's requests)"
            ));
        }
        let expect = &step.expect;
        for (j, file) in expect.files.iter().enumerate() {
            texts.push((format!("{at}.expect.files[{j}].path"), &file.path));
        }
        for (j, dir) in expect.no_file_contains.iter().enumerate() {
            texts.push((format!("{at}.expect.no_file_contains[{j}].dir"), &dir.dir));
        }
        check_regexes(&at, expect)?;
        for (j, named) in step.checks.iter().enumerate() {
            check_regexes(&format!("{at}.checks[{j}]"), &named.expect)?;
        }
    }
    for (at, text) in texts {
        check_placeholders(&at, text)?;
    }
    Ok(())
}

fn is_id(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Check ids are unique and well formed, every check cites what makes it normative, and
/// `depends_on` names an earlier check at the same level or a stricter one (a `spec`
/// check cannot rest on a project's choice).
fn check_levels(scenario: &Scenario) -> Result<(), String> {
    let mut earlier: Vec<CheckInfo> = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = format!("steps[{i}]");
        if let Some(id) = &step.id
            && !is_id(id)
        {
            return Err(format!(
                "{at}.id {id:?}: use lowercase letters, digits and '-'"
            ));
        }
        let main = scenario.step_check(i);
        for dep in &step.depends_on {
            let Some(target) = earlier.iter().find(|c| &c.id == dep) else {
                return Err(format!(
                    "{at}.depends_on: {dep:?} is not the id of an earlier step or check (known: {})",
                    earlier
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            if target.level > main.level {
                return Err(format!(
                    "{at}.depends_on: a {} check cannot depend on {dep:?}, which is {}; \
                     make the step {} or the scenario {} as a whole",
                    main.level.name(),
                    target.level.name(),
                    target.level.name(),
                    target.level.name()
                ));
            }
        }
        let mut own = vec![main];
        for (j, named) in step.checks.iter().enumerate() {
            if !is_id(&named.id) {
                return Err(format!(
                    "{at}.checks[{j}].id {:?}: use lowercase letters, digits and '-'",
                    named.id
                ));
            }
        }
        own.extend(scenario.named_checks(i).into_iter().map(|(info, _)| info));
        for info in own {
            if earlier.iter().any(|c| c.id == info.id) {
                return Err(format!("{at}: two checks have the id {:?}", info.id));
            }
            if info.reference.is_none() {
                let (field, what) = match info.level {
                    Level::Extension => ("decision", "the docs/decisions.md section"),
                    Level::Spec | Level::Recommended => ("seed", "the seed section"),
                };
                return Err(format!(
                    "{at}: check {:?} is at level {} but names no {field} ({what} that makes it so)",
                    info.id,
                    info.level.name()
                ));
            }
            earlier.push(info);
        }
    }
    Ok(())
}

fn check_placeholders(at: &str, text: &str) -> Result<(), String> {
    match vars::unknown_names(text).first() {
        None => Ok(()),
        Some(name) => Err(format!(
            "{at}: {{{name}}} is not a placeholder (known: {})",
            vars::NAMES
                .iter()
                .map(|(name, _)| format!("{{{name}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every regular expression must compile once placeholders have values.
fn check_regexes(at: &str, expect: &Expect) -> Result<(), String> {
    let mut sample = Vars::default();
    for (name, _) in vars::NAMES {
        sample.set(name, "/tmp/sample.1");
    }
    let mut all: Vec<(&str, &str)> = Vec::new();
    for (what, text) in expect.text_matchers() {
        all.extend(text.regexes().into_iter().map(|r| (what, r)));
    }
    let value_matchers = expect
        .metadata
        .iter()
        .flat_map(|m| m.fields.values())
        .chain(
            expect
                .journal
                .iter()
                .flat_map(|j| j.events.iter().flat_map(|e| e.payload.values())),
        );
    all.extend(
        value_matchers
            .filter_map(|m| m.regex.as_deref())
            .map(|r| ("value", r)),
    );
    for request in expect.requests.iter().flat_map(|r| r.items.iter()) {
        all.extend(
            request
                .json
                .values()
                .filter_map(|m| m.regex.as_deref())
                .map(|r| ("requests", r)),
        );
    }
    for (what, pattern) in all {
        regex::Regex::new(&sample.expand_regex(pattern))
            .map_err(|err| format!("{at}.expect ({what}): invalid regex /{pattern}/: {err}"))?;
    }
    Ok(())
}

/// Whether `rel` is a relative path that stays inside its base (no `..`, not absolute).
pub fn is_relative_inside(rel: &str) -> bool {
    let path = Path::new(rel);
    !rel.is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The JSON Schema (draft 2020-12) of the scenario format, as committed in
/// `schemas/scenario.schema.json`.
pub fn scenario_schema() -> Value {
    Value::from(schemars::schema_for!(Scenario))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "
name: demo
description: d
seed: 002 §4.3
agent: base
steps:
  - run: --agent {agent} -w {workspace} -m hi
    expect: {exit: 0}
";

    #[test]
    fn a_minimal_scenario_loads() {
        let s = parse(MINIMAL).unwrap();
        check(&s).unwrap();
        let step = &s.steps[0];
        assert!(matches!(step.action(), Ok(Action::Impl(Command::Run, _))));
        assert_eq!(step.label(0), "step 1 (run --agent {agent} -w …)");
    }

    #[test]
    fn unknown_fields_report_line_and_column() {
        let (location, message) =
            parse(&MINIMAL.replace("expect: {exit: 0}", "expct: {}")).unwrap_err();
        assert_eq!(location.map(|l| l.0), Some(8));
        assert!(message.contains("expct"), "{message}");
    }

    #[test]
    fn a_step_needs_exactly_one_action() {
        let mut s = parse(MINIMAL).unwrap();
        s.steps[0].shell = Some("true".into());
        assert_eq!(
            check(&s).unwrap_err(),
            "steps[0]: a step has exactly one action, found run, shell"
        );
        s.steps[0].run = None;
        s.steps[0].shell = None;
        assert!(check(&s).unwrap_err().contains("needs one of"));
    }

    #[test]
    fn misspelt_placeholders_and_bad_regexes_are_rejected() {
        let s = parse(&MINIMAL.replace("{workspace}", "{worksapce}")).unwrap();
        assert!(
            check(&s)
                .unwrap_err()
                .starts_with("steps[0] argument: {worksapce} is not a placeholder")
        );
        let s = parse(&MINIMAL.replace("{exit: 0}", "{stdout: {regex: '('}}")).unwrap();
        assert!(check(&s).unwrap_err().contains("invalid regex /(/"));
    }

    #[test]
    fn every_check_cites_what_makes_it_normative() {
        let s = parse(&MINIMAL.replace("seed: 002 §4.3\n", "")).unwrap();
        assert!(
            check(&s)
                .unwrap_err()
                .contains("check \"step-1\" is at level spec but names no seed"),
        );
        let s = parse(&MINIMAL.replace("seed: 002 §4.3\n", "level: extension\n")).unwrap();
        assert!(check(&s).unwrap_err().contains("names no decision"));
        let s =
            parse(&MINIMAL.replace("seed: 002 §4.3\n", "level: extension\ndecision: The run\n"))
                .unwrap();
        check(&s).unwrap();
        assert_eq!(
            s.step_check(0).reference.as_deref(),
            Some("decisions.md: The run")
        );
    }

    #[test]
    fn depends_on_names_an_earlier_check_no_looser_than_itself() {
        let two = format!(
            "{MINIMAL}  - run: --agent {{agent}} -m again\n    depends_on: [step-1]\n    expect: {{exit: 0}}\n"
        );
        check(&parse(&two).unwrap()).unwrap();
        let unknown = two.replace("[step-1]", "[step-9]");
        assert!(
            check(&parse(&unknown).unwrap())
                .unwrap_err()
                .contains("\"step-9\" is not the id of an earlier step or check")
        );
        let looser = two.replace(
            "    expect: {exit: 0}\n  - run: --agent {agent} -m again",
            "    level: extension\n    decision: The run\n    expect: {exit: 0}\n  - run: --agent {agent} -m again",
        );
        assert!(
            check(&parse(&looser).unwrap())
                .unwrap_err()
                .contains("a spec check cannot depend on \"step-1\", which is extension"),
            "{looser}"
        );
    }

    #[test]
    fn agent_files_stay_inside_the_agent() {
        let s = parse(&format!("{MINIMAL}agent_files: {{../x: y}}\n")).unwrap();
        assert!(check(&s).unwrap_err().contains("relative path inside"));
        assert!(is_relative_inside("tools/a.yaml"));
        assert!(!is_relative_inside("/etc/passwd"));
        assert!(!is_relative_inside("a/../../b"));
    }

    #[test]
    fn the_schema_requires_one_action_per_step() {
        let schema = scenario_schema();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let good: Value = serde_saphyr::from_str(MINIMAL).unwrap();
        assert!(validator.is_valid(&good));
        let mut two = good.clone();
        two["steps"][0]["shell"] = Value::from("true");
        assert!(!validator.is_valid(&two));
    }
}

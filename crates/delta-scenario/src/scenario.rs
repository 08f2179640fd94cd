//! The scenario document: [`Scenario`], the normative [`Level`] of its checks, where its
//! LLM requests go, and the files it creates before its first step.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::MockProfile;
use crate::level::Level;
use crate::matcher::OneOrMany;
use crate::step::Step;

/// One conformance scenario: a throw-away directory, an agent, a scripted LLM, and
/// commands run in order, each with what must be observed afterwards.
//
// (Not in the doc comment, which is the schema's description.) `Mock` is how the inline
// mock-llm script is held: a reader keeps any YAML value (the runner substitutes
// placeholders in its strings and checks it against its own schema), a writer gives the
// typed `mock_script::Script`. The fields are in the order a written scenario has them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "delta-conformance scenario")]
pub struct Scenario<Mock = Value> {
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
    /// The sentence(s) of that seed section the checks rest on, verbatim (required with
    /// `seed` for `spec` and `recommended` checks; docs/conformance/citations.md shows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<OneOrMany>,
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
    // Left out when it is the default; the schema still says what the default is.
    #[serde(default, skip_serializing_if = "LlmEndpoint::is_default")]
    #[schemars(extend("default" = "mock"))]
    pub llm: LlmEndpoint,
    /// Whose request validation mock-llm reproduces (`mock-llm --strict`): a request that
    /// server would refuse gets its error status and body. Default: `openai`.
    #[serde(default, skip_serializing_if = "MockProfile::is_default")]
    pub mock_profile: MockProfile,
    /// The mock-llm script, inline (see `schemas/mock-script.schema.json`). Placeholders
    /// are substituted in its strings. Without `mock` or `mock_file` the mock has no
    /// steps: every request gets HTTP 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock: Option<Mock>,
    /// The mock-llm script as a file, relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock_file: Option<String>,
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

impl<Mock> Scenario<Mock> {
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

    /// Whether the scenario runs the sessions implementation: a `sessions` step, or
    /// `delta-sessions` in `requires` (an agent whose tools run it).
    pub fn needs_sessions(&self) -> bool {
        self.requires.iter().any(|p| p == SESSIONS_PROGRAM)
            || self.steps.iter().any(|step| step.sessions.is_some())
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

impl LlmEndpoint {
    /// Whether it is the default (`mock`), which a scenario need not write.
    pub fn is_default(&self) -> bool {
        *self == LlmEndpoint::default()
    }
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

/// The JSON Schema (draft 2020-12) of the scenario format, as committed in
/// `schemas/scenario.schema.json`.
pub fn scenario_schema() -> Value {
    Value::from(schemars::schema_for!(Scenario))
}

//! `delta export --format scenario`: a finished run frozen into a `delta-conformance`
//! scenario that replays it against any implementation. The model's answers come from
//! `io/invocations/*/response.json`, in journal order, as a sequential mock-llm script;
//! the agent is copied beside the scenario; the steps are the run's `run` and `continue`
//! commands with their messages; the expectations are what the run did: each command's
//! exit code and status, the tool calls in order, the files it left in the workspace.
//!
//! The output is a fixtures directory (`scenarios/NAME.yaml`, `agents/NAME/`), the layout
//! `delta-conformance run --fixtures DIR` reads and `fixtures/` of this repository has.
//!
//! The document is the `delta-scenario` crate's [`Scenario`], the one definition of the
//! format `delta-conformance` reads. This module is the entry ([`export`]); by job,
//! `segments` cuts the journal into the run's commands, `mock_script` makes the recorded
//! answers a mock script, `journal` the expected counts and tool calls, `workspace` the
//! setup files and the files expected, `agent_copy` copies the agent, `places` writes
//! the run's paths as placeholders, and `output` writes the directory ([`write()`]).

mod agent_copy;
mod error;
mod journal;
mod mock_script;
mod output;
mod places;
mod segments;
mod workspace;

use std::path::Path;

use delta_scenario::mock_script::Script;
use delta_scenario::{Level, Scenario, Step};
use serde_json::Value;

/// Whose request validation the scenario's mock-llm reproduces (`mock_profile`; also the
/// values of `--mock-profile`): the scenario format's one list.
pub use delta_scenario::MockProfile;

pub use self::agent_copy::MAX_AGENT_FILE_BYTES;
pub use self::error::ScenarioError;
pub use self::output::{Exported, OutputFile, write};
use self::places::Places;
use self::segments::Segment;
pub use self::workspace::MAX_TEXT_BYTES;
use self::workspace::Workspace;
use delta_engine::trajectory::Trajectory;

/// The tag every exported scenario carries.
pub const TAG: &str = "recorded";
/// The docs/decisions.md section exported scenarios cite (their checks are `extension`).
pub const DECISION: &str = "Issue 17: a recorded run as a test";

/// The longest scenario name: `NAME.yaml` and `agents/NAME` must be file names every file
/// system takes (255 bytes), and the default name (`recorded-` and a run id of up to 128
/// characters) must fit.
pub const MAX_NAME_CHARS: usize = 200;

/// How to export.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The scenario's name (and its agent directory's); default `recorded-RUN_ID`.
    pub name: Option<String>,
    /// The mock-llm profile the scenario asks for.
    pub mock_profile: MockProfile,
}

/// The scenario of `trajectory`: nothing is written yet.
///
/// # Errors
/// [`ScenarioError`] when the run has no answers, an answer's record is missing, the run
/// has not ended or was stopped by a signal, or the agent directory cannot be read.
pub fn export(trajectory: &Trajectory, options: &Options) -> Result<Exported, ScenarioError> {
    let run_id = trajectory.run_id().to_string();
    let name = match &options.name {
        Some(name) => name.clone(),
        None => default_name(&run_id),
    };
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ScenarioError::NameTooLong {
            chars: name.chars().count(),
            limit: MAX_NAME_CHARS,
        });
    }
    if !valid_name(&name) {
        return Err(ScenarioError::Name { name });
    }
    let metadata = &trajectory.metadata;
    let places = Places::new(&metadata.work_dir, &metadata.agent_home);
    let segments = segments::segments(trajectory)?;
    let mock = mock_script::mock_script(trajectory, &places)?;
    if mock.steps.is_empty() {
        return Err(ScenarioError::NoAnswers { run_id });
    }
    let mut notes = budget_notes(&segments);
    let end = metadata.end_time.unwrap_or(metadata.updated_at);
    let workspace = Workspace::read(
        &metadata.work_dir,
        std::slice::from_ref(&metadata.agent_home),
        metadata.created_at,
        end,
        &mut notes,
    )?;
    let journal = journal::expectations(trajectory, &places);
    let tool_calls = journal
        .count
        .get(journal::TOOL_CALLS)
        .copied()
        .unwrap_or_default();
    let answers = mock.steps.len();
    let mut steps: Vec<Step> = segments
        .iter()
        .map(|segment| segment.step(&places))
        .collect();
    if let Some(last) = steps.last_mut() {
        last.expect.journal = Some(journal);
        last.expect.files = workspace.created_expectations(&places);
    }
    let scenario = Scenario {
        name: name.clone(),
        description: description(trajectory, segments.len(), answers, tool_calls),
        tags: vec![TAG.to_string()],
        level: Some(Level::Extension),
        decision: Some(DECISION.to_string()),
        agent: Some(name.clone()),
        mock_profile: mock_profile(trajectory, options.mock_profile),
        mock: Some(mock),
        files: workspace.setup_files(),
        steps,
        ..Scenario::default()
    };
    let mut files = vec![OutputFile {
        path: Path::new("scenarios").join(format!("{name}.yaml")),
        bytes: yaml(&scenario, &run_id)?.into_bytes(),
        executable: false,
    }];
    files.extend(agent_copy::copy_agent(
        &metadata.agent_home,
        &metadata.work_dir,
        &Path::new("agents").join(&name),
        &mut notes,
    )?);
    Ok(Exported {
        name,
        files,
        answers,
        tool_calls,
        notes,
    })
}

/// A step that ended on a budget the scenario does not set, for the user to add.
fn budget_notes(segments: &[Segment]) -> Vec<String> {
    segments
        .iter()
        .enumerate()
        .filter(|(_, segment)| segment.error_type.as_deref() == Some("BudgetExceeded"))
        .map(|(index, _)| {
            format!(
                "step {} ended on a cost, token or time budget, which the scenario does not \
                 set: add that --max-… option to the step by hand",
                index + 1
            )
        })
        .collect()
}

/// `recorded-` and the run id in the characters a scenario name allows.
fn default_name(run_id: &str) -> String {
    let mut name = String::from("recorded-");
    for c in run_id.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    name.trim_end_matches('-').to_string()
}

/// What `delta-conformance` accepts as a scenario name (the length is
/// [`MAX_NAME_CHARS`]'s, checked apart so that the message can say which rule failed).
#[must_use]
pub fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// What the scenario proves, for its `description`.
fn description(
    trajectory: &Trajectory,
    commands: usize,
    answers: usize,
    tool_calls: usize,
) -> String {
    let metadata = &trajectory.metadata;
    let commands = if commands == 1 {
        "one `run`".to_string()
    } else {
        format!("`run` and {} `continue`", commands - 1)
    };
    format!(
        "Recorded from run {} of agent {} (`delta export --format scenario`): the model's {} \
         answer(s) are replayed in order through {}; the implementation must make the same \
         {} tool call(s) in order and end {} with the same exit code and workspace files.",
        trajectory.run_id(),
        metadata.agent_name,
        answers,
        commands,
        tool_calls,
        metadata.status,
    )
}

/// The scenario as YAML, with a header naming its origin. YAML block scalars make long
/// texts readable; when they would not read back exactly, the document is written as
/// JSON, which is YAML too.
fn yaml(doc: &Scenario<Script>, run_id: &str) -> Result<String, ScenarioError> {
    let value = serde_json::to_value(doc).map_err(|e| ScenarioError::Serialize(e.to_string()))?;
    let header = format!(
        "# Recorded from run {run_id} by `delta export --format scenario`.\n\
         # Replay it: delta-conformance run --fixtures DIR --filter {} --impl PROGRAM\n",
        doc.name
    );
    // Indented lists, as the hand-written scenarios of fixtures/ have them.
    let options = serde_saphyr::ser_options! { compact_list_indent: false };
    let text = serde_saphyr::to_string_with_options(doc, options)
        .ok()
        .filter(|text| serde_saphyr::from_str::<Value>(text).is_ok_and(|back| back == value));
    let body = match text {
        Some(text) => text,
        None => {
            let mut json = serde_json::to_string_pretty(&value)
                .map_err(|e| ScenarioError::Serialize(e.to_string()))?;
            json.push('\n');
            json
        }
    };
    Ok(format!("{header}{body}"))
}

/// The profile asked for, unless the run's answers came through another API: then that
/// API's own service (the default `openai` profile cannot serve an Anthropic run).
fn mock_profile(trajectory: &Trajectory, asked: MockProfile) -> MockProfile {
    let api = trajectory
        .llm_calls()
        .find_map(|call| call.api)
        .unwrap_or_default();
    match asked.api() {
        Some(served) if served != api => MockProfile::of_api(api),
        Some(_) | None => asked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_scenario_names() {
        assert_eq!(
            default_name("20251014_043012_a1b2c3"),
            "recorded-20251014-043012-a1b2c3"
        );
        assert_eq!(default_name("My.Run__7"), "recorded-my-run-7");
        assert!(valid_name(&default_name("X--")));
        assert!(!valid_name("-a"));
        assert!(!valid_name("Upper"));
        assert!(!valid_name(""));
        let longest = default_name(&"a".repeat(delta_engine::run::MAX_RUN_ID_LEN));
        assert!(longest.chars().count() <= MAX_NAME_CHARS, "{longest}");
    }
}

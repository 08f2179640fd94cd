//! `delta export --format scenario`: a finished run frozen into a `delta-conformance`
//! scenario that replays it against any implementation. The model's answers come from
//! `io/invocations/*/response.json`, in journal order, as a sequential mock-llm script;
//! the agent is copied beside the scenario; the steps are the run's `run` and `continue`
//! commands with their messages; the expectations are what the run did: each command's
//! exit code and status, the tool calls in order, the files it left in the workspace.
//!
//! The output is a fixtures directory (`scenarios/NAME.yaml`, `agents/NAME/`), the layout
//! `delta-conformance run --fixtures DIR` reads and `fixtures/` of this repository has.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use crate::journal::EventPayload;
use crate::output::Exit;
use crate::run::{RunStatus, Timestamp};
use crate::trajectory::Trajectory;

/// The tag every exported scenario carries.
pub const TAG: &str = "recorded";
/// The docs/decisions.md section exported scenarios cite (their checks are `extension`).
pub const DECISION: &str = "Issue 17: a recorded run as a test";
/// Files larger than this are checked for existence only, and left out of the setup.
pub const MAX_TEXT_BYTES: u64 = 64 * 1024;
/// The largest agent file copied: a scenario's agent is configuration and scripts, and
/// the copy is made in memory (the API key is redacted from it).
pub const MAX_AGENT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Whose request validation the scenario's mock-llm reproduces (`mock_profile`; also the
/// values of `--mock-profile`): the scenario format's one list.
pub use delta_scenario::MockProfile;

/// How to export.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The scenario's name (and its agent directory's); default `recorded-RUN_ID`.
    pub name: Option<String>,
    /// The mock-llm profile the scenario asks for.
    pub mock_profile: MockProfile,
}

/// Why a run cannot become a scenario, or the scenario cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The journal has no model answer to replay.
    #[error(
        "run {run_id} has no recorded LLM answer (no THOUGHT in its journal); a scenario replays the model's answers"
    )]
    NoAnswers {
        /// The run.
        run_id: String,
    },
    /// A THOUGHT's invocation record is missing or is not a chat completion.
    #[error("cannot read the answer of the THOUGHT at seq {seq}: {}: {why}", path.display())]
    Record {
        /// The THOUGHT's seq.
        seq: u64,
        /// `io/invocations/{id}/response.json`.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The run cannot be replayed from its answers alone.
    #[error("run {run_id} cannot be replayed as a scenario: {why}")]
    Unreplayable {
        /// The run.
        run_id: String,
        /// Why not.
        why: String,
    },
    /// The scenario name is not one the runner accepts.
    #[error(
        "invalid scenario name {name:?}: use lowercase letters, digits and '-', starting with a letter or digit"
    )]
    Name {
        /// The name given.
        name: String,
    },
    /// The agent directory the run used is gone.
    #[error("the run's agent directory {} does not exist any more", path.display())]
    AgentMissing {
        /// `agent_home` of metadata.json.
        path: PathBuf,
    },
    /// A file of the agent directory is too large to travel with a scenario.
    #[error("{} is larger than {limit} bytes, too large to copy into a scenario", path.display())]
    AgentFileTooLarge {
        /// The file.
        path: PathBuf,
        /// [`MAX_AGENT_FILE_BYTES`].
        limit: u64,
    },
    /// `-o` names a file or a directory that is not empty.
    #[error("{} exists and is not an empty directory", path.display())]
    OutputNotEmpty {
        /// The path given.
        path: PathBuf,
    },
    /// The agent directory could not be read, or a file not written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The scenario could not be serialized.
    #[error("cannot serialize the scenario: {0}")]
    Serialize(String),
}

impl ScenarioError {
    /// How to fix it.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            ScenarioError::NoAnswers { .. } => Some(
                "export a run that got at least one answer from the model (`delta list-runs` shows the runs)"
                    .into(),
            ),
            ScenarioError::Record { .. } => Some(
                "the run's io/ records are incomplete; export a run whose io/invocations/ are intact"
                    .into(),
            ),
            ScenarioError::Unreplayable { .. } => Some(
                "a scenario replays commands that end on their own: export a run that is not \
                 RUNNING and was not stopped by a signal (continue it first, or fork it with \
                 `delta fork --at`)"
                    .into(),
            ),
            ScenarioError::Name { .. } => Some("e.g. --name recorded-hello-world".into()),
            ScenarioError::AgentMissing { .. } => Some(
                "the scenario copies the agent; restore it at that path (agent_home in the \
                 run's metadata.json) and export again"
                    .into(),
            ),
            ScenarioError::AgentFileTooLarge { .. } => Some(
                "keep large data files out of the agent directory: its tools can read them \
                 from elsewhere"
                    .into(),
            ),
            ScenarioError::OutputNotEmpty { .. } => {
                Some("give -o a new or empty directory".into())
            }
            ScenarioError::Io { .. } | ScenarioError::Serialize(_) => None,
        }
    }
}

/// A file of the exported fixtures directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Relative to the output directory.
    pub path: PathBuf,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Written with mode 755.
    pub executable: bool,
}

/// A scenario ready to write.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The scenario's name.
    pub name: String,
    /// `scenarios/NAME.yaml` and the agent's files under `agents/NAME/`.
    pub files: Vec<OutputFile>,
    /// Recorded answers in the mock script.
    pub answers: usize,
    /// Tool calls the scenario expects.
    pub tool_calls: usize,
    /// What was left out, for the user to know (large or binary files, symlinks …).
    pub notes: Vec<String>,
}

impl Exported {
    /// The scenario file, relative to the output directory.
    #[must_use]
    pub fn scenario_path(&self) -> PathBuf {
        Path::new("scenarios").join(format!("{}.yaml", self.name))
    }
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
    if !valid_name(&name) {
        return Err(ScenarioError::Name { name });
    }
    let metadata = &trajectory.metadata;
    let places = Places::new(&metadata.work_dir, &metadata.agent_home);
    let segments = segments(trajectory)?;
    let mock = mock_script(trajectory, &places)?;
    if mock.steps.is_empty() {
        return Err(ScenarioError::NoAnswers { run_id });
    }
    let mut notes = Vec::new();
    for (index, segment) in segments.iter().enumerate() {
        if segment.error_type.as_deref() == Some("BudgetExceeded") {
            notes.push(format!(
                "step {} ended on a cost, token or time budget, which the scenario does not \
                 set: add that --max-… option to the step by hand",
                index + 1
            ));
        }
    }
    let end = metadata.end_time.unwrap_or(metadata.updated_at);
    let workspace = workspace_files(
        &metadata.work_dir,
        std::slice::from_ref(&metadata.agent_home),
        metadata.created_at,
        end,
        &mut notes,
    )?;

    let mut steps: Vec<Step> = segments
        .iter()
        .map(|segment| segment.step(&places))
        .collect();
    let counts = journal_counts(trajectory);
    let counted = counts.get("ACTION_REQUEST").copied().unwrap_or_default();
    if let Some(last) = steps.last_mut() {
        last.expect.journal = Some(JournalExpect {
            count: counts,
            events: tool_call_expectations(trajectory, &places),
        });
        last.expect.files = workspace
            .created
            .iter()
            .map(|file| FileExpect {
                path: format!("{{workspace}}/{}", file.path),
                text: file.text.as_ref().map(|text| Equals {
                    equals: Value::from(places.abstracted(text)),
                }),
            })
            .collect();
    }

    let doc = Doc {
        name: name.clone(),
        description: description(trajectory, &segments, mock.steps.len(), counted),
        tags: vec![TAG],
        level: "extension",
        decision: DECISION,
        agent: name.clone(),
        mock_profile: (!options.mock_profile.is_default()).then(|| options.mock_profile.name()),
        mock,
        files: workspace
            .setup
            .into_iter()
            .map(|file| SetupFile {
                path: format!("{{workspace}}/{}", file.path),
                content: file.text.unwrap_or_default(),
                executable: file.executable,
            })
            .collect(),
        steps,
    };
    let answers = doc.mock.steps.len();
    let mut files = vec![OutputFile {
        path: Path::new("scenarios").join(format!("{name}.yaml")),
        bytes: yaml(&doc, &run_id)?.into_bytes(),
        executable: false,
    }];
    copy_agent(
        &metadata.agent_home,
        &metadata.work_dir,
        &Path::new("agents").join(&name),
        &mut files,
        &mut notes,
    )?;
    Ok(Exported {
        name,
        files,
        answers,
        tool_calls: counted,
        notes,
    })
}

/// Writes `exported` into `dir`, which must be absent or empty.
///
/// # Errors
/// [`ScenarioError::OutputNotEmpty`], or [`ScenarioError::Io`] when a file cannot be
/// written.
pub fn write(exported: &Exported, dir: &Path) -> Result<(), ScenarioError> {
    use std::os::unix::fs::PermissionsExt as _;
    let occupied = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
    };
    if occupied || (dir.exists() && !dir.is_dir()) {
        return Err(ScenarioError::OutputNotEmpty {
            path: dir.to_path_buf(),
        });
    }
    for file in &exported.files {
        let path = dir.join(&file.path);
        let io = |action, source| ScenarioError::Io {
            action,
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("create the directory of", e))?;
        }
        std::fs::write(&path, &file.bytes).map_err(|e| io("write", e))?;
        if file.executable {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io("make executable", e))?;
        }
    }
    Ok(())
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

/// What `delta-conformance` accepts as a scenario name.
#[must_use]
pub fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The run's absolute places, written as the runner's placeholders so that a recorded
/// path points into the scenario's own directory when it is replayed.
struct Places {
    /// Longest first: a numbered workspace lies inside its agent's directory.
    replacements: Vec<(String, &'static str)>,
}

impl Places {
    fn new(workspace: &Path, agent_home: &Path) -> Self {
        let mut replacements: Vec<(String, &'static str)> =
            [(workspace, "{workspace}"), (agent_home, "{agent}")]
                .into_iter()
                .map(|(path, placeholder)| (path.display().to_string(), placeholder))
                .filter(|(path, _)| path.len() > 1)
                .collect();
        replacements.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Self { replacements }
    }

    fn abstracted(&self, text: &str) -> String {
        self.replacements
            .iter()
            .fold(text.to_string(), |text, (path, placeholder)| {
                text.replace(path.as_str(), placeholder)
            })
    }

    fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.abstracted(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, v)| (self.abstracted(key), self.value(v)))
                    .collect(),
            ),
            Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        }
    }
}

/// One command of the run: the first `delta run`, then each `delta continue`.
struct Segment {
    /// `run` or `continue`.
    first: bool,
    /// `-m`: the task, or the message (an answer) that continued the run.
    message: Option<String>,
    /// Answers given on the terminal to an interactive `ask_human` (`-i`).
    interactive: Vec<String>,
    /// The LLM calls it made, for `--max-iterations` when its budget ran out.
    answers: u32,
    /// How it ended.
    status: RunStatus,
    exit: Exit,
    error_type: Option<String>,
    result: Option<Value>,
}

impl Segment {
    /// A command that has not ended yet.
    fn new(first: bool, message: Option<String>) -> Self {
        Self {
            first,
            message,
            interactive: Vec::new(),
            answers: 0,
            status: RunStatus::Running,
            exit: Exit::Failure,
            error_type: None,
            result: None,
        }
    }

    fn step(&self, places: &Places) -> Step {
        let mut args: Vec<String> = if self.first {
            ["--agent", "{agent}", "-w", "{workspace}"]
                .map(String::from)
                .to_vec()
        } else {
            ["--run-id", "{run_id}", "-w", "{workspace}"]
                .map(String::from)
                .to_vec()
        };
        if let Some(message) = &self.message {
            args.push("-m".into());
            args.push(places.abstracted(message));
        }
        if !self.interactive.is_empty() {
            args.push("-i".into());
        }
        if self.error_type.as_deref() == Some("MaxIterationsReached") {
            args.push("--max-iterations".into());
            args.push(self.answers.to_string());
        }
        args.extend(["--format", "json"].map(String::from));
        let mut json = BTreeMap::new();
        json.insert("/status", Equals::of(self.status.as_str()));
        if let Some(result) = &self.result {
            json.insert("/result", Equals::of(places.value(result)));
        }
        if let Some(error_type) = &self.error_type {
            json.insert("/error/type", Equals::of(error_type.as_str()));
        }
        let stdin = (!self.interactive.is_empty()).then(|| {
            self.interactive
                .iter()
                .map(|answer| format!("{}\n", places.abstracted(answer)))
                .collect()
        });
        let (run, continue_) = if self.first {
            (Some(args), None)
        } else {
            (None, Some(args))
        };
        Step {
            run,
            continue_,
            stdin,
            expect: Expect {
                exit: self.exit.code(),
                stdout: StdoutExpect { json },
                metadata: MetadataExpect {
                    status: self.status.as_str(),
                },
                journal: None,
                files: Vec::new(),
            },
        }
    }
}

/// The run's commands, split at its RUN_END events.
fn segments(trajectory: &Trajectory) -> Result<Vec<Segment>, ScenarioError> {
    let run_id = trajectory.run_id().to_string();
    let unreplayable = |why: String| ScenarioError::Unreplayable {
        run_id: run_id.clone(),
        why,
    };
    if let Some(parent) = &trajectory.metadata.parent {
        return Err(unreplayable(format!(
            "it is a fork of {} at seq {}, whose journal no command line recreates",
            parent.run_id, parent.seq
        )));
    }
    let mut segments = Vec::new();
    let mut current = Segment::new(true, Some(trajectory.metadata.task.clone()));
    let mut opening = true;
    for event in &trajectory.events {
        match &event.payload {
            EventPayload::RunStart(start) => current.message = Some(start.task.clone()),
            EventPayload::UserMessage(message) if opening && !current.first => {
                current.message = Some(message.content.clone());
            }
            EventPayload::HumanInputReceived(received) => {
                if opening && !current.first {
                    current.message = Some(received.response.clone());
                } else {
                    current.interactive.push(received.response.clone());
                }
            }
            EventPayload::Thought(_) => {
                opening = false;
                current.answers += 1;
            }
            EventPayload::RunEnd(end) => {
                let status = RunStatus::from(end.status);
                let error_type = end
                    .error
                    .as_ref()
                    .map(|e| e.error_type.as_str().to_string());
                if error_type.as_deref() == Some("Interrupted") {
                    return Err(unreplayable(format!(
                        "a signal (or the Janitor) stopped it at seq {}",
                        event.seq
                    )));
                }
                let mut done = std::mem::replace(&mut current, Segment::new(false, None));
                done.status = status;
                done.exit = Exit::for_run(status, end.error.as_ref());
                done.error_type = error_type;
                done.result = end.result.clone();
                segments.push(done);
                opening = true;
            }
            EventPayload::UserMessage(_)
            | EventPayload::ActionRequest(_)
            | EventPayload::ActionResult(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_) => {}
        }
    }
    let ended = trajectory
        .events
        .last()
        .is_some_and(|event| matches!(event.payload, EventPayload::RunEnd(_)));
    if !ended || trajectory.metadata.status == RunStatus::Running {
        return Err(unreplayable(format!(
            "it has not ended (status {}, its journal does not end with RUN_END)",
            trajectory.metadata.status
        )));
    }
    Ok(segments)
}

/// The recorded answers, in journal order.
fn mock_script(trajectory: &Trajectory, places: &Places) -> Result<MockScript, ScenarioError> {
    let mut steps = Vec::new();
    for event in &trajectory.events {
        let Some(thought) = event.payload.as_thought() else {
            continue;
        };
        let path = trajectory
            .paths
            .invocation_response(&thought.llm_invocation_ref);
        let record = |why: String| ScenarioError::Record {
            seq: event.seq,
            path: path.clone(),
            why,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| record(e.to_string()))?;
        let response: Value =
            serde_json::from_str(&text).map_err(|e| record(format!("not JSON: {e}")))?;
        let choice = &response["choices"][0];
        let message = choice
            .get("message")
            .ok_or_else(|| record("no choices[0].message".into()))?;
        let tool_calls: Vec<MockCall> = message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|call| MockCall {
                        id: call["id"].as_str().map(str::to_string),
                        name: call["function"]["name"].as_str().unwrap_or_default().into(),
                        arguments: places.abstracted(
                            &call["function"]["arguments"].as_str().map_or_else(
                                || call["function"]["arguments"].to_string(),
                                str::to_string,
                            ),
                        ),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let default_reason = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let usage = &response["usage"];
        steps.push(MockStep {
            message: MockMessage {
                content: message["content"].as_str().map(|c| places.abstracted(c)),
                tool_calls,
                usage: match (
                    usage["prompt_tokens"].as_u64(),
                    usage["completion_tokens"].as_u64(),
                ) {
                    (Some(prompt_tokens), Some(completion_tokens)) => Some(MockUsage {
                        prompt_tokens,
                        completion_tokens,
                    }),
                    _ => None,
                },
                finish_reason: choice["finish_reason"]
                    .as_str()
                    .filter(|reason| *reason != default_reason)
                    .map(str::to_string),
            },
        });
    }
    Ok(MockScript { steps })
}

/// Each tool call in order: its name and arguments, and its result's status.
fn tool_call_expectations(trajectory: &Trajectory, places: &Places) -> Vec<EventExpect> {
    let mut expectations = Vec::new();
    let mut requests = 0;
    let mut results = 0;
    for event in &trajectory.events {
        match &event.payload {
            EventPayload::ActionRequest(request) => {
                let mut payload = BTreeMap::new();
                payload.insert("/tool_name", Equals::of(request.tool_name.as_str()));
                payload.insert(
                    "/tool_args",
                    Equals::of(places.value(&Value::Object(request.tool_args.clone()))),
                );
                expectations.push(EventExpect {
                    kind: "ACTION_REQUEST",
                    nth: requests,
                    payload,
                });
                requests += 1;
            }
            EventPayload::ActionResult(result) => {
                let mut payload = BTreeMap::new();
                payload.insert("/status", Equals::of(result.status.as_str()));
                expectations.push(EventExpect {
                    kind: "ACTION_RESULT",
                    nth: results,
                    payload,
                });
                results += 1;
            }
            EventPayload::RunStart(_)
            | EventPayload::UserMessage(_)
            | EventPayload::Thought(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::RunEnd(_) => {}
        }
    }
    expectations
}

/// How many answers, tool calls and command ends the run's journal holds.
fn journal_counts(trajectory: &Trajectory) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for kind in ["THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "RUN_END"] {
        counts.insert(kind, 0);
    }
    for event in &trajectory.events {
        if let Some(count) = counts.get_mut(event.payload.type_name()) {
            *count += 1;
        }
    }
    counts
}

fn description(
    trajectory: &Trajectory,
    segments: &[Segment],
    answers: usize,
    tool_calls: usize,
) -> String {
    let metadata = &trajectory.metadata;
    let commands = if segments.len() == 1 {
        "one `run`".to_string()
    } else {
        format!("`run` and {} `continue`", segments.len() - 1)
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

/// A workspace file as the run found it or left it.
struct WorkspaceFile {
    /// Relative to the workspace, with `/`.
    path: String,
    /// Its text, when it is UTF-8 and small enough.
    text: Option<String>,
    executable: bool,
}

/// The workspace split by modification time: files older than the run are the setup the
/// replay starts from, files written while it ran are expected.
#[derive(Default)]
struct Workspace {
    setup: Vec<WorkspaceFile>,
    created: Vec<WorkspaceFile>,
}

/// Never copied: run records and sessions are the engine's, `.env` files hold credentials.
fn skipped(name: &str) -> bool {
    name == crate::run::DELTA_DIR
        || name == ".sessions"
        || name == ".env"
        || name.starts_with(".env.")
}

fn workspace_files(
    root: &Path,
    excluded: &[PathBuf],
    start: Timestamp,
    end: Timestamp,
    notes: &mut Vec<String>,
) -> Result<Workspace, ScenarioError> {
    let mut found = Vec::new();
    walk(root, "", excluded, &mut found, notes)?;
    let start = SystemTime::from(start.as_datetime());
    // Journal times are kept to the millisecond; a second's slack keeps a file the last
    // tool wrote on the run's side of its end.
    let end = SystemTime::from(end.as_datetime()) + std::time::Duration::from_secs(1);
    let mut workspace = Workspace::default();
    for (rel, path, meta) in found {
        use std::os::unix::fs::PermissionsExt as _;
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let text = if meta.len() <= MAX_TEXT_BYTES {
            std::fs::read(&path)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
        } else {
            None
        };
        let file = WorkspaceFile {
            path: rel.clone(),
            executable: meta.permissions().mode() & 0o111 != 0,
            text,
        };
        if modified > end {
            notes.push(format!(
                "{rel}: changed after the run ended; left out of the scenario"
            ));
        } else if modified >= start {
            if file.text.is_none() {
                notes.push(format!(
                    "{rel}: binary or larger than {MAX_TEXT_BYTES} bytes; only its existence is checked"
                ));
            }
            workspace.created.push(file);
        } else if file.text.is_some() {
            workspace.setup.push(file);
        } else {
            notes.push(format!(
                "{rel}: in the workspace before the run, binary or larger than {MAX_TEXT_BYTES} bytes; not recreated by the scenario"
            ));
        }
    }
    Ok(workspace)
}

/// Regular files under `dir`, sorted, with their paths relative to the root; `excluded`
/// directories (the agent inside its workspace, or the reverse) are not entered.
fn walk(
    dir: &Path,
    prefix: &str,
    excluded: &[PathBuf],
    found: &mut Vec<(String, PathBuf, std::fs::Metadata)>,
    notes: &mut Vec<String>,
) -> Result<(), ScenarioError> {
    let io = |source| ScenarioError::Io {
        action: "read the directory",
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if skipped(&name) || excluded.contains(&path) {
            continue;
        }
        let rel = format!("{prefix}{name}");
        let meta = std::fs::symlink_metadata(&path).map_err(io)?;
        if meta.is_dir() {
            walk(&path, &format!("{rel}/"), excluded, found, notes)?;
        } else if meta.is_file() {
            found.push((rel, path, meta));
        } else {
            notes.push(format!("{rel}: not a regular file; left out"));
        }
    }
    Ok(())
}

/// The agent directory's files, as `agents/NAME/…`: everything but credentials, run
/// records, the agent's numbered workspaces and the run's workspace.
fn copy_agent(
    home: &Path,
    workspace: &Path,
    target: &Path,
    files: &mut Vec<OutputFile>,
    notes: &mut Vec<String>,
) -> Result<(), ScenarioError> {
    use std::os::unix::fs::PermissionsExt as _;
    if !home.is_dir() {
        return Err(ScenarioError::AgentMissing {
            path: home.to_path_buf(),
        });
    }
    let excluded = [
        home.join(crate::workspace::WORKSPACES_DIR),
        workspace.to_path_buf(),
    ];
    let mut found = Vec::new();
    walk(home, "", &excluded, &mut found, notes)?;
    for (rel, path, meta) in found {
        if meta.len() > MAX_AGENT_FILE_BYTES {
            return Err(ScenarioError::AgentFileTooLarge {
                path,
                limit: MAX_AGENT_FILE_BYTES,
            });
        }
        let bytes = std::fs::read(&path).map_err(|source| ScenarioError::Io {
            action: "read",
            path: path.clone(),
            source,
        })?;
        files.push(OutputFile {
            path: target.join(&rel),
            bytes,
            executable: meta.permissions().mode() & 0o111 != 0,
        });
    }
    Ok(())
}

/// The scenario as YAML, with a header naming its origin. YAML block scalars make long
/// texts readable; when they would not read back exactly, the document is written as
/// JSON, which is YAML too.
fn yaml(doc: &Doc, run_id: &str) -> Result<String, ScenarioError> {
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

// The scenario format's subset written here, in the order a reader expects
// (conformance/src/scenario.rs owns the format; the engine does not link it).

#[derive(Serialize)]
struct Doc {
    name: String,
    description: String,
    tags: Vec<&'static str>,
    level: &'static str,
    decision: &'static str,
    agent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    mock_profile: Option<&'static str>,
    mock: MockScript,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    files: Vec<SetupFile>,
    steps: Vec<Step>,
}

#[derive(Serialize)]
struct MockScript {
    steps: Vec<MockStep>,
}

#[derive(Serialize)]
struct MockStep {
    message: MockMessage,
}

#[derive(Serialize)]
struct MockMessage {
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<MockCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<MockUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finish_reason: Option<String>,
}

#[derive(Serialize)]
struct MockCall {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    name: String,
    /// Verbatim, as the model sent it (mock-llm sends a string argument as is).
    arguments: String,
}

#[derive(Serialize)]
struct MockUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

#[derive(Serialize)]
struct SetupFile {
    path: String,
    content: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    executable: bool,
}

#[derive(Serialize)]
struct Step {
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<Vec<String>>,
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    continue_: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stdin: Option<String>,
    expect: Expect,
}

#[derive(Serialize)]
struct Expect {
    exit: u8,
    stdout: StdoutExpect,
    metadata: MetadataExpect,
    #[serde(skip_serializing_if = "Option::is_none")]
    journal: Option<JournalExpect>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    files: Vec<FileExpect>,
}

#[derive(Serialize)]
struct StdoutExpect {
    json: BTreeMap<&'static str, Equals>,
}

#[derive(Serialize)]
struct MetadataExpect {
    status: &'static str,
}

#[derive(Serialize)]
struct JournalExpect {
    count: BTreeMap<&'static str, usize>,
    events: Vec<EventExpect>,
}

#[derive(Serialize)]
struct EventExpect {
    #[serde(rename = "type")]
    kind: &'static str,
    nth: usize,
    payload: BTreeMap<&'static str, Equals>,
}

#[derive(Serialize)]
struct FileExpect {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Equals>,
}

#[derive(Serialize)]
struct Equals {
    equals: Value,
}

impl Equals {
    fn of(value: impl Into<Value>) -> Self {
        Self {
            equals: value.into(),
        }
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
    }

    #[test]
    fn the_run_s_paths_become_placeholders_longest_first() {
        let places = Places::new(Path::new("/a/agent/workspaces/W001"), Path::new("/a/agent"));
        assert_eq!(
            places.abstracted("cat /a/agent/workspaces/W001/x /a/agent/tools.yaml"),
            "cat {workspace}/x {agent}/tools.yaml"
        );
    }
}

//! The Act and Observe steps for one tool call: resolve it, run it, keep the complete
//! record in `io/tool_executions/{action_id}/`, and say what the model will read.
//!
//! Everything the model did wrong (unknown tool, arguments that are not a JSON object,
//! missing parameters) and everything the command did wrong (non-zero exit, signal,
//! timeout, cannot start) becomes an observation: tool failures never end a run.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::observation::{Ending, cap_observation, format_observation};
use crate::journal::ActionStatus;
use crate::tool::{ASK_HUMAN_TOOL, Invocation, ProcessOptions, ProcessOutcome, ToolSpec};

/// The built-in `ask_human` declaration (seed 000 §2.5.1), offered on every request.
pub fn ask_human_schema() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": ASK_HUMAN_TOOL,
            "description": "Request input from the human user. Execution pauses until a response is received. Use it only when you cannot proceed without information that only the user has.",
            "parameters": {
                "type": "object",
                "properties": {
                    "prompt": {
                        "type": "string",
                        "description": "Question or instruction to display to the user"
                    },
                    "input_type": {
                        "type": "string",
                        "enum": ["text", "password", "confirmation"],
                        "description": "Input type: text | password | confirmation"
                    },
                    "sensitive": {
                        "type": "boolean",
                        "description": "Whether the input is sensitive (its characters are hidden)"
                    }
                },
                "required": ["prompt"]
            }
        }
    })
}

/// A tool call resolved against the agent's tools, before anything runs.
#[derive(Debug)]
pub enum Resolved<'a> {
    /// A command to run.
    Run {
        /// The tool.
        spec: &'a ToolSpec,
        /// Its argv and stdin.
        invocation: Invocation,
    },
    /// Nothing runs; the call is answered at once with an ERROR observation.
    Refused {
        /// What the model reads.
        observation: String,
    },
}

/// Parses the model's argument text: a JSON object, or empty text meaning `{}` (some
/// servers send `""` for a call without arguments).
pub fn parse_arguments(arguments: &str) -> Result<Map<String, Value>, String> {
    if arguments.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "Error: the arguments must be a JSON object of parameter names to values, but \
             they are {}. Call the tool again with an object, e.g. {{\"name\": \"value\"}}.",
            json_kind(&other)
        )),
        Err(error) => Err(format!(
            "Error: the arguments are not valid JSON ({error}). Call the tool again with a \
             JSON object of parameter names to values."
        )),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Finds the tool and builds its invocation; every failure is an observation. (`ask_human`
/// never gets here: the loop answers it itself, see `human`.)
pub fn resolve<'a>(
    tools: &'a [ToolSpec],
    name: &str,
    args: Result<&Map<String, Value>, &str>,
) -> Resolved<'a> {
    let Some(spec) = tools.iter().find(|tool| tool.name == name) else {
        let mut available: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        available.push(ASK_HUMAN_TOOL);
        return Resolved::Refused {
            observation: format!(
                "Error: there is no tool named '{name}'. Available tools: {}. Call one of \
                 these instead.",
                available.join(", ")
            ),
        };
    };
    let args = match args {
        Ok(args) => args,
        Err(observation) => {
            return Resolved::Refused {
                observation: observation.to_owned(),
            };
        }
    };
    match spec.invocation(args) {
        Ok(invocation) => Resolved::Run { spec, invocation },
        Err(error) => Resolved::Refused {
            observation: format!("Error: {error}"),
        },
    }
}

/// How a command run ended, for the journal and `io/`.
#[derive(Debug)]
pub struct Executed {
    /// SUCCESS (exit 0) or FAILED (non-zero exit, signal, timeout); ERROR when it did not
    /// start.
    pub status: ActionStatus,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// What the model reads, capped.
    pub observation: String,
    /// Wall time.
    pub duration: Duration,
}

/// Turns a finished process into the journal's view of it.
pub fn observe(
    outcome: &ProcessOutcome,
    timeout: Duration,
    limit: usize,
    full_output_ref: &str,
) -> Executed {
    let ending = ending_of(outcome, timeout);
    let status = match ending {
        Ending::Exited(0) => ActionStatus::Success,
        Ending::Exited(_) | Ending::Signaled(_) | Ending::TimedOut(_) => ActionStatus::Failed,
    };
    let stdout = String::from_utf8_lossy(&outcome.stdout);
    let stderr = String::from_utf8_lossy(&outcome.stderr);
    let text = format_observation(&stdout, &stderr, ending);
    Executed {
        status,
        exit_code: outcome.exit_code,
        observation: cap_observation(&text, limit, full_output_ref),
        duration: outcome.duration,
    }
}

fn ending_of(outcome: &ProcessOutcome, timeout: Duration) -> Ending {
    if outcome.timed_out {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        return Ending::TimedOut(ms);
    }
    match (outcome.exit_code, outcome.signal) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signaled(signal),
        // Unix reports one or the other; treat the impossible case as a failure.
        (None, None) => Ending::Exited(-1),
    }
}

/// The process options of a tool: the workspace as working directory, the run's ids in
/// the environment, the tool's timeout.
pub fn process_options(
    spec: &ToolSpec,
    workspace: &Path,
    env: &[(String, String)],
) -> ProcessOptions {
    ProcessOptions {
        cwd: workspace.to_path_buf(),
        env: env.to_vec(),
        timeout: spec.timeout(),
    }
}

/// What is written to `io/tool_executions/{action_id}/`.
#[derive(Debug)]
pub struct ExecutionRecord<'a> {
    /// `command.txt`: the resolved command line.
    pub command: &'a str,
    /// `stdout.log`.
    pub stdout: &'a [u8],
    /// `stderr.log`.
    pub stderr: &'a [u8],
    /// `exit_code.txt`: the code, or `signal N`, `timeout`, `interrupted`, `not started`.
    pub exit: String,
    /// `duration_ms.txt`.
    pub duration: Duration,
}

impl ExecutionRecord<'_> {
    /// Writes the five files into `dir` (created).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("command.txt"), format!("{}\n", self.command))?;
        std::fs::write(dir.join("stdout.log"), self.stdout)?;
        std::fs::write(dir.join("stderr.log"), self.stderr)?;
        std::fs::write(dir.join("exit_code.txt"), format!("{}\n", self.exit))?;
        std::fs::write(
            dir.join("duration_ms.txt"),
            format!("{}\n", self.duration.as_millis()),
        )
    }
}

/// `exit_code.txt`'s content for a finished process.
pub fn exit_text(outcome: &ProcessOutcome) -> String {
    if outcome.timed_out {
        return "timeout".to_owned();
    }
    match (outcome.exit_code, outcome.signal) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_arguments_mean_no_arguments() {
        assert_eq!(parse_arguments("  "), Ok(Map::new()));
    }

    #[test]
    fn non_object_arguments_are_explained() {
        let error = parse_arguments("[1]").unwrap_err();
        assert!(error.contains("they are an array"), "{error}");
        let error = parse_arguments("{\"a\": ").unwrap_err();
        assert!(
            error.starts_with("Error: the arguments are not valid JSON"),
            "{error}"
        );
    }

    #[test]
    fn unknown_tool_lists_the_available_ones() {
        let Resolved::Refused { observation } = resolve(&[], "nope", Ok(&Map::new())) else {
            panic!("resolved an unknown tool");
        };
        assert_eq!(
            observation,
            "Error: there is no tool named 'nope'. Available tools: ask_human. Call one of \
             these instead."
        );
    }

    fn outcome(exit_code: Option<i32>, signal: Option<i32>, timed_out: bool) -> ProcessOutcome {
        ProcessOutcome {
            stdout: b"out\n".to_vec(),
            stderr: Vec::new(),
            exit_code,
            signal,
            timed_out,
            duration: Duration::from_millis(7),
        }
    }

    const MS: Duration = Duration::from_millis(5);

    #[test]
    fn statuses_follow_the_ending() {
        assert_eq!(
            observe(&outcome(Some(0), None, false), MS, 100, "r").status,
            ActionStatus::Success
        );
        assert_eq!(
            observe(&outcome(Some(3), None, false), MS, 100, "r").status,
            ActionStatus::Failed
        );
        assert_eq!(
            observe(&outcome(None, Some(9), false), MS, 100, "r").status,
            ActionStatus::Failed
        );
        let timed_out = observe(&outcome(None, Some(9), true), MS, 100, "r");
        assert_eq!(timed_out.status, ActionStatus::Failed);
        assert_eq!(
            timed_out.observation,
            "out\n[timed out after 5 ms; process group killed]"
        );
    }

    #[test]
    fn exit_text_names_how_it_ended() {
        assert_eq!(exit_text(&outcome(Some(0), None, false)), "0");
        assert_eq!(exit_text(&outcome(None, Some(15), false)), "signal 15");
        assert_eq!(exit_text(&outcome(None, Some(9), true)), "timeout");
    }
}

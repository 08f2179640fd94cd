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
use crate::tool::{
    ASK_HUMAN_TOOL, Captured, Invocation, OutputPolicy, ProcessOptions, ProcessOutcome, ToolSpec,
};

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
    /// A tool of one of the run's MCP servers.
    Mcp {
        /// The tool.
        tool: crate::mcp::McpTool,
        /// The arguments sent.
        arguments: Map<String, Value>,
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
/// never gets here: the loop answers it itself, see `human`.) `mcp_tools` are the names
/// of the MCP tools offered, for the list an unknown name gets.
pub fn resolve<'a>(
    tools: &'a [ToolSpec],
    mcp_tools: &[String],
    name: &str,
    args: Result<&Map<String, Value>, &str>,
) -> Resolved<'a> {
    let Some(spec) = tools.iter().find(|tool| tool.name == name) else {
        let mut available: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        available.extend(mcp_tools.iter().map(String::as_str));
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
    /// SUCCESS (exit 0) or FAILED (non-zero exit, signal, timeout, output limit); ERROR
    /// when it did not start.
    pub status: ActionStatus,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// What the model reads, capped.
    pub observation: String,
    /// Wall time.
    pub duration: Duration,
}

/// Turns a finished process into the journal's view of it. The streams' in-memory copies
/// are already redacted by the process runner; `output_limit` is the policy's, for the
/// marker.
pub fn observe(
    outcome: &ProcessOutcome,
    timeout: Duration,
    output_limit: u64,
    limit: usize,
    full_output_ref: &str,
) -> Executed {
    let ending = ending_of(outcome, timeout, output_limit);
    let status = match ending {
        Ending::Exited(0) => ActionStatus::Success,
        Ending::Exited(_) | Ending::Signaled(_) | Ending::TimedOut(_) | Ending::OutputLimit(_) => {
            ActionStatus::Failed
        }
    };
    let text = format_observation(
        &kept_text(&outcome.stdout),
        &kept_text(&outcome.stderr),
        ending,
    );
    let unkept = outcome.stdout.omitted + outcome.stderr.omitted;
    Executed {
        status,
        exit_code: outcome.exit_code,
        observation: cap_observation(&text, unkept, limit, full_output_ref),
        duration: outcome.duration,
    }
}

/// The head and tail of a stream as text; where a long stream's middle is missing,
/// [`cap_observation`] puts its marker.
fn kept_text(captured: &Captured) -> String {
    let mut bytes = captured.head.clone();
    bytes.extend_from_slice(&captured.tail);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The output limit is reported before anything else: the output was cut, whatever the
/// process did after (a producer often dies of SIGPIPE before the kill).
fn ending_of(outcome: &ProcessOutcome, timeout: Duration, output_limit: u64) -> Ending {
    if outcome.output_limit_exceeded {
        return Ending::OutputLimit(output_limit);
    }
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
/// the environment, the tool's timeout, and the run's output policy with the streams
/// going straight to `stdout.log` and `stderr.log` in `record_dir`.
///
/// The environment is the engine's own plus `env`, API key included: a sub-agent run as
/// a tool (`delta run`) needs it. The policy's redactor keeps it out of what is recorded.
pub fn process_options(
    spec: &ToolSpec,
    workspace: &Path,
    env: &[(String, String)],
    output: &OutputPolicy,
    record_dir: &Path,
) -> ProcessOptions {
    ProcessOptions {
        cwd: workspace.to_path_buf(),
        env: env.to_vec(),
        timeout: spec.timeout(),
        output: output.with_files(record_dir.join("stdout.log"), record_dir.join("stderr.log")),
    }
}

/// What is written to `io/tool_executions/{action_id}/` besides the output the process
/// runner streamed to `stdout.log` and `stderr.log`.
#[derive(Debug)]
pub struct ExecutionRecord<'a> {
    /// `command.txt`: the resolved command line.
    pub command: &'a str,
    /// `stdout.log` and `stderr.log`, for a command that never started (nothing was
    /// streamed to them); `None` leaves what the runner wrote.
    pub logs: Option<(&'a [u8], &'a [u8])>,
    /// `exit_code.txt`: the code, or `signal N`, `timeout`, `output limit exceeded`,
    /// `interrupted`, `not started`, `error`.
    pub exit: String,
    /// `duration_ms.txt`.
    pub duration: Duration,
}

impl ExecutionRecord<'_> {
    /// Writes the files into `dir` (created).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("command.txt"), format!("{}\n", self.command))?;
        if let Some((stdout, stderr)) = self.logs {
            std::fs::write(dir.join("stdout.log"), stdout)?;
            std::fs::write(dir.join("stderr.log"), stderr)?;
        }
        std::fs::write(dir.join("exit_code.txt"), format!("{}\n", self.exit))?;
        std::fs::write(
            dir.join("duration_ms.txt"),
            format!("{}\n", self.duration.as_millis()),
        )
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
        let Resolved::Refused { observation } = resolve(&[], &[], "nope", Ok(&Map::new())) else {
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
            stdout: Captured::whole(b"out\n".to_vec()),
            stderr: Captured::default(),
            exit_code,
            signal,
            timed_out,
            output_limit_exceeded: false,
            duration: Duration::from_millis(7),
        }
    }

    const MS: Duration = Duration::from_millis(5);
    const MIB: u64 = 1024 * 1024;

    #[test]
    fn statuses_follow_the_ending() {
        assert_eq!(
            observe(&outcome(Some(0), None, false), MS, MIB, 100, "r").status,
            ActionStatus::Success
        );
        assert_eq!(
            observe(&outcome(Some(3), None, false), MS, MIB, 100, "r").status,
            ActionStatus::Failed
        );
        assert_eq!(
            observe(&outcome(None, Some(9), false), MS, MIB, 100, "r").status,
            ActionStatus::Failed
        );
        let timed_out = observe(&outcome(None, Some(9), true), MS, MIB, 100, "r");
        assert_eq!(timed_out.status, ActionStatus::Failed);
        assert_eq!(
            timed_out.observation,
            "out\n[timed out after 5 ms; process group killed]"
        );
    }

    #[test]
    fn the_output_limit_is_named_whatever_killed_the_process() {
        // The producer died of SIGPIPE when the engine stopped reading.
        let mut flooded = outcome(None, Some(13), false);
        flooded.output_limit_exceeded = true;
        let executed = observe(&flooded, MS, MIB, 100, "r");
        assert_eq!(executed.status, ActionStatus::Failed);
        assert_eq!(
            executed.observation,
            "out\n[output exceeded 1 MiB; process group killed]"
        );
        assert_eq!(flooded.exit_text(), "output limit exceeded");
    }

    #[test]
    fn a_stream_cut_in_memory_keeps_its_head_and_tail_around_one_marker() {
        let mut long = outcome(None, Some(9), false);
        long.output_limit_exceeded = true;
        long.stdout = Captured {
            head: b"H".repeat(300),
            omitted: 5000,
            tail: b"T".repeat(300),
        };
        let executed = observe(&long, MS, MIB, 200, "io/tool_executions/a/");
        let text = &executed.observation;
        assert!(text.chars().count() <= 200, "{text}");
        assert!(text.starts_with("HHHH"), "{text}");
        assert!(
            text.ends_with("TTTT\n[output exceeded 1 MiB; process group killed]"),
            "{text}"
        );
        assert!(
            text.contains("more bytes omitted; full output in io/tool_executions/a/"),
            "{text}"
        );
        assert!(
            text.contains(" characters and 5000 more bytes omitted"),
            "{text}"
        );
    }

    #[test]
    fn exit_text_names_how_it_ended() {
        assert_eq!(outcome(Some(0), None, false).exit_text(), "0");
        assert_eq!(outcome(None, Some(15), false).exit_text(), "signal 15");
        assert_eq!(outcome(None, Some(9), true).exit_text(), "timeout");
    }
}

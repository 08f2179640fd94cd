//! `delta export` and `delta view` (issue 16): four real runs against mock-llm — the
//! hello-world run, a run with hooks and an ask_human exchange (carrying canary strings),
//! a FAILED run and an INTERRUPTED run — exported as ATIF and OTLP and rendered as pages.

mod atif;
mod otlp;
mod receiver;
mod redact;
mod scenario;
mod view;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::harness::{Run, Stdin, Test};
use crate::support::run::{HELLO_SCRIPT, HELLO_TASK, RunFiles, delta, hello_world, mock};

/// The run ids of the four runs, in the workspace `ws`.
pub const RUNS: [&str; 4] = ["hello", "hooked", "failed", "interrupted"];

/// Strings of the hooked run that `--redact-content` must remove: the task, the model's
/// text, a tool argument, a tool's output, the question to the human, the answer and the
/// result.
pub const CANARIES: [&str; 7] = [
    "CANARY-TASK-3c9a",
    "CANARY-THOUGHT-5b1c",
    "CANARY-ARG-2e8d",
    "canary-output-9d2e",
    "CANARY-QUESTION-a41f",
    "CANARY-ANSWER-0b6e",
    "CANARY-RESULT-77c3",
];

const HOOKED_SCRIPT: &str = r#"
steps:
  - message:
      content: "Thinking about CANARY-THOUGHT-5b1c"
      tool_calls:
        - name: list_files
          arguments: {directory: "."}
  - message:
      tool_calls:
        - name: write_file
          arguments: {path: "notes.txt", content: "CANARY-ARG-2e8d"}
  - message:
      content: "One question."
      tool_calls:
        - {name: ask_human, arguments: {prompt: "CANARY-QUESTION-a41f?"}}
  - message: {content: "Done: CANARY-RESULT-77c3"}
"#;

const HOOKS_YAML: &str = r#"
pre_tool_execution:
  command: ["true"]
post_tool_execution:
  command: ["true"]
"#;

const FAILING_SCRIPT: &str = r#"
steps:
  - message:
      content: "Looking first."
      tool_calls:
        - name: list_files
          arguments: {directory: "."}
  - error: {status: 401}
"#;

/// The four runs in `ws/` of one temp directory.
pub struct Runs {
    /// The last delta invocation (owns the temp directory).
    pub run: Run,
}

impl Runs {
    /// Runs the four agents.
    pub fn new() -> Self {
        let hello = mock(HELLO_SCRIPT);
        let run = delta(hello_world(Test::new()), &hello)
            .args([
                "run", "--agent", "agent", "-w", "ws", "--run-id", "hello", "-m", HELLO_TASK,
            ])
            .run()
            .code(0);

        let hooked = mock(HOOKED_SCRIPT);
        let run = delta(run.then(), &hooked)
            .file("agent/hooks.yaml", HOOKS_YAML)
            .file("ws/canary-output-9d2e.txt", "")
            .args([
                "run", "--agent", "agent", "-w", "ws", "--run-id", "hooked", "-i",
            ])
            .args(["-m", "CANARY-TASK-3c9a: take notes"])
            .stdin(Stdin::Text("CANARY-ANSWER-0b6e\n".into()))
            .run()
            .code(0);

        let failing = mock(FAILING_SCRIPT);
        let run = delta(run.then(), &failing)
            .args([
                "run", "--agent", "agent", "-w", "ws", "--run-id", "failed", "-m", "fail",
            ])
            .run()
            .code(1);

        let interrupted = mock(HELLO_SCRIPT);
        let run = delta(run.then(), &interrupted)
            .args([
                "run",
                "--agent",
                "agent",
                "-w",
                "ws",
                "--run-id",
                "interrupted",
            ])
            .args(["--max-iterations", "1", "-m", HELLO_TASK])
            .run()
            .code(1);
        Self { run }
    }

    /// The workspace.
    pub fn ws(&self) -> PathBuf {
        self.run.path().join("ws")
    }

    /// A run's directory.
    pub fn dir(&self, id: &str) -> PathBuf {
        self.ws().join(".delta").join(id)
    }

    /// A run's files.
    pub fn files(&self, id: &str) -> RunFiles {
        RunFiles { dir: self.dir(id) }
    }

    /// A run's journal, parsed.
    pub fn journal(&self, id: &str) -> Vec<Value> {
        self.files(id).journal()
    }

    /// How many journal events of `kind` the run has.
    pub fn count(&self, id: &str, kind: &str) -> usize {
        self.files(id).types().iter().filter(|t| *t == kind).count()
    }

    /// A run's metadata.
    pub fn metadata(&self, id: &str) -> Value {
        self.files(id).metadata()
    }

    /// `delta ARGS` in the test directory, with `extra` environment.
    pub fn delta(&self, args: &[&str]) -> Run {
        Test::new().current_dir(self.run.path()).args(args).run()
    }

    /// `delta export --run-id ID -w ws --format FORMAT [extra…]`, expecting exit 0.
    pub fn export(&self, id: &str, format: &str, extra: &[&str]) -> String {
        let ws = self.ws();
        let mut args = vec![
            "export",
            "--run-id",
            id,
            "-w",
            path(&ws),
            "--format",
            format,
        ];
        args.extend_from_slice(extra);
        self.delta(&args).code(0).stdout().to_owned()
    }
}

/// A path as a `&str` argument.
pub fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

//! `delta run`: start a new run of an agent and drive it to its end (seed 000 §2.6.1,
//! seed 002 §3–§5).
//!
//! Nothing is created before every input is validated: arguments (the run id's syntax
//! included), the agent's configuration (exit 126), the `-w` path (exit 126), the
//! credentials (exit 126), the LLM settings from the environment. Then, in order: the workspace (`-w PATH`, created when
//! missing, or the agent's `workspaces/W00N`), the configuration reloaded with `${CWD}` =
//! the workspace, the run directory (one atomic `mkdir`: a taken `--run-id` fails here,
//! exit 1, with nothing else created), lock, metadata, RUN_START, the loop, the final
//! metadata. stdout is printed last, from the metadata read back from disk.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use super::args::parse_run_id;
use super::drive::{self, Format, LimitArgs, Terminal, read_message};
use super::error::CliError;
use super::render;
use super::result::{Promise, ResultSink};
use delta_engine::budget::parse_iterations;
use delta_engine::launch::Start;
use delta_engine::output::Exit;
use delta_engine::run::RunId;

/// The long help of `delta run`; set on the subcommand, where the variant's doc comment
/// would otherwise replace it.
pub(super) const LONG_ABOUT: &str = "Start a new run of an agent and drive it until the model gives its final \
        answer, the iteration budget is spent, an unrecoverable error occurs, or Ctrl+C.\n\n\
        The live Think-Act-Observe stream goes to stderr; stdout gets only the final \
        result, in the --format asked for, generated from the metadata.json already on \
        disk. Everything the run did is in WORKSPACE/.delta/RUN_ID/ (journal.jsonl, \
        metadata.json, engine.log, io/).\n\n\
        Reaching a model: the run calls an OpenAI-compatible chat-completions server. \
        DELTA_BASE_URL (or OPENAI_BASE_URL) names it, default https://api.openai.com/v1; \
        DELTA_API_KEY (or OPENAI_API_KEY) is its key, required only for api.openai.com. \
        Both may also come from .env files (the workspace's, the agent's, the project's). \
        A local server needs no key: DELTA_BASE_URL=http://localhost:11434/v1 (Ollama) or \
        http://localhost:8080/v1 (llama.cpp's llama-server), with llm.model in agent.yaml \
        set to a model it serves.\n\n\
        Exit codes: 0 COMPLETED, 1 FAILED or iteration budget spent, 101 waiting for an \
        answer (ask_human), 126 configuration or permission error, 130 interrupted \
        (SIGINT/SIGTERM), 2 usage.";

/// Arguments of `delta run`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("Run the agent in the current directory in a new workspace", "delta run -y -m \"Summarize notes.txt\""),
        ("Run in a chosen workspace", "delta run --agent ./my-agent -w ./work -m \"List the files\""),
        ("Orchestration: your own run id, machine-readable result", "delta run --run-id \"$(uuidgen)\" -m \"Build the report\" --format json 2>run.log"),
        ("Pipe the result", "delta run -y -m \"Return {\\\"summary\\\": ...} as JSON\" --format raw | jq .summary"),
        ("Watch a run from a program: journal lines live, then a RESULT line", "delta run -y --message-file task.md --format jsonl --no-ask-human"),
        ("A hard budget and a validated answer", "delta run -y -m - --max-cost-usd 0.50 --max-duration 30m --output-schema answer.schema.json < task.txt"),
    ])
)]
pub struct RunArgs {
    /// Agent directory (or its agent.yaml / config.yaml).
    #[arg(long, value_name = "PATH", default_value = ".", value_hint = ValueHint::AnyPath)]
    agent: PathBuf,

    /// The task: the first user message of the run (`-` reads it from stdin).
    #[arg(
        short,
        long,
        value_name = "TEXT",
        required_unless_present_any = ["message_file", "task"]
    )]
    message: Option<String>,

    /// The pre-1.8 name of -m: accepted only to say so.
    #[arg(long, hide = true, value_name = "TEXT", conflicts_with_all = ["message", "message_file"])]
    task: Option<String>,

    /// Read the task from a file.
    #[arg(long, value_name = "FILE", conflicts_with = "message", value_hint = ValueHint::FilePath)]
    message_file: Option<PathBuf>,

    /// Workspace directory (the tools' working directory; created when missing). Without
    /// it, the agent's workspaces/W00N is used.
    #[arg(short, long = "work-dir", value_name = "PATH", value_hint = ValueHint::DirPath)]
    work_dir: Option<PathBuf>,

    /// Iteration budget [default: agent.yaml's max_iterations, else 30].
    #[arg(long, value_name = "N", value_parser = parse_iterations)]
    max_iterations: Option<u32>,

    /// Show engine detail on stderr: timings, invocation ids, retries.
    #[arg(short, long)]
    verbose: bool,

    /// Interactive mode: ask_human questions are asked on the terminal instead of pausing
    /// the run (exit 101) for `delta continue`.
    #[arg(short, long)]
    interactive: bool,

    /// Never ask: create a new workspace instead of offering the last used one (also the
    /// behaviour when stdin is not a terminal).
    #[arg(short, long)]
    yes: bool,

    /// Use this run id instead of a generated one ([A-Za-z0-9][A-Za-z0-9._-]{0,127}, not
    /// VERSION, LATEST or runs); it must not exist in the workspace.
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    run_id: Option<RunId>,

    /// What stdout gets: the result at the end, or (jsonl) every journal line as it is
    /// appended and a RESULT line.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    #[command(flatten)]
    limits: LimitArgs,
}

impl RunArgs {
    /// What stdout is promised.
    pub(super) fn promise(&self) -> Promise {
        self.format.promise()
    }

    pub(super) fn run(self, sink: &mut ResultSink) -> Result<Exit, CliError> {
        if self.task.is_some() {
            return Err(CliError::Retired {
                flag: "--task",
                since: "v1.8",
                instead: "-m/--message TEXT (or --message-file FILE)",
            });
        }
        let cwd = std::env::current_dir().map_err(CliError::CurrentDir)?;
        let task = match read_message(self.message, self.message_file)? {
            // A run on an empty task would only spend money asking the model what to do.
            Some(message) if message.text.trim().is_empty() => {
                return Err(CliError::EmptyMessage { from: message.from });
            }
            Some(message) => message.text,
            None => String::new(),
        };
        let spec = self.limits.spec(
            Start::New {
                agent: self.agent,
                cwd,
                task,
                workspace: self.work_dir,
                run_id: self.run_id,
            },
            self.max_iterations,
        );
        let terminal = Terminal {
            verbose: self.verbose,
            interactive: self.interactive,
            yes: self.yes,
            format: self.format,
        };
        drive::launch(spec, terminal, sink)
    }
}

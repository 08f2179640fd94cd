//! What `delta run` and `delta continue` share once their arguments are parsed: the
//! terminal as the launch's [`Frontend`], the live stream on stderr, and the final output
//! on stdout, printed last from the metadata on disk.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum, ValueHint};

use super::error::CliError;
use super::human::{TerminalHuman, print_pause_guidance};
use super::jsonl::JsonlStream;
use super::render;
use super::result::{Promise, ResultSink};
use super::stream::StreamRenderer;
use delta_engine::budget::{
    Budget, parse_cost_usd, parse_duration, parse_iterations, parse_tokens,
};
use delta_engine::engine::{HumanInput, Observer};
use delta_engine::environment::{EnvironmentChoice, Kind};
use delta_engine::launch::{
    Finished, Frontend, Launch, LaunchError, LaunchSpec, Reuse, Start, ask_reuse,
};
use delta_engine::message;
use delta_engine::output::{Exit, render_json, render_raw, render_text};
use delta_engine::resume::ResumeReport;
use delta_engine::run::RunPaths;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A human-readable summary.
    Text,
    /// RunResult v2.0 as JSON.
    Json,
    /// The result alone (nothing unless COMPLETED): for pipes.
    Raw,
    /// Every journal event as it is appended (one JSON line each, exactly as in the
    /// journal), then one `{"type": "RESULT", ...}` line: for programs watching live.
    Jsonl,
}

impl Format {
    /// What the format promises stdout.
    pub(super) fn promise(self) -> Promise {
        match self {
            Format::Text | Format::Raw => Promise::Nothing,
            Format::Json => Promise::Json,
            Format::Jsonl => Promise::Jsonl,
        }
    }
}

/// The budget, output schema and `ask_human` flags of `run` and `continue`.
#[derive(Debug, Args)]
pub(super) struct LimitArgs {
    /// Stop the run (INTERRUPTED, BudgetExceeded, exit 1) before an LLM call once its
    /// estimated cost reaches this many US dollars (needs the model's price).
    #[arg(long, value_name = "USD", value_parser = parse_cost_usd)]
    max_cost_usd: Option<f64>,

    /// The same for input plus output tokens over the run.
    #[arg(long, value_name = "N", value_parser = parse_tokens)]
    max_tokens: Option<u64>,

    /// The same for the run's active wall time (90s, 30m, 2h); also stops a running tool.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    max_duration: Option<Duration>,

    /// A JSON Schema (draft 2020-12) file the final answer must satisfy; an invalid answer
    /// goes back to the model with the errors, twice at most.
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    output_schema: Option<PathBuf>,

    /// Do not offer the built-in ask_human tool: the run never pauses for an answer.
    #[arg(long)]
    no_ask_human: bool,

    #[command(flatten)]
    environment: EnvironmentArgs,
}

/// `--environment` and `--environment-image`: where the run's tools execute
/// (docs/environments.md).
#[derive(Debug, Clone, Args)]
pub(super) struct EnvironmentArgs {
    /// Where tools run, instead of agent.yaml's `environment.kind`: host (unconfined),
    /// landlock, bwrap (one sandbox per run) or container (one container per run). A kind
    /// that cannot be established here refuses the run (exit 126); `delta env probe` shows
    /// what works.
    #[arg(long, value_name = "KIND", value_parser = kind_parser())]
    environment: Option<Kind>,

    /// The container image, instead of agent.yaml's `environment.image` or `build`
    /// (never pulled; needs the container kind).
    #[arg(long, value_name = "IMAGE")]
    environment_image: Option<String>,
}

impl EnvironmentArgs {
    /// The choice these flags make.
    pub(super) fn choice(&self) -> EnvironmentChoice {
        EnvironmentChoice {
            kind: self.environment,
            image: self.environment_image.clone(),
            replace: None,
        }
    }
}

/// The kinds, for `--environment`'s help and completions.
pub(super) fn kind_parser() -> impl clap::builder::TypedValueParser<Value = Kind> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Kind::ALL.map(Kind::as_str))
        .map(|name| name.parse::<Kind>().unwrap_or_default())
}

impl LimitArgs {
    /// The spec of a run that starts as `start` with the iteration budget
    /// `max_iterations`, limited by these flags.
    pub(super) fn spec(self, start: Start, max_iterations: Option<u32>) -> LaunchSpec {
        LaunchSpec {
            start,
            max_iterations,
            budget: Budget {
                max_cost_usd: self.max_cost_usd,
                max_tokens: self.max_tokens,
                max_duration: self.max_duration,
            },
            output_schema: self.output_schema,
            ask_human: self.no_ask_human.then_some(false),
            environment: self.environment.choice(),
        }
    }
}

/// The message of `-m TEXT` (`-` reads stdin) or `--message-file FILE`, at most
/// [`message::MAX_MESSAGE_BYTES`] (the batch driver hands its tasks' messages to `delta
/// run` on stdin, under the same bound).
///
/// # Errors
/// When stdin or the file cannot be read as UTF-8 text, or holds too much.
pub(super) fn read_message(
    text: Option<String>,
    file: Option<PathBuf>,
) -> Result<Option<Message>, CliError> {
    let (message, from) = match (text, file) {
        (_, Some(path)) => {
            let message = std::fs::File::open(&path)
                .and_then(message::read)
                .map_err(|source| CliError::Message {
                    from: path.display().to_string(),
                    source,
                })?;
            (message, format!("--message-file {}", path.display()))
        }
        (Some(dash), None) if dash == "-" => {
            let message =
                message::read(std::io::stdin().lock()).map_err(|source| CliError::Message {
                    from: "standard input".to_owned(),
                    source,
                })?;
            (message, "standard input (-m -)".to_owned())
        }
        (Some(text), None) => (text, "-m".to_owned()),
        (None, None) => return Ok(None),
    };
    Ok(Some(Message {
        text: message,
        from,
    }))
}

/// A message read by [`read_message`], with where it came from.
#[derive(Debug)]
pub(super) struct Message {
    /// The text.
    pub text: String,
    /// `-m`, `standard input (-m -)` or `--message-file PATH`.
    pub from: String,
}

/// The flags of the commands that take an existing run on (`continue`, `fork`): the fresh
/// budget, the terminal, and what stdout gets.
#[derive(Debug, Args)]
pub(super) struct TakeOnArgs {
    /// Fresh iteration budget [default: agent.yaml's max_iterations, else 30].
    #[arg(long, value_name = "N", value_parser = parse_iterations)]
    max_iterations: Option<u32>,

    /// Interactive mode: ask_human questions are asked on the terminal instead of pausing.
    #[arg(short, long)]
    interactive: bool,

    /// Never ask (nothing is asked besides -i's questions; accepted so that scripts can
    /// pass `delta run`'s flags).
    #[arg(short, long)]
    yes: bool,

    /// What stdout gets: the result at the end, or (jsonl) every journal line as it is
    /// appended and a RESULT line.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    #[command(flatten)]
    limits: LimitArgs,

    /// Show engine detail on stderr: timings, invocation ids, retries.
    #[arg(short, long)]
    verbose: bool,
}

impl TakeOnArgs {
    /// `-i`: questions are asked on the terminal.
    pub(super) fn interactive(&self) -> bool {
        self.interactive
    }

    /// What these flags promise stdout.
    pub(super) fn promise(&self) -> Promise {
        self.format.promise()
    }

    /// Drives the run `start` names to its end with these flags and prints its result
    /// through `sink`.
    pub(super) fn launch(self, start: Start, sink: &mut ResultSink) -> Result<Exit, CliError> {
        let spec = self.limits.spec(start, self.max_iterations);
        let terminal = Terminal {
            verbose: self.verbose,
            interactive: self.interactive,
            yes: self.yes,
            format: self.format,
        };
        launch(spec, terminal, sink)
    }
}

/// How the terminal takes part in a run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Terminal {
    /// `-v`: engine detail on the live stream.
    pub verbose: bool,
    /// `-i`: `ask_human` is answered on the terminal.
    pub interactive: bool,
    /// `-y`: the workspace question is never asked.
    pub yes: bool,
    /// What stdout gets at the end.
    pub format: Format,
}

/// Prepares and drives the run of `spec`, then prints its result: the one path of every
/// command that runs an agent.
pub(super) fn launch(
    spec: LaunchSpec,
    terminal: Terminal,
    sink: &mut ResultSink,
) -> Result<Exit, CliError> {
    let human = StreamRenderer::stderr(terminal.verbose);
    if terminal.format == Format::Jsonl {
        let continued = match &spec.start {
            Start::Continue {
                workspace, run_id, ..
            } => Some((RunPaths::new(workspace, run_id).journal(), run_id.clone())),
            Start::New { .. } | Start::Replay(_) | Start::Child(_) => None,
        };
        let mut stream = JsonlStream::new(human, continued);
        let outcome = drive(spec, terminal, &mut stream);
        // The RESULT line ends every stream, whatever stopped the run or kept it from
        // starting (a refusal is printed by the caller, through the same sink).
        return stream.finish(outcome, None, sink);
    }
    let mut human = human;
    let finished = drive(spec, terminal, &mut human)?;
    match terminal.format {
        Format::Text => render::stdout(&render_text(&finished.result))?,
        Format::Json => sink.print(&render_json(&finished.result))?,
        Format::Raw | Format::Jsonl => render::stdout(&render_raw(&finished.result))?,
    }
    Ok(finished.result.exit_code())
}

/// Prepares the run of `spec` and drives it to its end with `observer` watching.
fn drive(
    spec: LaunchSpec,
    terminal: Terminal,
    observer: &mut dyn Observer,
) -> Result<Finished, CliError> {
    let mut frontend = TerminalFrontend { yes: terminal.yes };
    let launch = Launch::prepare(spec, &mut frontend)?;
    let human: Option<Arc<dyn HumanInput>> = if terminal.interactive {
        Some(Arc::new(TerminalHuman))
    } else {
        None
    };
    let finished = launch.drive(observer, human, &mut frontend)?;
    print_pause_guidance(&finished.result);
    Ok(finished)
}

/// The terminal as the launch's [`Frontend`]: warnings and reports on stderr, the workspace
/// question asked there.
pub(super) struct TerminalFrontend {
    /// `-y`: never ask.
    pub yes: bool,
}

impl Frontend for TerminalFrontend {
    fn warning(&mut self, message: &str) {
        render::warning(message);
    }

    fn reuse_workspace(&mut self, previous: &str) -> Result<Reuse, LaunchError> {
        // As `delta init`: a question needs someone to read it and someone to answer.
        if self.yes || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return Ok(Reuse::New);
        }
        let mut stdin = std::io::stdin().lock();
        ask_reuse(previous, &mut stdin, &mut anstream::stderr())
    }

    fn took_over(&mut self, report: &ResumeReport) {
        if let Some(janitor) = &report.janitor {
            render::stderr(&format!("{janitor}\n"));
        }
        if report.run_start_restored {
            render::warning(
                "the journal was empty (the process died before writing it); the task was \
                 journaled again from metadata.json",
            );
        }
        if report.torn_tail.is_some() {
            render::warning(
                "the journal's last line was cut short by the crash and was removed (details \
                 in engine.log)",
            );
        }
        let interrupted = report.repairs.interrupted_actions.len();
        if interrupted > 0 {
            render::warning(&format!(
                "{interrupted} tool call(s) were in progress when the run stopped; they were \
                 answered with an error and not run again"
            ));
        }
        let not_run = report.repairs.not_run_calls.len();
        if not_run > 0 {
            render::warning(&format!(
                "{not_run} tool call(s) the model asked for never started; they were answered \
                 with an error"
            ));
        }
        if report.answer_as_user_message {
            render::warning(
                "the run had no pending question in its journal; the answer was given to the \
                 model as a user message",
            );
        }
    }
}

//! `mock-llm`: serve a script of chat completions until SIGINT or SIGTERM.

// A binary: the one place its diagnostics are printed (the workspace denies printing in
// libraries).
#![allow(clippy::print_stderr)]

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mock_llm::{
    ContextWindow, MockProfile, MockServer, OverflowShape, ReadScript as _, Script, ScriptError,
    ServerError, ServerOptions,
};

const SCRIPT_HELP: &str = "\
SCRIPT FORMAT (YAML, or JSON when the file name ends in .json):

  mode: sequential       # or by_conversation (see below)
  models: [gpt-4o-mini]  # listed by GET /v1/models (default: mock-model)
  steps:                 # each: message, error, drop_connection or malformed
    - message:
        content: Let me look.
        tool_calls:
          - {name: ls, arguments: {path: .}}  # object: sent as JSON
          - {name: cat, arguments: '{\"p\": '}  # string: sent verbatim
        usage: {prompt_tokens: 120, completion_tokens: 30}
        finish_reason: tool_calls  # default: tool_calls, or stop
        reasoning: I should look.  # thinking block / reasoning item
    - error: {status: 429, retry_after: 2}  # body: string or object
    - drop_connection:           # close the socket without answering
    - malformed: {body: oops}    # 200 with a body that is no completion
    - message: {content: Done., delay_ms: 50, repeat: 3}

delay_ms and repeat work on every step. sequential: the N-th request
gets step N (from 0). by_conversation: a request holding N tool
results gets step N. One script serves chat completions, Anthropic
Messages and OpenAI Responses, each answered in its own shape.
Past the last step: HTTP 500 \"mock-llm: script exhausted: ...\".
Reference: the mock-llm README and schemas/mock-script.schema.json.";

/// A scripted model server: OpenAI chat completions, Anthropic Messages, OpenAI Responses.
///
/// Serves POST /v1/chat/completions, POST /v1/messages, POST /v1/responses and GET
/// /v1/models (also without /v1), answering from a script. Prints the bound port alone on the first line of stdout, then serves
/// until SIGINT or SIGTERM.
#[derive(Debug, Parser)]
#[command(name = "mock-llm", version, after_long_help = SCRIPT_HELP)]
struct Cli {
    /// The script to serve (see --help for its format).
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
    /// Write each model request to FILE as one JSON line (FILE is created or truncated);
    /// the values of the Authorization and x-api-key headers are never written.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Validate every request as this service does and refuse what it refuses, with its
    /// status and error body: openai, llama-cpp, vllm, ollama, deepseek (chat
    /// completions), anthropic (Messages) or responses (OpenAI Responses).
    #[arg(long, value_name = "PROFILE", value_parser = mock_llm::strict_profile)]
    strict: Option<MockProfile>,
    /// Answer requests over N tokens (body bytes / 4, rounded up) with HTTP 400 and a
    /// context-length error; they use up no step.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    context_window: Option<u64>,
    /// Whose context-length error to answer with: openai, vllm, llama.cpp or
    /// llama.cpp-legacy.
    #[arg(
        long,
        value_name = "SHAPE",
        default_value = "openai",
        requires = "context_window"
    )]
    context_error: OverflowShape,
    /// Count each prompt's tokens and report the part a provider's prefix cache would
    /// hold, as each API reports cached tokens (instead of the script's prompt_tokens).
    #[arg(long)]
    prompt_cache: bool,
}

/// A failure, already rendered, with its exit code.
struct Failure {
    message: String,
    code: u8,
}

/// Bad input (script, record path) is a usage error; anything else is a plain failure.
const EXIT_USAGE: u8 = 2;
const EXIT_FAILURE: u8 = 1;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("{}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let script = Script::from_path(&cli.script).map_err(|err| Failure {
        message: render_script_error(&err),
        code: EXIT_USAGE,
    })?;
    let signals = Signals::install().map_err(|err| Failure {
        message: format!("error: cannot listen for signals: {err}"),
        code: EXIT_FAILURE,
    })?;
    let options = ServerOptions {
        addr: SocketAddr::new(cli.host, cli.port),
        record_file: cli.record,
        keep_requests: false,
        strict: cli.strict,
        context_window: cli.context_window.map(|tokens| ContextWindow {
            tokens,
            shape: cli.context_error,
        }),
        prompt_cache: cli.prompt_cache,
    };
    let server = MockServer::start_with(script, options).map_err(|err| Failure {
        code: match err {
            ServerError::RecordFile { .. } => EXIT_USAGE,
            ServerError::Bind { .. } | ServerError::Runtime(_) => EXIT_FAILURE,
        },
        message: format!("error: {err}"),
    })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.port())
        .and_then(|()| stdout.flush())
        .map_err(|err| Failure {
            message: format!("error: cannot print the port: {err}"),
            code: EXIT_FAILURE,
        })?;
    drop(stdout);
    signals.wait().map_err(|err| Failure {
        message: format!("error: cannot wait for signals: {err}"),
        code: EXIT_FAILURE,
    })?;
    drop(server);
    Ok(())
}

/// The project's configuration-error layout: what, where, how to fix.
fn render_script_error(err: &ScriptError) -> String {
    let mut out = match err {
        ScriptError::Read { .. } => format!("error: {err}"),
        ScriptError::Parse {
            path,
            location,
            message,
        } => {
            let mut out = format!("error: invalid mock script: {message}");
            match (path, location) {
                (Some(path), Some((line, column))) => {
                    out.push_str(&format!("\n  --> {}:{line}:{column}", path.display()));
                }
                (Some(path), None) => out.push_str(&format!("\n  --> {}", path.display())),
                (None, _) => {}
            }
            out
        }
    };
    out.push_str(&format!("\n  = help: {}", err.help()));
    out
}

/// SIGINT and SIGTERM, listened for from before the port is printed: a script that reads
/// the port and at once signals must not kill the process with the default action.
struct Signals {
    runtime: tokio::runtime::Runtime,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let entered = runtime.enter();
            let interrupt = signal(SignalKind::interrupt())?;
            let terminate = signal(SignalKind::terminate())?;
            drop(entered);
            Ok(Self {
                runtime,
                interrupt,
                terminate,
            })
        }
        #[cfg(not(unix))]
        Ok(Self { runtime })
    }

    fn wait(self) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            let Self {
                runtime,
                mut interrupt,
                mut terminate,
            } = self;
            runtime.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            });
            Ok(())
        }
        #[cfg(not(unix))]
        self.runtime.block_on(tokio::signal::ctrl_c())
    }
}

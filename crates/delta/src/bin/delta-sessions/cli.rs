//! The `delta-sessions` command line: argument parsing, and turning every result, error
//! included, into one JSON document on stdout and an exit code.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde::Serialize;

use delta_sessions::{
    ErrorOutput, HOLDER_SUBCOMMAND, OWNER_DIR_ENV, SessionId, Sessions, SessionsError, run_holder,
};

/// Exit code for command-line misuse.
const USAGE: u8 = 2;

/// Persistent shells and Python REPLs driven one command at a time, with JSON results.
#[derive(Debug, Parser)]
#[command(name = "delta-sessions", version)]
struct Cli {
    /// Directory holding the sessions [default: ./.sessions]
    #[arg(long, global = true, value_name = "DIR", env = "DELTA_SESSIONS_DIR")]
    sessions_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Start a session: bash (default), another POSIX shell, or python3.
    Start {
        /// Use this session id (`sess_` and 12 lowercase hex digits) instead of a generated
        /// one, e.g. so that a script knows it in advance; fails if the id is in use.
        #[arg(long, value_name = "SESSION_ID")]
        id: Option<String>,
        /// The interpreter: a name on PATH or a path.
        #[arg(default_value = "bash")]
        command: String,
    },
    /// Run one command in a session and print its complete result.
    Exec {
        /// Stop the command (and what it started) after this many seconds.
        #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = parse_timeout)]
        timeout: Duration,
        session_id: String,
        /// The command, as one argument; read from stdin when absent (heredocs welcome).
        command: Option<OsString>,
    },
    /// End a session and every process it started.
    End { session_id: String },
    /// List the sessions.
    List,
    /// Remove sessions whose process is gone (ended, exited, killed).
    Cleanup,
    /// Internal: the per-session holder process started by `start`.
    #[command(name = HOLDER_SUBCOMMAND, hide = true)]
    Holder { session_id: String, command: String },
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs > 0.0 && *secs <= 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("'{text}' is not a number of seconds greater than 0 (e.g. 300 or 0.5)")
        })
}

/// Runs `delta-sessions` with `args` (program name first), writing the JSON result or
/// error to `out`, and returns the exit code: 0 on success, 1 when the operation failed,
/// 2 for command-line misuse.
pub(crate) fn main(args: impl IntoIterator<Item = OsString>, out: &mut dyn Write) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error, out),
    };
    match dispatch(cli, out) {
        Ok(()) => 0,
        Err(error) => {
            let code = u8::try_from(error.exit_code()).unwrap_or(1);
            let document = ErrorOutput {
                error: error.to_string(),
                hint: error.hint(),
            };
            emit(out, &document);
            code
        }
    }
}

fn dispatch(cli: Cli, out: &mut dyn Write) -> Result<(), SessionsError> {
    let dir = match cli.sessions_dir {
        Some(dir) => dir,
        None => PathBuf::from(".sessions"),
    };
    // Read here, not with clap: it is the engine's, not an option a user passes.
    let owner_dir = std::env::var_os(OWNER_DIR_ENV).map(PathBuf::from);
    let sessions = Sessions::new(&dir)?.noting_in(owner_dir);
    match cli.command {
        Cmd::Start { id, command } => {
            let id = id.as_deref().map(SessionId::parse).transpose()?;
            let exe = std::env::current_exe()
                .map_err(|e| SessionsError::failed("locate the delta-sessions binary", e))?;
            emit(out, &sessions.start(&command, id.as_ref(), &exe)?);
        }
        Cmd::Exec {
            timeout,
            session_id,
            command,
        } => {
            let id = SessionId::parse(&session_id)?;
            let command = match command {
                Some(command) => command.into_vec(),
                None => read_stdin()?,
            };
            emit(out, &sessions.exec(&id, &command, timeout)?);
        }
        Cmd::End { session_id } => {
            emit(out, &sessions.end(&SessionId::parse(&session_id)?)?);
        }
        Cmd::List => emit(out, &sessions.list()?),
        Cmd::Cleanup => emit(out, &sessions.cleanup()?),
        Cmd::Holder {
            session_id,
            command,
        } => run_holder(
            sessions.dir(),
            &SessionId::parse(&session_id)?,
            &command,
            out,
        )?,
    }
    Ok(())
}

fn read_stdin() -> Result<Vec<u8>, SessionsError> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        // Waiting for a human to type a command and press ^D is never what an agent wants.
        return Err(SessionsError::NoCommand);
    }
    let mut bytes = Vec::new();
    stdin
        .read_to_end(&mut bytes)
        .map_err(|e| SessionsError::failed("read standard input", e))?;
    Ok(bytes)
}

/// Help and version go out as text with status 0; any other parse error becomes the JSON
/// error document with status 2.
fn usage_error(error: &clap::Error, out: &mut dyn Write) -> u8 {
    use clap::error::ErrorKind;
    let text = error.render().to_string();
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ignored = out.write_all(text.as_bytes());
        0
    } else {
        {
            let message = text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_owned();
            let usage = text
                .lines()
                .find_map(|line| line.strip_prefix("Usage: "))
                .unwrap_or("delta-sessions <COMMAND>");
            let document = ErrorOutput {
                error: message,
                hint: format!(
                    "usage: {usage}; `delta-sessions --help` lists the commands, and a command \
                     with spaces must be quoted as one argument or passed on stdin"
                ),
            };
            emit(out, &document);
            USAGE
        }
    }
}

fn emit<T: Serialize>(out: &mut dyn Write, document: &T) {
    // Serialising these plain structs cannot fail; a closed stdout leaves nobody to tell.
    if let Ok(mut text) = serde_json::to_string_pretty(document) {
        text.push('\n');
        let _ignored = out.write_all(text.as_bytes());
        let _ignored = out.flush();
    }
}

//! The one error type of `delta-sessions`, with a hint for each case that says what to do next.

use std::io;
use std::path::PathBuf;

use crate::id::{InvalidSessionId, SessionId};

/// Everything that can go wrong in a sessions operation.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    /// An id given on the command line does not have the `sess_` + 12 hex digits shape.
    #[error(transparent)]
    InvalidId(#[from] InvalidSessionId),
    /// `start --id` named an id that a session in the directory already has.
    #[error("session {id} already exists in {}", dir.display())]
    IdInUse { id: SessionId, dir: PathBuf },
    /// The sessions directory holds no session with this id.
    #[error("no session {id} in {}", dir.display())]
    UnknownSession { id: SessionId, dir: PathBuf },
    /// The session was ended (by `end`, or its shell exited) and cannot run commands.
    #[error("session {id} has ended: {reason}")]
    Ended { id: SessionId, reason: String },
    /// The session was never ended, but its holder process is gone (killed, crashed, reboot).
    #[error("session {id} is not running: its process is gone")]
    NotRunning { id: SessionId },
    /// The holder went away while a command was running.
    #[error("session {id} stopped while the command was running: {reason}")]
    Lost { id: SessionId, reason: String },
    /// `exec` got neither a command argument nor anything on standard input.
    #[error("no command to run: none was given as an argument and standard input was empty")]
    NoCommand,
    /// Shells read commands as C strings; a NUL byte would silently cut the command short.
    #[error("the command contains a NUL byte, which a shell cannot run")]
    NulInCommand,
    /// The interpreter could not be started or did not answer the session protocol.
    #[error("cannot start a session with '{command}': {reason}")]
    StartFailed { command: String, reason: String },
    /// A file-system operation failed; the message names it and the path.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// `metadata.json` exists but does not parse.
    #[error("{} is not valid session metadata: {source}", path.display())]
    Metadata {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The holder answered something the client did not expect.
    #[error("session {id}: {message}")]
    Holder {
        id: SessionId,
        message: String,
        log: PathBuf,
    },
}

impl SessionsError {
    /// What the user (usually an agent) should do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::InvalidId(_) => "session ids look like sess_0123456789ab: use the session_id \
                printed by `delta-sessions start` (`delta-sessions list` shows them all)"
                .to_owned(),
            Self::IdInUse { .. } => "choose another id, or leave out --id to get a generated \
                one; an ended session keeps its id until `delta-sessions cleanup` removes it"
                .to_owned(),
            Self::UnknownSession { .. } => {
                "run `delta-sessions list` to see the sessions here, or \
                `delta-sessions start` to create one; pass --sessions-dir if the session was \
                started from another directory"
                    .to_owned()
            }
            Self::Ended { .. } | Self::NotRunning { .. } | Self::Lost { .. } => {
                "start a new session with `delta-sessions start` (its state is not carried over); \
                 `delta-sessions cleanup` removes sessions that are no longer running"
                    .to_owned()
            }
            Self::NoCommand => "pass the command as the last argument or on standard input, e.g. \
                `echo 'ls -la' | delta-sessions exec SESSION_ID`"
                .to_owned(),
            Self::NulInCommand => {
                "remove the NUL byte; a command can still produce one, e.g. `printf '\\0'`"
                    .to_owned()
            }
            Self::StartFailed { .. } => "pass a shell (bash, sh, dash, zsh) or python3 that is on \
                PATH, or a path to one: `delta-sessions start bash`"
                .to_owned(),
            Self::Io(_) => "check that the directory exists and is writable, or choose \
                another with --sessions-dir"
                .to_owned(),
            Self::Metadata { .. } => "the file was edited or cut short; end the session with \
                `delta-sessions end`, or remove its directory"
                .to_owned(),
            Self::Holder { log, .. } => format!(
                "see {} for the session's own log; `delta-sessions end` stops the session",
                log.display()
            ),
        }
    }

    /// The process exit code for this error: 2 for command-line misuse, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::InvalidId(_) | Self::NoCommand | Self::NulInCommand => 2,
            Self::IdInUse { .. }
            | Self::UnknownSession { .. }
            | Self::Ended { .. }
            | Self::NotRunning { .. }
            | Self::Lost { .. }
            | Self::StartFailed { .. }
            | Self::Io(_)
            | Self::Metadata { .. }
            | Self::Holder { .. } => 1,
        }
    }

    /// `error` from an operation that `fs_err` does not wrap (a lock, a socket, the
    /// current directory), worded as fs-err words its own: `failed to {action}: {error}`.
    pub fn failed(action: impl std::fmt::Display, error: io::Error) -> Self {
        Self::Io(io::Error::new(
            error.kind(),
            format!("failed to {action}: {error}"),
        ))
    }
}

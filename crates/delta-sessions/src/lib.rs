//! `delta-sessions`: persistent shells and Python REPLs that agents drive one command at a
//! time. A session keeps its state (working directory, variables, functions, aliases,
//! options, Python globals) between `exec` calls, each of which returns the command's
//! complete stdout, stderr and exit code as JSON. See docs/sessions.md for the design.
//!
//! Layout: [`Sessions`] implements the commands; the holder (a re-executed
//! `delta-sessions`) owns each session's interpreter. The command line that parses
//! arguments and renders JSON is the `delta-sessions` binary of the `delta` crate.

mod capture;
mod client;
mod error;
mod holder;
mod id;
mod interp;
mod output;
mod owner;
mod procfs;
mod store;
mod takeover;
mod wire;

pub use capture::OUTPUT_CAP;
pub use client::{HOLDER_SUBCOMMAND, Sessions};
pub use error::SessionsError;
pub use holder::{TIMEOUT_EXIT_CODE, run_holder};
pub use id::{InvalidSessionId, SessionId};
pub use interp::Kind;
pub use output::{
    CleanupOutput, EndOutput, ErrorOutput, ExecOutput, ListEntry, ListStatus, StartOutput,
};
pub use owner::OWNER_DIR_ENV;
pub use store::{HistoryEntry, Metadata, State, Status};
pub use takeover::end_noted;

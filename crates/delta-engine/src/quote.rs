//! Text and command lines quoted for a POSIX shell, so that what the engine prints or
//! records (`delta continue …` hints, `command.txt`, `resolved_command`) can be pasted.

use std::path::Path;

/// `text` quoted when it needs it. Only a NUL byte makes quoting impossible (no path or
/// argument holds one); such text is returned as it is.
#[must_use]
pub fn quote(text: &str) -> String {
    shlex::try_quote(text).map_or_else(|_| text.to_owned(), |quoted| quoted.into_owned())
}

/// [`quote`] for a path.
#[must_use]
pub fn quote_path(path: &Path) -> String {
    quote(&path.to_string_lossy())
}

/// `argv` as one command line; with a NUL byte in it, its debug rendering.
#[must_use]
pub fn command_line(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| format!("{argv:?}"))
}

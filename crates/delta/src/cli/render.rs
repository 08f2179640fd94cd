//! Terminal output shared by the commands: styles, stderr notes, stdout, help examples.
//!
//! Styles are embedded as ANSI escapes and written through `anstream`, which strips them
//! unless the stream is a terminal and `NO_COLOR` is unset (`CLICOLOR_FORCE` forces them).

use std::io::{self, Write};

use anstyle::{AnsiColor, Effects, Style};
use clap::builder::styling::Styles;

/// The `error` label.
pub(crate) const ERROR: Style = AnsiColor::Red.on_default().effects(Effects::BOLD);
/// The `warning` label.
pub(crate) const WARNING: Style = AnsiColor::Yellow.on_default().effects(Effects::BOLD);
/// The `help` label and other pointers to what to do next.
pub(crate) const HELP: Style = AnsiColor::Cyan.on_default().effects(Effects::BOLD);
/// The `-->` that points at a file, line and column.
pub(crate) const LOCATION: Style = AnsiColor::Blue.on_default().effects(Effects::BOLD);
/// Section headers, matching clap's own (`Usage:`, `Commands:`).
pub(crate) const HEADER: Style = *Styles::styled().get_header();

/// `text` wrapped in `style`'s escapes.
pub(crate) fn styled(text: &str, style: Style) -> String {
    format!("{style}{text}{style:#}")
}

/// Write (possibly styled) text to stderr.
pub(crate) fn stderr(text: &str) {
    // stderr is where failures would be reported; when it fails itself there is nowhere
    // left to say so, and the command's result must not depend on it.
    let _ = anstream::stderr().write_all(text.as_bytes());
}

/// Style the labels of a diagnostic (`error:` first line, `  --> ` location, `  = help:`)
/// and end it with a newline. The text itself is left exactly as given.
pub(crate) fn diagnostic(text: &str) -> String {
    let mut styled_text = String::with_capacity(text.len() + 64);
    for (index, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("error:").filter(|_| index == 0) {
            styled_text.push_str(&styled("error", ERROR));
            styled_text.push(':');
            styled_text.push_str(rest);
        } else if let Some(rest) = line.strip_prefix("  --> ") {
            styled_text.push_str(&format!("  {} {rest}", styled("-->", LOCATION)));
        } else if let Some(rest) = line.strip_prefix("  = help:") {
            styled_text.push_str(&format!("  = {}:{rest}", styled("help", HELP)));
        } else {
            styled_text.push_str(line);
        }
        styled_text.push('\n');
    }
    styled_text
}

/// `warning: <message>` on stderr.
pub(crate) fn warning(message: &str) {
    stderr(&format!("{}: {message}\n", styled("warning", WARNING)));
}

/// Write a command's result to stdout in one piece.
///
/// A reader that stops early (`delta … | head`) closes the pipe; that ends the output
/// quietly, as it does for other Unix tools, instead of failing the command.
pub(crate) fn stdout(text: &str) -> Result<(), StdoutError> {
    let mut out = anstream::stdout().lock();
    stdout_result(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// The outcome of a write to stdout, where a closed pipe is not an error (see [`stdout`]).
pub(crate) fn stdout_result(result: io::Result<()>) -> Result<(), StdoutError> {
    match result {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        result => result.map_err(StdoutError),
    }
}

/// Standard output went away or failed (not a closed pipe, which ends output quietly).
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {0}")]
pub struct StdoutError(#[source] io::Error);

/// The `Examples:` section closing a command's `--help`: a comment line, then the command.
pub(crate) fn examples(list: &[(&str, &str)]) -> String {
    let mut text = styled("Examples:", HEADER);
    for (what, command) in list {
        text.push_str(&format!("\n  # {what}\n  {command}\n"));
    }
    text
}

//! The one result a program reading stdout is promised by the commands that drive a run
//! (`run`, `continue`, `fork`, `replay`): with `--format jsonl` a RESULT line last, with
//! `--format json` one JSON object; whatever ended the command, a command line clap
//! refused included. [`ResultSink`] prints it, once.

use std::ffi::OsString;

use super::error::CliError;
use super::render::{self, StdoutError};
use delta_engine::output::RefusalLine;
use delta_engine::run::RunId;

/// What stdout owes a program at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Promise {
    /// Text for people (or nothing but the result): no refusal on stdout.
    Nothing,
    /// One JSON object (`--format json`).
    Json,
    /// A RESULT line after the journal lines (`--format jsonl`).
    Jsonl,
}

/// The result of one command on stdout, printed at most once.
#[derive(Debug)]
pub(super) struct ResultSink {
    promise: Promise,
    /// The run asked for (`continue`) or created, once known.
    run_id: Option<RunId>,
    printed: bool,
}

impl ResultSink {
    /// The sink of a command that promised `promise`, about `run_id` when it names one.
    pub(super) fn new(promise: Promise, run_id: Option<RunId>) -> Self {
        Self {
            promise,
            run_id,
            printed: false,
        }
    }

    /// The run the refusal names: the one created, once it exists.
    pub(super) fn name_run(&mut self, run_id: RunId) {
        self.run_id = Some(run_id);
    }

    /// Prints the result `text` (a RESULT line, a RunResult): the promise is kept.
    pub(super) fn print(&mut self, text: &str) -> Result<(), StdoutError> {
        self.printed = true;
        render::stdout(text)
    }

    /// Prints the refusal of `error` when the promise is still open: the RESULT line of a
    /// run that could not be driven (`run_id` null unless a run is named), or the same
    /// object as the `--format json` result.
    pub(super) fn refuse(&mut self, error: &CliError) {
        if self.printed {
            return;
        }
        let line = RefusalLine::new(
            self.run_id.clone(),
            error.exit(),
            refusal_message(error),
            error.help(),
        );
        let text = match self.promise {
            Promise::Nothing => return,
            Promise::Jsonl => serde_json::to_string(&line).map(|line| line + "\n"),
            Promise::Json => serde_json::to_string_pretty(&line).map(|text| text + "\n"),
        };
        // The line is plain data; a failing stdout has nowhere left to report to.
        if let Ok(text) = text {
            self.printed = true;
            let _ = render::stdout(&text);
        }
    }
}

/// The error's first paragraph, without the `error: ` the diagnostics on stderr start
/// with (clap's usage lines and a configuration error's location are for people).
fn refusal_message(error: &CliError) -> String {
    let text = error.to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    text.split("\n\n").next().unwrap_or(text).trim().to_owned()
}

/// What a command line that did not parse promised: the command (`run`, `continue`,
/// `fork`, `replay`) and its `--format` as written, and for `continue` the run it names.
pub(super) fn promised_by(args: &[OsString]) -> (Promise, Option<RunId>) {
    let words: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let Some(command) = words.iter().find(|w| !w.starts_with('-')) else {
        return (Promise::Nothing, None);
    };
    if !matches!(*command, "run" | "continue" | "fork" | "replay") {
        return (Promise::Nothing, None);
    }
    let value = |name: &str| {
        let prefix = format!("{name}=");
        words.iter().enumerate().rev().find_map(|(index, word)| {
            if *word == name {
                words.get(index + 1).copied()
            } else {
                word.strip_prefix(&prefix)
            }
        })
    };
    let promise = match value("--format") {
        Some("jsonl") => Promise::Jsonl,
        Some("json") => Promise::Json,
        Some(_) | None => Promise::Nothing,
    };
    let run_id = (*command == "continue")
        .then(|| value("--run-id").and_then(|id| RunId::parse(id).ok()))
        .flatten();
    (promise, run_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn promised(line: &str) -> (Promise, Option<String>) {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        let (promise, run_id) = promised_by(&args);
        (promise, run_id.map(|id| id.as_str().to_owned()))
    }

    #[test]
    fn the_format_is_read_from_the_words_clap_refused() {
        assert_eq!(promised("delta run -m"), (Promise::Nothing, None));
        assert_eq!(
            promised("delta run --format jsonl --max-iterations 0"),
            (Promise::Jsonl, None)
        );
        assert_eq!(
            promised("delta continue --run-id r1 --format=json --bogus"),
            (Promise::Json, Some("r1".into()))
        );
        assert_eq!(
            promised("delta replay --run-id ../x --format jsonl --x"),
            (Promise::Jsonl, None)
        );
        assert_eq!(
            promised("delta list-runs --format json --x"),
            (Promise::Nothing, None)
        );
        assert_eq!(promised("delta run --format xml"), (Promise::Nothing, None));
    }
}

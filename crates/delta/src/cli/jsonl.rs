//! `--format jsonl`: stdout gets each journal line the moment the run appends it, byte for
//! byte as in `journal.jsonl`, then one RESULT line; the human stream stays on stderr.
//!
//! The lines are read back from the journal file after every engine event rather than
//! handed over by the engine: the journal is the one record, so what a program watching
//! stdout sees is exactly what `jq` finds on disk later, whoever appended the line (the
//! loop, the hooks, the takeover of a continued run).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use super::error::CliError;
use super::render;
use super::result::ResultSink;
use super::stream::StreamRenderer;
use delta_engine::engine::{EngineEvent, Observer};
use delta_engine::launch::Finished;
use delta_engine::output::{Exit, ResultLine, ResultTag};
use delta_engine::run::RunId;

/// The observer of a `--format jsonl` run.
pub(super) struct JsonlStream {
    human: StreamRenderer,
    /// The run's journal, once known.
    journal: Option<PathBuf>,
    /// Bytes of the journal already printed (or that were there before this process).
    printed: u64,
    /// The run asked for or started.
    run_id: Option<RunId>,
    /// The first failure to write stdout; reported when the run is over.
    failed: Option<render::StdoutError>,
}

impl JsonlStream {
    /// A stream rendering for humans on stderr through `human`. A continued run names its
    /// journal: the lines it holds already are not printed again.
    pub(super) fn new(human: StreamRenderer, continued: Option<(PathBuf, RunId)>) -> Self {
        let (journal, run_id) = continued.unzip();
        let printed = journal.as_deref().map_or(0, complete_lines_len);
        Self {
            human,
            journal,
            printed,
            run_id,
            failed: None,
        }
    }

    /// Prints the journal lines appended since the last call.
    fn catch_up(&mut self) {
        let Some(path) = &self.journal else {
            return;
        };
        let Ok(mut file) = File::open(path) else {
            return;
        };
        let mut fresh = Vec::new();
        if file.seek(SeekFrom::Start(self.printed)).is_err()
            || file.read_to_end(&mut fresh).is_err()
        {
            return;
        }
        // A line being written is printed once it is complete.
        let Some(end) = fresh.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let lines = &fresh[..=end];
        self.printed += lines.len() as u64;
        self.write(&String::from_utf8_lossy(lines));
    }

    fn write(&mut self, text: &str) {
        if self.failed.is_none()
            && let Err(error) = render::stdout(text)
        {
            self.failed = Some(error);
        }
    }

    /// Ends the stream: the journal's last lines, then the RESULT line of the run through
    /// `sink`. A run that could not be driven is left to the caller, which refuses it
    /// through the same sink (naming the run when one was created). Returns the exit code.
    ///
    /// `replayed`: a replay's outcome and the exit code it decides.
    pub(super) fn finish(
        mut self,
        outcome: Result<Finished, CliError>,
        replayed: Option<(&serde_json::Value, Exit)>,
        sink: &mut ResultSink,
    ) -> Result<Exit, CliError> {
        self.catch_up();
        if let Some(run_id) = self.run_id.clone() {
            sink.name_run(run_id);
        }
        if let Some(error) = self.failed {
            return Err(error.into());
        }
        let finished = outcome?;
        let exit = replayed.map_or_else(|| finished.result.exit_code(), |(_, exit)| exit);
        let line = ResultLine {
            line_type: ResultTag::Result,
            result: &finished.result,
            exit_code: exit.code(),
            replay: replayed.map(|(value, _)| value),
        };
        // Built from plain data; serde_json cannot fail on it.
        if let Ok(line) = serde_json::to_string(&line) {
            sink.print(&format!("{line}\n"))?;
        }
        Ok(exit)
    }
}

impl Observer for JsonlStream {
    fn on_event(&mut self, event: &EngineEvent) {
        if let EngineEvent::RunStarted {
            run_dir, run_id, ..
        } = event
            && self.journal.is_none()
        {
            self.journal = Some(run_dir.join("journal.jsonl"));
            self.run_id = RunId::parse(run_id).ok();
        }
        self.human.on_event(event);
        // A piece of streamed text comes before its THOUGHT is journaled.
        if !matches!(event, EngineEvent::LlmText { .. }) {
            self.catch_up();
        }
    }
}

/// The length of the complete lines of the file at `path` (0 when it cannot be read): a
/// torn last line, which the takeover cuts off, is not counted.
fn complete_lines_len(path: &std::path::Path) -> u64 {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| bytes.iter().rposition(|&b| b == b'\n'))
        .map_or(0, |end| end as u64 + 1)
}

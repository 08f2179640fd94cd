//! `engine.log`: the engine's own diagnostics for a run (timings, ids, retries, errors),
//! one line each: `2025-10-14T10:30:00.123Z INFO message`. While the run is driven it is
//! one more [`Observer`], so each step is reported once, as an [`EngineEvent`].
//!
//! Distinct from the journal (seed 001 §5.4.1): nothing is rebuilt from it, so a failed
//! write is not worth failing the run over and is ignored. Like the journal, each line is
//! one unbuffered append, so a killed process loses no line. The API key never reaches
//! it: the llm module's messages are written without it, and every line passes the run's
//! [`Redactor`] in case a message quotes what a process printed.
//!
//! The log follows its path: when the file there is no longer the one it holds (a tool
//! removed or moved `.delta/`, or someone rotated the log), the next line reopens the
//! path, so what the engine says after restoring a run's files lands where a user looks.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::event::{EngineEvent, Level, Observer};
use crate::run::Timestamp;
use crate::secrets::Redactor;

/// The open `engine.log` of one run.
#[derive(Debug)]
pub struct EngineLog {
    path: PathBuf,
    /// The open file and its (device, inode).
    file: Option<(File, (u64, u64))>,
    redactor: Redactor,
}

impl EngineLog {
    /// Opens `path` for appending; a log that cannot be opened is silently disabled until
    /// the path can be opened again.
    pub fn open(path: &Path, redactor: Redactor) -> Self {
        Self {
            path: path.to_path_buf(),
            file: open_append(path),
            redactor,
        }
    }

    /// The open file, reopened first when the file at the path is another one or gone.
    fn file(&mut self) -> Option<&mut File> {
        let here = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        if here.is_none() || self.file.as_ref().map(|(_, id)| *id) != here {
            self.file = open_append(&self.path);
        }
        self.file.as_mut().map(|(file, _)| file)
    }

    /// Appends one line (line breaks inside `message` are kept on the same record by
    /// indenting the continuation lines).
    pub fn write(&mut self, level: Level, message: &str) {
        let body = self
            .redactor
            .redact(message.trim_end())
            .replace('\n', "\n    ");
        let line = format!("{} {} {body}\n", Timestamp::now(), level.as_str());
        let Some(file) = self.file() else {
            return;
        };
        // See the module docs: the log is best effort by design.
        let _ = file.write_all(line.as_bytes());
    }

    /// [`Level::Info`].
    pub fn info(&mut self, message: &str) {
        self.write(Level::Info, message);
    }

    /// [`Level::Warn`].
    pub fn warn(&mut self, message: &str) {
        self.write(Level::Warn, message);
    }

    /// [`Level::Error`].
    pub fn error(&mut self, message: &str) {
        self.write(Level::Error, message);
    }
}

/// `path` opened for appending (created when missing), with its identity.
fn open_append(path: &Path) -> Option<(File, (u64, u64))> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    Some((file, (meta.dev(), meta.ino())))
}

impl Observer for EngineLog {
    fn on_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::IterationStarted { iteration, .. } => {
                self.info(&format!("iteration {iteration} started"));
            }
            EngineEvent::ContextBuilt {
                messages,
                journal_events,
                elapsed,
            } => self.info(&format!(
                "context built: {messages} messages from {journal_events} journal events in {} µs",
                elapsed.as_micros()
            )),
            EngineEvent::Warning { message } => self.warn(message),
            EngineEvent::LlmRequestStarted {
                invocation_id,
                model,
                endpoint,
                request_bytes,
            } => self.info(&format!(
                "invocation {invocation_id}: sending {request_bytes} bytes to {endpoint} (model \
                 {model})"
            )),
            EngineEvent::LlmRetry {
                invocation_id,
                detail,
            } => self.warn(&format!("invocation {invocation_id}: {detail}")),
            EngineEvent::LlmResponded {
                invocation_id,
                elapsed,
                usage,
                retries,
                tool_calls,
            } => self.info(&format!(
                "invocation {invocation_id}: answered in {} ms after {} attempt(s); tokens in \
                 {}{} out {}; {tool_calls} tool call(s)",
                elapsed.as_millis(),
                retries + 1,
                usage.map_or(0, |u| u.prompt_tokens),
                usage
                    .filter(|u| u.cached_tokens > 0)
                    .map_or_else(String::new, |u| format!(" ({} cached)", u.cached_tokens)),
                usage.map_or(0, |u| u.completion_tokens),
            )),
            EngineEvent::ToolFinished {
                action_id,
                tool_name,
                status,
                exit_code,
                elapsed,
                ..
            } => self.info(&format!(
                "action {action_id}: {tool_name} {} in {} ms (exit code {})",
                status.as_str(),
                elapsed.as_millis(),
                exit_code.map_or_else(|| "none".to_owned(), |c| c.to_string())
            )),
            EngineEvent::Detail { level, message } => self.write(*level, message),
            // Their lines are written as details where they happen.
            EngineEvent::ContextTrimmed { .. } | EngineEvent::ContextWindowExceeded { .. } => {}
            EngineEvent::RunFinished {
                status,
                iterations,
                error,
            } => self.info(&format!(
                "run ended {status} after {iterations} iteration(s){}",
                error
                    .as_ref()
                    .map(|e| format!(": {}: {}", e.error_type, e.message))
                    .unwrap_or_default()
            )),
            // A sub-agent's own engine.log has its every step; here its start and end.
            EngineEvent::Subagent { run_id, event, .. } => {
                if let EngineEvent::RunStarted { agent_name, .. } = event.as_ref() {
                    self.info(&format!(
                        "sub-agent run {run_id} (agent '{agent_name}') started"
                    ));
                } else if let EngineEvent::RunFinished { status, .. } = event.as_ref() {
                    self.info(&format!("sub-agent run {run_id} ended {status}"));
                }
            }
            // The run's creation or takeover is logged when it happens, with more than the
            // event says;
            // the start of a tool call is in its ACTION_REQUEST, the text (streamed or not)
            // in the THOUGHT.
            EngineEvent::RunStarted { .. }
            | EngineEvent::ToolStarted { .. }
            | EngineEvent::LlmText { .. }
            | EngineEvent::Thought { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_redacted_and_continuations_indented() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.log");
        let mut log = EngineLog::open(&path, Redactor::new(["sk-log-secret-42"]));
        log.error("generator failed; its stderr: key=sk-log-secret-42\nsecond line");
        let text = std::fs::read_to_string(&path).unwrap();
        let (_, rest) = text.split_once(' ').unwrap();
        assert_eq!(
            rest,
            "ERROR generator failed; its stderr: key=[REDACTED]\n    second line\n"
        );
    }

    // Issue 12 item 1: after a tool removed `.delta/`, the engine's account of it went to
    // the deleted file.
    #[test]
    fn a_log_removed_or_moved_away_is_reopened_at_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.log");
        let mut log = EngineLog::open(&path, Redactor::default());
        log.info("one");
        std::fs::rename(&path, dir.path().join("moved.log")).unwrap();
        log.info("two");
        std::fs::remove_file(&path).unwrap();
        log.info("three");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("INFO three\n"), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
        let moved = std::fs::read_to_string(dir.path().join("moved.log")).unwrap();
        assert_eq!(moved.lines().count(), 1, "{moved}");
    }
}

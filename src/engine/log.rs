//! `engine.log`: the engine's own diagnostics for a run (timings, ids, retries, errors),
//! one line each: `2025-10-14T10:30:00.123Z INFO message`.
//!
//! Distinct from the journal (seed 001 §5.4.1): nothing is rebuilt from it, so a failed
//! write is not worth failing the run over and is ignored. Like the journal, each line is
//! one unbuffered append, so a killed process loses no line. The API key never reaches
//! it: the llm module's messages are written without it, and every line passes the run's
//! [`Redactor`] in case a message quotes what a process printed.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::run::Timestamp;
use crate::secrets::Redactor;

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Normal progress.
    Info,
    /// Something degraded (a retry, a skipped source).
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// The open `engine.log` of one run.
#[derive(Debug)]
pub struct EngineLog {
    file: Option<File>,
    redactor: Redactor,
}

impl EngineLog {
    /// Opens `path` for appending; a log that cannot be opened is silently disabled.
    pub fn open(path: &Path, redactor: Redactor) -> Self {
        let file = OpenOptions::new().create(true).append(true).open(path).ok();
        Self { file, redactor }
    }

    /// Appends one line (line breaks inside `message` are kept on the same record by
    /// indenting the continuation lines).
    pub fn write(&mut self, level: Level, message: &str) {
        let Some(file) = &mut self.file else {
            return;
        };
        let body = self
            .redactor
            .redact(message.trim_end())
            .replace('\n', "\n    ");
        let line = format!("{} {} {body}\n", Timestamp::now(), level.as_str());
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
}

//! The run's own files under a tool's feet: a tool that deletes or moves `.delta/` (or just
//! the journal) would leave the engine appending to a file nobody can read, rebuilding the
//! model's context from a path that holds nothing, and looping blind to its budget. After
//! every tool and before every iteration the engine checks that its journal is still the
//! file at its path; when it is not, it restores the journal from the file it holds open,
//! re-creates the run's directories, records what happened, and stops the run FAILED.

use super::{ActiveRun, Level, Observer, Stop};
use crate::journal::{Displacement, EventPayload, MessageLevel, SystemMessage};
use crate::run::{ErrorInfo, ErrorType, RunLock, create_record_dirs};

/// `error.type` of a run stopped because its files were removed.
pub const RUN_FILES_REMOVED: &str = "RunFilesRemoved";

impl ActiveRun {
    /// `Some(stop)` when the journal was deleted, moved or replaced since the last check
    /// (`during` says what ran meanwhile, e.g. "tool `cleanup`"); the journal is then
    /// restored and the reason journaled.
    ///
    /// # Errors
    /// When the journal cannot be restored or written.
    pub(super) fn guard_run_files(
        &mut self,
        during: &str,
        observer: &mut dyn Observer,
    ) -> Result<Option<Stop>, super::EngineError> {
        let Some(displacement) = self.journal.displaced() else {
            return Ok(None);
        };
        self.journal.restore()?;
        create_record_dirs(&self.paths)?;
        // The old lock went with the old file; a new one keeps other processes out while
        // the run is recorded as stopped.
        if let Ok(lock) = RunLock::try_acquire(&self.paths.lock()) {
            self._lock = lock;
        }
        let what = match displacement {
            Displacement::Gone => "deleted or moved away",
            Displacement::Replaced => "replaced by another file",
        };
        let message = format!(
            "The run's journal ({}) was {what} during {during}. It was restored from the copy \
             the engine held open, with every event up to now; records under io/ written \
             before may be lost. The run stops here rather than go on without its memory.",
            self.journal.path().display()
        );
        // engine.log follows its path, so this line starts the restored run's log.
        observer.detail(Level::Error, message.clone());
        self.journal
            .append(EventPayload::SystemMessage(SystemMessage {
                level: MessageLevel::Error,
                content: message.clone(),
            }))?;
        Ok(Some(Stop::Failed(
            ErrorInfo::new(ErrorType::Other(RUN_FILES_REMOVED.to_owned()), message).with_details(
                format!(
                    "fix the tool, then go on: delta continue --run-id {} -w {} -m \"...\"",
                    self.metadata.run_id.as_str(),
                    self.paths.workspace().display()
                ),
            ),
        )))
    }
}

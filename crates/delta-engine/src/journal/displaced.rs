//! A journal whose file was deleted or moved while the engine writes it (a tool's
//! `rm -rf .delta`, `mv .delta x`, `git clean -fdx`): the writer still appends to the old
//! file, which nobody will ever read. [`Journal::displaced`] notices, and
//! [`Journal::restore`] puts the journal back at its path from the file the writer holds.

use std::io::{Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;

use fs_err::{File, OpenOptions};

use super::{Journal, JournalError};

/// What became of the journal's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Displacement {
    /// Nothing is at the path any more (deleted, or moved away with its directory).
    Gone,
    /// Another file is at the path (the old one was replaced or emptied by re-creation).
    Replaced,
}

impl Journal {
    /// Whether the file this writer appends to is no longer the one at its path: the
    /// path names nothing, another file (device and inode differ), or the open file has
    /// no name left (`nlink == 0`).
    #[must_use]
    pub fn displaced(&self) -> Option<Displacement> {
        let state = self.lock_state();
        let held = state.file.metadata().ok()?;
        match std::fs::metadata(&self.path) {
            Err(_) => Some(Displacement::Gone),
            Ok(at_path) if at_path.dev() != held.dev() || at_path.ino() != held.ino() => {
                Some(Displacement::Replaced)
            }
            Ok(_) if held.nlink() == 0 => Some(Displacement::Gone),
            Ok(_) => None,
        }
    }

    /// Writes everything the open file holds to a new file at the journal's path (its
    /// directory re-created) and appends there from now on. Linux: the open file is read
    /// back through `/proc/self/fd`, which reaches a deleted file too.
    ///
    /// # Errors
    /// [`JournalError::Io`] when the old file cannot be read or the new one written.
    pub fn restore(&self) -> Result<(), JournalError> {
        use std::os::fd::AsRawFd;
        let mut state = self.lock_state();
        let proc_path = format!("/proc/self/fd/{}", state.file.as_raw_fd());
        let mut old = File::open(&proc_path)?;
        old.seek(SeekFrom::Start(0))?;
        if let Some(dir) = self.path.parent() {
            fs_err::create_dir_all(dir)?;
        }
        // The path may hold a stranger's file: a new inode is written, then renamed over.
        let tmp = self.path.with_extension("jsonl.restored");
        let mut new = File::create(&tmp)?;
        std::io::copy(&mut old, &mut new)?;
        new.sync_all()?;
        fs_err::rename(&tmp, &self.path)?;
        let file = OpenOptions::new().append(true).open(&self.path)?;
        state.len = file.metadata()?.len();
        state.file = file;
        Ok(())
    }
}

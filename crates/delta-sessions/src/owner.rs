//! The notes that tie a session to the engine tool call that started it: when the engine
//! names the call's record directory in [`OWNER_DIR_ENV`], `start` notes each session
//! there before its holder is spawned, so that whoever takes over a run whose engine was
//! killed mid-call can end the holders the call left behind (they run in their own
//! process session, out of reach of the call's process group).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::id::SessionId;

/// The variable the engine sets for a tool call: the call's record directory
/// (`io/tool_executions/{action_id}/` of its run).
pub const OWNER_DIR_ENV: &str = "DELTA_TOOL_RECORD_DIR";

/// The subdirectory of the owner's record directory holding one note per session.
const NOTES: &str = "sessions";

/// One note: where the session lives and its id.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Note {
    pub(crate) sessions_dir: PathBuf,
    pub(crate) session_id: String,
}

/// Notes session `id` of `sessions_dir` in `owner_dir`. Best effort: a tool whose sandbox
/// cannot write the run's records still gets its session; only the cleanup after a killed
/// engine misses it.
pub(crate) fn note(owner_dir: &Path, sessions_dir: &Path, id: &SessionId) {
    let dir = owner_dir.join(NOTES);
    let note = Note {
        sessions_dir: sessions_dir.to_owned(),
        session_id: id.as_str().to_owned(),
    };
    if std::fs::create_dir_all(&dir).is_ok()
        && let Ok(text) = serde_json::to_string_pretty(&note)
    {
        let _ = std::fs::write(dir.join(format!("{}.json", id.as_str())), text + "\n");
    }
}

/// The notes in `owner_dir`, unreadable ones skipped.
pub(crate) fn notes(owner_dir: &Path) -> Vec<Note> {
    let Ok(entries) = std::fs::read_dir(owner_dir.join(NOTES)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let text = std::fs::read_to_string(entry.path()).ok()?;
            serde_json::from_str(&text).ok()
        })
        .collect()
}

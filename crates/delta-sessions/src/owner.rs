//! The notes that tie a session to the engine tool call that started it: when the engine
//! names the call's record directory in [`OWNER_DIR_ENV`], `start` notes each session
//! there before its holder is spawned, so that whoever takes over a run whose engine was
//! killed mid-call can end the holders the call left behind (they run in their own
//! process session, out of reach of the call's process group).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::client::Sessions;
use crate::id::SessionId;

/// The variable the engine sets for a tool call: the call's record directory
/// (`io/tool_executions/{action_id}/` of its run).
pub const OWNER_DIR_ENV: &str = "DELTA_TOOL_RECORD_DIR";

/// The subdirectory of the owner's record directory holding one note per session.
const NOTES: &str = "sessions";

/// The end reason recorded in the sessions this module ends.
const REASON: &str =
    "the engine tool call that started it was killed with its engine, and the run was taken over";

/// One note: where the session lives and its id.
#[derive(Debug, Serialize, Deserialize)]
struct Note {
    sessions_dir: PathBuf,
    session_id: String,
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

/// Ends, through the same path as `delta-sessions end`, every session noted in
/// `owner_dir` that is still active on this host; returns their ids, sorted. Sessions that
/// ended before, vanished, or run on another host are left as they are.
pub fn end_noted(owner_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(owner_dir.join(NOTES)) else {
        return Vec::new();
    };
    let mut ended: Vec<String> = entries
        .flatten()
        .filter_map(|entry| {
            let text = std::fs::read_to_string(entry.path()).ok()?;
            let note: Note = serde_json::from_str(&text).ok()?;
            let id = SessionId::parse(&note.session_id).ok()?;
            Sessions::new(&note.sessions_dir)
                .ok()?
                .end_because(&id, REASON)
                .ok()?;
            Some(note.session_id)
        })
        .collect();
    ended.sort();
    ended
}

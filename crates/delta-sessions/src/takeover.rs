//! Ending the sessions a killed engine's tool call left behind, from the notes `owner`
//! keeps (the takeover of a run, `delta continue` and the Janitor).

use std::path::Path;

use crate::client::Sessions;
use crate::id::SessionId;
use crate::owner::notes;

/// The end reason recorded in the sessions ended here.
const REASON: &str =
    "the engine tool call that started it was killed with its engine, and the run was taken over";

/// Ends, through the same path as `delta-sessions end`, every session noted in
/// `owner_dir` that is still active on this host; returns their ids, sorted. Sessions that
/// ended before, vanished, or run on another host are left as they are.
pub fn end_noted(owner_dir: &Path) -> Vec<String> {
    let mut ended: Vec<String> = notes(owner_dir)
        .into_iter()
        .filter_map(|note| {
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

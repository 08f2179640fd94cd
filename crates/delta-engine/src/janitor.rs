//! The Janitor of seed 002 §3.5: is the recorded owner of a RUNNING run gone, and how
//! does the run end that its dead owner left? [`crate::resume`] calls it, with the run's
//! lock held, before a RUNNING run is continued.

use std::fmt;

use crate::journal::{Event, EventPayload, Journal, JournalError, RunEnd};
use crate::run::{
    ErrorInfo, ErrorType, FinalStatus, Liveness, Metadata, ProcessIdentity, RunId, RunPaths,
    RunStatus, Timestamp, process_alive, result_value,
};

/// What the Janitor concluded about the recorded owner of a RUNNING run it took over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerFinding {
    /// No process has the recorded pid.
    Dead,
    /// The pid now belongs to a different process (another start time or name).
    PidReused {
        /// That process's name, when readable.
        current_name: Option<String>,
    },
    /// Recorded on another host; taken over because of `--force`.
    ForcedFromOtherHost {
        /// This host.
        this_host: String,
    },
}

/// The Janitor's cleanup of an orphaned RUNNING run (RUNNING → INTERRUPTED).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JanitorReport {
    /// The run.
    pub run_id: RunId,
    /// The recorded owner's pid.
    pub pid: u32,
    /// Its host.
    pub hostname: String,
    /// Its recorded process name.
    pub process_name: String,
    /// What became of it.
    pub finding: OwnerFinding,
    /// The end the process had journaled (RUN_END, or the model's final answer) but not
    /// yet written to `metadata.json` when it died; the run is restored to it instead of
    /// INTERRUPTED.
    pub restored: Option<FinalStatus>,
    /// The tools the dead owner left running, whose process groups were killed.
    pub ended_tools: Vec<EndedTool>,
}

/// A tool call still running when its engine died, ended by the Janitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedTool {
    /// The call's action id.
    pub action_id: String,
    /// The tool's name, when the journal has its ACTION_REQUEST.
    pub tool_name: Option<String>,
    /// The process group killed, if it still ran.
    pub pgid: Option<i32>,
    /// The delta-sessions sessions the call had started, whose holders were ended.
    pub sessions: Vec<String>,
}

impl EndedTool {
    /// What the journal and the user are told.
    #[must_use]
    pub fn message(&self) -> String {
        let mut ended = Vec::new();
        if let Some(pgid) = self.pgid {
            ended.push(format!("its process group {pgid}"));
        }
        if !self.sessions.is_empty() {
            ended.push(format!(
                "the holders of the sessions it started ({})",
                self.sessions.join(", ")
            ));
        }
        let verb = if ended.len() == 1 { "was" } else { "were" };
        format!(
            "The tool `{}` (action {}) was still running when the engine running it died: {} \
             {verb} killed before the run was taken over, and the call was not run again.",
            self.tool_name.as_deref().unwrap_or("?"),
            self.action_id,
            ended.join(" and ")
        )
    }
}

/// Ends every tool call the dead owner of the run at `paths` left running (those whose
/// `process.json` record is still in `io/tool_executions/`), in action id order: its
/// process group, and the delta-sessions holders it started, which run in their own
/// process sessions. `events` names the tools.
#[must_use]
pub fn end_orphaned_tools(paths: &RunPaths, events: &[Event]) -> Vec<EndedTool> {
    let Ok(entries) = std::fs::read_dir(paths.tool_executions_dir()) else {
        return Vec::new();
    };
    let mut ended: Vec<EndedTool> = entries
        .flatten()
        .filter_map(|entry| {
            let dir = entry.path();
            // Only a call still in flight keeps its record; the sessions a finished call
            // started are the model's to use.
            if !dir.join(crate::process::orphans::RECORD).exists() {
                return None;
            }
            let pgid = crate::process::orphans::end(&dir);
            let sessions = delta_sessions::end_noted(&dir);
            if pgid.is_none() && sessions.is_empty() {
                return None;
            }
            let action_id = entry.file_name().to_string_lossy().into_owned();
            let tool_name = events.iter().find_map(|event| {
                event
                    .payload
                    .as_action_request()
                    .filter(|request| request.action_id == action_id)
                    .map(|request| request.tool_name.clone())
            });
            Some(EndedTool {
                action_id,
                tool_name,
                pgid,
                sessions,
            })
        })
        .collect();
    ended.sort_by(|a, b| a.action_id.cmp(&b.action_id));
    ended
}

impl JanitorReport {
    /// The lines `delta continue` shows on stderr: the seed's
    /// `[Janitor] Cleaned up orphaned run X (dead process)`, then what was found.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "[Janitor] Cleaned up orphaned run {} (dead process)",
            self.run_id
        )];
        lines.push(match &self.finding {
            OwnerFinding::Dead => format!(
                "[Janitor] Process {} ({}) no longer exists; the run was marked INTERRUPTED",
                self.pid, self.process_name
            ),
            OwnerFinding::PidReused { current_name } => format!(
                "[Janitor] PID {} now belongs to another process ({}); the run's own process ({}) \
                 is gone and the run was marked INTERRUPTED",
                self.pid,
                current_name.as_deref().unwrap_or("unknown"),
                self.process_name
            ),
            OwnerFinding::ForcedFromOtherHost { this_host } => format!(
                "[Janitor] --force: process {} on host '{}' could not be checked from '{}' and \
                 was taken to be dead; the run was marked INTERRUPTED",
                self.pid, self.hostname, this_host
            ),
        });
        for tool in &self.ended_tools {
            lines.push(format!("[Janitor] {}", tool.message()));
        }
        if let Some(status) = self.restored {
            lines.push(format!(
                "[Janitor] The journal shows the run had ended {} before its process died; \
                 metadata.json now says so too",
                RunStatus::from(status)
            ));
        }
        lines
    }
}

impl fmt::Display for JanitorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

/// Why the Janitor leaves a RUNNING run to its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// A process with exactly the recorded identity runs on this host.
    Alive,
    /// The owner is on another host, which cannot be checked from here (no `--force`).
    OtherHost,
}

/// What became of the owner `identity` of a RUNNING run whose lock was free.
///
/// A process with exactly the recorded identity (pid and start time, or pid and name
/// where no start time was recorded) that does not hold the lock can only be an
/// implementation that never locks; it is treated as alive, as seed 002 §3.5.2 would.
///
/// # Errors
/// [`Keep`] when the run must be left alone.
pub fn examine(identity: &ProcessIdentity, force: bool) -> Result<OwnerFinding, Keep> {
    if identity.is_on_this_host() {
        match process_alive(identity) {
            Liveness::Alive => Err(Keep::Alive),
            Liveness::Dead => Ok(OwnerFinding::Dead),
            Liveness::PidReused => Ok(OwnerFinding::PidReused {
                current_name: process_name(identity.pid),
            }),
        }
    } else if force {
        Ok(OwnerFinding::ForcedFromOtherHost {
            this_host: ProcessIdentity::current().hostname,
        })
    } else {
        Err(Keep::OtherHost)
    }
}

/// The error of a run whose owner stopped without recording an end.
#[must_use]
pub fn orphaned(metadata: &Metadata) -> ErrorInfo {
    ErrorInfo::new(
        ErrorType::Interrupted,
        format!(
            "the process running this run (PID {} on {}) stopped without recording an end",
            metadata.pid, metadata.hostname
        ),
    )
    .with_details("cleaned up by the Janitor of `delta continue`")
}

/// How [`close`] ended the dead owner's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// The journal already held the end (RUN_END, or the model's final answer).
    Restored(FinalStatus),
    /// The run was interrupted; the repairs were journaled.
    Interrupted,
}

/// Closes the dead owner's part of the journal (`events`, as read before `journal` was
/// opened) as that process would have, and records the end in `metadata`:
///
/// - the journal ends with RUN_END (the process died before writing metadata.json): that
///   end is restored;
/// - it ends with the model's final answer (a THOUGHT without tool calls): RUN_END
///   COMPLETED with that answer as the result, so the model is not asked again;
/// - otherwise: `repairs` (the answers of the calls left without result) and RUN_END
///   INTERRUPTED are journaled.
///
/// # Errors
/// When the journal cannot be written.
pub fn close(
    journal: &Journal,
    events: &[Event],
    repairs: &[EventPayload],
    metadata: &mut Metadata,
    now: Timestamp,
) -> Result<Closed, JournalError> {
    match events.last().map(|event| &event.payload) {
        Some(EventPayload::RunEnd(end)) => {
            restore_end(metadata, end, now);
            Ok(Closed::Restored(end.status))
        }
        Some(EventPayload::Thought(thought)) if thought.tool_calls.is_empty() => {
            let result = result_value(&thought.content);
            journal.append(EventPayload::RunEnd(RunEnd {
                status: FinalStatus::Completed,
                error: None,
                result: Some(result.clone()),
            }))?;
            metadata.complete(result, now);
            Ok(Closed::Restored(FinalStatus::Completed))
        }
        Some(_) | None => {
            for event in repairs {
                journal.append(event.clone())?;
            }
            let orphaned = orphaned(metadata);
            journal.append(EventPayload::RunEnd(RunEnd {
                status: FinalStatus::Interrupted,
                error: Some(orphaned.clone()),
                result: None,
            }))?;
            metadata.interrupt(orphaned, now);
            Ok(Closed::Interrupted)
        }
    }
}

/// Puts the end a process journaled (its RUN_END) into the metadata it died before writing.
fn restore_end(metadata: &mut Metadata, end: &RunEnd, now: Timestamp) {
    let error = || {
        end.error.clone().unwrap_or_else(|| {
            ErrorInfo::new(
                ErrorType::Interrupted,
                "the run ended without a recorded error",
            )
        })
    };
    match end.status {
        FinalStatus::Completed => {
            metadata.complete(end.result.clone().unwrap_or(serde_json::Value::Null), now)
        }
        FinalStatus::Failed => metadata.fail(error(), now),
        FinalStatus::Interrupted => metadata.interrupt(error(), now),
        FinalStatus::WaitingForInput => metadata.wait_for_input(now),
    }
}

/// Whether the run is RUNNING under a process of this host that no longer exists (its pid
/// is free or belongs to another process).
pub fn owner_gone(metadata: &Metadata) -> bool {
    let identity = metadata.process_identity();
    metadata.status == RunStatus::Running
        && identity.is_on_this_host()
        && process_alive(&identity) != Liveness::Alive
}

/// The name of the process that has `pid` now.
fn process_name(pid: u32) -> Option<String> {
    delta_procfs::read(i32::try_from(pid).ok()?).map(|stat| stat.comm)
}

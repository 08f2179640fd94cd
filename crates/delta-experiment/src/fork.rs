//! `delta fork`: a new run whose journal is a prefix of another run's, ready to be
//! continued like `delta continue` (issue 17).
//!
//! The parent is only read. The fork's journal is the parent's events `1..=seq` written
//! again line by line (RUN_START names the fork); the `io/` records those events point to
//! are hard links to the parent's (write-once files, so referenced, not duplicated); its
//! `metadata.json` is INTERRUPTED with `parent: {run_id, seq}`, so that the continue path
//! takes it over as it takes over any interrupted run. Workspace files are not versioned:
//! the fork sees the workspace as it is now, or a fresh workspace seeded from a directory
//! (`--work-dir-from`).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use delta_engine::journal::{Event, EventPayload};
use delta_engine::run::{
    ParentRef, ProcessIdentity, RunId, RunPaths, RunStateError, RunStatus, Timestamp, Usage,
    create_run, write_metadata,
};
use delta_engine::secrets::Redactor;
use delta_engine::trajectory::{Trajectory, TrajectoryError};
use delta_engine::workspace::{WorkspaceError, seed_workspace};

/// How many valid boundaries an [`ForkError::InvalidSeq`] names on each side of the seq.
const NEAREST: usize = 3;

/// Why a fork could not be made. Nothing of the parent changes in any case.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The parent run is missing, or its metadata or journal cannot be read.
    #[error(transparent)]
    Parent(#[from] TrajectoryError),
    /// The fork's directory or metadata cannot be written.
    #[error(transparent)]
    Run(#[from] RunStateError),
    /// `--at` is not an event boundary where the conversation is consistent.
    #[error("cannot fork run {run_id} at seq {seq}: {why}")]
    InvalidSeq {
        /// The parent run.
        run_id: RunId,
        /// The seq asked for.
        seq: u64,
        /// Why it is not a boundary.
        why: &'static str,
        /// The valid boundaries nearest to it, in order.
        nearest: Vec<u64>,
    },
    /// The parent's journal has no boundary at all (nothing the model could go on from).
    #[error("run {run_id} has no event to fork at: its journal holds no complete step yet")]
    NoBoundary {
        /// The parent run.
        run_id: RunId,
    },
    /// The fresh workspace of `--work-dir-from` could not be made.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// A file of the fork could not be written; the message names it.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ForkError {
    /// How to fix it, when there is something to say beyond the message.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            ForkError::InvalidSeq { nearest, .. } => Some(format!(
                "fork after RUN_START, an ACTION_RESULT batch or a USER_MESSAGE; valid --at values nearby: {}",
                nearest
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            ForkError::Workspace(error) => error.help(),
            ForkError::Parent(_)
            | ForkError::Run(_)
            | ForkError::NoBoundary { .. }
            | ForkError::Io(_) => None,
        }
    }
}

/// What to fork.
#[derive(Debug, Clone)]
pub struct ForkSpec {
    /// The workspace holding the parent (absolute); the fork is created there too.
    pub workspace: PathBuf,
    /// The parent run.
    pub parent: RunId,
    /// The last parent event the fork keeps [default: the last boundary].
    pub at: Option<u64>,
    /// The fork's id [default: a generated one].
    pub new_run_id: Option<RunId>,
    /// Create the fork in a fresh numbered workspace of the parent's agent holding a copy
    /// of this directory's files, instead of in the parent's workspace.
    pub work_dir_from: Option<PathBuf>,
}

/// A fork as created, INTERRUPTED and ready to be continued.
#[derive(Debug, Clone)]
pub struct Forked {
    /// The fork's files.
    pub paths: RunPaths,
    /// Where it comes from.
    pub parent: ParentRef,
}

/// The seqs after which the conversation is consistent: an ACTION_RESULT that answers the
/// last open tool call, or a RUN_START (the task) or USER_MESSAGE with no tool call open. Never between a THOUGHT
/// and its results, since chat APIs reject an assistant tool call without its answer.
#[must_use]
pub fn boundaries(events: &[Event]) -> Vec<u64> {
    let mut open: HashSet<&str> = HashSet::new();
    let mut valid = Vec::new();
    for event in events {
        let closes_step = match &event.payload {
            EventPayload::Thought(thought) => {
                open.extend(thought.tool_calls.iter().map(|call| call.id.as_str()));
                false
            }
            EventPayload::ActionResult(result) => {
                open.remove(result.tool_call_id.as_str());
                true
            }
            EventPayload::RunStart(_) | EventPayload::UserMessage(_) => true,
            EventPayload::ActionRequest(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => false,
        };
        if closes_step && open.is_empty() {
            valid.push(event.seq);
        }
    }
    valid
}

/// Creates the fork described by `spec`.
///
/// # Errors
/// [`ForkError::InvalidSeq`] (with the nearest valid seqs) and [`ForkError::NoBoundary`]
/// before anything is created; I/O errors naming the file.
pub fn fork(spec: &ForkSpec) -> Result<Forked, ForkError> {
    let Trajectory {
        paths: parent_paths,
        metadata: parent_meta,
        events,
        ..
    } = Trajectory::load(&spec.workspace, &spec.parent)?;
    let valid = boundaries(&events);
    let seq = choose(&spec.parent, &valid, spec.at)?;
    let kept = events
        .get(..usize::try_from(seq).unwrap_or(usize::MAX))
        .unwrap_or(&events);

    let new_id = spec
        .new_run_id
        .clone()
        .unwrap_or_else(|| RunId::generate(chrono::Utc::now()));
    let (workspace, workspace_id) = match &spec.work_dir_from {
        Some(dir) => {
            let seeded = seed_workspace(&parent_meta.agent_home, dir)?;
            (seeded.path, Some(seeded.id))
        }
        None => (spec.workspace.clone(), parent_meta.workspace_id.clone()),
    };
    // The parent's records were masked by its own run; the inherited key variables are
    // masked again in case a variable now holds a key the parent did not know.
    let redactor = Redactor::inherited(|name| std::env::var(name).ok());
    let paths = create_run(&workspace, &new_id)?;
    write_journal(&paths.journal(), kept, &new_id, &redactor)?;
    for event in kept {
        link_records(&parent_paths, &paths, event)?;
    }

    let now = Timestamp::now();
    let mut meta = parent_meta;
    let parent = ParentRef {
        run_id: spec.parent.clone(),
        seq,
        work_dir: spec.work_dir_from.as_ref().map(|_| spec.workspace.clone()),
    };
    meta.work_dir = workspace;
    meta.workspace_id = workspace_id;
    meta.replay_of = None;
    meta.run_id = new_id;
    meta.status = RunStatus::Interrupted;
    meta.created_at = now;
    meta.updated_at = now;
    meta.end_time = Some(now);
    meta.iterations = u32::try_from(
        kept.iter()
            .filter(|e| matches!(e.payload, EventPayload::Thought(_)))
            .count(),
    )
    .unwrap_or(u32::MAX);
    meta.error = None;
    meta.result = None;
    meta.usage = Usage::default();
    meta.budget = None;
    meta.set_owner(&ProcessIdentity::current(), now);
    meta.parent = Some(parent.clone());
    // Sub-agents the kept calls started stay the parent's: their results are in the fork's
    // journal, their runs are not the fork's children. A fork is a top-level run.
    meta.children = Vec::new();
    meta.subtree = None;
    meta.called_by = None;
    meta.trace_id = Some(delta_engine::run::new_trace_id());
    write_metadata(&paths.metadata(), &meta, &redactor)?;
    Ok(Forked { paths, parent })
}

/// `at`, checked against the valid boundaries; the last one when `at` is not given.
fn choose(run_id: &RunId, valid: &[u64], at: Option<u64>) -> Result<u64, ForkError> {
    let Some(&last) = valid.last() else {
        return Err(ForkError::NoBoundary {
            run_id: run_id.clone(),
        });
    };
    let Some(seq) = at else { return Ok(last) };
    if valid.binary_search(&seq).is_ok() {
        return Ok(seq);
    }
    let why = if seq == 0 || seq > last {
        "it is outside the journal's complete steps"
    } else {
        "the conversation is not consistent there (a THOUGHT waits for its results)"
    };
    let split = valid.partition_point(|&v| v < seq);
    let nearest = valid
        .get(split.saturating_sub(NEAREST)..(split + NEAREST).min(valid.len()))
        .unwrap_or(valid)
        .to_vec();
    Err(ForkError::InvalidSeq {
        run_id: run_id.clone(),
        seq,
        why,
        nearest,
    })
}

/// Writes `events` as the fork's journal, RUN_START naming `new_id`, the secrets of
/// `redactor` masked, and syncs it.
fn write_journal(
    path: &Path,
    events: &[Event],
    new_id: &RunId,
    redactor: &Redactor,
) -> Result<(), ForkError> {
    let mut bytes = Vec::new();
    for event in events {
        let mut event = event.clone();
        if let EventPayload::RunStart(start) = &mut event.payload {
            start.run_id = new_id.clone();
        }
        serde_json::to_writer(&mut bytes, &event).map_err(std::io::Error::from)?;
        bytes.push(b'\n');
    }
    let mut file = fs_err::File::create_new(path)?;
    file.write_all(&redactor.redact_bytes(&bytes))?;
    Ok(file.sync_all()?)
}

/// Hard-links the `io/` record `event` points to (an LLM invocation, a tool execution, a
/// hook's directory) from the parent into the fork. A record that is missing (never
/// written, e.g. a repaired call) is skipped: the journal is what the run is made of.
fn link_records(parent: &RunPaths, fork: &RunPaths, event: &Event) -> Result<(), ForkError> {
    let relative = match &event.payload {
        EventPayload::Thought(thought) => {
            Path::new("io/invocations").join(&thought.llm_invocation_ref)
        }
        EventPayload::ActionResult(result) => {
            Path::new("io/tool_executions").join(&result.execution_ref)
        }
        EventPayload::HookExecutionAudit(audit) => PathBuf::from(&audit.io_path_ref),
        EventPayload::ClaudeHook(hook) => PathBuf::from(&hook.io_path_ref),
        EventPayload::RunStart(_)
        | EventPayload::UserMessage(_)
        | EventPayload::ActionRequest(_)
        | EventPayload::HumanInputRequest(_)
        | EventPayload::HumanInputReceived(_)
        | EventPayload::SystemMessage(_)
        | EventPayload::RunEnd(_) => return Ok(()),
    };
    // The refs come from the engine, but a journal is a file: never follow one out of io/.
    if relative
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Ok(());
    }
    link_tree(&parent.dir().join(&relative), &fork.dir().join(&relative))
}

fn link_tree(from: &Path, to: &Path) -> Result<(), ForkError> {
    let Ok(file_type) = std::fs::symlink_metadata(from).map(|m| m.file_type()) else {
        return Ok(());
    };
    if file_type.is_dir() {
        fs_err::create_dir_all(to)?;
        for entry in fs_err::read_dir(from)? {
            let entry = entry?;
            link_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if file_type.is_file() {
        if to.exists() {
            return Ok(());
        }
        if let Some(dir) = to.parent() {
            fs_err::create_dir_all(dir)?;
        }
        // A fresh workspace may sit on another file system, where no link can be made.
        fs_err::hard_link(from, to).or_else(|_| fs_err::copy(from, to).map(|_| ()))?;
        Ok(())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_boundaries_surround_the_seq() {
        let id = RunId::parse("r1").expect("id");
        let valid = [3, 5, 9, 12, 20, 30, 41];
        match choose(&id, &valid, Some(13)) {
            Err(ForkError::InvalidSeq { nearest, .. }) => {
                assert_eq!(nearest, vec![5, 9, 12, 20, 30, 41]);
            }
            other => panic!("expected InvalidSeq, got {other:?}"),
        }
        assert_eq!(choose(&id, &valid, None).expect("last"), 41);
        assert_eq!(choose(&id, &valid, Some(9)).expect("valid"), 9);
    }
}

//! Taking over an existing run for `delta continue`: the state table of seed 000 §2.6.2,
//! the call of the [`crate::janitor`] for a RUNNING run (seed 002 §3.5), and the journal
//! repair that lets a crashed run go on without losing a line or running a tool twice.
//!
//! [`take_over`] returns a [`Resumed`] run: locked by this process, its metadata RUNNING
//! under this process's identity, its journal repaired and open for appending. The engine
//! drives it from there exactly as it drives a new run.
//!
//! The run lock is what makes this safe under concurrency: whoever holds
//! `.delta/{run_id}/run.lock` is the one live process of the run, so two `delta continue`
//! started at the same instant cannot both proceed, and a live `delta run` is never taken
//! over. The pid, host and start time in `metadata.json` only explain the situation to the
//! user (and guard against implementations that do not lock).

mod repair;
mod state;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use crate::janitor::{JanitorReport, OwnerFinding};
pub use repair::{INTERRUPTED_NOT_RERUN, NOT_RUN, OpenChild, Repairs, plan as plan_repairs};
pub use state::{AnswerSource, Entry, Missing, entry_for};

use crate::janitor::{self, Closed, Keep, owner_gone};
use crate::journal::{
    Event, EventPayload, FsyncPolicy, Journal, JournalError, MessageLevel, RunStart, SystemMessage,
    TornTail, UserMessage, read_journal, repair_torn_tail,
};
use crate::quote::quote_path;
use crate::run::{
    FinalStatus, Metadata, ProcessIdentity, RunId, RunLock, RunPaths, RunStateError, RunStatus,
    Timestamp, clear_interaction, is_locked_by_other, open_run, read_interaction_request,
    read_interaction_response, read_metadata, reclaim_abandoned, write_metadata,
};
use crate::secrets::Redactor;

/// Why a run cannot be continued (yet). Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The run does not exist, or its files cannot be read or written.
    #[error(transparent)]
    RunState(#[from] RunStateError),
    /// The journal is damaged (not just torn at its end) or cannot be written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// COMPLETED and FAILED runs continue only with a new instruction (seed 000 §2.6.2).
    #[error(
        "Run is {status}. To continue, provide a message using -m/--message\n\
         Example: delta continue --run-id {run_id} -w {workspace} -m \"{example}\"",
        example = message_example(*status)
    )]
    MessageRequired {
        /// COMPLETED or FAILED.
        status: RunStatus,
        /// The run.
        run_id: RunId,
        /// The workspace, quoted for a shell.
        workspace: String,
    },
    /// A WAITING_FOR_INPUT run continues only with the answer to its question.
    #[error(
        "Run is WAITING_FOR_INPUT. To continue, answer its question using -m/--message or in \
         {}{}\nExample: delta continue --run-id {run_id} -w {workspace} -m \"yes, proceed\"",
        response_path.display(),
        prompt.as_ref().map(|p| format!("\nQuestion: {p}")).unwrap_or_default()
    )]
    AnswerRequired {
        /// The run.
        run_id: RunId,
        /// The workspace, quoted for a shell.
        workspace: String,
        /// The question, when `interaction/request.json` is readable.
        prompt: Option<String>,
        /// `interaction/response.txt`.
        response_path: PathBuf,
    },
    /// The run is RUNNING on another host, whose processes cannot be checked from here
    /// (seed 002 §3.5.3).
    #[error(
        "Run {run_id} was started on host '{recorded_host}'.\n\
         Cannot verify process status from host '{this_host}'.\n\n\
         If you're certain the original process is dead, use:\n  \
         delta continue --run-id {run_id} -w {workspace} --force"
    )]
    OtherHost {
        /// The run.
        run_id: RunId,
        /// The host in its metadata.
        recorded_host: String,
        /// This host.
        this_host: String,
        /// The workspace, quoted for a shell.
        workspace: String,
    },
    /// The run's process died while creating it, before anything was recorded: there is
    /// nothing to continue, and its directory was removed so that the id can be used again.
    #[error(
        "Run {run_id} was never started: its process died while creating it, before its task \
         was recorded. Its directory was removed; start it again with:\n  \
         delta run --run-id {run_id} -w {workspace} -m \"...\""
    )]
    CreationInterrupted {
        /// The run.
        run_id: RunId,
        /// The workspace, quoted for a shell.
        workspace: String,
    },
    /// The journal is missing or empty although the run had iterations: its conversation
    /// is gone, and it is not silently restarted from the task in `metadata.json`.
    #[error(
        "The journal of run {run_id} ({}) is missing or empty, but metadata.json records \
         {iterations} iteration(s): the conversation is lost. Put journal.jsonl back (from a \
         backup, or from where a tool moved it) and continue again, or start a new run.",
        path.display()
    )]
    JournalLost {
        /// The run.
        run_id: RunId,
        /// Where the journal should be.
        path: PathBuf,
        /// What the metadata says was done.
        iterations: u32,
    },
    /// A live process owns the run (it holds the run's lock).
    #[error(
        "Run {run_id} is still active (PID {pid}). Cannot continue while original process is \
         running."
    )]
    StillActive {
        /// The run.
        run_id: RunId,
        /// The owner's pid, as recorded.
        pid: u32,
    },
    /// Another `delta` process holds the run's lock although the run is not RUNNING: it is
    /// taking the run over or finishing it right now.
    #[error(
        "Run {run_id} is being continued by another delta process right now (its lock {} is \
         held). Wait for that process to finish, then check the run with `delta list-runs`.",
        lock.display()
    )]
    Busy {
        /// The run.
        run_id: RunId,
        /// The lock file.
        lock: PathBuf,
    },
}

impl ResumeError {
    /// Whether the command line lacks what the run's state needs (`-m`): a usage error.
    #[must_use]
    pub fn is_usage(&self) -> bool {
        match self {
            ResumeError::MessageRequired { .. } | ResumeError::AnswerRequired { .. } => true,
            ResumeError::RunState(_)
            | ResumeError::Journal(_)
            | ResumeError::OtherHost { .. }
            | ResumeError::StillActive { .. }
            | ResumeError::CreationInterrupted { .. }
            | ResumeError::JournalLost { .. }
            | ResumeError::Busy { .. } => false,
        }
    }
}

fn message_example(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Failed => "Retry; the input file is data/input.csv",
        RunStatus::Running
        | RunStatus::WaitingForInput
        | RunStatus::Completed
        | RunStatus::Interrupted => "Now do something else",
    }
}

/// What `delta continue` was asked to do.
#[derive(Debug, Clone)]
pub struct ContinueOptions<'a> {
    /// `-m/--message`: an instruction, or the answer of a WAITING_FOR_INPUT run.
    pub message: Option<&'a str>,
    /// `--force`: take over a RUNNING run recorded on another host.
    pub force: bool,
    /// The fresh iteration budget.
    pub max_iterations: u32,
    /// When the journal is fsynced.
    pub fsync: FsyncPolicy,
    /// The run's secrets, masked in every line and file the takeover writes (an
    /// instruction or an answer can quote a key).
    pub redactor: Redactor,
}

/// What taking the run over did, for the user and the engine log.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeReport {
    /// The status found (under the lock) before anything changed.
    pub previous_status: RunStatus,
    /// The Janitor's cleanup, when the run was RUNNING.
    pub janitor: Option<JanitorReport>,
    /// How the run was re-entered.
    pub entry: Entry,
    /// The torn last line cut off the journal.
    pub torn_tail: Option<TornTail>,
    /// The results journaled for calls left without one (their `events` are journaled).
    pub repairs: Repairs,
    /// A WAITING_FOR_INPUT answer with no pending `ask_human` call in the journal was
    /// journaled as a USER_MESSAGE instead.
    pub answer_as_user_message: bool,
    /// The journal was empty (the process died before its first line), so RUN_START was
    /// journaled from the metadata's task.
    pub run_start_restored: bool,
}

/// A run this process has taken over: locked, RUNNING under this process's identity,
/// its journal repaired and open at the next seq. Hand it to the engine.
#[derive(Debug)]
pub struct Resumed {
    /// The run's files.
    pub paths: RunPaths,
    /// The run's lock; hold it until the run stops.
    pub lock: RunLock,
    /// The journal writer.
    pub journal: Journal,
    /// The metadata as written (status RUNNING).
    pub metadata: Metadata,
    /// What was done to get here.
    pub report: ResumeReport,
}

/// Finds the run and reads its metadata, without changing anything.
///
/// # Errors
/// [`RunStateError::RunNotFound`] (with the `delta list-runs` hint), missing or corrupt
/// metadata.
pub fn inspect(workspace: &Path, run_id: &RunId) -> Result<(RunPaths, Metadata), ResumeError> {
    let paths = open_run(workspace, run_id)?;
    let metadata = match read_metadata(&paths.metadata()) {
        Ok(metadata) => metadata,
        Err(error @ RunStateError::MetadataMissing { .. }) => {
            // Killed while being created: nothing of the run was recorded, so there is
            // nothing to continue; its directory goes, and the id is free again.
            let Some((reclaimed, lock)) = reclaim_abandoned(workspace, run_id)? else {
                return Err(error.into());
            };
            fs_err::remove_dir_all(reclaimed.dir()).map_err(RunStateError::Io)?;
            drop(lock);
            return Err(ResumeError::CreationInterrupted {
                run_id: run_id.clone(),
                workspace: quote_path(workspace),
            });
        }
        Err(error) => return Err(error.into()),
    };
    Ok((paths, metadata))
}

/// The checks [`take_over`] will make, done early and read-only so that `delta continue`
/// can refuse before loading the agent: the host check, a live owner (the lock is held),
/// and what the status needs from the command line.
///
/// # Errors
/// [`ResumeError::OtherHost`], [`ResumeError::StillActive`], [`ResumeError::Busy`],
/// [`ResumeError::MessageRequired`], [`ResumeError::AnswerRequired`].
pub fn preflight(
    paths: &RunPaths,
    metadata: &Metadata,
    options: &ContinueOptions<'_>,
) -> Result<(), ResumeError> {
    check_host(paths, metadata, options.force)?;
    if is_locked_by_other(&paths.lock())? && !owner_gone(metadata) {
        return Err(locked_error(paths, metadata));
    }
    let response = match metadata.status {
        RunStatus::WaitingForInput => read_interaction_response(paths)?,
        RunStatus::Running | RunStatus::Completed | RunStatus::Failed | RunStatus::Interrupted => {
            None
        }
    };
    entry_for(metadata.status, options.message, response)
        .map(|_| ())
        .map_err(|missing| missing_error(paths, missing))
}

/// Takes run `run_id` of `workspace` over for this process.
///
/// In order: the host check (RUNNING runs of another host need `--force`); the run lock
/// (held → a live process owns the run: refused); the metadata re-read under the lock;
/// the Janitor (a RUNNING run whose lock was free has lost its process: marked
/// INTERRUPTED, or given the end its journal already records); the state table; the
/// journal's torn tail cut; the metadata claimed (RUNNING, this process, a fresh budget);
/// RUN_START when the journal is empty, the repairs, the answer or the instruction
/// journaled; the journal synced; `interaction/` removed.
///
/// Claiming before journaling means a crash in between leaves a RUNNING run with a dead
/// owner, which the next `delta continue` cleans up and repairs the same way; an answer
/// already journaled as HUMAN_INPUT_RECEIVED is then delivered, not lost.
///
/// # Errors
/// Every [`ResumeError`]; nothing is changed by a refusal, except that a RUNNING run with
/// a dead owner keeps the Janitor's status.
pub fn take_over(
    workspace: &Path,
    run_id: &RunId,
    options: &ContinueOptions<'_>,
) -> Result<Resumed, ResumeError> {
    let (paths, recorded) = inspect(workspace, run_id)?;
    check_host(&paths, &recorded, options.force)?;
    let lock = acquire(&paths, recorded)?;
    let mut metadata = read_metadata(&paths.metadata())?;
    let previous_status = metadata.status;
    let mut mended = Mended::default();
    let janitor = match metadata.status {
        RunStatus::Running => Some(clean_up_orphan(
            &paths,
            &mut metadata,
            options,
            &mut mended,
        )?),
        RunStatus::WaitingForInput
        | RunStatus::Completed
        | RunStatus::Failed
        | RunStatus::Interrupted => None,
    };
    let response = match metadata.status {
        RunStatus::WaitingForInput => read_interaction_response(&paths)?,
        RunStatus::Running | RunStatus::Completed | RunStatus::Failed | RunStatus::Interrupted => {
            None
        }
    };
    // An INTERRUPTED end is taken up again as usual; a COMPLETED or FAILED one is final.
    let restored_end = janitor.as_ref().is_some_and(|report| {
        matches!(
            report.restored,
            Some(FinalStatus::Completed | FinalStatus::Failed)
        )
    });
    if restored_end && options.message.is_none() {
        // Issue 12 item 3: the run is as its process meant to leave it; asking for `-m`
        // here made an interrupted finish an error.
        let (journal, _) = mend_journal(&paths, &metadata, options, &mut mended)?;
        journal.sync()?;
        return Ok(Resumed {
            paths,
            lock,
            journal,
            metadata,
            report: mended.report(previous_status, janitor, Entry::Finished, false),
        });
    }
    let entry = entry_for(metadata.status, options.message, response)
        .map_err(|missing| missing_error(&paths, missing))?;
    let answer = match &entry {
        Entry::Answer { text, .. } => Some(text.as_str()),
        Entry::Resume | Entry::UserMessage(_) | Entry::Finished => None,
    };

    let (journal, events) = mend_journal(&paths, &metadata, options, &mut mended)?;
    let repairs = plan_repairs(&events, answer);
    metadata.resume(
        &ProcessIdentity::current(),
        options.max_iterations,
        Timestamp::now(),
    );
    write_metadata(&paths.metadata(), &metadata, &options.redactor)?;
    for event in &repairs.events {
        journal.append(event.clone())?;
    }
    let mut answer_as_user_message = false;
    let instruction = match &entry {
        Entry::Resume | Entry::Finished => None,
        Entry::UserMessage(text) => Some(text.clone()),
        Entry::Answer { text, .. }
            if repairs.answered.is_none() && !repairs.relayed && repairs.approval.is_none() =>
        {
            answer_as_user_message = true;
            Some(text.clone())
        }
        Entry::Answer { .. } => None,
    };
    if let Some(content) = instruction {
        journal.append(EventPayload::UserMessage(UserMessage { content }))?;
    }
    journal.sync()?;
    clear_interaction(&paths)?;
    mended.repairs.absorb(repairs);

    Ok(Resumed {
        paths,
        lock,
        journal,
        metadata,
        report: mended.report(previous_status, janitor, entry, answer_as_user_message),
    })
}

/// What was done to the journal so far, over the Janitor's and the takeover's passes.
#[derive(Debug, Default)]
struct Mended {
    torn_tail: Option<TornTail>,
    run_start_restored: bool,
    repairs: Repairs,
}

impl Mended {
    /// The takeover's report, with what was mended.
    fn report(
        self,
        previous_status: RunStatus,
        janitor: Option<JanitorReport>,
        entry: Entry,
        answer_as_user_message: bool,
    ) -> ResumeReport {
        ResumeReport {
            previous_status,
            janitor,
            entry,
            torn_tail: self.torn_tail,
            repairs: self.repairs,
            answer_as_user_message,
            run_start_restored: self.run_start_restored,
        }
    }
}

/// Opens the journal for appending after making its end whole: a torn last line cut off
/// and reported by a WARN SYSTEM_MESSAGE, and RUN_START journaled from the metadata when
/// the journal is empty (the process died before its first line, so the task is only in
/// the metadata). Returns the writer and the intact events as they were before.
fn mend_journal(
    paths: &RunPaths,
    metadata: &Metadata,
    options: &ContinueOptions<'_>,
    mended: &mut Mended,
) -> Result<(Journal, Vec<Event>), ResumeError> {
    let torn_tail = repair_torn_tail(&paths.journal())?;
    let events = read_journal(&paths.journal())?.events;
    // An empty journal is what a process killed before its first line leaves (iteration
    // 0). Later, the conversation is lost: restarting it from the task would hide that.
    if events.is_empty() && metadata.iterations > 0 {
        return Err(ResumeError::JournalLost {
            run_id: metadata.run_id.clone(),
            path: paths.journal(),
            iterations: metadata.iterations,
        });
    }
    let journal = Journal::open_with(&paths.journal(), options.fsync, options.redactor.clone())?;
    if events.is_empty() {
        journal.append(EventPayload::RunStart(RunStart {
            run_id: metadata.run_id.clone(),
            task: metadata.task.clone(),
            agent_ref: metadata.agent_home.display().to_string(),
            environment: None,
        }))?;
        mended.run_start_restored = true;
    }
    if let Some(tail) = torn_tail {
        journal.append(EventPayload::SystemMessage(SystemMessage {
            level: MessageLevel::Warn,
            content: format!(
                "The journal's last line (line {}, {} bytes) was incomplete: the process \
                 writing it was stopped mid-write. It was removed when the run was continued.",
                tail.line, tail.len
            ),
        }))?;
        mended.torn_tail = Some(tail);
    }
    Ok((journal, events))
}

/// Refuses a RUNNING run of another host unless `force`.
fn check_host(paths: &RunPaths, metadata: &Metadata, force: bool) -> Result<(), ResumeError> {
    let identity = metadata.process_identity();
    if metadata.status != RunStatus::Running || force || identity.is_on_this_host() {
        return Ok(());
    }
    Err(ResumeError::OtherHost {
        run_id: metadata.run_id.clone(),
        recorded_host: metadata.hostname.clone(),
        this_host: ProcessIdentity::current().hostname,
        workspace: quote_path(paths.workspace()),
    })
}

/// The Janitor's pass, with the run's lock held and the run RUNNING: the owner did not
/// hold the lock, so unless [`janitor::examine`] finds it alive it is gone. Its journal
/// is made whole ([`mend_journal`]) and closed as the dead process would have
/// ([`janitor::close`]), and the run's end written to metadata.json.
fn clean_up_orphan(
    paths: &RunPaths,
    metadata: &mut Metadata,
    options: &ContinueOptions<'_>,
    mended: &mut Mended,
) -> Result<JanitorReport, ResumeError> {
    let identity = metadata.process_identity();
    let finding = janitor::examine(&identity, options.force).map_err(|keep| match keep {
        Keep::Alive => ResumeError::StillActive {
            run_id: metadata.run_id.clone(),
            pid: metadata.pid,
        },
        Keep::OtherHost => ResumeError::OtherHost {
            run_id: metadata.run_id.clone(),
            recorded_host: metadata.hostname.clone(),
            this_host: ProcessIdentity::current().hostname,
            workspace: quote_path(paths.workspace()),
        },
    })?;
    let now = Timestamp::now();
    // Issue 30: a tool of the dead owner kept running (its children too) after the
    // continued run had finished, while the model was told to check its effects.
    let recorded = read_journal(&paths.journal())
        .map(|journal| journal.events)
        .unwrap_or_default();
    let ended_tools = janitor::end_orphaned_tools(paths, &recorded);
    let (journal, events) = match mend_journal(paths, metadata, options, mended) {
        Ok(opened) => opened,
        Err(error) => {
            // The owner is gone whatever the journal says: record that much, then report
            // why the run cannot go on.
            metadata.interrupt(janitor::orphaned(metadata), now);
            write_metadata(&paths.metadata(), metadata, &options.redactor)?;
            return Err(error);
        }
    };
    let repairs = plan_repairs(&events, None);
    // The answers of the calls first: the conversation needs them right after its calls.
    let mut closing = repairs.events.clone();
    closing.extend(ended_tools.iter().map(|tool| {
        EventPayload::SystemMessage(SystemMessage {
            level: MessageLevel::Warn,
            content: tool.message(),
        })
    }));
    let restored = match janitor::close(&journal, &events, &closing, metadata, now)? {
        Closed::Restored(status) => Some(status),
        Closed::Interrupted => {
            mended.repairs.absorb(repairs);
            None
        }
    };
    journal.sync()?;
    write_metadata(&paths.metadata(), metadata, &options.redactor)?;
    Ok(JanitorReport {
        run_id: metadata.run_id.clone(),
        pid: identity.pid,
        hostname: identity.hostname,
        process_name: identity.process_name,
        finding,
        restored,
        ended_tools,
    })
}

/// How long a lock may outlive the dead owner it belonged to; see [`acquire`].
const LOCK_GRACE: Duration = Duration::from_secs(2);

/// Takes the run's lock. A lock held by a live process means the run is taken; but a lock
/// can outlive its owner for an instant: a process killed right after it forked a tool
/// leaves the child holding a copy of the lock's descriptor until the child's `exec`
/// closes it (on a busy machine, milliseconds). So while the recorded owner is gone, the
/// lock is retried for up to [`LOCK_GRACE`].
fn acquire(paths: &RunPaths, recorded: Metadata) -> Result<RunLock, ResumeError> {
    let started = Instant::now();
    loop {
        match RunLock::try_acquire(&paths.lock()) {
            Ok(lock) => return Ok(lock),
            Err(RunStateError::AlreadyLocked { .. }) => {
                let current = read_metadata(&paths.metadata()).unwrap_or_else(|_| recorded.clone());
                if !owner_gone(&current) || started.elapsed() >= LOCK_GRACE {
                    return Err(locked_error(paths, &current));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(error) => return Err(error.into()),
        }
    }
}

fn locked_error(paths: &RunPaths, metadata: &Metadata) -> ResumeError {
    match metadata.status {
        RunStatus::Running => ResumeError::StillActive {
            run_id: metadata.run_id.clone(),
            pid: metadata.pid,
        },
        RunStatus::WaitingForInput
        | RunStatus::Completed
        | RunStatus::Failed
        | RunStatus::Interrupted => ResumeError::Busy {
            run_id: metadata.run_id.clone(),
            lock: paths.lock(),
        },
    }
}

fn missing_error(paths: &RunPaths, missing: Missing) -> ResumeError {
    let run_id = paths.run_id().clone();
    let workspace = quote_path(paths.workspace());
    match missing {
        Missing::Message(status) => ResumeError::MessageRequired {
            status,
            run_id,
            workspace,
        },
        Missing::Answer => ResumeError::AnswerRequired {
            run_id,
            workspace,
            prompt: read_interaction_request(paths)
                .ok()
                .flatten()
                .map(|request| request.prompt),
            response_path: paths.interaction_response(),
        },
    }
}

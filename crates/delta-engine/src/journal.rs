//! `journal.jsonl`: the run's append-only event log — its typed events, the single writer
//! and the reader (with torn-tail detection and repair for crash recovery).

mod calls;
mod displaced;
mod event;

use std::collections::HashSet;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

pub use displaced::Displacement;
pub use event::{
    ActionRequest, ActionResult, ActionStatus, ClaudeDecision, ClaudeHook, Event, EventPayload,
    HookExecutionAudit, HookStatus, HumanInputReceived, HumanInputRequest, MessageLevel, RunEnd,
    RunStart, SubagentRef, SystemMessage, Thought, ToolCall, UserMessage,
};

use fs_err::{File, OpenOptions};

use crate::run::Timestamp;
use crate::secrets::Redactor;

/// Environment variable choosing the fsync policy; see [`FsyncPolicy`].
pub const FSYNC_ENV: &str = "DELTA_FSYNC";

/// Longest part of a torn line kept in a [`TornTail`] for messages.
const TORN_PREVIEW_CHARS: usize = 200;

/// When journal lines are forced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Only when the engine calls [`Journal::sync`] (on status changes and at the end).
    /// Every line still reaches the kernel at once, so killing the process loses nothing;
    /// only a power loss can lose the lines since the last sync.
    #[default]
    OnSync,
    /// After every line as well (`DELTA_FSYNC=always`): survives power loss, costs a disk
    /// flush per event.
    Always,
}

impl FsyncPolicy {
    /// Parses the value of `DELTA_FSYNC`: unset or empty and `sync` mean [`Self::OnSync`],
    /// `always` means [`Self::Always`] (case-insensitive).
    ///
    /// # Errors
    /// [`JournalError::InvalidFsyncPolicy`] for anything else.
    pub fn parse(value: Option<&str>) -> Result<Self, JournalError> {
        match value.map(str::trim) {
            None | Some("") => Ok(Self::OnSync),
            Some(v) if v.eq_ignore_ascii_case("sync") => Ok(Self::OnSync),
            Some(v) if v.eq_ignore_ascii_case("always") => Ok(Self::Always),
            Some(v) => Err(JournalError::InvalidFsyncPolicy {
                value: v.to_owned(),
            }),
        }
    }

    /// The policy `DELTA_FSYNC` asks for.
    ///
    /// # Errors
    /// [`JournalError::InvalidFsyncPolicy`] when the variable has an unknown value.
    pub fn from_env() -> Result<Self, JournalError> {
        let value = std::env::var_os(FSYNC_ENV);
        Self::parse(value.as_ref().map(|v| v.to_string_lossy()).as_deref())
    }
}

/// What can go wrong reading or writing a journal. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A file system operation on the journal failed; the message names it and the file.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A complete line (not the last) is not a valid event: the journal was edited or
    /// damaged, and continuing from it would rebuild a wrong conversation.
    #[error(
        "{}:{line}:{column}: invalid journal event: {message}; the journal is damaged at this \
         line (inspect it with `sed -n '{line}p' {}`), so the run cannot be continued from it",
        path.display(),
        path.display()
    )]
    CorruptLine {
        /// The journal.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 1-based column in that line.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A line's `seq` breaks the 1, 2, 3… sequence.
    #[error(
        "{}:{line}: event has seq {found}, expected {expected}; the journal was edited or \
         lines were lost, so the run cannot be continued from it",
        path.display()
    )]
    SeqOutOfOrder {
        /// The journal.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The seq the line should have.
        expected: u64,
        /// The seq it has.
        found: u64,
    },
    /// [`Journal::open_with`] found a torn last line; appending after it would glue the next
    /// event to the fragment.
    #[error(
        "{}:{line}: the last line is incomplete (a crash mid-write); repair the journal \
         (`delta continue` does this) before appending",
        path.display()
    )]
    TornTail {
        /// The journal.
        path: PathBuf,
        /// 1-based number of the torn line.
        line: usize,
    },
    /// `DELTA_FSYNC` has a value we do not know.
    #[error("DELTA_FSYNC={value:?} is not a known policy; use DELTA_FSYNC=always or unset it")]
    InvalidFsyncPolicy {
        /// The value found.
        value: String,
    },
    /// An event could not be serialized (not expected for our types).
    #[error("cannot serialize a {event_type} event for {}: {source}", path.display())]
    Serialize {
        /// The journal.
        path: PathBuf,
        /// The event's type.
        event_type: &'static str,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
}

/// The incomplete last line of a journal: what a crash in the middle of a write leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// 1-based line number of the fragment.
    pub line: usize,
    /// Byte offset where it starts (the length of the intact journal).
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Its first characters (lossy UTF-8), for messages.
    pub preview: String,
}

/// A journal as read: its intact events and, if present, the torn last line.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalRead {
    /// Every complete event, in order (`events[i].seq == i + 1`).
    pub events: Vec<Event>,
    /// The incomplete last line, skipped.
    pub torn_tail: Option<TornTail>,
}

impl JournalRead {
    /// The seq of the last intact event (0 for an empty journal).
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.events.last().map_or(0, |e| e.seq)
    }
}

/// Reads a whole journal, in time linear in its size.
///
/// A missing file reads as empty. A last line that is incomplete — no trailing newline,
/// or not parseable as JSON — is what a crash mid-write leaves: it is skipped and reported
/// in [`JournalRead::torn_tail`]. Any other bad line is an error naming the line.
///
/// Payload fields the spec does not ask for may be missing (a journal written by another
/// implementation): unknown fields are ignored, and the ids that pair events up are
/// derived from the `action_id`s and the order of the calls, the same on every read (see
/// [`ActionRequest::tool_call_id`], [`HumanInputRequest::request_id`]). Every returned
/// ACTION_REQUEST and ACTION_RESULT has a `tool_call_id`.
///
/// # Errors
/// [`JournalError::CorruptLine`] and [`JournalError::SeqOutOfOrder`] with the line number;
/// [`JournalError::Io`] when the file cannot be read.
pub fn read_journal(path: &Path) -> Result<JournalRead, JournalError> {
    let bytes = match crate::run::read_regular_file(path, crate::run::MAX_JOURNAL_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
        Err(source) => return Err(source.into()),
    };
    parse_journal(path, &bytes)
}

fn parse_journal(path: &Path, bytes: &[u8]) -> Result<JournalRead, JournalError> {
    let read = parse_jsonl::<Event>(bytes);
    let mut events: Vec<Event> = Vec::with_capacity(read.lines.len());
    for JsonLine { line, value } in read.lines {
        match value {
            Ok(event) => {
                let expected = events.last().map_or(1, |e| e.seq + 1);
                if event.seq != expected {
                    return Err(JournalError::SeqOutOfOrder {
                        path: path.to_path_buf(),
                        line,
                        expected,
                        found: event.seq,
                    });
                }
                events.push(event);
            }
            Err(LineError::Empty) => {
                return Err(JournalError::CorruptLine {
                    path: path.to_path_buf(),
                    line,
                    column: 1,
                    message: "the line is empty".to_owned(),
                });
            }
            Err(LineError::Json(e)) => {
                return Err(JournalError::CorruptLine {
                    path: path.to_path_buf(),
                    line,
                    column: e.column(),
                    message: crate::run::serde_message(&e),
                });
            }
        }
    }
    calls::fill_call_ids(&mut events);
    Ok(JournalRead {
        events,
        torn_tail: read.torn_tail,
    })
}

/// A JSON Lines file as [`parse_jsonl`] reads it: its complete lines, each parsed, and
/// the torn last line, if any.
#[derive(Debug)]
pub struct JsonlRead<T> {
    /// Every line but a torn last one, in order.
    pub lines: Vec<JsonLine<T>>,
    /// The incomplete last line, skipped.
    pub torn_tail: Option<TornTail>,
}

/// One complete line of a JSON Lines file.
#[derive(Debug)]
pub struct JsonLine<T> {
    /// Its 1-based number.
    pub line: usize,
    /// What it holds, or why it is no `T`.
    pub value: Result<T, LineError>,
}

/// Why a complete line is no value.
#[derive(Debug)]
pub enum LineError {
    /// It is empty (and not the last).
    Empty,
    /// It is not JSON of the expected shape.
    Json(serde_json::Error),
}

/// Reads JSON Lines written one `write(2)` per line (the journal, a batch's
/// `results.jsonl`), by the rule that tells a crash mid-write from damage: a last line
/// without its newline, or whose JSON is cut off (a syntax or end-of-input error), is a
/// torn tail, skipped and reported; every other line is parsed, and a line of the wrong
/// shape is reported as such wherever it is. Works on bytes: a line cut inside a
/// multi-byte character is a torn tail, not an unreadable file.
pub fn parse_jsonl<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> JsonlRead<T> {
    let mut lines = Vec::with_capacity(bytes.len() / 256);
    let mut torn_tail = None;
    let mut offset = 0usize;
    let mut line = 0usize;
    while offset < bytes.len() {
        line += 1;
        let rest = bytes.get(offset..).unwrap_or_default();
        let (text, complete) = match rest.iter().position(|b| *b == b'\n') {
            Some(end) => (rest.get(..end).unwrap_or_default(), true),
            None => (rest, false),
        };
        let next = offset + text.len() + usize::from(complete);
        let is_last = next >= bytes.len();
        if text.is_empty() && !is_last {
            lines.push(JsonLine {
                line,
                value: Err(LineError::Empty),
            });
            offset = next;
            continue;
        }
        match serde_json::from_slice::<T>(text) {
            Ok(value) if complete => lines.push(JsonLine {
                line,
                value: Ok(value),
            }),
            // A writer that died between the line's bytes and its newline: the writers put
            // both in one write, so a missing newline always means an interrupted write.
            Ok(_) => torn_tail = Some(torn(line, offset, text)),
            // Syntax and end-of-input errors on the last line are a cut-off write; a
            // well-formed JSON line of the wrong shape is damage wherever it is.
            Err(e) if is_last && (e.is_eof() || e.is_syntax()) => {
                torn_tail = Some(torn(line, offset, rest));
            }
            Err(e) => lines.push(JsonLine {
                line,
                value: Err(LineError::Json(e)),
            }),
        }
        offset = next;
    }
    JsonlRead { lines, torn_tail }
}

fn torn(line: usize, offset: usize, text: &[u8]) -> TornTail {
    TornTail {
        line,
        offset: offset as u64,
        len: text.len() as u64,
        preview: String::from_utf8_lossy(text)
            .chars()
            .take(TORN_PREVIEW_CHARS)
            .collect(),
    }
}

/// Cuts a torn last line off the journal, so that appending can resume after the last
/// intact event. Returns what was removed, or `None` when the journal was intact.
///
/// The caller (continue) should then journal a WARN [`SystemMessage`] saying so.
///
/// # Errors
/// Those of [`read_journal`] (a damaged middle line is not repaired), and
/// [`JournalError::Io`] when the file cannot be truncated.
pub fn repair_torn_tail(path: &Path) -> Result<Option<TornTail>, JournalError> {
    let read = read_journal(path)?;
    let Some(tail) = read.torn_tail else {
        return Ok(None);
    };
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(tail.offset)?;
    file.sync_all()?;
    Ok(Some(tail))
}

/// The ACTION_REQUESTs without an ACTION_RESULT for the same `action_id`, in journal order:
/// tool calls a crashed process started (or was about to start) but never reported.
/// The engine answers each with an ERROR result on continue instead of running it again.
#[must_use]
pub fn dangling_action_requests(events: &[Event]) -> Vec<&ActionRequest> {
    let answered: HashSet<&str> = events
        .iter()
        .filter_map(|e| e.payload.as_action_result())
        .map(|result| result.action_id.as_str())
        .collect();
    events
        .iter()
        .filter_map(|e| e.payload.as_action_request())
        .filter(|request| !answered.contains(request.action_id.as_str()))
        .collect()
}

/// The tool calls of THOUGHT events that no ACTION_RESULT answers (by `tool_call_id`), in
/// journal order. Chat APIs reject a conversation in which an assistant's tool call has no
/// tool message, so after a crash each of these needs a result before the next LLM call —
/// including calls whose ACTION_REQUEST was never written. Expects events as
/// [`read_journal`] returns them, with every call id filled in.
#[must_use]
pub fn unanswered_tool_calls(events: &[Event]) -> Vec<&ToolCall> {
    let answered: HashSet<&str> = events
        .iter()
        .filter_map(|e| e.payload.as_action_result())
        .map(|result| result.tool_call_id.as_str())
        .collect();
    events
        .iter()
        .filter_map(|e| e.payload.as_thought())
        .flat_map(|thought| thought.tool_calls.iter())
        .filter(|call| !answered.contains(call.id.as_str()))
        .collect()
}

/// The single writer of one run's journal (the process holding the run's lock).
///
/// Appends are serialized by an internal mutex, so one `Journal` may be shared between
/// threads or tasks: seq order is file order.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    policy: FsyncPolicy,
    /// The run's secrets, masked in every line.
    redactor: Redactor,
    state: Mutex<WriterState>,
}

#[derive(Debug)]
struct WriterState {
    file: File,
    next_seq: u64,
    /// Length of the intact journal, to cut off a partial write after a failed append.
    len: u64,
}

impl Journal {
    /// Opens (or creates) the journal at `path` for appending, continuing after its last
    /// event, with the fsync `policy`; every line it appends has the secrets of
    /// `redactor` (the run's) masked. The existing lines are read and checked first.
    ///
    /// # Errors
    /// [`JournalError::TornTail`] when the last line is torn (call [`repair_torn_tail`]
    /// first), the errors of [`read_journal`], and [`JournalError::Io`].
    pub fn open_with(
        path: &Path,
        policy: FsyncPolicy,
        redactor: Redactor,
    ) -> Result<Self, JournalError> {
        let existing = read_journal(path)?;
        if let Some(tail) = existing.torn_tail {
            return Err(JournalError::TornTail {
                path: path.to_path_buf(),
                line: tail.line,
            });
        }
        // O_APPEND: every write(2) lands at the current end of file, atomically with
        // finding that end, so nothing can overwrite an earlier line.
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            policy,
            redactor,
            state: Mutex::new(WriterState {
                file,
                next_seq: existing.last_seq() + 1,
                len,
            }),
        })
    }

    /// The journal's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The fsync policy in force.
    #[must_use]
    pub fn policy(&self) -> FsyncPolicy {
        self.policy
    }

    /// The seq the next appended event will get.
    #[must_use]
    pub fn next_seq(&self) -> u64 {
        self.lock_state().next_seq
    }

    /// Appends one event: assigns the next seq and the current time, writes the line, and
    /// returns the event as written.
    ///
    /// The whole line, newline included, is handed to the kernel in one `write(2)` on an
    /// O_APPEND descriptor, with no user-space buffer in between. So once `append`
    /// returns, the line is in the page cache: a process killed at any later moment (even
    /// SIGKILL) has lost nothing, and a process killed during the call leaves at most one
    /// torn final line, which [`read_journal`] detects. A user-space buffer (BufWriter)
    /// would lose every line still in it and could split a line over two writes.
    ///
    /// # Errors
    /// [`JournalError::Io`] when the write (or the per-line fsync of
    /// [`FsyncPolicy::Always`]) fails; the seq is then not consumed and any partial bytes
    /// are cut off again, so the journal stays intact.
    pub fn append(&self, payload: EventPayload) -> Result<Event, JournalError> {
        let mut state = self.lock_state();
        let event = Event {
            seq: state.next_seq,
            timestamp: Timestamp::now(),
            payload,
        };
        let mut line = serde_json::to_vec(&event).map_err(|source| JournalError::Serialize {
            path: self.path.clone(),
            event_type: event.payload.type_name(),
            source,
        })?;
        line.push(b'\n');
        // The key can arrive in any payload (a server's echo, a model's tool arguments):
        // masked here, the one place every journal line passes.
        let line = self.redactor.redact_bytes(&line);
        // write_all issues exactly one write(2) for a regular file unless the kernel
        // reports a short write (disk full, signal), in which case it continues the same
        // line; a failure part-way is undone below.
        let written = state
            .file
            .write_all(&line)
            .and_then(|()| match self.policy {
                FsyncPolicy::Always => state.file.sync_data(),
                FsyncPolicy::OnSync => Ok(()),
            });
        if let Err(source) = written {
            // Best effort: remove a partial line so the next append starts on a clean line.
            let _ = state.file.set_len(state.len);
            return Err(source.into());
        }
        state.len += line.len() as u64;
        state.next_seq += 1;
        Ok(event)
    }

    /// Forces every appended line to stable storage (`fdatasync`). The engine calls this
    /// when the run's status changes and before it exits.
    ///
    /// # Errors
    /// [`JournalError::Io`] when the sync fails.
    pub fn sync(&self) -> Result<(), JournalError> {
        Ok(self.lock_state().file.sync_data()?)
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, WriterState> {
        // A panic while holding the lock cannot leave WriterState inconsistent (len and
        // next_seq change only after a successful write), so a poisoned lock is usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

//! The checks the runner makes after every step they apply to ([`RunnerCheck`]), with
//! their ids, levels and the seed sentences they rest on. The scenario reader needs their
//! names (a scenario's own check may not take one), the checker runs them.

use delta_scenario::Level;

/// A check the runner makes after every step it applies to, whatever the scenario
/// expects. Each has its own id (`STEP/NAME`), level, seed section and the sentences it
/// rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerCheck {
    /// `journal.jsonl`: JSON Lines with seed 001 §7.1's envelope (`seq` an integer from 1,
    /// strictly increasing; `timestamp` ISO 8601 UTC; `type` a string; `payload` an
    /// object), the last line complete. Unknown types and extra keys are allowed.
    Journal,
    /// The envelope as this project's schema has it: a known `type`, no other keys, an
    /// RFC 3339 timestamp.
    JournalEnvelope,
    /// The journal's payloads against the payload schemas (seed 001 §7.2 gives them as
    /// examples).
    JournalPayloads,
    /// Payload fields only this project defines (THOUGHT's `tool_calls`, the
    /// `tool_call_id`s, ACTION_RESULT's `exit_code` …), and `seq` without gaps.
    JournalExtensions,
    /// `metadata.json`: a JSON object with the fields seed 002 requires (`run_id`,
    /// `status`, `pid`, `hostname`).
    Metadata,
    /// `metadata.json` against the whole metadata schema (seed 000 §2.1.4's "complete
    /// schema", which the seeds themselves word differently).
    MetadataFields,
    /// Metadata fields this project chose (`task` for seed 000's `initial_message`,
    /// `result`, `usage`, `start_time`), and the run id's syntax.
    MetadataExtensions,
    /// `--format json` stdout of `run`/`continue`: one RunResult v2.0 object with the
    /// fields seed 002 §5 gives (extra fields allowed, `model_usage` free).
    RunResult,
    /// ... against this project's closed RunResult schema.
    RunResultStrict,
    /// `list-runs --format json` stdout against the list-runs schema.
    ListRunsJson,
    /// The stdout of a `delta-sessions` `start`, `exec`, `end` or `list` that worked is one
    /// JSON document.
    SessionsJson,
    /// Any `delta-sessions` command's stdout is one document valid against this project's
    /// `sessions-*` schemas (`sessions-error` when it failed).
    SessionsSchema,
}

impl RunnerCheck {
    /// Every runner check, in report order.
    pub const ALL: [RunnerCheck; 12] = [
        Self::Metadata,
        Self::MetadataFields,
        Self::MetadataExtensions,
        Self::Journal,
        Self::JournalEnvelope,
        Self::JournalPayloads,
        Self::JournalExtensions,
        Self::SessionsJson,
        Self::SessionsSchema,
        Self::RunResult,
        Self::RunResultStrict,
        Self::ListRunsJson,
    ];

    /// The name after the step id.
    pub fn name(self) -> &'static str {
        match self {
            Self::Journal => "journal",
            Self::JournalEnvelope => "journal-envelope",
            Self::JournalPayloads => "journal-payloads",
            Self::JournalExtensions => "journal-extensions",
            Self::Metadata => "metadata",
            Self::MetadataFields => "metadata-fields",
            Self::MetadataExtensions => "metadata-extensions",
            Self::RunResult => "run-result",
            Self::RunResultStrict => "run-result-strict",
            Self::ListRunsJson => "list-runs-json",
            Self::SessionsJson => "sessions-json",
            Self::SessionsSchema => "sessions-schema",
        }
    }

    /// What it checks and after which steps, for the citations table.
    pub fn applies_to(self) -> &'static str {
        match self {
            Self::Journal => {
                "every line of the run's journal.jsonl is a JSON object with seq (an integer, 1 first, strictly increasing), timestamp (ISO 8601, UTC), type (a string) and payload (an object); the last line is whole. After every run and continue"
            }
            Self::JournalEnvelope => {
                "each journal line has a known type and no other keys than seq, timestamp, type and payload, the timestamp in RFC 3339 (schemas/journal-event.schema.json). After every run and continue"
            }
            Self::JournalPayloads => {
                "each payload has the fields of its type (schemas/journal-event.schema.json). After every run and continue"
            }
            Self::JournalExtensions => {
                "the payload fields only this project defines, when present, have their types, and seq has no gaps. After every run and continue"
            }
            Self::Metadata => {
                "metadata.json is a JSON object whose run_id and hostname are strings, pid an integer and status one of the five. After every run and continue"
            }
            Self::MetadataFields => {
                "metadata.json has the other fields of schemas/metadata.schema.json. After every run and continue"
            }
            Self::MetadataExtensions => {
                "metadata.json has task, result, usage and start_time as this project writes them, and a run id of its syntax. After every run and continue"
            }
            Self::RunResult => {
                "stdout is one RunResult v2.0 object: its required fields and their types, result/error/interaction by status; extra fields allowed, model_usage any object. After run and continue with --format json"
            }
            Self::RunResultStrict => {
                "stdout matches schemas/run-result.schema.json as it stands (closed objects, the per-model usage shape). After run and continue with --format json"
            }
            Self::ListRunsJson => {
                "stdout matches schemas/list-runs.schema.json. After list-runs --format json"
            }
            Self::SessionsJson => {
                "stdout is one JSON document. After a sessions start, exec, end or list that exits 0"
            }
            Self::SessionsSchema => {
                "stdout is one document valid against schemas/sessions-COMMAND.schema.json (sessions-error.schema.json when it fails). After every sessions step but --help and --version"
            }
        }
    }

    /// Its level, the section that makes it so and the sentences it rests on.
    pub fn citation(self) -> (Level, &'static str, &'static [&'static str]) {
        const EXTENSION: &[&str] = &[];
        match self {
            Self::Journal => (
                Level::Spec,
                "001 §7, §7.1",
                &[
                    "It uses JSON Lines format.",
                    "All events share a common envelope structure.",
                    "\"seq\": 1, // [Required] Sequence number. Strictly monotonically increasing integer (starting from 1), ensuring absolute order.",
                    "// [Required] ISO 8601 UTC timestamp.",
                    "// [Required] Event type identifier.",
                    "\"payload\": { ... } // [Required] Event-specific content.",
                ],
            ),
            Self::JournalEnvelope => (
                Level::Recommended,
                "001 §7.1, §7.2",
                &[
                    "All events share a common envelope structure.",
                    "Core Event Payloads (Payload Schemas)",
                ],
            ),
            Self::JournalPayloads => (
                Level::Recommended,
                "001 §7.2",
                &["Core Event Payloads (Payload Schemas)"],
            ),
            Self::JournalExtensions | Self::MetadataExtensions => (
                Level::Extension,
                "decisions.md: Journal and metadata",
                EXTENSION,
            ),
            Self::Metadata => (
                Level::Spec,
                "002 §3.5.1, §3.5.3, §7.2; 000 §2.1.4",
                &[
                    "PID Recording: When delta run starts, it must immediately record its process ID (PID) in .delta/{run_id}/metadata.json.",
                    "Detection: Record hostname during run initialization.",
                    "Metadata Initialization: Create .delta/{run_id}/metadata.json with initial state: - run_id: Client-provided or auto-generated",
                    "\"status\": \"RUNNING | WAITING_FOR_INPUT | COMPLETED | FAILED | INTERRUPTED\",",
                ],
            ),
            Self::MetadataFields => (
                Level::Recommended,
                "000 §2.1.4; 002 §3.5.2",
                &["Complete Schema:", "Metadata Extension:"],
            ),
            Self::RunResult => (
                Level::Spec,
                "002 §4.2.2, §5; 000 §2.6.6",
                &[
                    "stdout: A single structured JSON object (RunResult v2.0 Schema, see Section 5) printed at execution end.",
                    "Only one of the following three fields will be present, depending on 'status'.",
                    "model_usage: Record<string, any>;",
                ],
            ),
            Self::RunResultStrict => (
                Level::Recommended,
                "002 §5",
                &["// Per-model detailed statistics"],
            ),
            Self::ListRunsJson => (Level::Recommended, "002 §6.2", &["Output Example (json):"]),
            Self::SessionsJson => (Level::Spec, "000 §2.3.2", &["Output (JSON):"]),
            Self::SessionsSchema => (Level::Extension, "decisions.md: delta-sessions", EXTENSION),
        }
    }
}

//! Checking one finished step: the checks every run gets (schemas, journal numbering) and
//! the step's own expectations (exit code, output, metadata, journal, requests, tool
//! executions, files).
//!
//! To add an expectation: add a field to [`crate::scenario::Expect`], check it in
//! [`check_step`] with a function here, and document it in `docs/conformance.md`.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::exec::Outcome;
use crate::matcher::{ExitCheck as _, Mismatch, TextCheck as _, ValueCheck as _};
use crate::mock;
use crate::scenario::{
    Command, EventExpect, Expect, FileExpect, JournalExpect, MetadataExpect, NoFileContains,
    RequestsExpect, ToolExecutionExpect, ValueMatch,
};
use crate::schemas::{self, SchemaSet};
use crate::shown::{quote, show};
use crate::validate::{self, Journal};
use crate::vars::Vars;

pub use crate::runner_check::RunnerCheck;

/// Everything known about a step once its command has ended.
#[derive(Debug)]
pub struct StepContext<'a> {
    /// The implementation command, or `None` for a `shell` step.
    pub command: Option<Command>,
    /// The step's words after placeholder substitution.
    pub words: &'a [String],
    /// How the command ended.
    pub outcome: &'a Outcome,
    /// The run directory of a `run`/`continue` step, when one was found.
    pub run_dir: Option<PathBuf>,
    /// `.delta/` of the step's workspace.
    pub delta_dir: PathBuf,
    /// mock-llm's record file, when a mock serves the scenario.
    pub record_file: Option<&'a Path>,
    /// The schemas.
    pub schemas: &'a SchemaSet,
    /// The placeholders.
    pub vars: &'a Vars,
    /// The step's time limit.
    pub timeout: Duration,
}

/// The value following `flag` (`--flag value` or `--flag=value`) in `words`; the last one
/// wins, as with most command-line parsers.
pub fn flag_value<'w>(words: &'w [String], flags: &[&str]) -> Option<&'w str> {
    let mut found = None;
    let mut iter = words.iter().peekable();
    while let Some(word) = iter.next() {
        for flag in flags {
            if word == flag {
                found = iter.peek().map(|v| v.as_str());
            } else if let Some(value) = word.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                found = Some(value);
            }
        }
    }
    found
}

/// The commands of the sessions implementation whose output has a schema,
/// `schemas/sessions-{command}.schema.json`.
pub const SESSIONS_COMMANDS: &[&str] = &["start", "exec", "end", "list", "cleanup"];

/// The commands seed 000 §2.3.2 gives with their JSON output (`cleanup` is only named by
/// §2.7.3's example hook).
pub const SPEC_SESSIONS_COMMANDS: &[&str] = &["start", "exec", "end", "list"];

/// The sessions command of a `sessions` step's words: the first of [`SESSIONS_COMMANDS`]
/// (options such as `--sessions-dir DIR` may come before it, a command text after it).
pub fn sessions_subcommand(words: &[String]) -> Option<&str> {
    words
        .iter()
        .map(String::as_str)
        .find(|word| SESSIONS_COMMANDS.contains(word))
}

/// The `metadata.json` fields seed 002 requires: the id and status every command reads,
/// and the pid and hostname the Janitor needs (§3.5.1, §3.5.3, §7.2).
pub const SPEC_METADATA_FIELDS: &[&str] = &["run_id", "status", "pid", "hostname"];

/// The run statuses of seed 000 §2.1.4.
pub const STATUSES: &[&str] = &[
    "RUNNING",
    "WAITING_FOR_INPUT",
    "COMPLETED",
    "FAILED",
    "INTERRUPTED",
];

/// The `metadata.json` fields whose name or presence is this project's choice
/// (docs/decisions.md, "Journal and metadata").
pub const EXTENSION_METADATA_FIELDS: &[&str] = &["task", "result", "usage", "start_time"];

/// Journal payload fields this project adds to seed 001 §7.2's (docs/decisions.md,
/// "Journal and metadata"; `exit_code` is DESIGN.md's).
pub const EXTENSION_PAYLOAD_FIELDS: &[&str] = &[
    "tool_calls",
    "tool_call_id",
    "request_id",
    "error",
    "result",
    "exit_code",
];

/// What one step's checks found: the runner's checks, the step's `expect`, and each
/// named check in order.
#[derive(Debug, Default)]
pub struct StepFindings {
    /// The runner's checks that apply to the step, each with its mismatches.
    pub runner: Vec<(RunnerCheck, Vec<Mismatch>)>,
    /// The step's `expect`.
    pub expect: Vec<Mismatch>,
    /// The step's named checks, in order.
    pub named: Vec<Vec<Mismatch>>,
}

/// Every check of a step. A command that did not start or did not end fails every
/// check of the step with that reason (there is nothing else to observe).
pub fn check_step(ctx: &StepContext<'_>, expect: &Expect, named: &[&Expect]) -> StepFindings {
    let outcome = ctx.outcome;
    let broken = if let Some(error) = &outcome.spawn_error {
        Some(Mismatch::new("the command", "starts", error.clone()))
    } else if outcome.timed_out {
        Some(Mismatch::new(
            "the command",
            format!("ends within {}s", ctx.timeout.as_secs_f32()),
            format!(
                "still running; its process group was killed. stdout: {}; stderr: {}",
                ctx.vars.quote(&outcome.stdout),
                ctx.vars.quote(&outcome.stderr)
            ),
        ))
    } else {
        None
    };
    if let Some(broken) = broken {
        return StepFindings {
            runner: Vec::new(),
            expect: vec![broken.clone()],
            named: named.iter().map(|_| vec![broken.clone()]).collect(),
        };
    }
    let run = RunFiles::new(ctx.run_dir.as_deref(), ctx.schemas);
    StepFindings {
        runner: always(ctx, &run),
        expect: check_expect(ctx, &run, expect, true),
        named: named
            .iter()
            .map(|e| check_expect(ctx, &run, e, false))
            .collect(),
    }
}

/// The mismatches of one group of expectations. `main` is the step's own `expect`: a
/// `shell` step without `exit` must exit 0 there.
fn check_expect(
    ctx: &StepContext<'_>,
    run: &RunFiles<'_>,
    expect: &Expect,
    main: bool,
) -> Vec<Mismatch> {
    let outcome = ctx.outcome;
    let mut out = Vec::new();
    let shell_default = (main && ctx.command.is_none() && expect.exit.is_none())
        .then_some(crate::scenario::ExitMatch::Code(0));
    if let Some(exit) = expect.exit.as_ref().or(shell_default.as_ref())
        && let Some(mismatch) = exit.check(outcome.code, outcome.signal)
    {
        // The exit code alone rarely explains itself; stderr does, unless a stderr
        // expectation of the step shows it anyway.
        let observed = if expect.stderr.is_some() {
            mismatch.observed
        } else {
            format!(
                "{}; stderr: {}",
                mismatch.observed,
                ctx.vars.quote(&outcome.stderr)
            )
        };
        out.push(Mismatch {
            observed,
            ..mismatch
        });
    }
    if let Some(m) = &expect.stdout {
        out.extend(m.check("stdout", &outcome.stdout, ctx.vars, ctx.schemas));
    }
    if let Some(m) = &expect.stderr {
        out.extend(m.check("stderr", &outcome.stderr, ctx.vars, ctx.schemas));
    }
    if let Some(m) = &expect.metadata {
        out.extend(check_metadata(m, run, ctx.vars));
    }
    if let Some(m) = &expect.journal {
        out.extend(check_journal(m, run, ctx.vars));
    }
    if let Some(m) = &expect.requests {
        out.extend(check_requests(m, ctx.record_file, ctx.vars, ctx.schemas));
    }
    for m in &expect.tool_executions {
        out.extend(check_tool_execution(m, run, ctx.vars));
    }
    for m in &expect.files {
        out.extend(check_file(m, ctx.vars, ctx.schemas));
    }
    if let Some(count) = expect.run_count {
        let found = run_dirs(&ctx.delta_dir);
        if found.len() != count {
            out.push(Mismatch::new(
                &format!("{}", ctx.delta_dir.display()),
                format!(
                    "holds {count} run director{}",
                    if count == 1 { "y" } else { "ies" }
                ),
                format!("{} ({})", found.len(), found.join(", ")),
            ));
        }
    }
    for m in &expect.no_file_contains {
        out.extend(check_no_file_contains(m, ctx.vars));
    }
    out
}

/// The run directories (not files such as `VERSION`) in a `.delta/` directory, sorted.
pub fn run_dirs(delta_dir: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(delta_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The files of one run, read once when first needed.
struct RunFiles<'a> {
    dir: Option<&'a Path>,
    schemas: &'a SchemaSet,
    metadata: OnceCell<Result<(String, Value), String>>,
    journal: OnceCell<Result<Journal, String>>,
}

impl<'a> RunFiles<'a> {
    fn new(dir: Option<&'a Path>, schemas: &'a SchemaSet) -> Self {
        Self {
            dir,
            schemas,
            metadata: OnceCell::new(),
            journal: OnceCell::new(),
        }
    }

    fn file(&self, name: &str) -> Result<(PathBuf, String), String> {
        let dir = self
            .dir
            .ok_or("no run directory was found for this step (no --run-id, no run_id in stdout, no new directory in .delta/)")?;
        let path = dir.join(name);
        std::fs::read_to_string(&path)
            .map(|text| (path.clone(), text))
            .map_err(|err| format!("cannot read {}: {err}", path.display()))
    }

    fn metadata(&self) -> Result<&(String, Value), &String> {
        self.metadata
            .get_or_init(|| {
                let (path, text) = self.file("metadata.json")?;
                let value = serde_json::from_str(&text)
                    .map_err(|err| format!("{} is not JSON: {err}", path.display()))?;
                Ok((text, value))
            })
            .as_ref()
    }

    fn journal(&self) -> Result<&Journal, &String> {
        self.journal
            .get_or_init(|| {
                let (_, text) = self.file("journal.jsonl")?;
                validate::check_journal(&text, self.schemas).map_err(|err| err.to_string())
            })
            .as_ref()
    }

    /// The events of one type, and the one picked by `nth` (negative from the end).
    fn nth_event(&self, type_: &str, nth: i64) -> Result<&Value, String> {
        let journal = self.journal().map_err(Clone::clone)?;
        let events: Vec<&Value> = journal
            .events
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.get("type").and_then(Value::as_str) == Some(type_))
            .collect();
        pick(&events, nth).copied().ok_or_else(|| {
            format!(
                "the journal has {} {type_} event(s); types in order: {}",
                events.len(),
                journal.types().join(", ")
            )
        })
    }
}

fn pick<T>(items: &[T], nth: i64) -> Option<&T> {
    let index = if nth < 0 {
        items
            .len()
            .checked_sub(usize::try_from(nth.unsigned_abs()).ok()?)?
    } else {
        usize::try_from(nth).ok()?
    };
    items.get(index)
}

/// Checks every run gets, whatever the scenario expects: metadata.json (the fields the
/// spec requires, then the whole schema), the journal (the spec's envelope and numbering,
/// then this project's schema), `--format json` output against RunResult v2.0 (as the
/// spec gives it, then this project's closed schema), `delta-sessions` output.
fn always(ctx: &StepContext<'_>, run: &RunFiles<'_>) -> Vec<(RunnerCheck, Vec<Mismatch>)> {
    let mut out = Vec::new();
    let Some(command) = ctx.command else {
        return out;
    };
    if command.is_run() && ctx.run_dir.is_some() {
        out.extend(metadata_checks(ctx, run));
        out.extend(journal_checks(ctx, run));
    }
    if command == Command::Sessions
        && let Some(findings) = check_sessions_output(ctx)
    {
        out.extend(findings);
    }
    let kinds: &[(RunnerCheck, &str)] = match command {
        Command::Run | Command::Continue => &[
            (RunnerCheck::RunResult, schemas::RUN_RESULT_SPEC),
            (RunnerCheck::RunResultStrict, schemas::RUN_RESULT),
        ],
        Command::ListRuns => &[(RunnerCheck::ListRunsJson, schemas::LIST_RUNS)],
        Command::ToolExpand | Command::Exec | Command::Sessions => &[],
    };
    if flag_value(ctx.words, &["--format"]) == Some("json") && !ctx.outcome.stdout.trim().is_empty()
    {
        for (check, kind) in kinds {
            let expected = format!("matches {}", ctx.schemas.path_of(kind).display());
            let found =
                match validate::validate_document(&ctx.outcome.stdout, false, kind, ctx.schemas) {
                    Ok(problems) => problems
                        .iter()
                        .map(|p| Mismatch::new("stdout (--format json)", &expected, p.to_string()))
                        .collect(),
                    Err(err) => vec![Mismatch::new(
                        "stdout (--format json)",
                        &expected,
                        err.to_string(),
                    )],
                };
            out.push((*check, found));
        }
    }
    out
}

/// `metadata`: the four fields seed 002 requires, checked here; `metadata-fields` and
/// `metadata-extensions`: the schema's other violations, by field.
fn metadata_checks(ctx: &StepContext<'_>, run: &RunFiles<'_>) -> Vec<(RunnerCheck, Vec<Mismatch>)> {
    let schema = format!(
        "matches {}",
        ctx.schemas.path_of(schemas::METADATA).display()
    );
    let (mut spec, mut fields, mut ours) = (Vec::new(), Vec::new(), Vec::new());
    match run.metadata() {
        Ok((text, value)) => {
            spec.extend(spec_metadata(value));
            match validate::validate_document(text, false, schemas::METADATA, ctx.schemas) {
                Ok(problems) => {
                    for p in problems {
                        let top = p.pointer.split('/').nth(1).unwrap_or_default();
                        let target = if p.pointer.is_empty() {
                            &mut fields
                        } else if top == "run_id" || EXTENSION_METADATA_FIELDS.contains(&top) {
                            // The run id's syntax is DESIGN.md's; the spec asks for a string.
                            &mut ours
                        } else if SPEC_METADATA_FIELDS.contains(&top) {
                            continue;
                        } else {
                            &mut fields
                        };
                        target.push(Mismatch::new("metadata.json", &schema, p.to_string()));
                    }
                }
                Err(err) => fields.push(Mismatch::new(
                    "metadata.json",
                    "can be validated",
                    err.to_string(),
                )),
            }
        }
        Err(err) => spec.push(Mismatch::new(
            "metadata.json",
            "exists and is JSON",
            err.clone(),
        )),
    }
    vec![
        (RunnerCheck::Metadata, spec),
        (RunnerCheck::MetadataFields, fields),
        (RunnerCheck::MetadataExtensions, ours),
    ]
}

/// The fields of `metadata.json` seed 002 requires, with the types its examples give.
fn spec_metadata(value: &Value) -> Vec<Mismatch> {
    let Some(object) = value.as_object() else {
        return vec![Mismatch::new(
            "metadata.json",
            "is a JSON object",
            show(value),
        )];
    };
    let field = |name: &str| object.get(name);
    let mut out = Vec::new();
    let mut expect = |name: &str, what: &str, holds: bool| {
        if !holds {
            out.push(Mismatch::new(
                &format!("metadata.json /{name}"),
                what,
                field(name).map_or_else(|| "absent".to_string(), show),
            ));
        }
    };
    expect(
        "run_id",
        "is a string",
        field("run_id").is_some_and(Value::is_string),
    );
    expect(
        "status",
        &format!("is one of {}", STATUSES.join(", ")),
        field("status")
            .and_then(Value::as_str)
            .is_some_and(|s| STATUSES.contains(&s)),
    );
    expect(
        "pid",
        "is a process id (a positive integer)",
        field("pid").and_then(Value::as_u64).is_some_and(|p| p > 0),
    );
    expect(
        "hostname",
        "is a string",
        field("hostname").is_some_and(Value::is_string),
    );
    out
}

/// `journal` (the envelope of seed 001 §7.1), `journal-envelope` (this project's closed
/// envelope), `journal-payloads` and `journal-extensions` (gaps in `seq`, our fields).
fn journal_checks(ctx: &StepContext<'_>, run: &RunFiles<'_>) -> Vec<(RunnerCheck, Vec<Mismatch>)> {
    let schema = format!(
        "{} line by line",
        format_args!(
            "matches {}",
            ctx.schemas.path_of(schemas::JOURNAL_EVENT).display()
        )
    );
    let (mut spec, mut closed, mut payloads, mut ours) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    match run.journal() {
        Ok(journal) => {
            let envelope = "is JSON Lines, each line with seq (1, 2, 3 …), timestamp (ISO 8601 UTC), type and payload";
            for p in &journal.envelope {
                spec.push(Mismatch::new("journal.jsonl", envelope, p.to_string()));
            }
            for p in &journal.gaps {
                ours.push(Mismatch::new(
                    "journal.jsonl",
                    "numbers seq 1, 2, 3 … without gaps",
                    p.to_string(),
                ));
            }
            for p in &journal.schema {
                let mut segments = p.pointer.split('/').skip(1);
                let target = match (segments.next(), segments.next()) {
                    (Some("payload"), Some(field)) if EXTENSION_PAYLOAD_FIELDS.contains(&field) => {
                        &mut ours
                    }
                    (Some("payload"), _) => &mut payloads,
                    _ => &mut closed,
                };
                target.push(Mismatch::new("journal.jsonl", &schema, p.to_string()));
            }
        }
        Err(err) => spec.push(Mismatch::new("journal.jsonl", "exists", err.clone())),
    }
    vec![
        (RunnerCheck::Journal, spec),
        (RunnerCheck::JournalEnvelope, closed),
        (RunnerCheck::JournalPayloads, payloads),
        (RunnerCheck::JournalExtensions, ours),
    ]
}

/// A sessions command that worked prints one JSON document (seed 000 §2.3.2 shows JSON
/// for `start`, `exec`, `end` and `list`): the spec check. Which document (this project's
/// `sessions-{command}` schema when it exits 0, `sessions-error` otherwise, as
/// docs/sessions.md decides) is the extension check, for every command. Help and version
/// are plain text.
fn check_sessions_output(ctx: &StepContext<'_>) -> Option<Vec<(RunnerCheck, Vec<Mismatch>)>> {
    let asks_for_text = ctx
        .words
        .iter()
        .any(|w| matches!(w.as_str(), "-h" | "--help" | "-V" | "--version"));
    if asks_for_text {
        return None;
    }
    let json = match serde_json::from_str::<Value>(&ctx.outcome.stdout) {
        Ok(_) => Vec::new(),
        Err(err) => vec![Mismatch::new(
            "stdout (delta-sessions)",
            "is one JSON document",
            format!("{err}: {}", ctx.vars.quote(&ctx.outcome.stdout)),
        )],
    };
    let command = sessions_subcommand(ctx.words);
    let mut out = Vec::new();
    if ctx.outcome.code == Some(0) && command.is_some_and(|c| SPEC_SESSIONS_COMMANDS.contains(&c)) {
        out.push((RunnerCheck::SessionsJson, json.clone()));
    }
    let kind = match (ctx.outcome.code, command) {
        (Some(0), Some(command)) => format!("sessions-{command}"),
        (Some(0), None) => return Some(out),
        (Some(_) | None, _) => "sessions-error".to_string(),
    };
    let expected = format!(
        "is one document matching {}",
        ctx.schemas.path_of(&kind).display()
    );
    let schema = if json.is_empty() {
        match validate::validate_document(&ctx.outcome.stdout, false, &kind, ctx.schemas) {
            Ok(problems) => problems
                .iter()
                .map(|p| Mismatch::new("stdout (delta-sessions)", &expected, p.to_string()))
                .collect(),
            Err(err) => vec![Mismatch::new(
                "stdout (delta-sessions)",
                &expected,
                err.to_string(),
            )],
        }
    } else {
        json
    };
    out.push((RunnerCheck::SessionsSchema, schema));
    Some(out)
}

fn check_fields(
    what: &str,
    fields: &BTreeMap<String, ValueMatch>,
    document: &Value,
    vars: &Vars,
) -> Vec<Mismatch> {
    fields
        .iter()
        .flat_map(|(pointer, m)| m.check(what, pointer, document, vars))
        .collect()
}

fn check_metadata(m: &MetadataExpect, run: &RunFiles<'_>, vars: &Vars) -> Vec<Mismatch> {
    let (_, metadata) = match run.metadata() {
        Ok(found) => found,
        Err(err) => return vec![Mismatch::new("metadata.json", "can be read", err.clone())],
    };
    let mut out = Vec::new();
    if let Some(status) = &m.status {
        let matcher = ValueMatch {
            equals: Some(Value::String(status.clone())),
            ..ValueMatch::default()
        };
        out.extend(matcher.check("metadata.json", "/status", metadata, vars));
    }
    out.extend(check_fields("metadata.json", &m.fields, metadata, vars));
    out
}

fn check_journal(m: &JournalExpect, run: &RunFiles<'_>, vars: &Vars) -> Vec<Mismatch> {
    let journal = match run.journal() {
        Ok(journal) => journal,
        Err(err) => return vec![Mismatch::new("journal.jsonl", "can be read", err.clone())],
    };
    let types = journal.types();
    let shown = || types.join(", ");
    let mut out = Vec::new();
    if let Some(expected) = &m.types
        && types != *expected
    {
        out.push(Mismatch::new(
            "journal event types",
            format!("are exactly {}", expected.join(", ")),
            shown(),
        ));
    }
    if let Some(expected) = &m.types_in_order {
        let mut wanted = expected.iter().peekable();
        for found in &types {
            if wanted.peek().is_some_and(|w| w == found) {
                wanted.next();
            }
        }
        if let Some(missing) = wanted.next() {
            out.push(Mismatch::new(
                "journal event types",
                format!(
                    "include in this order: {} (missing from {missing} on)",
                    expected.join(", ")
                ),
                shown(),
            ));
        }
    }
    for (which, expected, found) in [
        ("first", &m.first, types.first()),
        ("last", &m.last, types.last()),
    ] {
        if let Some(expected) = expected
            && found != Some(&expected.as_str())
        {
            out.push(Mismatch::new(
                &format!("the {which} journal event"),
                format!("is {expected}"),
                shown(),
            ));
        }
    }
    for (type_, count) in &m.count {
        let found = types.iter().filter(|t| *t == type_).count();
        if found != *count {
            out.push(Mismatch::new(
                &format!("the number of {type_} events"),
                format!("is {count}"),
                format!("{found} (types: {})", shown()),
            ));
        }
    }
    for event in &m.events {
        out.extend(check_event(event, run, vars));
    }
    out
}

fn check_event(m: &EventExpect, run: &RunFiles<'_>, vars: &Vars) -> Vec<Mismatch> {
    let what = format!("{}[{}]", m.type_, m.nth);
    match run.nth_event(&m.type_, m.nth) {
        Ok(event) => {
            let payload = event.get("payload").cloned().unwrap_or(Value::Null);
            check_fields(&format!("{what} payload"), &m.payload, &payload, vars)
        }
        Err(err) => vec![Mismatch::new(&what, "exists in the journal", err)],
    }
}

fn check_requests(
    m: &RequestsExpect,
    record: Option<&Path>,
    vars: &Vars,
    schemas: &SchemaSet,
) -> Vec<Mismatch> {
    let Some(record) = record else {
        return vec![Mismatch::new(
            "LLM requests",
            "are recorded",
            "no mock-llm serves this scenario",
        )];
    };
    let requests = mock::read_requests(record);
    let mut out = Vec::new();
    if let Some(count) = m.count
        && requests.len() != count
    {
        out.push(Mismatch::new(
            "the number of LLM requests received",
            format!("is {count}"),
            requests.len().to_string(),
        ));
    }
    for item in &m.items {
        let what = format!("LLM request [{}]", item.index);
        let Some(request) = pick(&requests, item.index) else {
            out.push(Mismatch::new(
                &what,
                "was received",
                format!("{} request(s) received", requests.len()),
            ));
            continue;
        };
        if let Some(text) = &item.text {
            out.extend(text.check(
                &format!("{what} text"),
                &mock::request_text(request),
                vars,
                schemas,
            ));
        }
        let body = request.get("body").cloned().unwrap_or(Value::Null);
        if let Some(text) = &item.body {
            out.extend(text.check(&format!("{what} body"), &body.to_string(), vars, schemas));
        }
        out.extend(check_fields(
            &format!("{what} body"),
            &item.json,
            &body,
            vars,
        ));
    }
    out
}

fn check_tool_execution(m: &ToolExecutionExpect, run: &RunFiles<'_>, vars: &Vars) -> Vec<Mismatch> {
    let what = format!("tool execution [{}]", m.nth);
    let event = match run.nth_event("ACTION_RESULT", m.nth) {
        Ok(event) => event,
        Err(err) => return vec![Mismatch::new(&what, "has an ACTION_RESULT event", err)],
    };
    let reference = ["/payload/execution_ref", "/payload/action_id"]
        .iter()
        .find_map(|p| event.pointer(p).and_then(Value::as_str));
    let (Some(reference), Some(run_dir)) = (reference, run.dir) else {
        return vec![Mismatch::new(
            &what,
            "is referenced by execution_ref or action_id",
            show(event),
        )];
    };
    let dir = run_dir.join("io").join("tool_executions").join(reference);
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|err| {
            Mismatch::new(
                &format!("{what} {name}"),
                "can be read",
                format!("{}: {err}", path.display()),
            )
        })
    };
    let mut out = Vec::new();
    for (name, matcher) in [("stdout.log", &m.stdout), ("stderr.log", &m.stderr)] {
        if let Some(matcher) = matcher {
            match read(name) {
                Ok(text) => {
                    out.extend(matcher.check(&format!("{what} {name}"), &text, vars, run.schemas))
                }
                Err(mismatch) => out.push(mismatch),
            }
        }
    }
    if let Some(code) = m.exit_code {
        match read("exit_code.txt") {
            Ok(text) if text.trim().parse::<i64>() == Ok(code) => {}
            Ok(text) => out.push(Mismatch::new(
                &format!("{what} exit_code.txt"),
                format!("holds {code}"),
                quote(&text),
            )),
            Err(mismatch) => out.push(mismatch),
        }
    }
    out
}

fn check_file(m: &FileExpect, vars: &Vars, schemas: &SchemaSet) -> Vec<Mismatch> {
    let path = vars.expand(&m.path);
    let must_exist = m.exists || m.text.is_some();
    let exists = Path::new(&path).exists();
    if exists != must_exist {
        let (check, seen) = if must_exist {
            ("exists", "absent")
        } else {
            ("does not exist", "present")
        };
        return vec![Mismatch::new(&path, check, seen)];
    }
    let Some(text) = &m.text else {
        return Vec::new();
    };
    match std::fs::read_to_string(&path) {
        Ok(content) => text.check(&path, &content, vars, schemas),
        Err(err) => vec![Mismatch::new(&path, "can be read", err.to_string())],
    }
}

fn check_no_file_contains(m: &NoFileContains, vars: &Vars) -> Vec<Mismatch> {
    let dir = PathBuf::from(vars.expand(&m.dir));
    let needle = vars.expand(&m.text);
    if needle.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut pending = vec![dir.clone()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file()
                && let Ok(bytes) = std::fs::read(entry.path())
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                found.push(entry.path().display().to_string());
            }
        }
    }
    found.sort();
    if found.is_empty() {
        Vec::new()
    } else {
        vec![Mismatch::new(
            &format!("files under {}", dir.display()),
            format!("do not contain {}", quote(&needle)),
            format!("found in {}", found.join(", ")),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn flag_values_in_both_spellings() {
        let w = words(&["run", "--format", "json", "--run-id=abc", "-w", "/ws"]);
        assert_eq!(flag_value(&w, &["--format"]), Some("json"));
        assert_eq!(flag_value(&w, &["--run-id"]), Some("abc"));
        assert_eq!(flag_value(&w, &["-w", "--work-dir"]), Some("/ws"));
        assert_eq!(flag_value(&w, &["--max-iterations"]), None);
        assert_eq!(flag_value(&words(&["--format"]), &["--format"]), None);
    }

    #[test]
    fn pick_counts_from_either_end() {
        let items = [1, 2, 3];
        assert_eq!(pick(&items, 0), Some(&1));
        assert_eq!(pick(&items, -1), Some(&3));
        assert_eq!(pick(&items, -3), Some(&1));
        assert_eq!(pick(&items, -4), None);
        assert_eq!(pick(&items, 3), None);
    }

    #[test]
    fn secrets_are_found_in_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/log"), "key=sk-SECRET\n").unwrap();
        std::fs::write(dir.path().join("clean"), "nothing").unwrap();
        let mut vars = Vars::default();
        vars.set("tmp", dir.path().to_string_lossy());
        vars.set("api_key", "sk-SECRET");
        let m = NoFileContains {
            dir: "{tmp}".into(),
            text: "{api_key}".into(),
        };
        let found = check_no_file_contains(&m, &vars);
        assert_eq!(found.len(), 1);
        assert!(found[0].observed.ends_with("a/b/log"), "{:?}", found[0]);
    }

    #[test]
    fn files_exist_or_not_with_content() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "hello").unwrap();
        let mut vars = Vars::default();
        vars.set("tmp", dir.path().to_string_lossy());
        let exists: FileExpect =
            serde_saphyr::from_str("{path: '{tmp}/f', text: {equals: hello}}").unwrap();
        assert!(check_file(&exists, &vars, &SchemaSet::empty()).is_empty());
        let absent: FileExpect =
            serde_saphyr::from_str("{path: '{tmp}/f', exists: false}").unwrap();
        assert_eq!(
            check_file(&absent, &vars, &SchemaSet::empty())[0].observed,
            "present"
        );
        let missing: FileExpect = serde_saphyr::from_str("{path: '{tmp}/g'}").unwrap();
        assert_eq!(
            check_file(&missing, &vars, &SchemaSet::empty())[0]
                .expected
                .rsplit(' ')
                .next(),
            Some("exists")
        );
    }
}

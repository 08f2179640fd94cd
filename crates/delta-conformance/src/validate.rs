//! Validating files against `schemas/`: the kind of a file from its name, journals line
//! by line (schema, then `seq` numbering), JSON and YAML documents whole. Used by the
//! `validate` command and by the runner on every run it observes.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::locate_line;
use crate::schemas::{self, SchemaError, SchemaSet};

/// One problem in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// JSON pointer of the offending field (`""`: the whole document or line).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}

/// A file that could not be validated at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// It cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Its kind is not given and cannot be told from its name.
    #[error(
        "cannot tell what {} is from its name; pass --kind (one of: {kinds})",
        path.display()
    )]
    UnknownKind {
        /// The file.
        path: PathBuf,
        /// The kinds available.
        kinds: String,
    },
    /// The schema is missing.
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

/// The `--kind` spelling of journals; its schema is that of one event.
pub const JOURNAL: &str = "journal";

/// The schema kind for a `--kind` value (`journal` means one journal event per line).
pub fn schema_kind(kind: &str) -> &str {
    if kind == JOURNAL {
        schemas::JOURNAL_EVENT
    } else {
        kind
    }
}

/// The kind of a file from its name: `*.jsonl` are journals, `metadata.json`,
/// `agent.yaml`/`config.yaml`, `context.yaml`, `hooks.yaml` and `request.json` are what
/// their names say, YAML files in a `scenarios` directory are scenarios, and any file
/// whose stem is a schema kind (`run-result.json`, `list-runs.json`) is of that kind.
pub fn infer_kind(path: &Path, schemas: &SchemaSet) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .unwrap_or_default();
    let by_name = match name {
        _ if ext == "jsonl" => Some(JOURNAL),
        "agent.yaml" | "agent.yml" | "config.yaml" | "config.yml" => Some("agent"),
        "request.json" => Some("interaction-request"),
        _ if parent == "scenarios" && matches!(ext, "yaml" | "yml") => Some("scenario"),
        _ => None,
    };
    if let Some(kind) = by_name {
        return Some(kind.to_string());
    }
    schemas
        .has(stem)
        .then(|| stem.to_string())
        .or_else(|| schemas.has(&format!("{stem}s")).then(|| format!("{stem}s")))
}

/// Validates one file as `kind` (a schema kind, or `journal`).
pub fn validate_file(
    path: &Path,
    kind: &str,
    schemas: &SchemaSet,
) -> Result<Vec<Problem>, ValidateError> {
    let text = std::fs::read_to_string(path).map_err(|source| ValidateError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if kind == JOURNAL {
        return Ok(check_journal(&text, schemas)?.problems());
    }
    let yaml = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "yaml" | "yml"));
    validate_document(&text, yaml, kind, schemas)
}

/// Validates one JSON (or YAML) document as `kind`, with the line of each problem when it
/// can be found.
pub fn validate_document(
    text: &str,
    yaml: bool,
    kind: &str,
    schemas: &SchemaSet,
) -> Result<Vec<Problem>, ValidateError> {
    let parsed: Result<Value, (Option<usize>, String)> = if yaml {
        serde_saphyr::from_str(text).map_err(|err| {
            let line = err
                .location()
                .filter(|l| l.line() > 0)
                .and_then(|l| usize::try_from(l.line()).ok());
            (line, err.without_snippet().to_string())
        })
    } else {
        serde_json::from_str(text).map_err(|err| (Some(err.line()), err.to_string()))
    };
    let value = match parsed {
        Ok(value) => value,
        Err((line, message)) => {
            return Ok(vec![Problem {
                line,
                pointer: String::new(),
                message: format!(
                    "not valid {}: {message}",
                    if yaml { "YAML" } else { "JSON" }
                ),
            }]);
        }
    };
    let violations = schemas.validate(kind, &value)?;
    let lines = locate_line::Locator::new(text);
    let mut problems: Vec<Problem> = violations
        .into_iter()
        .map(|v| Problem {
            line: lines.line_of(&v.pointer),
            pointer: v.pointer,
            message: v.message,
        })
        .collect();
    if kind == "scenario"
        && problems.is_empty()
        && let Err((line, message)) = crate::scenario::parse(text)
            .map_err(|(loc, m)| (loc.and_then(|(l, _)| usize::try_from(l).ok()), m))
            .and_then(|s| crate::scenario::check(&s).map_err(|m| (None, m)))
    {
        problems.push(Problem {
            line,
            pointer: String::new(),
            message,
        });
    }
    Ok(problems)
}

/// A journal read and checked.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    /// The events that parsed as JSON, in order, with their line numbers.
    pub events: Vec<(usize, Value)>,
    /// Breaches of seed 001 §7's envelope: a line that is not one JSON object, `seq` not an
    /// integer from 1 strictly increasing, `timestamp` not ISO 8601 UTC, `type` not a
    /// string, `payload` not an object, a last line without its newline.
    pub envelope: Vec<Problem>,
    /// `seq` values that skip numbers (DESIGN.md: one more per line).
    pub gaps: Vec<Problem>,
    /// Violations of the journal-event schema (the envelope as this project closes it,
    /// and each payload).
    pub schema: Vec<Problem>,
}

impl Journal {
    /// The events' `type` fields, in order.
    pub fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|(_, e)| e.get("type").and_then(Value::as_str).unwrap_or("?"))
            .collect()
    }

    /// Every problem found, by line; a schema violation at a place the envelope check
    /// already reported is left out.
    pub fn problems(&self) -> Vec<Problem> {
        let reported = |p: &Problem| {
            self.envelope
                .iter()
                .any(|e| e.line == p.line && e.pointer == p.pointer)
        };
        let mut all: Vec<Problem> = self
            .envelope
            .iter()
            .chain(&self.gaps)
            .chain(self.schema.iter().filter(|p| !reported(p)))
            .cloned()
            .collect();
        all.sort_by_key(|p| p.line);
        all
    }
}

/// Checks a journal: each line one JSON object with seed 001 §7.1's envelope, `seq` 1 on
/// the first line and greater on each next one (one more, for DESIGN.md), the last line
/// complete, and each event against the journal-event schema.
pub fn check_journal(text: &str, schemas: &SchemaSet) -> Result<Journal, SchemaError> {
    let mut journal = Journal::default();
    let mut previous: Option<(usize, u64)> = None;
    let line_count = text.lines().count();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let problem = |pointer: &str, message: String| Problem {
            line: Some(number),
            pointer: pointer.to_string(),
            message,
        };
        if line.trim().is_empty() {
            journal.envelope.push(problem(
                "",
                "empty line (each line must be one event)".into(),
            ));
            continue;
        }
        let event: Value = match serde_json::from_str(line) {
            Ok(event) => event,
            Err(err) => {
                let torn = number == line_count && !text.ends_with('\n');
                let what = if torn {
                    "the last line is cut off (a torn write?)"
                } else {
                    "not a JSON object"
                };
                journal.envelope.push(problem("", format!("{what}: {err}")));
                continue;
            }
        };
        if !event.is_object() {
            journal
                .envelope
                .push(problem("", format!("not a JSON object: {}", short(&event))));
            continue;
        }
        for (pointer, message) in envelope_problems(&event) {
            journal.envelope.push(problem(pointer, message));
        }
        for violation in schemas.validate(schemas::JOURNAL_EVENT, &event)? {
            journal
                .schema
                .push(problem(&violation.pointer, violation.message));
        }
        if let Some(seq) = event.get("seq").and_then(Value::as_u64) {
            match previous {
                None if seq != 1 => journal.envelope.push(problem(
                    "/seq",
                    format!("the first event must have seq 1: found {seq}"),
                )),
                Some((line, before)) if seq <= before => journal.envelope.push(problem(
                    "/seq",
                    format!(
                        "seq must increase: line {line} has {before}, this line {seq}"
                    ),
                )),
                Some((line, before)) if seq != before + 1 => journal.gaps.push(problem(
                    "/seq",
                    format!(
                        "seq must be one more than on line {line} ({before}): expected {}, found {seq}",
                        before + 1
                    ),
                )),
                None | Some(_) => {}
            }
            previous = Some((number, seq));
        }
        journal.events.push((number, event));
    }
    if !text.is_empty()
        && !text.ends_with('\n')
        && journal.envelope.iter().all(|p| p.line != Some(line_count))
    {
        journal.envelope.push(Problem {
            line: Some(line_count),
            pointer: String::new(),
            message: "the last line has no newline at its end (a torn write?)".to_string(),
        });
    }
    for list in [
        &mut journal.envelope,
        &mut journal.gaps,
        &mut journal.schema,
    ] {
        list.sort_by_key(|p| p.line);
    }
    Ok(journal)
}

/// What breaks seed 001 §7.1's envelope in one event (an object): each `[Required]` key
/// with its type.
fn envelope_problems(event: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let seq = event.get("seq");
    if seq.and_then(Value::as_u64).is_none_or(|n| n < 1) {
        out.push((
            "/seq",
            format!("[Required] an integer from 1: found {}", shown(seq)),
        ));
    }
    match event.get("timestamp").and_then(Value::as_str) {
        Some(stamp) if is_iso8601_utc(stamp) => {}
        Some(stamp) => out.push((
            "/timestamp",
            format!("[Required] an ISO 8601 UTC timestamp: found {stamp:?}"),
        )),
        None => out.push((
            "/timestamp",
            format!(
                "[Required] a string: found {}",
                shown(event.get("timestamp"))
            ),
        )),
    }
    if !event.get("type").is_some_and(Value::is_string) {
        out.push((
            "/type",
            format!("[Required] a string: found {}", shown(event.get("type"))),
        ));
    }
    if !event.get("payload").is_some_and(Value::is_object) {
        out.push((
            "/payload",
            format!(
                "[Required] an object: found {}",
                shown(event.get("payload"))
            ),
        ));
    }
    out
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_string(), short)
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// An ISO 8601 date and time in UTC: `2025-09-26T10:35:35.123Z` (or the basic form
/// `20250926T103535Z`; minutes or seconds may be left out; the zone `Z` or a zero offset).
pub fn is_iso8601_utc(text: &str) -> bool {
    let Some((date, time)) = text.split_once('T') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let date_ok = match date.len() {
        10 => {
            let parts: Vec<&str> = date.split('-').collect();
            parts.len() == 3
                && parts[0].len() == 4
                && parts[1].len() == 2
                && parts[2].len() == 2
                && parts.iter().all(|p| digits(p))
        }
        8 => digits(date),
        _ => false,
    };
    let (clock, zone) = match time.find(['Z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => return false,
    };
    let zone_ok = matches!(
        zone,
        "Z" | "+00:00" | "+0000" | "+00" | "-00:00" | "-0000" | "-00"
    );
    let (whole, fraction) = match clock.split_once(['.', ',']) {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (clock, None),
    };
    let clock_ok = match whole.len() {
        2 | 4 | 6 => digits(whole),
        5 | 8 => {
            let parts: Vec<&str> = whole.split(':').collect();
            parts.iter().all(|p| p.len() == 2 && digits(p))
        }
        _ => false,
    };
    date_ok && clock_ok && zone_ok && fraction.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> (tempfile::TempDir, SchemaSet) {
        let dir = tempfile::tempdir().unwrap();
        let event = json!({
            "type": "object",
            "required": ["seq", "timestamp", "type", "payload"],
            "properties": {
                "seq": {"type": "integer"},
                "timestamp": {"type": "string"},
                "type": {"type": "string"},
                "payload": {"type": "object"}
            }
        });
        std::fs::write(
            dir.path().join("journal-event.schema.json"),
            event.to_string(),
        )
        .unwrap();
        let meta = json!({"type": "object", "properties": {"status": {"enum": ["COMPLETED"]}}});
        std::fs::write(dir.path().join("metadata.schema.json"), meta.to_string()).unwrap();
        std::fs::write(dir.path().join("run-result.schema.json"), "{}").unwrap();
        let set = SchemaSet::load(dir.path()).unwrap();
        (dir, set)
    }

    fn line(seq: Value) -> String {
        json!({"seq": seq, "timestamp": "2025-09-26T10:35:35.123Z", "type": "X", "payload": {}})
            .to_string()
    }

    #[test]
    fn a_good_journal_has_no_problems() {
        let (_d, s) = schemas();
        let text = format!("{}\n{}\n", line(json!(1)), line(json!(2)));
        let journal = check_journal(&text, &s).unwrap();
        assert!(journal.problems().is_empty(), "{:?}", journal.problems());
        assert_eq!(journal.types(), ["X", "X"]);
    }

    /// Seed 001 §7.1: an integer from 1, strictly increasing (the envelope); one more on
    /// each line is DESIGN.md's (a gap).
    #[test]
    fn seq_starts_at_one_and_increases() {
        let (_d, s) = schemas();
        let text = [2, 3, 5, 5].map(|n| line(json!(n))).join("\n") + "\n";
        let journal = check_journal(&text, &s).unwrap();
        let shown = |problems: &[Problem]| -> Vec<String> {
            problems.iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            shown(&journal.envelope),
            [
                "line 1: /seq: the first event must have seq 1: found 2",
                "line 4: /seq: seq must increase: line 3 has 5, this line 5",
            ]
        );
        assert_eq!(
            shown(&journal.gaps),
            ["line 3: /seq: seq must be one more than on line 2 (3): expected 4, found 5"]
        );
    }

    #[test]
    fn the_envelope_is_checked_without_the_schema() {
        let (_d, s) = schemas();
        let lines = [
            json!({"seq": 1, "timestamp": "2025-09-26T10:35:35Z", "type": "ERROR", "payload": {}, "iteration": 1}),
            json!({"seq": 2, "timestamp": "26/09/2025", "type": 7, "payload": []}),
            json!({"seq": 3, "timestamp": "2025-09-26T12:35:35+02:00", "type": "X"}),
        ];
        let text = lines.map(|l| l.to_string()).join("\n") + "\n";
        let journal = check_journal(&text, &s).unwrap();
        let at: Vec<(Option<usize>, &str)> = journal
            .envelope
            .iter()
            .map(|p| (p.line, p.pointer.as_str()))
            .collect();
        // An unknown type and an extra key are the schema's business, not the envelope's.
        assert_eq!(
            at,
            [
                (Some(2), "/timestamp"),
                (Some(2), "/type"),
                (Some(2), "/payload"),
                (Some(3), "/timestamp"),
                (Some(3), "/payload"),
            ]
        );
    }

    #[test]
    fn timestamps_are_iso_8601_in_utc() {
        for good in [
            "2025-09-26T10:35:35.123Z",
            "2025-09-26T10:35:35Z",
            "2025-09-26T10:35Z",
            "20250926T103535Z",
            "2025-09-26T10:35:35.123456+00:00",
        ] {
            assert!(is_iso8601_utc(good), "{good}");
        }
        for bad in [
            "2025-09-26 10:35:35Z",
            "2025-09-26T10:35:35",
            "2025-09-26T10:35:35+02:00",
            "yesterday",
            "2025-9-26T10:35:35Z",
        ] {
            assert!(!is_iso8601_utc(bad), "{bad}");
        }
    }

    #[test]
    fn missing_fields_and_wrong_types_name_line_and_pointer() {
        let (_d, s) = schemas();
        let mut second: Value = serde_json::from_str(&line(json!(2))).unwrap();
        second.as_object_mut().unwrap().remove("timestamp");
        let text = format!("{}\n{second}\n{}\n", line(json!(1)), line(json!("3")));
        let journal = check_journal(&text, &s).unwrap();
        let at = |problems: &[Problem]| -> Vec<(Option<usize>, String)> {
            problems
                .iter()
                .map(|p| (p.line, p.pointer.clone()))
                .collect()
        };
        let expected = vec![
            (Some(2), "/timestamp".to_string()),
            (Some(3), "/seq".to_string()),
        ];
        assert_eq!(at(&journal.envelope), expected);
        assert_eq!(at(&journal.schema), expected);
        assert!(
            journal.envelope[1].message.contains("integer"),
            "{}",
            journal.envelope[1]
        );
    }

    #[test]
    fn a_torn_last_line_is_reported() {
        let (_d, s) = schemas();
        let text = format!("{}\n{{\"seq\": 2, \"ty", line(json!(1)));
        let problems = check_journal(&text, &s).unwrap().problems();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.starts_with("the last line is cut off"),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn kinds_are_inferred_from_names() {
        let (_d, s) = schemas();
        let kind = |p: &str| infer_kind(Path::new(p), &s);
        assert_eq!(kind("w/.delta/r/journal.jsonl").as_deref(), Some("journal"));
        assert_eq!(
            kind("w/.delta/r/metadata.json").as_deref(),
            Some("metadata")
        );
        assert_eq!(kind("out/run-result.json").as_deref(), Some("run-result"));
        assert_eq!(kind("a/config.yaml").as_deref(), Some("agent"));
        assert_eq!(
            kind("fixtures/scenarios/x.yaml").as_deref(),
            Some("scenario")
        );
        assert_eq!(kind("notes.txt"), None);
    }

    #[test]
    fn document_problems_carry_lines() {
        let (_d, s) = schemas();
        let text = "{\n  \"run_id\": \"x\",\n  \"status\": \"DONE\"\n}\n";
        let problems = validate_document(text, false, "metadata", &s).unwrap();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            (problems[0].line, problems[0].pointer.as_str()),
            (Some(3), "/status")
        );
        let broken = validate_document("{\n  \"a\": \n", false, "metadata", &s).unwrap();
        assert_eq!(broken[0].line, Some(3));
    }
}

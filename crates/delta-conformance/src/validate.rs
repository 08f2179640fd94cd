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
        return Ok(check_journal(&text, schemas)?.problems);
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
    /// Every problem found.
    pub problems: Vec<Problem>,
}

impl Journal {
    /// The events' `type` fields, in order.
    pub fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|(_, e)| e.get("type").and_then(Value::as_str).unwrap_or("?"))
            .collect()
    }
}

/// Checks a journal: each line one JSON object valid against the journal-event schema,
/// `seq` 1 on the first line and one more on each next line, the last line complete.
pub fn check_journal(text: &str, schemas: &SchemaSet) -> Result<Journal, SchemaError> {
    let mut journal = Journal::default();
    let mut expected_seq: u64 = 1;
    let mut previous_line: Option<usize> = None;
    let line_count = text.lines().count();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let problem = |pointer: &str, message: String| Problem {
            line: Some(number),
            pointer: pointer.to_string(),
            message,
        };
        if line.trim().is_empty() {
            journal.problems.push(problem(
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
                journal.problems.push(problem("", format!("{what}: {err}")));
                expected_seq += 1;
                continue;
            }
        };
        for violation in schemas.validate(schemas::JOURNAL_EVENT, &event)? {
            journal
                .problems
                .push(problem(&violation.pointer, violation.message));
        }
        match event.get("seq").and_then(Value::as_u64) {
            Some(seq) if seq == expected_seq => {}
            Some(seq) => {
                let why = match previous_line {
                    None => "the first event must have seq 1".to_string(),
                    Some(prev) => format!(
                        "seq must be one more than on line {prev} ({})",
                        expected_seq - 1
                    ),
                };
                journal.problems.push(problem(
                    "/seq",
                    format!("{why}: expected {expected_seq}, found {seq}"),
                ));
                expected_seq = seq;
            }
            None => {
                let found = event
                    .get("seq")
                    .map_or("nothing".to_string(), Value::to_string);
                journal.problems.push(problem(
                    "/seq",
                    format!("expected the integer {expected_seq}, found {found}"),
                ));
            }
        }
        expected_seq += 1;
        previous_line = Some(number);
        journal.events.push((number, event));
    }
    if !text.is_empty()
        && !text.ends_with('\n')
        && journal.problems.iter().all(|p| p.line != Some(line_count))
    {
        journal.problems.push(Problem {
            line: Some(line_count),
            pointer: String::new(),
            message: "the last line has no newline at its end (a torn write?)".to_string(),
        });
    }
    journal.problems.sort_by_key(|p| p.line);
    Ok(journal)
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
        json!({"seq": seq, "timestamp": "t", "type": "X", "payload": {}}).to_string()
    }

    #[test]
    fn a_good_journal_has_no_problems() {
        let (_d, s) = schemas();
        let text = format!("{}\n{}\n", line(json!(1)), line(json!(2)));
        let journal = check_journal(&text, &s).unwrap();
        assert!(journal.problems.is_empty(), "{:?}", journal.problems);
        assert_eq!(journal.types(), ["X", "X"]);
    }

    #[test]
    fn seq_must_start_at_one_and_have_no_gaps() {
        let (_d, s) = schemas();
        let text = format!(
            "{}\n{}\n{}\n",
            line(json!(2)),
            line(json!(3)),
            line(json!(5))
        );
        let problems = check_journal(&text, &s).unwrap().problems;
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "line 1: /seq: the first event must have seq 1: expected 1, found 2",
                "line 3: /seq: seq must be one more than on line 2 (3): expected 4, found 5",
            ]
        );
    }

    #[test]
    fn missing_fields_and_wrong_types_name_line_and_pointer() {
        let (_d, s) = schemas();
        let mut second: Value = serde_json::from_str(&line(json!(2))).unwrap();
        second.as_object_mut().unwrap().remove("timestamp");
        let text = format!("{}\n{second}\n{}\n", line(json!(1)), line(json!("3")));
        let problems = check_journal(&text, &s).unwrap().problems;
        let at: Vec<(Option<usize>, &str)> = problems
            .iter()
            .map(|p| (p.line, p.pointer.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                (Some(2), "/timestamp"),
                (Some(3), "/seq"),
                (Some(3), "/seq")
            ]
        );
        assert!(problems[1].message.contains("integer"), "{}", problems[1]);
    }

    #[test]
    fn a_torn_last_line_is_reported() {
        let (_d, s) = schemas();
        let text = format!("{}\n{{\"seq\": 2, \"ty", line(json!(1)));
        let problems = check_journal(&text, &s).unwrap().problems;
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

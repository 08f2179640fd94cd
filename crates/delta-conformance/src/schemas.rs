//! The JSON Schemas in `schemas/`: loading every `NAME.schema.json` of a directory as the
//! kind `NAME`, and validating documents with the JSON pointer of each offending field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// The suffix that marks a schema file; the rest of the name is its kind.
pub const SUFFIX: &str = ".schema.json";

/// The kinds the runner itself validates against while running scenarios.
pub const RUNNER_KINDS: &[&str] = &[JOURNAL_EVENT, METADATA, RUN_RESULT, LIST_RUNS];
/// One journal line.
pub const JOURNAL_EVENT: &str = "journal-event";
/// `metadata.json`.
pub const METADATA: &str = "metadata";
/// `--format json` output of `run` and `continue`.
pub const RUN_RESULT: &str = "run-result";
/// [`RUN_RESULT`] as seed 002 §5 gives it: derived from that file when it loads, with
/// open objects, no run-id syntax or timestamp format, and `model_usage` any object
/// (000 §2.6.6: `Record<string, any>`). It has no file of its own.
pub const RUN_RESULT_SPEC: &str = "run-result (seed 002 §5)";
/// `--format json` output of `list-runs`.
pub const LIST_RUNS: &str = "list-runs";
/// A mock-llm script.
pub const MOCK_SCRIPT: &str = "mock-script";

/// A schema set that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The directory cannot be listed.
    #[error("cannot read the schema directory {}: {source}", dir.display())]
    ReadDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A schema file cannot be read or is not JSON.
    #[error("cannot load the schema {}: {reason}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A schema file is not a valid JSON Schema.
    #[error("{} is not a valid JSON Schema: {reason}", path.display())]
    Compile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A kind has no schema file.
    #[error("no schema for {kind:?}: {} does not exist", dir.join(format!("{kind}{SUFFIX}")).display())]
    Missing {
        /// The kind.
        kind: String,
        /// The directory searched.
        dir: PathBuf,
    },
}

/// One way a document breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// JSON pointer of the offending field (`""` is the whole document). For a missing
    /// required property it points at the property itself.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}

/// Compiled validators by kind, from one directory.
#[derive(Debug)]
pub struct SchemaSet {
    dir: PathBuf,
    validators: BTreeMap<String, jsonschema::Validator>,
    /// Validators derived from a file's schema ([`RUN_RESULT_SPEC`]).
    derived: BTreeMap<String, jsonschema::Validator>,
}

impl SchemaSet {
    /// Compiles every `*.schema.json` in `dir`.
    pub fn load(dir: &Path) -> Result<Self, SchemaError> {
        let entries = std::fs::read_dir(dir).map_err(|source| SchemaError::ReadDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        let mut validators = BTreeMap::new();
        let mut derived = BTreeMap::new();
        for entry in entries {
            let entry = entry.map_err(|source| SchemaError::ReadDir {
                dir: dir.to_path_buf(),
                source,
            })?;
            let file_name = entry.file_name();
            let Some(kind) = file_name.to_str().and_then(|n| n.strip_suffix(SUFFIX)) else {
                continue;
            };
            let path = entry.path();
            let text = std::fs::read_to_string(&path).map_err(|err| SchemaError::Load {
                path: path.clone(),
                reason: err.to_string(),
            })?;
            let schema: Value = serde_json::from_str(&text).map_err(|err| SchemaError::Load {
                path: path.clone(),
                reason: err.to_string(),
            })?;
            let compile = |schema: &Value| compile(schema, &path);
            if kind == RUN_RESULT {
                let mut spec = schema.clone();
                relax(&mut spec);
                derived.insert(RUN_RESULT_SPEC.to_string(), compile(&spec)?);
            }
            validators.insert(kind.to_string(), compile(&schema)?);
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            validators,
            derived,
        })
    }

    /// A set without schemas (for commands that can do without).
    pub fn empty() -> Self {
        Self {
            dir: PathBuf::new(),
            validators: BTreeMap::new(),
            derived: BTreeMap::new(),
        }
    }

    /// The directory the schemas came from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The kinds available, sorted.
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.validators.keys().map(String::as_str)
    }

    /// Whether `kind` has a schema.
    pub fn has(&self, kind: &str) -> bool {
        self.validators.contains_key(kind)
    }

    /// Fails unless every kind in `kinds` has a schema.
    pub fn require(&self, kinds: &[&str]) -> Result<(), SchemaError> {
        match kinds.iter().find(|kind| !self.has(kind)) {
            None => Ok(()),
            Some(kind) => Err(SchemaError::Missing {
                kind: (*kind).to_string(),
                dir: self.dir.clone(),
            }),
        }
    }

    /// The schema file of a kind (a derived kind's is the file it comes from).
    pub fn path_of(&self, kind: &str) -> PathBuf {
        let file = if kind == RUN_RESULT_SPEC {
            RUN_RESULT
        } else {
            kind
        };
        self.dir.join(format!("{file}{SUFFIX}"))
    }

    /// Every violation of `value` against the schema of `kind`.
    pub fn validate(&self, kind: &str, value: &Value) -> Result<Vec<Violation>, SchemaError> {
        let validator = self
            .validators
            .get(kind)
            .or_else(|| self.derived.get(kind))
            .ok_or_else(|| SchemaError::Missing {
                kind: kind.to_string(),
                dir: self.dir.clone(),
            })?;
        let mut found = Found::default();
        for err in validator.iter_errors(value) {
            found.add(&err);
        }
        let expanded = found.expanded;
        let mut violations: Vec<Violation> = found
            .violations
            .into_iter()
            .filter(|(kind, v)| !(*kind == Noise::Unevaluated && expanded.contains(&v.pointer)))
            .map(|(_, v)| v)
            .collect();
        violations.sort_by(|a, b| a.pointer.cmp(&b.pointer).then(a.message.cmp(&b.message)));
        violations.dedup();
        Ok(violations)
    }
}

/// Formats are asserted: a timestamp that is not RFC 3339 breaks the contract even though
/// draft 2020-12 treats `format` as an annotation by default.
fn compile(schema: &Value, path: &Path) -> Result<jsonschema::Validator, SchemaError> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|err| SchemaError::Compile {
            path: path.to_path_buf(),
            reason: err.to_string(),
        })
}

/// A schema relaxed to what the seeds give: objects open to more fields, no string
/// patterns (our run-id syntax) or `date-time` formats, and `model_usage` any object.
fn relax(schema: &mut Value) {
    const DATA: &[&str] = &["enum", "const", "required", "examples", "default"];
    match schema {
        Value::Array(items) => items.iter_mut().for_each(relax),
        Value::Object(object) => {
            for closing in ["additionalProperties", "unevaluatedProperties"] {
                if object.get(closing) == Some(&Value::Bool(false)) {
                    object.remove(closing);
                }
            }
            object.remove("pattern");
            if object.get("format").and_then(Value::as_str) == Some("date-time") {
                object.remove("format");
            }
            if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut)
                && properties.contains_key("model_usage")
            {
                properties.insert("model_usage".into(), serde_json::json!({"type": "object"}));
            }
            for (key, value) in object.iter_mut() {
                match key.as_str() {
                    "properties" | "$defs" | "patternProperties" => {
                        if let Some(map) = value.as_object_mut() {
                            map.values_mut().for_each(relax);
                        }
                    }
                    _ if DATA.contains(&key.as_str()) => {}
                    _ => relax(value),
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// Whether a violation is a mere consequence of another one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Noise {
    /// Stands on its own.
    No,
    /// `unevaluatedProperties`: at a place where a `oneOf` failed, it only repeats that no
    /// branch matched.
    Unevaluated,
}

/// Violations collected from jsonschema's errors, `oneOf`/`anyOf` failures replaced by
/// the errors of the branch the document was evidently meant to match.
#[derive(Default)]
struct Found {
    violations: Vec<(Noise, Violation)>,
    /// Pointers where a `oneOf`/`anyOf` was expanded into a branch's errors.
    expanded: Vec<String>,
}

impl Found {
    fn add(&mut self, err: &jsonschema::ValidationError<'_>) {
        let path = err.instance_path().as_str().to_string();
        let branches = if let ValidationErrorKind::OneOfNotValid { context }
        | ValidationErrorKind::AnyOf { context } = err.kind()
        {
            Some(context)
        } else {
            None
        };
        if let Some(branches) = branches
            && let Some(best) = closest_branch(branches, &path)
        {
            self.expanded.push(path);
            for inner in best {
                self.add(inner);
            }
            return;
        }
        let mut pointer = path;
        if let ValidationErrorKind::Required { property } = err.kind() {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            pointer.push('/');
            pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        let noise = if matches!(
            err.kind(),
            ValidationErrorKind::UnevaluatedProperties { .. }
        ) {
            Noise::Unevaluated
        } else {
            Noise::No
        };
        self.violations.push((
            noise,
            Violation {
                pointer,
                message: err.to_string(),
            },
        ));
    }
}

/// The branch of a failed `oneOf`/`anyOf` the document was meant to match: among those
/// whose discriminator (a `const` or `enum` member directly below, such as `type`)
/// matched, the one with the fewest errors. `None` when every branch's discriminator
/// failed (the document names no known variant), so the `oneOf` error itself is shown.
fn closest_branch<'e>(
    branches: &'e [Vec<jsonschema::ValidationError<'static>>],
    path: &str,
) -> Option<&'e [jsonschema::ValidationError<'static>]> {
    let discriminator_failed = |branch: &Vec<jsonschema::ValidationError<'static>>| {
        branch.iter().any(|e| {
            let below = e
                .instance_path()
                .as_str()
                .strip_prefix(path)
                .is_some_and(|rest| rest.matches('/').count() == 1);
            below
                && matches!(
                    e.kind(),
                    ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
                )
        })
    };
    branches
        .iter()
        .filter(|branch| !branch.is_empty() && !discriminator_failed(branch))
        .min_by_key(|branch| branch.len())
        .map(Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set() -> (tempfile::TempDir, SchemaSet) {
        let dir = tempfile::tempdir().unwrap();
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "required": ["seq", "type"],
            "properties": {
                "seq": {"type": "integer", "minimum": 1, "format": "uint64"},
                "type": {"type": "string"},
                "at": {"type": "string", "format": "date-time"}
            }
        });
        std::fs::write(dir.path().join("event.schema.json"), schema.to_string()).unwrap();
        std::fs::write(dir.path().join("README.md"), "not a schema").unwrap();
        let set = SchemaSet::load(dir.path()).unwrap();
        (dir, set)
    }

    #[test]
    fn kinds_come_from_file_names() {
        let (_dir, set) = set();
        assert_eq!(set.kinds().collect::<Vec<_>>(), ["event"]);
        assert!(set.require(&["event"]).is_ok());
        let missing = set.require(&["metadata"]).unwrap_err().to_string();
        assert!(
            missing.contains("metadata.schema.json does not exist"),
            "{missing}"
        );
    }

    #[test]
    fn violations_point_at_the_field() {
        let (_dir, set) = set();
        assert!(
            set.validate("event", &json!({"seq": 1, "type": "X"}))
                .unwrap()
                .is_empty()
        );
        let found = set.validate("event", &json!({"seq": "1"})).unwrap();
        let pointers: Vec<_> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(pointers, ["/seq", "/type"]);
        assert!(found[1].message.contains("required"), "{}", found[1]);
    }

    /// A failed `oneOf` is shown as the errors of the branch whose discriminator matched.
    #[test]
    fn one_of_failures_point_into_the_intended_branch() {
        let dir = tempfile::tempdir().unwrap();
        let schema = json!({
            "oneOf": [
                {"properties": {"type": {"const": "A"}, "payload": {"required": ["a"]}},
                 "required": ["type", "payload"]},
                {"properties": {"type": {"const": "B"}, "payload": {"required": ["b"]}},
                 "required": ["type", "payload"]}
            ],
            "properties": {"seq": {"type": "integer"}},
            "unevaluatedProperties": false
        });
        std::fs::write(dir.path().join("ev.schema.json"), schema.to_string()).unwrap();
        let set = SchemaSet::load(dir.path()).unwrap();
        let found = set
            .validate("ev", &json!({"seq": 1, "type": "B", "payload": {}}))
            .unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pointer, "/payload/b");
        let unknown = set
            .validate("ev", &json!({"seq": 1, "type": "C", "payload": {}}))
            .unwrap();
        assert!(
            unknown
                .iter()
                .any(|v| v.pointer.is_empty() && v.message.contains("oneOf")),
            "{unknown:?}"
        );
    }

    /// The RunResult as seed 002 §5 gives it: more fields and any per-model usage are
    /// fine, a missing required field or a wrong type is not.
    #[test]
    fn the_spec_run_result_is_the_schema_relaxed() {
        let dir = tempfile::tempdir().unwrap();
        let schema = json!({
            "type": "object",
            "required": ["run_id", "metrics"],
            "additionalProperties": false,
            "properties": {
                "run_id": {"type": "string", "pattern": "^[a-z]+$"},
                "metrics": {"$ref": "#/$defs/Metrics"}
            },
            "$defs": {"Metrics": {
                "type": "object",
                "additionalProperties": false,
                "required": ["start_time", "model_usage"],
                "properties": {
                    "start_time": {"type": "string", "format": "date-time"},
                    "model_usage": {"type": "object", "additionalProperties": {"required": ["calls"]}}
                }
            }}
        });
        std::fs::write(
            dir.path().join("run-result.schema.json"),
            schema.to_string(),
        )
        .unwrap();
        let set = SchemaSet::load(dir.path()).unwrap();
        let loose = json!({
            "run_id": "RUN-1",
            "extra": true,
            "metrics": {"start_time": "10:30", "model_usage": {"gpt": {"tokens": 1}}, "more": 1}
        });
        assert!(set.validate(RUN_RESULT_SPEC, &loose).unwrap().is_empty());
        assert_eq!(set.validate(RUN_RESULT, &loose).unwrap().len(), 5);
        let broken = json!({"run_id": 7, "metrics": {"model_usage": []}});
        let found = set.validate(RUN_RESULT_SPEC, &broken).unwrap();
        let pointers: Vec<&str> = found.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/metrics/model_usage", "/metrics/start_time", "/run_id"]
        );
        assert_eq!(
            set.path_of(RUN_RESULT_SPEC),
            dir.path().join("run-result.schema.json")
        );
        assert_eq!(set.kinds().collect::<Vec<_>>(), [RUN_RESULT]);
    }

    #[test]
    fn a_broken_schema_file_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.schema.json"), "{").unwrap();
        let err = SchemaSet::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("x.schema.json"), "{err}");
    }
}

//! The final answer checked against the agent's output schema (`--output-schema`,
//! `output_schema:` in agent.yaml): a JSON Schema of draft 2020-12 that only the final
//! answer must satisfy, never a turn with tool calls.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Invalid answers sent back to the model before the run fails: the model gets the
/// validation errors this many times, then the next invalid answer ends the run FAILED.
pub const MAX_REPAIRS: u32 = 2;

/// A loaded output schema.
#[derive(Debug, Clone)]
pub struct OutputSchema {
    path: PathBuf,
    schema: Value,
}

/// Why a schema file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaFileError {
    /// The file cannot be read.
    #[error("cannot read the output schema {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON, or not a valid JSON Schema.
    #[error("{} is not a usable JSON Schema (draft 2020-12): {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line and column for JSON syntax errors.
        problem: String,
    },
}

impl OutputSchema {
    /// Reads and compiles the schema at `path`.
    ///
    /// # Errors
    /// When it cannot be read, is not JSON, or is not a valid schema.
    pub fn load(path: &Path) -> Result<Self, SchemaFileError> {
        let read_error = |source| SchemaFileError::Read {
            path: path.to_path_buf(),
            source,
        };
        // A FIFO or a device would block or never end: only regular files are schemas.
        if !std::fs::metadata(path).map_err(read_error)?.is_file() {
            return Err(read_error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
        let text = std::fs::read(path).map_err(read_error)?;
        let invalid = |problem: String| SchemaFileError::Invalid {
            path: path.to_path_buf(),
            problem,
        };
        let schema: Value = serde_json::from_slice(&text).map_err(|e| invalid(e.to_string()))?;
        compile(&schema).map_err(invalid)?;
        Ok(Self {
            path: path.to_path_buf(),
            schema,
        })
    }

    /// The schema file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The answer as the validated JSON value, or every reason it is not one.
    ///
    /// The answer is JSON text, optionally inside one Markdown code fence (models add
    /// them even when asked not to).
    ///
    /// # Errors
    /// One line per problem: `answer is not JSON: …`, or `/path: message` per violation.
    pub fn check(&self, answer: &str) -> Result<Value, Vec<String>> {
        let value: Value = serde_json::from_str(unfenced(answer))
            .map_err(|e| vec![format!("the answer is not JSON: {e}")])?;
        // Compiled when loaded; a failure here would be a schema the crate accepted once
        // and refuses now, reported like any violation rather than trusted.
        let (schemas, index) = compile(&self.schema)
            .map_err(|e| vec![format!("the output schema cannot be compiled: {e}")])?;
        let mut errors = Vec::new();
        if let Err(error) = schemas.validate(&value, index) {
            violations(&error, &mut errors);
        }
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(errors)
        }
    }

    /// The message that sends an invalid answer back to the model.
    #[must_use]
    pub fn repair_request(&self, errors: &[String]) -> String {
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        format!(
            "Your final answer does not satisfy the required output schema ({name}):\n{}\n\n\
             Answer again with only a JSON value that satisfies this schema:\n{}",
            errors
                .iter()
                .map(|e| format!("- {e}"))
                .collect::<Vec<_>>()
                .join("\n"),
            self.schema
        )
    }
}

/// The name the schema is compiled under: references resolve inside it, never elsewhere.
const SCHEMA_URL: &str = "urn:delta:output-schema";

/// `schema` compiled as draft 2020-12 (unless it names another draft in `$schema`), checked
/// against its meta-schema.
fn compile(schema: &Value) -> Result<(boon::Schemas, boon::SchemaIndex), String> {
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler.use_loader(Box::new(NoLoader));
    compiler
        .add_resource(SCHEMA_URL, schema.clone())
        .map_err(|e| with_causes(&e))?;
    let mut schemas = boon::Schemas::new();
    let index = compiler
        .compile(SCHEMA_URL, &mut schemas)
        .map_err(|e| with_causes(&e))?;
    Ok((schemas, index))
}

/// `error` and its causes, `: `-separated (boon's own message leaves the cause out).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}

/// Refuses every URL: a user's schema is compiled alone, and its `$ref`s to files or the
/// network are errors rather than reads of whatever they name.
struct NoLoader;

impl boon::UrlLoader for NoLoader {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("{url} is outside the schema; only references within it resolve").into())
    }
}

/// One `/path: message` line per failed leaf of `error`'s tree (its inner nodes only say
/// that some of their children failed).
fn violations(error: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
    if error.causes.is_empty() {
        let at = error.instance_location.to_string();
        let at = if at.is_empty() { "/".to_owned() } else { at };
        out.push(format!("{at}: {}", error.kind));
    }
    for cause in &error.causes {
        violations(cause, out);
    }
}

/// `text` without one surrounding Markdown code fence (```json … ```).
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // The fence's info string (`json`) runs to the first newline.
    body.split_once('\n')
        .map_or(body, |(_, inner)| inner)
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(value: Value) -> OutputSchema {
        OutputSchema {
            path: PathBuf::from("/agent/answer.schema.json"),
            schema: value,
        }
    }

    #[test]
    fn a_valid_answer_is_its_json_value_fenced_or_not() {
        let s = schema(serde_json::json!({"type": "object", "required": ["n"]}));
        assert_eq!(s.check("{\"n\": 1}"), Ok(serde_json::json!({"n": 1})));
        assert_eq!(
            s.check("```json\n{\"n\": 2}\n```"),
            Ok(serde_json::json!({"n": 2}))
        );
        let numbers = schema(serde_json::json!({"type": "integer"}));
        assert_eq!(numbers.check(" 42\n"), Ok(serde_json::json!(42)));
    }

    #[test]
    fn every_violation_is_listed_with_its_place() {
        let s = schema(serde_json::json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
            "required": ["n", "s"]
        }));
        let errors = s.check("{\"n\": \"one\"}").unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("/n: ")), "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("/: ")), "{errors:?}");
        assert_eq!(
            s.check("not json").unwrap_err()[0].split(':').next(),
            Some("the answer is not JSON")
        );
    }

    #[test]
    fn a_schema_is_compiled_alone_and_must_be_a_schema() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.json");
        std::fs::write(&other, r#"{"type": "string"}"#).unwrap();
        let load = |text: String| {
            let path = dir.path().join("answer.schema.json");
            std::fs::write(&path, text).unwrap();
            OutputSchema::load(&path)
        };
        let reaching_out = load(format!(r#"{{"$ref": "file://{}"}}"#, other.display()));
        let message = reaching_out.unwrap_err().to_string();
        assert!(message.contains("outside the schema"), "{message}");
        assert!(load(r#"{"type": 5}"#.to_owned()).is_err());
        let inner = load(
            r##"{"$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}}"##
                .to_owned(),
        )
        .unwrap();
        assert!(inner.check(r#"{"n": 1}"#).is_ok());
        assert!(inner.check(r#"{"n": "x"}"#).unwrap_err()[0].starts_with("/n: "));
    }
}

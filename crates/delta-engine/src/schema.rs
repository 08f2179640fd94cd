//! The published JSON Schemas (draft 2020-12) of the files the engine reads and writes,
//! generated from the Rust types; `tests/schemas` keeps the committed `schemas/` in step.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::Value;

use crate::config::raw::{AgentYaml, ClaudeHooksJson, ContextYaml, HooksYaml, ImportedToolsYaml};
use crate::hooks::{HookContext, HookControl};
use crate::journal::Event;
use crate::output::{RefusalLine, RunListingArray, RunResult};
use crate::run::{InteractionRequest, Metadata};
use delta_sessions::{CleanupOutput, EndOutput, ErrorOutput, ExecOutput, ListEntry, StartOutput};

/// Every schema as `(file name under schemas/, schema)`.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        ("agent.schema.json", root::<AgentYaml>(None)),
        ("context.schema.json", root::<ContextYaml>(None)),
        (
            "hooks.schema.json",
            root::<HooksYaml>(Some("Delta Engine hooks.yaml")),
        ),
        ("claude-hooks.schema.json", root::<ClaudeHooksJson>(None)),
        (
            "imported-tools.schema.json",
            root::<ImportedToolsYaml>(None),
        ),
        ("hook-context.schema.json", written::<HookContext>()),
        ("hook-control.schema.json", root::<HookControl>(None)),
        ("journal-event.schema.json", written::<Event>()),
        ("metadata.schema.json", written::<Metadata>()),
        ("run-result.schema.json", written::<RunResult>()),
        ("stream-line.schema.json", stream_line()),
        ("list-runs.schema.json", written::<RunListingArray>()),
        (
            "interaction-request.schema.json",
            written::<InteractionRequest>(),
        ),
        (
            "sessions-start.schema.json",
            root::<StartOutput>(Some("delta-sessions start output")),
        ),
        (
            "sessions-exec.schema.json",
            root::<ExecOutput>(Some("delta-sessions exec output")),
        ),
        (
            "sessions-end.schema.json",
            root::<EndOutput>(Some("delta-sessions end output")),
        ),
        (
            "sessions-list.schema.json",
            root::<Vec<ListEntry>>(Some("delta-sessions list output")),
        ),
        (
            "sessions-cleanup.schema.json",
            root::<CleanupOutput>(Some("delta-sessions cleanup output")),
        ),
        (
            "sessions-error.schema.json",
            root::<ErrorOutput>(Some("delta-sessions error output")),
        ),
    ]
}

/// One line of `--format jsonl`: a journal event exactly as in `journal.jsonl`, or the
/// RESULT line (RunResult v2.0 with `type` and `exit_code`; or, when no run could be
/// driven, a refusal). Composed from the generated schemas of those types.
fn stream_line() -> Value {
    let mut defs = serde_json::Map::new();
    let mut take = |schema: Value| -> Value {
        let Value::Object(mut schema) = schema else {
            return schema;
        };
        if let Some(Value::Object(more)) = schema.remove("$defs") {
            defs.extend(more);
        }
        schema.remove("$schema");
        Value::Object(schema)
    };
    let event = take(written::<Event>());
    let mut result = take(written::<RunResult>());
    if let Value::Object(result) = &mut result {
        result.insert("title".into(), "RESULT line of a run".into());
        if let Some(Value::Object(properties)) = result.get_mut("properties") {
            properties.insert(
                "type".into(),
                serde_json::json!({"const": "RESULT", "description": "`RESULT`."}),
            );
            properties.insert(
                "replay".into(),
                serde_json::json!({
                    "type": "object",
                    "description": "`delta replay` only: its outcome, as its `--format json` prints it."
                }),
            );
            properties.insert(
                "exit_code".into(),
                serde_json::json!({
                    "type": "integer",
                    "enum": [0, 1, 2, 101, 126, 130],
                    "description": "The exit code the process ends with."
                }),
            );
        }
        if let Some(Value::Array(required)) = result.get_mut("required") {
            required.push("type".into());
            required.push("exit_code".into());
        }
    }
    let refusal = take(written::<RefusalLine>());
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Delta Engine --format jsonl line",
        "description": "stdout of `delta run|continue|fork|replay --format jsonl`: every journal event the run appends, as in journal.jsonl, then exactly one RESULT line.",
        "oneOf": [event, result, refusal],
        "$defs": defs,
    })
}

/// The root schema of `T`, with `title` set when the type does not carry one.
fn root<T: JsonSchema>(title: Option<&str>) -> Value {
    let mut schema = SchemaGenerator::default().into_root_schema_for::<T>();
    if let Some(title) = title {
        schema.insert("title".into(), title.into());
    }
    schema.into()
}

/// The schema of a file the engine writes: generated for the serialization contract, so a
/// field we always write is required (and nullable where it may be null) and the schema
/// describes exactly what the engine produces.
fn written<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

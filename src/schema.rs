//! The published JSON Schemas (draft 2020-12) of the files the engine reads and writes,
//! generated from the Rust types; `tests/schemas` keeps the committed `schemas/` in step.

use schemars::{JsonSchema, SchemaGenerator};
use serde_json::Value;

use crate::config::raw::{AgentYaml, ContextYaml, HooksYaml, ImportedToolsYaml};
use crate::hooks::{HookContext, HookControl};

/// Every schema as `(file name under schemas/, schema)`.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        ("agent.schema.json", root::<AgentYaml>(None)),
        ("context.schema.json", root::<ContextYaml>(None)),
        (
            "hooks.schema.json",
            root::<HooksYaml>(Some("Delta Engine hooks.yaml")),
        ),
        (
            "imported-tools.schema.json",
            root::<ImportedToolsYaml>(None),
        ),
        ("hook-context.schema.json", root::<HookContext>(None)),
        ("hook-control.schema.json", root::<HookControl>(None)),
    ]
}

/// The root schema of `T`, with `title` set when the type does not carry one.
fn root<T: JsonSchema>(title: Option<&str>) -> Value {
    let mut schema = SchemaGenerator::default().into_root_schema_for::<T>();
    if let Some(title) = title {
        schema.insert("title".into(), title.into());
    }
    schema.into()
}

//! Committed schemas are exactly what the types generate.

use std::path::PathBuf;

fn schemas_dir() -> PathBuf {
    PathBuf::from(crate::support::harness::ROOT).join("schemas")
}

fn rendered(schema: &serde_json::Value) -> String {
    serde_json::to_string_pretty(schema).unwrap() + "\n"
}

#[test]
fn committed_schemas_match_the_types() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let dir = schemas_dir();
    let mut drifted = Vec::new();
    for (name, schema) in delta_engine::schema::all() {
        let path = dir.join(name);
        let expected = rendered(&schema);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &expected).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(expected.as_str()) {
            drifted.push(name);
        }
    }
    assert!(
        drifted.is_empty(),
        "schemas/ is out of date with the Rust types: {}\n\
         Regenerate with `UPDATE_SCHEMAS=1 cargo test --test it schemas::` and commit the result.",
        drifted.join(", ")
    );
}

#[test]
fn every_schema_is_a_valid_draft_2020_12_schema() {
    for (name, schema) in delta_engine::schema::all() {
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        if let Err(err) = jsonschema::meta::validate(&schema) {
            panic!("{name} is not a valid JSON Schema: {err}");
        }
        assert!(schema["title"].is_string(), "{name} has no title");
    }
}

#[test]
fn schema_file_names_are_unique() {
    let mut names: Vec<_> = delta_engine::schema::all()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count);
}

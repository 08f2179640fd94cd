//! The committed JSON Schema of the script format matches the Rust types.

use std::path::PathBuf;

use mock_llm::ReadScript as _;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas/mock-script.schema.json")
}

/// Fails when `schemas/mock-script.schema.json` differs from the types;
/// `UPDATE_SCHEMAS=1 cargo test -p mock-llm --test mock_llm schema` rewrites it.
#[test]
fn committed_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&mock_llm::script_schema()).unwrap() + "\n";
    let path = committed_path();
    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the Rust types; run \
         `UPDATE_SCHEMAS=1 cargo test -p mock-llm --test mock_llm schema` and commit it",
        path.display()
    );
}

/// The parser and the schema must agree on the documented example and on a typo.
#[test]
fn readme_example_parses_and_validates_against_the_schema() {
    let schema = mock_llm::script_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let example = readme
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a ```yaml example");
    assert!(!mock_llm::Script::from_yaml_str(example).unwrap().is_empty());
    let as_json: serde_json::Value = serde_saphyr::from_str(example).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&as_json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    let typo = serde_json::json!({"steps": [{"message": {"contnt": "hi"}}]});
    assert!(!validator.is_valid(&typo));
    assert!(mock_llm::Script::from_json_str(&typo.to_string()).is_err());
}

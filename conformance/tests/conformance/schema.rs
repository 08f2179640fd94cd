//! The committed scenario schema matches the Rust types, and every shipped scenario
//! follows it and the naming convention.

use super::support::{all_scenarios, repo};

/// Fails when `schemas/scenario.schema.json` differs from the types;
/// `UPDATE_SCHEMAS=1 cargo test -p delta-conformance --test conformance schema` rewrites it.
#[test]
fn committed_scenario_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&delta_conformance::scenario::scenario_schema())
        .unwrap()
        + "\n";
    let path = repo().join("schemas/scenario.schema.json");
    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the Rust types; run `UPDATE_SCHEMAS=1 cargo test -p \
         delta-conformance --test conformance schema` and commit it",
        path.display()
    );
}

#[test]
fn the_scenario_schema_is_a_valid_draft_2020_12_schema() {
    let schema = delta_conformance::scenario::scenario_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::meta::validate(&schema).unwrap();
    assert_eq!(schema["title"], "delta-conformance scenario");
}

#[test]
fn every_scenario_validates_and_is_named_after_its_file() {
    let schema = delta_conformance::scenario::scenario_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let names = all_scenarios();
    assert!(names.len() >= 45, "{names:?}");
    for name in names {
        let path = repo().join(format!("fixtures/scenarios/{name}.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let loaded = delta_conformance::scenario::load(&path).unwrap();
        assert_eq!(loaded.scenario.name, name);
        assert!(!loaded.scenario.tags.is_empty(), "{name} has no tag");
        assert!(
            loaded.scenario.seed.is_some(),
            "{name} has no seed reference"
        );
    }
}

/// Seed 003 §10 has 19 tests; each has exactly one scenario.
#[test]
fn the_nineteen_tests_of_seed_003_have_a_scenario_each() {
    let mut seeds: Vec<String> = all_scenarios()
        .iter()
        .map(|name| {
            delta_conformance::scenario::load(
                &repo().join(format!("fixtures/scenarios/{name}.yaml")),
            )
            .unwrap()
            .scenario
        })
        .filter(|s| s.tags.iter().any(|t| t == "v1.7-security"))
        .map(|s| s.seed.unwrap())
        .collect();
    seeds.sort();
    let expected: Vec<String> = [
        "1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "2.4", "3.1", "3.2", "3.3", "4.1", "4.2", "5.1",
        "5.2", "6.1", "6.2", "7.1", "7.2", "7.3",
    ]
    .iter()
    .map(|t| format!("003 §10 Test {t}"))
    .collect();
    assert_eq!(seeds, expected);
}

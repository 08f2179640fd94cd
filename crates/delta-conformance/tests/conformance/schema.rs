//! The committed scenario schema matches the Rust types, and every shipped scenario
//! follows it and the naming convention.

use super::support::{all_scenarios, repo};

/// The runner's own formats: scenarios, adapters and baselines.
fn runner_schemas() -> [(&'static str, serde_json::Value); 3] {
    [
        ("scenario", delta_conformance::scenario::scenario_schema()),
        (
            "conformance-adapter",
            serde_json::Value::from(schemars::schema_for!(delta_conformance::adapter::Adapter)),
        ),
        (
            "conformance-baseline",
            serde_json::Value::from(schemars::schema_for!(delta_conformance::baseline::Baseline)),
        ),
    ]
}

/// Fails when `schemas/{scenario,conformance-adapter,conformance-baseline}.schema.json`
/// differ from the types; `UPDATE_SCHEMAS=1 cargo test -p delta-conformance --test
/// conformance schema` rewrites them.
#[test]
fn committed_runner_schemas_match_the_types() {
    for (name, schema) in runner_schemas() {
        let generated = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = repo().join(format!("schemas/{name}.schema.json"));
        if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is out of date with the Rust types; run `UPDATE_SCHEMAS=1 cargo test -p \
             delta-conformance --test conformance schema` and commit it",
            path.display()
        );
        jsonschema::meta::validate(&schema).unwrap();
    }
}

/// Every `decision:` of a scenario names a section of docs/decisions.md, so that an
/// `extension` check always points at the choice it tests.
#[test]
fn every_decision_names_a_section_of_the_decisions_page() {
    let page = std::fs::read_to_string(repo().join("docs/decisions.md")).unwrap();
    let headings: Vec<&str> = page.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    for name in all_scenarios() {
        let path = repo().join(format!("fixtures/scenarios/{name}.yaml"));
        let scenario = delta_conformance::scenario::load(&path).unwrap().scenario;
        let mut decisions: Vec<&String> = scenario.decision.iter().collect();
        for step in &scenario.steps {
            decisions.extend(step.decision.iter());
            decisions.extend(step.checks.iter().filter_map(|c| c.decision.as_ref()));
        }
        for decision in decisions {
            assert!(
                headings.iter().any(|h| h.starts_with(decision.as_str())),
                "{name}: decision {decision:?} is no `## ` heading of docs/decisions.md ({headings:?})"
            );
        }
    }
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
            loaded.scenario.seed.is_some()
                || loaded.scenario.level == Some(delta_conformance::scenario::Level::Extension),
            "{name} has no seed reference and is not an extension"
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

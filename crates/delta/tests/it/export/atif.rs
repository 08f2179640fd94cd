//! `--format atif` against Harbor's own definition of ATIF-v1.7: the JSON Schema generated
//! from Harbor's pydantic models (tests/fixtures/atif/, README there says how), plus the
//! rules its model validators add on top of the schema.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::{RUNS, Runs};
use crate::support::harness::ROOT;

fn atif_validator() -> jsonschema::Validator {
    let path = Path::new(ROOT).join("tests/fixtures/atif/atif-v1.7.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Harbor's model validators (`Trajectory.validate_step_ids`,
/// `validate_tool_call_references`, `Step.validate_agent_only_fields`,
/// `validate_llm_call_count_zero_fields`, `SubagentTrajectoryRef.validate_is_resolvable`),
/// which a JSON Schema cannot express.
fn assert_harbor_rules(document: &Value) {
    let steps = document["steps"].as_array().unwrap();
    for (index, step) in steps.iter().enumerate() {
        assert_eq!(step["step_id"], index + 1, "step ids are 1, 2, 3…");
        if step["source"] != "agent" {
            for field in [
                "model_name",
                "reasoning_effort",
                "reasoning_content",
                "tool_calls",
                "metrics",
            ] {
                assert!(
                    step.get(field).is_none(),
                    "{field} on a {} step: {step:#}",
                    step["source"]
                );
            }
        }
        if step["llm_call_count"] == 0 && step["source"] == "agent" {
            assert!(step.get("metrics").is_none() && step.get("reasoning_content").is_none());
        }
        let calls: HashSet<&str> = step["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| c["tool_call_id"].as_str().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        for result in step["observation"]["results"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(id) = result["source_call_id"].as_str() {
                assert!(
                    calls.contains(id),
                    "result for {id} not among step {index}'s calls"
                );
            }
            for reference in result["subagent_trajectory_ref"]
                .as_array()
                .into_iter()
                .flatten()
            {
                assert!(
                    reference["trajectory_id"].is_string()
                        || reference["trajectory_path"].is_string()
                );
            }
        }
    }
}

#[test]
fn every_run_exports_valid_atif_and_re_export_is_byte_identical() {
    let runs = Runs::new();
    let validator = atif_validator();
    for id in RUNS {
        let text = runs.export(id, "atif", &[]);
        let document: Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "run {id}: {errors:#?}\n{document:#}");
        assert_harbor_rules(&document);
        assert_eq!(document["schema_version"], "ATIF-v1.7");
        assert_eq!(document["session_id"], id);
        assert_eq!(
            runs.export(id, "atif", &[]),
            text,
            "run {id}: re-export differs"
        );

        // One agent step per model answer, carrying every tool call of the journal.
        let steps = document["steps"].as_array().unwrap();
        let agent_steps: Vec<&Value> = steps.iter().filter(|s| s["source"] == "agent").collect();
        assert_eq!(agent_steps.len(), runs.count(id, "THOUGHT"), "run {id}");
        let calls: usize = agent_steps
            .iter()
            .map(|s| s["tool_calls"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(calls, runs.count(id, "ACTION_REQUEST"), "run {id}");
        let results: usize = agent_steps
            .iter()
            .map(|s| s["observation"]["results"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(results, runs.count(id, "ACTION_RESULT"), "run {id}");
        assert_eq!(steps[0]["source"], "user", "the task comes first");
        let metadata = runs.metadata(id);
        assert_eq!(document["extra"]["delta"]["status"], metadata["status"]);
        assert_eq!(
            document["final_metrics"]["total_prompt_tokens"],
            metadata["usage"]["input_tokens"]
        );
        assert_eq!(document["final_metrics"]["total_steps"], steps.len());
        for step in &agent_steps {
            assert!(
                step["metrics"]["prompt_tokens"].as_u64().unwrap() > 0,
                "{step:#}"
            );
            assert!(
                step["metrics"]["cost_usd"].as_f64().unwrap() > 0.0,
                "{step:#}"
            );
            assert_eq!(step["model_name"], "gpt-4o-mini");
        }
    }
}

#[test]
fn atif_carries_arguments_observations_hooks_and_the_human_exchange() {
    let runs = Runs::new();
    let document: Value = serde_json::from_str(&runs.export("hooked", "atif", &[])).unwrap();
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps[0]["message"], "CANARY-TASK-3c9a: take notes");
    let write = steps
        .iter()
        .find(|s| s["tool_calls"][0]["function_name"] == "write_file")
        .unwrap();
    assert_eq!(
        write["tool_calls"][0]["arguments"]["content"],
        "CANARY-ARG-2e8d"
    );
    let result = &write["observation"]["results"][0];
    assert_eq!(
        result["source_call_id"],
        write["tool_calls"][0]["tool_call_id"]
    );
    assert_eq!(result["content"], "CANARY-ARG-2e8d");
    assert_eq!(result["extra"]["exit_code"], 0);
    assert_eq!(result["extra"]["status"], "SUCCESS");
    let hooks: Vec<&Value> = steps
        .iter()
        .flat_map(|s| s["extra"]["events"].as_array().into_iter().flatten())
        .filter(|e| e["hook"].is_string())
        .collect();
    assert_eq!(
        hooks.len(),
        2 * runs.count("hooked", "ACTION_REQUEST"),
        "pre and post per call"
    );
    let ask = steps
        .iter()
        .find(|s| s["tool_calls"][0]["function_name"] == "ask_human")
        .unwrap();
    assert_eq!(
        ask["observation"]["results"][0]["content"],
        "CANARY-ANSWER-0b6e"
    );
    let events = ask["extra"]["events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["human_input_request"] == "CANARY-QUESTION-a41f?")
    );
    assert!(
        events
            .iter()
            .any(|e| e["human_input_received"] == "CANARY-ANSWER-0b6e")
    );
    assert_eq!(
        document["extra"]["delta"]["result"],
        "Done: CANARY-RESULT-77c3"
    );

    let failed: Value = serde_json::from_str(&runs.export("failed", "atif", &[])).unwrap();
    assert_eq!(failed["extra"]["delta"]["status"], "FAILED");
    assert_eq!(failed["extra"]["delta"]["error"]["type"], "LlmError");
}

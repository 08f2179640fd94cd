//! The published schemas describe what the runner writes (`context.json`) and reads
//! (`control.json`).

use std::path::PathBuf;

use delta_engine::config::HookName;
use delta_engine::hooks::HookControl;
use rstest::rstest;
use serde_json::{Value, json};

use crate::hooks::support::{Fixture, Samples, every_hook_runs, read_json};

fn validator(name: &str) -> jsonschema::Validator {
    let path = PathBuf::from(crate::support::harness::ROOT)
        .join("schemas")
        .join(name);
    jsonschema::validator_for(&read_json(&path)).unwrap()
}

#[tokio::test]
async fn every_context_json_written_matches_the_schema() {
    let fx = Fixture::new();
    fx.script("hook.sh", "true");
    let mut runner = fx.runner(&every_hook_runs("hook.sh"));
    let samples = Samples::new();
    let schema = validator("hook-context.schema.json");
    for hook in HookName::ALL {
        let outcome = runner.run(1, samples.event(hook)).await.unwrap();
        let context = read_json(
            &fx.paths
                .dir()
                .join(&outcome.io_path_ref)
                .join("input/context.json"),
        );
        let errors: Vec<String> = schema
            .iter_errors(&context)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{context:#}\n{errors:#?}");
    }
    // The hook's own fields are required by its name.
    assert!(!schema.is_valid(&json!({
        "run_id": "r", "iteration": 1, "step": 1, "timestamp": "2025-10-14T10:30:00.123Z",
        "workspace": "/w", "run_dir": "/w/.delta/r", "journal_path": "/w/.delta/r/journal.jsonl",
        "io_path": "/w/.delta/r/io/hooks/001_on_error/", "hook_name": "on_error"
    })));
}

#[rstest]
#[case::skip_with_observation(r#"{"skip": true, "observation": "no"}"#, true)]
#[case::skip_only(r#"{"skip": true}"#, true)]
#[case::empty("{}", true)]
#[case::unknown_field(r#"{"skip": true, "reason": "no"}"#, false)]
#[case::skip_as_string(r#"{"skip": "true"}"#, false)]
#[case::array("[]", false)]
fn the_control_schema_agrees_with_the_runner(#[case] document: &str, #[case] valid: bool) {
    let instance: Value = serde_json::from_str(document).unwrap();
    assert_eq!(
        validator("hook-control.schema.json").is_valid(&instance),
        valid
    );
    assert_eq!(HookControl::parse(document.as_bytes()).is_ok(), valid);
}

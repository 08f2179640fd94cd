//! `delta batch` runs tasks in any kind (acceptance 4): `--environment` reaches every
//! task's run, whose tools then run there.

use serde_json::Value;

use super::support::{CONFINED, SH_AGENT, assert_success, kind_args, payloads, require_components};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, run_files};

/// Every task's one call says where it runs: `/proc/1/cmdline` when it can read it.
const SCRIPT: &str = r#"
mode: by_conversation
models: [gpt-4o-mini]
steps:
  - message: {tool_calls: [{name: sh, arguments: {script: "tr '\\0' ' ' < /proc/1/cmdline || echo hidden"}}]}
  - message: {content: done}
"#;

#[test]
fn batch_runs_tasks_in_every_kind() {
    require_components();
    for kind in CONFINED {
        let mock = mock(SCRIPT);
        let test = delta(Test::new().agent("agent", SH_AGENT), &mock)
            .file(
                "tasks.jsonl",
                "{\"id\": \"t1\", \"message\": \"Where?\"}\n{\"id\": \"t2\", \"message\": \"Where?\"}\n",
            )
            .args([
                "batch", "run", "tasks.jsonl", "--agent", "agent", "--out", "out", "--jobs", "2",
            ])
            .args(kind_args(kind));
        let output = test.cmd().output().expect("run delta batch");
        assert_success(&output, kind);
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(test.path().join("out/batch.json")).expect("batch.json"),
        )
        .expect("JSON");
        assert_eq!(manifest["environment"], kind);
        for task in ["t1", "t2"] {
            let files = run_files(&test.path().join("out/runs").join(task), task);
            let of = |event: &str| payloads(&files, event)[0].clone();
            assert_eq!(of("RUN_START")["environment"]["kind"], kind);
            assert_eq!(of("ACTION_REQUEST")["environment"]["kind"], kind);
            let seen = of("ACTION_RESULT")["observation_content"]
                .as_str()
                .expect("text")
                .to_owned();
            let expected = match kind {
                "landlock" => "hidden",
                "bwrap" => "bwrap",
                _ => "sleep 3600",
            };
            assert!(seen.contains(expected), "{kind} {task}: {seen}");
        }
    }
}

//! The orchestration scripts the README documents (`examples/orchestration/`), run as they
//! are against mock-llm: map-reduce (5 parallel map runs, then a reduce run) and
//! plan-execute. Each agent reaches its own scripted model through its `.env`.

use std::fs;
use std::path::Path;
use std::process::Command;

use mock_llm::MockServer;

use crate::resume::support::{API_KEY, RECORDER, RunDir, mock};
use crate::support::harness::{DEFAULT_CONTEXT_YAML, ROOT};
use crate::support::snapshot::snapshot;

/// An agent in `dir` with `agent_yaml`, talking to `model` (through its `.env`).
fn agent(dir: &Path, agent_yaml: &str, model: &MockServer) {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("agent.yaml"), agent_yaml).unwrap();
    fs::write(dir.join("system_prompt.md"), "You help.\n").unwrap();
    fs::write(dir.join("context.yaml"), DEFAULT_CONTEXT_YAML).unwrap();
    fs::write(
        dir.join(".env"),
        format!("DELTA_BASE_URL={}\n", model.base_url()),
    )
    .unwrap();
}

/// `bash examples/orchestration/SCRIPT ARGS` in `dir`, with the built delta.
fn script(dir: &Path, name: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new("bash")
        .arg(Path::new(ROOT).join("examples/orchestration").join(name))
        .args(args)
        .current_dir(dir)
        .env("DELTA", env!("CARGO_BIN_EXE_delta"))
        .env("DELTA_API_KEY", API_KEY)
        .env("DELTA_LLM_BACKOFF_MS", "0")
        .env_remove("DELTA_BASE_URL")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

const AGGREGATOR: &str = r#"
name: aggregator
llm:
  model: test-model
tools:
  - name: combine
    description: Print every result file.
    shell: "cat *.result"
"#;

#[test]
fn map_reduce_runs_five_maps_in_parallel_then_one_reduce() {
    let map_model = mock(
        r#"
mode: by_conversation
steps:
  - message:
      delay_ms: 50
      tool_calls:
        - {name: record, arguments: {line: mapped, secs: "0"}}
  - message: {content: mapped}
"#,
    );
    let reduce_model = mock(
        r#"
mode: by_conversation
steps:
  - message:
      tool_calls:
        - {name: combine}
  - message: {content: "combined 5 results"}
"#,
    );
    let dir = tempfile::tempdir().unwrap();
    agent(&dir.path().join("processor"), RECORDER, &map_model);
    agent(&dir.path().join("aggregator"), AGGREGATOR, &reduce_model);
    let items: Vec<String> = (1..=5).map(|i| format!("data/{i}.json")).collect();
    fs::create_dir(dir.path().join("data")).unwrap();
    for item in &items {
        fs::write(dir.path().join(item), "{\"n\": 1}\n").unwrap();
    }
    let args: Vec<&str> = items.iter().map(String::as_str).collect();
    let out = script(dir.path(), "map-reduce.sh", &args, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "combined 5 results");

    let work = dir.path().join("work");
    let ids = fs::read_to_string(work.join("map_ids.txt")).unwrap();
    let ids: Vec<&str> = ids.lines().collect();
    assert_eq!(ids.len(), 5);
    for id in &ids {
        assert!(id.starts_with("map-"), "{id}");
        assert_eq!(
            fs::read_to_string(work.join(format!("{id}.result"))).unwrap(),
            "mapped"
        );
        assert_eq!(RunDir::new(&work, id).status(), "COMPLETED");
    }
    assert_eq!(map_model.requests().len(), 10);
    assert_eq!(
        fs::read_to_string(work.join("ledger.txt")).unwrap(),
        "mapped\n".repeat(5)
    );

    let listed = Command::new(env!("CARGO_BIN_EXE_delta"))
        .args(["list-runs", "-w"])
        .arg(&work)
        .args(["--status", "COMPLETED", "--format", "raw"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let reduce_id = listed
        .lines()
        .find(|id| id.starts_with("reduce-"))
        .expect("the reduce run");
    assert_eq!(listed.lines().count(), 6);
    // The reduce run read what the map runs produced.
    let reduce = RunDir::new(&work, reduce_id);
    let observation = reduce.payloads("ACTION_RESULT")[0]["observation_content"].clone();
    assert_eq!(observation, "mapped".repeat(5));
}

#[test]
fn plan_execute_runs_one_executor_per_planned_step() {
    crate::support::component::program("jq (plan-execute.sh)", &["jq"]);
    let planner_model = mock(
        r#"
steps:
  - message: {content: "{\"steps\": [\"write a\", \"write b\", \"write c\"]}"}
"#,
    );
    let executor_model = mock("steps:\n  - message: {content: done, repeat: 3}\n");
    let dir = tempfile::tempdir().unwrap();
    let bare = "name: NAME\nllm:\n  model: test-model\n";
    agent(
        &dir.path().join("planner"),
        &bare.replace("NAME", "planner"),
        &planner_model,
    );
    agent(
        &dir.path().join("executor"),
        &bare.replace("NAME", "executor"),
        &executor_model,
    );
    let out = script(dir.path(), "plan-execute.sh", &["Design the system"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    snapshot!(stdout);
    let mut tasks: Vec<String> = executor_model
        .requests()
        .iter()
        .filter_map(|r| crate::resume::support::last_message(r, "user"))
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["write a", "write b", "write c"]);
}

//! `delta list-runs` through the binary: ordering, filters, `--first` in `$(...)`, the JSON
//! shape against the committed schema, unreadable runs, empty workspaces.

use std::path::Path;
use std::process::Command;

use chrono::{Duration, Utc};
use delta_engine::run::{ErrorInfo, ErrorType, RunStatus, Timestamp, create_run, write_metadata};
use delta_engine::secrets::Redactor;

use crate::resume::fixture::dead_identity;
use crate::support::harness::{ROOT, Test};
use crate::support::snapshot::snapshot;

/// A run `id` in `ws`, in `status`, last updated `days` days and `hours` hours ago.
fn seed(ws: &Path, id: &str, status: RunStatus, days: i64, hours: i64, task: &str) {
    let paths = create_run(ws, &delta_engine::run::RunId::parse(id).unwrap()).unwrap();
    let mut m = delta_engine::run::Metadata::new(
        delta_engine::run::MetadataInit {
            run_id: paths.run_id().clone(),
            agent_name: "bot".to_owned(),
            agent_home: "/agents/bot".into(),
            work_dir: ws.to_path_buf(),
            workspace_id: None,
            task: task.to_owned(),
            max_iterations: 30,
        },
        &dead_identity(),
        Timestamp::now(),
    );
    m.iterations = 4;
    let when = Timestamp::from_datetime(Utc::now() - Duration::days(days) - Duration::hours(hours));
    match status {
        RunStatus::Running => m.touch(when),
        RunStatus::WaitingForInput => m.wait_for_input(when),
        RunStatus::Completed => m.complete(serde_json::json!("ok"), when),
        RunStatus::Failed => m.fail(ErrorInfo::new(ErrorType::LlmError, "api down"), when),
        RunStatus::Interrupted => m.interrupt(ErrorInfo::new(ErrorType::Interrupted, "x"), when),
    }
    write_metadata(&paths.metadata(), &m, &Redactor::default()).unwrap();
}

/// Five runs and a broken one in workspace `ws/` of a fresh test directory.
fn workspace() -> Test {
    let test = Test::new();
    let ws = test.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    seed(&ws, "run-a", RunStatus::Interrupted, 5, 1, "Analyze data");
    seed(
        &ws,
        "run-b",
        RunStatus::WaitingForInput,
        4,
        1,
        "Process report",
    );
    seed(&ws, "run-c", RunStatus::Failed, 3, 1, "Generate chart");
    seed(&ws, "run-d", RunStatus::Running, 2, 1, "Still going");
    seed(&ws, "run-e", RunStatus::Completed, 6, 1, "Old work");
    let broken = create_run(&ws, &delta_engine::run::RunId::parse("broken").unwrap()).unwrap();
    std::fs::write(broken.metadata(), "{\"run_id\": ").unwrap();
    test
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn text_lists_every_run_most_recent_first_and_shows_unreadable_ones() {
    let run = workspace().args(["list-runs", "-w", "ws"]).run().code(0);
    let out = lines(run.stdout());
    assert_eq!(out.len(), 6, "{}", run.stdout());
    // The broken run's age comes from its file, written just now.
    snapshot!(out[0], @"broken  UNREADABLE         -                 [DURATION] ago  ws/.delta/broken/metadata.json:1:11: invalid run metadata: EOF while parsing a value; the file is written only by the engine, restore it or remove the run directory");
    assert_eq!(
        out[1..].to_vec(),
        vec![
            "run-d   RUNNING            \"Still going\"     2d ago",
            "run-c   FAILED             \"Generate chart\"  3d ago",
            "run-b   WAITING_FOR_INPUT  \"Process report\"  4d ago",
            "run-a   INTERRUPTED        \"Analyze data\"    5d ago",
            "run-e   COMPLETED          \"Old work\"        6d ago",
        ]
    );
    assert_eq!(run.stderr(), "");
}

#[test]
fn filters_narrow_the_listing() {
    workspace()
        .args(["list-runs", "-w", "ws", "--resumable", "--format", "raw"])
        .run()
        .code(0)
        .stdout_is("run-c\nrun-b\nrun-a\nrun-e\n");
    workspace()
        .args([
            "list-runs",
            "-w",
            "ws",
            "--status",
            "failed",
            "--format",
            "raw",
        ])
        .run()
        .code(0)
        .stdout_is("run-c\n");
    workspace()
        .args([
            "list-runs",
            "-w",
            "ws",
            "--status",
            "RUNNING",
            "--resumable",
        ])
        .run()
        .code(0)
        .stdout_is("")
        .stderr_is(
            "No runs in ws match --resumable --status RUNNING. Drop the filter to see every \
             run: delta list-runs -w ws\n",
        );
}

#[test]
fn first_prints_a_bare_id_in_text_and_raw_and_an_array_of_one_in_json() {
    for format in ["text", "raw"] {
        workspace()
            .args([
                "list-runs",
                "-w",
                "ws",
                "--resumable",
                "--first",
                "--format",
                format,
            ])
            .run()
            .code(0)
            .stdout_is("run-c\n");
    }
    let run = workspace()
        .args([
            "list-runs",
            "-w",
            "ws",
            "--resumable",
            "--first",
            "--format",
            "json",
        ])
        .run()
        .code(0);
    let json: serde_json::Value = serde_json::from_str(run.stdout()).unwrap();
    let items = json.as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["run_id"], "run-c");
}

#[test]
fn first_works_inside_command_substitution() {
    let test = workspace();
    let script = format!(
        "id=$('{}' list-runs -w ws --resumable --first) && printf '[%s]' \"$id\"",
        env!("CARGO_BIN_EXE_delta")
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(test.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[run-c]");
}

#[test]
fn json_matches_the_committed_schema_and_keeps_unreadable_runs() {
    let run = workspace()
        .args(["list-runs", "-w", "ws", "--format", "json"])
        .run()
        .code(0);
    let json: serde_json::Value = serde_json::from_str(run.stdout()).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("schemas/list-runs.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors, Vec::<String>::new());
    let items = json.as_array().unwrap();
    assert_eq!(items.len(), 6);
    assert_eq!(items[0]["status"], "UNREADABLE");
    snapshot!(items[0]["error"], @r#""ws/.delta/broken/metadata.json:1:11: invalid run metadata: EOF while parsing a value; the file is written only by the engine, restore it or remove the run directory""#);
    let run_c = &items[2];
    assert_eq!(run_c["run_id"], "run-c");
    assert_eq!(run_c["status"], "FAILED");
    assert_eq!(run_c["task_summary"], "Generate chart");
    assert_eq!(run_c["iterations"], 4);
    assert_eq!(run_c["agent"], "bot");
    assert!(Timestamp::parse(run_c["last_updated"].as_str().unwrap()).is_ok());
}

#[test]
fn an_empty_workspace_prints_nothing_and_succeeds() {
    let test = Test::new().file("ws/notes.txt", "no runs here\n");
    test.args(["list-runs", "-w", "ws"])
        .run()
        .code(0)
        .stdout_is("")
        .stderr_is("No runs in ws. Start one with: delta run -w ws -m \"TASK\"\n")
        .then()
        .args(["list-runs", "-w", "ws", "--format", "json"])
        .run()
        .code(0)
        .stdout_is("[]\n")
        .stderr_is("");
}

#[test]
fn the_workspace_defaults_to_the_current_directory() {
    workspace()
        .current_dir("ws")
        .args(["list-runs", "--status", "completed", "--format", "raw"])
        .run()
        .code(0)
        .stdout_is("run-e\n");
}

#[test]
fn a_missing_workspace_or_an_unknown_status_is_an_error() {
    Test::new()
        .args(["list-runs", "-w", "nope"])
        .run()
        .code(1)
        .stderr_is("error: workspace nope does not exist; pass an existing workspace with -w\n");
    let run = Test::new()
        .args(["list-runs", "--status", "DONE"])
        .run()
        .code(2);
    snapshot!(run.stderr(), @r#"
    error: invalid value 'DONE' for '--status <STATUS>': unknown run status "DONE"; expected one of RUNNING, WAITING_FOR_INPUT, COMPLETED, FAILED, INTERRUPTED

    For more information, try '--help'.
    "#);
}

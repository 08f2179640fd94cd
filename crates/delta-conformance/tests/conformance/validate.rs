//! `delta-conformance validate` on hand-broken files: every violation is reported with
//! the file, its line and the JSON pointer of the offending field; exit code 1.

use std::path::Path;

use serde_json::{Value, json};

use super::support::{run_runner, schemas};

/// A journal every schema-conforming engine could write: a run with one tool call.
fn good_events() -> Vec<Value> {
    let ts = "2025-10-14T10:30:00.123Z";
    vec![
        json!({"seq": 1, "timestamp": ts, "type": "RUN_START",
               "payload": {"run_id": "r1", "task": "Echo hi.", "agent_ref": "/agents/a"}}),
        json!({"seq": 2, "timestamp": ts, "type": "THOUGHT",
               "payload": {"content": "Let me echo.", "llm_invocation_ref": "inv-1",
                           "tool_calls": [{"id": "call_0_0", "name": "echo_text", "arguments": "{\"text\":\"hi\"}"}]}}),
        json!({"seq": 3, "timestamp": ts, "type": "ACTION_REQUEST",
               "payload": {"action_id": "a1", "tool_call_id": "call_0_0", "tool_name": "echo_text",
                           "tool_args": {"text": "hi"}, "resolved_command": "echo hi"}}),
        json!({"seq": 4, "timestamp": ts, "type": "ACTION_RESULT",
               "payload": {"action_id": "a1", "tool_call_id": "call_0_0", "status": "SUCCESS",
                           "observation_content": "hi\n", "exit_code": 0, "execution_ref": "a1"}}),
        json!({"seq": 5, "timestamp": ts, "type": "RUN_END", "payload": {"status": "COMPLETED"}}),
    ]
}

fn write_journal(dir: &Path, events: &[Value]) -> std::path::PathBuf {
    let path = dir.join("journal.jsonl");
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn validate(path: &Path) -> (Option<i32>, String) {
    let schemas = schemas();
    let output = run_runner(&[
        "validate",
        "--schemas",
        schemas.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn a_well_formed_journal_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_journal(dir.path(), &good_events());
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout, format!("{}: valid journal\n", path.display()));
}

/// Another implementation's journal: only the payload fields DESIGN.md lists (no
/// `tool_call_id`, no THOUGHT `tool_calls`) and some of its own. Valid: payloads are open,
/// and what this engine adds is optional. The envelope stays strict.
#[test]
fn a_journal_with_its_own_payload_fields_and_no_tool_call_ids_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = good_events();
    events[1]["payload"]
        .as_object_mut()
        .unwrap()
        .remove("tool_calls");
    for event in &mut events[2..4] {
        event["payload"]
            .as_object_mut()
            .unwrap()
            .remove("tool_call_id");
    }
    for (i, event) in events.iter_mut().enumerate() {
        event["payload"]["x_vendor"] = json!({"iteration": i, "host": "h1"});
    }
    events[3]["payload"]["duration_ms"] = json!(12);
    let path = write_journal(dir.path(), &events);
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout, format!("{}: valid journal\n", path.display()));

    events[4]["x_vendor"] = json!(true);
    let path = write_journal(dir.path(), &events);
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.starts_with(&format!("{}:5: (root): ", path.display()))
            && stdout.contains("x_vendor"),
        "{stdout}"
    );
}

#[test]
fn a_missing_field_is_reported_with_its_line_and_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = good_events();
    events[2].as_object_mut().unwrap().remove("timestamp");
    events[3]["payload"]
        .as_object_mut()
        .unwrap()
        .remove("action_id");
    let path = write_journal(dir.path(), &events);
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1));
    let shown = path.display().to_string();
    assert!(
        stdout.contains(&format!("{shown}:3: /timestamp: ")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{shown}:4: /payload/action_id: ")),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
}

#[test]
fn a_wrong_type_is_reported_with_its_line_and_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = good_events();
    events[1]["timestamp"] = json!(1_697_000_000);
    let path = write_journal(dir.path(), &events);
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1));
    assert!(
        stdout.starts_with(&format!(
            "{}:2: /timestamp: [Required] a string: found 1697000000",
            path.display()
        )),
        "{stdout}"
    );
}

#[test]
fn a_seq_gap_and_a_wrong_first_seq_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = good_events();
    events[3]["seq"] = json!(7);
    events[4]["seq"] = json!(8);
    let path = write_journal(dir.path(), &events);
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1));
    assert_eq!(
        stdout,
        format!(
            "{}:4: /seq: seq must be one more than on line 3 (3): expected 4, found 7\n",
            path.display()
        )
    );

    let mut events = good_events();
    for (i, event) in events.iter_mut().enumerate() {
        event["seq"] = json!(i + 2);
    }
    let path = write_journal(dir.path(), &events);
    let (_, stdout) = validate(&path);
    assert_eq!(
        stdout,
        format!(
            "{}:1: /seq: the first event must have seq 1: found 2\n",
            path.display()
        )
    );
}

#[test]
fn a_missing_seq_and_a_torn_line_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = good_events();
    events[1].as_object_mut().unwrap().remove("seq");
    let mut text: String = events.iter().map(|e| format!("{e}\n")).collect();
    text.push_str("{\"seq\": 6, \"timest");
    let path = dir.path().join("journal.jsonl");
    std::fs::write(&path, text).unwrap();
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1));
    let shown = path.display().to_string();
    assert!(stdout.contains(&format!("{shown}:2: /seq: ")), "{stdout}");
    assert!(
        stdout.contains(&format!("{shown}:6: (root): the last line is cut off")),
        "{stdout}"
    );
}

#[test]
fn a_json_document_violation_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metadata.json");
    std::fs::write(
        &path,
        "{\n  \"run_id\": \"r1\",\n  \"status\": \"DONE\"\n}\n",
    )
    .unwrap();
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains(&format!("{}:3: /status: ", path.display())),
        "{stdout}"
    );
}

#[test]
fn an_agent_yaml_is_validated_with_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(
        &path,
        "name: a\nllm:\n  model: m\ntools:\n  - name: t\n    exec: 3\n    colour: red\n",
    )
    .unwrap();
    let (code, stdout) = validate(&path);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!("{}:5: /tools/0", path.display())),
        "{stdout}"
    );
}

#[test]
fn an_unknown_kind_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "{}").unwrap();
    let schemas = schemas();
    let schemas = schemas.to_str().unwrap();
    let output = run_runner(&["validate", "--schemas", schemas, path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot tell what") && stderr.contains("--kind"),
        "{stderr}"
    );
    let output = run_runner(&[
        "validate",
        "--schemas",
        schemas,
        "--kind",
        "nonsense",
        path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
}

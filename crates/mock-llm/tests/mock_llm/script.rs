//! Parsing scripts: the accepted forms and the error messages.

use std::num::NonZeroU64;

use mock_llm::{
    DropConnectionStep, ErrorStep, MessageStep, Mode, ReadScript as _, Script, ScriptError, Step,
    ToolCall,
};
use serde_json::json;

fn parse_error(yaml: &str) -> (Option<(u64, u64)>, String) {
    match Script::from_yaml_str(yaml).unwrap_err() {
        ScriptError::Parse {
            path: None,
            location,
            message,
        } => (location, message),
        other @ (ScriptError::Read { .. } | ScriptError::Parse { .. }) => {
            panic!("expected a parse error without a path, got {other:?}")
        }
    }
}

#[test]
fn parses_every_step_kind_with_defaults() {
    let script = Script::from_yaml_str(
        r#"
mode: by_conversation
models: [m1]
steps:
  - message:
      content: hi
      tool_calls:
        - {name: t, arguments: {a: 1}}
        - {name: u, arguments: "raw"}
  - error: {status: 429, retry_after: 1, body: {error: {message: slow down}}}
  - drop_connection:
  - drop_connection: {delay_ms: 5}
  - malformed: {body: "nope", repeat: 2}
"#,
    )
    .unwrap();
    assert_eq!(script.mode, Mode::ByConversation);
    assert_eq!(script.models, ["m1"]);
    assert_eq!(
        script.steps[0],
        Step::Message(MessageStep {
            content: Some("hi".into()),
            tool_calls: vec![
                ToolCall {
                    name: "t".into(),
                    arguments: Some(json!({"a": 1})),
                    id: None
                },
                ToolCall {
                    name: "u".into(),
                    arguments: Some(json!("raw")),
                    id: None
                },
            ],
            ..MessageStep::default()
        })
    );
    assert_eq!(
        script.steps[1],
        Step::Error(ErrorStep {
            status: 429,
            body: Some(json!({"error": {"message": "slow down"}})),
            retry_after: Some(1),
            delay_ms: 0,
            repeat: NonZeroU64::MIN,
        })
    );
    assert_eq!(
        script.steps[2],
        Step::DropConnection(DropConnectionStep::default())
    );
    assert_eq!(script.steps[3].delay_ms(), 5);
    assert_eq!(script.steps[4].repeat().get(), 2);
    assert_eq!(script.len(), 6);
}

#[test]
fn defaults_to_sequential_mode_and_no_models() {
    let script = Script::from_yaml_str("steps: []\n").unwrap();
    assert_eq!(script.mode, Mode::Sequential);
    assert!(script.models.is_empty());
    assert!(script.is_empty());
}

#[test]
fn unknown_field_is_reported_with_its_line_and_column() {
    let (location, message) = parse_error("steps:\n  - message:\n      contnt: hi\n");
    assert_eq!(location, Some((3, 7)));
    assert_eq!(
        message,
        "unknown field `contnt`, expected one of content, tool_calls, usage, finish_reason, \
         reasoning, redacted_reasoning, delay_ms, stream_hold_until, repeat"
    );
}

#[test]
fn unknown_step_kind_names_the_valid_ones() {
    let (location, message) = parse_error("steps:\n  - reply: {content: hi}\n");
    assert_eq!(location, Some((2, 5)));
    assert_eq!(
        message,
        "unknown variant `reply`, expected one of message, error, drop_connection, malformed"
    );
}

#[test]
fn status_outside_200_to_599_is_rejected_where_it_stands() {
    let (location, message) = parse_error("steps:\n  - error: {status: 99}\n");
    assert_eq!(location, Some((2, 21)));
    assert_eq!(
        message,
        "status 99 is not an HTTP status code mock-llm can send; use 200-599"
    );
}

#[test]
fn repeat_zero_is_rejected() {
    let (location, message) = parse_error("steps:\n  - message: {repeat: 0}\n");
    assert_eq!(location, Some((2, 15)));
    assert_eq!(
        message,
        "invalid value: integer `0`, expected a nonzero u64"
    );
}

#[test]
fn missing_steps_is_rejected() {
    let (_, message) = parse_error("mode: sequential\n");
    assert_eq!(message, "missing field `steps`");
}

#[test]
fn from_path_reads_json_and_names_the_file_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, r#"{"steps": [{"message": {"content": "hi"}}]}"#).unwrap();
    assert_eq!(Script::from_path(&good).unwrap().len(), 1);

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"steps\": [\n  {\"message\": {\"contnt\": 1}}]}").unwrap();
    let err = Script::from_path(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid mock script {}:2:23: unknown field `contnt`, expected one of `content`, \
             `tool_calls`, `usage`, `finish_reason`, `reasoning`, `redacted_reasoning`, `delay_ms`, `stream_hold_until`, `repeat`",
            bad.display()
        )
    );
}

#[test]
fn from_path_of_a_missing_file_says_it_cannot_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    let err = Script::from_path(&missing).unwrap_err();
    assert!(matches!(&err, ScriptError::Read { path, .. } if *path == missing));
    assert_eq!(err.help(), "check the path given to --script");
}

#[test]
fn a_script_round_trips_through_json() {
    let yaml = "mode: by_conversation\nsteps:\n  - message: {content: a, tool_calls: [{name: t, arguments: '{'}], repeat: 2}\n  - error: {status: 500, retry_after: 3}\n  - drop_connection: {}\n  - malformed: {body: {x: 1}, delay_ms: 4}\n";
    let script = Script::from_yaml_str(yaml).unwrap();
    let text = serde_json::to_string(&script).unwrap();
    assert_eq!(Script::from_json_str(&text).unwrap(), script);
}

//! journal.jsonl: seq, line format, durability, torn tails, corruption, crash repair.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use delta_engine::journal::{
    ActionRequest, ActionResult, ActionStatus, Event, EventPayload, FsyncPolicy, Journal,
    JournalError, MessageLevel, RunStart, SystemMessage, Thought, ToolCall, UserMessage,
    dangling_action_requests, read_journal, repair_torn_tail, unanswered_tool_calls,
};
use delta_engine::run::Timestamp;
use delta_engine::secrets::Redactor;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::runstate::support::{at, run_id, spawn_child, wait_for_line};
use crate::support::snapshot::{name, snapshot};

fn message(text: &str) -> EventPayload {
    EventPayload::UserMessage(UserMessage {
        content: text.to_owned(),
    })
}

fn open(path: &Path) -> Journal {
    Journal::open_with(path, FsyncPolicy::OnSync, Redactor::default()).unwrap()
}

fn seqs(path: &Path) -> Vec<u64> {
    read_journal(path)
        .unwrap()
        .events
        .iter()
        .map(|e| e.seq)
        .collect()
}

#[test]
fn seq_starts_at_one_and_stays_gapless_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    {
        let journal = open(&path);
        assert_eq!(journal.next_seq(), 1);
        for text in ["a", "b", "c"] {
            journal.append(message(text)).unwrap();
        }
    }
    let journal = open(&path);
    assert_eq!(journal.next_seq(), 4);
    let event = journal.append(message("d")).unwrap();
    assert_eq!(event.seq, 4);
    journal.append(message("e")).unwrap();
    assert_eq!(seqs(&path), vec![1, 2, 3, 4, 5]);
}

#[test]
fn each_event_is_one_line_with_the_envelope_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = open(&path);
    let written = journal
        .append(EventPayload::RunStart(RunStart {
            run_id: run_id("r1"),
            task: "line one\nline two".to_owned(),
            agent_ref: "/agents/a".to_owned(),
            environment: None,
        }))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(
        text.lines().count(),
        1,
        "a newline in a value must be escaped"
    );
    let expected = format!(
        "{{\"seq\":1,\"timestamp\":\"{}\",\"type\":\"RUN_START\",\"payload\":{{\"run_id\":\"r1\",\
         \"task\":\"line one\\nline two\",\"agent_ref\":\"/agents/a\"}}}}\n",
        written.timestamp
    );
    assert_eq!(text, expected);
    // RFC 3339 UTC with exactly three fractional digits and Z.
    let ts = written.timestamp.to_string();
    assert_eq!(ts.len(), "2025-10-14T10:30:00.123Z".len(), "{ts}");
    assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.', "{ts}");
}

#[test]
fn every_event_type_round_trips_with_its_documented_shape() {
    let event = Event {
        seq: 7,
        timestamp: at("2025-10-14T10:30:00.123Z"),
        payload: EventPayload::Thought(Thought {
            content: "Listing files".to_owned(),
            llm_invocation_ref: "inv-1".to_owned(),
            reasoning: None,
            tool_calls: vec![ToolCall {
                id: "call_1".to_owned(),
                name: "ls".to_owned(),
                arguments: "{\"dir\": \".\"".to_owned(),
            }],
            passback: None,
            usage: None,
        }),
    };
    let json = serde_json::to_value(&event).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "seq": 7,
            "timestamp": "2025-10-14T10:30:00.123Z",
            "type": "THOUGHT",
            "payload": {
                "content": "Listing files",
                "llm_invocation_ref": "inv-1",
                "tool_calls": [{"id": "call_1", "name": "ls", "arguments": "{\"dir\": \".\""}]
            }
        })
    );
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, event);

    let result = serde_json::to_value(EventPayload::ActionResult(ActionResult {
        action_id: "act-1".to_owned(),
        tool_call_id: "call_1".to_owned(),
        status: ActionStatus::Failed,
        observation_content: "ls: cannot access".to_owned(),
        exit_code: None,
        execution_ref: "act-1".to_owned(),
        subagent: None,
    }))
    .unwrap();
    assert_eq!(
        result,
        serde_json::json!({"type": "ACTION_RESULT", "payload": {
            "action_id": "act-1", "tool_call_id": "call_1", "status": "FAILED",
            "observation_content": "ls: cannot access", "exit_code": null, "execution_ref": "act-1"
        }})
    );
}

#[test]
fn events_parse_whatever_the_key_order() {
    let line = r#"{"payload":{"level":"WARN","content":"hook failed"},"timestamp":"2025-10-14T12:30:00+02:00","type":"SYSTEM_MESSAGE","seq":1}"#;
    let event: Event = serde_json::from_str(line).unwrap();
    assert_eq!(event.seq, 1);
    assert_eq!(event.timestamp, at("2025-10-14T10:30:00Z"));
    assert_eq!(
        event.payload,
        EventPayload::SystemMessage(SystemMessage {
            level: MessageLevel::Warn,
            content: "hook failed".to_owned()
        })
    );
}

#[test]
fn the_envelope_rejects_unknown_and_missing_fields() {
    let cases = [
        (
            r#"{"seq":1,"timestamp":"2025-10-14T10:30:00Z","type":"USER_MESSAGE","payload":{"content":"x"},"extra":1}"#,
            "unknown field `extra`",
        ),
        (
            r#"{"timestamp":"2025-10-14T10:30:00Z","type":"USER_MESSAGE","payload":{"content":"x"}}"#,
            "missing field `seq`",
        ),
        (
            r#"{"seq":1,"timestamp":"2025-10-14T10:30:00Z","type":"ACTION_RESULT","payload":{"action_id":"a1"}}"#,
            "missing field `status`",
        ),
        (
            r#"{"seq":1,"timestamp":"2025-10-14T10:30:00Z","payload":{"content":"x"}}"#,
            "missing field `type`",
        ),
        (
            r#"{"seq":1,"timestamp":"2025-10-14T10:30:00Z","type":"NOPE","payload":{}}"#,
            "unknown variant `NOPE`",
        ),
        (
            r#"{"seq":1,"timestamp":"yesterday","type":"USER_MESSAGE","payload":{"content":"x"}}"#,
            "invalid timestamp \"yesterday\"",
        ),
    ];
    // Each whole message, in a snapshot named after what it must say.
    for (line, says) in cases {
        let error = serde_json::from_str::<Event>(line).unwrap_err().to_string();
        snapshot!(format!("event_error_{}", name(&says)), error);
    }
}

/// Another implementation may record more than the spec asks for in a payload.
#[test]
fn payloads_admit_fields_of_other_implementations() {
    let line = r#"{"seq":1,"timestamp":"2025-10-14T10:30:00Z","type":"USER_MESSAGE","payload":{"content":"x","x_origin":{"ui":"web"}}}"#;
    let event: Event = serde_json::from_str(line).unwrap();
    assert_eq!(event.payload, message("x"));
}

/// A journal written by an implementation that records neither `tool_call_id` nor
/// THOUGHT's `tool_calls` (seed 001 §7.2's payloads) nor `request_id` (seed 000 §2.5.4),
/// continued by this one: reading it derives the ids, the same on every read, so the
/// conversation and the human input pair up.
#[test]
fn ids_missing_from_another_implementations_journal_are_derived_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let ts = r#""timestamp":"2025-10-14T10:30:00Z""#;
    let lines = [
        r#""type":"RUN_START","payload":{"run_id":"r1","task":"t","agent_ref":"/a"}"#,
        // No tool_calls: the calls are those of the requests that follow.
        r#""type":"THOUGHT","payload":{"content":"two calls","llm_invocation_ref":"i1"}"#,
        r#""type":"ACTION_REQUEST","payload":{"action_id":"a1","tool_name":"ls","tool_args":{"dir":"."},"resolved_command":"ls ."}"#,
        r#""type":"ACTION_RESULT","payload":{"action_id":"a1","status":"SUCCESS","observation_content":"x","exit_code":0,"execution_ref":"a1"}"#,
        r#""type":"ACTION_REQUEST","payload":{"action_id":"a2","tool_name":"ls","tool_args":{},"resolved_command":"ls"}"#,
        r#""type":"ACTION_RESULT","payload":{"action_id":"a2","status":"FAILED","observation_content":"y","exit_code":2,"execution_ref":"a2"}"#,
        // tool_calls recorded, but not which request executes which: by position.
        r#""type":"THOUGHT","payload":{"content":"","llm_invocation_ref":"i2","tool_calls":[{"id":"m1","name":"ls","arguments":"{}"},{"id":"m2","name":"ls","arguments":"{}"}]}"#,
        r#""type":"ACTION_REQUEST","payload":{"action_id":"a3","tool_name":"ls","tool_args":{},"resolved_command":"ls"}"#,
        r#""type":"ACTION_REQUEST","payload":{"action_id":"a4","tool_name":"ls","tool_args":{},"resolved_command":"ls"}"#,
        r#""type":"ACTION_RESULT","payload":{"action_id":"a4","status":"SUCCESS","observation_content":"z","exit_code":0,"execution_ref":"a4"}"#,
        // A result whose request is not in the journal keeps its own action id.
        r#""type":"ACTION_RESULT","payload":{"action_id":"a9","status":"ERROR","observation_content":"?","exit_code":null,"execution_ref":"a9"}"#,
        // Human input without request ids (seed 000 §2.5.4).
        r#""type":"THOUGHT","payload":{"content":"","llm_invocation_ref":"i3"}"#,
        r#""type":"ACTION_REQUEST","payload":{"action_id":"a5","tool_name":"ask_human","tool_args":{"prompt":"ok?"},"resolved_command":null}"#,
        r#""type":"HUMAN_INPUT_REQUEST","payload":{"prompt":"ok?","input_type":"confirmation","sensitive":false}"#,
        r#""type":"HUMAN_INPUT_RECEIVED","payload":{"response":"yes"}"#,
        r#""type":"ACTION_RESULT","payload":{"action_id":"a5","status":"SUCCESS","observation_content":"yes","exit_code":0,"execution_ref":"a5"}"#,
    ];
    let text: String = lines
        .iter()
        .zip(1..)
        .map(|(line, seq)| format!("{{\"seq\":{seq},{ts},{line}}}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();

    let events = read_journal(&path).unwrap().events;
    let EventPayload::Thought(first) = &events[1].payload else {
        panic!("{:?}", events[1]);
    };
    assert_eq!(
        first.tool_calls,
        [
            ToolCall {
                id: "a1".to_owned(),
                name: "ls".to_owned(),
                arguments: r#"{"dir":"."}"#.to_owned(),
            },
            ToolCall {
                id: "a2".to_owned(),
                name: "ls".to_owned(),
                arguments: "{}".to_owned(),
            },
        ]
    );
    let call_ids: Vec<(&str, &str, &str)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ActionRequest(r) => {
                Some(("request", r.action_id.as_str(), r.tool_call_id.as_str()))
            }
            EventPayload::ActionResult(r) => {
                Some(("result", r.action_id.as_str(), r.tool_call_id.as_str()))
            }
            EventPayload::RunStart(_)
            | EventPayload::UserMessage(_)
            | EventPayload::Thought(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => None,
        })
        .collect();
    assert_eq!(
        call_ids,
        [
            ("request", "a1", "a1"),
            ("result", "a1", "a1"),
            ("request", "a2", "a2"),
            ("result", "a2", "a2"),
            ("request", "a3", "m1"),
            ("request", "a4", "m2"),
            ("result", "a4", "m2"),
            ("result", "a9", "a9"),
            ("request", "a5", "a5"),
            ("result", "a5", "a5"),
        ]
    );
    let request_ids: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::HumanInputRequest(q) => Some(q.request_id.as_str()),
            EventPayload::HumanInputReceived(a) => Some(a.request_id.as_str()),
            EventPayload::RunStart(_)
            | EventPayload::UserMessage(_)
            | EventPayload::Thought(_)
            | EventPayload::ActionRequest(_)
            | EventPayload::ActionResult(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => None,
        })
        .collect();
    assert_eq!(request_ids, ["a5", "a5"], "the ask_human action id");
    let unanswered: Vec<&str> = unanswered_tool_calls(&events)
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(unanswered, ["m1"]);
    assert_eq!(read_journal(&path).unwrap().events, events, "stable");

    // Continued by this engine: appending works, and its own lines carry their ids.
    let journal = open(&path);
    journal.append(result("a3", "m1")).unwrap();
    let events = read_journal(&path).unwrap().events;
    assert!(unanswered_tool_calls(&events).is_empty());
}

#[test]
fn torn_last_line_is_skipped_on_read_refused_by_open_and_cut_by_repair() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    {
        let journal = open(&path);
        journal.append(message("one")).unwrap();
        journal.append(message("two")).unwrap();
    }
    let intact_len = std::fs::metadata(&path).unwrap().len();
    // A crash in the middle of writing the third line.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"seq":3,"timestamp":"2025-10-"#)
        .unwrap();
    drop(file);

    let read = read_journal(&path).unwrap();
    assert_eq!(read.events.len(), 2);
    let tail = read.torn_tail.unwrap();
    assert_eq!(
        (tail.line, tail.offset, tail.len),
        (3, intact_len, 30),
        "{tail:?}"
    );
    assert_eq!(tail.preview, r#"{"seq":3,"timestamp":"2025-10-"#);

    let refused = Journal::open_with(&path, FsyncPolicy::OnSync, Redactor::default()).unwrap_err();
    assert!(matches!(refused, JournalError::TornTail { line: 3, .. }));
    assert_eq!(
        refused.to_string(),
        format!(
            "{}:3: the last line is incomplete (a crash mid-write); repair the journal \
             (`delta continue` does this) before appending",
            path.display()
        )
    );

    let repaired = repair_torn_tail(&path).unwrap().unwrap();
    assert_eq!(repaired.line, 3);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), intact_len);
    assert_eq!(
        repair_torn_tail(&path).unwrap(),
        None,
        "second repair finds nothing"
    );
    let journal = open(&path);
    assert_eq!(journal.append(message("three")).unwrap().seq, 3);
    assert_eq!(seqs(&path), vec![1, 2, 3]);
}

#[test]
fn a_last_line_without_newline_is_torn_even_if_its_json_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    open(&path).append(message("one")).unwrap();
    let line = std::fs::read_to_string(&path).unwrap();
    let second = line.replace("\"seq\":1", "\"seq\":2");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(second.trim_end().as_bytes()).unwrap();
    drop(file);
    let read = read_journal(&path).unwrap();
    assert_eq!(read.events.len(), 1);
    assert_eq!(read.torn_tail.unwrap().line, 2);
}

#[test]
fn invalid_json_on_a_newline_terminated_last_line_is_torn() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    open(&path).append(message("one")).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"\0\0\0\0\n").unwrap();
    drop(file);
    let read = read_journal(&path).unwrap();
    assert_eq!(read.events.len(), 1);
    assert_eq!(read.torn_tail.unwrap().len, 5);
}

#[test]
fn corrupt_middle_line_is_an_error_with_its_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    {
        let journal = open(&path);
        for text in ["a", "b", "c"] {
            journal.append(message(text)).unwrap();
        }
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = r#"{"seq":2,"timestamp":"2025-10-14T10:30:00Z","type":"USER_MESSAGE","payload":{"content":}}"#;
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let error = read_journal(&path).unwrap_err();
    assert!(
        matches!(
            error,
            JournalError::CorruptLine {
                line: 2,
                column: 88,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{p}:2:88: invalid journal event: expected value; the journal is damaged at this \
             line (inspect it with `sed -n '2p' {p}`), so the run cannot be continued from it",
            p = path.display()
        )
    );
    // Damage in the middle is never "repaired" away.
    assert!(repair_torn_tail(&path).is_err());
}

#[test]
fn a_well_formed_line_of_the_wrong_shape_is_damage_even_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    open(&path).append(message("a")).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(
        b"{\"seq\":2,\"timestamp\":\"2025-10-14T10:30:00Z\",\"type\":\"LOL\",\"payload\":{}}\n",
    )
    .unwrap();
    drop(file);
    let error = read_journal(&path).unwrap_err();
    assert!(
        matches!(error, JournalError::CorruptLine { line: 2, .. }),
        "{error}"
    );
}

#[test]
fn empty_middle_line_and_seq_gaps_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    {
        let journal = open(&path);
        journal.append(message("a")).unwrap();
        journal.append(message("b")).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    std::fs::write(&path, format!("{}\n\n{}\n", lines[0], lines[1])).unwrap();
    let error = read_journal(&path).unwrap_err();
    snapshot!(error, @"[TEMP]/journal.jsonl:2:1: invalid journal event: the line is empty; the journal is damaged at this line (inspect it with `sed -n '2p' [TEMP]/journal.jsonl`), so the run cannot be continued from it");

    std::fs::write(&path, format!("{}\n", lines[1])).unwrap();
    let error = read_journal(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:1: event has seq 2, expected 1; the journal was edited or lines were lost, so \
             the run cannot be continued from it",
            path.display()
        )
    );
}

#[test]
fn a_missing_journal_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let read = read_journal(&dir.path().join("journal.jsonl")).unwrap();
    assert!(read.events.is_empty() && read.torn_tail.is_none());
    assert_eq!(read.last_seq(), 0);
}

#[test]
fn concurrent_appends_through_one_writer_never_interleave_and_readers_see_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Arc::new(open(&path));
    let big = "x".repeat(9000); // longer than a page: a split write would show
    let writers: Vec<_> = (0..8)
        .map(|t| {
            let journal = Arc::clone(&journal);
            let big = big.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    journal.append(message(&format!("{t}-{i}-{big}"))).unwrap();
                }
            })
        })
        .collect();
    // A reader racing the writers only ever sees a gapless prefix; at most the line being
    // written at that instant is incomplete, and it is reported as a torn tail, not damage.
    let reader_path = path.clone();
    let reader = std::thread::spawn(move || {
        for _ in 0..30 {
            let read = read_journal(&reader_path).unwrap();
            for (i, event) in read.events.iter().enumerate() {
                assert_eq!(event.seq, i as u64 + 1);
            }
        }
    });
    for writer in writers {
        writer.join().unwrap();
    }
    reader.join().unwrap();
    let read = read_journal(&path).unwrap();
    assert!(read.torn_tail.is_none());
    assert_eq!(read.events.len(), 400);
    for (i, event) in read.events.iter().enumerate() {
        assert_eq!(event.seq, i as u64 + 1);
        let EventPayload::UserMessage(m) = &event.payload else {
            panic!("unexpected {event:?}")
        };
        assert!(m.content.ends_with(&big));
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 400);
}

#[test]
fn a_killed_writer_loses_no_completed_line() {
    // No user-space buffering: every append is in the kernel when append returns, so
    // SIGKILL right after the last append loses nothing and tears nothing.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let mut child = spawn_child("append", &[path.to_str().unwrap(), "100"]);
    wait_for_line(&mut child, "appended");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let read = read_journal(&path).unwrap();
    assert_eq!(read.events.len(), 100);
    assert!(read.torn_tail.is_none());
}

#[test]
fn fsync_policy_parsing() {
    let ok = [
        (None, FsyncPolicy::OnSync),
        (Some(""), FsyncPolicy::OnSync),
        (Some("sync"), FsyncPolicy::OnSync),
        (Some("always"), FsyncPolicy::Always),
        (Some("ALWAYS"), FsyncPolicy::Always),
        (Some(" always\n"), FsyncPolicy::Always),
    ];
    for (value, expected) in ok {
        assert_eq!(FsyncPolicy::parse(value).unwrap(), expected, "{value:?}");
    }
    for bad in ["never", "1", "true", "alway"] {
        let error = FsyncPolicy::parse(Some(bad)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "DELTA_FSYNC={bad:?} is not a known policy; use DELTA_FSYNC=always or unset it"
            )
        );
    }
}

#[test]
fn always_policy_still_appends_and_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Journal::open_with(&path, FsyncPolicy::Always, Redactor::default()).unwrap();
    assert_eq!(journal.policy(), FsyncPolicy::Always);
    journal.append(message("a")).unwrap();
    journal.sync().unwrap();
    assert_eq!(seqs(&path), vec![1]);
}

fn request(action: &str, call: &str) -> EventPayload {
    EventPayload::ActionRequest(ActionRequest {
        action_id: action.to_owned(),
        tool_call_id: call.to_owned(),
        tool_name: "ls".to_owned(),
        tool_args: serde_json::Map::new(),
        resolved_command: Some("ls".to_owned()),
        subagent: None,
        environment: None,
    })
}

fn result(action: &str, call: &str) -> EventPayload {
    EventPayload::ActionResult(ActionResult {
        action_id: action.to_owned(),
        tool_call_id: call.to_owned(),
        status: ActionStatus::Success,
        observation_content: String::new(),
        exit_code: Some(0),
        execution_ref: action.to_owned(),
        subagent: None,
    })
}

#[test]
fn crash_repair_finds_dangling_requests_and_unanswered_tool_calls() {
    let calls = |ids: &[&str]| {
        EventPayload::Thought(Thought {
            content: String::new(),
            llm_invocation_ref: "inv".to_owned(),
            reasoning: None,
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).to_owned(),
                    name: "ls".to_owned(),
                    arguments: "{}".to_owned(),
                })
                .collect(),
            passback: None,
            usage: None,
        })
    };
    let payloads = [
        calls(&["c1"]),
        request("a1", "c1"),
        result("a1", "c1"),
        calls(&["c2", "c3", "c4"]),
        request("a2", "c2"),
        result("a2", "c2"),
        request("a3", "c3"),
        // crash: a3 never answered, c4 never even requested
    ];
    let events: Vec<Event> = payloads
        .into_iter()
        .enumerate()
        .map(|(i, payload)| Event {
            seq: i as u64 + 1,
            timestamp: Timestamp::now(),
            payload,
        })
        .collect();
    let dangling: Vec<&str> = dangling_action_requests(&events)
        .iter()
        .map(|r| r.action_id.as_str())
        .collect();
    assert_eq!(dangling, vec!["a3"]);
    let unanswered: Vec<&str> = unanswered_tool_calls(&events)
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(unanswered, vec!["c3", "c4"]);
}

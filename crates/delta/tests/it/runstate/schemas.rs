//! Run-state files and outputs validate against their generated schemas (the drift test for
//! every committed schema lives in `tests/schemas`).

#[test]
fn written_events_metadata_and_requests_validate_against_their_schemas() {
    use delta_engine::journal::{
        ActionRequest, ActionResult, ActionStatus, EventPayload, FsyncPolicy, HookExecutionAudit,
        HookStatus, HumanInputReceived, HumanInputRequest, Journal, MessageLevel, RunEnd, RunStart,
        SystemMessage, Thought, ToolCall, UserMessage,
    };
    use delta_engine::run::{
        ErrorInfo, ErrorType, FinalStatus, InputType, InteractionRequest, RunPaths,
    };
    use delta_engine::secrets::Redactor;

    use crate::runstate::support::{at, run_id, sample_metadata, schema_errors};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Journal::open_with(&path, FsyncPolicy::OnSync, Redactor::default()).unwrap();
    let payloads = vec![
        EventPayload::RunStart(RunStart {
            run_id: run_id("r1"),
            task: "t".to_owned(),
            agent_ref: "/a".to_owned(),
            environment: None,
        }),
        EventPayload::UserMessage(UserMessage {
            content: "more".to_owned(),
        }),
        EventPayload::Thought(Thought {
            content: String::new(),
            llm_invocation_ref: "inv-1".to_owned(),
            reasoning: None,
            tool_calls: vec![ToolCall {
                id: "c1".to_owned(),
                name: "ask_human".to_owned(),
                arguments: "{\"prompt\":\"ok?\"}".to_owned(),
            }],
            passback: None,
            usage: None,
        }),
        EventPayload::ActionRequest(ActionRequest {
            action_id: "a1".to_owned(),
            tool_call_id: "c1".to_owned(),
            tool_name: "ask_human".to_owned(),
            tool_args: serde_json::from_str("{\"prompt\":\"ok?\"}").unwrap(),
            resolved_command: None,
            subagent: None,
            environment: None,
        }),
        EventPayload::HumanInputRequest(HumanInputRequest {
            request_id: "q1".to_owned(),
            prompt: "ok?".to_owned(),
            input_type: InputType::Confirmation,
            sensitive: false,
        }),
        EventPayload::HumanInputReceived(HumanInputReceived {
            request_id: "q1".to_owned(),
            response: "yes".to_owned(),
        }),
        EventPayload::ActionResult(ActionResult {
            action_id: "a1".to_owned(),
            tool_call_id: "c1".to_owned(),
            status: ActionStatus::Success,
            observation_content: "yes".to_owned(),
            exit_code: None,
            execution_ref: "a1".to_owned(),
            subagent: None,
        }),
        EventPayload::SystemMessage(SystemMessage {
            level: MessageLevel::Warn,
            content: "hook failed".to_owned(),
        }),
        EventPayload::HookExecutionAudit(HookExecutionAudit {
            hook_name: "pre_llm_request".to_owned(),
            status: HookStatus::Failed,
            io_path_ref: RunPaths::hook_io_path_ref(5, "pre_llm_request"),
        }),
        EventPayload::RunEnd(RunEnd {
            status: FinalStatus::Interrupted,
            error: Some(ErrorInfo::new(ErrorType::MaxIterationsReached, "budget")),
            result: None,
        }),
        EventPayload::RunEnd(RunEnd {
            status: FinalStatus::Completed,
            error: None,
            result: Some(serde_json::json!({"a": 1})),
        }),
    ];
    for payload in payloads {
        journal.append(payload).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let mut types = Vec::new();
    for line in text.lines() {
        let json: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            schema_errors("journal-event.schema.json", &json),
            Vec::<String>::new(),
            "{line}"
        );
        types.push(json["type"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        types,
        [
            "RUN_START",
            "USER_MESSAGE",
            "THOUGHT",
            "ACTION_REQUEST",
            "HUMAN_INPUT_REQUEST",
            "HUMAN_INPUT_RECEIVED",
            "ACTION_RESULT",
            "SYSTEM_MESSAGE",
            "HOOK_EXECUTION_AUDIT",
            "RUN_END",
            "RUN_END"
        ]
    );

    let mut metadata = sample_metadata("r1", dir.path());
    let json = serde_json::to_value(&metadata).unwrap();
    assert_eq!(
        schema_errors("metadata.schema.json", &json),
        Vec::<String>::new()
    );
    metadata.fail(
        ErrorInfo::new(ErrorType::LlmError, "m").with_details("d"),
        at("2025-10-14T10:31:00Z"),
    );
    let json = serde_json::to_value(&metadata).unwrap();
    assert_eq!(
        schema_errors("metadata.schema.json", &json),
        Vec::<String>::new()
    );

    let request = InteractionRequest {
        request_id: "q1".to_owned(),
        timestamp: at("2025-10-14T10:31:00Z"),
        prompt: "API key?".to_owned(),
        input_type: InputType::Password,
        sensitive: true,
    };
    let json = serde_json::to_value(&request).unwrap();
    assert_eq!(
        schema_errors("interaction-request.schema.json", &json),
        Vec::<String>::new()
    );
}

/// The envelope is strict; a payload needs only the fields the spec lists for its type and
/// admits others (another implementation may record more, or less of what we add).
#[test]
fn the_journal_schema_is_a_strict_envelope_around_open_payloads() {
    use crate::runstate::support::schema_errors;
    let ts = "2025-10-14T10:30:00.000Z";
    let valid = [
        serde_json::json!({"seq": 1, "timestamp": ts, "type": "USER_MESSAGE",
            "payload": {"content": "hi"}}),
        // unknown payload fields
        serde_json::json!({"seq": 1, "timestamp": ts, "type": "USER_MESSAGE",
            "payload": {"content": "hi", "x": 1}}),
        // DESIGN.md's fields only: no tool_calls, tool_call_id or request_id
        serde_json::json!({"seq": 2, "timestamp": ts, "type": "THOUGHT",
            "payload": {"content": "hi", "llm_invocation_ref": "i1", "model": "m"}}),
        serde_json::json!({"seq": 3, "timestamp": ts, "type": "ACTION_REQUEST",
            "payload": {"action_id": "a1", "tool_name": "ls", "tool_args": {},
                        "resolved_command": "ls", "iteration": 1}}),
        serde_json::json!({"seq": 4, "timestamp": ts, "type": "ACTION_RESULT",
            "payload": {"action_id": "a1", "status": "SUCCESS", "observation_content": "x",
                        "exit_code": 0, "execution_ref": "a1", "duration_ms": 3}}),
        serde_json::json!({"seq": 5, "timestamp": ts, "type": "HUMAN_INPUT_REQUEST",
            "payload": {"prompt": "ok?", "input_type": "confirmation", "sensitive": false}}),
        serde_json::json!({"seq": 6, "timestamp": ts, "type": "HUMAN_INPUT_RECEIVED",
            "payload": {"response": "yes"}}),
        serde_json::json!({"seq": 7, "timestamp": ts, "type": "RUN_END",
            "payload": {"status": "COMPLETED", "final_iteration": 3}}),
    ];
    for instance in valid {
        assert_eq!(
            schema_errors("journal-event.schema.json", &instance),
            Vec::<String>::new(),
            "{instance}"
        );
    }
    let invalid = [
        // unknown envelope field
        serde_json::json!({"seq": 1, "timestamp": "2025-10-14T10:30:00Z", "type": "USER_MESSAGE",
            "payload": {"content": "hi"}, "extra": true}),
        // unknown type
        serde_json::json!({"seq": 1, "timestamp": "2025-10-14T10:30:00Z", "type": "ERROR",
            "payload": {}}),
        // payload of another type
        serde_json::json!({"seq": 1, "timestamp": "2025-10-14T10:30:00Z", "type": "THOUGHT",
            "payload": {"content": "hi"}}),
        // a field DESIGN.md lists is missing
        serde_json::json!({"seq": 1, "timestamp": "2025-10-14T10:30:00Z", "type": "ACTION_RESULT",
            "payload": {"action_id": "a1", "status": "SUCCESS", "observation_content": "x",
                        "execution_ref": "a1"}}),
        // a typed optional field of the wrong type
        serde_json::json!({"seq": 1, "timestamp": "2025-10-14T10:30:00Z", "type": "ACTION_REQUEST",
            "payload": {"action_id": "a1", "tool_call_id": 7, "tool_name": "ls", "tool_args": {},
                        "resolved_command": "ls"}}),
        // missing seq
        serde_json::json!({"timestamp": "2025-10-14T10:30:00Z", "type": "USER_MESSAGE",
            "payload": {"content": "hi"}}),
        // payload not an object
        serde_json::json!({"seq": 1, "timestamp": "2025-10-14T10:30:00Z", "type": "USER_MESSAGE",
            "payload": "hi"}),
        // seq starts at 1
        serde_json::json!({"seq": 0, "timestamp": "2025-10-14T10:30:00Z", "type": "USER_MESSAGE",
            "payload": {"content": "hi"}}),
        // missing timestamp
        serde_json::json!({"seq": 1, "type": "USER_MESSAGE", "payload": {"content": "hi"}}),
    ];
    for instance in invalid {
        assert!(
            !schema_errors("journal-event.schema.json", &instance).is_empty(),
            "{instance}"
        );
    }
}

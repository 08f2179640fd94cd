//! metadata.json: field names, atomic replacement, errors, status transitions.

use delta_engine::run::{
    ErrorInfo, ErrorType, ProcessIdentity, RunStateError, RunStatus, read_metadata, write_metadata,
};
use delta_engine::secrets::Redactor;

use crate::runstate::support::{at, sample_metadata};

#[test]
fn every_field_is_written_with_its_documented_name() {
    let ws = tempfile::tempdir().unwrap();
    let mut metadata = sample_metadata("r1", ws.path());
    metadata.usage.record("gpt-4o", 1200, 50, 0.0125);
    metadata.usage.record("gpt-4o", 800, 50, 0.0075);
    metadata.iterations = 2;
    metadata.complete(
        serde_json::json!({"report": "report.md"}),
        at("2025-10-14T10:32:30.500Z"),
    );
    let mut json = serde_json::to_value(&metadata).unwrap();
    // The run's trace id is random: 32 lowercase hex digits.
    let trace_id = json.as_object_mut().unwrap().remove("trace_id").unwrap();
    let trace_id = trace_id.as_str().unwrap();
    assert_eq!(trace_id.len(), 32, "{trace_id}");
    assert!(
        trace_id.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
        "{trace_id}"
    );
    assert_eq!(
        json,
        serde_json::json!({
            "schema_version": "1.0",
            "run_id": "r1",
            "status": "COMPLETED",
            "task": "Analyze data.csv\nand write report.md",
            "agent_name": "analyst",
            "agent_home": "/agents/analyst",
            "work_dir": ws.path(),
            "workspace_id": "W001",
            "created_at": "2025-10-14T10:30:00.000Z",
            "updated_at": "2025-10-14T10:32:30.500Z",
            "end_time": "2025-10-14T10:32:30.500Z",
            "iterations": 2,
            "max_iterations": 30,
            "error": null,
            "result": {"report": "report.md"},
            "usage": {
                "input_tokens": 2000,
                "output_tokens": 100,
                "total_cost_usd": 0.02,
                "model_usage": {
                    "gpt-4o": {"calls": 2, "input_tokens": 2000, "output_tokens": 100, "cost_usd": 0.02}
                }
            },
            "pid": 4242,
            "hostname": "host-a",
            "process_name": "delta",
            "start_time": "2025-10-14T10:30:00.000Z",
            "process_start_time": 123456
        })
    );
}

#[test]
fn write_then_read_round_trips_and_leaves_no_temporary_files() {
    let ws = tempfile::tempdir().unwrap();
    let path = ws.path().join("metadata.json");
    let mut metadata = sample_metadata("r1", ws.path());
    write_metadata(&path, &metadata, &Redactor::default()).unwrap();
    assert_eq!(read_metadata(&path).unwrap(), metadata);

    metadata.fail(
        ErrorInfo::new(ErrorType::ToolExecutionError, "Tool 'analyze' failed")
            .with_details("File not found: data.csv"),
        at("2025-10-14T10:31:00Z"),
    );
    write_metadata(&path, &metadata, &Redactor::default()).unwrap();
    assert_eq!(read_metadata(&path).unwrap(), metadata);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n"), "pretty JSON with a final newline");

    let entries: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, vec!["metadata.json"]);
}

/// metadata.json of another implementation: the spec's fields only (no `schema_version`,
/// no `process_start_time`), plus one of its own. It reads, and validates.
#[test]
fn metadata_without_this_engines_own_fields_reads_and_validates() {
    let ws = tempfile::tempdir().unwrap();
    let path = ws.path().join("metadata.json");
    let mut json = serde_json::to_value(sample_metadata("r1", ws.path())).unwrap();
    let fields = json.as_object_mut().unwrap();
    fields.remove("schema_version");
    fields.remove("process_start_time");
    fields.insert("engine".to_owned(), serde_json::json!("other"));
    assert_eq!(
        crate::runstate::support::schema_errors("metadata.schema.json", &json),
        Vec::<String>::new()
    );
    std::fs::write(&path, json.to_string()).unwrap();
    let read = read_metadata(&path).unwrap();
    assert_eq!(
        (read.schema_version.as_str(), read.process_start_time),
        ("", None)
    );
    assert_eq!(read.start_time, at("2025-10-14T10:30:00Z"));

    json.as_object_mut().unwrap().remove("start_time");
    assert_eq!(
        crate::runstate::support::schema_errors("metadata.schema.json", &json),
        ["\"start_time\" is a required property at "]
    );
}

#[test]
fn unknown_error_types_survive_a_round_trip() {
    let error: ErrorInfo =
        serde_json::from_str(r#"{"type":"QuotaExceeded","message":"m"}"#).unwrap();
    assert_eq!(
        error.error_type,
        ErrorType::Other("QuotaExceeded".to_owned())
    );
    assert_eq!(
        serde_json::to_string(&error).unwrap(),
        r#"{"type":"QuotaExceeded","message":"m"}"#
    );
    let known: ErrorInfo =
        serde_json::from_str(r#"{"type":"MaxIterationsReached","message":"m"}"#).unwrap();
    assert_eq!(known.error_type, ErrorType::MaxIterationsReached);
}

#[test]
fn missing_and_corrupt_metadata_errors_name_the_file() {
    let ws = tempfile::tempdir().unwrap();
    let path = ws.path().join("metadata.json");
    let missing = read_metadata(&path).unwrap_err();
    assert!(matches!(missing, RunStateError::MetadataMissing { .. }));
    assert_eq!(
        missing.to_string(),
        format!(
            "{} does not exist; the run's metadata was never written or was removed",
            path.display()
        )
    );

    std::fs::write(
        &path,
        "{\n  \"run_id\": \"r1\",\n  \"status\": \"DONE\"\n}\n",
    )
    .unwrap();
    let corrupt = read_metadata(&path).unwrap_err();
    assert_eq!(
        corrupt.to_string(),
        format!(
            "{}:3:18: invalid run metadata: unknown variant `DONE`, expected one of `RUNNING`, \
             `WAITING_FOR_INPUT`, `COMPLETED`, `FAILED`, `INTERRUPTED`; the file is written \
             only by the engine, restore it or remove the run directory",
            path.display()
        )
    );

    std::fs::write(&path, "").unwrap();
    let empty = read_metadata(&path).unwrap_err();
    assert!(
        matches!(empty, RunStateError::MetadataCorrupt { line: 1, .. }),
        "{empty}"
    );
}

#[test]
fn transitions_keep_result_error_and_end_time_consistent() {
    let ws = tempfile::tempdir().unwrap();
    let mut m = sample_metadata("r1", ws.path());
    assert_eq!(m.status, RunStatus::Running);
    assert_eq!((m.end_time, m.iterations), (None, 0));

    let budget = ErrorInfo::new(ErrorType::MaxIterationsReached, "Reached 30 iterations");
    m.interrupt(budget.clone(), at("2025-10-14T10:31:00Z"));
    assert_eq!(m.status, RunStatus::Interrupted);
    assert_eq!(m.error.as_ref(), Some(&budget));
    assert_eq!(m.end_time, Some(at("2025-10-14T10:31:00Z")));

    let me = ProcessIdentity {
        pid: 7,
        hostname: "host-b".to_owned(),
        process_name: "delta".to_owned(),
        start_ticks: Some(99),
    };
    assert_eq!(
        m.start_time,
        at("2025-10-14T10:30:00Z"),
        "the creator started it"
    );
    m.resume(&me, 10, at("2025-10-14T11:00:00Z"));
    assert_eq!(m.status, RunStatus::Running);
    assert_eq!(
        m.start_time,
        at("2025-10-14T11:00:00Z"),
        "the process continuing it started it again"
    );
    assert_eq!(
        (m.error.as_ref(), m.end_time, m.max_iterations),
        (None, None, 10)
    );
    assert_eq!(m.process_identity(), me);
    assert_eq!(
        m.created_at,
        at("2025-10-14T10:30:00Z"),
        "creation time is kept"
    );

    m.complete(serde_json::json!("done"), at("2025-10-14T11:01:00Z"));
    assert_eq!(m.result, Some(serde_json::json!("done")));
    m.wait_for_input(at("2025-10-14T11:02:00Z"));
    assert_eq!((m.result.as_ref(), m.error.as_ref()), (None, None));
    assert_eq!(m.status, RunStatus::WaitingForInput);
    m.touch(at("2025-10-14T11:03:00Z"));
    assert_eq!(m.updated_at, at("2025-10-14T11:03:00Z"));
    assert_eq!(m.end_time, Some(at("2025-10-14T11:02:00Z")));
}

#[test]
fn status_names_parse_case_insensitively() {
    for status in RunStatus::ALL {
        assert_eq!(status.as_str().parse::<RunStatus>().unwrap(), status);
        assert_eq!(
            status.as_str().to_lowercase().parse::<RunStatus>().unwrap(),
            status
        );
    }
    assert_eq!(
        "DONE".parse::<RunStatus>().unwrap_err().to_string(),
        "unknown run status \"DONE\"; expected one of RUNNING, WAITING_FOR_INPUT, COMPLETED, \
         FAILED, INTERRUPTED"
    );
    let resumable: Vec<_> = RunStatus::ALL
        .into_iter()
        .filter(|s| s.is_resumable())
        .collect();
    assert_eq!(
        resumable,
        vec![
            RunStatus::WaitingForInput,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Interrupted
        ]
    );
}

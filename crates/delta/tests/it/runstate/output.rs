//! RunResult v2.0 from persisted metadata, its renderings, exit codes.

use std::path::Path;

use delta_engine::output::{
    OutputError, RunResult, exit_code_for, format_duration, render_json, render_raw, render_text,
};
use delta_engine::run::{
    ErrorInfo, ErrorType, InputType, InteractionRequest, Metadata, RunPaths, create_run,
    write_interaction_request, write_metadata,
};
use delta_engine::secrets::Redactor;

use crate::runstate::support::{at, run_id, sample_metadata, schema_errors};
use crate::support::snapshot::snapshot;

const END: &str = "2025-10-14T10:32:30.000Z";

/// Persists `metadata` (and `request`) as a run would, then loads the result from disk.
fn persisted(ws: &Path, metadata: &Metadata, request: Option<&InteractionRequest>) -> RunResult {
    std::fs::create_dir_all(ws).unwrap();
    let paths = create_run(ws, &metadata.run_id).unwrap();
    write_metadata(&paths.metadata(), metadata, &Redactor::default()).unwrap();
    if let Some(request) = request {
        write_interaction_request(&paths, request, &Redactor::default()).unwrap();
    }
    RunResult::load(&paths).unwrap()
}

fn completed(ws: &Path, result: serde_json::Value) -> RunResult {
    let mut m = sample_metadata("20251014_103000_aaaaaa", ws);
    m.iterations = 15;
    m.usage.record("gpt-4o", 120_000, 5000, 0.27176);
    m.complete(result, at(END));
    persisted(ws, &m, None)
}

fn failed(ws: &Path) -> RunResult {
    let mut m = sample_metadata("r-failed", ws);
    m.fail(
        ErrorInfo::new(
            ErrorType::ToolExecutionError,
            "Tool 'analyze_data' execution failed.",
        )
        .with_details("File not found: data.csv"),
        at("2025-10-14T10:30:45.000Z"),
    );
    persisted(ws, &m, None)
}

fn interrupted(ws: &Path, error: Option<ErrorInfo>) -> RunResult {
    let mut m = sample_metadata("r-int", ws);
    match error {
        Some(error) => m.interrupt(error, at(END)),
        None => {
            // The Janitor's transition records no error.
            m.interrupt(ErrorInfo::new(ErrorType::Interrupted, "x"), at(END));
            m.error = None;
        }
    }
    persisted(ws, &m, None)
}

fn request() -> InteractionRequest {
    InteractionRequest {
        request_id: "req-1".to_owned(),
        timestamp: at("2025-10-14T10:31:00Z"),
        prompt: "Please confirm the plan.".to_owned(),
        input_type: InputType::Confirmation,
        sensitive: false,
    }
}

fn waiting(ws: &Path) -> RunResult {
    let mut m = sample_metadata("r-wait", ws);
    m.wait_for_input(at("2025-10-14T10:30:05.000Z"));
    persisted(ws, &m, Some(&request()))
}

#[test]
fn completed_result_has_result_metrics_and_metadata_only() {
    let ws = tempfile::tempdir().unwrap();
    let result = completed(
        ws.path(),
        serde_json::json!({"summary": "Analysis complete."}),
    );
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "schema_version": "2.0",
            "run_id": "20251014_103000_aaaaaa",
            "status": "COMPLETED",
            "result": {"summary": "Analysis complete."},
            "metrics": {
                "iterations": 15,
                "duration_ms": 150_000,
                "start_time": "2025-10-14T10:30:00.000Z",
                "end_time": "2025-10-14T10:32:30.000Z",
                "usage": {
                    "total_cost_usd": 0.27176,
                    "input_tokens": 120_000,
                    "output_tokens": 5000,
                    "model_usage": {"gpt-4o": {
                        "calls": 1, "input_tokens": 120_000, "output_tokens": 5000, "cost_usd": 0.27176
                    }}
                }
            },
            "metadata": {"agent_name": "analyst", "workspace_path": ws.path()}
        })
    );
    assert_eq!(
        schema_errors("run-result.schema.json", &json),
        Vec::<String>::new()
    );
}

#[test]
fn every_status_validates_against_the_run_result_schema() {
    let ws = tempfile::tempdir().unwrap();
    let results = [
        completed(ws.path(), serde_json::json!("plain text")),
        failed(ws.path()),
        interrupted(
            ws.path(),
            Some(ErrorInfo::new(
                ErrorType::MaxIterationsReached,
                "Reached 30 iterations",
            )),
        ),
        waiting(ws.path()),
    ];
    for result in &results {
        let json = serde_json::to_value(result).unwrap();
        assert_eq!(
            schema_errors("run-result.schema.json", &json),
            Vec::<String>::new(),
            "{json:#}"
        );
        let present: Vec<&str> = ["result", "error", "interaction"]
            .into_iter()
            .filter(|k| json.get(k).is_some())
            .collect();
        assert_eq!(present.len(), 1, "exactly one conditional field: {json:#}");
    }
}

#[test]
fn the_schema_rejects_misplaced_conditional_fields() {
    let ws = tempfile::tempdir().unwrap();
    let mut json = serde_json::to_value(completed(ws.path(), serde_json::json!(1))).unwrap();
    json["error"] = serde_json::json!({"type": "EngineError", "message": "m"});
    assert!(!schema_errors("run-result.schema.json", &json).is_empty());

    let mut json = serde_json::to_value(failed(ws.path())).unwrap();
    json.as_object_mut().unwrap().remove("error");
    assert!(!schema_errors("run-result.schema.json", &json).is_empty());

    let mut json = serde_json::to_value(waiting(ws.path())).unwrap();
    json["surprise"] = serde_json::json!(true);
    assert!(!schema_errors("run-result.schema.json", &json).is_empty());
}

#[test]
fn failed_interrupted_and_waiting_results_carry_their_field() {
    let ws = tempfile::tempdir().unwrap();
    let f = failed(ws.path());
    assert_eq!(
        f.error.as_ref().unwrap().details.as_deref(),
        Some("File not found: data.csv")
    );
    assert_eq!((f.result.as_ref(), f.interaction.as_ref()), (None, None));
    assert_eq!(f.metrics.duration_ms, 45_000);

    let janitor = interrupted(ws.path(), None);
    let error = janitor.error.unwrap();
    assert_eq!(error.error_type, ErrorType::Interrupted);
    assert_eq!(error.message, "the run was interrupted before it finished");

    let w = waiting(ws.path());
    let json = serde_json::to_value(w.interaction.unwrap()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"prompt": "Please confirm the plan.", "input_type": "confirmation", "sensitive": false})
    );
}

#[test]
fn a_running_run_or_a_waiting_run_without_request_has_no_result() {
    let ws = tempfile::tempdir().unwrap();
    let running = sample_metadata("r-run", ws.path());
    let error = RunResult::from_metadata(&running, None).unwrap_err();
    assert!(matches!(error, OutputError::NotFinished { .. }));

    let mut m = sample_metadata("r-wait", ws.path());
    m.wait_for_input(at(END));
    let error = RunResult::from_metadata(&m, None).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "run r-wait is WAITING_FOR_INPUT but {}/.delta/r-wait/interaction/request.json is \
             missing; answer with `delta continue --run-id r-wait -m ANSWER`",
            ws.path().display()
        )
    );
}

#[test]
fn load_reads_what_is_on_disk_not_memory() {
    let ws = tempfile::tempdir().unwrap();
    let mut m = sample_metadata("r-disk", ws.path());
    m.complete(serde_json::json!("on disk"), at(END));
    let paths: RunPaths = create_run(ws.path(), &run_id("r-disk")).unwrap();
    write_metadata(&paths.metadata(), &m, &Redactor::default()).unwrap();
    m.result = Some(serde_json::json!("only in memory"));
    assert_eq!(
        RunResult::load(&paths).unwrap().result,
        Some(serde_json::json!("on disk"))
    );
}

#[test]
fn text_summary_of_a_completed_run_pretty_prints_object_results() {
    let ws = tempfile::tempdir().unwrap();
    let result = completed(
        ws.path(),
        serde_json::json!({"summary": "Analysis complete.", "confidence_score": 0.95}),
    );
    assert_eq!(
        render_text(&result),
        "--- Run Summary ---\n\
         Run ID:     20251014_103000_aaaaaa\n\
         Status:     COMPLETED\n\
         Duration:   2m 30s\n\
         -------------------\n\
         Result:\n\
         {\n  \"confidence_score\": 0.95,\n  \"summary\": \"Analysis complete.\"\n}\n\
         -------------------\n"
    );
    let text = completed(
        ws.path().join("x").as_path(),
        serde_json::json!("All done.\nBye."),
    );
    snapshot!(render_text(&text), @"
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    All done.
    Bye.
    -------------------
    ");
}

#[test]
fn text_summary_of_a_failed_run_shows_error_and_details() {
    let ws = tempfile::tempdir().unwrap();
    assert_eq!(
        render_text(&failed(ws.path())),
        "--- Run Summary ---\n\
         Run ID:     r-failed\n\
         Status:     FAILED\n\
         Duration:   45s\n\
         -------------------\n\
         Error: Tool 'analyze_data' execution failed.\n\
         Details: File not found: data.csv\n\
         -------------------\n"
    );
}

#[test]
fn text_summary_of_interrupted_and_waiting_runs_says_how_to_resume() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().join("my ws");
    std::fs::create_dir(&dir).unwrap();
    let int = interrupted(
        &dir,
        Some(ErrorInfo::new(
            ErrorType::MaxIterationsReached,
            "Reached the limit of 30 iterations",
        )),
    );
    assert_eq!(
        render_text(&int),
        format!(
            "--- Run Summary ---\n\
             Run ID:     r-int\n\
             Status:     INTERRUPTED\n\
             Duration:   2m 30s\n\
             -------------------\n\
             Error: Reached the limit of 30 iterations\n\
             -------------------\n\
             To resume: delta continue --run-id r-int -w '{}'\n\
             -------------------\n",
            dir.display()
        )
    );
    assert_eq!(
        render_text(&waiting(ws.path())),
        format!(
            "--- Run Summary ---\n\
             Run ID:     r-wait\n\
             Status:     WAITING_FOR_INPUT\n\
             Duration:   5s\n\
             -------------------\n\
             Waiting for input:\n\
             Please confirm the plan.\n\
             Input type: confirmation\n\
             -------------------\n\
             To answer: delta continue --run-id r-wait -w {} -m ANSWER\n\
             -------------------\n",
            ws.path().display()
        )
    );
}

#[test]
fn raw_output_is_the_bare_result_of_a_completed_run_only() {
    let ws = tempfile::tempdir().unwrap();
    let text = completed(ws.path(), serde_json::json!("summary text"));
    assert_eq!(render_raw(&text), "summary text");
    let object = completed(
        ws.path().join("o").as_path(),
        serde_json::json!({"report_file": "W001/report.pdf", "n": [1, 2]}),
    );
    assert_eq!(
        render_raw(&object),
        "{\"n\":[1,2],\"report_file\":\"W001/report.pdf\"}\n"
    );
    assert_eq!(render_raw(&failed(ws.path())), "");
    assert_eq!(render_raw(&waiting(ws.path())), "");
}

#[test]
fn json_output_is_the_pretty_run_result_and_parses_back() {
    let ws = tempfile::tempdir().unwrap();
    let result = failed(ws.path());
    let text = render_json(&result);
    assert!(text.starts_with("{\n  \"schema_version\": \"2.0\",\n  \"run_id\": \"r-failed\",\n"));
    assert!(text.ends_with("}\n"));
    let back: RunResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, result);
}

#[test]
fn exit_codes_follow_the_project_table() {
    let ws = tempfile::tempdir().unwrap();
    let mut m = sample_metadata("r", ws.path());
    assert_eq!(exit_code_for(&m), 1, "RUNNING is never final");
    let cases = [
        (ErrorType::MaxIterationsReached, 1),
        (ErrorType::Interrupted, 130),
        (ErrorType::EngineError, 130),
    ];
    for (error_type, code) in cases {
        m.interrupt(ErrorInfo::new(error_type.clone(), "m"), at(END));
        assert_eq!(exit_code_for(&m), code, "INTERRUPTED {error_type}");
    }
    m.fail(ErrorInfo::new(ErrorType::LlmError, "m"), at(END));
    assert_eq!(exit_code_for(&m), 1);
    m.fail(ErrorInfo::new(ErrorType::ConfigError, "m"), at(END));
    assert_eq!(exit_code_for(&m), 126);
    m.wait_for_input(at(END));
    assert_eq!(exit_code_for(&m), 101);
    m.complete(serde_json::json!("ok"), at(END));
    assert_eq!(exit_code_for(&m), 0);
    assert_eq!(completed(ws.path(), serde_json::json!(1)).exit_code(), 0);
    assert_eq!(failed(ws.path()).exit_code(), 1);
}

#[test]
fn durations_for_humans() {
    let cases = [
        (0, "0ms"),
        (850, "850ms"),
        (1000, "1s"),
        (45_999, "45s"),
        (150_000, "2m 30s"),
        (3_600_000, "1h 0m 0s"),
        (3_905_000, "1h 5m 5s"),
    ];
    for (ms, text) in cases {
        assert_eq!(format_duration(ms), text);
    }
}

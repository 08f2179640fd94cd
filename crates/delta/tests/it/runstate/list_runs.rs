//! `list-runs`: ordering, filters, unreadable runs, renderings, schema.

use std::path::Path;

use delta_engine::output::{
    ListedStatus, RunFilter, RunListing, format_age, list_runs, render_runs_json, render_runs_raw,
    render_runs_text,
};
use delta_engine::run::{ErrorInfo, ErrorType, RunStatus, create_run, write_metadata};
use delta_engine::secrets::Redactor;

use crate::runstate::support::{at, run_id, sample_metadata, schema_errors};

/// Writes a run `id` whose metadata was last updated at `updated` in `status`.
fn run(ws: &Path, id: &str, status: RunStatus, updated: &str, task: &str) {
    let paths = create_run(ws, &run_id(id)).unwrap();
    let mut m = sample_metadata(id, ws);
    m.task = task.to_owned();
    m.iterations = 3;
    let now = at(updated);
    match status {
        RunStatus::Running => m.touch(now),
        RunStatus::WaitingForInput => m.wait_for_input(now),
        RunStatus::Completed => m.complete(serde_json::json!("ok"), now),
        RunStatus::Failed => m.fail(ErrorInfo::new(ErrorType::LlmError, "m"), now),
        RunStatus::Interrupted => m.interrupt(ErrorInfo::new(ErrorType::Interrupted, "m"), now),
    }
    write_metadata(&paths.metadata(), &m, &Redactor::default()).unwrap();
}

fn set_mtime(path: &Path, time: &str) {
    let time: std::time::SystemTime = at(time).as_datetime().into();
    std::fs::File::open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

fn fixture() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let p = ws.path();
    run(
        p,
        "20251014_0430_aaaa",
        RunStatus::Interrupted,
        "2025-10-14T10:28:00Z",
        "Analyze data",
    );
    run(
        p,
        "20251014_0435_bbbb",
        RunStatus::WaitingForInput,
        "2025-10-14T10:29:00Z",
        "Process report\nwith details",
    );
    run(
        p,
        "20251014_0440_cccc",
        RunStatus::Failed,
        "2025-10-14T10:29:30Z",
        "Generate chart",
    );
    run(
        p,
        "20251014_0445_dddd",
        RunStatus::Running,
        "2025-10-14T10:29:50Z",
        &"x".repeat(80),
    );
    run(
        p,
        "20251014_0400_eeee",
        RunStatus::Completed,
        "2025-10-13T10:00:00Z",
        "Old work",
    );
    // A run whose metadata is damaged, and one whose metadata was never written.
    // Their files' modification times stand in for `updated_at`; pin them.
    let broken = create_run(p, &run_id("broken")).unwrap();
    std::fs::write(broken.metadata(), "{not json").unwrap();
    set_mtime(&broken.metadata(), "2025-10-14T10:29:40Z");
    let empty = create_run(p, &run_id("empty")).unwrap();
    set_mtime(empty.dir(), "2025-10-10T00:00:00Z");
    // Not runs: the VERSION file and dot entries.
    std::fs::write(p.join(".delta/VERSION"), "1.10\n").unwrap();
    std::fs::create_dir(p.join(".delta/.tmp")).unwrap();
    ws
}

fn ids(runs: &[RunListing]) -> Vec<&str> {
    runs.iter().map(|r| r.run_id.as_str()).collect()
}

#[test]
fn runs_are_listed_most_recently_updated_first_with_unreadable_ones_kept() {
    let ws = fixture();
    let runs = list_runs(ws.path()).unwrap();
    assert_eq!(
        ids(&runs),
        vec![
            "20251014_0445_dddd",
            "broken",
            "20251014_0440_cccc",
            "20251014_0435_bbbb",
            "20251014_0430_aaaa",
            "20251014_0400_eeee",
            "empty",
        ]
    );
    let broken = &runs[1];
    assert_eq!(broken.status, ListedStatus::Unreadable);
    assert_eq!(broken.last_updated, Some(at("2025-10-14T10:29:40Z")));
    assert_eq!(
        (
            broken.task_summary.as_ref(),
            broken.iterations,
            broken.agent.as_ref()
        ),
        (None, None, None)
    );
    let error = broken.error.as_deref().unwrap();
    assert_eq!(
        error,
        format!(
            "{}/.delta/broken/metadata.json:1:2: invalid run metadata: key must be a string; \
             the file is written only by the engine, restore it or remove the run directory",
            ws.path().display()
        )
    );
    let empty = &runs[6];
    assert_eq!(empty.last_updated, Some(at("2025-10-10T00:00:00Z")));
    assert!(empty.error.as_deref().unwrap().ends_with(
        "/.delta/empty/metadata.json does not exist; the run's metadata was never written or was removed"
    ));

    let bbbb = &runs[3];
    assert_eq!(bbbb.status, ListedStatus::WaitingForInput);
    assert_eq!(bbbb.task_summary.as_deref(), Some("Process report"));
    assert_eq!(bbbb.iterations, Some(3));
    assert_eq!(bbbb.agent.as_deref(), Some("analyst"));
    assert_eq!(bbbb.last_updated, Some(at("2025-10-14T10:29:00Z")));
    let long = runs[0].task_summary.as_deref().unwrap();
    assert_eq!(long.chars().count(), 60);
    assert!(long.ends_with("x…"));
}

#[test]
fn filters_select_resumable_runs_or_one_status() {
    let ws = fixture();
    let runs = list_runs(ws.path()).unwrap();
    let pick = |filter: RunFilter| -> Vec<&str> {
        runs.iter()
            .filter(|r| filter.matches(r))
            .map(|r| r.run_id.as_str())
            .collect()
    };
    assert_eq!(pick(RunFilter::default()).len(), 7);
    assert_eq!(
        pick(RunFilter {
            resumable: true,
            status: None
        }),
        vec![
            "20251014_0440_cccc",
            "20251014_0435_bbbb",
            "20251014_0430_aaaa",
            "20251014_0400_eeee"
        ]
    );
    assert_eq!(
        pick(RunFilter {
            resumable: false,
            status: Some(RunStatus::Running)
        }),
        vec!["20251014_0445_dddd"]
    );
    assert_eq!(
        pick(RunFilter {
            resumable: true,
            status: Some(RunStatus::Running)
        }),
        Vec::<&str>::new()
    );
}

#[test]
fn text_listing_has_aligned_columns_and_relative_ages() {
    let ws = fixture();
    let runs: Vec<RunListing> = list_runs(ws.path())
        .unwrap()
        .into_iter()
        .filter(|r| {
            RunFilter {
                resumable: true,
                status: None,
            }
            .matches(r)
        })
        .collect();
    let now = at("2025-10-14T10:30:00Z").as_datetime();
    assert_eq!(
        render_runs_text(&runs, now),
        "20251014_0440_cccc  FAILED             \"Generate chart\"  30s ago\n\
         20251014_0435_bbbb  WAITING_FOR_INPUT  \"Process report\"  1m ago\n\
         20251014_0430_aaaa  INTERRUPTED        \"Analyze data\"    2m ago\n\
         20251014_0400_eeee  COMPLETED          \"Old work\"        1d ago\n"
    );
    assert_eq!(render_runs_text(&[], now), "");
}

#[test]
fn text_listing_shows_why_a_run_is_unreadable() {
    let ws = fixture();
    let runs = list_runs(ws.path()).unwrap();
    let now = at("2025-10-14T10:30:00Z").as_datetime();
    let expected = format!(
        "20251014_0445_dddd  RUNNING     \"{x}…\"  10s ago\n\
         broken              UNREADABLE  -{pad}  20s ago  {error}\n\
         20251014_0440_cccc  FAILED      \"Generate chart\"{pad2}  30s ago\n",
        x = "x".repeat(59),
        pad = " ".repeat(61),
        pad2 = " ".repeat(46),
        error = runs[1].error.as_deref().unwrap(),
    );
    assert_eq!(render_runs_text(&runs[..3], now), expected);
}

#[test]
fn json_listing_validates_against_its_schema() {
    let ws = fixture();
    let runs = list_runs(ws.path()).unwrap();
    let text = render_runs_json(&runs);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        schema_errors("list-runs.schema.json", &json),
        Vec::<String>::new()
    );
    assert_eq!(
        json[3],
        serde_json::json!({
            "run_id": "20251014_0435_bbbb",
            "status": "WAITING_FOR_INPUT",
            "task_summary": "Process report",
            "last_updated": "2025-10-14T10:29:00.000Z",
            "iterations": 3,
            "agent": "analyst"
        })
    );
    assert_eq!(json[1]["status"], "UNREADABLE");
    assert_eq!(json[1]["task_summary"], serde_json::Value::Null);
    assert!(json[1]["error"].is_string());
    assert_eq!(render_runs_json(&[]), "[]\n");
}

#[test]
fn raw_listing_is_one_id_per_line() {
    let ws = fixture();
    let runs = list_runs(ws.path()).unwrap();
    let raw = render_runs_raw(&runs[..3]);
    assert_eq!(raw, "20251014_0445_dddd\nbroken\n20251014_0440_cccc\n");
}

#[test]
fn a_workspace_without_runs_lists_nothing_and_a_missing_one_is_an_error() {
    let ws = tempfile::tempdir().unwrap();
    assert_eq!(list_runs(ws.path()).unwrap(), Vec::new());
    let missing = ws.path().join("nope");
    assert_eq!(
        list_runs(&missing).unwrap_err().to_string(),
        format!(
            "workspace {} does not exist; pass an existing workspace with -w",
            missing.display()
        )
    );
}

#[test]
fn ages_for_humans() {
    let now = at("2025-10-14T10:30:00Z").as_datetime();
    let cases = [
        ("2025-10-14T10:30:00Z", "0s ago"),
        ("2025-10-14T10:30:05Z", "0s ago"), // clock skew: never negative
        ("2025-10-14T10:29:30Z", "30s ago"),
        ("2025-10-14T10:28:00Z", "2m ago"),
        ("2025-10-14T05:30:00Z", "5h ago"),
        ("2025-10-11T10:30:00Z", "3d ago"),
    ];
    for (then, text) in cases {
        assert_eq!(format_age(now, at(then)), text, "{then}");
    }
}

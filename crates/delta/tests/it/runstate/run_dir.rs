//! Run ids and the run directory: validation, generation, layout, atomic creation.

use std::sync::{Arc, Barrier};

use delta_engine::run::{RunId, RunPaths, RunStateError, create_run, open_run};
use rstest::rstest;

use crate::runstate::support::run_id;

#[rstest]
#[case("a")]
#[case("A1")]
#[case("3f2b8c1e-9d4a-4e6b-8f0a-1c2d3e4f5a6b")]
#[case("20251014_043012_a1b2c3")]
#[case("run.1_x-y")]
#[case("x..y")]
#[case(&"a".repeat(128))]
fn valid_run_ids(#[case] id: &str) {
    assert_eq!(RunId::parse(id).unwrap().as_str(), id);
}

#[rstest]
#[case("", "it is empty")]
#[case("../x", "it starts with '.'")]
#[case("..", "it starts with '.'")]
#[case(".hidden", "it starts with '.'")]
#[case("a/b", "it contains '/'")]
#[case("/abs", "it starts with '/'")]
#[case("-rf", "it starts with '-'")]
#[case("_x", "it starts with '_'")]
#[case("a b", "it contains ' '")]
#[case("a\nb", "it contains '\\n'")]
#[case("a\\b", "it contains '\\\\'")]
#[case("café", "it contains 'é'")]
#[case(&"a".repeat(129), "it is 129 characters long (at most 128)")]
#[case(
    "VERSION",
    "it is reserved: .delta/VERSION is the workspace's layout version file"
)]
#[case(
    "Version",
    "it is reserved: .delta/VERSION is the workspace's layout version file"
)]
#[case(
    "LATEST",
    "it is reserved: .delta/LATEST is the last-run pointer of the v1.x layout"
)]
#[case(
    "runs",
    "it is reserved: .delta/runs/ holds the runs of the v1.x layout"
)]
fn invalid_run_ids(#[case] id: &str, #[case] reason: &str) {
    let error = RunId::parse(id).unwrap_err();
    assert_eq!(error.reason, reason);
    assert_eq!(
        error.to_string(),
        format!(
            "invalid run id {id:?}: {reason}; a run id is 1 to 128 characters from A-Z a-z 0-9 \
             . _ - and starts with a letter or digit (for example a UUID, or \
             20251014_043012_a1b2c3)"
        )
    );
}

#[test]
fn the_files_of_the_delta_directory_are_not_run_ids() {
    let error = RunId::parse(delta_engine::workspace::VERSION_FILE).unwrap_err();
    assert!(error.reason.starts_with("it is reserved"), "{error}");
    // Only whole names: ids that merely contain them are fine.
    for id in ["VERSION2", "runs-1", "LATEST.x", "my-version"] {
        RunId::parse(id).unwrap();
    }
}

#[test]
fn generated_ids_are_utc_time_plus_six_hex_digits() {
    let now = chrono::DateTime::parse_from_rfc3339("2025-10-14T04:30:12.999Z")
        .unwrap()
        .to_utc();
    let id = RunId::generate(now);
    let text = id.as_str();
    assert_eq!(text.len(), 22, "{text}");
    assert!(text.starts_with("20251014_043012_"), "{text}");
    assert!(
        text[16..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_eq!(RunId::parse(text).unwrap(), id);
    // Ids of one second differ in the random part (collisions are caught by mkdir).
    let distinct: std::collections::HashSet<String> =
        (0..50).map(|_| RunId::generate(now).to_string()).collect();
    assert!(distinct.len() > 45);
}

#[test]
fn run_ids_deserialize_only_when_valid() {
    assert!(serde_json::from_str::<RunId>("\"ok-1\"").is_ok());
    let error = serde_json::from_str::<RunId>("\"../etc\"").unwrap_err();
    assert!(
        error.to_string().starts_with("invalid run id \"../etc\""),
        "{error}"
    );
}

#[test]
fn run_paths_follow_the_documented_layout() {
    let paths = RunPaths::new(std::path::Path::new("/ws"), &run_id("r1"));
    let cases = [
        (paths.dir().to_path_buf(), "/ws/.delta/r1"),
        (paths.journal(), "/ws/.delta/r1/journal.jsonl"),
        (paths.metadata(), "/ws/.delta/r1/metadata.json"),
        (paths.engine_log(), "/ws/.delta/r1/engine.log"),
        (paths.lock(), "/ws/.delta/r1/run.lock"),
        (
            paths.invocation_request("i1"),
            "/ws/.delta/r1/io/invocations/i1/request.json",
        ),
        (
            paths.invocation_response("i1"),
            "/ws/.delta/r1/io/invocations/i1/response.json",
        ),
        (
            paths.invocation_metadata("i1"),
            "/ws/.delta/r1/io/invocations/i1/metadata.json",
        ),
        (
            paths.tool_command("a1"),
            "/ws/.delta/r1/io/tool_executions/a1/command.txt",
        ),
        (
            paths.tool_stdout("a1"),
            "/ws/.delta/r1/io/tool_executions/a1/stdout.log",
        ),
        (
            paths.tool_stderr("a1"),
            "/ws/.delta/r1/io/tool_executions/a1/stderr.log",
        ),
        (
            paths.tool_exit_code("a1"),
            "/ws/.delta/r1/io/tool_executions/a1/exit_code.txt",
        ),
        (
            paths.tool_duration_ms("a1"),
            "/ws/.delta/r1/io/tool_executions/a1/duration_ms.txt",
        ),
        (
            paths.hook_dir(5, "pre_llm_request"),
            "/ws/.delta/r1/io/hooks/005_pre_llm_request",
        ),
        (
            paths.interaction_request(),
            "/ws/.delta/r1/interaction/request.json",
        ),
        (
            paths.interaction_response(),
            "/ws/.delta/r1/interaction/response.txt",
        ),
    ];
    for (actual, expected) in cases {
        assert_eq!(actual.to_str().unwrap(), expected);
    }
    assert_eq!(
        RunPaths::hook_io_path_ref(12, "on_error"),
        "io/hooks/012_on_error/"
    );
}

#[test]
fn create_run_makes_the_directory_tree_once() {
    let ws = tempfile::tempdir().unwrap();
    let id = run_id("run-1");
    let paths = create_run(ws.path(), &id).unwrap();
    assert!(paths.dir().is_dir());
    for dir in [
        paths.invocations_dir(),
        paths.tool_executions_dir(),
        paths.hooks_dir(),
    ] {
        assert!(dir.is_dir(), "{}", dir.display());
    }
    assert!(
        !paths.interaction_dir().exists(),
        "created only when ask_human waits"
    );
    std::fs::write(paths.journal(), "keep me\n").unwrap();

    let error = create_run(ws.path(), &id).unwrap_err();
    assert!(matches!(error, RunStateError::RunExists { .. }));
    assert_eq!(
        error.to_string(),
        format!("run run-1 already exists in {}", ws.path().display())
    );
    assert_eq!(
        std::fs::read_to_string(paths.journal()).unwrap(),
        "keep me\n"
    );
    assert_eq!(open_run(ws.path(), &id).unwrap(), paths);
}

#[test]
fn twenty_threads_racing_for_one_id_exactly_one_wins() {
    let ws = tempfile::tempdir().unwrap();
    let barrier = Arc::new(Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let root = ws.path().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                create_run(&root, &run_id("contested"))
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let wins = results.iter().filter(|r| r.is_ok()).count();
    let exists = results
        .iter()
        .filter(|r| matches!(r, Err(RunStateError::RunExists { .. })))
        .count();
    assert_eq!((wins, exists), (1, 19));
}

#[test]
fn open_run_reports_a_missing_run() {
    let ws = tempfile::tempdir().unwrap();
    let error = open_run(ws.path(), &run_id("ghost")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "no run ghost in {ws}; list the runs there with `delta list-runs -w {ws}`",
            ws = ws.path().display()
        )
    );
}

#[test]
fn create_run_needs_an_existing_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let missing = ws.path().join("nope");
    let error = create_run(&missing, &run_id("r")).unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "failed to create directory `{}/.delta`: ",
            missing.display()
        )),
        "{error}"
    );
}

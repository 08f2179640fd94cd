//! The whole suite against the workspace's `delta`: every check of every scenario passes,
//! and a second run gives the same report (durations aside).

use super::support::{all_scenarios, quoted, real_run, run_suite, run_suite_with, sibling};

/// The runs go one after the other: running them at once doubled the load on the
/// timing-sensitive scenarios (signals after a delay, exec timeouts), and a determinism
/// check must not be the thing that makes results differ.
#[test]
fn the_built_delta_passes_every_scenario_twice_with_identical_results() {
    let delta = quoted(&sibling("delta"));
    let first = real_run();
    let second = run_suite(&delta, &[]);
    assert!(
        first.with_status("FAIL").is_empty() && first.with_status("SKIP").is_empty(),
        "failing scenarios:\n{}",
        first.all_failures()
    );
    assert_eq!(first.code, Some(0));
    assert_eq!(
        first.statuses.keys().cloned().collect::<Vec<_>>(),
        all_scenarios(),
        "every scenario is run"
    );
    assert_eq!(first.statuses, second.statuses, "{}", second.all_failures());
    // Every level passes, and the reports agree check by check.
    for level in ["spec", "recommended", "extension"] {
        let counts = &first.report["by_level"][level];
        assert_eq!(counts["failed"], 0, "{level}");
        assert_eq!(counts["blocked"], 0, "{level}");
        assert!(counts["passed"].as_u64().unwrap() > 0, "{level}");
    }
    let without_timing = |report: &serde_json::Value| {
        let mut report = report.clone();
        report.as_object_mut().unwrap().remove("duration_ms");
        for scenario in report["scenarios"].as_array_mut().unwrap() {
            scenario.as_object_mut().unwrap().remove("duration_ms");
        }
        report
    };
    assert_eq!(
        without_timing(&first.report),
        without_timing(&second.report)
    );
}

/// With `CARGO_TARGET_DIR` inside another checkout, the runner's own upward search finds
/// that checkout's fixtures/ and schemas/ first. The tests pass this checkout's
/// explicitly; here a copy of the runner sits in a decoy tree whose fixtures and schemas
/// would break the run if they were used.
#[test]
fn the_suite_uses_this_checkouts_fixtures_wherever_the_runner_is_built() {
    let decoy = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(decoy.path().join("fixtures/scenarios")).unwrap();
    std::fs::write(
        decoy.path().join("fixtures/scenarios/decoy.yaml"),
        "not: a scenario\n",
    )
    .unwrap();
    std::fs::create_dir_all(decoy.path().join("schemas")).unwrap();
    std::fs::write(
        decoy.path().join("schemas/metadata.schema.json"),
        "{\"not\": {}}",
    )
    .unwrap();
    let bin = decoy.path().join("target/debug");
    std::fs::create_dir_all(&bin).unwrap();
    let runner = bin.join("delta-conformance");
    // A copy, not a symlink: the runner searches from its resolved executable path.
    std::fs::copy(super::support::runner(), &runner).unwrap();

    let scenario = "run-completes-on-final-message";
    let delta = quoted(&sibling("delta"));
    let run = run_suite_with(&runner, &delta, &["--filter", scenario]);
    assert_eq!(
        run.statuses,
        [(scenario.to_owned(), "PASS".to_owned())].into(),
        "{}",
        run.all_failures()
    );
}

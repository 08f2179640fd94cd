//! The whole suite against the workspace's `delta`: every scenario passes, and a second
//! run gives the same per-scenario results.

use super::support::{all_scenarios, quoted, run_suite, sibling};

/// Both runs go at once: they share nothing (each scenario has its own directory and
/// mock-llm), and most of their time is the engine's retry backoff in `llm-unreachable-fails`.
#[test]
fn the_built_delta_passes_every_scenario_twice_with_identical_results() {
    let delta = quoted(&sibling("delta"));
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| run_suite(&delta, &[]));
        let second = scope.spawn(|| run_suite(&delta, &[]));
        (first.join().unwrap(), second.join().unwrap())
    });
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
}

//! The whole suite against the workspace's `delta`: every scenario passes, and a second
//! run gives the same per-scenario results.

use super::support::{all_scenarios, quoted, run_suite, sibling};

#[test]
fn the_built_delta_passes_every_scenario_twice_with_identical_results() {
    let delta = quoted(&sibling("delta"));
    let first = run_suite(&delta);
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
    let second = run_suite(&delta);
    assert_eq!(first.statuses, second.statuses, "{}", second.all_failures());
}

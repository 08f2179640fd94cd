//! `delta eval` (issue 26): Harbor-format task sets run as verified trials in containers,
//! locally and on the Slurm cluster, resumable; the report's statistics and the
//! comparison of two evals against values worked by hand.

mod errors;
mod examples;
mod policy;
mod report;
mod resume;
mod slurm;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::harness::{ROOT, Test};

/// The example task set, absolute.
fn examples() -> String {
    format!("{ROOT}/examples/tasks")
}

/// `delta eval run TASKS --out out ARGS…` in `test`.
fn eval_run(test: Test, tasks: &str, args: &[&str]) -> Test {
    test.args(["eval", "run", tasks, "--out", "out"])
        .args(args.iter().copied())
}

/// The lines of `out/results.jsonl`.
fn results(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Each task's (status, reward or error class), from single-attempt results.
fn statuses(results: &[Value]) -> BTreeMap<String, (String, String)> {
    results
        .iter()
        .map(|r| {
            let outcome = match (&r["reward"], &r["error"]) {
                (Value::Number(reward), _) => reward.to_string().trim_end_matches(".0").to_owned(),
                (_, error) => error["class"].as_str().unwrap_or_default().to_owned(),
            };
            (
                r["task"].as_str().expect("task").to_owned(),
                (r["status"].as_str().expect("status").to_owned(), outcome),
            )
        })
        .collect()
}

/// Fails, naming the fix, when podman or the offline base image is missing: the tests
/// need the real components tests/setup.sh installs (never skipped).
fn container_ready() {
    let image = Command::new("podman")
        .args(["image", "exists", "localhost/delta-busybox:latest"])
        .status();
    crate::support::component::require(
        "podman with the image localhost/delta-busybox:latest (the eval tests)",
        image.is_ok_and(|s| s.success()),
    );
}

/// No container of the eval in `out` is left (each is labelled with its workspace).
fn no_containers_of(out: &Path) {
    let output = Command::new("podman")
        .args(["ps", "-a", "--format", "{{.Labels}}"])
        .output()
        .expect("podman ps");
    let listing = String::from_utf8_lossy(&output.stdout);
    let out = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    assert!(
        !listing.contains(&out.display().to_string()),
        "containers of {} left: {listing}",
        out.display()
    );
}

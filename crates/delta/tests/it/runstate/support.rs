//! Shared fixtures: sample metadata, child processes, schema validation.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use delta_engine::run::{Metadata, MetadataInit, ProcessIdentity, RunId, Timestamp};

/// A fixed time, so renderings and files are reproducible.
pub fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

pub fn run_id(id: &str) -> RunId {
    RunId::parse(id).unwrap()
}

/// A fixed identity (not this process), so serialized metadata is reproducible.
pub fn fake_identity() -> ProcessIdentity {
    ProcessIdentity {
        pid: 4242,
        hostname: "host-a".to_owned(),
        process_name: "delta".to_owned(),
        start_ticks: Some(123_456),
    }
}

/// RUNNING metadata of run `id` in `workspace`, created at 2025-10-14T10:30:00Z.
pub fn sample_metadata(id: &str, workspace: &Path) -> Metadata {
    Metadata::new(
        MetadataInit {
            run_id: run_id(id),
            agent_name: "analyst".to_owned(),
            agent_home: PathBuf::from("/agents/analyst"),
            work_dir: workspace.to_path_buf(),
            workspace_id: Some("W001".to_owned()),
            task: "Analyze data.csv\nand write report.md".to_owned(),
            max_iterations: 30,
        },
        &fake_identity(),
        at("2025-10-14T10:30:00.000Z"),
    )
}

/// Runs this test binary as a child that executes `child::child_entry` in `role`.
pub fn spawn_child(role: &str, args: &[&str]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "runstate::child::child_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RUNSTATE_CHILD", role)
        .env("RUNSTATE_CHILD_ARGS", args.join("\u{1f}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Reads the child's stdout until a line ending in `marker` appears.
pub fn wait_for_line(child: &mut Child, marker: &str) {
    use std::io::BufRead;
    let stdout = child.stdout.as_mut().unwrap();
    let mut reader = std::io::BufReader::new(stdout);
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).unwrap();
        assert!(n > 0, "child exited before printing {marker:?}");
        // libtest prints "test child::child_entry ... " before the test's own output.
        if line.trim_end().ends_with(marker) {
            return;
        }
    }
}

/// The generated schema named `name` (e.g. `run-result.schema.json`).
pub fn schema(name: &str) -> serde_json::Value {
    delta_engine::schema::all()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no schema {name}"))
}

/// The validation errors of `instance` against schema `name`, as strings.
pub fn schema_errors(name: &str, instance: &serde_json::Value) -> Vec<String> {
    let schema = schema(name);
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

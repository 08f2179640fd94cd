//! Run files that are not what they should be: the engine refuses to read a journal or a
//! metadata.json that is not a regular file, instead of reading it forever.

use std::path::Path;
use std::process::Command;

use delta_engine::run::{RunStatus, read_metadata, write_metadata};
use delta_engine::secrets::Redactor;

use crate::resume::fixture::{Fixture, dead_identity};

/// Gives the fixture's run a real agent directory, so that `delta continue` can load it.
pub(crate) fn with_real_agent(f: &Fixture) {
    let agent = f.workspace().join("agent");
    std::fs::create_dir(&agent).unwrap();
    std::fs::write(
        agent.join("agent.yaml"),
        "name: bot\nllm: { model: m }\ntools: []\n",
    )
    .unwrap();
    std::fs::write(agent.join("system_prompt.md"), "Test.\n").unwrap();
    std::fs::write(agent.join("context.yaml"), "sources:\n  - type: journal\n").unwrap();
    let mut metadata = read_metadata(&f.paths.metadata()).unwrap();
    metadata.agent_home = agent;
    write_metadata(&f.paths.metadata(), &metadata, &Redactor::default()).unwrap();
}

/// `delta ARGS` under a 2 GiB address-space limit, so that a reader without a bound dies
/// of an allocation failure here instead of exhausting the machine.
pub(crate) fn delta_bounded(workspace: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_delta"))
        .args(args)
        .current_dir(workspace)
        .env_remove("DELTA_API_KEY")
        .env("DELTA_BASE_URL", "http://127.0.0.1:9/v1")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

// Regression for issue 12 item 5: a journal that is a symlink to /dev/zero was read
// without limit until the kernel killed the process.
#[test]
fn a_journal_linked_to_dev_zero_is_refused_not_read_forever() {
    let f = Fixture::new("zero-1", RunStatus::Interrupted, &dead_identity());
    with_real_agent(&f);
    let journal = f.paths.journal();
    std::fs::remove_file(&journal).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &journal).unwrap();
    let ws = f.workspace().to_str().unwrap().to_owned();
    let (code, _, stderr) = delta_bounded(
        f.workspace(),
        &["continue", "--run-id", "zero-1", "-w", &ws],
    );
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("journal.jsonl"), "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}

// Regression for issue 12 item 5: the same for metadata.json, which list-runs reads.
#[test]
fn metadata_linked_to_dev_zero_is_listed_as_unreadable() {
    let f = Fixture::new("zero-2", RunStatus::Interrupted, &dead_identity());
    let metadata = f.paths.metadata();
    std::fs::remove_file(&metadata).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &metadata).unwrap();
    let ws = f.workspace().to_str().unwrap().to_owned();
    let (code, stdout, stderr) = delta_bounded(f.workspace(), &["list-runs", "-w", &ws]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("zero-2"), "{stdout}");
    assert!(
        format!("{stdout}{stderr}").contains("not a regular file"),
        "{stdout}\n{stderr}"
    );
}

// Regression for issue 12 item 3: killed after the final answer was journaled but before
// metadata said COMPLETED, `delta continue` marked the run COMPLETED and exited 2
// ("provide -m"). Finishing the interrupted finish is success, with the result.
#[test]
fn continuing_an_interrupted_finish_exits_0_with_the_result() {
    let f = Fixture::new("finish-1", RunStatus::Running, &dead_identity());
    with_real_agent(&f);
    f.append(vec![delta_engine::journal::EventPayload::Thought(
        delta_engine::journal::Thought {
            content: "{\"total\": 3}".to_owned(),
            llm_invocation_ref: "inv-9".to_owned(),
            tool_calls: vec![],
            reasoning: None,
            passback: None,
            usage: None,
        },
    )]);
    let ws = f.workspace().to_str().unwrap().to_owned();
    let (code, stdout, stderr) = delta_bounded(
        f.workspace(),
        &[
            "continue", "--run-id", "finish-1", "-w", &ws, "--format", "raw",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "{\"total\":3}", "{stderr}");
    assert!(stderr.contains("[Janitor]"), "{stderr}");
    assert_eq!(f.metadata().status, RunStatus::Completed);
}

/// The run directory a `delta run` killed during creation leaves: `run.lock` and a
/// temporary metadata file, nothing else.
fn abandoned_creation(workspace: &Path, id: &str) -> std::path::PathBuf {
    let dir = workspace.join(".delta").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run.lock"), "").unwrap();
    std::fs::write(dir.join(".metadata.json.tmp.4242.0badf00d"), "{\"run_id\":").unwrap();
    dir
}

// Regression for issue 12 item 2: kill -9 during creation (after run.lock, before
// metadata.json) left the id unusable: continue exited 1 either way, run with the same id
// exited 1, a .metadata.json.tmp.* stayed behind, and list-runs called runs being created
// by others UNREADABLE.
#[test]
fn a_run_killed_while_being_created_can_be_started_again() {
    let mock = crate::resume::support::mock("steps:\n  - message: {content: \"done\"}\n");
    let test = crate::resume::support::recorder();
    let ws = test.path().join("ws");
    let dir = abandoned_creation(&ws, "made-1");

    // Being created by a live process: not listed at all.
    let held = delta_engine::run::RunLock::try_acquire(&dir.join("run.lock")).unwrap();
    let (code, stdout, stderr) = delta_bounded(&ws, &["list-runs", "-w", ws.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("made-1"), "{stdout}");
    drop(held);

    // Its creator is dead: continue says so and frees the id.
    let (code, _, stderr) = delta_bounded(
        &ws,
        &[
            "continue",
            "--run-id",
            "made-1",
            "-w",
            ws.to_str().unwrap(),
            "-m",
            "go",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("Run made-1 was never started"), "{stderr}");
    assert!(!dir.exists());

    // And `delta run` with the same id takes an abandoned directory over.
    abandoned_creation(&ws, "made-1");
    let run = crate::resume::support::delta(test, &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "made-1", "-m", "go",
        ])
        .run()
        .code(0);
    let names: Vec<String> = std::fs::read_dir(run.path().join("ws/.delta/made-1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".tmp.")), "{names:?}");
    assert!(names.contains(&"metadata.json".to_owned()), "{names:?}");
}

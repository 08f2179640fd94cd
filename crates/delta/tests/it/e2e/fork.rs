//! `delta fork` (issue 17): a run branched at each valid boundary continues correctly, the
//! parent's files stay byte-identical, an invalid `--at` names the valid ones, and forks
//! of forks record their chain; `--work-dir-from` seeds a fresh workspace for the fork.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, run_files, runs_in};

const AGENT: &str = r#"
name: forking
llm:
  model: gpt-4o-mini
tools:
  - name: note
    description: Appends a line to notes.txt.
    shell: "echo ${text} >> notes.txt"
"#;

/// Four `note` calls, then a final answer: a 5-iteration run.
const FIVE_ITERATIONS: &str = r#"
steps:
  - message:
      content: "Noting."
      tool_calls: [{name: note, arguments: {text: "one more"}}]
      repeat: 4
  - message:
      content: "done"
"#;

const FORKED_ANSWER: &str = "steps:\n  - message:\n      content: \"forked\"\n";

/// Every file under `dir`, relative path → bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in fs::read_dir(&current).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path
                    .strip_prefix(dir)
                    .expect("prefix")
                    .display()
                    .to_string();
                files.insert(name, fs::read(&path).expect("read file"));
            }
        }
    }
    files
}

/// The parent: a completed 5-iteration run `parent` in `ws`.
fn parent() -> (Test, mock_llm::MockServer) {
    let mock = mock(FIVE_ITERATIONS);
    let run = delta(Test::new().agent("agent", AGENT), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "note four times",
            "--run-id",
            "parent",
        ])
        .run()
        .code(0);
    (run.then(), mock)
}

fn fork(test: Test, mock: &mock_llm::MockServer, args: &[&str]) -> crate::support::harness::Run {
    delta(test, mock)
        .args(["fork", "--run-id"])
        .args(args.iter().copied())
        .args(["-w", "ws"])
        .run()
}

#[test]
fn a_fork_at_each_valid_boundary_continues_and_the_parent_is_untouched() {
    let (test, _parent_mock) = parent();
    let workspace = test.path().join("ws");
    let parent_dir = workspace.join(".delta/parent");
    let before = tree(&parent_dir);
    let parent_journal = run_files(&workspace, "parent").journal();
    // RUN_START (the task), then per note call THOUGHT, ACTION_REQUEST, ACTION_RESULT.
    let boundaries = [1_u64, 4, 7, 10, 13];
    let mut test = test;
    for at in boundaries {
        let id = format!("fork-{at}");
        let answer = mock(FORKED_ANSWER);
        let run = fork(
            test,
            &answer,
            &["parent", "--at", &at.to_string(), "--new-run-id", &id],
        )
        .code(0);
        assert!(
            run.stderr()
                .contains(&format!("Forked run {id} from parent at seq {at}"))
        );
        let files = run_files(&workspace, &id);
        assert_consistent(&files, "COMPLETED");
        let metadata = files.metadata();
        assert_eq!(metadata["parent"], json!({"run_id": "parent", "seq": at}));
        assert_eq!(metadata["result"], "forked");
        let journal = files.journal();
        let kept = usize::try_from(at).expect("small");
        for (mine, theirs) in journal.iter().zip(&parent_journal).take(kept).skip(1) {
            assert_eq!(mine, theirs);
        }
        assert_eq!(journal[0]["payload"]["run_id"], id);
        // The model saw exactly the kept conversation: one tool answer per kept call.
        let request: Value = files.requests().pop().expect("one call");
        let tool_messages = request["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter(|m| m["role"] == "tool")
            .count();
        assert_eq!(tool_messages, (kept - 1) / 3);
        test = run.then();
    }
    assert_eq!(tree(&parent_dir), before, "the parent's files changed");
}

#[test]
fn an_invalid_at_exits_2_naming_the_valid_boundaries() {
    let (test, mock) = parent();
    let run = fork(test, &mock, &["parent", "--at", "9"]).code(2);
    assert!(
        run.stderr()
            .contains("valid --at values nearby: 1, 4, 7, 10, 13"),
        "{}",
        run.stderr()
    );
    assert_eq!(runs_in(&run.path().join("ws")).len(), 1, "nothing created");
}

#[test]
fn forks_of_forks_record_their_chain_and_list_runs_shows_it() {
    let (test, _parent_mock) = parent();
    let answer = mock(FORKED_ANSWER);
    let test = fork(
        test,
        &answer,
        &["parent", "--at", "4", "--new-run-id", "child"],
    )
    .code(0)
    .then();
    let answer = mock(FORKED_ANSWER);
    let run = fork(test, &answer, &["child", "--new-run-id", "grandchild"]).code(0);
    let workspace = run.path().join("ws");
    let grandchild = run_files(&workspace, "grandchild").metadata();
    // The default cut: the child's last boundary, its one tool result.
    assert_eq!(grandchild["parent"], json!({"run_id": "child", "seq": 4}));
    let child = run_files(&workspace, "child").metadata();
    assert_eq!(child["parent"], json!({"run_id": "parent", "seq": 4}));
    let listed = run
        .then()
        .args(["list-runs", "-w", "ws", "--format", "json"])
        .run()
        .code(0);
    let listed: Value = serde_json::from_str(listed.stdout()).expect("JSON");
    let parents: BTreeMap<String, Value> = listed
        .as_array()
        .expect("array")
        .iter()
        .map(|run| {
            (
                run["run_id"].as_str().expect("id").to_owned(),
                run["parent"].clone(),
            )
        })
        .collect();
    assert_eq!(parents["grandchild"], json!({"run_id": "child", "seq": 4}));
    assert_eq!(parents["child"], json!({"run_id": "parent", "seq": 4}));
    assert_eq!(parents["parent"], Value::Null);
}

#[test]
fn work_dir_from_creates_the_fork_in_a_fresh_seeded_workspace() {
    let (test, _parent_mock) = parent();
    let test = test
        .file("seed/notes.txt", "from the seed\n")
        .file("seed/.delta/stale", "not copied");
    let parent_notes = fs::read(test.path().join("ws/notes.txt")).expect("parent notes");
    let answer = mock(
        "steps:\n  - message:\n      content: \"Noting.\"\n      tool_calls: [{name: note, arguments: {text: forked}}]\n  - message: {content: forked}\n",
    );
    let run = fork(
        test,
        &answer,
        &[
            "parent",
            "--at",
            "4",
            "--new-run-id",
            "seeded",
            "--work-dir-from",
            "seed",
        ],
    )
    .code(0);
    let fresh = run.path().join("agent/workspaces/W001");
    assert!(
        run.stderr().contains(&format!(
            "Forked run seeded from parent at seq 4 in workspace {}",
            fresh.display()
        )),
        "{}",
        run.stderr()
    );
    let files = run_files(&fresh, "seeded");
    assert_consistent(&files, "COMPLETED");
    let metadata = files.metadata();
    assert_eq!(
        metadata["parent"],
        json!({"run_id": "parent", "seq": 4, "work_dir": run.path().join("ws")})
    );
    assert_eq!(metadata["workspace_id"], "W001");
    assert_eq!(metadata["work_dir"], json!(fresh));
    // The fork's tool ran in the seeded copy; the parent's workspace is untouched.
    assert_eq!(
        fs::read_to_string(fresh.join("notes.txt")).expect("fork notes"),
        "from the seed\nforked\n"
    );
    assert!(!fresh.join(".delta/stale").exists());
    assert_eq!(
        fs::read(run.path().join("ws/notes.txt")).expect("parent notes"),
        parent_notes
    );
    // The kept conversation came along: the fork's first request answers the kept call.
    let request: Value = files.requests().swap_remove(1);
    let tool_messages = request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(tool_messages, 1);
}

#[test]
fn work_dir_from_a_missing_directory_exits_2_and_creates_nothing() {
    let (test, mock) = parent();
    let run = fork(test, &mock, &["parent", "--work-dir-from", "missing"]).code(2);
    assert!(
        run.stderr()
            .contains("cannot seed a workspace from missing: it is not a directory"),
        "{}",
        run.stderr()
    );
    assert!(!run.path().join("agent/workspaces").exists());
    assert_eq!(runs_in(&run.path().join("ws")).len(), 1, "nothing created");
}

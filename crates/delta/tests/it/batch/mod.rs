//! `delta batch` (issue 15): hundreds of runs locally, resuming after kill -9 and Ctrl-C,
//! bad task files, and a Slurm array job on the real single-node cluster that
//! `tests/slurm/start-cluster.sh` starts (`.ci/run` runs it as root).

mod hostile;

use std::fs;
use std::path::Path;
use std::process::{Child, Command};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{delta, mock, wait_until};

/// Two tool calls, then the final answer; by conversation, so concurrent runs and resumed
/// runs get the same answers. `pause` slows each tool down.
fn script() -> &'static str {
    r#"
mode: by_conversation
models: [gpt-4o-mini]
steps:
  - message: {content: "First mark.", tool_calls: [{name: mark, arguments: {text: a}}]}
  - message: {content: "Second mark.", tool_calls: [{name: mark, arguments: {text: b}}]}
  - message: {content: "Marked twice."}
"#
}

/// An agent whose one tool appends to `marks.txt` of its workspace (sleeping `pause`
/// seconds first), so the runs of each task are counted.
fn agent(test: Test, pause: &str) -> Test {
    test.agent(
        "agent",
        &format!(
            "name: marker\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: mark\n    \
             description: Appends a mark.\n    shell: \"sleep {pause}; echo ${{text}} >> marks.txt\"\n"
        ),
    )
}

fn tasks(test: Test, count: usize) -> Test {
    let lines: String = (0..count)
        .map(|i| format!("{{\"id\": \"task-{i:03}\", \"message\": \"Mark twice.\"}}\n"))
        .collect();
    test.file("tasks.jsonl", &lines)
}

/// `delta batch run tasks.jsonl --agent agent --out out` and `extra`.
fn batch_run(test: Test, extra: &[&str]) -> Test {
    test.args([
        "batch",
        "run",
        "tasks.jsonl",
        "--agent",
        "agent",
        "--out",
        "out",
    ])
    .args(extra)
}

fn batch_args(test: Test, jobs: &str) -> Test {
    batch_run(test, &["--jobs", jobs])
}

/// The flags of a Slurm submission on the test cluster.
const SLURM: [&str; 3] = ["--executor", "slurm", "--slurm-arg=--partition=debug"];

fn json_lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn metadata(out: &Path, id: &str) -> Value {
    let path = out
        .join("runs")
        .join(id)
        .join(".delta")
        .join(id)
        .join("metadata.json");
    serde_json::from_str(&fs::read_to_string(&path).expect("metadata")).expect("JSON")
}

fn marks(out: &Path, id: &str) -> usize {
    fs::read_to_string(out.join("runs").join(id).join("marks.txt"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn two_hundred_tasks_complete_and_their_results_agree_with_their_runs() {
    let model = mock(script());
    let run = batch_args(delta(tasks(agent(Test::new(), "0"), 200), &model), "4")
        .run()
        .code(0);
    let out = run.path().join("out");
    let results = json_lines(&out.join("results.jsonl"));
    assert_eq!(results.len(), 200);
    let (mut input, mut output) = (0, 0);
    for result in &results {
        let id = result["id"].as_str().expect("id");
        let metadata = metadata(&out, id);
        assert_eq!(result["status"], "COMPLETED");
        assert_eq!(result["status"], metadata["status"]);
        assert_eq!(result["result"], metadata["result"]);
        assert_eq!(result["usage"], metadata["usage"]);
        assert_eq!(result["iterations"], metadata["iterations"]);
        assert_eq!(marks(&out, id), 2, "{id}");
        input += metadata["usage"]["input_tokens"].as_u64().expect("tokens");
        output += metadata["usage"]["output_tokens"].as_u64().expect("tokens");
    }
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).expect("summary"))
            .expect("JSON");
    assert_eq!(summary["tasks"], 200);
    assert_eq!(summary["by_status"]["COMPLETED"], 200);
    assert_eq!(summary["pending"], 0);
    assert_eq!(summary["input_tokens"], input);
    assert_eq!(summary["output_tokens"], output);
    let batch: Value =
        serde_json::from_str(&fs::read_to_string(out.join("batch.json")).expect("batch.json"))
            .expect("JSON");
    assert_eq!(batch["tasks"].as_array().expect("tasks").len(), 200);
    assert_eq!(batch["tasks_sha256"].as_str().expect("hash").len(), 64);

    // Status reads the same directory, and the JSON agrees with the summary.
    let status = run
        .then()
        .args(["batch", "status", "out", "--format", "json"])
        .run()
        .code(0);
    let status: Value = serde_json::from_str(status.stdout()).expect("JSON");
    assert_eq!(status["summary"], summary);
    assert_eq!(status["tasks"].as_array().expect("rows").len(), 200);
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(i32::try_from(pid).expect("pid")), signal).expect("signal");
}

fn finished(out: &Path) -> usize {
    json_lines(&out.join("results.jsonl")).len()
}

/// Every task COMPLETED, each tool run at most once per call (two marks at most), and a
/// task COMPLETED before `before` (its metadata's `updated_at`) not run again.
#[track_caller]
fn assert_finished_once(out: &Path, count: usize, before: &[(String, Value)]) {
    for i in 0..count {
        let id = format!("task-{i:03}");
        assert_eq!(metadata(out, &id)["status"], "COMPLETED", "{id}");
        assert!(marks(out, &id) <= 2, "{id}: a tool ran twice");
    }
    for (id, updated) in before {
        assert_eq!(&metadata(out, id)["updated_at"], updated, "{id} ran again");
    }
}

fn completed_so_far(out: &Path, count: usize) -> Vec<(String, Value)> {
    (0..count)
        .map(|i| format!("task-{i:03}"))
        .filter_map(|id| {
            let path = out
                .join("runs")
                .join(&id)
                .join(".delta")
                .join(&id)
                .join("metadata.json");
            let metadata: Value = serde_json::from_str(&fs::read_to_string(path).ok()?).ok()?;
            (metadata["status"] == "COMPLETED").then(|| (id, metadata["updated_at"].clone()))
        })
        .collect()
}

#[test]
fn a_batch_whose_driver_and_one_run_were_killed_is_finished_by_running_it_again() {
    let model = mock(script());
    let test = batch_args(delta(tasks(agent(Test::new(), "0.2"), 24), &model), "2");
    let driver = test.spawn();
    let out = test.path().join("out");
    wait_until("a few tasks to finish", || finished(&out) >= 4);
    // One task's engine, mid-run: the one whose run is RUNNING now.
    let running = (0..24).find_map(|i| {
        let id = format!("task-{i:03}");
        let path = out
            .join("runs")
            .join(&id)
            .join(".delta")
            .join(&id)
            .join("metadata.json");
        let metadata: Value = serde_json::from_str(&fs::read_to_string(path).ok()?).ok()?;
        (metadata["status"] == "RUNNING").then(|| metadata["pid"].as_u64())?
    });
    if let Some(pid) = running {
        signal(u32::try_from(pid).expect("pid"), Signal::SIGKILL);
    }
    signal(driver.id(), Signal::SIGKILL);
    let _ = wait(driver);
    let before = completed_so_far(&out, 24);
    assert!(before.len() < 24, "the batch finished before it was killed");

    let again = test.run().code(0);
    assert_finished_once(&out, 24, &before);
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).expect("summary"))
            .expect("JSON");
    assert_eq!(summary["by_status"]["COMPLETED"], 24, "{}", again.stderr());
}

fn wait(child: Child) -> (Option<i32>, String) {
    let output = child.wait_with_output().expect("wait");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn ctrl_c_leaves_every_started_run_interrupted_or_finished_and_a_rerun_finishes() {
    let model = mock(script());
    let test = batch_args(delta(tasks(agent(Test::new(), "0.3"), 16), &model), "2");
    let driver = test.spawn();
    let out = test.path().join("out");
    wait_until("a task to finish", || finished(&out) >= 2);
    signal(driver.id(), Signal::SIGINT);
    let (code, stderr) = wait(driver);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("run the same `delta batch run` command again"),
        "{stderr}"
    );
    let mut started = 0;
    for i in 0..16 {
        let id = format!("task-{i:03}");
        // A run the signal met while it was being created has no metadata yet.
        if !out
            .join("runs")
            .join(&id)
            .join(".delta")
            .join(&id)
            .join("metadata.json")
            .exists()
        {
            continue;
        }
        started += 1;
        let status = metadata(&out, &id)["status"].clone();
        assert!(
            status == "COMPLETED" || status == "INTERRUPTED",
            "{id} is {status} after Ctrl-C"
        );
    }
    assert!(started < 16, "every task had started");
    let before = completed_so_far(&out, 16);
    let _again = test.run().code(0);
    assert_finished_once(&out, 16, &before);
}

#[rstest::rstest]
#[case::duplicate_id(
    "{\"id\": \"a\", \"message\": \"x\"}\n{\"id\": \"a\", \"message\": \"y\"}\n",
    "line 2: id \"a\" is used by an earlier line"
)]
#[case::escaping_id("{\"id\": \"../x\", \"message\": \"x\"}\n", "line 1: id \"../x\"")]
// Issue 30 item 10: the column is said to be inside the line, not serde's "at line 1".
#[case::not_json(
    "{\"id\": \"a\", \"message\": \"x\"}\nnot json\n",
    "line 2, column 2: expected"
)]
#[case::no_message("{\"id\": \"a\"}\n", "line 1, column 11: missing field `message`")]
#[case::missing_workspace_from(
    "{\"id\": \"a\", \"message\": \"x\", \"workspace_from\": \"nowhere\"}\n",
    "line 1: workspace_from nowhere is not a directory"
)]
fn a_bad_task_file_is_refused_by_line_before_anything_is_created(
    #[case] file: &str,
    #[case] problem: &str,
) {
    let run = batch_run(agent(Test::new(), "0").file("tasks.jsonl", file), &[])
        .run()
        .code(126);
    assert!(run.stderr().contains(problem), "{}", run.stderr());
    assert!(
        run.stderr().contains("nothing was created or run"),
        "{}",
        run.stderr()
    );
    assert!(!run.path().join("out").exists());
}

/// The test cluster answers (tests/slurm/start-cluster.sh, which tests/setup.sh runs), or
/// the test fails saying so.
pub(crate) fn require_slurm() {
    let idle = Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == "idle" || l.trim() == "mixed" || l.trim() == "allocated")
        });
    crate::support::component::require("a Slurm cluster (the --executor slurm tests)", idle);
}

/// Waits for all 50 tasks to be COMPLETED. Slurm starts array tasks as its scheduler
/// cycles allow, two at a time on two cores: a hang guard of five minutes.
fn wait_for_slurm(check: &Test) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while status(check)["summary"]["by_status"]["COMPLETED"] != 50 {
        assert!(
            std::time::Instant::now() < deadline,
            "the array job did not finish: {:#}",
            status(check)
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

fn status(test: &Test) -> Value {
    let output = test
        .command()
        .args(["batch", "status", "out", "--format", "json"])
        .output()
        .expect("batch status");
    serde_json::from_str(&String::from_utf8_lossy(&output.stdout)).expect("status JSON")
}

#[test]
fn fifty_tasks_run_as_a_slurm_array_job_and_a_rerun_submits_only_what_is_missing() {
    require_slurm();
    let model = mock(script());
    let test = batch_run(delta(tasks(agent(Test::new(), "0"), 50), &model), &SLURM);
    let submitted = test.run().code(0);
    let out = submitted.path().join("out");
    let script = fs::read_to_string(out.join("slurm/batch.sbatch")).expect("the script");
    assert!(script.contains("#SBATCH --array=0-49\n"), "{script}");
    assert!(script.contains("#SBATCH --partition=debug\n"), "{script}");
    assert!(script.contains("batch worker"), "{script}");
    let check = Test::new().current_dir(submitted.path());
    wait_for_slurm(&check);
    let status_now = status(&check);
    assert_eq!(
        status_now["slurm"]["job_id"].as_str().map(str::is_empty),
        Some(false)
    );

    // Five tasks lose their results: only they are submitted again.
    for i in [3, 14, 15, 27, 49] {
        fs::remove_dir_all(out.join("runs").join(format!("task-{i:03}"))).expect("remove");
    }
    let results: Vec<Value> = json_lines(&out.join("results.jsonl"))
        .into_iter()
        .filter(|r| {
            ![3, 14, 15, 27, 49]
                .iter()
                .any(|i| r["id"] == format!("task-{i:03}"))
        })
        .collect();
    let text: String = results.iter().map(|r| format!("{r}\n")).collect();
    fs::write(out.join("results.jsonl"), text).expect("rewrite results");

    let again = batch_run(delta(submitted.then(), &model), &SLURM)
        .run()
        .code(0);
    let batch: Value =
        serde_json::from_str(&fs::read_to_string(out.join("batch.json")).expect("batch.json"))
            .expect("JSON");
    let last = batch["slurm"]
        .as_array()
        .expect("submissions")
        .last()
        .expect("one");
    assert_eq!(
        last["tasks"],
        serde_json::json!(["task-003", "task-014", "task-015", "task-027", "task-049"]),
        "{}",
        again.stderr()
    );
    let script = fs::read_to_string(out.join("slurm/batch.sbatch")).expect("the script");
    assert!(script.contains("#SBATCH --array=0-4\n"), "{script}");
    wait_for_slurm(&check);
    for i in 0..50 {
        assert_eq!(marks(&out, &format!("task-{i:03}")), 2);
    }
}

//! A PreToolUse hook's `ask` and `defer` hold the call for a human exactly as `ask_human`
//! pauses: exit 101, WAITING_FOR_INPUT, the question (naming the tool and its input) in
//! `interaction/request.json`; `delta continue -m yes|no` (or `-i`) answers it, and the
//! call then runs, once, or is refused. Budgets, kill -9 and continue around the pause
//! lose nothing and run nothing twice.

use std::io::Write as _;
use std::process::Stdio;

use serde_json::{Value, json};

use super::support::{
    agent, firings, group, messages, payloads, script, settled, stdin_of, text_of,
};
use crate::support::harness::{Stdin, Test};
use crate::support::run::{delta, mock, run_files, wait_until};

/// A turn with the deploy (which the gate holds), then a final answer.
const DEPLOY: &str = "mode: sequential\nsteps:\n\
     - message:\n    tool_calls:\n\
     \x20     - {name: Bash, arguments: {command: 'echo deployed >> deploy.log'}}\n\
     - message: {content: 'Deployed.'}\n";

/// The gate on Bash (`--defer` makes it defer), and a Notification hook that keeps what
/// it was told.
fn gated(gate_args: &str) -> Value {
    json!({"hooks": {
        "PreToolUse": [group(Some("Bash"), &[script("approval_gate.py", gate_args)])],
        "Notification": [group(None, &["cat > notified.json".to_owned()])],
    }})
}

fn run_gated(test: Test, mock: &mock_llm::MockServer) -> crate::support::harness::Run {
    delta(test, mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "Deploy.",
        ])
        .args(["--format", "json"])
        .run()
}

fn answer(
    run: crate::support::harness::Run,
    mock: &mock_llm::MockServer,
    answer: &str,
) -> crate::support::harness::Run {
    delta(run.then(), mock)
        .args(["continue", "--run-id", "r1", "-w", "ws", "-m", answer])
        .run()
}

#[test]
fn ask_pauses_with_101_and_yes_runs_the_tool_once() {
    let mock = mock(DEPLOY);
    let run = run_gated(agent(Test::new(), &gated("")), &mock).code(101);
    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(result["status"], "WAITING_FOR_INPUT");
    let prompt = "A PreToolUse hook asks for your approval before this tool call runs.\n\
                  Tool: Bash\nInput: {\"command\":\"echo deployed >> deploy.log\"}\n\
                  The hook's reason: deploys need a human's approval\n\
                  Answer yes to run it, or no to refuse it (what you write goes to the model).";
    assert_eq!(result["interaction"]["prompt"], prompt);
    assert_eq!(result["interaction"]["input_type"], "confirmation");
    assert!(
        !run.path().join("ws/deploy.log").exists(),
        "ran before approval"
    );
    let files = run_files(&run.path().join("ws"), "r1");
    let request: Value = serde_json::from_str(&files.read("interaction/request.json")).unwrap();
    assert_eq!(request["prompt"], prompt);
    let tail: Vec<String> = files.types().split_off(2);
    assert_eq!(
        tail,
        [
            "CLAUDE_HOOK",
            "ACTION_REQUEST",
            "HUMAN_INPUT_REQUEST",
            "CLAUDE_HOOK",
            "RUN_END"
        ]
    );
    assert_eq!(firings(&files, "PreToolUse")[0]["decision"], "ask");
    let notified: Value = serde_json::from_str(&run.read("ws/notified.json")).unwrap();
    assert_eq!(notified["notification_type"], "permission_prompt");
    assert_eq!(notified["message"], prompt);

    let run = answer(run, &mock, "yes").code(0);
    assert_eq!(run.read("ws/deploy.log"), "deployed\n", "ran exactly once");
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    assert!(!files.dir.join("interaction").exists());
    let received = &payloads(&files, "HUMAN_INPUT_RECEIVED")[0];
    assert_eq!(received["response"], "yes");
    assert_eq!(payloads(&files, "ACTION_RESULT")[0]["status"], "SUCCESS");
    // The hooks were not asked again: the human answered the input shown.
    assert_eq!(firings(&files, "PreToolUse").len(), 1);
}

#[test]
fn ask_answered_no_refuses_the_tool() {
    let mock = mock(DEPLOY);
    let run = run_gated(agent(Test::new(), &gated("")), &mock).code(101);
    let run = answer(run, &mock, "no, use the staging script").code(0);
    assert!(!run.path().join("ws/deploy.log").exists());
    let files = run_files(&run.path().join("ws"), "r1");
    let refused = "Error: the human did not approve this call, so it was not run. Their \
                   answer: no, use the staging script";
    let result = &payloads(&files, "ACTION_RESULT")[0];
    assert_eq!(
        (&result["status"], &result["observation_content"]),
        (&json!("ERROR"), &json!(refused))
    );
    assert!(text_of(&mock.requests()[1]).contains("no, use the staging script"));
}

#[test]
fn defer_pauses_like_ask() {
    let mock = mock(DEPLOY);
    let run = run_gated(agent(Test::new(), &gated("--defer")), &mock).code(101);
    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert!(
        result["interaction"]["prompt"]
            .as_str()
            .unwrap()
            .starts_with("A PreToolUse hook deferred this tool call to you.\nTool: Bash\n")
    );
    let files = run_files(&run.path().join("ws"), "r1");
    assert_eq!(firings(&files, "PreToolUse")[0]["decision"], "defer");
    let run = answer(run, &mock, "Y").code(0);
    assert_eq!(run.read("ws/deploy.log"), "deployed\n");
}

#[test]
fn no_ask_human_turns_ask_into_deny() {
    let mock = mock(DEPLOY);
    let run = delta(agent(Test::new(), &gated("")), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "Deploy.",
        ])
        .arg("--no-ask-human")
        .run()
        .code(0);
    assert!(!run.path().join("ws/deploy.log").exists());
    let files = run_files(&run.path().join("ws"), "r1");
    assert_eq!(
        payloads(&files, "ACTION_RESULT")[0]["observation_content"],
        "Error: a PreToolUse hook asks a human to approve this call, and nobody can be asked \
         in this run (ask_human is off), so it was not run. The hook's reason: deploys need a \
         human's approval"
    );
    let stdin = stdin_of(&files, &firings(&files, "PreToolUse")[0]);
    assert_eq!(stdin["permission_mode"], "dontAsk");
    assert!(
        !run.path().join("ws/notified.json").exists(),
        "nobody to notify"
    );
}

#[test]
fn ask_with_i_asks_on_the_spot() {
    let mock = mock(DEPLOY);
    let run = delta(agent(Test::new(), &gated("")), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "Deploy.", "-i",
        ])
        .stdin(Stdin::Text("yes\n".to_owned()))
        .run()
        .code(0);
    assert!(run.stderr().contains("Tool: Bash"), "{}", run.stderr());
    assert_eq!(run.read("ws/deploy.log"), "deployed\n");
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    assert_eq!(
        payloads(&files, "HUMAN_INPUT_RECEIVED")[0]["response"],
        "yes"
    );
    assert_eq!(firings(&files, "Notification").len(), 1);
}

#[test]
fn continue_i_answers_the_pending_question() {
    let mock = mock(DEPLOY);
    let run = run_gated(agent(Test::new(), &gated("")), &mock).code(101);
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws", "-i"])
        .stdin(Stdin::Text("yes\n".to_owned()))
        .run()
        .code(0);
    assert!(run.stderr().contains("deploys need a human's approval"));
    assert_eq!(run.read("ws/deploy.log"), "deployed\n");
}

#[test]
fn calls_after_a_gate_run_after_the_answer() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'echo deployed >> steps.log'}}\n\
         \x20     - {name: Bash, arguments: {command: 'echo after >> steps.log'}}\n\
         - message: {content: 'Done.'}\n",
    );
    let run = run_gated(agent(Test::new(), &gated("")), &mock).code(101);
    assert!(
        !run.path().join("ws/steps.log").exists(),
        "a call after the gate ran"
    );
    let run = answer(run, &mock, "yes").code(0);
    assert_eq!(run.read("ws/steps.log"), "deployed\nafter\n");
    settled(&run_files(&run.path().join("ws"), "r1"), "COMPLETED");
}

#[test]
fn budgets_hold_across_a_paused_approval() {
    // 15 tokens per call; a budget of 20 lets the first call through, then the approved
    // deploy runs (the continue brings the recorded budget), and the second call's usage
    // spends it before its tool call.
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'echo deployed >> deploy.log'}}\n\
         \x20   usage: {prompt_tokens: 10, completion_tokens: 5}\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'echo checked >> check.log'}}\n\
         \x20   usage: {prompt_tokens: 10, completion_tokens: 5}\n\
         - message: {content: 'Done.'}\n",
    );
    let run = delta(agent(Test::new(), &gated("")), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "Deploy.",
        ])
        .args(["--max-tokens", "20"])
        .run()
        .code(101);
    let run = answer(run, &mock, "yes").code(1);
    let files = run_files(&run.path().join("ws"), "r1");
    let metadata = files.metadata();
    assert_eq!(metadata["status"], "INTERRUPTED");
    assert_eq!(metadata["error"]["type"], "BudgetExceeded");
    assert_eq!(metadata["budget"]["tokens"]["limit"], 20);
    assert_eq!(metadata["budget"]["tokens"]["used"], 30);
    assert_eq!(run.read("ws/deploy.log"), "deployed\n");
    assert!(!run.path().join("ws/check.log").exists());

    // Without a larger budget the run stays as it is; with one it goes on, and the
    // approved deploy is not run again.
    let journal = files.read("journal.jsonl");
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws"])
        .run()
        .code(2);
    assert_eq!(files.read("journal.jsonl"), journal);
    let run = delta(run.then(), &mock)
        .args([
            "continue",
            "--run-id",
            "r1",
            "-w",
            "ws",
            "--max-tokens",
            "100",
        ])
        .run()
        .code(0);
    assert_eq!(run.read("ws/deploy.log"), "deployed\n");
    settled(&run_files(&run.path().join("ws"), "r1"), "COMPLETED");
}

#[test]
fn kill_9_during_the_approved_tool_never_reruns_it() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'echo deploy >> count.log; echo $$ > tool.pid; exec sleep 30'}}\n\
         - message: {content: 'Done.'}\n",
    );
    let run = run_gated(agent(Test::new(), &gated("")), &mock).code(101);
    let test =
        delta(run.then(), &mock).args(["continue", "--run-id", "r1", "-w", "ws", "-m", "yes"]);
    let mut child = test.spawn();
    let ws = test.path().join("ws");
    wait_until("the approved tool to start", || {
        ws.join("tool.pid").exists()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let tool = std::fs::read_to_string(ws.join("tool.pid")).unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-9", tool.trim()])
        .status();

    let run = delta(test.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws"])
        .run()
        .code(0);
    assert_eq!(run.read("ws/count.log"), "deploy\n", "the tool ran twice");
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    let result = &payloads(&files, "ACTION_RESULT")[0];
    assert!(
        result["observation_content"]
            .as_str()
            .unwrap()
            .starts_with("Error: interrupted; not re-run."),
        "{result}"
    );
}

#[test]
fn kill_9_while_asking_answers_not_run() {
    let mock = mock(DEPLOY);
    let test = delta(agent(Test::new(), &gated("")), &mock).args([
        "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "Deploy.", "-i",
    ]);
    let mut command = test.command();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Stdin stays open and silent: the question waits on the terminal.
    let mut stdin = child.stdin.take().unwrap();
    let journal = test.path().join("ws/.delta/r1/journal.jsonl");
    wait_until("the approval question", || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("HUMAN_INPUT_REQUEST"))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = stdin.write_all(b"too late\n");

    let run = delta(test.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws"])
        .run()
        .code(0);
    assert!(!run.path().join("ws/deploy.log").exists());
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    let result = &payloads(&files, "ACTION_RESULT")[0];
    assert!(
        result["observation_content"]
            .as_str()
            .unwrap()
            .starts_with("Error: not run."),
        "{result}"
    );
    assert_eq!(messages(&mock.requests()[1]).len(), 4);
}

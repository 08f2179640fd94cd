//! Each script of `examples/claude-hooks/` behaves as Claude Code's hooks reference says,
//! in an unattended run and again in the process `delta continue` starts: a test fails if
//! the decision the script made were ignored.

use serde_json::{Value, json};

use super::support::{
    agent, firings, group, messages, payloads, script, settled, stdin_of, text_of,
};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, run_files};

/// `delta run -w ws --run-id r1 -m TASK` against `mock`.
fn run(test: Test, mock: &mock_llm::MockServer, task: &str) -> crate::support::harness::Run {
    delta(test, mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", task,
        ])
        .run()
}

/// `delta continue --run-id r1 -w ws -m MESSAGE` after `run`.
fn continued(
    run: crate::support::harness::Run,
    mock: &mock_llm::MockServer,
    message: &str,
) -> crate::support::harness::Run {
    delta(run.then(), mock)
        .args(["continue", "--run-id", "r1", "-w", "ws", "-m", message])
        .run()
}

fn results(run: &crate::support::harness::Run) -> Vec<Value> {
    payloads(&run_files(&run.path().join("ws"), "r1"), "ACTION_RESULT")
}

#[test]
fn dangerous_command_guard_blocks_with_exit_2() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'rm -rf keep'}}\n\
         \x20     - {name: Bash, arguments: {command: 'ls keep'}}\n\
         - message: {content: 'Kept it.'}\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'rm -rf keep/important.txt'}}\n\
         - message: {content: 'Still kept.'}\n",
    );
    let hooks = json!({"hooks": {"PreToolUse": [
        group(Some("Bash"), &[script("block-dangerous.sh", "")])
    ]}});
    let test = agent(Test::new(), &hooks).file("ws/keep/important.txt", "data\n");
    let run = run(test, &mock, "Clean up.").code(0);
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    let blocked = "Error: a PreToolUse hook blocked this call: Blocked by block-dangerous.sh: \
                   'rm -rf' is not allowed here; find a way that does not destroy data.";
    let first = results(&run);
    assert_eq!(first[0]["observation_content"], blocked);
    assert_eq!(first[0]["status"], "ERROR");
    assert_eq!(first[1]["observation_content"], "important.txt\n");
    // The model read the hook's stderr as the call's result.
    assert!(text_of(&mock.requests()[1]).contains("'rm -rf' is not allowed here"));
    let guard = firings(&files, "PreToolUse");
    assert_eq!(
        (
            &guard[0]["exit_code"],
            &guard[0]["decision"],
            &guard[0]["status"]
        ),
        (&json!(2), &json!("deny"), &json!("SUCCESS"))
    );
    assert_eq!(
        (&guard[1]["exit_code"], guard[1].get("decision")),
        (&json!(0), None)
    );

    // The continuing process runs the guard too.
    let run = continued(run, &mock, "Now remove the file.").code(0);
    assert_eq!(run.read("ws/keep/important.txt"), "data\n");
    assert_eq!(results(&run)[2]["observation_content"], blocked);
}

#[test]
fn path_guard_denies_with_permission_decision() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Write, arguments: {file_path: '.env', content: 'TOKEN=1'}}\n\
         \x20     - {name: Write, arguments: {file_path: 'notes.txt', content: 'hello'}}\n\
         - message: {content: 'Done.'}\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Write, arguments: {file_path: 'secrets/key.txt', content: 'k'}}\n\
         - message: {content: 'Done again.'}\n",
    );
    let hooks = json!({"hooks": {"PreToolUse": [
        group(Some("Write|Edit"), &[script("protect_paths.py", "")])
    ]}});
    let run = run(agent(Test::new(), &hooks), &mock, "Write the files.").code(0);
    assert!(!run.path().join("ws/.env").exists(), "the denied write ran");
    assert_eq!(run.read("ws/notes.txt"), "hello");
    let first = results(&run);
    assert_eq!(
        first[0]["observation_content"],
        "Error: a PreToolUse hook blocked this call: .env is protected (.env); write somewhere \
         else."
    );
    let files = run_files(&run.path().join("ws"), "r1");
    let decisions: Vec<Value> = firings(&files, "PreToolUse")
        .iter()
        .map(|f| f["decision"].clone())
        .collect();
    assert_eq!(decisions, [json!("deny"), Value::Null]);
    // The hook read Claude Code's PreToolUse fields.
    let stdin = stdin_of(&files, &firings(&files, "PreToolUse")[0]);
    assert_eq!(stdin["tool_name"], "Write");
    assert_eq!(
        stdin["tool_input"],
        json!({"file_path": ".env", "content": "TOKEN=1"})
    );
    assert_eq!(stdin["tool_use_id"], "call_0_0");
    assert_eq!(stdin["session_id"], "r1");
    assert_eq!(stdin["permission_mode"], "default");

    let run = continued(run, &mock, "And the key.").code(0);
    assert!(!run.path().join("ws/secrets/key.txt").exists());
    assert_eq!(results(&run)[2]["status"], "ERROR");
}

#[test]
fn rewriter_runs_the_updated_input() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Write, arguments: {file_path: 'report.txt', content: 'r1'}}\n\
         - message: {content: 'Done.'}\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Write, arguments: {file_path: '/tmp/escape.txt', content: 'r2'}}\n\
         - message: {content: 'Done again.'}\n",
    );
    let hooks = json!({"hooks": {"PreToolUse": [
        group(Some("Write"), &[script("sandbox_paths.py", "")])
    ]}});
    let run = run(agent(Test::new(), &hooks), &mock, "Write the report.").code(0);
    assert!(!run.path().join("ws/report.txt").exists());
    assert_eq!(run.read("ws/sandbox/report.txt"), "r1");
    let files = run_files(&run.path().join("ws"), "r1");
    // ACTION_REQUEST records the input that ran; the firing records the rewrite.
    let request = &payloads(&files, "ACTION_REQUEST")[0];
    assert_eq!(
        request["tool_args"],
        json!({"file_path": "sandbox/report.txt", "content": "r1"})
    );
    assert_eq!(
        request["resolved_command"],
        "tee sandbox/report.txt < (stdin: 2 bytes)"
    );
    let firing = &firings(&files, "PreToolUse")[0];
    assert_eq!(firing["decision"], "allow");
    assert_eq!(
        firing["updated_input"],
        json!({"file_path": "sandbox/report.txt", "content": "r1"})
    );

    // An absolute path is kept inside too, by the continuing process's hooks.
    let run = continued(run, &mock, "And one outside.").code(0);
    assert_eq!(run.read("ws/sandbox/tmp/escape.txt"), "r2");
}

#[test]
fn context_injector_reaches_the_model() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message: {content: 'Noted.'}\n\
         - message: {content: 'Noted again.'}\n",
    );
    let inject = script("inject-context.sh", "");
    let hooks = json!({"hooks": {
        "SessionStart": [group(None, std::slice::from_ref(&inject))],
        "UserPromptSubmit": [group(None, &[inject])],
    }});
    let test = agent(Test::new(), &hooks).file("ws/TODO.md", "- [ ] one\n- [ ] two\n- [x] done\n");
    let run = run(test, &mock, "What is left?").code(0);
    let first = messages(&mock.requests()[0]);
    assert_eq!(
        first[1..],
        [
            ("user".to_owned(), "What is left?".to_owned()),
            (
                "system".to_owned(),
                "House rules (startup session): keep answers short; never touch .env.".to_owned()
            ),
            (
                "system".to_owned(),
                "Open TODO items in this workspace: 2".to_owned()
            ),
        ]
    );

    let run = continued(run, &mock, "And now?").code(0);
    let second = messages(&mock.requests()[1]);
    assert_eq!(
        second[second.len() - 3..],
        [
            ("user".to_owned(), "And now?".to_owned()),
            (
                "system".to_owned(),
                "House rules (resume session): keep answers short; never touch .env.".to_owned()
            ),
            (
                "system".to_owned(),
                "Open TODO items in this workspace: 2".to_owned()
            ),
        ]
    );
    let files = run_files(&run.path().join("ws"), "r1");
    let prompts: Vec<Value> = firings(&files, "UserPromptSubmit")
        .iter()
        .map(|f| stdin_of(&files, f)["prompt"].clone())
        .collect();
    assert_eq!(prompts, [json!("What is left?"), json!("And now?")]);
}

#[test]
fn formatter_runs_after_writes_and_sees_failures() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Write, arguments: {file_path: 'notes.md', content: \"# Notes   \\n\\nText.  \\n\\n\\n\"}}\n\
         \x20     - {name: Read, arguments: {file_path: 'missing.md'}}\n\
         - message: {content: 'Done.'}\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Write, arguments: {file_path: 'more.md', content: \"more   \"}}\n\
         - message: {content: 'Done again.'}\n",
    );
    let hooks = json!({"hooks": {"PostToolUse": [
        group(Some("Write|Read"), &[script("format_after_write.py", "")])
    ]}});
    let run = run(agent(Test::new(), &hooks), &mock, "Write the notes.").code(0);
    assert_eq!(run.read("ws/notes.md"), "# Notes\n\nText.\n");
    let files = run_files(&run.path().join("ws"), "r1");
    let post = firings(&files, "PostToolUse");
    // The formatter's stdout line is for the log, not the model.
    assert_eq!(post[0].get("decision"), None);
    assert_eq!(
        files.read(&format!(
            "{}stdout.log",
            post[0]["io_path_ref"].as_str().unwrap()
        )),
        "✓ Formatted notes.md\n"
    );
    // The failed Read: PostToolUse sees the error and sends its hint to the model.
    let failed = stdin_of(&files, &post[1]);
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .starts_with("Exit code 1\n"),
        "{failed}"
    );
    assert_eq!(failed["tool_response"]["status"], "FAILED");
    assert_eq!(failed["tool_response"]["exit_code"], 1);
    assert_eq!(post[1]["decision"], "block");
    let request = messages(&mock.requests()[1]);
    assert_eq!(
        request.last().unwrap(),
        &(
            "system".to_owned(),
            "PostToolUse hook feedback: The Read call failed (Exit code 1); check the path \
             and try again."
                .to_owned()
        )
    );
    assert!(!text_of(&mock.requests()[1]).contains("Formatted"));

    let run = continued(run, &mock, "More notes.").code(0);
    assert_eq!(run.read("ws/more.md"), "more\n");
}

#[test]
fn stop_hook_sends_the_model_back_once() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message: {content: 'Finished.'}\n\
         - message: {content: 'Finished. Changed: nothing.'}\n\
         - message: {content: 'Also done.'}\n\
         - message: {content: 'Also done. Changed: nothing.'}\n",
    );
    let hooks = json!({"hooks": {"Stop": [group(None, &[script("stop-once.sh", "")])]}});
    let run = run(agent(Test::new(), &hooks), &mock, "Do it.").code(0);
    let files = run_files(&run.path().join("ws"), "r1");
    assert_eq!(files.metadata()["result"], "Finished. Changed: nothing.");
    let feedback = (
        "system".to_owned(),
        "Stop hook feedback: Before you finish, list the files you changed.".to_owned(),
    );
    assert_eq!(messages(&mock.requests()[1]).last(), Some(&feedback));
    let stops = firings(&files, "Stop");
    let seen: Vec<(Value, Value, Value)> = stops
        .iter()
        .map(|f| {
            let stdin = stdin_of(&files, f);
            (
                stdin["stop_hook_active"].clone(),
                stdin["last_assistant_message"].clone(),
                f.get("decision").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!(false), json!("Finished."), json!("block")),
            (
                json!(true),
                json!("Finished. Changed: nothing."),
                Value::Null
            ),
        ]
    );

    // A new instruction starts afresh: the hook sends the model back once more.
    let run = continued(run, &mock, "One more thing.").code(0);
    let files = run_files(&run.path().join("ws"), "r1");
    assert_eq!(files.metadata()["result"], "Also done. Changed: nothing.");
    assert_eq!(mock.requests().len(), 4);
}

#[test]
fn continue_false_ends_the_run_interrupted_with_its_reason() {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'echo one'}}\n\
         - message: {content: 'Done.'}\n",
    );
    // Stops the run once (a marker keeps it from stopping the continued run too).
    let quota = r#"[ -f stopped ] || { touch stopped; echo '{"continue": false, "stopReason": "daily quota reached"}'; }"#;
    let hooks = json!({"hooks": {"PostToolUse": [group(Some("Bash"), &[quota.to_owned()])]}});
    let run = delta(agent(Test::new(), &hooks), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .args(["--format", "json"])
        .run()
        .code(1);
    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(result["status"], "INTERRUPTED");
    assert_eq!(result["error"]["type"], "HookStopped");
    assert_eq!(result["error"]["message"], "daily quota reached");
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "INTERRUPTED");
    assert_eq!(firings(&files, "PostToolUse")[0]["decision"], "stop");
    assert_eq!(mock.requests().len(), 1, "no LLM call after the stop");

    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws"])
        .run()
        .code(0);
    settled(&run_files(&run.path().join("ws"), "r1"), "COMPLETED");
}

#[test]
fn blocked_prompt_fails_the_run_and_never_reaches_the_model() {
    let mock = mock("mode: sequential\nsteps:\n- message: {content: 'Summarized.'}\n");
    let refuse =
        r#"grep -q password && { echo 'prompts must not contain passwords' >&2; exit 2; }; exit 0"#;
    let hooks = json!({"hooks": {"UserPromptSubmit": [group(None, &[refuse.to_owned()])]}});
    let run = delta(agent(Test::new(), &hooks), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "--run-id", "r1"])
        .args(["-m", "my password is hunter2", "--format", "json"])
        .run()
        .code(1);
    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(result["status"], "FAILED");
    assert_eq!(result["error"]["type"], "PromptBlocked");
    assert_eq!(
        result["error"]["message"],
        "a UserPromptSubmit hook refused the prompt: prompts must not contain passwords"
    );
    assert!(mock.requests().is_empty(), "the model saw the refused task");

    let run = continued(run, &mock, "Summarize the repo.").code(0);
    let request = text_of(&mock.requests()[0]);
    assert!(request.contains("Summarize the repo."));
    assert!(!request.contains("hunter2"), "{request}");
    settled(&run_files(&run.path().join("ws"), "r1"), "COMPLETED");
}

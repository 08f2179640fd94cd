//! The runner of one Claude Code hook against real processes: what a hook's environment
//! holds (the project directories, never the API key unless configured), its working
//! directory, its stdin in one piece, a timeout that kills its process group (and fails
//! open), and configurations Delta refuses or warns about.

use delta_engine::config::parse_hooks_json;
use delta_engine::hooks::claude::{ClaudeInput, ClaudeRunner, Firing, ToolUse};
use delta_engine::journal::HookStatus;
use delta_engine::process::OutputPolicy;
use serde_json::{Value, json};

use crate::hooks::support::{Fixture, process_gone, read};
use crate::support::harness::Test;
use crate::support::run::{API_KEY, delta, mock, wait_until};

fn runner(fx: &Fixture, hooks_json: &Value) -> ClaudeRunner {
    let (hooks, warnings) =
        parse_hooks_json(&hooks_json.to_string(), &fx.agent.join("hooks.json")).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    ClaudeRunner::new(hooks, &fx.paths, &fx.agent, OutputPolicy::default())
}

/// Runs the one PreToolUse hook of `hooks_json` on a Bash call, as the engine would.
async fn fire_once(fx: &Fixture, hooks_json: &Value) -> Firing {
    let mut runner = runner(fx, hooks_json);
    let input = bash_call();
    let handler = &runner.handlers(&input)[0];
    runner
        .fire(handler, &input, None, std::future::pending::<()>())
        .await
}

fn bash_call() -> ClaudeInput {
    ClaudeInput::PreToolUse(ToolUse {
        tool_name: "Bash".to_owned(),
        tool_input: json!({"command": "ls"}).as_object().unwrap().clone(),
        tool_use_id: "call_1".to_owned(),
    })
}

fn one(command: &str, extra: Value) -> Value {
    let mut handler = json!({"type": "command", "command": command});
    if let (Some(handler), Value::Object(extra)) = (handler.as_object_mut(), extra) {
        handler.extend(extra);
    }
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
}

#[tokio::test]
async fn a_hook_sees_the_project_never_the_api_key_unless_configured() {
    let fx = Fixture::new();
    let dump = "pwd > where.txt; env > env.txt; cat > stdin.json";
    let firing = fire_once(&fx, &one(dump, json!({}))).await;
    assert_eq!(
        firing.record.status,
        HookStatus::Success,
        "{:?}",
        firing.reply
    );
    let ws = |name: &str| read(&fx.workspace.join(name));
    assert_eq!(ws("where.txt").trim(), fx.workspace.display().to_string());
    let env = ws("env.txt");
    let var = |name: &str| crate::hooks::support::env_value(&env, name).map(str::to_owned);
    let workspace = fx.workspace.display().to_string();
    assert_eq!(var("CLAUDE_PROJECT_DIR"), Some(workspace.clone()));
    assert_eq!(var("DELTA_PROJECT_DIR"), Some(workspace));
    assert_eq!(
        var("CLAUDE_PLUGIN_ROOT"),
        Some(fx.agent.display().to_string())
    );
    assert_eq!(var("DELTA_RUN_ID"), Some("hooks-test-run".to_owned()));
    assert_eq!(var("DELTA_HOOK_EVENT"), Some("PreToolUse".to_owned()));
    for key in ["DELTA_API_KEY", "OPENAI_API_KEY"] {
        assert_eq!(var(key).as_deref(), Some(""), "{key} reached the hook");
    }
    // The event arrived whole, as one JSON document and a newline.
    let stdin: Value = serde_json::from_str(&ws("stdin.json")).unwrap();
    assert_eq!(stdin["tool_input"], json!({"command": "ls"}));
    assert_eq!(
        read(
            &fx.paths
                .claude_hooks_dir()
                .join("001_PreToolUse/input.json")
        ),
        ws("stdin.json")
    );
}

#[test]
fn pass_api_key_hands_the_key_to_that_hook_only() {
    let mock = mock("mode: sequential\nsteps:\n- message: {content: 'Done.'}\n");
    let check = |file: &str| {
        format!(
            "if [ -n \"$DELTA_API_KEY\" ]; then echo present > {file}; else echo absent > {file}; fi"
        )
    };
    let hooks = json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": check("with.txt"), "pass_api_key": true},
        {"type": "command", "command": check("without.txt")},
    ]}]}});
    let run = delta(super::support::agent(Test::new(), &hooks), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);
    assert_eq!(run.read("ws/with.txt"), "present\n");
    assert_eq!(run.read("ws/without.txt"), "absent\n");
    crate::support::run::assert_in_no_file(run.path(), API_KEY);
}

#[tokio::test]
async fn a_timeout_kills_the_hook_and_its_children_and_fails_open() {
    let fx = Fixture::new();
    let hang = "sleep 300 & echo $! > child.pid; echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"deny\"}}'; wait";
    let firing = fire_once(&fx, &one(hang, json!({"timeout": 0.5}))).await;
    assert_eq!(firing.record.status, HookStatus::Failed);
    assert_eq!(firing.record.ended, "timeout");
    assert_eq!(firing.record.exit_code, None);
    assert_eq!(
        firing.record.decision, None,
        "a timed-out hook decides nothing"
    );
    assert_eq!(
        firing.reply,
        Err("timed out after 0.5 s and was killed with its child processes".to_owned())
    );
    let pid: i32 = read(&fx.workspace.join("child.pid"))
        .trim()
        .parse()
        .unwrap();
    wait_until("the hook's child to be gone", || process_gone(pid));
}

#[test]
fn configurations_delta_cannot_honour_are_refused_and_unfired_events_warned() {
    let mock = mock("mode: sequential\nsteps:\n- message: {content: 'Done.'}\n");
    let refused = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "Is this safe?"}
    ]}]}});
    let run = delta(super::support::agent(Test::new(), &refused), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(126);
    assert!(
        run.stderr().contains("unknown field `prompt`"),
        "{}",
        run.stderr()
    );
    assert!(mock.requests().is_empty());

    let unfired = json!({"hooks": {"SubagentStop": [{"hooks": [
        {"type": "command", "command": "true"}
    ]}]}});
    let run = delta(super::support::agent(run.then(), &unfired), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);
    // The path before it is the agent's hooks.json, canonical.
    assert!(
        run.stderr().contains(
            "/hooks.json: `SubagentStop` hooks never fire in Delta (Delta has no sub-agents \
             yet); they are ignored"
        ),
        "{}",
        run.stderr()
    );
}

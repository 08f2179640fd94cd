//! MCP servers as tool sources (issue 18), against the official test server
//! `@modelcontextprotocol/server-everything` (installed by `.ci/run` with `npm ci` in
//! tests/mcp-server): listing, calls over stdio and streamable HTTP, faults, and no
//! server process left behind however the run ends.
//!
//! The stdio server is started through `sh`, which records its pid (the server's process
//! group: the engine starts it as a group leader) and leaves a `sleep` in the group, so
//! that "the group is gone" proves the whole group was killed, not just the server.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::harness::{ROOT, Test};
use crate::support::run::{
    RunFiles, assert_consistent, assert_no_secret, delta, mock, only_run, wait_until,
};

/// The test server's entry point, or `None` (a loud failure in CI) when not installed.
fn server_js() -> Option<PathBuf> {
    let path = Path::new(ROOT)
        .join("tests/mcp-server/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the MCP test server is not installed: run `npm ci` in tests/mcp-server ({} missing)",
        path.display()
    );
    eprintln!("skipped: the MCP test server is not installed (npm ci in tests/mcp-server)");
    None
}

/// An agent whose `everything` server records its group in `${CWD}/server.pids`; `extra`
/// is appended to the server's entry (indented by 4).
fn agent_yaml(js: &Path, extra: &str) -> String {
    format!(
        r#"name: mcp-test
llm:
  model: test-model
mcp_servers:
  everything:
    command:
      - sh
      - -c
      - 'sleep 300 </dev/null >/dev/null 2>&1 & echo $$ >> "${{CWD}}/server.pids"; exec node "{js}" stdio'
    startup_timeout_ms: 30000
{extra}"#,
        js = js.display()
    )
}

/// The process groups the server was started as, in order (restarts append).
fn server_groups(workspace: &Path) -> Vec<i32> {
    std::fs::read_to_string(workspace.join("server.pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

fn group_is_gone(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
}

/// No process of any recorded server group is left: checked by signal 0 to the group and
/// by a scan of /proc for a process whose group is one of them.
#[track_caller]
fn assert_no_server_left(workspace: &Path) {
    let groups = server_groups(workspace);
    assert!(!groups.is_empty(), "the server never started");
    // Killed members are zombies until their new parent reaps them: wait for that.
    for pgid in &groups {
        wait_until(&format!("process group {pgid} to disappear"), || {
            group_is_gone(*pgid)
        });
    }
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: fields after the last ')'.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let pgrp: i32 = fields.get(2).and_then(|f| f.parse().ok()).unwrap_or(0);
        assert!(
            !groups.contains(&pgrp),
            "process {:?} of server group {pgrp} is still running",
            entry.file_name()
        );
    }
}

fn results(files: &RunFiles) -> Vec<Value> {
    files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == "ACTION_RESULT")
        .map(|event| event["payload"].clone())
        .collect()
}

fn requests(files: &RunFiles) -> Vec<Value> {
    files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == "ACTION_REQUEST")
        .map(|event| event["payload"].clone())
        .collect()
}

/// A script: one step per list of calls (`name`, JSON arguments), then a final answer.
fn script(steps: &[&[(&str, &str)]]) -> String {
    let mut text = String::from("mode: by_conversation\nsteps:\n");
    let mut previous = 0;
    for calls in steps {
        text.push_str("  - message:\n      tool_calls:\n");
        for (name, arguments) in *calls {
            text.push_str(&format!(
                "        - {{name: {name}, arguments: {}}}\n",
                serde_json::to_string(arguments).expect("string")
            ));
        }
        if previous > 1 {
            text.push_str(&format!("      repeat: {previous}\n"));
        }
        previous = calls.len();
    }
    text.push_str(&format!("  - message: {{content: done, repeat: {}}}\n", previous.max(1)));
    text
}

#[test]
fn tool_expand_lists_the_servers_tools_and_where_they_come_from() {
    let Some(js) = server_js() else { return };
    let test = Test::new().agent("agent", &agent_yaml(&js, "    tools: [echo, get-tiny-image]\n"));
    let run = test
        .args(["tool", "expand", "agent"])
        .run()
        .code(0)
        .stdout_has("mcp_servers:\n  - name: everything\n")
        .stdout_has("      - name: everything__echo\n        from: tool 'echo' of MCP server 'everything'\n")
        .stdout_has("      - name: everything__get-tiny-image\n")
        .stdout_has("agent.yaml:5\n")
        .stdout_has("            message:\n");
    assert!(!run.stdout().contains("get-structured-content"), "{}", run.stdout());
    // `delta tool expand` ran in the test directory: ${CWD} is it.
    assert_no_server_left(run.path());
}

#[test]
fn a_run_calls_text_structured_and_image_tools_and_records_them() {
    let Some(js) = server_js() else { return };
    let mock = mock(&script(&[&[
        ("everything__echo", r#"{"message": "hello from delta"}"#),
        ("everything__get-structured-content", r#"{"location": "Chicago"}"#),
        ("everything__get-tiny-image", "{}"),
    ]]));
    let test = delta(Test::new().agent("agent", &agent_yaml(&js, "")), &mock);
    let run = test
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "use the tools"])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let commands: Vec<Value> = requests(&files)
        .iter()
        .map(|r| r["resolved_command"].clone())
        .collect();
    assert_eq!(
        commands,
        [
            "mcp:everything/echo",
            "mcp:everything/get-structured-content",
            "mcp:everything/get-tiny-image"
        ]
    );
    let results = results(&files);
    for result in &results {
        assert_eq!(result["status"], "SUCCESS", "{result}");
    }
    assert_eq!(results[0]["observation_content"], "Echo: hello from delta");
    let weather: Value =
        serde_json::from_str(results[1]["observation_content"].as_str().expect("text"))
            .expect("the structured result's text is JSON");
    assert_eq!(weather["conditions"], "Light rain / drizzle");

    // io/ holds each request and full result; the image is a PNG file beside it.
    let dir = |i: usize| format!("io/tool_executions/{}", results[i]["execution_ref"].as_str().expect("ref"));
    let request: Value = serde_json::from_str(&files.read(&format!("{}/request.json", dir(0)))).expect("JSON");
    assert_eq!(request["arguments"]["message"], "hello from delta");
    assert_eq!(files.read(&format!("{}/command.txt", dir(0))), "mcp:everything/echo\n");
    assert_eq!(files.read(&format!("{}/exit_code.txt", dir(0))), "0\n");
    let structured: Value = serde_json::from_str(&files.read(&format!("{}/result.json", dir(1)))).expect("JSON");
    assert_eq!(structured["structuredContent"]["humidity"], 82);
    let image = std::fs::read(files.dir.join(format!("{}/content-2.png", dir(2)))).expect("the image file");
    assert_eq!(&image[..4], b"\x89PNG");
    assert!(
        results[2]["observation_content"]
            .as_str()
            .expect("text")
            .contains(&format!("[image (image/png, {} bytes) saved as {}/content-2.png]", image.len(), dir(2))),
        "{}",
        results[2]
    );
    // The model was offered the server's own schema under the prefixed name.
    let offered = &mock.requests()[0]["tools"];
    let echo = offered
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["function"]["name"] == "everything__echo")
        .expect("everything__echo offered");
    assert_eq!(echo["function"]["parameters"]["required"], serde_json::json!(["message"]));
    assert!(files.dir.join("io/mcp/everything/stderr.log").is_file());
    assert_no_server_left(&run.path().join("ws"));
    assert_no_secret(run.path());
}

//! MCP servers as tool sources (issue 18), against the official test server
//! `@modelcontextprotocol/server-everything` (installed by `.ci/run` with `npm ci` in
//! tests/mcp-server): listing, calls over stdio and streamable HTTP, faults, and no
//! server process left behind however the run ends.
//!
//! The stdio server is started through `sh`, which records its pid (the server's process
//! group: the engine starts it as a group leader) and leaves a `sleep` in the group, so
//! that "the group is gone" proves the whole group was killed, not just the server.

use std::path::{Path, PathBuf};

use mock_llm::MockServer;
use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::harness::{ROOT, Run, Test};
use crate::support::run::{
    API_KEY, RunFiles, assert_consistent, assert_in_no_file, assert_no_secret, delta, mock,
    only_run, wait_until,
};

/// The test server's entry point. A missing server fails the test, in CI and everywhere
/// else: `.ci/run` installs it, and so does `npm ci` in tests/mcp-server.
fn server_js() -> PathBuf {
    let path = Path::new(ROOT).join(
        "tests/mcp-server/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.is_file(),
        "the MCP test server is not installed: run `npm ci` in tests/mcp-server ({} missing)",
        path.display()
    );
    path
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
    text.push_str(&format!(
        "  - message: {{content: done, repeat: {}}}\n",
        previous.max(1)
    ));
    text
}

#[test]
fn tool_expand_lists_the_servers_tools_and_where_they_come_from() {
    let js = server_js();
    let test = Test::new().agent(
        "agent",
        &agent_yaml(&js, "    tools: [echo, get-tiny-image]\n"),
    );
    let run = test.args(["tool", "expand", "agent"]).run().code(0);
    for expected in [
        "mcp_servers:\n  - name: everything\n",
        "      - name: everything__echo\n        from: tool 'echo' of MCP server 'everything'\n",
        "      - name: everything__get-tiny-image\n",
        "agent.yaml:5\n",
        "            message:\n",
    ] {
        assert!(
            run.stdout().contains(expected),
            "{expected:?} in:\n{}",
            run.stdout()
        );
    }
    assert!(
        !run.stdout().contains("get-structured-content"),
        "{}",
        run.stdout()
    );
    // `delta tool expand` ran in the test directory: ${CWD} is it.
    assert_no_server_left(run.path());
}

#[test]
fn a_run_calls_text_structured_and_image_tools_and_records_them() {
    let js = server_js();
    let mock = mock(&script(&[&[
        ("everything__echo", r#"{"message": "hello from delta"}"#),
        (
            "everything__get-structured-content",
            r#"{"location": "Chicago"}"#,
        ),
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
    let dir = |i: usize| {
        format!(
            "io/tool_executions/{}",
            results[i]["execution_ref"].as_str().expect("ref")
        )
    };
    let request: Value =
        serde_json::from_str(&files.read(&format!("{}/request.json", dir(0)))).expect("JSON");
    assert_eq!(request["arguments"]["message"], "hello from delta");
    assert_eq!(
        files.read(&format!("{}/command.txt", dir(0))),
        "mcp:everything/echo\n"
    );
    assert_eq!(files.read(&format!("{}/exit_code.txt", dir(0))), "0\n");
    let structured: Value =
        serde_json::from_str(&files.read(&format!("{}/result.json", dir(1)))).expect("JSON");
    assert_eq!(structured["structuredContent"]["humidity"], 82);
    let image =
        std::fs::read(files.dir.join(format!("{}/content-2.png", dir(2)))).expect("the image file");
    assert_eq!(&image[..4], b"\x89PNG");
    assert!(
        results[2]["observation_content"]
            .as_str()
            .expect("text")
            .contains(&format!(
                "[image (image/png, {} bytes) saved as {}/content-2.png]",
                image.len(),
                dir(2)
            )),
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
    assert_eq!(
        echo["function"]["parameters"]["required"],
        serde_json::json!(["message"])
    );
    assert!(files.dir.join("io/mcp/everything/stderr.log").is_file());
    assert_no_server_left(&run.path().join("ws"));
    assert_no_secret(run.path());
}

/// Runs `script` against the test agent (`extra` added to the server's entry) in `ws`;
/// returns the finished run, its files, and the workspace.
fn run_script(script: &str, extra: &str, code: i32) -> (Run, RunFiles) {
    let js = server_js();
    let mock = mock(script);
    let run = delta(Test::new().agent("agent", &agent_yaml(&js, extra)), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .run()
        .code(code);
    let files = only_run(&run.path().join("ws"));
    (run, files)
}

#[test]
fn an_api_key_the_model_sends_to_a_server_is_masked_in_every_record() {
    let arguments = format!(r#"{{"message": "{API_KEY}"}}"#);
    let script = script(&[&[("everything__echo", &arguments)]]);
    let (run, files) = run_script(&script, "", 0);
    let result = &results(&files)[0];
    assert_eq!(result["observation_content"], "Echo: [REDACTED]");
    let record = files
        .dir
        .join("io/tool_executions")
        .join(result["execution_ref"].as_str().expect("ref"));
    for file in ["request.json", "result.json"] {
        let text = std::fs::read_to_string(record.join(file)).expect("record");
        assert!(text.contains("[REDACTED]"), "{file}: {text}");
    }
    assert_no_secret(run.path());
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn an_unknown_tool_name_is_an_error_observation_and_the_run_goes_on() {
    let script = script(&[
        &[("everything__nope", "{}")],
        &[("everything__echo", r#"{"message": "still here"}"#)],
    ]);
    let (run, files) = run_script(&script, "    tools: [echo]\n", 0);
    let results = results(&files);
    assert_eq!(results[0]["status"], "ERROR");
    assert_eq!(
        results[0]["observation_content"],
        "Error: there is no tool named 'everything__nope'. Available tools: everything__echo, \
         ask_human. Call one of these instead."
    );
    assert_eq!(results[1]["status"], "SUCCESS");
    assert_eq!(results[1]["observation_content"], "Echo: still here");
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn invalid_arguments_are_an_error_observation_and_the_run_goes_on() {
    let script = script(&[
        &[("everything__echo", r#"{"text": 42}"#)],
        &[("everything__echo", r#"{"message": "fixed"}"#)],
    ]);
    let (run, files) = run_script(&script, "", 0);
    let results = results(&files);
    assert_eq!(results[0]["status"], "ERROR");
    let text = results[0]["observation_content"].as_str().expect("text");
    assert!(text.starts_with("Error: "), "{text}");
    assert!(
        text.contains("message"),
        "names the missing argument: {text}"
    );
    assert_eq!(results[1]["observation_content"], "Echo: fixed");
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn a_tool_that_reports_an_error_is_an_error_observation() {
    let script = script(&[&[(
        "everything__gzip-file-as-resource",
        r#"{"name": "x.gz", "data": "ftp://localhost/x"}"#,
    )]]);
    let (run, files) = run_script(&script, "", 0);
    let results = results(&files);
    assert_eq!(results[0]["status"], "ERROR");
    let text = results[0]["observation_content"].as_str().expect("text");
    assert!(
        text.starts_with("Error: the tool reported an error: ")
            && text.contains("Unsupported URL protocol"),
        "{text}"
    );
    let dir = format!(
        "io/tool_executions/{}",
        results[0]["execution_ref"].as_str().expect("ref")
    );
    assert_eq!(files.read(&format!("{dir}/exit_code.txt")), "tool error\n");
    let result: Value =
        serde_json::from_str(&files.read(&format!("{dir}/result.json"))).expect("JSON");
    assert_eq!(result["isError"], true);
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn a_call_that_outlasts_timeout_ms_is_an_error_observation_and_the_server_serves_on() {
    let script = script(&[
        &[(
            "everything__trigger-long-running-operation",
            r#"{"duration": 30, "steps": 1}"#,
        )],
        &[("everything__echo", r#"{"message": "after the timeout"}"#)],
    ]);
    let (run, files) = run_script(&script, "    timeout_ms: 1000\n", 0);
    let results = results(&files);
    assert_eq!(results[0]["status"], "ERROR");
    assert_eq!(
        results[0]["observation_content"],
        "Error: MCP server 'everything' did not answer the call to \
         'trigger-long-running-operation' within 1000 ms; the call was abandoned and its \
         effects are unknown."
    );
    assert_eq!(results[1]["observation_content"], "Echo: after the timeout");
    assert_eq!(
        server_groups(&run.path().join("ws")).len(),
        1,
        "not restarted"
    );
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn a_server_killed_mid_call_is_an_error_observation_and_restarts_for_the_next_call() {
    let (_mock, _test, child, workspace) =
        run_into_a_long_call(&[("everything__echo", r#"{"message": "back again"}"#)]);
    let pgid = server_groups(&workspace)[0];
    killpg(Pid::from_raw(pgid), Signal::SIGKILL).expect("kill the server's group");
    let output = child.wait_with_output().expect("wait for delta");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let files = only_run(&workspace);
    let results = results(&files);
    assert_eq!(results[0]["status"], "ERROR");
    let text = results[0]["observation_content"].as_str().expect("text");
    assert!(
        text.starts_with(
            "Error: MCP server 'everything' stopped during the call to \
             'trigger-long-running-operation' (killed by SIGKILL)"
        ) && text.ends_with("It will be restarted for the next call."),
        "{text}"
    );
    assert_eq!(results[1]["status"], "SUCCESS");
    assert_eq!(results[1]["observation_content"], "Echo: back again");
    assert_eq!(server_groups(&workspace).len(), 2, "restarted once");
    assert_no_server_left(&workspace);
}

/// A run of `agent` (with `env`) that must fail at start: exit 126, each of `says` on
/// stderr, and no LLM call made.
fn run_failing_at_start(agent: &str, env: &[(&str, &str)], says: &[&str]) -> Run {
    let mock = mock("steps:\n  - message: {content: never asked}\n");
    let test = env.iter().fold(
        delta(Test::new().agent("agent", agent), &mock),
        |test, (key, value)| test.env(key, value),
    );
    let run = says.iter().fold(
        test.args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
            .run()
            .code(126),
        |run, text| run.stderr_has(text),
    );
    assert!(mock.requests().is_empty(), "no LLM call was made");
    run
}

#[test]
fn a_command_that_does_not_exist_fails_the_run_at_start_with_126() {
    let agent = "name: ghost\nllm: {model: test-model}\nmcp_servers:\n  ghost:\n    command: [definitely-not-a-program-e2e]\n";
    let run = run_failing_at_start(
        agent,
        &[],
        &[
            "MCP server 'ghost' (",
            "cannot run 'definitely-not-a-program-e2e'",
            "is 'definitely-not-a-program-e2e' installed and on PATH",
        ],
    );
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    assert_eq!(files.metadata()["error"]["type"], "ConfigError");
    assert_eq!(files.types(), ["RUN_START", "RUN_END"]);
}

#[test]
fn a_server_that_never_answers_the_handshake_fails_the_run_at_start_with_126() {
    let agent = "name: mute\nllm: {model: test-model}\nmcp_servers:\n  mute:\n    command: [sh, -c, 'echo $$ > \"${CWD}/server.pids\"; exec sleep 300']\n    startup_timeout_ms: 500\n";
    let run = run_failing_at_start(
        agent,
        &[],
        &[
            "MCP server 'mute' (",
            "did not complete the MCP handshake within 500 ms",
            "raise `startup_timeout_ms`",
        ],
    );
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn no_server_is_left_after_a_failed_run() {
    let (run, files) = run_script("steps:\n  - error: {status: 400}\n", "", 1);
    assert_eq!(files.metadata()["status"], "FAILED");
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn no_server_is_left_after_the_budget_is_spent() {
    let js = server_js();
    let mock = mock(&script(&[&[("everything__echo", r#"{"message": "one"}"#)]]));
    let run = delta(Test::new().agent("agent", &agent_yaml(&js, "")), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "go",
            "--max-iterations",
            "1",
        ])
        .run()
        .code(1);
    let files = only_run(&run.path().join("ws"));
    assert_eq!(files.metadata()["status"], "INTERRUPTED");
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn no_server_is_left_while_waiting_for_a_human_and_continue_starts_it_again() {
    let js = server_js();
    let script = "mode: by_conversation\nsteps:\n  - message:\n      tool_calls:\n        - {name: ask_human, arguments: {prompt: \"Say something\"}}\n  - message:\n      tool_calls:\n        - {name: everything__echo, arguments: {message: \"after the pause\"}}\n  - message: {content: done}\n";
    let mock = mock(script);
    let test = delta(Test::new().agent("agent", &agent_yaml(&js, "")), &mock);
    let run = test
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .run()
        .code(101);
    let workspace = run.path().join("ws");
    assert_no_server_left(&workspace);
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws", "-m", "hello"])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    let results = results(&files);
    assert_eq!(
        results.last().expect("a result")["observation_content"],
        "Echo: after the pause"
    );
    assert_eq!(
        server_groups(&workspace).len(),
        2,
        "started again by continue"
    );
    assert_no_server_left(&workspace);
}

/// Starts `delta run` (run id `r1`, workspace `ws`) on a minute-long call of the server,
/// to be followed by the calls `then` (if any), and returns once the long call is
/// journaled: the model, the test, the engine and the workspace.
fn run_into_a_long_call(then: &[(&str, &str)]) -> (MockServer, Test, std::process::Child, PathBuf) {
    let js = server_js();
    let long: &[(&str, &str)] = &[(
        "everything__trigger-long-running-operation",
        r#"{"duration": 60, "steps": 1}"#,
    )];
    let steps = if then.is_empty() {
        vec![long]
    } else {
        vec![long, then]
    };
    let mock = mock(&script(&steps));
    let test = delta(Test::new().agent("agent", &agent_yaml(&js, "")), &mock).args([
        "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
    ]);
    let child = test.spawn();
    let workspace = test.path().join("ws");
    let journal = workspace.join(".delta/r1/journal.jsonl");
    wait_until("the long call to start", || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("ACTION_REQUEST"))
    });
    (mock, test, child, workspace)
}

#[test]
fn sigterm_during_a_call_stops_the_server_and_interrupts_the_run() {
    let (_mock, _test, child, workspace) = run_into_a_long_call(&[]);
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    kill(pid, Signal::SIGTERM).expect("signal delta");
    let output = child.wait_with_output().expect("wait for delta");
    assert_eq!(output.status.code(), Some(130));
    let files = only_run(&workspace);
    assert_consistent(&files, "INTERRUPTED");
    assert_no_server_left(&workspace);
}

/// A process killed when the test ends, however it ends.
struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// server-everything in streamable-HTTP mode behind `bearer-proxy.mjs`, which answers
/// 401 unless the request carries `Authorization: Bearer <token>`. Returns both processes
/// and the proxy's `/mcp` URL.
fn http_server(js: &Path, token: &str) -> (Background, Background, String) {
    use std::io::BufRead as _;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let upstream = Background(
        std::process::Command::new("node")
            .arg(js)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start server-everything over HTTP"),
    );
    wait_until("the HTTP server to listen", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let mut proxy = Background(
        std::process::Command::new("node")
            .arg(Path::new(ROOT).join("tests/mcp-server/bearer-proxy.mjs"))
            .env("MCP_EXPECTED_TOKEN", token)
            .env("MCP_UPSTREAM_PORT", port.to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the bearer proxy"),
    );
    let stdout = proxy.0.stdout.take().expect("proxy stdout");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the proxy's port");
    let url = format!("http://127.0.0.1:{}/mcp", line.trim());
    (upstream, proxy, url)
}

const BEARER_CANARY: &str = "mcp-bearer-canary-7d41f0c2";
const HEADER_CANARY: &str = "mcp-header-canary-51be9a03";

fn http_agent(url: &str) -> String {
    format!(
        "name: over-http\nllm: {{model: test-model}}\nmcp_servers:\n  web:\n    url: {url}\n    \
         bearer_token_env: MCP_TEST_TOKEN\n    headers: {{X-Trace: MCP_TEST_HEADER}}\n    \
         tools: [echo, get-structured-content]\n"
    )
}

#[test]
fn a_streamable_http_server_is_called_with_a_bearer_token_that_no_file_holds() {
    let js = server_js();
    let (_upstream, _proxy, url) = http_server(&js, BEARER_CANARY);
    let script = script(&[&[
        ("web__echo", r#"{"message": "over http"}"#),
        ("web__get-structured-content", r#"{"location": "New York"}"#),
    ]]);
    let mock = mock(&script);
    let run = delta(Test::new().agent("agent", &http_agent(&url)), &mock)
        .env("MCP_TEST_TOKEN", BEARER_CANARY)
        .env("MCP_TEST_HEADER", HEADER_CANARY)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let results = results(&files);
    assert_eq!(results[0]["status"], "SUCCESS");
    assert_eq!(results[0]["observation_content"], "Echo: over http");
    assert_eq!(results[1]["status"], "SUCCESS");
    assert_eq!(requests(&files)[0]["resolved_command"], "mcp:web/echo");
    assert!(!run.stderr().contains(BEARER_CANARY));
    assert_in_no_file(run.path(), BEARER_CANARY);
    assert_in_no_file(run.path(), HEADER_CANARY);
    assert_no_secret(run.path());
}

#[test]
fn a_wrong_bearer_token_fails_the_run_at_start_with_126() {
    let js = server_js();
    let (_upstream, _proxy, url) = http_server(&js, BEARER_CANARY);
    let run = run_failing_at_start(
        &http_agent(&url),
        &[
            ("MCP_TEST_TOKEN", "mcp-wrong-token-canary"),
            ("MCP_TEST_HEADER", HEADER_CANARY),
        ],
        &["MCP server 'web' ("],
    );
    assert!(!run.stderr().contains("mcp-wrong-token-canary"));
    assert_in_no_file(run.path(), "mcp-wrong-token-canary");
}

#[test]
fn a_missing_token_variable_fails_the_run_at_start_naming_it() {
    run_failing_at_start(
        &http_agent("http://127.0.0.1:9/mcp"),
        &[],
        &[
            "needs the environment variable MCP_TEST_HEADER (header X-Trace), which is not set",
            "export MCP_TEST_HEADER before the run",
        ],
    );
}

#[test]
fn hooks_fire_around_mcp_calls_and_a_pre_tool_hook_can_skip_one() {
    let js = server_js();
    let script = script(&[&[
        ("everything__echo", r#"{"message": "forbidden words"}"#),
        ("everything__echo", r#"{"message": "kind words"}"#),
    ]]);
    let mock = mock(&script);
    let block = r#"io="$DELTA_HOOK_IO_PATH"; if grep -q forbidden "${io}input/payload.dat"; then printf '%s' '{"skip": true, "observation": "Blocked by policy."}' > "${io}output/control.json"; fi"#;
    let hooks = format!(
        "pre_tool_execution:\n  command: [sh, -c, {}]\npost_tool_execution:\n  command: [sh, -c, 'cat \"${{DELTA_HOOK_IO_PATH}}input/payload.dat\" >> \"${{CWD}}/post.log\"; echo >> \"${{CWD}}/post.log\"']\n",
        serde_json::to_string(block).expect("string")
    );
    let test = Test::new()
        .agent("agent", &agent_yaml(&js, ""))
        .file("agent/hooks.yaml", &hooks);
    let run = delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let results = results(&files);
    assert_eq!(results[0]["status"], "ERROR");
    assert_eq!(results[0]["observation_content"], "Blocked by policy.");
    let skipped = files
        .dir
        .join("io/tool_executions")
        .join(results[0]["execution_ref"].as_str().expect("ref"));
    assert!(!skipped.exists(), "nothing was called for the skipped call");
    assert_eq!(results[1]["observation_content"], "Echo: kind words");
    // The post-tool hook saw both calls, each with its MCP "command".
    let post = run.read("ws/post.log");
    assert_eq!(post.matches("mcp:everything/echo").count(), 2, "{post}");
    assert!(post.contains("Echo: kind words"), "{post}");
    assert_no_server_left(&run.path().join("ws"));
}

#[test]
fn a_server_left_by_a_killed_engine_is_killed_when_the_run_is_continued() {
    let (mock, test, mut child, workspace) = run_into_a_long_call(&[]);
    child.kill().expect("kill -9 delta");
    child.wait().expect("reap delta");
    let pgid = server_groups(&workspace)[0];
    // server-everything does not exit when its stdin closes mid-call.
    assert!(!group_is_gone(pgid), "the server outlived the engine");
    let run = delta(Test::new(), &mock)
        .current_dir(test.path())
        .args(["continue", "--run-id", "r1", "-w", "ws"])
        .run()
        .code(0);
    assert!(
        run.stderr()
            .contains("MCP server 'everything' (process group")
            && run
                .stderr()
                .contains("was left running by an engine that did not stop it; killed"),
        "{}",
        run.stderr()
    );
    assert_no_server_left(&workspace);
}

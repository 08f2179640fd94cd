//! MCP servers at the edges (issue 31): an answer over the message limit ends the call at
//! once with its size and the limit (it used to be dropped while the call waited out its
//! timeout), and a name the model would get twice (a command tool's, or a tool a server
//! lists twice) is offered once, with a warning. The server is a few lines of Python
//! speaking MCP's stdio JSON-RPC, written by each test: no SDK, nothing to install.

use std::time::Duration;

use rstest::rstest;
use serde_json::Value;

use crate::support::bounded::{finish_within, start};
use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, run_files};

/// Far below the calls' `timeout_ms` (60 s): a call that waits it out fails the test.
const GUARD: Duration = Duration::from_secs(30);

/// Tools `echo` (says `echo: TEXT`) and `big` (a text of `bytes` x's); with `--twice`,
/// each listed twice (the second time with another description).
const SERVER: &str = r#"
import json, sys
schema = {"type": "object", "properties": {"text": {"type": "string"}, "bytes": {"type": "integer"}}}
tools = [{"name": name, "description": name + " tool", "inputSchema": schema} for name in ("echo", "big")]
if "--twice" in sys.argv:
    tools += [{"name": tool["name"], "description": "again", "inputSchema": schema} for tool in tools]
def answer(message):
    """The reply to a request (None for a notification)."""
    if "id" not in message:
        return None
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    method = message.get("method")
    if method == "initialize":
        reply["result"] = {"protocolVersion": message["params"]["protocolVersion"],
                           "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}
    elif method == "tools/list":
        reply["result"] = {"tools": tools}
    elif method == "tools/call":
        arguments = message["params"].get("arguments") or {}
        if message["params"]["name"] == "big":
            text = "x" * arguments["bytes"]
        else:
            text = "echo: " + arguments.get("text", "")
        reply["result"] = {"content": [{"type": "text", "text": text}]}
    else:
        reply["error"] = {"code": -32601, "message": "unknown method"}
    return reply
if __name__ == "__main__":
    for line in sys.stdin:
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
"#;

/// An agent with the Python server `py` (`server_args` after the script) and `tools`
/// (agent.yaml lines, indented by 2).
fn agent(test: Test, server_args: &str, tools: &str) -> Test {
    test.file("server.py", SERVER).agent(
        "agent",
        &format!(
            "name: edges\nllm: {{model: gpt-4o-mini}}\ntools:\n{tools}mcp_servers:\n  py:\n    command: [python3, '${{AGENT_HOME}}/../server.py'{server_args}]\n    timeout_ms: 60000\n"
        ),
    )
}

fn observations(workspace: &std::path::Path) -> Vec<Value> {
    run_files(workspace, "r")
        .journal()
        .into_iter()
        .filter(|event| event["type"] == "ACTION_RESULT")
        .map(|event| event["payload"].clone())
        .collect()
}

#[rstest]
#[case::just_over(16 * 1024 * 1024)]
#[case::forty_mib(40 * 1024 * 1024)]
fn an_answer_over_the_limit_ends_the_call_at_once_with_its_size(#[case] bytes: usize) {
    let model = mock(&format!(
        "steps:\n  - message: {{tool_calls: [{{name: py__big, arguments: {{bytes: {bytes}}}}}]}}\n  - message: {{tool_calls: [{{name: py__echo, arguments: {{text: still here}}}}]}}\n  - message: {{content: done}}\n"
    ));
    let test = agent(delta(Test::new(), &model), "", "  []\n").args([
        "run", "--agent", "agent", "-w", "ws", "--run-id", "r", "-m", "Go.",
    ]);
    let ended = finish_within(start(test.command()), GUARD, "a run calling a tool");
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let workspace = test.path().join("ws");
    assert_consistent(&run_files(&workspace, "r"), "COMPLETED");
    let results = observations(&workspace);
    let first = results[0]["observation_content"].as_str().unwrap();
    let prefix = "Error: MCP server 'py' answered the call to 'big' with a message of ";
    assert!(first.starts_with(prefix), "{first}");
    let size: usize = first[prefix.len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(size > bytes, "the size of the whole message: {size}");
    assert!(
        first.ends_with(
            " bytes, over the limit of 16777216 bytes (16 MiB); the answer was dropped. Ask \
             the tool for less at a time (a page, a range, a summary)."
        ),
        "{first}"
    );
    assert_eq!(results[0]["status"], "ERROR");
    let record = run_files(&workspace, "r")
        .dir
        .join("io/tool_executions")
        .join(results[0]["execution_ref"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(record.join("exit_code.txt")).unwrap(),
        "too large\n"
    );
    // The server serves on: the next call is answered.
    assert_eq!(results[1]["observation_content"], "echo: still here");
    assert_eq!(results[1]["status"], "SUCCESS");
}

/// An answer under the limit is an ordinary result.
#[test]
fn an_answer_under_the_limit_is_a_result() {
    let model = mock(
        "steps:\n  - message: {tool_calls: [{name: py__big, arguments: {bytes: 1048576}}]}\n  - message: {content: done}\n",
    );
    let test = agent(delta(Test::new(), &model), "", "  []\n").args([
        "run", "--agent", "agent", "-w", "ws", "--run-id", "r", "-m", "Go.",
    ]);
    let ended = finish_within(start(test.command()), GUARD, "a run calling a tool");
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let results = observations(&test.path().join("ws"));
    assert_eq!(results[0]["status"], "SUCCESS");
}

const COMMAND_ECHO: &str =
    "  - name: py__echo\n    description: the command tool\n    exec: \"echo command ${text}\"\n";

#[rstest]
#[case::a_command_tool_of_the_same_name(
    "",
    COMMAND_ECHO,
    &["tool 'echo' is not offered: `py__echo` is the name of a command tool of the agent, which wins; rename one of them"]
)]
#[case::a_tool_listed_twice(
    ", --twice",
    "  []\n",
    &["the server lists tool 'echo' more than once", "the server lists tool 'big' more than once"]
)]
#[case::both(
    ", --twice",
    COMMAND_ECHO,
    &["`py__echo` is the name of a command tool", "the server lists tool 'big' more than once"]
)]
fn a_name_is_offered_to_the_model_once_with_a_warning(
    #[case] server_args: &str,
    #[case] tools: &str,
    #[case] warnings: &[&str],
) {
    let model = mock(
        "steps:\n  - message: {tool_calls: [{name: py__echo, arguments: {text: hi}}]}\n  - message: {content: done}\n",
    );
    let test = agent(delta(Test::new(), &model), server_args, tools).args([
        "run", "--agent", "agent", "-w", "ws", "--run-id", "r", "-m", "Go.",
    ]);
    let ended = finish_within(start(test.command()), GUARD, "a run calling a tool");
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    for warning in warnings {
        assert!(
            ended.stderr.contains(warning),
            "{warning}:\n{}",
            ended.stderr
        );
    }
    for request in model.requests() {
        let tools = request["tools"].as_array().unwrap();
        let mut names: Vec<&str> = tools
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap())
            .collect();
        let echo: Vec<&Value> = tools
            .iter()
            .filter(|tool| tool["function"]["name"] == "py__echo")
            .collect();
        assert_eq!(echo.len(), 1, "{names:?}");
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a name sent twice: {names:?}");
        let expected = if tools_has_command(tools) {
            "the command tool"
        } else {
            "echo tool"
        };
        assert_eq!(echo[0]["function"]["description"], expected);
    }
    let results = observations(&test.path().join("ws"));
    let expected = if tools.contains("py__echo") {
        "command hi\n"
    } else {
        "echo: hi"
    };
    assert_eq!(results[0]["observation_content"], expected);
}

fn tools_has_command(tools: &[Value]) -> bool {
    tools
        .iter()
        .any(|tool| tool["function"]["description"] == "the command tool")
}

/// The same tools (`SERVER`'s `answer`, imported from beside it) over streamable HTTP,
/// answering with plain JSON bodies; prints its port.
const HTTP_SERVER: &str = r#"
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import answer
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_POST(self):
        reply = answer(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
        if reply is None:
            self.send_response(202)
            self.end_headers()
            return
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except BrokenPipeError:
            pass
    def do_DELETE(self):
        self.send_response(200)
        self.end_headers()
server = HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// A child process killed when the test ends, however it ends.
struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Over streamable HTTP the client refuses a body over the same 16 MiB: the call ends at
/// once saying so (it used to say the server had stopped), and the server is not
/// restarted for it.
#[test]
fn an_http_answer_over_the_limit_ends_the_call_at_once() {
    let test = Test::new()
        .file("server.py", SERVER)
        .file("http_server.py", HTTP_SERVER);
    let mut child = std::process::Command::new("python3")
        .arg(test.path().join("http_server.py"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut port,
    )
    .expect("the port");
    let _server = Background(child);
    let model = mock(
        "steps:\n  - message: {tool_calls: [{name: py__big, arguments: {bytes: 17825792}}]}\n  - message: {content: done}\n",
    );
    let test = delta(test, &model)
        .agent(
            "agent",
            &format!(
                "name: edges\nllm: {{model: gpt-4o-mini}}\nmcp_servers:\n  py:\n    url: http://127.0.0.1:{}/mcp\n    timeout_ms: 60000\n",
                port.trim()
            ),
        )
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r", "-m", "Go.",
        ]);
    let ended = finish_within(start(test.command()), GUARD, "a run calling a tool");
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let results = observations(&test.path().join("ws"));
    assert_eq!(
        results[0]["observation_content"],
        "Error: MCP server 'py' answered the call to 'big' with a message over the limit of \
         16777216 bytes (16 MiB); the answer was dropped. Ask the tool for less at a time (a \
         page, a range, a summary)."
    );
}

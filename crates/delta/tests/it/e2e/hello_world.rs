//! The example agent end to end: journal, audit records, requests, metadata, stdout.

use serde_json::{Value, json};

use crate::support::harness::Test;
use crate::support::run::{
    HELLO_SCRIPT, HELLO_TASK, assert_consistent, assert_no_secret, delta, hello_world, mock,
    only_run,
};
use crate::support::snapshot::snapshot;

#[test]
fn three_step_hello_world_run_completes_with_a_complete_audit_trail() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(0);
    snapshot!(run.stdout(), @r#"
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    {
      "files": [
        "hello.txt"
      ],
      "lines": 2,
      "summary": "Created hello.txt with a two-line greeting."
    }
    -------------------
    "#);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");

    assert_eq!(
        files.types(),
        [
            "RUN_START",
            "THOUGHT",
            "ACTION_REQUEST",
            "ACTION_RESULT",
            "THOUGHT",
            "ACTION_REQUEST",
            "ACTION_RESULT",
            "ACTION_REQUEST",
            "ACTION_RESULT",
            "THOUGHT",
            "RUN_END",
        ]
    );
    let journal = files.journal();
    assert_eq!(journal[0]["payload"]["task"], HELLO_TASK);

    // The tools really ran in the workspace, and io/ holds their complete output.
    let greeting = "Hello, world!\nWritten by a Delta Engine agent.\n";
    assert_eq!(run.read("ws/hello.txt"), greeting);
    let results: Vec<&Value> = journal
        .iter()
        .filter(|e| e["type"] == "ACTION_RESULT")
        .map(|e| &e["payload"])
        .collect();
    let outputs: Vec<String> = results
        .iter()
        .map(|result| {
            assert_eq!(result["status"], "SUCCESS");
            assert_eq!(result["exit_code"], 0);
            let dir = format!(
                "io/tool_executions/{}",
                result["execution_ref"].as_str().expect("ref")
            );
            assert_eq!(files.read(&format!("{dir}/exit_code.txt")), "0\n");
            assert!(
                files
                    .read(&format!("{dir}/duration_ms.txt"))
                    .trim()
                    .parse::<u64>()
                    .is_ok()
            );
            files.read(&format!("{dir}/stdout.log"))
        })
        .collect();
    assert_eq!(outputs, ["", greeting, "2\n"]);
    let requests: Vec<&Value> = journal
        .iter()
        .filter(|e| e["type"] == "ACTION_REQUEST")
        .map(|e| &e["payload"])
        .collect();
    assert_eq!(
        requests[1]["tool_args"],
        json!({"path": "hello.txt", "content": greeting})
    );
    assert_eq!(
        requests[1]["resolved_command"],
        "tee hello.txt < (stdin: 47 bytes)"
    );
    assert_eq!(
        files.read(&format!(
            "io/tool_executions/{}/command.txt",
            requests[2]["action_id"].as_str().expect("id")
        )),
        "sh -c 'wc -l < \"$1\"' -- hello.txt\n"
    );

    // Request k carries every observation of the iterations before it.
    let bodies = files.requests();
    assert_eq!(bodies.len(), 3);
    let thoughts: Vec<usize> = journal
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "THOUGHT")
        .map(|(i, _)| i)
        .collect();
    for (k, body) in bodies.iter().enumerate() {
        let messages = body["messages"].as_array().expect("messages");
        assert_eq!(messages[0]["role"], "system");
        assert!(
            messages[0]["content"]
                .as_str()
                .expect("text")
                .starts_with("# Context Block: system_prompt\n\n")
        );
        assert_eq!(messages[1], json!({"role": "user", "content": HELLO_TASK}));
        let tool_messages: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
        let earlier: Vec<&Value> = journal[..thoughts[k]]
            .iter()
            .filter(|e| e["type"] == "ACTION_RESULT")
            .map(|e| &e["payload"])
            .collect();
        assert_eq!(tool_messages.len(), earlier.len(), "request {k}");
        for (message, result) in tool_messages.iter().zip(&earlier) {
            assert_eq!(message["tool_call_id"], result["tool_call_id"]);
            assert_eq!(message["content"], result["observation_content"]);
        }
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["function"]["name"].as_str().expect("name"))
            .collect();
        assert_eq!(
            tools,
            [
                "list_files",
                "read_file",
                "write_file",
                "count_lines",
                "ask_human"
            ]
        );
        assert_eq!(body["model"], "gpt-4o-mini");
    }
    // The bytes sent are the bytes recorded.
    assert_eq!(mock.requests(), bodies);

    let metadata = files.metadata();
    assert_eq!(metadata["iterations"], 3);
    assert_eq!(metadata["task"], HELLO_TASK);
    assert_eq!(
        metadata["result"],
        json!({"summary": "Created hello.txt with a two-line greeting.", "files": ["hello.txt"], "lines": 2})
    );
    assert_eq!(metadata["usage"]["input_tokens"], 310 + 402 + 520);
    assert_eq!(metadata["usage"]["output_tokens"], 24 + 61 + 30);
    assert_eq!(metadata["usage"]["model_usage"]["gpt-4o-mini"]["calls"], 3);
    let cost = metadata["usage"]["total_cost_usd"].as_f64().expect("cost");
    assert!(cost > 0.0, "gpt-4o-mini has a list price: {cost}");
    assert_eq!(metadata["pid"].as_u64().map(|p| p > 0), Some(true));
    assert_eq!(metadata["process_name"], "delta");
    // Seed 002 §7.2: the time the owning process started the run.
    assert!(metadata["start_time"].is_string(), "{metadata:#}");
    assert_eq!(metadata["start_time"], metadata["created_at"]);
    assert_no_secret(run.path());
}

#[test]
fn the_live_stream_goes_to_stderr_and_verbose_adds_engine_detail() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK, "-v",
        ])
        .run()
        .code(0);
    // Not a terminal: no colour, no spinner; stdout is the result only.
    snapshot!(run);
}

#[test]
fn without_verbose_engine_detail_stays_in_engine_log() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(0);
    snapshot!(run.stderr(), @r#"
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    Let me see what is in the workspace first.
    → list_files {"directory":"."}
      ✓ exit 0 · [DURATION]
      │ (no output)

    ── iteration 2/30 ──
    The workspace is empty. I'll create hello.txt and check it.
    → write_file {"content":"Hello, world!\nWritten by a Delta Engine agent.\n","path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ Hello, world!
      │ Written by a Delta Engine agent.
    → count_lines {"path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ 2

    ── iteration 3/30 ──
    {"summary": "Created hello.txt with a two-line greeting.", "files": ["hello.txt"], "lines": 2}

    ✔ COMPLETED after 3 iterations
    "#);
    let files = only_run(&run.path().join("ws"));
    snapshot!(files.read("engine.log"));
}

const TOOLS_AGENT: &str = r#"
name: tools
llm:
  model: test-model
tools:
  - name: fail
    exec: "sh -c 'echo partial; echo broken >&2; exit 3'"
  - name: flood
    exec: "seq 1 ${count}"
  - name: slow
    exec: "sleep 5"
    timeout_ms: 200
  - name: missing_program
    exec: "delta-e2e-no-such-program"
"#;

const TOOLS_SCRIPT: &str = r#"
steps:
  - message:
      tool_calls:
        - {name: fail}
        - {name: flood, arguments: {count: "20000"}}
        - {name: slow}
        - {name: missing_program}
        - {name: no_such_tool}
        - {name: flood, arguments: '{"count": '}
        - {name: flood, arguments: {lines: "3"}}
  - message:
      content: "I saw every failure."
"#;

#[test]
fn tool_failures_are_observations_and_the_run_goes_on() {
    let mock = mock(TOOLS_SCRIPT);
    let run = delta(Test::new().agent("agent", TOOLS_AGENT), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "try everything",
        ])
        .run()
        .code(0);
    snapshot!(run.stdout(), @"
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    I saw every failure.
    -------------------
    ");
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let results: Vec<Value> = files
        .journal()
        .into_iter()
        .filter(|e| e["type"] == "ACTION_RESULT")
        .map(|e| e["payload"].clone())
        .collect();
    let summary: Vec<(&str, Option<i64>)> = results
        .iter()
        .map(|r| {
            (
                r["status"].as_str().expect("status"),
                r["exit_code"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("FAILED", Some(3)),
            ("SUCCESS", Some(0)),
            ("FAILED", None),
            ("ERROR", None),
            ("ERROR", None),
            ("ERROR", None),
            ("ERROR", None),
        ]
    );
    let observation = |i: usize| results[i]["observation_content"].as_str().expect("text");
    assert_eq!(observation(0), "partial\n[stderr]\nbroken\n[exit code: 3]");

    // Capped for the model, complete on disk.
    let flood = observation(1);
    assert!(flood.chars().count() <= 10_000, "{}", flood.chars().count());
    assert!(flood.starts_with("1\n2\n3\n"));
    assert!(flood.ends_with("19999\n20000\n"));
    let dir = format!(
        "io/tool_executions/{}",
        results[1]["execution_ref"].as_str().expect("ref")
    );
    // The marker line in the middle, whole (the numbers around it are checked above).
    let marker: Vec<&str> = flood.lines().filter(|l| l.starts_with("[...")).collect();
    assert_eq!(
        marker,
        [format!(
            "[... 99004 characters omitted; full output in {dir}/ ...]"
        )]
    );
    let full = files.read(&format!("{dir}/stdout.log"));
    assert_eq!(full.lines().count(), 20_000);

    assert_eq!(
        observation(2),
        "[timed out after 200 ms; process group killed]"
    );
    let slow_dir = format!(
        "io/tool_executions/{}",
        results[2]["execution_ref"].as_str().expect("ref")
    );
    assert_eq!(
        files.read(&format!("{slow_dir}/exit_code.txt")),
        "timeout\n"
    );
    assert!(
        observation(3).starts_with("Error: cannot run 'delta-e2e-no-such-program'"),
        "{}",
        observation(3)
    );
    assert_eq!(
        observation(4),
        "Error: there is no tool named 'no_such_tool'. Available tools: fail, flood, slow, \
         missing_program, ask_human. Call one of these instead."
    );
    assert!(
        observation(5).starts_with("Error: the arguments are not valid JSON"),
        "{}",
        observation(5)
    );
    assert!(
        observation(6).starts_with("Error: Unknown parameter 'lines' for tool 'flood'."),
        "{}",
        observation(6)
    );

    // Refused calls ran nothing, so they have no resolved command and no io/ directory.
    let requests: Vec<Value> = files
        .journal()
        .into_iter()
        .filter(|e| e["type"] == "ACTION_REQUEST")
        .map(|e| e["payload"].clone())
        .collect();
    assert_eq!(requests[4]["resolved_command"], Value::Null);
    assert_eq!(requests[5]["tool_args"], json!({}));
    let refused = files
        .dir
        .join("io/tool_executions")
        .join(results[4]["execution_ref"].as_str().expect("ref"));
    assert!(!refused.exists());

    // The model saw all seven answers, in order, right after its calls.
    let last = &mock.requests()[1];
    let tool_messages: Vec<&Value> = last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip_while(|m| m["role"] != "assistant")
        .skip(1)
        .collect();
    assert_eq!(tool_messages.len(), 7);
    assert!(tool_messages.iter().all(|m| m["role"] == "tool"));

    snapshot!(files.metadata()["usage"]["cost_note"], @r#""no price is known for model 'test-model', so its cost is counted as 0; set llm.pricing (input_per_million, output_per_million) in agent.yaml to estimate it""#);
}

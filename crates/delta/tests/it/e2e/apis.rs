//! The three model APIs (issue 27): OpenAI chat completions, Anthropic Messages and OpenAI
//! Responses, each against mock-llm's strict profile of its service. The same runs
//! complete through all three, streamed and not; thinking signatures and encrypted
//! reasoning go back exactly (and a run whose journal lost or altered one is refused, as
//! the services refuse it); the request of every step begins with the previous one's
//! conversation, also across a `continue` after kill -9; cached tokens reach every place a
//! run's usage is shown, and the estimated cost is the cost of the reported usage.

use std::fs;
use std::process::Stdio;

use mock_llm::{MockProfile, MockServer, ModelApi, ReadScript as _, Script, ServerOptions};
use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{
    HELLO_SCRIPT, HELLO_TASK, RunFiles, assert_consistent, delta, hello_world, only_run, run_files,
    wait_until,
};

/// The strict profile of each API's service.
fn profile(api: ModelApi) -> MockProfile {
    MockProfile::of_api(api)
}

/// mock-llm serving `script` as `api`'s service, its prompt cache on when `cache`.
fn serve(script: &str, api: ModelApi, cache: bool) -> MockServer {
    MockServer::start_with(
        Script::from_yaml_str(script).expect("valid mock script"),
        ServerOptions {
            strict: Some(profile(api)),
            prompt_cache: cache,
            ..ServerOptions::default()
        },
    )
    .expect("start mock-llm")
}

/// The route each API's requests go to.
fn route(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Chat => "/v1/chat/completions",
        ModelApi::Anthropic => "/v1/messages",
        ModelApi::Responses => "/v1/responses",
    }
}

/// An agent with one `note` tool asking `model` through `api`, with `extra` lines under
/// `llm:`.
fn agent(api: ModelApi, model: &str, extra: &str) -> String {
    format!(
        "name: {api}-agent\nllm:\n  model: {model}\n  api: {api}\n{extra}tools:\n  - name: \
         note\n    description: Take a note.\n    exec: \"echo ${{text}}\"\n"
    )
}

/// The `llm:` lines that turn each API's reasoning on, in its own shape.
fn thinking(api: ModelApi) -> (&'static str, &'static str) {
    match api {
        ModelApi::Chat => ("deepseek-reasoner", ""),
        ModelApi::Anthropic => (
            "claude-sonnet-4-5",
            "  max_tokens: 4096\n  thinking: {type: enabled, budget_tokens: 2048}\n",
        ),
        ModelApi::Responses => ("gpt-5", "  reasoning: {effort: low, summary: auto}\n"),
    }
}

/// Two iterations with reasoning (the second with two calls at once), then the answer.
/// The call ids are given so that every API's journal names the same calls.
const REASONING_SCRIPT: &str = r#"
mode: by_conversation
steps:
  - message:
      content: "Taking a first note."
      reasoning: "The user wants notes; start with one."
      tool_calls: [{id: call_a, name: note, arguments: {text: first}}]
      usage: {prompt_tokens: 200, completion_tokens: 20}
  - message:
      reasoning: "Two more, at once."
      tool_calls:
        - {id: call_b, name: note, arguments: {text: second}}
        - {id: call_c, name: note, arguments: {text: third}}
      usage: {prompt_tokens: 300, completion_tokens: 30}
  - message:
      content: "Took three notes."
      reasoning: "Done."
      usage: {prompt_tokens: 400, completion_tokens: 10}
      repeat: 2
"#;

/// `delta run` of `agent_yaml` against `mock` in workspace `ws`, plus `extra` arguments.
fn run_agent(agent_yaml: &str, mock: &MockServer, extra: &[&str]) -> crate::support::harness::Run {
    delta(Test::new().agent("agent", agent_yaml), mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Take notes."])
        .args(extra.iter().copied())
        .run()
}

#[test]
fn hello_world_completes_a_tool_calling_run_through_each_api_streamed_and_not() {
    for api in ModelApi::ALL {
        for stream in [false, true] {
            let mock = serve(HELLO_SCRIPT, api, false);
            let test = hello_world(Test::new());
            let yaml = test.path().join("agent/agent.yaml");
            let text = fs::read_to_string(&yaml).expect("agent.yaml");
            let llm = format!("  model: gpt-4o-mini\n  api: {api}\n  stream: {stream}\n");
            fs::write(&yaml, text.replace("  model: gpt-4o-mini\n", &llm)).expect("write");
            let run = delta(test, &mock)
                .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
                .run();
            let run = run.code(0);
            let files = only_run(&run.path().join("ws"));
            assert_consistent(&files, "COMPLETED");
            let results = files
                .types()
                .iter()
                .filter(|t| *t == "ACTION_RESULT")
                .count();
            assert_eq!(results, 3, "{api} stream {stream}");
            assert!(run.path().join("ws/hello.txt").is_file(), "{api}");
            let paths: Vec<String> = mock.recorded().into_iter().map(|r| r.path).collect();
            assert_eq!(paths, vec![route(api).to_owned(); 3], "{api}");
            if stream {
                let invocation = files.journal()[1]["payload"]["llm_invocation_ref"]
                    .as_str()
                    .expect("ref")
                    .to_owned();
                assert!(
                    files
                        .dir
                        .join(format!("io/invocations/{invocation}/response.sse"))
                        .is_file(),
                    "{api}: the stream is kept"
                );
            }
        }
    }
}

#[test]
fn agents_with_reasoning_complete_tool_loops_through_each_api_streamed_and_not() {
    for api in ModelApi::ALL {
        for stream in [false, true] {
            let mock = serve(REASONING_SCRIPT, api, false);
            let (model, lines) = thinking(api);
            let lines = format!("{lines}  stream: {stream}\n");
            let run = run_agent(&agent(api, model, &lines), &mock, &[]);
            let run = run.code(0);
            let files = only_run(&run.path().join("ws"));
            assert_consistent(&files, "COMPLETED");
            let thoughts: Vec<Value> = files
                .journal()
                .into_iter()
                .filter(|event| event["type"] == "THOUGHT")
                .collect();
            assert_eq!(thoughts.len(), 3, "{api}");
            assert_eq!(
                thoughts[0]["payload"]["reasoning"], "The user wants notes; start with one.",
                "{api}"
            );
            assert_eq!(
                thoughts[1]["payload"]["tool_calls"]
                    .as_array()
                    .map(Vec::len),
                Some(2)
            );
            match api {
                ModelApi::Chat => assert!(thoughts[0]["payload"].get("passback").is_none()),
                ModelApi::Anthropic | ModelApi::Responses => {
                    assert_eq!(thoughts[0]["payload"]["passback"]["api"], api.name());
                }
            }
        }
    }
}

/// The first `field` value of a block or item of `kind` anywhere in `value`.
fn find<'a>(value: &'a Value, kind: &str, field: &str) -> Option<&'a Value> {
    match value {
        Value::Object(fields) => {
            if fields.get("type").and_then(Value::as_str) == Some(kind)
                && let Some(found) = fields.get(field)
            {
                return Some(found);
            }
            fields.values().find_map(|value| find(value, kind, field))
        }
        Value::Array(items) => items.iter().find_map(|value| find(value, kind, field)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => None,
    }
}

/// The signature (Anthropic) or encrypted content (Responses) of the first answer, as the
/// answer carried it and as the second request carried it back: equal strings.
#[test]
fn signatures_and_encrypted_reasoning_go_back_byte_for_byte() {
    for (api, kind, field) in [
        (ModelApi::Anthropic, "thinking", "signature"),
        (ModelApi::Responses, "reasoning", "encrypted_content"),
    ] {
        let mock = serve(REASONING_SCRIPT, api, false);
        let (model, lines) = thinking(api);
        let run = run_agent(&agent(api, model, lines), &mock, &[]);
        let run = run.code(0);
        let files = only_run(&run.path().join("ws"));
        let first = files.journal()[1]["payload"]["llm_invocation_ref"]
            .as_str()
            .expect("ref")
            .to_owned();
        let answer: Value =
            serde_json::from_str(&files.read(&format!("io/invocations/{first}/response.json")))
                .expect("JSON");
        let issued = find(&answer, kind, field)
            .and_then(Value::as_str)
            .expect("issued");
        assert!(issued.len() > 190, "{api}: mock-llm issues long ones");
        let second = &files.requests()[1];
        let returned = find(second, kind, field)
            .and_then(Value::as_str)
            .expect("returned");
        assert_eq!(returned.as_bytes(), issued.as_bytes(), "{api}");
    }
}

/// A run stopped by its iteration budget after its first tool call, its journal edited by
/// `edit`, then continued: the strict mock refuses the request as the service would, and
/// the continue fails naming the service's error.
fn continue_after(api: ModelApi, edit: impl Fn(&mut Value)) -> crate::support::harness::Run {
    let mock = serve(REASONING_SCRIPT, api, false);
    let (model, lines) = thinking(api);
    let run = run_agent(
        &agent(api, model, lines),
        &mock,
        &["--max-iterations", "1", "--run-id", "r"],
    );
    let run = run.code(1);
    let journal_path = run.path().join("ws/.delta/r/journal.jsonl");
    let text = fs::read_to_string(&journal_path).expect("journal");
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).expect("JSON");
            if event["type"] == "THOUGHT" {
                edit(&mut event["payload"]);
            }
            event.to_string()
        })
        .collect();
    fs::write(&journal_path, lines.join("\n") + "\n").expect("write journal");
    delta(run.then(), &mock)
        .args(["continue", "--run-id", "r", "-w", "ws"])
        .run()
}

// Issue 27, acceptance 2: a thinking block or reasoning item dropped or altered between
// the answer and the next request is refused, by the services and so by the strict mock.
#[test]
fn an_altered_or_dropped_signature_or_reasoning_item_is_refused() {
    let altered = continue_after(ModelApi::Anthropic, |payload| {
        let thinking = &mut payload["passback"]["items"][0]["thinking"];
        *thinking = format!("{}!", thinking.as_str().expect("text")).into();
    });
    let altered = altered.code(1);
    assert!(
        altered
            .stderr()
            .contains("Invalid `signature` in `thinking` block"),
        "{altered}"
    );
    let dropped = continue_after(ModelApi::Anthropic, |payload| {
        payload.as_object_mut().expect("payload").remove("passback");
    });
    let dropped = dropped.code(1);
    assert!(
        dropped
            .stderr()
            .contains("Expected `thinking` or `redacted_thinking`, but found `text`"),
        "{dropped}"
    );
    let tampered = continue_after(ModelApi::Responses, |payload| {
        let content = &mut payload["passback"]["items"][0]["encrypted_content"];
        *content = content
            .as_str()
            .expect("content")
            .replacen('0', "1", 1)
            .into();
    });
    let tampered = tampered.code(1);
    assert!(
        tampered.stderr().contains("could not be verified"),
        "{tampered}"
    );
    let lost = continue_after(ModelApi::Responses, |payload| {
        let items = payload["passback"]["items"].as_array_mut().expect("items");
        items.retain(|item| item["type"] != "reasoning");
    });
    let lost = lost.code(1);
    assert!(
        lost.stderr()
            .contains("was provided without its required 'reasoning' item"),
        "{lost}"
    );
}

/// A journal line made comparable across APIs: ids, times and the recorded wire items
/// (THOUGHT's `passback`) masked.
fn comparable(event: &Value) -> Value {
    let mut event = event.clone();
    event["timestamp"] = "<time>".into();
    let payload = &mut event["payload"];
    if let Some(fields) = payload.as_object_mut() {
        fields.remove("passback");
        for key in [
            "run_id",
            "agent_ref",
            "llm_invocation_ref",
            "action_id",
            "execution_ref",
        ] {
            if fields.contains_key(key) {
                fields.insert(key.to_owned(), "<id>".into());
            }
        }
    }
    event
}

// Issue 27, acceptance 1: one script, three APIs, one journal.
#[test]
fn the_same_script_gives_equal_journals_through_the_three_apis() {
    let journals: Vec<Vec<Value>> = ModelApi::ALL
        .into_iter()
        .map(|api| {
            let mock = serve(REASONING_SCRIPT, api, false);
            let (model, lines) = thinking(api);
            let run = run_agent(&agent(api, model, lines), &mock, &["--run-id", "same"]);
            let run = run.code(0);
            run_files(&run.path().join("ws"), "same")
                .journal()
                .iter()
                .map(comparable)
                .collect()
        })
        .collect();
    assert_eq!(
        journals[0].len(),
        11,
        "RUN_START, 3 THOUGHTs, 3 tool calls and their results, RUN_END"
    );
    assert_eq!(journals[0], journals[1], "chat and anthropic");
    assert_eq!(journals[0], journals[2], "chat and responses");
}

/// A long system prompt, so that the providers cache (Anthropic: at least 1,024 tokens).
fn long_prompt() -> String {
    "You take notes for the user, one at a time, and keep them short and exact. ".repeat(80)
}

/// An agent whose system prompt is [`long_prompt`].
fn cached_agent(test: Test, api: ModelApi, model: &str) -> Test {
    test.agent("agent", &agent(api, model, ""))
        .file("agent/system_prompt.md", &long_prompt())
}

/// `steps` tool calls, then the answer; by conversation, so a continued run gets the step
/// its journal has reached.
fn note_script(steps: usize) -> String {
    format!(
        "mode: by_conversation\nsteps:\n  - message:\n      content: Noting.\n      \
         tool_calls: [{{name: note, arguments: {{text: again}}}}]\n      usage: \
         {{completion_tokens: 12}}\n      repeat: {steps}\n  - message: {{content: done, usage: \
         {{completion_tokens: 4}}, repeat: 2}}\n"
    )
}

/// The units a provider's prefix cache compares, in order: the tools, the system prompt
/// or instructions, then each message (chat), input item (Responses) or content block
/// with its role (Anthropic), each serialized without its `cache_control`.
fn prefix_units(api: ModelApi, body: &Value) -> Vec<String> {
    let mut units = vec![body["tools"].to_string()];
    let strip = |value: &Value| {
        let mut value = value.clone();
        strip_cache_control(&mut value);
        value.to_string()
    };
    match api {
        ModelApi::Chat => {
            units.extend(
                body["messages"]
                    .as_array()
                    .expect("messages")
                    .iter()
                    .map(strip),
            );
        }
        ModelApi::Responses => {
            units.push(body["instructions"].to_string());
            units.extend(body["input"].as_array().expect("input").iter().map(strip));
        }
        ModelApi::Anthropic => {
            units.push(strip(&body["system"]));
            for message in body["messages"].as_array().expect("messages") {
                for block in message["content"].as_array().expect("blocks") {
                    units.push(format!("{}:{}", message["role"], strip(block)));
                }
            }
        }
    }
    units
}

fn strip_cache_control(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("cache_control");
            fields.values_mut().for_each(strip_cache_control);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

// Issue 27: the request of step n+1 begins with exactly step n's conversation, so that a
// provider's prefix cache hits, over 50 steps and across a `continue` after kill -9.
#[test]
fn each_request_begins_with_the_previous_conversation_over_50_steps_and_a_kill_9() {
    const STEPS: usize = 50;
    for api in ModelApi::ALL {
        let mock = serve(&note_script(STEPS), api, false);
        let (model, _) = thinking(api);
        let test = delta(cached_agent(Test::new(), api, model), &mock);
        let mut first = test
            .command()
            .args(["run", "--agent", "agent", "-w", "ws", "-m", "Take notes."])
            .args(["--run-id", "long", "--max-iterations", "100"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start delta");
        wait_until("twenty requests", || mock.recorded().len() >= 20);
        first.kill().expect("kill -9");
        first.wait().expect("reap");
        let continued = test
            .command()
            .args([
                "continue",
                "--run-id",
                "long",
                "-w",
                "ws",
                "--max-iterations",
                "100",
            ])
            .stdin(Stdio::null())
            .output()
            .expect("continue");
        assert!(continued.status.success(), "{api}: {continued:?}");
        let files = run_files(&test.path().join("ws"), "long");
        // The killed process ended without its RUN_END; the continue's takeover wrote one
        // for it, so the journal has two.
        assert_eq!(files.metadata()["status"], "COMPLETED", "{api}");
        let journal = files.journal();
        assert_eq!(
            journal.last().map(|end| end["payload"]["status"].clone()),
            Some("COMPLETED".into())
        );
        let requests: Vec<Vec<String>> = mock
            .recorded()
            .iter()
            .map(|request| prefix_units(api, &request.body))
            .collect();
        assert!(requests.len() > STEPS, "{api}: {} requests", requests.len());
        for (n, pair) in requests.windows(2).enumerate() {
            let (before, after) = (&pair[0], &pair[1]);
            assert!(
                after.len() >= before.len() && after[..before.len()] == before[..],
                "{api}: request {} does not begin with request {}'s conversation: {:?} \
                 then {:?}",
                n + 2,
                n + 1,
                before.last(),
                after.get(before.len() - 1)
            );
        }
    }
}

/// A run of `steps` tool calls through `api` against the caching mock.
fn cached_run(
    api: ModelApi,
    model: &str,
    steps: usize,
    extra: &[&str],
) -> (crate::support::harness::Run, MockServer) {
    let mock = serve(&note_script(steps), api, true);
    let run = delta(cached_agent(Test::new(), api, model), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "Take notes.",
            "--run-id",
            "cached",
        ])
        .args(extra.iter().copied())
        .run();
    (run, mock)
}

/// The raw usage of each answer of `files`, from its `response.json`.
fn raw_usages(files: &RunFiles) -> Vec<Value> {
    files
        .journal()
        .iter()
        .filter(|event| event["type"] == "THOUGHT")
        .map(|event| {
            let id = event["payload"]["llm_invocation_ref"]
                .as_str()
                .expect("ref");
            let body: Value =
                serde_json::from_str(&files.read(&format!("io/invocations/{id}/response.json")))
                    .expect("JSON");
            body["usage"].clone()
        })
        .collect()
}

/// (prompt, cached) tokens of one answer's raw usage, as `api` reports them.
fn prompt_and_cached(api: ModelApi, usage: &Value) -> (u64, u64) {
    let count = |path: &[&str]| {
        path.iter()
            .try_fold(usage, |value, key| value.get(*key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    match api {
        ModelApi::Chat => (
            count(&["prompt_tokens"]),
            count(&["prompt_tokens_details", "cached_tokens"]),
        ),
        ModelApi::Responses => (
            count(&["input_tokens"]),
            count(&["input_tokens_details", "cached_tokens"]),
        ),
        ModelApi::Anthropic => {
            let read = count(&["cache_read_input_tokens"]);
            let written = count(&["cache_creation_input_tokens"]);
            (count(&["input_tokens"]) + read + written, read)
        }
    }
}

/// The cost of one answer's raw usage at the list prices, computed here from each API's
/// own fields (Anthropic: uncached input, cache reads at 0.1× and writes at 1.25× the
/// input price; OpenAI: cached input part of the input, at the cached price).
fn cost_of(api: ModelApi, usage: &Value) -> f64 {
    let count = |path: &[&str]| {
        path.iter()
            .try_fold(usage, |value, key| value.get(*key))
            .and_then(Value::as_u64)
            .unwrap_or(0) as f64
    };
    let per_million = 1_000_000.0;
    match api {
        // claude-sonnet-4-5: $3 in, $15 out.
        ModelApi::Anthropic => {
            (count(&["input_tokens"]) * 3.0
                + count(&["cache_read_input_tokens"]) * 0.3
                + count(&["cache_creation_input_tokens"]) * 3.75
                + count(&["output_tokens"]) * 15.0)
                / per_million
        }
        // gpt-5: $1.25 in, $0.125 cached, $10 out.
        ModelApi::Responses => {
            let cached = count(&["input_tokens_details", "cached_tokens"]);
            ((count(&["input_tokens"]) - cached) * 1.25
                + cached * 0.125
                + count(&["output_tokens"]) * 10.0)
                / per_million
        }
        ModelApi::Chat => {
            let cached = count(&["prompt_tokens_details", "cached_tokens"]);
            ((count(&["prompt_tokens"]) - cached) * 1.25
                + cached * 0.125
                + count(&["completion_tokens"]) * 10.0)
                / per_million
        }
    }
}

/// The model each API's figures are taken with (list prices known).
fn priced_model(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Anthropic => "claude-sonnet-4-5",
        ModelApi::Chat | ModelApi::Responses => "gpt-5",
    }
}

// Issue 27, the figures: over a 30-step run, the share of input tokens read from the
// provider's cache from step 3 on is at least 90% (Anthropic, Responses), and the
// estimated cost is the cost of the usage the mock reported, to the cent's hundredth.
#[test]
fn thirty_steps_hit_the_cache_and_cost_what_the_reported_usage_costs() {
    for api in ModelApi::ALL {
        let (run, _mock) = cached_run(api, priced_model(api), 29, &[]);
        let run = run.code(0);
        let files = run_files(&run.path().join("ws"), "cached");
        let usages = raw_usages(&files);
        assert_eq!(usages.len(), 30, "{api}");
        let (prompt, cached) = usages[2..]
            .iter()
            .map(|usage| prompt_and_cached(api, usage))
            .fold((0, 0), |(p, c), (prompt, cached)| (p + prompt, c + cached));
        let share = cached as f64 / prompt as f64;
        if api != ModelApi::Chat {
            assert!(
                share >= 0.9,
                "{api}: {share:.3} of the input read from the cache"
            );
        }
        let expected: f64 = usages.iter().map(|usage| cost_of(api, usage)).sum();
        let metadata = files.metadata();
        let estimated = metadata["usage"]["total_cost_usd"].as_f64().expect("cost");
        assert!(
            (estimated - expected).abs() < 0.0001,
            "{api}: estimated {estimated}, the reported usage costs {expected}"
        );
        assert_eq!(
            metadata["usage"]["cached_input_tokens"]
                .as_u64()
                .map(|c| c > 0),
            Some(true),
            "{api}"
        );
    }
}

// Issue 27, acceptance 3: cached tokens in the RunResult, metadata, the jsonl stream, the
// view and both exports.
#[test]
fn cached_tokens_reach_the_result_the_stream_the_view_and_the_exports() {
    let api = ModelApi::Anthropic;
    let (run, _mock) = cached_run(api, "claude-sonnet-4-5", 3, &["--format", "jsonl"]);
    let run = run.code(0);
    let lines: Vec<Value> = run
        .stdout()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let cached_in_thoughts: u64 = lines
        .iter()
        .filter(|line| line["type"] == "THOUGHT")
        .map(|line| {
            line["payload"]["usage"]["cached_input_tokens"]
                .as_u64()
                .expect("usage")
        })
        .sum();
    assert!(cached_in_thoughts > 0);
    let result = lines.last().expect("the RESULT line");
    assert_eq!(result["type"], "RESULT");
    let usage = &result["metrics"]["usage"];
    assert_eq!(
        usage["cached_input_tokens"].as_u64(),
        Some(cached_in_thoughts),
        "{result}"
    );
    assert!(usage["cache_write_tokens"].as_u64() > Some(0));
    let metadata = run_files(&run.path().join("ws"), "cached").metadata();
    assert_eq!(
        metadata["usage"]["cached_input_tokens"].as_u64(),
        Some(cached_in_thoughts)
    );
    let test = run.then();
    let view = test
        .cmd()
        .args(["view", "--run-id", "cached", "-w", "ws", "-o", "page.html"])
        .output()
        .expect("view");
    assert!(view.status.success(), "{view:?}");
    let page = fs::read_to_string(test.path().join("page.html")).expect("page");
    assert!(
        page.contains(&format!("({cached_in_thoughts} cached)")),
        "the summary shows it"
    );
    let atif = test
        .cmd()
        .args([
            "export", "--run-id", "cached", "-w", "ws", "--format", "atif",
        ])
        .output()
        .expect("atif");
    let atif: Value = serde_json::from_slice(&atif.stdout).expect("ATIF JSON");
    assert_eq!(
        atif["final_metrics"]["total_cached_tokens"].as_u64(),
        Some(cached_in_thoughts)
    );
    let otlp = test
        .cmd()
        .args([
            "export", "--run-id", "cached", "-w", "ws", "--format", "otlp",
        ])
        .output()
        .expect("otlp");
    let otlp = String::from_utf8_lossy(&otlp.stdout);
    assert!(
        otlp.contains("gen_ai.usage.cache_read.input_tokens"),
        "{otlp}"
    );
    assert!(otlp.contains("\"anthropic\""), "the provider is named");
    // The request's content blocks as the conventions' parts: the tool results sent back
    // in user turns are tool messages.
    assert!(
        otlp.contains("gen_ai.input.messages") && otlp.contains("tool_call_response"),
        "{otlp}"
    );
}

// Issue 27, acceptance 3: batch summaries count cached tokens too.
#[test]
fn a_batch_summary_counts_cached_tokens() {
    let api = ModelApi::Responses;
    let mock = serve(&note_script(3), api, true);
    let test = delta(cached_agent(Test::new(), api, "gpt-5"), &mock).file(
        "tasks.jsonl",
        "{\"id\": \"one\", \"message\": \"Take notes.\"}\n{\"id\": \"two\", \"message\": \"Take notes.\"}\n",
    );
    let run = test
        .args([
            "batch",
            "run",
            "tasks.jsonl",
            "--agent",
            "agent",
            "--out",
            "out",
            "--jobs",
            "1",
        ])
        .run();
    let run = run.code(0);
    let summary: Value = serde_json::from_str(&run.read("out/summary.json")).expect("summary.json");
    let results = run.read("out/results.jsonl");
    let cached: u64 = results
        .lines()
        .map(|line| {
            let result: Value = serde_json::from_str(line).expect("JSON");
            result["usage"]["cached_input_tokens"].as_u64().unwrap_or(0)
        })
        .sum();
    assert!(cached > 0, "{results}");
    assert_eq!(
        summary["cached_input_tokens"].as_u64(),
        Some(cached),
        "{summary}"
    );
}

/// `delta replay` with nothing listening: every answer from the recording.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

// Issue 27, acceptance 4: runs recorded against each API replay identical and fork.
#[test]
fn runs_recorded_against_each_api_replay_identical_and_fork() {
    for api in ModelApi::ALL {
        let mock = serve(REASONING_SCRIPT, api, false);
        let (model, lines) = thinking(api);
        let run = run_agent(&agent(api, model, lines), &mock, &["--run-id", "parent"]);
        let run = run.code(0);
        let replay = run
            .then()
            .env("DELTA_BASE_URL", &closed_port())
            .args([
                "replay",
                "--run-id",
                "parent",
                "-w",
                "ws",
                "--new-run-id",
                "again",
            ])
            .run();
        let replay = replay.code(0);
        assert!(
            replay.stdout().starts_with("identical\n"),
            "{api}: {replay}"
        );
        // A fork after the first THOUGHT's tool result continues with the model: its
        // request carries the first answer's reasoning back.
        let forked = delta(replay.then(), &mock)
            .args([
                "fork",
                "--run-id",
                "parent",
                "--at",
                "4",
                "--new-run-id",
                "child",
                "-w",
                "ws",
            ])
            .run();
        let forked = forked.code(0);
        let child = run_files(&forked.path().join("ws"), "child");
        assert_consistent(&child, "COMPLETED");
        if api != ModelApi::Chat {
            let parent = run_files(&forked.path().join("ws"), "parent");
            assert_eq!(
                child.journal()[1]["payload"]["passback"],
                parent.journal()[1]["payload"]["passback"],
                "{api}"
            );
        }
    }
}

// Issue 27: Anthropic's "prompt is too long: N tokens > M maximum" and the Responses API's
// context-length error are context overflows like chat's: the run goes on with its oldest
// iterations left out and completes.
#[test]
fn a_run_longer_than_the_window_completes_through_anthropic_and_responses() {
    const STEPS: usize = 40;
    for api in [ModelApi::Anthropic, ModelApi::Responses] {
        let script = format!(
            "steps:\n  - message: {{tool_calls: [{{name: count}}], repeat: {}}}\n  - message: \
             {{content: done}}\n",
            STEPS - 1
        );
        let mock = MockServer::start_with(
            Script::from_yaml_str(&script).expect("script"),
            ServerOptions {
                strict: Some(profile(api)),
                context_window: Some(mock_llm::ContextWindow {
                    tokens: 4000,
                    shape: mock_llm::OverflowShape::OpenAi,
                }),
                ..ServerOptions::default()
            },
        )
        .expect("mock");
        let yaml = format!(
            "name: counter\nllm:\n  model: m\n  api: {api}\ntools:\n  - name: count\n    \
             description: Print 1 to 400.\n    exec: \"seq 1 400\"\n"
        );
        let run = delta(Test::new().agent("agent", &yaml), &mock)
            .args([
                "run",
                "--agent",
                "agent",
                "-w",
                "ws",
                "-m",
                "Count, many times.",
            ])
            .args(["--max-iterations", "100"])
            .run()
            .code(0);
        let files = only_run(&run.path().join("ws"));
        assert_consistent(&files, "COMPLETED");
        let refused = mock.recorded().iter().filter(|r| r.step.is_none()).count();
        assert!(refused > 0, "{api}: the window was never reached");
        let log = files.read("engine.log");
        assert!(log.contains("does not fit the context window"), "{api}");
    }
}

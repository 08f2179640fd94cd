//! Runs against mock-llm's strict profiles: every request the engine sends is one that
//! OpenAI, llama-cpp-python, vLLM, Ollama and DeepSeek accept (issue 11), and Anthropic's
//! Messages and OpenAI's Responses APIs through their own wire (issue 27).

use mock_llm::{MockProfile, MockServer};

use crate::support::harness::Test;
use crate::support::run::{
    HELLO_SCRIPT, HELLO_TASK, assert_consistent, delta, hello_world, only_run, strict_mock,
};

/// An agent with one `exec:` tool and no `tool_choice`: what a new user writes.
const ONE_TOOL_AGENT: &str = "name: one-tool\nllm:\n  model: m\ntools:\n  - name: say\n    description: Print a word.\n    exec: \"echo ${word}\"\n";

/// `delta run` of the agent `agent_yaml` against `mock`, in workspace `ws`.
fn run_agent(agent_yaml: &str, mock: &MockServer, task: &str) -> Test {
    delta(Test::new().agent("agent", agent_yaml), mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", task])
}

/// `agent_yaml` set up for `profile`'s service: the API it speaks, and for DeepSeek the
/// reasoning it wants back; the lines go after `model_line`.
fn for_profile(agent_yaml: &str, model_line: &str, profile: MockProfile) -> String {
    let lines = match profile {
        MockProfile::Anthropic => "  api: anthropic\n",
        MockProfile::Responses => "  api: responses\n",
        MockProfile::Deepseek => "  reasoning_passback: [reasoning_content]\n",
        MockProfile::Openai
        | MockProfile::LlamaCpp
        | MockProfile::Vllm
        | MockProfile::Ollama
        | MockProfile::Lenient => "",
    };
    agent_yaml.replace(model_line, &format!("{model_line}{lines}"))
}

const ONE_TOOL_SCRIPT: &str = "steps:\n  - message:\n      tool_calls: [{name: say, arguments: {word: hello}}]\n  - message: {content: said it}\n";

#[test]
fn hello_world_completes_a_tool_calling_run_against_every_strict_profile() {
    for profile in MockProfile::STRICT {
        let mock = strict_mock(HELLO_SCRIPT, profile);
        let example = std::fs::read_to_string(
            std::path::Path::new(crate::support::harness::ROOT)
                .join("examples/hello-world/agent.yaml"),
        )
        .expect("the example's agent.yaml");
        let agent = for_profile(&example, "  model: gpt-4o-mini\n", profile);
        let run = delta(
            hello_world(Test::new()).file("agent/agent.yaml", &agent),
            &mock,
        )
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(0);
        let files = only_run(&run.path().join("ws"));
        assert_consistent(&files, "COMPLETED");
        let actions = files
            .types()
            .iter()
            .filter(|t| *t == "ACTION_RESULT")
            .count();
        assert_eq!(actions, 3, "{profile}");
        assert!(run.path().join("ws/hello.txt").is_file(), "{profile}");
    }
}

// Issue 11, defect 1: llama-cpp-python (chatml-function-calling) shows the tools to the
// model only when the request has `tool_choice`; before the fix the model never called a
// tool and the run "completed" without doing anything.
#[test]
fn an_agent_without_tool_choice_calls_its_tool_on_every_strict_profile() {
    for profile in MockProfile::STRICT {
        let mock = strict_mock(ONE_TOOL_SCRIPT, profile);
        let agent = for_profile(ONE_TOOL_AGENT, "  model: m\n", profile);
        let run = run_agent(&agent, &mock, "say hello").run().code(0);
        assert!(run.stdout().contains("said it"), "{}", run.stdout());
        let files = only_run(&run.path().join("ws"));
        assert_consistent(&files, "COMPLETED");
        let journal = files.journal();
        let result = journal
            .iter()
            .find(|event| event["type"] == "ACTION_RESULT")
            .unwrap_or_else(|| panic!("{profile}: no tool was called"));
        assert_eq!(
            result["payload"]["observation_content"], "hello\n",
            "{profile}"
        );
        let requests = files.requests();
        let auto = if profile == MockProfile::Anthropic {
            serde_json::json!({"type": "auto"})
        } else {
            serde_json::json!("auto")
        };
        assert_eq!(requests[0]["tool_choice"], auto, "{profile}");
    }
}

// Issue 11, defect 2: with `tool_choice: auto` set by hand, the second request carried
// `"content": null` beside the tool calls; llama-cpp-python answered HTTP 500 five times
// and the run ended FAILED.
#[test]
fn a_silent_tool_call_is_sent_back_with_string_content_and_llama_cpp_accepts_it() {
    let agent = ONE_TOOL_AGENT.replace("  model: m\n", "  model: m\n  tool_choice: auto\n");
    let mock = strict_mock(ONE_TOOL_SCRIPT, MockProfile::LlamaCpp);
    let run = run_agent(&agent, &mock, "say hello").run().code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let second = &files.requests()[1];
    assert_eq!(second["messages"][2]["role"], "assistant");
    assert_eq!(second["messages"][2]["content"], "");
    assert_eq!(
        mock.recorded().iter().filter(|r| r.step.is_none()).count(),
        0
    );
}

// Issue 12, item 16, and issue 11: a response whose `usage` is missing or malformed is a
// good completion with unknown usage, never 0 tokens.
#[test]
fn missing_or_malformed_usage_keeps_the_completion_and_marks_usage_incomplete() {
    let script = r#"steps:
  - malformed:
      body: {choices: [{index: 0, finish_reason: tool_calls, message: {role: assistant, content: "",
             tool_calls: [{id: c1, type: function, function: {name: say, arguments: '{"word": "hi"}'}}]}}],
             usage: "n/a"}
  - malformed:
      body: {choices: [{index: 0, finish_reason: stop, message: {role: assistant, content: done}}]}
"#;
    let mock = strict_mock(script, MockProfile::Openai);
    let run = run_agent(ONE_TOOL_AGENT, &mock, "say hi").run().code(0);
    assert!(run.stdout().contains("done"), "{}", run.stdout());
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let usage = &files.metadata()["usage"];
    assert_eq!(usage["incomplete"], true, "{usage:#}");
    assert_eq!(usage["input_tokens"], 0);
    assert_eq!(usage["model_usage"]["m"]["calls"], 2);
    assert_eq!(usage["model_usage"]["m"]["calls_without_usage"], 2);
    for thought in files.journal().iter().filter(|e| e["type"] == "THOUGHT") {
        let id = thought["payload"]["llm_invocation_ref"].as_str().unwrap();
        let record: serde_json::Value =
            serde_json::from_str(&files.read(&format!("io/invocations/{id}/metadata.json")))
                .unwrap();
        assert_eq!(record["token_usage"], serde_json::Value::Null);
        assert_eq!(record["status"], "SUCCESS");
    }
}

// Issue 11: `finish_reason: "length"` is never a COMPLETED answer.
#[test]
fn a_final_answer_cut_by_the_token_limit_is_continued_and_a_second_cut_interrupts() {
    let agent = ONE_TOOL_AGENT.replace("  model: m\n", "  model: m\n  max_tokens: 16\n");
    let once = "steps:\n  - message: {content: 'The answer is', finish_reason: length}\n  - message: {content: 'The answer is 42.'}\n";
    let mock = strict_mock(once, MockProfile::Openai);
    let run = run_agent(&agent, &mock, "answer").run().code(0);
    assert!(
        run.stdout().contains("The answer is 42."),
        "{}",
        run.stdout()
    );
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    assert_eq!(
        files.types(),
        [
            "RUN_START",
            "THOUGHT",
            "SYSTEM_MESSAGE",
            "THOUGHT",
            "RUN_END"
        ]
    );
    let second = &files.requests()[1]["messages"];
    let last = &second[second.as_array().unwrap().len() - 1];
    assert_eq!(last["role"], "system");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("cut off by the token limit")
    );

    let twice = "steps:\n  - message: {content: 'The answer', finish_reason: length, repeat: 2}\n";
    let mock = strict_mock(twice, MockProfile::Openai);
    let run = run_agent(&agent, &mock, "answer").run().code(1);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "INTERRUPTED");
    let error = &files.metadata()["error"];
    assert_eq!(error["type"], "OutputTruncated");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("token limit (16)")
    );
    assert!(
        error["details"]
            .as_str()
            .unwrap()
            .contains("llm.max_tokens")
    );
}

#[test]
fn tool_arguments_cut_by_the_token_limit_get_an_observation_saying_so() {
    let script = "steps:\n  - message:\n      tool_calls: [{name: say, arguments: '{\"word\": \"hel'}]\n      finish_reason: length\n  - message: {content: done}\n";
    let mock = strict_mock(script, MockProfile::Openai);
    let run = run_agent(ONE_TOOL_AGENT, &mock, "say hello").run().code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let journal = files.journal();
    let result = journal
        .iter()
        .find(|event| event["type"] == "ACTION_RESULT")
        .unwrap();
    assert_eq!(result["payload"]["status"], "ERROR");
    assert!(
        result["payload"]["observation_content"]
            .as_str()
            .unwrap()
            .contains("cut off by the token limit"),
        "{result}"
    );
}

// Issue 11: reasoning models' `reasoning_content` (vLLM, DeepSeek, llama.cpp) or
// `reasoning` (Ollama, OpenRouter) is kept in the THOUGHT and shown with -v only.
#[test]
fn reasoning_fields_are_kept_in_the_thought_and_shown_with_verbose() {
    for (field, verbose) in [("reasoning_content", true), ("reasoning", false)] {
        let script = format!(
            "steps:\n  - malformed:\n      body: {{choices: [{{index: 0, finish_reason: stop, message: {{role: assistant, content: '42', {field}: 'six times seven'}}}}], usage: {{prompt_tokens: 3, completion_tokens: 1, total_tokens: 4}}}}\n"
        );
        let mock = strict_mock(&script, MockProfile::Ollama);
        let mut test = run_agent(ONE_TOOL_AGENT, &mock, "answer");
        if verbose {
            test = test.arg("-v");
        }
        let run = test.run().code(0);
        let files = only_run(&run.path().join("ws"));
        let thought = files
            .journal()
            .into_iter()
            .find(|event| event["type"] == "THOUGHT")
            .unwrap();
        assert_eq!(
            thought["payload"]["reasoning"], "six times seven",
            "{field}"
        );
        assert_eq!(
            run.stderr().contains("reasoning: six times seven"),
            verbose,
            "{field}"
        );
        // Never sent back to the model.
        assert!(
            !serde_json::to_string(&mock.requests())
                .unwrap()
                .contains("six times")
        );
    }
}

/// The `llm:` examples of docs/model-servers.md, each marked `<!-- tested: PROFILE -->`.
fn documented_examples() -> Vec<(MockProfile, String)> {
    let path = std::path::Path::new(crate::support::harness::ROOT).join("docs/model-servers.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut examples = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<!-- tested: ") {
        rest = &rest[at + "<!-- tested: ".len()..];
        let (name, after) = rest.split_once(" -->").unwrap();
        let block = after.trim_start().strip_prefix("```yaml\n").unwrap();
        let (yaml, _) = block.split_once("```").unwrap();
        examples.push((name.parse().unwrap(), yaml.to_owned()));
        rest = after;
    }
    examples
}

#[test]
fn the_examples_of_docs_model_servers_run_against_their_strict_profiles() {
    let examples = documented_examples();
    assert_eq!(examples.len(), 10, "one example per server family");
    for (profile, llm) in examples {
        let agent = format!(
            "name: documented\n{llm}tools:\n  - name: say\n    description: Print a word.\n    exec: \"echo ${{word}}\"\n"
        );
        let mock = strict_mock(ONE_TOOL_SCRIPT, profile);
        let run = run_agent(&agent, &mock, "say hello").run().code(0);
        assert!(run.stdout().contains("said it"), "{}", run.stdout());
        assert!(
            !run.stderr().contains("not a known request parameter"),
            "{profile}: {}",
            run.stderr()
        );
        let files = only_run(&run.path().join("ws"));
        assert_eq!(
            files
                .types()
                .iter()
                .filter(|t| *t == "ACTION_RESULT")
                .count(),
            1,
            "{profile}"
        );
    }
}

/// A journal without what differs between two runs of the same script: timestamps, ids
/// and paths.
fn comparable(journal: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    journal
        .into_iter()
        .map(|mut event| {
            event.as_object_mut().unwrap().remove("timestamp");
            let payload = event["payload"].as_object_mut().unwrap();
            for key in [
                "llm_invocation_ref",
                "action_id",
                "execution_ref",
                "run_id",
                "agent_ref",
            ] {
                payload.remove(key);
            }
            event
        })
        .collect()
}

// Issue 11: `llm.stream: true` reads server-sent events; the journal is the same as
// without streaming, io/ keeps the raw stream beside the assembled completion, and the
// usage comes from `stream_options.include_usage`.
#[test]
fn streamed_and_plain_runs_of_the_same_script_journal_the_same() {
    let mut journals = Vec::new();
    let mut usages = Vec::new();
    for stream in [false, true] {
        let mut test = hello_world(Test::new());
        if stream {
            let agent = std::fs::read_to_string(
                std::path::Path::new(crate::support::harness::ROOT)
                    .join("examples/hello-world/agent.yaml"),
            )
            .unwrap()
            .replace(
                "  model: gpt-4o-mini\n",
                "  model: gpt-4o-mini\n  stream: true\n",
            );
            test = test.file("agent/agent.yaml", &agent);
        }
        let mock = strict_mock(HELLO_SCRIPT, MockProfile::Openai);
        let run = delta(test, &mock)
            .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
            .run()
            .code(0);
        let files = only_run(&run.path().join("ws"));
        assert_consistent(&files, "COMPLETED");
        for request in mock.requests() {
            assert_eq!(request.get("stream").is_some(), stream);
            if stream {
                assert_eq!(
                    request["stream_options"],
                    serde_json::json!({"include_usage": true})
                );
            }
        }
        let journal = files.journal();
        for thought in journal.iter().filter(|e| e["type"] == "THOUGHT") {
            let id = thought["payload"]["llm_invocation_ref"].as_str().unwrap();
            let dir = files.dir.join(format!("io/invocations/{id}"));
            assert_eq!(dir.join("response.sse").is_file(), stream);
            let response: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("response.json")).unwrap())
                    .unwrap();
            assert_eq!(response["object"], "chat.completion");
        }
        journals.push(comparable(journal));
        usages.push(files.metadata()["usage"].clone());
    }
    assert_eq!(journals[0], journals[1]);
    assert_eq!(usages[0], usages[1]);
    assert_eq!(usages[1]["input_tokens"], 310 + 402 + 520);
}

// Issue 11: with `llm.stream: true` the terminal shows the model's text as it arrives.
// mock-llm sends the first half of the answer and holds the rest until `gate` exists, so
// the first half can only be on stderr now if the engine shows text before the answer is
// complete.
#[test]
fn streamed_text_is_shown_while_the_answer_is_still_arriving() {
    use std::io::Read as _;
    use std::sync::mpsc;
    use std::time::Duration;

    const TEXT: &str = "The first half arrives now, and the second half only when the gate opens.";
    let test = Test::new();
    let gate = test.path().join("gate");
    let script = format!(
        "steps:\n  - message:\n      content: {TEXT:?}\n      stream_hold_until: {:?}\n",
        gate.display().to_string()
    );
    let mock = strict_mock(&script, MockProfile::Openai);
    let agent = ONE_TOOL_AGENT.replace("  model: m\n", "  model: m\n  stream: true\n");
    let test = delta(test.agent("agent", &agent), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "talk"]);
    let mut child = test.spawn();
    let mut stderr = child.stderr.take().expect("piped stderr");
    let (sender, received) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buffer) {
            if sender.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let middle = TEXT
        .char_indices()
        .nth(TEXT.chars().count() / 2)
        .map(|(at, _)| at)
        .expect("a text of several characters");
    let (first, second) = TEXT.split_at(middle);
    // A space ending a piece is held back until text follows it.
    let first = first.trim_end();
    let mut shown = Vec::new();
    while !String::from_utf8_lossy(&shown).contains(first) {
        match received.recv_timeout(Duration::from_secs(60)) {
            Ok(bytes) => shown.extend(bytes),
            Err(_) => panic!(
                "the first half of the answer was not shown while the rest was held; stderr \
                 so far:\n{}",
                String::from_utf8_lossy(&shown)
            ),
        }
    }
    assert!(!String::from_utf8_lossy(&shown).contains(second.trim()));
    std::fs::write(&gate, "").unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    shown.extend(received.try_iter().flatten());
    assert_eq!(status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&shown).into_owned();
    assert_eq!(
        stderr.matches(TEXT).count(),
        1,
        "the text once, whole: {stderr}"
    );
    assert!(stderr.contains(&format!("\n{TEXT}\n")), "{stderr}");
}

//! Long runs and the model's context window (issue 20): a run whose conversation outgrows
//! the server's window goes on with its oldest iterations left out, and a configured
//! budget keeps every request within it from the start.

use mock_llm::{
    ContextWindow, MockServer, OverflowShape, ReadScript as _, RecordedRequest, Script,
    ServerOptions,
};
use rstest::rstest;
use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, only_run};

const SYSTEM_PROMPT: &str = "You count. Call `count` until told to stop.";
const TASK: &str = "Count to four hundred, sixty times over.";
const ITERATIONS: usize = 60;
/// The mock's window: about seven iterations of this agent's conversation.
const WINDOW: u64 = 4000;
const MARKER: &str = "earlier iteration(s) of this run are left out";

fn agent(test: Test, context_extra: &str) -> Test {
    test.file(
        "agent/agent.yaml",
        "name: counter\nllm: {model: mock-model}\ntools:\n  - name: count\n    description: Print 1 to 400.\n    exec: \"seq 1 400\"\n",
    )
    .file("agent/system_prompt.md", SYSTEM_PROMPT)
    .file(
        "agent/context.yaml",
        &format!(
            "{context_extra}sources:\n  - type: file\n    path: '${{AGENT_HOME}}/system_prompt.md'\n  - type: journal\n"
        ),
    )
}

/// 59 iterations calling `count`, then a final answer.
fn counting_mock(shape: OverflowShape) -> MockServer {
    let script = format!(
        "steps:\n  - message: {{tool_calls: [{{name: count}}], repeat: {}}}\n  - message: {{content: done}}\n",
        ITERATIONS - 1
    );
    MockServer::start_with(
        Script::from_yaml_str(&script).unwrap(),
        ServerOptions {
            context_window: Some(ContextWindow {
                tokens: WINDOW,
                shape,
            }),
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

fn messages(request: &RecordedRequest) -> &[Value] {
    request.body["messages"].as_array().unwrap()
}

/// Every answered request holds the system prompt, then the task, then (when iterations
/// were left out) the marker, and ends with the latest iteration: the tool result of the
/// step before it, right after the call it answers.
#[track_caller]
fn assert_answered_requests_are_whole(recorded: &[RecordedRequest]) {
    let answered: Vec<&RecordedRequest> = recorded.iter().filter(|r| r.step.is_some()).collect();
    assert_eq!(answered.len(), ITERATIONS);
    let mut marked = 0;
    for request in answered {
        let step = request.step.unwrap();
        let messages = messages(request);
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(messages[0]["content"], SYSTEM_PROMPT);
        assert_eq!(messages[1]["role"], "user");
        assert_eq!(messages[1]["content"], TASK);
        let rest = if messages.len() > 2
            && messages[2]["content"]
                .as_str()
                .unwrap_or("")
                .contains(MARKER)
        {
            marked += 1;
            &messages[3..]
        } else {
            &messages[2..]
        };
        if step == 0 {
            assert!(rest.is_empty(), "step 0: {rest:?}");
            continue;
        }
        // Complete iterations only: each assistant call directly followed by its result.
        assert_eq!(rest.len() % 2, 0, "step {step}");
        for pair in rest.chunks(2) {
            assert_eq!(pair[0]["role"], "assistant");
            assert_eq!(pair[1]["role"], "tool");
            assert_eq!(pair[1]["tool_call_id"], pair[0]["tool_calls"][0]["id"]);
        }
        let last = &rest[rest.len() - 1];
        assert_eq!(last["tool_call_id"], format!("call_{}_0", step - 1));
        // Nothing left out without the marker.
        if rest.len() / 2 < usize::try_from(step).unwrap() {
            assert!(
                messages[2]["content"].as_str().unwrap().contains(MARKER),
                "step {step}: iterations left out without the marker"
            );
        }
    }
    assert!(
        marked > 0,
        "no request needed the marker: the test proves nothing"
    );
}

#[rstest]
#[case::openai(OverflowShape::OpenAi)]
#[case::vllm(OverflowShape::Vllm)]
#[case::llama_cpp(OverflowShape::LlamaCpp)]
#[case::llama_cpp_legacy(OverflowShape::LlamaCppLegacy)]
fn a_run_longer_than_the_window_completes_without_a_budget(#[case] shape: OverflowShape) {
    let mock = counting_mock(shape);
    let run = delta(agent(Test::new(), ""), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", TASK, "-v"])
        .args(["--max-iterations", "60"])
        .run()
        .code(0)
        .stderr_has("rejected as too long for the model's context window")
        .stderr_has("oldest iteration(s)");
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let recorded = mock.recorded();
    let rejected = recorded.iter().filter(|r| r.step.is_none()).count();
    assert!(rejected >= 1, "the window was never reached");
    if shape != OverflowShape::LlamaCppLegacy {
        // The server said its window: one rejection teaches it for the rest of the run.
        assert_eq!(rejected, 1, "{shape}");
    }
    assert_answered_requests_are_whole(&recorded);
    // The journal itself keeps everything.
    let types = files.types();
    assert_eq!(types.iter().filter(|t| *t == "THOUGHT").count(), ITERATIONS);
    assert_eq!(
        types.iter().filter(|t| *t == "ACTION_RESULT").count(),
        ITERATIONS - 1
    );
}

#[test]
fn with_a_budget_no_request_is_ever_over_the_window() {
    let mock = counting_mock(OverflowShape::OpenAi);
    let run = delta(agent(Test::new(), "total_max_tokens: 3000\n"), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", TASK, "-v"])
        .args(["--max-iterations", "60"])
        .run()
        .code(0)
        .stderr_has("oldest iteration(s)");
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    // The last request's invocation record says what was left out of it.
    let journal = files.journal();
    let last = journal
        .iter()
        .rev()
        .find(|e| e["type"] == "THOUGHT")
        .unwrap();
    let id = last["payload"]["llm_invocation_ref"].as_str().unwrap();
    let record: Value =
        serde_json::from_str(&files.read(&format!("io/invocations/{id}/metadata.json"))).unwrap();
    let context = &record["context"];
    assert!(
        context["left_out_iterations"].as_u64().unwrap() > 50,
        "{context}"
    );
    assert_eq!(context["fits"], true);
    assert!(context["estimated_tokens"].as_u64() <= context["budget_tokens"].as_u64());
    let recorded = mock.recorded();
    assert!(
        recorded.iter().all(|r| r.step.is_some()),
        "a request was over the window"
    );
    assert_answered_requests_are_whole(&recorded);
    // Each request is within the budget by the mock's count too.
    for request in &recorded {
        let size = mock_llm::prompt_tokens(serde_json::to_vec(&request.body).unwrap().len());
        assert!(size <= 3000, "step {:?}: {size} tokens", request.step);
    }
}

fn failing_task_files(run: &crate::support::harness::Run) -> (Value, usize) {
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    let invocations = std::fs::read_dir(files.dir.join("io/invocations"))
        .map(|dir| dir.count())
        .unwrap_or(0);
    (files.metadata(), invocations)
}

#[test]
fn a_task_alone_over_the_window_fails_after_at_most_one_retry() {
    let mock = counting_mock(OverflowShape::LlamaCpp);
    let task = "count ".repeat(4000);
    let run = delta(agent(Test::new(), ""), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", &task])
        .run()
        .code(1);
    let (metadata, invocations) = failing_task_files(&run);
    assert_eq!(metadata["status"], "FAILED");
    assert_eq!(metadata["error"]["type"], "ContextWindowExceeded");
    let message = metadata["error"]["message"].as_str().unwrap();
    assert!(message.contains("the task alone do not fit"), "{message}");
    assert!(
        message.contains("exceeds the available context size"),
        "{message}"
    );
    let details = metadata["error"]["details"].as_str().unwrap();
    assert!(details.contains("--ctx-size"), "{details}");
    assert!(details.contains("max_tokens"), "{details}");
    // The first request and at most one retry.
    assert!(
        (1..=2).contains(&mock.recorded().len()),
        "{:?}",
        mock.recorded().len()
    );
    assert_eq!(invocations, mock.recorded().len());
}

#[test]
fn a_task_alone_over_the_budget_fails_before_any_request() {
    let mock = counting_mock(OverflowShape::OpenAi);
    let task = "count ".repeat(4000);
    let run = delta(agent(Test::new(), "total_max_tokens: 3000\n"), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", &task])
        .run()
        .code(1);
    let (metadata, invocations) = failing_task_files(&run);
    assert_eq!(metadata["error"]["type"], "ContextWindowExceeded");
    let message = metadata["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("total_max_tokens (3000) in context.yaml"),
        "{message}"
    );
    assert!(mock.recorded().is_empty());
    assert_eq!(invocations, 0);
}

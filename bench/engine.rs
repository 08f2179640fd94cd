//! Engine benchmarks (figures, not pass/fail tests): `cargo bench --bench engine`, or
//! `bench/run.sh`.
//!
//! 1. Loop overhead per iteration: a 100-iteration run driven in-process against an
//!    in-process mock-llm that answers at once, each iteration calling one trivial tool
//!    (`true`). Overhead = wall time − time inside the tool processes − time waiting for
//!    the HTTP answers, divided by the iterations: reading the journal back, reloading
//!    context.yaml, building and serializing the request, the `io/` records, journal
//!    appends, and the atomic metadata write with its fsync.
//! 2. Context rebuild: reading a journal of 1,000 / 5,000 / 10,000 events from disk and
//!    turning it into the conversation (plus the default context.yaml's file sources),
//!    which the engine does before every LLM call. It should grow linearly.
//! 3. Model APIs (issue 27): a 30-step run through each API (chat completions, Anthropic
//!    Messages, OpenAI Responses) against mock-llm's strict profile of its service with
//!    its prompt cache on: the share of input tokens read from the cache from step 3 on,
//!    the estimated cost against the cost of the usage the mock reported at the list
//!    prices (read from each answer's own fields), and the engine overhead per step, as
//!    in 1, beside chat's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use delta_engine::config::load_agent;
use delta_engine::context::{ContextEnv, build_context};
use delta_engine::engine::{ActiveRun, EngineEvent, NewRun, Observer, Origin, Shutdown};
use delta_engine::journal::{
    ActionRequest, ActionResult, ActionStatus, EventPayload, FsyncPolicy, Journal, RunStart,
    Thought, ToolCall, read_journal,
};
use delta_engine::llm::{ClientSettings, Credentials, LlmClient, ModelApi};
use delta_engine::process::OutputPolicy;
use delta_engine::run::{RunId, RunPaths, read_metadata};
use delta_engine::secrets::Redactor;
use mock_llm::{MockProfile, MockServer, ReadScript as _, Script, ServerOptions};

const ITERATIONS: u32 = 100;
const REPEATS: usize = 5;

const AGENT_YAML: &str =
    "name: bench\nllm:\n  model: bench-model\ntools:\n  - name: noop\n    exec: \"true\"\n";
const CONTEXT_YAML: &str = "sources:\n  - type: file\n    id: system_prompt\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: file\n    id: workspace_guide\n    path: '${CWD}/DELTA.md'\n    on_missing: skip\n  - type: journal\n";

fn main() {
    println!("Delta Engine benchmarks ({} build)\n", profile());
    loop_overhead();
    println!();
    context_rebuild();
    println!();
    model_apis();
}

fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Time spent in tools and in LLM calls, as the engine reports them.
#[derive(Default)]
struct Timings {
    tools: Duration,
    llm: Duration,
}

impl Observer for Timings {
    fn on_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::ToolFinished { elapsed, .. } => self.tools += *elapsed,
            EngineEvent::LlmResponded { elapsed, .. } => self.llm += *elapsed,
            EngineEvent::RunStarted { .. }
            | EngineEvent::IterationStarted { .. }
            | EngineEvent::ContextBuilt { .. }
            | EngineEvent::ContextTrimmed { .. }
            | EngineEvent::ContextWindowExceeded { .. }
            | EngineEvent::Warning { .. }
            | EngineEvent::LlmRequestStarted { .. }
            | EngineEvent::LlmRetry { .. }
            | EngineEvent::LlmText { .. }
            | EngineEvent::Thought { .. }
            | EngineEvent::ToolStarted { .. }
            | EngineEvent::Detail { .. }
            | EngineEvent::Subagent { .. }
            | EngineEvent::RunFinished { .. } => {}
        }
    }
}

fn agent_dir(root: &Path) -> std::path::PathBuf {
    let agent = root.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("agent.yaml"), AGENT_YAML).unwrap();
    std::fs::write(agent.join("system_prompt.md"), "You are a benchmark.\n").unwrap();
    std::fs::write(agent.join("context.yaml"), CONTEXT_YAML).unwrap();
    agent
}

fn loop_overhead() {
    let script = format!(
        "steps:\n  - message:\n      content: working\n      tool_calls: [{{name: noop}}]\n      repeat: {}\n  - message: {{content: done}}\n",
        ITERATIONS - 1
    );
    let root = tempfile::tempdir().unwrap();
    let agent_home = agent_dir(root.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    println!("1. Loop overhead: {ITERATIONS}-iteration runs, trivial tool, mock answering at once");
    println!("   run   wall      tools     llm (HTTP)  overhead/iteration");
    let mut per_iteration = Vec::new();
    for repeat in 0..REPEATS {
        let mock = MockServer::start(Script::from_yaml_str(&script).unwrap()).unwrap();
        let credentials = Credentials::new(&mock.base_url(), None).unwrap();
        let (wall, timings, _) = timed_run(
            &runtime,
            &agent_home,
            &root.path().join(format!("ws{repeat}")),
            credentials,
            ITERATIONS,
        );
        let overhead = wall.saturating_sub(timings.tools + timings.llm) / ITERATIONS;
        per_iteration.push(overhead);
        println!(
            "   {:<5} {:<9} {:<9} {:<11} {}",
            repeat + 1,
            ms(wall),
            ms(timings.tools),
            ms(timings.llm),
            ms(overhead)
        );
    }
    per_iteration.sort();
    println!(
        "   median overhead per iteration: {} (min {}, max {}); target < 5 ms",
        ms(per_iteration[REPEATS / 2]),
        ms(per_iteration[0]),
        ms(per_iteration[REPEATS - 1])
    );
}

/// A journal of `events` lines shaped like a real run: RUN_START, then cycles of
/// THOUGHT + ACTION_REQUEST + ACTION_RESULT with a few hundred bytes each.
fn write_journal(path: &Path, events: usize) {
    let journal = Journal::open_with(path, FsyncPolicy::OnSync, Redactor::default()).unwrap();
    journal
        .append(EventPayload::RunStart(RunStart {
            run_id: RunId::parse("bench").unwrap(),
            task: "Summarize every file in the workspace.".to_owned(),
            agent_ref: "/agents/bench".to_owned(),
            environment: None,
        }))
        .unwrap();
    let observation = "line of tool output that the model reads back\n".repeat(5);
    let mut cycle = 0;
    while journal.next_seq() <= events as u64 {
        let call_id = format!("call_{cycle}");
        let action_id = format!("action-{cycle}");
        let payloads = [
            EventPayload::Thought(Thought {
                content: format!("Step {cycle}: reading the next file."),
                llm_invocation_ref: format!("invocation-{cycle}"),
                reasoning: None,
                tool_calls: vec![ToolCall {
                    id: call_id.clone(),
                    name: "read_file".to_owned(),
                    arguments: format!("{{\"path\": \"file-{cycle}.txt\"}}"),
                }],
                passback: None,
                usage: None,
            }),
            EventPayload::ActionRequest(ActionRequest {
                action_id: action_id.clone(),
                tool_call_id: call_id.clone(),
                tool_name: "read_file".to_owned(),
                tool_args: serde_json::from_str(&format!("{{\"path\": \"file-{cycle}.txt\"}}"))
                    .unwrap(),
                resolved_command: Some(format!("cat file-{cycle}.txt")),
                subagent: None,
                environment: None,
            }),
            EventPayload::ActionResult(ActionResult {
                action_id: action_id.clone(),
                tool_call_id: call_id,
                status: ActionStatus::Success,
                observation_content: observation.clone(),
                exit_code: Some(0),
                execution_ref: action_id,
                subagent: None,
            }),
        ];
        for payload in payloads {
            if journal.next_seq() > events as u64 {
                break;
            }
            journal.append(payload).unwrap();
        }
        cycle += 1;
    }
}

fn context_rebuild() {
    let root = tempfile::tempdir().unwrap();
    let agent_home = agent_dir(root.path());
    let workspace = root.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let manifest = delta_engine::config::load_context(&agent_home, &workspace).unwrap();

    println!("2. Context rebuild from disk (read + parse journal.jsonl, build messages)");
    println!("   events   journal size   budget        rebuild     per event");
    for events in [1_000, 5_000, 10_000] {
        let path = root.path().join(format!("journal-{events}.jsonl"));
        write_journal(&path, events);
        let size = std::fs::metadata(&path).unwrap().len();
        let env = ContextEnv {
            run_id: "bench",
            agent_home: &agent_home,
            workspace: &workspace,
            journal_path: &path,
            output: &OutputPolicy::default(),
        };
        // Without a budget, and with one that leaves out all but an 8k-token window's
        // worth of iterations (the case issue 20 adds).
        for budget in [None, Some(8_000)] {
            let rebuild = || {
                let events = read_journal(&path).unwrap().events;
                let built = runtime
                    .block_on(build_context(&manifest, &events, &env, budget))
                    .unwrap();
                built.messages.len()
            };
            let messages = rebuild();
            let samples = 20;
            let started = Instant::now();
            for _ in 0..samples {
                std::hint::black_box(rebuild());
            }
            let each = started.elapsed() / samples;
            println!(
                "   {:<8} {:<14} {:<13} {:<11} {:.2} µs   ({messages} messages)",
                events,
                format!("{:.1} MiB", size as f64 / (1024.0 * 1024.0)),
                budget.map_or_else(|| "none".to_owned(), |b| format!("{b} tokens")),
                ms(each),
                each.as_secs_f64() * 1e6 / events as f64
            );
        }
    }
}

/// Drives one run of the agent at `agent_home` in a fresh `workspace` to COMPLETED in
/// `iterations` steps against `credentials`; its wall time, the time spent in tools and in
/// HTTP, and its directory.
fn timed_run(
    runtime: &tokio::runtime::Runtime,
    agent_home: &Path,
    workspace: &Path,
    credentials: Credentials,
    iterations: u32,
) -> (Duration, Timings, RunPaths) {
    std::fs::create_dir_all(workspace).unwrap();
    let workspace = workspace.canonicalize().unwrap();
    let agent = load_agent(agent_home, &workspace).unwrap();
    let llm = LlmClient::new(credentials, ClientSettings::default()).unwrap();
    let mut timings = Timings::default();
    let started = Instant::now();
    let paths = runtime.block_on(async {
        let new = NewRun {
            workspace: &workspace,
            workspace_id: None,
            run_id: RunId::parse("bench").unwrap(),
            task: "benchmark",
            max_iterations: iterations,
            fsync: FsyncPolicy::OnSync,
            replay_of: None,
            called_by: None,
            environment: None,
        };
        let active =
            ActiveRun::begin(Origin::New(Box::new(new)), &agent, OutputPolicy::default()).unwrap();
        active
            .drive(&agent, &llm, &mut timings, Shutdown::never())
            .await
            .unwrap()
    });
    let wall = started.elapsed();
    let metadata = read_metadata(&paths.metadata()).unwrap();
    assert_eq!(metadata.iterations, iterations);
    assert_eq!(metadata.status.as_str(), "COMPLETED");
    (wall, timings, paths)
}

/// Steps of the model-API runs (tool calls, then the answer).
const API_STEPS: u32 = 30;
/// Runs per API.
const API_REPEATS: usize = 3;

/// Where each API reports, in each answer's `usage`, (input, cached, written, output), as
/// JSON pointers; and whether its input count includes the cached and written tokens.
fn usage_fields(api: ModelApi) -> ([&'static str; 4], bool) {
    match api {
        ModelApi::Chat => (
            [
                "/prompt_tokens",
                "/prompt_tokens_details/cached_tokens",
                "/prompt_tokens_details/cache_write_tokens",
                "/completion_tokens",
            ],
            true,
        ),
        ModelApi::Responses => (
            [
                "/input_tokens",
                "/input_tokens_details/cached_tokens",
                "/input_tokens_details/cache_write_tokens",
                "/output_tokens",
            ],
            true,
        ),
        ModelApi::Anthropic => (
            [
                "/input_tokens",
                "/cache_read_input_tokens",
                "/cache_creation_input_tokens",
                "/output_tokens",
            ],
            false,
        ),
    }
}

/// USD per million (uncached input, cached input, cache write, output): the published list
/// prices of the models the runs use (gpt-5; claude-sonnet-4-5 with Anthropic's 0.1× and
/// 1.25× cache multipliers).
fn list_prices(api: ModelApi) -> [f64; 4] {
    match api {
        ModelApi::Chat | ModelApi::Responses => [1.25, 0.125, 1.25, 10.0],
        ModelApi::Anthropic => [3.0, 0.3, 3.75, 15.0],
    }
}

fn model_apis() {
    let root = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let script = format!(
        "mode: by_conversation\nsteps:\n  - message:\n      content: working\n      tool_calls: [{{name: noop}}]\n      usage: {{completion_tokens: 12}}\n      repeat: {}\n  - message: {{content: done, usage: {{completion_tokens: 4}}}}\n",
        API_STEPS - 1
    );
    println!(
        "3. Model APIs: {API_STEPS}-step runs against each strict profile with its prompt cache"
    );
    println!(
        "   api        cache share (steps 3+)   cost estimated / from usage      overhead/step"
    );
    let mut chat_overhead = Duration::ZERO;
    for api in ModelApi::ALL {
        let model = match api {
            ModelApi::Anthropic => "claude-sonnet-4-5",
            ModelApi::Chat | ModelApi::Responses => "gpt-5",
        };
        let agent_home = root.path().join(format!("agent-{api}"));
        std::fs::create_dir_all(&agent_home).unwrap();
        std::fs::write(
            agent_home.join("agent.yaml"),
            format!("name: bench\nllm:\n  model: {model}\n  api: {api}\ntools:\n  - name: noop\n    exec: \"true\"\n"),
        )
        .unwrap();
        std::fs::write(
            agent_home.join("system_prompt.md"),
            "You are a benchmark: call the tool until told otherwise, then answer done. "
                .repeat(80),
        )
        .unwrap();
        std::fs::write(agent_home.join("context.yaml"), CONTEXT_YAML).unwrap();
        let mut overheads = Vec::new();
        let (mut share, mut estimated, mut reported) = (0.0, 0.0, 0.0);
        for repeat in 0..API_REPEATS {
            let options = ServerOptions {
                strict: Some(MockProfile::of_api(api)),
                prompt_cache: true,
                keep_requests: false,
                ..ServerOptions::default()
            };
            let mock =
                MockServer::start_with(Script::from_yaml_str(&script).unwrap(), options).unwrap();
            // Anthropic's base URL is the host; the strict profiles want a key.
            let base = match api {
                ModelApi::Anthropic => mock.base_url().trim_end_matches("/v1").to_owned(),
                ModelApi::Chat | ModelApi::Responses => mock.base_url(),
            };
            let credentials = Credentials::for_api(api, &base, Some("bench".to_owned())).unwrap();
            let (wall, timings, paths) = timed_run(
                &runtime,
                &agent_home,
                &root.path().join(format!("ws-{api}-{repeat}")),
                credentials,
                API_STEPS,
            );
            overheads.push(wall.saturating_sub(timings.tools + timings.llm) / API_STEPS);
            let (fields, includes_cache) = usage_fields(api);
            let prices = list_prices(api);
            let mut counted = (0.0, 0.0);
            reported = 0.0;
            let events = read_journal(&paths.journal()).unwrap().events;
            let thoughts = events.iter().filter_map(|e| e.payload.as_thought());
            for (step, thought) in thoughts.enumerate() {
                let answer: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(paths.invocation_response(&thought.llm_invocation_ref)).unwrap(),
                )
                .unwrap();
                let [input, cached, written, output] = fields.map(|pointer| {
                    answer["usage"]
                        .pointer(pointer)
                        .and_then(serde_json::Value::as_u64)
                        .unwrap_or(0) as f64
                });
                let (uncached, prompt) = if includes_cache {
                    (input - cached - written, input)
                } else {
                    (input, input + cached + written)
                };
                if step >= 2 {
                    counted.0 += cached;
                    counted.1 += prompt;
                }
                reported += (uncached * prices[0]
                    + cached * prices[1]
                    + written * prices[2]
                    + output * prices[3])
                    / 1_000_000.0;
            }
            share = counted.0 / counted.1;
            estimated = read_metadata(&paths.metadata())
                .unwrap()
                .usage
                .total_cost_usd;
        }
        overheads.sort();
        let overhead = overheads[API_REPEATS / 2];
        if api == ModelApi::Chat {
            chat_overhead = overhead;
        }
        println!(
            "   {:<10} {:<24} ${estimated:.6} / ${reported:.6} (Δ {:.1e})   {} ({:.2}× chat)",
            api.name(),
            format!("{:.1}%", share * 100.0),
            (estimated - reported).abs(),
            ms(overhead),
            overhead.as_secs_f64() / chat_overhead.as_secs_f64()
        );
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1e3)
}

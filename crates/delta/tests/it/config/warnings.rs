//! Loads that succeed with warnings: deprecated file names and keys, unknown keys.

use crate::config::support::{AGENT_YAML, AgentDir};
use crate::support::snapshot::snapshot;
use delta_engine::config::HookName;

#[test]
fn config_yaml_is_accepted_with_a_deprecation_warning() {
    let dir = AgentDir::new()
        .remove("agent.yaml")
        .file("config.yaml", AGENT_YAML);
    let agent = dir.agent();
    assert_eq!(agent.config_file, dir.path("config.yaml"));
    assert_eq!(
        agent.warnings,
        ["[DEPRECATION WARNING] config.yaml is deprecated; rename it to agent.yaml"]
    );
}

#[test]
fn agent_yaml_wins_over_config_yaml_with_a_warning() {
    let dir = AgentDir::new().file("config.yaml", "name: old\nllm: {model: old-model}\n");
    let agent = dir.agent();
    assert_eq!(agent.name, "test-agent");
    assert_eq!(agent.config_file, dir.path("agent.yaml"));
    assert_eq!(agent.warnings.len(), 1);
    snapshot!(agent.warnings[0]);
}

#[test]
fn lifecycle_hooks_in_agent_yaml_load_with_a_deprecation_warning() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}lifecycle_hooks:\n  on_run_end:\n    command: [\"${{AGENT_HOME}}/cleanup.sh\"]\n"),
    );
    let agent = dir.agent();
    let hook = agent.hooks.get(HookName::OnRunEnd).unwrap();
    assert_eq!(hook.command, [format!("{}/cleanup.sh", dir.home.display())]);
    snapshot!(agent.warnings.join("\n"));
}

#[test]
fn hooks_key_in_agent_yaml_is_deprecated_too() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}hooks:\n  pre_llm_req: {{command: [x]}}\n"),
    );
    let agent = dir.agent();
    assert!(agent.hooks.get(HookName::PreLlmRequest).is_some());
    assert_eq!(
        agent.warnings,
        [
            "[DEPRECATION WARNING] `hooks` in agent.yaml is deprecated; move these hooks to \
          hooks.yaml in the agent directory"
        ]
    );
}

#[test]
fn hooks_yaml_takes_precedence_over_lifecycle_hooks() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}lifecycle_hooks:\n  on_run_end: {{command: [old]}}\n"),
        )
        .file("hooks.yaml", "on_error: {command: [new]}\n");
    let agent = dir.agent();
    assert!(agent.hooks.get(HookName::OnRunEnd).is_none());
    assert_eq!(agent.hooks.get(HookName::OnError).unwrap().command, ["new"]);
    snapshot!(agent.warnings.join("\n"));
}

#[test]
fn duplicate_tool_in_one_file_warns_and_the_later_wins() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}tools:\n  - name: t\n    exec: ls\n  - name: t\n    exec: pwd\n"),
    );
    let agent = dir.agent();
    assert_eq!(agent.tools.len(), 1);
    snapshot!(agent.warnings.join("\n"));
}

#[test]
fn a_valid_agent_has_no_warnings() {
    assert!(AgentDir::new().agent().warnings.is_empty());
}

// Issue 11: `llm.extra_body` sends provider parameters as written; the known parameters
// pass through too. (A misspelt `llm:` key is an error since issue 30: config/errors.rs.)
#[test]
fn known_llm_parameters_and_extra_body_pass_through_silently() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: a\nllm:\n  model: m\n  top_k: 40\n  tool_choice: auto\n  extra_body: {top_a: 0.1, temprature: 2}\n",
    );
    let agent = dir.agent();
    assert!(agent.warnings.is_empty(), "{:?}", agent.warnings);
    let sent: Vec<&str> = agent.llm.extra.keys().map(String::as_str).collect();
    assert_eq!(sent, ["temprature", "tool_choice", "top_a", "top_k"]);
    let broken = AgentDir::new().file(
        "agent.yaml",
        "name: a\nllm:\n  model: m\n  extra_body: [top_a]\n",
    );
    let error = broken.error();
    assert_eq!(error.message, "`llm.extra_body` must be a mapping");
}

// Issue 27: the known parameters are the agent's API's: `stop` is a chat parameter (and
// Anthropic's, translated), not one of the Responses API, where it is an unknown key
// (issue 30) naming the API.
#[test]
fn llm_keys_are_judged_by_the_agent_s_api() {
    let dir = |llm: &str| {
        AgentDir::new().file("agent.yaml", &format!("name: a\nllm:\n  model: m\n{llm}"))
    };
    assert!(dir("  stop: [END]\n").agent().warnings.is_empty());
    assert!(
        dir("  api: anthropic\n  stop: [END]\n  thinking: {type: enabled, budget_tokens: 1024}\n  max_tokens: 4096\n")
            .agent()
            .warnings
            .is_empty()
    );
    let error = dir("  api: responses\n  stop: [END]\n").error();
    assert_eq!(
        error.message,
        "unknown key `llm.stop`: not a request parameter of the `responses` API the engine knows"
    );
    assert_eq!((error.line, error.column), (Some(5), Some(3)));
    assert!(error.help.unwrap().contains("`llm.extra_body`"));
    assert!(
        dir("  api: responses\n  reasoning: {effort: low}\n  prompt_cache: off\n")
            .agent()
            .warnings
            .is_empty()
    );
}

// Issue 27: what the new `llm:` keys refuse, with the place and the fix.
#[test]
fn the_api_keys_refuse_what_cannot_work() {
    let error = |llm: &str| {
        let dir = AgentDir::new().file("agent.yaml", &format!("name: a\nllm:\n  model: m\n{llm}"));
        dir.error().to_string()
    };
    let unknown = error("  api: antropic\n");
    assert!(
        unknown.contains("unknown value `antropic` for `api`; did you mean `anthropic`?"),
        "{unknown}"
    );
    assert!(unknown.contains("agent.yaml:4"), "{unknown}");
    let passback = error("  api: anthropic\n  reasoning_passback: [reasoning_content]\n");
    assert!(
        passback.contains("`llm.reasoning_passback` is for chat-completions servers"),
        "{passback}"
    );
    assert!(passback.contains("use `api: chat`"), "{passback}");
    let budget = error(
        "  api: anthropic\n  max_tokens: 2048\n  thinking: {type: enabled, budget_tokens: 2048}\n",
    );
    assert!(
        budget.contains("`thinking.budget_tokens` (2048) must be below `max_tokens` (2048)"),
        "{budget}"
    );
    let price = error(
        "  pricing: {input_per_million: 1, output_per_million: 2, cached_input_per_million: -1}\n",
    );
    assert!(
        price.contains("price must be a non-negative number, found -1"),
        "{price}"
    );
}

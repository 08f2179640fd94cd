//! docs/hooks.md, "Claude Code hooks": the configuration example loads as hooks.json and
//! pasted under hooks.yaml's `claude_hooks:`, and every example of "One example per
//! decision" (a hooks.json and the script it runs) decides what its heading says when
//! its event fires.

use std::path::Path;

use delta_engine::config::{ClaudeEvent, load_agent, parse_hooks_json};
use delta_engine::hooks::claude::{ClaudeInput, ClaudeRunner, Ruling, StartSource, ToolUse};
use delta_engine::journal::ClaudeDecision;
use delta_engine::process::OutputPolicy;
use serde_json::{Map, Value, json};

use crate::hooks::support::{Fixture, read};
use crate::support::harness::{DEFAULT_CONTEXT_YAML, ROOT};

/// The fenced blocks of the Claude Code section, as `(heading, language, text)`: the
/// heading is the last `#### ` one above the block (empty before the first).
fn blocks() -> Vec<(String, String, String)> {
    let doc = read(&Path::new(ROOT).join("docs/hooks.md"));
    let section = doc
        .split_once("\n## Claude Code hooks\n")
        .map(|(_, section)| section)
        .expect("docs/hooks.md has a Claude Code hooks section");
    let mut found = Vec::new();
    let mut heading = String::new();
    let mut open: Option<(String, String)> = None;
    for line in section.lines() {
        match &mut open {
            None if line.starts_with("#### ") => heading = line[5..].to_owned(),
            None if line.starts_with("```") && line.len() > 3 => {
                open = Some((line[3..].to_owned(), String::new()));
            }
            None => {}
            Some((language, text)) if line == "```" => {
                found.push((heading.clone(), language.clone(), std::mem::take(text)));
                open = None;
            }
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    found
}

fn tool(name: &str, input: Value) -> ClaudeInput {
    ClaudeInput::PreToolUse(tool_use(name, input))
}

fn tool_use(name: &str, input: Value) -> ToolUse {
    ToolUse {
        tool_name: name.to_owned(),
        tool_input: input.as_object().cloned().unwrap_or_default(),
        tool_use_id: "call_1".to_owned(),
    }
}

fn posted(name: &str, input: Value) -> ClaudeInput {
    ClaudeInput::PostToolUse {
        tool: tool_use(name, input),
        response: json!({"stdout": "", "stderr": ""}),
        duration_ms: 1,
        error: None,
    }
}

/// Fires `input` through every hook of `runner` it matches, in order, as the engine does.
async fn rule(runner: &mut ClaudeRunner, input: &ClaudeInput) -> Ruling {
    let mut ruling = Ruling::default();
    let handlers = runner.handlers(input);
    assert!(!handlers.is_empty(), "no hook for {:?}", input.event());
    for handler in handlers {
        let tool_input = ruling.tool_input.clone();
        let firing = runner
            .fire(
                &handler,
                input,
                tool_input.as_ref(),
                std::future::pending::<()>(),
            )
            .await;
        ruling.absorb(
            firing
                .reply
                .unwrap_or_else(|e| panic!("{}: {e}", handler.place)),
        );
    }
    ruling
}

fn decided(ruling: &Ruling) -> (Option<ClaudeDecision>, String) {
    (ruling.decision, ruling.reason())
}

#[tokio::test]
async fn every_decision_example_decides_what_its_heading_says() {
    let all = blocks();
    let headings: Vec<&str> = all
        .iter()
        .filter(|(heading, _, _)| !heading.is_empty())
        .map(|(heading, _, _)| heading.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut checked = Vec::new();
    for heading in headings {
        let fx = Fixture::new();
        let mut hooks_json = None;
        for (_, language, text) in all.iter().filter(|(h, _, _)| h == heading) {
            if language == "json" {
                hooks_json = Some(text.clone());
                continue;
            }
            // The script's second line names it: `# hooks/NAME: what it does.`
            let name = text
                .lines()
                .nth(1)
                .and_then(|line| line.strip_prefix("# hooks/"))
                .and_then(|rest| rest.split(':').next())
                .unwrap_or_else(|| panic!("{heading}: the script does not name itself"));
            std::fs::create_dir_all(fx.agent.join("hooks")).unwrap();
            std::fs::write(fx.agent.join("hooks").join(name), text).unwrap();
        }
        let hooks_json = hooks_json.unwrap_or_else(|| panic!("{heading}: no hooks.json"));
        let (hooks, warnings) =
            parse_hooks_json(&hooks_json, &fx.agent.join("hooks.json")).unwrap();
        assert!(warnings.is_empty(), "{heading}: {warnings:?}");
        let mut runner = ClaudeRunner::new(hooks, &fx.paths, &fx.agent, OutputPolicy::default());
        match heading {
            "Deny with exit 2" => {
                let ruling = rule(
                    &mut runner,
                    &tool("Bash", json!({"command": "rm -rf build"})),
                )
                .await;
                assert_eq!(
                    decided(&ruling),
                    (
                        Some(ClaudeDecision::Deny),
                        "rm -rf is not allowed; delete files one by one".to_owned()
                    )
                );
                let ruling = rule(&mut runner, &tool("Bash", json!({"command": "ls"}))).await;
                assert_eq!(ruling.decision, None);
            }
            "Deny with JSON" => {
                let input = tool("Write", json!({"file_path": "prod.env", "content": "K=1"}));
                let ruling = rule(&mut runner, &input).await;
                assert_eq!(
                    decided(&ruling),
                    (
                        Some(ClaudeDecision::Deny),
                        ".env files hold secrets; write config.example instead".to_owned()
                    )
                );
            }
            "Allow and rewrite the input" => {
                let input = tool(
                    "Bash",
                    json!({"command": "pip install requests", "description": "deps"}),
                );
                let ruling = rule(&mut runner, &input).await;
                assert_eq!(ruling.decision, Some(ClaudeDecision::Allow));
                assert_eq!(
                    ruling.tool_input,
                    json!({"command": "pip install requests -q", "description": "deps"})
                        .as_object()
                        .cloned()
                );
            }
            "Ask a human" => {
                let ruling = rule(
                    &mut runner,
                    &tool("Bash", json!({"command": "./deploy.sh"})),
                )
                .await;
                assert_eq!(
                    decided(&ruling),
                    (Some(ClaudeDecision::Ask), "a deploy".to_owned())
                );
            }
            "Defer to a human" => {
                let input = tool("Bash", json!({"command": "./manage.py migrate"}));
                assert_eq!(
                    rule(&mut runner, &input).await.decision,
                    Some(ClaudeDecision::Defer)
                );
            }
            "Add context" => {
                let start = ClaudeInput::SessionStart {
                    source: StartSource::Startup,
                    model: "m".to_owned(),
                };
                assert_eq!(
                    rule(&mut runner, &start).await.context,
                    ["House rules: tests before commits."]
                );
                std::fs::write(fx.workspace.join("ISSUES.txt"), "#12, #14\n").unwrap();
                let prompt = ClaudeInput::UserPromptSubmit {
                    prompt: "Fix the bug.".to_owned(),
                };
                assert_eq!(
                    rule(&mut runner, &prompt).await.context,
                    ["Open issues: #12, #14"]
                );
            }
            "Refuse a prompt" => {
                let prompt = ClaudeInput::UserPromptSubmit {
                    prompt: "use the key sk-abcdef123456".to_owned(),
                };
                assert_eq!(
                    decided(&rule(&mut runner, &prompt).await),
                    (
                        Some(ClaudeDecision::Block),
                        "the prompt contains an API key; remove it and try again".to_owned()
                    )
                );
                let fine = ClaudeInput::UserPromptSubmit {
                    prompt: "no key here".to_owned(),
                };
                assert_eq!(rule(&mut runner, &fine).await.decision, None);
            }
            "Feedback after a tool" => {
                let input = posted("Write", json!({"file_path": "a.json", "content": "{"}));
                let ruling = rule(&mut runner, &input).await;
                assert_eq!(ruling.decision, Some(ClaudeDecision::Block));
                assert!(
                    ruling.reason().starts_with("a.json is not valid JSON: "),
                    "{}",
                    ruling.reason()
                );
            }
            "Send the model back before it stops" => {
                let stop = |active| ClaudeInput::Stop {
                    stop_hook_active: active,
                    last_assistant_message: "Done.".to_owned(),
                };
                assert_eq!(
                    decided(&rule(&mut runner, &stop(false)).await),
                    (
                        Some(ClaudeDecision::Block),
                        "Run the tests and report the result before you finish.".to_owned()
                    )
                );
                assert_eq!(rule(&mut runner, &stop(true)).await.decision, None);
            }
            "Stop the run" => {
                std::fs::write(fx.workspace.join(".tool-calls"), "100\n").unwrap();
                let ruling = rule(&mut runner, &posted("Bash", json!({"command": "ls"}))).await;
                assert_eq!(
                    ruling.stop.as_deref(),
                    Some("the daily quota of 100 tool calls is spent")
                );
            }
            other => panic!("docs/hooks.md has an example this test does not check: {other}"),
        }
        checked.push(heading.to_owned());
    }
    assert_eq!(checked.len(), 10, "one example per decision: {checked:?}");
}

#[test]
fn the_configuration_example_loads_from_hooks_json_and_hooks_yaml() {
    let (_, language, example) = blocks()
        .into_iter()
        .next()
        .expect("the section's first block");
    assert_eq!(language, "json");
    let (from_json, warnings) = parse_hooks_json(&example, Path::new("hooks.json")).unwrap();
    assert!(warnings.is_empty());
    let events: Vec<ClaudeEvent> = from_json.iter().map(|h| h.event).collect();
    assert_eq!(events, [ClaudeEvent::PreToolUse, ClaudeEvent::Stop]);

    // The same `hooks` object pasted under `claude_hooks:` (JSON is YAML).
    let object: Map<String, Value> = serde_json::from_str(&example).unwrap();
    let fx = Fixture::new();
    let files = [
        ("agent.yaml", "name: docs\nllm:\n  model: m\n".to_owned()),
        ("system_prompt.md", "You help.\n".to_owned()),
        ("context.yaml", DEFAULT_CONTEXT_YAML.to_owned()),
        ("hooks.yaml", format!("claude_hooks: {}\n", object["hooks"])),
    ];
    for (name, text) in files {
        std::fs::write(fx.agent.join(name), text).unwrap();
    }
    let agent = load_agent(&fx.agent, &fx.workspace).unwrap();
    let from_yaml: Vec<(ClaudeEvent, String)> = agent
        .claude_hooks
        .iter()
        .map(|h| (h.event, h.command.display()))
        .collect();
    let expected: Vec<(ClaudeEvent, String)> = from_json
        .iter()
        .map(|h| (h.event, h.command.display()))
        .collect();
    assert_eq!(from_yaml, expected);
}

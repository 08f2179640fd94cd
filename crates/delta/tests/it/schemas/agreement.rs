//! The schemas accept what the parsers accept and reject what they reject, on documents
//! taken from the specification and on typical mistakes.

use std::path::Path;

use serde_json::Value;

fn schema(name: &str) -> Value {
    delta_engine::schema::all()
        .into_iter()
        .find(|(file, _)| *file == name)
        .unwrap()
        .1
}

fn schema_accepts(name: &str, yaml: &str) -> bool {
    let instance: Value = serde_saphyr::from_str(yaml).unwrap();
    jsonschema::validator_for(&schema(name))
        .unwrap()
        .is_valid(&instance)
}

fn parser_accepts(name: &str, yaml: &str) -> bool {
    let file = Path::new("/agent/file.yaml");
    let (home, cwd) = (Path::new("/agent"), Path::new("/work"));
    match name {
        "agent.schema.json" => delta_engine::config::parse_agent_yaml(yaml, file).is_ok(),
        "context.schema.json" => {
            delta_engine::config::parse_context_yaml(yaml, file, home, cwd).is_ok()
        }
        "hooks.schema.json" => {
            delta_engine::config::parse_hooks_yaml(yaml, file, home, cwd).is_ok()
        }
        "imported-tools.schema.json" => {
            delta_engine::config::parse_imported_yaml(yaml, file).is_ok()
        }
        other => panic!("no parser for {other}"),
    }
}

fn assert_both(name: &str, yaml: &str, valid: bool) {
    assert_eq!(
        parser_accepts(name, yaml),
        valid,
        "parser on {name}:\n{yaml}"
    );
    assert_eq!(
        schema_accepts(name, yaml),
        valid,
        "schema {name} on:\n{yaml}"
    );
}

const AGENT: &str = r#"
name: my-agent
version: 1.0.0
description: Agent description
llm:
  model: gpt-4o
  temperature: 0.7
  max_tokens: 4096
  top_p: 0.9
  pricing: {input_per_million: 2.5, output_per_million: 10}
system_prompt: system_prompt.md
imports:
  - ./tools/file-ops.yaml
import_roots: [../shared]
max_iterations: 30
tools:
  - name: local_tool
    description: "Local tool example"
    exec: "echo ${message}"
  - name: count
    shell: "cat ${file} | wc -l"
  - name: list
    command: [ls, -la]
    parameters:
      - name: directory
        type: string
        inject_as: argument
"#;

#[test]
fn agent_yaml_samples() {
    assert_both("agent.schema.json", AGENT, true);
    assert_both(
        "agent.schema.json",
        "name: a\nllm: {model: m}\nlifecycle_hooks:\n  on_run_end: {command: [x]}\n",
        true,
    );
    assert_both("agent.schema.json", "name: a\n", false);
    assert_both("agent.schema.json", "llm: {model: m}\n", false);
    assert_both(
        "agent.schema.json",
        "name: a\nllm: {temperature: 1}\n",
        false,
    );
    assert_both(
        "agent.schema.json",
        "name: a\nllm: {model: m, temperature: 3}\n",
        false,
    );
    assert_both(
        "agent.schema.json",
        "name: a\nllm: {model: m}\nmax_iterations: 0\n",
        false,
    );
    assert_both(
        "agent.schema.json",
        "name: a\nllm: {model: m}\ntools:\n  - name: t\n    exce: ls\n",
        false,
    );
}

const DEFAULT_CONTEXT: &str = r#"
sources:
  - type: file
    id: system_prompt
    path: '${AGENT_HOME}/system_prompt.md'
  - type: file
    id: workspace_guide
    path: '${CWD}/DELTA.md'
    on_missing: skip
  - type: journal
    id: conversation_history
"#;

const COMPUTED_CONTEXT: &str = r#"
sources:
  - type: computed_file
    id: codebase_summary
    generator:
      command: ["tree-sitter-summarize", "--repo", "${CWD}"]
      timeout_ms: 30000
    output_path: "${CWD}/.delta/context_artifacts/codebase.md"
  - type: journal
    id: recent_dialogue
    max_iterations: 20
"#;

#[test]
fn context_yaml_samples() {
    assert_both("context.schema.json", DEFAULT_CONTEXT, true);
    assert_both("context.schema.json", COMPUTED_CONTEXT, true);
    assert_both("context.schema.json", "sources: []\n", true);
    for bad in [
        "sources:\n  - type: file\n    path: x\n    on_mising: skip\n",
        "sources:\n  - type: fil\n    path: x\n",
        "sources:\n  - type: file\n    id: x\n",
        "sources:\n  - type: file\n    path: x\n    max_iterations: 3\n",
        "sources:\n  - type: journal\n    max_iterations: 0\n",
        "sources:\n  - type: file\n    path: x\n    on_missing: maybe\n",
        "sources:\n  - type: computed_file\n    output_path: x\n    generator: {command: []}\n",
        "sources:\n  - path: x\n",
        "source: []\n",
    ] {
        assert_both("context.schema.json", bad, false);
    }
}

const SEED_HOOKS: &str = r#"
pre_llm_request:
  command: ["python3", "${AGENT_HOME}/tools/context_optimizer.py"]
post_llm_response:
  command: ["${AGENT_HOME}/tools/format_response.sh"]
pre_tool_execution:
  command: ["${AGENT_HOME}/tools/validate_args.sh"]
post_tool_execution:
  command: ["${AGENT_HOME}/tools/log_tool_result.sh"]
on_error:
  command: ["${AGENT_HOME}/tools/notify_error.sh"]
on_run_end:
  command: ["delta-sessions", "cleanup"]
  timeout_ms: 5000
on_iteration_start:
  command: ["${AGENT_HOME}/tools/log_iteration.sh"]
on_iteration_end:
  command: ["${AGENT_HOME}/tools/checkpoint.sh"]
"#;

#[test]
fn hooks_yaml_samples() {
    assert_both("hooks.schema.json", SEED_HOOKS, true);
    assert_both(
        "hooks.schema.json",
        "lifecycle_hooks:\n  pre_tool_exec:\n    command: [a]\n",
        true,
    );
    assert_both("hooks.schema.json", "post_llm_resp: {command: [a]}\n", true);
    for bad in [
        "pre_llm: {command: [a]}\n",
        "on_error: {comand: [a]}\n",
        "on_error: {command: []}\n",
        "on_error: {command: [a], timeout_ms: 0}\n",
        "on_error: {}\n",
    ] {
        assert_both("hooks.schema.json", bad, false);
    }
}

#[test]
fn imported_tools_samples() {
    let file_ops = r#"
tools:
  - name: read_file
    description: "Read file contents"
    exec: "cat ${filepath}"
  - name: write_file
    exec: "tee ${filepath}"
    stdin: content
"#;
    assert_both("imported-tools.schema.json", file_ops, true);
    // A file may hold only imports, or only MCP servers (issue 18).
    for good in [
        "imports: [more.yaml]\ntools: []\n",
        "imports: [a.yaml]\n",
        "mcp_servers:\n  files: {command: [files-server], tools: [read]}\n",
    ] {
        assert_both("imported-tools.schema.json", good, true);
    }
    for bad in [
        "mcp_servers:\n  files: {comand: [files-server]}\n",
        "tools: []\nimport_roots: [..]\n",
        "tools: []\nname: x\n",
    ] {
        assert_both("imported-tools.schema.json", bad, false);
    }
}

//! Successful loads: imports and overrides, engine variables, llm pass-through, defaults.

use std::path::PathBuf;

use delta_engine::config::{
    ContextSource, DEFAULT_TIMEOUT_MS, Generator, HookName, HookSpec, OnMissing, Pricing,
    load_agent, load_context,
};
use serde_json::json;

use crate::config::support::{AGENT_YAML, AgentDir};

fn tool(name: &str, description: &str) -> String {
    format!("  - name: {name}\n    description: {description}\n    exec: ls\n")
}

#[test]
fn imports_merge_in_order_and_later_definitions_win() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!(
                "{AGENT_YAML}imports:\n  - tools/a.yaml\n  - ./tools/b.yaml\ntools:\n{}{}",
                tool("t3", "local"),
                tool("t5", "local")
            ),
        )
        .file(
            "tools/a.yaml",
            &format!("tools:\n{}{}", tool("t1", "a"), tool("t2", "a")),
        )
        .file(
            "tools/b.yaml",
            &format!(
                "imports: [nested/c.yaml]\ntools:\n{}{}",
                tool("t2", "b"),
                tool("t3", "b")
            ),
        )
        .file(
            "tools/nested/c.yaml",
            &format!("tools:\n{}{}", tool("t4", "c"), tool("t1", "c")),
        );
    let agent = dir.agent();
    let tools: Vec<(&str, &str)> = agent
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_deref().unwrap()))
        .collect();
    // Order of first definition; the definition of the last writer:
    // a(t1,t2) then b's import c(t4,t1) then b(t2,t3) then local(t3,t5).
    assert_eq!(
        tools,
        [
            ("t1", "c"),
            ("t2", "b"),
            ("t4", "c"),
            ("t3", "local"),
            ("t5", "local")
        ]
    );
    assert!(agent.warnings.is_empty(), "{:?}", agent.warnings);
}

#[test]
fn the_same_file_may_be_imported_twice_without_a_cycle() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [a.yaml, b.yaml]\n"),
        )
        .file("a.yaml", "imports: [common.yaml]\ntools: []\n")
        .file("b.yaml", "imports: [common.yaml]\ntools: []\n")
        .file(
            "common.yaml",
            &format!("tools:\n{}", tool("shared", "common")),
        );
    let agent = dir.agent();
    assert_eq!(agent.tools.len(), 1);
}

#[test]
fn import_allowed_via_import_roots() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}import_roots: [../shared]\nimports: [../shared/ops.yaml]\n"),
        )
        .file(
            "../shared/ops.yaml",
            &format!("tools:\n{}", tool("shared_op", "shared")),
        );
    let agent = dir.agent();
    assert_eq!(agent.tools[0].name, "shared_op");
}

#[test]
fn import_roots_also_admit_symlinked_files() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}import_roots: ['${{AGENT_HOME}}/../shared']\nimports: [tools/link.yaml]\n"),
        )
        .file("../shared/ops.yaml", &format!("tools:\n{}", tool("linked", "shared")))
        .symlink("../../shared/ops.yaml", "tools/link.yaml");
    assert_eq!(dir.agent().tools[0].name, "linked");
}

#[test]
fn dotdot_paths_that_stay_inside_the_agent_dir_are_fine() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [tools/a.yaml]\n"),
        )
        .file("tools/a.yaml", "imports: [../lib/b.yaml]\ntools: []\n")
        .file("lib/b.yaml", &format!("tools:\n{}", tool("b", "lib")));
    assert_eq!(dir.agent().tools[0].name, "b");
}

#[test]
fn engine_variables_are_expanded() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}system_prompt: '${{AGENT_HOME}}/prompts/main.md'\n"),
        )
        .file("prompts/main.md", "prompt")
        .file(
            "hooks.yaml",
            "pre_tool_exec:\n  command: ['${AGENT_HOME}/hooks/check.sh', '--cwd=${CWD}', '${RUN_DIR}']\n  timeout_ms: 500\n",
        )
        .file(
            "context.yaml",
            "sources:\n  - type: file\n    path: '${CWD}/DELTA.md'\n  - type: computed_file\n    generator:\n      command: [python3, '${AGENT_HOME}/gen.py']\n    output_path: '${CWD}/.delta/summary.md'\n    on_missing: skip\n  - type: file\n    path: notes/relative.md\n",
        );
    let agent = dir.agent();
    let home = dir.home.display().to_string();
    let cwd = dir.cwd.display().to_string();
    assert_eq!(agent.system_prompt, dir.path("prompts/main.md"));
    assert_eq!(
        agent.hooks.get(HookName::PreToolExecution),
        Some(&HookSpec {
            command: vec![
                format!("{home}/hooks/check.sh"),
                format!("--cwd={cwd}"),
                "${RUN_DIR}".to_owned(),
            ],
            timeout_ms: 500,
        })
    );
    assert_eq!(
        agent.context.sources,
        [
            ContextSource::File {
                id: None,
                path: dir.cwd.join("DELTA.md"),
                on_missing: OnMissing::Error,
            },
            ContextSource::ComputedFile {
                id: None,
                generator: Generator {
                    command: vec!["python3".into(), format!("{home}/gen.py")],
                    timeout_ms: DEFAULT_TIMEOUT_MS,
                },
                output_path: dir.cwd.join(".delta/summary.md"),
                on_missing: OnMissing::Skip,
            },
            ContextSource::File {
                id: None,
                path: dir.path("notes/relative.md"),
                on_missing: OnMissing::Error,
            },
        ]
    );
}

#[test]
fn engine_variables_in_tools_are_expanded_and_are_not_parameters() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}tools:\n  - name: show\n    exec: \"cat ${{AGENT_HOME}}/data.txt ${{CWD}} ${{file}}\"\n"),
    );
    let agent = dir.agent();
    let tool = &agent.tools[0];
    let command: Vec<String> = tool.command.iter().map(|part| part.rendered()).collect();
    assert_eq!(
        command,
        [
            "cat".to_owned(),
            format!("{}/data.txt", dir.home.display()),
            dir.cwd.display().to_string(),
        ]
    );
    let params: Vec<&str> = tool.parameters.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(params, ["file"]);
}

#[test]
fn llm_keys_we_do_not_know_pass_through_unchanged() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: a\nllm:\n  model: gpt-4o\n  temperature: 0.2\n  max_tokens: 1000\n  top_p: 0.9\n  stop: ['END']\n  response_format:\n    type: json_object\n  pricing:\n    input_per_million: 2.5\n    output_per_million: 10\n",
    );
    let llm = dir.agent().llm;
    assert_eq!(llm.model, "gpt-4o");
    assert_eq!(llm.temperature, Some(0.2));
    assert_eq!(llm.max_tokens, Some(1000));
    assert_eq!(
        llm.pricing,
        Some(Pricing {
            input_per_million: 2.5,
            output_per_million: 10.0,
            cached_input_per_million: None,
            cache_write_per_million: None,
        })
    );
    assert_eq!(
        serde_json::Value::Object(llm.extra),
        json!({"top_p": 0.9, "stop": ["END"], "response_format": {"type": "json_object"}})
    );
}

#[test]
fn defaults() {
    let dir = AgentDir::new().file("hooks.yaml", "on_run_end:\n  command: [cleanup]\n");
    let agent = dir.agent();
    assert_eq!(agent.home, dir.home);
    assert_eq!(agent.config_file, dir.path("agent.yaml"));
    assert_eq!(agent.name, "test-agent");
    assert_eq!(agent.version, None);
    assert_eq!(agent.description, None);
    assert_eq!(agent.llm.temperature, None);
    assert_eq!(agent.llm.max_tokens, None);
    assert_eq!(agent.llm.pricing, None);
    assert!(agent.llm.extra.is_empty());
    assert_eq!(agent.system_prompt, dir.path("system_prompt.md"));
    assert!(agent.tools.is_empty());
    assert_eq!(agent.max_iterations, None);
    assert_eq!(
        agent.hooks.iter().collect::<Vec<_>>(),
        [(
            HookName::OnRunEnd,
            &HookSpec {
                command: vec!["cleanup".into()],
                timeout_ms: 30_000
            }
        )]
    );
    assert_eq!(
        agent.context.sources,
        [
            ContextSource::File {
                id: Some("system_prompt".into()),
                path: dir.path("system_prompt.md"),
                on_missing: OnMissing::Error,
            },
            ContextSource::File {
                id: Some("workspace_guide".into()),
                path: dir.cwd.join("DELTA.md"),
                on_missing: OnMissing::Skip,
            },
            ContextSource::Journal {
                id: Some("conversation_history".into()),
                max_iterations: None,
            },
        ]
    );
    assert!(agent.warnings.is_empty());
}

#[test]
fn all_metadata_fields_load() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: full\nversion: 1.0\ndescription: Does things\nllm: {model: m}\nmax_iterations: 12\n",
    );
    let agent = dir.agent();
    assert_eq!(agent.version.as_deref(), Some("1.0"));
    assert_eq!(agent.description.as_deref(), Some("Does things"));
    assert_eq!(agent.max_iterations, Some(12));
}

#[test]
fn hook_aliases_and_the_wrapper_map_to_canonical_names() {
    let dir = AgentDir::new().file(
        "hooks.yaml",
        "lifecycle_hooks:\n  pre_llm_req: {command: [a]}\n  post_llm_resp: {command: [b]}\n  pre_tool_exec: {command: [c]}\n  post_tool_exec: {command: [d]}\n",
    );
    let names: Vec<&str> = dir.agent().hooks.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "pre_llm_request",
            "post_llm_response",
            "pre_tool_execution",
            "post_tool_execution"
        ]
    );
}

#[test]
fn an_agent_yaml_path_loads_the_same_agent() {
    let dir = AgentDir::new();
    let by_file = load_agent(&dir.path("agent.yaml"), &dir.cwd).unwrap();
    assert_eq!(by_file.home, dir.home);
    assert_eq!(by_file.name, dir.agent().name);
}

#[test]
fn the_agent_home_is_canonical() {
    let dir = AgentDir::new();
    let link = dir.root().join("agent-link");
    std::os::unix::fs::symlink(&dir.home, &link).unwrap();
    let agent = load_agent(&link, &dir.cwd).unwrap();
    assert_eq!(agent.home, dir.home);
}

#[test]
fn load_context_reads_the_current_file() {
    let dir = AgentDir::new();
    let before = load_context(&dir.home, &dir.cwd).unwrap();
    assert_eq!(before.sources.len(), 3);
    let dir = dir.file(
        "context.yaml",
        "sources:\n  - type: journal\n    max_iterations: 4\n",
    );
    let after = load_context(&dir.home, &dir.cwd).unwrap();
    assert_eq!(
        after.sources,
        [ContextSource::Journal {
            id: None,
            max_iterations: Some(4)
        }]
    );
}

#[test]
fn loading_writes_nothing() {
    let dir = AgentDir::new().file("hooks.yaml", "on_error: {command: [x]}\n");
    let list = |path: PathBuf| {
        let mut names: Vec<_> = walk(&path);
        names.sort();
        names
    };
    let before = (list(dir.home.clone()), list(dir.cwd.clone()));
    dir.agent();
    assert_eq!((list(dir.home.clone()), list(dir.cwd.clone())), before);
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

//! Every configuration error users can meet: what, where (file:line:col) and how to fix
//! it. Each is a 126-class error; the rendered text is pinned by a snapshot.

use crate::assert_error_snapshot;
use crate::config::support::{AGENT_YAML, AgentDir};

#[test]
fn missing_context_yaml_prints_the_seed_message() {
    let dir = AgentDir::new().remove("context.yaml");
    let error = assert_error_snapshot!(dir);
    assert_eq!(error.file, dir.path("context.yaml"));
    assert!(error.message.starts_with(&format!(
        "context.yaml not found in {}\n\nDelta Engine requires an explicit context.yaml",
        dir.home.display()
    )));
}

#[test]
fn missing_default_system_prompt() {
    let dir = AgentDir::new().remove("system_prompt.md");
    assert_error_snapshot!(dir);
}

#[test]
fn missing_configured_system_prompt_points_at_the_key() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}system_prompt: prompts/main.md\n"),
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(4), Some(16)));
}

#[test]
fn no_agent_yaml() {
    let dir = AgentDir::empty();
    assert_error_snapshot!(dir);
}

#[test]
fn agent_path_that_does_not_exist() {
    let dir = AgentDir::empty();
    let error = delta_engine::config::load_agent(&dir.path("nope"), &dir.cwd).unwrap_err();
    assert_eq!(
        error.message,
        format!("agent directory not found: {}", dir.path("nope").display())
    );
}

#[test]
fn import_cycle_prints_the_chain() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [tools/a.yaml]\n"),
        )
        .file("tools/a.yaml", "imports: [b.yaml]\ntools: []\n")
        .file("tools/b.yaml", "tools: []\nimports:\n  - ./a.yaml\n");
    let error = assert_error_snapshot!(dir);
    assert_eq!(
        error.message,
        "Import cycle: agent.yaml -> tools/a.yaml -> tools/b.yaml -> tools/a.yaml"
    );
    assert_eq!(error.file, dir.path("tools/b.yaml"));
}

#[test]
fn import_of_the_agent_file_itself_is_a_cycle() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [tools/a.yaml]\n"),
        )
        .file("tools/a.yaml", "imports: [../agent.yaml]\ntools: []\n");
    assert_eq!(
        dir.error().message,
        "Import cycle: agent.yaml -> tools/a.yaml -> agent.yaml"
    );
}

#[test]
fn import_escaping_the_agent_dir_by_dotdot() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports:\n  - ../shared/tools.yaml\n"),
        )
        .file("../shared/tools.yaml", "tools: []\n");
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(5), Some(5)));
}

#[test]
fn import_escaping_the_agent_dir_by_symlink() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [tools/linked.yaml]\n"),
        )
        .file("../shared/tools.yaml", "tools: []\n")
        .symlink("../../shared/tools.yaml", "tools/linked.yaml");
    assert_error_snapshot!(dir);
}

#[test]
fn import_roots_in_an_imported_file_are_rejected() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [tools/a.yaml]\n"),
        )
        .file("tools/a.yaml", "tools: []\nimport_roots: [../../shared]\n");
    assert_error_snapshot!(dir);
}

#[test]
fn missing_import_file() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports:\n  - tools/present.yaml\n  - tools/missing.yaml\n"),
        )
        .file("tools/present.yaml", "tools: []\n");
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(6), Some(5)));
}

#[test]
fn missing_import_root() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}import_roots: [../nowhere]\n"),
    );
    assert_error_snapshot!(dir);
}

#[test]
fn two_execution_modes_in_one_tool() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!(
            "{AGENT_YAML}tools:\n  - name: ok\n    exec: ls\n  - name: both\n    exec: \"echo ${{msg}}\"\n    shell: \"echo ${{msg}}\"\n"
        ),
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(7), Some(5)));
}

#[test]
fn tool_error_in_an_imported_file_points_into_that_file() {
    let dir = AgentDir::new()
        .file("agent.yaml", &format!("{AGENT_YAML}imports: [tools/ops.yaml]\n"))
        .file(
            "tools/ops.yaml",
            "tools:\n  - name: fine\n    exec: ls\n  - name: no_mode\n    description: nothing to run\n",
        );
    let error = assert_error_snapshot!(dir);
    assert_eq!(error.file, dir.path("tools/ops.yaml"));
    assert_eq!((error.line, error.column), (Some(4), Some(5)));
}

#[test]
fn misspelt_tool_key() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}tools:\n  - name: list\n    exce: ls -la\n"),
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!(error.message, "unknown key `exce`; did you mean `exec`?");
    assert_eq!((error.line, error.column), (Some(6), Some(5)));
}

#[test]
fn misspelt_parameter_key() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!(
            "{AGENT_YAML}tools:\n  - name: greet\n    exec: echo ${{msg}}\n    parameters:\n      - name: msg\n        descripton: what to say\n"
        ),
    );
    assert_error_snapshot!(dir);
}

#[test]
fn misspelt_context_key() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: file\n    path: '${CWD}/DELTA.md'\n    on_mising: skip\n",
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!(
        error.message,
        "unknown key `on_mising`; did you mean `on_missing`?"
    );
    assert_eq!((error.line, error.column), (Some(4), Some(5)));
}

#[test]
fn misspelt_generator_key() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: computed_file\n    generator:\n      command: [gen]\n      timout_ms: 10\n    output_path: out.md\n",
    );
    assert_error_snapshot!(dir);
}

#[test]
fn unknown_context_source_type() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: journl\n    max_iterations: 5\n",
    );
    assert_error_snapshot!(dir);
}

#[test]
fn context_key_of_another_source_type() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: file\n    path: x.md\n    max_iterations: 5\n",
    );
    assert_error_snapshot!(dir);
}

#[test]
fn context_source_missing_its_path() {
    let dir = AgentDir::new().file("context.yaml", "sources:\n  - type: file\n    id: guide\n");
    assert_error_snapshot!(dir);
}

#[test]
fn context_journal_max_iterations_must_be_positive() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: journal\n    max_iterations: 0\n",
    );
    assert_error_snapshot!(dir);
}

#[test]
fn context_on_missing_value_is_checked() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: file\n    path: x.md\n    on_missing: skp\n",
    );
    assert_error_snapshot!(dir);
}

#[test]
fn misspelt_hook_key() {
    let dir = AgentDir::new().file("hooks.yaml", "on_run_end:\n  comand: [cleanup]\n");
    let error = assert_error_snapshot!(dir);
    assert_eq!(
        error.message,
        "unknown key `comand`; did you mean `command`?"
    );
}

#[test]
fn unknown_hook_name_lists_the_valid_ones() {
    let dir = AgentDir::new().file(
        "hooks.yaml",
        "on_run_end:\n  command: [cleanup]\npre_tool_exection:\n  command: [check]\n",
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(3), Some(1)));
}

#[test]
fn hook_configured_under_both_names() {
    let dir = AgentDir::new().file(
        "hooks.yaml",
        "pre_tool_exec:\n  command: [a]\npre_tool_execution:\n  command: [b]\n",
    );
    assert_error_snapshot!(dir);
}

#[test]
fn empty_hook_command() {
    let dir = AgentDir::new().file("hooks.yaml", "on_error:\n  command: []\n");
    assert_error_snapshot!(dir);
}

#[test]
fn invalid_yaml_syntax_has_line_and_column() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: test-agent\nllm:\n  model: gpt-4o\ntools:\n  - name: a\n   exec: [ls\n",
    );
    let error = assert_error_snapshot!(dir);
    assert!(error.line.is_some() && error.column.is_some());
}

#[test]
fn tab_indentation_is_explained() {
    let dir = AgentDir::new().file("context.yaml", "sources:\n\t- type: journal\n");
    assert_error_snapshot!(dir);
}

#[test]
fn wrong_type_for_max_iterations() {
    let dir = AgentDir::new().file("agent.yaml", &format!("{AGENT_YAML}max_iterations: many\n"));
    assert_error_snapshot!(dir);
}

#[test]
fn wrong_type_for_tools() {
    let dir = AgentDir::new().file("agent.yaml", &format!("{AGENT_YAML}tools: ls -la\n"));
    assert_error_snapshot!(dir);
}

#[test]
fn wrong_type_for_llm() {
    let dir = AgentDir::new().file("agent.yaml", "name: a\nllm: gpt-4o\n");
    assert_error_snapshot!(dir);
}

#[test]
fn temperature_out_of_range() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: a\nllm:\n  model: gpt-4o\n  temperature: 2.5\n",
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(4), Some(16)));
}

#[test]
fn missing_model() {
    let dir = AgentDir::new().file("agent.yaml", "name: a\nllm:\n  temperature: 1\n");
    assert_error_snapshot!(dir);
}

#[test]
fn missing_name() {
    let dir = AgentDir::new().file("agent.yaml", "llm:\n  model: gpt-4o\n");
    assert_error_snapshot!(dir);
}

#[test]
fn zero_max_iterations() {
    let dir = AgentDir::new().file("agent.yaml", &format!("{AGENT_YAML}max_iterations: 0\n"));
    assert_error_snapshot!(dir);
}

#[test]
fn duplicate_key() {
    let dir = AgentDir::new().file("agent.yaml", &format!("{AGENT_YAML}name: again\n"));
    assert_error_snapshot!(dir);
}

#[test]
fn both_hooks_and_lifecycle_hooks_in_agent_yaml() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!(
            "{AGENT_YAML}hooks:\n  on_error: {{command: [a]}}\nlifecycle_hooks:\n  on_run_end: {{command: [b]}}\n"
        ),
    );
    assert_error_snapshot!(dir);
}

#[test]
fn errors_in_legacy_hooks_point_into_agent_yaml() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}lifecycle_hooks:\n  on_eror:\n    command: [a]\n"),
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!(error.file, dir.path("agent.yaml"));
}

/// Seed 003 §10's load-time rejections reach the user with the seed's wording, located at
/// the tool's entry.
#[test]
fn seed_003_tool_rejections_keep_their_message_and_point_at_the_tool() {
    let cases = [
        (
            "exec: \"cat ${file} | wc -l\"",
            "Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe.",
        ),
        (
            "exec: \"echo ${msg} > ${file}\"",
            "Shell metacharacter '>' not allowed in exec: mode.",
        ),
        (
            "exec: \"echo ${flags:raw}\"",
            ":raw modifier is only allowed in shell: mode",
        ),
        (
            "shell: \"grep ${pattern} ${file}\"\n    parameters:\n      - name: pattern\n        inject_as: stdin",
            "Cannot override inject_as for parameter 'pattern' (inferred: argument, explicit: stdin)",
        ),
        (
            "exec: \"echo ${msg}\"\n    parameters:\n      - name: undefined_param\n        description: \"This param doesn't exist in template\"",
            "Parameter 'undefined_param' not found in template",
        ),
    ];
    for (body, message) in cases {
        let dir = AgentDir::new().file(
            "agent.yaml",
            &format!("{AGENT_YAML}tools:\n  - name: seed_case\n    {body}\n"),
        );
        let error = dir.error();
        assert!(
            error.message.starts_with(message),
            "expected {message:?}, got {:?}",
            error.message
        );
        assert_eq!(error.file, dir.path("agent.yaml"));
        assert_eq!((error.line, error.column), (Some(5), Some(5)), "{error}");
    }
}

#[test]
fn empty_files_say_what_they_need() {
    let dir = AgentDir::new().file("agent.yaml", "# nothing yet\n\n");
    assert_error_snapshot!(dir);
    let dir = AgentDir::new().file("context.yaml", "");
    let error = dir.error();
    assert_eq!(error.message, "context.yaml is empty");
    assert_eq!(error.file, dir.path("context.yaml"));
}

#[test]
fn a_null_value_names_its_key() {
    let dir = AgentDir::new().file("hooks.yaml", "on_error:\n");
    let error = assert_error_snapshot!(dir);
    assert_eq!((error.line, error.column), (Some(1), Some(9)));
}

/// Loads `dir` on another thread: a loader that opens a FIFO blocks until a writer
/// appears, which must fail this test rather than hang the suite.
fn error_without_blocking(dir: AgentDir) -> delta_engine::config::ConfigError {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(dir.load().map(|agent| agent.name)));
    match receiver.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Ok(name)) => panic!("expected a configuration error, loaded agent {name}"),
        Ok(Err(error)) => error,
        Err(_) => panic!("loading the agent blocked (reading a FIFO?)"),
    }
}

// A FIFO named agent.yaml (or any configuration file) made `delta tool expand` and `delta
// run` hang on the read; a device or a directory failed with a raw OS message.
#[test]
fn a_configuration_file_that_is_a_fifo_is_refused_without_reading_it() {
    for name in [
        "agent.yaml",
        "context.yaml",
        "hooks.yaml",
        "system_prompt.md",
    ] {
        let dir = AgentDir::new();
        let path = dir.path(name);
        let _ = std::fs::remove_file(&path);
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        let error = error_without_blocking(dir);
        assert_eq!(
            error.message,
            format!(
                "{} is a named pipe (FIFO), not a regular file",
                path.display()
            )
        );
        assert_eq!(
            error.help.as_deref(),
            Some(
                format!(
                    "replace {} with a regular file (or a symlink to one)",
                    path.display()
                )
                .as_str()
            )
        );
        assert_eq!(error.file, path);
    }
}

#[test]
fn a_directory_or_a_device_is_not_a_configuration_file() {
    let dir = AgentDir::new();
    std::fs::create_dir(dir.path("hooks.yaml")).unwrap();
    assert_eq!(
        dir.error().message,
        format!(
            "{} is a directory, not a regular file",
            dir.path("hooks.yaml").display()
        )
    );

    // Through a symlink, the target's type counts.
    let dir = AgentDir::new()
        .remove("context.yaml")
        .symlink("/dev/null", "context.yaml");
    assert_eq!(
        dir.error().message,
        format!(
            "{} is a character device, not a regular file",
            dir.path("context.yaml").display()
        )
    );

    // A configured system prompt that is not a file points at the `system_prompt:` key.
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}system_prompt: prompts\n"),
    );
    std::fs::create_dir(dir.path("prompts")).unwrap();
    let error = dir.error();
    assert_eq!(
        error.message,
        format!(
            "{} is a directory, not a regular file",
            dir.path("prompts").display()
        )
    );
    assert_eq!(error.file, dir.path("agent.yaml"));
    assert_eq!((error.line, error.column), (Some(4), Some(16)));
}

#[test]
fn configuration_files_may_be_symlinks_to_regular_files() {
    let dir = AgentDir::new()
        .file("../shared/prompt.md", "Shared prompt.\n")
        .remove("system_prompt.md")
        .symlink("../shared/prompt.md", "system_prompt.md")
        .file("../shared/hooks.yaml", "on_run_end:\n  command: [true]\n")
        .symlink("../shared/hooks.yaml", "hooks.yaml");
    let agent = dir.agent();
    assert_eq!(agent.system_prompt, dir.path("system_prompt.md"));
    assert!(!agent.hooks.is_empty());
}

// `hooks_bad: 1` was reported as "expected a mapping" for `hooks_bad`: the value was
// parsed as a hook before its name was checked.
#[test]
fn an_unknown_hook_is_reported_whatever_its_value() {
    for (text, line, column) in [
        ("hooks_bad: 1\n", 1, 1),
        ("pre_tool_exec:\n  command: [a]\npre_tool: [x]\n", 3, 1),
        ("lifecycle_hooks:\n  on_run_ended: nope\n", 2, 3),
    ] {
        let dir = AgentDir::new().file("hooks.yaml", text);
        let error = dir.error();
        assert!(error.message.starts_with("unknown hook `"), "{error}");
        assert_eq!(
            error.help.as_deref(),
            Some(
                "valid hooks: pre_llm_request, post_llm_response, pre_tool_execution, \
                 post_tool_execution, on_error, on_run_end, on_iteration_start, on_iteration_end, on_subagent_end"
            ),
            "{text}"
        );
        assert_eq!(
            (error.line, error.column),
            (Some(line), Some(column)),
            "{text}"
        );
    }
    let dir = AgentDir::new().file("hooks.yaml", "on_run_ended: 1\n");
    assert_eq!(
        dir.error().message,
        "unknown hook `on_run_ended`; did you mean `on_run_end`?"
    );
    // A known hook with a value of the wrong shape is still a shape error.
    let dir = AgentDir::new().file("hooks.yaml", "on_run_end: 1\n");
    assert!(
        dir.error()
            .message
            .starts_with("invalid value for `on_run_end`"),
        "{}",
        dir.error()
    );
}

const BUDGET_HELP: &str = "configuration files are read with limits that protect against \
    runaway YAML (at most 64 levels of nesting, 250000 values, 50000 aliases); write the \
    content out plainly, or move tools into imported files";

#[test]
fn yaml_beyond_the_parser_limits_says_which_limit_and_how_to_fix_it() {
    let deep = format!("{AGENT_YAML}deep: {}{}\n", "[".repeat(100), "]".repeat(100));
    let error = AgentDir::new().file("agent.yaml", &deep).error();
    assert_eq!(
        error.message,
        "YAML nested too deeply (more than 64 levels)"
    );
    assert_eq!(error.help.as_deref(), Some(BUDGET_HELP));
    assert_eq!(error.line, Some(4));

    // A "billion laughs": each alias level multiplies the values by ten.
    let mut bomb = format!("{AGENT_YAML}l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..8 {
        let row = vec![format!("*l{}", level - 1); 10].join(", ");
        bomb.push_str(&format!("l{level}: &l{level} [{row}]\n"));
    }
    let error = AgentDir::new().file("agent.yaml", &bomb).error();
    assert_eq!(error.message, "YAML too large (more than 250000 values)");
    assert_eq!(error.help.as_deref(), Some(BUDGET_HELP));
}

#[test]
fn a_recursive_alias_is_explained() {
    let error = AgentDir::new()
        .file("context.yaml", "sources: &s\n  - type: journal\n  - *s\n")
        .error();
    assert_eq!(
        error.message,
        "recursive alias: an alias (`*name`) is used inside the value of its own anchor \
         (`&name`), which would make an endless value"
    );
    assert_eq!(
        error.help.as_deref(),
        Some("write the value out, or alias only values that are complete")
    );
    assert_eq!((error.line, error.column), (Some(3), Some(5)));
}

/// Issue 30 item 7: `tols:` only warned, and the run started with no tools (paid for).
#[test]
fn a_misspelt_top_level_key_is_an_error_with_a_suggestion() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}tols:\n  - name: t\n    exec: ls\n"),
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!(error.message, "unknown key `tols`; did you mean `tools`?");
    assert_eq!((error.line, error.column), (Some(4), Some(1)));
}

#[test]
fn a_misspelt_key_of_context_yaml_is_an_error_with_a_suggestion() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "total_max_token: 1000\nsources:\n  - type: journal\n",
    );
    let error = assert_error_snapshot!(dir);
    assert_eq!(
        error.message,
        "unknown key `total_max_token`; did you mean `total_max_tokens`?"
    );
}

#[test]
fn a_misspelt_llm_key_is_an_error_pointing_at_extra_body() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: a\nllm:\n  model: m\n  temprature: 0.2\n",
    );
    let error = assert_error_snapshot!(dir);
    assert!(
        error.message.contains("did you mean `temperature`?"),
        "{error}"
    );
    assert_eq!((error.line, error.column), (Some(4), Some(3)));
    assert!(error.help.unwrap().contains("`llm.extra_body`"));
}

/// The documented extension namespace: top-level keys starting with `x-` are the user's
/// in all three files.
#[test]
fn x_prefixed_keys_are_ignored_in_agent_hooks_and_context_yaml() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}x-owner: team-a\nx-notes: {{any: [thing]}}\n"),
        )
        .file(
            "hooks.yaml",
            "x-reviewed: yes\non_error: {command: [true]}\n",
        )
        .file(
            "context.yaml",
            "x-why: short\nsources:\n  - type: journal\n",
        );
    let agent = dir.agent();
    assert!(agent.warnings.is_empty(), "{:?}", agent.warnings);
    let misspelt = AgentDir::new().file("hooks.yaml", "x-ok: 1\non_eror: {command: [true]}\n");
    assert!(misspelt.error().message.contains("did you mean `on_error`"));
}

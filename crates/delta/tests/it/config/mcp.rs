//! `mcp_servers:` in agent.yaml and imported files: what loads, and every error with its
//! place and fix.

use std::time::Duration;

use delta_engine::config::{DEFAULT_MCP_STARTUP_TIMEOUT, DEFAULT_MCP_TIMEOUT, McpTransport};

use crate::config::support::{AGENT_YAML, AgentDir};

#[test]
fn stdio_and_http_servers_load_with_engine_variables_expanded() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!(
            "{AGENT_YAML}mcp_servers:\n  files:\n    command: [\"${{AGENT_HOME}}/bin/server\", --root, \"${{CWD}}\"]\n    env: {{LEVEL: debug, HOME_DIR: \"${{AGENT_HOME}}\"}}\n    cwd: servers\n    tools: [read]\n    timeout_ms: 5000\n  web:\n    url: https://mcp.example.org/mcp\n    headers: {{X-Api-Key: WEB_KEY}}\n    bearer_token_env: WEB_TOKEN\n    startup_timeout_ms: 900\n"
        ),
    );
    let agent = dir.agent();
    let [files, web] = agent.mcp_servers.as_slice() else {
        panic!("two servers: {:?}", agent.mcp_servers);
    };
    let home = dir.home.display().to_string();
    let cwd = dir.cwd.display().to_string();
    assert_eq!(files.name, "files");
    assert_eq!(
        files.transport,
        McpTransport::Stdio {
            argv: vec![format!("{home}/bin/server"), "--root".into(), cwd],
            env: vec![
                ("LEVEL".into(), "debug".into()),
                ("HOME_DIR".into(), home.clone())
            ],
            cwd: Some(dir.home.join("servers")),
        }
    );
    assert_eq!(files.allowed_tools, Some(vec!["read".to_owned()]));
    assert_eq!(files.timeout, Duration::from_millis(5000));
    assert_eq!(files.startup_timeout, DEFAULT_MCP_STARTUP_TIMEOUT);
    assert_eq!(
        (files.file.clone(), files.line),
        (dir.path("agent.yaml"), 5)
    );
    assert_eq!(
        web.transport,
        McpTransport::Http {
            url: "https://mcp.example.org/mcp".into(),
            headers: vec![("X-Api-Key".into(), "WEB_KEY".into())],
            bearer_token_env: Some("WEB_TOKEN".into()),
        }
    );
    assert_eq!(web.timeout, DEFAULT_MCP_TIMEOUT);
    assert_eq!(web.startup_timeout, Duration::from_millis(900));
}

#[test]
fn imported_files_define_servers_and_agent_yaml_overrides_them() {
    let dir = AgentDir::new()
        .file(
            "agent.yaml",
            &format!("{AGENT_YAML}imports: [shared/mcp.yaml]\nmcp_servers:\n  web:\n    url: http://127.0.0.1:8080/mcp\n"),
        )
        .file(
            "shared/mcp.yaml",
            "mcp_servers:\n  files:\n    command: [files-server]\n  web:\n    url: https://elsewhere.example/mcp\n",
        );
    let agent = dir.agent();
    let names: Vec<&str> = agent.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["files", "web"]);
    assert_eq!(agent.mcp_servers[0].file, dir.path("shared/mcp.yaml"));
    assert_eq!(
        agent.mcp_servers[1].transport,
        McpTransport::Http {
            url: "http://127.0.0.1:8080/mcp".into(),
            headers: Vec::new(),
            bearer_token_env: None,
        }
    );
}

/// The error of agent.yaml with `servers` under `mcp_servers:`: (message, line, column,
/// help).
fn error_of(servers: &str) -> (String, Option<u64>, Option<u64>, String) {
    let dir = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}mcp_servers:\n{servers}"),
    );
    let error = dir.error();
    assert_eq!(error.file, dir.path("agent.yaml"));
    (
        error.message,
        error.line,
        error.column,
        error.help.unwrap_or_default(),
    )
}

#[test]
fn a_server_with_both_command_and_url_is_an_error_at_the_url() {
    let (message, line, column, help) =
        error_of("  both:\n    command: [x]\n    url: http://h/mcp\n");
    assert_eq!(message, "MCP server `both` has both `command` and `url`");
    assert_eq!((line, column), (Some(7), Some(10)));
    assert!(help.contains("not both"), "{help}");
}

#[test]
fn a_server_with_neither_is_an_error() {
    let (message, line, _, help) = error_of("  none:\n    tools: [a]\n");
    assert_eq!(message, "MCP server `none` has neither `command` nor `url`");
    assert_eq!(line, Some(6));
    assert!(help.contains("`command: [program, args...]`"), "{help}");
}

#[test]
fn a_server_name_with_a_double_underscore_is_an_error() {
    let (message, line, column, _) = error_of("  a__b:\n    command: [x]\n");
    assert_eq!(
        message,
        "MCP server name `a__b` may not contain `__`, which separates it from its tools' names"
    );
    assert_eq!((line, column), (Some(5), Some(3)));
}

#[test]
fn a_secret_written_where_a_variable_name_belongs_is_an_error() {
    let (message, line, _, help) =
        error_of("  web:\n    url: https://h/mcp\n    bearer_token_env: \"sk-live-123 456\"\n");
    assert_eq!(
        message,
        "`bearer_token_env` must name an environment variable; `sk-live-123 456` is not a \
         variable name"
    );
    assert_eq!(line, Some(7));
    assert!(
        help.contains("secrets are never written in agent files"),
        "{help}"
    );
}

#[test]
fn credentials_in_the_url_are_an_error() {
    let (message, _, _, help) = error_of("  web:\n    url: https://me:pw@h/mcp\n");
    assert_eq!(message, "`url` of MCP server `web` carries credentials");
    assert!(help.contains("bearer_token_env"), "{help}");
}

#[test]
fn stdio_keys_on_an_http_server_are_an_error() {
    let (message, ..) = error_of("  web:\n    url: https://h/mcp\n    cwd: /tmp\n");
    assert_eq!(
        message,
        "`cwd` of MCP server `web` applies only to stdio servers"
    );
}

#[test]
fn a_misspelt_key_is_an_error_with_its_place() {
    let (message, line, ..) = error_of("  files:\n    comand: [x]\n");
    assert!(message.contains("comand"), "{message}");
    assert_eq!(line, Some(6));
}

#[test]
fn a_zero_timeout_is_an_error() {
    let (message, line, ..) = error_of("  files:\n    command: [x]\n    timeout_ms: 0\n");
    assert_eq!(message, "`timeout_ms` must be at least 1");
    assert_eq!(line, Some(7));
}

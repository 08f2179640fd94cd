//! Credential resolution: the `.env` layers of seed 000 §2.6.7, variable-name preference,
//! and the messages for missing or broken settings.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

use delta_engine::llm::{Credentials, CredentialsError, Origin, Source, resolve_credentials};
use tempfile::TempDir;

use crate::support::snapshot::snapshot;

/// A project checkout (`proj/.git`, agent at `proj/agents/writer`) and a workspace
/// outside it, as `delta run --agent proj/agents/writer --work-dir ws` would see them.
struct Layout {
    _dir: TempDir,
    project: PathBuf,
    agent: PathBuf,
    workspace: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        let agent = project.join("agents").join("writer");
        let workspace = dir.path().join("ws");
        fs::create_dir_all(project.join(".git")).unwrap();
        fs::create_dir_all(&agent).unwrap();
        fs::create_dir_all(&workspace).unwrap();
        Layout {
            _dir: dir,
            project,
            agent,
            workspace,
        }
    }

    fn env_file(&self, level: Level) -> PathBuf {
        match level {
            Level::Workspace => self.workspace.join(".env"),
            Level::Agent => self.agent.join(".env"),
            Level::Project => self.project.join(".env"),
        }
    }

    fn write(&self, level: Level, content: &str) {
        fs::write(self.env_file(level), content).unwrap();
    }

    fn resolve(&self, process: &[(&str, &str)]) -> Result<Credentials, CredentialsError> {
        let process: HashMap<String, String> = process
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        resolve_credentials(&self.workspace, &self.agent, |name| {
            process.get(name).cloned()
        })
    }

    fn source(&self, level: Option<Level>) -> Source {
        match level {
            Some(Level::Workspace) => Source::WorkspaceEnvFile(self.env_file(Level::Workspace)),
            Some(Level::Agent) => Source::AgentEnvFile(self.env_file(Level::Agent)),
            Some(Level::Project) => Source::ProjectEnvFile(self.env_file(Level::Project)),
            None => Source::ProcessEnv,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Level {
    Workspace,
    Agent,
    Project,
}

const LOCAL: &str = "DELTA_BASE_URL=http://127.0.0.1:9/v1\n";

#[test]
fn each_layer_overrides_the_ones_below_it() {
    use Level::{Agent, Project, Workspace};
    // (files that set DELTA_API_KEY, whether the process env does, expected winner)
    let table: &[(&[Level], bool, Option<Level>)] = &[
        (&[Workspace, Agent, Project], true, Some(Workspace)),
        (&[Agent, Project], true, Some(Agent)),
        (&[Project], true, Some(Project)),
        (&[], true, None),
        (&[Workspace, Project], false, Some(Workspace)),
        (&[Agent], false, Some(Agent)),
    ];
    for (files, in_process, winner) in table {
        let layout = Layout::new();
        for level in *files {
            layout.write(*level, &format!("DELTA_API_KEY=sk-{level:?}\n"));
        }
        let process: &[(&str, &str)] = if *in_process {
            &[("DELTA_API_KEY", "sk-process")]
        } else {
            &[]
        };
        let credentials = layout.resolve(process).unwrap();
        assert_eq!(
            credentials.api_key_origin(),
            Some(&Origin {
                variable: "DELTA_API_KEY",
                source: layout.source(*winner),
            }),
            "files {files:?}, process env {in_process}"
        );
        assert_eq!(credentials.base_url(), "https://api.openai.com/v1");
        assert_eq!(credentials.base_url_origin(), None);
    }
}

#[test]
fn delta_names_win_over_openai_names_from_any_layer() {
    // The layers form one environment; the variable names are then tried in order.
    let layout = Layout::new();
    layout.write(
        Level::Workspace,
        "OPENAI_API_KEY=sk-ws\nOPENAI_BASE_URL=http://ws.example/v1\n",
    );
    layout.write(
        Level::Project,
        "DELTA_BASE_URL=http://project.example/v1/\n",
    );
    let credentials = layout.resolve(&[("DELTA_API_KEY", "sk-process")]).unwrap();
    assert_eq!(
        credentials.api_key_origin(),
        Some(&Origin {
            variable: "DELTA_API_KEY",
            source: Source::ProcessEnv
        })
    );
    assert_eq!(credentials.base_url(), "http://project.example/v1");
    assert_eq!(
        credentials.base_url_origin().map(ToString::to_string),
        Some(format!(
            "DELTA_BASE_URL from {}",
            layout.env_file(Level::Project).display()
        ))
    );
}

#[test]
fn openai_names_are_used_when_delta_names_are_unset() {
    let layout = Layout::new();
    layout.write(Level::Agent, "OPENAI_API_KEY=sk-agent\n");
    let credentials = layout
        .resolve(&[("OPENAI_BASE_URL", "http://localhost:8000/v1")])
        .unwrap();
    assert_eq!(
        credentials.api_key_origin(),
        Some(&Origin {
            variable: "OPENAI_API_KEY",
            source: layout.source(Some(Level::Agent)),
        })
    );
    assert_eq!(credentials.base_url(), "http://localhost:8000/v1");
}

#[test]
fn empty_values_count_as_unset() {
    let layout = Layout::new();
    layout.write(Level::Workspace, "DELTA_API_KEY=\nDELTA_BASE_URL=  \n");
    layout.write(Level::Agent, "DELTA_API_KEY=sk-agent\n");
    let credentials = layout.resolve(&[]).unwrap();
    assert_eq!(
        credentials.api_key_origin().map(|origin| &origin.source),
        Some(&layout.source(Some(Level::Agent)))
    );
    assert_eq!(credentials.base_url(), "https://api.openai.com/v1");
}

#[test]
fn a_git_file_marks_the_project_root_too() {
    // Worktrees and submodules have a `.git` file instead of a directory.
    let layout = Layout::new();
    fs::remove_dir(layout.project.join(".git")).unwrap();
    fs::write(layout.project.join(".git"), "gitdir: /elsewhere\n").unwrap();
    layout.write(Level::Project, "DELTA_API_KEY=sk-project\n");
    let credentials = layout.resolve(&[]).unwrap();
    assert_eq!(
        credentials.api_key_origin().map(|origin| &origin.source),
        Some(&layout.source(Some(Level::Project)))
    );
}

#[test]
fn without_a_project_root_only_the_other_layers_count() {
    let layout = Layout::new();
    fs::remove_dir(layout.project.join(".git")).unwrap();
    layout.write(Level::Project, "DELTA_API_KEY=sk-project\n");
    let error = layout.resolve(&[]).unwrap_err();
    let CredentialsError::MissingKey { env_files, .. } = &error else {
        panic!("expected MissingKey, got {error:?}");
    };
    assert_eq!(
        env_files,
        &[
            layout.env_file(Level::Workspace),
            layout.env_file(Level::Agent)
        ]
    );
}

#[test]
fn resolving_never_changes_the_process_environment() {
    let layout = Layout::new();
    layout.write(
        Level::Workspace,
        "DELTA_LLM_TEST_CANARY_41F3=1\nDELTA_API_KEY=sk-ws\n",
    );
    layout.resolve(&[]).unwrap();
    assert!(std::env::var_os("DELTA_LLM_TEST_CANARY_41F3").is_none());
}

#[test]
fn env_files_accept_comments_quotes_export_and_a_byte_order_mark() {
    let layout = Layout::new();
    layout.write(
        Level::Workspace,
        "\u{feff}# keys\nexport DELTA_API_KEY=\"sk-quoted\" # trailing\nOPENAI_BASE_URL='http://localhost:1234/v1'\n",
    );
    let credentials = layout.resolve(&[]).unwrap();
    assert!(credentials.has_api_key());
    assert_eq!(credentials.base_url(), "http://localhost:1234/v1");
}

#[test]
fn a_missing_key_for_openai_says_how_to_set_one() {
    let layout = Layout::new();
    let error = layout.resolve(&[]).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "no API key is set for https://api.openai.com/v1\n  = help: set DELTA_API_KEY (or \
             OPENAI_API_KEY) in the environment, or add the line `DELTA_API_KEY=<your key>` to \
             one of these .env files (earlier ones win over later ones and over the \
             environment): {}, {}, {}; a local OpenAI-compatible server needs no key: point \
             DELTA_BASE_URL at it instead, e.g. DELTA_BASE_URL=http://localhost:11434/v1",
            layout.env_file(Level::Workspace).display(),
            layout.env_file(Level::Agent).display(),
            layout.env_file(Level::Project).display(),
        )
    );
}

#[test]
fn openai_named_explicitly_still_needs_a_key() {
    let layout = Layout::new();
    let error = layout
        .resolve(&[("OPENAI_BASE_URL", "https://api.openai.com/v1/")])
        .unwrap_err();
    assert!(
        matches!(error, CredentialsError::MissingKey { .. }),
        "{error:?}"
    );
}

#[test]
fn a_file_serving_several_roles_is_one_layer() {
    // The agent is the project root and also the workspace.
    let layout = Layout::new();
    fs::create_dir(layout.agent.join(".git")).unwrap();
    layout.write(Level::Agent, "OPENAI_API_KEY=sk-agent\n");
    let credentials = resolve_credentials(&layout.agent, &layout.agent, |_| None).unwrap();
    assert_eq!(
        credentials.api_key_origin().map(|origin| &origin.source),
        Some(&Source::WorkspaceEnvFile(layout.env_file(Level::Agent)))
    );

    fs::remove_file(layout.env_file(Level::Agent)).unwrap();
    let error = resolve_credentials(&layout.agent, &layout.agent, |_| None).unwrap_err();
    assert!(
        matches!(&error, CredentialsError::MissingKey { env_files, .. }
            if env_files == &[layout.env_file(Level::Agent)]),
        "{error:?}"
    );
}

#[test]
fn a_local_server_needs_no_key() {
    let layout = Layout::new();
    layout.write(Level::Agent, LOCAL);
    let credentials = layout.resolve(&[]).unwrap();
    assert!(!credentials.has_api_key());
    assert_eq!(credentials.api_key_origin(), None);
    assert_eq!(credentials.base_url(), "http://127.0.0.1:9/v1");
}

#[test]
fn a_syntax_error_points_at_the_line_without_quoting_it() {
    let layout = Layout::new();
    layout.write(
        Level::Agent,
        "# settings\nDELTA_API_KEY=sk-secret-value\nBROKEN sk-secret-value\n",
    );
    let error = layout.resolve(&[]).unwrap_err();
    let path = layout.env_file(Level::Agent);
    assert_eq!(
        error.to_string(),
        format!(
            "invalid line in {0}\n  --> {0}:3:8\n  = help: write one `NAME=value` per line; \
             quote values containing spaces or `#`, and close every quote",
            path.display()
        )
    );
    // Debug output is the types' internals, not a contract: searched for the key.
    assert!(!format!("{error:?}").contains("sk-secret-value"));
}

#[test]
fn an_unclosed_quote_points_at_its_line() {
    let layout = Layout::new();
    layout.write(Level::Workspace, "A=1\nDELTA_API_KEY=\"sk-open\nB=2\n");
    let error = layout.resolve(&[]).unwrap_err();
    assert!(
        matches!(
            &error,
            CredentialsError::EnvFileSyntax {
                line: 2,
                column: 1,
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn an_unreadable_env_file_is_an_error() {
    let layout = Layout::new();
    fs::create_dir(layout.env_file(Level::Workspace)).unwrap();
    let error = layout.resolve(&[]).unwrap_err();
    assert!(
        matches!(&error, CredentialsError::UnreadableEnvFile { path, .. } if path == &layout.env_file(Level::Workspace)),
        "{error:?}"
    );
}

#[test]
fn an_invalid_base_url_names_where_it_was_set() {
    let layout = Layout::new();
    layout.write(Level::Workspace, "DELTA_BASE_URL=localhost:8080\n");
    let error = layout.resolve(&[]).unwrap_err();
    snapshot!(error, @"
    invalid base URL `localhost:8080` (DELTA_BASE_URL from [TEMP]/ws/.env): the scheme must be http or https
      = help: set DELTA_BASE_URL to an absolute http(s) URL ending before /chat/completions, e.g. https://api.openai.com/v1 or http://localhost:11434/v1
    ");
}

#[test]
fn a_key_that_cannot_be_a_header_is_rejected_without_echoing_it() {
    let layout = Layout::new();
    let error = layout
        .resolve(&[("DELTA_API_KEY", "sk-two words")])
        .unwrap_err();
    snapshot!(error, @"
    the API key (DELTA_API_KEY from the process environment) contains characters that cannot be sent in an HTTP header (spaces, control characters or non-ASCII)
      = help: copy the key again, without surrounding text or line breaks
    ");
    // Debug output is the types' internals, not a contract: searched for the key.
    assert!(!format!("{error:?}").contains("sk-two"));
}

#[test]
fn credentials_debug_hides_the_key() {
    let layout = Layout::new();
    layout.write(Level::Workspace, "DELTA_API_KEY=sk-very-secret-123\n");
    let credentials = layout.resolve(&[]).unwrap();
    // Debug output is the types' internals, not a contract: searched.
    let debug = format!("{credentials:?}");
    assert!(!debug.contains("sk-very-secret-123"), "{debug}");
    assert!(debug.contains("[redacted]"), "{debug}");

    let explicit = Credentials::new("http://localhost/v1", Some("sk-explicit-456".into())).unwrap();
    assert!(!format!("{explicit:?}").contains("sk-explicit-456"));
}

#[test]
fn explicit_credentials_are_validated() {
    let credentials = Credentials::new("http://localhost:8080/v1/", Some("  ".into())).unwrap();
    assert_eq!(credentials.base_url(), "http://localhost:8080/v1");
    assert!(!credentials.has_api_key());
    assert!(matches!(
        Credentials::new("file:///etc", None),
        Err(CredentialsError::InvalidBaseUrl { .. })
    ));
}

/// `llm.api: anthropic` reads what Anthropic's SDKs read, then the engine's own variables:
/// `ANTHROPIC_API_KEY` before `DELTA_API_KEY`, `ANTHROPIC_BASE_URL` (the host) before
/// `DELTA_BASE_URL` (whose `/v1` is dropped, so one value serves every API of a gateway),
/// and never `OPENAI_*`.
#[test]
fn anthropic_credentials_come_from_anthropic_variables_then_delta_ones() {
    use delta_engine::llm::{ModelApi, resolve_credentials_for};
    let layout = Layout::new();
    let resolve = |process: &[(&str, &str)]| {
        let process: HashMap<String, String> = process
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        resolve_credentials_for(
            ModelApi::Anthropic,
            &layout.workspace,
            &layout.agent,
            |name| process.get(name).cloned(),
        )
    };
    let both = resolve(&[
        ("ANTHROPIC_API_KEY", "sk-ant-1"),
        ("DELTA_API_KEY", "sk-delta-2"),
        ("ANTHROPIC_BASE_URL", "https://gateway.example/anthropic/"),
        ("DELTA_BASE_URL", "http://127.0.0.1:9/v1"),
    ])
    .unwrap();
    assert_eq!(both.base_url(), "https://gateway.example/anthropic");
    assert_eq!(both.api_key_origin().unwrap().variable, "ANTHROPIC_API_KEY");
    let delta = resolve(&[
        ("DELTA_API_KEY", "sk-delta-2"),
        ("DELTA_BASE_URL", "http://127.0.0.1:9/v1"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:10/v1"),
    ])
    .unwrap();
    assert_eq!(delta.base_url(), "http://127.0.0.1:9");
    assert_eq!(delta.api_key_origin().unwrap().variable, "DELTA_API_KEY");
    let missing = resolve(&[("OPENAI_API_KEY", "sk-openai")]).unwrap_err();
    let message = missing.to_string();
    assert!(
        message.starts_with(
            "no API key is set for https://api.anthropic.com\n  = help: set ANTHROPIC_API_KEY \
             (or DELTA_API_KEY) in the environment"
        ),
        "{message}"
    );
    assert!(message.ends_with("point ANTHROPIC_BASE_URL at it instead (the host, without /v1)"));
}

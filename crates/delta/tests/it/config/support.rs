//! A throw-away agent directory builder.

use std::path::PathBuf;

use delta_engine::config::{Agent, ConfigError, load_agent};
use tempfile::TempDir;

pub const AGENT_YAML: &str = "name: test-agent\nllm:\n  model: gpt-4o\n";

/// seed 000 §2.4.4's default template, comments dropped.
pub const CONTEXT_YAML: &str = "\
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
";

/// `[TEMP]/agent` is the agent directory, `[TEMP]/work` the workspace and `[TEMP]/shared` a
/// directory outside the agent.
pub struct AgentDir {
    tmp: TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
}

impl AgentDir {
    /// A valid minimal agent.
    pub fn new() -> Self {
        Self::empty()
            .file("agent.yaml", AGENT_YAML)
            .file("system_prompt.md", "You are a test agent.\n")
            .file("context.yaml", CONTEXT_YAML)
    }

    /// An empty agent directory.
    pub fn empty() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("agent");
        let cwd = root.join("work");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(root.join("shared")).unwrap();
        Self { tmp, home, cwd }
    }

    /// The temporary root holding `agent/`, `work/` and `shared/`.
    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    /// Write `content` to `rel` (relative to the agent directory; `../` reaches the root).
    pub fn file(self, rel: &str, content: &str) -> Self {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    pub fn remove(self, rel: &str) -> Self {
        std::fs::remove_file(self.home.join(rel)).unwrap();
        self
    }

    /// Create a symlink at `link` (relative to the agent directory) pointing to `target`.
    pub fn symlink(self, target: &str, link: &str) -> Self {
        let link = self.home.join(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
        self
    }

    pub fn load(&self) -> Result<Agent, ConfigError> {
        load_agent(&self.home, &self.cwd)
    }

    pub fn agent(&self) -> Agent {
        match self.load() {
            Ok(agent) => agent,
            Err(err) => panic!("expected the agent to load, got:\n{err}"),
        }
    }

    pub fn error(&self) -> ConfigError {
        match self.load() {
            Ok(agent) => panic!("expected a configuration error, loaded {agent:#?}"),
            Err(err) => err,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.home.join(rel)
    }
}

/// Assert a configuration error against its snapshot, with temporary paths hidden.
#[macro_export]
macro_rules! assert_error_snapshot {
    ($dir:expr) => {{
        let dir = &$dir;
        let error = dir.error();
        $crate::support::snapshot::snapshot!(error);
        error
    }};
}

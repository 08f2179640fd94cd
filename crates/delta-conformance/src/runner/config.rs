//! What every scenario run shares: [`RunnerConfig`], and the fake API key the
//! implementation is given.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::scenario::Level;
use crate::schemas::SchemaSet;

/// The fake API key every implementation is given; a scenario can check that it is never
/// written to disk (`{api_key}`).
pub const API_KEY: &str = "sk-delta-conformance-0000000000000000";

/// What every scenario run shares.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The implementation's command line (relative paths already made absolute).
    pub implementation: Vec<String>,
    /// The sessions implementation's command line (`delta-sessions`), when there is one.
    /// Scenarios that need it are skipped without it.
    pub sessions: Option<Vec<String>>,
    /// The mock-llm program.
    pub mock_llm: PathBuf,
    /// The fixtures directory (holding `agents/`).
    pub fixtures: PathBuf,
    /// The schemas.
    pub schemas: Arc<SchemaSet>,
    /// The default time limit of a step.
    pub step_timeout: Duration,
    /// Keep each scenario's directory instead of deleting it.
    pub keep: bool,
    /// Variables passed through from the runner's environment (besides `PATH`).
    pub pass_env: Vec<String>,
    /// Report only checks at this level or stricter (`None`: every level).
    pub level: Option<Level>,
    /// The words each command of a scenario becomes (an adapter may respell them).
    pub commands: crate::adapter::Commands,
}

//! Shared helpers: tool YAML in, expanded tools, and calls run in a temporary directory.

use std::path::Path;
use std::time::Duration;

use delta_engine::process::{OutputPolicy, ProcessOptions, ProcessOutcome, run_process};
use delta_engine::tool::{EngineVars, ToolDef, ToolError, ToolSpec, expand, render_expanded};
use serde_json::{Map, Value};

pub fn vars() -> EngineVars {
    EngineVars {
        agent_home: "/agents/demo".into(),
        cwd: "/work/space".into(),
    }
}

/// One tool definition, written as the YAML mapping of a `tools:` entry.
pub fn def(yaml: &str) -> ToolDef {
    serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("bad test YAML: {e}\n{yaml}"))
}

pub fn try_expand(yaml: &str) -> Result<ToolSpec, ToolError> {
    expand(&def(yaml), &vars())
}

pub fn spec(yaml: &str) -> ToolSpec {
    try_expand(yaml).unwrap_or_else(|e| panic!("expansion failed: {e}\n{yaml}"))
}

pub fn expand_error(yaml: &str) -> String {
    match try_expand(yaml) {
        Ok(spec) => panic!("expected an error, got:\n{}", render_expanded(&[spec])),
        Err(e) => e.to_string(),
    }
}

/// `{"a": "x"}` → argument map.
pub fn args(value: Value) -> Map<String, Value> {
    value
        .as_object()
        .cloned()
        .unwrap_or_else(|| panic!("arguments must be an object, got {value}"))
}

pub fn options(dir: &Path) -> ProcessOptions {
    ProcessOptions {
        cwd: dir.to_path_buf(),
        env: Vec::new(),
        timeout: Duration::from_secs(20),
        output: OutputPolicy::default(),
        record: None,
    }
}

/// Builds the call and runs it with `dir` as working directory.
pub async fn call(spec: &ToolSpec, arguments: Value, dir: &Path) -> ProcessOutcome {
    let invocation = spec.invocation(&args(arguments)).unwrap();
    run_process(
        &invocation.argv,
        invocation.stdin.as_deref().map(str::as_bytes),
        &options(dir),
    )
    .await
    .unwrap()
}

pub fn stdout(outcome: &ProcessOutcome) -> String {
    assert!(outcome.stdout.is_complete());
    String::from_utf8(outcome.stdout.to_vec()).unwrap()
}

/// The arguments printed by `printf '%s\0' ARGS…`.
pub fn printed_args(outcome: &ProcessOutcome) -> Vec<Vec<u8>> {
    assert_eq!(
        outcome.exit_code,
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&outcome.stderr.to_vec())
    );
    let stdout = outcome.stdout.to_vec();
    let out = stdout
        .strip_suffix(b"\0")
        .expect("printf output ends with NUL");
    out.split(|&b| b == 0).map(<[u8]>::to_vec).collect()
}

/// A temporary directory holding a `canary` file.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

pub const CANARY_TEXT: &str = "canary contents\n";

impl Workspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("canary"), CANARY_TEXT).unwrap();
        Workspace { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, name: &str, contents: &str) {
        std::fs::write(self.path().join(name), contents).unwrap();
    }

    pub fn canary_intact(&self) -> bool {
        std::fs::read_to_string(self.path().join("canary")).is_ok_and(|s| s == CANARY_TEXT)
    }

    /// File names in the directory, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

//! A temporary workspace with one run, an agent directory for hook scripts, and helpers to
//! read what an invocation left behind.

use std::path::{Path, PathBuf};

use delta_engine::config::{HookName, Hooks, parse_hooks_yaml};
use delta_engine::hooks::{HookEvent, HookRunner, ToolCallInfo, ToolResultInfo};
use delta_engine::journal::ActionStatus;
use delta_engine::process::OutputPolicy;
use delta_engine::run::{ErrorInfo, ErrorType, FinalStatus, RunId, RunPaths, create_run};
use serde_json::{Map, Value, json};
use tempfile::TempDir;

pub const RUN_ID: &str = "hooks-test-run";

pub struct Fixture {
    _dir: TempDir,
    pub workspace: PathBuf,
    pub agent: PathBuf,
    pub paths: RunPaths,
}

impl Fixture {
    pub fn new() -> Self {
        Self::new_in(&std::env::temp_dir())
    }

    /// A fixture in a new temporary directory under `parent`.
    pub fn new_in(parent: &Path) -> Self {
        let dir = tempfile::tempdir_in(parent).unwrap();
        // Canonical, so that paths compare equal to what the hook sees as `pwd -P`.
        let root = dir.path().canonicalize().unwrap();
        let workspace = root.join("workspace");
        let agent = root.join("agent");
        std::fs::create_dir(&workspace).unwrap();
        std::fs::create_dir(&agent).unwrap();
        let paths = create_run(&workspace, &RunId::parse(RUN_ID).unwrap()).unwrap();
        Self {
            _dir: dir,
            workspace,
            agent,
            paths,
        }
    }

    /// Writes `agent/NAME` as a POSIX shell script. Hooks run it as `sh SCRIPT`: executing
    /// a file just written can fail with ETXTBSY while other test threads fork.
    pub fn script(&self, name: &str, body: &str) {
        std::fs::write(self.agent.join(name), format!("set -eu\n{body}\n")).unwrap();
    }

    /// `hooks.yaml` text → validated hooks (`${AGENT_HOME}` is the agent directory).
    pub fn hooks(&self, yaml: &str) -> Hooks {
        let file = self.agent.join("hooks.yaml");
        parse_hooks_yaml(yaml, &file, &self.agent, &self.workspace)
            .unwrap_or_else(|e| panic!("bad test hooks.yaml: {e}\n{yaml}"))
    }

    /// A runner for this fixture's run with the given hooks.yaml.
    pub fn runner(&self, yaml: &str) -> HookRunner {
        HookRunner::new(self.hooks(yaml), &self.paths, OutputPolicy::default())
    }

    /// `io/hooks/{name}/` of the run.
    pub fn invocation(&self, name: &str) -> PathBuf {
        self.paths.hooks_dir().join(name)
    }

    /// The names in `io/hooks/`, sorted.
    pub fn invocations(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.paths.hooks_dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `NAME=value` lines (as printed by `env`) → the value of `name`.
pub fn env_value<'a>(env: &'a str, name: &str) -> Option<&'a str> {
    env.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
}

/// A hooks.yaml that runs `sh ${AGENT_HOME}/SCRIPT` at every hook point.
pub fn every_hook_runs(script: &str) -> String {
    HookName::ALL
        .iter()
        .map(|hook| {
            format!(
                "{}:\n  command: [sh, \"${{AGENT_HOME}}/{script}\"]\n",
                hook.as_str()
            )
        })
        .collect()
}

/// Whether `pid` is gone: no such process, or a zombie waiting for its new parent.
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Plausible data for every hook point.
pub struct Samples {
    request: Value,
    args: Map<String, Value>,
    error: ErrorInfo,
}

impl Samples {
    pub fn new() -> Self {
        Self {
            request: json!({"model": "m", "messages": []}),
            args: json!({"path": "a.txt"}).as_object().unwrap().clone(),
            error: ErrorInfo::new(ErrorType::LlmError, "HTTP 500"),
        }
    }

    pub fn call(&self) -> ToolCallInfo<'_> {
        ToolCallInfo {
            action_id: "act-1",
            tool_call_id: "call_1",
            tool_name: "read_file",
            tool_args: &self.args,
            resolved_command: Some("cat a.txt"),
        }
    }

    /// The event of `hook`, as the engine would raise it.
    pub fn event(&self, hook: HookName) -> HookEvent<'_> {
        let result = ToolResultInfo {
            status: ActionStatus::Success,
            exit_code: Some(0),
            observation: "hello",
        };
        match hook {
            HookName::PreLlmRequest => HookEvent::PreLlmRequest {
                request: &self.request,
            },
            HookName::PostLlmResponse => HookEvent::PostLlmResponse {
                body: b"{\n  \"id\": \"chatcmpl-1\"\n}",
            },
            HookName::PreToolExecution => HookEvent::PreToolExecution(self.call()),
            HookName::PostToolExecution => HookEvent::PostToolExecution(self.call(), result),
            HookName::OnError => HookEvent::OnError(&self.error),
            HookName::OnRunEnd => HookEvent::OnRunEnd {
                status: FinalStatus::Completed,
                error: None,
                result: None,
            },
            HookName::OnIterationStart => HookEvent::OnIterationStart,
            HookName::OnIterationEnd => HookEvent::OnIterationEnd,
            HookName::OnSubagentEnd => HookEvent::OnSubagentEnd {
                call: self.call(),
                run_id: "p.1",
                status: FinalStatus::Completed,
                error: None,
                result: None,
            },
        }
    }
}

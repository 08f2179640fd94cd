//! The task file of `delta batch run`: JSON Lines, one task a line, every problem reported
//! with its line number before anything runs.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use delta_engine::budget::{parse_cost_usd, parse_duration, parse_iterations, parse_tokens};
use delta_engine::run::RunId;
use delta_engine::secrets::Redactor;

/// One task: a run of the batch's agent (or its own) on one message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// The task's id, which is also its run id and the name of its workspace.
    pub id: String,
    /// The task given to the agent.
    pub message: String,
    /// Another agent directory for this task (relative to the task file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<PathBuf>,
    /// A directory copied as the task's fresh workspace (relative to the task file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_from: Option<PathBuf>,
    /// Extra environment for the run (its tools, hooks and engine).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The iteration budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// As `--max-cost-usd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// As `--max-tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// As `--max-duration` (`90s`, `30m`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<String>,
}

impl Task {
    /// The budget flags of the task's child `delta run` (or `delta continue`), each value
    /// written as that argument and parsed back by the parser of the flag, the CLI's own:
    /// what passes here, the child takes.
    ///
    /// # Errors
    /// Every value the child would refuse, with what is accepted.
    pub fn limit_args(&self) -> Result<Vec<String>, Vec<String>> {
        type Parse = fn(&str) -> Result<(), String>;
        let flags: [(&str, &str, Option<String>, Parse); 4] = [
            (
                "max_iterations",
                "--max-iterations",
                self.max_iterations.map(|n| n.to_string()),
                |text| parse_iterations(text).map(drop),
            ),
            (
                "max_cost_usd",
                "--max-cost-usd",
                self.max_cost_usd.map(|usd| usd.to_string()),
                |text| parse_cost_usd(text).map(drop),
            ),
            (
                "max_tokens",
                "--max-tokens",
                self.max_tokens.map(|n| n.to_string()),
                |text| parse_tokens(text).map(drop),
            ),
            (
                "max_duration",
                "--max-duration",
                self.max_duration.clone(),
                |text| parse_duration(text).map(drop),
            ),
        ];
        let mut args = Vec::new();
        let mut problems = Vec::new();
        for (key, flag, value, parse) in flags {
            let Some(value) = value else { continue };
            match parse(&value) {
                Ok(()) => args.extend([flag.to_owned(), value]),
                Err(problem) => problems.push(format!("{key}: {problem}")),
            }
        }
        if problems.is_empty() {
            Ok(args)
        } else {
            Err(problems)
        }
    }

    /// The secrets of what the task's child writes and of every file about it: the
    /// credentials its `delta run` in `workspace` with `agent` resolves (the workspace's
    /// `.env`, the agent's, the project's, then its `env` over this process's
    /// environment: the key and the base URL's userinfo), and every API key variable it
    /// inherits.
    #[must_use]
    pub fn redactor(&self, workspace: &Path, agent: &Path) -> Redactor {
        let env = |name: &str| {
            self.env
                .get(name)
                .cloned()
                .or_else(|| delta_engine::launch::env_var(name))
        };
        let inherited = Redactor::inherited(env);
        match delta_engine::llm::resolve_credentials(workspace, agent, env) {
            Ok(credentials) => Redactor::for_run(&credentials, env).union(&inherited),
            Err(_) => inherited,
        }
    }

    /// What its child would refuse or could not be given: budgets, the message's size,
    /// environment names and values (a name must be a variable name; no NUL anywhere,
    /// which no process environment can hold).
    fn problems(&self) -> Vec<String> {
        let mut problems = self.limit_args().err().unwrap_or_default();
        if let Err(problem) = delta_engine::message::check(&self.message) {
            problems.push(format!("message: {problem}"));
        }
        for (name, value) in &self.env {
            if !delta_engine::config::is_env_name(name) {
                problems.push(format!(
                    "env: {:?} is not an environment variable name (letters, digits and `_`, \
                     not starting with a digit)",
                    name
                ));
            }
            if value.contains('\0') {
                problems.push(format!(
                    "env: the value of {name} holds a NUL character, which no environment \
                     can carry"
                ));
            }
        }
        problems
    }
}

/// A task file that cannot be used: every problem, with its line.
#[derive(Debug, thiserror::Error)]
#[error("{} has {} problem(s):\n{}", path.display(), problems.len(), problems.join("\n"))]
pub struct TaskFileError {
    /// The task file.
    pub path: PathBuf,
    /// `line N: what is wrong; the fix`, in line order.
    pub problems: Vec<String>,
}

/// Reads and checks the task file at `path`: every line a JSON object with a valid,
/// unique `id` (a run id) and a `message`; `agent` and `workspace_from` existing
/// directories (relative paths are resolved against the task file's directory, and
/// returned absolute); budgets, message and `env` as `delta run` takes them. Blank lines
/// are skipped.
///
/// # Errors
/// Every problem of the file at once, by line.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, TaskFileError> {
    let fail = |problems: Vec<String>| TaskFileError {
        path: path.to_path_buf(),
        problems,
    };
    let metadata =
        std::fs::metadata(path).map_err(|e| fail(vec![format!("cannot read it: {e}")]))?;
    if !metadata.is_file() {
        return Err(fail(vec![
            "not a regular file; give a JSON Lines task file".to_owned(),
        ]));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| fail(vec![format!("cannot read it as UTF-8 text: {e}")]))?;
    let base = std::path::absolute(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut tasks = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let mut task: Task = match serde_json::from_str(line) {
            Ok(task) => task,
            Err(error) => {
                // serde's "at line 1 column 31" is a position inside this line, which read
                // next to "line 5" as another line of the file (issue 30 item 10).
                let text = error.to_string();
                let suffix = format!(" at line {} column {}", error.line(), error.column());
                let what = text.strip_suffix(&suffix).unwrap_or(&text);
                problems.push(format!(
                    "line {number}, column {}: {what}; each line is one JSON object with at \
                     least \"id\" and \"message\"",
                    error.column()
                ));
                continue;
            }
        };
        if let Err(error) = RunId::parse(&task.id) {
            problems.push(format!(
                "line {number}: id {:?}: {error}; ids are run ids ([A-Za-z0-9][A-Za-z0-9._-]*)",
                task.id
            ));
        } else if !seen.insert(task.id.clone()) {
            problems.push(format!(
                "line {number}: id {:?} is used by an earlier line; give every task its own id",
                task.id
            ));
        }
        for (key, dir) in [
            ("agent", &mut task.agent),
            ("workspace_from", &mut task.workspace_from),
        ] {
            if let Some(relative) = dir.as_ref() {
                let absolute = base.join(relative);
                if absolute.is_dir() {
                    *dir = Some(absolute);
                } else {
                    problems.push(format!(
                        "line {number}: {key} {} is not a directory (paths are relative to \
                         the task file)",
                        relative.display()
                    ));
                }
            }
        }
        problems.extend(
            task.problems()
                .into_iter()
                .map(|problem| format!("line {number}: {problem}")),
        );
        tasks.push(task);
    }
    if tasks.is_empty() && problems.is_empty() {
        problems.push("no tasks; give one JSON object per line".to_owned());
    }
    if problems.is_empty() {
        Ok(tasks)
    } else {
        Err(fail(problems))
    }
}

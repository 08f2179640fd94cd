//! The task file of `delta batch run`: JSON Lines, one task a line, every problem reported
//! with its line number before anything runs.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::budget::parse_duration;
use crate::run::RunId;

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
/// returned absolute). Blank lines are skipped.
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
        if let Some(duration) = &task.max_duration
            && let Err(problem) = parse_duration(duration)
        {
            problems.push(format!("line {number}: max_duration: {problem}"));
        }
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

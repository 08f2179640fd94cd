//! A task set: a directory of task directories, one task directory, or a file listing
//! task directories (one path a line, `#` comments, relative to the file); narrowed by
//! `--task-filter`. Every problem of every task is collected, so that one run of the
//! command lists them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::task::{Loaded, Task, load_task};

/// The tasks of a set, in order, with the warnings of their `task.toml`s.
#[derive(Debug, Default)]
pub struct TaskSet {
    /// The tasks, by name order for a directory, in the file's order for a list.
    pub tasks: Vec<Task>,
    /// `place: what is ignored`.
    pub warnings: Vec<String>,
}

/// Reads the task set at `path` and keeps the tasks whose name matches one of `filters`
/// (glob patterns; all tasks when empty). Problems are appended to `problems`, so that
/// the caller lists them with its own.
#[must_use]
pub fn load_task_set(path: &Path, filters: &[String], problems: &mut Vec<String>) -> TaskSet {
    let mut set = TaskSet::default();
    let entries = match entries(path) {
        Ok(entries) => entries,
        Err(problem) => {
            problems.push(problem);
            return set;
        }
    };
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (shown, absolute) in entries {
        if !absolute.is_dir() {
            problems.push(format!(
                "{}: {}; a task set lists task directories",
                shown.display(),
                if absolute.exists() {
                    "not a directory"
                } else {
                    "no such directory"
                }
            ));
            continue;
        }
        let Loaded {
            task,
            problems: task_problems,
            warnings,
        } = load_task(&absolute, &shown);
        problems.extend(task_problems);
        set.warnings.extend(warnings);
        let Some(task) = task else { continue };
        if let Some(earlier) = names.insert(task.id.clone(), shown.display().to_string()) {
            problems.push(format!(
                "{}: the task name {:?} is also {earlier}'s; give each task its own [task] \
                 name or directory name",
                shown.display(),
                task.name
            ));
            continue;
        }
        set.tasks.push(task);
    }
    if !filters.is_empty() {
        let mut patterns = Vec::new();
        for filter in filters {
            match glob::Pattern::new(filter) {
                Ok(pattern) => patterns.push((filter, pattern)),
                Err(error) => problems.push(format!(
                    "--task-filter {filter:?}: {error}; give a glob such as 'fix-*'"
                )),
            }
        }
        for (filter, pattern) in &patterns {
            if !set.tasks.iter().any(|t| pattern.matches(&t.name)) {
                problems.push(format!(
                    "--task-filter {filter:?} matches no task of {}; the names are {}",
                    path.display(),
                    set.tasks
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        set.tasks
            .retain(|t| patterns.iter().any(|(_, p)| p.matches(&t.name)));
    }
    set
}

/// The task directories `path` names: `(as shown, absolute)`.
fn entries(path: &Path) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if absolute.join("task.toml").is_file() {
        return Ok(vec![(path.to_path_buf(), absolute)]);
    }
    if absolute.is_dir() {
        let mut found: Vec<(PathBuf, PathBuf)> = fs_err::read_dir(&absolute)
            .map_err(|e| format!("{e}; give a readable task set"))?
            .filter_map(Result::ok)
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
            // Files beside the tasks (README.md, registry.json) are not tasks.
            .filter(|entry| entry.path().is_dir())
            .map(|entry| (path.join(entry.file_name()), entry.path()))
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(format!(
                "{}: no task directories in it; a task set is a directory of task \
                 directories (each with task.toml), or a file listing them",
                path.display()
            ));
        }
        return Ok(found);
    }
    let text = fs_err::read_to_string(&absolute).map_err(|e| {
        format!("{e}; give a directory of tasks, a task directory or a file listing them")
    })?;
    let base = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
    let shown_base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let listed: Vec<(PathBuf, PathBuf)> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| (shown_base.join(line), base.join(line)))
        .collect();
    if listed.is_empty() {
        return Err(format!(
            "{}: lists no task directory; write one path a line (relative to the file)",
            path.display()
        ));
    }
    Ok(listed)
}

//! `delta list-runs`: one entry per run directory in `.delta/`, filters and renderings.

use std::fmt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::OutputError;
use crate::run::{
    CalledBy, DELTA_DIR, ParentRef, ReplayRef, RunId, RunPaths, RunStatus, Subtree, Timestamp,
    is_being_created, read_metadata,
};

/// Longest `task_summary`, in characters.
const TASK_SUMMARY_CHARS: usize = 60;

/// A listed run's status: its run status, or UNREADABLE when its metadata could not be
/// read (the run is still listed, with the reason in `error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ListedStatus {
    /// A process is (or was, until it died) working on the run.
    Running,
    /// Waiting for an answer to `ask_human`.
    WaitingForInput,
    /// Finished with a result.
    Completed,
    /// Ended by an unrecoverable error.
    Failed,
    /// Stopped by a signal or the iteration budget, or found orphaned.
    Interrupted,
    /// `metadata.json` is missing or invalid.
    Unreadable,
}

impl ListedStatus {
    /// The status as a [`RunStatus`]; `None` for UNREADABLE.
    #[must_use]
    pub fn as_run_status(self) -> Option<RunStatus> {
        match self {
            ListedStatus::Running => Some(RunStatus::Running),
            ListedStatus::WaitingForInput => Some(RunStatus::WaitingForInput),
            ListedStatus::Completed => Some(RunStatus::Completed),
            ListedStatus::Failed => Some(RunStatus::Failed),
            ListedStatus::Interrupted => Some(RunStatus::Interrupted),
            ListedStatus::Unreadable => None,
        }
    }
}

impl From<RunStatus> for ListedStatus {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Running => ListedStatus::Running,
            RunStatus::WaitingForInput => ListedStatus::WaitingForInput,
            RunStatus::Completed => ListedStatus::Completed,
            RunStatus::Failed => ListedStatus::Failed,
            RunStatus::Interrupted => ListedStatus::Interrupted,
        }
    }
}

impl fmt::Display for ListedStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_run_status() {
            Some(status) => f.write_str(status.as_str()),
            None => f.write_str("UNREADABLE"),
        }
    }
}

/// One run in a `list-runs` listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunListing {
    /// The run directory's name: its id.
    pub run_id: String,
    /// Its status.
    pub status: ListedStatus,
    /// First line of the task, at most 60 characters (null when unreadable).
    pub task_summary: Option<String>,
    /// When its metadata was last written (for unreadable runs, the file's or directory's
    /// modification time; null when even that is unknown).
    pub last_updated: Option<Timestamp>,
    /// Iterations so far (null when unreadable).
    pub iterations: Option<u32>,
    /// The agent's name (null when unreadable).
    pub agent: Option<String>,
    /// Why the metadata could not be read (UNREADABLE only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run a fork was made from, and the seq it was cut at (forks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentRef>,
    /// The recorded run a replay played back (replays only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<ReplayRef>,
    /// The run whose agent tool started this one, and its depth (sub-agents only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called_by: Option<CalledBy>,
    /// What the run and all its sub-agents spent (runs that started sub-agents only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtree: Option<Subtree>,
    /// The workspace the run lives in, when it is not the one listed (a sub-agent that runs
    /// in a sub-directory, listed with `--tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
}

/// The `--format json` output of `list-runs`: most recently updated first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(title = "Delta Engine list-runs output (stdout of list-runs --format json)")]
pub struct RunListingArray(Vec<RunListing>);

/// Which runs `list-runs` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunFilter {
    /// `--resumable`: only INTERRUPTED, WAITING_FOR_INPUT, FAILED and COMPLETED runs.
    pub resumable: bool,
    /// `--status S`: only runs in status `S`.
    pub status: Option<RunStatus>,
}

impl RunFilter {
    /// Whether `listing` passes the filter. UNREADABLE runs pass only an empty filter.
    #[must_use]
    pub fn matches(&self, listing: &RunListing) -> bool {
        let status = listing.status.as_run_status();
        if self.resumable && !status.is_some_and(RunStatus::is_resumable) {
            return false;
        }
        match self.status {
            Some(wanted) => status == Some(wanted),
            None => true,
        }
    }
}

/// Lists every run directory in `workspace/.delta/`, most recently updated first (ties by
/// id). A run whose metadata cannot be read is listed as UNREADABLE with the reason,
/// never skipped and never fatal. A workspace without `.delta/` has no runs.
///
/// # Errors
/// [`OutputError::WorkspaceNotFound`], and [`OutputError::List`] when `.delta/` cannot be
/// listed.
pub fn list_runs(workspace: &Path) -> Result<Vec<RunListing>, OutputError> {
    if !workspace.is_dir() {
        return Err(OutputError::WorkspaceNotFound {
            path: workspace.to_path_buf(),
        });
    }
    let delta = workspace.join(DELTA_DIR);
    let list_err = |source| OutputError::List {
        path: delta.clone(),
        source,
    };
    let entries = match std::fs::read_dir(&delta) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(list_err(source)),
    };
    let mut runs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Run ids never start with '.', so dot entries are temporary or foreign files.
        if name.starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        // Another process is creating it this instant: not a run yet, and not a broken
        // one (its metadata is about to be written).
        if let Ok(id) = RunId::parse(&name)
            && is_being_created(&RunPaths::new(workspace, &id))
        {
            continue;
        }
        runs.push(listing_for(&entry.path(), name));
    }
    runs.sort_by(|a, b| {
        b.last_updated
            .cmp(&a.last_updated)
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    Ok(runs)
}

fn listing_for(dir: &Path, run_id: String) -> RunListing {
    let metadata_path = dir.join("metadata.json");
    match read_metadata(&metadata_path) {
        Ok(metadata) => RunListing {
            run_id,
            status: metadata.status.into(),
            task_summary: Some(summarize_task(&metadata.task)),
            last_updated: Some(metadata.updated_at),
            iterations: Some(metadata.iterations),
            agent: Some(metadata.agent_name),
            error: None,
            parent: metadata.parent,
            replay_of: metadata.replay_of,
            called_by: metadata.called_by,
            subtree: metadata.subtree,
            work_dir: None,
        },
        Err(error) => RunListing {
            run_id,
            status: ListedStatus::Unreadable,
            task_summary: None,
            last_updated: modified(&metadata_path).or_else(|| modified(dir)),
            iterations: None,
            agent: None,
            error: Some(error.to_string()),
            parent: None,
            replay_of: None,
            called_by: None,
            subtree: None,
            work_dir: None,
        },
    }
}

/// A run of a `--tree` listing and how deep it is below the listed top-level run.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    /// 0 for a run nobody listed called.
    pub depth: u32,
    /// The run.
    pub listing: RunListing,
}

/// The runs of `runs` (a workspace's listing) as trees: each run that no listed run
/// called, then its sub-agents in the order they were started, recursively. Children that
/// live in a sub-directory workspace are read from there (their `work_dir` set); `roots`
/// keeps only the top-level runs it accepts (the listing's filters).
#[must_use]
pub fn tree_rows(
    workspace: &Path,
    runs: Vec<RunListing>,
    roots: impl Fn(&RunListing) -> bool,
) -> Vec<TreeRow> {
    let listed: Vec<String> = runs.iter().map(|run| run.run_id.clone()).collect();
    let is_root = |run: &RunListing| {
        run.called_by
            .as_ref()
            .is_none_or(|caller| !listed.contains(&caller.run_id.to_string()))
    };
    let mut rows = Vec::new();
    for run in runs.iter().filter(|run| is_root(run) && roots(run)) {
        push_tree(workspace, run.clone(), 0, &runs, &mut rows);
    }
    rows
}

fn push_tree(
    workspace: &Path,
    run: RunListing,
    depth: u32,
    listed: &[RunListing],
    rows: &mut Vec<TreeRow>,
) {
    let own = run
        .work_dir
        .clone()
        .unwrap_or_else(|| workspace.to_path_buf());
    let children = RunId::parse(&run.run_id)
        .ok()
        .and_then(|id| read_metadata(&RunPaths::new(&own, &id).metadata()).ok())
        .map(|metadata| metadata.children)
        .unwrap_or_default();
    rows.push(TreeRow {
        depth,
        listing: run,
    });
    // A tree cannot nest deeper than its ids are long; this bounds a corrupt one.
    if depth > 64 {
        return;
    }
    for child in children {
        let child_workspace = child.workspace(&own);
        let listing = if child_workspace == workspace {
            listed
                .iter()
                .find(|run| run.run_id == child.run_id.as_str())
                .cloned()
        } else {
            let dir = RunPaths::new(&child_workspace, &child.run_id);
            dir.dir().is_dir().then(|| RunListing {
                work_dir: Some(child_workspace.clone()),
                ..listing_for(dir.dir(), child.run_id.to_string())
            })
        };
        if let Some(listing) = listing {
            push_tree(workspace, listing, depth + 1, listed, rows);
        }
    }
}

fn modified(path: &Path) -> Option<Timestamp> {
    let time = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(DateTime::<Utc>::from(time).into())
}

/// The first line of `task`, cut to 60 characters (the last one an ellipsis when cut).
fn summarize_task(task: &str) -> String {
    let first = task.lines().next().unwrap_or_default().trim_end();
    if first.chars().count() <= TASK_SUMMARY_CHARS {
        return first.to_owned();
    }
    let mut summary: String = first.chars().take(TASK_SUMMARY_CHARS - 1).collect();
    summary.push('…');
    summary
}

/// How long ago `then` was, relative to `now`: `30s ago`, `2m ago`, `5h ago`, `3d ago`.
#[must_use]
pub fn format_age(now: DateTime<Utc>, then: Timestamp) -> String {
    let secs = u64::try_from((now - then.as_datetime()).num_seconds()).unwrap_or(0);
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// `--format text`: aligned columns `RUN_ID  STATUS  "task summary"  AGE` (seed 002
/// §6.2), one run per line; an UNREADABLE run shows `-` as its task and the reason after
/// its age. Empty when there are no runs.
#[must_use]
pub fn render_runs_text(runs: &[RunListing], now: DateTime<Utc>) -> String {
    let rows: Vec<TreeRow> = runs
        .iter()
        .map(|run| TreeRow {
            depth: 0,
            listing: run.clone(),
        })
        .collect();
    render_rows(&rows, now, false)
}

/// `--tree`: as [`render_runs_text`], each sub-agent indented under its caller.
#[must_use]
pub fn render_tree_text(rows: &[TreeRow], now: DateTime<Utc>) -> String {
    render_rows(rows, now, true)
}

fn render_rows(rows: &[TreeRow], now: DateTime<Utc>, tree: bool) -> String {
    let runs: Vec<&RunListing> = rows.iter().map(|row| &row.listing).collect();
    let rows: Vec<[String; 4]> = rows
        .iter()
        .map(|row| {
            let run = &row.listing;
            let indent = if tree && row.depth > 0 {
                format!(
                    "{}└─ ",
                    "   ".repeat(usize::try_from(row.depth - 1).unwrap_or(0))
                )
            } else {
                String::new()
            };
            [
                format!("{indent}{}", run.run_id),
                run.status.to_string(),
                run.task_summary
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |task| format!("{task:?}")),
                run.last_updated
                    .map_or_else(|| "-".to_owned(), |t| format_age(now, t)),
            ]
        })
        .collect();
    let width = |column: usize| {
        rows.iter()
            .map(|row| row.get(column).map_or(0, |cell| cell.chars().count()))
            .max()
            .unwrap_or(0)
    };
    let (id_w, status_w, task_w) = (width(0), width(1), width(2));
    let mut out = String::new();
    for (row, run) in rows.iter().zip(runs) {
        let [id, status, task, age] = row;
        let mut line = format!("{id:<id_w$}  {status:<status_w$}  {task:<task_w$}  {age}");
        if let Some(error) = &run.error {
            line.push_str("  ");
            line.push_str(error);
        }
        if let Some(parent) = &run.parent {
            line.push_str("  (fork of ");
            line.push_str(parent.run_id.as_str());
            line.push_str(" at seq ");
            line.push_str(&parent.seq.to_string());
            line.push(')');
        }
        if let Some(replayed) = &run.replay_of {
            line.push_str("  (replay of ");
            line.push_str(replayed.run_id.as_str());
            line.push(')');
        }
        if let (Some(caller), false) = (&run.called_by, tree) {
            line.push_str(&format!(
                "  (sub-agent of {}, depth {})",
                caller.run_id, caller.depth
            ));
        }
        if let Some(subtree) = &run.subtree {
            line.push_str(&format!(
                "  ({} runs, ${:.4})",
                subtree.runs, subtree.usage.total_cost_usd
            ));
        }
        if let (Some(dir), true) = (&run.work_dir, tree) {
            line.push_str(&format!("  (in {})", dir.display()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `--format json`: a pretty JSON array of the listings, ending with a newline.
#[must_use]
pub fn render_runs_json(runs: &[RunListing]) -> String {
    let mut text = serde_json::to_string_pretty(runs).unwrap_or_else(|_| "[]".to_owned());
    text.push('\n');
    text
}

/// `--format raw`: the run ids, one per line.
#[must_use]
pub fn render_runs_raw(runs: &[RunListing]) -> String {
    runs.iter().map(|run| format!("{}\n", run.run_id)).collect()
}

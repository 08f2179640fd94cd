//! `delta view`: self-contained HTML pages of runs — one page per run ([`run_page`]) and
//! one sortable table of runs linking to them ([`index_page`]) for a workspace or a batch.
//!
//! A page carries its CSS and script inline and refers to nothing on the network, so it
//! opens from `file://`, offline, and can be mailed as one file. A page of a run that is
//! still going reloads itself, so regenerating it (`watch delta view …`) follows the run.

mod eval;
mod html;
mod markdown;
mod page;
mod table;

use std::path::{Path, PathBuf};

pub use eval::write_eval;
pub use page::{FOLD_CHARS, run_page};
pub use table::{RunRow, index_page};

use crate::export::Content;
use delta_engine::output::OutputError;
use delta_engine::run::{DELTA_DIR, RunId, RunPaths, write_atomic};
use delta_engine::trajectory::{Trajectory, TrajectoryError};

/// Name of a run's page inside its run directory.
pub const RUN_PAGE: &str = "view.html";
/// Name of the table page.
pub const INDEX_PAGE: &str = "index.html";

/// What can go wrong writing pages.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A run could not be read.
    #[error(transparent)]
    Trajectory(#[from] TrajectoryError),
    /// A workspace could not be listed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A batch directory has no `runs/`.
    #[error(
        "{} is not a batch directory: it has no runs/ subdirectory (expected \
         BATCH_DIR/runs/<id>/.delta/<id>/, as `delta batch` writes)",
        path.display()
    )]
    NotABatch {
        /// The directory given.
        path: PathBuf,
    },
    /// The directory given as an eval has no `eval.json`.
    #[error(
        "{} is not an eval directory: it has no eval.json (`delta eval run --out` writes one)",
        path.display()
    )]
    NotAnEval {
        /// The directory given.
        path: PathBuf,
    },
    /// A workspace without runs: there is nothing to list.
    #[error(
        "no runs in {}; start one with `delta run -w {} -m TASK`",
        workspace.display(),
        workspace.display()
    )]
    NoRuns {
        /// The workspace.
        workspace: PathBuf,
    },
    /// A page could not be written (the error names the page).
    #[error("{source}")]
    Write {
        /// The page.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Writes `html` to `path` atomically, so a browser reloading a page being regenerated
/// never reads half of it.
///
/// # Errors
/// [`ViewError::Write`].
pub fn write_page(path: &Path, html: &str) -> Result<(), ViewError> {
    write_atomic(path, html.as_bytes()).map_err(|source| ViewError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes the page of one run to `output` (default: `view.html` in its run directory) and
/// returns the path written.
///
/// # Errors
/// [`ViewError`] when the run cannot be read or the page written.
pub fn write_run_page(
    workspace: &Path,
    run_id: &RunId,
    output: Option<&Path>,
    content: Content,
    redact: &dyn Fn(String) -> String,
) -> Result<PathBuf, ViewError> {
    let trajectory = Trajectory::load(workspace, run_id)?;
    let output = output.map_or_else(|| trajectory.dir().join(RUN_PAGE), Path::to_path_buf);
    let html = run_page(&trajectory, &link_base(&trajectory.dir(), &output), content);
    write_page(&output, &redact(html))?;
    write_subagent_pages(&trajectory, content, redact)?;
    Ok(output)
}

/// The page of every sub-agent run below `trajectory`, each in its run directory, where
/// the page of its caller links to it.
fn write_subagent_pages(
    trajectory: &Trajectory,
    content: Content,
    redact: &dyn Fn(String) -> String,
) -> Result<(), ViewError> {
    let mut seen = std::collections::HashSet::from([trajectory.dir()]);
    let mut queue: Vec<Trajectory> = trajectory.subagents().into_iter().map(|(_, t)| t).collect();
    while let Some(child) = queue.pop() {
        if !seen.insert(child.dir()) {
            continue;
        }
        write_page(
            &child.dir().join(RUN_PAGE),
            &redact(run_page(&child, "", content)),
        )?;
        queue.extend(child.subagents().into_iter().map(|(_, t)| t));
    }
    Ok(())
}

/// How a page at `output` refers to files of the run directory `run_dir`: relatively when
/// the page sits in it (the page and its run move together), else by absolute path.
fn link_base(run_dir: &Path, output: &Path) -> String {
    let same = output
        .parent()
        .is_some_and(|parent| parent == run_dir || same_file(parent, run_dir));
    if same {
        String::new()
    } else {
        let absolute = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
        format!("{}/", absolute.display())
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        (Err(_), _) | (_, Err(_)) => false,
    }
}

/// The runs of a workspace as table rows, each run's page written in its run directory;
/// `href_prefix` is how the table page reaches the workspace's `.delta/` (e.g. `""` when
/// the table is in `.delta/`, `runs/W/.delta/` for a batch). A run that cannot be read is
/// listed with its reason instead of a link.
///
/// # Errors
/// [`ViewError`] when the workspace cannot be listed or a page written.
pub fn workspace_rows(
    workspace: &Path,
    href_prefix: &str,
    content: Content,
    redact: &dyn Fn(String) -> String,
) -> Result<Vec<RunRow>, ViewError> {
    let mut rows = Vec::new();
    for listing in delta_engine::output::list_runs(workspace)? {
        let loaded = match RunId::parse(&listing.run_id) {
            Ok(id) => Trajectory::load_paths(RunPaths::new(workspace, &id)),
            Err(error) => {
                rows.push(RunRow::unreadable(&listing.run_id, &error.to_string()));
                continue;
            }
        };
        match loaded {
            Ok(trajectory) => {
                let page = trajectory.dir().join(RUN_PAGE);
                write_page(&page, &redact(run_page(&trajectory, "", content)))?;
                rows.push(RunRow::of(
                    &trajectory,
                    format!("{href_prefix}{}/{RUN_PAGE}", listing.run_id),
                    content,
                ));
            }
            Err(error) => rows.push(RunRow::unreadable(&listing.run_id, &error.to_string())),
        }
    }
    Ok(rows)
}

/// Writes the page of every run of `workspace` and the table page (default:
/// `.delta/index.html`); returns the table's path.
///
/// # Errors
/// [`ViewError`].
pub fn write_workspace(
    workspace: &Path,
    output: Option<&Path>,
    content: Content,
    redact: &dyn Fn(String) -> String,
) -> Result<PathBuf, ViewError> {
    let delta = workspace.join(DELTA_DIR);
    let output = output.map_or_else(|| delta.join(INDEX_PAGE), Path::to_path_buf);
    let prefix = href_prefix(&output, &delta);
    let rows = workspace_rows(workspace, &prefix, content, redact)?;
    if rows.is_empty() {
        return Err(ViewError::NoRuns {
            workspace: workspace.to_path_buf(),
        });
    }
    let title = format!("Runs in {}", workspace.display());
    write_page(&output, &redact(index_page(&title, &rows)))?;
    Ok(output)
}

/// Writes the pages of every run of a batch (`BATCH_DIR/runs/<id>/` is each task's
/// workspace) and the table page (default: `BATCH_DIR/index.html`); returns its path.
///
/// # Errors
/// [`ViewError::NotABatch`] without `runs/`, else as [`write_workspace`].
pub fn write_batch(
    batch: &Path,
    output: Option<&Path>,
    content: Content,
    redact: &dyn Fn(String) -> String,
) -> Result<PathBuf, ViewError> {
    let runs = batch.join("runs");
    let entries = std::fs::read_dir(&runs).map_err(|_| ViewError::NotABatch {
        path: batch.to_path_buf(),
    })?;
    let mut workspaces: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    workspaces.sort();
    let output = output.map_or_else(|| batch.join(INDEX_PAGE), Path::to_path_buf);
    let mut rows = Vec::new();
    for workspace in workspaces {
        let prefix = href_prefix(&output, &workspace.join(DELTA_DIR));
        rows.extend(workspace_rows(&workspace, &prefix, content, redact)?);
    }
    let title = format!("Batch {}", batch.display());
    write_page(&output, &redact(index_page(&title, &rows)))?;
    Ok(output)
}

/// How a table page at `output` reaches the `.delta/` directory `delta`: relatively when
/// `delta` is below the page's directory, else by absolute path.
fn href_prefix(output: &Path, delta: &Path) -> String {
    let base = output.parent().unwrap_or(Path::new("."));
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (base, delta) = (canonical(base), canonical(delta));
    match delta.strip_prefix(&base) {
        Ok(relative) if relative.as_os_str().is_empty() => String::new(),
        Ok(relative) => format!("{}/", relative.display()),
        Err(_) => format!("{}/", delta.display()),
    }
}

//! `delta list-runs`: the runs of a workspace, most recently updated first, to find the id
//! that `delta continue --run-id` needs (seed 000 §2.6.4, seed 002 §6.2).

use std::path::PathBuf;

use clap::{Args, ValueEnum, ValueHint};

use super::error::CliError;
use super::render;
use delta_engine::output::Exit;
use delta_engine::output::{
    RunFilter, RunListing, list_runs, render_runs_json, render_runs_raw, render_runs_text,
    render_tree_text, tree_rows,
};
use delta_engine::run::RunStatus;

/// The long description of `--help` (set on the subcommand, whose doc comment would
/// otherwise replace it).
pub(super) const LONG_ABOUT: &str = "List the runs of a workspace, most recently updated first.\n\n\
        Text output has one line per run: id, status, the task's first line and how long \
        ago the run was last updated. A run whose metadata.json cannot be read is listed \
        as UNREADABLE with the reason, never skipped. With --first only the most recent \
        matching run is printed: its bare id in text and raw formats (for $(...)), an \
        array of one in JSON. No runs: empty output and exit code 0.";

/// Arguments of `delta list-runs`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("All runs of a workspace", "delta list-runs -w ./work"),
        ("Runs that `delta continue` accepts", "delta list-runs -w ./work --resumable"),
        ("Continue the most recent resumable run", "delta continue -w ./work --run-id \"$(delta list-runs -w ./work --resumable --first)\""),
        ("Machine-readable", "delta list-runs -w ./work --status FAILED --format json | jq -r '.[].run_id'"),
        ("Each run with its sub-agents under it", "delta list-runs -w ./work --tree"),
    ])
)]
pub struct ListRunsArgs {
    /// Workspace whose `.delta/` is listed.
    #[arg(short, long = "work-dir", value_name = "PATH", default_value = ".", value_hint = ValueHint::DirPath)]
    work_dir: PathBuf,

    /// Only runs `delta continue` accepts without the Janitor: INTERRUPTED,
    /// WAITING_FOR_INPUT, FAILED and COMPLETED.
    #[arg(long)]
    resumable: bool,

    /// Only runs in this status (RUNNING, WAITING_FOR_INPUT, COMPLETED, FAILED or
    /// INTERRUPTED; any case).
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    status: Option<RunStatus>,

    /// Only the most recently updated matching run.
    #[arg(long)]
    first: bool,

    /// Each run with its sub-agents under it, indented, in the order they were started
    /// (also those in a sub-directory workspace); the filters and --first choose the
    /// top-level runs.
    #[arg(long)]
    tree: bool,

    /// What stdout gets.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

/// `--format` of `list-runs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    /// Aligned columns: id, status, task, age (with --first: the id alone).
    Text,
    /// A JSON array of {run_id, status, task_summary, last_updated, iterations, agent}.
    Json,
    /// The run ids, one per line.
    Raw,
}

fn parse_status(text: &str) -> Result<RunStatus, String> {
    text.parse()
        .map_err(|error: delta_engine::run::UnknownStatus| error.to_string())
}

impl ListRunsArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        let filter = RunFilter {
            resumable: self.resumable,
            status: self.status,
        };
        let listed = list_runs(&self.work_dir)?;
        if self.tree {
            return self.print_tree(listed, filter);
        }
        let mut runs: Vec<RunListing> = listed
            .into_iter()
            .filter(|run| filter.matches(run))
            .collect();
        if self.first {
            runs.truncate(1);
        }
        let text = match self.format {
            ListFormat::Json => render_runs_json(&runs),
            // A bare id is what `$(delta list-runs --first)` must yield.
            ListFormat::Raw => render_runs_raw(&runs),
            ListFormat::Text if self.first => render_runs_raw(&runs),
            ListFormat::Text => render_runs_text(&runs, chrono::Utc::now()),
        };
        if runs.is_empty() && self.format == ListFormat::Text {
            render::stderr(&format!("{}\n", self.empty_hint()));
        }
        render::stdout(&text)?;
        Ok(Exit::Success)
    }

    /// `--tree`: the top-level runs the filters accept (the first only, with --first),
    /// each followed by its sub-agents.
    fn print_tree(&self, listed: Vec<RunListing>, filter: RunFilter) -> Result<Exit, CliError> {
        let first = listed
            .iter()
            .find(|run| run.called_by.is_none() && filter.matches(run))
            .map(|run| run.run_id.clone());
        let rows = tree_rows(&self.work_dir, listed, |run| {
            filter.matches(run) && (!self.first || Some(&run.run_id) == first.as_ref())
        });
        let runs: Vec<RunListing> = rows.iter().map(|row| row.listing.clone()).collect();
        let text = match self.format {
            ListFormat::Json => render_runs_json(&runs),
            ListFormat::Raw => render_runs_raw(&runs),
            ListFormat::Text => render_tree_text(&rows, chrono::Utc::now()),
        };
        if rows.is_empty() && self.format == ListFormat::Text {
            render::stderr(&format!("{}\n", self.empty_hint()));
        }
        render::stdout(&text)?;
        Ok(Exit::Success)
    }

    /// What a human sees on stderr when nothing is listed.
    fn empty_hint(&self) -> String {
        let workspace = self.work_dir.display();
        let mut wanted = Vec::new();
        if self.resumable {
            wanted.push("--resumable".to_owned());
        }
        if let Some(status) = self.status {
            wanted.push(format!("--status {status}"));
        }
        if wanted.is_empty() {
            format!("No runs in {workspace}. Start one with: delta run -w {workspace} -m \"TASK\"")
        } else {
            format!(
                "No runs in {workspace} match {}. Drop the filter to see every run: \
                 delta list-runs -w {workspace}",
                wanted.join(" ")
            )
        }
    }
}

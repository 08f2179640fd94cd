//! The table page: one row per run (a workspace's runs, or a batch's tasks) with status,
//! iterations, tokens, cost and duration, each linking to the run's page; sortable by
//! any column. Rows are plain values, so any source of runs (a workspace, a batch
//! directory) can feed it.

use std::fmt::Write as _;

use super::html::{cost_text, duration_text, esc, head, status_class, tail};
use crate::export::Content;
use crate::run::RunStatus;
use crate::trajectory::Trajectory;

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The run id.
    pub run_id: String,
    /// Link to the run's page (None when it could not be read).
    pub href: Option<String>,
    /// Agent name.
    pub agent: String,
    /// Status (`UNREADABLE` with the reason in `task` when the run could not be read).
    pub status: String,
    /// The task's first line.
    pub task: String,
    /// Iterations.
    pub iterations: u32,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Estimated cost in USD.
    pub cost_usd: f64,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// When the run was created (RFC 3339).
    pub created_at: String,
}

impl RunRow {
    /// The row of a run read back, linking to `href`.
    #[must_use]
    pub fn of(trajectory: &Trajectory, href: String, content: Content) -> Self {
        let metadata = &trajectory.metadata;
        Self {
            run_id: trajectory.run_id().to_owned(),
            href: Some(href),
            agent: metadata.agent_name.clone(),
            status: metadata.status.to_string(),
            task: content
                .text(metadata.task.lines().next().unwrap_or_default())
                .chars()
                .take(120)
                .collect(),
            iterations: metadata.iterations,
            input_tokens: metadata.usage.input_tokens,
            output_tokens: metadata.usage.output_tokens,
            cost_usd: metadata.usage.total_cost_usd,
            duration_ms: trajectory.duration_ms(),
            created_at: metadata.created_at.to_string(),
        }
    }

    /// The row of a run that could not be read.
    #[must_use]
    pub fn unreadable(run_id: &str, reason: &str) -> Self {
        Self {
            run_id: run_id.to_owned(),
            href: None,
            agent: String::new(),
            status: "UNREADABLE".to_owned(),
            task: reason.to_owned(),
            iterations: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            duration_ms: 0,
            created_at: String::new(),
        }
    }
}

/// The table page of `rows`, titled `title`.
#[must_use]
pub fn index_page(title: &str, rows: &[RunRow]) -> String {
    let mut html = String::with_capacity(4096 + rows.len() * 600);
    head(&mut html, title, "");
    let _ = write!(
        html,
        "<header><h1>{}</h1><p class=\"muted\">{} runs · click a column to sort</p></header>\
         <div class=\"table-wrap\"><table class=\"sortable runs\"><thead><tr>\
         <th>Run</th><th>Status</th><th>Agent</th><th>Task</th><th class=\"num\">Iterations</th>\
         <th class=\"num\">Tokens in</th><th class=\"num\">Tokens out</th><th class=\"num\">Cost</th>\
         <th class=\"num\">Duration</th><th>Started</th></tr></thead><tbody>",
        esc(title),
        rows.len()
    );
    for row in rows {
        let run = match &row.href {
            Some(href) => format!("<a href=\"{}\">{}</a>", esc(href), esc(&row.run_id)),
            None => esc(&row.run_id),
        };
        let class = row
            .status
            .parse::<RunStatus>()
            .map_or("status-bad", status_class);
        let _ = write!(
            html,
            "<tr data-run-id=\"{id}\"><td>{run}</td><td class=\"{class}\">{status}</td><td>{agent}</td>\
             <td>{task}</td><td class=\"num\" data-sort=\"{it}\">{it}</td>\
             <td class=\"num\" data-sort=\"{tin}\">{tin}</td><td class=\"num\" data-sort=\"{tout}\">{tout}</td>\
             <td class=\"num\" data-sort=\"{cost}\">{cost_text}</td>\
             <td class=\"num\" data-sort=\"{ms}\">{duration}</td><td>{created}</td></tr>",
            id = esc(&row.run_id),
            status = esc(&row.status),
            agent = esc(&row.agent),
            task = esc(&row.task),
            it = row.iterations,
            tin = row.input_tokens,
            tout = row.output_tokens,
            cost = row.cost_usd,
            cost_text = cost_text(row.cost_usd),
            ms = row.duration_ms,
            duration = duration_text(row.duration_ms),
            created = esc(&row.created_at),
        );
    }
    html.push_str("</tbody></table></div>");
    tail(&mut html);
    html
}

//! The table page: one row per run (a workspace's runs, or a batch's tasks) with status,
//! iterations, tokens, cost and duration, each linking to the run's page; sortable by
//! any column. Rows are plain values, so any source of runs (a workspace, a batch
//! directory) can feed it.

use std::fmt::Write as _;

use super::html::{cost_text, duration_text, esc, head, status_class, tail, time_text};
use crate::export::Content;
use delta_engine::run::RunStatus;
use delta_engine::trajectory::Trajectory;

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
    /// Whether the run passed its check, for tables that grade runs (an eval); None
    /// where nothing graded it. The pass rate counts these when any row has one, else
    /// COMPLETED runs.
    pub passed: Option<bool>,
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
            created_at: time_text(metadata.created_at),
            passed: None,
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
            passed: None,
        }
    }
}

/// The table page of `rows`, titled `title`: the totals (runs by status, pass rate,
/// tokens, cost, wall time) above and below one row per run.
#[must_use]
pub fn index_page(title: &str, rows: &[RunRow]) -> String {
    let mut html = String::with_capacity(4096 + rows.len() * 600);
    head(&mut html, title, "");
    let graded = rows.iter().any(|row| row.passed.is_some());
    let totals = Totals::of(rows, graded);
    let _ = write!(
        html,
        "<header><h1>{}</h1><p class=\"totals\">{} runs: {} · pass rate {} · {} · {} in all</p>\
         <p class=\"muted\">click a column to sort</p></header>\
         <div class=\"table-wrap\"><table class=\"sortable runs\"><thead><tr>\
         <th>Run</th><th>Status</th>{}<th>Agent</th><th>Task</th><th class=\"num\">Iterations</th>\
         <th class=\"num\">Tokens in</th><th class=\"num\">Tokens out</th><th class=\"num\">Cost</th>\
         <th class=\"num\">Duration</th><th>Started</th></tr></thead><tbody>",
        esc(title),
        totals.runs,
        esc(&totals.statuses),
        totals.pass_rate,
        totals.cost,
        totals.duration,
        if graded { "<th>Passed</th>" } else { "" },
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
        let passed = match (graded, row.passed) {
            (false, _) => String::new(),
            (true, Some(true)) => "<td class=\"status-ok\" data-sort=\"1\">yes</td>".to_owned(),
            (true, Some(false)) => "<td class=\"status-bad\" data-sort=\"0\">no</td>".to_owned(),
            (true, None) => "<td data-sort=\"-1\">—</td>".to_owned(),
        };
        let _ = write!(
            html,
            "<tr data-run-id=\"{id}\"><td class=\"name\">{run}</td><td class=\"name {class}\">{status}</td>\
             {passed}<td class=\"name\">{agent}</td>\
             <td class=\"task\" title=\"{task}\">{task}</td><td class=\"num\" data-sort=\"{it}\">{it}</td>\
             <td class=\"num\" data-sort=\"{tin}\">{tin}</td><td class=\"num\" data-sort=\"{tout}\">{tout}</td>\
             <td class=\"num\" data-sort=\"{cost}\">{cost_text}</td>\
             <td class=\"num\" data-sort=\"{ms}\">{duration}</td><td class=\"time\">{created}</td></tr>",
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
    let _ = write!(
        html,
        "</tbody><tfoot><tr class=\"totals\"><td class=\"name\">{runs} runs</td>\
         <td class=\"pass-rate\" colspan=\"{span}\">pass rate {rate}</td>\
         <td>{statuses}</td><td class=\"num\">{it}</td><td class=\"num\">{tin}</td>\
         <td class=\"num\">{tout}</td><td class=\"num\">{cost}</td><td class=\"num\">{duration}</td>\
         <td></td></tr></tfoot></table></div>",
        runs = totals.runs,
        span = if graded { 3 } else { 2 },
        rate = totals.pass_rate,
        statuses = esc(&totals.statuses),
        it = totals.iterations,
        tin = totals.input_tokens,
        tout = totals.output_tokens,
        cost = totals.cost,
        duration = totals.duration,
    );
    tail(&mut html);
    html
}

/// What the rows of a table add up to.
struct Totals {
    runs: usize,
    /// `43 COMPLETED, 7 INTERRUPTED`.
    statuses: String,
    /// `86.0% (43/50 COMPLETED)`.
    pass_rate: String,
    iterations: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost: String,
    duration: String,
}

impl Totals {
    fn of(rows: &[RunRow], graded: bool) -> Self {
        let mut by_status: Vec<(String, usize)> = Vec::new();
        for row in rows {
            match by_status
                .iter_mut()
                .find(|(status, _)| *status == row.status)
            {
                Some((_, count)) => *count += 1,
                None => by_status.push((row.status.clone(), 1)),
            }
        }
        by_status.sort();
        let statuses: Vec<String> = by_status
            .iter()
            .map(|(status, count)| format!("{count} {status}"))
            .collect();
        let (passed, out_of, what) = if graded {
            (
                rows.iter().filter(|row| row.passed == Some(true)).count(),
                rows.iter().filter(|row| row.passed.is_some()).count(),
                "passed",
            )
        } else {
            (
                rows.iter().filter(|row| row.status == "COMPLETED").count(),
                rows.len(),
                "COMPLETED",
            )
        };
        let pass_rate = if out_of == 0 {
            "—".to_owned()
        } else {
            format!(
                "{:.1}% ({passed}/{out_of} {what})",
                passed as f64 * 100.0 / out_of as f64
            )
        };
        let sum = |field: fn(&RunRow) -> u64| rows.iter().map(field).sum::<u64>();
        Self {
            runs: rows.len(),
            statuses: statuses.join(", "),
            pass_rate,
            iterations: sum(|row| u64::from(row.iterations)),
            input_tokens: sum(|row| row.input_tokens),
            output_tokens: sum(|row| row.output_tokens),
            cost: cost_text(rows.iter().map(|row| row.cost_usd).sum()),
            duration: duration_text(sum(|row| row.duration_ms)),
        }
    }
}

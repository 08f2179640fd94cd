//! The table page of an eval directory: one row per trial (task, attempt, status, reward,
//! error, cost, duration), sortable by any column, each linking to its run's page and to
//! its verifier's output; the eval's counts and mean rewards above it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::html::{cost_text, duration_text, esc, head, tail};
use super::{INDEX_PAGE, RUN_PAGE, ViewError, run_page, write_page};
use crate::eval::report::report;
use crate::eval::{TrialResult, TrialStatus};
use crate::export::Content;
use delta_engine::run::{RunId, RunPaths};
use delta_engine::trajectory::Trajectory;

/// Writes the page of every trial's run and the eval's table page (default:
/// `EVAL_DIR/index.html`); returns the table's path.
///
/// # Errors
/// [`ViewError::NotAnEval`] without `eval.json`; a page that cannot be written.
pub fn write_eval(
    dir: &Path,
    output: Option<&Path>,
    content: Content,
    redact: &dyn Fn(String) -> String,
) -> Result<PathBuf, ViewError> {
    let (eval, manifest) = crate::eval::open(dir).map_err(|_| ViewError::NotAnEval {
        path: dir.to_path_buf(),
    })?;
    let results = eval.results();
    let output = output.map_or_else(|| eval.root().join(INDEX_PAGE), Path::to_path_buf);
    let base = output
        .parent()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .unwrap_or_default();
    let link = |path: &Path| match path.strip_prefix(&base) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    };
    let mut rows = String::new();
    for trial in manifest.trials() {
        let task = &manifest.tasks[trial.task];
        let Some(result) = results.get(&trial.id) else {
            let _ = write!(
                rows,
                "<tr><td>{task}</td><td class=\"num\">{attempt}</td><td class=\"status-warn\">\
                 pending</td><td class=\"num\" data-sort=\"-1\">-</td><td></td><td></td>\
                 <td class=\"num\" data-sort=\"0\"></td><td class=\"num\" data-sort=\"0\"></td>\
                 <td></td></tr>",
                task = esc(&task.name),
                attempt = trial.attempt
            );
            continue;
        };
        let root = std::fs::canonicalize(eval.root()).unwrap_or_else(|_| eval.root().into());
        let run = match (&result.run_id, &result.paths.run) {
            (Some(run_id), Some(_)) => {
                let workspace = eval.workspace(&trial.id);
                match RunId::parse(run_id)
                    .ok()
                    .and_then(|id| Trajectory::load_paths(RunPaths::new(&workspace, &id)).ok())
                {
                    Some(trajectory) => {
                        let page = trajectory.dir().join(RUN_PAGE);
                        write_page(&page, &redact(run_page(&trajectory, "", content)))?;
                        let page = root.join(eval.relative(&page));
                        format!("<a href=\"{}\">{}</a>", esc(&link(&page)), esc(run_id))
                    }
                    None => esc(run_id),
                }
            }
            (Some(run_id), None) => esc(run_id),
            (None, _) => String::new(),
        };
        let verifier = result
            .paths
            .verifier
            .as_ref()
            .map(|v| root.join(v).join("test-stdout.txt"))
            .filter(|p| p.is_file())
            .map_or_else(String::new, |p| {
                format!("<a href=\"{}\">test-stdout.txt</a>", esc(&link(&p)))
            });
        let _ = write!(
            rows,
            "<tr data-trial=\"{id}\"><td>{task}</td><td class=\"num\">{attempt}</td>\
             <td class=\"{class}\">{status}</td><td class=\"num\" data-sort=\"{sort}\">{reward}</td>\
             <td>{rewards}</td><td>{error}</td><td class=\"num\" data-sort=\"{cost}\">{cost_text}</td>\
             <td class=\"num\" data-sort=\"{ms}\">{duration}</td><td>{run} {verifier}</td></tr>",
            id = esc(&trial.id),
            task = esc(&task.name),
            attempt = trial.attempt,
            class = status_class(result.status),
            status = result.status.as_str(),
            sort = result.reward.unwrap_or(-1.0),
            reward = result
                .reward
                .map_or_else(|| "-".to_owned(), |r| format!("{r:.4}")),
            rewards = esc(&named_rewards(result)),
            error = esc(&result
                .error
                .as_ref()
                .map(|e| format!("{}: {}", e.class.as_str(), e.message))
                .unwrap_or_default()),
            cost = result.cost_usd,
            cost_text = cost_text(result.cost_usd),
            ms = result.durations_ms.total,
            duration = duration_text(result.durations_ms.total),
        );
    }
    let scores = report(&manifest, &results).overall;
    let title = format!("Eval {}", eval.root().display());
    let mut html = String::with_capacity(4096 + rows.len());
    head(&mut html, &title, "");
    let mean = |m: Option<f64>| m.map_or_else(|| "-".to_owned(), |m| format!("{m:.4}"));
    let _ = write!(
        html,
        "<header><h1>{}</h1><p class=\"muted\">{} trials: {} passed, {} failed, {} errored, \
         {} pending · mean reward {} (errored as 0), {} (verified only) · click a column to \
         sort</p></header><div class=\"table-wrap\"><table class=\"sortable trials\"><thead><tr>\
         <th>Task</th><th class=\"num\">Attempt</th><th>Status</th><th class=\"num\">Reward</th>\
         <th>Named rewards</th><th>Error</th><th class=\"num\">Cost</th>\
         <th class=\"num\">Duration</th><th>Run · verifier</th></tr></thead><tbody>{rows}\
         </tbody></table></div>",
        esc(&title),
        scores.trials + scores.pending,
        scores.passed,
        scores.failed,
        scores.errored,
        scores.pending,
        mean(scores.mean_reward),
        mean(scores.mean_reward_verified),
    );
    tail(&mut html);
    write_page(&output, &redact(html))?;
    Ok(output)
}

/// The named rewards other than `reward`, as `name=value` pairs.
fn named_rewards(result: &TrialResult) -> String {
    result
        .rewards
        .iter()
        .filter(|(name, _)| name.as_str() != "reward")
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn status_class(status: TrialStatus) -> &'static str {
    match status {
        TrialStatus::Passed => "status-ok",
        TrialStatus::Failed => "status-bad",
        TrialStatus::Errored => "status-warn",
    }
}

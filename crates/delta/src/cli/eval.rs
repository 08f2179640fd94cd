//! `delta eval`: run a Harbor-format task set as verified trials (locally or as a Slurm
//! array job), the report of an eval directory, the comparison of two, and the worker and
//! trial processes the executors start. Parsing and rendering only; the engine's `eval`
//! module does the work.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum, ValueHint};

use super::error::CliError;
use super::render;
use delta_engine::eval;
use delta_engine::eval::compare::{Change, Comparison};
use delta_engine::eval::report::{Report, Scores};
use delta_engine::output::Exit;

/// Arguments of `delta eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    command: EvalCommand,
}

#[derive(Debug, Subcommand)]
enum EvalCommand {
    /// The scores of an eval directory: counts, mean reward with its standard error and
    /// 95% interval, pass@k and pass^k, cost and time, overall and per task.
    #[command(after_help = render::examples(&[
        ("The scores", "delta eval report ./eval1"),
        ("As one JSON object", "delta eval report ./eval1 --format json | jq .pass_at_k"),
    ]))]
    Report(ReportArgs),
    /// Two evals of the same tasks side by side: per-task differences, a paired bootstrap
    /// interval and a sign test.
    #[command(after_help = render::examples(&[
        ("Did the new agent do better?", "delta eval compare ./eval-old ./eval-new"),
    ]))]
    Compare(CompareArgs),
}

/// What stdout gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Tables.
    Text,
    /// One JSON object.
    Json,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The eval directory (`--out` of `delta eval run`).
    #[arg(value_name = "EVAL_DIR", value_hint = ValueHint::DirPath)]
    dir: PathBuf,

    /// What stdout gets.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// The baseline eval directory.
    #[arg(value_name = "EVAL_A", value_hint = ValueHint::DirPath)]
    a: PathBuf,

    /// The eval compared with it.
    #[arg(value_name = "EVAL_B", value_hint = ValueHint::DirPath)]
    b: PathBuf,

    /// What stdout gets.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

impl EvalArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        match self.command {
            EvalCommand::Report(args) => args.run(),
            EvalCommand::Compare(args) => args.run(),
        }
    }
}

impl ReportArgs {
    fn run(self) -> Result<Exit, CliError> {
        let (dir, manifest) = eval::open(&self.dir)?;
        let report = eval::report::report(&manifest, &dir.results());
        let text = match self.format {
            Format::Json => format!("{}\n", serde_json::to_string(&report).unwrap_or_default()),
            Format::Text => report_text(&report),
        };
        render::stdout(&text)?;
        Ok(Exit::Success)
    }
}

impl CompareArgs {
    fn run(self) -> Result<Exit, CliError> {
        let (a_dir, a) = eval::open(&self.a)?;
        let (b_dir, b) = eval::open(&self.b)?;
        let comparison = eval::compare::compare((&a, &a_dir.results()), (&b, &b_dir.results()));
        let text = match self.format {
            Format::Json => format!(
                "{}\n",
                serde_json::to_string(&comparison).unwrap_or_default()
            ),
            Format::Text => compare_text(&comparison),
        };
        render::stdout(&text)?;
        Ok(Exit::Success)
    }
}

/// A number to 4 decimals, `-` when undefined.
fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.4}"))
}

fn interval(value: Option<[f64; 2]>) -> String {
    value.map_or_else(|| "-".to_owned(), |[lo, hi]| format!("[{lo:.4}, {hi:.4}]"))
}

fn with_error(mean: Option<f64>, stderr: Option<f64>) -> String {
    match (mean, stderr) {
        (Some(mean), Some(se)) => format!("{mean:.4} ± {se:.4}"),
        (mean, _) => number(mean),
    }
}

fn counts(map: &BTreeMap<String, usize>) -> String {
    map.iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn duration(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// The report as tables: the summary, both countings side by side, then one row a task.
fn report_text(report: &Report) -> String {
    let o = &report.overall;
    let mut text = format!(
        "{} trial(s) of {} task(s), {} attempt(s) each: {} passed, {} failed, {} errored, {} pending\n",
        o.trials,
        report.tasks.len(),
        o.attempts,
        o.passed,
        o.failed,
        o.errored,
        o.pending
    );
    if !o.errors.is_empty() {
        text.push_str(&format!("errored: {}\n", counts(&o.errors)));
    }
    text.push_str(&format!(
        "\n{:<14} {:<24} {:<24}\n",
        "", "errored as 0", "verified only"
    ));
    text.push_str(&format!(
        "{:<14} {:<24} {:<24}\n",
        "mean reward",
        with_error(o.mean_reward, o.stderr),
        with_error(o.mean_reward_verified, o.stderr_verified)
    ));
    text.push_str(&format!(
        "{:<14} {:<24} {:<24}\n",
        "95% CI",
        interval(o.ci95),
        interval(o.ci95_verified)
    ));
    for (label, all, verified) in [
        ("pass@", &o.pass_at_k, &o.pass_at_k_verified),
        ("pass^", &o.pass_hat_k, &o.pass_hat_k_verified),
    ] {
        for (k, value) in all {
            text.push_str(&format!(
                "{:<14} {:<24} {:<24}\n",
                format!("{label}{k}"),
                number(*value),
                number(verified.get(k).copied().flatten())
            ));
        }
    }
    text.push_str(&format!(
        "(± is the standard error{}; the interval uses Student's t)\n\n",
        if o.clustered {
            ", clustered by task"
        } else {
            ""
        }
    ));
    text.push_str(&format!(
        "tokens {} in + {} out · cost ${:.4} · {} per passed trial · wall per trial p50 {}, p95 {}\n\n",
        o.input_tokens,
        o.output_tokens,
        o.cost_usd,
        o.cost_per_solved_usd
            .map_or_else(|| "-".to_owned(), |c| format!("${c:.4}")),
        duration(o.wall_ms.p50),
        duration(o.wall_ms.p95)
    ));
    let k = o.attempts;
    text.push_str(&format!(
        "{:<28} {:>6} {:>6} {:>6} {:>7} {:>7} {:>8} {:>7}  {}\n",
        "TASK",
        "TRIALS",
        "PASSED",
        "FAILED",
        "ERRORED",
        "MEAN",
        "VERIFIED",
        format!("PASS@{k}"),
        "ERRORS"
    ));
    for (name, scores) in &report.tasks {
        text.push_str(&task_row(name, scores, k));
    }
    trim_lines(&text)
}

/// `text` without the spaces that padding leaves at the ends of its lines.
fn trim_lines(text: &str) -> String {
    text.lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect()
}

fn task_row(name: &str, s: &Scores, k: u32) -> String {
    format!(
        "{:<28} {:>6} {:>6} {:>6} {:>7} {:>7} {:>8} {:>7}  {}\n",
        name,
        s.trials,
        s.passed,
        s.failed,
        s.errored,
        number(s.mean_reward),
        number(s.mean_reward_verified),
        number(s.pass_at_k.get(&k).copied().flatten()),
        counts(&s.errors)
    )
}

/// The comparison as a table of tasks, then the statistics.
fn compare_text(c: &Comparison) -> String {
    let mut text = format!(
        "{:<28} {:>7} {:>7} {:>8}  {}\n",
        "TASK", "A", "B", "B - A", "CHANGE"
    );
    for task in &c.tasks {
        let change = match task.change {
            Change::Improved => "improved",
            Change::Regressed => "regressed",
            Change::Same => "same",
        };
        text.push_str(&format!(
            "{:<28} {:>7.4} {:>7.4} {:>+8.4}  {change}\n",
            task.task, task.mean_a, task.mean_b, task.difference
        ));
    }
    if !c.only_a.is_empty() {
        text.push_str(&format!("only in A (left out): {}\n", c.only_a.join(", ")));
    }
    if !c.only_b.is_empty() {
        text.push_str(&format!("only in B (left out): {}\n", c.only_b.join(", ")));
    }
    text.push_str(&format!(
        "\nmean difference B - A over {} task(s): {}, 95% CI {} (paired bootstrap, {} resamples, seed {})\n",
        c.tasks.len(),
        c.mean_difference
            .map_or_else(|| "-".to_owned(), |d| format!("{d:+.4}")),
        c.ci95.map_or_else(
            || "-".to_owned(),
            |[lo, hi]| format!("[{lo:+.4}, {hi:+.4}]")
        ),
        c.resamples,
        c.seed
    ));
    text.push_str(&format!(
        "sign test: {} improved, {} regressed, {} same; exact two-sided p = {:.4}\n",
        c.improved, c.regressed, c.same, c.sign_test_p
    ));
    text
}

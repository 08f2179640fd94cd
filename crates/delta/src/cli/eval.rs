//! `delta eval`: run a Harbor-format task set as verified trials (locally or as a Slurm
//! array job), the report of an eval directory, the comparison of two, and the worker and
//! trial processes the executors start. Parsing and rendering only; the engine's `eval`
//! module does the work.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum, ValueHint};

use super::batch::{
    Executor, Finished, ProgressLines, SlurmArgs, delta_binary, jobs_or_cores, submitted,
};
use super::drive::TerminalFrontend;
use super::error::CliError;
use super::render;
use super::stream::StreamRenderer;
use delta_engine::budget::parse_duration;
use delta_engine::output::Exit;
use delta_experiment::batch::LocalOutcome;
use delta_experiment::eval::compare::{Change, Comparison};
use delta_experiment::eval::report::{Report, Scores};
use delta_experiment::eval::trial::{Reporting, TrialEnd};
use delta_experiment::eval::{self, EvalSpec, TrialDone, TrialLimits};

/// Arguments of `delta eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    command: EvalCommand,
}

#[derive(Debug, Subcommand)]
enum EvalCommand {
    /// Run (or continue) an eval: every task of a Harbor-format task set, -k times, each
    /// trial in a fresh container of the task's image and verified by the task's tests.
    #[command(after_help = render::examples(&[
        ("Check that the tasks are sound: their own solutions must pass", "delta eval run ./tasks --oracle --out ./oracle"),
        ("An agent, 5 attempts per task, 4 trials at a time", "delta eval run ./tasks --agent ./my-agent --out ./eval1 -k 5 --jobs 4"),
        ("Continue it after a crash or Ctrl-C: the same command", "delta eval run ./tasks --agent ./my-agent --out ./eval1 -k 5 --jobs 4"),
        ("As a Slurm array job", "delta eval run ./tasks --agent ./my-agent --out /shared/eval1 --executor slurm --slurm-arg=--partition=debug"),
    ]))]
    Run(RunArgs),
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
    /// Run one trial of a Slurm submission (what each array task of the job runs).
    Worker(WorkerArgs),
    /// Run one trial to its verdict (what the executors start for each trial).
    #[command(hide = true)]
    Trial(TrialArgs),
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
struct RunArgs {
    /// The task set: a directory of task directories (Harbor's format: task.toml,
    /// instruction.md, environment/, tests/test.sh, solution/), one task directory, or a
    /// file listing task directories.
    #[arg(value_name = "TASKS", value_hint = ValueHint::AnyPath)]
    tasks: PathBuf,

    /// The agent every trial runs.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath, conflicts_with = "oracle")]
    agent: Option<PathBuf>,

    /// Run each task's solution/solve.sh instead of an agent: the check that the tasks
    /// and their environments are sound.
    #[arg(long)]
    oracle: bool,

    /// The eval directory: eval.json, trials/, results.jsonl, summary.json.
    #[arg(long, value_name = "EVAL_DIR", value_hint = ValueHint::DirPath)]
    out: PathBuf,

    /// Trials (attempts) per task.
    #[arg(short = 'k', long = "attempts", value_name = "N", default_value_t = 1)]
    attempts: u32,

    /// Trials at a time [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,

    /// Where the trials run.
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    executor: Executor,

    #[command(flatten)]
    slurm: SlurmArgs,

    /// Only the tasks whose name matches this glob (repeatable: any of them).
    #[arg(long = "task-filter", value_name = "GLOB")]
    task_filter: Vec<String>,

    /// Scales every task's agent, verifier and build timeouts, as Harbor's does.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    timeout_multiplier: f64,

    /// Iteration budget of each trial's run.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_iterations: Option<u32>,

    /// Cost budget of each trial's run, US dollars (needs the model's price).
    #[arg(long, value_name = "USD")]
    max_cost_usd: Option<f64>,

    /// Token budget of each trial's run.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_tokens: Option<u64>,

    /// Wall-time budget of each trial's agent (90s, 30m); the task's [agent] timeout_sec
    /// applies when shorter.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    max_duration: Option<Duration>,

    /// What stdout gets at the end: the report.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Args)]
struct WorkerArgs {
    /// The eval directory.
    #[arg(value_name = "EVAL_DIR", value_hint = ValueHint::DirPath)]
    dir: PathBuf,

    /// The array index ($SLURM_ARRAY_TASK_ID).
    #[arg(long, value_name = "I")]
    index: usize,

    /// The submission (default: the last).
    #[arg(long, value_name = "S")]
    submission: Option<usize>,
}

#[derive(Debug, Args)]
struct TrialArgs {
    /// The eval directory.
    #[arg(value_name = "EVAL_DIR", value_hint = ValueHint::DirPath)]
    dir: PathBuf,

    /// The trial: `<task>.<attempt>`.
    #[arg(long, value_name = "ID")]
    trial: String,
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
            EvalCommand::Run(args) => args.run(),
            EvalCommand::Worker(args) => args.run(),
            EvalCommand::Trial(args) => args.run(),
            EvalCommand::Report(args) => args.run(),
            EvalCommand::Compare(args) => args.run(),
        }
    }
}

impl RunArgs {
    fn run(self) -> Result<Exit, CliError> {
        let spec = EvalSpec {
            tasks: self.tasks,
            agent: self.agent,
            oracle: self.oracle,
            out: self.out,
            attempts: self.attempts,
            task_filter: self.task_filter,
            timeout_multiplier: self.timeout_multiplier,
            limits: TrialLimits {
                max_iterations: self.max_iterations,
                max_cost_usd: self.max_cost_usd,
                max_tokens: self.max_tokens,
                max_duration_ms: self
                    .max_duration
                    .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            },
        };
        let eval::Prepared {
            dir,
            mut manifest,
            lock,
            warnings,
        } = eval::prepare(&spec)?;
        if let Some(previous) = lock.previous() {
            render::stderr(&format!("{previous}\n"));
        }
        for warning in &warnings {
            render::warning(warning);
        }
        let delta = delta_binary()?;
        if self.executor == Executor::Slurm {
            let options = self.slurm.options();
            match eval::submit(&dir, &mut manifest, &delta, &options)? {
                Some(submission) => render::stderr(&submitted(
                    &submission,
                    "trial",
                    &dir.root().join("slurm").join("eval.sbatch"),
                    &format!("delta eval report {}", dir.root().display()),
                )),
                None => render::stderr("every trial has its verdict; nothing to submit\n"),
            }
            return Ok(Exit::Success);
        }
        let jobs = jobs_or_cores(self.jobs);
        let mut progress = ProgressLines::new("trial");
        let outcome = eval::run_local(&dir, &manifest, &delta, jobs, &mut progress)?;
        progress.clear();
        let report = eval::write_summary(&dir, &manifest)?;
        let text = match self.format {
            Format::Json => format!("{}\n", serde_json::to_string(&report).unwrap_or_default()),
            Format::Text => report_text(&report),
        };
        render::stdout(&text)?;
        let o = &report.overall;
        Ok(match outcome {
            LocalOutcome::Interrupted => {
                render::stderr(
                    "interrupted; the trials that were going have no verdict and run again: \
                     run the same `delta eval run` command to finish the eval\n",
                );
                Exit::Interrupted
            }
            // Errored trials are outcomes like failed ones, reported apart: the eval is
            // done once every trial has its verdict.
            LocalOutcome::Finished if o.pending == 0 => Exit::Success,
            LocalOutcome::Finished | LocalOutcome::BudgetSpent => Exit::Failure,
        })
    }
}

impl Finished for TrialDone {
    fn short(&self) -> String {
        match self {
            TrialDone::Verdict(result) => format!("{} {}", result.trial, result.status.as_str()),
            TrialDone::Interrupted(id) => format!("{id} interrupted"),
        }
    }

    fn line(&self) -> String {
        match self {
            TrialDone::Verdict(result) => format!(
                "{} {}{} ({} ms)",
                result.trial,
                result.status.as_str(),
                match (&result.reward, &result.error) {
                    (Some(reward), _) => format!(" reward {reward}"),
                    (None, Some(error)) => format!(" {}", error.class.as_str()),
                    (None, None) => String::new(),
                },
                result.durations_ms.total
            ),
            TrialDone::Interrupted(id) => format!("{id} interrupted (runs again)"),
        }
    }
}

impl WorkerArgs {
    fn run(self) -> Result<Exit, CliError> {
        let dir = eval::EvalDir::new(std::path::absolute(&self.dir).unwrap_or(self.dir.clone()));
        let done = eval::run_worker(&dir, &delta_binary()?, self.index, self.submission)?;
        render::stderr(&format!("{}\n", done.line()));
        Ok(match done {
            TrialDone::Verdict(_) => Exit::Success,
            TrialDone::Interrupted(_) => Exit::Interrupted,
        })
    }
}

impl TrialArgs {
    fn run(self) -> Result<Exit, CliError> {
        let (dir, manifest) = eval::open(&self.dir)?;
        // The agent's live stream goes to stderr, which the executor made the trial's log.
        let mut observer = StreamRenderer::stderr(false);
        let mut frontend = TerminalFrontend { yes: true };
        let reporting = Reporting {
            observer: &mut observer,
            frontend: &mut frontend,
        };
        match eval::trial::run_trial(&dir, &manifest, &self.trial, reporting)? {
            TrialEnd::Verdict(result) => {
                render::stderr(&format!("{}\n", TrialDone::Verdict(result).line()));
                Ok(Exit::Success)
            }
            TrialEnd::Interrupted => {
                render::stderr(&format!("{} interrupted: no verdict\n", self.trial));
                Ok(Exit::Interrupted)
            }
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

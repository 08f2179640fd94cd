//! `delta batch`: run a task set as many runs (locally or as a Slurm array job), read its
//! state, and the worker each Slurm array task runs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum, ValueHint};

use super::drive::EnvironmentArgs;
use super::error::CliError;
use super::render;
use delta_engine::budget::parse_cost_usd;
use delta_engine::output::Exit;
use delta_experiment::batch::{
    self, BatchDir, BatchError, BatchObserver, BatchSpec, LocalOutcome, Progress, SlurmOptions,
    TaskResult,
};

/// Arguments of `delta batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(subcommand)]
    command: BatchCommand,
}

#[derive(Debug, Subcommand)]
enum BatchCommand {
    /// Run (or continue) a batch: one run per line of a JSON Lines task file.
    #[command(after_help = render::examples(&[
        ("200 tasks, 4 at a time", "delta batch run tasks.jsonl --agent ./my-agent --out ./exp1 --jobs 4"),
        ("Continue it after a crash or Ctrl-C: the same command", "delta batch run tasks.jsonl --agent ./my-agent --out ./exp1 --jobs 4"),
        ("As a Slurm array job", "delta batch run tasks.jsonl --agent ./my-agent --out /shared/exp1 --executor slurm --slurm-arg=--partition=debug"),
    ]))]
    Run(RunBatchArgs),
    /// Show a batch's tasks and counts (also while it runs, from any machine).
    Status(StatusArgs),
    /// Run one task of a Slurm submission (what each array task of the job runs).
    Worker(WorkerArgs),
}

/// Where the tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Executor {
    /// On this machine, `--jobs` at a time.
    Local,
    /// As a Slurm array job (`sbatch`); returns once submitted.
    Slurm,
}

#[derive(Debug, Args)]
struct RunBatchArgs {
    /// The task file: one JSON object per line (`id`, `message`, optional `agent`,
    /// `workspace_from`, `env`, `max_iterations`, `max_cost_usd`, `max_tokens`,
    /// `max_duration`).
    #[arg(value_name = "TASKS.jsonl", value_hint = ValueHint::FilePath)]
    tasks: PathBuf,

    /// The agent directory every task runs (unless its line names another).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    agent: PathBuf,

    /// The batch directory: batch.json, runs/<id>/, results.jsonl, summary.json.
    #[arg(long, value_name = "BATCH_DIR", value_hint = ValueHint::DirPath)]
    out: PathBuf,

    /// Tasks at a time [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,

    /// Retries of a task that FAILED on a transient error of the model's API.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,

    /// No task starts once the batch's estimated cost reaches this many US dollars.
    #[arg(long, value_name = "USD", value_parser = parse_cost_usd)]
    max_cost_usd: Option<f64>,

    /// Where the tasks run.
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    executor: Executor,

    #[command(flatten)]
    slurm: SlurmArgs,

    #[command(flatten)]
    environment: EnvironmentArgs,
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// The batch directory.
    #[arg(value_name = "BATCH_DIR", value_hint = ValueHint::DirPath)]
    dir: PathBuf,

    /// What stdout gets.
    #[arg(long, value_enum, default_value_t = StatusFormat::Text)]
    format: StatusFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StatusFormat {
    /// A table.
    Text,
    /// One JSON object: summary, tasks, Slurm job.
    Json,
}

#[derive(Debug, Args)]
struct WorkerArgs {
    /// The batch directory.
    #[arg(value_name = "BATCH_DIR", value_hint = ValueHint::DirPath)]
    dir: PathBuf,

    /// The array index ($SLURM_ARRAY_TASK_ID).
    #[arg(long, value_name = "I")]
    index: usize,

    /// The submission (default: the last).
    #[arg(long, value_name = "S")]
    submission: Option<usize>,
}

impl BatchArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        match self.command {
            BatchCommand::Run(args) => args.run(),
            BatchCommand::Status(args) => args.run(),
            BatchCommand::Worker(args) => args.run(),
        }
    }
}

/// The Slurm executor's options, the same for a batch and an eval.
#[derive(Debug, Args)]
pub(super) struct SlurmArgs {
    /// An sbatch option for the job, e.g. --slurm-arg=--partition=debug (repeatable).
    #[arg(long = "slurm-arg", value_name = "ARG", allow_hyphen_values = true)]
    slurm_args: Vec<String>,

    /// At most this many array tasks at once (Slurm's %M).
    #[arg(long, value_name = "M")]
    array_parallelism: Option<u32>,
}

impl SlurmArgs {
    pub(super) fn options(self) -> SlurmOptions {
        SlurmOptions {
            args: self.slurm_args,
            parallelism: self.array_parallelism,
        }
    }
}

/// What a Slurm submission says on stderr: the job, how many `unit`s it runs, its
/// script, and the command `follow` to watch it.
pub(super) fn submitted(
    submission: &batch::Submission,
    unit: &str,
    script: &std::path::Path,
    follow: &str,
) -> String {
    format!(
        "submitted job {} with {} {unit}(s): {}\nfollow it with: {follow}\n",
        submission.job_id,
        submission.tasks.len(),
        script.display()
    )
}

/// `--jobs`, or one per core when it is not given.
pub(super) fn jobs_or_cores(jobs: Option<u32>) -> usize {
    jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    )
}

/// The `delta` binary the children of a batch or an eval are started from: this one.
pub(super) fn delta_binary() -> Result<PathBuf, CliError> {
    std::env::current_exe().map_err(CliError::CurrentDir)
}

impl RunBatchArgs {
    fn run(self) -> Result<Exit, CliError> {
        let spec = BatchSpec {
            tasks_file: self.tasks,
            agent: self.agent,
            out: self.out,
            retries: self.retries,
            max_cost_usd: self.max_cost_usd,
            environment: self.environment.choice(),
        };
        let (dir, mut manifest, lock) = batch::prepare(&spec)?;
        if let Some(previous) = lock.previous() {
            render::stderr(&format!("{previous}\n"));
        }
        let delta = delta_binary()?;
        if self.executor == Executor::Slurm {
            let options = self.slurm.options();
            match batch::submit(&dir, &mut manifest, &delta, &options)? {
                Some(submission) => render::stderr(&submitted(
                    &submission,
                    "task",
                    &dir.slurm_dir().join("batch.sbatch"),
                    &format!("delta batch status {}", dir.root().display()),
                )),
                None => render::stderr("every task is COMPLETED; nothing to submit\n"),
            }
            return Ok(Exit::Success);
        }
        let jobs = jobs_or_cores(self.jobs);
        let mut progress = ProgressLines::new("task");
        let outcome = batch::run_local(&dir, &manifest, &delta, jobs, &mut progress)?;
        let summary = dir.write_summary(&manifest)?;
        progress.clear();
        render::stderr(&format!(
            "{} task(s): {}; {} pending; results in {}\n",
            summary.tasks,
            counts(&summary.by_status),
            summary.pending,
            dir.results_path().display()
        ));
        Ok(match outcome {
            LocalOutcome::Interrupted => {
                render::stderr(
                    "interrupted; the runs that were going are INTERRUPTED and resumable: run \
                     the same `delta batch run` command again to finish the batch\n",
                );
                Exit::Interrupted
            }
            LocalOutcome::BudgetSpent => Exit::Failure,
            LocalOutcome::Finished if summary.pending == 0 && completed_all(&summary) => {
                Exit::Success
            }
            LocalOutcome::Finished => Exit::Failure,
        })
    }
}

fn completed_all(summary: &batch::Summary) -> bool {
    summary.by_status.get("COMPLETED").copied().unwrap_or(0) == summary.tasks
}

fn counts(by_status: &std::collections::BTreeMap<String, usize>) -> String {
    if by_status.is_empty() {
        return "none finished".to_owned();
    }
    by_status
        .iter()
        .map(|(status, n)| format!("{n} {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the progress display says of a finished unit (a batch's task, an eval's trial).
pub(super) trait Finished {
    /// Its id and outcome, for the bar: `task-001 COMPLETED`.
    fn short(&self) -> String;
    /// Its line when stderr is not a terminal.
    fn line(&self) -> String;
}

impl Finished for TaskResult {
    fn short(&self) -> String {
        format!("{} {}", self.id, self.status)
    }

    fn line(&self) -> String {
        format!(
            "{} {} ({} iterations, {} ms)",
            self.id, self.status, self.iterations, self.duration_ms
        )
    }
}

/// Progress on stderr: a bar redrawn in place on a terminal, a line per unit otherwise.
pub(super) struct ProgressLines {
    terminal: bool,
    /// What is run: `task`, `trial`.
    unit: &'static str,
}

impl ProgressLines {
    pub(super) fn new(unit: &'static str) -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            unit,
        }
    }

    pub(super) fn clear(&self) {
        if self.terminal {
            render::stderr("\r\x1b[2K");
        }
    }
}

impl<R: Finished> BatchObserver<R> for ProgressLines {
    fn started(&mut self, todo: usize, total: usize) {
        render::stderr(&format!("{todo} of {total} {}(s) to run\n", self.unit));
    }

    fn finished(&mut self, result: &R, progress: Progress) {
        let rate = progress.done as f64 / progress.elapsed.as_secs_f64().max(0.001);
        let left = progress.todo.saturating_sub(progress.done);
        let eta = Duration::from_secs_f64(left as f64 / rate.max(1e-9));
        if self.terminal {
            let width = 30;
            let filled = progress.done * width / progress.todo.max(1);
            render::stderr(&format!(
                "\r\x1b[2K[{}{}] {}/{} {:.1} {}s/s ETA {}s  last: {}",
                "#".repeat(filled),
                " ".repeat(width - filled),
                progress.done,
                progress.todo,
                rate,
                self.unit,
                eta.as_secs(),
                result.short()
            ));
        } else {
            render::stderr(&format!(
                "{}/{} {}\n",
                progress.done,
                progress.todo,
                result.line()
            ));
        }
    }

    fn failed(&mut self, id: &str, error: BatchError) {
        self.clear();
        render::warning(&format!("{} {id}: {error}", self.unit));
    }

    fn stopping(&mut self, why: &str) {
        self.clear();
        render::warning(why);
    }
}

impl StatusArgs {
    fn run(self) -> Result<Exit, CliError> {
        let dir = BatchDir::new(std::path::absolute(&self.dir).unwrap_or(self.dir.clone()));
        let manifest = dir.read_manifest()?;
        let results = dir.results();
        let summary = batch::summarize(&manifest, &results);
        let job = manifest.slurm.last().map(|s| batch::job_states(&s.job_id));
        let rows: Vec<serde_json::Value> = manifest
            .tasks
            .iter()
            .map(|task| match results.get(&task.id) {
                Some(result) => serde_json::json!({
                    "id": task.id,
                    "status": result.status,
                    "iterations": result.iterations,
                    "input_tokens": result.tokens().0,
                    "output_tokens": result.tokens().1,
                    "cost_usd": result.cost_usd,
                    "duration_ms": result.duration_ms,
                }),
                None => serde_json::json!({
                    "id": task.id,
                    "status": dir
                        .run_metadata(&task.id)
                        .map_or_else(|| "PENDING".to_owned(), |m| m.status.to_string()),
                }),
            })
            .collect();
        let text = match self.format {
            StatusFormat::Json => format!(
                "{}\n",
                serde_json::json!({"summary": summary, "tasks": rows, "slurm": job})
            ),
            StatusFormat::Text => {
                let mut text = format!(
                    "{:<24} {:<18} {:>5} {:>10} {:>10}\n",
                    "TASK", "STATUS", "ITER", "TOKENS", "MS"
                );
                for row in &rows {
                    let tokens = row["input_tokens"].as_u64().unwrap_or(0)
                        + row["output_tokens"].as_u64().unwrap_or(0);
                    text.push_str(&format!(
                        "{:<24} {:<18} {:>5} {:>10} {:>10}\n",
                        row["id"].as_str().unwrap_or_default(),
                        row["status"].as_str().unwrap_or_default(),
                        row["iterations"]
                            .as_u64()
                            .map_or_else(String::new, |n| n.to_string()),
                        tokens,
                        row["duration_ms"]
                            .as_u64()
                            .map_or_else(String::new, |n| n.to_string()),
                    ));
                }
                text.push_str(&format!(
                    "\n{} task(s): {}; {} pending; {} input + {} output tokens; ${:.4}; p50 {} ms, p95 {} ms\n",
                    summary.tasks,
                    counts(&summary.by_status),
                    summary.pending,
                    summary.input_tokens,
                    summary.output_tokens,
                    summary.cost_usd,
                    summary.p50_duration_ms,
                    summary.p95_duration_ms
                ));
                if let Some(job) = &job {
                    let states = if job.states.is_empty() {
                        "no longer queued".to_owned()
                    } else {
                        counts(&job.states)
                    };
                    text.push_str(&format!("slurm job {}: {states}\n", job.job_id));
                }
                text
            }
        };
        render::stdout(&text)?;
        Ok(Exit::Success)
    }
}

impl WorkerArgs {
    fn run(self) -> Result<Exit, CliError> {
        let dir = BatchDir::new(std::path::absolute(&self.dir).unwrap_or(self.dir.clone()));
        let Some(result) = batch::run_worker(&dir, &delta_binary()?, self.index, self.submission)?
        else {
            render::stderr("interrupted; the task is left for the next submission\n");
            return Ok(Exit::Interrupted);
        };
        render::stderr(&format!("task {}: {}\n", result.id, result.status));
        Ok(if result.status == "COMPLETED" {
            Exit::Success
        } else {
            Exit::Failure
        })
    }
}

//! `delta view`: writes the HTML page of a run (or the table of a workspace's or a
//! batch's runs), prints its path, and opens it with the desktop's opener on `--open`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueHint};

use super::args::parse_run_id;
use super::error::CliError;
use super::export::key_redactor;
use super::render;
use delta_engine::output::Exit;
use delta_engine::run::RunId;
use delta_experiment::export::Content;
use delta_experiment::view;

/// The long description of `--help`.
pub(super) const LONG_ABOUT: &str = "Write a self-contained HTML page of a run and print its \
    path: a header (agent, model, status, result, iterations, tokens, cost, duration), then \
    each iteration: the model's text, every tool call with its arguments, command, \
    observation (long ones folded, with the path of the full output under io/), exit code \
    and duration, hooks, questions to the human and answers, system messages.\n\n\
    The page has no external resources (it opens from file://, offline) and follows the \
    system's light or dark theme. The page of a RUNNING run reloads itself every few \
    seconds, so regenerating it follows the run.\n\n\
    Without --run-id, every run of the workspace gets its page and a sortable table links \
    them (.delta/index.html); --batch does the same for a batch directory \
    (BATCH_DIR/runs/<id>/ is each task's workspace), and --eval for an eval directory (a \
    row per trial with its status, reward and error, linking to its run and its \
    verifier's output).";

/// Arguments of `delta view`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("The page of a run (in its run directory)", "delta view --run-id 20251014_043012_a1b2c3 -w ./work"),
        ("Open it in the browser", "delta view --run-id ID -w ./work --open"),
        ("Follow a running run", "watch -n 5 delta view --run-id ID -w ./work"),
        ("A table of every run of a workspace", "delta view -w ./work"),
        ("A table of a batch's tasks", "delta view --batch ./batch-2025-10-14"),
        ("A table of an eval's trials", "delta view --eval ./eval1"),
        ("Shareable: no prompts, arguments or outputs", "delta view --run-id ID -w ./work --redact-content -o run.html"),
    ])
)]
pub struct ViewArgs {
    /// The run to show; without it, every run of the workspace and a table of them.
    #[arg(long, value_name = "ID", value_parser = parse_run_id, conflicts_with_all = ["batch", "eval"])]
    run_id: Option<RunId>,

    /// Workspace that holds the runs.
    #[arg(short, long = "work-dir", value_name = "PATH", default_value = ".", value_hint = ValueHint::DirPath)]
    work_dir: PathBuf,

    /// A batch directory (`BATCH_DIR/runs/<id>/` are the tasks' workspaces): a table of
    /// every run in it.
    #[arg(long, value_name = "BATCH_DIR", value_hint = ValueHint::DirPath, conflicts_with = "eval")]
    batch: Option<PathBuf>,

    /// An eval directory (`--out` of `delta eval run`): a table of its trials, each linking
    /// to its run's page and its verifier's output.
    #[arg(long, value_name = "EVAL_DIR", value_hint = ValueHint::DirPath)]
    eval: Option<PathBuf>,

    /// Write the page here (default: `view.html` in the run directory, `.delta/index.html`
    /// for a workspace, `index.html` in a batch or eval directory).
    #[arg(short, long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    output: Option<PathBuf>,

    /// Open the page with the desktop's opener (xdg-open, open).
    #[arg(long)]
    open: bool,

    /// Leave out prompts, model text, tool arguments, commands, outputs and human answers.
    #[arg(long)]
    redact_content: bool,
}

impl ViewArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        let content = Content {
            redact: self.redact_content,
        };
        let keys = key_redactor();
        let redact = |html: String| keys.redact(&html);
        let output = self.output.as_deref();
        let path = match (&self.run_id, &self.batch, &self.eval) {
            (Some(run_id), _, _) => {
                view::write_run_page(&self.work_dir, run_id, output, content, &redact)?
            }
            (None, Some(batch), _) => view::write_batch(batch, output, content, &redact)?,
            (None, None, Some(eval)) => view::write_eval(eval, output, content, &redact)?,
            (None, None, None) => view::write_workspace(&self.work_dir, output, content, &redact)?,
        };
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        render::stdout(&format!("{}\n", path.display()))?;
        if self.open {
            open(&path);
        }
        Ok(Exit::Success)
    }
}

/// Opens `path` with the first desktop opener found on PATH, or says there is none.
fn open(path: &Path) {
    let opener = ["xdg-open", "open"].into_iter().find(|name| on_path(name));
    match opener {
        Some(opener) => {
            let spawned = std::process::Command::new(opener)
                .arg(path)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            if let Err(error) = spawned {
                render::warning(&format!(
                    "cannot run {opener}: {error}; open the page yourself"
                ));
            }
        }
        None => render::warning(
            "no desktop opener (xdg-open, open) on PATH; open the page above in a browser",
        ),
    }
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

//! `delta continue`: take an existing run over and drive it on from its journal (seed 000
//! §2.6.2, seed 002 §3.5 and §6.1).
//!
//! Everything that can refuse is checked before anything changes: `--run-id`, the run, the
//! host, a live owner and what the run's status needs (`-m`), then the agent (reloaded from
//! the run's `agent_home`, so an edited agent takes effect), the credentials and the LLM
//! settings. Only then, with the signal handlers installed, is the run taken over (the
//! Janitor, the journal repair, RUNNING under this process) and driven like a new run,
//! with a fresh iteration budget. stdout is printed last, from the metadata on disk.

use std::path::{Path, PathBuf};

use clap::{Args, ValueHint};

use super::args::{existing_run, parse_run_id};
use super::drive::{TakeOnArgs, read_message};
use super::error::CliError;
use super::result::{Promise, ResultSink};
use super::{human, render};
use delta_engine::launch::Start;
use delta_engine::output::Exit;
use delta_engine::run::{RunId, RunStatus, open_run, read_interaction_request, read_metadata};

/// The long description of `--help` (set on the subcommand, whose doc comment would
/// otherwise replace it).
pub(super) const LONG_ABOUT: &str = concat!(
    "Continue an existing run where it stood: the same journal, the same run directory, a ",
    "fresh iteration budget, the agent's configuration as it is now.\n",
    "\n",
    "What the run's status needs:\n",
    "  INTERRUPTED        nothing; -m adds an instruction\n",
    "  WAITING_FOR_INPUT  the answer: -m, or interaction/response.txt in the run directory,\n",
    "                     or -i to be asked the question on the terminal\n",
    "  COMPLETED, FAILED  -m: the next instruction\n",
    "  RUNNING            refused while its process is alive; after a crash or kill -9\n",
    "                     the Janitor cleans it up (another host: --force)\n",
    "\n",
    "A tool call that was in progress when the process died is answered with an error and ",
    "never run again.\n",
    "\n",
    "Exit codes as for `delta run`: 0 COMPLETED, 1 FAILED or iteration budget spent, 101 ",
    "WAITING_FOR_INPUT, 126 configuration error, 130 interrupted; 2 when the command line ",
    "lacks what the run needs (--run-id, -m); 1 when the run cannot be continued (unknown id, ",
    "still active, other host).",
);

/// Arguments of `delta continue`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("Resume an interrupted (or killed) run", "delta continue --run-id 20251014_043012_a1b2c3 -w ./work"),
        ("Answer the question a paused run asks", "delta continue --run-id ID -w ./work -m \"yes, proceed\""),
        ("Extend a completed run", "delta continue --run-id ID -w ./work -m \"Now write a summary\""),
        ("Resume a run stopped by its budget, with a larger one", "delta continue --run-id ID -w ./work --max-tokens 400000"),
        ("Take over a run of a host that is gone", "delta continue --run-id ID -w /shared/work --force"),
        ("The most recent resumable run", "delta continue -w ./work --run-id \"$(delta list-runs -w ./work --resumable --first)\""),
    ])
)]
pub struct ContinueArgs {
    /// The run to continue (required; `delta list-runs` shows the ids).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    run_id: Option<RunId>,

    /// Workspace that holds the run (its `.delta/RUN_ID/`).
    #[arg(short, long = "work-dir", value_name = "PATH", default_value = ".", value_hint = ValueHint::DirPath)]
    work_dir: PathBuf,

    /// An instruction (INTERRUPTED, COMPLETED, FAILED) or the answer to the question of a
    /// WAITING_FOR_INPUT run.
    #[arg(short, long, value_name = "TEXT")]
    message: Option<String>,

    /// Read the message from a file (`-m -` reads it from stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "message", value_hint = ValueHint::FilePath)]
    message_file: Option<PathBuf>,

    /// Take over a RUNNING run recorded on another host, whose process cannot be checked
    /// from here. Only when you are sure that process is gone.
    #[arg(long)]
    force: bool,

    #[command(flatten)]
    take_on: TakeOnArgs,
}

impl ContinueArgs {
    /// What stdout is promised, and the run named.
    pub(super) fn promise(&self) -> (Promise, Option<RunId>) {
        (self.take_on.promise(), self.run_id.clone())
    }

    pub(super) fn run(self, sink: &mut ResultSink) -> Result<Exit, CliError> {
        let (run_id, workspace) = existing_run(self.run_id, &self.work_dir)?;
        let message = match read_message(self.message, self.message_file)?.map(|m| m.text) {
            None if self.take_on.interactive() => asked_on_terminal(&workspace, &run_id),
            message => message,
        };
        self.take_on.launch(
            Start::Continue {
                workspace,
                run_id,
                message,
                force: self.force,
            },
            sink,
        )
    }
}

/// `-i` without `-m`: the question a WAITING_FOR_INPUT run waits on (`ask_human`'s, or a
/// hook's approval question) asked on the terminal, and the answer given as `-m` would be.
/// `None` when there is nothing to ask here, or nobody answers (then `continue` says what
/// the run needs, as without `-i`).
fn asked_on_terminal(workspace: &Path, run_id: &RunId) -> Option<String> {
    let paths = open_run(workspace, run_id).ok()?;
    let metadata = read_metadata(&paths.metadata()).ok()?;
    if metadata.status != RunStatus::WaitingForInput || paths.interaction_response().exists() {
        return None;
    }
    let request = read_interaction_request(&paths).ok()??;
    match human::ask(&request.prompt, request.input_type, request.sensitive) {
        Ok(answer) => answer,
        Err(error) => {
            render::warning(&format!("cannot ask on the terminal ({error})"));
            None
        }
    }
}

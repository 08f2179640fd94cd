//! `delta fork`: branch a run at a step into a new run and continue it (issue 17). The
//! fork is made by [`delta_experiment::fork`]; it is then driven exactly like `delta continue`.

use std::path::PathBuf;

use clap::{Args, ValueHint};

use super::args::{existing_run, parse_run_id};
use super::drive::{TakeOnArgs, read_message};
use super::error::CliError;
use super::render;
use super::result::{Promise, ResultSink};
use delta_engine::launch::Start;
use delta_engine::output::Exit;
use delta_engine::run::RunId;
use delta_experiment::fork::{ForkSpec, fork};

/// The long description of `--help`.
pub(super) const LONG_ABOUT: &str = concat!(
    "Fork a run at a step: a new run in the same workspace whose journal is the parent's ",
    "events 1..SEQ, recorded in its metadata.json as parent {run_id, seq}, then continued ",
    "like `delta continue` (-m adds an instruction). The parent is never modified; its io/ ",
    "records are hard-linked, not copied.\n",
    "\n",
    "SEQ must be an event boundary where the conversation is consistent: after RUN_START ",
    "(the task), an ACTION_RESULT batch or a USER_MESSAGE. Without --at: the last such boundary.\n",
    "\n",
    "Workspace files are not versioned: the fork sees the workspace as it is now. With ",
    "--work-dir-from DIR the fork is created in a fresh numbered workspace of the agent ",
    "(workspaces/W00N) that starts with a copy of DIR's files instead.\n",
    "\n",
    "Exit codes as for `delta continue`; 2 when --at is not a valid boundary (the nearest ",
    "valid ones are named).",
);

/// Arguments of `delta fork`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("Fork at the last complete step and try another instruction", "delta fork --run-id ID -w ./work -m \"Use the CSV instead\""),
        ("Fork right after event 7", "delta fork --run-id ID -w ./work --at 7 --new-run-id retry-7"),
        ("Start over from the task with another instruction", "delta fork --run-id ID -w ./work --at 1 -m \"Be brief\""),
        ("Fork into a fresh workspace seeded from a clean checkout", "delta fork --run-id ID -w ./work --at 4 --work-dir-from ./clean"),
    ])
)]
pub struct ForkArgs {
    /// The run to fork (required; `delta list-runs` shows the ids).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    run_id: Option<RunId>,

    /// Workspace that holds the run; the fork is created there too.
    #[arg(short, long = "work-dir", value_name = "PATH", default_value = ".", value_hint = ValueHint::DirPath)]
    work_dir: PathBuf,

    /// The last event of the parent the fork keeps [default: the last boundary].
    #[arg(long, value_name = "SEQ", value_parser = clap::value_parser!(u64).range(1..))]
    at: Option<u64>,

    /// The fork's run id [default: a generated one].
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    new_run_id: Option<RunId>,

    /// Create the fork in a fresh workspace of the agent seeded with a copy of DIR's files
    /// (its .delta/ left out) instead of in the parent's workspace.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    work_dir_from: Option<PathBuf>,

    /// An instruction added to the fork before it continues.
    #[arg(short, long, value_name = "TEXT")]
    message: Option<String>,

    /// Read the message from a file (`-m -` reads it from stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "message", value_hint = ValueHint::FilePath)]
    message_file: Option<PathBuf>,

    #[command(flatten)]
    take_on: TakeOnArgs,
}

impl ForkArgs {
    /// What stdout is promised.
    pub(super) fn promise(&self) -> Promise {
        self.take_on.promise()
    }

    pub(super) fn run(self, sink: &mut ResultSink) -> Result<Exit, CliError> {
        let (parent, workspace) = existing_run(self.run_id, &self.work_dir)?;
        let message = read_message(self.message, self.message_file)?.map(|m| m.text);
        let forked = fork(&ForkSpec {
            workspace,
            parent,
            at: self.at,
            new_run_id: self.new_run_id,
            work_dir_from: self.work_dir_from,
        })?;
        let seeded = match forked.parent.work_dir {
            Some(_) => format!(" in workspace {}", forked.paths.workspace().display()),
            None => String::new(),
        };
        render::stderr(&format!(
            "Forked run {} from {} at seq {}{seeded}\n",
            forked.paths.run_id(),
            forked.parent.run_id,
            forked.parent.seq
        ));
        // The fork exists now: a refusal from here on names it.
        sink.name_run(forked.paths.run_id().clone());
        self.take_on.launch(
            Start::Continue {
                workspace: forked.paths.workspace().to_path_buf(),
                run_id: forked.paths.run_id().clone(),
                message,
                force: false,
            },
            sink,
        )
    }
}

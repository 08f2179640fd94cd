//! `delta replay`: a recorded run played again with its LLM answers served from the
//! recording (issue 17); the run is launched by [`delta_engine::launch`] like any other, and
//! the outcome, `identical` or the first divergence, goes to stdout.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum, ValueHint};

use super::args::{existing_run, parse_run_id};
use super::drive::TerminalFrontend;
use super::error::CliError;
use super::render;
use super::stream::StreamRenderer;
use delta_engine::engine::HumanInput;
use delta_engine::launch::Launch;
use delta_engine::output::Exit;
use delta_engine::replay::{Outcome, ReplaySpec, prepare};
use delta_engine::run::RunId;

/// The long description of `--help`.
pub(super) const LONG_ABOUT: &str = concat!(
    "Replay a recorded run: the same agent (as configured now) on the same task, as a new ",
    "run whose LLM answers are the recorded ones, served in order from the run's ",
    "io/invocations/. No model is called and no key is needed. Tools and hooks really run; ",
    "ask_human questions get the recorded answers.\n",
    "\n",
    "Each request the engine builds is compared with the recorded one (messages and tools; ",
    "ids, times, run ids and workspace paths masked), each tool result with the recorded ",
    "observation, each Claude Code hook firing of the loop (PreToolUse, PostToolUse, Stop) ",
    "with the recorded one's decision. The outcome is `identical` or the first divergence: ",
    "its seq in the recording, what differed (request, observation, hook or end) and the ",
    "first differing line.\n",
    "\n",
    "A divergent request ends the replay (the recorded answers no longer fit it); a ",
    "divergent observation is reported and the replay goes on, unless --until-divergence ",
    "stops it there. The replay runs in the recording's workspace as it is now (files are ",
    "not versioned), or with --workspace-from DIR in a fresh numbered workspace of the agent ",
    "that starts with a copy of DIR's files. Its metadata.json names the recording in ",
    "replay_of.\n",
    "\n",
    "Exit codes: 0 identical, 1 divergence (so it gates CI); 2 usage; 126 configuration.",
);

/// `--format` of `delta replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReplayFormat {
    /// One line for `identical`, or the divergence and its diff.
    Text,
    /// The outcome as one JSON object.
    Json,
}

/// Arguments of `delta replay`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("Check that a tool change leaves a recorded run unchanged", "delta replay --run-id ID -w ./work"),
        ("Replay from a clean copy of the starting files", "delta replay --run-id ID -w ./work --workspace-from ./clean"),
        ("Stop at the first divergence, as JSON for CI", "delta replay --run-id ID -w ./work --until-divergence --format json"),
    ])
)]
pub struct ReplayArgs {
    /// The recorded run (required; `delta list-runs` shows the ids).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    run_id: Option<RunId>,

    /// Workspace that holds the recorded run; the replay runs there too unless
    /// --workspace-from is given.
    #[arg(short, long = "work-dir", value_name = "PATH", default_value = ".", value_hint = ValueHint::DirPath)]
    work_dir: PathBuf,

    /// The replay's run id [default: a generated one].
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    new_run_id: Option<RunId>,

    /// Replay in a fresh workspace of the agent seeded with a copy of DIR's files (its
    /// .delta/ left out).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    workspace_from: Option<PathBuf>,

    /// Stop at the first divergence, a divergent observation included.
    #[arg(long)]
    until_divergence: bool,

    /// What stdout gets.
    #[arg(long, value_enum, default_value_t = ReplayFormat::Text)]
    format: ReplayFormat,

    /// Show engine detail on stderr: timings, invocation ids.
    #[arg(short, long)]
    verbose: bool,
}

impl ReplayArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        let (run_id, workspace) = existing_run(self.run_id, &self.work_dir)?;
        let replay = prepare(&ReplaySpec {
            workspace,
            run_id,
            new_run_id: self.new_run_id,
            workspace_from: self.workspace_from,
            until_divergence: self.until_divergence,
        })?;
        let mut frontend = TerminalFrontend { yes: true };
        let launch = Launch::prepare(replay.launch, &mut frontend)?;
        let mut observer = StreamRenderer::stderr(self.verbose);
        let human: Arc<dyn HumanInput> = replay.human;
        let finished = launch.drive(&mut observer, Some(human), &mut frontend)?;
        let outcome = replay.model.outcome(&finished.paths);
        let text = match self.format {
            ReplayFormat::Text => render_text(&outcome),
            ReplayFormat::Json => render_json(&outcome),
        };
        render::stdout(&text)?;
        Ok(if outcome.identical() {
            Exit::Success
        } else {
            Exit::Failure
        })
    }
}

fn render_text(outcome: &Outcome) -> String {
    let summary = format!(
        "replay {} of run {}: {}, {} of {} answers replayed, {} observations compared",
        outcome.run_id,
        outcome.replay_of,
        outcome.status,
        outcome.answers_replayed,
        outcome.answers_recorded,
        outcome.observations_compared
    );
    match &outcome.divergence {
        None => format!("identical\n{summary}\n"),
        Some(divergence) => {
            let replay_seq = divergence
                .replay_seq
                .map_or_else(String::new, |seq| format!(" (replay seq {seq})"));
            format!(
                "divergence at seq {}{replay_seq}: {}\n{}\n{summary}\n",
                divergence.seq, divergence.what, divergence.diff
            )
        }
    }
}

fn render_json(outcome: &Outcome) -> String {
    let mut text = serde_json::to_string_pretty(outcome).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

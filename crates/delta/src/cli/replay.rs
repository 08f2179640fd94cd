//! `delta replay`: a recorded run played again with its LLM answers served from the
//! recording (issue 17); the run is launched by [`delta_engine::launch`] like any other, and
//! the outcome, `identical` or the first divergence, goes to stdout.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum, ValueHint};

use super::args::{existing_run, parse_run_id};
use super::drive::EnvironmentArgs;
use super::drive::TerminalFrontend;
use super::error::CliError;
use super::jsonl::JsonlStream;
use super::render;
use super::result::{Promise, ResultSink};
use super::stream::StreamRenderer;
use delta_engine::engine::HumanInput;
use delta_engine::launch::Launch;
use delta_engine::output::Exit;
use delta_engine::quote::quote_path;
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
    "replay_of. Sub-agents are replayed from their own recordings, and the tree is identical \
    when every run of it is.\n",
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
    /// The replay's journal lines as they are appended, then one RESULT line: its
    /// RunResult with the outcome under `replay`.
    Jsonl,
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

    #[command(flatten)]
    environment: EnvironmentArgs,
}

impl ReplayArgs {
    /// What stdout is promised.
    pub(super) fn promise(&self) -> Promise {
        match self.format {
            ReplayFormat::Text => Promise::Nothing,
            ReplayFormat::Json => Promise::Json,
            ReplayFormat::Jsonl => Promise::Jsonl,
        }
    }

    pub(super) fn run(self, sink: &mut ResultSink) -> Result<Exit, CliError> {
        let (run_id, workspace) = existing_run(self.run_id, &self.work_dir)?;
        let seeded = self.workspace_from.is_some();
        let replay = prepare(&ReplaySpec {
            workspace,
            run_id,
            new_run_id: self.new_run_id,
            workspace_from: self.workspace_from,
            until_divergence: self.until_divergence,
            environment: self.environment.choice(),
        })?;
        let mut frontend = TerminalFrontend { yes: true };
        let launch = Launch::prepare(replay.launch, &mut frontend)?;
        let human: Arc<dyn HumanInput> = replay.human;
        let human_stream = StreamRenderer::stderr(self.verbose);
        let (finished, stream) = if self.format == ReplayFormat::Jsonl {
            let mut stream = JsonlStream::new(human_stream, None);
            let finished = launch.drive(&mut stream, Some(human), &mut frontend);
            (finished, Some(stream))
        } else {
            let mut observer = human_stream;
            (
                launch.drive(&mut observer, Some(human), &mut frontend),
                None,
            )
        };
        let finished = finished.map_err(CliError::from);
        let outcome = finished
            .as_ref()
            .ok()
            .map(|finished| replay.model.outcome(&finished.paths));
        let exit = match &outcome {
            Some(outcome) if outcome.identical() => Exit::Success,
            Some(_) | None => Exit::Failure,
        };
        if let Some(outcome) = &outcome
            && seeded
        {
            // The replay is in a fresh workspace of the agent, not beside the recording.
            render::stderr(&format!(
                "The replay ran in workspace {dir} (seeded from --workspace-from); see it with: \
                 delta list-runs -w {dir}\n",
                dir = quote_path(&outcome.work_dir)
            ));
        }
        if let Some(stream) = stream {
            let value = outcome.as_ref().and_then(|o| serde_json::to_value(o).ok());
            let replayed = value.as_ref().map(|value| (value, exit));
            return stream.finish(finished, replayed, sink);
        }
        finished?;
        let Some(outcome) = outcome else {
            return Ok(exit);
        };
        match self.format {
            ReplayFormat::Json => sink.print(&render_json(&outcome))?,
            ReplayFormat::Text | ReplayFormat::Jsonl => render::stdout(&render_text(&outcome))?,
        }
        Ok(exit)
    }
}

fn render_text(outcome: &Outcome) -> String {
    let mut summary = String::new();
    summarize(outcome, 0, &mut summary);
    let summary = summary.trim_end();
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

/// One line per run of the replayed tree, sub-agents indented under their caller.
fn summarize(outcome: &Outcome, depth: usize, out: &mut String) {
    out.push_str(&format!(
        "{}replay {} of run {}: {}, {} of {} answers replayed, {} observations compared\n",
        "  ".repeat(depth),
        outcome.run_id,
        outcome.replay_of,
        outcome.status,
        outcome.answers_replayed,
        outcome.answers_recorded,
        outcome.observations_compared
    ));
    for child in &outcome.subagents {
        summarize(child, depth + 1, out);
    }
}

fn render_json(outcome: &Outcome) -> String {
    let mut text = serde_json::to_string_pretty(outcome).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

//! The run's journal cut into its commands ([`Segment`]s: the first `delta run`, then each
//! `delta continue`, split at RUN_END) and each command as a scenario step.

use std::collections::BTreeMap;

use delta_scenario::{Args, ExitMatch, Expect, MetadataExpect, Step, TextMatch, ValueMatch};
use serde_json::Value;

use super::error::ScenarioError;
use super::places::Places;
use delta_engine::journal::EventPayload;
use delta_engine::output::Exit;
use delta_engine::run::RunStatus;
use delta_engine::trajectory::Trajectory;

/// One command of the run: the first `delta run`, then each `delta continue`.
pub(super) struct Segment {
    /// `run` or `continue`.
    first: bool,
    /// `-m`: the task, or the message (an answer) that continued the run.
    message: Option<String>,
    /// Answers given on the terminal to an interactive `ask_human` (`-i`).
    interactive: Vec<String>,
    /// The LLM calls it made, for `--max-iterations` when its budget ran out.
    answers: u32,
    /// How it ended.
    status: RunStatus,
    exit: Exit,
    pub(super) error_type: Option<String>,
    result: Option<Value>,
}

impl Segment {
    /// A command that has not ended yet.
    fn new(first: bool, message: Option<String>) -> Self {
        Self {
            first,
            message,
            interactive: Vec::new(),
            answers: 0,
            status: RunStatus::Running,
            exit: Exit::Failure,
            error_type: None,
            result: None,
        }
    }

    /// The command line `delta-conformance` replays, and what it must observe: the exit
    /// code, the status, result and error type on stdout and in `metadata.json`.
    pub(super) fn step(&self, places: &Places) -> Step {
        let mut args: Vec<String> = if self.first {
            ["--agent", "{agent}", "-w", "{workspace}"]
                .map(String::from)
                .to_vec()
        } else {
            ["--run-id", "{run_id}", "-w", "{workspace}"]
                .map(String::from)
                .to_vec()
        };
        if let Some(message) = &self.message {
            args.push("-m".into());
            args.push(places.abstracted(message));
        }
        if !self.interactive.is_empty() {
            args.push("-i".into());
        }
        if self.error_type.as_deref() == Some("MaxIterationsReached") {
            args.push("--max-iterations".into());
            args.push(self.answers.to_string());
        }
        args.extend(["--format", "json"].map(String::from));
        let mut json = BTreeMap::new();
        json.insert("/status".into(), ValueMatch::exactly(self.status.as_str()));
        if let Some(result) = &self.result {
            json.insert("/result".into(), ValueMatch::exactly(places.value(result)));
        }
        if let Some(error_type) = &self.error_type {
            json.insert(
                "/error/type".into(),
                ValueMatch::exactly(error_type.as_str()),
            );
        }
        let stdin = (!self.interactive.is_empty()).then(|| {
            self.interactive
                .iter()
                .map(|answer| format!("{}\n", places.abstracted(answer)))
                .collect()
        });
        let args = Some(Args::List(args));
        let (run, continue_) = if self.first {
            (args, None)
        } else {
            (None, args)
        };
        Step {
            run,
            continue_,
            stdin,
            expect: Expect {
                exit: Some(ExitMatch::Code(i32::from(self.exit.code()))),
                stdout: Some(TextMatch {
                    json: Some(json),
                    ..TextMatch::default()
                }),
                metadata: Some(MetadataExpect {
                    status: Some(self.status.as_str().to_string()),
                    ..MetadataExpect::default()
                }),
                ..Expect::default()
            },
            ..Step::default()
        }
    }
}

/// The run's commands, split at its RUN_END events.
pub(super) fn segments(trajectory: &Trajectory) -> Result<Vec<Segment>, ScenarioError> {
    let run_id = trajectory.run_id().to_string();
    let unreplayable = |why: String| ScenarioError::Unreplayable {
        run_id: run_id.clone(),
        why,
    };
    if let Some(parent) = &trajectory.metadata.parent {
        return Err(unreplayable(format!(
            "it is a fork of {} at seq {}, whose journal no command line recreates",
            parent.run_id, parent.seq
        )));
    }
    let mut segments = Vec::new();
    let mut current = Segment::new(true, Some(trajectory.metadata.task.clone()));
    let mut opening = true;
    for event in &trajectory.events {
        match &event.payload {
            EventPayload::RunStart(start) => current.message = Some(start.task.clone()),
            EventPayload::UserMessage(message) if opening && !current.first => {
                current.message = Some(message.content.clone());
            }
            EventPayload::HumanInputReceived(received) => {
                if opening && !current.first {
                    current.message = Some(received.response.clone());
                } else {
                    current.interactive.push(received.response.clone());
                }
            }
            EventPayload::Thought(_) => {
                opening = false;
                current.answers += 1;
            }
            EventPayload::RunEnd(end) => {
                let status = RunStatus::from(end.status);
                let error_type = end
                    .error
                    .as_ref()
                    .map(|e| e.error_type.as_str().to_string());
                if error_type.as_deref() == Some("Interrupted") {
                    return Err(unreplayable(format!(
                        "a signal (or the Janitor) stopped it at seq {}",
                        event.seq
                    )));
                }
                let mut done = std::mem::replace(&mut current, Segment::new(false, None));
                done.status = status;
                done.exit = Exit::for_run(status, end.error.as_ref());
                done.error_type = error_type;
                done.result = end.result.clone();
                segments.push(done);
                opening = true;
            }
            EventPayload::UserMessage(_)
            | EventPayload::ActionRequest(_)
            | EventPayload::ActionResult(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_) => {}
        }
    }
    let ended = trajectory
        .events
        .last()
        .is_some_and(|event| matches!(event.payload, EventPayload::RunEnd(_)));
    if !ended || trajectory.metadata.status == RunStatus::Running {
        return Err(unreplayable(format!(
            "it has not ended (status {}, its journal does not end with RUN_END)",
            trajectory.metadata.status
        )));
    }
    Ok(segments)
}

//! The engine's entry for `delta continue`: a run taken over by [`crate::resume::take_over`]
//! becomes an [`ActiveRun`] like a new one, and [`ActiveRun::drive`] goes on from its
//! journal.

use super::{ActiveRun, EngineLog};
use crate::config::Agent;
use crate::hooks::HookRunner;
use crate::resume::{Entry, Resumed};
use crate::tool::OutputPolicy;

/// The run `resumed` as an [`ActiveRun`] of `agent` (as configured now), its takeover
/// recorded in `engine.log`. The lock, the journal writer (at its next seq) and the
/// RUNNING metadata come from the takeover; the iteration budget is the metadata's fresh
/// `max_iterations`. `output` bounds and redacts what its processes print, as for a new run.
#[must_use]
pub fn resume_run(resumed: Resumed, agent: &Agent, output: OutputPolicy) -> ActiveRun {
    let Resumed {
        paths,
        lock,
        journal,
        metadata,
        report,
    } = resumed;
    let mut log = EngineLog::open(&paths.engine_log(), output.redactor.clone());
    if let Some(janitor) = &report.janitor {
        log.warn(&janitor.to_string());
    }
    if report.run_start_restored {
        log.warn("the journal was empty; RUN_START was journaled from metadata.json's task");
    }
    if let Some(tail) = &report.torn_tail {
        log.warn(&format!(
            "journal line {} was torn ({} bytes) and was cut off; it began: {}",
            tail.line, tail.len, tail.preview
        ));
    }
    for action_id in &report.repairs.interrupted_actions {
        log.warn(&format!(
            "action {action_id} was in progress when the run stopped; answered with ERROR, \
             not run again"
        ));
    }
    for call_id in &report.repairs.not_run_calls {
        log.warn(&format!(
            "tool call {call_id} never started before the run stopped; answered with ERROR"
        ));
    }
    for action_id in &report.repairs.recovered_answers {
        log.info(&format!(
            "action {action_id}: the journaled answer was delivered"
        ));
    }
    let entry = match &report.entry {
        Entry::Resume => "no new message".to_owned(),
        Entry::UserMessage(_) => "a new user message".to_owned(),
        Entry::Answer { source, .. } if report.answer_as_user_message => {
            format!(
                "an answer from {source}, journaled as a user message (no question was pending)"
            )
        }
        Entry::Answer { source, .. } => format!("the answer to ask_human from {source}"),
    };
    log.info(&format!(
        "run {} continued from {} with {entry}: pid {}, host {}, max_iterations {}",
        metadata.run_id,
        report.previous_status,
        metadata.pid,
        metadata.hostname,
        metadata.max_iterations
    ));
    let hooks = HookRunner::new(agent.hooks.clone(), &paths).with_output(output.clone());
    ActiveRun {
        paths,
        _lock: lock,
        journal,
        metadata,
        log,
        human: None,
        hooks,
        output,
        mcp: None,
    }
}

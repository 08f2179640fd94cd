//! The loop's side of lifecycle hooks: runs the hook of each hook point through the run's
//! [`HookRunner`], journals every invocation (HOOK_EXECUTION_AUDIT, plus a WARN
//! SYSTEM_MESSAGE when it failed), and hands back what the loop must apply.
//!
//! Once a stop signal has arrived, no hook starts but `on_run_end`, and a hook running
//! when it arrives is killed: Ctrl+C must not wait for a slow logging hook. `on_run_end`
//! itself always runs to its end (or its timeout), so cleanup hooks see every ending.

use serde_json::Value;

use super::{ActiveRun, EngineError, EngineEvent, Level, Observer, Shutdown, Stop};
use crate::hooks::{HookEffect, HookEvent, HookOutcome, ToolCallInfo, ToolResultInfo};
use crate::journal::ActionStatus;
use crate::run::{ErrorInfo, ErrorType, FinalStatus};

impl ActiveRun {
    /// Runs the hook of `event` when one is configured and journals it; returns its
    /// effect (nothing when none is configured, it failed, or the run is stopping).
    pub(super) async fn hook(
        &mut self,
        event: HookEvent<'_>,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<HookEffect, EngineError> {
        if shutdown.requested().is_some() {
            return Ok(HookEffect::None);
        }
        let iteration = self.metadata.iterations;
        let outcome = self
            .hooks
            .run_until(iteration, event, shutdown.wait())
            .await;
        self.record_hook(outcome, observer)
    }

    /// `pre_llm_request`: the request to send, the hook's replacement if it made one.
    pub(super) async fn pre_llm_request(
        &mut self,
        request: Value,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Value, EngineError> {
        let effect = self
            .hook(
                HookEvent::PreLlmRequest { request: &request },
                observer,
                shutdown,
            )
            .await?;
        Ok(match effect {
            HookEffect::ReplaceRequest(replacement) => replacement,
            HookEffect::None | HookEffect::SkipTool { .. } => request,
        })
    }

    /// `pre_tool_execution`, after the call's ACTION_REQUEST: the observation the model
    /// gets instead of running the tool, when the hook blocked the call.
    pub(super) async fn pre_tool_execution(
        &mut self,
        call: ToolCallInfo<'_>,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<String>, EngineError> {
        let effect = self
            .hook(HookEvent::PreToolExecution(call), observer, shutdown)
            .await?;
        Ok(match effect {
            HookEffect::SkipTool { observation } => Some(observation),
            HookEffect::None | HookEffect::ReplaceRequest(_) => None,
        })
    }

    /// The hooks after a call's ACTION_RESULT: `on_error` when its status is ERROR (the
    /// call could not run) unless the `pre_tool_execution` hook blocked it on purpose,
    /// then `post_tool_execution`.
    pub(super) async fn post_tool_execution(
        &mut self,
        call: ToolCallInfo<'_>,
        result: ToolResultInfo<'_>,
        blocked_by_hook: bool,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<(), EngineError> {
        match result.status {
            ActionStatus::Error if !blocked_by_hook => {
                let error = ErrorInfo::new(
                    ErrorType::ToolExecutionError,
                    format!(
                        "tool call `{}` ({}): {}",
                        call.tool_name, call.action_id, result.observation
                    ),
                );
                self.hook(HookEvent::OnError(&error), observer, shutdown)
                    .await?;
            }
            ActionStatus::Error | ActionStatus::Success | ActionStatus::Failed => {}
        }
        self.hook(
            HookEvent::PostToolExecution(call, result),
            observer,
            shutdown,
        )
        .await?;
        Ok(())
    }

    /// The hooks of the run's end, before RUN_END is journaled: `on_error` when it
    /// failed (and no signal stopped it), then `on_run_end` whatever the ending. Their
    /// own failures are logged and never change how the run ends.
    pub(super) async fn end_hooks(
        &mut self,
        stop: &Stop,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) {
        let (status, error, result) = match stop {
            Stop::Completed(result) => (FinalStatus::Completed, None, Some(result)),
            Stop::Failed(error) => (FinalStatus::Failed, Some(error), None),
            Stop::Interrupted(error) => (FinalStatus::Interrupted, Some(error), None),
            Stop::WaitingForInput => (FinalStatus::WaitingForInput, None, None),
        };
        if let (FinalStatus::Failed, Some(error)) = (status, error)
            && let Err(e) = self
                .hook(HookEvent::OnError(error), observer, shutdown)
                .await
        {
            observer.detail(Level::Error, format!("on_error hook not recorded: {e}"));
        }
        let event = HookEvent::OnRunEnd {
            status,
            error,
            result,
        };
        let iteration = self.metadata.iterations;
        let outcome = self.hooks.run(iteration, event).await;
        if let Err(e) = self.record_hook(outcome, observer) {
            observer.detail(Level::Error, format!("on_run_end hook not recorded: {e}"));
        }
    }

    /// Journals an invocation and reports a failure to the log and the observer.
    fn record_hook(
        &mut self,
        outcome: Option<HookOutcome>,
        observer: &mut dyn Observer,
    ) -> Result<HookEffect, EngineError> {
        let Some(outcome) = outcome else {
            return Ok(HookEffect::None);
        };
        for event in outcome.journal_events() {
            self.journal.append(event)?;
        }
        if let Some(warning) = outcome.warning() {
            observer.on_event(&EngineEvent::Warning {
                message: warning.content,
            });
        }
        match outcome.result {
            Ok(effect) => {
                observer.detail(
                    Level::Info,
                    format!(
                        "hook {} ({}): {}",
                        outcome.hook.as_str(),
                        outcome.io_path_ref,
                        describe(&effect)
                    ),
                );
                Ok(effect)
            }
            Err(_) => Ok(HookEffect::None),
        }
    }
}

/// The log line's account of what a successful hook changed.
fn describe(effect: &HookEffect) -> &'static str {
    match effect {
        HookEffect::None => "succeeded",
        HookEffect::ReplaceRequest(_) => "succeeded; its payload_override.dat is sent",
        HookEffect::SkipTool { .. } => "succeeded; it blocked the tool call",
    }
}

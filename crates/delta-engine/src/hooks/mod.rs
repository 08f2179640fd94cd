//! Lifecycle hooks: runs the external command configured for a hook point through the
//! file protocol of seed 001 §6.4 and hands the engine a typed outcome to apply.
//!
//! Each invocation gets its own directory, `io/hooks/{step}_{hook}/`:
//!
//! ```text
//! input/context.json          what triggered the hook (HookContext)
//! input/payload.dat           the hook's main data (LLM request, tool call, error…)
//! input/proposed_payload.json pre_llm_request only: the same request, seed 001 §8.3's name
//! output/                     written by the hook: payload_override.dat, control.json
//! execution_meta/             command.txt, stdout.log, stderr.log, exit_code.txt, duration_ms.txt
//! ```
//!
//! A hook watches and may steer, but never stops the run: whatever goes wrong (it cannot
//! start, exits non-zero, times out, writes output that does not parse) becomes a FAILED
//! [`HookOutcome`] that changes nothing, which the engine journals as a
//! `HOOK_EXECUTION_AUDIT` plus a `SYSTEM_MESSAGE` warning before going on.

pub mod claude;
mod context;
mod outcome;
mod runner;
mod steps;

pub use context::{HookContext, HookControl, HookDetails};
pub use outcome::{HookEffect, HookFailure, HookOutcome};
pub use runner::{
    HookEvent, HookRunner, SCRUBBED_VARIABLES, TOOL_RESULT_ENV_LIMIT, ToolCallInfo, ToolResultInfo,
};

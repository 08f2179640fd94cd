//! The run's usage in one place: one call's tokens priced and added to `metadata.json`'s
//! totals (live, after every answer), and the totals rebuilt from what `io/invocations`
//! recorded when a run is taken over, so that a call its killed process never counted
//! still counts, and budgets are never under-counted after a crash.

use crate::config::LlmConfig;
use crate::llm::{CallUsage, TokenUsage, prices};
use crate::run::{Metadata, RunPaths, Usage};
use crate::trajectory::{LlmCall, read_calls};

/// The estimated cost of a call of `model` with `usage` (`llm.pricing` when given, cached
/// tokens at their price), and the note to keep in the run's usage when the estimate is
/// 0 or an upper bound. `None` when no price is known.
pub(super) fn price(
    llm: &LlmConfig,
    model: &str,
    usage: &TokenUsage,
) -> (Option<f64>, Option<String>) {
    match prices(llm.api, model, llm.pricing) {
        Some(prices) => {
            let note = (usage.cached_tokens > 0 && !prices.cached_known).then(|| {
                format!(
                    "the server reported cached input tokens, counted at the full input price \
                     of '{model}' as its cached price is not known; set \
                     llm.pricing.cached_input_per_million in agent.yaml to estimate them"
                )
            });
            (Some(prices.cost_usd(usage)), note)
        }
        None => (
            None,
            Some(format!(
                "no price is known for model '{model}', so its cost is counted as 0; set \
                 llm.pricing (input_per_million, output_per_million) in agent.yaml to \
                 estimate it"
            )),
        ),
    }
}

/// Rebuilds the usage and the iteration count of the run at `paths` from its invocation
/// records: every answered call that started since the run was created (a fork's records
/// linked from its parent started before and are the parent's), priced as recorded, else
/// with `llm`. The totals are replaced only when the records count more calls than the
/// metadata (a process killed after a call, before it wrote metadata.json): they are never
/// lowered. Returns whether anything changed.
pub(super) fn rebuild(paths: &RunPaths, metadata: &mut Metadata, llm: &LlmConfig) -> bool {
    let mut calls: Vec<LlmCall> = read_calls(paths)
        .into_values()
        .filter(|call| call.status.as_deref() == Some("SUCCESS"))
        .filter(|call| call.started_at.is_some_and(|at| at >= metadata.created_at))
        .collect();
    calls.sort_by_key(|call| call.started_at);
    let mut rebuilt = Usage::default();
    for call in &calls {
        let model = call.model.as_deref().unwrap_or(&llm.model);
        let Some(tokens) = call.token_usage else {
            rebuilt.record_unknown(model);
            continue;
        };
        let tokens = TokenUsage::from(tokens);
        let cost = match call.recorded_cost_usd {
            Some(cost) => Some(cost),
            None => {
                let (cost, note) = price(llm, model, &tokens);
                if note.is_some() {
                    rebuilt.cost_note = note;
                }
                cost
            }
        };
        rebuilt.record_call(model, &CallUsage::from(tokens), cost.unwrap_or(0.0));
    }
    let count = |usage: &Usage| usage.model_usage.values().map(|m| m.calls).sum::<u64>();
    let mut changed = false;
    if count(&rebuilt) > count(&metadata.usage) {
        rebuilt.cost_note = rebuilt
            .cost_note
            .or_else(|| metadata.usage.cost_note.take());
        metadata.usage = rebuilt;
        changed = true;
    }
    let iterations = calls
        .iter()
        .filter_map(|call| call.iteration)
        .max()
        .unwrap_or(0);
    if iterations > metadata.iterations {
        metadata.iterations = iterations;
        changed = true;
    }
    changed
}

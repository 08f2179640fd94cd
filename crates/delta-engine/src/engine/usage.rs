//! The run's usage in one place: one call's tokens priced and added to `metadata.json`'s
//! totals (live, after every answer), and the totals rebuilt from what `io/invocations`
//! recorded when a run is taken over, so that a call its killed process never counted
//! still counts, and budgets are never under-counted after a crash.

use crate::config::LlmConfig;
use crate::llm::cost_usd;
use crate::run::{Metadata, RunPaths, Usage};
use crate::trajectory::{LlmCall, read_calls};

/// The estimated cost of `input` and `output` tokens of `model`, with `llm.pricing` when
/// given; 0 with the note saying why when no price is known.
pub(super) fn price(
    llm: &LlmConfig,
    model: &str,
    input: u64,
    output: u64,
) -> (f64, Option<String>) {
    let pricing = llm
        .pricing
        .map(|p| (p.input_per_million, p.output_per_million));
    match cost_usd(model, input, output, pricing) {
        Some(cost) => (cost, None),
        None => (
            0.0,
            Some(format!(
                "no price is known for model '{model}', so its cost is counted as 0; set \
                 llm.pricing (input_per_million, output_per_million) in agent.yaml to \
                 estimate it"
            )),
        ),
    }
}

/// Adds one answered call of `model` to `usage`: its tokens at `cost` (None when the
/// server reported no usable counts: a call, never 0 tokens), and the note of a cost
/// that could not be estimated.
pub(super) fn add_call(
    usage: &mut Usage,
    model: &str,
    tokens: Option<(u64, u64)>,
    cost: f64,
    note: Option<String>,
) {
    match tokens {
        Some((input, output)) => usage.record(model, input, output, cost),
        None => usage.record_unknown(model),
    }
    if note.is_some() {
        usage.cost_note = note;
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
        let tokens = call
            .token_usage
            .map(|usage| (usage.prompt_tokens, usage.completion_tokens));
        let (cost, note) = match (call.cost_usd, tokens) {
            (Some(cost), _) => (cost, None),
            (None, Some((input, output))) => price(llm, model, input, output),
            (None, None) => (0.0, None),
        };
        add_call(&mut rebuilt, model, tokens, cost, note);
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

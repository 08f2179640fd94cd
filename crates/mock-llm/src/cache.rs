//! The prompt cache (`--prompt-cache`): prompt tokens counted from the request, and the
//! part of them a provider would have served from its prefix cache, reported the way each
//! API reports it. It is what the engine's cache-hit figures are measured against.
//!
//! A request is cut into segments in the order the services cache them (digest A2.6:
//! "tools, system, and messages (in that order)"): each tool definition, then the system
//! blocks (Anthropic) or `instructions` (Responses), then each message (chat), input item
//! (Responses) or content block (Anthropic). A segment counts its canonical JSON's bytes
//! / 4 tokens; `cache_control` markers are left out of it, as they mark where to cache and
//! are not part of the prompt. The prefixes are remembered by a hash chained over the
//! segments, per model, for as long as the server runs (no expiry).
//!
//! - chat and Responses (B5): any prefix is written; a request reads the longest prefix
//!   seen before, if it is at least 1,024 tokens, in 128-token increments.
//! - Anthropic (A2.6): prefixes are written only at `cache_control` breakpoints (a
//!   top-level `cache_control` marks the last block), and only when at least the model's
//!   minimum length; a breakpoint reads the longest written prefix among the 20 blocks
//!   before it and itself (the lookback, from a third-party account, digest §A2.6);
//!   written are the tokens after what was read, up to the last breakpoint that writes.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::{Mutex, PoisonError};

use delta_scenario::ModelApi;
use serde_json::Value;

use crate::window::prompt_tokens;

/// OpenAI caches prompts of at least this many tokens (B5).
const OPENAI_MINIMUM: u64 = 1024;
/// OpenAI counts cache hits in steps of this many tokens (B5).
const OPENAI_INCREMENT: u64 = 128;
/// Blocks before a breakpoint that Anthropic looks at for a hit, the breakpoint's own
/// included.
const LOOKBACK_BLOCKS: usize = 20;

/// What the cache found for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cached {
    /// Every prompt token.
    pub(crate) prompt: u64,
    /// Tokens read from the cache.
    pub(crate) read: u64,
    /// Tokens written to it.
    pub(crate) written: u64,
}

/// The prefixes seen, by their chained hash.
#[derive(Debug, Default)]
pub(crate) struct PromptCache {
    written: Mutex<HashSet<u64>>,
}

/// A request cut into segments.
struct Segments {
    /// Tokens up to and including each segment.
    ends: Vec<u64>,
    /// The chained hash of the prefix ending with each segment.
    hashes: Vec<u64>,
    /// Segments carrying a `cache_control` (Anthropic).
    breakpoints: Vec<usize>,
}

impl PromptCache {
    /// Counts `body`'s prompt and looks it up, remembering what it writes.
    pub(crate) fn look_up(&self, api: ModelApi, model: &str, body: &Value) -> Cached {
        let segments = segments(api, model, body);
        let prompt = segments.ends.last().copied().unwrap_or(0);
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        match api {
            ModelApi::Chat | ModelApi::Responses => {
                let longest = segments
                    .hashes
                    .iter()
                    .zip(&segments.ends)
                    .filter(|(hash, _)| written.contains(hash))
                    .map(|(_, end)| *end)
                    .max()
                    .unwrap_or(0);
                let read = if longest >= OPENAI_MINIMUM {
                    longest / OPENAI_INCREMENT * OPENAI_INCREMENT
                } else {
                    0
                };
                if prompt >= OPENAI_MINIMUM {
                    written.extend(segments.hashes.iter().copied());
                }
                Cached {
                    prompt,
                    read,
                    written: 0,
                }
            }
            ModelApi::Anthropic => {
                let minimum = anthropic_minimum(model);
                let read = segments
                    .breakpoints
                    .iter()
                    .filter_map(|&breakpoint| {
                        let first = breakpoint.saturating_sub(LOOKBACK_BLOCKS - 1);
                        (first..=breakpoint)
                            .rev()
                            .find(|&at| written.contains(&segments.hashes[at]))
                            .map(|at| segments.ends[at])
                    })
                    .max()
                    .unwrap_or(0);
                let mut furthest = read;
                for &breakpoint in &segments.breakpoints {
                    let end = segments.ends[breakpoint];
                    if end >= minimum && end > read {
                        written.insert(segments.hashes[breakpoint]);
                        furthest = furthest.max(end);
                    }
                }
                Cached {
                    prompt,
                    read,
                    written: furthest - read,
                }
            }
        }
    }
}

/// The shortest prompt Anthropic caches for `model` (digest A2.6's table: the docs as
/// quoted in anthropic-sdk-python issue 1194); unknown models get 1,024.
pub(crate) fn anthropic_minimum(model: &str) -> u64 {
    if ["opus-4-6", "opus-4-5", "haiku-4-5"]
        .iter()
        .any(|name| model.contains(name))
    {
        4096
    } else if ["3-5-haiku", "3-haiku", "haiku-3"]
        .iter()
        .any(|name| model.contains(name))
    {
        2048
    } else {
        1024
    }
}

fn segments(api: ModelApi, model: &str, body: &Value) -> Segments {
    let mut parts: Vec<(Value, bool)> = Vec::new();
    let tools = body["tools"].as_array().into_iter().flatten();
    parts.extend(tools.map(|tool| (tool.clone(), marked(tool))));
    match api {
        ModelApi::Chat => {
            let messages = body["messages"].as_array().into_iter().flatten();
            parts.extend(messages.map(|message| (message.clone(), false)));
        }
        ModelApi::Responses => {
            if let Some(instructions) = body.get("instructions") {
                parts.push((instructions.clone(), false));
            }
            match body["input"].as_array() {
                Some(items) => parts.extend(items.iter().map(|item| (item.clone(), false))),
                None => parts.push((body["input"].clone(), false)),
            }
        }
        ModelApi::Anthropic => {
            let system = &body["system"];
            match system.as_array() {
                Some(blocks) => {
                    parts.extend(blocks.iter().map(|block| (block.clone(), marked(block))));
                }
                None if system.is_null() => {}
                None => parts.push((system.clone(), false)),
            }
            for message in body["messages"].as_array().into_iter().flatten() {
                let role = &message["role"];
                let content = &message["content"];
                match content.as_array() {
                    Some(blocks) => parts.extend(blocks.iter().map(|block| {
                        (
                            serde_json::json!({"role": role, "block": block}),
                            marked(block),
                        )
                    })),
                    None => {
                        parts.push((serde_json::json!({"role": role, "block": content}), false))
                    }
                }
            }
            if body.get("cache_control").is_some()
                && let Some(last) = parts.last_mut()
            {
                last.1 = true;
            }
        }
    }
    let mut hasher = DefaultHasher::new();
    model.hash(&mut hasher);
    let mut total = 0;
    let mut segments = Segments {
        ends: Vec::with_capacity(parts.len()),
        hashes: Vec::with_capacity(parts.len()),
        breakpoints: Vec::new(),
    };
    for (index, (mut part, breakpoint)) in parts.into_iter().enumerate() {
        strip_cache_control(&mut part);
        let text = part.to_string();
        text.hash(&mut hasher);
        total += prompt_tokens(text.len());
        segments.ends.push(total);
        segments.hashes.push(hasher.finish());
        if breakpoint {
            segments.breakpoints.push(index);
        }
    }
    segments
}

/// Whether a tool, system block or content block carries a `cache_control`.
fn marked(value: &Value) -> bool {
    value.get("cache_control").is_some()
}

fn strip_cache_control(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("cache_control");
            fields.values_mut().for_each(strip_cache_control);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(bytes: usize) -> String {
        "x".repeat(bytes)
    }

    #[test]
    fn openai_reads_the_longest_prefix_seen_in_128_token_steps() {
        let cache = PromptCache::default();
        let first = json!({"messages": [{"role": "system", "content": text(6000)}, {"role": "user", "content": "a"}]});
        let seen = cache.look_up(ModelApi::Chat, "m", &first);
        assert_eq!(seen.read, 0);
        let mut second = first.clone();
        second["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "assistant", "content": "b"}));
        let hit = cache.look_up(ModelApi::Chat, "m", &second);
        assert_eq!(hit.read, seen.prompt / 128 * 128);
        assert!(hit.read > 1024 && hit.read < hit.prompt);
        // Another model shares nothing.
        assert_eq!(cache.look_up(ModelApi::Chat, "n", &second).read, 0);
    }

    #[test]
    fn anthropic_caches_only_at_breakpoints_and_above_the_minimum() {
        let cache = PromptCache::default();
        let marker = json!({"type": "ephemeral"});
        let request = |turns: usize, mark: bool| {
            let mut messages =
                vec![json!({"role": "user", "content": [{"type": "text", "text": "task"}]})];
            for turn in 0..turns {
                messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("a{turn}")}]}));
                messages.push(json!({"role": "user", "content": [{"type": "text", "text": format!("u{turn}")}]}));
            }
            if mark {
                let last = messages.last_mut().unwrap();
                last["content"][0]["cache_control"] = marker.clone();
            }
            json!({"system": [{"type": "text", "text": text(8000), "cache_control": marker}], "messages": messages})
        };
        let first = cache.look_up(ModelApi::Anthropic, "claude-sonnet-4-5", &request(0, true));
        assert_eq!((first.read, first.written), (0, first.prompt));
        let second = cache.look_up(ModelApi::Anthropic, "claude-sonnet-4-5", &request(1, true));
        assert_eq!(
            second.read, first.prompt,
            "the previous breakpoint is within the lookback"
        );
        assert_eq!(second.read + second.written, second.prompt);
        // Without a breakpoint on the conversation only the system prompt is read.
        let unmarked = cache.look_up(ModelApi::Anthropic, "claude-sonnet-4-5", &request(2, false));
        assert_eq!(unmarked.written, 0);
        assert!(unmarked.read > 0 && unmarked.read < first.prompt);
        // Under the model's minimum nothing is cached.
        let short = json!({"system": [{"type": "text", "text": "short", "cache_control": marker}], "messages": [{"role": "user", "content": "hi"}]});
        let small = cache.look_up(ModelApi::Anthropic, "claude-sonnet-4-5", &short);
        assert_eq!((small.read, small.written), (0, 0));
        assert_eq!(anthropic_minimum("claude-haiku-4-5"), 4096);
        assert_eq!(anthropic_minimum("claude-3-5-haiku-20241022"), 2048);
    }
}

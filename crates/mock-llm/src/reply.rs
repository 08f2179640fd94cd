//! What every API's answer says ([`Reply`]): a message step made concrete for one request,
//! with its token counts and tool calls, and what the wire formats share to write it.

use std::path::PathBuf;

/// `created` of every completion: a constant, so identical runs produce identical responses.
pub const CREATED: u64 = 1_700_000_000;

/// Thinking text of a model that reasons when its step gives none: Anthropic with
/// thinking enabled and Responses reasoning models always reason.
pub(crate) const DEFAULT_REASONING: &str = "Deciding what to do next.";

/// The token counts of one answer: from the script, or counted from the request and the
/// prompt cache (`--prompt-cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Every prompt token, the cached and cache-written ones included.
    pub(crate) prompt: u64,
    pub(crate) completion: u64,
    /// Prompt tokens read from the cache.
    pub(crate) cached: u64,
    /// Prompt tokens written to the cache.
    pub(crate) written: u64,
    /// Whether the cache counted them (so the answer reports the cache's fields even when
    /// they are 0).
    pub(crate) from_cache: bool,
}

/// One tool call of a reply, its arguments as the text the model wrote.
pub(crate) struct Call {
    /// The script's id, else `None` for the API's default.
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

impl Call {
    /// The id: the script's, else `{prefix}{step}_{index}`.
    pub(crate) fn id(&self, prefix: &str, step: u64, index: usize) -> String {
        self.id
            .clone()
            .unwrap_or_else(|| format!("{prefix}{step}_{index}"))
    }
}

/// A message step made concrete for one request: what every API's answer says.
pub(crate) struct Reply<'a> {
    pub(crate) step: u64,
    pub(crate) model: &'a str,
    pub(crate) content: Option<&'a str>,
    pub(crate) calls: Vec<Call>,
    /// In chat's words: `stop`, `tool_calls`, `length`, `content_filter`, or the script's.
    pub(crate) finish_reason: String,
    pub(crate) reasoning: Option<&'a str>,
    pub(crate) redacted: Option<&'a str>,
    pub(crate) counts: Counts,
    /// `stream_hold_until`.
    pub(crate) hold: Option<&'a PathBuf>,
}

/// `text` in two pieces (at its middle character), as streams deliver it: clients must
/// join the pieces.
pub(crate) fn halves(text: &str) -> [String; 2] {
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(at, _)| at);
    [text[..middle].to_owned(), text[middle..].to_owned()]
}

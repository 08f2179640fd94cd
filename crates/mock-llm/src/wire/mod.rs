//! Each API's answer to a reply: the JSON body a non-streamed call gets and, when the
//! request streams, its server-sent events with the number of them sent before a held
//! stream waits.

pub(crate) mod anthropic;
pub(crate) mod chat;
pub(crate) mod responses;

use serde_json::Value;

/// The body and, for a stream, its events and how many go before the first text's rest.
pub(crate) type Answer = (Value, Option<(Vec<String>, usize)>);

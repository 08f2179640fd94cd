//! What the engine asks of a model: one answer per request body. The HTTP client is the
//! model of every run; `delta replay` plugs in a recording played back instead
//! ([`crate::replay::ReplayModel`]), so the one loop drives both.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::client::LlmClient;
use super::error::{AttemptRecord, LlmError};
use super::response::Completion;

/// The answer a [`ChatModel`] is computing.
pub type Answering<'a> = Pin<Box<dyn Future<Output = Result<Completion, LlmError>> + 'a>>;

/// Answers chat-completions requests.
pub trait ChatModel: fmt::Debug {
    /// Where the requests go, for the live stream and `engine.log` (never a credential).
    fn endpoint(&self) -> &str;

    /// The answer to `body` (a serialized chat-completions request, sent as it is);
    /// `on_retry` sees each failed attempt just before the wait that precedes a retry.
    fn answer<'a>(
        &'a self,
        body: &'a [u8],
        on_retry: &'a mut dyn FnMut(&AttemptRecord),
    ) -> Answering<'a>;
}

impl ChatModel for LlmClient {
    fn endpoint(&self) -> &str {
        LlmClient::endpoint(self)
    }

    fn answer<'a>(
        &'a self,
        body: &'a [u8],
        on_retry: &'a mut dyn FnMut(&AttemptRecord),
    ) -> Answering<'a> {
        Box::pin(self.complete_observed(body, on_retry))
    }
}

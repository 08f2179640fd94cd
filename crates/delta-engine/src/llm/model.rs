//! What the engine asks of a model: one answer per request body. The HTTP client is the
//! model of every run; `delta replay` plugs in a recording played back instead
//! ([`crate::replay::ReplayModel`]), so the one loop drives both.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::client::{CallProgress, LlmClient};
use super::error::LlmError;
use super::response::Completion;

/// The answer a [`ChatModel`] is computing.
pub type Answering<'a> = Pin<Box<dyn Future<Output = Result<Completion, LlmError>> + 'a>>;

/// Answers chat-completions requests.
pub trait ChatModel: fmt::Debug {
    /// Where the requests go, for the live stream and `engine.log` (never a credential).
    fn endpoint(&self) -> &str;

    /// The answer to `body` (a serialized chat-completions request, sent as it is);
    /// `on_progress` sees each failed attempt before its retry, and the pieces of a
    /// streamed answer as they arrive.
    fn answer<'a>(
        &'a self,
        body: &'a [u8],
        on_progress: &'a mut dyn FnMut(CallProgress<'_>),
    ) -> Answering<'a>;
}

impl ChatModel for LlmClient {
    fn endpoint(&self) -> &str {
        LlmClient::endpoint(self)
    }

    fn answer<'a>(
        &'a self,
        body: &'a [u8],
        on_progress: &'a mut dyn FnMut(CallProgress<'_>),
    ) -> Answering<'a> {
        Box::pin(self.complete_observed(body, on_progress))
    }
}

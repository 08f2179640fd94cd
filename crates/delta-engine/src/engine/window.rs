//! Keeping each request within the model's context window: the prompt limit from
//! `total_max_tokens` (context.yaml), `llm.context_window` (agent.yaml) and the window
//! the server stated when it rejected a request, and the calibration of the token
//! estimator by the prompt sizes the server reports. Lives for one process: a continued
//! run learns the window again from at most one rejected request.

use serde_json::{Map, Value};

use super::called::{Answer, Called};
use super::{ActiveRun, EngineError, EngineEvent, Flow, Level, Observer, Shutdown, Stop};
use crate::config::{Agent, ContextManifest, LlmConfig};
use crate::context::ContextReport;
use crate::context::tokens::{MESSAGE_OVERHEAD, json_tokens};
use crate::llm::{ChatMessage, ChatModel, ContextOverflow, ModelApi, WireOptions, WireRequest};
use crate::run::{ErrorInfo, ErrorType};

/// `error.type` of a run whose system prompt and task alone do not fit the window.
pub const CONTEXT_WINDOW_EXCEEDED: &str = "ContextWindowExceeded";

/// Requests one LLM call may send after context-length rejections before the run fails:
/// each retry is smaller than the one before, so this only bounds a server that keeps
/// rejecting without saying its window.
pub(super) const MAX_SHRINK_RETRIES: u32 = 6;

/// Room kept for the answer when a window is known but `llm.max_tokens` is not set: a
/// quarter of the window, at most this many tokens.
const DEFAULT_ANSWER_ROOM: u64 = 4096;

/// What the engine knows about the window in this process.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Window {
    /// The window a server's context-length error stated.
    learned: Option<u64>,
    /// The size of a prompt the server accepted after rejecting a larger one without
    /// stating its window.
    proven: Option<u64>,
    /// Server tokens per estimated token, at least 1: raised when the server reports a
    /// prompt larger than the estimate, never lowered (the estimate is meant as a ceiling).
    scale: f64,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            learned: None,
            proven: None,
            scale: 1.0,
        }
    }
}

/// The prompt limit of one request and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Limit {
    /// Server tokens the prompt (messages and tool definitions) may take.
    pub tokens: u64,
    /// Whether the configuration sets this limit (rather than the server's answer).
    pub configured: bool,
    /// The settings that decide it, for error messages.
    pub settings: String,
}

impl Window {
    /// The tightest of the configured budget, the configured window and the learned
    /// window (each window less the answer's room); `None` when nothing limits the prompt.
    pub fn limit(&self, manifest: &ContextManifest, llm: &LlmConfig) -> Option<Limit> {
        let mut candidates = Vec::new();
        if let Some(total) = manifest.total_max_tokens {
            candidates.push(Limit {
                tokens: total,
                configured: true,
                settings: format!("total_max_tokens ({total}) in context.yaml"),
            });
        }
        if let Some(window) = llm.context_window {
            let room = answer_room(window, llm.max_tokens);
            candidates.push(Limit {
                tokens: window.saturating_sub(room),
                configured: true,
                settings: format!(
                    "llm.context_window ({window}) less {room} tokens for the answer in agent.yaml"
                ),
            });
        }
        if let Some(window) = self.learned {
            let room = answer_room(window, llm.max_tokens);
            candidates.push(Limit {
                tokens: window.saturating_sub(room),
                configured: false,
                settings: format!(
                    "the server's context window ({window} tokens, from its error) less {room} \
                     tokens for the answer"
                ),
            });
        }
        if let Some(tokens) = self.proven {
            candidates.push(Limit {
                tokens,
                configured: false,
                settings: format!(
                    "the largest prompt the server accepted after rejecting a larger one \
                     ({tokens} tokens; it did not state its window)"
                ),
            });
        }
        candidates.into_iter().min_by_key(|limit| limit.tokens)
    }

    /// The budget of the messages, in estimated tokens: the limit scaled down by the
    /// calibration, less what the rest of the request (tool definitions, parameters)
    /// takes.
    pub fn messages_budget(&self, limit: u64, rest_tokens: u64) -> u64 {
        // Token counts are far below 2^52, and truncation rounds down, the safe direction.
        let scaled = (limit as f64 / self.scale) as u64;
        scaled.saturating_sub(rest_tokens)
    }

    /// Learns from a server's report that a request estimated at `estimated` tokens
    /// measured `actual` server tokens.
    pub fn calibrate(&mut self, estimated: u64, actual: u64) {
        if estimated > 0 && actual > estimated {
            let ratio = actual as f64 / estimated as f64;
            self.scale = self.scale.max(ratio);
        }
    }

    /// Learns from a context-length error on a request estimated at `estimated` tokens.
    pub fn learn(&mut self, overflow: ContextOverflow, estimated: u64) {
        if let Some(prompt) = overflow.prompt_tokens {
            self.calibrate(estimated, prompt);
        }
        if let Some(window) = overflow.window {
            self.learned = Some(self.learned.map_or(window, |known| known.min(window)));
        }
    }

    /// Remembers that a request estimated at `estimated` tokens was accepted after the
    /// server rejected a larger one without stating its window: later requests stay
    /// within that size instead of being rejected again.
    pub fn prove(&mut self, estimated: u64) {
        // Token counts are far below 2^52; truncation rounds down, the safe direction.
        let tokens = (estimated as f64 * self.scale) as u64;
        self.proven = Some(self.proven.map_or(tokens, |known| known.min(tokens)));
    }

    /// The calibration factor, for the log.
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

/// Room for the answer: `llm.max_tokens` when set, else a quarter of the window up to
/// [`DEFAULT_ANSWER_ROOM`].
fn answer_room(window: u64, max_tokens: Option<u64>) -> u64 {
    max_tokens.unwrap_or_else(|| (window / 4).min(DEFAULT_ANSWER_ROOM))
}

/// The run's error when the configured limit cannot hold what is never left out.
pub(super) fn over_configured_limit(
    limit: &Limit,
    report: &ContextReport,
    rest_tokens: u64,
) -> ErrorInfo {
    ErrorInfo::new(
        ErrorType::Other(CONTEXT_WINDOW_EXCEEDED.to_owned()),
        format!(
            "the system prompt, the other context sources and the task alone need about {} \
             tokens with the tool definitions (about {rest_tokens}), more than the {} tokens \
             allowed by {}",
            report.estimated_tokens + rest_tokens,
            limit.tokens,
            limit.settings
        ),
    )
    .with_details(
        "raise total_max_tokens in context.yaml (or llm.context_window in agent.yaml), shorten \
         the task or the system prompt, or give large file sources a max_tokens in context.yaml"
            .to_owned(),
    )
}

/// The run's error when the server rejects a request that holds only what is never left
/// out (or keeps rejecting smaller ones).
pub(super) fn over_server_window(server_error: &str, retries: u32) -> ErrorInfo {
    ErrorInfo::new(
        ErrorType::Other(CONTEXT_WINDOW_EXCEEDED.to_owned()),
        format!(
            "the system prompt, the other context sources and the task alone do not fit the \
             model's context window: the server still rejected the request with every \
             earlier iteration left out ({retries} retry(ies)): {server_error}"
        ),
    )
    .with_details(
        "shorten the task or the system prompt, give large file sources a max_tokens in \
         context.yaml, lower llm.max_tokens in agent.yaml, or use a model or server with a \
         larger window (llama.cpp: --ctx-size; vLLM: --max-model-len)"
            .to_owned(),
    )
}

/// The parts of a request besides its messages.
pub(super) struct RequestShape<'a> {
    pub api: ModelApi,
    pub model: &'a str,
    pub tools: &'a [Value],
    pub params: &'a Map<String, Value>,
    pub options: &'a WireOptions,
}

impl RequestShape<'_> {
    /// The request of `messages`, in the API's wire format.
    fn body(&self, messages: &[ChatMessage]) -> Value {
        WireRequest {
            api: self.api,
            model: self.model,
            messages,
            tools: self.tools,
            params: self.params,
            options: self.options,
        }
        .body()
    }
}

/// How the context of one request is to be fitted.
#[derive(Clone, Copy)]
pub(super) struct Fit<'a> {
    pub window: &'a Window,
    /// Estimated tokens of the request without its messages.
    pub rest_tokens: u64,
    /// A tighter budget for the messages after a rejection, in estimated tokens.
    pub cap: Option<u64>,
}

impl ActiveRun {
    /// Steps 1–4 of an iteration: build the context within the window, send it, and
    /// when the server answers that it does not fit, learn the window from its answer,
    /// leave out more of the journal and send again. Fails the run when what is never
    /// left out (file sources, the task) does not fit: before sending when the
    /// configuration sets the limit, else once the server rejects it.
    #[expect(
        clippy::too_many_arguments,
        reason = "the loop's inputs; a struct would only rename them"
    )]
    pub(super) async fn think_within_window(
        &mut self,
        agent: &Agent,
        llm: &dyn ChatModel,
        iteration: u32,
        request: &RequestShape<'_>,
        window: &mut Window,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Flow<Answer>, EngineError> {
        let empty = request.body(&[]);
        let rest_tokens = json_tokens(
            serde_json::to_vec(&empty)
                .map_err(EngineError::Serialize)?
                .len(),
        );
        let mut cap = None;
        let mut retries = 0;
        // Whether a rejection of this call did not state the window.
        let mut unstated = false;
        loop {
            let fit = Fit {
                window,
                rest_tokens,
                cap,
            };
            let built = match self.think_context(agent, fit, observer, shutdown).await? {
                Ok(built) => built,
                Err(stop) => return Ok(Err(stop)),
            };
            if !built.report.fits
                && let Some(limit) = built.limit.as_ref().filter(|limit| limit.configured)
            {
                let error = over_configured_limit(limit, &built.report, rest_tokens);
                observer.detail(Level::Error, error.message.clone());
                return Ok(Err(Stop::Failed(error)));
            }
            let body = request.body(&built.messages);
            let estimated = json_tokens(
                serde_json::to_vec(&body)
                    .map_err(EngineError::Serialize)?
                    .len(),
            ) + MESSAGE_OVERHEAD
                * u64::try_from(built.messages.len()).unwrap_or(u64::MAX);
            let body = self.pre_llm_request(body, observer, shutdown).await?;
            let called = self
                .call_llm(
                    agent,
                    llm,
                    iteration,
                    &body,
                    &built.report,
                    observer,
                    shutdown,
                )
                .await?;
            match called {
                Err(stop) => return Ok(Err(stop)),
                Ok(Called::Answer(answer)) => {
                    if let Some(actual) = answer.prompt_tokens {
                        window.calibrate(estimated, actual);
                    }
                    if unstated {
                        window.prove(estimated);
                    }
                    return Ok(Ok(answer));
                }
                Ok(Called::Overflow {
                    invocation_id,
                    overflow,
                    error,
                }) => {
                    if built.report.kept_messages == 0 || retries >= MAX_SHRINK_RETRIES {
                        let error = over_server_window(&error, retries);
                        observer.detail(Level::Error, error.message.clone());
                        return Ok(Err(Stop::Failed(error)));
                    }
                    window.learn(overflow, estimated);
                    unstated |= overflow.window.is_none();
                    // Each retry is smaller than the request rejected: by the learned
                    // window when the server said it, and at least by a quarter (half
                    // when it did not say).
                    let shrink = if overflow.window.is_some() { 4 } else { 2 };
                    let smaller = built.report.estimated_tokens * (shrink - 1) / shrink;
                    cap = Some(cap.map_or(smaller, |cap: u64| cap.min(smaller)));
                    retries += 1;
                    observer.detail(
                        Level::Warn,
                        format!(
                            "invocation {invocation_id}: the server's window is {}, its count of \
                         the prompt {}; estimator scale now {:.2}; retrying with more of the \
                         journal left out ({retries}/{MAX_SHRINK_RETRIES})",
                            overflow
                                .window
                                .map_or_else(|| "unknown".to_owned(), |w| format!("{w} tokens")),
                            overflow
                                .prompt_tokens
                                .map_or_else(|| "unknown".to_owned(), |p| format!("{p} tokens")),
                            window.scale()
                        ),
                    );
                    observer.on_event(&EngineEvent::ContextWindowExceeded {
                        invocation_id,
                        window: overflow.window,
                        prompt_tokens: overflow.prompt_tokens,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(window: Option<u64>, max_tokens: Option<u64>) -> LlmConfig {
        LlmConfig {
            model: "m".into(),
            temperature: None,
            max_tokens,
            context_window: window,
            pricing: None,
            api: ModelApi::Chat,
            prompt_cache: crate::llm::PromptCache::Auto,
            reasoning_passback: Vec::new(),
            extra: serde_json::Map::new(),
        }
    }

    fn manifest(total: Option<u64>) -> ContextManifest {
        ContextManifest {
            sources: Vec::new(),
            total_max_tokens: total,
            source_max_tokens: Vec::new(),
        }
    }

    #[test]
    fn the_tightest_limit_wins_and_the_answer_keeps_its_room() {
        let mut window = Window::default();
        assert_eq!(window.limit(&manifest(None), &llm(None, None)), None);
        let configured = window
            .limit(&manifest(Some(6000)), &llm(Some(8192), Some(1000)))
            .unwrap();
        assert_eq!((configured.tokens, configured.configured), (6000, true));
        window.learn(
            ContextOverflow {
                window: Some(4096),
                prompt_tokens: None,
            },
            10_000,
        );
        let learned = window
            .limit(&manifest(Some(6000)), &llm(None, None))
            .unwrap();
        assert_eq!((learned.tokens, learned.configured), (3072, false));
    }

    #[test]
    fn calibration_only_raises_the_estimate() {
        let mut window = Window::default();
        window.calibrate(1000, 500);
        assert_eq!(window.messages_budget(3000, 100), 2900);
        window.learn(
            ContextOverflow {
                window: None,
                prompt_tokens: Some(1500),
            },
            1000,
        );
        assert_eq!(window.messages_budget(3000, 100), 1900);
    }
}

//! The Think step (seed 000 §2.1.3, steps 1–5): the conversation rebuilt from the journal
//! and context.yaml, the request built (and offered to the `pre_llm_request` hook), the LLM
//! called with its `io/invocations/{id}/` record, the usage counted, and the THOUGHT
//! journaled.

use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use super::called::{Answer, Called};
use super::usage;
use super::window::{self, Fit, Limit, Window};
use super::{
    ActiveRun, CONTEXT_ERROR, EngineError, EngineEvent, Flow, Level, Observer, Shutdown, Stop,
    create_dir, interrupted,
};
use crate::config::{Agent, LlmConfig};
use crate::context::{ContextEnv, ContextReport, build_context};
use crate::hooks::HookEvent;
use crate::journal::{EventPayload, Thought, ToolCall, read_journal};
use crate::llm::{
    AttemptRecord, CallProgress, CallUsage, ChatMessage, ChatModel, Completion, LlmError, ModelApi,
    PromptCache, WireOptions, is_openai_endpoint,
};
use crate::run::{ErrorInfo, ErrorType, Timestamp};

/// What the model said in one iteration, as journaled in its THOUGHT.
#[derive(Debug)]
pub(super) struct Said {
    /// The text (empty when there was none).
    pub content: String,
    /// The tool calls, in the model's order.
    pub tool_calls: Vec<ToolCall>,
    /// Whether the token limit cut the response (`finish_reason: "length"`).
    pub cut: bool,
}

impl ActiveRun {
    /// Steps 1–5 of iteration `iteration`: context, request (`tools` and `params` are the
    /// agent's, built once per run), the LLM call, THOUGHT.
    /// `window` is what this process learned about the model's window so far.
    #[expect(
        clippy::too_many_arguments,
        reason = "the step's inputs; a struct would only rename them"
    )]
    pub(super) async fn think(
        &mut self,
        agent: &Agent,
        llm: &dyn ChatModel,
        iteration: u32,
        (tools, params): (&[Value], &Map<String, Value>),
        window: &mut Window,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Flow<Said>, EngineError> {
        let request = window::RequestShape {
            api: agent.llm.api,
            model: &agent.llm.model,
            tools,
            params,
            options: &self.wire_options(agent, llm),
        };
        let completion = match self
            .think_within_window(agent, llm, iteration, &request, window, observer, shutdown)
            .await?
        {
            Ok(completion) => completion,
            Err(stop) => return Ok(Err(stop)),
        };
        let content = completion.message.content.clone().unwrap_or_default();
        let tool_calls: Vec<ToolCall> = completion
            .message
            .tool_calls
            .iter()
            .map(ToolCall::from)
            .collect();
        let reasoning = completion.message.reasoning.clone();
        self.journal.append(EventPayload::Thought(Thought {
            content: content.clone(),
            llm_invocation_ref: completion.invocation_id.clone(),
            tool_calls: tool_calls.clone(),
            reasoning: reasoning.clone(),
            passback: completion.message.passback.clone(),
            usage: completion.usage.map(CallUsage::from),
        }))?;
        observer.on_event(&EngineEvent::Thought {
            content: content.clone(),
            reasoning,
            tool_calls: tool_calls.len(),
        });
        Ok(Ok(Said {
            content,
            tool_calls,
            cut: completion.truncated,
        }))
    }

    /// Steps 1–2: the journal as on disk and context.yaml as on disk (parsed again only when
    /// it changed), made into messages within the prompt limit `fit` gives.
    pub(super) async fn think_context(
        &mut self,
        agent: &Agent,
        fit: Fit<'_>,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Flow<Built>, EngineError> {
        let started = Instant::now();
        let journal_path = self.paths.journal();
        let events = read_journal(&journal_path)?.events;
        let workspace = self.paths.workspace().to_path_buf();
        let manifest = match self.context_file.load(&agent.home, &workspace) {
            Ok(manifest) => manifest,
            Err(error) => {
                let location = match (error.line, error.column) {
                    (Some(line), Some(column)) => format!(":{line}:{column}"),
                    (Some(line), None) => format!(":{line}"),
                    (None, _) => String::new(),
                };
                let message = format!(
                    "context.yaml cannot be loaded: {} ({}{location})",
                    error.message,
                    error.file.display()
                );
                observer.detail(Level::Error, message.clone());
                let mut info = ErrorInfo::new(ErrorType::Other(CONTEXT_ERROR.to_owned()), message);
                if let Some(help) = error.help {
                    info = info.with_details(help);
                }
                return Ok(Err(Stop::Failed(info)));
            }
        };
        let limit = fit.window.limit(&manifest, &agent.llm);
        let budget = limit
            .as_ref()
            .map(|limit| fit.window.messages_budget(limit.tokens, fit.rest_tokens));
        let budget = match (budget, fit.cap) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let run_id = self.metadata.run_id.as_str().to_owned();
        let env = ContextEnv {
            run_id: &run_id,
            agent_home: &agent.home,
            workspace: &workspace,
            journal_path: &journal_path,
            output: &self.output,
        };
        let built = tokio::select! {
            built = build_context(&manifest, &events, &env, budget) => built,
            signal = shutdown.wait() => return Ok(Err(interrupted(signal))),
        };
        let built = match built {
            Ok(built) => built,
            Err(error) => {
                let message = error.to_string();
                observer.detail(Level::Error, message.clone());
                return Ok(Err(Stop::Failed(ErrorInfo::new(
                    ErrorType::Other(CONTEXT_ERROR.to_owned()),
                    message,
                ))));
            }
        };
        for warning in &built.warnings {
            observer.on_event(&EngineEvent::Warning {
                message: warning.clone(),
            });
        }
        let elapsed = started.elapsed();
        observer.on_event(&EngineEvent::ContextBuilt {
            messages: built.messages.len(),
            journal_events: events.len(),
            elapsed,
        });
        let report = built.report;
        if report.trimmed() {
            observer.detail(
                Level::Info,
                format!(
                    "context trimmed: {} iteration(s) ({} messages) left out, {} source(s) cut; \
                 about {} tokens for a budget of {}",
                    report.left_out_iterations,
                    report.left_out_messages,
                    report.cut_sources.len(),
                    report.estimated_tokens,
                    report
                        .budget_tokens
                        .map_or_else(|| "none".to_owned(), |b| b.to_string())
                ),
            );
            observer.on_event(&EngineEvent::ContextTrimmed {
                left_out_iterations: report.left_out_iterations,
                left_out_messages: report.left_out_messages,
                cut_sources: report.cut_sources.clone(),
                estimated_tokens: report.estimated_tokens,
                budget_tokens: report.budget_tokens,
            });
        }
        if let Some(stop) = self
            .claude_pre_compact(report.left_out_iterations, observer, shutdown)
            .await?
        {
            return Ok(Err(stop));
        }
        Ok(Ok(Built {
            messages: built.messages,
            report,
            limit,
        }))
    }

    /// Step 4: serialize once, record, send those bytes, record the answer. A
    /// context-length rejection is handed back as [`Called::Overflow`] for the caller to
    /// shrink the context and retry.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call's inputs; a struct would only rename them"
    )]
    pub(super) async fn call_llm(
        &mut self,
        agent: &Agent,
        llm: &dyn ChatModel,
        iteration: u32,
        body: &Value,
        context: &ContextReport,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Flow<Called>, EngineError> {
        let invocation_id = uuid::Uuid::new_v4().to_string();
        let bytes = serde_json::to_vec(body).map_err(EngineError::Serialize)?;
        let dir = self.paths.invocation_dir(&invocation_id);
        create_dir(&dir)?;
        self.write_file(&self.paths.invocation_request(&invocation_id), &bytes)?;
        let model = agent.llm.model.clone();
        observer.on_event(&EngineEvent::LlmRequestStarted {
            invocation_id: invocation_id.clone(),
            model: model.clone(),
            endpoint: llm.endpoint().to_string(),
            request_bytes: bytes.len(),
        });
        let started_at = Timestamp::now();
        let started = Instant::now();
        let outcome = {
            let mut on_progress = |progress: CallProgress<'_>| {
                let invocation_id = invocation_id.clone();
                observer.on_event(&match progress {
                    CallProgress::Retry(record) => EngineEvent::LlmRetry {
                        invocation_id,
                        detail: record.to_string(),
                    },
                    CallProgress::Text(text) => EngineEvent::LlmText {
                        invocation_id,
                        text: text.to_owned(),
                    },
                });
            };
            tokio::select! {
                result = llm.answer(&bytes, &mut on_progress) => Ok(result),
                signal = shutdown.wait() => Err(signal),
            }
        };
        let mut record = InvocationRecord {
            invocation_id: invocation_id.clone(),
            iteration,
            model: model.clone(),
            response_model: None,
            status: "SUCCESS",
            started_at,
            duration_ms: millis(started.elapsed()),
            api: agent.llm.api,
            token_usage: None,
            cost_usd: None,
            finish_reason: None,
            attempts: 1,
            retries: Vec::new(),
            error: None,
            response_received: false,
            context: context.clone(),
        };
        let completion = match outcome {
            Err(signal) => {
                record.status = "CANCELLED";
                record.error = Some(format!("cancelled by {signal}"));
                self.write_invocation_record(&record)?;
                observer.detail(
                    Level::Warn,
                    format!("invocation {invocation_id}: cancelled by {signal}"),
                );
                return Ok(Err(interrupted(signal)));
            }
            Ok(Err(error)) => {
                record.status = "FAILED";
                record.attempts = error.attempts().len().max(1);
                record.retries = retry_lines(error.attempts());
                record.error = Some(error.to_string());
                // The server's answer (an error status, a body that is no completion) is
                // the evidence of what went wrong; with no answer there is nothing to keep.
                if let Some(body) = error.response_body() {
                    self.write_response(&invocation_id, body)?;
                    record.response_received = true;
                }
                self.write_invocation_record(&record)?;
                if let Some(overflow) = error.context_overflow() {
                    observer.detail(
                        Level::Warn,
                        format!(
                            "invocation {invocation_id}: the request does not fit the context \
                             window: {error}"
                        ),
                    );
                    return Ok(Ok(Called::Overflow {
                        invocation_id,
                        overflow,
                        error: error.to_string(),
                    }));
                }
                observer.detail(
                    Level::Error,
                    format!("invocation {invocation_id}: failed: {error}"),
                );
                return Ok(Err(Stop::Failed(llm_failure(&error))));
            }
            Ok(Ok(completion)) => completion,
        };
        self.write_response(&invocation_id, &completion.raw_body)?;
        if let Some(stream) = &completion.stream {
            let stream = self.output.redactor.redact_bytes(stream);
            self.write_file(&self.paths.invocation_stream(&invocation_id), &stream)?;
        }
        record.response_received = true;
        record.response_model.clone_from(&completion.model);
        record.duration_ms = millis(completion.duration);
        record.token_usage = completion.usage.map(|usage| TokenCounts {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.total_tokens,
            cached_tokens: usage.cached_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            reasoning_tokens: usage.reasoning_tokens,
        });
        record.finish_reason.clone_from(&completion.finish_reason);
        record.attempts = completion.attempts.len() + 1;
        record.retries = retry_lines(&completion.attempts);
        // Step 8: the call's tokens and estimated cost, recorded with the call (the
        // takeover of a killed run rebuilds the totals from these records) and added to
        // the run's usage.
        record.cost_usd = self.record_usage(agent, &completion);
        self.write_invocation_record(&record)?;
        observer.on_event(&EngineEvent::LlmResponded {
            invocation_id: invocation_id.clone(),
            elapsed: completion.duration,
            usage: completion.usage,
            retries: completion.attempts.len(),
            tool_calls: completion.message.tool_calls.len(),
        });
        let body = &completion.raw_body;
        self.hook(HookEvent::PostLlmResponse { body }, observer, shutdown)
            .await?;
        Ok(Ok(Called::Answer(Answer {
            invocation_id,
            prompt_tokens: completion.usage.map(|usage| usage.prompt_tokens),
            usage: completion.usage,
            truncated: completion.truncated,
            message: completion.message,
        })))
    }

    /// `response.json`: the body as received, except the API key, which a careless server
    /// may echo and which is never written to a file.
    fn write_response(&self, invocation_id: &str, body: &[u8]) -> Result<(), EngineError> {
        let body = self.output.redactor.redact_bytes(body);
        self.write_file(&self.paths.invocation_response(invocation_id), &body)
    }

    fn write_invocation_record(&self, record: &InvocationRecord) -> Result<(), EngineError> {
        let path = self.paths.invocation_metadata(&record.invocation_id);
        let mut bytes = serde_json::to_vec_pretty(record).map_err(EngineError::Serialize)?;
        bytes.push(b'\n');
        self.write_file(&path, &bytes)
    }

    /// Adds the call's tokens and estimated cost to the run's usage (step 8); returns the
    /// call's cost when its usage and price are known.
    fn record_usage(&mut self, agent: &Agent, completion: &Completion) -> Option<f64> {
        let model = &agent.llm.model;
        let Some(usage) = completion.usage else {
            self.metadata.usage.record_unknown(model);
            return None;
        };
        let (cost, note) = usage::price(&agent.llm, model, &usage);
        if note.is_some() {
            self.metadata.usage.cost_note = note;
        }
        self.metadata
            .usage
            .record_call(model, &CallUsage::from(usage), cost.unwrap_or(0.0));
        self.ledger.spend(
            cost.unwrap_or(0.0),
            usage.prompt_tokens + usage.completion_tokens,
        );
        self.refresh_subtree();
        cost
    }

    /// How requests are built for this run: the agent's caching and passback settings,
    /// and the per-run `prompt_cache_key` where the API takes one (Responses; chat only
    /// at OpenAI itself, as other servers may refuse an unknown key).
    pub(super) fn wire_options(&self, agent: &Agent, llm: &dyn ChatModel) -> WireOptions {
        let takes_key = match agent.llm.api {
            ModelApi::Responses => true,
            ModelApi::Chat => is_openai_endpoint(llm.endpoint()),
            ModelApi::Anthropic => false,
        };
        WireOptions {
            prompt_cache: agent.llm.prompt_cache,
            cache_key: (takes_key && agent.llm.prompt_cache == PromptCache::Auto)
                .then(|| format!("delta-{}", self.metadata.run_id.as_str())),
            reasoning_passback: agent.llm.reasoning_passback.clone(),
        }
    }
}

/// The messages of one request and what the budget did to them.
pub(super) struct Built {
    pub messages: Vec<ChatMessage>,
    pub report: ContextReport,
    /// The prompt limit applied, when there was one.
    pub limit: Option<Limit>,
}

/// `io/invocations/{id}/metadata.json`.
#[derive(Debug, Serialize)]
struct InvocationRecord {
    invocation_id: String,
    iteration: u32,
    /// The model asked for.
    model: String,
    /// The model that answered, as the server names it.
    response_model: Option<String>,
    /// SUCCESS, FAILED or CANCELLED.
    status: &'static str,
    started_at: Timestamp,
    /// Wall time, retries and waits included.
    duration_ms: u64,
    /// The API called.
    api: ModelApi,
    token_usage: Option<TokenCounts>,
    /// The call's estimated cost in USD, when its usage and price are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    /// Why the model stopped, in the API's own words.
    finish_reason: Option<String>,
    /// HTTP attempts made.
    attempts: usize,
    /// One line per failed attempt (`retry 1/4 in 0 ms after HTTP 500: …`).
    retries: Vec<String>,
    error: Option<String>,
    /// Whether the last attempt got an answer: its body is `response.json` (as received,
    /// the API key redacted), even when the call failed on it. False when nothing arrived
    /// (connection failure, timeout, cancelled), and there is no `response.json`.
    response_received: bool,
    /// What the token budget left out of this request, and its estimated size.
    context: ContextReport,
}

/// The call's tokens: `prompt_tokens` counts every prompt token, the cached and
/// cache-written ones included.
#[derive(Debug, Serialize)]
struct TokenCounts {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    cached_tokens: u64,
    cache_write_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_tokens: Option<u64>,
}

fn retry_lines(attempts: &[AttemptRecord]) -> Vec<String> {
    attempts.iter().map(ToString::to_string).collect()
}

/// The request parameters besides model, messages and tools: `temperature`, `max_tokens`
/// and every other key of `llm:`, as written. `pricing` and `context_window` are not among
/// them: they are ours.
pub(super) fn request_params(llm: &LlmConfig) -> Map<String, Value> {
    let mut params = llm.extra.clone();
    if let Some(temperature) = llm.temperature {
        params.insert("temperature".to_owned(), Value::from(temperature));
    }
    if let Some(max_tokens) = llm.max_tokens {
        params.insert("max_tokens".to_owned(), Value::from(max_tokens));
    }
    params
}

fn llm_failure(error: &LlmError) -> ErrorInfo {
    ErrorInfo::new(ErrorType::LlmError, error.to_string())
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

//! A scripted model server for deterministic agent tests: OpenAI chat completions,
//! Anthropic Messages and OpenAI Responses from one script.
//!
//! `mock-llm` answers `POST /v1/chat/completions`, `POST /v1/messages` and
//! `POST /v1/responses` (each also without `/v1`) from a script instead of a model, each in
//! its API's shape, so an agent engine can be tested end to end without the network or
//! tokens. Engine tests start it in-process with [`MockServer`]; other programs start the
//! `mock-llm` binary, which prints its port on the first line of stdout.
//!
//! # The script
//!
//! YAML, or JSON when the file name ends in `.json`. Its JSON Schema is
//! `schemas/mock-script.schema.json` (from [`script_schema`]).
//!
//! ```yaml
//! mode: sequential          # or by_conversation (default: sequential)
//! models: [gpt-4o-mini]     # listed by GET /v1/models (default: [mock-model])
//! steps:
//!   - message:              # an assistant message
//!       content: "Let me look."
//!       tool_calls:
//!         - name: list_files
//!           arguments: {path: "."}         # an object is sent as JSON text
//!         - name: read_file
//!           arguments: '{"path": "a.txt"'  # a string is sent verbatim (here: malformed)
//!       usage: {prompt_tokens: 120, completion_tokens: 30}
//!   - error:                # an HTTP error
//!       status: 429
//!       retry_after: 2      # Retry-After header, in seconds
//!   - drop_connection: {}   # close the socket without answering
//!   - malformed:            # 200 with a body that is not a chat.completion
//!       body: "<html>not json</html>"
//!   - message:
//!       content: "Done."
//!       delay_ms: 50        # any step: wait before answering
//!       repeat: 3           # any step: counts as 3 consecutive steps
//! ```
//!
//! Each step is exactly one of:
//!
//! - `message`: `content` (optional; `null` when absent), `tool_calls` (each `name`,
//!   optional `arguments` and `id`), `usage` (`prompt_tokens`, default 10;
//!   `completion_tokens`, default 5; `cached_tokens` and `cache_write_tokens`, default 0;
//!   `total_tokens` is their sum), `finish_reason` (default `tool_calls` when there are
//!   tool calls, else `stop`; mapped to each API's stop reason), `reasoning` (the model's
//!   reasoning: chat's `reasoning_content`, an Anthropic thinking block with a signature,
//!   a Responses reasoning item with encrypted content), `redacted_reasoning` (Anthropic's
//!   `redacted_thinking`). `arguments` as a string is sent verbatim, any other value as
//!   compact JSON; absent, it is `{}`. Tool-call ids default to `call_<step>_<i>`
//!   (Anthropic: `toolu_<step>_<i>`). `stream_hold_until` (a file path): when the answer
//!   is streamed, the events up to the first piece of the content are sent at once and
//!   the rest of the stream only once that file exists.
//! - `error`: `status` (200–599), `body` (a string is sent verbatim as `text/plain`, any
//!   other value as JSON; default: an OpenAI-style `{"error": {…}}` object), `retry_after`.
//! - `drop_connection`: close the connection without any response.
//! - `malformed`: `200 OK`, `Content-Type: application/json`, and `body` (string verbatim,
//!   other values as JSON, e.g. `{choices: []}` for a wrong-shape completion).
//!
//! Every step also takes `delay_ms` (wait before answering; other requests are served
//! meanwhile) and `repeat` (at least 1). Unknown fields are errors, reported with file,
//! line and column.
//!
//! ## Picking the step
//!
//! Steps are numbered from 0, an entry with `repeat: N` covering N numbers.
//!
//! - `sequential`: the N-th model request to arrive (from 0, across all clients) gets
//!   step N.
//! - `by_conversation`: a request whose conversation holds N tool results (messages with
//!   role `tool`, Anthropic `tool_result` blocks, Responses `function_call_output` items)
//!   gets step N, however many requests came before. Concurrent runs of the same agent, and runs
//!   resumed from their journal, thus get the same answers. A step with K tool calls is
//!   answered by K tool messages, so the next request gets step N+K and steps N+1 to
//!   N+K-1 are never asked for: give the next entry `repeat: K` to cover them all.
//!
//! A request past the end of the script gets HTTP 500 with an error in its API's shape
//! whose message starts `mock-llm: script exhausted:`. A request that is not a JSON object
//! with its conversation (`messages`; Responses: `input`) gets HTTP 400 and uses up no
//! step. A `message` step asked for with `stream: true` is sent as server-sent events in
//! its API's event flow, its texts and tool-call arguments split across events (chat: a
//! usage chunk when `stream_options.include_usage` is true).
//!
//! # Answers
//!
//! A `message` step answers with a `chat.completion` object (`id` `chatcmpl-mock-<step>`),
//! an Anthropic `message` (`msg_mock_<step>`) or a `response` (`resp_mock_<step>`), with
//! `created` the constant [`CREATED`], `model` echoed from the request (default
//! [`DEFAULT_MODEL`]) and `usage`. Identical requests thus get byte-identical responses.
//! Anthropic answers start with a thinking block when the request enables thinking;
//! Responses answers of reasoning models (all but the GPT-4 and GPT-3.5 families) with a
//! reasoning item, encrypted when `include` asks for it. Signatures, encrypted content and
//! the (long) item ids are keyed hashes of what they vouch for, so the strict profiles
//! recognise them when they come back.
//!
//! # Prompt cache
//!
//! With [`ServerOptions::prompt_cache`] (`--prompt-cache`) the prompt's tokens are counted
//! from the request (bytes / 4 per segment) and the part a provider's prefix cache would
//! hold is reported as that API does: chat's `prompt_tokens_details.cached_tokens`,
//! Responses' `input_tokens_details.cached_tokens` (prefixes of at least 1,024 tokens,
//! 128-token steps), Anthropic's `cache_read_input_tokens` and
//! `cache_creation_input_tokens` (only at `cache_control` breakpoints, above the model's
//! minimum length). The step's `usage.prompt_tokens` is then not used.
//!
//! # Recording
//!
//! Every model request is kept (see [`MockServer::requests`], [`MockServer::recorded`])
//! and, with [`ServerOptions::record_file`] / `--record FILE`, written as one JSON line:
//! `{"index", "step", "path", "body", "has_authorization"}`. The values of the
//! `Authorization` and `x-api-key` headers are never stored anywhere, so API keys cannot
//! leak into test artifacts.
//!
//! # Context window
//!
//! With [`ServerOptions::context_window`] (`--context-window N`), a request whose body
//! counts more than N tokens ([`prompt_tokens`]: bytes / 4, rounded up) gets HTTP 400 with
//! a context-length error in OpenAI's, vLLM's or llama.cpp's shape ([`OverflowShape`],
//! `--context-error`; Anthropic's `prompt is too long` on its route), uses up no step and
//! is recorded with `step: null`.
//!
//! # Strict profiles
//!
//! With [`ServerOptions::strict`] (`--strict PROFILE`) requests are validated as that
//! service does and refused with its status and error body ([`StrictProfile`]).
//!
//! # Example
//!
//! ```no_run
//! use mock_llm::{MockServer, ReadScript as _, Script};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let script = Script::from_yaml_str("steps:\n  - message: {content: done}\n")?;
//! let server = MockServer::start(script)?;
//! let base_url = server.base_url(); // http://127.0.0.1:PORT/v1, for OPENAI_BASE_URL
//! // … run the agent against base_url …
//! assert_eq!(server.requests().len(), 1);
//! # Ok(())
//! # }
//! ```

mod answer;
mod api_error;
mod app;
mod cache;
mod listener;
mod log;
mod reply;
mod request;
mod script;
mod seal;
mod server;
mod stream;
mod strict;
mod window;
mod wire;

pub use delta_scenario::mock_script::{
    DEFAULT_COMPLETION_TOKENS, DEFAULT_PROMPT_TOKENS, DropConnectionStep, ErrorStep, MalformedStep,
    MessageStep, Mode, Script, Step, ToolCall, Usage, script_schema,
};
pub use delta_scenario::{MockProfile, ModelApi};
pub use log::RecordedRequest;
pub use reply::CREATED;
pub use request::DEFAULT_MODEL;
pub use script::{ReadScript, ScriptError};
pub use server::{MockServer, ServerError, ServerOptions};
pub use strict::{OPENAI_PARAMETERS, Rejection, StrictProfile, UnknownProfile, strict_profile};
pub use window::{BYTES_PER_TOKEN, ContextWindow, OverflowShape, prompt_tokens};

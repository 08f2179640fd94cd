//! The request parameters the engine knows, so that a misspelt `llm:` key is caught
//! before a server rejects (or, worse, silently ignores) it.

// mock-llm's strict OpenAI profile keeps its own list (`OPENAI_PARAMETERS`) on purpose: the
// mock judges what this client sends, so it must not take its rules from the client.

/// Chat-completions parameters of OpenAI's API, plus the sampling extensions that
/// llama.cpp, llama-cpp-python, vLLM and Ollama all document. Any other key under `llm:`
/// draws a warning (and is still sent); keys under `llm.extra_body` are sent without one.
pub const KNOWN_PARAMETERS: &[&str] = &[
    "audio",
    "frequency_penalty",
    "function_call",
    "functions",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "max_tokens",
    "metadata",
    "modalities",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "service_tier",
    "stop",
    "store",
    "stream",
    "stream_options",
    "temperature",
    "tool_choice",
    "top_logprobs",
    "top_p",
    "user",
    "verbosity",
    "web_search_options",
    // Local servers' sampling extensions.
    "top_k",
    "min_p",
    "repeat_penalty",
    "repetition_penalty",
];

/// The `llm:` key whose mapping is merged into every request as it is, for parameters a
/// particular provider understands (named after the OpenAI SDKs' `extra_body`).
pub const EXTRA_BODY_KEY: &str = "extra_body";

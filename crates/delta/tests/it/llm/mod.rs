//! Integration tests of the LLM client (`delta_engine::llm`): real HTTP against servers on
//! 127.0.0.1, credentials resolved from temporary directories.
mod client;
mod credentials;
mod pricing;
mod request;

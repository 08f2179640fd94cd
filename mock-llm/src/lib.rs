//! A scripted OpenAI-compatible chat-completions server.

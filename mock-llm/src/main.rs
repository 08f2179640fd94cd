//! `mock-llm`: serve a script of chat completions on 127.0.0.1.

fn main() {}

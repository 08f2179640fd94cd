//! Tests of lifecycle hooks: the hook runner against real processes in temporary
//! directories (files and environment a hook sees, step numbering, effects, failures).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod code_reviewer;
mod effects;
mod failures;
mod protocol;
mod schemas;
mod secrets;
mod support;

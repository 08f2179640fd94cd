//! Tests of lifecycle hooks: the hook runner against real processes in temporary
//! directories (files and environment a hook sees, step numbering, effects, failures),
//! and the built `delta` against mock-llm (hook points, steering, resilience).

mod claude;
mod code_reviewer;
mod docs;
mod effects;
mod failures;
mod lifecycle;
mod protocol;
mod resilience;
mod schemas;
mod secrets;
mod steering;
mod support;

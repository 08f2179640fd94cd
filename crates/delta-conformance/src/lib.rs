//! `delta-conformance`: a black-box conformance runner for any Delta Engine
//! implementation, given only the command that starts it.
//!
//! A scenario ([`scenario::Scenario`], `fixtures/scenarios/*.yaml`) names an agent fixture,
//! a mock-llm script and steps (`run`, `continue`, `list-runs`, `tool expand`, any other
//! command, or a `shell` script) with what each must leave behind. [`suite::run`] runs
//! each scenario in its own temporary directory with its own `mock-llm` process
//! ([`mock`]), checks every journal line, `metadata.json` and `--format json` output
//! against `schemas/` ([`schemas`], [`validate`]) and the scenario's expectations
//! ([`check`]), and reports ([`report`]). The runner never links the engine: it only runs
//! the implementation's command line.

pub mod adapter;
pub mod baseline;
pub mod check;
pub mod citation;
pub mod citations;
pub mod cli;
pub mod exec;
pub mod locate;
pub mod locate_line;
pub mod matcher;
pub mod matrix;
pub mod mock;
pub mod reap;
pub mod report;
pub mod runner;
pub mod runner_check;
pub mod scenario;
pub mod schemas;
pub mod shown;
pub mod suite;
pub mod validate;
pub mod vars;
pub mod yaml_file;

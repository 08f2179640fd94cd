//! Delta Engine's configuration files as written: the YAML types of `agent.yaml`,
//! `context.yaml`, `hooks.yaml` and tool imports ([`raw`]), reading and parsing them
//! ([`yaml`]), and [`ConfigError`], which names the file, the line and column, and a fix.
//!
//! Nothing here is validated beyond its YAML shape: `delta_engine::config` turns these
//! types into the ones the engine trusts. The types also generate the published JSON
//! Schemas. Every document type is deserialized in this crate, never in the engine (see
//! [`yaml::Document`]).

pub mod environment;
pub mod error;
pub mod keyed;
pub mod keys;
pub mod llm;
pub mod names;
pub mod raw;
pub mod suggest;
pub mod tool;
pub mod yaml;

pub use error::ConfigError;

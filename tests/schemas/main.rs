//! The JSON Schemas under `schemas/`: committed files match the Rust types, are valid
//! draft 2020-12 schemas, and agree with the configuration parsers on sample documents.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod agreement;
mod drift;

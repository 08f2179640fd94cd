//! The JSON Schemas under `schemas/`: committed files match the Rust types, are valid
//! draft 2020-12 schemas, and agree with the configuration parsers on sample documents.

mod agreement;
mod drift;

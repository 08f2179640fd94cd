//! Integration tests of `delta-conformance`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

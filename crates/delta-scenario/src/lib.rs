//! `delta-scenario`: the one definition of the `delta-conformance` scenario format, shared
//! by its writer (`delta export --format scenario`, in the engine), its reader (the
//! `delta-conformance` runner) and `mock-llm`, which links neither.
//!
//! [`MockProfile`] is whose request validation a scenario's mock-llm reproduces: a
//! scenario's `mock_profile`, `delta export --mock-profile` and `mock-llm --strict`.

mod profile;

pub use profile::{MockProfile, UnknownMockProfile};

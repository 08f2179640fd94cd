//! `delta-scenario`: the one definition of the `delta-conformance` scenario format
//! (`fixtures/scenarios/*.yaml`), shared by its writer (`delta export --format scenario`,
//! in the engine), its reader (the `delta-conformance` runner) and `mock-llm`, none of
//! which links another.
//!
//! What a scenario is: a [`Scenario`] of [`Step`]s, each one action with its [`Expect`]
//! and matchers ([`TextMatch`], [`ValueMatch`], [`ExitMatch`]), checks at a [`Level`],
//! and the [`MockProfile`] whose request validation its mock-llm reproduces (also
//! `delta export --mock-profile` and `mock-llm --strict`). What each expectation means
//! when checked, and the rules serde cannot express, are the runner's.
//! `schemas/scenario.schema.json` is generated from these types ([`scenario_schema`]).
//! [`ModelApi`] names the wire API a profile's server speaks and an agent asks through.
//! A scenario's mock-llm script is [`mock_script::Script`], mock-llm's own format
//! (`schemas/mock-script.schema.json`).

mod api;
mod expect;
mod level;
mod matcher;
pub mod mock_script;
mod profile;
mod scenario;
mod step;

pub use api::ModelApi;
pub use expect::{
    EventExpect, Expect, FileExpect, JournalExpect, MetadataExpect, NoFileContains, RequestExpect,
    RequestsExpect, ToolExecutionExpect,
};
pub use level::Level;
pub use matcher::{ExitClass, ExitMatch, JsonType, OneOrMany, TextMatch, ValueMatch};
pub use profile::{MockProfile, UnknownMockProfile};
pub use scenario::{
    Canary, CanaryState, LlmEndpoint, SESSIONS_PROGRAM, Scenario, SetupFile, scenario_schema,
};
pub use step::{Action, Args, Command, NamedCheck, SignalName, SignalSpec, Step};

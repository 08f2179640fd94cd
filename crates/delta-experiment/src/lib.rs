//! Delta Engine's experiment commands: many runs of an agent ([`batch`]), benchmarks with a
//! verifier and a score ([`eval`]), a run as an interchange document ([`export`]), HTML
//! pages of runs ([`view`]) and a new run from a prefix of another ([`fork`]).
//!
//! They sit above the engine library (`delta-engine`) and reach runs only through its
//! public paths: every run they start goes through `delta_engine::launch`. Like the engine,
//! this crate never touches a terminal. It is its own crate so that its code builds beside
//! the engine's, and without optimization (root `Cargo.toml`): what it does waits on runs,
//! containers, Slurm and files (issue 24).

pub mod batch;
pub mod eval;
pub mod export;
pub mod fork;
pub mod view;

//! Environments (issue 25, docs/environments.md): where tools run, what each kind enforces
//! (tested against escapes that succeed on the host), how a run refuses when its
//! confinement cannot be established, and containers kept across `delta continue`. These
//! tests drive the real components (Landlock, bubblewrap, podman with the offline images of
//! tests/confinement/setup.sh) and fail, naming the fix, when one is missing.

mod batch;
mod continued;
mod fails_closed;
mod kinds;
mod probe;
mod security;
mod sessions;
mod subagents;
mod support;

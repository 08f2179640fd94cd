//! Integration tests of the persistent run state: journal, run directory, metadata,
//! liveness and lock, workspaces, output renderings, list-runs and the published schemas.
mod child;
mod interaction;
mod journal;
mod list_runs;
mod liveness_lock;
mod metadata;
mod output;
mod run_dir;
mod schemas;
mod support;
mod workspace;

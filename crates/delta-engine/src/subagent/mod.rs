//! Sub-agents (docs/subagents.md): the parts of a run tree that neither the loop nor the
//! launch own: the ids of child runs ([`child_run_id`]), the budgets a tree shares
//! ([`Ledger`]) and a tree's spending read back from its runs' files ([`subtree_of`]).
//!
//! How one process holds a tree: every run is its own `ActiveRun` with its own
//! `run.lock` (an `flock` per open file, so the locks of one process do not collide), its
//! own single journal writer, its own `metadata.json` and `engine.log`; a parent only
//! reads its children's files. Every run of the tree records the same process, so the
//! Janitor finds the whole tree orphaned when that process dies.

mod id;
mod ledger;
mod rollup;

pub use id::child_run_id;
pub use ledger::{Ledger, Spend};
pub use rollup::subtree_of;

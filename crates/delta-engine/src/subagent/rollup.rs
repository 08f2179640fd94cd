//! A run tree's spending read back from its runs' `metadata.json`: the `subtree` a parent
//! records, RunResult shows and `list-runs` lists.

use std::collections::HashSet;

use crate::run::{Metadata, RunPaths, Subtree, read_metadata};

/// What `metadata`'s run and all its descendants spent: its own usage plus each child's
/// tree, read from the children's files (recursively, so a child that stopped before
/// recording its own roll-up is still counted exactly). A child whose files are missing
/// or unreadable counts as nothing: it never ran.
#[must_use]
pub fn subtree_of(metadata: &Metadata) -> Subtree {
    let mut seen = HashSet::new();
    walk(metadata, &mut seen)
}

fn walk(metadata: &Metadata, seen: &mut HashSet<std::path::PathBuf>) -> Subtree {
    let mut subtree = Subtree::of(&metadata.usage);
    for child in &metadata.children {
        let paths = RunPaths::new(&child.workspace(&metadata.work_dir), &child.run_id);
        // A tree cannot loop, but files are files: each run is counted once.
        if !seen.insert(paths.dir().to_path_buf()) {
            continue;
        }
        if let Ok(child_metadata) = read_metadata(&paths.metadata()) {
            subtree.add(&walk(&child_metadata, seen));
        }
    }
    subtree
}

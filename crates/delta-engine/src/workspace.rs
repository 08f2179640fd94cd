//! Workspaces: the `.delta/` domain inside a workspace, an agent's numbered workspaces
//! `workspaces/W001, W002…` with their `LAST_USED` pointer, and the choice of a new run's
//! workspace ([`Choice`]: `-w`, the last used one, or a new one).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::path_error::{Denied, failed};
use crate::run::{DELTA_DIR, RunId, RunPaths, write_atomic};

/// Name of the file in `.delta/` that records the layout version.
pub const VERSION_FILE: &str = "VERSION";

/// The `.delta/` layout version this engine writes (the v1.10 flat layout).
pub const LAYOUT_VERSION: &str = "1.10";

/// Directory of an agent's numbered workspaces, relative to the agent home.
pub const WORKSPACES_DIR: &str = "workspaces";

/// File in [`WORKSPACES_DIR`] naming the workspace used last, e.g. `W003`.
pub const LAST_USED_FILE: &str = "LAST_USED";

/// Workspace numbers tried past the highest existing one before giving up; only reached
/// when something keeps creating entries faster than we can.
const MAX_ALLOCATION_ATTEMPTS: u32 = 1000;

/// What can go wrong with a workspace. Every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A file system operation failed for a reason the user cannot fix by choosing
    /// another path (a full disk, an I/O error); the message names it and the path.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The OS refused: no permission, or a read-only file system.
    #[error(transparent)]
    PermissionDenied(#[from] Denied),
    /// The workspace does not exist (for commands that never create one).
    #[error("workspace {} does not exist; pass the directory of an existing workspace with -w", path.display())]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The path exists but is not a directory.
    #[error("workspace {} is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The path does not exist and cannot be created: one of its parents is a file.
    #[error("cannot create workspace {}: {} is not a directory", path.display(), parent.display())]
    ParentNotADirectory {
        /// The path given.
        path: PathBuf,
        /// The existing ancestor that is not a directory.
        parent: PathBuf,
    },
    /// The workspace's `.delta` (the engine's own directory) is something else.
    #[error("{} is not a directory; the engine keeps its runs there", path.display())]
    DeltaNotADirectory {
        /// The `.delta` path.
        path: PathBuf,
    },
    /// The directory a fresh workspace is to be seeded from is missing or no directory.
    #[error("cannot seed a workspace from {}: it is not a directory", path.display())]
    SeedNotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// No free `W…` name was found.
    #[error(
        "cannot allocate a new workspace in {}: {MAX_ALLOCATION_ATTEMPTS} names in a row were \
         taken; remove unused workspaces or pass one with -w",
        dir.display()
    )]
    Exhausted {
        /// The `workspaces/` directory.
        dir: PathBuf,
    },
}

impl WorkspaceError {
    /// `PermissionDenied` when the OS refused the operation on `path`, else `Io`.
    fn io(path: &Path, error: std::io::Error) -> Self {
        Denied::sort(path, error)
    }

    /// How to fix it, when the message does not already say.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            WorkspaceError::PermissionDenied(Denied { path, .. }) => Some(format!(
                "check the permissions of {} and of its parent directory (the workspace and \
                 its .delta/ must be writable), or pass a workspace you can write to with -w",
                path.display()
            )),
            WorkspaceError::NotADirectory { path } => Some(format!(
                "pass a directory with -w (a missing one is created), or move {} away",
                path.display()
            )),
            WorkspaceError::ParentNotADirectory { parent, .. } => Some(format!(
                "pass a path with -w whose parents are directories, or move {} away",
                parent.display()
            )),
            WorkspaceError::DeltaNotADirectory { path } => Some(format!(
                "move {} away (the engine creates .delta/ on the next run), or pass another \
                 workspace with -w",
                path.display()
            )),
            WorkspaceError::SeedNotADirectory { .. } => Some(
                "pass the directory whose files the new workspace starts with (its .delta/ is \
                 not copied)"
                    .to_owned(),
            ),
            WorkspaceError::Io(_)
            | WorkspaceError::NotFound { .. }
            | WorkspaceError::Exhausted { .. } => None,
        }
    }
}

/// A workspace: the agent's CWD, with the engine's `.delta/` inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// An existing workspace directory, made absolute. Nothing is created.
    ///
    /// # Errors
    /// [`WorkspaceError::NotFound`], [`WorkspaceError::NotADirectory`], or
    /// [`WorkspaceError::Io`] when the path cannot be resolved.
    pub fn existing(path: &Path) -> Result<Self, WorkspaceError> {
        let root = fs_err::canonicalize(path).map_err(|source| {
            if source.kind() == ErrorKind::NotFound {
                WorkspaceError::NotFound {
                    path: path.to_path_buf(),
                }
            } else {
                WorkspaceError::io(path, source)
            }
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        Ok(Self { root })
    }

    /// The absolute workspace directory.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.delta/`.
    #[must_use]
    pub fn delta_dir(&self) -> PathBuf {
        self.root.join(DELTA_DIR)
    }

    /// The paths of run `run_id` in this workspace.
    #[must_use]
    pub fn run_paths(&self, run_id: &RunId) -> RunPaths {
        RunPaths::new(&self.root, run_id)
    }
}

/// Checks, creating nothing, that `path` can serve as the workspace of `-w PATH`: it is a
/// directory, or it is missing and its nearest existing ancestor is one; and its `.delta`,
/// when present, is a directory. Run before anything else reads from the workspace, so
/// that a file given as `-w` is reported as such rather than as an unreadable `.env`.
///
/// # Errors
/// [`WorkspaceError::NotADirectory`], [`WorkspaceError::ParentNotADirectory`],
/// [`WorkspaceError::DeltaNotADirectory`], or [`WorkspaceError::PermissionDenied`] /
/// [`WorkspaceError::Io`] when a path cannot be inspected.
pub fn check_workspace_path(path: &Path) -> Result<(), WorkspaceError> {
    match fs_err::metadata(path) {
        Ok(metadata) if metadata.is_dir() => return check_delta_dir(&path.join(DELTA_DIR)),
        Ok(_) => {
            return Err(WorkspaceError::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        // A dangling symlink cannot be created over.
        Err(e) if e.kind() == ErrorKind::NotFound && is_dangling_symlink(path) => {
            return Err(WorkspaceError::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
        Err(source) => return Err(WorkspaceError::io(path, source)),
    }
    // Missing: it will be created with its parents, which needs the nearest existing
    // ancestor to be a directory. (`""` is the current directory, which exists.)
    for ancestor in path
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
    {
        match fs_err::metadata(ancestor) {
            Ok(metadata) if metadata.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(WorkspaceError::ParentNotADirectory {
                    path: path.to_path_buf(),
                    parent: ancestor.to_path_buf(),
                });
            }
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
            Err(source) => return Err(WorkspaceError::io(ancestor, source)),
        }
    }
    Ok(())
}

/// A `.delta` that exists must be a directory (or a symlink to one); a missing one is
/// created later.
fn check_delta_dir(delta: &Path) -> Result<(), WorkspaceError> {
    match fs_err::metadata(delta) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(_) => Err(WorkspaceError::DeltaNotADirectory {
            path: delta.to_path_buf(),
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if is_dangling_symlink(delta) {
                Err(WorkspaceError::DeltaNotADirectory {
                    path: delta.to_path_buf(),
                })
            } else {
                Ok(())
            }
        }
        Err(source) => Err(WorkspaceError::io(delta, source)),
    }
}

/// Whether `path`, which `metadata` did not find, is a symlink to nothing. Asked again
/// rather than inferred from "something is there now": concurrent first runs create the
/// workspace and its `.delta/` between the two looks, and a directory is fine.
fn is_dangling_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(path).is_err()
}

/// The workspace at `path` for `-w PATH`: created when missing (with parents), with
/// `.delta/VERSION` in place, returned with an absolute path.
///
/// # Errors
/// What [`check_workspace_path`] reports, and [`WorkspaceError::PermissionDenied`] /
/// [`WorkspaceError::Io`] naming the path that could not be created or written.
pub fn ensure_workspace(path: &Path) -> Result<Workspace, WorkspaceError> {
    check_workspace_path(path)?;
    fs_err::create_dir_all(path).map_err(|e| WorkspaceError::io(path, e))?;
    let workspace = Workspace::existing(path)?;
    init_delta_dir(&workspace.root)?;
    Ok(workspace)
}

/// Creates `.delta/` and its `VERSION` file when missing; an existing VERSION is left
/// alone (it records the layout the workspace was created with).
fn init_delta_dir(root: &Path) -> Result<(), WorkspaceError> {
    let delta = root.join(DELTA_DIR);
    check_delta_dir(&delta)?;
    fs_err::create_dir_all(&delta).map_err(|e| WorkspaceError::io(&delta, e))?;
    let version = delta.join(VERSION_FILE);
    if version.exists() {
        return Ok(());
    }
    // Atomic replace: concurrent first runs in one workspace write the same content, and a
    // reader never sees a half-written file.
    write_atomic(&version, format!("{LAYOUT_VERSION}\n").as_bytes())
        .map_err(|e| WorkspaceError::io(&version, e))
}

/// One of an agent's numbered workspaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentWorkspace {
    /// Its name, e.g. `W003`: the `workspace_id` in run metadata.
    pub id: String,
    /// Its number (3 for `W003`).
    pub number: u32,
    /// Absolute path.
    pub path: PathBuf,
}

/// The name of workspace `number`: `W001`…`W999`, then `W1000`…
#[must_use]
pub fn workspace_name(number: u32) -> String {
    format!("W{number:03}")
}

/// The number of a workspace name (`W003` → 3); `None` for other names.
#[must_use]
pub fn parse_workspace_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('W')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The agent's numbered workspaces, lowest number first (an absent `workspaces/` means
/// none).
///
/// # Errors
/// [`WorkspaceError::Io`] or [`WorkspaceError::PermissionDenied`] when `workspaces/`
/// cannot be listed.
pub fn list_workspaces(agent_home: &Path) -> Result<Vec<AgentWorkspace>, WorkspaceError> {
    let dir = workspaces_dir(agent_home)?;
    let entries = match fs_err::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(WorkspaceError::io(&dir, source)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| WorkspaceError::io(&dir, source))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(number) = parse_workspace_name(&name) else {
            continue;
        };
        if entry.path().is_dir() {
            found.push(AgentWorkspace {
                id: name,
                number,
                path: entry.path(),
            });
        }
    }
    found.sort_by_key(|w| w.number);
    Ok(found)
}

/// Creates the agent's next numbered workspace (highest existing number + 1), with
/// `.delta/VERSION`, and returns it. LAST_USED is not changed; see [`set_last_used`].
///
/// Race-free: each candidate is claimed with a single `mkdir(2)` (never
/// `create_dir_all`, which succeeds on an existing directory), and a name another process
/// took first (EEXIST) moves on to the next number. Concurrent callers therefore always
/// get distinct directories.
///
/// # Errors
/// [`WorkspaceError::Io`] or [`WorkspaceError::PermissionDenied`] naming the directory,
/// [`WorkspaceError::Exhausted`].
pub fn create_next_workspace(agent_home: &Path) -> Result<AgentWorkspace, WorkspaceError> {
    let dir = workspaces_dir(agent_home)?;
    fs_err::create_dir_all(&dir).map_err(|e| WorkspaceError::io(&dir, e))?;
    let highest = highest_number(&dir)?;
    for number in (highest + 1..).take(MAX_ALLOCATION_ATTEMPTS as usize) {
        let id = workspace_name(number);
        let path = dir.join(&id);
        match fs_err::create_dir(&path) {
            Ok(()) => {
                init_delta_dir(&path)?;
                return Ok(AgentWorkspace { id, number, path });
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(source) => return Err(WorkspaceError::io(&path, source)),
        }
    }
    Err(WorkspaceError::Exhausted { dir })
}

/// A new numbered workspace of the agent holding a copy of `from`'s files (`.delta/`
/// left out): the fresh workspace of `delta fork --work-dir-from` and `delta replay
/// --workspace-from`. `LAST_USED` is left alone: the workspace was not chosen for new runs.
///
/// # Errors
/// [`WorkspaceError::SeedNotADirectory`] before anything is created; I/O errors naming
/// the file.
pub fn seed_workspace(agent_home: &Path, from: &Path) -> Result<AgentWorkspace, WorkspaceError> {
    let from = match from.canonicalize() {
        Ok(dir) if dir.is_dir() => dir,
        Ok(_) | Err(_) => {
            return Err(WorkspaceError::SeedNotADirectory {
                path: from.to_path_buf(),
            });
        }
    };
    let workspace = create_next_workspace(agent_home)?;
    // DIR may hold the new workspace (the agent directory itself, say): never copy it
    // into itself.
    let target = fs_err::canonicalize(&workspace.path)
        .map_err(|e| WorkspaceError::io(&workspace.path, e))?;
    copy_tree(&from, &target, &target)?;
    Ok(workspace)
}

/// Copies the files, directories and symbolic links (as links) of `from` into `to`,
/// leaving out `.delta` at the top (the engine's own records are not files of the
/// workspace) and `skip`.
fn copy_tree(from: &Path, to: &Path, skip: &Path) -> Result<(), WorkspaceError> {
    let top = to == skip;
    for entry in fs_err::read_dir(from).map_err(|e| WorkspaceError::io(from, e))? {
        let entry = entry.map_err(|e| WorkspaceError::io(from, e))?;
        let name = entry.file_name();
        let (source, target) = (entry.path(), to.join(&name));
        if (top && name == DELTA_DIR) || source == skip {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| WorkspaceError::io(&source, e))?;
        if kind.is_dir() {
            fs_err::create_dir(&target).map_err(|e| WorkspaceError::io(&target, e))?;
            copy_tree(&source, &target, skip)?;
        } else if kind.is_symlink() {
            let link = fs_err::read_link(&source).map_err(|e| WorkspaceError::io(&source, e))?;
            fs_err::os::unix::fs::symlink(&link, &target)
                .map_err(|e| WorkspaceError::io(&target, e))?;
        } else if kind.is_file() {
            fs_err::copy(&source, &target).map_err(|e| WorkspaceError::io(&target, e))?;
        }
    }
    Ok(())
}

/// The highest `W…` number among the entries (files too: their names are taken).
fn highest_number(dir: &Path) -> Result<u32, WorkspaceError> {
    let io_err = |source| WorkspaceError::io(dir, source);
    let mut highest = 0;
    for entry in fs_err::read_dir(dir).map_err(io_err)? {
        let entry = entry.map_err(io_err)?;
        if let Some(number) = parse_workspace_name(&entry.file_name().to_string_lossy()) {
            highest = highest.max(number);
        }
    }
    Ok(highest)
}

/// The answer to the workspace question of a new run without `-w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Run in the workspace used last.
    Last,
    /// Create a new numbered workspace.
    New,
}

/// How many times the workspace question is asked before unclear answers stop the run.
pub const MAX_QUESTIONS: u32 = 3;

/// The workspace a new run goes to, decided but not yet created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// `-w PATH`.
    Dir(PathBuf),
    /// The agent's workspace used last.
    Last(AgentWorkspace),
    /// A new numbered workspace of the agent.
    Next,
}

impl Choice {
    /// `-w PATH` (`work_dir`), or one of the numbered workspaces of the agent at
    /// `agent_home`: the last used one when `reuse` (asked only when there is one, with
    /// its id) says so, else a new one. Nothing is created.
    ///
    /// # Errors
    /// `reuse`'s.
    pub fn decide<E>(
        agent_home: &Path,
        work_dir: Option<&Path>,
        reuse: impl FnOnce(&str) -> Result<Reuse, E>,
    ) -> Result<Self, E> {
        if let Some(dir) = work_dir {
            return Ok(Choice::Dir(dir.to_path_buf()));
        }
        Ok(match last_used(agent_home) {
            Some(previous) => match reuse(&previous.id)? {
                Reuse::Last => Choice::Last(previous),
                Reuse::New => Choice::Next,
            },
            None => Choice::Next,
        })
    }

    /// The directory whose `.env` is the credentials' workspace layer. A workspace yet to
    /// be created has no `.env`: the agent's own stands in, as it does for the agent layer.
    #[must_use]
    pub fn env_dir(&self, agent_home: &Path) -> PathBuf {
        match self {
            Choice::Dir(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            Choice::Last(workspace) => workspace.path.clone(),
            Choice::Next => agent_home.to_path_buf(),
        }
    }

    /// Creates the workspace when needed (`-w`'s when missing, the next `W00N`), and
    /// names a numbered one in `LAST_USED`. Returns its absolute path and its `W00N`.
    ///
    /// # Errors
    /// What [`ensure_workspace`], [`create_next_workspace`] and [`set_last_used`] report.
    pub fn create(self, agent_home: &Path) -> Result<(PathBuf, Option<String>), WorkspaceError> {
        let workspace = match self {
            Choice::Dir(dir) => {
                let workspace = ensure_workspace(&dir)?;
                let path = workspace.root().to_path_buf();
                let id = numbered_id(agent_home, &path);
                return Ok((path, id));
            }
            Choice::Last(workspace) => workspace,
            Choice::Next => create_next_workspace(agent_home)?,
        };
        set_last_used(agent_home, &workspace.id)?;
        Ok((workspace.path, Some(workspace.id)))
    }
}

/// `W003` when `path` is `{agent_home}/workspaces/W003`.
#[must_use]
pub fn numbered_id(agent_home: &Path, path: &Path) -> Option<String> {
    let parent = path.parent()?;
    let name = path.file_name()?.to_str()?;
    let workspaces = agent_home.join(WORKSPACES_DIR).canonicalize().ok()?;
    (parent == workspaces && parse_workspace_name(name).is_some()).then(|| name.to_owned())
}

/// The workspace `workspaces/LAST_USED` names, when it names an existing numbered
/// workspace; `None` when the file is missing, unreadable or names something else.
#[must_use]
pub fn last_used(agent_home: &Path) -> Option<AgentWorkspace> {
    let dir = workspaces_dir(agent_home).ok()?;
    let text = std::fs::read_to_string(dir.join(LAST_USED_FILE)).ok()?;
    let id = text.trim();
    let number = parse_workspace_name(id)?;
    let path = dir.join(id);
    path.is_dir().then(|| AgentWorkspace {
        id: id.to_owned(),
        number,
        path,
    })
}

/// Records `workspace_id` (e.g. `W003`) in `workspaces/LAST_USED`, atomically.
///
/// # Errors
/// [`WorkspaceError::Io`] or [`WorkspaceError::PermissionDenied`] naming the file.
pub fn set_last_used(agent_home: &Path, workspace_id: &str) -> Result<(), WorkspaceError> {
    let dir = workspaces_dir(agent_home)?;
    fs_err::create_dir_all(&dir).map_err(|e| WorkspaceError::io(&dir, e))?;
    let path = dir.join(LAST_USED_FILE);
    write_atomic(&path, format!("{workspace_id}\n").as_bytes())
        .map_err(|e| WorkspaceError::io(&path, e))
}

/// `{agent_home}/workspaces`, absolute so that returned workspace paths are absolute.
fn workspaces_dir(agent_home: &Path) -> Result<PathBuf, WorkspaceError> {
    let home = std::path::absolute(agent_home)
        .map_err(|e| WorkspaceError::io(agent_home, failed("resolve", agent_home, e)))?;
    Ok(home.join(WORKSPACES_DIR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_from_the_agent_directory_copies_it_once_without_its_runs() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("agent.yaml"), "name: a\n").unwrap();
        std::fs::create_dir_all(home.path().join(".delta/r1")).unwrap();
        std::fs::create_dir_all(home.path().join("data/deep")).unwrap();
        std::fs::write(home.path().join("data/deep/x.txt"), "x").unwrap();
        std::os::unix::fs::symlink("data/deep/x.txt", home.path().join("link")).unwrap();

        let seeded = seed_workspace(home.path(), home.path()).unwrap();
        assert_eq!(seeded.id, "W001");
        let copy = |name: &str| seeded.path.join(name);
        assert_eq!(
            std::fs::read_to_string(copy("data/deep/x.txt")).unwrap(),
            "x"
        );
        assert_eq!(
            std::fs::read_link(copy("link")).unwrap(),
            Path::new("data/deep/x.txt")
        );
        // Its own .delta/ (with VERSION) is the new workspace's, not a copy of the source's.
        assert!(!copy(".delta/r1").exists());
        assert!(copy(".delta/VERSION").is_file());
        // The new workspace was not copied into itself.
        assert!(!copy("workspaces/W001").exists());
        assert_eq!(last_used(home.path()), None);
    }

    #[test]
    fn seeding_from_a_missing_directory_creates_nothing() {
        let home = tempfile::tempdir().unwrap();
        let error = seed_workspace(home.path(), &home.path().join("missing")).unwrap_err();
        assert!(
            matches!(error, WorkspaceError::SeedNotADirectory { .. }),
            "{error:?}"
        );
        assert!(!home.path().join(WORKSPACES_DIR).exists());
    }
}

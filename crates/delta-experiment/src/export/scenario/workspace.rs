//! The run's workspace read back: its files split by modification time into the setup a
//! replay starts from and the files the run created, which the replay must create too.
//! Also the directory walk the agent copy shares.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use delta_scenario::{FileExpect, SetupFile, TextMatch};

use super::error::ScenarioError;
use super::places::Places;
use delta_engine::run::Timestamp;

/// Files larger than this are checked for existence only, and left out of the setup.
pub const MAX_TEXT_BYTES: u64 = 64 * 1024;

/// A workspace file as the run found it or left it.
struct WorkspaceFile {
    /// Relative to the workspace, with `/`.
    path: String,
    /// Its text, when it is UTF-8 and small enough.
    text: Option<String>,
    executable: bool,
}

/// The workspace split by modification time: files older than the run are the setup the
/// replay starts from, files written while it ran are expected.
#[derive(Default)]
pub(super) struct Workspace {
    setup: Vec<WorkspaceFile>,
    created: Vec<WorkspaceFile>,
}

impl Workspace {
    /// The files under `root` (but not under `excluded`), split by the run's `start`
    /// and `end`; what cannot travel with a scenario is said in `notes`.
    pub(super) fn read(
        root: &Path,
        excluded: &[PathBuf],
        start: Timestamp,
        end: Timestamp,
        notes: &mut Vec<String>,
    ) -> Result<Self, ScenarioError> {
        let start = SystemTime::from(start.as_datetime());
        // Journal times are kept to the millisecond; a second's slack keeps a file the
        // last tool wrote on the run's side of its end.
        let end = SystemTime::from(end.as_datetime()) + std::time::Duration::from_secs(1);
        let mut workspace = Workspace::default();
        for found in walk(root, excluded, notes)? {
            let modified = found.meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let text = if found.meta.len() <= MAX_TEXT_BYTES {
                fs_err::read(&found.path)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
            } else {
                None
            };
            let rel = found.rel.clone();
            let file = WorkspaceFile {
                executable: found.executable(),
                path: found.rel,
                text,
            };
            if modified > end {
                notes.push(format!(
                    "{rel}: changed after the run ended; left out of the scenario"
                ));
            } else if modified >= start {
                if file.text.is_none() {
                    notes.push(format!(
                        "{rel}: binary or larger than {MAX_TEXT_BYTES} bytes; only its existence is checked"
                    ));
                }
                workspace.created.push(file);
            } else if file.text.is_some() {
                workspace.setup.push(file);
            } else {
                notes.push(format!(
                    "{rel}: in the workspace before the run, binary or larger than {MAX_TEXT_BYTES} bytes; not recreated by the scenario"
                ));
            }
        }
        Ok(workspace)
    }

    /// The files the run found, created before the replay's first step.
    pub(super) fn setup_files(&self) -> Vec<SetupFile> {
        self.setup
            .iter()
            .map(|file| SetupFile {
                path: format!("{{workspace}}/{}", file.path),
                content: file.text.clone().unwrap_or_default(),
                executable: file.executable,
            })
            .collect()
    }

    /// The files the run created, which the replay must leave too (with their text when
    /// it is small enough to compare).
    pub(super) fn created_expectations(&self, places: &Places) -> Vec<FileExpect> {
        self.created
            .iter()
            .map(|file| FileExpect {
                path: format!("{{workspace}}/{}", file.path),
                exists: true,
                text: file.text.as_ref().map(|text| TextMatch {
                    equals: Some(places.abstracted(text)),
                    ..TextMatch::default()
                }),
            })
            .collect()
    }
}

/// A regular file found by [`walk`].
pub(super) struct Found {
    /// Relative to the walk's root, with `/`.
    pub(super) rel: String,
    pub(super) path: PathBuf,
    pub(super) meta: Metadata,
}

impl Found {
    /// Whether any of its execute bits is set.
    pub(super) fn executable(&self) -> bool {
        use std::os::unix::fs::PermissionsExt as _;
        self.meta.permissions().mode() & 0o111 != 0
    }
}

/// Never copied: run records and sessions are the engine's, `.env` files hold credentials.
fn skipped(name: &str) -> bool {
    name == delta_engine::run::DELTA_DIR
        || name == ".sessions"
        || name == ".env"
        || name.starts_with(".env.")
}

/// Regular files under `root`, sorted; `excluded` directories (the agent inside its
/// workspace, or the reverse) are not entered, and what is not a regular file is said
/// in `notes`.
pub(super) fn walk(
    root: &Path,
    excluded: &[PathBuf],
    notes: &mut Vec<String>,
) -> Result<Vec<Found>, ScenarioError> {
    let mut found = Vec::new();
    walk_into(root, "", excluded, &mut found, notes)?;
    Ok(found)
}

fn walk_into(
    dir: &Path,
    prefix: &str,
    excluded: &[PathBuf],
    found: &mut Vec<Found>,
    notes: &mut Vec<String>,
) -> Result<(), ScenarioError> {
    let mut entries = fs_err::read_dir(dir)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(fs_err::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if skipped(&name) || excluded.contains(&path) {
            continue;
        }
        let rel = format!("{prefix}{name}");
        let meta = fs_err::symlink_metadata(&path)?;
        if meta.is_dir() {
            walk_into(&path, &format!("{rel}/"), excluded, found, notes)?;
        } else if meta.is_file() {
            found.push(Found { rel, path, meta });
        } else {
            notes.push(format!("{rel}: not a regular file; left out"));
        }
    }
    Ok(())
}

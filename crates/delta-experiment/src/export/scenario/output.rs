//! The exported fixtures directory: its files ([`Exported`], [`OutputFile`]) and
//! [`write`], which puts them in a new or empty directory.

use std::path::{Path, PathBuf};

use super::error::ScenarioError;

/// A file of the exported fixtures directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Relative to the output directory.
    pub path: PathBuf,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Written with mode 755.
    pub executable: bool,
}

/// A scenario ready to write.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The scenario's name.
    pub name: String,
    /// `scenarios/NAME.yaml` and the agent's files under `agents/NAME/`.
    pub files: Vec<OutputFile>,
    /// Recorded answers in the mock script.
    pub answers: usize,
    /// Tool calls the scenario expects.
    pub tool_calls: usize,
    /// What was left out, for the user to know (large or binary files, symlinks …).
    pub notes: Vec<String>,
}

impl Exported {
    /// The scenario file, relative to the output directory.
    #[must_use]
    pub fn scenario_path(&self) -> PathBuf {
        Path::new("scenarios").join(format!("{}.yaml", self.name))
    }
}

/// Writes `exported` into `dir`, which must be absent or empty: all of it, or nothing.
/// The files are written into a directory beside `dir` first, which is renamed to `dir`
/// once complete (replacing it when it is an empty directory), so that a failure half
/// way (a file name the file system refuses, a full disk) leaves no partial output that
/// would make `dir` refused from then on.
///
/// # Errors
/// [`ScenarioError::OutputNotEmpty`], or [`ScenarioError::Io`] when a file cannot be
/// written.
pub fn write(exported: &Exported, dir: &Path) -> Result<(), ScenarioError> {
    let occupied = match fs_err::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
    };
    if occupied || (dir.exists() && !dir.is_dir()) {
        return Err(ScenarioError::OutputNotEmpty {
            path: dir.to_path_buf(),
        });
    }
    let dir = std::path::absolute(dir)?;
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let created = missing_ancestor(parent);
    fs_err::create_dir_all(parent)?;
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stage = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let written = write_files(exported, &stage).and_then(|()| Ok(fs_err::rename(&stage, &dir)?));
    if written.is_err() {
        // The error being reported is the one that matters; what cannot be removed stays.
        let _ = std::fs::remove_dir_all(&stage);
        if let Some(created) = created {
            let _ = std::fs::remove_dir_all(created);
        }
    }
    written
}

/// The outermost missing directory of `path`, which writing creates.
fn missing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !ancestor.exists())
        .last()
        .map(Path::to_path_buf)
}

fn write_files(exported: &Exported, root: &Path) -> Result<(), ScenarioError> {
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::create_dir(root)?;
    for file in &exported.files {
        let path = root.join(&file.path);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::write(&path, &file.bytes)?;
        if file.executable {
            fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

//! Reading the runner's small YAML inputs (adapter and baseline files), with errors that
//! name the file.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// A YAML input file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Unreadable.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not what it should be.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl FileError {
    /// An `Invalid` error for `path`.
    pub fn invalid(path: &Path, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// Reads and parses `path`.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T, FileError> {
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_saphyr::from_str(&text).map_err(|e| FileError::invalid(path, e.to_string()))
}

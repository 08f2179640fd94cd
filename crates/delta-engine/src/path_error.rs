//! One way to say that an operation on a path failed: an `std::io::Error` whose message
//! names the operation and the path. The file system calls go through `fs_err`, which
//! words them so (`failed to create directory `/w/.delta`: Permission denied (os error
//! 13)`); [`failed`] words the few operations it does not wrap (a lock, a path resolved
//! against the working directory) the same way; and [`Denied`] keeps the path of a
//! refusal the user must answer, for the help line that names it.

use std::io;
use std::path::{Path, PathBuf};

/// `error`, from `action` on `path`, worded as fs-err words its own; the kind is kept.
#[must_use]
pub fn failed(action: &str, path: &Path, error: io::Error) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("failed to {action} `{}`: {error}", path.display()),
    )
}

/// The OS refused an operation on a path the user chose (no permission, a read-only file
/// system): unlike a full disk, something to grant or to choose differently.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Denied {
    /// The file or directory refused.
    pub path: PathBuf,
    /// The error, whose message names the operation and the path.
    pub error: io::Error,
}

impl Denied {
    /// `error`, from an operation on `path`: a [`Denied`] when the OS refused it, else the
    /// error as it is.
    pub fn sort<E: From<Denied> + From<io::Error>>(path: &Path, error: io::Error) -> E {
        if matches!(
            error.kind(),
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
        ) {
            E::from(Denied {
                path: path.to_path_buf(),
                error,
            })
        } else {
            E::from(error)
        }
    }
}

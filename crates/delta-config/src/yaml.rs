//! Reading YAML configuration files: parser options and file access. The mappings whose
//! keys keep their source locations are `keyed`'s, re-exported here.

use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::ConfigError;
pub use crate::keyed::{KeyedMap, TopLevelKeys};
use crate::raw::{AgentYaml, ContextYaml, HookMap, ImportedToolsYaml};

/// A document type read from a configuration file.
///
/// Implemented here, and only here, for each type a file is read as: a generic `parse`
/// called from the engine would compile serde-saphyr's deserializer, once per type
/// reached, into the engine crate, where it was a fifth of what LLVM optimized. Behind
/// this trait it is compiled once, in this crate (bench/README.md, issue 24).
pub trait Document: Sized {
    /// Parse `text`, the contents of `file`, translating every failure.
    ///
    /// # Errors
    /// [`ConfigError`] at the line and column of the fault, with a fix.
    fn parse(text: &str, file: &Path) -> Result<Self, ConfigError>;
}

/// Parse one YAML document of `file` into `T`, translating every failure.
///
/// # Errors
/// [`ConfigError`] at the line and column of the fault, with a fix.
pub fn parse<T: Document>(text: &str, file: &Path) -> Result<T, ConfigError> {
    T::parse(text, file)
}

fn deserialize<T: DeserializeOwned>(text: &str, file: &Path) -> Result<T, ConfigError> {
    // Snippets are rendered by our own error format; building them is wasted work.
    let options = serde_saphyr::options! { with_snippet: false };
    serde_saphyr::from_str_with_options(text, options)
        .map_err(|err| ConfigError::from_yaml(file, text, &err))
}

macro_rules! documents {
    ($($document:ty),+ $(,)?) => {$(
        impl Document for $document {
            fn parse(text: &str, file: &Path) -> Result<Self, ConfigError> {
                deserialize(text, file)
            }
        }
    )+};
}

documents!(
    AgentYaml,
    ContextYaml,
    HookMap,
    ImportedToolsYaml,
    TopLevelKeys
);

/// Whether `text` holds no YAML at all (only blank lines and comments).
pub fn is_blank(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|line| line.is_empty() || line.starts_with('#'))
}

/// Read a configuration file as UTF-8 text.
///
/// Only a regular file (or a symlink to one) is read: a FIFO would block the read until
/// something writes to it, a device could stream forever, and a directory fails with a
/// confusing OS message. The type is checked before opening, and again on the open file
/// (opened non-blocking, so that a FIFO swapped in meanwhile cannot block the open).
pub fn read(file: &Path) -> Result<String, ConfigError> {
    let unreadable = |err: std::io::Error| {
        ConfigError::new(file, format!("cannot read {}: {err}", file.display()))
            .help("check that the file exists and is readable")
    };
    let metadata = std::fs::metadata(file).map_err(unreadable)?;
    check_regular(file, &metadata)?;
    let mut opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(file)
        .map_err(unreadable)?;
    check_regular(file, &opened.metadata().map_err(unreadable)?)?;
    let mut bytes = Vec::new();
    opened.read_to_end(&mut bytes).map_err(unreadable)?;
    String::from_utf8(bytes).map_err(|err| {
        ConfigError::new(
            file,
            format!(
                "{} is not valid UTF-8 (invalid byte at offset {})",
                file.display(),
                err.utf8_error().valid_up_to()
            ),
        )
        .help("save the file as UTF-8")
    })
}

/// A configuration file must be a regular file (`metadata` follows symlinks).
pub fn check_regular(file: &Path, metadata: &std::fs::Metadata) -> Result<(), ConfigError> {
    if metadata.is_file() {
        return Ok(());
    }
    Err(ConfigError::new(
        file,
        format!(
            "{} is {}, not a regular file",
            file.display(),
            file_kind(&metadata.file_type())
        ),
    )
    .help(format!(
        "replace {} with a regular file (or a symlink to one)",
        file.display()
    )))
}

/// How a file type is called in messages.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "something else"
    }
}

/// Whether anything (even a dangling symlink) exists at `path`: such a file must be read
/// and fail loudly rather than be silently treated as absent.
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_map_keeps_order_and_key_locations() {
        let map: KeyedMap<u32> = deserialize("b: 1\na: 2\n", Path::new("x.yaml")).unwrap();
        let keys: Vec<_> = map
            .0
            .iter()
            .map(|(k, v)| (k.value.as_str(), k.referenced.line(), *v))
            .collect();
        assert_eq!(keys, [("b", 1, 1), ("a", 2, 2)]);
    }

    #[test]
    fn keyed_map_accepts_empty_documents() {
        let map: KeyedMap<u32> = deserialize("", Path::new("x.yaml")).unwrap();
        assert!(map.0.is_empty());
        let map: KeyedMap<u32> = deserialize("~\n", Path::new("x.yaml")).unwrap();
        assert!(map.0.is_empty());
    }

    #[test]
    fn non_utf8_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, b"name: \xff\n").unwrap();
        let err = read(&file).unwrap_err();
        assert!(err.message.contains("not valid UTF-8"), "{err}");
    }
}

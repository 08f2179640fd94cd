//! Reading files safely: only regular files, and only up to a bound. A journal replaced
//! by a symlink to `/dev/zero`, a FIFO as a context source, would otherwise be read until
//! the kernel kills the process, or block it (deaf to signals) forever.

use std::fs::Metadata;
use std::io::{self, Read};
use std::path::Path;

use fs_err::OpenOptions;
use fs_err::os::unix::fs::OpenOptionsExt;

/// The largest journal the engine reads: far above any real run (observations sent to the
/// model are capped at 10,000 characters; full outputs live in `io/`), far below what
/// would exhaust a machine's memory.
pub const MAX_JOURNAL_BYTES: u64 = 1 << 30;

/// The largest `metadata.json` the engine reads (a result is one model answer).
pub const MAX_METADATA_BYTES: u64 = 64 << 20;

/// The start of a regular file, read by [`read_regular_prefix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    /// At most the limit's bytes from the start.
    pub bytes: Vec<u8>,
    /// Whether the file holds more than the limit.
    pub truncated: bool,
    /// The file's size when it was opened (at least the bytes read).
    pub len: u64,
}

/// The contents of `path` if it is a regular file (a symlink to one is fine) of at most
/// `limit` bytes.
///
/// # Errors
/// The open's error (`NotFound` included); `InvalidInput` when the path is not a regular
/// file (a device, a FIFO, a directory); `FileTooLarge` when it holds more than `limit`
/// bytes. Every message names the path.
pub fn read_regular_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let prefix = read_regular_prefix(path, limit)?;
    if prefix.truncated {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{} is larger than the {} MiB limit",
                path.display(),
                limit >> 20
            ),
        ));
    }
    Ok(prefix.bytes)
}

/// The first `limit` bytes of `path` if it is a regular file (a symlink to one is fine):
/// never more is read, however large the file is or grows while it is read.
///
/// # Errors
/// The open's error (`NotFound` included); `InvalidInput`, naming the path and what it
/// is, when the path is not a regular file.
pub fn read_regular_prefix(path: &Path, limit: u64) -> io::Result<Prefix> {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        // A socket cannot be opened at all (ENXIO): say what it is, not the errno.
        Err(error) => match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() => return Err(not_regular(path, &meta)),
            Ok(_) | Err(_) => return Err(error),
        },
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    // One byte past the limit tells a file that grew while being read from one that fits.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > limit;
    bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(Prefix {
        len: meta.len().max(bytes.len() as u64),
        bytes,
        truncated,
    })
}

fn not_regular(path: &Path, meta: &Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {}, not a regular file; only regular files are read (a FIFO would block, \
             a device may never end)",
            path.display(),
            file_kind(meta)
        ),
    )
}

/// What a file that is not a regular file is, for messages: `a FIFO`, `a directory`…
fn file_kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "of an unknown kind"
    }
}

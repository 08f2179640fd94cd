//! Reading a run's own files (journal, metadata) safely: only regular files, and only up
//! to a bound. A journal replaced by a symlink to `/dev/zero`, or a FIFO, would otherwise
//! be read until the kernel kills the process, or block forever.

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

/// The contents of `path` if it is a regular file (a symlink to one is fine) of at most
/// `limit` bytes.
///
/// # Errors
/// The open's error (`NotFound` included); `InvalidInput` when the path is not a regular
/// file (a device, a FIFO, a directory); `FileTooLarge` when it holds more than `limit`
/// bytes. Every message names the path.
pub fn read_regular_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file (a device, FIFO or directory is never read as run \
                 state)",
                path.display()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    // One byte past the limit tells a file that grew while being read from one that fits.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{} is larger than the {} MiB limit",
                path.display(),
                limit >> 20
            ),
        ));
    }
    Ok(bytes)
}

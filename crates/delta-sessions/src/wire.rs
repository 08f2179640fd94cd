//! The holder's Unix socket and the framing on it: one JSON header line, then raw bytes
//! whose lengths the header gives. Raw bytes keep command text and output binary-safe.
//!
//! A socket address holds at most 108 bytes, and a workspace path can be longer. When the
//! socket's path does not fit, both ends reach it as `/proc/self/fd/N/holder.sock`, where
//! `N` is an open descriptor of the session directory: short, and resolved by the kernel.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::store::SessionPaths;

/// Longest path we hand to bind/connect directly (sun_path is 108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 100;

/// A header line longer than this is a protocol error, not something to buffer.
const MAX_HEADER: u64 = 64 * 1024;

/// Refuse to allocate for a block announced larger than this (1 GiB).
pub const MAX_BLOCK: usize = 1 << 30;

/// A path that reaches the socket, plus the directory handle that keeps it valid.
struct SocketAddr {
    path: PathBuf,
    _dir: Option<File>,
}

fn socket_addr(dir: &Path) -> io::Result<SocketAddr> {
    let direct = dir.join(SessionPaths::socket_name());
    if direct.as_os_str().as_bytes().len() <= MAX_SOCKET_PATH {
        return Ok(SocketAddr {
            path: direct,
            _dir: None,
        });
    }
    let handle = File::open(dir)?;
    Ok(SocketAddr {
        path: PathBuf::from(format!(
            "/proc/self/fd/{}/{}",
            handle.as_raw_fd(),
            SessionPaths::socket_name()
        )),
        _dir: Some(handle),
    })
}

/// Binds the session's socket (replacing a stale file from a dead holder).
pub fn bind(dir: &Path) -> io::Result<UnixListener> {
    let addr = socket_addr(dir)?;
    match std::fs::remove_file(dir.join(SessionPaths::socket_name())) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    UnixListener::bind(&addr.path)
}

/// Connects to the session's holder.
pub fn connect(dir: &Path) -> io::Result<UnixStream> {
    let addr = socket_addr(dir)?;
    UnixStream::connect(&addr.path)
}

/// Client → holder: run a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecRequest {
    pub timeout_ms: u64,
    pub command_len: usize,
}

/// Holder → client: how the command ended; stdout and stderr bytes follow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecReply {
    pub exit_code: i32,
    pub execution_time_ms: u64,
    pub timed_out: bool,
    /// The interpreter is gone after this command; the reason in words.
    pub ended: Option<String>,
    pub stdout_len: usize,
    pub stderr_len: usize,
    /// A stream was larger than the cap: its middle is replaced by a marker. (Default
    /// false: a holder started by an earlier `delta-sessions` does not send it.)
    #[serde(default)]
    pub truncated: bool,
}

/// Holder → client when the request could not be run at all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    Done(ExecReply),
    Refused { message: String },
}

/// Writes a header line followed by the given byte blocks.
pub fn send<T: Serialize>(mut out: impl Write, header: &T, blocks: &[&[u8]]) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(header).map_err(io::Error::other)?;
    bytes.push(b'\n');
    out.write_all(&bytes)?;
    for block in blocks {
        out.write_all(block)?;
    }
    out.flush()
}

/// Reads a header line; `Ok(None)` on a clean end of stream before any byte.
pub fn receive_header<T: DeserializeOwned>(
    input: &mut BufReader<impl Read>,
) -> io::Result<Option<T>> {
    let mut line = Vec::new();
    input
        .by_ref()
        .take(MAX_HEADER)
        .read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the header line was cut short",
        ));
    }
    serde_json::from_slice(&line)
        .map(Some)
        .map_err(io::Error::other)
}

/// Reads exactly `len` bytes of a block announced in a header.
pub fn receive_block(input: &mut impl Read, len: usize) -> io::Result<Vec<u8>> {
    if len > MAX_BLOCK {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a block of {len} bytes is larger than the {MAX_BLOCK}-byte limit"),
        ));
    }
    let mut block = vec![0; len];
    input.read_exact(&mut block)?;
    Ok(block)
}

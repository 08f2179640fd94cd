//! The interpreters a session can hold and the protocol that drives each one: bash, other
//! POSIX shells, and Python through a small driver script.
//!
//! Every interpreter reads requests on its stdin and, when a command has finished, writes
//! `__DELTA_DONE SEQ STATUS` on its stdout. The user's code never sees either stream: its
//! stdin is `/dev/null` and its stdout and stderr go to per-command files.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const BASH_BOOTSTRAP: &str = include_str!("bash_bootstrap.sh");
const POSIX_BOOTSTRAP: &str = include_str!("posix_bootstrap.sh");
const PYTHON_DRIVER: &str = include_str!("python_driver.py");

/// Removes a DEBUG trap that bash_bootstrap.sh's helpers asked to drop.
const BASH_DROP_DEBUG: &str =
    "if [[ -n ${__delta_drop_debug-} ]]; then trap - DEBUG; unset __delta_drop_debug; fi;";

/// The completion line an interpreter writes after each command.
pub const MARKER: &[u8] = b"__DELTA_DONE ";

/// How an interpreter is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// bash: commands run in the shell itself; timeouts and `set -e` unwind the command and
    /// keep the shell.
    Bash,
    /// Any other POSIX shell (sh, dash, zsh, ksh…): same protocol without bash's unwinding.
    Posix,
    /// python3 (any `python*`): a driver `exec`s each command in one globals dict.
    Python,
}

/// The files of one command.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// The command text, for shells (which `.` it); unused for Python.
    pub command: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

impl RunFiles {
    pub fn new(run_dir: &Path, seq: u64) -> Self {
        Self {
            command: run_dir.join(format!("{seq}.cmd")),
            stdout: run_dir.join(format!("{seq}.out")),
            stderr: run_dir.join(format!("{seq}.err")),
        }
    }
}

impl Kind {
    /// Chooses the protocol from the program's file name.
    pub fn detect(command: &str) -> Self {
        let name = Path::new(command)
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or(command);
        let is_python = name
            .strip_prefix("python")
            .is_some_and(|version| version.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
        if is_python {
            Self::Python
        } else if name == "bash" {
            Self::Bash
        } else {
            Self::Posix
        }
    }

    /// Arguments after the program name.
    pub fn args(self) -> Vec<&'static str> {
        match self {
            // Interactive (see bash_bootstrap.sh for why), reading commands from stdin, with
            // no startup files and no line editing.
            Self::Bash => vec!["--norc", "--noprofile", "--noediting", "-i"],
            // Read commands from stdin even though no terminal is attached.
            Self::Posix => vec!["-s"],
            Self::Python => vec!["-u", "-c", PYTHON_DRIVER],
        }
    }

    /// Environment variables to remove: an inherited PROMPT_COMMAND would run before our
    /// bootstrap replaces it and write into the control stream.
    pub fn env_remove(self) -> &'static [&'static str] {
        match self {
            Self::Bash => &["PROMPT_COMMAND"],
            Self::Posix | Self::Python => &[],
        }
    }

    /// Written to stdin once after start. Processing it ends with exactly one marker for
    /// request 0, which tells the holder the interpreter is ready (the Python driver writes
    /// that marker by itself).
    pub fn bootstrap(self) -> &'static [u8] {
        match self {
            Self::Bash => BASH_BOOTSTRAP.as_bytes(),
            Self::Posix => POSIX_BOOTSTRAP.as_bytes(),
            Self::Python => b"",
        }
    }

    /// Whether the command travels in a file (shells) rather than inside the request.
    pub fn uses_command_file(self) -> bool {
        match self {
            Self::Bash | Self::Posix => true,
            Self::Python => false,
        }
    }

    /// Whether to check syntax with `SHELL -n` first: a syntax error in a `.` file makes a
    /// POSIX shell exit, which would end the session (bash only fails the `.`).
    pub fn checks_syntax_first(self) -> bool {
        match self {
            Self::Posix => true,
            Self::Bash | Self::Python => false,
        }
    }

    /// The signal that makes the interpreter abandon the running command and return to
    /// reading requests, if it has one.
    pub fn abort_signal(self) -> Option<Signal> {
        match self {
            Self::Bash => Some(Signal::SIGUSR1),
            Self::Python => Some(Signal::SIGINT),
            Self::Posix => None,
        }
    }

    /// The bytes that ask the interpreter to run request `seq`.
    pub fn request(self, seq: u64, command: &[u8], files: &RunFiles) -> Vec<u8> {
        match self {
            Self::Bash | Self::Posix => {
                let mut line = Vec::new();
                if self == Self::Bash {
                    // bash reports completion from PROMPT_COMMAND, which also runs when a
                    // fatal error abandons the line. A DEBUG trap can only be removed at
                    // the top level, hence the inline `trap -` (see bash_bootstrap.sh).
                    line.extend_from_slice(
                        format!("__delta_pre {seq}; {BASH_DROP_DEBUG} __delta_resume; ").as_bytes(),
                    );
                }
                line.extend_from_slice(b"{ . ");
                line.extend(shell_quote(&files.command));
                line.extend_from_slice(b"; } </dev/null >");
                line.extend(shell_quote(&files.stdout));
                line.extend_from_slice(b" 2>");
                line.extend(shell_quote(&files.stderr));
                if self == Self::Posix {
                    line.extend_from_slice(format!("; __delta_done {seq} $?").as_bytes());
                }
                line.push(b'\n');
                line
            }
            Self::Python => {
                let header = serde_json::json!({
                    "seq": seq,
                    "len": command.len(),
                    "stdout": files.stdout.to_string_lossy(),
                    "stderr": files.stderr.to_string_lossy(),
                });
                let mut frame = header.to_string().into_bytes();
                frame.push(b'\n');
                frame.extend_from_slice(command);
                frame
            }
        }
    }
}

/// Single-quotes a path for a POSIX shell: inside '…' every byte is literal except `'`.
fn shell_quote(path: &Path) -> Vec<u8> {
    let mut quoted = vec![b'\''];
    for &byte in path.as_os_str().as_bytes() {
        if byte == b'\'' {
            quoted.extend_from_slice(b"'\\''");
        } else {
            quoted.push(byte);
        }
    }
    quoted.push(b'\'');
    quoted
}

/// Finds the first complete marker line in `buf`: (start, end, seq, status), where
/// `buf[start..end]` is the whole line including its newline.
pub fn find_marker(buf: &[u8]) -> Option<(usize, usize, u64, i32)> {
    let mut from = 0;
    while let Some(offset) = find(&buf[from..], MARKER) {
        let start = from + offset;
        let rest = &buf[start + MARKER.len()..];
        let newline = rest.iter().position(|&b| b == b'\n')?;
        let end = start + MARKER.len() + newline + 1;
        let mut fields = std::str::from_utf8(&rest[..newline])
            .ok()
            .map(|line| line.split(' '));
        let seq = fields
            .as_mut()
            .and_then(|f| f.next())
            .and_then(|s| s.parse().ok());
        let status = fields
            .as_mut()
            .and_then(|f| f.next())
            .and_then(|s| s.parse().ok());
        if let (Some(seq), Some(status)) = (seq, status) {
            return Some((start, end, seq, status));
        }
        from = end;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_program_name() {
        assert_eq!(Kind::detect("bash"), Kind::Bash);
        assert_eq!(Kind::detect("/usr/local/bin/bash"), Kind::Bash);
        assert_eq!(Kind::detect("python3"), Kind::Python);
        assert_eq!(Kind::detect("/opt/py/bin/python3.12"), Kind::Python);
        assert_eq!(Kind::detect("python"), Kind::Python);
        assert_eq!(Kind::detect("sh"), Kind::Posix);
        assert_eq!(Kind::detect("zsh"), Kind::Posix);
        assert_eq!(Kind::detect("python-config"), Kind::Posix);
    }

    #[test]
    fn quoting_survives_single_quotes_and_spaces() {
        assert_eq!(
            shell_quote(Path::new("/a b/it's")),
            b"'/a b/it'\\''s'".to_vec()
        );
    }

    #[test]
    fn bash_request_is_one_line() {
        let files = RunFiles::new(Path::new("/s/run"), 7);
        let line = Kind::Bash.request(7, b"ignored", &files);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "__delta_pre 7; if [[ -n ${__delta_drop_debug-} ]]; then trap - DEBUG; unset \
             __delta_drop_debug; fi; __delta_resume; { . '/s/run/7.cmd'; } </dev/null \
             >'/s/run/7.out' 2>'/s/run/7.err'\n"
        );
    }

    #[test]
    fn markers_are_found_whole_and_junk_is_skipped() {
        assert_eq!(find_marker(b"__DELTA_DONE 3 1"), None);
        let buf = b"noise __DELTA_DONE x y\n__DELTA_DONE 3 -1\nrest";
        let (start, end, seq, status) = find_marker(buf).unwrap();
        assert_eq!((seq, status), (3, -1));
        assert_eq!(&buf[start..end], b"__DELTA_DONE 3 -1\n");
    }
}

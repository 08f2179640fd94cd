//! End-to-end tests of the `delta` binary: exit codes, stdout, stderr and files on disk.

mod basics;
mod completions;
mod config_errors;
mod init;
mod tool_expand;

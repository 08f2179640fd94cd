//! End-to-end tests of the `delta` binary: exit codes, stdout, stderr and files on disk.

mod basics;
mod completions;
mod config_errors;
mod docs;
mod first_hour;
mod init;
mod msrv;
mod tool_expand;

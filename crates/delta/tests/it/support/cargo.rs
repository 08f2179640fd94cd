//! The cargo running this test suite, for tests that ask it about the workspace.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::harness::ROOT;

/// The cargo running this test suite (cargo sets `CARGO` for test processes).
pub fn real_cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into())
}

/// `cargo metadata` of this workspace with `options` (`--no-deps`, `--locked`).
pub fn cargo_metadata(options: &[&str]) -> Value {
    let output = Command::new(real_cargo())
        .args(["metadata", "--format-version", "1"])
        .args(options)
        .arg("--manifest-path")
        .arg(Path::new(ROOT).join("Cargo.toml"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

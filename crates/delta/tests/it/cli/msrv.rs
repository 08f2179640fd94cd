//! The minimum supported Rust version: `rust-version` in Cargo.toml is what cargo and
//! clippy hold the code to (clippy's `incompatible_msrv` lint flags any std API newer
//! than it), so it must not be lower than what the locked dependencies declare they need.
//! Only one toolchain is installed where CI runs, so `cargo +MSRV check` cannot be run;
//! this compares the declared figures instead (issue 12, item 10).

use serde_json::Value;

use crate::support::cargo::cargo_metadata;
use crate::support::harness::ROOT;

/// `1.89` or `1.89.0` as numbers, for comparison.
fn version(text: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = text
        .split('.')
        .map(|part| part.parse().expect("a numeric version part"))
        .collect();
    parts.resize(3, 0);
    parts
}

// Regression for issue 12 item 10: rust-version said 1.85 while the locked serde-saphyr
// needs 1.89.
#[test]
fn rust_version_is_at_least_what_every_locked_dependency_needs() {
    let metadata = cargo_metadata(&["--locked"]);
    let packages = metadata["packages"].as_array().expect("packages");
    let members = metadata["workspace_members"].as_array().expect("members");
    let ours: Vec<&Value> = packages
        .iter()
        .filter(|package| members.contains(&package["id"]))
        .collect();
    let declared = ours[0]["rust_version"]
        .as_str()
        .expect("rust-version is set");
    for package in &ours {
        assert_eq!(package["rust_version"].as_str(), Some(declared));
    }
    let needed = packages
        .iter()
        .filter_map(|package| {
            let wanted = package["rust_version"].as_str()?;
            Some((
                version(wanted),
                package["name"].as_str()?.to_owned(),
                wanted,
            ))
        })
        .max()
        .expect("dependencies declare a rust-version");
    assert!(
        version(declared) >= needed.0,
        "Cargo.toml says rust-version = {declared}, but the locked {} needs {}",
        needed.1,
        needed.2
    );
    let readme = std::fs::read_to_string(format!("{ROOT}/README.md")).expect("README");
    let short = declared.trim_end_matches(".0");
    assert!(
        readme.contains(&format!("Rust {short} or newer")),
        "README.md does not say `Rust {short} or newer`"
    );
}

//! The README's quick start: `examples/hello-world/demo.sh`, run exactly as a reader runs
//! it (no `DELTA_BIN`, no `MOCK_LLM_BIN`), so that its build step is exercised too.
//!
//! The build step runs against a stand-in `cargo` (`fake-cargo/cargo`) that records its
//! arguments instead of building, and the arguments are then checked against cargo's own target selection
//! with the workspace's real `cargo metadata`. Running the real `cargo build` here would
//! not be a reliable no-op: cargo does release its build lock while tests run, but the
//! feature set it resolves depends on which packages a command selects, so a build whose
//! selection differs from the test run's recompiles dependencies (a minute on a small
//! machine) and relinks `target/debug/delta` while other tests are executing it.
//! Everything else in the script (finding the target directory with `cargo metadata`,
//! starting mock-llm, the run, the journal) runs for real, against the binaries this
//! test suite already built.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::cargo::{cargo_metadata, real_cargo};
use crate::support::harness::ROOT;

/// `mock-llm` sits next to `delta` in the target directory: `cargo test --workspace`
/// builds both before any test runs.
fn mock_llm_bin() -> PathBuf {
    let delta = Path::new(env!("CARGO_BIN_EXE_delta"));
    let mock = delta.with_file_name(format!("mock-llm{}", std::env::consts::EXE_SUFFIX));
    assert!(
        mock.is_file(),
        "{} is missing: run `cargo build -p mock-llm` (or the whole `cargo test --workspace`)",
        mock.display()
    );
    mock
}

/// `cargo metadata` of this workspace, packages only.
pub(crate) fn metadata() -> Value {
    cargo_metadata(&["--no-deps"])
}

/// The binaries `cargo build ARGS` builds in the workspace `metadata` describes, by
/// cargo's rules: `--workspace` selects every member, `-p` the packages named, neither
/// the default members (the root package here); `--bin NAME` must name a binary of a
/// selected package (else cargo fails with "no bin target named"); `--bins` or no target
/// flag at all means every binary of the selected packages. A flag not listed here fails
/// the check, so that a change to the script is taught here rather than waved through.
pub(crate) fn bins_cargo_would_build(
    args: &[String],
    metadata: &Value,
) -> Result<BTreeSet<String>, String> {
    let (mut workspace, mut all_bins) = (false, false);
    let (mut packages, mut bins) = (Vec::new(), Vec::new());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .cloned()
                .ok_or_else(|| format!("`{arg}` needs a value"))
        };
        match arg.as_str() {
            "--quiet" | "-q" => {}
            "--manifest-path" => {
                let path = PathBuf::from(value()?);
                let root = Path::new(ROOT).join("Cargo.toml");
                if path.canonicalize().ok() != root.canonicalize().ok() {
                    return Err(format!(
                        "--manifest-path {} is not {}",
                        path.display(),
                        root.display()
                    ));
                }
            }
            "--workspace" | "--all" => workspace = true,
            "-p" | "--package" => packages.push(value()?),
            "--bin" => bins.push(value()?),
            "--bins" => all_bins = true,
            other => return Err(format!("this check does not know `{other}`; teach it")),
        }
    }

    let ids = |key: &str| -> BTreeSet<String> {
        metadata[key]
            .as_array()
            .expect("member ids")
            .iter()
            .map(|id| id.as_str().expect("an id is a string").to_owned())
            .collect()
    };
    let members: Vec<&Value> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| ids("workspace_members").contains(package["id"].as_str().unwrap_or("")))
        .collect();
    let name = |package: &Value| package["name"].as_str().unwrap_or("").to_owned();
    let selected: Vec<&Value> = if workspace {
        members
    } else if !packages.is_empty() {
        let mut selected = Vec::new();
        for wanted in &packages {
            match members.iter().find(|package| name(package) == *wanted) {
                Some(package) => selected.push(*package),
                None => {
                    return Err(format!(
                        "package ID specification `{wanted}` did not match any packages"
                    ));
                }
            }
        }
        selected
    } else {
        let default = ids("workspace_default_members");
        members
            .into_iter()
            .filter(|package| default.contains(package["id"].as_str().unwrap_or("")))
            .collect()
    };

    let available: BTreeSet<String> = selected
        .iter()
        .flat_map(|package| package["targets"].as_array().expect("targets"))
        .filter(|target| {
            target["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .map(|target| target["name"].as_str().expect("target name").to_owned())
        .collect();
    let mut built = if all_bins || bins.is_empty() {
        available.clone()
    } else {
        BTreeSet::new()
    };
    for bin in bins {
        if !available.contains(&bin) {
            let selected: Vec<String> = selected.iter().map(|p| name(p)).collect();
            return Err(format!(
                "no bin target named `{bin}` in the selected packages ({})",
                selected.join(", ")
            ));
        }
        built.insert(bin);
    }
    Ok(built)
}

/// demo.sh run as the README says (no DELTA_BIN, MOCK_LLM_BIN, key or base URL) with
/// `path` as PATH; a stand-in cargo records its build arguments in `recorded`.
fn run_demo_as_a_reader(path: OsString, recorded: &Path, demo_dir: &Path) -> std::process::Output {
    Command::new("bash")
        .arg(Path::new(ROOT).join("examples/hello-world/demo.sh"))
        .env("PATH", path)
        .env("DEMO_CARGO_ARGS", recorded)
        .env("DEMO_REAL_CARGO", real_cargo())
        .env("DEMO_DIR", demo_dir)
        .env_remove("DELTA_BIN")
        .env_remove("MOCK_LLM_BIN")
        .env_remove("DELTA_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DELTA_BASE_URL")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run demo.sh")
}

/// The `==> using DELTA and MOCK` line the script prints, as paths.
fn binaries_used(stderr: &str) -> (PathBuf, PathBuf) {
    let line = stderr
        .lines()
        .find_map(|line| line.strip_prefix("==> using "))
        .unwrap_or_else(|| panic!("no `==> using` line in:\n{stderr}"));
    let (delta, mock) = line.split_once(" and ").expect("`DELTA and MOCK`");
    (PathBuf::from(delta), PathBuf::from(mock))
}

fn same_file(a: &Path, b: &Path) -> bool {
    a.canonicalize()
        .ok()
        .is_some_and(|a| b.canonicalize().ok() == Some(a))
}

#[test]
fn the_quick_start_demo_runs_hello_world_end_to_end_without_an_api_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Committed rather than written here: executing a file just written can fail with
    // ETXTBSY while other test threads fork.
    let stub_dir = Path::new(ROOT).join("crates/delta/tests/it/e2e/fake-cargo");
    let recorded = dir.path().join("cargo-build-args");
    // No `delta` on PATH (the developer's may have one installed): the script must build.
    let path = std::env::join_paths([stub_dir, "/usr/bin".into(), "/bin".into()]).expect("PATH");

    let output = run_demo_as_a_reader(path, &recorded, &dir.path().join("demo"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");

    // The build step: cargo would accept it and it builds both programs.
    let args: Vec<String> = std::fs::read_to_string(&recorded)
        .expect("demo.sh ran `cargo build`")
        .lines()
        .map(str::to_owned)
        .collect();
    let built = bins_cargo_would_build(&args, &metadata())
        .unwrap_or_else(|error| panic!("`cargo build {}` fails: {error}", args.join(" ")));
    // Issue 12 item 11: the build used to run --quiet, two silent minutes on a fresh clone.
    assert!(
        !args.iter().any(|arg| arg == "--quiet" || arg == "-q"),
        "cargo's progress is hidden: {args:?}"
    );
    for bin in ["delta", "mock-llm"] {
        assert!(
            built.contains(bin),
            "`cargo build {}` does not build {bin}",
            args.join(" ")
        );
    }
    // …into the target directory this test's binaries live in, where the script looks.
    let (delta, mock) = binaries_used(&stderr);
    assert!(
        same_file(&delta, Path::new(env!("CARGO_BIN_EXE_delta"))),
        "{stderr}"
    );
    assert!(same_file(&mock, &mock_llm_bin()), "{stderr}");

    // The script's output depends on the machine (jq or not, cargo's build lines): searched.
    assert!(stdout.contains("Status:     COMPLETED"), "{stdout}");
    assert!(
        stdout.contains("\"type\":\"RUN_END\"") || stdout.contains("\"type\": \"RUN_END\""),
        "{stdout}"
    );
    assert!(
        stderr.contains("✔ COMPLETED after 3 iterations"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("demo/workspace/hello.txt")).expect("hello.txt"),
        "Hello, world!\nWritten by a Delta Engine agent.\n"
    );
    // The example directory itself is left as it was: the run went to DEMO_DIR.
    assert!(
        !Path::new(ROOT)
            .join("examples/hello-world/workspaces")
            .exists()
    );
}

#[test]
fn prebuilt_binaries_skip_the_build() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new("bash")
        .arg(Path::new(ROOT).join("examples/hello-world/demo.sh"))
        .env("DELTA_BIN", env!("CARGO_BIN_EXE_delta"))
        .env("MOCK_LLM_BIN", mock_llm_bin())
        .env("DEMO_DIR", dir.path())
        // No cargo at all: the script must not need one.
        .env("PATH", "/usr/bin:/bin")
        .env_remove("DELTA_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DELTA_BASE_URL")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run demo.sh");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // stderr names the machine's binaries and their paths: searched.
    assert!(!stderr.contains("==> building"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("workspace/hello.txt")).expect("hello.txt"),
        "Hello, world!\nWritten by a Delta Engine agent.\n"
    );
}

/// The kind of line the README's quick start once shipped with: cargo refuses it ("no bin
/// target named `mock-llm` in ..."), since mock-llm is another package's binary. (Before
/// the move to a virtual manifest the root package was selected by default; now a
/// package must be named for cargo to refuse it.)
#[test]
fn the_build_check_rejects_what_cargo_rejects() {
    let metadata = metadata();
    let manifest = format!("{ROOT}/Cargo.toml");
    let args = |list: &[&str]| -> Vec<String> {
        ["--quiet", "--manifest-path", &manifest]
            .iter()
            .chain(list)
            .map(|s| (*s).to_owned())
            .collect()
    };
    let error = bins_cargo_would_build(
        &args(&["-p", "delta", "--bin", "delta", "--bin", "mock-llm"]),
        &metadata,
    )
    .unwrap_err();
    assert_eq!(
        error,
        "no bin target named `mock-llm` in the selected packages (delta)"
    );
    let built = bins_cargo_would_build(
        &args(&[
            "-p", "delta", "-p", "mock-llm", "--bin", "delta", "--bin", "mock-llm",
        ]),
        &metadata,
    )
    .unwrap();
    assert_eq!(
        built,
        BTreeSet::from(["delta".to_owned(), "mock-llm".to_owned()])
    );
    assert!(bins_cargo_would_build(&args(&["-p", "mock"]), &metadata).is_err());
    assert!(bins_cargo_would_build(&args(&["--release"]), &metadata).is_err());
}

// Regression for issue 12 item 11: after the README's `cargo install`, demo.sh built the
// checkout again (two minutes) instead of using the installed binaries.
#[test]
fn the_demo_uses_delta_and_mock_llm_from_path_instead_of_building() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_delta"), bin.join("delta")).expect("link");
    std::os::unix::fs::symlink(mock_llm_bin(), bin.join("mock-llm")).expect("link");
    // A cargo that records any build: there must be none.
    let stub_dir = Path::new(ROOT).join("crates/delta/tests/it/e2e/fake-cargo");
    let recorded = dir.path().join("cargo-build-args");
    let path = std::env::join_paths([bin.clone(), stub_dir, "/usr/bin".into(), "/bin".into()])
        .expect("PATH");
    let output = run_demo_as_a_reader(path, &recorded, &dir.path().join("demo"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!recorded.exists(), "demo.sh ran cargo build:\n{stderr}");
    assert!(!stderr.contains("==> building"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "==> using {}/delta and {}/mock-llm",
            bin.display(),
            bin.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("demo/workspace/hello.txt")).expect("hello.txt"),
        "Hello, world!\nWritten by a Delta Engine agent.\n"
    );
}

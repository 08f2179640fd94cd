//! The README's quick start: `examples/hello-world/demo.sh`, run with the binaries this
//! test suite already built (the script builds them itself when not told where they are).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::ROOT;

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

#[test]
fn the_quick_start_demo_runs_hello_world_end_to_end_without_an_api_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new("bash")
        .arg(Path::new(ROOT).join("examples/hello-world/demo.sh"))
        .env("DELTA_BIN", env!("CARGO_BIN_EXE_delta"))
        .env("MOCK_LLM_BIN", mock_llm_bin())
        .env("DEMO_DIR", dir.path())
        .env_remove("DELTA_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DELTA_BASE_URL")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run demo.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
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
        std::fs::read_to_string(dir.path().join("workspace/hello.txt")).expect("hello.txt"),
        "Hello, world!\nWritten by a Delta Engine agent.\n"
    );
    // The example directory itself is left as it was: the run went to DEMO_DIR.
    assert!(
        !Path::new(ROOT)
            .join("examples/hello-world/workspaces")
            .exists()
    );
}

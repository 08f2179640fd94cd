//! The API key never reaches a hook or anything written for one, even when the engine's
//! own environment holds it and the hook dumps everything it can see.

use std::path::Path;
use std::process::Command;

use delta_engine::config::HookName;

use crate::hooks::support::{Fixture, Samples, every_hook_runs};

const SECRET: &str = "sk-hooks-test-0123456789abcdef";
/// Set for the child test process: where to put its fixture.
const ROOT_VARIABLE: &str = "DELTA_HOOKS_TEST_ROOT";

/// Every file under `dir` (recursively) whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read(&path)
            .unwrap()
            .windows(needle.len())
            .any(|window| window == needle)
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn the_api_key_reaches_no_hook_and_no_file() {
    let root = tempfile::tempdir().unwrap();
    // The key must be in the runner's own environment: run the test below in a child
    // process that has it (a test cannot safely set variables in its own process).
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hooks::secrets::all_hooks_with_the_key_in_the_environment",
            "--ignored",
            "--quiet",
        ])
        .env(ROOT_VARIABLE, root.path())
        .env("DELTA_API_KEY", SECRET)
        .env("OPENAI_API_KEY", SECRET)
        .status()
        .unwrap();
    assert!(status.success());

    let dumps: Vec<_> = walk_named(root.path(), "env-dump.txt");
    assert_eq!(dumps.len(), 9, "every hook ran and dumped its environment");
    assert_eq!(
        files_containing(root.path(), SECRET.as_bytes()),
        Vec::<String>::new()
    );
}

fn walk_named(dir: &Path, name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk_named(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            found.push(path.display().to_string());
        }
    }
    found
}

#[tokio::test]
#[ignore = "run by the_api_key_reaches_no_hook_and_no_file, with the key in its environment"]
async fn all_hooks_with_the_key_in_the_environment() {
    let Some(root) = std::env::var_os(ROOT_VARIABLE) else {
        // Run alone (e.g. with --include-ignored), it has nothing to prove.
        return;
    };
    assert_eq!(std::env::var("DELTA_API_KEY").as_deref(), Ok(SECRET));
    let fx = Fixture::new_in(Path::new(&root));
    fx.script(
        "dump.sh",
        r#"env > "${DELTA_HOOK_IO_PATH}output/env-dump.txt"
env
env >&2
cat "${DELTA_HOOK_IO_PATH}input/"*"#,
    );
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let samples = Samples::new();
    for hook in HookName::ALL {
        let outcome = runner.run(1, samples.event(hook)).await.unwrap();
        assert!(outcome.result.is_ok(), "{outcome:?}");
    }
    // Leave the files for the parent to search; it owns (and removes) the directory.
    std::mem::forget(fx);
}

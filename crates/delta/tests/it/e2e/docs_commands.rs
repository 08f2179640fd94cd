//! Every shell command of the README, the examples' READMEs and docs/ is run here, as a
//! reader would paste it, in a sandbox that looks like a checkout (the examples, the built
//! binaries in `target/debug` and on PATH) with a scripted model behind DELTA_BASE_URL.
//! `cargo` is a stand-in (`docs-bin/cargo`) whose recorded arguments are checked against
//! cargo's own target selection: really building inside the test suite would recompile
//! and relink the binaries other tests are running (see demo.rs).
//!
//! Each block is classified below; a block missing from the table fails the test, so a new
//! command is either run or skipped with a reason a reviewer can judge (issue 12, item 12).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::demo::{bins_cargo_would_build, metadata};
use crate::support::harness::ROOT;
use crate::support::run::mock;

/// What the test does with a block.
enum Handling {
    /// Run it after `setup` (shell run first: the state the text assumes the reader has).
    Run(&'static str),
    /// Run it in the same shell as the block before it (it uses that block's variables).
    Continues,
    /// Not run, and why.
    Skip(&'static str),
}
use Handling::{Continues, Run, Skip};

/// Two agents the orchestration examples call by directory.
const TWO_AGENTS: &str = "delta init processor -t hello-world -y 2>/dev/null; \
     delta init aggregator -t hello-world -y 2>/dev/null; \
     delta init planner -t hello-world -y 2>/dev/null; \
     delta init executor -t hello-world -y 2>/dev/null; \
     mkdir -p data work; echo '{}' > data/a.json; WORK=\"$PWD/work\"";

/// Every block, by page and the start of its first line.
const BLOCKS: &[(&str, &str, Handling)] = &[
    (
        "README.md",
        "cargo install --locked --path crates/delta",
        Run(""),
    ),
    ("README.md", "./examples/hello-world/demo.sh", Run("")),
    (
        "README.md",
        "delta init my-agent -t hello-world -y   #",
        Run(""),
    ),
    (
        "README.md",
        "delta init my-agent -t hello-world -y          #",
        Run(""),
    ),
    (
        "README.md",
        "DELTA_BASE_URL=http://localhost:11434/v1",
        Skip("needs Ollama and llama.cpp's server on their default ports"),
    ),
    (
        "README.md",
        "delta run -y -m \"Count the files\"",
        Run("delta init agent -t hello-world -y 2>/dev/null; cd agent"),
    ),
    (
        "README.md",
        "delta list-runs -w ./work",
        Skip(
            "placeholder ids (ID) of runs in the states each line is for; each state is exercised by crates/delta/tests/it/resume/state_table.rs",
        ),
    ),
    (
        "README.md",
        "delta continue -w ./work --run-id \"$(delta list-runs",
        Skip(
            "needs a resumable run, made by a crash; crates/delta/tests/it/resume/list_runs.rs runs this line's --resumable --first",
        ),
    ),
    (
        "README.md",
        "RUN_ID=$(uuidgen)",
        Skip(
            "its second half recovers from a crash of the first (continue of a COMPLETED run needs -m); crates/delta/tests/it/resume/orchestration.rs runs this recovery",
        ),
    ),
    (
        "README.md",
        ": > run_ids.txt",
        Run(
            "delta init agent -t hello-world -y 2>/dev/null; cd agent; TASKS=(\"List the files\" \"Count them\")",
        ),
    ),
    ("README.md", "pids=()", Run(TWO_AGENTS)),
    (
        "README.md",
        "PLAN=$(delta run --run-id \"plan-$(uuidgen)\"",
        Run(TWO_AGENTS),
    ),
    (
        "README.md",
        "cd my-agent/workspaces/W001/.delta/RUN_ID",
        Skip(
            "placeholders (RUN_ID, ACTION_ID, REF) of the reader's own run, and `tail -f` never ends",
        ),
    ),
    (
        "README.md",
        "mock-llm --script my-agent/mock-script.yaml",
        Skip(
            "PORT is the port mock-llm prints; the examples' blocks below run the same steps end to end",
        ),
    ),
    (
        "README.md",
        "cargo build --workspace",
        Skip(
            "runs the whole conformance suite, which `cargo test --workspace` runs (conformance/tests); the last lines name another implementation and a placeholder run",
        ),
    ),
    ("README.md", "./scripts/test.sh", Run("")),
    (
        "examples/claude-hooks/README.md",
        "cargo build --workspace --bins",
        Run(""),
    ),
    (
        "examples/claude-hooks/README.md",
        "grep CLAUDE_HOOK",
        Continues,
    ),
    (
        "docs/hooks.md",
        "#!/bin/bash",
        Skip(
            "a Claude Code hook script, run by the engine at its event: crates/delta/tests/it/hooks/claude/docs.rs runs each one there",
        ),
    ),
    (
        "examples/code-reviewer/README.md",
        "cp -r ~/src/myproject /tmp/review",
        Skip("the reader's own project and a real model"),
    ),
    (
        "examples/code-reviewer/README.md",
        "cargo build --workspace --bins",
        Run(""),
    ),
    (
        "examples/map-reduce/README.md",
        "mkdir -p words && printf",
        Run(""),
    ),
    (
        "examples/map-reduce/README.md",
        "cp -r examples/map-reduce scripted",
        Skip(
            "starts three mock-llm on fixed ports and leaves them running; crates/delta/tests/it/subagents/example.rs runs the same agents and scripts on ports it picks",
        ),
    ),
    ("docs/subagents.md", "mkdir -p words && printf", Run("")),
    (
        "examples/environments/README.md",
        "./examples/environments/try.sh host",
        Run(""),
    ),
    (
        "examples/hello-world/README.md",
        "delta tool expand examples/hello-world",
        Run(""),
    ),
    (
        "examples/hello-world/README.md",
        "./examples/hello-world/demo.sh",
        Run(""),
    ),
    (
        "examples/hello-world/README.md",
        "export DELTA_API_KEY=sk-...",
        Run(""),
    ),
    (
        "examples/interactive-shell/README.md",
        "cargo install --locked --path crates/delta",
        Run(""),
    ),
    (
        "examples/interactive-shell/README.md",
        "cargo build --workspace --bins",
        Run(""),
    ),
    (
        "examples/interactive-shell/README.md",
        "pwd",
        Skip(
            "what the scripted model sends inside the session, shown for reading; the block above runs it",
        ),
    ),
    (
        "examples/interactive-shell/README.md",
        "jq -r 'select(.type == \"ACTION_RESULT\")",
        Continues,
    ),
    (
        "examples/python-repl/README.md",
        "cargo install --locked --path crates/delta",
        Run(""),
    ),
    (
        "examples/python-repl/README.md",
        "cargo build --workspace --bins",
        Run(""),
    ),
    (
        "examples/python-repl/README.md",
        "jq -r 'select(.type == \"ACTION_RESULT\")",
        Continues,
    ),
    (
        "examples/tool-syntax/README.md",
        "delta tool expand examples/tool-syntax",
        Run(""),
    ),
    (
        "docs/cli.md",
        "# bash (~/.bashrc)",
        Run("mkdir -p ~/.zfunc ~/.config/fish/completions"),
    ),
    ("docs/environments.md", "delta env probe", Run("")),
    (
        "docs/environments.md",
        "./examples/environments/try.sh host",
        Run(""),
    ),
    (
        "docs/environments.md",
        "delta tool expand examples/environments --environment bwrap",
        Run(""),
    ),
    (
        "docs/environments.md",
        "apptainer exec --bind",
        Skip("Apptainer is not installed on the test machines: untested, as the page says"),
    ),
    (
        "docs/environments.md",
        "apptainer instance start",
        Skip("Apptainer is not installed on the test machines: untested, as the page says"),
    ),
    (
        "docs/conformance.md",
        "cargo build --workspace",
        Skip(
            "runs the whole conformance suite, which `cargo test --workspace` runs (conformance/tests)",
        ),
    ),
    (
        "docs/conformance.md",
        "/path/to/delta-engine/target/debug/delta-conformance run --impl \"node",
        Skip("another implementation"),
    ),
    (
        "docs/conformance.md",
        "delta-conformance run --impl \"node dist/index.js\" --impl-sessions",
        Skip("another implementation"),
    ),
    (
        "docs/conformance.md",
        "time target/debug/delta-conformance run",
        Skip(
            "runs the whole conformance suite, which `cargo test --workspace` runs (conformance/tests)",
        ),
    ),
    (
        "docs/conformance.md",
        "delta-conformance validate .delta/RUN/journal.jsonl",
        Run(
            "delta init a -t hello-world -y 2>/dev/null; delta run --agent a -w . --run-id RUN -m go 2>/dev/null; delta run --agent a -w . -m go --format json > result.json 2>/dev/null",
        ),
    ),
    (
        "docs/conformance.md",
        "delta-conformance citations -o docs/conformance/citations.md",
        Skip(
            "regenerates the committed table from this checkout's fixtures; conformance/tests' citations.rs checks it is up to date and every quote is in its seed section",
        ),
    ),
    (
        "docs/hooks.md",
        "#!/bin/sh",
        Skip(
            "a hook script, run by the engine at its hook point: crates/delta/tests/it/hooks/docs.rs runs it there",
        ),
    ),
    (
        "docs/unattended.md",
        "delta run --agent ./my-agent -w ./work --message-file task.md",
        Run("delta init my-agent -t hello-world -y 2>/dev/null; echo 'List the files' > task.md"),
    ),
    (
        "docs/unattended.md",
        "delta run -y -m \"Count the files; answer as JSON\" --output-schema",
        Run("delta init agent -t hello-world -y 2>/dev/null; cd agent; \
             echo '{\"type\": \"object\", \"required\": [\"summary\"]}' > answer.schema.json"),
    ),
    (
        "docs/batch.md",
        "delta batch run tasks.jsonl --agent ./my-agent --out ./exp1 --jobs 4",
        Run("delta init my-agent -t hello-world -y 2>/dev/null; \
             printf '%s\\n' '{\"id\": \"t1\", \"message\": \"List the files\"}' > tasks.jsonl"),
    ),
    (
        "docs/batch.md",
        "delta batch run tasks.jsonl --agent ./my-agent --out /shared/exp1",
        Skip(
            "needs a Slurm cluster and a shared file system; tests/it's batch tests run the Slurm executor",
        ),
    ),
    (
        "docs/batch.md",
        "#!/bin/sh",
        Skip("the script `delta batch run --executor slurm` writes, shown for reading"),
    ),
    ("docs/batch.md", "# Success rate", Continues),
    (
        "docs/eval.md",
        "delta eval run ./tasks --oracle --out ./oracle",
        Skip(
            "a synopsis with placeholders (./tasks, ./my-agent); the next block runs the examples, and crates/delta/tests/it/eval runs every command of it",
        ),
    ),
    (
        "docs/eval.md",
        "mock-llm --script examples/eval-agent/mock-script.yaml > mock.port & mock=$!",
        Run(""),
    ),
    (
        "docs/eval.md",
        "delta eval run /shared/tasks --agent /shared/my-agent --out /shared/eval1 -k 5",
        Skip(
            "needs a Slurm cluster and a shared file system; crates/delta/tests/it/eval/slurm.rs runs the examples as an array job",
        ),
    ),
    (
        "examples/eval-agent/README.md",
        "mock-llm --script examples/eval-agent/mock-script.yaml > mock.port & mock=$!",
        Run(""),
    ),
    (
        "examples/tasks/README.md",
        "delta eval run examples/tasks --oracle --out oracle-eval --jobs 2",
        Skip("docs/eval.md's offline block runs these commands on the same tasks"),
    ),
    (
        "docs/conformance.md",
        "delta-conformance matrix --impl rust=target/debug/delta",
        Skip("another implementation (the TypeScript one) beside this one"),
    ),
    (
        "docs/conformance/README.md",
        "# 1. This engine, the runner and mock-llm.",
        Skip("clones and builds another implementation from the network"),
    ),
    (
        "docs/conformance/README.md",
        "target/debug/delta-conformance run",
        Skip("the conformance suite against the TypeScript implementation cloned above"),
    ),
    (
        "docs/export-and-view.md",
        "delta view --run-id 20251014_043012_a1b2c3",
        Skip("placeholder run ids of the reader's own runs"),
    ),
    (
        "docs/export-and-view.md",
        "delta export --run-id ID",
        Skip("placeholder run ids of the reader's own runs"),
    ),
    (
        "docs/export-and-view.md",
        "OTEL_EXPORTER_OTLP_HEADERS=",
        Skip("needs an OpenTelemetry collector and its token"),
    ),
    (
        "docs/export-and-view.md",
        "docker run -d --name jaeger",
        Skip("needs docker and a Jaeger image from the network"),
    ),
    (
        "docs/model-servers.md",
        "export DELTA_API_KEY=sk-...",
        Run(""),
    ),
    (
        "docs/model-servers.md",
        "# llama-cpp-python 0.3.x",
        Skip(
            "needs llama-cpp-python and a GGUF model; scripts/real-llm-smoke.sh starts this server, and crates/delta/tests/it/e2e/servers.rs runs the page's llm: sections against mock-llm --strict",
        ),
    ),
    (
        "docs/model-servers.md",
        "vllm serve",
        Skip(
            "needs vLLM, a GPU and a model from the network; crates/delta/tests/it/e2e/servers.rs runs the page's llm: sections against mock-llm --strict vllm",
        ),
    ),
    (
        "docs/model-servers.md",
        "ollama serve",
        Skip(
            "needs Ollama and a pulled model; crates/delta/tests/it/e2e/servers.rs runs the page's llm: sections against mock-llm --strict ollama",
        ),
    ),
    (
        "docs/model-servers.md",
        "export DELTA_BASE_URL=http://127.0.0.1:1234/v1",
        Run(""),
    ),
    (
        "docs/model-servers.md",
        "export DELTA_BASE_URL=https://openrouter.ai/api/v1",
        Run(""),
    ),
    (
        "docs/model-servers.md",
        "litellm --config litellm.yaml",
        Skip(
            "needs LiteLLM and a provider's key; crates/delta/tests/it/e2e/servers.rs runs the page's llm: sections against mock-llm --strict",
        ),
    ),
    (
        "docs/model-servers.md",
        "export DELTA_BASE_URL=https://api.deepseek.com",
        Run(""),
    ),
    (
        "docs/model-servers.md",
        "export ANTHROPIC_API_KEY=sk-ant-...",
        Run(""),
    ),
    (
        "docs/mcp.md",
        "mkdir -p mcp-demo && cd mcp-demo",
        Skip(
            "installs server-everything from the npm registry and leaves mock-llm running; crates/delta/tests/it/e2e/mcp.rs runs the same agent and calls against the copy .ci/run installs (a_run_calls_text_structured_and_image_tools_and_records_them)",
        ),
    ),
    (
        "docs/sessions.md",
        "$ delta-sessions start",
        Skip(
            "the session id is the one `start` printed; crates/delta/tests/it/sessions/bash.rs runs this sequence",
        ),
    ),
    (
        "docs/sessions.md",
        "__delta_pre N;",
        Skip("the holder's internal command line, shown for reading"),
    ),
    (
        "crates/mock-llm/README.md",
        "$ mock-llm --script script.yaml [--port 0]",
        Skip("a synopsis ([optional] arguments)"),
    ),
    (
        "docs/time-travel.md",
        "delta fork --run-id ID [-w WORKSPACE] [--at SEQ] [--new-run-id NEW] [-m TEXT] \\",
        Skip("a synopsis ([optional] arguments)"),
    ),
    (
        "docs/time-travel.md",
        "$ delta run --agent ./agent -w ws -m \"note four times\" --run-id parent",
        Skip("a transcript with its output; crates/delta/tests/it/e2e/fork.rs runs this sequence"),
    ),
    (
        "docs/time-travel.md",
        "delta replay --run-id ID [-w WORKSPACE] [--new-run-id NEW] [--workspace-from DIR] \\",
        Skip("a synopsis ([optional] arguments)"),
    ),
    (
        "docs/time-travel.md",
        "$ delta run --agent ./agent -w ws -m \"Greet Ada\" --run-id recorded",
        Skip(
            "a transcript with its output; crates/delta/tests/it/e2e/replay.rs runs this sequence",
        ),
    ),
    (
        "docs/time-travel.md",
        "$ delta replay --run-id recorded -w ws --new-run-id check-2",
        Skip(
            "a transcript with its output; crates/delta/tests/it/e2e/replay.rs runs this sequence",
        ),
    ),
    (
        "docs/time-travel.md",
        "$ delta replay --run-id recorded -w ws --new-run-id check-3 --format json",
        Skip(
            "a transcript with its output; crates/delta/tests/it/e2e/replay.rs runs this sequence",
        ),
    ),
    (
        "docs/time-travel.md",
        "delta export --run-id ID -w WORKSPACE --format scenario",
        Skip(
            "a synopsis with placeholders; crates/delta/tests/it/export/scenario.rs exports runs and replays them with delta-conformance run --fixtures",
        ),
    ),
];

/// The pages whose commands are run.
fn pages() -> Vec<String> {
    let mut pages = vec![
        "README.md".to_owned(),
        "crates/mock-llm/README.md".to_owned(),
    ];
    for dir in ["examples", "docs"] {
        for entry in std::fs::read_dir(Path::new(ROOT).join(dir)).expect("list") {
            let path = entry.expect("entry").path();
            let page = if path.is_dir() {
                path.join("README.md")
            } else {
                path
            };
            if page.extension().is_some_and(|ext| ext == "md") && page.is_file() {
                let relative = page.strip_prefix(ROOT).expect("inside the repository");
                pages.push(relative.display().to_string());
            }
        }
    }
    pages.sort();
    pages
}

/// The fenced `sh`, `bash` and `console` blocks of `page`: (first line, text).
fn shell_blocks(page: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join(page)).expect("read page");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if ["```sh", "```bash", "```console"].contains(&line.trim_end()) => {
                current = Some(String::new());
            }
            None => {}
            Some(block) if line.starts_with("```") => {
                let first = block.lines().next().unwrap_or("").to_owned();
                blocks.push((first, std::mem::take(block)));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

/// A directory that looks like a checkout to the commands: the examples (copied: runs
/// create workspaces in them), `target` (the real one, for `target/debug/…`), `Cargo.toml`
/// and the two packages' directories for `cargo install --path`, and a home directory.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("delta-docs-")
        .tempdir()
        .expect("temp dir");
    let status = Command::new("cp")
        .args([
            "-r",
            &format!("{ROOT}/examples"),
            &format!("{ROOT}/Cargo.toml"),
        ])
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success());
    for workspaces in [
        "hello-world",
        "interactive-shell",
        "python-repl",
        "code-reviewer",
    ] {
        let _ = std::fs::remove_dir_all(
            dir.path()
                .join("examples")
                .join(workspaces)
                .join("workspaces"),
        );
    }
    for package in ["delta", "mock-llm"] {
        let manifest = format!("crates/{package}/Cargo.toml");
        std::fs::create_dir_all(dir.path().join(format!("crates/{package}"))).expect("mkdir");
        std::fs::copy(format!("{ROOT}/{manifest}"), dir.path().join(manifest)).expect("copy");
    }
    // The README's test command stands in for itself as cargo does: it records that it
    // ran, and check_cargo checks the real script (installing system packages and running
    // the whole suite inside a test is what .ci/run does, once).
    std::fs::create_dir(dir.path().join("scripts")).expect("mkdir scripts");
    let test_script = dir.path().join("scripts/test.sh");
    std::fs::write(
        &test_script,
        "#!/bin/sh\nprintf 'scripts/test.sh %s\\n' \"$*\" >> \"$DOCS_CARGO_LOG\"\n",
    )
    .expect("write scripts/test.sh");
    std::fs::set_permissions(&test_script, std::fs::Permissions::from_mode(0o755))
        .expect("chmod scripts/test.sh");
    std::os::unix::fs::symlink(target_dir(), dir.path().join("target")).expect("link target");
    std::fs::create_dir(dir.path().join("home")).expect("home");
    dir
}

/// The target directory this test's binaries live in.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_delta"))
        .ancestors()
        .nth(2)
        .expect("target/debug/delta")
        .to_path_buf()
}

/// Runs `script` with bash in `dir`; the exit status and the combined output.
fn run_script(dir: &Path, script: &str, base_url: &str, cargo_log: &Path) -> (bool, String) {
    let debug = target_dir().join("debug");
    let path = std::env::join_paths([
        Path::new(ROOT).join("crates/delta/tests/it/e2e/docs-bin/first"),
        debug.clone(),
        "/usr/local/bin".into(),
        "/usr/bin".into(),
        "/bin".into(),
        Path::new(ROOT).join("crates/delta/tests/it/e2e/docs-bin"),
    ])
    .expect("PATH");
    let mut child = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", script])
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("TMPDIR", dir)
        .env("DELTA_BASE_URL", base_url)
        .env("DELTA_LLM_BACKOFF_MS", "200")
        .env("DOCS_CARGO_LOG", cargo_log)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    // A hang guard, not a timing assertion.
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// What a recorded `cargo …` line would do, checked against cargo's rules; `uses` are the
/// programs the block goes on to run, which the build must have built.
fn check_cargo(
    line: &str,
    uses: &BTreeSet<String>,
    metadata: &serde_json::Value,
) -> Result<(), String> {
    let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    match words.first().map(String::as_str) {
        Some("build") => {
            let built = bins_cargo_would_build(&words[1..], metadata)?;
            let missing: Vec<&String> = uses.difference(&built).collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "`cargo {line}` does not build {missing:?}, which the block runs"
                ))
            }
        }
        Some("install") => {
            if !words.iter().any(|w| w == "--locked") {
                return Err(format!(
                    "`cargo {line}`: without --locked, versions the tests never ran against"
                ));
            }
            let at = words
                .iter()
                .position(|w| w == "--path")
                .ok_or("no --path")?;
            let dir = Path::new(ROOT).join(words.get(at + 1).ok_or("--path needs a value")?);
            if dir.join("Cargo.toml").is_file() {
                Ok(())
            } else {
                Err(format!("`cargo {line}`: no package at {}", dir.display()))
            }
        }
        Some("test") if line == "test --workspace --locked" => Ok(()),
        Some("scripts/test.sh") => {
            let ci = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).unwrap_or_default();
            if words.len() == 1
                && ci
                    .lines()
                    .any(|l| l.trim() == "test_command='./scripts/test.sh'")
            {
                Ok(())
            } else {
                Err(format!("`{line}` is not the test command .ci/run runs"))
            }
        }
        _ => Err(format!(
            "`cargo {line}` is not checked here; teach check_cargo"
        )),
    }
}

/// The programs of this workspace a block runs.
fn programs_used(block: &str) -> BTreeSet<String> {
    ["delta", "delta-sessions", "mock-llm", "delta-conformance"]
        .into_iter()
        .filter(|name| {
            block
                .split(|c: char| c.is_whitespace() || c == '/' || c == '"' || c == '(')
                .any(|word| word == *name)
        })
        .map(str::to_owned)
        .collect()
}

// Regression for issue 12 item 12: the build commands of three examples' READMEs failed on
// a fresh clone ("no bin target named `mock-llm` in default-run packages", a plain
// `cargo build` that does not build mock-llm), and nothing ran the documented commands.
#[test]
fn every_documented_shell_command_runs_or_is_skipped_with_a_reason() {
    let model = mock(
        "mode: by_conversation\nsteps:\n  - message: {content: '{\"summary\": \"done\", \"steps\": []}'}\n",
    );
    let metadata = metadata();
    let mut failures = Vec::new();
    let mut seen = Vec::new();
    for page in pages() {
        let mut previous: Option<String> = None;
        for (first, block) in shell_blocks(&page) {
            let Some((_, _, handling)) = BLOCKS
                .iter()
                .find(|(p, start, _)| *p == page && first.starts_with(start))
            else {
                failures.push(format!(
                    "{page}: block `{first}` is not classified in BLOCKS"
                ));
                continue;
            };
            seen.push((page.clone(), first.clone()));
            let script = match handling {
                // A skipped block in between (text for reading) does not break the chain.
                Skip(reason) => {
                    if reason.trim().is_empty() {
                        failures.push(format!(
                            "{page}: block `{first}` is skipped without a reason"
                        ));
                    }
                    continue;
                }
                Run(setup) => format!("{setup}\n{block}"),
                Continues => format!("{}\n{block}", previous.clone().unwrap_or_default()),
            };
            let dir = sandbox();
            let cargo_log = dir.path().join("cargo.log");
            let (ok, output) = run_script(dir.path(), &script, &model.base_url(), &cargo_log);
            if !ok {
                failures.push(format!("{page}: block `{first}` failed:\n{output}"));
            }
            let recorded = std::fs::read_to_string(&cargo_log).unwrap_or_default();
            for line in recorded.lines() {
                if let Err(error) = check_cargo(line, &programs_used(&block), &metadata) {
                    failures.push(format!("{page}: block `{first}`: {error}"));
                }
            }
            previous = Some(script);
        }
    }
    for (page, start, _) in BLOCKS {
        if !seen
            .iter()
            .any(|(p, first)| p == page && first.starts_with(start))
        {
            failures.push(format!(
                "BLOCKS lists `{start}` of {page}, which has no such block"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// Issue 12 item 12: the commands the examples shipped with are the ones the check refuses.
#[test]
fn the_examples_former_build_commands_are_refused() {
    let metadata = metadata();
    let uses = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
    let refused =
        |line: &str, names: &[&str]| check_cargo(line, &uses(names), &metadata).unwrap_err();
    // The same mistakes in today's layout: a package named, whose binaries are not all.
    assert_eq!(
        refused(
            "build -p delta --bin delta --bin delta-sessions --bin mock-llm",
            &["delta", "mock-llm"]
        ),
        "no bin target named `mock-llm` in the selected packages (delta)"
    );
    assert_eq!(
        refused("build -p delta", &["delta", "mock-llm"]),
        "`cargo build -p delta` does not build [\"mock-llm\"], which the block runs"
    );
    assert!(refused("install --path .", &[]).contains("--locked"));
    assert!(
        check_cargo(
            "build --workspace --bins",
            &uses(&["delta", "delta-sessions", "mock-llm"]),
            &metadata
        )
        .is_ok()
    );
}

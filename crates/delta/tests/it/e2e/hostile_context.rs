//! Context sources under attack (issue 31): a FIFO, a device, a socket or a directory as a
//! file source fails the run at once, cleanly (FAILED, exit 1, before any LLM call); a
//! file larger than memory is read only as far as the token budget reaches. Each run is
//! bounded by a hang guard and by a 1 GiB address-space limit, so that a regression fails
//! the test instead of blocking it or exhausting the machine.

use std::path::Path;
use std::time::Duration;

use rstest::rstest;
use serde_json::Value;

use crate::support::bounded::{Ended, finish_within, start, under_memory_limit};
use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, run_files};

/// Far above a run that reads one small file and asks the model once.
const GUARD: Duration = Duration::from_secs(30);

const DONE: &str = "steps:\n  - message: {content: done}\n";

const START: &str = "The start of the data file.\n";

/// An agent whose second source is `source` (YAML of one list item, indented by 2).
fn agent(test: Test, context_extra: &str, source: &str) -> Test {
    test.file(
        "agent/agent.yaml",
        "name: reader\nllm: {model: gpt-4o-mini}\n",
    )
    .file("agent/system_prompt.md", "You read.\n")
    .file(
        "agent/context.yaml",
        &format!(
            "{context_extra}sources:\n  - type: file\n    path: '${{AGENT_HOME}}/system_prompt.md'\n{source}  - type: journal\n"
        ),
    )
}

/// `delta run` of `test` in workspace `ws` under the limits above (the test is returned:
/// its directory lives as long as it does).
fn run(test: Test) -> (Test, Ended) {
    let test = test.args([
        "run", "--agent", "agent", "-w", "ws", "--run-id", "r", "-m", "Read.",
    ]);
    let ended = finish_within(
        start(under_memory_limit(&test.command(), 1024)),
        GUARD,
        "a run reading its context",
    );
    (test, ended)
}

fn metadata(root: &Path) -> Value {
    run_files(&root.join("ws"), "r").metadata()
}

#[rstest]
#[case::fifo("fifo", "a FIFO")]
#[case::character_device("/dev/zero", "a character device")]
#[case::socket("socket", "a socket")]
#[case::directory("dir", "a directory")]
fn a_source_that_is_not_a_regular_file_fails_the_run_at_once(
    #[case] name: &str,
    #[case] kind: &str,
) {
    let model = mock(DONE);
    let test = delta(Test::new(), &model);
    let path = test.path().join("ws").join(name);
    std::fs::create_dir_all(test.path().join("ws")).unwrap();
    // The socket must outlive the run: a bound socket file stays while it is open.
    let _socket = match name {
        "fifo" => {
            nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
            None
        }
        "socket" => Some(std::os::unix::net::UnixListener::bind(&path).unwrap()),
        "dir" => {
            std::fs::create_dir(&path).unwrap();
            None
        }
        _ => None,
    };
    let source = if name.starts_with('/') {
        name.to_owned()
    } else {
        path.display().to_string()
    };
    let test = agent(
        test,
        "",
        &format!("  - type: file\n    id: data\n    path: '{source}'\n"),
    );
    let (test, ended) = run(test);
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    let metadata = metadata(test.path());
    assert_eq!(metadata["status"], "FAILED");
    assert_eq!(
        metadata["error"]["message"],
        format!(
            "context source 'data': {source} is {kind}, not a regular file; only regular files \
             are read (a FIFO would block, a device may never end); give a regular file as \
             the source's path"
        )
    );
    assert_consistent(&run_files(&test.path().join("ws"), "r"), "FAILED");
    assert!(model.requests().is_empty(), "no LLM call was made");
}

/// A generator's output file is read by the same rules.
#[test]
fn a_generator_whose_output_is_a_fifo_fails_the_run_at_once() {
    let model = mock(DONE);
    let test = agent(
        delta(Test::new(), &model),
        "",
        "  - type: computed_file\n    id: made\n    generator:\n      command: [sh, -c, 'rm -f out.fifo; mkfifo out.fifo']\n    output_path: '${CWD}/out.fifo'\n",
    );
    let (test, ended) = run(test);
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    let metadata = metadata(test.path());
    assert_eq!(metadata["status"], "FAILED");
    let message = metadata["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("is a FIFO, not a regular file"),
        "{message}"
    );
    assert!(model.requests().is_empty());
}

/// A 4 GiB file (sparse: it takes no disk) beside the workspace, with `START` first.
fn huge_file(test: Test) -> Test {
    let test = test.file("ws/huge.txt", START);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(test.path().join("ws/huge.txt"))
        .unwrap();
    file.set_len(4 << 30).unwrap();
    test
}

const HUGE: &str = "  - type: file\n    id: huge\n    path: '${CWD}/huge.txt'\n";

/// Read only as far as its `max_tokens` reaches, under a 1 GiB address-space limit that
/// reading it whole would break: the run completes and the model gets the file's start
/// with a line saying where it was cut and how large the whole is.
#[test]
fn a_huge_file_source_is_read_only_as_far_as_its_max_tokens() {
    let model = mock(DONE);
    let test = agent(
        huge_file(delta(Test::new(), &model)),
        "",
        &format!("{HUGE}    max_tokens: 500\n"),
    );
    let (test, ended) = run(test);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    assert_eq!(metadata(test.path())["status"], "COMPLETED");
    let requests = model.requests();
    let block = requests[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        block.starts_with(&format!("# Context Block: huge\n\n{START}")),
        "{block:.200}"
    );
    let note = format!(
        "[Delta Engine: context source 'huge' is cut here: it is about 1431655766 tokens, \
         over its max_tokens of 500; the whole text is in {}/ws/huge.txt]",
        std::fs::canonicalize(test.path()).unwrap().display()
    );
    assert!(
        block.ends_with(&note),
        "{}",
        &block[block.len().saturating_sub(300)..]
    );
    assert!(block.len() < 4 * 1024, "{} bytes sent", block.len());
}

/// Without its own `max_tokens`, the context budget bounds the read: a source that alone
/// is over the budget fails the run cleanly before the LLM call, as any source over it
/// does, instead of exhausting memory.
#[test]
fn a_huge_file_source_over_the_context_budget_fails_the_run_cleanly() {
    let model = mock(DONE);
    let test = agent(
        huge_file(delta(Test::new(), &model)),
        "total_max_tokens: 3000\n",
        HUGE,
    );
    let (test, ended) = run(test);
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    let metadata = metadata(test.path());
    assert_eq!(metadata["status"], "FAILED");
    assert_eq!(metadata["error"]["type"], "ContextWindowExceeded");
    assert!(model.requests().is_empty(), "no LLM call was made");
}

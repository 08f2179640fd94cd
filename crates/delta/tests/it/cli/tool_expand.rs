//! `delta tool expand`: the examples' expansions (snapshots), and configuration errors.

use crate::support::harness::{ROOT, Stdin, Test};
use crate::support::snapshot::snapshot;

fn expand_example(name: &str) {
    let run = Test::new()
        .current_dir(ROOT)
        .args(["tool", "expand", &format!("examples/{name}")])
        .run()
        .code(0)
        .stderr_is("");
    snapshot!(format!("expand_{name}"), run.stdout());
}

#[test]
fn expands_hello_world() {
    expand_example("hello-world");
}

#[test]
fn expands_tool_syntax() {
    expand_example("tool-syntax");
}

#[test]
fn accepts_the_agent_yaml_path_and_gives_the_same_output() {
    let by_dir = Test::new()
        .current_dir(ROOT)
        .args(["tool", "expand", "examples/hello-world"])
        .run()
        .code(0);
    Test::new()
        .current_dir(ROOT)
        .args(["tool", "expand", "examples/hello-world/agent.yaml"])
        .run()
        .code(0)
        .stdout_is(by_dir.stdout());
}

#[test]
fn a_fresh_init_loads_cleanly() {
    for template in ["minimal", "hello-world"] {
        let run = Test::new()
            .args(["init", "fresh", "-t", template, "-y"])
            .run()
            .code(0)
            .then()
            .args(["tool", "expand", "fresh"])
            .run()
            .code(0)
            .stderr_is("");
        snapshot!(format!("fresh_{template}"), run.stdout());
    }
}

#[test]
fn broken_agent_exits_126_naming_the_file() {
    let run = Test::new()
        .agent(
            "bad",
            "name: bad\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: count\n    exec: \"cat ${file} | wc -l\"\n",
        )
        .args(["tool", "expand", "bad"])
        .run()
        .code(126)
        .stdout_is("");
    let agent_yaml = run.path().canonicalize().unwrap().join("bad/agent.yaml");
    let lines: Vec<&str> = run.stderr().lines().collect();
    assert_eq!(
        lines[..2],
        [
            "error: Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe.",
            &format!("  --> {}:5:5", agent_yaml.display()),
        ],
        "{}",
        run.stderr()
    );
    assert!(lines[2].starts_with("  = help: "), "{}", run.stderr());
    assert_eq!(
        lines.len(),
        3,
        "the error is printed once:\n{}",
        run.stderr()
    );
}

#[test]
fn warnings_go_to_stderr_and_keep_exit_0() {
    Test::new()
        .file(
            "legacy/config.yaml",
            "name: legacy\nllm:\n  model: gpt-4o-mini\n",
        )
        .file("legacy/system_prompt.md", "Be brief.\n")
        .file(
            "legacy/context.yaml",
            crate::support::harness::DEFAULT_CONTEXT_YAML,
        )
        .args(["tool", "expand", "legacy"])
        .run()
        .code(0)
        .stdout_is("tools: []\n")
        .stderr_is(
            "warning: [DEPRECATION WARNING] config.yaml is deprecated; rename it to agent.yaml\n",
        );
}

#[test]
fn missing_agent_exits_126() {
    let run = Test::new()
        .args(["tool", "expand", "nowhere"])
        .run()
        .code(126)
        .stdout_is("");
    snapshot!(run.stderr(), @"
    error: agent directory not found: nowhere
      --> nowhere
      = help: pass the path of a directory that contains agent.yaml
    ");
}

#[test]
fn missing_path_is_a_usage_error() {
    let run = Test::new().args(["tool", "expand"]).run().code(2);
    snapshot!(run.stderr(), @"
    error: the following required arguments were not provided:
      <PATH>

    Usage: delta tool expand <PATH>

    For more information, try '--help'.
    ");
}

#[test]
fn hello_world_readme_shows_the_current_expansion() {
    let run = Test::new()
        .current_dir(ROOT)
        .args(["tool", "expand", "examples/hello-world"])
        .run()
        .code(0);
    let readme = std::fs::read_to_string(format!("{ROOT}/examples/hello-world/README.md")).unwrap();
    // The README is prose around the block: a search for the whole expansion.
    assert!(
        readme.contains(&format!("```yaml\n{}```", run.stdout())),
        "examples/hello-world/README.md must show the output of \
         `delta tool expand examples/hello-world`:\n{}",
        run.stdout()
    );
}

#[test]
fn readme_tool_examples_load() {
    // The README's "Tools" block is the first thing users copy; it must stay valid.
    let readme = std::fs::read_to_string(format!("{ROOT}/README.md")).unwrap();
    let start = readme
        .find("```yaml\ntools:\n")
        .expect("README has a tools: example")
        + 8;
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let run = Test::new()
        .agent(
            "readme",
            &format!("name: readme\nllm:\n  model: gpt-4o-mini\n{block}"),
        )
        .args(["tool", "expand", "readme"])
        .run()
        .code(0)
        .stderr_is("");
    snapshot!(run.stdout());
}

// A FIFO named hooks.yaml made `delta tool expand` wait forever for a writer.
#[test]
fn a_fifo_as_a_configuration_file_exits_126_at_once() {
    let test = Test::new().agent("bot", "name: bot\nllm:\n  model: gpt-4o-mini\n");
    let hooks = test.path().canonicalize().unwrap().join("bot/hooks.yaml");
    nix::unistd::mkfifo(&hooks, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    test.args(["tool", "expand", "bot"])
        // Only for the harness's hang guard: a regression fails instead of blocking.
        .stdin(Stdin::Open)
        .run()
        .code(126)
        .stdout_is("")
        .stderr_is(&format!(
            "error: {0} is a named pipe (FIFO), not a regular file\n  --> {0}\n  \
             = help: replace {0} with a regular file (or a symlink to one)\n",
            hooks.display()
        ));
}

// Regression for issue 12 item 14: a tool whose program is not on PATH expanded without a
// word, and the model found out only when its call failed mid-run.
#[test]
fn a_tool_whose_program_is_not_on_path_is_warned_about_by_name() {
    let run = Test::new()
        .agent(
            "bot",
            "name: bot\nllm: { model: m }\ntools:\n  \
             - name: fetch\n    exec: \"no-such-program-7f3a --url ${url}\"\n  \
             - name: script\n    exec: \"/nonexistent/tools/run.sh ${x}\"\n  \
             - name: list\n    exec: \"ls ${dir}\"\n",
        )
        .args(["tool", "expand", "bot"])
        .run()
        .code(0)
        .stderr_is(
            "warning: tool `fetch` runs `no-such-program-7f3a`, which is not on PATH; install it or fix the tool's command before a run\n\
             warning: tool `script` runs `/nonexistent/tools/run.sh`, which is not an executable file; the tool fails until it is one\n",
        );
    assert!(
        run.stdout().contains("no-such-program-7f3a"),
        "{}",
        run.stdout()
    );
}

//! `delta init`: the files it creates, what it refuses, and that it never waits for input.

use std::fs;

use crate::support::harness::{DEFAULT_CONTEXT_YAML, ROOT, Stdin, Test};
use crate::support::snapshot::snapshot;

#[test]
fn creates_the_three_files_with_the_default_context() {
    let run = Test::new()
        .args(["init", "my-agent", "-y"])
        .run()
        .code(0)
        .stdout_is("");
    snapshot!(run.stderr(), @r#"
    Created agent `my-agent` from template `minimal`:
      my-agent/agent.yaml        model and tools
      my-agent/system_prompt.md  instructions for the model
      my-agent/context.yaml      what the model sees on every call

    Next steps:
      Edit the system prompt and the tools, then see how each tool will run:
      delta tool expand my-agent
      Test it without a model: mock-llm serves a scripted one (crates/mock-llm/README.md;
      `delta init -t hello-world` comes with a script).
      Reach a model: OpenAI with `export DELTA_API_KEY=sk-...`, or any OpenAI-compatible
      server with `export DELTA_BASE_URL=http://localhost:11434/v1` (Ollama; no key needed),
      and set llm.model in agent.yaml to a model it serves. Then run it:
      delta run --agent my-agent -y -m "Say hello"
    "#);

    let mut entries: Vec<String> = fs::read_dir(run.path().join("my-agent"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["agent.yaml", "context.yaml", "system_prompt.md"]);
    assert_eq!(run.read("my-agent/context.yaml"), DEFAULT_CONTEXT_YAML);
    let agent = run.read("my-agent/agent.yaml");
    snapshot!(agent, @r#"
    # The agent: who it is, which model it thinks with, which tools it can call.
    # `delta tool expand .` prints every tool exactly as the engine will run it.
    name: "my-agent"
    version: 0.1.0
    description: "A Delta Engine agent."

    llm:
      model: gpt-4o-mini
      # temperature: 0.7
      # max_tokens: 4096

    # Each tool is an external command run in the workspace. For example:
    #   - name: read_file
    #     description: Print a file of the workspace.
    #     exec: "cat ${path}"
    tools: []
    "#);
    assert!(
        run.read("my-agent/system_prompt.md")
            .starts_with("# my-agent\n")
    );
}

#[test]
fn hello_world_template_is_the_hello_world_example() {
    let run = Test::new()
        .args(["init", "hello-world", "--template", "hello-world", "--yes"])
        .run()
        .code(0);
    // Issue 30 item 10: the template had no mock script; `delta init`'s next steps never
    // mentioned mock-llm.
    assert!(
        run.stderr().contains("mock-llm --script"),
        "{}",
        run.stderr()
    );
    for file in [
        "agent.yaml",
        "system_prompt.md",
        "context.yaml",
        "mock-script.yaml",
    ] {
        let example = fs::read_to_string(format!("{ROOT}/examples/hello-world/{file}")).unwrap();
        assert_eq!(
            run.read(&format!("hello-world/{file}")),
            example,
            "examples/hello-world/{file} differs from `delta init -t hello-world`"
        );
    }
}

#[test]
fn values_are_quoted_so_they_stay_strings() {
    let run = Test::new()
        .args(["init", "1.0", "-d", "Reviews: code # and docs \"quoted\""])
        .run()
        .code(0);
    let agent = run.read("1.0/agent.yaml");
    snapshot!(agent, @r#"
    # The agent: who it is, which model it thinks with, which tools it can call.
    # `delta tool expand .` prints every tool exactly as the engine will run it.
    name: "1.0"
    version: 0.1.0
    description: "Reviews: code # and docs \"quoted\""

    llm:
      model: gpt-4o-mini
      # temperature: 0.7
      # max_tokens: 4096

    # Each tool is an external command run in the workspace. For example:
    #   - name: read_file
    #     description: Print a file of the workspace.
    #     exec: "cat ${path}"
    tools: []
    "#);
}

#[test]
fn creates_missing_parent_directories() {
    let run = Test::new().args(["init", "agents/team/bot"]).run().code(0);
    assert_eq!(
        run.read("agents/team/bot/context.yaml"),
        DEFAULT_CONTEXT_YAML
    );
}

#[test]
fn refuses_an_existing_directory_and_leaves_it_alone() {
    let run = Test::new()
        .file("mine/agent.yaml", "name: precious\n")
        .args(["init", "mine", "-t", "hello-world", "-y"])
        .run()
        .code(1)
        .stdout_is("")
        .stderr_is(
            "error: `mine` already exists\n  \
             = help: delta init never overwrites; choose another NAME or move `mine` away first\n",
        );
    assert_eq!(run.read("mine/agent.yaml"), "name: precious\n");
    assert_eq!(fs::read_dir(run.path().join("mine")).unwrap().count(), 1);
}

#[test]
fn refuses_an_existing_file() {
    let run = Test::new()
        .file("notes", "keep me")
        .args(["init", "notes", "-y"])
        .run()
        .code(1);
    snapshot!(run.stderr(), @"
    error: `notes` already exists
      = help: delta init never overwrites; choose another NAME or move `notes` away first
    ");
    assert_eq!(run.read("notes"), "keep me");
}

#[cfg(unix)]
#[test]
fn refuses_a_dangling_symlink() {
    let test = Test::new();
    std::os::unix::fs::symlink("nowhere", test.path().join("link")).unwrap();
    let run = test.args(["init", "link"]).run().code(1);
    assert!(!run.path().join("nowhere").exists());
}

#[test]
fn never_waits_for_input_without_a_terminal() {
    // stdin is a pipe that stays open: any attempt to ask would block (and trip the
    // harness's hang guard). With and without -y, the defaults are used silently.
    for args in [&["init", "quiet"][..], &["init", "quiet", "-y"]] {
        let run = Test::new().args(args).stdin(Stdin::Open).run().code(0);
        // Both forms must give the same output.
        insta::allow_duplicates! {
            snapshot!(run.stderr(), @r#"
            Created agent `quiet` from template `minimal`:
              quiet/agent.yaml        model and tools
              quiet/system_prompt.md  instructions for the model
              quiet/context.yaml      what the model sees on every call

            Next steps:
              Edit the system prompt and the tools, then see how each tool will run:
              delta tool expand quiet
              Test it without a model: mock-llm serves a scripted one (crates/mock-llm/README.md;
              `delta init -t hello-world` comes with a script).
              Reach a model: OpenAI with `export DELTA_API_KEY=sk-...`, or any OpenAI-compatible
              server with `export DELTA_BASE_URL=http://localhost:11434/v1` (Ollama; no key needed),
              and set llm.model in agent.yaml to a model it serves. Then run it:
              delta run --agent quiet -y -m "Say hello"
            "#);
            snapshot!(run.read("quiet/agent.yaml"), @r#"
            # The agent: who it is, which model it thinks with, which tools it can call.
            # `delta tool expand .` prints every tool exactly as the engine will run it.
            name: "quiet"
            version: 0.1.0
            description: "A Delta Engine agent."

            llm:
              model: gpt-4o-mini
              # temperature: 0.7
              # max_tokens: 4096

            # Each tool is an external command run in the workspace. For example:
            #   - name: read_file
            #     description: Print a file of the workspace.
            #     exec: "cat ${path}"
            tools: []
            "#);
        }
    }
}

#[test]
fn piped_answers_are_not_read() {
    // Without a terminal, text on stdin is data for someone else, not answers.
    let run = Test::new()
        .args(["init", "piped"])
        .stdin(Stdin::Text("hello-world\nA description\n".into()))
        .run()
        .code(0);
    snapshot!(run.read("piped/agent.yaml"), @r#"
    # The agent: who it is, which model it thinks with, which tools it can call.
    # `delta tool expand .` prints every tool exactly as the engine will run it.
    name: "piped"
    version: 0.1.0
    description: "A Delta Engine agent."

    llm:
      model: gpt-4o-mini
      # temperature: 0.7
      # max_tokens: 4096

    # Each tool is an external command run in the workspace. For example:
    #   - name: read_file
    #     description: Print a file of the workspace.
    #     exec: "cat ${path}"
    tools: []
    "#);
}

#[test]
fn unknown_template_is_a_usage_error() {
    let run = Test::new().args(["init", "x", "-t", "fancy"]).run().code(2);
    snapshot!(run.stderr(), @"
    error: invalid value 'fancy' for '--template <TEMPLATE>'
      [possible values: minimal, hello-world]

    For more information, try '--help'.
    ");
    assert!(!run.path().join("x").exists());
}

#[test]
fn templates_are_listed_with_descriptions_in_help() {
    let run = Test::new().args(["init", "--help"]).run().code(0);
    snapshot!(run.stdout());
}

// Regression for issue 12 item 14: the next steps ended at `delta tool expand`, and a
// newcomer's first `delta run` failed without a word about DELTA_BASE_URL or a key.
#[test]
fn init_next_steps_say_how_to_reach_a_model() {
    Test::new()
        .args(["init", "my-agent", "-y"])
        .run()
        .code(0)
        .stderr_has("export DELTA_API_KEY=sk-...")
        .stderr_has("export DELTA_BASE_URL=http://localhost:11434/v1")
        .stderr_has("delta run --agent my-agent -y -m \"Say hello\"");
}

// Regression for issue 12 item 14: `delta run --help` did not say how to reach a model.
#[test]
fn run_help_says_how_to_reach_a_model() {
    let run = Test::new().args(["run", "--help"]).run().code(0);
    for needle in [
        "DELTA_BASE_URL",
        "DELTA_API_KEY",
        "http://localhost:11434/v1",
    ] {
        assert!(run.stdout().contains(needle), "{}", run.stdout());
    }
}

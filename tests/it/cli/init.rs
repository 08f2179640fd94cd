//! `delta init`: the files it creates, what it refuses, and that it never waits for input.

use std::fs;

use crate::support::harness::{DEFAULT_CONTEXT_YAML, ROOT, Stdin, Test};

#[test]
fn creates_the_three_files_with_the_default_context() {
    let run = Test::new()
        .args(["init", "my-agent", "-y"])
        .run()
        .code(0)
        .stdout_is("")
        .stderr_has("Created agent `my-agent` from template `minimal`")
        .stderr_has("delta tool expand my-agent");

    let mut entries: Vec<String> = fs::read_dir(run.path().join("my-agent"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["agent.yaml", "context.yaml", "system_prompt.md"]);
    assert_eq!(run.read("my-agent/context.yaml"), DEFAULT_CONTEXT_YAML);
    let agent = run.read("my-agent/agent.yaml");
    assert!(agent.contains("\nname: \"my-agent\"\n"), "{agent}");
    assert!(agent.contains("\ntools: []\n"), "{agent}");
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
    for file in ["agent.yaml", "system_prompt.md", "context.yaml"] {
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
    assert!(agent.contains("\nname: \"1.0\"\n"), "{agent}");
    assert!(
        agent.contains("\ndescription: \"Reviews: code # and docs \\\"quoted\\\"\"\n"),
        "{agent}"
    );
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
        .code(1)
        .stderr_has("error: `notes` already exists");
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
        assert!(!run.stderr().contains("Template ("), "{}", run.stderr());
        assert!(run.read("quiet/agent.yaml").contains("tools: []"));
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
    assert!(
        run.read("piped/agent.yaml")
            .contains("\ndescription: \"A Delta Engine agent.\"\n")
    );
    assert!(run.read("piped/agent.yaml").contains("\ntools: []\n"));
}

#[test]
fn unknown_template_is_a_usage_error() {
    let run = Test::new()
        .args(["init", "x", "-t", "fancy"])
        .run()
        .code(2)
        .stderr_has("invalid value 'fancy' for '--template <TEMPLATE>'")
        .stderr_has("[possible values: minimal, hello-world]");
    assert!(!run.path().join("x").exists());
}

#[test]
fn templates_are_listed_with_descriptions_in_help() {
    Test::new()
        .args(["init", "--help"])
        .run()
        .code(0)
        .stdout_has("- minimal:")
        .stdout_has("- hello-world:");
}

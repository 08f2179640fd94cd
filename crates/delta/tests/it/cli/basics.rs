//! `--version`, `--help`, usage errors and colour.

use crate::support::harness::Test;
use crate::support::snapshot::snapshot;

#[test]
fn version_prints_name_and_crate_version() {
    Test::new()
        .arg("--version")
        .run()
        .code(0)
        .stdout_is(&format!("delta {}\n", env!("CARGO_PKG_VERSION")))
        .stderr_is("");
}

#[test]
fn help_lists_every_command_and_examples() {
    let run = Test::new().arg("--help").run().code(0).stderr_is("");
    for command in ["init", "tool", "completions"] {
        assert!(
            run.stdout()
                .lines()
                .any(|line| line.trim_start().starts_with(command)),
            "`{command}` missing from the command list:\n{}",
            run.stdout()
        );
    }
    snapshot!(run.stdout());
}

#[test]
fn every_subcommand_help_ends_with_examples() {
    for command in [
        &["init"][..],
        &["tool"],
        &["tool", "expand"],
        &["completions"],
    ] {
        for flag in ["-h", "--help"] {
            let run = Test::new().args(command).arg(flag).run().code(0);
            let examples = run
                .stdout()
                .split_once("Examples:\n")
                .map(|(_, examples)| examples)
                .unwrap_or_else(|| panic!("no examples in `{command:?} {flag}`"));
            let invocation = format!("  delta {}", command.join(" "));
            assert!(
                examples.lines().any(|line| line.starts_with(&invocation)),
                "no `{invocation}` example in `{command:?} {flag}`:\n{examples}"
            );
        }
    }
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let run = Test::new().arg("frobnicate").run().code(2).stdout_is("");
    snapshot!(run.stderr(), @"
    error: unrecognized subcommand 'frobnicate'

    Usage: delta <COMMAND>

    For more information, try '--help'.
    ");
}

#[test]
fn no_arguments_prints_help_on_stderr_and_exits_2() {
    let run = Test::new().run().code(2).stdout_is("");
    snapshot!(run.stderr(), @"
    Run AI agents the Unix way: every tool is a command, every step a journal line.

    Usage: delta <COMMAND>

    Commands:
      init         Create a new agent directory from a template
      continue     Continue an existing run: resume, answer its question, extend or retry it
      fork         Fork a run at a step into a new run and continue it
      replay       Replay a recorded run with its LLM answers and report the first divergence
      list-runs    List the runs of a workspace, most recently updated first
      run          Start a new run of an agent: the Think-Act-Observe loop, journaled in the workspace
      export       Export a run as an ATIF trajectory or an OpenTelemetry (OTLP/JSON) trace
      view         Write an HTML page of a run, or a table of a workspace's or a batch's runs
      tool         Inspect tool definitions: `delta tool expand` shows what each tool really runs
      batch        Run a task set as many runs, locally or as a Slurm array job; see its state
      eval         Run a benchmark in Harbor's task format: verified trials, scores with honest
                   statistics
      env          Where tools run: `delta env probe` shows what this machine can enforce
      completions  Print a shell completion script (bash, zsh, fish, elvish, powershell)
      help         Print this message or the help of the given subcommand(s)

    Options:
      -h, --help     Print help (see more with '--help')
      -V, --version  Print version

    Examples:
      # Create an agent
      delta init my-agent -t hello-world -y

      # See exactly how its tools will be executed
      delta tool expand my-agent

      # Look at a run in the browser
      delta view --run-id ID -w ./work --open

      # Export a run as an ATIF trajectory
      delta export --run-id ID -w ./work --format atif

      # Enable completions (bash)
      source <(delta completions bash)
    ");
}

#[test]
fn unknown_option_is_a_usage_error() {
    let run = Test::new()
        .args(["init", "x", "--frobnicate"])
        .run()
        .code(2);
    snapshot!(run.stderr(), @"
    error: unexpected argument '--frobnicate' found

      tip: to pass '--frobnicate' as a value, use '-- --frobnicate'

    Usage: delta init <NAME>

    For more information, try '--help'.
    ");
}

#[test]
fn errors_are_plain_when_stderr_is_not_a_terminal() {
    Test::new()
        .file("taken/keep.txt", "mine")
        .args(["init", "taken"])
        .run()
        .code(1)
        .stderr_is(
            "error: `taken` already exists\n  \
             = help: delta init never overwrites; choose another NAME or move `taken` away first\n",
        );
}

#[test]
fn colour_can_be_forced_and_no_color_wins() {
    let forced = Test::new()
        .file("taken/keep.txt", "mine")
        .args(["init", "taken"])
        .env("CLICOLOR_FORCE", "1")
        .run()
        .code(1);
    assert!(
        forced.stderr().starts_with("\u{1b}["),
        "expected a styled `error` label: {:?}",
        forced.stderr()
    );

    let no_color = Test::new()
        .file("taken/keep.txt", "mine")
        .args(["init", "taken"])
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .run()
        .code(1);
    // NO_COLOR strips every escape.
    snapshot!(no_color.stderr(), @"
    error: `taken` already exists
      = help: delta init never overwrites; choose another NAME or move `taken` away first
    ");
}

/// A subcommand's doc comment used to replace its long help, so `delta run --help` lost
/// its description of the output contract and exit codes.
#[test]
fn run_help_keeps_its_long_description_with_the_exit_codes() {
    let run = Test::new().args(["run", "--help"]).run().code(0);
    snapshot!(run.stdout());
}

//! `--version`, `--help`, usage errors and colour.

use crate::support::harness::Test;

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
    run.stdout_has("Examples:\n")
        .stdout_has("delta init my-agent");
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
    Test::new()
        .arg("frobnicate")
        .run()
        .code(2)
        .stdout_is("")
        .stderr_has("error: unrecognized subcommand 'frobnicate'")
        .stderr_has("Usage: delta <COMMAND>");
}

#[test]
fn no_arguments_prints_help_on_stderr_and_exits_2() {
    Test::new()
        .run()
        .code(2)
        .stdout_is("")
        .stderr_has("Usage: delta <COMMAND>")
        .stderr_has("Commands:");
}

#[test]
fn unknown_option_is_a_usage_error() {
    Test::new()
        .args(["init", "x", "--frobnicate"])
        .run()
        .code(2)
        .stderr_has("unexpected argument '--frobnicate'");
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
    assert!(
        !no_color.stderr().contains('\u{1b}'),
        "NO_COLOR must strip every escape: {:?}",
        no_color.stderr()
    );
}

/// A subcommand's doc comment used to replace its long help, so `delta run --help` lost
/// its description of the output contract and exit codes.
#[test]
fn run_help_keeps_its_long_description_with_the_exit_codes() {
    Test::new()
        .args(["run", "--help"])
        .run()
        .code(0)
        .stdout_has("stdout gets only the final result")
        .stdout_has("101 waiting for an answer (ask_human)");
}

//! `delta completions SHELL`.

use crate::harness::Test;

#[test]
fn completion_scripts_cover_the_commands() {
    for (shell, marker) in [
        ("bash", "_delta()"),
        ("zsh", "#compdef delta"),
        ("fish", "complete -c delta"),
    ] {
        let run = Test::new()
            .args(["completions", shell])
            .run()
            .code(0)
            .stderr_is("")
            .stdout_has(marker);
        for command in ["init", "tool", "expand", "completions"] {
            assert!(
                run.stdout().contains(command),
                "{shell} script does not mention `{command}`"
            );
        }
    }
}

#[test]
fn unknown_shell_is_a_usage_error() {
    Test::new()
        .args(["completions", "tcsh"])
        .cmd()
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicates::str::contains("invalid value 'tcsh'"));
}

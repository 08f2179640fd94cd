//! `delta completions SHELL`.

use clap::CommandFactory as _;
use delta_cli::cli::Cli;

use crate::support::harness::Test;
use crate::support::snapshot::snapshot;

/// Every subcommand clap knows, nested ones included, as (parent path, name):
/// `("delta", "run")`, `("delta tool", "expand")`. Taken from the parser itself, so a new
/// command (`continue`, `list-runs`…) is checked without editing this test.
fn subcommands() -> Vec<(String, String)> {
    fn walk(command: &clap::Command, path: &str, found: &mut Vec<(String, String)>) {
        for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
            let name = sub.get_name().to_owned();
            found.push((path.to_owned(), name.clone()));
            walk(sub, &format!("{path} {name}"), found);
        }
    }
    let mut found = Vec::new();
    walk(&Cli::command(), "delta", &mut found);
    found
}

/// Whether `shell`'s script offers `name` after `parent` (`delta`, `delta tool`). Each
/// check looks where clap_complete lists the children of `parent`, not anywhere in the
/// script: the generated `help` subcommand names every command too.
fn offers(shell: &str, script: &str, parent: &str, name: &str) -> bool {
    let words: Vec<&str> = parent.split(' ').collect();
    match shell {
        // `case "${cmd},${i}" in … delta,run)` and `delta__subcmd__tool,expand)`.
        "bash" => script.contains(&format!("{},{name})", words.join("__subcmd__"))),
        // `commands=( 'run:Start a new run…' … ) _describe -t commands 'delta commands'`.
        "zsh" => {
            let describe = format!("_describe -t commands '{parent} commands'");
            script.find(&describe).is_some_and(|end| {
                let start = script[..end].rfind("commands=(").unwrap_or(0);
                script[start..end].contains(&format!("'{name}:"))
            })
        }
        // `complete -c delta -n "__fish_delta_needs_command" -f -a "run"`, and for a
        // child of `tool`: `-n "__fish_delta_using_subcommand tool; and not …" -f -a "expand"`.
        "fish" => {
            let condition = match words.as_slice() {
                ["delta"] => "\"__fish_delta_needs_command\"".to_owned(),
                ["delta", child] => format!("\"__fish_delta_using_subcommand {child}; and not "),
                _ => panic!("teach this check about fish completions of `{parent}`"),
            };
            let option = format!("-a \"{name}\"");
            script
                .lines()
                .any(|line| line.contains(&condition) && line.contains(&option))
        }
        other => panic!("no check for {other}"),
    }
}

#[test]
fn completion_scripts_offer_every_subcommand_clap_knows() {
    let subcommands = subcommands();
    assert!(
        subcommands.iter().any(|(_, name)| name == "run"),
        "{subcommands:?}"
    );
    // The whole scripts are pinned; `offers` also checks, against clap's own command
    // list, that nothing is missing from them.
    for shell in ["bash", "zsh", "fish"] {
        let run = Test::new()
            .args(["completions", shell])
            .run()
            .code(0)
            .stderr_is("");
        snapshot!(format!("completions_{shell}"), run.stdout());
        for (parent, name) in &subcommands {
            assert!(
                offers(shell, run.stdout(), parent, name),
                "the {shell} script does not offer `{parent} {name}`"
            );
        }
    }
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let run = Test::new()
        .args(["completions", "tcsh"])
        .run()
        .code(2)
        .stdout_is("");
    snapshot!(run.stderr(), @"
    error: invalid value 'tcsh' for '<SHELL>'
      [possible values: bash, elvish, fish, powershell, zsh]

      tip: a similar value exists: 'zsh'

    For more information, try '--help'.
    ");
}

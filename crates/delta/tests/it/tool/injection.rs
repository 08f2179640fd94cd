//! Hostile values through every kind of tool reach the program byte for byte as ONE
//! argument, and nothing on disk changes.
//!
//! The program is `printf '%s\0' ARGS…`: `%s` copies each argument unchanged, NUL ends each
//! one (a NUL cannot occur inside an argument), and printf takes no options after its
//! format, so `-n`, `--` or `--help` as values are printed like any other text. The exec:
//! and command: tools run coreutils' `/usr/bin/printf` directly; the shell: tools use sh's
//! built-in printf, which behaves the same for `%s`.

use std::path::Path;

use delta_engine::tool::ToolSpec;
use serde_json::json;

use crate::tool::support::{Workspace, call, printed_args, spec};

fn corpus() -> Vec<String> {
    let mut values: Vec<String> = [
        "; rm -f canary",
        "; rm -f canary; touch pwned",
        "$(rm -f canary)",
        "$(touch pwned)",
        "`touch pwned`",
        "`rm -f canary`",
        "\"; touch pwned; \"",
        "'; touch pwned; '",
        "'; echo pwned; '",
        "\" ; rm -rf canary ; \"",
        "line one\nrm -f canary\ntouch pwned",
        "${HOME}",
        "$HOME",
        "${x:raw}",
        "$1 $2 $@ $*",
        "$((1+1))",
        "*",
        "canary*",
        "[a-z]*",
        "?",
        "~",
        "!!",
        "-n",
        "--",
        "--help",
        "-e \\n",
        "",
        " ",
        "   leading and trailing   ",
        "a b\tc",
        "| touch pwned",
        "&& touch pwned",
        "|| touch pwned",
        "& touch pwned &",
        "> pwned",
        ">> canary",
        "< canary",
        "\\",
        "back\\slash\\n\\\\",
        "x'y\"z`w",
        "héllo wörld ✓ 日本語 🙂",
        "\u{1}\u{2}\u{1b}[31mred\u{7f}",
        "\r\n",
        "#comment",
        "EOF\ntouch pwned\nEOF",
        "\"${IFS}\"",
        "%s%d%n",
    ]
    .map(str::to_string)
    .to_vec();
    values.push("A".repeat(100 * 1024));
    values
}

/// A tool and how its printed arguments relate to the value.
struct Case {
    tool: ToolSpec,
    expected: fn(&str) -> Vec<String>,
}

fn one(value: &str) -> Vec<String> {
    vec![value.to_string()]
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            tool: spec(r#"{name: exec_appended, exec: "/usr/bin/printf '%s\\0' ${v}"}"#),
            expected: one,
        },
        Case {
            tool: spec(r#"{name: exec_in_word, exec: "/usr/bin/printf '%s\\0' pre${v}post"}"#),
            expected: |v| vec![format!("pre{v}post")],
        },
        Case {
            tool: spec(r#"{name: exec_quoted, exec: "/usr/bin/printf '%s\\0' \"${v}\" last"}"#),
            expected: |v| vec![v.to_string(), "last".to_string()],
        },
        Case {
            tool: spec(r#"{name: shell_unquoted, shell: "printf '%s\\0' ${v}"}"#),
            expected: one,
        },
        Case {
            tool: spec(r#"{name: shell_double_quoted, shell: "printf '%s\\0' \"<${v}>\""}"#),
            expected: |v| vec![format!("<{v}>")],
        },
        Case {
            tool: spec(
                r#"{name: shell_substitution, shell: "x=$(printf '%s' ${v}); printf '%s\\0' \"$x\""}"#,
            ),
            // $( ) strips trailing newlines, as sh always does.
            expected: |v| vec![v.trim_end_matches('\n').to_string()],
        },
        Case {
            tool: spec(
                "{name: shell_heredoc, shell: \"cat <<EOF | tr '\\\\n' '\\\\0'\\n${v}\\nEOF\\n\"}",
            ),
            expected: |v| v.split('\n').map(str::to_string).collect(),
        },
        Case {
            tool: spec(
                r#"{name: command_argument, command: ["/usr/bin/printf", "%s\\0"], parameters: [{name: v}]}"#,
            ),
            expected: one,
        },
        Case {
            tool: spec(
                r#"{name: command_option, command: ["/usr/bin/printf", "%s\\0"], parameters: [{name: v, inject_as: option, option_name: "--opt"}]}"#,
            ),
            expected: |v| vec!["--opt".to_string(), v.to_string()],
        },
    ]
}

async fn check(case: &Case, value: &str, ws: &Workspace, before: &[String]) {
    let out = call(&case.tool, json!({ "v": value }), ws.path()).await;
    assert_eq!(
        printed(&out),
        (case.expected)(value),
        "tool {} with value {:?}",
        case.tool.name,
        truncate(value)
    );
    assert!(
        ws.canary_intact(),
        "canary touched by {} / {:?}",
        case.tool.name,
        truncate(value)
    );
    assert_eq!(
        ws.entries(),
        before,
        "files changed by {} / {:?}",
        case.tool.name,
        truncate(value)
    );
}

fn truncate(value: &str) -> String {
    value.chars().take(60).collect()
}

#[tokio::test]
async fn hostile_values_arrive_as_one_argument_and_change_nothing() {
    let ws = Workspace::new();
    ws.write("job.tmp", "");
    let before = ws.entries();
    let values = corpus();
    assert!(values.len() >= 30);
    for case in &cases() {
        for value in &values {
            check(case, value, &ws, &before).await;
        }
    }
}

#[tokio::test]
async fn stdin_values_arrive_byte_for_byte() {
    let ws = Workspace::new();
    let before = ws.entries();
    let tool = spec(r#"{name: cat_stdin, exec: "cat", stdin: v}"#);
    for value in corpus() {
        let out = call(&tool, json!({ "v": value }), ws.path()).await;
        assert_eq!(out.stdout.to_vec(), value.as_bytes());
        assert!(ws.canary_intact());
        assert_eq!(ws.entries(), before);
    }
}

fn printed(outcome: &delta_engine::process::ProcessOutcome) -> Vec<String> {
    printed_args(outcome)
        .into_iter()
        .map(|a| String::from_utf8(a).unwrap())
        .collect()
}

async fn run_raw(value: &str, dir: &Path) -> Vec<String> {
    let tool = spec(r#"{name: shell_raw, shell: "printf '%s\\0' ${v:raw}"}"#);
    printed(&call(&tool, json!({ "v": value }), dir).await)
}

/// Only `${x:raw}` in shell: lets the shell split and glob a value — and even then the
/// value is never parsed as commands.
#[tokio::test]
async fn raw_values_are_split_and_globbed_but_not_run() {
    let ws = Workspace::new();
    ws.write("b.log", "");
    let before = ws.entries();

    assert_eq!(run_raw("a b\tc", ws.path()).await, ["a", "b", "c"]);
    assert_eq!(run_raw("*.log", ws.path()).await, ["b.log"]);
    assert_eq!(run_raw("*", ws.path()).await, ["b.log", "canary"]);
    assert_eq!(
        run_raw("$(touch pwned)", ws.path()).await,
        ["$(touch", "pwned)"]
    );
    assert_eq!(
        run_raw("; rm -f canary", ws.path()).await,
        [";", "rm", "-f", "canary"]
    );
    assert_eq!(run_raw("${HOME}", ws.path()).await, ["${HOME}"]);
    assert!(ws.canary_intact());
    assert_eq!(ws.entries(), before);

    // The same values through a quoted placeholder stay one word each.
    let quoted = spec(r#"{name: shell_quoted, shell: "printf '%s\\0' ${v}"}"#);
    for value in ["a b\tc", "*.log", "*"] {
        let out = call(&quoted, json!({ "v": value }), ws.path()).await;
        assert_eq!(printed(&out), [value]);
    }
}

#[tokio::test]
async fn literal_placeholder_in_a_command_array_is_never_substituted() {
    let ws = Workspace::new();
    let tool = spec(
        r#"{name: t, command: ["sh", "-c", "printf '%s\\0' \"${v}\" \"$1\"", "--"], parameters: [{name: v}]}"#,
    );
    // sh sees `${v}` as its own (unset) variable: it is not the parameter.
    let out = call(&tool, json!({ "v": "$(touch pwned)" }), ws.path()).await;
    assert_eq!(printed(&out), ["", "$(touch pwned)"]);
    assert!(!ws.path().join("pwned").exists());
}

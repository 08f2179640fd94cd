//! The 19 verification tests of seed 003 §10, at library level: expand → invocation →
//! run_process in an isolated temporary directory. Security tests check the filesystem
//! (a canary file in the directory stands in for the seed's `/tmp` markers).

use serde_json::json;

use crate::tool::support::{Workspace, call, expand_error, spec, stdout};

// --- Test Suite 1: exec: mode ---

#[test]
fn t1_1_exec_rejects_pipe() {
    assert_eq!(
        expand_error(r#"{name: test_exec_reject_pipe, exec: "cat ${file} | wc -l"}"#),
        "Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe."
    );
}

#[test]
fn t1_2_exec_rejects_redirection() {
    let message =
        expand_error(r#"{name: test_exec_reject_redirect, exec: "echo ${msg} > ${file}"}"#);
    assert!(message.starts_with("Shell metacharacter '>' not allowed in exec: mode."));
}

#[tokio::test]
async fn t1_3_exec_passes_injection_literally() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_exec_safe, exec: "echo ${message}"}"#);
    let out = call(&tool, json!({"message": "; rm -rf canary"}), ws.path()).await;
    assert_eq!(stdout(&out), "; rm -rf canary\n");
    assert_eq!(out.exit_code, Some(0));
    assert!(ws.canary_intact());
}

// --- Test Suite 2: shell: mode ---

#[tokio::test]
async fn t2_1_shell_semicolon_is_literal() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_shell_semicolon, shell: "echo ${input}"}"#);
    let value = "; rm -rf canary; echo done";
    let out = call(&tool, json!({"input": value}), ws.path()).await;
    assert_eq!(stdout(&out), format!("{value}\n"));
    assert_eq!(out.exit_code, Some(0));
    assert!(ws.canary_intact());
}

#[tokio::test]
async fn t2_2_shell_nested_quotes_are_literal() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_shell_quotes, shell: "grep ${pattern} ${file}"}"#);
    ws.write("sample.txt", "a line with \"test\" in quotes\n");
    ws.write("other.txt", "a line with test but no quotes\n");

    let found = call(
        &tool,
        json!({"pattern": "\"test\"", "file": "sample.txt"}),
        ws.path(),
    )
    .await;
    assert_eq!(found.exit_code, Some(0));
    assert_eq!(stdout(&found), "a line with \"test\" in quotes\n");

    let absent = call(
        &tool,
        json!({"pattern": "\"test\"", "file": "other.txt"}),
        ws.path(),
    )
    .await;
    assert_eq!(absent.exit_code, Some(1));
    assert_eq!(stdout(&absent), "");
}

#[tokio::test]
async fn t2_3_shell_command_substitution_is_literal() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_shell_command_sub, shell: "echo ${input}"}"#);
    let out = call(&tool, json!({"input": "$(whoami)"}), ws.path()).await;
    assert_eq!(stdout(&out), "$(whoami)\n");
    let out = call(&tool, json!({"input": "$(touch pwned)"}), ws.path()).await;
    assert_eq!(stdout(&out), "$(touch pwned)\n");
    assert!(!ws.path().join("pwned").exists());
}

#[tokio::test]
async fn t2_4_shell_pipe_in_parameter_is_literal() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_shell_pipe_in_param, shell: "echo ${input}"}"#);
    let out = call(&tool, json!({"input": "test | touch pwned"}), ws.path()).await;
    assert_eq!(stdout(&out), "test | touch pwned\n");
    let out = call(&tool, json!({"input": "test | grep x"}), ws.path()).await;
    // Had grep run, it would have printed nothing (no "x" in "test").
    assert_eq!(stdout(&out), "test | grep x\n");
    assert!(!ws.path().join("pwned").exists());
}

// --- Test Suite 3: :raw ---

#[tokio::test]
async fn t3_1_raw_value_is_split_into_separate_words() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_raw_flags, shell: "echo ${flags:raw}"}"#);

    // echo receives `-n` and `-e` as separate words: `-n` takes effect (no newline). dash's
    // echo has no `-e` and prints it; bash's takes it as a flag and prints nothing.
    let out = call(&tool, json!({"flags": "-n -e"}), ws.path()).await;
    assert!(
        matches!(stdout(&out).as_str(), "-e" | ""),
        "{:?}",
        stdout(&out)
    );

    // Quoted, the same value is one word that echo prints.
    let quoted = spec(r#"{name: test_quoted_flags, shell: "echo ${flags}"}"#);
    let out = call(&quoted, json!({"flags": "-n -e"}), ws.path()).await;
    assert_eq!(stdout(&out), "-n -e\n");

    // `\n` becomes a newline: with dash's echo always, with bash's through `-e`.
    let out = call(&tool, json!({"flags": "-e \\nhello"}), ws.path()).await;
    let text = stdout(&out);
    // What precedes the newline depends on the shell's echo (dash or bash): a search.
    assert!(
        text.ends_with("\nhello\n") && !text.contains("\\n"),
        "{text:?}"
    );
}

#[test]
fn t3_2_raw_rejected_in_exec() {
    assert_eq!(
        expand_error(r#"{name: test_raw_reject_in_exec, exec: "echo ${flags:raw}"}"#),
        ":raw modifier is only allowed in shell: mode"
    );
}

/// Seed 003 §10 Test 3.3 expects `echo ${input:raw}` with `; rm -rf FILE` to delete FILE.
/// No POSIX shell does that: `:raw` is `$1` unquoted (§3.5, §4.3), and the result of a
/// parameter expansion is only split into words and glob-expanded, never parsed again as
/// commands (POSIX.1-2017 XCU 2.6). So the seed's exact tool prints the text, and this is
/// asserted below as what really happens. What `:raw` does bypass is the one-value-one-word
/// guarantee, and that is what deletes the canary here: a tool meant to remove one
/// `NAME.tmp` file removes the canary when the value smuggles in an extra word.
#[tokio::test]
async fn t3_3_raw_lets_a_value_inject_words_and_delete_the_canary() {
    let ws = Workspace::new();
    ws.write("job.tmp", "");
    let raw = spec(r#"{name: test_raw_vulnerability, shell: "rm -f ${name:raw}.tmp"}"#);
    let out = call(&raw, json!({"name": "canary job"}), ws.path()).await;
    assert_eq!(out.exit_code, Some(0));
    assert!(
        !ws.path().join("canary").exists(),
        "canary not deleted via :raw"
    );
    assert!(!ws.path().join("job.tmp").exists());

    // The same tool without :raw keeps the value one word: nothing matches, nothing goes.
    let ws = Workspace::new();
    ws.write("job.tmp", "");
    let safe = spec(r#"{name: test_raw_safe, shell: "rm -f ${name}.tmp"}"#);
    call(&safe, json!({"name": "canary job"}), ws.path()).await;
    assert!(ws.canary_intact());
    assert!(ws.path().join("job.tmp").exists());

    // The seed's literal tool and value: split into words, glob-free, printed, not run.
    let ws = Workspace::new();
    let seed = spec(r#"{name: test_raw_vulnerability, shell: "echo ${input:raw}"}"#);
    let out = call(&seed, json!({"input": "; rm -rf canary"}), ws.path()).await;
    assert_eq!(stdout(&out), "; rm -rf canary\n");
    assert!(ws.canary_intact());
}

// --- Test Suite 4: tokenization ---

#[tokio::test]
async fn t4_1_quoted_static_argument_keeps_its_space() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_exec_quoted_static, exec: 'grep "fixed pattern" ${file}'}"#);
    ws.write(
        "test.txt",
        "fixed pattern with\nfixed  pattern\nfixed\npattern\n",
    );
    let out = call(&tool, json!({"file": "test.txt"}), ws.path()).await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(stdout(&out), "fixed pattern with\n");
}

#[tokio::test]
async fn t4_2_multiple_placeholders_are_separate_arguments() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_exec_multi_params, exec: "echo ${arg1} ${arg2} ${arg3}"}"#);
    let out = call(
        &tool,
        json!({"arg1": "first", "arg2": "second", "arg3": "third"}),
        ws.path(),
    )
    .await;
    assert_eq!(stdout(&out), "first second third\n");
    let invocation = tool
        .invocation(&crate::tool::support::args(
            json!({"arg1": "first", "arg2": "second", "arg3": "third"}),
        ))
        .unwrap();
    assert_eq!(invocation.argv, ["echo", "first", "second", "third"]);
}

// --- Test Suite 5: stdin ---

#[tokio::test]
async fn t5_1_stdin_in_exec_mode() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_stdin_exec, exec: "wc -l", stdin: content}"#);
    let out = call(
        &tool,
        json!({"content": "line1\nline2\nline3\n"}),
        ws.path(),
    )
    .await;
    assert_eq!(stdout(&out).trim(), "3");
    // The seed's value has no final newline; wc -l counts newlines, so exactly the bytes
    // given (nothing appended) give 2.
    let out = call(&tool, json!({"content": "line1\nline2\nline3"}), ws.path()).await;
    assert_eq!(stdout(&out).trim(), "2");
}

#[tokio::test]
async fn t5_2_stdin_in_shell_mode() {
    let ws = Workspace::new();
    let tool = spec(r#"{name: test_stdin_shell, shell: "grep ${pattern}", stdin: content}"#);
    let out = call(
        &tool,
        json!({"pattern": "test", "content": "test1\nfoo\ntest2"}),
        ws.path(),
    )
    .await;
    assert_eq!(stdout(&out), "test1\ntest2\n");
}

// --- Test Suite 6: multi-line scripts ---

#[tokio::test]
async fn t6_1_multiline_script_keeps_value_literal() {
    let ws = Workspace::new();
    let tool = spec(
        "
name: test_multiline
shell: |
  echo \"Start\"
  echo ${value}
  echo \"End\"
",
    );
    let out = call(&tool, json!({"value": "test ; echo injected"}), ws.path()).await;
    assert_eq!(stdout(&out), "Start\ntest ; echo injected\nEnd\n");
    assert_eq!(stdout(&out).matches("injected").count(), 1);
}

#[tokio::test]
async fn t6_2_multiline_pipes() {
    let ws = Workspace::new();
    let tool = spec(
        "
name: test_multiline_pipes
shell: |
  echo ${text} |
  tr '[:lower:]' '[:upper:]' |
  wc -c
",
    );
    let out = call(&tool, json!({"text": "hello"}), ws.path()).await;
    assert_eq!(stdout(&out).trim(), "6");
}

// --- Test Suite 7: parameter merging ---

#[tokio::test]
async fn t7_1_default_from_parameters_block() {
    let ws = Workspace::new();
    let tool = spec(
        r#"{name: test_param_merge, exec: "echo ${msg}", parameters: [{name: msg, description: "Message to print", default: "hello"}]}"#,
    );
    assert_eq!(
        tool.parameters[0].description.as_deref(),
        Some("Message to print")
    );
    let out = call(&tool, json!({}), ws.path()).await;
    assert_eq!(stdout(&out), "hello\n");
    let out = call(&tool, json!({"msg": "given"}), ws.path()).await;
    assert_eq!(stdout(&out), "given\n");
}

#[test]
fn t7_2_inject_as_cannot_be_overridden() {
    assert_eq!(
        expand_error(
            r#"{name: test_param_conflict, shell: "grep ${pattern} ${file}", parameters: [{name: pattern, inject_as: stdin}]}"#
        ),
        "Cannot override inject_as for parameter 'pattern' (inferred: argument, explicit: stdin)"
    );
}

#[test]
fn t7_3_undefined_parameter() {
    assert_eq!(
        expand_error(
            r#"{name: test_undefined_param, exec: "echo ${msg}", parameters: [{name: undefined_param, description: "This param doesn't exist in template"}]}"#
        ),
        "Parameter 'undefined_param' not found in template"
    );
}

// --- Behaviours stated in seed 003 §3.8 and §3.9 ---

#[tokio::test]
async fn s3_8_2_empty_values_are_empty_arguments() {
    let ws = Workspace::new();
    let list = spec(r#"{name: list_directory, exec: "ls ${directory}"}"#);
    let out = call(&list, json!({"directory": ""}), ws.path()).await;
    assert_ne!(
        out.exit_code,
        Some(0),
        "ls \"\" must fail, not list the directory"
    );
    // ls's output for a failed `ls ""` is the OS's: searched for the directory's file.
    assert!(!stdout(&out).contains("canary"));

    ws.write("data.txt", "one\ntwo\n");
    let search = spec(r#"{name: search_pattern, shell: "grep ${pattern} ${file}"}"#);
    let out = call(
        &search,
        json!({"pattern": "", "file": "data.txt"}),
        ws.path(),
    )
    .await;
    assert_eq!(stdout(&out), "one\ntwo\n");
}

#[tokio::test]
async fn s3_8_3_and_3_8_4_special_characters_and_placeholder_syntax_are_literal() {
    let ws = Workspace::new();
    let path = spec(r#"{name: path_test, exec: "echo ${path}"}"#);
    let out = call(&path, json!({"path": "${HOME}/test"}), ws.path()).await;
    assert_eq!(stdout(&out), "${HOME}/test\n");
    let message = spec(r#"{name: echo_message, exec: "echo ${msg}"}"#);
    let out = call(&message, json!({"msg": "Value is ${VARIABLE}"}), ws.path()).await;
    assert_eq!(stdout(&out), "Value is ${VARIABLE}\n");
    let echo = spec(r#"{name: echo_test, shell: "echo ${message}"}"#);
    let out = call(&echo, json!({"message": "; rm -rf canary"}), ws.path()).await;
    assert_eq!(stdout(&out), "; rm -rf canary\n");
    assert!(ws.canary_intact());
}

#[tokio::test]
async fn s3_8_5_whitespace_is_preserved() {
    let ws = Workspace::new();
    let write = spec(r#"{name: write_content, exec: "tee ${filename}", stdin: content}"#);
    call(
        &write,
        json!({"filename": "out.txt", "content": "line1\nline2\nline3"}),
        ws.path(),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).unwrap(),
        "line1\nline2\nline3"
    );
    let spaced = spec(r#"{name: echo_spaced, exec: "echo ${text}"}"#);
    let out = call(&spaced, json!({"text": "  hello  "}), ws.path()).await;
    assert_eq!(stdout(&out), "  hello  \n");
}

#[tokio::test]
async fn s3_9_ap8_globs_expand_only_with_raw_in_shell() {
    let ws = Workspace::new();
    ws.write("a.log", "");
    ws.write("b.log", "");
    let exec = spec(r#"{name: list_all_logs, exec: "ls ${pattern}"}"#);
    let out = call(&exec, json!({"pattern": "*.log"}), ws.path()).await;
    assert_ne!(
        out.exit_code,
        Some(0),
        "exec: must look for a file literally named *.log"
    );
    let raw = spec(r#"{name: list_all_logs, shell: "ls ${pattern:raw}"}"#);
    let out = call(&raw, json!({"pattern": "*.log"}), ws.path()).await;
    assert_eq!(stdout(&out), "a.log\nb.log\n");
}

#[tokio::test]
async fn s3_9_ap3_pattern_on_stdin() {
    let ws = Workspace::new();
    ws.write("data.txt", "alpha\nbeta\ngamma\n");
    let tool = spec(r#"{name: search_tool, shell: "grep -f - ${file}", stdin: pattern}"#);
    let out = call(
        &tool,
        json!({"file": "data.txt", "pattern": "beta\n"}),
        ws.path(),
    )
    .await;
    assert_eq!(stdout(&out), "beta\n");
}

//! Every tool example of seed 003 §3, §4 and §10 (and seed 000 §2.2), expanded and compared
//! with the exact `delta tool expand` output, and every error case with its exact message.

use delta_engine::tool::{ToolError, render_expanded};
use rstest::rstest;

use crate::support::snapshot::{name, snapshot};
use crate::tool::support::{expand_error, spec, try_expand};

fn rendered(yaml: &str) -> String {
    render_expanded(&[spec(yaml)])
}

#[rstest]
// seed 003 §3.3
#[case::s3_3_list_files(
    r#"
name: list_files
exec: "ls -F ${directory}"
"#,
    r#"tools:
  - name: list_files
    command: ["ls", "-F"]
    parameters:
      - name: directory
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_3_run_script_safely(
    r#"
name: run_script_safely
exec: "bash -c ${script}"
"#,
    r#"tools:
  - name: run_script_safely
    command: ["bash", "-c"]
    parameters:
      - name: script
        type: string
        inject_as: argument
        position: 0
"#
)]
// seed 003 §3.3.1 and seed 000 §2.2.5
#[case::s3_3_1_search_pattern(
    r#"
name: search_pattern
exec: 'grep "fixed pattern" ${file}'
"#,
    r#"tools:
  - name: search_pattern
    command: ["grep", "fixed pattern"]
    parameters:
      - name: file
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_3_1_list_dirs(
    r#"
name: list_dirs
exec: "ls -la ${dir1} ${dir2}"
"#,
    r#"tools:
  - name: list_dirs
    command: ["ls", "-la"]
    parameters:
      - name: dir1
        type: string
        inject_as: argument
        position: 0
      - name: dir2
        type: string
        inject_as: argument
        position: 1
"#
)]
// seed 003 §3.4 and §4.2, seed 000 §2.2.2
#[case::s4_2_count_matches(
    r#"
name: count_matches
shell: "grep ${pattern} ${file} | wc -l"
"#,
    r#"tools:
  - name: count_matches
    command: ["sh", "-c", "grep \"$1\" \"$2\" | wc -l", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: file
        type: string
        inject_as: argument
        position: 1
"#
)]
// seed 003 §3.5 and §4.3
#[case::s4_3_run_docker(
    r#"
name: run_docker
shell: "docker run ${options:raw} ${image}"
"#,
    r#"tools:
  - name: run_docker
    command: ["sh", "-c", "docker run $1 \"$2\"", "--"]
    parameters:
      - name: options
        type: string
        inject_as: argument
        position: 0
      - name: image
        type: string
        inject_as: argument
        position: 1
"#
)]
// seed 003 §3.6, §3.9 anti-pattern 6, seed 000 §2.2.1
#[case::s3_6_write_file(
    r#"
name: write_file
exec: "tee ${filename}"
stdin: content
"#,
    r#"tools:
  - name: write_file
    command: ["tee"]
    parameters:
      - name: filename
        type: string
        inject_as: argument
        position: 0
      - name: content
        type: string
        inject_as: stdin
"#
)]
// seed 003 §3.7
#[case::s3_7_search(
    r#"
name: search
exec: "grep ${pattern} ${file}"
parameters:
  - name: file
    description: "The file to search within."
    default: "./data.txt"
"#,
    r#"tools:
  - name: search
    command: ["grep"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: file
        type: string
        description: The file to search within.
        inject_as: argument
        position: 1
        default: ./data.txt
"#
)]
// seed 003 §3.7.1 and seed 000 §2.2.4
#[case::s3_7_1_search_tool(
    r#"
name: search_tool
exec: "grep ${pattern} ${file}"
parameters:
  - name: file
    description: "File to search in"
    default: "./data.txt"
  - name: pattern
    description: "Search pattern (regex supported)"
"#,
    r#"tools:
  - name: search_tool
    command: ["grep"]
    parameters:
      - name: pattern
        type: string
        description: Search pattern (regex supported)
        inject_as: argument
        position: 0
      - name: file
        type: string
        description: File to search in
        inject_as: argument
        position: 1
        default: ./data.txt
"#
)]
#[case::s3_7_1_write_tool(
    r#"
name: write_tool
exec: "tee ${filename}"
stdin: content
parameters:
  - name: content
    description: "Content to write"
"#,
    r#"tools:
  - name: write_tool
    command: ["tee"]
    parameters:
      - name: filename
        type: string
        inject_as: argument
        position: 0
      - name: content
        type: string
        description: Content to write
        inject_as: stdin
"#
)]
// seed 003 §3.8.1
#[case::s3_8_1_multi_line_script(
    "
name: multi_line_script
shell: |
  export VAR=${value}
  echo \"Processing...\"
  ./script.sh \"$VAR\"
",
    r#"tools:
  - name: multi_line_script
    command: ["sh", "-c", "export VAR=\"$1\"\necho \"Processing...\"\n./script.sh \"$VAR\"\n", "--"]
    parameters:
      - name: value
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_8_1_long_command(
    "
name: long_command
shell: >
  docker run --rm
  -v ${volume}:/data
  ${image}
",
    r#"tools:
  - name: long_command
    command: ["sh", "-c", "docker run --rm -v \"$1\":/data \"$2\"\n", "--"]
    parameters:
      - name: volume
        type: string
        inject_as: argument
        position: 0
      - name: image
        type: string
        inject_as: argument
        position: 1
"#
)]
// seed 003 §3.8.2
#[case::s3_8_2_list_directory(
    r#"
name: list_directory
exec: "ls ${directory}"
"#,
    r#"tools:
  - name: list_directory
    command: ["ls"]
    parameters:
      - name: directory
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_8_2_search_pattern_shell(
    r#"
name: search_pattern
shell: "grep ${pattern} ${file}"
"#,
    r#"tools:
  - name: search_pattern
    command: ["sh", "-c", "grep \"$1\" \"$2\"", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: file
        type: string
        inject_as: argument
        position: 1
"#
)]
// seed 003 §3.8.3 – §3.8.5 (and §10 Tests 2.1, 2.3, 2.4, 1.3, 4.2)
#[case::s3_8_3_echo_test(
    r#"
name: echo_test
shell: "echo ${message}"
"#,
    r#"tools:
  - name: echo_test
    command: ["sh", "-c", "echo \"$1\"", "--"]
    parameters:
      - name: message
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_8_3_path_test(
    r#"
name: path_test
exec: "echo ${path}"
"#,
    r#"tools:
  - name: path_test
    command: ["echo"]
    parameters:
      - name: path
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_8_5_write_content(
    r#"
name: write_content
exec: "tee ${filename}"
stdin: content
"#,
    r#"tools:
  - name: write_content
    command: ["tee"]
    parameters:
      - name: filename
        type: string
        inject_as: argument
        position: 0
      - name: content
        type: string
        inject_as: stdin
"#
)]
#[case::s3_8_3_command_test(
    r#"
name: command_test
shell: "echo ${input}"
"#,
    r#"tools:
  - name: command_test
    command: ["sh", "-c", "echo \"$1\"", "--"]
    parameters:
      - name: input
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_8_3_quote_test(
    r#"
name: quote_test
shell: "grep ${pattern} ${file}"
"#,
    r#"tools:
  - name: quote_test
    command: ["sh", "-c", "grep \"$1\" \"$2\"", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: file
        type: string
        inject_as: argument
        position: 1
"#
)]
#[case::s3_8_4_echo_message(
    r#"
name: echo_message
exec: "echo ${msg}"
"#,
    r#"tools:
  - name: echo_message
    command: ["echo"]
    parameters:
      - name: msg
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_8_5_echo_spaced(
    r#"
name: echo_spaced
exec: "echo ${text}"
"#,
    r#"tools:
  - name: echo_spaced
    command: ["echo"]
    parameters:
      - name: text
        type: string
        inject_as: argument
        position: 0
"#
)]
// seed 003 §3.9
#[case::s3_9_ap1_shell(
    r#"
name: count_lines
shell: "cat ${file} | wc -l"
"#,
    r#"tools:
  - name: count_lines
    command: ["sh", "-c", "cat \"$1\" | wc -l", "--"]
    parameters:
      - name: file
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap1_native(
    r#"
name: count_lines
exec: "wc -l ${file}"
"#,
    r#"tools:
  - name: count_lines
    command: ["wc", "-l"]
    parameters:
      - name: file
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap2_echo_flags(
    r#"
name: echo_flags
shell: "echo ${flags:raw}"
"#,
    r#"tools:
  - name: echo_flags
    command: ["sh", "-c", "echo $1", "--"]
    parameters:
      - name: flags
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap3_stdin_pattern(
    r#"
name: search_tool
shell: "grep -f - ${file}"
stdin: pattern
"#,
    r#"tools:
  - name: search_tool
    command: ["sh", "-c", "grep -f - \"$1\"", "--"]
    parameters:
      - name: file
        type: string
        inject_as: argument
        position: 0
      - name: pattern
        type: string
        inject_as: stdin
"#
)]
#[case::s3_9_ap4_good_tool(
    r#"
name: good_tool
exec: "echo ${msg}"
"#,
    r#"tools:
  - name: good_tool
    command: ["echo"]
    parameters:
      - name: msg
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap5_shell(
    r#"
name: write_log
shell: "echo ${msg} > ${logfile}"
"#,
    r#"tools:
  - name: write_log
    command: ["sh", "-c", "echo \"$1\" > \"$2\"", "--"]
    parameters:
      - name: msg
        type: string
        inject_as: argument
        position: 0
      - name: logfile
        type: string
        inject_as: argument
        position: 1
"#
)]
#[case::s3_9_ap5_tee(
    r#"
name: write_log
exec: "tee ${logfile}"
stdin: msg
"#,
    r#"tools:
  - name: write_log
    command: ["tee"]
    parameters:
      - name: logfile
        type: string
        inject_as: argument
        position: 0
      - name: msg
        type: string
        inject_as: stdin
"#
)]
#[case::s3_9_ap6_wrong_without_stdin(
    r#"
name: write_file
exec: "tee ${filename}"
"#,
    r#"tools:
  - name: write_file
    command: ["tee"]
    parameters:
      - name: filename
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap7_bad_path(
    r#"
name: bad_path
exec: "ls ${directory}"
"#,
    r#"tools:
  - name: bad_path
    command: ["ls"]
    parameters:
      - name: directory
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap7_engine_variable(
    r#"
name: list_agent_files
exec: "ls ${AGENT_HOME}/config"
"#,
    r#"tools:
  - name: list_agent_files
    command: ["ls", "/agents/demo/config"]
"#
)]
#[case::s3_9_ap8_glob_in_exec(
    r#"
name: list_all_logs
exec: "ls ${pattern}"
"#,
    r#"tools:
  - name: list_all_logs
    command: ["ls"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_ap8_glob_raw(
    r#"
name: list_all_logs
shell: "ls ${pattern:raw}"
"#,
    r#"tools:
  - name: list_all_logs
    command: ["sh", "-c", "ls $1", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::s3_9_risky_tool(
    r#"
name: risky_tool
shell: "grep ${pattern:raw} ${file}"
"#,
    r#"tools:
  - name: risky_tool
    command: ["sh", "-c", "grep $1 \"$2\"", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: file
        type: string
        inject_as: argument
        position: 1
"#
)]
#[case::s3_9_safer_tool(
    r#"
name: safer_tool
shell: "grep ${pattern} ${file}"
"#,
    r#"tools:
  - name: safer_tool
    command: ["sh", "-c", "grep \"$1\" \"$2\"", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: file
        type: string
        inject_as: argument
        position: 1
"#
)]
// seed 003 §10
#[case::t4_2_multi_params(
    r#"
name: test_exec_multi_params
exec: "echo ${arg1} ${arg2} ${arg3}"
"#,
    r#"tools:
  - name: test_exec_multi_params
    command: ["echo"]
    parameters:
      - name: arg1
        type: string
        inject_as: argument
        position: 0
      - name: arg2
        type: string
        inject_as: argument
        position: 1
      - name: arg3
        type: string
        inject_as: argument
        position: 2
"#
)]
#[case::t5_1_stdin_exec(
    r#"
name: test_stdin_exec
exec: "wc -l"
stdin: content
"#,
    r#"tools:
  - name: test_stdin_exec
    command: ["wc", "-l"]
    parameters:
      - name: content
        type: string
        inject_as: stdin
"#
)]
#[case::t5_2_stdin_shell(
    r#"
name: test_stdin_shell
shell: "grep ${pattern}"
stdin: content
"#,
    r#"tools:
  - name: test_stdin_shell
    command: ["sh", "-c", "grep \"$1\"", "--"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
      - name: content
        type: string
        inject_as: stdin
"#
)]
#[case::t6_2_multiline_pipes(
    "
name: test_multiline_pipes
shell: |
  echo ${text} |
  tr '[:lower:]' '[:upper:]' |
  wc -c
",
    r#"tools:
  - name: test_multiline_pipes
    command: ["sh", "-c", "echo \"$1\" |\ntr '[:lower:]' '[:upper:]' |\nwc -c\n", "--"]
    parameters:
      - name: text
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::t7_1_param_merge(
    r#"
name: test_param_merge
exec: "echo ${msg}"
parameters:
  - name: msg
    description: "Message to print"
    default: "hello"
"#,
    r#"tools:
  - name: test_param_merge
    command: ["echo"]
    parameters:
      - name: msg
        type: string
        description: Message to print
        inject_as: argument
        position: 0
        default: hello
"#
)]
// seed 000 §2.2.1 (v1.1 form, unchanged) and §2.2.7
#[case::s000_v1_1_list_files(
    r#"
name: list_files
description: "List files in directory"
command: ["ls", "-la"]
parameters:
  - name: directory
    type: string
    description: "Target directory"
    required: false
    inject_as: argument
"#,
    r#"tools:
  - name: list_files
    description: List files in directory
    command: ["ls", "-la"]
    parameters:
      - name: directory
        type: string
        description: Target directory
        inject_as: argument
        required: false
"#
)]
#[case::s000_2_2_7_count_lines(
    r#"
name: count_lines
shell: "cat ${file} | wc -l"
"#,
    r#"tools:
  - name: count_lines
    command: ["sh", "-c", "cat \"$1\" | wc -l", "--"]
    parameters:
      - name: file
        type: string
        inject_as: argument
        position: 0
"#
)]
// seed 001 §4: v1.1 tools with options and engine variables
#[case::s001_run_sub_agent(
    r#"
name: run_sub_agent
description: "Execute a sub-Agent to complete a specific task."
command: ["delta", "run"]
parameters:
  - name: agent_path
    type: string
    inject_as: option
    option_name: "--agent"
  - name: task
    type: string
    inject_as: option
    option_name: "--task"
"#,
    r#"tools:
  - name: run_sub_agent
    description: Execute a sub-Agent to complete a specific task.
    command: ["delta", "run"]
    parameters:
      - name: agent_path
        type: string
        inject_as: option
        option_name: --agent
      - name: task
        type: string
        inject_as: option
        option_name: --task
"#
)]
#[case::s001_search_web(
    r#"
name: search_web
command: ["${AGENT_HOME}/tools/web_search.sh", "${CWD}", "${other}"]
parameters:
  - name: query
    inject_as: argument
"#,
    r#"tools:
  - name: search_web
    command: ["/agents/demo/tools/web_search.sh", "/work/space", "${other}"]
    parameters:
      - name: query
        type: string
        inject_as: argument
"#
)]
// Decided here (module docs of expand.rs): placeholders not all whole words at the end.
#[case::template_words_stay_in_place(
    r#"
name: grep_fixed
exec: "grep ${pattern} file.txt"
"#,
    r#"tools:
  - name: grep_fixed
    command: ["grep", "${pattern}", "file.txt"]
    parameters:
      - name: pattern
        type: string
        inject_as: argument
        position: 0
"#
)]
#[case::template_word_with_text(
    r#"
name: convert
exec: "convert --out=${out} ${in} --quality 90"
timeout_ms: 5000
"#,
    r#"tools:
  - name: convert
    command: ["convert", "--out=${out}", "${in}", "--quality", "90"]
    parameters:
      - name: out
        type: string
        inject_as: argument
        position: 0
      - name: in
        type: string
        inject_as: argument
        position: 1
    timeout_ms: 5000
"#
)]
#[case::repeated_placeholder(
    r#"
name: backup
exec: "cp ${f} ${f}"
"#,
    r#"tools:
  - name: backup
    command: ["cp", "${f}", "${f}"]
    parameters:
      - name: f
        type: string
        inject_as: argument
        position: 0
"#
)]
fn expands_to(#[case] yaml: &str, #[case] expected: &str) {
    assert_eq!(rendered(yaml), expected);
}

#[rstest]
// seed 003 §10 Test 1.1, §3.3.1, §3.9 anti-pattern 1
#[case::t1_1_reject_pipe(
    r#"{name: test_exec_reject_pipe, exec: "cat ${file} | wc -l"}"#,
    "Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe."
)]
// seed 003 §10 Test 1.2 gives the message's first sentence; the second names the fix.
#[case::t1_2_reject_redirect(
    r#"{name: test_exec_reject_redirect, exec: "echo ${msg} > ${file}"}"#,
    "Shell metacharacter '>' not allowed in exec: mode. Use shell: mode or remove redirection."
)]
// seed 003 §10 Test 3.2, §3.9 anti-pattern 2
#[case::t3_2_raw_in_exec(
    r#"{name: test_raw_reject_in_exec, exec: "echo ${flags:raw}"}"#,
    ":raw modifier is only allowed in shell: mode"
)]
// seed 003 §10 Test 7.2, §3.9 anti-pattern 3
#[case::t7_2_inject_as_conflict(
    r#"{name: test_param_conflict, shell: "grep ${pattern} ${file}", parameters: [{name: pattern, inject_as: stdin}]}"#,
    "Cannot override inject_as for parameter 'pattern' (inferred: argument, explicit: stdin)"
)]
#[case::s3_9_ap3_search_tool(
    r#"{name: search_tool, shell: "grep ${pattern} ${file}", parameters: [{name: pattern, inject_as: stdin}]}"#,
    "Cannot override inject_as for parameter 'pattern' (inferred: argument, explicit: stdin)"
)]
#[case::s3_9_ap1_count_lines(
    r#"{name: count_lines, exec: "cat ${file} | wc -l"}"#,
    "Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe."
)]
#[case::s3_9_ap2_echo_flags(
    r#"{name: echo_flags, exec: "echo ${flags:raw}"}"#,
    ":raw modifier is only allowed in shell: mode"
)]
// seed 003 §3.7.1 and seed 000 §2.2.4 bad_tool
#[case::s3_7_1_bad_tool(
    r#"{name: bad_tool, shell: "cat ${file} | wc -l", parameters: [{name: file, inject_as: stdin}]}"#,
    "Cannot override inject_as for parameter 'file' (inferred: argument, explicit: stdin)"
)]
// seed 003 §10 Test 7.3 and §3.7.1 bad_tool2
#[case::t7_3_undefined_param(
    r#"{name: test_undefined_param, exec: "echo ${msg}", parameters: [{name: undefined_param, description: "This param doesn't exist in template"}]}"#,
    "Parameter 'undefined_param' not found in template"
)]
#[case::s3_7_1_bad_tool2(
    r#"{name: bad_tool2, exec: "echo ${message}", parameters: [{name: unknown_param}]}"#,
    "Parameter 'unknown_param' not found in template"
)]
// seed 003 §3.7.1 bad_tool3
#[case::s3_7_1_bad_tool3_raw_via_parameters(
    r#"{name: bad_tool3, shell: "docker run ${flags} ${image}", parameters: [{name: flags, raw: true}]}"#,
    ":raw modifier must be specified in template syntax (${flags:raw})"
)]
// seed 003 §3.9 anti-pattern 4, §5.2.1, seed 000 §2.2.6
#[case::s3_9_ap4_exec_and_shell(
    r#"{name: bad_tool, exec: "echo ${msg}", shell: "cat ${file}"}"#,
    "Tool must specify exactly one of: exec, shell, or command"
)]
#[case::exec_and_command(
    r#"{name: t, exec: "echo", command: [echo]}"#,
    "Tool must specify exactly one of: exec, shell, or command"
)]
#[case::all_three(
    r#"{name: t, exec: "echo", shell: "echo", command: [echo]}"#,
    "Tool must specify exactly one of: exec, shell, or command"
)]
#[case::no_mode(
    r#"{name: t, description: "nothing to run"}"#,
    "Tool must specify exactly one of: exec, shell, or command"
)]
// seed 003 §3.9 anti-pattern 5
#[case::s3_9_ap5_redirect(
    r#"{name: write_log, exec: "echo ${msg} > ${logfile}"}"#,
    "Shell metacharacter '>' not allowed in exec: mode. Use shell: mode or remove redirection."
)]
// Cases the seed implies (§3.7.1 step 3, §5.2) worded in its style.
#[case::position_override(
    r#"{name: t, exec: "grep ${pattern} ${file}", parameters: [{name: file, position: 0}]}"#,
    "Cannot override position for parameter 'file' (inferred: 1, explicit: 0)"
)]
#[case::position_restated_ok_but_raw_removed(
    r#"{name: t, shell: "ls ${flags:raw}", parameters: [{name: flags, position: 0, raw: false}]}"#,
    ":raw modifier must be removed in template syntax (${flags} instead of ${flags:raw})"
)]
#[case::stdin_position(
    r#"{name: t, exec: "tee ${f}", stdin: content, parameters: [{name: content, position: 1}]}"#,
    "Parameter 'content' is passed on stdin and cannot have a position"
)]
#[case::stdin_inject_as_override(
    r#"{name: t, exec: "tee ${f}", stdin: content, parameters: [{name: content, inject_as: argument}]}"#,
    "Cannot override inject_as for parameter 'content' (inferred: stdin, explicit: argument)"
)]
#[case::option_in_sugar(
    r#"{name: t, exec: "curl ${url}", parameters: [{name: url, inject_as: option, option_name: "--url"}]}"#,
    "Cannot override inject_as for parameter 'url' (inferred: argument, explicit: option)"
)]
#[case::option_name_in_sugar(
    r#"{name: t, exec: "curl ${url}", parameters: [{name: url, option_name: "--url"}]}"#,
    "Parameter 'url' has option_name but is injected as argument; option_name is only used with inject_as: option"
)]
#[case::stdin_also_placeholder(
    r#"{name: t, exec: "tee ${content}", stdin: content}"#,
    "Parameter 'content' is declared as stdin but also used as ${content} in the template"
)]
#[case::stdin_uniqueness(
    r#"{name: t, command: [cat], parameters: [{name: a, inject_as: stdin}, {name: b, inject_as: stdin}]}"#,
    "At most one parameter may use inject_as: stdin (found 'a' and 'b')"
)]
#[case::stdin_keyword_and_explicit_stdin(
    r#"{name: t, command: [cat], stdin: a, parameters: [{name: b, inject_as: stdin}]}"#,
    "At most one parameter may use inject_as: stdin (found 'b' and 'a')"
)]
#[case::stdin_keyword_conflicts_in_command(
    r#"{name: t, command: [cat], stdin: a, parameters: [{name: a, inject_as: argument}]}"#,
    "Cannot override inject_as for parameter 'a' (inferred: stdin, explicit: argument)"
)]
#[case::non_string_type(
    r#"{name: t, exec: "sleep ${seconds}", parameters: [{name: seconds, type: number}]}"#,
    "Parameter 'seconds' has type 'number'; only type 'string' is supported"
)]
#[case::non_string_type_command(
    r#"{name: t, command: [sleep], parameters: [{name: seconds, type: integer}]}"#,
    "Parameter 'seconds' has type 'integer'; only type 'string' is supported"
)]
#[case::option_without_option_name(
    r#"{name: t, command: [serve], parameters: [{name: port, inject_as: option}]}"#,
    "Parameter 'port' uses inject_as: option but has no option_name"
)]
#[case::option_with_empty_option_name(
    r#"{name: t, command: [serve], parameters: [{name: port, inject_as: option, option_name: ""}]}"#,
    "Parameter 'port' uses inject_as: option but has no option_name"
)]
#[case::option_name_without_option(
    r#"{name: t, command: [serve], parameters: [{name: port, option_name: "--port"}]}"#,
    "Parameter 'port' has option_name but is injected as argument; option_name is only used with inject_as: option"
)]
#[case::raw_in_command(
    r#"{name: t, command: [ls], parameters: [{name: flags, raw: true}]}"#,
    ":raw modifier is only allowed in shell: mode"
)]
#[case::stdin_with_position_in_command(
    r#"{name: t, command: [cat], parameters: [{name: a, inject_as: stdin, position: 0}]}"#,
    "Parameter 'a' is passed on stdin and cannot have a position"
)]
#[case::duplicate_position(
    r#"{name: t, command: [cp], parameters: [{name: a, position: 1}, {name: b}, {name: c, position: 1}]}"#,
    "Parameters 'a' and 'c' both have position 1"
)]
#[case::duplicate_parameter(
    r#"{name: t, exec: "echo ${a}", parameters: [{name: a}, {name: a}]}"#,
    "Parameter 'a' is defined more than once"
)]
#[case::invalid_parameter_name(
    r#"{name: t, command: [ls], parameters: [{name: "work dir"}]}"#,
    "Invalid parameter name 'work dir': a parameter name must start with a letter or '_' and contain only letters, digits and '_'"
)]
#[case::invalid_stdin_name(
    r#"{name: t, exec: "cat", stdin: "my-input"}"#,
    "Invalid parameter name 'my-input': a parameter name must start with a letter or '_' and contain only letters, digits and '_'"
)]
#[case::empty_placeholder(
    r#"{name: t, exec: "echo ${}"}"#,
    "Malformed placeholder '${}' in exec: template: the parameter name is empty"
)]
#[case::space_in_placeholder(
    r#"{name: t, shell: "echo ${a b}"}"#,
    "Malformed placeholder '${a b}' in shell: template: a parameter name starts with a letter or '_' and contains only letters, digits and '_'"
)]
#[case::unterminated_placeholder(
    r#"{name: t, exec: "echo ${msg"}"#,
    "Malformed placeholder '${msg' in exec: template: missing closing '}'"
)]
#[case::shell_parameter_expansion(
    r#"{name: t, shell: "echo ${HOME:-/tmp}"}"#,
    "Malformed placeholder '${HOME:-/tmp}' in shell: template: the only modifier is :raw"
)]
#[case::unbalanced_double_quote(
    r#"{name: t, exec: "grep \"fixed ${file}"}"#,
    "Unterminated double quote in exec: template (opened at line 1, column 6)"
)]
#[case::unbalanced_single_quote(
    r#"{name: t, exec: "grep 'fixed ${file}"}"#,
    "Unterminated single quote in exec: template (opened at line 1, column 6)"
)]
#[case::unbalanced_quote_in_shell(
    r#"{name: t, shell: "echo \"${x}"}"#,
    "Unterminated double quote in shell: template (opened at line 1, column 6)"
)]
#[case::empty_exec(r#"{name: t, exec: "  "}"#, "exec: template is empty")]
#[case::empty_shell(r#"{name: t, shell: "\n"}"#, "shell: template is empty")]
#[case::empty_command(
    r#"{name: t, command: []}"#,
    "command: must start with the program to run (found an empty list)"
)]
#[case::empty_program(
    r#"{name: t, command: ["", x]}"#,
    "command: must start with the program to run (found an empty program name)"
)]
#[case::invalid_tool_name(
    r#"{name: "list files", exec: "ls"}"#,
    "Invalid tool name 'list files': a tool name must be 1 to 64 characters, each a letter, digit, '_' or '-'"
)]
#[case::empty_tool_name(
    r#"{name: "", exec: "ls"}"#,
    "Invalid tool name '': a tool name must be 1 to 64 characters, each a letter, digit, '_' or '-'"
)]
#[case::tool_name_too_long(
    r#"{name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, exec: "ls"}"#,
    "Invalid tool name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': a tool name must be 1 to 64 characters, each a letter, digit, '_' or '-'"
)]
#[case::reserved_tool_name(
    r#"{name: ask_human, exec: "echo ${q}"}"#,
    "Tool name 'ask_human' is reserved for the engine's built-in tool"
)]
#[case::zero_timeout(
    r#"{name: t, exec: "ls", timeout_ms: 0}"#,
    "timeout_ms must be greater than 0"
)]
#[case::placeholder_in_single_quotes(
    r#"{name: t, shell: "echo '${x}'"}"#,
    "Placeholder ${x} is inside single quotes in shell: mode, where sh never substitutes it"
)]
#[case::mixed_raw(
    r#"{name: t, shell: "echo ${x} ${x:raw}"}"#,
    "Placeholder ${x} is used both with and without :raw"
)]
#[case::raw_engine_variable(
    r#"{name: t, shell: "ls ${AGENT_HOME:raw}"}"#,
    "Engine variable ${AGENT_HOME} does not take a :raw modifier"
)]
#[case::engine_variable_is_not_a_parameter(
    r#"{name: t, exec: "ls ${CWD}", parameters: [{name: CWD}]}"#,
    "Parameter 'CWD' not found in template"
)]
fn rejects(#[case] yaml: &str, #[case] message: &str) {
    assert_eq!(expand_error(yaml), message);
}

#[test]
fn t1_2_message_starts_with_the_seed_wording() {
    let message = expand_error(r#"{name: t, exec: "echo ${msg} > ${file}"}"#);
    assert!(message.starts_with("Shell metacharacter '>' not allowed in exec: mode."));
}

#[test]
fn seed_000_wording_of_the_pipe_error_is_covered_by_the_hint() {
    // Seed 000 §2.2.2 words the same error "... Use shell: mode instead."; seed 003 is the
    // contract, and the help line says what to do.
    let error = try_expand(r#"{name: t, exec: "cat ${f} | wc -l"}"#).unwrap_err();
    assert_eq!(
        error.help().unwrap(),
        "exec: runs the program directly, without a shell; write `shell:` instead of `exec:` to use '|', or quote it (\"|\") to pass it as literal text"
    );
}

#[rstest]
#[case::mode_count_none(r#"{name: t}"#, "add one of `exec:")]
#[case::mode_count_some(r#"{name: t, exec: a, shell: b}"#, "keep only one of: exec, shell")]
#[case::inject_as(
    r#"{name: t, shell: "grep ${pattern} ${file}", parameters: [{name: pattern, inject_as: stdin}]}"#,
    "write `stdin: pattern`"
)]
#[case::raw_in_exec(r#"{name: t, exec: "echo ${flags:raw}"}"#, "use `shell:` mode")]
#[case::undefined(
    r#"{name: t, exec: "echo ${msg}", parameters: [{name: other}]}"#,
    "use ${other} in the template"
)]
#[case::tool_name(
    r#"{name: "list files!", exec: ls}"#,
    "rename it, e.g. `name: list_files_`"
)]
#[case::option(
    r#"{name: t, command: [serve], parameters: [{name: port, inject_as: option}]}"#,
    "option_name: \"--port\""
)]
fn errors_carry_a_fix(#[case] yaml: &str, #[case] needle: &str) {
    let help = try_expand(yaml).unwrap_err().help().unwrap();
    // The whole help, in a snapshot named after what it must say.
    snapshot!(format!("fix_{}", name(&needle)), help);
}

#[test]
fn every_error_has_a_help_line() {
    let errors = [
        r#"{name: t, exec: "a | b"}"#,
        r#"{name: t, exec: "a '"}"#,
        r#"{name: t, exec: "a ${}"}"#,
        r#"{name: t, shell: "a '${x}'"}"#,
        r#"{name: t, command: [a], parameters: [{name: a, position: 0}, {name: b, position: 0}]}"#,
    ];
    for yaml in errors {
        let error = try_expand(yaml).unwrap_err();
        assert!(error.help().is_some_and(|h| !h.is_empty()), "{error}");
    }
}

#[test]
fn errors_are_std_errors() {
    fn assert_error<E: std::error::Error>(_: &E) {}
    let error: ToolError = try_expand(r#"{name: t, exec: "a | b"}"#).unwrap_err();
    assert_error(&error);
}

#[test]
fn render_lists_every_tool_in_order() {
    let tools = [
        spec(r#"{name: a, exec: "echo ${x}"}"#),
        spec(r#"{name: b, description: "Count lines", shell: "wc -l < ${f}"}"#),
    ];
    assert_eq!(
        render_expanded(&tools),
        r#"tools:
  - name: a
    command: ["echo"]
    parameters:
      - name: x
        type: string
        inject_as: argument
        position: 0
  - name: b
    description: Count lines
    command: ["sh", "-c", "wc -l < \"$1\"", "--"]
    parameters:
      - name: f
        type: string
        inject_as: argument
        position: 0
"#
    );
}

#[test]
fn expanded_form_serializes_to_json_the_same_way() {
    let spec = spec(r#"{name: count_lines, shell: "cat ${file} | wc -l"}"#);
    assert_eq!(
        serde_json::to_value(&spec).unwrap(),
        serde_json::json!({
            "name": "count_lines",
            "command": ["sh", "-c", "cat \"$1\" | wc -l", "--"],
            "parameters": [
                {"name": "file", "type": "string", "inject_as": "argument", "position": 0}
            ]
        })
    );
}

#[test]
fn expanded_yaml_is_a_loadable_v1_1_definition_with_the_same_expansion() {
    // The appended form (every seed example) round-trips: `delta tool expand` output can
    // be pasted back as a `command:` tool and behaves the same.
    let original = spec(
        r#"{name: search, exec: "grep -n ${pattern} ${file}", stdin: extra, parameters: [{name: file, default: "a.txt"}]}"#,
    );
    let yaml = render_expanded(std::slice::from_ref(&original));
    #[derive(serde::Deserialize)]
    struct File {
        tools: Vec<delta_engine::tool::ToolDef>,
    }
    let file: File = serde_saphyr::from_str(&yaml).unwrap();
    let reloaded =
        delta_engine::tool::expand(&file.tools[0], &crate::tool::support::vars()).unwrap();
    assert_eq!(render_expanded(&[reloaded]), yaml);
}

//! What the model sees (function schema) and how its arguments become a call: argv order,
//! options, defaults, stdin, value conversion, and the errors it gets back.

use delta_engine::tool::{ArgumentError, Invocation};
use serde_json::json;

use crate::tool::support::{Workspace, args, call, spec, stdout};

fn invocation(yaml: &str, arguments: serde_json::Value) -> Result<Invocation, ArgumentError> {
    spec(yaml).invocation(&args(arguments))
}

fn argv(yaml: &str, arguments: serde_json::Value) -> Vec<String> {
    invocation(yaml, arguments).unwrap().argv
}

#[test]
fn function_schema_shape() {
    let tool = spec(
        r#"
name: search_tool
description: "Search a file"
exec: "grep ${pattern} ${file}"
stdin: extra
parameters:
  - name: pattern
    description: "Search pattern (regex supported)"
  - name: file
    description: "File to search in"
    default: "./data.txt"
  - name: extra
    required: false
"#,
    );
    assert_eq!(
        tool.function_schema(),
        json!({
            "type": "function",
            "function": {
                "name": "search_tool",
                "description": "Search a file",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "description": "Search pattern (regex supported)"},
                        "file": {"type": "string", "description": "File to search in"},
                        "extra": {"type": "string"}
                    },
                    "required": ["pattern"]
                }
            }
        })
    );
}

#[test]
fn function_schema_without_description_or_parameters() {
    let tool = spec(r#"{name: now, exec: "date"}"#);
    assert_eq!(
        tool.function_schema(),
        json!({
            "type": "function",
            "function": {
                "name": "now",
                "parameters": {"type": "object", "properties": {}, "required": []}
            }
        })
    );
}

#[test]
fn required_true_with_default_is_optional() {
    let tool = spec(
        r#"{name: t, command: [ls], parameters: [{name: a, required: true, default: "."}, {name: b, required: true}]}"#,
    );
    assert_eq!(
        tool.function_schema()["function"]["parameters"]["required"],
        json!(["b"])
    );
}

#[test]
fn missing_required_parameter_is_named() {
    let error = invocation(
        r#"{name: search, exec: "grep ${pattern} ${file}"}"#,
        json!({"file": "a"}),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Missing required parameter 'pattern' for tool 'search'. Call the tool again with a value for each."
    );
    let error = invocation(
        r#"{name: search, exec: "grep ${pattern} ${file}"}"#,
        json!({}),
    )
    .unwrap_err();
    assert_eq!(
        error,
        ArgumentError::Missing {
            tool: "search".to_string(),
            names: vec!["pattern".to_string(), "file".to_string()],
        }
    );
    assert_eq!(
        error.to_string(),
        "Missing required parameters 'pattern', 'file' for tool 'search'. Call the tool again with a value for each."
    );
}

#[test]
fn unknown_argument_lists_accepted_ones() {
    let error = invocation(
        r#"{name: search, exec: "grep ${pattern} ${file}"}"#,
        json!({"pattern": "x", "file": "y", "path": "z"}),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Unknown parameter 'path' for tool 'search'. Accepted parameters: 'pattern', 'file'. Call the tool again with only these names."
    );
    let error = invocation(r#"{name: now, exec: date}"#, json!({"a": 1, "b": 2})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Unknown parameters 'a', 'b' for tool 'now'. Tool 'now' takes no parameters. Call the tool again with only these names."
    );
}

#[test]
fn nul_in_an_argument_is_refused_but_fine_on_stdin() {
    let error = invocation(r#"{name: t, exec: "echo ${a}"}"#, json!({"a": "x\u{0}y"})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Parameter 'a' of tool 't' contains a NUL character (\\u0000), which cannot be passed as a command-line argument. Remove it and call the tool again."
    );
    let call = invocation(
        r#"{name: t, exec: "cat", stdin: a}"#,
        json!({"a": "x\u{0}y"}),
    )
    .unwrap();
    assert_eq!(call.stdin.as_deref(), Some("x\u{0}y"));
}

#[test]
fn non_string_values_are_passed_as_json_text_and_null_is_absent() {
    let yaml =
        r#"{name: t, exec: "echo ${a} ${b} ${c} ${d}", parameters: [{name: d, default: "dflt"}]}"#;
    assert_eq!(
        argv(yaml, json!({"a": 42, "b": true, "c": [1, "x"], "d": null})),
        ["echo", "42", "true", "[1,\"x\"]", "dflt"]
    );
    assert_eq!(
        argv(yaml, json!({"a": 1.5, "b": false, "c": {"k": "v"}})),
        ["echo", "1.5", "false", "{\"k\":\"v\"}", "dflt"]
    );
    let error = invocation(yaml, json!({"a": null, "b": "x", "c": "y"})).unwrap_err();
    assert!(matches!(error, ArgumentError::Missing { ref names, .. } if names == &["a"]));
}

#[test]
fn empty_string_is_an_empty_argument() {
    assert_eq!(
        argv(
            r#"{name: t, exec: "ls ${directory}"}"#,
            json!({"directory": ""})
        ),
        ["ls", ""]
    );
    assert_eq!(
        argv(
            r#"{name: t, shell: "grep ${pattern} ${file}"}"#,
            json!({"pattern": "", "file": "data.txt"})
        ),
        ["sh", "-c", r#"grep "$1" "$2""#, "--", "", "data.txt"]
    );
}

#[test]
fn v1_1_options_arguments_and_stdin() {
    let yaml = r#"
name: run_sub_agent
command: ["delta", "run"]
parameters:
  - name: agent_path
    inject_as: option
    option_name: "--agent"
  - name: task
    inject_as: option
    option_name: "--task"
  - name: work_dir
    inject_as: option
    option_name: "--work-dir"
    required: false
  - name: input
    inject_as: stdin
"#;
    let call = invocation(
        yaml,
        json!({"agent_path": "./a", "task": "do it", "input": "data"}),
    )
    .unwrap();
    assert_eq!(
        call.argv,
        ["delta", "run", "--agent", "./a", "--task", "do it"]
    );
    assert_eq!(call.stdin.as_deref(), Some("data"));
    let call = invocation(
        yaml,
        json!({"agent_path": "./a", "task": "t", "work_dir": "-rf", "input": ""}),
    )
    .unwrap();
    assert_eq!(
        call.argv,
        [
            "delta",
            "run",
            "--agent",
            "./a",
            "--task",
            "t",
            "--work-dir",
            "-rf"
        ]
    );
    assert_eq!(call.stdin.as_deref(), Some(""));
}

#[test]
fn v1_1_positions_order_arguments_and_unpositioned_follow() {
    let yaml = r#"{name: t, command: [cp], parameters: [{name: c}, {name: dst, position: 1}, {name: src, position: 0}, {name: d}]}"#;
    assert_eq!(
        argv(yaml, json!({"dst": "B", "src": "A", "c": "C", "d": "D"})),
        ["cp", "A", "B", "C", "D"]
    );
}

#[test]
fn v1_1_default_applies_and_absent_optional_is_omitted() {
    let yaml = r#"{name: list_files, command: ["ls", "-F"], parameters: [{name: directory, default: "."}, {name: extra, required: false}]}"#;
    assert_eq!(argv(yaml, json!({})), ["ls", "-F", "."]);
    assert_eq!(
        argv(yaml, json!({"directory": "src", "extra": "-a"})),
        ["ls", "-F", "src", "-a"]
    );
}

#[test]
fn exec_absent_optional_is_omitted_and_template_word_dropped() {
    let appended =
        r#"{name: t, exec: "ls -la ${dir}", parameters: [{name: dir, required: false}]}"#;
    assert_eq!(argv(appended, json!({})), ["ls", "-la"]);
    let template = r#"{name: t, exec: "convert --out=${out} ${in}", parameters: [{name: out, required: false}]}"#;
    assert_eq!(argv(template, json!({"in": "a.png"})), ["convert", "a.png"]);
    assert_eq!(
        argv(template, json!({"in": "a b.png", "out": "x y.jpg"})),
        ["convert", "--out=x y.jpg", "a b.png"]
    );
}

#[test]
fn shell_absent_optional_keeps_its_position_as_empty_string() {
    let yaml =
        r#"{name: t, shell: "printf '[%s]' ${a} ${b}", parameters: [{name: a, required: false}]}"#;
    assert_eq!(
        argv(yaml, json!({"b": "B"})),
        ["sh", "-c", r#"printf '[%s]' "$1" "$2""#, "--", "", "B"]
    );
}

#[test]
fn stdin_absent_optional_means_no_input() {
    let yaml =
        r#"{name: t, exec: "cat", stdin: content, parameters: [{name: content, required: false}]}"#;
    assert_eq!(invocation(yaml, json!({})).unwrap().stdin, None);
    let with_default =
        r#"{name: t, exec: "cat", stdin: content, parameters: [{name: content, default: "x"}]}"#;
    assert_eq!(
        invocation(with_default, json!({}))
            .unwrap()
            .stdin
            .as_deref(),
        Some("x")
    );
}

#[test]
fn shell_values_follow_the_double_dash_in_position_order() {
    assert_eq!(
        argv(
            r#"{name: count_matches, shell: "grep ${pattern} ${file} | wc -l"}"#,
            json!({"file": "data.txt", "pattern": "\" ; rm -rf / ; \""})
        ),
        [
            "sh",
            "-c",
            r#"grep "$1" "$2" | wc -l"#,
            "--",
            "\" ; rm -rf / ; \"",
            "data.txt"
        ]
    );
}

#[test]
fn display_is_shell_quoted_with_stdin_size() {
    let call = invocation(
        r#"{name: write_file, exec: "tee ${filename}", stdin: content}"#,
        json!({"filename": "my file's.txt", "content": "héllo"}),
    )
    .unwrap();
    assert_eq!(call.display(), r#"tee "my file's.txt" < (stdin: 6 bytes)"#);
    let call = invocation(r#"{name: t, shell: "echo ${a}"}"#, json!({"a": "x"})).unwrap();
    assert_eq!(call.display(), r#"sh -c 'echo "$1"' -- x"#);
}

#[tokio::test]
async fn many_positional_parameters_reach_the_right_slots() {
    let ws = Workspace::new();
    let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    let template: String = names.iter().map(|n| format!("${{{n}}} ")).collect();
    let tool = spec(&format!(r#"{{name: t, shell: "printf '%s,' {template}"}}"#));
    let arguments: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), json!(format!("v{i} x"))))
        .collect();
    let out = call(&tool, serde_json::Value::Object(arguments), ws.path()).await;
    assert_eq!(
        stdout(&out),
        "v0 x,v1 x,v2 x,v3 x,v4 x,v5 x,v6 x,v7 x,v8 x,v9 x,v10 x,v11 x,"
    );
}

#[tokio::test]
async fn engine_variables_are_usable_in_all_forms() {
    let ws = Workspace::new();
    let vars = delta_engine::tool::EngineVars {
        agent_home: ws.path().join("my agent's dir"),
        cwd: ws.path().to_path_buf(),
    };
    std::fs::create_dir(&vars.agent_home).unwrap();
    std::fs::write(vars.agent_home.join("config"), "cfg\n").unwrap();
    for yaml in [
        r#"{name: a, exec: "cat ${AGENT_HOME}/config"}"#,
        r#"{name: b, shell: "cat ${AGENT_HOME}/config"}"#,
        r#"{name: c, shell: "cat \"${AGENT_HOME}/config\""}"#,
        r#"{name: d, command: ["cat", "${AGENT_HOME}/config"]}"#,
    ] {
        let tool = delta_engine::tool::expand(&crate::tool::support::def(yaml), &vars).unwrap();
        let out = call(&tool, json!({}), ws.path()).await;
        assert_eq!(stdout(&out), "cfg\n", "{yaml}");
    }
}

#[test]
fn timeout_comes_from_the_definition_or_the_default() {
    use std::time::Duration;
    assert_eq!(
        spec(r#"{name: t, exec: ls, timeout_ms: 1500}"#).timeout(),
        Duration::from_millis(1500)
    );
    assert_eq!(
        spec(r#"{name: t, exec: ls}"#).timeout(),
        delta_engine::tool::DEFAULT_TOOL_TIMEOUT
    );
}

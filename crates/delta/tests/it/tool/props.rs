//! Arbitrary templates and values never make expansion or call building panic.

use delta_engine::tool::{ToolDef, expand};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::tool::support::vars;

/// Strings dense in the characters the lexers care about.
fn template() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("${".to_string()),
            Just("}".to_string()),
            Just(":raw".to_string()),
            Just("$((".to_string()),
            Just("$(".to_string()),
            Just("<<".to_string()),
            Just("<<-'E'".to_string()),
            Just("\nE\n".to_string()),
            "[a-z]{1,3}",
            "[ \t\n'\"\\\\$`|&;<>()#*?{}:-]",
            any::<char>().prop_map(String::from),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

fn tool(exec: Option<String>, shell: Option<String>) -> ToolDef {
    ToolDef {
        name: "t".to_string(),
        description: None,
        exec,
        shell,
        command: None,
        stdin: None,
        parameters: None,
        timeout_ms: None,
        agent: None,
        message: None,
        workspace: None,
    }
}

/// Fills every parameter with `value` and builds the call.
fn call_all(spec: &delta_engine::tool::ToolSpec, value: &str) {
    let args: Map<String, Value> = spec
        .parameters
        .iter()
        .map(|p| (p.name.clone(), Value::String(value.to_string())))
        .collect();
    let _ = spec.invocation(&args);
    let _ = spec.function_schema();
    let _ = delta_engine::tool::render_expanded(std::slice::from_ref(spec));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn exec_templates_never_panic(t in template(), value in ".*") {
        if let Ok(spec) = expand(&tool(Some(t), None), &vars()) {
            call_all(&spec, &value);
        }
    }

    #[test]
    fn shell_templates_never_panic(t in template(), value in ".*") {
        if let Ok(spec) = expand(&tool(None, Some(t)), &vars()) {
            // Every placeholder became one positional parameter after "--".
            prop_assert_eq!(&spec.command[3].rendered(), "--");
            call_all(&spec, &value);
        }
    }

    #[test]
    fn exec_values_are_never_split(value in ".*") {
        let spec = expand(&tool(Some("echo a${v}b ${w}".to_string()), None), &vars()).unwrap();
        let args: Map<String, Value> = [("v", &value), ("w", &value)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
            .collect();
        match spec.invocation(&args) {
            Ok(call) => prop_assert_eq!(call.argv, vec!["echo".to_string(), format!("a{value}b"), value.clone()]),
            // A property over generated values: refused exactly when the value holds a NUL.
            Err(_) => prop_assert!(value.contains('\0')),
        }
    }
}

//! Placeholders (`{tmp}`, `{agent}`, `{workspace}`, `{run_id}` …) and their substitution.
//!
//! Only the names in [`NAMES`] are placeholders, and never right after a `$`: any other
//! `{…}` is literal text. That keeps tool templates and shell variables such as `${file}`
//! and JSON such as `{"a": 1}` intact wherever they appear in a scenario.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::shown::quote;

/// Every placeholder a scenario may use, with what it stands for (shown by `docs` and used
/// by the loader to tell a typo from literal text).
pub const NAMES: &[(&str, &str)] = &[
    ("tmp", "the scenario's temporary directory (absolute)"),
    ("agent", "the copy of the agent fixture: {tmp}/agent"),
    (
        "workspace",
        "the workspace passed with -w: {tmp}/workspace (not created in advance)",
    ),
    ("home", "HOME of every process: {tmp}/home"),
    ("run_id", "the run id of the latest run/continue step"),
    (
        "session_id",
        "the session_id printed by the latest successful `sessions: start` step",
    ),
    (
        "base_url",
        "the mock-llm base URL, http://127.0.0.1:PORT/v1",
    ),
    ("api_key", "the fake API key given to the implementation"),
    (
        "impl",
        "the implementation's command line, shell-quoted (for shell steps)",
    ),
];

/// The values of the placeholders known so far in one scenario.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: BTreeMap<&'static str, String>,
}

impl Vars {
    /// Sets a placeholder. Names outside [`NAMES`] are ignored, so a typo in the runner
    /// cannot invent a placeholder that scenarios cannot document.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        if let Some((known, _)) = NAMES.iter().find(|(known, _)| *known == name) {
            self.values.insert(known, value.into());
        }
    }

    /// The value of a placeholder, if it is known yet.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Observed `text` as a report shows it: the scenario's directory, whose name is
    /// random, written `{tmp}`, then quoted and shortened ([`quote`]). Replacing before
    /// shortening keeps the path whole: a cut through it would leave a literal
    /// `/tmp/delta-conformance-…` that differs from run to run.
    pub fn quote(&self, text: &str) -> String {
        match self.get("tmp").filter(|root| !root.is_empty()) {
            Some(root) => quote(&text.replace(root, "{tmp}")),
            None => quote(text),
        }
    }

    /// `text` with every known placeholder replaced by its value.
    pub fn expand(&self, text: &str) -> String {
        self.expand_with(text, |value| value.to_string())
    }

    /// Like [`Vars::expand`], with values escaped for use inside a regular expression.
    pub fn expand_regex(&self, text: &str) -> String {
        self.expand_with(text, regex::escape)
    }

    /// A JSON value with [`Vars::expand`] applied to every string in it (keys too).
    pub fn expand_value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.expand(text)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.expand_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, v)| (self.expand(key), self.expand_value(v)))
                    .collect(),
            ),
            Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        }
    }

    fn expand_with(&self, text: &str, escape: impl Fn(&str) -> String) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let dollar = rest[..open].ends_with('$');
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let name_len = after
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..name_len];
            match (
                !dollar && after[name_len..].starts_with('}'),
                self.values.get(name),
            ) {
                (true, Some(value)) => {
                    out.push_str(&escape(value));
                    rest = &after[name_len + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// The placeholder-looking names (`{lowercase_name}`) in `text` that are not placeholders,
/// so the loader can point at a probable typo such as `{worksapce}`. `${name}` is a shell or
/// tool-template variable, never a typo.
pub fn unknown_names(text: &str) -> Vec<String> {
    let mut unknown = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let dollar = rest[..open].ends_with('$');
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        if !dollar
            && name_len > 0
            && after[name_len..].starts_with('}')
            && !NAMES.iter().any(|(known, _)| *known == name)
        {
            unknown.push(name.to_string());
        }
        rest = after;
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_texts_name_the_scenario_directory_even_where_the_cut_falls() {
        let root = "/tmp/delta-conformance-subagents-linked-metadata-a1b2c3";
        let mut vars = Vars::default();
        vars.set("tmp", root);
        // The cut keeps the first 300 characters: it falls inside the path.
        let text = format!(
            "{}Work Directory: {root}/workspace\n{}",
            "x".repeat(250),
            "y".repeat(900)
        );
        assert!(quote(&text).contains("/tmp/delta-conf"));
        let shown = vars.quote(&text);
        assert!(shown.contains("Work Directory: {tmp}/workspace"), "{shown}");
        assert!(!shown.contains("/tmp/"), "{shown}");
        assert_eq!(Vars::default().quote("at /tmp/a"), quote("at /tmp/a"));
    }

    fn vars() -> Vars {
        let mut vars = Vars::default();
        vars.set("tmp", "/tmp/x.1");
        vars.set("workspace", "/tmp/x.1/workspace");
        vars
    }

    #[test]
    fn known_names_are_replaced_and_others_kept() {
        let vars = vars();
        assert_eq!(
            vars.expand("rm {tmp}/m; ${file} ${tmp} {run_id} {\"a\": 1} {workspace}"),
            "rm /tmp/x.1/m; ${file} ${tmp} {run_id} {\"a\": 1} /tmp/x.1/workspace"
        );
        assert_eq!(vars.expand("{tmp"), "{tmp");
        assert_eq!(vars.expand("{{tmp}}"), "{/tmp/x.1}");
    }

    #[test]
    fn regex_expansion_escapes_the_value_only() {
        assert_eq!(vars().expand_regex("^{tmp}/a.b$"), r"^/tmp/x\.1/a.b$");
    }

    #[test]
    fn values_expand_in_nested_json() {
        let value = serde_json::json!({"k": ["{tmp}", 1, {"{tmp}": null}]});
        assert_eq!(
            vars().expand_value(&value),
            serde_json::json!({"k": ["/tmp/x.1", 1, {"/tmp/x.1": null}]})
        );
    }

    #[test]
    fn unknown_lowercase_names_are_reported() {
        assert_eq!(
            unknown_names("{worksapce} ${CWD} ${file} {tmp} {a-b} {run_id}"),
            vec!["worksapce".to_string()]
        );
    }
}

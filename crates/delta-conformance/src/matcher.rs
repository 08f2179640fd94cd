//! What the matchers shared by every expectation check: on text ([`TextMatch`]), on one
//! JSON value found by a JSON pointer ([`ValueMatch`]), and on an exit code
//! ([`ExitMatch`]); their serialized forms are the `delta-scenario` crate's.
//!
//! A matcher lists checks that must all hold; each failed check becomes one [`Mismatch`]
//! saying what was expected and what was seen.

use delta_scenario::{ExitClass, ExitMatch, JsonType, OneOrMany, TextMatch, ValueMatch};
use serde::Serialize;
use serde_json::Value;

use crate::schemas::SchemaSet;
use crate::shown::show;
use crate::validate;
use crate::vars::Vars;

/// One failed check: the expectation in words and what was observed instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// What should hold, e.g. `stdout contains "done"`.
    pub expected: String,
    /// What was seen, quoted and shortened.
    pub observed: String,
}

impl Mismatch {
    /// A mismatch of `what` (e.g. `stdout`) against `check` (e.g. `contains "x"`).
    pub fn new(what: &str, check: impl AsRef<str>, observed: impl Into<String>) -> Self {
        Self {
            expected: format!("{what} {}", check.as_ref()),
            observed: observed.into(),
        }
    }
}

/// The JSON type of `value`, as JSON Schema names it (`integer` for whole numbers).
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `value` is of type `kind` (an integer is a number too).
fn has_type(kind: JsonType, value: &Value) -> bool {
    let actual = type_of(value);
    actual == kind.name() || (kind == JsonType::Number && actual == "integer")
}

/// Checks an exit against an [`ExitMatch`].
pub trait ExitCheck {
    /// Checks an exit: `Some(code)`, or `None` when a signal ended the process (`signal`
    /// names it).
    fn check(&self, code: Option<i32>, signal: Option<i32>) -> Option<Mismatch>;
}

impl ExitCheck for ExitMatch {
    fn check(&self, code: Option<i32>, signal: Option<i32>) -> Option<Mismatch> {
        let (codes, expected): (&[i32], String) = match self {
            Self::Code(code) => (std::slice::from_ref(code), format!("is {code}")),
            Self::AnyOf(codes) => (
                codes,
                format!(
                    "is one of {}",
                    codes
                        .iter()
                        .map(i32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            Self::Class(ExitClass::Nonzero) => (&[], "is not 0".to_string()),
        };
        let holds = |code: i32| match self {
            Self::Code(_) | Self::AnyOf(_) => codes.contains(&code),
            Self::Class(ExitClass::Nonzero) => code != 0,
        };
        match code {
            Some(code) if holds(code) => None,
            Some(code) => Some(Mismatch::new("exit code", expected, code.to_string())),
            None => Some(Mismatch::new(
                "exit code",
                expected,
                match signal {
                    Some(signal) => format!("killed by signal {signal}"),
                    None => "no exit code".to_string(),
                },
            )),
        }
    }
}

/// Checks a text against a [`TextMatch`].
pub trait TextCheck {
    /// Every check that fails on `text`; `what` names the text in messages. `schemas`
    /// serves the `schema` check.
    ///
    /// One rule for line ends: a single trailing newline is not significant, for the
    /// observed text and the expected one alike (`equals`, `regex`, `empty`), so that
    /// `printf x` and `echo x` output match the same expectation.
    fn check(&self, what: &str, text: &str, vars: &Vars, schemas: &SchemaSet) -> Vec<Mismatch>;
}

impl TextCheck for TextMatch {
    fn check(&self, what: &str, text: &str, vars: &Vars, schemas: &SchemaSet) -> Vec<Mismatch> {
        let mut out = Vec::new();
        let full = text;
        let text = without_final_newline(full);
        if let Some(equals) = &self.equals {
            let expected = vars.expand(equals);
            if text != without_final_newline(&expected) {
                out.push(Mismatch::new(
                    what,
                    format!("equals {}", vars.quote(&expected)),
                    vars.quote(full),
                ));
            }
        }
        for needle in self.contains.iter().flat_map(OneOrMany::items) {
            let needle = vars.expand(needle);
            if !text.contains(&needle) {
                out.push(Mismatch::new(
                    what,
                    format!("contains {}", vars.quote(&needle)),
                    vars.quote(text),
                ));
            }
        }
        for needle in self.not_contains.iter().flat_map(OneOrMany::items) {
            let needle = vars.expand(needle);
            if text.contains(&needle) {
                out.push(Mismatch::new(
                    what,
                    format!("does not contain {}", vars.quote(&needle)),
                    vars.quote(text),
                ));
            }
        }
        if let Some(pattern) = &self.regex {
            out.extend(check_regex(what, pattern, text, vars));
        }
        if let Some(empty) = self.empty
            && empty != text.is_empty()
        {
            let check = if empty { "is empty" } else { "is not empty" };
            out.push(Mismatch::new(what, check, vars.quote(full)));
        }
        if let Some(pointers) = &self.json {
            match serde_json::from_str::<Value>(text) {
                Ok(document) => {
                    for (pointer, matcher) in pointers {
                        out.extend(matcher.check(
                            &format!("{what} JSON"),
                            pointer,
                            &document,
                            vars,
                        ));
                    }
                }
                Err(err) => out.push(Mismatch::new(
                    what,
                    "is one JSON document",
                    format!("{err}: {}", vars.quote(text)),
                )),
            }
        }
        if let Some(kind) = &self.schema {
            let expected = format!("matches {}", schemas.path_of(kind).display());
            match validate::validate_document(text, false, kind, schemas) {
                Ok(problems) => out.extend(
                    problems
                        .iter()
                        .map(|p| Mismatch::new(what, &expected, p.to_string())),
                ),
                Err(err) => out.push(Mismatch::new(what, &expected, err.to_string())),
            }
        }
        if let Some(kind) = &self.lines_schema {
            let expected = format!("has lines matching {}", schemas.path_of(kind).display());
            for (number, line) in text.lines().enumerate() {
                let at = format!("{what} line {}", number + 1);
                match validate::validate_document(line, false, kind, schemas) {
                    Ok(problems) => out.extend(
                        problems
                            .iter()
                            .map(|p| Mismatch::new(&at, &expected, p.to_string())),
                    ),
                    Err(err) => out.push(Mismatch::new(&at, &expected, err.to_string())),
                }
            }
        }
        if let Some(pointers) = &self.last_line {
            let last = text.lines().last().unwrap_or_default();
            match serde_json::from_str::<Value>(last) {
                Ok(document) => {
                    for (pointer, matcher) in pointers {
                        out.extend(matcher.check(
                            &format!("{what} last line"),
                            pointer,
                            &document,
                            vars,
                        ));
                    }
                }
                Err(err) => out.push(Mismatch::new(
                    what,
                    "ends with one JSON line",
                    format!("{err}: {}", vars.quote(last)),
                )),
            }
        }
        out
    }
}

/// `text` without one final `\n` (the one rule for line ends of text checks).
pub fn without_final_newline(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// Checks the value at a JSON pointer against a [`ValueMatch`].
pub trait ValueCheck {
    /// Every check that fails on the value at `pointer` in `document`; `what` names the
    /// document in messages.
    fn check(&self, what: &str, pointer: &str, document: &Value, vars: &Vars) -> Vec<Mismatch>;
}

impl ValueCheck for ValueMatch {
    fn check(&self, what: &str, pointer: &str, document: &Value, vars: &Vars) -> Vec<Mismatch> {
        let pointer = vars.expand(pointer);
        let at = format!(
            "{what} {}",
            if pointer.is_empty() {
                "(root)"
            } else {
                &pointer
            }
        );
        let found = document.pointer(&pointer);
        let Some(value) = found else {
            return if self.exists == Some(false) {
                Vec::new()
            } else {
                vec![Mismatch::new(&at, "exists", "absent")]
            };
        };
        let mut out = Vec::new();
        if self.exists == Some(false) {
            out.push(Mismatch::new(&at, "is absent", show(value)));
        }
        if let Some(expected) = &self.equals {
            let expected = vars.expand_value(expected);
            if *value != expected {
                out.push(Mismatch::new(
                    &at,
                    format!("equals {}", show(&expected)),
                    show(value),
                ));
            }
        }
        if let Some(kind) = self.type_
            && !has_type(kind, value)
        {
            out.push(Mismatch::new(
                &at,
                format!("is of type {}", kind.name()),
                format!("{} {}", type_of(value), show(value)),
            ));
        }
        if let Some(pattern) = &self.regex {
            match value {
                Value::String(text) => out.extend(check_regex(&at, pattern, text, vars)),
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::Array(_)
                | Value::Object(_) => out.push(Mismatch::new(
                    &at,
                    format!("is a string matching /{pattern}/"),
                    show(value),
                )),
            }
        }
        if let Some(needle) = &self.contains {
            let needle = vars.expand(needle);
            let holds = match value {
                Value::String(text) => text.contains(&needle),
                Value::Array(items) => items.iter().any(|item| item.as_str() == Some(&needle)),
                Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => false,
            };
            if !holds {
                out.push(Mismatch::new(
                    &at,
                    format!("contains {}", vars.quote(&needle)),
                    show(value),
                ));
            }
        }
        if let Some(needle) = &self.not_contains {
            let needle = vars.expand(needle);
            if value.as_str().is_none_or(|text| text.contains(&needle)) {
                out.push(Mismatch::new(
                    &at,
                    format!("is a string without {}", vars.quote(&needle)),
                    show(value),
                ));
            }
        }
        for (bound, limit, holds) in [
            (
                "at least",
                self.min,
                (|n, l| n >= l) as fn(f64, f64) -> bool,
            ),
            ("at most", self.max, |n, l| n <= l),
        ] {
            let Some(limit) = limit else { continue };
            match value.as_f64() {
                Some(number) if holds(number, limit) => {}
                Some(_) | None => {
                    out.push(Mismatch::new(
                        &at,
                        format!("is a number {bound} {limit}"),
                        show(value),
                    ));
                }
            }
        }
        out
    }
}

fn check_regex(what: &str, pattern: &str, text: &str, vars: &Vars) -> Option<Mismatch> {
    let expanded = vars.expand_regex(pattern);
    match regex::Regex::new(&expanded) {
        Ok(re) if re.is_match(text) => None,
        Ok(_) => Some(Mismatch::new(
            what,
            format!("matches /{expanded}/"),
            vars.quote(text),
        )),
        Err(err) => Some(Mismatch::new(
            what,
            format!("matches /{expanded}/"),
            format!("(the regular expression is invalid: {err})"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(yaml: &str) -> TextMatch {
        serde_saphyr::from_str(yaml).unwrap()
    }

    /// `check` without schemas, for the matchers that need none.
    fn check(m: &TextMatch, what: &str, text: &str, vars: &Vars) -> Vec<Mismatch> {
        m.check(what, text, vars, &SchemaSet::empty())
    }

    #[test]
    fn text_checks_all_hold_or_each_mismatch_is_reported() {
        let vars = Vars::default();
        let m = text("{contains: [a, b], not_contains: z, regex: '\\Aa', empty: false}");
        assert!(check(&m, "stdout", "a b", &vars).is_empty());
        let failed = check(&m, "stdout", "zb", &vars);
        let expected: Vec<_> = failed.iter().map(|m| m.expected.as_str()).collect();
        assert_eq!(
            expected,
            [
                "stdout contains \"a\"",
                "stdout does not contain \"z\"",
                "stdout matches /\\Aa/"
            ]
        );
        assert_eq!(failed[0].observed, "\"zb\"");
    }

    #[test]
    fn json_pointers_are_checked_and_non_json_is_a_mismatch() {
        let vars = Vars::default();
        let m = text(
            "json: {/status: {equals: COMPLETED}, /result: {type: object}, /error: {exists: false}}",
        );
        assert!(check(&m, "stdout", r#"{"status":"COMPLETED","result":{}}"#, &vars).is_empty());
        let failed = check(
            &m,
            "stdout",
            r#"{"status":"FAILED","result":"x","error":1}"#,
            &vars,
        );
        let expected: Vec<_> = failed.iter().map(|m| m.expected.as_str()).collect();
        assert_eq!(
            expected,
            [
                "stdout JSON /error is absent",
                "stdout JSON /result is of type object",
                "stdout JSON /status equals \"COMPLETED\"",
            ]
        );
        assert_eq!(
            check(&m, "stdout", "log line\n{}", &vars)[0].expected,
            "stdout is one JSON document"
        );
    }

    #[test]
    fn schema_checks_validate_the_text_as_one_document() {
        let dir = tempfile::tempdir().unwrap();
        let schema = json!({"type": "object", "required": ["status"],
                            "properties": {"status": {"enum": ["active"]}}});
        std::fs::write(dir.path().join("doc.schema.json"), schema.to_string()).unwrap();
        let schemas = SchemaSet::load(dir.path()).unwrap();
        let vars = Vars::default();
        let m = text("{schema: doc}");
        assert!(
            m.check("stdout", r#"{"status": "active"}"#, &vars, &schemas)
                .is_empty()
        );
        let wrong = m.check("stdout", r#"{"status": "gone"}"#, &vars, &schemas);
        assert_eq!(wrong.len(), 1, "{wrong:?}");
        assert!(wrong[0].expected.ends_with("doc.schema.json"), "{wrong:?}");
        assert!(
            wrong[0].observed.starts_with("line 1: /status: "),
            "{wrong:?}"
        );
        let two = m.check("stdout", "{\"status\": \"active\"}\n{}", &vars, &schemas);
        assert!(two[0].observed.contains("not valid JSON"), "{two:?}");
        let unknown = text("{schema: nope}").check("stdout", "{}", &vars, &schemas);
        assert!(
            unknown[0]
                .observed
                .contains("nope.schema.json does not exist"),
            "{unknown:?}"
        );
    }

    #[test]
    fn equals_null_is_kept_and_missing_values_fail() {
        let m: ValueMatch = serde_saphyr::from_str("{equals: null}").unwrap();
        assert_eq!(m.equals, Some(Value::Null));
        let vars = Vars::default();
        assert!(m.check("doc", "/a", &json!({"a": null}), &vars).is_empty());
        assert_eq!(
            m.check("doc", "/b", &json!({}), &vars)[0].observed,
            "absent"
        );
    }

    #[test]
    fn numbers_types_and_contains() {
        let vars = Vars::default();
        let m: ValueMatch = serde_saphyr::from_str("{type: integer, min: 1, max: 3}").unwrap();
        assert!(m.check("d", "", &json!(2), &vars).is_empty());
        assert_eq!(m.check("d", "", &json!(2.5), &vars).len(), 1);
        assert_eq!(m.check("d", "", &json!("2"), &vars).len(), 3);
        let number: ValueMatch = serde_saphyr::from_str("{type: number}").unwrap();
        assert!(number.check("d", "", &json!(2), &vars).is_empty());
        let has: ValueMatch = serde_saphyr::from_str("{contains: x}").unwrap();
        assert!(has.check("d", "", &json!(["x", "y"]), &vars).is_empty());
        assert!(has.check("d", "", &json!("axb"), &vars).is_empty());
        assert_eq!(has.check("d", "", &json!(["xy"]), &vars).len(), 1);
    }

    #[test]
    fn placeholders_expand_in_expected_values() {
        let mut vars = Vars::default();
        vars.set("tmp", "/t.1");
        let m = text("{equals: '{tmp}/a', regex: '\\A{tmp}/a\\z'}");
        assert!(check(&m, "f", "/t.1/a", &vars).is_empty());
        assert_eq!(check(&m, "f", "/tx1/a", &vars).len(), 2);
    }

    #[test]
    fn exit_codes_and_signals() {
        assert_eq!(ExitMatch::Code(0).check(Some(0), None), None);
        let any = ExitMatch::AnyOf(vec![1, 126]);
        assert_eq!(any.check(Some(126), None), None);
        let bad = any.check(Some(0), None).unwrap();
        assert_eq!(bad.expected, "exit code is one of 1, 126");
        assert_eq!(
            ExitMatch::Code(130).check(None, Some(9)).unwrap().observed,
            "killed by signal 9"
        );
        let failed: ExitMatch = serde_saphyr::from_str("nonzero").unwrap();
        assert_eq!(failed, ExitMatch::Class(ExitClass::Nonzero));
        assert_eq!(failed.check(Some(1), None), None);
        assert_eq!(failed.check(Some(126), None), None);
        assert_eq!(
            failed.check(Some(0), None).unwrap().expected,
            "exit code is not 0"
        );
        assert!(failed.check(None, Some(9)).is_some());
    }
}

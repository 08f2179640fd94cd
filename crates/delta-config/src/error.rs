//! Configuration errors: what is wrong, where (file, line, column) and how to fix it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, Location, MessageFormatter, UserMessageFormatter};

use crate::suggest;

/// A configuration file cannot be used. The CLI maps every one of these to exit code 126.
///
/// Rendered (by `Display`) as
///
/// ```text
/// error: <message>
///   --> <file>:<line>:<column>
///   = help: <help>
/// ```
///
/// with `:<line>:<column>` omitted when unknown and the help line omitted when there is
/// none. The `-->` line is omitted only when no file is involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file at fault (or the one that was looked for).
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column (in characters), when known.
    pub column: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl ConfigError {
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
            help: None,
        }
    }

    /// Point the error at `location`; unknown locations (line 0) are ignored.
    pub fn at(mut self, location: Location) -> Self {
        if location.line() > 0 {
            self.line = Some(location.line());
            self.column = (location.column() > 0).then(|| location.column());
        }
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Translate a YAML parse or shape error of `file` (whose content is `text`).
    ///
    /// serde-saphyr reports the location but not the key path, so for type errors the key
    /// is recovered from the source line the error points at; it only makes the message
    /// friendlier and is omitted when the line does not look like `key: value`.
    pub fn from_yaml(file: &Path, text: &str, err: &serde_saphyr::Error) -> Self {
        let location = err.location().unwrap_or(Location::UNKNOWN);
        let (message, help) = explain(original_error(err), text, location);
        let mut error = Self::new(file, message).at(location);
        error.help = help;
        error
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)?;
        if !self.file.as_os_str().is_empty() {
            write!(f, "\n  --> {}", self.file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
                if let Some(column) = self.column {
                    write!(f, ":{column}")?;
                }
            }
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// The message and help for a serde-saphyr error located at `location` in `text`.
///
/// The error enum is `#[non_exhaustive]`: the variants we can word better are picked out
/// one by one, and everything else keeps serde-saphyr's own user-facing wording.
fn explain(
    original: &serde_saphyr::Error,
    text: &str,
    location: Location,
) -> (String, Option<String>) {
    let key = key_before(text, location);
    let for_key = key.map(|k| format!(" for `{k}`")).unwrap_or_default();
    if let serde_saphyr::Error::SerdeUnknownField {
        field, expected, ..
    } = original
    {
        unknown_key(field, expected)
    } else if let serde_saphyr::Error::SerdeUnknownVariant {
        variant, expected, ..
    } = original
    {
        unknown_value(variant, &for_key, expected)
    } else if let serde_saphyr::Error::SerdeMissingField { field, .. } = original {
        (
            format!("missing required key `{field}`"),
            Some(format!("add `{field}:` to this mapping")),
        )
    } else if let serde_saphyr::Error::DuplicateMappingKey { key: Some(k), .. } = original {
        (
            format!("duplicate key `{}`", sanitize(k)),
            Some("a key may appear only once in a mapping; remove one of them".to_owned()),
        )
    } else if let serde_saphyr::Error::InvalidScalar { ty, .. } = original {
        let found = scalar_at(text, location)
            .map(|found| format!(", found `{}`", sanitize(&found)))
            .unwrap_or_default();
        (
            format!(
                "invalid value{for_key}: expected {}{found}",
                describe_scalar(ty)
            ),
            None,
        )
    } else if let serde_saphyr::Error::Unexpected { expected, .. } = original {
        (
            format!(
                "invalid value{for_key}: expected {}",
                describe_node(expected)
            ),
            None,
        )
    } else if let serde_saphyr::Error::Budget { breach, .. } = original {
        (budget_message(breach, original), Some(budget_help()))
    } else if let serde_saphyr::Error::RecursiveReferencesRequireWeakTypes { .. } = original {
        (
            "recursive alias: an alias (`*name`) is used inside the value of its own anchor \
             (`&name`), which would make an endless value"
                .to_owned(),
            Some("write the value out, or alias only values that are complete".to_owned()),
        )
    } else if let serde_saphyr::Error::ExternalMessage { msg, .. } = original {
        let help = if msg.contains("tab") {
            "YAML does not allow tabs for indentation; indent with spaces"
        } else {
            "check the indentation, quotes and brackets at this position"
        };
        (
            format!("invalid YAML syntax: {}", sanitize(msg)),
            Some(help.to_owned()),
        )
    } else {
        let text = sanitize(&UserMessageFormatter.format_message(original));
        if is_value_error(original) && !for_key.is_empty() {
            (format!("invalid value{for_key}: {text}"), None)
        } else {
            (text, None)
        }
    }
}

/// What limit a YAML document broke: the parser bounds nesting, size and alias expansion
/// so that no file (an "alias bomb" among them) can exhaust memory or the stack.
fn budget_message(breach: &BudgetBreach, original: &serde_saphyr::Error) -> String {
    let limits = Budget::default();
    if let BudgetBreach::Depth { .. } = breach {
        format!(
            "YAML nested too deeply (more than {} levels)",
            limits.max_depth
        )
    } else if let BudgetBreach::Nodes { .. } = breach {
        format!("YAML too large (more than {} values)", limits.max_nodes)
    } else if let BudgetBreach::Aliases { .. } | BudgetBreach::AliasAnchorRatio { .. } = breach {
        "YAML aliases (`*name`) expand to too much".to_owned()
    } else {
        sanitize(&UserMessageFormatter.format_message(original))
    }
}

fn budget_help() -> String {
    let limits = Budget::default();
    format!(
        "configuration files are read with limits that protect against runaway YAML (at \
         most {} levels of nesting, {} values, {} aliases); write the content out plainly, \
         or move tools into imported files",
        limits.max_depth, limits.max_nodes, limits.max_aliases
    )
}

/// "unknown key `x`; did you mean `y`?" plus the list of valid keys.
pub fn unknown_key(key: &str, valid: &[&str]) -> (String, Option<String>) {
    let key = sanitize(key);
    let message = match suggest::closest(&key, valid.iter().copied()) {
        Some(best) => format!("unknown key `{key}`; did you mean `{best}`?"),
        None => format!("unknown key `{key}`"),
    };
    (
        message,
        Some(format!("valid keys here: {}", valid.join(", "))),
    )
}

fn unknown_value(value: &str, for_key: &str, valid: &[&str]) -> (String, Option<String>) {
    let value = sanitize(value);
    let message = match suggest::closest(&value, valid.iter().copied()) {
        Some(best) => format!("unknown value `{value}`{for_key}; did you mean `{best}`?"),
        None => format!("unknown value `{value}`{for_key}"),
    };
    (
        message,
        Some(format!("expected one of: {}", valid.join(", "))),
    )
}

/// How a scalar type is called in messages.
fn describe_scalar(ty: &str) -> &str {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" | "floating point" => "a number",
        "bool" | "boolean" => "true or false",
        "char" => "a single character",
        other => other,
    }
}

/// How the parser's expected node kinds are called in messages.
fn describe_node(expected: &str) -> &str {
    match expected {
        "mapping start" => "a mapping (indented `key: value` lines)",
        "sequence start" => "a list (`- item` lines, or `[a, b]`)",
        "string scalar" | "scalar" => "a single value, not a list or mapping",
        other => other,
    }
}

/// The plain scalar written at `location`, for "found `x`" in messages.
fn scalar_at(text: &str, location: Location) -> Option<String> {
    let line_index = usize::try_from(location.line()).ok()?.checked_sub(1)?;
    let column = usize::try_from(location.column()).ok()?.checked_sub(1)?;
    let rest: String = text.lines().nth(line_index)?.chars().skip(column).collect();
    // Stop at a comment and, inside a flow collection, at the next item or closing bracket.
    let value = rest
        .split([',', ']', '}'])
        .next()?
        .split(" #")
        .next()?
        .trim();
    let short = value.chars().count() <= 40 && !value.is_empty();
    short.then(|| value.to_owned())
}

/// Errors about a value whose key is worth naming in the message.
fn is_value_error(err: &serde_saphyr::Error) -> bool {
    matches!(
        err,
        serde_saphyr::Error::Unexpected { .. }
            | serde_saphyr::Error::SerdeInvalidType { .. }
            | serde_saphyr::Error::SerdeInvalidValue { .. }
            | serde_saphyr::Error::SerdeInvalidLength { .. }
            | serde_saphyr::Error::InvalidScalar { .. }
            | serde_saphyr::Error::NullIntoString { .. }
            | serde_saphyr::Error::NonFiniteFloat { .. }
    )
}

fn original_error(mut err: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = err
    {
        err = error;
    }
    err
}

/// The key of a `key: value` line when `location` points at the value.
fn key_before(text: &str, location: Location) -> Option<String> {
    let line_index = usize::try_from(location.line()).ok()?.checked_sub(1)?;
    let column = usize::try_from(location.column()).ok()?.checked_sub(1)?;
    let line = text.lines().nth(line_index)?;
    let before: String = line.chars().take(column).collect();
    // A value points past the colon; an empty (null) value points at the colon itself.
    let before = match before.trim_end().strip_suffix(':') {
        Some(key) => key,
        None if line.chars().nth(column) == Some(':') => before.as_str(),
        None => return None,
    };
    let key = before
        .rsplit(|c: char| c.is_whitespace() || c == '{' || c == ',')
        .next()?
        .trim_matches(|c| c == '"' || c == '\'');
    let plausible = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    plausible.then(|| key.to_owned())
}

/// Escape control characters so that user text cannot forge terminal output.
pub fn sanitize(text: &str) -> String {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().collect()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> ConfigError {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Doc {
            name: String,
            temperature: Option<f64>,
            mode: Option<Mode>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Mode {
            Skip,
            Error,
        }
        let err = serde_saphyr::from_str::<Doc>(text).unwrap_err();
        ConfigError::from_yaml(Path::new("a.yaml"), text, &err)
    }

    #[test]
    fn display_has_location_and_help_lines() {
        let err = ConfigError {
            file: PathBuf::from("/x/agent.yaml"),
            line: Some(3),
            column: Some(5),
            message: "bad".into(),
            help: Some("fix it".into()),
        };
        assert_eq!(
            err.to_string(),
            "error: bad\n  --> /x/agent.yaml:3:5\n  = help: fix it"
        );
        let bare = ConfigError::new(Path::new(""), "bad");
        assert_eq!(bare.to_string(), "error: bad");
        let file_only = ConfigError::new(Path::new("f.yaml"), "bad");
        assert_eq!(file_only.to_string(), "error: bad\n  --> f.yaml");
    }

    #[test]
    fn unknown_key_suggests_closest() {
        let err = render("name: a\ntemprature: 1\n");
        assert_eq!(
            err.message,
            "unknown key `temprature`; did you mean `temperature`?"
        );
        assert_eq!((err.line, err.column), (Some(2), Some(1)));
        assert_eq!(
            err.help.as_deref(),
            Some("valid keys here: name, temperature, mode")
        );
    }

    #[test]
    fn type_errors_name_the_key() {
        let err = render("name: a\ntemperature: hot\n");
        assert_eq!(
            err.message,
            "invalid value for `temperature`: expected a number, found `hot`"
        );
        assert_eq!((err.line, err.column), (Some(2), Some(14)));
    }

    #[test]
    fn shape_errors_say_what_was_expected() {
        let err = render("name: [a, b]\n");
        assert_eq!(
            err.message,
            "invalid value for `name`: expected a single value, not a list or mapping"
        );
    }

    #[test]
    fn null_values_and_flow_values_name_key_and_value() {
        let err = render("name:\n");
        assert_eq!(
            err.message,
            "invalid value for `name`: null is not allowed here"
        );
        let err = render("{name: a, temperature: warm, mode: skip}\n");
        assert_eq!(
            err.message,
            "invalid value for `temperature`: expected a number, found `warm`"
        );
    }

    #[test]
    fn unknown_enum_value_suggests_closest() {
        let err = render("name: a\nmode: skp\n");
        assert_eq!(
            err.message,
            "unknown value `skp` for `mode`; did you mean `skip`?"
        );
        assert_eq!(err.help.as_deref(), Some("expected one of: skip, error"));
    }

    #[test]
    fn syntax_errors_say_so() {
        let err = render("name: a\n\tmode: skip\n");
        assert!(err.message.starts_with("invalid YAML syntax: "), "{err}");
        assert_eq!(err.line, Some(1));
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(sanitize("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        let err = render("name: a\n\"x\\e\": 1\n");
        assert!(!err.message.chars().any(char::is_control), "{err}");
    }
}

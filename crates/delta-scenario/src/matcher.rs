//! Matchers' serialized forms: on text ([`TextMatch`]), on one JSON value found by a JSON
//! pointer ([`ValueMatch`]), and on an exit code ([`ExitMatch`]). What each check means
//! is `delta-conformance`'s to say.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A single value or a list of them (`contains: x` or `contains: [x, y]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One text.
    One(String),
    /// Several texts, each checked.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The texts, in order.
    pub fn items(&self) -> &[String] {
        match self {
            Self::One(one) => std::slice::from_ref(one),
            Self::Many(many) => many,
        }
    }
}

/// Checks on a text (stdout, stderr, a file, a log). Every given check must hold.
/// Placeholders are substituted in every expected text first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextMatch {
    /// The whole text, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// Text(s) that must each occur somewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<OneOrMany>,
    /// Text(s) that must not occur anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<OneOrMany>,
    /// A regular expression (Rust `regex` syntax) that must match somewhere; anchor it with
    /// `\A` and `\z` to match the whole text. Placeholder values are escaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// `true`: the text must be empty; `false`: it must not be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty: Option<bool>,
    /// The text must be one JSON document; each JSON pointer (`""` is the whole document)
    /// must satisfy its matcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<BTreeMap<String, ValueMatch>>,
    /// The text must be one JSON document valid against `schemas/NAME.schema.json`, e.g.
    /// `sessions-exec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Every line must be one JSON document valid against `schemas/NAME.schema.json`, e.g.
    /// `stream-line` for `--format jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_schema: Option<String>,
    /// The last line must be one JSON document; each JSON pointer must satisfy its matcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_line: Option<BTreeMap<String, ValueMatch>>,
}

/// Checks on the JSON value at one pointer. Every given check must hold; unless `exists:
/// false` is given, the value must exist.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueMatch {
    /// Whether the value exists at all (`false`: the pointer must not resolve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// The value, exactly (`null` included). Placeholders are substituted in its strings.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Value")]
    pub equals: Option<Value>,
    /// The JSON type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<JsonType>,
    /// A string value matching this regular expression somewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// A string value containing this text, or an array with this string as an element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// A string value not containing this text (a value that is no string fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<String>,
    /// A number at least this large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// A number at most this large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl ValueMatch {
    /// A matcher of exactly `value`.
    pub fn exactly(value: impl Into<Value>) -> Self {
        Self {
            equals: Some(value.into()),
            ..Self::default()
        }
    }
}

/// `Some(null)` for an explicit `equals: null`, which plain `Option<Value>` would drop.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A JSON type, as JSON Schema names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// Any number.
    Number,
    /// A number without a fractional part.
    Integer,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// The name JSON Schema and scenarios give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Boolean => "boolean",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::String => "string",
            Self::Array => "array",
            Self::Object => "object",
        }
    }
}

/// The expected exit code: one code, any of several, or `nonzero`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ExitMatch {
    /// Exactly this code.
    Code(i32),
    /// Any of these codes.
    AnyOf(Vec<i32>),
    /// A class of codes.
    Class(ExitClass),
}

/// A class of exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExitClass {
    /// Any code but 0: the command failed, whichever code it chose (a process killed by
    /// a signal has no exit code and does not match).
    Nonzero,
}

impl TextMatch {
    /// Every regular expression in this matcher, for checking them when a scenario loads.
    pub fn regexes(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.regex.iter().map(String::as_str).collect();
        for matcher in self
            .json
            .iter()
            .chain(self.last_line.iter())
            .flat_map(BTreeMap::values)
        {
            all.extend(matcher.regex.as_deref());
        }
        all
    }
}

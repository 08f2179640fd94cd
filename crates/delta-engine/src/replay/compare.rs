//! What "the same" means for a replay: a request is compared on its `messages` and
//! `tools`, an observation on its status and text, both after ids, times and the two runs'
//! own names and workspaces are masked; and the short diff that shows the first difference.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value};

use crate::llm::{ModelApi, conversation_keys};

/// Characters of a line or value quoted in a diff.
const QUOTE_CHARS: usize = 160;

/// What stands in, in both requests, for a tool answer whose observation already diverged
/// (and was reported): the recorded answers are still served after it.
const REPORTED: &str = "<divergent observation, reported>";

/// Texts that differ between two runs of the same thing and are not compared.
#[derive(Debug, Clone)]
pub struct Masks {
    /// Literal texts and what replaces them, longest first.
    literal: Vec<(String, &'static str)>,
}

impl Masks {
    /// Masks for `pairs` (text, its placeholder); empty texts are ignored.
    #[must_use]
    pub fn new(mut pairs: Vec<(String, &'static str)>) -> Self {
        pairs.retain(|(text, _)| !text.is_empty());
        pairs.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
        Masks { literal: pairs }
    }

    /// These masks and `more`.
    #[must_use]
    pub fn with(&self, more: Vec<(String, &'static str)>) -> Self {
        let mut pairs = self.literal.clone();
        pairs.extend(more);
        Masks::new(pairs)
    }

    /// `text` with the literal texts, UUIDs and RFC 3339 times replaced.
    #[must_use]
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (from, to) in &self.literal {
            if out.contains(from.as_str()) {
                out = out.replace(from.as_str(), to);
            }
        }
        mask_patterns(&out)
    }

    /// `value` with every string (keys included) masked.
    #[must_use]
    pub fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(key, v)| (self.text(key), self.value(v)))
                    .collect(),
            ),
            Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        }
    }
}

/// The part of a request of `api` a replay compares: the conversation and the tools
/// ([`conversation_keys`]), masked, with the tool answers of `reported` calls (whose
/// observations already diverged) blanked.
#[must_use]
pub fn request_view(
    api: ModelApi,
    request: &Value,
    masks: &Masks,
    reported: &HashSet<String>,
) -> Value {
    let mut view = Map::new();
    for key in conversation_keys(api) {
        let mut part = request.get(*key).cloned().unwrap_or(Value::Null);
        if let Value::Array(list) = &mut part {
            for entry in list.iter_mut() {
                blank_reported(api, entry, reported);
            }
        }
        view.insert((*key).to_owned(), masks.value(&part));
    }
    Value::Object(view)
}

/// Replaces the answer in `entry` (a message or input item) when it answers a reported
/// call: chat's `tool` message, Anthropic's `tool_result` blocks, a Responses
/// `function_call_output`.
fn blank_reported(api: ModelApi, entry: &mut Value, reported: &HashSet<String>) {
    let is_reported = |value: &Value, id: &str| {
        value
            .get(id)
            .and_then(Value::as_str)
            .is_some_and(|id| reported.contains(id))
    };
    match api {
        ModelApi::Chat => {
            if entry.get("role").and_then(Value::as_str) == Some("tool")
                && is_reported(entry, "tool_call_id")
            {
                entry["content"] = REPORTED.into();
            }
        }
        ModelApi::Responses => {
            if entry.get("type").and_then(Value::as_str) == Some("function_call_output")
                && is_reported(entry, "call_id")
            {
                entry["output"] = REPORTED.into();
            }
        }
        ModelApi::Anthropic => {
            if let Some(blocks) = entry.get_mut("content").and_then(Value::as_array_mut) {
                for block in blocks.iter_mut() {
                    if block.get("type").and_then(Value::as_str) == Some("tool_result")
                        && is_reported(block, "tool_use_id")
                    {
                        block["content"] = REPORTED.into();
                    }
                }
            }
        }
    }
}

/// The first difference between `recorded` and `replayed`: its path and the two versions
/// of the first line that differs; `None` when they are equal.
#[must_use]
pub fn first_difference(recorded: &Value, replayed: &Value) -> Option<String> {
    difference_at(recorded, replayed, "")
}

/// The first difference between two texts, as [`first_difference`] shows it.
#[must_use]
pub fn text_difference(what: &str, recorded: &str, replayed: &str) -> Option<String> {
    (recorded != replayed).then(|| lines_difference(what, recorded, replayed))
}

fn difference_at(recorded: &Value, replayed: &Value, path: &str) -> Option<String> {
    match (recorded, replayed) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|key| {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                difference_at(
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                    &inner,
                )
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            let inner = a
                .iter()
                .zip(b)
                .enumerate()
                .find_map(|(index, (x, y))| difference_at(x, y, &format!("{path}[{index}]")));
            inner.or_else(|| {
                (a.len() != b.len()).then(|| {
                    let extra = a.get(b.len()).or_else(|| b.get(a.len()));
                    format!(
                        "{path}: {} recorded, {} replayed; the first unmatched: {}",
                        a.len(),
                        b.len(),
                        quote(&extra.map_or_else(String::new, Value::to_string))
                    )
                })
            })
        }
        (Value::String(a), Value::String(b)) => text_difference(path, a, b),
        _ if recorded != replayed => Some(format!(
            "{path}:\n- {}\n+ {}",
            quote(&recorded.to_string()),
            quote(&replayed.to_string())
        )),
        _ => None,
    }
}

fn lines_difference(what: &str, recorded: &str, replayed: &str) -> String {
    let mut a = recorded.lines();
    let mut b = replayed.lines();
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                let show = |text: Option<&str>| text.map_or_else(|| "(no line)".to_owned(), quote);
                return format!("{what}, line {line}:\n- {}\n+ {}", show(x), show(y));
            }
        }
    }
}

/// `text` cut to [`QUOTE_CHARS`] characters.
fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTE_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(QUOTE_CHARS).collect();
    format!("{cut}…")
}

/// `text` with UUIDs replaced by `<uuid>` and RFC 3339 times by `<time>`.
fn mask_patterns(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(rest) = text.get(at..) {
        let Some(next) = rest.chars().next() else {
            break;
        };
        if let Some(len) = uuid_len(&bytes[at..]) {
            out.push_str("<uuid>");
            at += len;
        } else if let Some(len) = time_len(&bytes[at..]) {
            out.push_str("<time>");
            at += len;
        } else {
            out.push(next);
            at += next.len_utf8();
        }
    }
    out
}

/// Shapes of fixed-width patterns: `h` a hex digit, `d` a decimal digit, other bytes
/// literal.
fn matches_shape(bytes: &[u8], shape: &[u8]) -> bool {
    bytes.len() >= shape.len()
        && shape.iter().zip(bytes).all(|(want, got)| match want {
            b'h' => got.is_ascii_hexdigit(),
            b'd' => got.is_ascii_digit(),
            other => other == got,
        })
}

fn uuid_len(bytes: &[u8]) -> Option<usize> {
    const SHAPE: &[u8] = b"hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";
    matches_shape(bytes, SHAPE).then_some(SHAPE.len())
}

/// `2025-10-14T04:30:12`, then optional fractions and an optional `Z` or `+hh:mm`.
fn time_len(bytes: &[u8]) -> Option<usize> {
    const DATE_TIME: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    if !matches_shape(bytes, DATE_TIME) {
        return None;
    }
    let mut len = DATE_TIME.len();
    if bytes.get(len) == Some(&b'.') {
        let digits = bytes.get(len + 1..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        });
        if digits > 0 {
            len += 1 + digits;
        }
    }
    let rest = bytes.get(len..).unwrap_or_default();
    if rest.first() == Some(&b'Z') {
        len += 1;
    } else if matches_shape(rest, b"+dd:dd") || matches_shape(rest, b"-dd:dd") {
        len += 6;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_times_and_the_runs_names_are_masked() {
        let masks = Masks::new(vec![("run-a".to_owned(), "<run_id>")]);
        assert_eq!(
            masks.text(
                "run-a at 2025-10-14T04:30:12.123Z, id 0b4f5e2a-9c1d-4e8f-a2b3-c4d5e6f7a8b9 é"
            ),
            "<run_id> at <time>, id <uuid> é"
        );
        assert_eq!(masks.text("2025-10-14T04:30:12+02:00"), "<time>");
    }

    #[test]
    fn the_first_difference_names_its_path_and_line() {
        let recorded = json!({"messages": [{"role": "system", "content": "a\nb"}]});
        let replayed = json!({"messages": [{"role": "system", "content": "a\nc"}]});
        assert_eq!(
            first_difference(&recorded, &replayed).unwrap(),
            "messages[0].content, line 2:\n- b\n+ c"
        );
        let longer = json!({"messages": [{"role": "system", "content": "a\nb"}, {"role": "user"}]});
        assert_eq!(
            first_difference(&recorded, &longer).unwrap(),
            "messages: 1 recorded, 2 replayed; the first unmatched: {\"role\":\"user\"}"
        );
        assert_eq!(first_difference(&recorded, &recorded), None);
    }

    #[test]
    fn reported_tool_answers_are_blanked() {
        let request = json!({"model": "m", "messages": [
            {"role": "tool", "tool_call_id": "c1", "content": "new"},
            {"role": "tool", "tool_call_id": "c2", "content": "same"}]});
        let reported = HashSet::from(["c1".to_owned()]);
        let view = request_view(ModelApi::Chat, &request, &Masks::new(Vec::new()), &reported);
        assert_eq!(view["messages"][0]["content"], REPORTED);
        assert_eq!(view["messages"][1]["content"], "same");
        assert_eq!(view.get("model"), None);
    }
}

//! The result of a COMPLETED run, as metadata.json and RUN_END record it.

use serde_json::Value;

/// The final answer: a JSON object or array when the whole text parses as one, else the
/// text itself.
#[must_use]
pub fn result_value(content: &str) -> Value {
    match serde_json::from_str::<Value>(content.trim()) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => value,
        Ok(_) | Err(_) => Value::String(content.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_is_json_only_for_objects_and_arrays() {
        assert_eq!(result_value(" {\"a\": 1} "), serde_json::json!({"a": 1}));
        assert_eq!(result_value("[1, 2]"), serde_json::json!([1, 2]));
        assert_eq!(result_value("42"), Value::String("42".to_owned()));
        assert_eq!(result_value("\"x\""), Value::String("\"x\"".to_owned()));
        assert_eq!(result_value("Done."), Value::String("Done.".to_owned()));
    }
}

//! Observed text and JSON as a report shows them: quoted, their middle cut out when long.

use serde_json::Value;

/// The longest excerpt of observed text shown in a report.
const SHOWN_CHARS: usize = 600;

/// A text quoted with escapes, its middle cut out when it is long.
pub fn quote(text: &str) -> String {
    let count = text.chars().count();
    if count <= SHOWN_CHARS {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(SHOWN_CHARS / 2).collect();
    let tail: String = text.chars().skip(count - SHOWN_CHARS / 2).collect();
    format!(
        "{head:?} … ({} characters cut) … {tail:?}",
        count - SHOWN_CHARS
    )
}

/// A JSON value in compact form, shortened like [`quote`].
pub fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_CHARS {
        text
    } else {
        quote(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_in_the_middle() {
        let long = "a".repeat(1000) + "END";
        let shown = quote(&long);
        assert!(shown.contains("characters cut"));
        assert!(shown.ends_with("END\""));
    }
}

//! What mock-llm issues so that it can recognise it when a client sends it back: the
//! `signature` of an Anthropic thinking block, the `data` of a redacted one, the
//! `encrypted_content` and the long ids of Responses items. Each is a keyed hash of what
//! it vouches for, so checking needs no memory of past answers (a restarted mock still
//! recognises them) and any change to the text or the seal is caught.
//!
//! The ids are deliberately hundreds of characters long: real Responses item ids reach
//! that, and a client must keep them exactly.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

/// Hex digits of a seal: long, like the services' signatures, so that a client that
/// truncates or re-encodes one is caught.
const SEAL_WORDS: u64 = 12;

/// The seal of `parts`: `SEAL_WORDS` 64-bit keyed hashes, in hex.
fn seal(kind: &str, parts: &[&str]) -> String {
    (0..SEAL_WORDS)
        .map(|word| {
            let mut hasher = DefaultHasher::new();
            ("mock-llm", kind, word).hash(&mut hasher);
            parts.hash(&mut hasher);
            format!("{:016x}", hasher.finish())
        })
        .collect()
}

/// The `signature` of a thinking block whose text is `thinking`.
pub(crate) fn signature(thinking: &str) -> String {
    format!("EqMock{}", seal("signature", &[thinking]))
}

/// Whether `signature` is the one mock-llm issued for `thinking`.
pub(crate) fn signature_fits(thinking: &str, signature: &str) -> bool {
    self::signature(thinking) == signature
}

/// The `data` of a redacted thinking block standing for `text`.
pub(crate) fn redacted(text: &str) -> String {
    format!("{}.{}", hex(text), seal("redacted", &[text]))
}

/// Whether `data` is a redacted block mock-llm issued.
pub(crate) fn redacted_fits(data: &str) -> bool {
    data.split_once('.')
        .and_then(|(text, _)| unhex(text))
        .is_some_and(|text| redacted(&text) == data)
}

/// The `encrypted_content` of reasoning item `id` whose summary is `text`.
pub(crate) fn encrypted(id: &str, text: &str) -> String {
    format!("gAAAAB{}.{}", hex(text), seal("encrypted", &[id, text]))
}

/// Whether `content` is the `encrypted_content` mock-llm issued for item `id`.
pub(crate) fn encrypted_fits(id: &str, content: &str) -> bool {
    content
        .strip_prefix("gAAAAB")
        .and_then(|rest| rest.split_once('.'))
        .and_then(|(text, _)| unhex(text))
        .is_some_and(|text| encrypted(id, &text) == content)
}

/// A long opaque id: `prefix` and a hash of `parts`.
pub(crate) fn long_id(prefix: &str, parts: &[&str]) -> String {
    format!("{prefix}{}", seal(prefix, parts))
}

fn hex(text: &str) -> String {
    text.bytes().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_recognise_what_they_were_issued_for_and_nothing_else() {
        let sig = signature("I should read it.");
        assert!(sig.len() > 190);
        assert!(signature_fits("I should read it.", &sig));
        assert!(!signature_fits("I should read it!", &sig));
        assert!(!signature_fits("I should read it.", &sig[..sig.len() - 1]));
        let data = redacted("secret thoughts");
        assert!(redacted_fits(&data));
        assert!(!redacted_fits(&data.replace('.', ".0")));
        let content = encrypted("rs_1", "summary é");
        assert!(encrypted_fits("rs_1", &content));
        assert!(!encrypted_fits("rs_2", &content));
        assert!(!encrypted_fits(
            "rs_1",
            &content.replacen("gAAAAB", "gAAAAC", 1)
        ));
        assert_eq!(long_id("rs_", &["1"]), long_id("rs_", &["1"]));
        assert_ne!(long_id("rs_", &["1"]), long_id("rs_", &["2"]));
    }
}

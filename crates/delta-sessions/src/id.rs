//! Session identifiers: generated as `sess_` + 12 hex digits, and checked on input so that an
//! id can never name a path outside the sessions directory.

use std::fmt;

const PREFIX: &str = "sess_";
const HEX_DIGITS: usize = 12;

/// Text that is not a session id (`sess_` + 12 hex digits); the sessions' error type
/// wraps it, so that this module needs none of the others.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session id '{0}'")]
pub struct InvalidSessionId(pub String);

/// A validated session id such as `sess_0123456789ab`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// A fresh random id. Randomness comes from a v4 UUID (the OS generator), so ids from
    /// concurrent `start` calls do not collide in practice; `start` still creates the
    /// directory with an exclusive `mkdir` and retries on the rare clash.
    pub fn generate() -> Self {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        Self(format!("{PREFIX}{}", &uuid[..HEX_DIGITS]))
    }

    /// Accepts exactly `sess_` followed by 12 lowercase hex digits; anything else (slashes,
    /// dots, other lengths) is rejected before it is joined to a path.
    pub fn parse(text: &str) -> Result<Self, InvalidSessionId> {
        if Self::is_valid(text) {
            Ok(Self(text.to_owned()))
        } else {
            Err(InvalidSessionId(text.to_owned()))
        }
    }

    /// Whether `text` has the shape of a session id (used to skip foreign directory entries).
    pub fn is_valid(text: &str) -> bool {
        text.strip_prefix(PREFIX).is_some_and(|hex| {
            hex.len() == HEX_DIGITS && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_back() {
        let id = SessionId::generate();
        assert_eq!(SessionId::parse(id.as_str()).unwrap(), id);
        assert_eq!(id.as_str().len(), PREFIX.len() + HEX_DIGITS);
    }

    #[test]
    fn path_tricks_and_wrong_shapes_are_rejected() {
        for bad in [
            "",
            "sess_",
            "sess_0123456789a",
            "sess_0123456789abc",
            "sess_0123456789AB",
            "sess_../../etc/x",
            "../sess_0123456789ab",
            "sess_0123456789ab/",
            "xess_0123456789ab",
        ] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(SessionId::parse("sess_0123456789ab").is_ok());
    }
}

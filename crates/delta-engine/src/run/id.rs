//! Run ids: validation of client-chosen ids and generation of `YYYYMMDD_HHMMSS_xxxxxx` ids.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest accepted run id, in bytes (all accepted characters are ASCII).
pub const MAX_RUN_ID_LEN: usize = 128;

/// Names that `.delta/` keeps for itself, with why, compared in any letter case (on a
/// case-insensitive file system `version` is `VERSION`). A run directory of that name
/// would collide with the file, and `--run-id VERSION` was reported as "run VERSION
/// already exists".
const RESERVED: [(&str, &str); 3] = [
    (
        "VERSION",
        ".delta/VERSION is the workspace's layout version file",
    ),
    (
        "LATEST",
        ".delta/LATEST is the last-run pointer of the v1.x layout",
    ),
    ("runs", ".delta/runs/ holds the runs of the v1.x layout"),
];

/// A run id that is safe to use as a single path component under `.delta/`.
///
/// Accepted ids match `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`: no `/`, no leading `.` (so no
/// `..`, no hidden directories), no whitespace or control characters; and they are not
/// one of the names `.delta/` keeps for itself (`VERSION`, `LATEST`, `runs`, in any letter
/// case). UUIDs and the generated `20251014_043012_a1b2c3` form both fit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(String);

/// Why a string is not an acceptable run id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid run id {id:?}: {reason}; a run id is 1 to 128 characters from A-Z a-z 0-9 . _ - \
     and starts with a letter or digit (for example a UUID, or 20251014_043012_a1b2c3)"
)]
pub struct InvalidRunId {
    /// The rejected text.
    pub id: String,
    /// What rule it breaks.
    pub reason: String,
}

impl RunId {
    /// Validates a client-chosen id.
    ///
    /// # Errors
    /// [`InvalidRunId`] naming the broken rule.
    pub fn parse(id: &str) -> Result<Self, InvalidRunId> {
        let reject = |reason: String| InvalidRunId {
            id: id.to_owned(),
            reason,
        };
        let Some(first) = id.chars().next() else {
            return Err(reject("it is empty".to_owned()));
        };
        if !first.is_ascii_alphanumeric() {
            return Err(reject(format!("it starts with {first:?}")));
        }
        if let Some(bad) = id
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(reject(format!("it contains {bad:?}")));
        }
        // Every character is ASCII by now, so the byte length is the character count.
        if id.len() > MAX_RUN_ID_LEN {
            return Err(reject(format!(
                "it is {} characters long (at most {MAX_RUN_ID_LEN})",
                id.len()
            )));
        }
        if let Some((_, why)) = RESERVED
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(id))
        {
            return Err(reject(format!("it is reserved: {why}")));
        }
        Ok(Self(id.to_owned()))
    }

    /// A fresh id for `now`: UTC date and time plus six random hex digits, e.g.
    /// `20251014_043012_a1b2c3`. Two runs started in the same second differ in the random
    /// part; the atomic `mkdir` of the run directory catches the rare collision.
    #[must_use]
    pub fn generate(now: DateTime<Utc>) -> Self {
        let suffix = fastrand::u32(..0x0100_0000);
        Self(format!("{}_{suffix:06x}", now.format("%Y%m%d_%H%M%S")))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for RunId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for RunId {
    type Err = InvalidRunId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for RunId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for RunId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for RunId {
    fn schema_name() -> Cow<'static, str> {
        "RunId".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
            "description": "Run id: a client-chosen id (e.g. a UUID) or a generated one (UTC time plus six hex digits).",
            "examples": ["20251014_043012_a1b2c3"]
        })
    }
}

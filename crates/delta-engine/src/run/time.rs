//! The one timestamp format every run-state file uses: RFC 3339, UTC, milliseconds, `Z`.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, written as `2025-10-14T10:30:00.123Z`.
///
/// chrono's own serde output varies its fraction length with the value (`.1`, `.123456789`),
/// which makes files harder to diff and to match in tests; this type always writes
/// exactly three fractional digits. Reading accepts any RFC 3339 time (any offset, any
/// precision), so files written by other implementations still load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// The current time, truncated to whole milliseconds so that a value survives a
    /// write/read round trip unchanged.
    #[must_use]
    pub fn now() -> Self {
        Self::from_datetime(Utc::now())
    }

    /// Wraps a chrono time, truncating it to whole milliseconds.
    #[must_use]
    pub fn from_datetime(time: DateTime<Utc>) -> Self {
        let millis = time.timestamp_millis();
        Self(DateTime::from_timestamp_millis(millis).unwrap_or(time))
    }

    /// Parses an RFC 3339 time such as `2025-10-14T10:30:00Z` or `2025-10-14T12:30:00+02:00`.
    ///
    /// # Errors
    /// The chrono parse error when `text` is not an RFC 3339 time.
    pub fn parse(text: &str) -> Result<Self, chrono::ParseError> {
        DateTime::parse_from_rfc3339(text).map(|t| Self::from_datetime(t.with_timezone(&Utc)))
    }

    /// The wrapped chrono time.
    #[must_use]
    pub fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }

    /// Milliseconds from `earlier` to `self`, zero when `earlier` is later (clocks that went
    /// backwards must not produce a negative duration).
    #[must_use]
    pub fn millis_since(&self, earlier: Timestamp) -> u64 {
        u64::try_from((self.0 - earlier.0).num_milliseconds()).unwrap_or(0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(time: DateTime<Utc>) -> Self {
        Self::from_datetime(time)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(|e| {
            serde::de::Error::custom(format_args!(
                "invalid timestamp {text:?}: {e} (expected RFC 3339, e.g. 2025-10-14T10:30:00.123Z)"
            ))
        })
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339 time in UTC with milliseconds, e.g. 2025-10-14T10:30:00.123Z.",
            "examples": ["2025-10-14T10:30:00.123Z"]
        })
    }
}

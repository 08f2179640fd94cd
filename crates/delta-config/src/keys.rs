//! Which keys a configuration file may use at its top level: the field names of its raw
//! serde struct, read from what serde's derive hands a deserializer (so a field added to
//! the struct is a known key at once, with nothing to register), and keys starting with
//! `x-`, the documented extension namespace nothing in the engine reads.

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::Spanned;

use crate::error::{ConfigError, unknown_key};

/// Keys with this prefix are the user's: ignored at the top level of agent.yaml,
/// hooks.yaml and context.yaml, as Compose and OpenAPI do with theirs.
pub const EXTENSION_PREFIX: &str = "x-";

/// Whether `key` belongs to the extension namespace.
#[must_use]
pub fn is_extension(key: &str) -> bool {
    key.starts_with(EXTENSION_PREFIX)
}

/// The field names of the struct `T` derives `Deserialize` for, as serde's derive passes
/// them to `deserialize_struct` (renamed names, not Rust names). Empty for a type that is
/// not a derived struct.
#[must_use]
pub fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields = None;
    // The probe always errors once it has seen the call; the error carries nothing.
    let _ = T::deserialize(Probe(&mut fields));
    fields.unwrap_or_default()
}

/// The first top-level key of `file` that is neither a field of `T` nor an extension,
/// as a configuration error with a did-you-mean and the valid keys.
///
/// # Errors
/// [`ConfigError`] at the unknown key's line and column.
pub fn check_top_level<'de, T: Deserialize<'de>, V>(
    keys: &[(Spanned<String>, V)],
    file: &Path,
) -> Result<(), ConfigError> {
    let fields = fields_of::<T>();
    match keys
        .iter()
        .map(|(key, _)| key)
        .find(|key| !fields.contains(&key.value.as_str()) && !is_extension(&key.value))
    {
        Some(key) => {
            let (message, help) = unknown_key(&key.value, fields);
            Err(ConfigError::new(file, message)
                .at(key.referenced)
                .help(format!(
                    "{}; keys starting with `{EXTENSION_PREFIX}` are yours and ignored",
                    help.unwrap_or_default()
                )))
        }
        None => Ok(()),
    }
}

/// A deserializer that only records the fields of the struct asked for.
struct Probe<'a>(&'a mut Option<&'static [&'static str]>);

/// The probe's one outcome.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probed")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = Some(fields);
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Sample {
        name: String,
        #[serde(rename = "type")]
        kind: Option<String>,
    }

    #[test]
    fn the_fields_are_the_names_serde_reads() {
        assert_eq!(fields_of::<Sample>(), ["name", "type"]);
        assert!(fields_of::<String>().is_empty());
    }

    #[test]
    fn every_top_level_key_of_the_raw_files_is_a_field() {
        use crate::raw::{AgentYaml, ContextYaml};
        let agent = fields_of::<AgentYaml>();
        for key in [
            "name",
            "llm",
            "tools",
            "mcp_servers",
            "budget",
            "lifecycle_hooks",
        ] {
            assert!(agent.contains(&key), "{key}");
        }
        assert_eq!(fields_of::<ContextYaml>(), ["total_max_tokens", "sources"]);
    }
}

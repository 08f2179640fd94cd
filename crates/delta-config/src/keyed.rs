//! A mapping read in document order with the place of each key ([`KeyedMap`]): what the
//! file types (`raw`) and the document reader (`yaml`) share.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_saphyr::Spanned;

/// A mapping read in document order, keeping where each key was written.
///
/// serde's own maps drop key locations, which "unknown hook `x`" errors and "unknown
/// top-level key" warnings need.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedMap<V>(pub Vec<(Spanned<String>, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for KeyedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyedMapVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for KeyedMapVisitor<V> {
            type Value = KeyedMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<V>()?;
                    entries.push((key, value));
                }
                Ok(KeyedMap(entries))
            }

            // An empty document, `~`, or `key:` with no value is an empty mapping.
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(KeyedMap(Vec::new()))
            }
        }

        // `any` rather than `map`: only `any` lets a null document reach `visit_unit`.
        deserializer.deserialize_any(KeyedMapVisitor(PhantomData))
    }
}

/// The keys of a top-level mapping, values skipped.
pub type TopLevelKeys = KeyedMap<IgnoredAny>;

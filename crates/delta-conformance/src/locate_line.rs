//! The line of a JSON pointer in a JSON or YAML text, so a schema violation in a document
//! can be shown as `file:line`.

use std::cell::OnceCell;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// Finds lines of JSON pointers in one text (parsed on first use, once).
pub struct Locator<'a> {
    text: &'a str,
    tree: OnceCell<Option<Spanned<Node>>>,
}

impl<'a> Locator<'a> {
    /// A locator over a JSON or YAML text.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            tree: OnceCell::new(),
        }
    }

    /// The 1-based line of the value at `pointer`; when the pointer leads to a missing
    /// member, the line of the nearest existing parent. `None` if the text does not parse.
    pub fn line_of(&self, pointer: &str) -> Option<usize> {
        let tree = self
            .tree
            .get_or_init(|| serde_saphyr::from_str::<Spanned<Node>>(self.text).ok())
            .as_ref()?;
        let mut node = tree;
        for segment in pointer.split('/').skip(1) {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            let next = match &node.value {
                Node::Map(entries) => entries.iter().find(|(k, _)| *k == segment).map(|(_, v)| v),
                Node::Seq(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
                Node::Leaf => None,
            };
            match next {
                Some(next) => node = next,
                None => break,
            }
        }
        usize::try_from(node.referenced.line())
            .ok()
            .filter(|l| *l > 0)
    }
}

/// A document's shape with the position of every node.
enum Node {
    Leaf,
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(String, Spanned<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON or YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            entries.push((key.0, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Map(entries))
    }
}

/// A mapping key of any scalar type, as text.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key("null".to_string()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_map_to_lines_in_json_and_yaml() {
        let json =
            "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": [\n      true,\n      \"x\"\n    ]\n  }\n}\n";
        let at = Locator::new(json);
        assert_eq!(at.line_of("/a"), Some(2));
        assert_eq!(at.line_of("/b/c/1"), Some(6));
        assert_eq!(at.line_of("/b/missing"), Some(3));
        let yaml = "name: x\ntools:\n  - name: t\n    exec: ls\n";
        assert_eq!(Locator::new(yaml).line_of("/tools/0/exec"), Some(4));
        assert_eq!(Locator::new("{").line_of("/a"), None);
    }
}

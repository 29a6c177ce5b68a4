//! Another tool's YAML (or JSON) read into a tree whose every key and value keeps its
//! position (serde-saphyr's [`Spanned`]), so what the import cannot carry is reported at
//! its line and column in the input.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, MessageFormatter, Spanned};

use crate::diagnostic::Span;

/// One value of the input.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<String>, Spanned<Node>)>),
}

impl Node {
    /// The text of a scalar (numbers and booleans as written in YAML), `None` for a
    /// list, a mapping or null.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Node::Str(s) => Some(s.clone()),
            Node::Bool(b) => Some(b.to_string()),
            Node::Int(i) => Some(i.to_string()),
            Node::Float(f) => Some(f.to_string()),
            Node::Null | Node::Seq(_) | Node::Map(_) => None,
        }
    }

    /// The entries of a mapping (empty for anything else).
    pub(crate) fn entries(&self) -> &[(Spanned<String>, Spanned<Node>)] {
        match self {
            Node::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The value of `key` in a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Spanned<Node>> {
        self.entries()
            .iter()
            .find(|(k, _)| k.value == key)
            .map(|(_, v)| v)
    }

    /// The scalar items of a list, or a scalar's text as one item.
    pub(crate) fn words(&self) -> Vec<String> {
        match self {
            Node::Seq(items) => items.iter().filter_map(|i| i.value.text()).collect(),
            other => other.text().into_iter().collect(),
        }
    }

    /// What kind of value this is, for messages.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) | Node::Float(_) => "a number",
            Node::Str(_) => "text",
            Node::Seq(_) => "a list",
            Node::Map(_) => "a mapping",
        }
    }

    /// The value as JSON (for an output schema).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => Value::from(*i),
            Node::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Node::Str(s) => Value::String(s.clone()),
            Node::Seq(items) => Value::Array(items.iter().map(|i| i.value.to_json()).collect()),
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.value.clone(), v.value.to_json()))
                    .collect(),
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NodeVisitor;

        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = Node;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any YAML value")
            }

            fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Bool(v))
            }

            fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Int(v))
            }

            fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
                Ok(i64::try_from(v).map_or(Node::Float(v as f64), Node::Int))
            }

            fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
                Ok(Node::Float(v))
            }

            fn visit_str<E>(self, v: &str) -> Result<Node, E> {
                Ok(Node::Str(v.to_owned()))
            }

            fn visit_string<E>(self, v: String) -> Result<Node, E> {
                Ok(Node::Str(v))
            }

            fn visit_unit<E>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }

            fn visit_none<E>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
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
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<Spanned<Node>>()?;
                    entries.push((key, value));
                }
                Ok(Node::Map(entries))
            }
        }

        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Budgets for reading another tool's file: the preset parser's.
fn options() -> serde_saphyr::Options {
    crate::preset::source::options()
}

/// Parse `text` as one YAML document. The error is serde-saphyr's message and where it
/// happened.
pub(crate) fn parse(text: &str) -> Result<Spanned<Node>, (String, Option<Location>)> {
    serde_saphyr::from_str_with_options::<Spanned<Node>>(text, options()).map_err(|e| {
        let location = e.location();
        let message = serde_saphyr::UserMessageFormatter.format_message(&e);
        let message = message.trim();
        let message = if message.is_empty() {
            "not valid YAML".to_owned()
        } else {
            message.to_owned()
        };
        (message, location)
    })
}

/// Where positions of one input point: its name as shown and the lines before the text
/// parsed (a frontmatter's opening `---`).
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) file: Arc<str>,
    pub(crate) line_offset: u32,
}

impl Place {
    /// The span of a location of the parsed text.
    pub(crate) fn span(&self, at: &Location) -> Span {
        let line = u32::try_from(at.line()).unwrap_or(u32::MAX).max(1);
        let column = u32::try_from(at.column()).unwrap_or(u32::MAX).max(1);
        Span::new(
            Arc::clone(&self.file),
            line.saturating_add(self.line_offset),
            column,
        )
    }

    /// The span of a key, covering it.
    pub(crate) fn key_span(&self, key: &Spanned<String>) -> Span {
        self.span(&key.referenced)
            .with_len(u32::try_from(key.value.chars().count()).unwrap_or(1))
    }
}

//! A request body in two parts: what every step of a run sends alike (the model, the
//! tools, the system prompt, the parameters: a [`BodyPrefix`], built once and shared),
//! and the conversation history, built each step. [`RequestBody::to_json`] writes the
//! same bytes as serialising [`super::request_body`]'s `Value`, so a live request is
//! byte for byte what it was; a replay compares the shared part once per run and the
//! history per step.

use std::sync::Arc;

use serde_json::{Map, Value};

/// A value of a body built once and shared by the steps that send it, with its compact
/// JSON text.
#[derive(Debug)]
pub struct SharedValue {
    /// Read from `text` on first use when it was built from its text.
    value: std::sync::OnceLock<Value>,
    text: String,
}

impl SharedValue {
    /// `value` and its text.
    pub fn new(value: Value) -> Self {
        let text = value.to_string();
        SharedValue {
            value: std::sync::OnceLock::from(value),
            text,
        }
    }

    /// A value from its compact JSON text, as `serde_json` writes a value (read into a
    /// tree only if asked for: a replay compares texts, the client sends them).
    pub(crate) fn from_text(text: String) -> Self {
        SharedValue {
            value: std::sync::OnceLock::new(),
            text,
        }
    }

    /// The value.
    pub fn value(&self) -> &Value {
        // Written by `serde_json` from a value: reading it back cannot fail.
        self.value
            .get_or_init(|| serde_json::from_str(&self.text).unwrap_or(Value::Null))
    }

    /// Its compact JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The same text is the same value (the text is the value written).
impl PartialEq for SharedValue {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// What every step of a run sends alike: the body's top-level keys in order with their
/// values, the `messages` key's place among them and the messages it starts with (the
/// OpenAI dialect's system prompt).
#[derive(Debug, PartialEq)]
pub struct BodyPrefix {
    before: Vec<(String, SharedValue)>,
    /// `None`: the body has no `messages` array.
    lead: Option<Vec<SharedValue>>,
    after: Vec<(String, SharedValue)>,
}

impl BodyPrefix {
    /// The prefix of `body` (a dialect's body for an empty history): every key, its
    /// `messages` array as the leading messages.
    pub fn from_map(body: Map<String, Value>) -> Self {
        let mut prefix = BodyPrefix {
            before: Vec::new(),
            lead: None,
            after: Vec::new(),
        };
        for (key, value) in body {
            match value {
                Value::Array(messages) if key == "messages" && prefix.lead.is_none() => {
                    prefix.lead = Some(messages.into_iter().map(SharedValue::new).collect());
                }
                value if prefix.lead.is_none() => {
                    prefix.before.push((key, SharedValue::new(value)))
                }
                value => prefix.after.push((key, SharedValue::new(value))),
            }
        }
        prefix
    }

    /// Put `key` with `value` right after `messages` (or last, when there is none).
    pub(crate) fn insert_after_messages(&mut self, key: String, value: SharedValue) {
        match self.lead {
            Some(_) => self.after.insert(0, (key, value)),
            None => self.before.push((key, value)),
        }
    }

    /// The top-level entries other than `messages`, in order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &SharedValue)> {
        self.before
            .iter()
            .chain(&self.after)
            .map(|(k, v)| (k.as_str(), v))
    }

    /// The top-level keys in order, `messages` included where it is.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let messages = self.lead.as_ref().map(|_| "messages");
        self.before
            .iter()
            .map(|(k, _)| k.as_str())
            .chain(messages)
            .chain(self.after.iter().map(|(k, _)| k.as_str()))
    }

    /// The messages every body starts with (`None`: no `messages` array).
    pub fn lead(&self) -> Option<&[SharedValue]> {
        self.lead.as_deref()
    }
}

/// One message of a body: shared (a prefix's leading message) or this step's.
#[derive(Clone, Copy, Debug)]
pub enum MessageRef<'b> {
    /// A leading message of the prefix.
    Shared(&'b SharedValue),
    /// A message of the history.
    Own(&'b Arc<Value>),
}

impl MessageRef<'_> {
    /// The message as a value.
    pub fn value(&self) -> &Value {
        match self {
            MessageRef::Shared(s) => s.value(),
            MessageRef::Own(v) => v.as_ref(),
        }
    }

    /// Equal messages (the same shared one, or equal values).
    pub fn same(&self, other: &MessageRef<'_>) -> bool {
        match (self, other) {
            (MessageRef::Shared(a), MessageRef::Shared(b)) => {
                std::ptr::eq(*a, *b) || a.text == b.text || a.value() == b.value()
            }
            (MessageRef::Own(a), MessageRef::Own(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => self.value() == other.value(),
        }
    }
}

/// One step's request body: the run's shared prefix and this step's history.
#[derive(Clone, Debug)]
pub struct RequestBody {
    prefix: Arc<BodyPrefix>,
    /// Shared with the bodies before it where a message is the same (the agent keeps
    /// them between steps: [`super::HistoryCache`]).
    history: Vec<Arc<Value>>,
}

impl RequestBody {
    /// `prefix` with the messages `history` after its leading ones (ignored when the
    /// prefix has no `messages` array).
    pub fn new(prefix: Arc<BodyPrefix>, history: Vec<Arc<Value>>) -> Self {
        let history = if prefix.lead.is_some() {
            history
        } else {
            Vec::new()
        };
        RequestBody { prefix, history }
    }

    /// The shared part.
    pub fn prefix(&self) -> &Arc<BodyPrefix> {
        &self.prefix
    }

    /// The messages after the leading ones.
    pub fn history(&self) -> &[Arc<Value>] {
        &self.history
    }

    /// Every message in order (the leading ones, then the history); `None`: the body has
    /// no `messages` array.
    pub fn messages(&self) -> Option<impl Iterator<Item = MessageRef<'_>>> {
        let lead = self.prefix.lead.as_ref()?;
        Some(
            lead.iter()
                .map(MessageRef::Shared)
                .chain(self.history.iter().map(MessageRef::Own)),
        )
    }

    /// How many messages.
    pub fn message_count(&self) -> usize {
        self.prefix.lead.as_ref().map_or(0, Vec::len) + self.history.len()
    }

    /// The whole body as a tree.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        for (k, v) in &self.prefix.before {
            map.insert(k.clone(), v.value().clone());
        }
        if let Some(lead) = &self.prefix.lead {
            let messages = lead
                .iter()
                .map(|m| m.value().clone())
                .chain(self.history.iter().map(|m| m.as_ref().clone()))
                .collect();
            map.insert("messages".into(), Value::Array(messages));
        }
        for (k, v) in &self.prefix.after {
            map.insert(k.clone(), v.value().clone());
        }
        Value::Object(map)
    }

    /// The body as compact JSON: the same bytes as `serde_json::to_vec(&self.to_value())`.
    pub fn to_json(&self) -> Vec<u8> {
        let size = self
            .prefix
            .entries()
            .map(|(k, v)| k.len() + v.text.len() + 4)
            .sum::<usize>()
            + self
                .prefix
                .lead
                .iter()
                .flatten()
                .map(|m| m.text.len() + 1)
                .sum::<usize>()
            + 64;
        let mut out = Vec::with_capacity(size);
        out.push(b'{');
        let mut first = true;
        let mut key = |out: &mut Vec<u8>, k: &str| {
            if !first {
                out.push(b',');
            }
            first = false;
            // A string key: writing it cannot fail.
            let _ = serde_json::to_writer(&mut *out, k);
            out.push(b':');
        };
        for (k, v) in &self.prefix.before {
            key(&mut out, k);
            out.extend_from_slice(v.text.as_bytes());
        }
        if let Some(lead) = &self.prefix.lead {
            key(&mut out, "messages");
            out.push(b'[');
            let mut first_message = true;
            for m in lead {
                if !first_message {
                    out.push(b',');
                }
                first_message = false;
                out.extend_from_slice(m.text.as_bytes());
            }
            for m in &self.history {
                if !first_message {
                    out.push(b',');
                }
                first_message = false;
                // A `Value`: writing it cannot fail.
                let _ = serde_json::to_writer(&mut out, m.as_ref());
            }
            out.push(b']');
        }
        for (k, v) in &self.prefix.after {
            key(&mut out, k);
            out.extend_from_slice(v.text.as_bytes());
        }
        out.push(b'}');
        out
    }
}

impl From<Map<String, Value>> for RequestBody {
    /// A body given whole (its messages all shared).
    fn from(body: Map<String, Value>) -> Self {
        RequestBody::new(Arc::new(BodyPrefix::from_map(body)), Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_parts_write_what_the_whole_body_writes() {
        let whole = json!({
            "model": "m\"x",
            "messages": [{"role": "system", "content": "é\n"}, {"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "t", "parameters": {"b": 1, "a": [null]}}}],
            "stream": true,
        });
        let Value::Object(mut map) = whole.clone() else {
            unreachable!()
        };
        let history = match map.get_mut("messages") {
            Some(Value::Array(m)) => m.split_off(1),
            _ => unreachable!(),
        };
        let history = history.into_iter().map(Arc::new).collect();
        let body = RequestBody::new(Arc::new(BodyPrefix::from_map(map)), history);
        assert_eq!(body.to_value(), whole);
        assert_eq!(body.to_json(), serde_json::to_vec(&whole).unwrap());
        assert_eq!(body.message_count(), 2);
        assert_eq!(
            body.prefix().keys().collect::<Vec<_>>(),
            ["model", "messages", "tools", "stream"]
        );
        // No messages key: no history either.
        let Value::Object(plain) = json!({"model": "m"}) else {
            unreachable!()
        };
        let body = RequestBody::new(
            Arc::new(BodyPrefix::from_map(plain)),
            vec![Arc::new(json!(1))],
        );
        assert_eq!(body.to_json(), br#"{"model":"m"}"#.to_vec());
        assert!(body.messages().is_none());
    }
}

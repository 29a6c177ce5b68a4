//! [`RequestEnvelope`]: one step's request, provider-neutral, with a fingerprint of its
//! cacheable prefix (tools + system).

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::prompt::{Assembly, ContextSnapshot, PromptText, SnapshotUpdate};
use crate::tools::WireTool;

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (and runtime-context snapshots).
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's id for the call.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments exactly as the model sent them (JSON text; possibly malformed, which
    /// the agent reports back to the model instead of running the tool).
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as JSON.
    pub fn parsed_arguments(&self) -> Result<serde_json::Value, serde_json::Error> {
        // An empty string is how some servers send "no arguments".
        if self.arguments.trim().is_empty() {
            return Ok(serde_json::Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.arguments)
    }
}

/// One message of the conversation history.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The model's reasoning (assistant messages of reasoning models). Kept in the history
    /// because some providers (DeepSeek's thinking mode with tool calls) require it back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Calls the model made (assistant messages).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this answers (tool messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A failed tool call (tool messages).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
            reasoning: None,
            tool_calls,
            tool_call_id: None,
            is_error: false,
        }
    }

    /// The same message with the model's reasoning attached.
    pub fn with_reasoning(mut self, reasoning: Option<String>) -> Self {
        self.reasoning = reasoning.filter(|r| !r.is_empty());
        self
    }

    /// A tool result.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        Message {
            role: Role::Tool,
            content: content.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            is_error,
        }
    }
}

/// sha256 of the cacheable prefix: changes iff the provider, the model, the tools or the
/// system prompt bytes do. A provider's prompt cache is per model, so the same bytes sent
/// to another model are another prefix.
///
/// Encoding (version 3): the sha256 of `agent-presets prefix v3\n`, then the tool list
/// as compact JSON, the provider, the model and the system prompt, each as a tagged,
/// length-prefixed field (`0` for an absent value; `1`, the length as a big-endian
/// `u64` and the bytes for a present one), so no two prefixes share an encoding. The
/// tools come first because they never change while an agent runs: an assembler hashes
/// them once and only the rest per step.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

/// The fingerprint's hash of one tool list, taken once: [`PrefixHasher::fingerprint`]
/// adds provider, model and system prompt to a copy of it.
#[derive(Clone)]
pub(crate) struct PrefixHasher(Sha256);

impl fmt::Debug for PrefixHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrefixHasher")
    }
}

/// A tagged, length-prefixed field.
fn field(h: &mut Sha256, value: Option<&[u8]>) {
    match value {
        None => h.update([0u8]),
        Some(v) => {
            h.update([1u8]);
            h.update((v.len() as u64).to_be_bytes());
            h.update(v);
        }
    }
}

impl PrefixHasher {
    /// Hash the header and the tool list (as compact JSON).
    pub(crate) fn new(tools: &[WireTool]) -> Self {
        let json = Fingerprint::tools_json(tools);
        let mut h = Sha256::new();
        h.update(b"agent-presets prefix v3\n");
        field(&mut h, Some(json.as_bytes()));
        PrefixHasher(h)
    }

    /// The fingerprint of these tools with `provider`, `model` and `system`.
    pub(crate) fn fingerprint(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
        system: &str,
    ) -> Fingerprint {
        let mut h = self.0.clone();
        field(&mut h, provider.map(str::as_bytes));
        field(&mut h, model.map(str::as_bytes));
        field(&mut h, Some(system.as_bytes()));
        Fingerprint(h.finalize().into())
    }
}

impl Fingerprint {
    /// Fingerprint the prefix a model sees: `provider` and `model` (the values of the
    /// built-in variables of those names, `None` when unset), the system prompt and the
    /// tool list.
    pub fn of(
        provider: Option<&str>,
        model: Option<&str>,
        system: &str,
        tools: &[WireTool],
    ) -> Self {
        PrefixHasher::new(tools).fingerprint(provider, model, system)
    }

    /// The compact JSON of a tool list, as the fingerprint hashes it.
    pub(crate) fn tools_json(tools: &[WireTool]) -> String {
        serde_json::to_string(tools).unwrap_or_default()
    }

    /// Stands in for a fingerprint nobody will read (`validate`'s render).
    pub(crate) const fn placeholder() -> Self {
        Fingerprint([0; 32])
    }

    /// The raw digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One step's request, before a provider dialect turns it into a JSON body.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestEnvelope {
    /// The system prompt.
    pub system: PromptText,
    /// The tools, in wire order.
    pub tools: Arc<[WireTool]>,
    /// The history, with the runtime-context snapshot (when it changed) at the end.
    pub messages: Vec<Message>,
    /// Fingerprint of tools + system.
    pub fingerprint: Fingerprint,
}

impl RequestEnvelope {
    /// Build a request from an assembly and the retained history. When the context
    /// changed since the last step, its snapshot is appended to `history` (so it stays in
    /// the conversation) and to the request.
    pub fn build(
        assembly: &Assembly,
        history: &mut Vec<Message>,
        snapshot: &mut ContextSnapshot,
    ) -> Self {
        if let SnapshotUpdate::Changed(m) | SnapshotUpdate::Cleared(m) =
            snapshot.update(assembly.context.as_deref())
        {
            history.push(Message::user(m));
        }
        RequestEnvelope {
            fingerprint: assembly.fingerprint,
            system: assembly.system.clone(),
            tools: Arc::clone(&assembly.tools),
            messages: history.clone(),
        }
    }
}

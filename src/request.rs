//! [`RequestEnvelope`]: one step's request, provider-neutral, with a fingerprint of its
//! cacheable prefix (tools + system).

use std::sync::Arc;

use serde::Serialize;

pub use crate::prompt::Fingerprint;
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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

//! What a model sent back, provider-neutral: [`ModelTurn`] (text, reasoning, tool calls,
//! finish reason, usage), the [`StreamEvent`]s seen while it streams, and
//! [`ResponseError`] for a response that cannot be understood.

use std::fmt;

use serde::Serialize;

use crate::request::{Message, ToolCall};

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    /// A final answer (`stop`, `end_turn`, `stop_sequence`).
    Stop,
    /// The output hit the token limit (`length`, `max_tokens`).
    Length,
    /// The model wants tools run (`tool_calls`, `tool_use`).
    ToolCalls,
    /// The provider filtered or refused the output (`content_filter`, `refusal`).
    ContentFilter,
    /// Anything else, as the provider spelled it.
    Other(String),
}

impl FinishReason {
    /// Map an OpenAI-style `finish_reason`.
    pub fn from_openai(reason: &str) -> Self {
        match reason {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" | "insufficient_system_resource" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }

    /// Map an Anthropic `stop_reason`.
    pub fn from_anthropic(reason: &str) -> Self {
        match reason {
            "end_turn" | "stop_sequence" => FinishReason::Stop,
            "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
            "tool_use" => FinishReason::ToolCalls,
            "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool-calls",
            FinishReason::ContentFilter => "content-filter",
            FinishReason::Other(o) => o,
        })
    }
}

/// Token counts of one request, as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Every prompt token, cached or not.
    pub input_tokens: u64,
    /// Generated tokens (reasoning included).
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache (OpenAI `cached_tokens`, DeepSeek
    /// `prompt_cache_hit_tokens`, Anthropic `cache_read_input_tokens`).
    pub cached_tokens: u64,
    /// Prompt tokens written to the cache (Anthropic `cache_creation_input_tokens`).
    pub cache_write_tokens: u64,
}

/// Something seen while a response streams in, for live display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// Answer text.
    Text(String),
    /// Reasoning text.
    Reasoning(String),
    /// The model started a tool call.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
}

/// One complete model response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelTurn {
    /// The answer text (possibly empty when the model only calls tools).
    pub text: String,
    /// Reasoning text, when the provider sends it.
    pub reasoning: Option<String>,
    /// The tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish: FinishReason,
    /// Token counts, when reported.
    pub usage: Option<Usage>,
}

impl ModelTurn {
    /// The assistant message to keep in the history.
    pub fn to_message(&self) -> Message {
        Message::assistant(self.text.clone(), self.tool_calls.clone())
            .with_reasoning(self.reasoning.clone())
    }
}

/// A response (or stream) that cannot be understood, or that the provider ended with an
/// error of its own.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// Not the JSON the dialect defines.
    #[error("malformed response: {0}")]
    Malformed(String),
    /// The stream ended before the response was complete.
    #[error("the stream ended before the response was complete ({0})")]
    Incomplete(String),
    /// The provider reported an error inside a successful (200) response or stream.
    #[error("{0}")]
    Provider(String),
}

/// At most `max` characters of `text`, with `…` when cut (for error messages that quote
/// what a provider sent).
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

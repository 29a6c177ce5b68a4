//! Wire dialects: a provider-neutral [`RequestEnvelope`] in, the JSON body a provider
//! expects out; and the provider's answer (whole or streamed) back into a
//! [`ModelTurn`]. Pure data: nothing here touches the network (see `client` for that).
//!
//! | provider | dialect | endpoint (appended to `baseUrl`) | tool schemas |
//! |---|---|---|---|
//! | `deepseek` | OpenAI | `/chat/completions` | portable; strict on the beta root (`…/beta`) |
//! | `openai` | OpenAI | `/chat/completions` | strict |
//! | `openai-compatible` | OpenAI | `/chat/completions` | portable |
//! | `anthropic` | Anthropic | `/v1/messages` | portable |
//!
//! "Strict" is the projection committed as `schemas/tools/*.strict.json`: closed objects,
//! every property required (optional ones nullable) and none of the keywords any strict
//! mode rejects, so one projection is accepted by every provider that has a strict mode.
//! The registry still validates each call against the full portable schema, so a
//! constraint the projection drops is enforced anyway.

pub mod anthropic;
pub mod body;
pub mod lint;
pub mod openai;
mod turn;

use serde_json::Value;

pub use crate::endpoint::{
    ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, Dialect, EndpointError, ModelSettings,
    Transport, check_base_url, default_api_key_env, default_base_url, is_deepseek_beta,
    is_default_host,
};
pub use body::{BodyPrefix, MessageRef, RequestBody, SharedValue};
#[cfg(feature = "client")]
pub(crate) use turn::excerpt;
pub use turn::{FinishReason, ModelTurn, ResponseError, StreamEvent, Usage};

use std::sync::Arc;

use crate::request::{Message, RequestEnvelope};
use crate::tools::{ToolRegistry, WireTool};

/// The most tool calls (and open content blocks) one streamed answer may hold; a
/// tool-call index at or above it, or more blocks open at once, is a protocol error.
/// The agent runs far fewer per turn (`--max-tool-calls`, default 64).
pub const MAX_STREAM_TOOL_CALLS: usize = 1024;

/// The longest tool name shown or looked up: longer names are refused, and shown only
/// as an excerpt of this many characters.
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// The tools as this endpoint gets them: the registry's projection in the endpoint's
/// schema dialect, in wire order.
pub fn wire_tools(settings: &ModelSettings, registry: &ToolRegistry) -> Vec<WireTool> {
    registry.schemas_for(settings.schema_dialect())
}

/// The JSON body of one request in `settings`' dialect. `tools` comes from
/// [`wire_tools`].
pub fn request_body(
    settings: &ModelSettings,
    request: &RequestEnvelope,
    tools: &[WireTool],
    stream: bool,
) -> Value {
    match settings.dialect() {
        Dialect::OpenAi => openai::request_body(settings, request, tools, stream),
        Dialect::Anthropic => anthropic::request_body(settings, request, tools, stream),
    }
}

/// What every step's body built from `request`'s system prompt and `tools` shares (all
/// but the history): [`request_body`] of the same request with an empty history, in
/// parts. A run builds it once and hands each step's [`RequestBody`] a reference.
pub fn body_prefix(
    settings: &ModelSettings,
    request: &RequestEnvelope,
    tools: &[WireTool],
    stream: bool,
) -> BodyPrefix {
    let empty = RequestEnvelope {
        system: request.system.clone(),
        tools: Arc::clone(&request.tools),
        messages: Vec::new(),
        fingerprint: request.fingerprint,
    };
    // The OpenAI dialect's tools are written straight to text (no tree of every schema
    // cloned, to be written and dropped), right after `messages` as `request_body` puts
    // them.
    let openai_tools = settings.dialect() == Dialect::OpenAi && !tools.is_empty();
    let written = if openai_tools { &[] } else { tools };
    let mut prefix = match request_body(settings, &empty, written, stream) {
        Value::Object(map) => BodyPrefix::from_map(map),
        // Both dialects write an object.
        _ => BodyPrefix::from_map(serde_json::Map::new()),
    };
    if openai_tools {
        prefix.insert_after_messages("tools".into(), openai::tools_text(settings, tools));
    }
    prefix
}

/// The history's messages as `settings`' dialect sends them after the prefix's leading
/// ones (the part of [`request_body`]'s `messages` that changes from step to step).
pub fn history(settings: &ModelSettings, messages: &[Message]) -> Vec<Value> {
    match settings.dialect() {
        Dialect::OpenAi => openai::history(settings, messages),
        Dialect::Anthropic => anthropic::history(messages),
    }
}

/// The body of `request` in parts: `prefix` (from [`body_prefix`] of a request with
/// the same system prompt and tools) and the history. Written, the same bytes as
/// [`request_body`].
pub fn request_parts(
    settings: &ModelSettings,
    request: &RequestEnvelope,
    prefix: Arc<BodyPrefix>,
) -> RequestBody {
    let history = history(settings, &request.messages);
    RequestBody::new(prefix, history.into_iter().map(Arc::new).collect())
}

/// The history messages of the last body built, with their values, so the next body
/// (the same history and more, each step) reuses the values of the messages that are
/// the same instead of building them again.
#[derive(Debug, Default)]
pub struct HistoryCache {
    messages: Vec<Message>,
    values: Vec<Arc<Value>>,
}

/// [`request_parts`], reusing `cache` (and updating it): in the OpenAI dialect each
/// message is sent on its own, so the leading messages equal to the cached ones keep
/// their values; the Anthropic dialect merges neighbours and marks the last block, so
/// its history is built whole every time. The same bytes as [`request_parts`].
pub fn request_parts_cached(
    settings: &ModelSettings,
    request: &RequestEnvelope,
    prefix: Arc<BodyPrefix>,
    cache: &mut HistoryCache,
) -> RequestBody {
    if settings.dialect() != Dialect::OpenAi {
        *cache = HistoryCache::default();
        return request_parts(settings, request, prefix);
    }
    let messages = &request.messages;
    let same = cache
        .messages
        .iter()
        .zip(messages)
        .take_while(|(a, b)| a == b)
        .count();
    cache.messages.truncate(same);
    cache.values.truncate(same);
    let added = openai::history(settings, messages.get(same..).unwrap_or_default());
    cache.messages.extend(messages.iter().skip(same).cloned());
    cache.values.extend(added.into_iter().map(Arc::new));
    RequestBody::new(prefix, cache.values.clone())
}

/// The provider's own message in an error response body, if it has one.
pub fn error_message(dialect: Dialect, body: &str) -> Option<String> {
    match dialect {
        Dialect::OpenAi => openai::error_message(body),
        Dialect::Anthropic => anthropic::error_message(body),
    }
}

/// Parse a whole (non-streamed) response.
pub fn parse_response(dialect: Dialect, body: &str) -> Result<ModelTurn, ResponseError> {
    match dialect {
        Dialect::OpenAi => openai::parse_response(body),
        Dialect::Anthropic => anthropic::parse_response(body),
    }
}

/// A streamed response being put together, in either dialect.
#[derive(Debug)]
pub enum StreamAccumulator {
    /// OpenAI-style chunks.
    OpenAi(openai::ChunkAccumulator),
    /// Anthropic events.
    Anthropic(anthropic::EventAccumulator),
}

impl StreamAccumulator {
    /// An empty stream in `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        match dialect {
            Dialect::OpenAi => StreamAccumulator::OpenAi(openai::ChunkAccumulator::new()),
            Dialect::Anthropic => StreamAccumulator::Anthropic(anthropic::EventAccumulator::new()),
        }
    }

    /// Feed one server-sent event's data.
    pub fn push(&mut self, data: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        match self {
            StreamAccumulator::OpenAi(a) => a.push(data),
            StreamAccumulator::Anthropic(a) => a.push(data),
        }
    }

    /// Has the stream sent its final event (`[DONE]`, `message_stop`)?
    pub fn is_done(&self) -> bool {
        match self {
            StreamAccumulator::OpenAi(a) => a.is_done(),
            StreamAccumulator::Anthropic(a) => a.is_done(),
        }
    }

    /// The complete response, or why the stream was not complete.
    pub fn finish(self) -> Result<ModelTurn, ResponseError> {
        match self {
            StreamAccumulator::OpenAi(a) => a.finish(),
            StreamAccumulator::Anthropic(a) => a.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Provider;
    use crate::prompt::Fingerprint;
    use crate::request::ToolCall;

    fn envelope(system: &str, tools: &Arc<[WireTool]>) -> RequestEnvelope {
        let call = ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.rs"}"#.into(),
        };
        RequestEnvelope {
            system: system.into(),
            tools: Arc::clone(tools),
            messages: vec![
                Message::user("Review \"a.rs\"."),
                Message::assistant("", vec![call]).with_reasoning(Some("think".into())),
                Message::tool("c1", "fn main() {}\n", false),
                Message::user("<context>date: 2026-12-03</context>"),
                Message::assistant("Done.", Vec::new()),
                Message::tool("c2", "no such call", true),
            ],
            fingerprint: Fingerprint::of(None, None, system, tools),
        }
    }

    /// The agent's body in parts writes, byte for byte, the body `request_body` builds
    /// whole, in both dialects and with what changes their shape (strict tools, an
    /// output schema, a token limit, streaming, no system prompt, no tools).
    #[test]
    fn a_body_in_parts_is_the_whole_body() {
        let tool = WireTool {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: Arc::new(serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            })),
        };
        let schema = Arc::new(serde_json::json!({"type": "object"}));
        let full: Arc<[WireTool]> = vec![tool.clone(), tool].into();
        let none: Arc<[WireTool]> = Vec::new().into();
        let mut checked = 0;
        for provider in [
            Provider::Deepseek,
            Provider::Openai,
            Provider::Anthropic,
            Provider::OpenaiCompatible,
        ] {
            for (strict, output, stream) in [
                (false, false, true),
                (true, true, false),
                (false, true, true),
            ] {
                let settings = ModelSettings::new(provider, "m")
                    .with_strict_tools(strict)
                    .with_max_tokens(99)
                    .with_output_schema(output.then(|| Arc::clone(&schema)));
                for (system, tools) in [("You review.", &full), ("", &none)] {
                    let request = envelope(system, tools);
                    let whole = request_body(&settings, &request, tools, stream);
                    let prefix = Arc::new(body_prefix(&settings, &request, tools, stream));
                    let parts = request_parts(&settings, &request, Arc::clone(&prefix));
                    assert_eq!(parts.to_json(), serde_json::to_vec(&whole).unwrap());
                    assert_eq!(parts.to_value(), whole);
                    // Cached over growing, then changed, histories: still the whole body.
                    let mut cache = HistoryCache::default();
                    let mut shorter = envelope(system, tools);
                    shorter.messages.truncate(3);
                    let mut changed = envelope(system, tools);
                    changed.messages[4] = Message::assistant("Other.", Vec::new());
                    for r in [&shorter, &request, &changed, &shorter, &request] {
                        let whole = request_body(&settings, r, tools, stream);
                        let cached =
                            request_parts_cached(&settings, r, Arc::clone(&prefix), &mut cache);
                        assert_eq!(cached.to_json(), serde_json::to_vec(&whole).unwrap());
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 24);
    }
}

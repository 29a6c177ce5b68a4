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
pub mod lint;
pub mod openai;
mod turn;

use serde_json::Value;

pub use crate::endpoint::{
    ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, Dialect, EndpointError, ModelSettings,
    Transport, check_base_url, default_api_key_env, default_base_url, is_deepseek_beta,
    is_default_host,
};
#[cfg(feature = "client")]
pub(crate) use turn::excerpt;
pub use turn::{FinishReason, ModelTurn, ResponseError, StreamEvent, Usage};

use crate::request::RequestEnvelope;
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

//! The Anthropic Messages dialect: request bodies, whole responses, and streamed events.
//!
//! The system prompt goes top-level; tools carry `input_schema`; prompt-cache breakpoints
//! (`cache_control`) mark the end of the tools, the end of the system prompt and the end
//! of the conversation so far, so each step re-reads the previous one from the cache.
//! Consecutive messages of one role are merged into one turn (tool results first, then a
//! runtime-context snapshot), as the API expects.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::MAX_STREAM_TOOL_CALLS;
use super::turn::{FinishReason, ModelTurn, ResponseError, StreamEvent, Usage, excerpt};
use crate::endpoint::{ANTHROPIC_DEFAULT_MAX_TOKENS, ModelSettings};
use crate::request::{Message, RequestEnvelope, Role, ToolCall};
use crate::tools::WireTool;

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body for one step. `tools` is the projection for
/// [`ModelSettings::schema_dialect`].
pub fn request_body(
    settings: &ModelSettings,
    request: &RequestEnvelope,
    tools: &[WireTool],
    stream: bool,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(settings.name.as_str()));
    body.insert(
        "max_tokens".into(),
        Value::from(settings.max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS)),
    );
    if !request.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]),
        );
    }
    if !tools.is_empty() {
        let last = tools.len() - 1;
        let tools = tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut tool = Map::new();
                tool.insert("name".into(), Value::from(t.name.as_str()));
                tool.insert("description".into(), Value::from(t.description.as_str()));
                tool.insert("input_schema".into(), (*t.parameters).clone());
                if settings.strict_tools {
                    tool.insert("strict".into(), Value::Bool(true));
                }
                if i == last {
                    tool.insert("cache_control".into(), ephemeral());
                }
                Value::Object(tool)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("messages".into(), Value::Array(history(&request.messages)));
    params(settings, &mut body);
    if stream {
        body.insert("stream".into(), Value::Bool(true));
    }
    Value::Object(body)
}

/// The history as this dialect sends it (`messages`: same-role neighbours merged, a
/// cache breakpoint on the last block).
pub fn history(history: &[Message]) -> Vec<Value> {
    messages(history)
}

/// The preset's sampling and reasoning parameters, in this dialect's form (validation
/// refused what Anthropic does not take: a seed, `none`/`minimal` effort, a temperature
/// with extended thinking).
fn params(settings: &ModelSettings, body: &mut Map<String, Value>) {
    let p = &settings.params;
    if let Some(t) = p.temperature {
        body.insert("temperature".into(), Value::from(t));
    }
    if let Some(t) = p.top_p {
        body.insert("top_p".into(), Value::from(t));
    }
    if !p.stop.is_empty() {
        body.insert("stop_sequences".into(), Value::from(p.stop.clone()));
    }
    if let Some(budget) = p.thinking_budget {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    if let Some(effort) = p.reasoning_effort {
        body.insert("output_config".into(), json!({"effort": effort.as_str()}));
    }
    // The output contract: Anthropic's structured outputs, in the strict projection
    // (validation reported what it drops; the answer is checked against the whole
    // schema locally).
    if let Some(schema) = &settings.output_schema {
        let format = json!({
            "type": "json_schema",
            "schema": crate::tools::schema::strict_from_portable(schema),
        });
        match body
            .entry("output_config")
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            Some(config) => {
                config.insert("format".into(), format);
            }
            None => {
                body.insert("output_config".into(), json!({ "format": format }));
            }
        }
    }
}

/// The history as Anthropic turns: same-role neighbours merged, a breakpoint on the last
/// block.
fn messages(history: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in history {
        let (role, blocks) = match m.role {
            Role::User => ("user", text_block(&m.content).into_iter().collect()),
            Role::Tool => {
                let mut block = Map::new();
                block.insert("type".into(), Value::from("tool_result"));
                block.insert(
                    "tool_use_id".into(),
                    Value::from(m.tool_call_id.as_deref().unwrap_or_default()),
                );
                block.insert("content".into(), Value::from(m.content.as_str()));
                if m.is_error {
                    block.insert("is_error".into(), Value::Bool(true));
                }
                ("user", vec![Value::Object(block)])
            }
            Role::Assistant => {
                let mut blocks: Vec<Value> = text_block(&m.content).into_iter().collect();
                blocks.extend(m.tool_calls.iter().map(|c| {
                    json!({
                        "type": "tool_use",
                        "id": c.id,
                        "name": c.name,
                        "input": tool_input(c),
                    })
                }));
                ("assistant", blocks)
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    if let Some(block) = turns
        .last_mut()
        .and_then(|(_, content)| content.last_mut())
        .and_then(Value::as_object_mut)
    {
        block.insert("cache_control".into(), ephemeral());
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Anthropic refuses empty text blocks.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// A `tool_use` block's `input` must be an object; arguments that were not one (the model
/// sent malformed JSON, which the agent reported back) are sent as `{}`.
fn tool_input(call: &ToolCall) -> Value {
    match call.parsed_arguments() {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Later reports (message_delta) update only the fields they carry.
    fn merge(&mut self, other: &WireUsage) {
        self.input_tokens = other.input_tokens.or(self.input_tokens);
        self.output_tokens = other.output_tokens.or(self.output_tokens);
        self.cache_read_input_tokens = other
            .cache_read_input_tokens
            .or(self.cache_read_input_tokens);
        self.cache_creation_input_tokens = other
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
    }

    fn to_usage(self) -> Usage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        Usage {
            // Anthropic's `input_tokens` counts only the uncached part.
            input_tokens: self.input_tokens.unwrap_or(0) + read + write,
            output_tokens: self.output_tokens.unwrap_or(0),
            cached_tokens: read,
            cache_write_tokens: write,
        }
    }
}

/// The provider's own message from an error body
/// (`{"type": "error", "error": {"type": …, "message": …}}`), if any.
pub fn error_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    provider_error(value.get("error")?)
}

fn provider_error(error: &Value) -> Option<String> {
    let message = error.get("message").and_then(Value::as_str)?;
    match error.get("type").and_then(Value::as_str) {
        Some(kind) if !kind.is_empty() => Some(format!("{message} ({kind})")),
        _ => Some(message.to_owned()),
    }
}

/// Parse a whole (non-streamed) response.
pub fn parse_response(body: &str) -> Result<ModelTurn, ResponseError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ResponseError::Malformed(format!("{e}: {}", excerpt(body, 200))))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(ResponseError::Provider(
            value
                .get("error")
                .and_then(provider_error)
                .unwrap_or_else(|| excerpt(body, 200)),
        ));
    }
    let wire: WireMessage = serde_json::from_value(value)
        .map_err(|e| ResponseError::Malformed(format!("{e}: {}", excerpt(body, 200))))?;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut tool_calls = Vec::new();
    for block in wire.content {
        match block {
            WireBlock::Text { text: t } => text.push_str(&t),
            WireBlock::Thinking { thinking } => reasoning.push_str(&thinking),
            WireBlock::ToolUse { id, name, input } => tool_calls.push(ToolCall {
                id,
                name,
                arguments: input
                    .unwrap_or_else(|| Value::Object(Map::new()))
                    .to_string(),
            }),
            WireBlock::Other => {}
        }
    }
    let finish = match wire.stop_reason.as_deref() {
        Some(r) => FinishReason::from_anthropic(r),
        None if !tool_calls.is_empty() => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    };
    Ok(ModelTurn {
        text,
        reasoning: Some(reasoning).filter(|r| !r.is_empty()),
        tool_calls,
        finish,
        usage: wire.usage.map(WireUsage::to_usage),
    })
}

#[derive(Debug)]
enum OpenBlock {
    Text,
    Thinking,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// Accumulates a streamed response, one SSE event's data at a time
/// (`message_start`, `content_block_start`/`_delta`/`_stop`, `message_delta`,
/// `message_stop`, `ping`, `error`).
///
/// A tool call's `input_json_delta` fragments are concatenated; the response is complete
/// only once `message_stop` arrived: [`finish`](Self::finish) refuses anything less
/// (and a tool block never closed), so no tool runs from a partial call. Open blocks are
/// found by their index in a map; more than [`MAX_STREAM_TOOL_CALLS`] open blocks or tool
/// calls, a block opened twice, content after the stop reason, and anything after
/// `message_stop` are protocol errors.
#[derive(Debug, Default)]
pub struct EventAccumulator {
    text: String,
    reasoning: String,
    blocks: HashMap<u64, OpenBlock>,
    calls: Vec<ToolCall>,
    /// `tool_use` blocks started so far (closed or not).
    started_calls: usize,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
    stopped: bool,
    events: usize,
}

impl EventAccumulator {
    /// A stream that has received nothing yet.
    pub fn new() -> Self {
        EventAccumulator::default()
    }

    /// Feed one event's data; returns what to show live.
    pub fn push(&mut self, data: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if self.stopped {
            return Err(ResponseError::Malformed(format!(
                "a stream event after `message_stop`: {}",
                excerpt(data, 200)
            )));
        }
        self.events += 1;
        let event: Value = serde_json::from_str(data).map_err(|e| {
            ResponseError::Malformed(format!("stream event: {e}: {}", excerpt(data, 200)))
        })?;
        let malformed = |what: &str| {
            ResponseError::Malformed(format!("stream event {what}: {}", excerpt(data, 200)))
        };
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("without a `type`"))?;
        let index = || event.get("index").and_then(Value::as_u64);
        if let Some(reason) = &self.stop_reason
            && matches!(kind, "content_block_start" | "content_block_delta")
        {
            return Err(malformed(&format!("after the stop reason `{reason}`")));
        }
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                if let Some(u) = event.pointer("/message/usage") {
                    self.merge_usage(u);
                }
            }
            "content_block_start" => {
                let i = index().ok_or_else(|| malformed("without an `index`"))?;
                if self.blocks.contains_key(&i) {
                    return Err(malformed("that opens a block already open"));
                }
                if self.blocks.len() >= MAX_STREAM_TOOL_CALLS {
                    return Err(ResponseError::Malformed(format!(
                        "more than {MAX_STREAM_TOOL_CALLS} content blocks open at once"
                    )));
                }
                let block = event
                    .get("content_block")
                    .ok_or_else(|| malformed("without a `content_block`"))?;
                let open = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str)
                            && !t.is_empty()
                        {
                            self.text.push_str(t);
                            out.push(StreamEvent::Text(t.to_owned()));
                        }
                        OpenBlock::Text
                    }
                    Some("thinking") => OpenBlock::Thinking,
                    Some("tool_use") => {
                        if self.started_calls >= MAX_STREAM_TOOL_CALLS {
                            return Err(ResponseError::Malformed(format!(
                                "more than {MAX_STREAM_TOOL_CALLS} tool calls in one answer"
                            )));
                        }
                        self.started_calls += 1;
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                        let name = block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        out.push(StreamEvent::ToolCall {
                            id: id.to_owned(),
                            name: excerpt(name, super::MAX_TOOL_NAME_CHARS),
                        });
                        OpenBlock::ToolUse {
                            id: id.to_owned(),
                            name: name.to_owned(),
                            json: String::new(),
                        }
                    }
                    _ => OpenBlock::Other,
                };
                self.blocks.insert(i, open);
            }
            "content_block_delta" => {
                let i = index().ok_or_else(|| malformed("without an `index`"))?;
                let delta = event
                    .get("delta")
                    .ok_or_else(|| malformed("without a `delta`"))?;
                let block = self
                    .blocks
                    .get_mut(&i)
                    .ok_or_else(|| malformed("for a block that was never started"))?;
                match (delta.get("type").and_then(Value::as_str), block) {
                    (Some("text_delta"), _) => {
                        if let Some(t) = delta.get("text").and_then(Value::as_str) {
                            self.text.push_str(t);
                            out.push(StreamEvent::Text(t.to_owned()));
                        }
                    }
                    (Some("thinking_delta"), _) => {
                        if let Some(t) = delta.get("thinking").and_then(Value::as_str) {
                            self.reasoning.push_str(t);
                            out.push(StreamEvent::Reasoning(t.to_owned()));
                        }
                    }
                    (Some("input_json_delta"), OpenBlock::ToolUse { json, .. }) => {
                        if let Some(p) = delta.get("partial_json").and_then(Value::as_str) {
                            json.push_str(p);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let i = index().ok_or_else(|| malformed("without an `index`"))?;
                if let Some(OpenBlock::ToolUse { id, name, json }) = self.blocks.remove(&i) {
                    // An empty input streams as no fragments at all.
                    let arguments = if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        json
                    };
                    self.calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
            }
            "message_delta" => {
                if let Some(r) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_owned());
                }
                if let Some(u) = event.get("usage") {
                    self.merge_usage(u);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                return Err(ResponseError::Provider(
                    event
                        .get("error")
                        .and_then(provider_error)
                        .unwrap_or_else(|| excerpt(data, 200)),
                ));
            }
            // `ping` and event types added later.
            _ => {}
        }
        Ok(out)
    }

    fn merge_usage(&mut self, value: &Value) {
        if let Ok(u) = serde_json::from_value::<WireUsage>(value.clone()) {
            self.usage.get_or_insert_with(WireUsage::default).merge(&u);
        }
    }

    /// Has the stream said it is over?
    pub fn is_done(&self) -> bool {
        self.stopped
    }

    /// The response, if the stream delivered all of it.
    pub fn finish(self) -> Result<ModelTurn, ResponseError> {
        if !self.stopped {
            return Err(ResponseError::Incomplete(format!(
                "no `message_stop` after {} event{}",
                self.events,
                if self.events == 1 { "" } else { "s" }
            )));
        }
        if let Some(OpenBlock::ToolUse { name, .. }) = self
            .blocks
            .values()
            .find(|b| matches!(b, OpenBlock::ToolUse { .. }))
        {
            return Err(ResponseError::Incomplete(format!(
                "the `{}` tool call was never closed (`content_block_stop`)",
                excerpt(name, super::MAX_TOOL_NAME_CHARS)
            )));
        }
        let finish = match self.stop_reason.as_deref() {
            Some(r) => FinishReason::from_anthropic(r),
            None if !self.calls.is_empty() => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        Ok(ModelTurn {
            text: self.text,
            reasoning: Some(self.reasoning).filter(|r| !r.is_empty()),
            tool_calls: self.calls,
            finish,
            usage: self.usage.map(WireUsage::to_usage),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_tool_call() {
        let events = [
            r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":0,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"th\": \"a.rs\"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let mut acc = EventAccumulator::new();
        let mut live = Vec::new();
        for e in events {
            live.extend(acc.push(e).unwrap());
        }
        assert_eq!(live[0], StreamEvent::Text("Reading.".into()));
        let turn = acc.finish().unwrap();
        assert_eq!(turn.text, "Reading.");
        assert_eq!(turn.finish, FinishReason::ToolCalls);
        assert_eq!(turn.tool_calls[0].arguments, r#"{"path": "a.rs"}"#);
        let usage = turn.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.cached_tokens, usage.output_tokens),
            (100, 90, 30)
        );
    }

    #[test]
    fn without_message_stop_the_stream_is_incomplete() {
        let mut acc = EventAccumulator::new();
        acc.push(r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"bash","input":{}}}"#).unwrap();
        acc.push(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"com"}}"#).unwrap();
        assert!(matches!(acc.finish(), Err(ResponseError::Incomplete(_))));
    }

    #[test]
    fn consecutive_user_turns_merge_with_tool_results_first() {
        let history = vec![
            Message::user("fix it"),
            Message::user("<runtime-context>\nx\n</runtime-context>"),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "t1".into(),
                    name: "bash".into(),
                    arguments: "{\"command\": \"ls\"".into(),
                }],
            ),
            Message::tool("t1", "Error: malformed", true),
            Message::user("<runtime-context>\ny\n</runtime-context>"),
        ];
        let turns = messages(&history);
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[0]["content"].as_array().unwrap().len(), 2);
        assert_eq!(turns[1]["content"][0]["input"], json!({}));
        assert_eq!(turns[2]["content"][0]["type"], "tool_result");
        assert_eq!(turns[2]["content"][0]["is_error"], true);
        assert_eq!(turns[2]["content"][1]["type"], "text");
        assert_eq!(turns[2]["content"][1]["cache_control"], ephemeral());
    }

    fn start(i: u64, kind: &str) -> String {
        match kind {
            "tool_use" => format!(
                r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"t{i}","name":"bash","input":{{}}}}}}"#
            ),
            _ => format!(
                r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"text","text":""}}}}"#
            ),
        }
    }

    #[test]
    fn open_blocks_are_bounded() {
        let mut acc = EventAccumulator::new();
        let mut failed = None;
        for i in 0..100_000u64 {
            if let Err(e) = acc.push(&start(i, "text")) {
                failed = Some((i, e));
                break;
            }
        }
        let (at, err) = failed.unwrap();
        assert_eq!(at, MAX_STREAM_TOOL_CALLS as u64);
        assert!(err.to_string().contains("1024"), "{err}");
        // Tool calls are bounded over the whole answer, closed or not.
        let mut acc = EventAccumulator::new();
        for i in 0..MAX_STREAM_TOOL_CALLS as u64 {
            acc.push(&start(i, "tool_use")).unwrap();
            acc.push(&format!(r#"{{"type":"content_block_stop","index":{i}}}"#))
                .unwrap();
        }
        assert!(acc.push(&start(5000, "tool_use")).is_err());
    }

    #[test]
    fn a_block_opened_twice_is_malformed() {
        let mut acc = EventAccumulator::new();
        acc.push(&start(0, "tool_use")).unwrap();
        assert!(acc.push(&start(0, "text")).is_err());
    }

    #[test]
    fn content_after_the_stop_reason_or_message_stop_is_malformed() {
        let stop = r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#;
        let mut acc = EventAccumulator::new();
        acc.push(&start(0, "text")).unwrap();
        acc.push(stop).unwrap();
        let late =
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#;
        assert!(acc.push(late).is_err());
        assert!(acc.push(&start(1, "tool_use")).is_err());
        let mut acc = EventAccumulator::new();
        acc.push(r#"{"type":"message_stop"}"#).unwrap();
        assert!(acc.push(r#"{"type":"ping"}"#).is_err());
    }

    #[test]
    fn a_tool_block_never_closed_is_incomplete() {
        let mut acc = EventAccumulator::new();
        acc.push(&start(0, "tool_use")).unwrap();
        acc.push(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#)
            .unwrap();
        acc.push(r#"{"type":"message_stop"}"#).unwrap();
        assert!(matches!(acc.finish(), Err(ResponseError::Incomplete(_))));
    }
}

//! The OpenAI Chat Completions dialect, spoken by `openai`, `deepseek` and
//! `openai-compatible`: request bodies, whole responses, and streamed chunks.
//!
//! Per provider: OpenAI takes `max_completion_tokens`, DeepSeek and other compatible
//! servers `max_tokens`; DeepSeek gets each assistant message's `reasoning_content` back
//! (its thinking mode requires it after tool calls) and reports cache hits as
//! `prompt_cache_hit_tokens`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::MAX_STREAM_TOOL_CALLS;
use super::turn::{FinishReason, ModelTurn, ResponseError, StreamEvent, Usage, excerpt};
use crate::endpoint::ModelSettings;
use crate::endpoint::Provider;
use crate::request::{Message, RequestEnvelope, Role, ToolCall};
use crate::tools::WireTool;

/// One tool as the OpenAI dialect sends it, borrowed from its [`WireTool`]: the one
/// place its shape is written, for [`request_body`]'s tree and [`tools_text`]'s text.
#[derive(serde::Serialize)]
struct Tool<'t> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'t>,
}

#[derive(serde::Serialize)]
struct Function<'t> {
    name: &'t str,
    description: &'t str,
    parameters: &'t Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

fn wire<'t>(settings: &ModelSettings, tools: &'t [WireTool]) -> Vec<Tool<'t>> {
    tools
        .iter()
        .map(|t| Tool {
            kind: "function",
            function: Function {
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
                strict: settings.strict_tools.then_some(true),
            },
        })
        .collect()
}

/// The `tools` array of [`request_body`], written straight to its text (the same bytes,
/// without the tree).
pub(crate) fn tools_text(settings: &ModelSettings, tools: &[WireTool]) -> super::body::SharedValue {
    // Strings, numbers and values: writing them cannot fail.
    super::body::SharedValue::from_text(
        serde_json::to_string(&wire(settings, tools)).unwrap_or_default(),
    )
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
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    // DeepSeek's JSON mode enforces no schema: the schema goes to the model as an
    // instruction right after the system prompt, the same bytes every step (so the
    // cacheable prefix stays stable).
    if let (Some(schema), Provider::Deepseek) = (&settings.output_schema, settings.provider) {
        let content = match &settings.output_instruction {
            Some(text) => text.to_string(),
            None => output_instruction(schema),
        };
        messages.push(json!({"role": "system", "content": content}));
    }
    messages.extend(history(settings, &request.messages));
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        // Strings, numbers and values: turning them into a value cannot fail.
        let tools = serde_json::to_value(wire(settings, tools)).unwrap_or(Value::Null);
        body.insert("tools".into(), tools);
    }
    if let Some(max) = settings.max_tokens {
        let key = match settings.provider {
            Provider::Openai => "max_completion_tokens",
            _ => "max_tokens",
        };
        body.insert(key.into(), Value::from(max));
    }
    params(settings, &mut body);
    if let Some(schema) = &settings.output_schema {
        body.insert("response_format".into(), response_format(settings, schema));
    }
    if stream {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// The history's messages as this dialect sends them, after the system prompt.
pub fn history(settings: &ModelSettings, messages: &[Message]) -> Vec<Value> {
    let keep_reasoning = settings.provider == Provider::Deepseek;
    messages
        .iter()
        .map(|m| message(m, keep_reasoning))
        .collect()
}

/// The name the output contract's schema is sent under.
pub const OUTPUT_SCHEMA_NAME: &str = "output";

/// The output contract in this dialect's form: OpenAI's (and an OpenAI-compatible
/// server's) structured outputs with the strict projection, DeepSeek's JSON mode.
fn response_format(settings: &ModelSettings, schema: &Value) -> Value {
    match settings.provider {
        Provider::Deepseek => json!({"type": "json_object"}),
        _ => json!({
            "type": "json_schema",
            "json_schema": {
                "name": OUTPUT_SCHEMA_NAME,
                "schema": crate::tools::schema::strict_from_portable(schema),
                "strict": true,
            },
        }),
    }
}

/// The instruction that carries the output schema where the provider cannot enforce it
/// (DeepSeek's JSON mode needs the word "json" in the prompt, and the schema), in
/// English (`agent.output.instruction`); a preset's settings carry its own language's
/// ([`ModelSettings::output_instruction`]).
pub fn output_instruction(schema: &Value) -> String {
    crate::texts::substitute(
        crate::texts::AGENT_OUTPUT_INSTRUCTION.text,
        &[("schema", &serde_json::to_string(schema).unwrap_or_default())],
    )
}

/// The preset's sampling and reasoning parameters, in this dialect's form (validation
/// refused what the provider does not take: Anthropic's thinking budget, DeepSeek's
/// reasoning effort).
fn params(settings: &ModelSettings, body: &mut Map<String, Value>) {
    let p = &settings.params;
    if let Some(t) = p.temperature {
        body.insert("temperature".into(), Value::from(t));
    }
    if let Some(t) = p.top_p {
        body.insert("top_p".into(), Value::from(t));
    }
    if let Some(seed) = p.seed {
        body.insert("seed".into(), Value::from(seed));
    }
    if !p.stop.is_empty() {
        body.insert("stop".into(), Value::from(p.stop.clone()));
    }
    if let Some(effort) = p.reasoning_effort {
        body.insert("reasoning_effort".into(), Value::from(effort.as_str()));
    }
}

fn message(m: &Message, keep_reasoning: bool) -> Value {
    match m.role {
        Role::User => json!({"role": "user", "content": m.content}),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.as_deref().unwrap_or_default(),
            "content": m.content,
        }),
        Role::Assistant => {
            let mut out = Map::new();
            out.insert("role".into(), Value::from("assistant"));
            // With tool calls and no text, `content` is null, as the providers send it.
            let content = if m.content.is_empty() && !m.tool_calls.is_empty() {
                Value::Null
            } else {
                Value::from(m.content.as_str())
            };
            out.insert("content".into(), content);
            if keep_reasoning && let Some(r) = &m.reasoning {
                out.insert("reasoning_content".into(), Value::from(r.as_str()));
            }
            if !m.tool_calls.is_empty() {
                let calls = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        })
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    delta: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    /// A string on the wire; a few servers send an object instead.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<WirePromptDetails>,
    /// DeepSeek.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WirePromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let cached = self
            .prompt_cache_hit_tokens
            .or_else(|| {
                self.prompt_tokens_details
                    .as_ref()
                    .and_then(|d| d.cached_tokens)
            })
            .unwrap_or(0);
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            cached_tokens: cached,
            cache_write_tokens: 0,
        }
    }
}

fn arguments_text(value: Option<Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
    }
}

/// The provider's own message from an error body (`{"error": {"message": …}}`), if any.
pub fn error_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    provider_error(value.get("error")?)
}

fn provider_error(error: &Value) -> Option<String> {
    match error {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => {
            let message = o.get("message").and_then(Value::as_str)?;
            match o.get("type").and_then(Value::as_str) {
                Some(kind) if !kind.is_empty() => Some(format!("{message} ({kind})")),
                _ => Some(message.to_owned()),
            }
        }
        _ => None,
    }
}

/// Parse a whole (non-streamed) response.
pub fn parse_response(body: &str) -> Result<ModelTurn, ResponseError> {
    let wire: WireResponse = serde_json::from_str(body)
        .map_err(|e| ResponseError::Malformed(format!("{e}: {}", excerpt(body, 200))))?;
    if let Some(error) = &wire.error {
        return Err(ResponseError::Provider(
            provider_error(error).unwrap_or_else(|| excerpt(&error.to_string(), 200)),
        ));
    }
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| ResponseError::Malformed("the response has no `choices`".into()))?;
    let message = choice.message.unwrap_or_default();
    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let function = c.function;
            ToolCall {
                id: c.id.unwrap_or_else(|| format!("call_{i}")),
                name: function
                    .as_ref()
                    .and_then(|f| f.name.clone())
                    .unwrap_or_default(),
                arguments: arguments_text(function.and_then(|f| f.arguments)),
            }
        })
        .collect::<Vec<_>>();
    let finish = match choice.finish_reason.as_deref() {
        Some(r) => FinishReason::from_openai(r),
        None if !tool_calls.is_empty() => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    };
    Ok(ModelTurn {
        text: message.content.unwrap_or_default(),
        reasoning: message.reasoning_content.filter(|r| !r.is_empty()),
        tool_calls,
        finish,
        usage: wire.usage.as_ref().map(WireUsage::to_usage),
    })
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Accumulates a streamed response, one SSE `data:` payload at a time.
///
/// Tool-call deltas are joined by their `index` (arguments concatenated); indexes are
/// bounded by [`MAX_STREAM_TOOL_CALLS`], and a delta without an index continues the last
/// call or starts the next one. The response is complete only once a `finish_reason` and
/// then `[DONE]` arrived (usage, when the provider sends it, comes in a chunk between
/// them): [`finish`](Self::finish) refuses a stream that ended before either, so no tool
/// runs from a partial call. Content after the finish reason, and anything after
/// `[DONE]`, is a protocol error.
#[derive(Debug, Default)]
pub struct ChunkAccumulator {
    text: String,
    reasoning: String,
    calls: BTreeMap<u32, PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
    chunks: usize,
}

impl ChunkAccumulator {
    /// A stream that has received nothing yet.
    pub fn new() -> Self {
        ChunkAccumulator::default()
    }

    /// Feed one event's data; returns what to show live.
    pub fn push(&mut self, data: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        let data = data.trim();
        if self.done && !data.is_empty() {
            return Err(ResponseError::Malformed(format!(
                "a stream chunk after `[DONE]`: {}",
                excerpt(data, 200)
            )));
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        self.chunks += 1;
        let chunk: WireResponse = serde_json::from_str(data).map_err(|e| {
            ResponseError::Malformed(format!("stream chunk: {e}: {}", excerpt(data, 200)))
        })?;
        if let Some(error) = &chunk.error {
            return Err(ResponseError::Provider(
                provider_error(error).unwrap_or_else(|| excerpt(&error.to_string(), 200)),
            ));
        }
        if let Some(u) = &chunk.usage {
            self.usage = Some(u.to_usage());
        }
        let mut events = Vec::new();
        for choice in chunk.choices {
            if let Some(delta) = choice.delta.or(choice.message) {
                if let Some(reason) = &self.finish
                    && (delta
                        .reasoning_content
                        .as_ref()
                        .is_some_and(|r| !r.is_empty())
                        || delta.content.as_ref().is_some_and(|t| !t.is_empty())
                        || delta.tool_calls.as_ref().is_some_and(|c| !c.is_empty()))
                {
                    return Err(ResponseError::Malformed(format!(
                        "a delta after the finish reason `{reason}`: {}",
                        excerpt(data, 200)
                    )));
                }
                if let Some(r) = delta.reasoning_content.filter(|r| !r.is_empty()) {
                    self.reasoning.push_str(&r);
                    events.push(StreamEvent::Reasoning(r));
                }
                if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
                    self.text.push_str(&t);
                    events.push(StreamEvent::Text(t));
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.push_call(call, &mut events)?;
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish = Some(FinishReason::from_openai(&reason));
            }
        }
        Ok(events)
    }

    fn push_call(
        &mut self,
        call: WireToolCall,
        events: &mut Vec<StreamEvent>,
    ) -> Result<(), ResponseError> {
        // Without an index, a delta with a new id starts a call; one without continues
        // the last call. Indexes are checked before any arithmetic on them.
        let index = match call.index {
            Some(i) => i,
            None => {
                let last = self.calls.keys().next_back().copied();
                match (&call.id, last) {
                    (Some(id), Some(last))
                        if self.calls.get(&last).and_then(|c| c.id.as_ref()) != Some(id) =>
                    {
                        last.checked_add(1).ok_or_else(too_many_calls)?
                    }
                    (_, Some(last)) => last,
                    (_, None) => 0,
                }
            }
        };
        if usize::try_from(index).map_or(true, |i| i >= MAX_STREAM_TOOL_CALLS) {
            return Err(too_many_calls());
        }
        let entry = self.calls.entry(index).or_default();
        let started = entry.id.is_none() && entry.name.is_empty();
        if let Some(id) = call.id.filter(|id| !id.is_empty()) {
            entry.id.get_or_insert(id);
        }
        if let Some(function) = call.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                // Names arrive whole; a server that splits them is joined too.
                entry.name.push_str(&name);
            }
            entry
                .arguments
                .push_str(&arguments_text(function.arguments));
        }
        if started && !entry.name.is_empty() {
            events.push(StreamEvent::ToolCall {
                id: entry.id.clone().unwrap_or_default(),
                name: excerpt(&entry.name, super::MAX_TOOL_NAME_CHARS),
            });
        }
        Ok(())
    }

    /// Has the stream said it is over?
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The response, if the stream delivered all of it.
    pub fn finish(self) -> Result<ModelTurn, ResponseError> {
        if let Some(reason) = &self.finish
            && !self.done
        {
            return Err(ResponseError::Incomplete(format!(
                "the finish reason `{reason}` arrived but the stream closed without `[DONE]`"
            )));
        }
        let Some(finish) = self.finish else {
            return Err(ResponseError::Incomplete(if self.done {
                "`[DONE]` arrived without a finish reason".into()
            } else {
                format!(
                    "no finish reason after {} chunk{}",
                    self.chunks,
                    if self.chunks == 1 { "" } else { "s" }
                )
            }));
        };
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(i, c)| ToolCall {
                id: c.id.unwrap_or_else(|| format!("call_{i}")),
                name: c.name,
                arguments: c.arguments,
            })
            .collect();
        Ok(ModelTurn {
            text: self.text,
            reasoning: Some(self.reasoning).filter(|r| !r.is_empty()),
            tool_calls,
            finish,
            usage: self.usage,
        })
    }
}

fn too_many_calls() -> ResponseError {
    ResponseError::Malformed(format!(
        "a tool-call index at or above {MAX_STREAM_TOOL_CALLS} (at most {MAX_STREAM_TOOL_CALLS} tool calls per answer)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_deltas_join_by_index() {
        let mut acc = ChunkAccumulator::new();
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"grep","arguments":"{\"pat"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.rs\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"x\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}}"#,
            "[DONE]",
        ];
        let mut events = Vec::new();
        for c in chunks {
            events.extend(acc.push(c).unwrap());
        }
        assert_eq!(events[0], StreamEvent::Text("Let me look.".into()));
        assert!(matches!(&events[1], StreamEvent::ToolCall { name, .. } if name == "read_file"));
        let turn = acc.finish().unwrap();
        assert_eq!(turn.finish, FinishReason::ToolCalls);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].arguments, r#"{"path":"a.rs"}"#);
        assert_eq!(turn.tool_calls[1].arguments, r#"{"pattern":"x"}"#);
        assert_eq!(turn.usage.unwrap().cached_tokens, 64);
    }

    #[test]
    fn a_stream_without_finish_reason_is_incomplete() {
        let mut acc = ChunkAccumulator::new();
        acc.push(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"bash","arguments":"{\"comm"}}]}}]}"#).unwrap();
        assert!(matches!(acc.finish(), Err(ResponseError::Incomplete(_))));
    }

    #[test]
    fn errors_inside_streams_and_bodies() {
        let mut acc = ChunkAccumulator::new();
        let err = acc
            .push(r#"{"error":{"message":"overloaded","type":"server_error"}}"#)
            .unwrap_err();
        assert_eq!(err.to_string(), "overloaded (server_error)");
        assert!(matches!(
            ChunkAccumulator::new().push("{not json"),
            Err(ResponseError::Malformed(_))
        ));
        assert_eq!(
            error_message(r#"{"error":{"message":"Invalid key","type":"auth"}}"#).as_deref(),
            Some("Invalid key (auth)")
        );
        assert_eq!(error_message("<html>"), None);
    }

    fn push_all(acc: &mut ChunkAccumulator, chunks: &[&str]) -> Result<(), ResponseError> {
        for c in chunks {
            acc.push(c)?;
        }
        Ok(())
    }

    const CALL: &str = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"bash","arguments":"{}"}}]}}]}"#;
    const FINISH: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;

    /// The fuzzer's two-line stream: `last + 1` overflowed on the huge index (a panic in
    /// debug builds, a call filed out of order in release ones).
    #[test]
    fn a_huge_index_then_a_delta_without_one_is_a_protocol_error() {
        let mut acc = ChunkAccumulator::new();
        let lines = [
            r#"{"choices":[{"delta":{"tool_calls":[{"index":4294967295,"id":"a","function":{"name":"bash","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"bash","arguments":""}}]}}]}"#,
        ];
        let err = push_all(&mut acc, &lines).unwrap_err();
        assert!(
            matches!(&err, ResponseError::Malformed(m) if m.contains("1024")),
            "{err:?}"
        );
        // The largest index allowed, then a new id without an index, is refused too.
        let mut acc = ChunkAccumulator::new();
        acc.push(&lines[0].replace("4294967295", "1023")).unwrap();
        assert!(acc.push(lines[1]).is_err());
    }

    #[test]
    fn a_finish_reason_without_done_is_incomplete() {
        let mut acc = ChunkAccumulator::new();
        push_all(&mut acc, &[CALL, FINISH]).unwrap();
        let err = acc.finish().unwrap_err();
        assert!(
            matches!(&err, ResponseError::Incomplete(m) if m.contains("[DONE]")),
            "{err:?}"
        );
    }

    #[test]
    fn deltas_after_the_finish_reason_are_malformed() {
        for late in [
            r#"{"choices":[{"index":0,"delta":{"content":"more"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"more"}}]}"#,
            CALL,
        ] {
            let mut acc = ChunkAccumulator::new();
            let err = push_all(&mut acc, &[CALL, FINISH, late]).unwrap_err();
            assert!(
                matches!(&err, ResponseError::Malformed(m) if m.contains("after the finish reason")),
                "{err:?}"
            );
        }
        // Usage and empty deltas after it are fine, and anything after [DONE] is not.
        let mut acc = ChunkAccumulator::new();
        let usage = r#"{"choices":[{"index":0,"delta":{"content":""}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#;
        push_all(&mut acc, &[CALL, FINISH, usage, "[DONE]"]).unwrap();
        assert!(acc.push(usage).is_err());
        assert_eq!(acc.finish().unwrap().tool_calls.len(), 1);
    }
}

//! The shape of the request bodies we send, per dialect: a strict JSON Schema of the
//! subset of each provider's published request schema that we use (unknown keys are
//! errors here, so a typo cannot slip through), plus the conversation rules the schemas
//! cannot say (tool results answer the calls right before them; Anthropic roles
//! alternate). Written from the providers' API references.

use std::collections::BTreeSet;

use serde_json::{Value, json};

fn openai_schema() -> Value {
    let text = json!({"type": "string"});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["model", "messages"],
        "properties": {
            "model": {"type": "string", "minLength": 1},
            "messages": {"type": "array", "minItems": 1, "items": {"oneOf": [
                {"type": "object", "additionalProperties": false, "required": ["role", "content"],
                 "properties": {"role": {"const": "system"}, "content": text}},
                {"type": "object", "additionalProperties": false, "required": ["role", "content"],
                 "properties": {"role": {"const": "user"}, "content": text}},
                {"type": "object", "additionalProperties": false, "required": ["role", "content"],
                 "properties": {
                    "role": {"const": "assistant"},
                    "content": {"type": ["string", "null"]},
                    "reasoning_content": text,
                    "tool_calls": {"type": "array", "minItems": 1, "items": {
                        "type": "object", "additionalProperties": false,
                        "required": ["id", "type", "function"],
                        "properties": {
                            "id": {"type": "string", "minLength": 1},
                            "type": {"const": "function"},
                            "function": {"type": "object", "additionalProperties": false,
                                "required": ["name", "arguments"],
                                "properties": {"name": text, "arguments": text}}
                        }}}
                 }},
                {"type": "object", "additionalProperties": false,
                 "required": ["role", "tool_call_id", "content"],
                 "properties": {"role": {"const": "tool"},
                                "tool_call_id": {"type": "string", "minLength": 1},
                                "content": text}}
            ]}},
            "tools": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": false, "required": ["type", "function"],
                "properties": {
                    "type": {"const": "function"},
                    "function": {"type": "object", "additionalProperties": false,
                        "required": ["name", "description", "parameters"],
                        "properties": {
                            "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                            "description": text,
                            "parameters": {"type": "object", "required": ["type"],
                                           "properties": {"type": {"const": "object"}}},
                            "strict": {"const": true}
                        }}
                }}},
            "max_tokens": {"type": "integer", "minimum": 1},
            "max_completion_tokens": {"type": "integer", "minimum": 1},
            "stream": {"type": "boolean"},
            "stream_options": {"type": "object", "additionalProperties": false,
                               "properties": {"include_usage": {"type": "boolean"}}}
        },
        "dependentRequired": {"stream_options": ["stream"]},
        "not": {"required": ["max_tokens", "max_completion_tokens"]}
    })
}

fn anthropic_schema() -> Value {
    let cache = json!({"type": "object", "additionalProperties": false, "required": ["type"],
                       "properties": {"type": {"const": "ephemeral"}, "ttl": {"enum": ["5m", "1h"]}}});
    let text_block = json!({"type": "object", "additionalProperties": false, "required": ["type", "text"],
        "properties": {"type": {"const": "text"}, "text": {"type": "string", "minLength": 1},
                       "cache_control": cache}});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["model", "messages", "max_tokens"],
        "properties": {
            "model": {"type": "string", "minLength": 1},
            "max_tokens": {"type": "integer", "minimum": 1},
            "system": {"type": "array", "minItems": 1, "items": text_block},
            "tools": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["name", "input_schema"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,128}$"},
                    "description": {"type": "string"},
                    "input_schema": {"type": "object", "required": ["type"],
                                     "properties": {"type": {"const": "object"}}},
                    "strict": {"type": "boolean"},
                    "cache_control": cache
                }}},
            "messages": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": false, "required": ["role", "content"],
                "properties": {
                    "role": {"enum": ["user", "assistant"]},
                    "content": {"type": "array", "minItems": 1, "items": {"oneOf": [
                        text_block,
                        {"type": "object", "additionalProperties": false,
                         "required": ["type", "id", "name", "input"],
                         "properties": {"type": {"const": "tool_use"},
                                        "id": {"type": "string", "minLength": 1},
                                        "name": {"type": "string", "minLength": 1},
                                        "input": {"type": "object"},
                                        "cache_control": cache}},
                        {"type": "object", "additionalProperties": false,
                         "required": ["type", "tool_use_id", "content"],
                         "properties": {"type": {"const": "tool_result"},
                                        "tool_use_id": {"type": "string", "minLength": 1},
                                        "content": {"type": "string"},
                                        "is_error": {"type": "boolean"},
                                        "cache_control": cache}}
                    ]}}
                }}},
            "stream": {"type": "boolean"}
        }
    })
}

fn schema_problems(schema: &Value, body: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("the shape schema compiles");
    validator
        .iter_errors(body)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Problems with an OpenAI Chat Completions body (empty: it has the right shape).
pub fn openai_problems(body: &Value) -> Vec<String> {
    let mut problems = schema_problems(&openai_schema(), body);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    // Every tool message answers a call of the assistant message before the run of tool
    // messages it belongs to, and every call is answered.
    let mut open: BTreeSet<String> = BTreeSet::new();
    for (i, m) in messages.iter().enumerate() {
        match m["role"].as_str() {
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap_or_default();
                if !open.remove(id) {
                    problems.push(format!("/messages/{i}: answers unknown call `{id}`"));
                }
            }
            role => {
                if !open.is_empty() {
                    problems.push(format!(
                        "/messages/{i}: calls {open:?} are unanswered before a {role:?} message"
                    ));
                    open.clear();
                }
                if role == Some("assistant") {
                    for c in m["tool_calls"].as_array().into_iter().flatten() {
                        open.insert(c["id"].as_str().unwrap_or_default().to_owned());
                    }
                }
            }
        }
    }
    if messages.first().and_then(|m| m["role"].as_str()) == Some("system")
        && messages[1..].iter().any(|m| m["role"] == "system")
    {
        problems.push("a system message after the first".into());
    }
    problems
}

/// Problems with an Anthropic Messages body (empty: it has the right shape).
pub fn anthropic_problems(body: &Value) -> Vec<String> {
    let mut problems = schema_problems(&anthropic_schema(), body);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if messages.first().map(|m| &m["role"]) != Some(&json!("user")) {
        problems.push("the first message is not the user's".into());
    }
    let mut pending: BTreeSet<String> = BTreeSet::new();
    for (i, m) in messages.iter().enumerate() {
        if i > 0 && messages[i - 1]["role"] == m["role"] {
            problems.push(format!("/messages/{i}: two {} turns in a row", m["role"]));
        }
        let blocks = m["content"].as_array().cloned().unwrap_or_default();
        if m["role"] == "user" {
            let mut seen_other = false;
            for b in &blocks {
                if b["type"] == "tool_result" {
                    if seen_other {
                        problems.push(format!("/messages/{i}: a tool_result after other content"));
                    }
                    let id = b["tool_use_id"].as_str().unwrap_or_default();
                    if !pending.remove(id) {
                        problems.push(format!("/messages/{i}: answers unknown tool_use `{id}`"));
                    }
                } else {
                    seen_other = true;
                }
            }
            if !pending.is_empty() {
                problems.push(format!("/messages/{i}: tool_use {pending:?} unanswered"));
                pending.clear();
            }
        } else {
            for b in &blocks {
                if b["type"] == "tool_use" {
                    pending.insert(b["id"].as_str().unwrap_or_default().to_owned());
                }
            }
        }
    }
    let breakpoints = body.to_string().matches("\"cache_control\"").count();
    if breakpoints > 4 {
        problems.push(format!(
            "{breakpoints} cache_control breakpoints (at most 4)"
        ));
    }
    problems
}

/// Problems with a body in `dialect` (`openai` or `anthropic`).
pub fn problems(dialect: &str, body: &Value) -> Vec<String> {
    match dialect {
        "anthropic" => anthropic_problems(body),
        _ => openai_problems(body),
    }
}

//! A scripted model provider on 127.0.0.1: each request gets the next [`Reply`] and is
//! recorded (path, headers, JSON body). Plain threads and sockets, so it works the same
//! under any test runtime and lets a reply misbehave exactly: cut a stream mid-chunk,
//! stop early, stall, or ask for a retry.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// What the server answers to one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A whole JSON response.
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A server-sent event stream, one piece per chunk.
    Sse {
        pieces: Vec<String>,
        /// Pause between pieces.
        delay: Duration,
        /// `false`: after the pieces, announce a chunk that never comes and close the
        /// connection (a stream cut mid-way at the transport level).
        complete: bool,
    },
    /// Accept the request and never answer (until the client gives up).
    Stall(Duration),
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Reply::Json {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub fn status(status: u16, body: Value) -> Self {
        Reply::Json {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    /// A reply with any body (a web page, say) and headers.
    pub fn raw(status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        Reply::Json {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_owned(),
        }
    }

    pub fn status_with(status: u16, headers: &[(&str, &str)], body: Value) -> Self {
        Reply::Json {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_string(),
        }
    }

    /// A complete stream of SSE `data:` events.
    pub fn sse(events: Vec<String>) -> Self {
        Reply::Sse {
            pieces: events,
            delay: Duration::ZERO,
            complete: true,
        }
    }
}

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The server. Dropping it stops accepting.
pub struct MockProvider {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl MockProvider {
    /// Serve `replies` in order; a request past the last one gets a 500.
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(replies.into_iter()));
        let recorded = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let recorded = Arc::clone(&recorded);
                let replies = Arc::clone(&replies);
                thread::spawn(move || serve(stream, &recorded, &replies));
            }
        });
        MockProvider { port, requests }
    }

    /// `http://127.0.0.1:PORT` + `path` (e.g. `/v1`).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    recorded: &Mutex<Vec<Recorded>>,
    replies: &Mutex<std::vec::IntoIter<Reply>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    // One request per connection (every reply says `Connection: close`).
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    recorded.lock().unwrap().push(Recorded {
        method,
        path,
        headers,
        body,
    });
    let reply = replies.lock().unwrap().next().unwrap_or_else(|| {
        Reply::status(
            500,
            json!({"error": {"message": "the mock has no more replies", "type": "test"}}),
        )
    });
    match reply {
        Reply::Json {
            status,
            headers,
            body,
        } => {
            // A reply's own `Content-Type` replaces the JSON one.
            let content_type = if headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                ""
            } else {
                "Content-Type: application/json\r\n"
            };
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\n{content_type}Content-Length: {}\r\nConnection: close\r\n",
                reason(status),
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = writer.write_all(head.as_bytes());
            let _ = writer.write_all(body.as_bytes());
        }
        Reply::Sse {
            pieces,
            delay,
            complete,
        } => {
            let _ = writer.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
            );
            for piece in pieces {
                if !delay.is_zero() {
                    thread::sleep(delay);
                }
                let _ = write!(writer, "{:x}\r\n{piece}\r\n", piece.len());
                let _ = writer.flush();
            }
            if complete {
                let _ = writer.write_all(b"0\r\n\r\n");
            } else {
                // Promise a chunk, send half of it, hang up.
                let _ = writer.write_all(b"40\r\ndata: {\"choices\":[{\"ind");
                let _ = writer.flush();
            }
        }
        Reply::Stall(how_long) => thread::sleep(how_long),
    }
    let _ = writer.flush();
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// `data: …\n\n` for each JSON value or raw string.
pub fn events(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|v| match v {
            Value::String(s) => format!("data: {s}\n\n"),
            other => format!("data: {other}\n\n"),
        })
        .collect()
}

// ---------------------------------------------------------------- OpenAI-style replies

/// A whole chat completion with text.
pub fn openai_text(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105,
                  "prompt_tokens_details": {"cached_tokens": 64}}
    })
}

/// A whole chat completion that calls one tool.
pub fn openai_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}
    })
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn usage_chunk() -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
           "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
                     "prompt_cache_hit_tokens": 96, "prompt_cache_miss_tokens": 4}})
}

/// A streamed answer in `pieces`.
pub fn openai_text_stream(pieces: &[&str]) -> Vec<String> {
    let mut items = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    items.extend(pieces.iter().map(|p| chunk(json!({"content": p}), None)));
    items.push(chunk(json!({}), Some("stop")));
    items.push(usage_chunk());
    items.push(Value::from("[DONE]"));
    events(&items)
}

/// A streamed tool call whose arguments arrive in `argument_pieces`.
pub fn openai_call_stream(id: &str, name: &str, argument_pieces: &[&str]) -> Vec<String> {
    let mut items = vec![chunk(
        json!({"role": "assistant", "content": null, "reasoning_content": "Thinking about it."}),
        None,
    )];
    items.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                               "function": {"name": name, "arguments": ""}}]}),
        None,
    ));
    items.extend(argument_pieces.iter().map(|p| {
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
            None,
        )
    }));
    items.push(chunk(json!({}), Some("tool_calls")));
    items.push(usage_chunk());
    items.push(Value::from("[DONE]"));
    events(&items)
}

// ---------------------------------------------------------------- Anthropic replies

/// A whole message with text.
pub fn anthropic_text(text: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90,
                  "cache_creation_input_tokens": 0}
    })
}

/// A whole message that calls one tool.
pub fn anthropic_call(id: &str, name: &str, input: Value) -> Value {
    json!({
        "id": "msg_2", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": id, "name": name, "input": input}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 9}
    })
}

fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant",
           "model": "m", "content": [], "stop_reason": null,
           "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 90,
                     "cache_creation_input_tokens": 0}}})
}

/// A streamed answer in `pieces`.
pub fn anthropic_text_stream(pieces: &[&str]) -> Vec<String> {
    let mut items = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
    ];
    items.extend(pieces.iter().map(|p| {
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}})
    }));
    items.push(json!({"type": "content_block_stop", "index": 0}));
    items.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 7}}));
    items.push(json!({"type": "message_stop"}));
    anthropic_events(&items)
}

/// A streamed tool call whose input JSON arrives in `json_pieces`.
pub fn anthropic_call_stream(id: &str, name: &str, json_pieces: &[&str]) -> Vec<String> {
    let mut items = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
    ];
    items.extend(json_pieces.iter().map(|p| {
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}})
    }));
    items.push(json!({"type": "content_block_stop", "index": 0}));
    items.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 20}}));
    items.push(json!({"type": "message_stop"}));
    anthropic_events(&items)
}

/// `event: TYPE\ndata: …\n\n`, as Anthropic sends them.
pub fn anthropic_events(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|v| {
            let kind = v["type"].as_str().unwrap_or("message");
            format!("event: {kind}\ndata: {v}\n\n")
        })
        .collect()
}

/// A tool call in a scripted stream: id, name, and its arguments (OpenAI) or input JSON
/// (Anthropic) in pieces.
pub type StreamedCall<'a> = (&'a str, &'a str, &'a [&'a str]);

/// A streamed OpenAI answer: reasoning pieces, then text pieces, then tool calls.
pub fn openai_stream(reasoning: &[&str], text: &[&str], calls: &[StreamedCall<'_>]) -> Vec<String> {
    let mut items = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    items.extend(
        reasoning
            .iter()
            .map(|p| chunk(json!({"reasoning_content": p}), None)),
    );
    items.extend(text.iter().map(|p| chunk(json!({"content": p}), None)));
    for (index, (id, name, pieces)) in calls.iter().enumerate() {
        items.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        items.extend(pieces.iter().map(|p| {
            chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": p}}]}),
                None,
            )
        }));
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    items.push(chunk(json!({}), Some(finish)));
    items.push(usage_chunk());
    items.push(Value::from("[DONE]"));
    events(&items)
}

/// A streamed Anthropic answer: a thinking block, a text block, then tool_use blocks.
pub fn anthropic_stream(
    reasoning: &[&str],
    text: &[&str],
    calls: &[StreamedCall<'_>],
) -> Vec<String> {
    let mut items = vec![message_start()];
    let mut index = 0;
    if !reasoning.is_empty() {
        items.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}));
        items.extend(reasoning.iter().map(|p| {
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}})
        }));
        items.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    if !text.is_empty() {
        items.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
        items.extend(text.iter().map(|p| {
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})
        }));
        items.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    for (id, name, pieces) in calls {
        items.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        items.extend(pieces.iter().map(|p| {
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}})
        }));
        items.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    items.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}));
    items.push(json!({"type": "message_stop"}));
    anthropic_events(&items)
}

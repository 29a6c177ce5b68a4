//! What a hostile streamed answer costs to decode (issue 22): the client's real stream
//! path (`client::decode_stream`: SSE framing, the size cap, the accumulator), on
//! 64 KiB chunks as a server would send them.
//!
//! - one 8 MB `data:` line (the old framing rescanned its buffer per chunk: quadratic);
//! - one 500 MB line, refused at the 8 MiB line cap (generated lazily, never held);
//! - 100,000 Anthropic blocks left open (refused at 1,024), and 1,000 blocks each
//!   opened, fed a delta and closed (lookup by index);
//! - the redactor: 1 MB streamed in 16-byte deltas, and whole.
//!
//! Run: `cargo bench --bench stream` (or `--profile dev`, as measured below).
//!
//! Measured in a debug build on a shared 2-core machine (issue 22), through the live
//! client against a mock server with the old framing (eventsource-stream) and the old
//! block scan: one 8 MB line 44.9 s, 100,000 open blocks plus a delta each 90.6 s. Now,
//! the same runs: 0.17 s and 0.03 s (refused at 1,024 open blocks); this bench's medians:
//! 8 MB line 433 ms, 500 MB line refused at 8 MiB 179 ms, 100k open blocks 51 ms, 1,000
//! blocks opened and closed 121 ms.

use agent_presets::client::decode_stream;
use agent_presets::provider::Dialect;
use serde_json::json;

fn main() {
    divan::main();
}

const CHUNK: usize = 64 << 10;
const LIMIT: usize = 64 << 20;

fn chunks(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.chunks(CHUNK)
}

fn line_8mb() -> Vec<u8> {
    format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "x".repeat(8_000_000)}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    )
    .into_bytes()
}

#[divan::bench(sample_count = 10)]
fn one_8mb_line(bencher: divan::Bencher) {
    let text = line_8mb();
    bencher.bench(|| {
        let turn = decode_stream(Dialect::OpenAi, chunks(&text), LIMIT);
        assert!(turn.is_ok());
    });
}

#[divan::bench(sample_count = 10)]
fn a_500mb_line_is_refused(bencher: divan::Bencher) {
    let filler = vec![b'x'; CHUNK];
    bencher.bench(|| {
        let head = std::iter::once(&b"data: {\"choices\":[{\"delta\":{\"content\":\""[..]);
        let body = std::iter::repeat_n(&filler[..], 500_000_000 / CHUNK);
        let result = decode_stream(Dialect::OpenAi, head.chain(body), 1 << 30);
        assert!(result.is_err());
    });
}

fn anthropic(events: impl Iterator<Item = serde_json::Value>) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        out.push_str(&format!(
            "event: {}\ndata: {e}\n\n",
            e["type"].as_str().unwrap_or("")
        ));
    }
    out.into_bytes()
}

fn start(i: usize) -> serde_json::Value {
    json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
}

fn delta(i: usize) -> serde_json::Value {
    json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": "a"}})
}

#[divan::bench(sample_count = 10)]
fn open_100k_anthropic_blocks(bencher: divan::Bencher) {
    let n = 100_000;
    let text = anthropic((0..n).map(start).chain((0..n).map(delta)));
    bencher.bench(|| {
        assert!(decode_stream(Dialect::Anthropic, chunks(&text), LIMIT).is_err());
    });
}

#[divan::bench(sample_count = 10)]
fn open_and_close_1000_anthropic_blocks(bencher: divan::Bencher) {
    let n = 1_000;
    let events = (0..n)
        .flat_map(|i| {
            [
                start(i),
                delta(i),
                json!({"type": "content_block_stop", "index": i}),
            ]
        })
        .chain([
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            json!({"type": "message_stop"}),
        ]);
    let text = anthropic(events);
    bencher.bench(|| {
        assert!(decode_stream(Dialect::Anthropic, chunks(&text), LIMIT).is_ok());
    });
}

/// The redactor on a streamed answer: 1 MB of prose (with backslashes, as code has) in
/// 16-byte deltas through a `StreamRedactor`, and the same text whole through
/// `Redactor::redact`, with a 51-character key planted once.
const BENCH_KEY: &str = "sk-proj-0123456789abcdefghijABCDEFGHIJ_klmnopqrstuv";

fn prose_1mb() -> String {
    let line = "The answer streams here, with code: `let s = \"a\\tb\\n\";` and words. ";
    let mut text = String::with_capacity(1 << 20);
    while text.len() < 1 << 20 {
        text.push_str(line);
    }
    text.push_str(BENCH_KEY);
    text
}

#[divan::bench(sample_count = 10)]
fn redact_1mb_in_16_byte_deltas(bencher: divan::Bencher) {
    let text = prose_1mb();
    let redactor = agent_presets::redact::Redactor::new([BENCH_KEY]);
    bencher.bench(|| {
        let mut stream = redactor.stream();
        let mut shown = 0;
        for piece in text.as_bytes().chunks(16) {
            // The prose is ASCII: every 16-byte cut is a character boundary.
            let piece = std::str::from_utf8(piece).unwrap_or("");
            shown += stream.push(piece).len();
        }
        shown += stream.finish().len();
        assert_eq!(shown, text.len());
    });
}

#[divan::bench(sample_count = 10)]
fn redact_1mb_whole(bencher: divan::Bencher) {
    let text = prose_1mb();
    let redactor = agent_presets::redact::Redactor::new([BENCH_KEY]);
    bencher.bench(|| {
        let out = redactor.redact(&text);
        assert!(!out.contains(BENCH_KEY));
    });
}

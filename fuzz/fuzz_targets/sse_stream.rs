//! The live stream path: SSE framing (`SseDecoder`) and the whole client decoding
//! (`decode_stream`: framing, the response size cap, the dialect's accumulator, the
//! end-of-stream rules), with the body split into chunks at arbitrary points.
//!
//! Input: a config byte (bit 0: OpenAI-compatible or Anthropic; bit 1: also feed the
//! decoder one byte at a time; bits 2-7: a small line limit, 1 to 64 bytes), a byte `N`
//! (`N % 16` split points), `N % 16` split points as little-endian `u16` (taken modulo
//! the body length + 1), then the body bytes.
//!
//! Checks:
//! - `decode_stream` gives the same result (the same turn, or an error with the same
//!   text) for the body as one chunk, split at the chosen points, and one byte at a time
//!   (splits inside a CRLF, a UTF-8 sequence, the byte order mark included);
//! - with a response cap at the last split point: the body as one chunk is refused with
//!   the size error exactly when it is longer than the cap, and is otherwise decoded as
//!   without the cap; split, it is either that error or the uncapped result;
//! - `SseDecoder` (the default limit, and the small one) gives the same events and the
//!   same error at the same place for every split;
//! - the decoder with the default limit gives exactly the events of a whole-input
//!   reference parser written from the HTML standard's rules;
//! - with the small limit: the decoder fails exactly when some line (a final line without
//!   a line end included) is longer than the limit, and no event's data is longer.

#![no_main]

use agent_presets::client::decode_stream;
use agent_presets::client::sse::{SseDecoder, SseError, SseEvent};
use agent_presets::provider::{Dialect, ModelTurn};
use libfuzzer_sys::fuzz_target;

/// The client's default cap is far above anything the fuzzer sends.
const NO_CAP: usize = 64 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&config, rest)) = data.split_first() else {
        return;
    };
    let Some((&count, rest)) = rest.split_first() else {
        return;
    };
    let count = usize::from(count % 16);
    if rest.len() < 2 * count {
        return;
    }
    let (points, body) = rest.split_at(2 * count);
    let mut cuts: Vec<usize> = points
        .chunks_exact(2)
        .map(|p| usize::from(u16::from_le_bytes([p[0], p[1]])) % (body.len() + 1))
        .collect();
    cuts.sort_unstable();
    let dialect = if config & 1 == 0 {
        Dialect::OpenAi
    } else {
        Dialect::Anthropic
    };
    let bytewise = config & 2 != 0;
    let small_limit = usize::from(config >> 2) + 1;

    let chunks = split(body, &cuts);

    // The whole client path.
    let whole = outcome(decode_stream(dialect, [body], NO_CAP));
    let parts = outcome(decode_stream(dialect, chunks.iter().copied(), NO_CAP));
    assert_eq!(whole, parts, "decode_stream differs when the body is split");
    if bytewise {
        let singles = outcome(decode_stream(dialect, body.chunks(1), NO_CAP));
        assert_eq!(whole, singles, "decode_stream differs byte by byte");
    }
    let cap = cuts.last().copied().unwrap_or(body.len());
    let too_large = format!("larger than {cap} bytes");
    let capped = outcome(decode_stream(dialect, [body], cap));
    if body.len() > cap {
        assert!(
            capped.as_ref().is_err_and(|e| e.contains(&too_large)),
            "a body over the cap was not refused: {capped:?}"
        );
    } else {
        assert_eq!(capped, whole, "a body within the cap decodes differently");
    }
    let capped_parts = outcome(decode_stream(dialect, chunks.iter().copied(), cap));
    let is_cap_error = capped_parts.as_ref().is_err_and(|e| e.contains(&too_large));
    assert!(
        capped_parts == whole || is_cap_error,
        "split under a cap: {capped_parts:?}, uncapped: {whole:?}"
    );

    // The framing alone, default limit: same events for every split, and the events of
    // the reference parser.
    let one = sse(SseDecoder::new(), &[body]);
    assert_eq!(
        one,
        sse(SseDecoder::new(), &chunks),
        "SSE events differ when split"
    );
    if bytewise {
        let singles: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(
            one,
            sse(SseDecoder::new(), &singles),
            "SSE events differ byte by byte"
        );
    }
    assert_eq!(
        one.1, None,
        "an input of at most 64 KiB hit the 8 MiB limit"
    );
    assert_eq!(
        one.0,
        reference(body),
        "SSE events differ from the reference parser"
    );

    // A small limit: the same for every split, and it fails exactly on a long line.
    let small = sse(SseDecoder::with_line_limit(small_limit), &[body]);
    assert_eq!(
        small,
        sse(SseDecoder::with_line_limit(small_limit), &chunks),
        "SSE events under a small limit differ when split"
    );
    if bytewise {
        let singles: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(
            small,
            sse(SseDecoder::with_line_limit(small_limit), &singles),
            "SSE events under a small limit differ byte by byte"
        );
    }
    assert_eq!(
        small.1,
        first_failure(body, small_limit),
        "the decoder under a limit of {small_limit} failed where the reference does not"
    );
    for event in &small.0 {
        assert!(
            event.data.len() <= small_limit,
            "an event's data is {} bytes, over the limit of {small_limit}",
            event.data.len()
        );
    }
});

/// `body` cut at the (sorted) `cuts`; empty chunks included.
fn split<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &cut in cuts {
        chunks.push(&body[start..cut]);
        start = cut;
    }
    chunks.push(&body[start..]);
    chunks
}

fn outcome(
    result: Result<ModelTurn, agent_presets::client::ClientError>,
) -> Result<ModelTurn, String> {
    result.map_err(|e| e.to_string())
}

/// Every event the decoder completes, and the error that stopped it (later chunks are
/// not pushed: the client stops reading).
fn sse(mut decoder: SseDecoder, chunks: &[&[u8]]) -> (Vec<SseEvent>, Option<SseError>) {
    let mut events = Vec::new();
    for chunk in chunks {
        if let Err(e) = decoder.push_into(chunk, &mut events) {
            return (events, Some(e));
        }
    }
    (events, None)
}

/// The lines of `body` as the standard splits them (CRLF, LF or CR), then the final
/// unterminated line if there is one. The first line keeps a byte order mark.
fn lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = body;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.iter().position(|&b| b == b'\r' || b == b'\n') {
            None => {
                let line = rest;
                rest = &[];
                Some(line)
            }
            Some(end) => {
                let line = &rest[..end];
                let mut next = end + 1;
                if rest[end] == b'\r' && rest.get(next) == Some(&b'\n') {
                    next += 1;
                }
                rest = &rest[next..];
                Some(line)
            }
        }
    })
}

/// Where a decoder limited to `limit` bytes must fail, computed over the whole input: the
/// first line over the limit (a final line without a line end included), or the first
/// event whose data lines (joined by `\n`, as lossy UTF-8) grow over it.
fn first_failure(body: &[u8], limit: usize) -> Option<SseError> {
    let terminated = matches!(body.last(), Some(b'\r' | b'\n'));
    let all: Vec<&[u8]> = lines(body).collect();
    let mut data = 0usize;
    let mut has_data = false;
    for (i, &line) in all.iter().enumerate() {
        if line.len() > limit {
            return Some(SseError::LineTooLong { limit });
        }
        if i + 1 == all.len() && !terminated {
            break;
        }
        let line = if i == 0 {
            line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
        } else {
            line
        };
        if line.is_empty() {
            data = 0;
            has_data = false;
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (field, value) = field_value(line);
        if field == b"data" {
            data += String::from_utf8_lossy(value).len() + usize::from(has_data);
            has_data = true;
            if data > limit {
                return Some(SseError::EventTooLarge { limit });
            }
        }
    }
    None
}

fn field_value(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &b""[..]),
    }
}

/// A whole-input event-stream parser (HTML standard, "interpreting an event stream"):
/// a leading BOM is dropped, lines end at CRLF, LF or CR, a blank line dispatches an
/// event with data, `:` lines are comments, `id` with NUL is ignored, `retry` only with
/// ASCII digits; an unterminated last line is not processed.
fn reference(body: &[u8]) -> Vec<SseEvent> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let mut terminated: Vec<&[u8]> = lines(body).collect();
    if !body.is_empty() && !matches!(body.last(), Some(b'\r' | b'\n')) {
        terminated.pop();
    }
    let mut out = Vec::new();
    let mut event: Option<String> = None;
    let mut data: Option<String> = None;
    let mut id: Option<String> = None;
    let mut retry: Option<u64> = None;
    for line in terminated {
        if line.is_empty() {
            if let Some(d) = data.take() {
                out.push(SseEvent {
                    event: event.take().unwrap_or_else(|| "message".to_owned()),
                    data: d,
                    id: id.clone(),
                    retry: retry.take(),
                });
            }
            event = None;
            retry = None;
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (field, value) = field_value(line);
        let value_text = String::from_utf8_lossy(value).into_owned();
        match field {
            b"data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(&value_text);
                }
                None => data = Some(value_text),
            },
            b"event" => event = Some(value_text),
            b"id" if !value.contains(&0) => id = Some(value_text),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                retry = value_text.parse().ok();
            }
            _ => {}
        }
    }
    out
}

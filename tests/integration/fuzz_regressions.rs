//! Inputs the fuzz targets (`fuzz/`) found, minimised, each pinned by the rule it broke.

use agent_presets::DiagnosticKind;
use agent_presets::preset::parse_preset;
use agent_presets::provider::{
    Dialect, ModelTurn, ResponseError, StreamAccumulator, error_message, parse_response,
};

/// (kind, line, column) of the single error `bytes` parse to.
fn error_at(bytes: &[u8]) -> (DiagnosticKind, u32, u32) {
    let ds = parse_preset("f.yaml".into(), bytes).unwrap_err().into_vec();
    assert_eq!(ds.len(), 1, "{ds:?}");
    let d = &ds[0];
    let s = d.span.as_ref().unwrap();
    (d.kind, s.line, s.column)
}

/// preset_validate: a NUL byte after a lone CR was reported one line too early (and at a
/// column counted across the CR), while every other diagnostic and the snippet count a
/// lone CR as a line break.
#[test]
fn a_nul_byte_after_a_lone_cr_is_on_the_next_line() {
    assert_eq!(
        error_at(b"version: 1\rname: x\r\xc3\xa9\0"),
        (DiagnosticKind::Encoding, 3, 2)
    );
    assert_eq!(
        error_at(b"version: 1\r\nname: x\rdes: \0"),
        (DiagnosticKind::Encoding, 3, 6)
    );
    // A BOM is not a column.
    assert_eq!(
        error_at(b"\xef\xbb\xbfab\0"),
        (DiagnosticKind::Encoding, 1, 3)
    );
}

/// The same for invalid UTF-8.
#[test]
fn invalid_utf8_after_a_lone_cr_is_on_the_next_line() {
    assert_eq!(
        error_at(b"version: 1\rname: x\rab\xff"),
        (DiagnosticKind::Encoding, 3, 3)
    );
    assert_eq!(
        error_at(b"version: 1\r\r\n\xff"),
        (DiagnosticKind::Encoding, 3, 1)
    );
}

/// The OpenAI stream of issue 22 through the client's real stream path: a tool-call
/// delta with `"index":4294967295`, then one without an index. `last + 1` overflowed
/// (a panic in debug builds; in release builds the second call was filed out of order).
#[cfg(feature = "client")]
#[test]
fn a_huge_tool_call_index_then_none_is_a_protocol_error() {
    use agent_presets::client::{ClientError, decode_stream};
    use agent_presets::provider::{Dialect, ResponseError};

    let stream = concat!(
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":4294967295,\"id\":\"a\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}}]}\n\n",
    );
    let err = decode_stream(Dialect::OpenAi, [stream.as_bytes()], 64 << 20).unwrap_err();
    assert!(
        matches!(
            &err,
            ClientError::Response { error: ResponseError::Malformed(m), .. } if m.contains("index")
        ),
        "{err}"
    );
}

/// An input of the `stream_parse` target, through the target's path: the first byte picks
/// the dialect (even: OpenAI-compatible, odd: Anthropic), the rest is the whole body for
/// `parse_response` / `error_message`, then one `data:` payload a line into a
/// `StreamAccumulator` until its first error. The finished turn, if the stream finishes.
fn stream_parse(input: &[u8]) -> Option<Result<ModelTurn, ResponseError>> {
    let (&selector, rest) = input.split_first()?;
    let dialect = if selector % 2 == 0 {
        Dialect::OpenAi
    } else {
        Dialect::Anthropic
    };
    let text = String::from_utf8_lossy(rest);
    let _ = parse_response(dialect, &text);
    let _ = error_message(dialect, &text);
    let mut acc = StreamAccumulator::new(dialect);
    for event in text.split('\n') {
        if let Err(e) = acc.push(event) {
            return Some(Err(e));
        }
    }
    Some(acc.finish())
}

/// stream_parse (with overflow checks on, `fuzz/run.sh -a`): an OpenAI tool-call delta
/// with `"index":4294967295` and then one without an index (a new id) panicked in
/// `ChunkAccumulator::push_call` (`last + 1` overflowed); in a release build the index
/// wrapped to 0 and the second call was filed before the first. Input kept in
/// `fuzz/regressions/stream_parse/`.
#[test]
fn a_tool_call_index_of_u32_max_then_none_does_not_overflow() {
    let input =
        include_bytes!("../../fuzz/regressions/stream_parse/openai-index-u32-max-then-no-index");
    // The two lines alone: no panic (the stream is unfinished, or refused).
    assert!(!matches!(stream_parse(input), Some(Ok(_))));
    // Finished properly: either refused as a protocol error, or both calls in the order
    // they were streamed.
    let mut finished = input.to_vec();
    finished.extend_from_slice(
        b"{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n[DONE]",
    );
    if let Some(Ok(turn)) = stream_parse(&finished) {
        let calls: Vec<(&str, &str)> = turn
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(calls, [("call_a", "read_file"), ("call_b", "grep")]);
    }
}

//! Inputs the fuzz targets (`fuzz/`) found, minimised, each pinned by the rule it broke.

use agent_presets::DiagnosticKind;
use agent_presets::preset::parse_preset;

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

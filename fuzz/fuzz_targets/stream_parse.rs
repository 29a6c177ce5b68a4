//! Provider responses: streamed events through `StreamAccumulator` and whole bodies
//! through `parse_response` / `error_message`, in both dialects.
//!
//! Input: one byte choosing the dialect (even: OpenAI-compatible, odd: Anthropic), then
//! the `data:` payloads of server-sent events, one per line (lossy UTF-8). The same bytes
//! are also parsed as one whole response body.
//!
//! Checks: nothing panics; a stream that finishes yields exactly the text it streamed
//! live; `is_done` never goes back to false.

#![no_main]

use agent_presets::provider::{
    Dialect, StreamAccumulator, StreamEvent, error_message, parse_response,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let dialect = if selector % 2 == 0 {
        Dialect::OpenAi
    } else {
        Dialect::Anthropic
    };
    let text = String::from_utf8_lossy(rest);

    let _ = parse_response(dialect, &text);
    let _ = error_message(dialect, &text);

    let mut acc = StreamAccumulator::new(dialect);
    let mut live = String::new();
    let mut was_done = false;
    for event in text.split('\n') {
        match acc.push(event) {
            Ok(events) => {
                for e in events {
                    if let StreamEvent::Text(t) = e {
                        live.push_str(&t);
                    }
                }
            }
            // The client stops reading at the first error.
            Err(_) => return,
        }
        let done = acc.is_done();
        assert!(done || !was_done, "is_done went back to false");
        was_done = done;
    }
    if let Ok(turn) = acc.finish() {
        assert_eq!(
            turn.text, live,
            "the finished text differs from the streamed text"
        );
    }
});

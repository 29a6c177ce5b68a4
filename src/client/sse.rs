//! A server-sent events decoder (the `text/event-stream` format of the HTML standard)
//! that scans every byte once and bounds what it keeps.
//!
//! [`SseDecoder::push`] takes the body in chunks split anywhere (inside a line, a CRLF,
//! a UTF-8 sequence or the byte order mark) and returns the events completed so far:
//! `data:` lines joined by `\n`, `event:`, `id:` and `retry:`, comments (`:` lines)
//! skipped, lines ended by CRLF, LF or CR. Bytes are searched for line ends only where
//! they arrive (the scan position never moves back), so a line costs linear time however
//! it is chunked. A line, and an event's data, longer than the limit
//! ([`MAX_LINE_BYTES`] unless [`SseDecoder::with_line_limit`] says otherwise) is an
//! error *before* its bytes are kept.
//!
//! ```
//! use agent_presets::client::sse::SseDecoder;
//!
//! let mut decoder = SseDecoder::new();
//! let mut events = decoder.push(b"event: ping\r\ndata: {\"a\"").unwrap();
//! assert!(events.is_empty());
//! events = decoder.push(b":1}\r\n\r\n").unwrap();
//! assert_eq!(events[0].event, "ping");
//! assert_eq!(events[0].data, "{\"a\":1}");
//! ```

use std::fmt;

/// The longest line (and the most data in one event) a decoder keeps: 8 MiB. A model
/// server never needs more for one event; more is a stream to refuse, not to buffer.
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `message` when none was given.
    pub event: String,
    /// The `data:` lines, joined by `\n`.
    pub data: String,
    /// The last `id:` seen so far in the stream (it persists across events).
    pub id: Option<String>,
    /// The `retry:` field of this event, in milliseconds.
    pub retry: Option<u64>,
}

/// Why a stream cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseError {
    /// A line longer than the limit.
    LineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// An event whose `data:` lines together exceed the limit.
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::LineTooLong { limit } => {
                write!(f, "an event-stream line is longer than {limit} bytes")
            }
            SseError::EventTooLarge { limit } => {
                write!(f, "an event's data is larger than {limit} bytes")
            }
        }
    }
}

impl std::error::Error for SseError {}

/// Decodes an event stream pushed in chunks. See the [module docs](self).
#[derive(Debug)]
pub struct SseDecoder {
    limit: usize,
    /// The current line's bytes so far (without its line end).
    line: Vec<u8>,
    /// The previous chunk ended with CR: an LF at the start of the next one belongs to it.
    after_cr: bool,
    /// No line has been completed yet (a BOM may start the first one).
    first_line: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
    failed: Option<SseError>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the [`MAX_LINE_BYTES`] limit.
    pub fn new() -> Self {
        SseDecoder::with_line_limit(MAX_LINE_BYTES)
    }

    /// A decoder that refuses lines (and events' data) longer than `limit` bytes.
    pub fn with_line_limit(limit: usize) -> Self {
        SseDecoder {
            limit,
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            retry: None,
            failed: None,
        }
    }

    /// Decode the next chunk; returns the events it completed. After an error every
    /// later call returns that error again.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        self.push_into(chunk, &mut out)?;
        Ok(out)
    }

    /// [`push`](Self::push), appending to `out`.
    pub fn push_into(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.scan(chunk, out);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
            self.line = Vec::new();
            self.data = String::new();
        }
        result
    }

    fn scan(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        while !chunk.is_empty() {
            match memchr::memchr2(b'\r', b'\n', chunk) {
                None => {
                    self.keep(chunk)?;
                    break;
                }
                Some(end) => {
                    self.keep(&chunk[..end])?;
                    let mut next = end + 1;
                    if chunk[end] == b'\r' {
                        match chunk.get(next) {
                            Some(b'\n') => next += 1,
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    chunk = &chunk[next..];
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, out)?;
                    // Reuse the allocation for the next line.
                    self.line = line;
                    self.line.clear();
                }
            }
        }
        Ok(())
    }

    /// Append to the current line, refusing before anything over the limit is kept.
    fn keep(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if bytes.len() > self.limit.saturating_sub(self.line.len()) {
            return Err(SseError::LineTooLong { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut line = line;
        if self.first_line {
            self.first_line = false;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let value = String::from_utf8_lossy(value);
                let extra = value.len() + usize::from(self.has_data);
                if extra > self.limit.saturating_sub(self.data.len()) {
                    return Err(SseError::EventTooLarge { limit: self.limit });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
        Ok(())
    }

    /// A blank line ends an event; without data there is nothing to dispatch.
    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let retry = self.retry.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event: event.unwrap_or_else(|| "message".to_owned()),
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
            retry,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(decoder: &mut SseDecoder, chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for c in chunks {
            out.extend(decoder.push(c).unwrap());
        }
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn fields_comments_and_multi_line_data() {
        let text = b": keep-alive\nevent: delta\nid: 7\nretry: 1500\ndata: one\ndata:two\ndata\n\ndata: x\n\n";
        let events = all(&mut SseDecoder::new(), &[text]);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event, "delta");
        assert_eq!(events[0].data, "one\ntwo\n");
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].retry, Some(1500));
        assert_eq!(events[1].event, "message");
        assert_eq!(events[1].id.as_deref(), Some("7"), "the id persists");
        assert_eq!(events[1].retry, None);
    }

    #[test]
    fn crlf_cr_and_lf_line_ends_and_a_bom() {
        let events = all(
            &mut SseDecoder::new(),
            &[b"\xEF\xBB\xBFdata: a\r\n\r\ndata: b\r\rdata: c\n\n"],
        );
        assert_eq!(data(&events), ["a", "b", "c"]);
    }

    #[test]
    fn splits_inside_a_crlf_a_bom_and_a_utf8_sequence() {
        let text = "\u{feff}data: h\u{e9}llo \u{1f600}\r\n\r\ndata: z\r\n\r\n".as_bytes();
        let mut d = SseDecoder::new();
        let singles: Vec<&[u8]> = text.chunks(1).collect();
        let events = all(&mut d, &singles);
        assert_eq!(data(&events), ["h\u{e9}llo \u{1f600}", "z"]);
    }

    #[test]
    fn a_cr_at_a_chunk_end_does_not_eat_a_blank_line() {
        // "\r" then "\n\n": the LF after CR belongs to it; the next LF is a blank line.
        let events = all(&mut SseDecoder::new(), &[b"data: a\r", b"\n\n"]);
        assert_eq!(data(&events), ["a"]);
        // "\r" then "\r": two line ends, an event.
        let events = all(&mut SseDecoder::new(), &[b"data: a\r", b"\r"]);
        assert_eq!(data(&events), ["a"]);
    }

    #[test]
    fn an_unterminated_event_at_the_end_is_not_dispatched() {
        assert!(all(&mut SseDecoder::new(), &[b"data: a\n"]).is_empty());
    }

    #[test]
    fn a_line_over_the_limit_is_refused_before_it_is_kept() {
        let mut d = SseDecoder::with_line_limit(8);
        assert!(d.push(b"data: 12").unwrap().is_empty());
        let err = d.push(b"3").unwrap_err();
        assert_eq!(err, SseError::LineTooLong { limit: 8 });
        assert!(err.to_string().contains("8 bytes"));
        assert!(d.line.capacity() <= 8);
        // Stays failed.
        assert_eq!(d.push(b"\n\n"), Err(SseError::LineTooLong { limit: 8 }));
        // Exactly the limit is fine.
        let mut d = SseDecoder::with_line_limit(8);
        assert_eq!(data(&all(&mut d, &[b"data: 12\n\n"])), ["12"]);
    }

    #[test]
    fn event_data_over_the_limit_is_refused() {
        let mut d = SseDecoder::with_line_limit(10);
        let err = d.push(b"data: 1234\ndata: 5678\ndata: 9\n").unwrap_err();
        assert_eq!(err, SseError::EventTooLarge { limit: 10 });
    }

    #[test]
    fn the_default_limit_is_8_mib() {
        assert_eq!(MAX_LINE_BYTES, 8 * 1024 * 1024);
        let mut d = SseDecoder::new();
        let big = vec![b'x'; 1 << 20];
        for _ in 0..8 {
            d.push(&big).unwrap();
        }
        assert_eq!(
            d.push(b"x"),
            Err(SseError::LineTooLong {
                limit: MAX_LINE_BYTES
            })
        );
    }

    fn sample() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(&b"data: "[..]),
            Just(&b"data:"[..]),
            Just(&b"event: e"[..]),
            Just(&b"id: 1"[..]),
            Just(&b"retry: 20"[..]),
            Just(&b": c"[..]),
            Just(&b"\r\n"[..]),
            Just(&b"\r"[..]),
            Just(&b"\n"[..]),
            Just(&b"\n\n"[..]),
            Just("\u{e9}\u{1f600}".as_bytes()),
            Just(&b"\xEF\xBB\xBF"[..]),
            Just(&b"{\"a\":1}"[..]),
            Just(&b"xyz"[..]),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn any_chunk_split_gives_the_same_events(
            text in sample(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let whole = SseDecoder::with_line_limit(64).push(&text);
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(text.len() + 1)).collect();
            points.sort_unstable();
            let mut d = SseDecoder::with_line_limit(64);
            let mut split = Ok(Vec::new());
            let mut start = 0;
            for end in points.into_iter().chain([text.len()]) {
                match d.push(&text[start..end]) {
                    Ok(events) => {
                        if let Ok(all) = &mut split {
                            all.extend(events);
                        }
                    }
                    Err(e) => {
                        split = Err(e);
                        break;
                    }
                }
                start = end;
            }
            prop_assert_eq!(whole, split);
        }
    }
}

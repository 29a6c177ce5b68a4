//! A streamed answer from bytes to a [`ModelTurn`]: SSE framing ([`SseDecoder`]), the
//! response size cap, the dialect's [`StreamAccumulator`] and the end-of-stream rules.
//! The client runs every chunk of a live answer through [`StreamDecoder`];
//! [`decode_stream`] runs chunks given at once through the same code, for tests, fuzzing
//! and benchmarks.

use super::ClientError;
use super::sse::{SseDecoder, SseEvent};
use crate::endpoint::Provider;
use crate::provider::{Dialect, ModelTurn, ResponseError, StreamAccumulator, StreamEvent};

/// Decode a streamed answer given as byte chunks (split anywhere), exactly as the client
/// decodes a live one after its first byte: SSE framing with its line cap
/// ([`super::sse::MAX_LINE_BYTES`]), the `max_response_bytes` cap over all chunks, the
/// dialect's stream accumulator, and the end-of-stream rules (nothing counts before the
/// stream's final event, `[DONE]` or `message_stop`; chunks after it are not read).
///
/// Errors are the [`ClientError`]s the client returns for the same bytes, naming
/// `openai-compatible` for [`Dialect::OpenAi`] and `anthropic` for [`Dialect::Anthropic`].
/// Only what needs a network is left out: timeouts, transport errors and retries.
///
/// ```
/// use agent_presets::client::decode_stream;
/// use agent_presets::provider::Dialect;
///
/// let chunks = [
///     &b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n"[..],
///     &b"\ndata: [DONE]\n\n"[..],
/// ];
/// let turn = decode_stream(Dialect::OpenAi, chunks, 64 << 20).unwrap();
/// assert_eq!(turn.text, "Hi");
/// ```
pub fn decode_stream<I>(
    dialect: Dialect,
    chunks: I,
    max_response_bytes: usize,
) -> Result<ModelTurn, ClientError>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    let provider = match dialect {
        Dialect::OpenAi => Provider::OpenaiCompatible,
        Dialect::Anthropic => Provider::Anthropic,
    };
    let redact = |t: &str| t.to_owned();
    let mut decoder = StreamDecoder::new(provider, dialect, max_response_bytes);
    for chunk in chunks {
        if decoder.push(chunk.as_ref(), &redact, &mut |_| {})? {
            break;
        }
    }
    decoder.finish(&redact)
}

/// The state of one streamed answer.
pub(crate) struct StreamDecoder {
    provider: Provider,
    sse: SseDecoder,
    acc: StreamAccumulator,
    seen: usize,
    limit: usize,
    events: Vec<SseEvent>,
}

impl StreamDecoder {
    pub(crate) fn new(provider: Provider, dialect: Dialect, max_response_bytes: usize) -> Self {
        StreamDecoder {
            provider,
            sse: SseDecoder::new(),
            acc: StreamAccumulator::new(dialect),
            seen: 0,
            limit: max_response_bytes,
            events: Vec::new(),
        }
    }

    fn malformed(&self, message: String) -> ClientError {
        ClientError::Response {
            provider: self.provider,
            error: ResponseError::Malformed(message),
        }
    }

    /// Feed the next chunk, reporting what to show live; `Ok(true)` once the stream's
    /// final event arrived (read no further).
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        redact: &dyn Fn(&str) -> String,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<bool, ClientError> {
        if chunk.len() > self.limit.saturating_sub(self.seen) {
            return Err(self.malformed(format!("the answer is larger than {} bytes", self.limit)));
        }
        self.seen += chunk.len();
        self.events.clear();
        if let Err(e) = self.sse.push_into(chunk, &mut self.events) {
            return Err(self.malformed(format!("not a usable event stream: {e}")));
        }
        for event in &self.events {
            let pieces = self
                .acc
                .push(&event.data)
                .map_err(|error| ClientError::Response {
                    provider: self.provider,
                    error: redact_response(error, redact),
                })?;
            for piece in &pieces {
                on_event(piece);
            }
            if self.acc.is_done() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The answer, once the stream ended (or said it is over).
    pub(crate) fn finish(self, redact: &dyn Fn(&str) -> String) -> Result<ModelTurn, ClientError> {
        let provider = self.provider;
        self.acc.finish().map_err(|error| ClientError::Response {
            provider,
            error: redact_response(error, redact),
        })
    }
}

pub(crate) fn redact_response(
    error: ResponseError,
    redact: &dyn Fn(&str) -> String,
) -> ResponseError {
    match error {
        ResponseError::Malformed(m) => ResponseError::Malformed(redact(&m)),
        ResponseError::Incomplete(m) => ResponseError::Incomplete(redact(&m)),
        ResponseError::Provider(m) => ResponseError::Provider(redact(&m)),
    }
}

//! The transport: sends a dialect's JSON body to the provider with reqwest (rustls),
//! streams the answer (server-sent events), and retries what is worth retrying.
//!
//! - Retries: 408, 409, 425, 429, 5xx and connection failures, with jittered exponential
//!   backoff, honouring `Retry-After` (seconds or an HTTP date; `retry-after-ms` too) up
//!   to [`ClientOptions::max_retry_after`] — but only before the first byte of the answer:
//!   once output has started, a failure is final.
//! - Timeouts: connect, idle (nothing received for that long, while streaming), and one
//!   for the whole request.
//! - The key travels only in its header, marked sensitive; anything a server echoes back
//!   is scrubbed of it and its common transformations ([`crate::redact::Redactor`],
//!   [`ModelClient::redactor`]).
//! - Redirects are never followed: a 3xx answer is a [`ClientError::Redirect`], so the
//!   key and the conversation go only to the host `baseUrl` names.
//! - A streamed answer is decoded by [`sse`] (linear, lines capped at
//!   [`sse::MAX_LINE_BYTES`]) and the dialect's accumulator; [`decode_stream`] runs the
//!   same code on chunks given at once.

mod api_key;
mod decode;
mod error;
pub mod sse;

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use backon::{ExponentialBuilder, Retryable};
use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, LOCATION, RETRY_AFTER};
use serde_json::Value;

pub use api_key::ApiKey;
pub use decode::decode_stream;
pub use error::{ClientError, KeyProblem, TimeoutKind};

use crate::provider::{
    ANTHROPIC_VERSION, Dialect, ModelSettings, ModelTurn, RequestBody, ResponseError, StreamEvent,
};
use crate::redact::Redactor;
use decode::{StreamDecoder, redact_response};

/// Limits and retry policy of a [`ModelClient`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientOptions {
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the stream may stay silent (keep-alive comments count as activity).
    pub idle_timeout: Duration,
    /// How long one request may take in all, retries included.
    pub request_timeout: Duration,
    /// How many times a failed request is retried (0: never).
    pub max_retries: usize,
    /// The first backoff delay (doubled each retry, with jitter).
    pub min_backoff: Duration,
    /// The largest backoff delay.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; a provider asking for more ends the request.
    pub max_retry_after: Duration,
    /// Ask for a streamed answer.
    pub stream: bool,
    /// The most bytes one answer may take.
    pub max_response_bytes: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(180),
            request_timeout: Duration::from_secs(900),
            max_retries: 4,
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            stream: true,
            max_response_bytes: 64 << 20,
        }
    }
}

/// What happens while a request runs, for live display.
#[derive(Debug)]
pub enum ClientEvent<'a> {
    /// A piece of the answer.
    Stream(&'a StreamEvent),
    /// The last attempt failed; the next one starts after `delay`.
    Retry {
        /// The attempt that failed (1-based).
        attempt: u32,
        /// How long until the next one.
        delay: Duration,
        /// Why it failed.
        error: &'a ClientError,
    },
}

/// Sends requests to one model endpoint.
#[derive(Debug)]
pub struct ModelClient {
    http: reqwest::Client,
    settings: ModelSettings,
    endpoint: String,
    /// The endpoint as errors name it (through the redactor, though it holds no key).
    shown_endpoint: String,
    key: Option<ApiKey>,
    /// Masks the key in everything a server sends back that ends up in an error.
    redactor: Redactor,
    options: ClientOptions,
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

enum Opened {
    Stream {
        first: bytes::Bytes,
        rest: ByteStream,
    },
    /// A whole answer, with its `Content-Type` (escaped and shortened), if any.
    Whole(bytes::Bytes, Option<String>),
}

impl ModelClient {
    /// A client for `settings`, reading the key from the variable `settings` names (none
    /// named: no key is sent). Fails fast when that variable is unset.
    pub fn from_env(settings: ModelSettings, options: ClientOptions) -> Result<Self, ClientError> {
        let key = match &settings.api_key_env {
            Some(var) => Some(ApiKey::from_env(settings.provider, var)?),
            None => None,
        };
        Self::new(settings, key, options)
    }

    /// A client with an explicit key (or none).
    pub fn new(
        settings: ModelSettings,
        key: Option<ApiKey>,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .user_agent(concat!("agent-presets/", env!("CARGO_PKG_VERSION")))
            // A redirect would carry the key (reqwest strips `Authorization` across hosts,
            // not `x-api-key`) and, on 307/308, the whole conversation to another host.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Request {
                provider: settings.provider,
                detail: root_cause(&e),
            })?;
        let endpoint = settings.endpoint();
        if reqwest::Url::parse(&endpoint).is_err() {
            return Err(ClientError::Request {
                provider: settings.provider,
                detail: format!("`{endpoint}` is not a valid URL"),
            });
        }
        let redactor: Redactor = key.as_ref().map(ApiKey::redactor).unwrap_or_default();
        Ok(ModelClient {
            http,
            settings,
            shown_endpoint: redactor.redact(&endpoint).into_owned(),
            endpoint,
            redactor,
            key,
            options,
        })
    }

    /// The settings requests are shaped by.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The limits and retry policy.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Send one request body (from [`crate::provider::request_body`]) and collect the
    /// answer, reporting streamed pieces and retries to `on_event` as they happen.
    pub async fn send<F>(&self, body: &Value, on_event: &mut F) -> Result<ModelTurn, ClientError>
    where
        F: FnMut(ClientEvent<'_>),
    {
        let bytes = serde_json::to_vec(body).map_err(|e| ClientError::Request {
            provider: self.settings.provider,
            detail: e.to_string(),
        })?;
        self.send_bytes(bytes.into(), on_event).await
    }

    /// [`ModelClient::send`] of a body in parts (the agent's: [`RequestBody::to_json`]
    /// writes the same bytes as the whole body's `Value`).
    pub async fn send_body<F>(
        &self,
        body: &RequestBody,
        on_event: &mut F,
    ) -> Result<ModelTurn, ClientError>
    where
        F: FnMut(ClientEvent<'_>),
    {
        self.send_bytes(body.to_json().into(), on_event).await
    }

    async fn send_bytes<F>(
        &self,
        bytes: bytes::Bytes,
        on_event: &mut F,
    ) -> Result<ModelTurn, ClientError>
    where
        F: FnMut(ClientEvent<'_>),
    {
        let limit = self.options.request_timeout;
        match tokio::time::timeout(limit, self.send_within(bytes, on_event)).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::Timeout {
                provider: self.settings.provider,
                kind: TimeoutKind::Overall,
                after: limit,
            }),
        }
    }

    async fn send_within<F>(
        &self,
        bytes: bytes::Bytes,
        on_event: &mut F,
    ) -> Result<ModelTurn, ClientError>
    where
        F: FnMut(ClientEvent<'_>),
    {
        let attempts = AtomicU32::new(0);
        let max_retry_after = self.options.max_retry_after;
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.options.min_backoff)
            .with_max_delay(self.options.max_backoff)
            .with_max_times(self.options.max_retries)
            .with_jitter();
        let opened = (|| {
            attempts.fetch_add(1, Ordering::Relaxed);
            self.open(bytes.clone())
        })
        .retry(backoff)
        .sleep(tokio::time::sleep)
        .when(ClientError::is_retryable)
        .adjust(|error, delay| {
            let delay = delay?;
            match error.retry_after() {
                Some(asked) if asked > max_retry_after => None,
                Some(asked) => Some(asked),
                None => Some(delay),
            }
        })
        .notify(|error, delay| {
            on_event(ClientEvent::Retry {
                attempt: attempts.load(Ordering::Relaxed),
                delay,
                error,
            });
        })
        .await
        .map_err(|mut e| {
            e.set_attempts(attempts.load(Ordering::Relaxed));
            e
        })?;
        match opened {
            Opened::Whole(body, content_type) => self.whole(&body, content_type, on_event),
            Opened::Stream { first, rest } => self.stream(first, rest, on_event).await,
        }
    }

    fn headers(&self) -> Result<HeaderMap, ClientError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(if self.options.stream {
                "text/event-stream"
            } else {
                "application/json"
            }),
        );
        let bad_key = || ClientError::Request {
            provider: self.settings.provider,
            detail: "the API key holds characters a header cannot carry".into(),
        };
        match self.settings.dialect() {
            Dialect::OpenAi => {
                if let Some(key) = &self.key {
                    let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                        .map_err(|_| bad_key())?;
                    value.set_sensitive(true);
                    headers.insert(reqwest::header::AUTHORIZATION, value);
                }
            }
            Dialect::Anthropic => {
                if let Some(key) = &self.key {
                    let mut value = HeaderValue::from_str(key.expose()).map_err(|_| bad_key())?;
                    value.set_sensitive(true);
                    headers.insert("x-api-key", value);
                }
                headers.insert(
                    "anthropic-version",
                    HeaderValue::from_static(ANTHROPIC_VERSION),
                );
            }
        }
        Ok(headers)
    }

    fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// The redactor for this client's key (none: masks nothing), for hosts that print or
    /// record what the model sends.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    fn connect_error(&self, e: &reqwest::Error) -> ClientError {
        if e.is_timeout() {
            return ClientError::Timeout {
                provider: self.settings.provider,
                kind: TimeoutKind::Connect,
                after: self.options.connect_timeout,
            };
        }
        ClientError::Connect {
            provider: self.settings.provider,
            endpoint: self.shown_endpoint.clone(),
            detail: self.redact(&root_cause(e)),
            attempts: 1,
        }
    }

    fn idle_timeout(&self) -> ClientError {
        ClientError::Timeout {
            provider: self.settings.provider,
            kind: TimeoutKind::Idle,
            after: self.options.idle_timeout,
        }
    }

    /// One attempt, up to the first byte of a successful answer.
    async fn open(&self, body: bytes::Bytes) -> Result<Opened, ClientError> {
        let request = self
            .http
            .post(&self.endpoint)
            .headers(self.headers()?)
            .body(body);
        // A streamed answer sends its headers at once; a whole one only when done.
        let response = if self.options.stream {
            tokio::time::timeout(self.options.idle_timeout, request.send())
                .await
                .map_err(|_| self.idle_timeout())?
        } else {
            request.send().await
        }
        .map_err(|e| self.connect_error(&e))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .map(|v| safe_location(&self.redact(&String::from_utf8_lossy(v.as_bytes()))));
            return Err(ClientError::Redirect {
                provider: self.settings.provider,
                url: self.shown_endpoint.clone(),
                status: status.as_u16(),
                location,
            });
        }
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            let text = self
                .read_limited(response, 64 << 10)
                .await
                .unwrap_or_default();
            let message = crate::provider::error_message(self.settings.dialect(), &text)
                .or_else(|| {
                    let t = text.trim();
                    (!t.is_empty()).then(|| crate::provider::excerpt(t, 300))
                })
                .map(|m| self.redact(&m));
            return Err(ClientError::Status {
                provider: self.settings.provider,
                url: self.shown_endpoint.clone(),
                status: status.as_u16(),
                reason: status.canonical_reason().map(str::to_owned),
                message,
                retry_after,
                attempts: 1,
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let is_stream = content_type
            .as_deref()
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            let limit = self.options.max_response_bytes;
            let text = self.read_limited(response, limit).await?;
            let shown = content_type.map(|t| safe_location(&self.redact(&t)));
            return Ok(Opened::Whole(bytes::Bytes::from(text), shown));
        }
        let mut rest: ByteStream = Box::pin(response.bytes_stream());
        loop {
            match tokio::time::timeout(self.options.idle_timeout, rest.next()).await {
                Err(_) => return Err(self.idle_timeout()),
                Ok(None) => {
                    return Err(ClientError::Connect {
                        provider: self.settings.provider,
                        endpoint: self.shown_endpoint.clone(),
                        detail: "the connection closed before any answer arrived".into(),
                        attempts: 1,
                    });
                }
                Ok(Some(Err(e))) => return Err(self.connect_error(&e)),
                Ok(Some(Ok(first))) if first.is_empty() => continue,
                Ok(Some(Ok(first))) => return Ok(Opened::Stream { first, rest }),
            }
        }
    }

    /// The body as text, at most `limit` bytes (more is an error), each read bounded by
    /// the idle timeout.
    async fn read_limited(
        &self,
        response: reqwest::Response,
        limit: usize,
    ) -> Result<String, ClientError> {
        let mut stream = response.bytes_stream();
        let mut out = Vec::new();
        loop {
            let next = tokio::time::timeout(self.options.idle_timeout, stream.next())
                .await
                .map_err(|_| self.idle_timeout())?;
            match next {
                None => break,
                Some(Err(e)) => return Err(self.connect_error(&e)),
                Some(Ok(chunk)) => {
                    if out.len() + chunk.len() > limit {
                        return Err(ClientError::Response {
                            provider: self.settings.provider,
                            error: ResponseError::Malformed(format!(
                                "the answer is larger than {limit} bytes"
                            )),
                        });
                    }
                    out.extend_from_slice(&chunk);
                }
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn whole<F>(
        &self,
        body: &[u8],
        content_type: Option<String>,
        on_event: &mut F,
    ) -> Result<ModelTurn, ClientError>
    where
        F: FnMut(ClientEvent<'_>),
    {
        let text = String::from_utf8_lossy(body);
        let turn =
            crate::provider::parse_response(self.settings.dialect(), &text).map_err(|error| {
                // Not JSON by its own account: most likely not the API at all.
                match content_type.filter(|t| !t.to_ascii_lowercase().contains("json")) {
                    Some(content_type) => ClientError::ContentType {
                        provider: self.settings.provider,
                        url: self.shown_endpoint.clone(),
                        content_type,
                    },
                    None => ClientError::Response {
                        provider: self.settings.provider,
                        error: redact_response(error, &|t| self.redact(t)),
                    },
                }
            })?;
        if let Some(r) = &turn.reasoning {
            on_event(ClientEvent::Stream(&StreamEvent::Reasoning(r.clone())));
        }
        if !turn.text.is_empty() {
            on_event(ClientEvent::Stream(&StreamEvent::Text(turn.text.clone())));
        }
        for call in &turn.tool_calls {
            on_event(ClientEvent::Stream(&StreamEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
            }));
        }
        Ok(turn)
    }

    async fn stream<F>(
        &self,
        first: bytes::Bytes,
        mut rest: ByteStream,
        on_event: &mut F,
    ) -> Result<ModelTurn, ClientError>
    where
        F: FnMut(ClientEvent<'_>),
    {
        let redact = |t: &str| self.redact(t);
        let mut show = |piece: &StreamEvent| on_event(ClientEvent::Stream(piece));
        let mut decoder = StreamDecoder::new(
            self.settings.provider,
            self.settings.dialect(),
            self.options.max_response_bytes,
        );
        let mut done = decoder.push(&first, &redact, &mut show)?;
        while !done {
            match tokio::time::timeout(self.options.idle_timeout, rest.next()).await {
                Err(_) => return Err(self.idle_timeout()),
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(ClientError::Interrupted {
                        provider: self.settings.provider,
                        detail: self.redact(&root_cause(&e)),
                    });
                }
                Ok(Some(Ok(chunk))) => done = decoder.push(&chunk, &redact, &mut show)?,
            }
        }
        decoder.finish(&redact)
    }
}

/// A header value (`Location`, `Content-Type`) fit to quote: control and bidi characters escaped, at most 200
/// characters.
fn safe_location(location: &str) -> String {
    let escaped: String = location
        .chars()
        .flat_map(|c| {
            let plain =
                !c.is_control() && !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            let shown: Vec<char> = if plain {
                vec![c]
            } else {
                c.escape_unicode().collect()
            };
            shown
        })
        .collect();
    crate::provider::excerpt(&escaped, 200)
}

/// The innermost error's message ("Connection refused (os error 111)"), which says more
/// than reqwest's outer "error sending request for url".
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        message = e.to_string();
        current = e.source();
    }
    message
}

/// `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }
}

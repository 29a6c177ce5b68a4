//! [`ClientError`]: why a request to a model failed, naming the provider, the status and
//! the provider's own message.

use std::fmt;
use std::time::Duration;

use crate::endpoint::Provider;
use crate::provider::ResponseError;

/// Which limit a request ran into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutKind {
    /// Connecting took too long.
    Connect,
    /// Nothing arrived for too long while waiting for or reading the response.
    Idle,
    /// The whole request took too long.
    Overall,
}

impl fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutKind::Connect => "connect timeout",
            TimeoutKind::Idle => "idle timeout",
            TimeoutKind::Overall => "request timeout",
        })
    }
}

/// What is wrong with the variable that should hold the API key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyProblem {
    /// The variable is not set.
    Unset,
    /// The variable is set to nothing (or only whitespace).
    Empty,
    /// The variable's value is not valid UTF-8.
    NotUnicode,
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyProblem::Unset => "is not set",
            KeyProblem::Empty => "is set but empty",
            KeyProblem::NotUnicode => "is not valid UTF-8",
        })
    }
}

/// Why a request failed. Messages never contain the API key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The variable that should hold the key is unset, empty or not UTF-8.
    #[error("no API key for {provider}: the environment variable `{var}` {problem}")]
    MissingApiKey {
        /// The provider.
        provider: Provider,
        /// The variable's name.
        var: String,
        /// What is wrong with it.
        problem: KeyProblem,
    },
    /// The provider answered with an error status.
    #[error(
        "{provider} answered {status}{} at `{url}`{}{}",
        reason.as_deref().map(|r| format!(" {r}")).unwrap_or_default(),
        message.as_deref().map(|m| format!(": {m}")).unwrap_or_default(),
        attempts_note(*attempts)
    )]
    Status {
        /// The provider.
        provider: Provider,
        /// The URL that was requested (redacted).
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The status's reason phrase.
        reason: Option<String>,
        /// The provider's own error message.
        message: Option<String>,
        /// What `Retry-After` asked for, if anything.
        retry_after: Option<Duration>,
        /// How many requests were made.
        attempts: u32,
    },
    /// The endpoint answered with a redirect, which is never followed: the key and the
    /// conversation go only to the host `baseUrl` names.
    #[error(
        "{provider} answered {status} at `{url}` (a redirect{}), which is not followed",
        location.as_deref().map(|l| format!(" to `{l}`")).unwrap_or_default()
    )]
    Redirect {
        /// The provider.
        provider: Provider,
        /// The URL that was requested (redacted).
        url: String,
        /// The HTTP status code (3xx).
        status: u16,
        /// The `Location` header, escaped and shortened, key masked.
        location: Option<String>,
    },
    /// A successful answer that is neither JSON nor an event stream and cannot be read
    /// as an answer (a web page at a wrong `baseUrl`, typically).
    #[error(
        "{provider} answered at `{url}` with `{content_type}`, not the API's JSON or event stream"
    )]
    ContentType {
        /// The provider.
        provider: Provider,
        /// The URL that was requested (redacted).
        url: String,
        /// The `Content-Type` the server sent, escaped and shortened.
        content_type: String,
    },
    /// The provider could not be reached, or the connection broke before any answer.
    #[error("cannot reach {provider} at {endpoint}: {detail}{}", attempts_note(*attempts))]
    Connect {
        /// The provider.
        provider: Provider,
        /// The URL.
        endpoint: String,
        /// What went wrong.
        detail: String,
        /// How many requests were made.
        attempts: u32,
    },
    /// A time limit ran out.
    #[error("{provider} did not answer in time: {kind} of {} s", after.as_secs_f64())]
    Timeout {
        /// The provider.
        provider: Provider,
        /// Which limit.
        kind: TimeoutKind,
        /// The limit.
        after: Duration,
    },
    /// The connection broke while the answer was streaming (never retried: output had
    /// started).
    #[error("the answer from {provider} broke off: {detail}")]
    Interrupted {
        /// The provider.
        provider: Provider,
        /// What went wrong.
        detail: String,
    },
    /// The answer arrived but cannot be used (malformed, incomplete, or an error inside
    /// a successful response).
    #[error("{provider} sent an answer that cannot be used: {error}")]
    Response {
        /// The provider.
        provider: Provider,
        /// What is wrong with it.
        error: ResponseError,
    },
    /// The request could not be built (e.g. a bad base URL).
    #[error("cannot send a request to {provider}: {detail}")]
    Request {
        /// The provider.
        provider: Provider,
        /// What went wrong.
        detail: String,
    },
}

/// The base URL the user probably meant, when the path of the requested `url` looks off:
/// an OpenAI-style endpoint (`…/chat/completions`) whose root has no version segment
/// (`/v1`, `/v4`, `/beta`, …) on a host other than the provider's own (DeepSeek's root
/// has none), or an Anthropic endpoint with `/v1` twice.
fn root_hint(provider: Provider, url: &str) -> Option<String> {
    if provider == Provider::Anthropic {
        let root = url.strip_suffix("/v1/messages")?;
        // The client adds `/v1/messages`: a root ending in `/v1` asks for it twice.
        return root.strip_suffix("/v1").map(str::to_owned);
    }
    let root = url.strip_suffix("/chat/completions")?;
    if crate::provider::is_default_host(provider, root) {
        return None;
    }
    let after_scheme = root.split_once("://").map_or(root, |(_, rest)| rest);
    let path = after_scheme.split_once('/').map_or("", |(_, p)| p);
    let versioned = path.split('/').any(|segment| {
        let s = segment.to_ascii_lowercase();
        s == "beta"
            || s.strip_prefix('v')
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
    });
    (!versioned).then(|| format!("{root}/v1"))
}

fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

impl ClientError {
    /// Worth another try: 408, 409, 425, 429 and 5xx statuses, and connection failures
    /// (never anything after the answer began to stream).
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Status { status, .. } => {
                matches!(status, 408 | 409 | 425 | 429) || (500..=599).contains(status)
            }
            ClientError::Connect { .. } => true,
            ClientError::Timeout { kind, .. } => *kind == TimeoutKind::Connect,
            _ => false,
        }
    }

    /// How long the provider asked us to wait before retrying.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// What the user can do about it, when there is something to say.
    pub fn help(&self) -> Option<String> {
        match self {
            ClientError::MissingApiKey { var, .. } => Some(format!(
                "export {var}=<your key> (the preset's `model.apiKeyEnv` names the variable; the key itself never goes in a preset)"
            )),
            ClientError::Status { status: 401 | 403, .. } => {
                Some("check that the key in the preset's `apiKeyEnv` variable is valid for this provider".into())
            }
            ClientError::Status {
                status: 404,
                provider,
                url,
                ..
            } => Some(match root_hint(*provider, url) {
                Some(root) => format!(
                    "check that `baseUrl` ends where the API root is, e.g. `{root}` (the request went to `{url}`), and `model.name`"
                ),
                None => "check `model.baseUrl` (the API root, e.g. `https://api.openai.com/v1`) and `model.name`".into(),
            }),
            ClientError::Status { status: 429, .. } => {
                Some("rate limited: wait a moment, or raise `--max-retries`".into())
            }
            ClientError::Redirect { .. } => Some(
                "set `model.baseUrl` (or `--base-url`) to the URL the API really answers at; redirects are never followed, so the key and the conversation reach only the host you name".into(),
            ),
            ClientError::ContentType { provider, url, .. } => Some(match root_hint(*provider, url) {
                Some(root) => format!(
                    "check that `baseUrl` ends where the API root is, e.g. `{root}`"
                ),
                None => "check `model.baseUrl`: it should be the API root, where the server answers with JSON".into(),
            }),
            ClientError::Connect { .. } => Some(
                "check the network and `model.baseUrl`; for a local server, that it is running".into(),
            ),
            _ => None,
        }
    }

    pub(crate) fn set_attempts(&mut self, n: u32) {
        match self {
            ClientError::Status { attempts, .. } | ClientError::Connect { attempts, .. } => {
                *attempts = n;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_hint_only_when_the_path_looks_off() {
        let hint = |p, url| root_hint(p, url);
        assert_eq!(
            hint(
                Provider::OpenaiCompatible,
                "http://127.0.0.1:8080/chat/completions"
            ),
            Some("http://127.0.0.1:8080/v1".into())
        );
        assert_eq!(
            hint(Provider::OpenaiCompatible, "http://h/api/chat/completions"),
            Some("http://h/api/v1".into())
        );
        for fine in [
            "http://127.0.0.1:8080/v1/chat/completions",
            "https://open.bigmodel.cn/api/paas/v4/chat/completions",
            "https://h/beta/chat/completions",
        ] {
            assert_eq!(hint(Provider::OpenaiCompatible, fine), None, "{fine}");
        }
        // DeepSeek's own root has no version segment.
        assert_eq!(
            hint(
                Provider::Deepseek,
                "https://api.deepseek.com/chat/completions"
            ),
            None
        );
        assert_eq!(
            hint(Provider::Anthropic, "http://h/v1/v1/messages"),
            Some("http://h".into())
        );
        assert_eq!(hint(Provider::Anthropic, "http://h/v1/messages"), None);
    }
}

//! [`ModelSettings`]: which provider, model and endpoint a request goes to, with each
//! provider's defaults filled in, and the wire [`Dialect`] it speaks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Provider;
use crate::tools::SchemaDialect;

/// The two wire formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// OpenAI Chat Completions (`deepseek`, `openai`, `openai-compatible`).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// Where a request goes and how it is shaped. Build it with [`ModelSettings::new`] (the
/// provider's defaults) or `ModelSettings::from_spec` (a preset's `model` block, in
/// `preset::spec`), then [`Overrides::apply`](super::Overrides::apply).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// The provider.
    pub provider: Provider,
    /// The model name as the provider spells it.
    pub name: String,
    /// The API root; the client appends the endpoint (`/chat/completions`,
    /// `/v1/messages`), as the official SDKs do.
    pub base_url: String,
    /// The NAME of the environment variable holding the API key; `None` sends no key
    /// (local OpenAI-compatible servers).
    pub api_key_env: Option<String>,
    /// The output token limit sent with each request (`None`: the provider's default;
    /// Anthropic requires one, so it always has a value there).
    pub max_tokens: Option<u32>,
    /// Send tools in strict mode (`strict: true`, with the strict schema projection).
    pub strict_tools: bool,
    /// Sampling and reasoning parameters sent with each request (`model.temperature`, …).
    #[serde(skip_serializing_if = "ModelParams::is_empty")]
    pub params: ModelParams,
    /// The output contract's schema (`output.schema`, normalised), sent in the dialect's
    /// structured-output form (`provider::request_body`); `None`: free text.
    #[serde(skip)]
    pub output_schema: Option<std::sync::Arc<serde_json::Value>>,
    /// Where the provider cannot enforce the output schema (DeepSeek's JSON mode), the
    /// instruction that carries it, in the preset's language (`agent.output.instruction`,
    /// the schema filled in); `None`: the English text.
    #[serde(skip)]
    pub output_instruction: Option<std::sync::Arc<str>>,
}

/// The sampling and reasoning parameters of a preset's `model` block, as validated: each
/// dialect sends those it has (`provider::request_body`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelParams {
    /// `temperature`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// `top_p`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// `seed` (OpenAI dialect).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// `stop` / `stop_sequences`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// `reasoning_effort` / `output_config.effort`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Anthropic's `thinking.budget_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
}

// Validation refuses non-finite numbers, so equality is total.
impl Eq for ModelParams {}

impl ModelParams {
    /// Nothing set: every request gets the provider's defaults.
    pub fn is_empty(&self) -> bool {
        *self == ModelParams::default()
    }
}

/// `model.reasoningEffort`: how much a reasoning model thinks before it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// No reasoning (OpenAI only).
    None,
    /// The least reasoning (OpenAI only).
    Minimal,
    /// Little reasoning.
    Low,
    /// The default of most reasoning models.
    Medium,
    /// More reasoning.
    High,
    /// Even more reasoning.
    Xhigh,
    /// The most reasoning the model offers.
    Max,
}

impl ReasoningEffort {
    /// The value as written in a preset and sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::None => "none",
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::Xhigh => "xhigh",
            ReasoningEffort::Max => "max",
        }
    }
}

/// The output token limit sent to Anthropic when the preset sets none (the field is
/// required there).
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 8192;

/// The `anthropic-version` header sent with every Anthropic request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

impl ModelSettings {
    /// `provider`'s defaults for model `name`: base URL, key variable, token limit and
    /// strict mode.
    pub fn new(provider: Provider, name: impl Into<String>) -> Self {
        let mut settings = ModelSettings {
            provider,
            name: name.into(),
            base_url: default_base_url(provider).unwrap_or_default().to_owned(),
            api_key_env: default_api_key_env(provider).map(str::to_owned),
            max_tokens: (provider == Provider::Anthropic).then_some(ANTHROPIC_DEFAULT_MAX_TOKENS),
            strict_tools: false,
            params: ModelParams::default(),
            output_schema: None,
            output_instruction: None,
        };
        settings.strict_tools = settings.default_strict_tools();
        settings
    }

    /// Another API root; strict mode follows it (DeepSeek's needs its beta URL) unless
    /// set explicitly afterwards.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self.strict_tools = self.default_strict_tools();
        self
    }

    /// Another model (provider and endpoint unchanged).
    pub fn with_model(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Ask for answers that satisfy `schema` (a preset's output contract), or free text.
    pub fn with_output_schema(mut self, schema: Option<std::sync::Arc<serde_json::Value>>) -> Self {
        self.output_schema = schema;
        self
    }

    /// Carry the output schema to a provider that cannot enforce it in `instruction`
    /// (the preset's `agent.output.instruction`, rendered).
    pub fn with_output_instruction(mut self, instruction: Option<std::sync::Arc<str>>) -> Self {
        self.output_instruction = instruction;
        self
    }

    /// Another output token limit.
    pub fn with_max_tokens(mut self, max: u32) -> Self {
        self.max_tokens = Some(max);
        self
    }

    /// Turn strict tool schemas on or off.
    pub fn with_strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// Strict tools where the provider documents support for them at this endpoint:
    /// OpenAI always; DeepSeek only on its beta API root (`…/beta`); never by default for
    /// Anthropic and unknown OpenAI-compatible servers.
    fn default_strict_tools(&self) -> bool {
        match self.provider {
            Provider::Openai => true,
            Provider::Deepseek => is_deepseek_beta(&self.base_url),
            Provider::Anthropic | Provider::OpenaiCompatible => false,
        }
    }

    /// The wire format.
    pub fn dialect(&self) -> Dialect {
        match self.provider {
            Provider::Anthropic => Dialect::Anthropic,
            Provider::Deepseek | Provider::Openai | Provider::OpenaiCompatible => Dialect::OpenAi,
        }
    }

    /// Which rendering of the tool schemas this endpoint gets.
    pub fn schema_dialect(&self) -> SchemaDialect {
        if self.strict_tools {
            SchemaDialect::Strict
        } else {
            SchemaDialect::Portable
        }
    }

    /// The full URL requests are sent to.
    pub fn endpoint(&self) -> String {
        let root = self.base_url.trim_end_matches('/');
        match self.dialect() {
            Dialect::OpenAi => format!("{root}/chat/completions"),
            Dialect::Anthropic => format!("{root}/v1/messages"),
        }
    }
}

/// How a request to a base URL travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `https://`: encrypted, the server authenticated.
    Tls,
    /// Plain `http://` to this machine's loopback (`127.0.0.0/8`, `::1`, `localhost`):
    /// nothing leaves the machine.
    Loopback,
    /// Plain `http://` to another host: the key and the conversation cross the network
    /// in clear text.
    Cleartext,
}

/// Why a base URL is refused before any request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Not an `http://` or `https://` URL with a host.
    #[error("`{url}` is not an http(s) URL with a host")]
    NotHttp {
        /// The URL as given.
        url: String,
    },
    /// Plain `http://` to a host that is not this machine, without an opt-in.
    #[error(
        "`{url}` is plain http:// to `{host}`, which is not this machine: the API key and the conversation would cross the network unencrypted"
    )]
    Insecure {
        /// The URL as given.
        url: String,
        /// Its host.
        host: String,
    },
}

impl EndpointError {
    /// How to fix it.
    pub fn help(&self) -> &'static str {
        match self {
            EndpointError::NotHttp { .. } => "write it like `https://api.deepseek.com`",
            EndpointError::Insecure { .. } => {
                "use `https://`; or, if this network is yours and trusted, set `allowInsecure: true` in the preset's `model` block (or pass `run --allow-insecure`)"
            }
        }
    }
}

/// How requests to the API root `url` travel, and whether they may: a plain `http://`
/// URL for a host other than loopback is refused unless `allow_insecure` (the preset's
/// `model.allowInsecure`, `run --allow-insecure`). `validate` and `run` both decide with
/// this function.
///
/// The host is read as the URL standard reads it (the authority ends at `/`, `\`, `?`
/// or `#`; user information before the last `@` is skipped); only a literal loopback
/// address or `localhost` counts as loopback, so any spelling this reading does not
/// recognise is treated as another host (refused, never waved through).
pub fn check_base_url(url: &str, allow_insecure: bool) -> Result<Transport, EndpointError> {
    let not_http = || EndpointError::NotHttp {
        url: url.to_owned(),
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(not_http());
    }
    let (tls, rest) = if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
        (true, rest)
    } else if let Some(rest) = strip_prefix_ignore_case(url, "http://") {
        (false, rest)
    } else {
        return Err(not_http());
    };
    let authority = rest.split(['/', '\\', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((inner, _)) => inner,
            None => return Err(not_http()),
        }
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    if host.is_empty() {
        return Err(not_http());
    }
    if tls {
        return Ok(Transport::Tls);
    }
    if is_loopback_host(host) {
        return Ok(Transport::Loopback);
    }
    if allow_insecure {
        return Ok(Transport::Cleartext);
    }
    Err(EndpointError::Insecure {
        url: url.to_owned(),
        host: host.to_owned(),
    })
}

/// `localhost`, an IPv4 address in `127.0.0.0/8` written as four decimal numbers, or
/// `::1`.
fn is_loopback_host(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Ok(v4) = host.parse::<std::net::Ipv4Addr>() {
        return v4.is_loopback();
    }
    host.parse::<std::net::Ipv6Addr>()
        .is_ok_and(|v6| v6.is_loopback())
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Is `url` on `provider`'s default host (`https://`, the host of
/// [`default_base_url`], no other port)? `false` for `openai-compatible`, which has none.
pub fn is_default_host(provider: Provider, url: &str) -> bool {
    let Some(default) = default_base_url(provider) else {
        return false;
    };
    let authority = |u: &str| -> Option<String> {
        let rest = strip_prefix_ignore_case(u, "https://")?;
        let authority = rest.split(['/', '\\', '?', '#']).next()?;
        Some(authority.to_ascii_lowercase())
    };
    !url.chars().any(|c| c.is_whitespace() || c.is_control())
        && authority(url).is_some_and(|a| Some(a) == authority(default))
}

/// Is `url` DeepSeek's beta API root, the only one where its strict mode works?
pub fn is_deepseek_beta(url: &str) -> bool {
    url.trim_end_matches('/').ends_with("/beta")
}

/// The strict rule: may `strictTools: true` be asked of `provider` at the API root
/// `base_url` (`None`: the provider's default root)? DeepSeek supports strict mode only at
/// its beta root (`…/beta`); every other provider accepts the request (OpenAI always
/// uses it, the others ignore or support it). `validate` (a preset's `model` block) and
/// [`Overrides::apply`](super::Overrides::apply) (`--base-url`) both decide with this
/// function.
pub fn strict_tools_allowed(provider: Provider, base_url: Option<&str>) -> bool {
    provider != Provider::Deepseek || base_url.is_some_and(is_deepseek_beta)
}

/// The API root a provider uses when the preset sets no `baseUrl`.
pub fn default_base_url(provider: Provider) -> Option<&'static str> {
    match provider {
        Provider::Deepseek => Some("https://api.deepseek.com"),
        Provider::Openai => Some("https://api.openai.com/v1"),
        Provider::Anthropic => Some("https://api.anthropic.com"),
        Provider::OpenaiCompatible => None,
    }
}

/// The environment variable a provider's key is read from when the preset names none.
pub fn default_api_key_env(provider: Provider) -> Option<&'static str> {
    match provider {
        Provider::Deepseek => Some("DEEPSEEK_API_KEY"),
        Provider::Openai => Some("OPENAI_API_KEY"),
        Provider::Anthropic => Some("ANTHROPIC_API_KEY"),
        Provider::OpenaiCompatible => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_sdk_convention() {
        let cases = [
            (
                ModelSettings::new(Provider::Deepseek, "m"),
                "https://api.deepseek.com/chat/completions",
            ),
            (
                ModelSettings::new(Provider::Openai, "m"),
                "https://api.openai.com/v1/chat/completions",
            ),
            (
                ModelSettings::new(Provider::Anthropic, "m"),
                "https://api.anthropic.com/v1/messages",
            ),
            (
                ModelSettings::new(Provider::OpenaiCompatible, "m")
                    .with_base_url("http://127.0.0.1:8080/v1/"),
                "http://127.0.0.1:8080/v1/chat/completions",
            ),
        ];
        for (settings, url) in cases {
            assert_eq!(settings.endpoint(), url);
        }
    }

    #[test]
    fn plain_http_is_refused_off_the_loopback() {
        for url in [
            "https://api.example.com/v1",
            "HTTPS://api.example.com",
            "https://10.0.0.1",
        ] {
            assert_eq!(check_base_url(url, false), Ok(Transport::Tls), "{url}");
        }
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://127.1.2.3",
            "http://localhost:11434",
            "http://LOCALHOST/v1",
            "http://[::1]:8080/v1",
            "http://user:pw@127.0.0.1/",
            "http://127.0.0.1\\@evil.example/",
        ] {
            assert_eq!(check_base_url(url, false), Ok(Transport::Loopback), "{url}");
        }
        for (url, host) in [
            ("http://api.example.com/v1", "api.example.com"),
            ("http://10.0.0.1:8080", "10.0.0.1"),
            ("http://127.0.0.1@evil.example/", "evil.example"),
            ("http://127.0.0.1.evil.example/", "127.0.0.1.evil.example"),
            ("http://localhost.evil.example/", "localhost.evil.example"),
            ("http://0x7f.1/", "0x7f.1"),
            ("http://2130706433/", "2130706433"),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
        ] {
            assert_eq!(
                check_base_url(url, false),
                Err(EndpointError::Insecure {
                    url: url.to_owned(),
                    host: host.to_owned()
                }),
                "{url}"
            );
            assert_eq!(check_base_url(url, true), Ok(Transport::Cleartext), "{url}");
        }
        for url in [
            "ftp://x",
            "http://",
            "http:///path",
            "http://a b",
            "http://[::1",
        ] {
            assert!(
                matches!(
                    check_base_url(url, true),
                    Err(EndpointError::NotHttp { .. })
                ),
                "{url}"
            );
        }
    }

    #[test]
    fn default_hosts() {
        assert!(is_default_host(
            Provider::Openai,
            "https://api.openai.com/v1"
        ));
        assert!(is_default_host(
            Provider::Deepseek,
            "https://api.deepseek.com/beta"
        ));
        assert!(is_default_host(
            Provider::Anthropic,
            "https://API.anthropic.com/"
        ));
        assert!(!is_default_host(
            Provider::Openai,
            "http://api.openai.com/v1"
        ));
        assert!(!is_default_host(
            Provider::Openai,
            "https://api.openai.com:8443/v1"
        ));
        assert!(!is_default_host(
            Provider::Openai,
            "https://api.openai.com.evil.example/v1"
        ));
        assert!(!is_default_host(
            Provider::Openai,
            "https://api.deepseek.com"
        ));
        assert!(!is_default_host(
            Provider::OpenaiCompatible,
            "https://api.openai.com/v1"
        ));
    }

    #[test]
    fn strict_only_where_supported() {
        assert!(ModelSettings::new(Provider::Openai, "m").strict_tools);
        assert!(!ModelSettings::new(Provider::Deepseek, "m").strict_tools);
        assert!(
            ModelSettings::new(Provider::Deepseek, "m")
                .with_base_url("https://api.deepseek.com/beta")
                .strict_tools
        );
        assert!(!ModelSettings::new(Provider::Anthropic, "m").strict_tools);
        assert_eq!(
            ModelSettings::new(Provider::Anthropic, "m").max_tokens,
            Some(ANTHROPIC_DEFAULT_MAX_TOKENS)
        );
        assert_eq!(
            ModelSettings::new(Provider::OpenaiCompatible, "m").api_key_env,
            None
        );
    }
}

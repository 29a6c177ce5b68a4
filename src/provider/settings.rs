//! [`ModelSettings`]: which provider, model and endpoint a request goes to, with each
//! provider's defaults filled in, and the wire [`Dialect`] it speaks.

use serde::Serialize;

use crate::preset::spec::{ModelSpec, Provider};
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
/// provider's defaults) or [`ModelSettings::from_spec`] (a preset's `model` block).
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
        };
        settings.strict_tools = settings.default_strict_tools();
        settings
    }

    /// The settings a preset's `model` block gives (missing fields take the provider's
    /// defaults).
    pub fn from_spec(spec: &ModelSpec) -> Self {
        let mut settings = ModelSettings::new(spec.provider.value, spec.name.value.clone());
        if let Some(url) = &spec.base_url {
            settings = settings.with_base_url(url.value.clone());
        }
        if let Some(env) = &spec.api_key_env {
            settings.api_key_env = Some(env.value.clone());
        }
        if let Some(max) = &spec.max_tokens {
            settings.max_tokens = Some(max.value);
        }
        if let Some(strict) = &spec.strict_tools {
            settings.strict_tools = strict.value;
        }
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

/// Is `url` DeepSeek's beta API root, the only one where its strict mode works?
pub fn is_deepseek_beta(url: &str) -> bool {
    url.trim_end_matches('/').ends_with("/beta")
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

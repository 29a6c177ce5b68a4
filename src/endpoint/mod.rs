//! One home for the model endpoint: which [`Provider`], model, API root and key variable
//! a request goes to ([`ModelSettings`]), the wire [`Dialect`] it speaks, the transport
//! rule for base URLs ([`check_base_url`], `allowInsecure`), the strict-tools rule
//! ([`strict_tools_allowed`]) and the command-line [`Overrides`] (`--provider`,
//! `--model`, `--base-url`, `--max-tokens`).
//!
//! A leaf below both `preset` (which reads a `model` block into a
//! [`ModelSettings`] with `ModelSettings::from_spec`) and `provider` (which shapes request
//! bodies for it): it imports neither, so data flows one way.

mod provider;
mod settings;

pub use provider::{Provider, UnknownProvider};
pub use settings::{
    ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, Dialect, EndpointError, ModelParams,
    ModelSettings, ReasoningEffort, Transport, check_base_url, default_api_key_env,
    default_base_url, is_deepseek_beta, is_default_host, strict_tools_allowed,
};

/// What a preset's `model` block says about the endpoint: its settings (provider
/// defaults filled in) and whether it set `strictTools` explicitly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresetModel {
    /// `ModelSettings::from_spec` of the block.
    pub settings: ModelSettings,
    /// The block's explicit `strictTools`, if any.
    pub strict_tools: Option<bool>,
}

/// Command-line (or host) overrides of the preset's endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Another provider (`--provider`): starts from its defaults (base URL, key
    /// variable); the preset's model name is kept unless [`Overrides::model`] is given.
    pub provider: Option<Provider>,
    /// Another model name (`--model`).
    pub model: Option<String>,
    /// Another API root (`--base-url`); strict mode follows it, except that the
    /// preset's explicit `strictTools` still holds for its own provider.
    pub base_url: Option<String>,
    /// Another output token limit (`--max-tokens`).
    pub max_tokens: Option<u32>,
}

/// Why the overrides do not give an endpoint.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// `--provider` without `--model` for a preset with no `model` block.
    #[error("`--provider {provider}` needs `--model NAME`: the preset has no `model` block")]
    ProviderNeedsModel {
        /// The provider given.
        provider: Provider,
    },
    /// A base URL that is not `http://` or `https://`.
    #[error("`--base-url` must be an http(s) URL, not `{url}`")]
    BaseUrlNotHttp {
        /// The URL given.
        url: String,
    },
    /// The preset's explicit `strictTools: true` at a DeepSeek root other than the beta.
    #[error(
        "the preset sets `strictTools: true`, which DeepSeek supports only at its beta root, not at `{url}`"
    )]
    StrictToolsRefused {
        /// The URL given.
        url: String,
    },
    /// A provider without a default root and no base URL anywhere.
    #[error("provider `{provider}` needs a base URL")]
    NoBaseUrl {
        /// The provider.
        provider: Provider,
    },
}

impl OverrideError {
    /// How to fix it.
    pub fn help(&self) -> &'static str {
        match self {
            OverrideError::ProviderNeedsModel { .. } => {
                "name the model as the provider spells it, e.g. `--model gpt-5-mini`"
            }
            OverrideError::BaseUrlNotHttp { .. } => "e.g. `--base-url http://127.0.0.1:8080/v1`",
            OverrideError::StrictToolsRefused { .. } => {
                "pass the beta root (`--base-url https://api.deepseek.com/beta`), or set `strictTools: false`"
            }
            OverrideError::NoBaseUrl { .. } => {
                "set `model.baseUrl` in the preset or pass `--base-url URL` (the server's API root, e.g. `http://127.0.0.1:8080/v1`)"
            }
        }
    }
}

impl Overrides {
    /// The endpoint a request goes to: the preset's `model` block with these overrides
    /// applied. `Ok(None)` when neither names a provider and a model.
    pub fn apply(
        &self,
        preset: Option<PresetModel>,
    ) -> Result<Option<ModelSettings>, OverrideError> {
        let preset_strict = |provider: Provider| {
            preset
                .as_ref()
                .filter(|p| p.settings.provider == provider)
                .and_then(|p| p.strict_tools)
        };
        let mut settings = match (self.provider, preset.as_ref()) {
            (Some(p), Some(s)) if p == s.settings.provider => s.settings.clone(),
            (Some(p), Some(s)) => ModelSettings::new(p, s.settings.name.clone()),
            (Some(p), None) => match &self.model {
                Some(name) => ModelSettings::new(p, name.clone()),
                None => return Err(OverrideError::ProviderNeedsModel { provider: p }),
            },
            (None, Some(s)) => s.settings.clone(),
            (None, None) => return Ok(None),
        };
        if let Some(name) = &self.model {
            settings = settings.with_model(name.clone());
        }
        if let Some(url) = &self.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(OverrideError::BaseUrlNotHttp { url: url.clone() });
            }
            settings = settings.with_base_url(url.clone());
            // A new root resets strict mode to the provider's default there; the preset's
            // explicit `strictTools` still holds for its own provider.
            if let Some(strict) = preset_strict(settings.provider) {
                if strict && !strict_tools_allowed(settings.provider, Some(&settings.base_url)) {
                    return Err(OverrideError::StrictToolsRefused { url: url.clone() });
                }
                settings = settings.with_strict_tools(strict);
            }
        }
        if let Some(max) = self.max_tokens {
            settings = settings.with_max_tokens(max);
        }
        if settings.base_url.is_empty() {
            return Err(OverrideError::NoBaseUrl {
                provider: settings.provider,
            });
        }
        Ok(Some(settings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(provider: Provider, url: Option<&str>, strict: Option<bool>) -> PresetModel {
        let mut settings = ModelSettings::new(provider, "m");
        if let Some(url) = url {
            settings = settings.with_base_url(url);
        }
        if let Some(strict) = strict {
            settings = settings.with_strict_tools(strict);
        }
        PresetModel {
            settings,
            strict_tools: strict,
        }
    }

    #[test]
    fn the_strict_rule() {
        assert!(!strict_tools_allowed(Provider::Deepseek, None));
        assert!(!strict_tools_allowed(
            Provider::Deepseek,
            Some("https://api.deepseek.com")
        ));
        assert!(strict_tools_allowed(
            Provider::Deepseek,
            Some("https://api.deepseek.com/beta/")
        ));
        for p in [
            Provider::Openai,
            Provider::Anthropic,
            Provider::OpenaiCompatible,
        ] {
            assert!(strict_tools_allowed(p, None), "{p}");
        }
    }

    #[test]
    fn overrides_apply_in_order() {
        let none = Overrides::default();
        assert_eq!(none.apply(None), Ok(None));
        let openai = preset(Provider::Openai, None, Some(false));
        assert_eq!(
            none.apply(Some(openai.clone())),
            Ok(Some(openai.settings.clone()))
        );
        let other = Overrides {
            provider: Some(Provider::Anthropic),
            ..Overrides::default()
        };
        let s = other.apply(Some(openai.clone())).unwrap().unwrap();
        assert_eq!(s, ModelSettings::new(Provider::Anthropic, "m"));
        assert_eq!(
            other.apply(None),
            Err(OverrideError::ProviderNeedsModel {
                provider: Provider::Anthropic
            })
        );
        let url = Overrides {
            base_url: Some("127.0.0.1:9".into()),
            ..Overrides::default()
        };
        assert!(matches!(
            url.apply(Some(openai.clone())),
            Err(OverrideError::BaseUrlNotHttp { .. })
        ));
        let compatible = Overrides {
            provider: Some(Provider::OpenaiCompatible),
            model: Some("x".into()),
            max_tokens: Some(7),
            ..Overrides::default()
        };
        assert_eq!(
            compatible.apply(None),
            Err(OverrideError::NoBaseUrl {
                provider: Provider::OpenaiCompatible
            })
        );
        let beta = preset(
            Provider::Deepseek,
            Some("https://api.deepseek.com/beta"),
            Some(true),
        );
        let away = Overrides {
            base_url: Some("https://api.deepseek.com".into()),
            max_tokens: Some(7),
            ..Overrides::default()
        };
        assert!(matches!(
            away.apply(Some(beta.clone())),
            Err(OverrideError::StrictToolsRefused { .. })
        ));
        let local = Overrides {
            base_url: Some("http://127.0.0.1:9/beta".into()),
            max_tokens: Some(7),
            ..Overrides::default()
        };
        let s = local.apply(Some(beta)).unwrap().unwrap();
        assert!(s.strict_tools);
        assert_eq!(s.max_tokens, Some(7));
    }
}

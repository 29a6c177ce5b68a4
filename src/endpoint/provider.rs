//! [`Provider`]: which wire dialect and endpoint family a model speaks, as preset files
//! and `--provider` spell it.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::suggest::help_did_you_mean;

/// Which wire dialect and endpoint a model speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// DeepSeek (OpenAI-style wire format).
    Deepseek,
    /// OpenAI.
    Openai,
    /// Anthropic.
    Anthropic,
    /// Any OpenAI-compatible endpoint; needs `baseUrl`.
    OpenaiCompatible,
}

impl Provider {
    /// Every provider, in declaration order.
    pub const ALL: &'static [Provider] = &[
        Provider::Deepseek,
        Provider::Openai,
        Provider::Anthropic,
        Provider::OpenaiCompatible,
    ];

    /// The spelling used in preset files: `deepseek`, `openai`, `anthropic`,
    /// `openai-compatible`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Deepseek => "deepseek",
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
            Provider::OpenaiCompatible => "openai-compatible",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider name this build does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{name}`")]
pub struct UnknownProvider {
    /// The name as given.
    pub name: String,
}

impl UnknownProvider {
    /// "did you mean", or the list of providers.
    pub fn help(&self) -> String {
        let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        help_did_you_mean(&self.name, names.iter().copied())
            .unwrap_or_else(|| format!("providers: {}", names.join(", ")))
    }
}

impl std::str::FromStr for Provider {
    type Err = UnknownProvider;

    /// A provider name as preset files spell it.
    fn from_str(name: &str) -> Result<Self, UnknownProvider> {
        Provider::ALL
            .iter()
            .find(|p| p.as_str() == name)
            .copied()
            .ok_or_else(|| UnknownProvider {
                name: name.to_owned(),
            })
    }
}

//! Token counts with a real BPE tokenizer: tiktoken's `o200k_base` (the encoding of
//! OpenAI's GPT-4o family), through `tiktoken-rs`.
//!
//! Providers tokenize differently (DeepSeek and Anthropic use their own vocabularies), so
//! a count here is a close, stable measure — the same text always gives the same number
//! on every machine — rather than any one provider's bill. Budgets
//! (`budget: {maxSystemTokens, maxToolTokens}`) and `render` use it.
//!
//! Loading the encoding (about 200,000 merge ranks) takes tens of milliseconds, so it
//! happens once per process, on the first count: validating presets without a `budget`
//! never pays for it.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::request::Fingerprint;
use crate::tools::WireTool;

/// The name of the encoding every count uses.
pub const ENCODING: &str = "o200k_base";

/// The tokenizer could not be loaded (its embedded data is corrupt: a build problem).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {ENCODING} tokenizer could not be loaded: {0}")]
pub struct TokenizerError(String);

fn encoding() -> Result<&'static CoreBPE, TokenizerError> {
    static BPE: OnceLock<Result<CoreBPE, TokenizerError>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| TokenizerError(e.to_string())))
        .as_ref()
        .map_err(Clone::clone)
}

/// How many tokens `text` is (special-token spellings such as `<|endoftext|>` count as
/// ordinary text, as providers treat them in prompts).
pub fn count(text: &str) -> Result<usize, TokenizerError> {
    Ok(encoding()?.encode_ordinary(text).len())
}

/// How many tokens the tool definitions are, counted over the JSON of their
/// `{name, description, parameters}` as the prefix fingerprint hashes them (providers
/// wrap tools in their own envelopes, so their count differs a little).
pub fn count_tools(tools: &[WireTool]) -> Result<usize, TokenizerError> {
    if tools.is_empty() {
        return Ok(0);
    }
    count(&Fingerprint::tools_json(tools))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_o200k_base() {
        assert_eq!(count("").ok(), Some(0));
        assert_eq!(count("hello world").ok(), Some(2));
        // Special-token spellings are text.
        assert!(count("<|endoftext|>").is_ok_and(|n| n > 1));
        assert_eq!(count_tools(&[]).ok(), Some(0));
    }
}

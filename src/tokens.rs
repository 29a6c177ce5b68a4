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

use crate::tools::{WireTool, wire_json};

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
    count(&wire_json(tools))
}

/// The tokens of `text` split between consecutive parts: `ends` holds each part's end
/// (a byte offset; the last is `text.len()`), and a token counts for the part its first
/// byte lies in. The counts add up to [`count`]`(text)` exactly, so a breakdown (per
/// section, per tool) sums to the total of the whole.
pub fn count_parts(text: &str, ends: &[usize]) -> Result<Vec<usize>, TokenizerError> {
    let bpe = encoding()?;
    let mut counts = vec![0; ends.len()];
    let mut offset = 0;
    let mut part = 0;
    for token in bpe.encode_ordinary(text) {
        while part + 1 < ends.len() && offset >= ends[part] {
            part += 1;
        }
        if let Some(n) = counts.get_mut(part) {
            *n += 1;
        }
        let bytes = bpe
            .decode_bytes(&[token])
            .map_err(|e| TokenizerError(e.to_string()))?;
        offset += bytes.len();
    }
    Ok(counts)
}

/// Each tool's share of [`count_tools`]: the tools' JSON split at the tools (the opening
/// bracket counts for the first, each separating comma for the tool after it, the
/// closing bracket for the last).
pub fn count_each_tool(tools: &[WireTool]) -> Result<Vec<usize>, TokenizerError> {
    if tools.is_empty() {
        return Ok(Vec::new());
    }
    let json = wire_json(tools);
    let mut ends = Vec::with_capacity(tools.len());
    // `[` + each tool's JSON, joined with `,`, + `]`: as serde_json writes a list.
    let mut end = 1;
    for (i, tool) in tools.iter().enumerate() {
        end += wire_json(std::slice::from_ref(tool)).len() - 2;
        if i + 1 < tools.len() {
            ends.push(end);
            end += 1;
        }
    }
    ends.push(json.len());
    count_parts(&json, &ends)
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

    #[test]
    fn parts_add_up_to_the_whole() {
        let text = "You are a coding agent.\n\nCite file and line for every finding.";
        let first = text.find("\n\n").unwrap_or_default();
        let parts = count_parts(text, &[first, text.len()]).unwrap();
        assert_eq!(parts.iter().sum::<usize>(), count(text).unwrap());
        assert!(parts.iter().all(|n| *n > 0), "{parts:?}");
        assert_eq!(count_parts("", &[0]).unwrap(), [0]);
        let registry =
            crate::tools::ToolRegistry::unrestricted(&crate::tools::ToolCatalog::builtin());
        let tools = registry.schemas();
        let each = count_each_tool(&tools).unwrap();
        assert_eq!(each.len(), tools.len());
        assert_eq!(each.iter().sum::<usize>(), count_tools(&tools).unwrap());
        // A tool's share is close to its count alone (the list's punctuation aside).
        for (tool, n) in tools.iter().zip(&each) {
            let alone = count_tools(std::slice::from_ref(tool)).unwrap();
            assert!(n.abs_diff(alone) <= 3, "{}: {n} vs {alone}", tool.name);
        }
    }
}

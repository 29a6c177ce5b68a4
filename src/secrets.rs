//! Secret detection: one place that knows what an API key or token looks like.
//!
//! [`find_secrets`] finds strings that are almost certainly credentials (known key
//! formats); the validator reports each as `literal-secret`. [`mask_secrets`] hides those
//! and, more eagerly, any long opaque token, in text about to be printed — over-masking a
//! hash in a snippet is harmless, printing a key is not.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// One credential-looking string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretMatch {
    /// Byte range in the searched text.
    pub range: Range<usize>,
    /// What it looks like ("an OpenAI/DeepSeek-style API key").
    pub what: &'static str,
}

// ASCII word boundaries (`(?-u:\b)`): keys are ASCII, and Unicode-aware boundaries
// made compiling these patterns a third of `validate`'s start-up.
static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        (
            "an OpenAI/DeepSeek/Anthropic-style API key",
            r"(?-u:\b)sk-[A-Za-z0-9_\-]{20,}",
        ),
        (
            "an AWS access key",
            r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
        ),
        (
            "a GitHub token",
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        ),
        ("a GitLab token", r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}"),
        ("a Slack token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Google API key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{30,}"),
        ("a Hugging Face token", r"(?-u:\b)hf_[A-Za-z0-9]{30,}"),
        (
            "a JSON Web Token",
            r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        ),
        (
            "a bearer token",
            r"(?-u:\b)[Bb]earer[ \t]+[A-Za-z0-9._~+/\-]{20,}=*",
        ),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ]
    .into_iter()
    .filter_map(|(what, re)| Regex::new(re).ok().map(|r| (what, r)))
    .collect()
});

/// Every credential-looking string in `text`, in order, without overlaps.
pub fn find_secrets(text: &str) -> Vec<SecretMatch> {
    let mut found: Vec<SecretMatch> = Vec::new();
    for (what, re) in PATTERNS.iter() {
        for m in re.find_iter(text) {
            found.push(SecretMatch {
                range: m.range(),
                what,
            });
        }
    }
    found.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
    let mut out: Vec<SecretMatch> = Vec::with_capacity(found.len());
    for m in found {
        if out
            .last()
            .is_none_or(|last| m.range.start >= last.range.end)
        {
            out.push(m);
        }
    }
    out
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '=')
}

/// A long run mixing letters and digits: a key in a format we do not know.
fn looks_opaque(token: &str) -> bool {
    token.len() >= 32
        && token.bytes().any(|b| b.is_ascii_digit())
        && token.bytes().any(|b| b.is_ascii_alphabetic())
        && !token.contains('/')
}

/// `text` with every secret (and every long opaque token) replaced by `*`, one per
/// character, so columns and carets stay aligned.
pub fn mask_secrets(text: &str) -> Cow<'_, str> {
    let mut ranges: Vec<Range<usize>> = find_secrets(text).into_iter().map(|m| m.range).collect();
    let mut start: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (is_token_char(c) && i < text.len(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if looks_opaque(&text[s..i]) {
                    ranges.push(s..i);
                }
                start = None;
            }
            _ => {}
        }
    }
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for r in ranges {
        let from = r.start.max(copied);
        if from >= r.end {
            continue;
        }
        out.push_str(&text[copied..from]);
        out.extend(std::iter::repeat_n('*', text[from..r.end].chars().count()));
        copied = r.end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_known_formats() {
        for key in [
            "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUv",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "AKIAABCDEFGHIJKLMNOP",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "glpat-AbCdEf1234567890GhIj",
            "AIzaSyAbCdEf1234567890GhIjKlMnOpQrStU",
            "Bearer abcdefghijklmnopqrstuvwxyz012345",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEF",
        ] {
            let text = format!("description: \"my {key} here\"");
            let found = find_secrets(&text);
            assert_eq!(found.len(), 1, "{key}: {found:?}");
            assert_eq!(&text[found[0].range.clone()], key);
            assert!(!mask_secrets(&text).contains(key));
        }
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "apiKeyEnv: DEEPSEEK_API_KEY",
            "name: deepseek-v4-flash",
            "use scikit-learn and sk-short",
            "see https://example.com/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
        ] {
            assert!(find_secrets(text).is_empty(), "{text}");
            assert!(matches!(mask_secrets(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn masks_keep_columns() {
        assert_eq!(
            mask_secrets("apiKeyEnv: sk-test0000000000000000000000000000 # x"),
            "apiKeyEnv: *********************************** # x"
        );
        assert_eq!(
            mask_secrets("é sk-abcdefghijklmnopqrstuvwx"),
            "é ***************************"
        );
        // An unknown format is still masked for printing.
        assert_eq!(
            mask_secrets("token q9W8e7R6t5Y4u3I2o1P0a9S8d7F6g5H4 end"),
            "token ******************************** end"
        );
    }
}

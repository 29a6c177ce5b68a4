//! A backstop against printing secrets. The validator reports key-like strings as
//! `literal-secret` and the snippet renderer masks those spans; but a file that fails to
//! parse never reaches that check, and its snippets (or a "found `…`" in a message) could
//! still show a key. Everything the CLI prints from a preset file goes through [`mask`].

use std::borrow::Cow;

/// Prefixes of well-known API key and token formats.
const KEY_PREFIXES: &[&str] = &[
    "sk-",
    "AKIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxo-",
    "xoxs-",
    "xoxr-",
    "AIza",
];

/// Characters a key token is made of.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Does this token look like a secret? A known key prefix followed by at least 16 more
/// characters, or any 32+ character run mixing letters and digits.
fn looks_secret(token: &str) -> bool {
    let prefixed = KEY_PREFIXES
        .iter()
        .any(|p| token.starts_with(p) && token.len() >= p.len() + 16);
    let opaque = token.len() >= 32
        && token.bytes().any(|b| b.is_ascii_digit())
        && token.bytes().any(|b| b.is_ascii_alphabetic());
    prefixed || opaque
}

/// `text` with every secret-looking token replaced by `*` (one per character, so columns
/// stay right).
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut start: Option<usize> = None;
    let mut copied = 0;
    let bytes_end = text.len();
    for (i, c) in text.char_indices().chain(std::iter::once((bytes_end, ' '))) {
        match (is_token_char(c) && i < bytes_end, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let token = &text[s..i];
                if looks_secret(token) {
                    let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    buf.push_str(&text[copied..s]);
                    buf.extend(std::iter::repeat_n('*', token.chars().count()));
                    copied = i;
                }
                start = None;
            }
            _ => {}
        }
    }
    match out {
        Some(mut buf) => {
            buf.push_str(&text[copied..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_keys_and_keeps_the_rest() {
        assert_eq!(
            mask("apiKeyEnv: sk-test0000000000000000000000000000 # x"),
            "apiKeyEnv: *********************************** # x"
        );
        assert_eq!(
            mask("found `AKIA0000000000000000`"),
            "found `********************`"
        );
        assert!(matches!(mask("name: deepseek-v4-flash"), Cow::Borrowed(_)));
        assert_eq!(mask("DEEPSEEK_API_KEY"), "DEEPSEEK_API_KEY");
        assert_eq!(mask("sk-short"), "sk-short");
        assert_eq!(mask(""), "");
        assert_eq!(
            mask("é sk-abcdefghijklmnopqrstuvwx"),
            "é ***************************"
        );
    }
}

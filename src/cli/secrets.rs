//! A backstop against printing secrets. The validator reports key-like strings as
//! `literal-secret` and the snippet renderer masks those spans; but a file that fails to
//! parse never reaches that check, and its snippets (or a "found `…`" in a message) could
//! still show a key. Everything the CLI prints from a preset file goes through [`mask`].

use std::borrow::Cow;

/// `text` ready for a terminal or a report: secrets masked (see
/// [`crate::secrets::mask_secrets`]) and control characters (escape sequences, NUL, …)
/// replaced by U+FFFD, so a hostile file cannot drive the terminal. Tabs and newlines
/// stay.
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    let masked = crate::secrets::mask_secrets(text);
    let hostile = |c: char| c.is_control() && c != '\t' && c != '\n';
    if !masked.chars().any(hostile) {
        return masked;
    }
    Cow::Owned(
        masked
            .chars()
            .map(|c| if hostile(c) { '\u{FFFD}' } else { c })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_keys_and_control_characters() {
        assert_eq!(
            mask("found `AKIA0000000000000000`"),
            "found `********************`"
        );
        assert!(matches!(mask("name: deepseek-v4-flash"), Cow::Borrowed(_)));
        assert_eq!(
            mask("a\u{1b}]0;pwned\u{7}b\0c\td"),
            "a\u{FFFD}]0;pwned\u{FFFD}b\u{FFFD}c\td"
        );
    }
}

//! A backstop against printing secrets. The validator reports key-like strings as
//! `literal-secret` and the snippet renderer masks those spans; but a file that fails to
//! parse never reaches that check, and its snippets (or a "found `…`" in a message) could
//! still show a key. Everything the CLI prints from a preset file goes through [`mask`].

use std::borrow::Cow;

/// `text` ready for a terminal or a report: secrets masked (see
/// [`crate::secrets::mask_secrets`]) and every character the library escapes in model
/// text ([`crate::redact::needs_escape`]: control characters such as escape sequences
/// and NUL, bidirectional controls, invisible formatting characters) replaced by U+FFFD,
/// one for one so carets stay aligned, so a hostile file can neither drive the terminal
/// nor reorder what it shows. Tabs and newlines stay. (What the model sends goes through
/// [`crate::redact`] instead: the API key masked, those characters shown escaped.)
pub fn mask(text: &str) -> Cow<'_, str> {
    let masked = crate::secrets::mask_secrets(text);
    let hostile = |c: char| crate::redact::needs_escape(c, crate::redact::DisplayContext::Text);
    // Printable ASCII, tabs and newlines are never hostile: most text is only those, and
    // a byte scan tells it (every diagnostic of a report goes through here).
    let maybe_hostile = masked.bytes().fold(false, |found, b| {
        found | (b >= 0x7f || (b < 0x20 && b != b'\n' && b != b'\t'))
    });
    if !maybe_hostile || !masked.chars().any(hostile) {
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
        assert_eq!(
            mask("name: x\u{202e}lmay.\u{2066}y\u{2069}\u{200b}"),
            "name: x\u{FFFD}lmay.\u{FFFD}y\u{FFFD}\u{FFFD}"
        );
    }
}

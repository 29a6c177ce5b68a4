//! The text of a preset file ([`SourceFile`]): decoded, normalised and indexed, with the
//! limits every reader of it keeps. A leaf: the tree reader, the shape check, the typed
//! pass and the catalog all build on it, and it builds on none of them.

use std::borrow::Cow;
use std::sync::Arc;

use serde_saphyr::{Location, Spanned};

use crate::bounded::byte_size;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::prompt::origin::{LineIndex, TextOrigin};
use crate::source_files::SourceText;

/// The largest preset file accepted, in bytes (1 MiB).
pub const MAX_PRESET_FILE_BYTES: usize = 1024 * 1024;

/// Deepest nesting of lists and mappings accepted (a preset needs about 5).
pub const MAX_YAML_DEPTH: usize = 32;

/// Most YAML nodes (values, lists and mappings as written, aliases not expanded) in one
/// file.
pub const MAX_YAML_NODES: usize = 200_000;

/// Most alias (`*name`) uses accepted in one file. Anchors (`&name`) are not limited.
pub const MAX_YAML_ALIASES: usize = 1_000;

/// Most YAML events that alias expansion may replay in one file, all aliases together (a
/// value is one event, a list or mapping two plus its content; an alias of an anchor that
/// holds aliases replays their expansion too).
pub const MAX_ALIAS_REPLAYED_EVENTS: usize = 100_000;

/// Most bytes of text that alias expansion may replay in one file, all aliases together.
pub const MAX_ALIAS_REPLAYED_BYTES: usize = 4 * MAX_PRESET_FILE_BYTES;

/// The text of a preset file, decoded and normalised (no BOM, LF line ends), with the
/// name it is shown under. Lines and columns in diagnostics refer to this text. Built by
/// [`SourceFile::decode`], which also indexes the lines once, so finding a line or a
/// position never scans the file from its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// The path as shown to users (`.agent-presets/reviewer.yaml`); built-ins are
    /// `<builtin>/standard.yaml`.
    pub display: Arc<str>,
    /// The decoded text.
    pub text: Arc<str>,
    /// Where each line of `text` starts.
    lines: Arc<LineIndex>,
}

impl SourceFile {
    /// Check and decode `bytes`: at most [`MAX_PRESET_FILE_BYTES`], UTF-8 without NUL. A
    /// leading BOM is dropped; CRLF and lone CR become LF (line numbers stay right).
    pub fn decode(display: Arc<str>, bytes: &[u8]) -> Result<SourceFile, Diagnostic> {
        if bytes.len() > MAX_PRESET_FILE_BYTES {
            let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
            return Err(file_too_large(display, Some(size)));
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let (valid, bad_utf8) = match std::str::from_utf8(bytes) {
            Ok(text) => (text, None),
            Err(e) => {
                let valid_up_to = e.valid_up_to();
                // The prefix is valid by definition; this cannot fail.
                let prefix = std::str::from_utf8(&bytes[..valid_up_to]).unwrap_or_default();
                (prefix, Some(valid_up_to))
            }
        };
        if let Some(nul) = memchr::memchr(0, valid.as_bytes()) {
            let (line, column) = position_after(&valid[..nul]);
            return Err(Diagnostic::new(
                DiagnosticKind::Encoding,
                "the file contains a NUL byte; preset files are UTF-8 text",
            )
            .at(Span::new(display, line, column))
            .help("remove the NUL byte (was the file saved as UTF-16, or is it binary?)"));
        }
        if let Some(at) = bad_utf8 {
            let (line, column) = position_after(valid);
            let byte = bytes.get(at).copied().unwrap_or_default();
            return Err(Diagnostic::new(
                DiagnosticKind::Encoding,
                format!("the file is not valid UTF-8 (byte 0x{byte:02X} at offset {at})"),
            )
            .at(Span::new(display, line, column))
            .help("save the file as UTF-8"));
        }
        // One copy of the text, straight into its `Arc` (not a `String` copied again).
        let text: Arc<str> = normalize_line_ends(valid).into();
        let lines = Arc::new(LineIndex::new(&text));
        Ok(SourceFile {
            display,
            text,
            lines,
        })
    }

    /// The text of `bytes` as snippets show it when [`SourceFile::decode`] refuses them
    /// (invalid UTF-8, a NUL byte, too large): decoded the same way, but with invalid
    /// UTF-8 shown as U+FFFD. Lines up to the problem are the ones `decode` would give,
    /// so the error's span points at the right line.
    pub fn lossy_text(bytes: &[u8]) -> SourceText {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        SourceText::new(normalize_line_ends(&String::from_utf8_lossy(bytes)).into_owned())
    }

    /// The text and its line index, for a [`SourceFiles`](crate::SourceFiles) registry
    /// (shares both; no copy).
    pub fn source_text(&self) -> SourceText {
        SourceText::from_parts(self.text.clone(), self.lines.clone())
    }

    /// The span of a serde-saphyr location in this file, covering the node's characters
    /// on its first line. An unknown location (line 0) becomes line 1, column 1.
    pub fn span(&self, location: &Location) -> Span {
        let line = u32::try_from(location.line()).unwrap_or(u32::MAX);
        let column = u32::try_from(location.column()).unwrap_or(u32::MAX);
        if line == 0 {
            return Span::new(self.display.clone(), 1, 1);
        }
        let column = column.max(1);
        let node_len = u32::try_from(location.span().len()).unwrap_or(u32::MAX);
        let rest = self.chars_left_on_line(line, column);
        let len = if node_len == 0 {
            self.token_len(line, column)
        } else {
            node_len.min(rest)
        };
        Span::new(self.display.clone(), line, column).with_len(len)
    }

    /// The span of a spanned value where it is used (`referenced`).
    pub fn span_of<T>(&self, value: &Spanned<T>) -> Span {
        self.span(&value.referenced)
    }

    /// A [`TextOrigin`] for a spanned string, so positions inside its text (a template
    /// reference on the third line of a `|` block) map back to the file. Uses where the
    /// text was written (`defined`), which differs from `referenced` for aliases.
    pub fn text_origin(&self, value: &Spanned<String>) -> TextOrigin {
        let line = u32::try_from(value.defined.line()).unwrap_or(u32::MAX);
        let column = u32::try_from(value.defined.column()).unwrap_or(u32::MAX);
        TextOrigin::locate_in(self.display.clone(), &self.text, &self.lines, line, column)
    }

    /// Line `line` (1-based) of the text, without its line end.
    pub fn line(&self, line: u32) -> Option<&str> {
        let index = usize::try_from(line.checked_sub(1)?).ok()?;
        self.lines.line(&self.text, index)
    }

    /// Line 1, column 1: for problems with the file as a whole.
    pub fn start(&self) -> Span {
        Span::new(self.display.clone(), 1, 1)
    }

    fn chars_left_on_line(&self, line: u32, column: u32) -> u32 {
        let Some(text) = self.line(line) else {
            return 1;
        };
        let total = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
        total.saturating_sub(column - 1).max(1)
    }

    /// Characters of the token at `line`:`column`: up to whitespace or `:,[]{}`, or a
    /// whole quoted string.
    pub(crate) fn token_len(&self, line: u32, column: u32) -> u32 {
        let Some(text) = self.line(line) else {
            return 1;
        };
        let mut chars = text
            .chars()
            .skip(usize::try_from(column - 1).unwrap_or(usize::MAX));
        let n = match chars.next() {
            Some(q @ ('"' | '\'')) => 2 + chars.take_while(|c| *c != q).count(),
            Some(c) if !c.is_whitespace() => {
                1 + chars
                    .take_while(|c| !c.is_whitespace() && !matches!(c, ':' | ',' | ']' | '}'))
                    .count()
            }
            _ => 1,
        };
        u32::try_from(n).unwrap_or(u32::MAX).max(1)
    }
}

/// The `limit-exceeded` diagnostic for a preset file larger than
/// [`MAX_PRESET_FILE_BYTES`], at its first line. `size` is its size when known; `None`
/// for a file that reported a smaller size (a `/proc` file, a file that grew) and then
/// held more.
pub(crate) fn file_too_large(display: Arc<str>, size: Option<u64>) -> Diagnostic {
    let limit = byte_size(MAX_PRESET_FILE_BYTES as u64);
    let (message, help) = match size {
        Some(size) => (
            format!("the file is {size} bytes; a preset file may be at most {limit}"),
            "presets are small declarative files; move large text out of the preset",
        ),
        None => (
            format!("the file holds more than {limit}, the most a preset file may hold"),
            "presets are small declarative files; check what this path is (a link to a \
             `/proc` file or a growing log?)",
        ),
    };
    Diagnostic::new(DiagnosticKind::LimitExceeded, message)
        .at(Span::new(display, 1, 1))
        .help(help)
}

/// CRLF and lone CR become LF (the text itself when it has no CR).
fn normalize_line_ends(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', text.as_bytes()).is_some() {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// 1-based line and column just after `prefix`, counting lines as the decoded text does
/// (CRLF, lone CR and LF each end a line), so the span names the line a snippet of
/// [`SourceFile::lossy_text`] shows.
fn position_after(prefix: &str) -> (u32, u32) {
    let prefix = normalize_line_ends(prefix);
    let line = prefix.bytes().filter(|b| *b == b'\n').count() + 1;
    let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
    let column = prefix[line_start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// serde-saphyr's budget for copies of anchored events (the typed pass's backstop; the
/// shape check has no limit of its own for them).
pub(crate) const MAX_RECORDED_ANCHOR_EVENTS: usize =
    4 * (MAX_YAML_NODES + MAX_ALIAS_REPLAYED_EVENTS);

/// serde-saphyr's budget for bytes copied with anchored events.
pub(crate) const MAX_RECORDED_ANCHOR_BYTES: usize =
    4 * (MAX_PRESET_FILE_BYTES + MAX_ALIAS_REPLAYED_BYTES);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_positions() {
        assert_eq!(position_after(""), (1, 1));
        assert_eq!(position_after("ab"), (1, 3));
        assert_eq!(position_after("ab\ncdé"), (2, 4));
        assert_eq!(position_after("ab\r\nc"), (2, 2));
    }
}

//! YAML syntax errors that come from a few well-known traps, each explained at its line
//! with the line as it should be written: a `: ` inside an unquoted value
//! (`text: Note: be careful`), a value that starts with a quote but goes on after it
//! (`when: 'grep' in tools`), a key indented further than the keys of its mapping, and a
//! tab in the indentation (see `super::tab_indentation`).
//!
//! Each function looks only at the line the parser stopped on (and the lines above it),
//! and gives up (`None`) when the line does not look like its trap: the parser's own
//! message is then reported.

use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};

use super::SourceFile;

/// A line of a block mapping: its indentation, the `- ` item markers after it, its key
/// and what follows the key's `:`.
struct KeyLine<'a> {
    /// Spaces before the key (the `- ` markers included).
    key_column: usize,
    key: &'a str,
    /// The value after `key:`, with the spaces after the colon removed (may be empty).
    value: &'a str,
    /// Where the value starts in the line (bytes).
    value_at: usize,
    /// Where the key's `:` is in the line (bytes).
    colon_at: usize,
}

/// Read `text` as `key: value` (after indentation and `- ` markers); `None` for anything
/// else (a comment, a list item holding a value, a quoted or flow key).
fn key_line(text: &str) -> Option<KeyLine<'_>> {
    let mut at = text.len() - text.trim_start_matches(' ').len();
    loop {
        let rest = &text[at..];
        if let Some(after) = rest.strip_prefix("- ") {
            at += rest.len() - after.len();
            at += after.len() - after.trim_start_matches(' ').len();
        } else {
            break;
        }
    }
    let rest = &text[at..];
    let first = rest.chars().next()?;
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return None;
    }
    let colon = rest
        .char_indices()
        .find(|&(i, c)| c == ':' && matches!(rest[i + 1..].chars().next(), None | Some(' ')))
        .map(|(i, _)| i)?;
    let key = &rest[..colon];
    if key.contains([' ', '#', '"', '\'', '\t']) {
        return None;
    }
    let after = &rest[colon + 1..];
    let value = after.trim_start_matches(' ');
    Some(KeyLine {
        key_column: at,
        key,
        value,
        value_at: at + colon + 1 + (after.len() - value.len()),
        colon_at: at + colon,
    })
}

/// The nearest line above `line` that is not blank or a comment, with its number.
fn line_above(source: &SourceFile, line: u32) -> Option<(u32, &str)> {
    let mut n = line.checked_sub(1)?;
    while n >= 1 {
        let text = source.line(n)?;
        let content = text.trim_start();
        if !content.is_empty() && !content.starts_with('#') {
            return Some((n, text));
        }
        n -= 1;
    }
    None
}

/// The indentation line `line` most likely meant: that of the keys of the line above
/// (one level deeper when the line above opens a block with `key:`).
pub(super) fn intended_indent(source: &SourceFile, line: u32) -> Option<usize> {
    let (_, above) = line_above(source, line)?;
    if above.contains('\t') {
        return None;
    }
    let parsed = key_line(above)?;
    if parsed.value.is_empty() || parsed.value.starts_with('#') {
        Some(parsed.key_column + 2)
    } else {
        Some(parsed.key_column)
    }
}

/// Where byte `at` of line `text` is, on the line `span` is on (for a fix that rewrites
/// the line from there).
fn key_span(span: &Span, text: &str, at: usize) -> Span {
    let column = text.get(..at).map_or(0, |t| t.chars().count()) + 1;
    Span::new(
        span.file.clone(),
        span.line,
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// The byte offset of the 1-based character column `column` of `text`.
fn byte_at(text: &str, column: u32) -> Option<usize> {
    let index = usize::try_from(column.checked_sub(1)?).ok()?;
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .nth(index)
}

/// `mapping values are not allowed in this context`: a `: ` inside an unquoted value
/// (the parser stops at that colon), or a key indented further than the keys before it
/// (the parser reads it as more of the value above and stops at its colon).
pub(super) fn colon_in_value(source: &SourceFile, span: &Span) -> Option<Diagnostic> {
    let text = source.line(span.line)?;
    let at = byte_at(text, span.column)?;
    let Some(parsed) = key_line(text) else {
        return colon_in_continued_value(source, span, text);
    };
    if at > parsed.colon_at {
        return unquoted_colon(span, text, &parsed);
    }
    if at == parsed.colon_at {
        return indented_too_far(source, span, text, &parsed);
    }
    None
}

fn unquoted_colon(span: &Span, text: &str, line: &KeyLine<'_>) -> Option<Diagnostic> {
    let value = line.value;
    if value.is_empty() || value.starts_with(['"', '\'', '|', '>', '[', '{', '&', '*', '!']) {
        return None;
    }
    // A comment after the value stays a comment.
    let (value, comment) = match value.find(" #") {
        Some(i) => (value[..i].trim_end(), &value[i..]),
        None => (value.trim_end(), ""),
    };
    let start = value.find(": ").map_or(value.len(), |i| i + 1);
    let shown = &value[..start];
    let key = line.key;
    Some(
        Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            format!(
                "`: ` inside the unquoted value of `{key}`: YAML reads `{shown}` as the key of a \
                 new mapping"
            ),
        )
        .at(span.clone().with_len(1))
        .help(format!(
            "quote the value: write it as `{key}: {}{comment}` (or, for a longer text, `{key}: |` \
             with the text on the lines below, indented)",
            quoted(value, '"')
        ))
        .fix_at(
            key_span(span, text, line.key_column),
            text[line.key_column..].trim_end(),
            format!("{key}: {}{comment}", quoted(value, '"')).trim_end(),
        ),
    )
}

/// A `: ` on a line that continues the unquoted value of the key above
/// (`text: This is long` / `  and goes on: here`).
fn colon_in_continued_value(source: &SourceFile, span: &Span, text: &str) -> Option<Diagnostic> {
    let (above_number, above) = line_above(source, span.line)?;
    let owner = key_line(above)?;
    let indent = text.len() - text.trim_start_matches(' ').len();
    if owner.value.is_empty()
        || owner
            .value
            .starts_with(['"', '\'', '|', '>', '[', '{', '#', '&', '*', '!'])
        || indent <= owner.key_column
    {
        return None;
    }
    let key = owner.key;
    Some(
        Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            format!(
                "`: ` inside the unquoted value of `{key}` (which starts on line \
                 {above_number}): YAML reads the text before it as the key of a new mapping"
            ),
        )
        .at(span.clone().with_len(1))
        .help(format!(
            "write the text as a block: `{key}: |` with its lines below it, indented (or quote \
             the whole value)"
        )),
    )
}

fn indented_too_far(
    source: &SourceFile,
    span: &Span,
    text: &str,
    line: &KeyLine<'_>,
) -> Option<Diagnostic> {
    let (above_number, above) = line_above(source, span.line)?;
    let sibling = key_line(above)?;
    // Only a key below a `key: value` line, indented further than that key.
    if sibling.value.is_empty()
        || sibling.value.starts_with(['#', '|', '>'])
        || line.key_column <= sibling.key_column
    {
        return None;
    }
    let rewritten = format!(
        "{}{}",
        " ".repeat(sibling.key_column),
        &text[line.key_column..]
    );
    Some(
        Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            format!(
                "`{}` is indented more than `{}` on line {above_number}, so YAML reads it as \
                 more of the value of `{}`",
                line.key, sibling.key, sibling.key
            ),
        )
        .at(Span::new(
            span.file.clone(),
            span.line,
            u32::try_from(text[..line.key_column].chars().count() + 1).unwrap_or(u32::MAX),
        )
        .with_len(u32::try_from(line.key.chars().count()).unwrap_or(u32::MAX)))
        .help(format!(
            "line it up with the keys of its mapping: write it as `{rewritten}`"
        ))
        .fix_at(key_span(span, text, 0), text, &rewritten),
    )
}

/// `invalid trailing content after …-quoted scalar`: a value that starts with a quote is a
/// quoted text, which must end at its closing quote (`when: 'grep' in tools`).
pub(super) fn starts_with_quote(source: &SourceFile, span: &Span) -> Option<Diagnostic> {
    let text = source.line(span.line)?;
    let line = key_line(text)?;
    let value = line.value;
    let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let at = byte_at(text, span.column)?;
    if at <= line.value_at {
        return None;
    }
    let value = match value.find(" #") {
        Some(i) if i >= at - line.value_at => value[..i].trim_end(),
        _ => value.trim_end(),
    };
    let closing = value[1..].find(quote).map_or(value.len(), |i| i + 2);
    let first = &value[..closing];
    let other = if quote == '\'' { '"' } else { '\'' };
    let key = line.key;
    let hint = if key == "when" {
        " (a `when` condition is one text)"
    } else {
        ""
    };
    Some(
        Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            format!(
                "the value of `{key}` starts with a quote, so YAML reads `{first}` as the whole \
                 value and cannot read what follows it"
            ),
        )
        .at(span.clone().with_len(1))
        .help(format!(
            "quote the whole value{hint}: write it as `{key}: {}`",
            quoted(value, other)
        ))
        .fix_at(
            key_span(span, text, line.key_column),
            text.get(line.key_column..line.value_at + value.len())
                .unwrap_or_default(),
            &format!("{key}: {}", quoted(value, other)),
        ),
    )
}

/// `text` as a YAML quoted scalar, preferring the quote `prefer`: double quotes escape
/// `\` and `"`; single quotes double `'`.
fn quoted(text: &str, prefer: char) -> String {
    let double = || format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""));
    let single = || format!("'{}'", text.replace('\'', "''"));
    match prefer {
        '"' if !text.contains(['"', '\\']) => double(),
        '\'' if !text.contains('\'') => single(),
        '"' => single(),
        _ => double(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> SourceFile {
        SourceFile::decode("t.yaml".into(), text.as_bytes()).unwrap()
    }

    #[test]
    fn key_lines() {
        let l = key_line("    - name: rules").unwrap();
        assert_eq!((l.key_column, l.key, l.value), (6, "name", "rules"));
        let l = key_line("  when: 'grep' in tools").unwrap();
        assert_eq!(
            (l.key, l.value, l.value_at, l.colon_at),
            ("when", "'grep' in tools", 8, 6)
        );
        assert!(key_line("  # note: x").is_none());
        assert!(key_line("  - plain item").is_none());
        assert!(key_line("  \"q\": 1").is_none());
        assert_eq!(key_line("persona:").unwrap().value, "");
    }

    #[test]
    fn colon_on_a_continuation_line() {
        let s = source("a:\n  text: This is long\n    and goes on: here\n");
        let d = colon_in_value(&s, &Span::new("t.yaml".into(), 3, 15)).unwrap();
        assert_eq!(
            d.message,
            "`: ` inside the unquoted value of `text` (which starts on line 2): YAML reads the text before it as the key of a new mapping"
        );
        assert!(
            d.help
                .unwrap()
                .starts_with("write the text as a block: `text: |`")
        );
        // A line at the key's own indentation does not continue its value.
        let s = source("a:\n  text: x\n  and goes on: here\n");
        assert!(colon_in_value(&s, &Span::new("t.yaml".into(), 3, 13)).is_none());
    }

    #[test]
    fn quoting() {
        assert_eq!(quoted("Note: be careful", '"'), "\"Note: be careful\"");
        assert_eq!(quoted("say \"hi\": now", '"'), "'say \"hi\": now'");
        assert_eq!(quoted("'grep' in tools", '"'), "\"'grep' in tools\"");
        assert_eq!(quoted("\"grep\" in tools", '\''), "'\"grep\" in tools'");
        assert_eq!(quoted("it's \"x\"", '\''), "\"it's \\\"x\\\"\"");
    }

    #[test]
    fn intended_indent_follows_the_line_above() {
        let s = source("persona:\n\tsections: []\n");
        assert_eq!(intended_indent(&s, 2), Some(2));
        let s = source("a:\n  - name: x\n    order: 1\n\t  text: y\n");
        assert_eq!(intended_indent(&s, 4), Some(4));
        assert_eq!(intended_indent(&s, 1), None);
    }
}

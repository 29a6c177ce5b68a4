//! [`TextOrigin`]: where a scalar's text sits in its file, so an offset inside the parsed
//! text maps back to a file line and column (inside block scalars too).
//!
//! serde-saphyr reports where a scalar starts: the opening quote of a quoted scalar, the
//! first character of a plain one, and — for a block scalar (`|`, `>`) — the first
//! character of its first non-blank content line (or the indicator itself when the block
//! is empty). From that and the source text, [`TextOrigin::locate`] works out the scalar's
//! layout once; [`TextOrigin::span_at`] then maps byte offsets of the parsed value.
//!
//! Literal blocks map exactly (content line `k` is file line `header + 1 + k`, column
//! `indentation + 1 + characters before the offset on that line`). Single-line scalars map
//! exactly, escapes included. Folded blocks and multi-line flow scalars are mapped by
//! aligning each source line's content with the parsed text, which is exact unless a
//! line's content is changed by folding in a way the alignment cannot see; the result is
//! always a real position in the scalar, never line 0.

use std::sync::Arc;

use crate::diagnostic::Span;

/// Where a scalar's text sits in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextOrigin {
    file: Arc<str>,
    line: u32,
    column: u32,
    layout: Layout,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Layout {
    /// Only the start is known.
    Start,
    /// A literal block: content line `k` is file line `first_line + k`, its text starts at
    /// column `indent + 1`.
    Literal { first_line: u32, indent: u32 },
    /// The content of each source line with the file column of every character, in
    /// order; aligned against the parsed text on demand.
    Segments(Arc<[Segment]>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Segment {
    line: u32,
    chars: Vec<(char, u32)>,
}

/// How far alignment may skip folding separators (spaces, newlines) looking for the next
/// line's content before it gives up and maps approximately.
const MAX_SEPARATOR_SKIP: usize = 4096;

/// Never look at more than this many lines of one scalar.
const MAX_SCALAR_LINES: usize = 100_000;

impl TextOrigin {
    /// Work out the layout of the scalar that starts at `line`:`column` (1-based, as
    /// serde-saphyr reports it — use `Spanned::defined` so aliases map to where the text
    /// was written) in `source`. `source` is the whole file; CRLF line ends are fine.
    ///
    /// This indexes the lines of `source` first (linear in its length);
    /// [`SourceFile::text_origin`](crate::preset::SourceFile::text_origin) indexes a file
    /// once for all its scalars.
    pub fn locate(file: Arc<str>, source: &str, line: u32, column: u32) -> TextOrigin {
        let index = LineIndex::new(source);
        TextOrigin::locate_in(file, source, &index, line, column)
    }

    /// [`TextOrigin::locate`] with the lines of `source` already indexed: the cost depends
    /// on the scalar's size, not on the file's.
    pub(crate) fn locate_in(
        file: Arc<str>,
        source: &str,
        index: &LineIndex,
        line: u32,
        column: u32,
    ) -> TextOrigin {
        let line = line.max(1);
        let column = column.max(1);
        let lines = Lines { source, index };
        let layout = layout_of(lines, line, column).unwrap_or(Layout::Start);
        TextOrigin {
            file,
            line,
            column,
            layout,
        }
    }

    /// The origin of a text that is a whole file of its own (a `textFile`): byte `k` of
    /// the text is where it is in that file, from line 1, column 1.
    pub fn whole_file(file: Arc<str>) -> TextOrigin {
        TextOrigin {
            file,
            line: 1,
            column: 1,
            layout: Layout::Literal {
                first_line: 1,
                indent: 0,
            },
        }
    }

    /// The file position of byte `offset` of the parsed `text` (the scalar's value). An
    /// offset past the end maps to just after the last character; one inside a UTF-8
    /// sequence maps to that character.
    pub fn span_at(&self, text: &str, offset: usize) -> Span {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let (line, column) = match &self.layout {
            Layout::Start => (self.line, self.column),
            Layout::Literal { first_line, indent } => {
                let before = &text[..offset];
                let k = before.matches('\n').count();
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let chars = before[line_start..].chars().count();
                (
                    first_line.saturating_add(to_u32(k)),
                    indent.saturating_add(to_u32(chars)).saturating_add(1),
                )
            }
            Layout::Segments(segments) => {
                let index = text[..offset].chars().count();
                position_of(segments, text, index).unwrap_or((self.line, self.column))
            }
        };
        Span::new(self.file.clone(), line.max(1), column.max(1))
    }

    /// Where the scalar starts.
    pub fn span(&self) -> Span {
        Span::new(self.file.clone(), self.line, self.column)
    }

    /// The file this text is in.
    pub fn file(&self) -> &Arc<str> {
        &self.file
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Where every line of a text starts (byte offsets), so line `n` is found without
/// scanning the text from its start. Lines are separated by `\n` (a `\r` before it is not
/// part of the line); the text after the last `\n` is a line too, even if empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Index the lines of `text` (one pass, a vectorised search for `\n`: a byte at a
    /// time cost 7 instructions a byte, most of decoding a preset file).
    pub(crate) fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// 0-based line `index` of `text` (the text this index was built from), without its
    /// line end.
    pub(crate) fn line<'t>(&self, text: &'t str, index: usize) -> Option<&'t str> {
        let start = *self.starts.get(index)?;
        let end = self
            .starts
            .get(index + 1)
            .map_or(text.len(), |next| next - 1);
        let line = text.get(start..end)?;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    /// Byte offset where 0-based line `index` starts.
    pub(crate) fn start(&self, index: usize) -> Option<usize> {
        self.starts.get(index).copied()
    }
}

/// A text and its [`LineIndex`].
#[derive(Clone, Copy)]
struct Lines<'a> {
    source: &'a str,
    index: &'a LineIndex,
}

impl<'a> Lines<'a> {
    /// 0-based line `i`, without its line end.
    fn get(self, i: usize) -> Option<&'a str> {
        self.index.line(self.source, i)
    }

    /// The lines from 0-based line `from` on, without their line ends.
    fn from(self, from: usize) -> impl Iterator<Item = &'a str> {
        let rest = self.index.start(from).and_then(|s| self.source.get(s..));
        rest.into_iter()
            .flat_map(|r| r.split('\n'))
            .take(MAX_SCALAR_LINES)
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
    }
}

fn leading_spaces(line: &str) -> usize {
    line.bytes().take_while(|b| *b == b' ').count()
}

fn is_blank(line: &str) -> bool {
    line.chars().all(|c| c == ' ' || c == '\t')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Literal,
    Folded,
}

/// If `line` ends with a block scalar header (`|`, `>-`, `|2+`, ... optionally followed by
/// a comment), its kind and explicit indentation indicator.
fn block_header(line: &str) -> Option<(BlockKind, Option<u32>)> {
    // Cut a comment: `#` at the start or after whitespace.
    let mut cut = line.len();
    let mut prev_ws = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_ws {
            cut = i;
            break;
        }
        prev_ws = c == ' ' || c == '\t';
    }
    let token = line[..cut].split([' ', '\t']).rfind(|t| !t.is_empty())?;
    let mut chars = token.chars();
    let kind = match chars.next()? {
        '|' => BlockKind::Literal,
        '>' => BlockKind::Folded,
        _ => return None,
    };
    let mut indent = None;
    let mut chomp = false;
    // At most two indicators after `|` or `>`.
    for (n, c) in chars.enumerate() {
        if n >= 2 {
            return None;
        }
        match c {
            '+' | '-' if !chomp => chomp = true,
            '1'..='9' if indent.is_none() => indent = c.to_digit(10),
            _ => return None,
        }
    }
    Some((kind, indent))
}

fn layout_of(source: Lines<'_>, line: u32, column: u32) -> Option<Layout> {
    let line0 = usize::try_from(line - 1).ok()?;
    let col0 = usize::try_from(column - 1).ok()?;
    let text = source.get(line0)?;
    // The line from the start on (character `col0`), without collecting its characters.
    let rest = text
        .char_indices()
        .nth(col0)
        .map_or("", |(i, _)| &text[i..]);
    let first = rest.chars().next();

    // The indicator itself: an empty block, or content that starts on a later line.
    if matches!(first, Some('|' | '>'))
        && let Some((kind, explicit)) = block_header(rest)
    {
        return block_layout(source, line, kind, explicit, None, text);
    }

    // Block content: only indentation before the start, and a header on the closest
    // non-blank line above.
    if text.chars().take(col0).all(|c| c == ' ') && line0 > 0 {
        // The closest non-blank line above (blank lines inside a block are rare; this walks
        // back over them only, never over the whole file).
        let above = (0..line0)
            .rev()
            .filter_map(|i| source.get(i).map(|l| (i, l)))
            .find(|(_, l)| !is_blank(l));
        if let Some((i, header_line)) = above
            && let Some((kind, explicit)) = block_header(header_line)
        {
            return block_layout(
                source,
                to_u32(i + 1),
                kind,
                explicit,
                Some(to_u32(col0)),
                header_line,
            );
        }
    }

    let segments = match first {
        Some('"') => double_quoted(source, line0, col0),
        Some('\'') => single_quoted(source, line0, col0),
        Some(_) => plain(source, line0, col0),
        None => return None,
    };
    Some(Layout::Segments(segments.into()))
}

/// The layout of a block scalar whose header is on 1-based line `header_line`.
fn block_layout(
    source: Lines<'_>,
    header_line: u32,
    kind: BlockKind,
    explicit: Option<u32>,
    content_indent: Option<u32>,
    header_text: &str,
) -> Option<Layout> {
    let first_line = header_line.saturating_add(1);
    let body_from = usize::try_from(header_line).ok()?;
    let indent = match content_indent {
        Some(i) => i,
        None => match explicit {
            Some(n) => to_u32(leading_spaces(header_text)).saturating_add(n),
            None => {
                let first_content = source.from(body_from).find(|l| !is_blank(l))?;
                let spaces = leading_spaces(first_content);
                if spaces <= leading_spaces(header_text) {
                    // Not more indented than the header's line: the block is empty.
                    return Some(Layout::Start);
                }
                to_u32(spaces)
            }
        },
    };
    match kind {
        BlockKind::Literal => Some(Layout::Literal { first_line, indent }),
        BlockKind::Folded => {
            let indent_us = usize::try_from(indent).ok()?;
            let mut segments = Vec::new();
            for (k, l) in source.from(body_from).enumerate() {
                if !is_blank(l) && leading_spaces(l) < indent_us {
                    break;
                }
                let chars = l
                    .chars()
                    .enumerate()
                    .skip(indent_us)
                    .map(|(i, c)| (c, to_u32(i + 1)))
                    .collect();
                segments.push(Segment {
                    line: first_line.saturating_add(to_u32(k)),
                    chars,
                });
            }
            Some(Layout::Segments(segments.into()))
        }
    }
}

/// Plain scalar: the first line from the start, then more-indented continuation lines,
/// each trimmed; a ` #` starts a comment.
fn plain(source: Lines<'_>, line0: usize, col0: usize) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut lines = source.from(line0);
    let Some(first) = lines.next() else {
        return segments;
    };
    let base_indent = leading_spaces(first);
    segments.push(plain_segment(line0, first, col0));
    for (k, l) in lines.enumerate() {
        if is_blank(l) {
            continue;
        }
        if leading_spaces(l) <= base_indent || l.trim_start().starts_with('#') {
            break;
        }
        let start = l.chars().take_while(|c| *c == ' ' || *c == '\t').count();
        segments.push(plain_segment(line0 + 1 + k, l, start));
    }
    segments
}

fn plain_segment(line0: usize, text: &str, start: usize) -> Segment {
    let mut chars: Vec<(char, u32)> = Vec::with_capacity(text.len());
    let mut prev_ws = false;
    for (i, c) in text.chars().enumerate().skip(start) {
        if c == '#' && prev_ws {
            break;
        }
        prev_ws = c == ' ' || c == '\t';
        chars.push((c, to_u32(i + 1)));
    }
    while chars.last().is_some_and(|(c, _)| *c == ' ' || *c == '\t') {
        chars.pop();
    }
    Segment {
        line: to_u32(line0 + 1),
        chars,
    }
}

/// Single-quoted: `''` is one quote; a lone `'` ends the scalar.
fn single_quoted(source: Lines<'_>, line0: usize, col0: usize) -> Vec<Segment> {
    let mut segments = Vec::new();
    for (k, l) in source.from(line0).enumerate() {
        let chars: Vec<char> = l.chars().collect();
        let mut i = if k == 0 {
            col0 + 1
        } else {
            chars
                .iter()
                .take_while(|c| **c == ' ' || **c == '\t')
                .count()
        };
        let mut out = Vec::with_capacity(chars.len().saturating_sub(i));
        let mut closed = false;
        while i < chars.len() {
            if chars[i] == '\'' {
                if chars.get(i + 1) == Some(&'\'') {
                    out.push(('\'', to_u32(i + 1)));
                    i += 2;
                    continue;
                }
                closed = true;
                break;
            }
            out.push((chars[i], to_u32(i + 1)));
            i += 1;
        }
        if !closed {
            trim_trailing_ws(&mut out);
        }
        segments.push(Segment {
            line: to_u32(line0 + 1 + k),
            chars: out,
        });
        if closed {
            break;
        }
    }
    segments
}

/// Double-quoted: escapes decode to one character each; `\` at a line end joins lines.
fn double_quoted(source: Lines<'_>, line0: usize, col0: usize) -> Vec<Segment> {
    let mut segments = Vec::new();
    for (k, l) in source.from(line0).enumerate() {
        let chars: Vec<char> = l.chars().collect();
        let mut i = if k == 0 {
            col0 + 1
        } else {
            chars
                .iter()
                .take_while(|c| **c == ' ' || **c == '\t')
                .count()
        };
        let mut out = Vec::with_capacity(chars.len().saturating_sub(i));
        let mut closed = false;
        let mut escaped_break = false;
        while i < chars.len() {
            let col = to_u32(i + 1);
            match chars[i] {
                '"' => {
                    closed = true;
                    break;
                }
                '\\' => {
                    let Some(&e) = chars.get(i + 1) else {
                        escaped_break = true;
                        break;
                    };
                    let (decoded, len) = decode_escape(e, &chars[i + 2..]);
                    out.push((decoded, col));
                    i += 2 + len;
                }
                c => {
                    out.push((c, col));
                    i += 1;
                }
            }
        }
        if !closed && !escaped_break {
            trim_trailing_ws(&mut out);
        }
        segments.push(Segment {
            line: to_u32(line0 + 1 + k),
            chars: out,
        });
        if closed {
            break;
        }
    }
    segments
}

/// The character a `\e` escape stands for and how many characters after `e` it uses.
fn decode_escape(e: char, rest: &[char]) -> (char, usize) {
    let hex = |n: usize| -> (char, usize) {
        let digits: String = rest.iter().take(n).collect();
        match u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32)
        {
            Some(c) if digits.len() == n => (c, n),
            _ => (e, 0),
        }
    };
    match e {
        '0' => ('\0', 0),
        'a' => ('\u{7}', 0),
        'b' => ('\u{8}', 0),
        't' | '\t' => ('\t', 0),
        'n' => ('\n', 0),
        'v' => ('\u{b}', 0),
        'f' => ('\u{c}', 0),
        'r' => ('\r', 0),
        'e' => ('\u{1b}', 0),
        'N' => ('\u{85}', 0),
        '_' => ('\u{a0}', 0),
        'L' => ('\u{2028}', 0),
        'P' => ('\u{2029}', 0),
        'x' => hex(2),
        'u' => hex(4),
        'U' => hex(8),
        other => (other, 0),
    }
}

fn trim_trailing_ws(chars: &mut Vec<(char, u32)>) {
    while chars.last().is_some_and(|(c, _)| *c == ' ' || *c == '\t') {
        chars.pop();
    }
}

/// Align `segments` with `text` and return the position of character `index`.
///
/// Segments appear in the parsed text in order, separated only by what folding leaves
/// (spaces, newlines, or nothing). A character between segments maps to just after the
/// previous segment's last character.
fn position_of(segments: &[Segment], text: &str, index: usize) -> Option<(u32, u32)> {
    let text: Vec<char> = text.chars().collect();
    let mut cursor = 0usize;
    // The last mapped character, to place separators and the end.
    let mut last: Option<(u32, u32)> = None;
    for segment in segments.iter().filter(|s| !s.chars.is_empty()) {
        if cursor > index {
            break;
        }
        let first = segment.chars[0].0;
        let mut start = cursor;
        let mut found = false;
        while start < text.len() && start - cursor <= MAX_SEPARATOR_SKIP {
            if text[start] == first {
                found = true;
                break;
            }
            if !matches!(text[start], ' ' | '\n' | '\t') {
                break;
            }
            start += 1;
        }
        if !found {
            if start >= text.len() {
                break;
            }
            // Not where expected (an escape or folding we do not model): map this line's
            // characters one by one from the cursor.
            start = cursor;
        }
        if index < start {
            // In the separator before this segment.
            return Some(after(last, segment));
        }
        let mut k = 0;
        while k < segment.chars.len() && start + k < text.len() {
            if found && text[start + k] != segment.chars[k].0 && k > 0 {
                break;
            }
            if start + k == index {
                let (_, col) = segment.chars[k];
                return Some((segment.line, col));
            }
            k += 1;
        }
        if k > 0 {
            let (_, col) = segment.chars[k - 1];
            last = Some((segment.line, col));
        }
        cursor = start + k;
    }
    let first_segment = segments.iter().find(|s| !s.chars.is_empty());
    match (last, first_segment) {
        (Some((line, col)), _) => Some((line, col.saturating_add(1))),
        (None, Some(s)) => Some((s.line, s.chars[0].1)),
        (None, None) => segments.first().map(|s| (s.line, 1)),
    }
}

fn after(last: Option<(u32, u32)>, next: &Segment) -> (u32, u32) {
    match last {
        Some((line, col)) => (line, col.saturating_add(1)),
        None => (next.line, next.chars.first().map_or(1, |c| c.1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(source: &str, line: u32, column: u32) -> TextOrigin {
        TextOrigin::locate("f.yaml".into(), source, line, column)
    }

    /// Locate the scalar the way the parser reports it and map `needle`'s first byte.
    fn at(source: &str, line: u32, column: u32, text: &str, needle: &str) -> (u32, u32) {
        let offset = text.find(needle).expect("needle in text");
        let span = origin(source, line, column).span_at(text, offset);
        assert_eq!(&*span.file, "f.yaml");
        (span.line, span.column)
    }

    #[test]
    fn literal_block_third_line_reference() {
        let src = "version: 1\nname: f\ntext: |\n  one\n  two\n  and {{ cwdd }} here\n";
        let text = "one\ntwo\nand {{ cwdd }} here\n";
        // serde-saphyr reports the first content line, at the indentation.
        assert_eq!(at(src, 4, 3, text, "cwdd"), (6, 10));
        assert_eq!(at(src, 4, 3, text, "one"), (4, 3));
        assert_eq!(at(src, 4, 3, text, "two"), (5, 3));
        assert_eq!(origin(src, 4, 3).span(), Span::new("f.yaml".into(), 4, 3));
    }

    #[test]
    fn literal_block_with_leading_blank_lines_and_strip() {
        let src = "text: |-\n\n    first\n\n      deeper {{ x }}\n    last\nnext: 1\n";
        // Parsed value: "\nfirst\n\n  deeper {{ x }}\nlast"; reported at line 3, col 5.
        let text = "\nfirst\n\n  deeper {{ x }}\nlast";
        assert_eq!(at(src, 3, 5, text, "first"), (3, 5));
        assert_eq!(at(src, 3, 5, text, "deeper"), (5, 7));
        assert_eq!(at(src, 3, 5, text, "x }}"), (5, 17));
        assert_eq!(at(src, 3, 5, text, "last"), (6, 5));
        assert_eq!(
            origin(src, 3, 5).span_at(text, 0),
            Span::new("f.yaml".into(), 2, 5)
        );
    }

    #[test]
    fn literal_block_in_sequence_with_comment_and_indicator() {
        let src = "sections:\n  - name: a\n    text: |2+ # note\n        indented\n      {{ y }}\n";
        let text = "  indented\n{{ y }}\n";
        assert_eq!(at(src, 4, 7, text, "indented"), (4, 9));
        assert_eq!(at(src, 4, 7, text, "y }}"), (5, 10));
    }

    #[test]
    fn literal_block_crlf() {
        let src = "version: 1\r\ntext: |\r\n  one\r\n  {{ two }}\r\n";
        let text = "one\n{{ two }}\n";
        assert_eq!(at(src, 3, 3, text, "two"), (4, 6));
    }

    #[test]
    fn literal_block_with_anchor_and_tag() {
        let src = "a: &x |\n  one {{ v }}\nb: !!str |\n  two {{ w }}\n";
        assert_eq!(at(src, 2, 3, "one {{ v }}\n", "v }}"), (2, 10));
        assert_eq!(at(src, 4, 3, "two {{ w }}\n", "w }}"), (4, 10));
    }

    #[test]
    fn empty_block_points_at_indicator() {
        let src = "text: |\nnext: 1\n";
        let o = origin(src, 1, 7);
        assert_eq!(o.span_at("", 0), Span::new("f.yaml".into(), 1, 7));
        assert_eq!(o.span(), Span::new("f.yaml".into(), 1, 7));
    }

    #[test]
    fn columns_after_non_ascii_characters() {
        // Columns count characters: `é` is one column (two bytes) before the scalar.
        let o = origin("clé: |\nnext: 1\n", 1, 6);
        assert_eq!(o.span_at("", 0), Span::new("f.yaml".into(), 1, 6));
        assert_eq!(
            at("clé: |\n  ô {{ x }}\n", 2, 3, "ô {{ x }}\n", "x }}"),
            (2, 8)
        );
        assert_eq!(
            at("clé: Hello {{ x }}\n", 1, 6, "Hello {{ x }}", "x }}"),
            (1, 15)
        );
        assert_eq!(at("clé: 'ô {{ x }}'\n", 1, 6, "ô {{ x }}", "x }}"), (1, 12));
    }

    #[test]
    fn plain_single_line() {
        let src = "when: \"'grep' in tools\"\ntext: Hello {{ name }}!\n";
        assert_eq!(at(src, 2, 7, "Hello {{ name }}!", "name"), (2, 16));
        assert_eq!(at(src, 2, 7, "Hello {{ name }}!", "Hello"), (2, 7));
    }

    #[test]
    fn double_quoted_single_line_with_escapes() {
        let src = "text: \"a\\tb \\u00e9 {{ x }}\"\n";
        let text = "a\tb é {{ x }}";
        assert_eq!(at(src, 1, 7, text, "a"), (1, 8));
        assert_eq!(at(src, 1, 7, text, "b"), (1, 11));
        assert_eq!(at(src, 1, 7, text, "x }}"), (1, 23));
        // `when` expressions are usually double-quoted.
        let src = "when: \"'grep' in tools\"\n";
        assert_eq!(at(src, 1, 7, "'grep' in tools", "tools"), (1, 18));
    }

    #[test]
    fn single_quoted_with_doubled_quote() {
        let src = "text: 'it''s {{ x }}'\n";
        let text = "it's {{ x }}";
        assert_eq!(at(src, 1, 7, text, "it"), (1, 8));
        assert_eq!(at(src, 1, 7, text, "s {{"), (1, 12));
        assert_eq!(at(src, 1, 7, text, "x }}"), (1, 17));
    }

    #[test]
    fn folded_block() {
        let src = "text: >\n  a {{ one }}\n  b\n\n  c {{ two }}\n    d\n  e\nnext: 1\n";
        let text = "a {{ one }} b\nc {{ two }}\n  d\ne\n";
        assert_eq!(at(src, 2, 3, text, "one"), (2, 8));
        assert_eq!(at(src, 2, 3, text, "b"), (3, 3));
        assert_eq!(at(src, 2, 3, text, "two"), (5, 8));
        assert_eq!(at(src, 2, 3, text, "d"), (6, 5));
        assert_eq!(at(src, 2, 3, text, "e\n"), (7, 3));
    }

    #[test]
    fn plain_multi_line() {
        let src = "text: first {{ a }}\n  second {{ b }}\n\n  third\nnext: 1\n";
        let text = "first {{ a }} second {{ b }}\nthird";
        assert_eq!(at(src, 1, 7, text, "a }}"), (1, 16));
        assert_eq!(at(src, 1, 7, text, "second"), (2, 3));
        assert_eq!(at(src, 1, 7, text, "b }}"), (2, 13));
        assert_eq!(at(src, 1, 7, text, "third"), (4, 3));
    }

    #[test]
    fn plain_stops_at_comment() {
        let src = "text: hi {{ x }} # trailing\n";
        assert_eq!(at(src, 1, 7, "hi {{ x }}", "x"), (1, 13));
    }

    #[test]
    fn quoted_multi_line() {
        let src = "text: \"one {{ a }}\n  two {{ b }}\"\n";
        let text = "one {{ a }} two {{ b }}";
        assert_eq!(at(src, 1, 7, text, "a }}"), (1, 15));
        assert_eq!(at(src, 1, 7, text, "b }}"), (2, 10));
        let src = "text: \"one\\\n   two {{ b }}\"\n";
        assert_eq!(at(src, 1, 7, "onetwo {{ b }}", "b }}"), (2, 11));
        let src = "text: 'one\n\n  it''s {{ b }}'\n";
        assert_eq!(at(src, 1, 7, "one\nit's {{ b }}", "b }}"), (3, 12));
    }

    #[test]
    fn offsets_past_the_end_and_inside_chars() {
        let src = "text: héllo\n";
        let o = origin(src, 1, 7);
        assert_eq!(o.span_at("héllo", 99), Span::new("f.yaml".into(), 1, 12));
        // Byte 2 is inside `é`: maps to `é` itself.
        assert_eq!(o.span_at("héllo", 2), Span::new("f.yaml".into(), 1, 8));
        let lit = origin("t: |\n  ab\n", 2, 3);
        assert_eq!(lit.span_at("ab\n", 99), Span::new("f.yaml".into(), 3, 3));
    }

    #[test]
    fn never_line_zero_or_panics() {
        let sources = [
            "",
            "\n\n",
            "text: |\n",
            "text: >\n\n",
            "x: \"unterminated\n",
            "x: 'a\n",
            "x: \"\\",
            "x: \"\\u12\"",
            "- |\n  a\n- b\n",
            "\r\n\r\n",
        ];
        for src in sources {
            for line in 0..5 {
                for column in 0..12 {
                    let o = origin(src, line, column);
                    for text in [
                        "",
                        "a",
                        "a\nb",
                        "\n\n\n",
                        "ünï\ncode",
                        "xxxxxxxxxxxxxxxxxxxx",
                    ] {
                        for offset in 0..text.len() + 2 {
                            let s = o.span_at(text, offset);
                            assert!(s.line >= 1 && s.column >= 1, "{src:?} {line}:{column}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn headers() {
        assert!(block_header("text: |").is_some());
        assert!(block_header("text: >- # c").is_some());
        assert!(block_header("- |2").is_some());
        assert!(block_header("text: |+9").is_some());
        assert!(block_header("text: a|").is_none());
        assert!(block_header("text: |x").is_none());
        assert!(block_header("text: |2+-").is_none());
        assert!(block_header("text: '|'").is_none());
        assert!(block_header("text: # |").is_none());
        assert_eq!(block_header("key: >3 #c").map(|(_, i)| i), Some(Some(3)));
    }
}

//! The human rendering: rustc-style diagnostics, header, location, the source line with a caret
//! under the span, and help. The line comes from the text read when the file was loaded
//! ([`SourceFiles`]); no file is read again. Secrets are masked: any span a
//! `literal-secret` diagnostic points at is printed as `*`, in every snippet that shows
//! that line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;

use super::commands::displayed;
use super::mask::mask;
use super::shown::{Shown, cap_per_file, more_text};
use super::style::Style;
use super::validation::{PresetOutcome, ValidationReport};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, Span};
use crate::source_files::SourceFiles;

/// Shown for one tab in a snippet.
const TAB: &str = "    ";

/// The widest source line a snippet shows, in columns (a tab takes 4). A longer line is
/// cut around the span, with `…` where text is left out.
pub const MAX_SNIPPET_WIDTH: usize = 120;

/// Columns kept before the span when a long line is cut on the left.
const CONTEXT_BEFORE: usize = 40;

/// Marks where a long line was cut (one column wide).
const CUT: char = '\u{2026}';

/// A file and a line in it.
type LineKey = (Arc<str>, u32);

/// Renders diagnostics for humans.
#[derive(Debug)]
pub struct HumanRenderer<'a> {
    style: Style,
    /// The text of the files the diagnostics point into.
    sources: &'a SourceFiles,
    /// Columns that hold secrets (never printed), by line: sorted, disjoint
    /// `[start, end)` ranges.
    secrets: HashMap<LineKey, Vec<(u32, u32)>>,
    /// Lines already masked: a long line with many diagnostics is masked once.
    masked: RefCell<HashMap<LineKey, Rc<str>>>,
}

impl<'a> HumanRenderer<'a> {
    /// A renderer for `list`, whose spans point into `sources` (its secrets collected).
    pub fn new(style: Style, sources: &'a SourceFiles, list: &[Diagnostic]) -> Self {
        let mut secrets: HashMap<LineKey, Vec<(u32, u32)>> = HashMap::new();
        for span in list
            .iter()
            .filter(|d| d.kind == DiagnosticKind::LiteralSecret)
            .filter_map(|d| d.span.as_ref())
        {
            secrets
                .entry((Arc::clone(&span.file), span.line))
                .or_default()
                .push((span.column, span.column.saturating_add(span.len)));
        }
        for ranges in secrets.values_mut() {
            *ranges = merged(std::mem::take(ranges));
        }
        HumanRenderer {
            style,
            sources,
            secrets,
            masked: RefCell::default(),
        }
    }

    /// Every diagnostic, each followed by a blank line; at most
    /// [`MAX_SHOWN_PER_FILE`](super::shown::MAX_SHOWN_PER_FILE) per file, then a note
    /// saying how many more there are.
    pub fn render_all(&self, list: &[Diagnostic]) -> String {
        let mut out = String::new();
        for item in cap_per_file(list) {
            match item {
                Shown::Diagnostic(d) => out.push_str(&self.render(d)),
                Shown::More { file, count } => {
                    let note = more_text(file, count);
                    let _ = writeln!(out, "{}: {}", self.style.bold("note"), mask(&note));
                }
            }
            out.push('\n');
        }
        out
    }

    /// One diagnostic:
    ///
    /// ```text
    /// error[P0103]: unknown tool `read_fiel`
    ///  --> .agent-presets/reviewer.yaml:7:12
    ///   |
    /// 7 |   allow: [read_fiel, grep]
    ///   |           ^^^^^^^^^
    ///   |
    ///   = help: did you mean `read_file`?
    /// ```
    pub fn render(&self, d: &Diagnostic) -> String {
        let style = self.style;
        let mut out = String::new();
        let severity = match d.severity {
            Severity::Error => style.error(format!("error[{}]", d.code())),
            Severity::Warning => style.warning(format!("warning[{}]", d.code())),
        };
        let _ = writeln!(out, "{severity}: {}", style.bold(displayed(&d.message)));
        let Some(span) = &d.span else {
            if let Some(help) = &d.help {
                let _ = writeln!(out, "  = {}: {}", style.bold("help"), displayed(help));
            }
            return out;
        };
        let number = span.line.to_string();
        let pad = " ".repeat(number.len());
        let _ = writeln!(out, "{pad}{} {span}", style.gutter("-->"));
        let bar = style.gutter("|");
        if let Some(text) = self.sources.line(&span.file, span.line) {
            let (shown, before, under) = self.layout(span, text);
            let marker = match d.severity {
                Severity::Error => style.error("^".repeat(under)),
                Severity::Warning => style.warning("^".repeat(under)),
            };
            let _ = writeln!(out, "{pad} {bar}");
            let _ = writeln!(out, "{} {bar} {shown}", style.gutter(&number));
            let _ = writeln!(out, "{pad} {bar} {}{marker}", " ".repeat(before));
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "{pad} {bar}");
            let _ = writeln!(out, "{pad} = {}: {}", style.bold("help"), displayed(help));
        }
        out
    }

    /// The line as shown (tabs expanded, secrets masked, cut to [`MAX_SNIPPET_WIDTH`]
    /// around the span), the display width before the span, and the display width
    /// under it (at least 1), both in the line as shown.
    fn layout(&self, span: &Span, text: &str) -> (String, usize, usize) {
        let key = (Arc::clone(&span.file), span.line);
        let secrets = self.secrets.get(&key).map_or(&[][..], Vec::as_slice);
        // Secrets the validator did not get to (the file failed to parse) are masked too.
        let text = self.masked_line(key, text);
        let start = span.column.max(1);
        let end = start.saturating_add(span.len.max(1));

        // Widths before and under the span, and the line's width, or enough of it to
        // know it must be cut.
        let (mut before, mut under, mut total) = (0usize, 0usize, 0usize);
        // Where the span starts: byte and column (past the end: the line's end).
        let mut at_start: Option<(usize, u32)> = None;
        let mut columns = 1u32;
        for (column, (byte, c)) in (1u32..).zip(text.char_indices()) {
            let width = cell_width(c);
            if column < start {
                before += width;
            } else {
                at_start.get_or_insert((byte, column));
                if column < end {
                    under += width;
                }
            }
            total += width;
            columns = column + 1;
            if column >= end && total > before + MAX_SNIPPET_WIDTH {
                break;
            }
        }
        let (start_byte, start_column) = at_start.unwrap_or((text.len(), columns));
        let under = under.max(1);
        let window = Window::around(before, under, total);

        // Walk back from the span to where the window starts (a few dozen columns).
        let (mut pos, mut byte, mut column) = (before, start_byte, start_column);
        for c in text[..start_byte].chars().rev() {
            if pos <= window.left {
                break;
            }
            pos -= cell_width(c);
            byte -= c.len_utf8();
            column -= 1;
        }
        let mut shown = String::with_capacity(MAX_SNIPPET_WIDTH + 8);
        if window.cut_left {
            shown.push(CUT);
        }
        for (column, c) in (column..).zip(text[byte..].chars()) {
            if pos >= window.right {
                break;
            }
            let width = cell_width(c);
            let visible = (pos + width).min(window.right) - pos.max(window.left);
            if visible < width {
                // A tab cut by the window: its visible columns.
                shown.extend(std::iter::repeat_n(' ', visible));
            } else if c == '\t' {
                shown.push_str(TAB);
            } else if in_ranges(secrets, column) {
                shown.push('*');
            } else {
                shown.push(c);
            }
            pos += width;
        }
        if window.cut_right {
            shown.push(CUT);
        }
        let shown_before = before - window.left + usize::from(window.cut_left);
        let shown_under = (before + under).min(window.right).saturating_sub(before);
        (shown, shown_before, shown_under.max(1))
    }

    /// `text` (line `key`) with secrets and control characters masked, computed once
    /// per line.
    fn masked_line(&self, key: LineKey, text: &str) -> Rc<str> {
        if let Some(line) = self.masked.borrow().get(&key) {
            return Rc::clone(line);
        }
        let line: Rc<str> = mask(text).into();
        self.masked.borrow_mut().insert(key, Rc::clone(&line));
        line
    }
}

impl ValidationReport {
    /// rustc-style diagnostics (with snippets from `sources`; a note for each file's
    /// diagnostics beyond the cap), then the summary line.
    pub fn human(&self, style: Style, sources: &SourceFiles) -> String {
        let shown = self.shown_for_people();
        let renderer = HumanRenderer::new(style, sources, &shown);
        let mut out = renderer.render_all(&shown);
        for note in self.presets().iter().filter_map(PresetOutcome::parent_note) {
            out.push_str(&format!("{}: {}\n\n", style.bold("note"), mask(&note)));
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }
}

/// The columns of a line a snippet shows: `[left, right)` in display columns of the
/// whole line, and whether text was cut on either side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Window {
    left: usize,
    right: usize,
    cut_left: bool,
    cut_right: bool,
}

impl Window {
    /// The window for a span `before` columns into a line of `total` columns (a lower
    /// bound when the line is long), covering `under` columns: the whole line when it
    /// fits, else from the line's start when the span starts in the first half, else
    /// from [`CONTEXT_BEFORE`] columns before the span. Cut marks take a column each.
    fn around(before: usize, under: usize, total: usize) -> Window {
        if total <= MAX_SNIPPET_WIDTH {
            return Window {
                left: 0,
                right: total,
                cut_left: false,
                cut_right: false,
            };
        }
        let fits = before + under < MAX_SNIPPET_WIDTH - 1 || before <= MAX_SNIPPET_WIDTH / 2;
        let left = if fits { 0 } else { before - CONTEXT_BEFORE };
        let cut_left = left > 0;
        let mut right = left + MAX_SNIPPET_WIDTH - usize::from(cut_left);
        let cut_right = total > right;
        if cut_right {
            right -= 1;
        } else {
            right = total;
        }
        Window {
            left,
            right,
            cut_left,
            cut_right,
        }
    }
}

/// Columns a character takes in a snippet.
fn cell_width(c: char) -> usize {
    if c == '\t' { TAB.len() } else { 1 }
}

/// Sorted, merged copies of `ranges`.
fn merged(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Is `column` in one of the sorted, disjoint `ranges`?
fn in_ranges(ranges: &[(u32, u32)], column: u32) -> bool {
    let i = ranges.partition_point(|(a, _)| *a <= column);
    i > 0 && column < ranges[i - 1].1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source_files::SourceText;

    fn sources(lines: &[&str]) -> SourceFiles {
        let mut files = SourceFiles::new();
        files.insert("f.yaml", SourceText::new(lines.join("\n")));
        files
    }

    fn renderer<'a>(sources: &'a SourceFiles, list: &[Diagnostic]) -> HumanRenderer<'a> {
        HumanRenderer::new(Style::plain(), sources, list)
    }

    #[test]
    fn caret_under_the_span() {
        let d = Diagnostic::new(DiagnosticKind::UnknownTool, "unknown tool `read_fiel`")
            .at(Span::new("f.yaml".into(), 2, 11).with_len(9))
            .help("did you mean `read_file`?");
        let files = sources(&["tools:", "  allow: [read_fiel, grep]"]);
        let r = renderer(&files, std::slice::from_ref(&d));
        assert_eq!(
            r.render(&d),
            "error[P0103]: unknown tool `read_fiel`\n \
             --> f.yaml:2:11\n  |\n2 |   allow: [read_fiel, grep]\n  |           ^^^^^^^^^\n  |\n  \
             = help: did you mean `read_file`?\n"
        );
    }

    #[test]
    fn secrets_are_masked_in_every_snippet_of_their_line() {
        let secret = Diagnostic::new(DiagnosticKind::LiteralSecret, "looks like a key")
            .at(Span::new("f.yaml".into(), 1, 12).with_len(6));
        let other = Diagnostic::new(DiagnosticKind::UnknownKey, "unknown key `apiKey`")
            .at(Span::new("f.yaml".into(), 1, 3).with_len(6));
        let list = [secret.clone(), other.clone()];
        let files = sources(&["  apiKey: \"sk-abc\""]);
        let r = renderer(&files, &list);
        for d in &list {
            let text = r.render(d);
            assert!(!text.contains("sk-abc"), "{text}");
            assert!(text.contains("\"******\""), "{text}");
        }
        assert!(r.render(&secret).contains("|            ^^^^^^\n"));
    }

    #[test]
    fn tabs_expand_and_carets_follow() {
        let d =
            Diagnostic::new(DiagnosticKind::YamlSyntax, "tab").at(Span::new("f.yaml".into(), 1, 2));
        let files = sources(&["\tx"]);
        let r = renderer(&files, std::slice::from_ref(&d));
        assert!(
            r.render(&d).contains("1 |     x\n  |     ^\n"),
            "{}",
            r.render(&d)
        );
    }

    #[test]
    fn no_span_and_wide_line_numbers() {
        let d = Diagnostic::new(DiagnosticKind::Io, "cannot read").help("check the path");
        let files = sources(&[]);
        let r = renderer(&files, std::slice::from_ref(&d));
        assert_eq!(
            r.render(&d),
            "error[P0009]: cannot read\n  = help: check the path\n"
        );
        let d =
            Diagnostic::new(DiagnosticKind::YamlSyntax, "x").at(Span::new("g.yaml".into(), 120, 1));
        let files = sources(&[]);
        let r = renderer(&files, std::slice::from_ref(&d));
        assert_eq!(r.render(&d), "error[P0001]: x\n   --> g.yaml:120:1\n");
    }

    /// The snippet's line and caret lines (without the gutter) for a span on line 1.
    fn cut(line: &str, column: u32, len: u32) -> (String, String) {
        let d = Diagnostic::new(DiagnosticKind::UnknownKey, "x").at(Span::new(
            "f.yaml".into(),
            1,
            column,
        )
        .with_len(len));
        let files = sources(&[line]);
        let text = renderer(&files, std::slice::from_ref(&d)).render(&d);
        let lines: Vec<&str> = text.lines().collect();
        let strip = |l: &str| {
            l.split_once("| ")
                .map(|(_, r)| r.to_owned())
                .unwrap_or_default()
        };
        (strip(lines[3]), strip(lines[4]))
    }

    /// Where the caret starts, in characters of the shown line, and what it covers.
    fn under(shown: &str, caret: &str) -> (usize, String) {
        let at = caret.find('^').unwrap();
        let len = caret.matches('^').count();
        (at, shown.chars().skip(at).take(len).collect())
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        // Near the start: only the end is cut.
        let line = format!("key: {}", "v".repeat(500));
        let (shown, caret) = cut(&line, 1, 3);
        assert_eq!(shown.chars().count(), MAX_SNIPPET_WIDTH);
        assert!(shown.starts_with("key: vvv") && shown.ends_with("v\u{2026}"));
        assert_eq!(under(&shown, &caret), (0, "key".to_owned()));

        // Far in: both ends are cut, 40 columns of context before the span.
        let line = format!("{}needle{}", "a".repeat(1000), "b".repeat(1000));
        let (shown, caret) = cut(&line, 1001, 6);
        assert_eq!(shown.chars().count(), MAX_SNIPPET_WIDTH);
        assert!(shown.starts_with('\u{2026}') && shown.ends_with('\u{2026}'));
        assert_eq!(
            under(&shown, &caret),
            (1 + CONTEXT_BEFORE, "needle".to_owned())
        );

        // At the very end: no cut on the right.
        let line = format!("{}end", "a".repeat(1000));
        let (shown, caret) = cut(&line, 1001, 3);
        assert!(shown.starts_with('\u{2026}') && shown.ends_with("aend"));
        assert_eq!(
            under(&shown, &caret),
            (1 + CONTEXT_BEFORE, "end".to_owned())
        );
        // Just past the end (a missing value): the caret follows the last character.
        let (shown, caret) = cut(&line, 1004, 1);
        assert_eq!(caret.find('^'), Some(shown.chars().count()));

        // A span longer than the window: the caret runs to the cut mark.
        let line = format!("x: {}", "y".repeat(1000));
        let (shown, caret) = cut(&line, 4, 1000);
        let (at, covered) = under(&shown, &caret);
        assert_eq!(at, 3);
        assert_eq!(covered, "y".repeat(MAX_SNIPPET_WIDTH - 4));
        assert!(shown.ends_with('\u{2026}'));

        // Lines that fit are never cut.
        let line = "z".repeat(MAX_SNIPPET_WIDTH);
        assert_eq!(cut(&line, 120, 1).0, line);
    }

    #[test]
    fn cut_lines_keep_tabs_secrets_and_wide_characters_in_place() {
        // A tab cut in half by the window shows as its visible columns.
        // (The window starts 40 columns before `key`: at column 162, in the tab.)
        let line = format!(
            "{}\t{}key{}",
            "a".repeat(160),
            "é".repeat(38),
            "b".repeat(300)
        );
        let (shown, caret) = cut(&line, 160 + 1 + 38 + 1, 3);
        assert!(shown.starts_with("\u{2026}  ééé"), "{shown}");
        assert_eq!(
            under(&shown, &caret),
            (1 + CONTEXT_BEFORE, "key".to_owned())
        );
        // A key far into a long line stays masked in the cut line.
        let key = "sk-test0000000000000000000000000000";
        let line = format!("{}apiKey: {key} {}", "a".repeat(500), "b".repeat(500));
        let d = Diagnostic::new(DiagnosticKind::LiteralSecret, "a key").at(Span::new(
            "f.yaml".into(),
            1,
            509,
        )
        .with_len(35));
        let files = sources(&[&line]);
        let text = renderer(&files, std::slice::from_ref(&d)).render(&d);
        assert!(!text.contains("sk-test"), "{text}");
        assert!(text.contains(&"*".repeat(35)), "{text}");
    }

    #[test]
    fn at_most_200_per_file_then_a_note() {
        let list = crate::report::shown::unknown_keys("f.yaml", 1..=250);
        let files = sources(&[]);
        let text = renderer(&files, &list).render_all(&list);
        assert_eq!(text.matches("error[P0003]").count(), 200);
        assert!(text.contains("key 200\n") && !text.contains("key 201\n"));
        assert!(text.ends_with(
            "note: 50 more diagnostics in `f.yaml` are not shown (at most 200 are shown per file)\n\n"
        ));
    }
}

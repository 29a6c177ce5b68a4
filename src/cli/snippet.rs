//! rustc-style rendering of diagnostics: header, location, the source line with a caret
//! under the span, and help. The line comes from the text read when the file was loaded
//! ([`SourceFiles`]); no file is read again. Secrets are masked: any span a
//! `literal-secret` diagnostic points at is printed as `*`, in every snippet that shows
//! that line.

use std::fmt::Write as _;

use super::secrets::mask;
use super::style::Style;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, Span};
use crate::source_files::SourceFiles;

/// Shown for one tab in a snippet.
const TAB: &str = "    ";

/// Renders diagnostics for humans.
#[derive(Debug)]
pub(crate) struct HumanRenderer<'a> {
    style: Style,
    /// The text of the files the diagnostics point into.
    sources: &'a SourceFiles,
    /// Spans that hold secrets: never printed.
    secrets: Vec<Span>,
}

impl<'a> HumanRenderer<'a> {
    /// A renderer for `list`, whose spans point into `sources` (its secrets collected).
    pub(crate) fn new(style: Style, sources: &'a SourceFiles, list: &[Diagnostic]) -> Self {
        HumanRenderer {
            style,
            sources,
            secrets: list
                .iter()
                .filter(|d| d.kind == DiagnosticKind::LiteralSecret)
                .filter_map(|d| d.span.clone())
                .collect(),
        }
    }

    /// Every diagnostic, each followed by a blank line.
    pub(crate) fn render_all(&self, list: &[Diagnostic]) -> String {
        let mut out = String::new();
        for d in list {
            out.push_str(&self.render(d));
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
    pub(crate) fn render(&self, d: &Diagnostic) -> String {
        let style = self.style;
        let mut out = String::new();
        let severity = match d.severity {
            Severity::Error => style.error(format!("error[{}]", d.code())),
            Severity::Warning => style.warning(format!("warning[{}]", d.code())),
        };
        let _ = writeln!(out, "{severity}: {}", style.bold(mask(&d.message)));
        let Some(span) = &d.span else {
            if let Some(help) = &d.help {
                let _ = writeln!(out, "  = {}: {}", style.bold("help"), mask(help));
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
            let _ = writeln!(out, "{pad} = {}: {}", style.bold("help"), mask(help));
        }
        out
    }

    /// The line as shown (tabs expanded, secrets masked), the display width before the
    /// span, and the display width under it (at least 1).
    fn layout(&self, span: &Span, text: &str) -> (String, usize, usize) {
        let masked: Vec<(u32, u32)> = self
            .secrets
            .iter()
            .filter(|s| s.file == span.file && s.line == span.line)
            .map(|s| (s.column, s.column.saturating_add(s.len)))
            .collect();
        let start = span.column.max(1);
        let end = start.saturating_add(span.len.max(1));
        // Secrets the validator did not get to (the file failed to parse) are masked too.
        let text = mask(text);
        let mut shown = String::with_capacity(text.len());
        let (mut before, mut under) = (0usize, 0usize);
        for (column, c) in (1u32..).zip(text.chars()) {
            let secret = masked.iter().any(|(a, b)| (*a..*b).contains(&column));
            let piece: &str = match c {
                '\t' => TAB,
                _ if secret => "*",
                _ => "",
            };
            let width = if piece.is_empty() { 1 } else { piece.len() };
            if piece.is_empty() {
                shown.push(c);
            } else {
                shown.push_str(piece);
            }
            if column < start {
                before += width;
            } else if column < end {
                under += width;
            }
        }
        (shown, before, under.max(1))
    }
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
}

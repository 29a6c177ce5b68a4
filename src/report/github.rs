//! The GitHub Actions rendering: one workflow command (`::error file=…`) per diagnostic,
//! so a workflow run annotates the lines of a pull request.

use super::commands::displayed;
use super::mask::mask;
use super::shown::{Shown, more_text};
use super::validation::{ValidationReport, message_with_help};
use crate::diagnostic::Severity;

impl ValidationReport {
    /// One `::error`/`::warning` workflow command per diagnostic (a `::notice` for each
    /// file's diagnostics beyond the cap), then the summary. With `deny_warnings`,
    /// warnings are `::error`s: they fail the run like errors do.
    pub fn github(&self, deny_warnings: bool) -> String {
        let mut out = self.github_annotations(deny_warnings);
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// [`Self::github`] without the summary line (for a command with a summary of its
    /// own, `test`).
    pub fn github_annotations(&self, deny_warnings: bool) -> String {
        let mut out = String::new();
        for item in self.shown_for_annotations() {
            let d = match item {
                Shown::Diagnostic(d) => d,
                Shown::More { file, count } => {
                    let location = file
                        .map(|f| format!(" file={}", escape_property(f)))
                        .unwrap_or_default();
                    let text = mask(&more_text(file, count)).into_owned();
                    out.push_str(&format!("::notice{location}::{}\n", escape_data(&text)));
                    continue;
                }
            };
            let level = match d.severity {
                Severity::Warning if !deny_warnings => "warning",
                _ => "error",
            };
            let mut properties = Vec::new();
            if let Some(span) = &d.span {
                properties.push(format!("file={}", escape_property(&span.file)));
                properties.push(format!("line={}", span.line));
                properties.push(format!("endLine={}", span.line));
                properties.push(format!("col={}", span.column));
                // The last column the annotation covers (GitHub's end column is inclusive).
                let end = span.column.saturating_add(span.len.max(1) - 1);
                properties.push(format!("endColumn={end}"));
            }
            properties.push(format!(
                "title={}",
                escape_property(&format!("{} {}", d.code(), d.kind.name()))
            ));
            let message = displayed(&message_with_help(d, "")).into_owned();
            out.push_str(&format!(
                "::{level} {}::{}\n",
                properties.join(","),
                escape_data(&message)
            ));
        }
        out
    }
}

/// Workflow command data: `%`, CR and LF escaped.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow command property values: also `:` and `,`.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

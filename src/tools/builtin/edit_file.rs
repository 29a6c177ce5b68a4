//! `edit_file`: replace an exact piece of text in a file, refusing when it is absent or
//! ambiguous.

use std::future::Future;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::blocking::{CancelToken, run_blocking};
use super::workspace::{MAX_TEXT_FILE_BYTES, read_text_file, resolve, write_atomic};
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// Arguments of `edit_file`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path of the file to edit, relative to the workspace root.
    pub path: String,
    /// The exact text to replace, including whitespace and indentation. It must occur exactly once unless `replace_all` is true.
    pub old_string: String,
    /// The text to put in its place (may be empty to delete `old_string`).
    pub new_string: String,
    /// Replace every occurrence of `old_string` instead of requiring exactly one. Defaults to false.
    pub replace_all: Option<bool>,
}

/// The `edit_file` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct EditFile;

impl Tool for EditFile {
    type Args = EditFileArgs;

    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> &str {
        TOOL_EDIT_FILE_DESCRIPTION.text
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it names another tool only while that one is visible.
        Some(ToolGuidance::templated(
            1040.0,
            TOOL_EDIT_FILE_GUIDANCE.text,
        ))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(30))
    }

    fn call(
        &self,
        args: EditFileArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// How many line numbers an "ambiguous" error lists.
const MAX_LISTED_LINES: usize = 10;

/// The work of `edit_file` (a free function, so the future borrows nothing from the tool).
/// Reading, searching, replacing and writing a file of up to 16 MiB is blocking work: it
/// runs as one task on the blocking pool, so the registry's timeout can fire, and a call
/// dropped before the write leaves the file unchanged.
async fn handle(args: EditFileArgs, ctx: ToolContext) -> Result<String, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::text(&TOOL_EDIT_FILE_ERROR_EMPTY, vec![])
            .hint_text(&TOOL_EDIT_FILE_HINT_EMPTY, vec![]));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::text(&TOOL_EDIT_FILE_ERROR_IDENTICAL, vec![])
            .hint_text(&TOOL_EDIT_FILE_HINT_IDENTICAL, vec![]));
    }
    run_blocking(&TOOLS_WORK_EDIT, move |cancel| edit(&args, &ctx, cancel)).await?
}

fn edit(args: &EditFileArgs, ctx: &ToolContext, cancel: &CancelToken) -> Result<String, ToolError> {
    let path = resolve(ctx, &args.path)?;
    let text = read_text_file(&path)?;
    let replace_all = args.replace_all.unwrap_or(false);
    let old = search_form(&text, &args.old_string);
    let found = Occurrences::find(&text, &old);
    if found.count == 0 {
        return Err(
            ToolError::text(&TOOL_EDIT_FILE_ERROR_NOT_FOUND, vals![path = &path.shown])
                .hint_text(&TOOL_EDIT_FILE_HINT_NOT_FOUND, vec![]),
        );
    }
    if !replace_all {
        if found.count > 1 {
            return Err(ToolError::text(
                &TOOL_EDIT_FILE_ERROR_MANY,
                vec![
                    ("count", thousands(found.count).into()),
                    ("path", (&path.shown).into()),
                    ("lines", found.listed_lines_in(ctx.texts()).into()),
                ],
            )
            .hint_text(&TOOL_EDIT_FILE_HINT_MANY, vec![]));
        }
        if let Some(second_line) = found.overlapping_line {
            return Err(ToolError::text(
                &TOOL_EDIT_FILE_ERROR_OVERLAP,
                vals![
                    path = &path.shown,
                    first = found.first_line(),
                    second = second_line
                ],
            )
            .hint_text(&TOOL_EDIT_FILE_HINT_MANY, vec![]));
        }
    }

    // A model usually sends `\n` line ends: new lines take those of the edited line.
    let new = if crlf_at(&text, found.first_start) {
        to_crlf(&args.new_string)
    } else {
        args.new_string.clone()
    };
    let replaced = if replace_all { found.count } else { 1 };
    let new_len = (text.len() - replaced * old.len()) as u64 + (replaced * new.len()) as u64;
    if new_len > MAX_TEXT_FILE_BYTES {
        return Err(ToolError::text(
            &TOOL_EDIT_FILE_ERROR_TOO_BIG,
            vals![
                path = &path.shown,
                bytes = new_len,
                max = MAX_TEXT_FILE_BYTES
            ],
        )
        .hint_text(&TOOL_EDIT_FILE_HINT_TOO_BIG, vec![]));
    }
    let updated = if replace_all {
        text.replace(old.as_str(), &new)
    } else {
        text.replacen(old.as_str(), &new, 1)
    };
    write_atomic(&path, updated.as_bytes(), cancel)?;
    let first_line = found.first_line();
    let shown = path.shown.told(ctx.texts());
    let values = [
        ("path", shown.as_str()),
        ("line", &first_line.to_string()),
        ("count", &thousands(replaced)),
    ];
    Ok(match replaced {
        1 => ctx.texts().render(&TOOL_EDIT_FILE_RESULT_ONE, &values),
        _ => ctx.texts().render(&TOOL_EDIT_FILE_RESULT_MANY, &values),
    })
}

/// `old` as it is searched for. A model usually sends `\n` line ends: a multi-line `old`
/// that is not found as given in a file with `\r\n` line ends is searched for with
/// `\r\n` line ends. (One found as given — a file with mixed line ends — stays as it is.)
fn search_form(text: &str, old: &str) -> String {
    let has_bare_lf = old.replace("\r\n", "").contains('\n');
    if has_bare_lf && !text.contains(old) && text.contains("\r\n") {
        to_crlf(old)
    } else {
        old.to_owned()
    }
}

/// Does the line at byte `at` end with `\r\n`? (For a last line without a line end:
/// does the file's first line?)
fn crlf_at(text: &str, at: usize) -> bool {
    let line_end = match text[at..].find('\n') {
        Some(i) => at + i,
        None => match text.find('\n') {
            Some(i) => i,
            None => return false,
        },
    };
    text[..line_end].ends_with('\r')
}

fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Where a string occurs in a text, found in one pass.
struct Occurrences {
    /// Non-overlapping occurrences (what `replace_all` replaces).
    count: usize,
    /// Byte offset of the first occurrence.
    first_start: usize,
    /// Line numbers of the first [`MAX_LISTED_LINES`] occurrences.
    lines: Vec<usize>,
    /// When there is exactly one non-overlapping occurrence: the line of another one that
    /// overlaps it (`aa` in `aaa`), which makes it ambiguous all the same.
    overlapping_line: Option<usize>,
}

impl Occurrences {
    fn find(text: &str, needle: &str) -> Self {
        let mut count = 0;
        let mut lines = Vec::new();
        let mut first_start = 0;
        // Line numbers are counted incrementally, up to the last listed occurrence only.
        let mut line = 1;
        let mut counted_to = 0;
        for (start, _) in text.match_indices(needle) {
            if count == 0 {
                first_start = start;
            }
            count += 1;
            if lines.len() < MAX_LISTED_LINES {
                line += newlines(&text[counted_to..start]);
                counted_to = start;
                lines.push(line);
            }
        }
        let mut overlapping_line = None;
        if count == 1 {
            // Any other occurrence starts inside the first one (otherwise it would have
            // been found above).
            let next = first_start + text[first_start..].chars().next().map_or(1, char::len_utf8);
            if let Some(i) = text[next..].find(needle) {
                let start = next + i;
                overlapping_line =
                    Some(lines.first().copied().unwrap_or(1) + newlines(&text[first_start..start]));
            }
        }
        Occurrences {
            count,
            first_start,
            lines,
            overlapping_line,
        }
    }

    fn first_line(&self) -> usize {
        self.lines.first().copied().unwrap_or(1)
    }

    /// `lines 1, 3, 5` or `lines 1, 2, …, 10 and 99,990 more`.
    #[cfg(test)]
    fn listed_lines(&self) -> String {
        self.listed_lines_in(&crate::texts::Texts::english())
    }

    /// [`listed_lines`](Self::listed_lines) in `texts`.
    fn listed_lines_in(&self, texts: &crate::texts::Texts) -> String {
        let listed: Vec<String> = self.lines.iter().map(|l| thousands(*l)).collect();
        let mut numbers = listed.join(", ");
        if self.count > self.lines.len() {
            numbers = texts.render(
                &TOOL_EDIT_FILE_RESULT_MORE,
                &[
                    ("lines", &numbers),
                    ("count", &thousands(self.count - self.lines.len())),
                ],
            );
        }
        let text = if listed.len() == 1 {
            &TOOL_EDIT_FILE_RESULT_LINE
        } else {
            &TOOL_EDIT_FILE_RESULT_LINES
        };
        texts.render(text, &[("lines", &numbers)])
    }
}

fn newlines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// `99990` as `99,990`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(99_990), "99,990");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn occurrences_count_lines_and_overlaps() {
        let found = Occurrences::find("foo\nbar\nfoo\n", "foo");
        assert_eq!((found.count, found.lines.clone()), (2, vec![1, 3]));
        assert_eq!(found.listed_lines(), "lines 1, 3");
        let found = Occurrences::find("x\naaa\n", "aa");
        assert_eq!((found.count, found.overlapping_line), (1, Some(2)));
        let found = Occurrences::find("aabaa", "aa");
        assert_eq!((found.count, found.overlapping_line), (2, None));
        let text = "x\n".repeat(25);
        let found = Occurrences::find(&text, "x");
        assert_eq!(
            found.listed_lines(),
            "lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 15 more"
        );
    }

    #[test]
    fn line_ends_follow_the_edited_line() {
        let crlf = "one\r\ntwo\r\n";
        assert_eq!(search_form(crlf, "one"), "one");
        assert_eq!(search_form(crlf, "one\ntwo"), "one\r\ntwo");
        assert_eq!(search_form("one\ntwo\n", "one\ntwo"), "one\ntwo");
        // Mixed line ends: found as given, taken as given.
        let mixed = "a\r\nb\nc\n";
        assert_eq!(search_form(mixed, "b\nc"), "b\nc");
        assert!(crlf_at(mixed, 0));
        assert!(!crlf_at(mixed, 3));
        // A last line without a line end follows the first line.
        assert!(crlf_at("a\r\nlast", 3));
        assert!(!crlf_at("a\nlast", 2));
        assert!(!crlf_at("no line end", 0));
    }
}

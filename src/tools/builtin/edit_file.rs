//! `edit_file`: replace an exact piece of text in a file, refusing when it is absent or
//! ambiguous.

use std::future::Future;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::workspace::{read_text_file, resolve, write_atomic};
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance};

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
        "Edit a text file by exact string replacement: `old_string` is replaced by \
         `new_string`. Fails when `old_string` is not in the file, or occurs more than once \
         and `replace_all` is not set. The file is rewritten atomically."
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        Some(ToolGuidance {
            order: 1040.0,
            text: "Use edit_file for targeted changes to existing files. Read the file first \
                   and copy `old_string` exactly as it appears, with its indentation, but \
                   without the line-number prefix read_file shows. Include enough \
                   surrounding lines that it matches exactly once; set `replace_all` only \
                   when you mean every occurrence (e.g. renaming a variable). For several \
                   separate changes, make several calls."
                .to_owned(),
        })
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

/// The work of `edit_file` (a free function, so the future borrows nothing from the tool).
async fn handle(args: EditFileArgs, ctx: ToolContext) -> Result<String, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::new("old_string is empty")
            .hint("to create a file or replace all of it use write_file; otherwise give the exact text to replace"));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::new(
            "old_string and new_string are identical, so there is nothing to change",
        )
        .hint("give the new text in new_string"));
    }
    let path = resolve(&ctx, &args.path)?;
    let text = read_text_file(&path).await?;
    let replace_all = args.replace_all.unwrap_or(false);

    // A model usually sends `\n` line ends; match a CRLF file's lines anyway and
    // keep its line ends.
    let (old, new) = if !text.contains(&args.old_string)
        && text.contains("\r\n")
        && args.old_string.contains('\n')
        && !args.old_string.contains('\r')
    {
        (
            args.old_string.replace('\n', "\r\n"),
            args.new_string.replace("\r\n", "\n").replace('\n', "\r\n"),
        )
    } else {
        (args.old_string.clone(), args.new_string.clone())
    };

    let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    match starts.len() {
        0 => {
            return Err(ToolError::new(format!(
                "old_string was not found in `{}`",
                path.shown
            ))
            .hint("read the file again and copy the exact text, including whitespace and indentation; leave out the line numbers read_file adds"));
        }
        n if n > 1 && !replace_all => {
            let lines: Vec<String> = starts.iter().map(|&s| line_of(s).to_string()).collect();
            return Err(ToolError::new(format!(
                "old_string occurs {n} times in `{}` (at lines {})",
                path.shown,
                lines.join(", ")
            ))
            .hint("include more surrounding context so it matches exactly once, or set replace_all to true to replace every occurrence"));
        }
        _ => {}
    }
    let first_line = line_of(starts[0]);
    let updated = if replace_all {
        text.replace(old.as_str(), &new)
    } else {
        text.replacen(old.as_str(), &new, 1)
    };
    write_atomic(&path, updated.as_bytes()).await?;
    Ok(match starts.len() {
        1 => format!(
            "Edited `{}`: replaced 1 occurrence at line {first_line}.",
            path.shown
        ),
        n => format!(
            "Edited `{}`: replaced {n} occurrences (first at line {first_line}).",
            path.shown
        ),
    })
}

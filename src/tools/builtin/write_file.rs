//! `write_file`: create or replace a whole file, atomically.

use std::future::Future;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::blocking::{CancelToken, run_blocking};
use super::limits::line_count;
use super::workspace::{MAX_TEXT_FILE_BYTES, resolve_for_write, write_atomic};
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// Arguments of `write_file`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path of the file, relative to the workspace root. Missing parent directories are created.
    pub path: String,
    /// The complete new contents of the file.
    pub content: String,
}

/// The `write_file` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteFile;

impl Tool for WriteFile {
    type Args = WriteFileArgs;

    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> &str {
        TOOL_WRITE_FILE_DESCRIPTION.text
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it names another tool only while that one is visible.
        Some(ToolGuidance::templated(
            1050.0,
            TOOL_WRITE_FILE_GUIDANCE.text,
        ))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(30))
    }

    fn call(
        &self,
        args: WriteFileArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `write_file` (a free function, so the future borrows nothing from the tool).
/// The whole write runs as one task on the blocking pool: if the call is dropped (the
/// registry's timeout), the task still finishes and removes its temporary file, leaving
/// the target unchanged.
async fn handle(args: WriteFileArgs, ctx: ToolContext) -> Result<String, ToolError> {
    run_blocking(&TOOLS_WORK_WRITE, move |cancel| write(&args, &ctx, cancel)).await?
}

fn write(
    args: &WriteFileArgs,
    ctx: &ToolContext,
    cancel: &CancelToken,
) -> Result<String, ToolError> {
    if args.content.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(ToolError::text(
            &TOOL_WRITE_FILE_ERROR_TOO_BIG,
            vals![bytes = args.content.len(), max = MAX_TEXT_FILE_BYTES],
        )
        .hint_text(&TOOL_WRITE_FILE_HINT_TOO_BIG, vec![]));
    }
    // Missing parent directories are created here, beneath the workspace root.
    let path = resolve_for_write(ctx, &args.path)?;
    let existed = path.exists();
    write_atomic(&path, args.content.as_bytes(), cancel)?;
    let lines = line_count(args.content.as_bytes());
    let text = match (existed, lines == 1) {
        (true, true) => &TOOL_WRITE_FILE_RESULT_OVERWROTE_ONE,
        (true, false) => &TOOL_WRITE_FILE_RESULT_OVERWROTE,
        (false, true) => &TOOL_WRITE_FILE_RESULT_CREATED_ONE,
        (false, false) => &TOOL_WRITE_FILE_RESULT_CREATED,
    };
    Ok(ctx.texts().render(
        text,
        &[
            ("path", &path.shown.told(ctx.texts())),
            ("bytes", &args.content.len().to_string()),
            ("lines", &lines.to_string()),
        ],
    ))
}

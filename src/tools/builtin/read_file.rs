//! `read_file`: a text file's lines, numbered like `cat -n`, a window at a time.

use std::future::Future;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::blocking::run_blocking;
use super::limits::cut_line;
use super::workspace::{read_text_file, resolve};
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// Arguments of `read_file`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path of the file, relative to the workspace root (an absolute path inside the workspace works too).
    pub path: String,
    /// Line number to start at, counting from 1. Defaults to 1.
    #[schemars(range(min = 1))]
    pub offset: Option<u32>,
    /// How many lines to show from `offset`. Defaults to (and is capped at) 2000.
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

/// The `read_file` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadFile;

impl Tool for ReadFile {
    type Args = ReadFileArgs;

    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        TOOL_READ_FILE_DESCRIPTION.text
    }

    fn read_only(&self) -> bool {
        true
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it names another tool only while that one is visible.
        Some(ToolGuidance::templated(
            1000.0,
            TOOL_READ_FILE_GUIDANCE.text,
        ))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(30))
    }

    fn call(
        &self,
        args: ReadFileArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `read_file` (a free function, so the future borrows nothing from the tool).
/// Reading and numbering a file of up to 16 MiB is blocking work: it runs on the blocking
/// pool, so the registry's timeout can fire.
async fn handle(args: ReadFileArgs, ctx: ToolContext) -> Result<String, ToolError> {
    run_blocking(&TOOLS_WORK_READ, move |_| read(&args, &ctx)).await?
}

fn read(args: &ReadFileArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let path = resolve(ctx, &args.path)?;
    let text = read_text_file(&path)?;
    let limits = *ctx.limits();
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return Ok(ctx.texts().render(
            &TOOL_READ_FILE_RESULT_EMPTY,
            &[("path", &path.shown.told(ctx.texts()))],
        ));
    }
    let offset = args.offset.map_or(1, |o| o.max(1) as usize);
    if offset > total {
        return Err(ToolError::text(
            &TOOL_READ_FILE_ERROR_OFFSET,
            vals![offset = offset, path = &path.shown, total = total],
        )
        .hint_text(&TOOL_READ_FILE_HINT_OFFSET, vals![total = total]));
    }
    let limit = args.limit.map_or(limits.max_lines, |l| {
        (l as usize).clamp(1, limits.max_lines)
    });
    let wanted_end = (offset - 1 + limit).min(total);

    let mut out = String::new();
    let mut last_shown = offset - 1;
    for (i, line) in lines[offset - 1..wanted_end].iter().enumerate() {
        let number = offset + i;
        let line = cut_line(
            line.strip_suffix('\r').unwrap_or(line),
            limits.max_line_chars,
            ctx.texts(),
        );
        let entry = format!("{number:>6}\t{line}\n");
        if out.len() + entry.len() > limits.max_bytes && number > offset {
            break;
        }
        out.push_str(&entry);
        last_shown = number;
    }
    if last_shown < total {
        let text = if last_shown < wanted_end {
            &TOOL_READ_FILE_RESULT_MORE_CUT
        } else {
            &TOOL_READ_FILE_RESULT_MORE
        };
        out.push_str(&ctx.texts().render(
            text,
            &[
                ("first", &offset.to_string()),
                ("last", &last_shown.to_string()),
                ("total", &total.to_string()),
                ("next", &(last_shown + 1).to_string()),
            ],
        ));
        out.push('\n');
    }
    Ok(out)
}

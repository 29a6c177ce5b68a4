//! `glob`: find files by a glob pattern over their paths.

use std::future::Future;
use std::time::Duration;

use globset::GlobBuilder;
use rustix::fs::FileType;
use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::{cap_text, echo};
use super::walk::{depth_note, run_blocking, stop_note, walk};
use super::workspace::{not_found, resolve, shown};
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// Most paths `glob` lists.
pub(crate) const MAX_GLOB_RESULTS: usize = 1_000;

/// Arguments of `glob`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob matched against paths relative to `path`: `*` stays within one directory, `**` crosses directories, `{a,b}` is either. Examples: `**/*.rs`, `src/*.{ts,tsx}`.
    pub pattern: String,
    /// Directory to search in, relative to the workspace root. Defaults to the root.
    pub path: Option<String>,
}

/// The `glob` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct Glob;

impl Tool for Glob {
    type Args = GlobArgs;

    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        TOOL_GLOB_DESCRIPTION.text
    }

    fn read_only(&self) -> bool {
        true
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it names another tool only while that one is visible.
        Some(ToolGuidance::templated(1020.0, TOOL_GLOB_GUIDANCE.text))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(60))
    }

    fn call(
        &self,
        args: GlobArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `glob` (a free function, so the future borrows nothing from the tool).
async fn handle(args: GlobArgs, ctx: ToolContext) -> Result<String, ToolError> {
    let base = resolve(&ctx, args.path.as_deref().unwrap_or("."))?;
    if !base.exists() {
        return Err(not_found(&base, &TOOLS_FILE_NOT_FOUND_DIRECTORY));
    }
    if !base.resolved.is_dir() {
        return Err(
            ToolError::text(&TOOL_GLOB_ERROR_NOT_A_DIRECTORY, vals![path = &base.shown])
                .hint_text(&TOOL_GLOB_HINT_NOT_A_DIRECTORY, vec![]),
        );
    }
    check_relative(&args.pattern)?;
    let matcher = GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ToolError::text(
                &TOOL_GLOB_ERROR_INVALID,
                vals![
                    pattern = echo(&args.pattern),
                    error = super::pattern_errors::glob_reason(e.kind(), ctx.texts())
                ],
            )
            .hint_text(&TOOL_GLOB_HINT_INVALID, vec![])
        })?
        .compile_matcher();
    let include_hidden = args.pattern.split('/').any(|c| c.starts_with('.'));
    let start = base.resolved.clone();
    let base_rel = start.relative();
    let walk_ctx = ctx.clone();
    let (found, total, too_deep, stop) = run_blocking(move |control| {
        let mut found = Vec::new();
        let mut total = 0usize;
        let mut stop = None;
        let mut entries = walk(walk_ctx.root(), start, include_hidden);
        for entry in entries.by_ref() {
            stop = control.stop();
            if stop.is_some() {
                break;
            }
            if entry.kind == FileType::Directory {
                continue;
            }
            let Ok(rel) = entry.relative.strip_prefix(&base_rel) else {
                continue;
            };
            if matcher.is_match(rel) {
                total += 1;
                if found.len() < MAX_GLOB_RESULTS {
                    found.push(shown(&entry.relative));
                }
            }
        }
        (found, total, entries.too_deep, stop)
    })
    .await?;

    let texts = ctx.texts();
    let pattern = echo(&args.pattern).told(texts);
    let shown = base.shown.told(texts);
    let values = [
        ("pattern", pattern.as_str()),
        ("path", shown.as_str()),
        ("count", &total.to_string()),
    ];
    let header = match total {
        0 => &TOOL_GLOB_RESULT_NONE,
        1 => &TOOL_GLOB_RESULT_ONE,
        _ => &TOOL_GLOB_RESULT_MANY,
    };
    let mut out = texts.render(header, &values);
    out.push('\n');
    for path in &found {
        out.push_str(path);
        out.push('\n');
    }
    if total > found.len() {
        out.push_str(&texts.render(
            &TOOL_GLOB_RESULT_MORE,
            &[("count", &(total - found.len()).to_string())],
        ));
        out.push('\n');
    }
    out.push_str(&depth_note(texts, too_deep));
    out.push_str(&stop_note(texts, stop));
    Ok(cap_text(
        &out,
        ctx.limits(),
        texts,
        texts.get(&TOOL_GLOB_RESULT_SEE_MORE),
    ))
}

/// Refuse a glob that could only match outside the search directory: matching is against
/// paths relative to it, so an absolute pattern or one that climbs with `..` would
/// silently match nothing.
pub(crate) fn check_relative(pattern: &str) -> Result<(), ToolError> {
    if pattern.starts_with('/') || pattern.split('/').any(|c| c == "..") {
        return Err(
            ToolError::text(&TOOL_GLOB_ERROR_ABSOLUTE, vals![pattern = echo(pattern)])
                .hint_text(&TOOL_GLOB_HINT_ABSOLUTE, vec![]),
        );
    }
    Ok(())
}

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
use crate::texts::{TOOL_GLOB_DESCRIPTION, TOOL_GLOB_GUIDANCE};
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance};

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
        return Err(not_found(&base, "directory"));
    }
    if !base.resolved.is_dir() {
        return Err(
            ToolError::new(format!("`{}` is not a directory", base.shown)).hint(
                "give the directory to search in as `path`, and the file name pattern as `pattern`",
            ),
        );
    }
    check_relative(&args.pattern)?;
    let matcher = GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ToolError::new(format!(
                "invalid glob `{}`: {}",
                echo(&args.pattern),
                e.kind()
            ))
            .hint("use `*`, `**`, `?`, `[abc]` and `{a,b}`, e.g. `**/*.rs`")
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

    let mut out = if total == 0 {
        format!(
            "No files match `{}` in `{}`.\n",
            echo(&args.pattern),
            base.shown
        )
    } else {
        format!(
            "{total} {} `{}` in `{}`:\n",
            if total == 1 {
                "file matches"
            } else {
                "files match"
            },
            echo(&args.pattern),
            base.shown
        )
    };
    for path in &found {
        out.push_str(path);
        out.push('\n');
    }
    if total > found.len() {
        out.push_str(&format!(
            "[... {} more paths not shown; use a narrower pattern or path]\n",
            total - found.len()
        ));
    }
    out.push_str(&depth_note(too_deep));
    out.push_str(&stop_note(stop));
    Ok(cap_text(
        &out,
        ctx.limits(),
        "use a narrower pattern or path",
    ))
}

/// Refuse a glob that could only match outside the search directory: matching is against
/// paths relative to it, so an absolute pattern or one that climbs with `..` would
/// silently match nothing.
pub(crate) fn check_relative(pattern: &str) -> Result<(), ToolError> {
    if pattern.starts_with('/') || pattern.split('/').any(|c| c == "..") {
        return Err(ToolError::new(format!(
            "the glob `{}` starts with `/` or contains `..`, but patterns are relative to the workspace root (or to `path` when given), so it cannot match anything",
            echo(pattern)
        ))
        .hint("write the pattern relative to the search directory, e.g. `src/**/*.rs`, and set `path` to search elsewhere in the workspace"));
    }
    Ok(())
}

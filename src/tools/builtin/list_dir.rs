//! `list_dir`: the entries of one directory.

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::time::Duration;

use rustix::fs::{AtFlags, FileType};
use schemars::JsonSchema;
use serde::Deserialize;

use super::beneath::{DirChain, ResolveError, read_entries};
use super::blocking::run_blocking;
use super::limits::{cap_text, echo};
use super::workspace::{io_error, not_found, open_dir, resolve};
use crate::texts::{TOOL_LIST_DIR_DESCRIPTION, TOOL_LIST_DIR_GUIDANCE};
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance};

/// Most entries `list_dir` shows.
pub(crate) const MAX_ENTRIES: usize = 1_000;

/// Arguments of `list_dir`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list, relative to the workspace root. Defaults to the root (`.`).
    pub path: Option<String>,
}

/// The `list_dir` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListDir;

impl Tool for ListDir {
    type Args = ListDirArgs;

    fn name(&self) -> &str {
        "list_dir"
    }

    fn description(&self) -> &str {
        TOOL_LIST_DIR_DESCRIPTION.text
    }

    fn read_only(&self) -> bool {
        true
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it names another tool only while that one is visible.
        Some(ToolGuidance::templated(1010.0, TOOL_LIST_DIR_GUIDANCE.text))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(30))
    }

    fn call(
        &self,
        args: ListDirArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `list_dir` (a free function, so the future borrows nothing from the tool).
/// Listing runs on the blocking pool, on the directory's descriptor.
async fn handle(args: ListDirArgs, ctx: ToolContext) -> Result<String, ToolError> {
    run_blocking("listing", move |_| list(&args, &ctx)).await?
}

fn list(args: &ListDirArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let path = resolve(ctx, args.path.as_deref().unwrap_or("."))?;
    match path.resolved.kind {
        None => return Err(not_found(&path, "directory")),
        Some(FileType::Directory) => {}
        Some(_) => {
            return Err(
                ToolError::new(format!("`{}` is a file, not a directory", path.shown))
                    .hint("use read_file to read it"),
            );
        }
    }
    let chain = open_dir(&path)?;
    let found = read_entries(chain.fd()).map_err(|e| io_error("list", &path, &e))?;
    let mut entries: Vec<(OsString, String)> = found
        .into_iter()
        .map(|(name, kind)| {
            let shown = name.to_string_lossy().into_owned();
            let line = match kind {
                FileType::Directory => format!("{shown}/"),
                FileType::Symlink => format!("{shown} -> {}", link_target(ctx, &chain, &name)),
                FileType::RegularFile => {
                    match rustix::fs::statat(chain.fd(), &name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => format!("{shown}  ({} bytes)", st.st_size),
                        Err(_) => shown,
                    }
                }
                _ => shown,
            };
            (name, line)
        })
        .collect();
    entries.sort();
    if entries.is_empty() {
        return Ok(format!("`{}` is empty.", path.shown));
    }
    let total = entries.len();
    let mut out = format!(
        "`{}` ({total} entr{}):\n",
        path.shown,
        if total == 1 { "y" } else { "ies" }
    );
    for (_, line) in entries.iter().take(MAX_ENTRIES) {
        out.push_str(line);
        out.push('\n');
    }
    if total > MAX_ENTRIES {
        out.push_str(&format!(
            "[... {} more entries not shown; use glob with a pattern to find what you need]\n",
            total - MAX_ENTRIES
        ));
    }
    Ok(cap_text(
        &out,
        ctx.limits(),
        "use glob with a pattern to find what you need",
    ))
}

/// What a link in the listed directory points to, as written — unless following it
/// leads outside the workspace, whose layout the listing does not reveal.
fn link_target(ctx: &ToolContext, dir: &DirChain, name: &OsStr) -> String {
    let Ok(target) = rustix::fs::readlinkat(dir.fd(), name, Vec::new()) else {
        return "?".to_owned();
    };
    match ctx
        .root()
        .resolve(dir.clone(), vec![name.to_os_string()], false)
    {
        Err(ResolveError::Outside { .. }) => "(outside the workspace)".to_owned(),
        _ => echo(&target.to_string_lossy()).into_owned(),
    }
}

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
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

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
    run_blocking(&TOOLS_WORK_LISTING, move |_| list(&args, &ctx)).await?
}

fn list(args: &ListDirArgs, ctx: &ToolContext) -> Result<String, ToolError> {
    let path = resolve(ctx, args.path.as_deref().unwrap_or("."))?;
    match path.resolved.kind {
        None => return Err(not_found(&path, &TOOLS_FILE_NOT_FOUND_DIRECTORY)),
        Some(FileType::Directory) => {}
        Some(_) => {
            return Err(
                ToolError::text(&TOOL_LIST_DIR_ERROR_FILE, vals![path = &path.shown])
                    .hint_text(&TOOL_LIST_DIR_HINT_FILE, vec![]),
            );
        }
    }
    let chain = open_dir(&path)?;
    let found =
        read_entries(chain.fd()).map_err(|e| io_error(&TOOLS_FILE_CANNOT_LIST, &path, &e))?;
    let mut entries: Vec<(OsString, String)> = found
        .into_iter()
        .map(|(name, kind)| {
            let shown = name.to_string_lossy().into_owned();
            let line = match kind {
                FileType::Directory => format!("{shown}/"),
                FileType::Symlink => format!("{shown} -> {}", link_target(ctx, &chain, &name)),
                FileType::RegularFile => {
                    match rustix::fs::statat(chain.fd(), &name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => ctx.texts().render(
                            &TOOL_LIST_DIR_RESULT_SIZE,
                            &[("name", &shown), ("bytes", &st.st_size.to_string())],
                        ),
                        Err(_) => shown,
                    }
                }
                _ => shown,
            };
            (name, line)
        })
        .collect();
    entries.sort();
    let texts = ctx.texts();
    if entries.is_empty() {
        return Ok(texts.render(
            &TOOL_LIST_DIR_RESULT_EMPTY,
            &[("path", &path.shown.told(texts))],
        ));
    }
    let total = entries.len();
    let header = if total == 1 {
        &TOOL_LIST_DIR_RESULT_ONE
    } else {
        &TOOL_LIST_DIR_RESULT_MANY
    };
    let mut out = texts.render(
        header,
        &[
            ("path", &path.shown.told(texts)),
            ("count", &total.to_string()),
        ],
    );
    out.push('\n');
    for (_, line) in entries.iter().take(MAX_ENTRIES) {
        out.push_str(line);
        out.push('\n');
    }
    if total > MAX_ENTRIES {
        out.push_str(&texts.render(
            &TOOL_LIST_DIR_RESULT_MORE,
            &[("count", &(total - MAX_ENTRIES).to_string())],
        ));
        out.push('\n');
    }
    Ok(cap_text(
        &out,
        ctx.limits(),
        texts,
        texts.get(&TOOL_LIST_DIR_RESULT_SEE_MORE),
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
        Err(ResolveError::Outside { .. }) => {
            ctx.texts().get(&TOOL_LIST_DIR_RESULT_OUTSIDE).to_owned()
        }
        _ => echo(&target.to_string_lossy()).told(ctx.texts()),
    }
}

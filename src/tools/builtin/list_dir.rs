//! `list_dir`: the entries of one directory.

use std::future::Future;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::cap_text;
use super::workspace::{io_error, not_found, resolve};
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
        "List one directory of the workspace (not recursive), sorted by name. Directories \
         end with `/`, symbolic links show their target, files show their size in bytes. \
         Hidden and ignored files are included."
    }

    fn read_only(&self) -> bool {
        true
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it names another tool only while that one is visible.
        Some(ToolGuidance::templated(
            1010.0,
            "Use list_dir to get your bearings in a directory you have not seen yet.\
             {% if 'glob' in tools %} To find files by name across many directories, use \
             glob instead of listing directory after directory.{% endif %}",
        ))
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
async fn handle(args: ListDirArgs, ctx: ToolContext) -> Result<String, ToolError> {
    let path = resolve(&ctx, args.path.as_deref().unwrap_or("."))?;
    match tokio::fs::metadata(&path.real).await {
        Ok(meta) if !meta.is_dir() => {
            return Err(
                ToolError::new(format!("`{}` is a file, not a directory", path.shown))
                    .hint("use read_file to read it"),
            );
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_found(&path, "directory"));
        }
        Err(e) => return Err(io_error("list", &path, &e)),
    }
    let mut dir = tokio::fs::read_dir(&path.real)
        .await
        .map_err(|e| io_error("list", &path, &e))?;
    let mut entries: Vec<(String, String)> = Vec::new();
    loop {
        let entry = match dir.next_entry().await {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(e) => return Err(io_error("list", &path, &e)),
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let line = match entry.file_type().await {
            Ok(t) if t.is_dir() => format!("{name}/"),
            Ok(t) if t.is_symlink() => {
                let target = tokio::fs::read_link(entry.path())
                    .await
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".to_owned());
                format!("{name} -> {target}")
            }
            Ok(t) if t.is_file() => match entry.metadata().await {
                Ok(m) => format!("{name}  ({} bytes)", m.len()),
                Err(_) => name.clone(),
            },
            _ => name.clone(),
        };
        entries.push((name, line));
    }
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

//! Workspace confinement: every path a model names is resolved against the workspace root
//! and refused if it leads outside — by `..`, by an absolute path elsewhere, or through a
//! symbolic link. Also the text-file reading and atomic writing the file tools share.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::suggest::did_you_mean;
use crate::tools::{ToolContext, ToolError};

/// Largest file `read_file` and `edit_file` load, and `write_file` writes (16 MiB).
pub(crate) const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A path that was checked to lie inside the workspace.
#[derive(Clone, Debug)]
pub(crate) struct WorkspacePath {
    /// The path with every existing symbolic link resolved; what the tools operate on.
    pub(crate) real: PathBuf,
    /// The path relative to the workspace root, for messages (`.` for the root).
    pub(crate) shown: String,
}

/// The canonical workspace root.
pub(crate) fn workspace_root(ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    ctx.workspace().canonicalize().map_err(|e| {
        ToolError::new(format!(
            "the workspace root `{}` is not accessible: {}",
            ctx.workspace().display(),
            io_reason(&e)
        ))
        .hint("the agent's workspace must be an existing directory; ask the user to check it")
    })
}

/// Resolve `raw` (relative to the workspace root, or absolute inside it) and refuse it if
/// it leads outside the workspace.
///
/// The check is done twice: lexically (`..` may not climb above the root) and on the real
/// file system, walking down from the root one component at a time and resolving every
/// symbolic link on the way, so a link that points outside is caught even when the
/// final file does not exist yet. A link whose target is missing is refused, because
/// writing through it would create a file wherever it points.
pub(crate) fn resolve(ctx: &ToolContext, raw: &str) -> Result<WorkspacePath, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::new("the path is empty").hint(
            "give a path relative to the workspace root, e.g. `src/main.rs`, or `.` for the root",
        ));
    }
    if raw.contains('\0') {
        return Err(ToolError::new("the path contains a NUL character")
            .hint("give a plain path relative to the workspace root, e.g. `src/main.rs`"));
    }
    let root = workspace_root(ctx)?;
    let given = Path::new(raw);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    let lexical = normalize(&joined);
    // The root as the host spelled it (before canonicalization) counts as the root too.
    let Ok(relative) = lexical
        .strip_prefix(&root)
        .or_else(|_| lexical.strip_prefix(normalize(ctx.workspace())))
    else {
        return Err(outside(raw, &root));
    };

    let mut real = root.clone();
    let mut components = relative.components();
    while let Some(component) = components.next() {
        let next = real.join(component);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::canonicalize(&next).map_err(|_| {
                    let link = shown(&root, &next);
                    let points_to = std::fs::read_link(&next)
                        .map(|t| format!(" (it points to `{}`)", t.display()))
                        .unwrap_or_default();
                    ToolError::new(format!(
                        "`{raw}` goes through the symbolic link `{link}`, whose target does not exist{points_to}"
                    ))
                    .hint("use a path to a real file or directory inside the workspace")
                })?;
                if !target.starts_with(&root) {
                    return Err(ToolError::new(format!(
                        "`{raw}` leads outside the workspace through the symbolic link `{}` (it resolves to `{}`)",
                        shown(&root, &next),
                        target.display()
                    ))
                    .hint("only files inside the workspace can be used; pick a path that stays inside it"));
                }
                real = target;
            }
            Ok(_) => real = next,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                // Nothing below a missing entry exists, so no link can redirect the rest.
                real = next;
                real.extend(components);
                break;
            }
            Err(e) => {
                return Err(ToolError::new(format!(
                    "cannot access `{}`: {}",
                    shown(&root, &next),
                    io_reason(&e)
                ))
                .hint("check the path with list_dir"));
            }
        }
    }
    Ok(WorkspacePath {
        shown: shown(&root, &real),
        real,
    })
}

/// `path` with `.` removed and `..` applied, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn outside(raw: &str, root: &Path) -> ToolError {
    ToolError::new(format!(
        "`{raw}` is outside the workspace `{}`",
        root.display()
    ))
    .hint(format!(
        "paths are resolved against the workspace root and may not leave it; use a relative path such as `src/main.rs` or an absolute path under `{}`",
        root.display()
    ))
}

/// `path` relative to `root`, with `/` separators; `.` for the root itself.
pub(crate) fn shown(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// The reason of an I/O error without Rust's `(os error 2)` suffix.
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::NotFound => "no such file or directory".to_owned(),
        ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_owned(),
                None => text,
            }
        }
    }
}

/// The error for a path that does not exist, with a close name from its directory.
pub(crate) fn not_found(path: &WorkspacePath, what: &str) -> ToolError {
    let suggestion = path.real.parent().and_then(|dir| {
        let name = path.real.file_name()?.to_string_lossy().into_owned();
        let siblings: Vec<String> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        did_you_mean(&name, siblings.iter().map(String::as_str)).map(|s| {
            let parent = Path::new(&path.shown).parent().unwrap_or(Path::new(""));
            parent.join(s).to_string_lossy().into_owned()
        })
    });
    let error = ToolError::new(format!("{what} `{}` does not exist", path.shown));
    match suggestion {
        Some(s) => error.hint(format!("did you mean `{s}`?")),
        None => error.hint("check the path with list_dir or glob"),
    }
}

/// Read a UTF-8 text file inside the workspace, refusing directories, oversized and
/// binary files with errors the model can act on.
pub(crate) async fn read_text_file(path: &WorkspacePath) -> Result<String, ToolError> {
    let meta = match tokio::fs::metadata(&path.real).await {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(not_found(path, "file")),
        Err(e) => return Err(io_error("read", path, &e)),
    };
    if meta.is_dir() {
        return Err(
            ToolError::new(format!("`{}` is a directory, not a file", path.shown))
                .hint("use list_dir to see what it contains"),
        );
    }
    if meta.len() > MAX_TEXT_FILE_BYTES {
        return Err(ToolError::new(format!(
            "`{}` is {} bytes, more than the {MAX_TEXT_FILE_BYTES} bytes the file tools load",
            path.shown,
            meta.len()
        ))
        .hint("find the relevant part with grep, or look at it with bash (`head`, `tail`, `sed -n '100,200p'`)"));
    }
    let bytes = tokio::fs::read(&path.real)
        .await
        .map_err(|e| io_error("read", path, &e))?;
    decode_text(bytes, &path.shown)
}

/// The bytes as text, or an error if they look binary (a NUL byte or invalid UTF-8).
pub(crate) fn decode_text(bytes: Vec<u8>, shown: &str) -> Result<String, ToolError> {
    let hint = "this tool handles text files only; inspect binary files with bash (e.g. `file`, `xxd | head`)";
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(ToolError::new(format!(
            "`{shown}` looks like a binary file (it has a NUL byte at offset {at})"
        ))
        .hint(hint));
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError::new(format!(
            "`{shown}` is not UTF-8 text (invalid byte sequence at offset {})",
            e.utf8_error().valid_up_to()
        ))
        .hint(hint)
    })
}

/// An I/O failure on `path` as a tool error.
pub(crate) fn io_error(action: &str, path: &WorkspacePath, e: &std::io::Error) -> ToolError {
    ToolError::new(format!(
        "cannot {action} `{}`: {}",
        path.shown,
        io_reason(e)
    ))
    .hint("check the path and its permissions with list_dir")
}

/// Replace (or create) `path` with `contents` atomically: write a temporary file in the
/// same directory, flush it to disk, then rename it over the target. Readers see the old
/// file or the new one, never a half-written one; on failure the temporary file is removed.
/// Parent directories are created as needed.
pub(crate) async fn write_atomic(path: &WorkspacePath, contents: &[u8]) -> Result<(), ToolError> {
    let Some(dir) = path.real.parent() else {
        return Err(ToolError::new(format!(
            "cannot write `{}`: it has no parent directory",
            path.shown
        ))
        .hint("give a file path such as `notes/todo.md`"));
    };
    let Some(name) = path.real.file_name() else {
        return Err(ToolError::new(format!(
            "cannot write `{}`: it is not a file path",
            path.shown
        ))
        .hint("give a file path such as `notes/todo.md`"));
    };
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| io_error("create the parent directory of", path, &e))?;
    let existing = tokio::fs::metadata(&path.real).await.ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(
            ToolError::new(format!("`{}` is a directory, not a file", path.shown))
                .hint("write to a file path inside it instead"),
        );
    }

    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = async {
        use tokio::io::AsyncWriteExt;
        let mut file = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .await?;
        file.write_all(contents).await?;
        file.sync_all().await?;
        drop(file);
        // Keep the mode of the file being replaced (an executable script stays executable).
        if let Some(meta) = &existing {
            tokio::fs::set_permissions(&temp, meta.permissions()).await?;
        }
        tokio::fs::rename(&temp, &path.real).await
    }
    .await;
    if let Err(e) = result {
        let _ = tokio::fs::remove_file(&temp).await;
        return Err(io_error("write", path, &e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_applies_dot_dot_lexically() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d")), Path::new("/a/c/d"));
        assert_eq!(normalize(Path::new("/a/../../b")), Path::new("/b"));
    }

    #[test]
    fn shown_is_relative_with_slashes() {
        let root = Path::new("/w");
        assert_eq!(shown(root, Path::new("/w")), ".");
        assert_eq!(shown(root, Path::new("/w/a/b.rs")), "a/b.rs");
    }
}

//! Workspace confinement: every path a model names is resolved against the workspace root
//! and refused if it leads outside — by `..`, by an absolute path elsewhere, or through a
//! symbolic link. Also the text-file reading and atomic writing the file tools share.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::blocking::CancelToken;
use super::limits::echo;
use crate::suggest::did_you_mean;
use crate::tools::{ToolContext, ToolError};

/// Largest file `read_file` and `edit_file` load, and `write_file` writes (16 MiB).
pub(crate) const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A path that was checked to lie inside the workspace.
#[derive(Clone, Debug)]
pub(crate) struct WorkspacePath {
    /// The path with every existing symbolic link resolved; what the tools operate on.
    pub(crate) real: PathBuf,
    /// The path relative to the workspace root, for messages (`.` for the root); cut
    /// with an ellipsis when very long.
    pub(crate) shown: String,
    /// The path relative to the workspace root, in full.
    pub(crate) relative: String,
    /// The path was given with a trailing `/`, so it names a directory.
    pub(crate) dir_syntax: bool,
}

/// The canonical workspace root.
pub(crate) fn workspace_root(ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    ctx.workspace().canonicalize().map_err(|e| {
        ToolError::new(format!(
            "the workspace root `{}` is not accessible: {}",
            echo(&ctx.workspace().display().to_string()),
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
///
/// A path written with a trailing `/` names a directory: it is refused when it leads to
/// an existing file, and remembered ([`WorkspacePath::dir_syntax`]) for the writers.
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
                let target =
                    std::fs::canonicalize(&next).map_err(|e| broken_link(raw, &root, &next, &e))?;
                if !target.starts_with(&root) {
                    return Err(ToolError::new(format!(
                        "`{}` leads outside the workspace through the symbolic link `{}` (it resolves to `{}`)",
                        echo(raw),
                        echo(&shown(&root, &next)),
                        echo(&target.display().to_string())
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
                    echo(&shown(&root, &next)),
                    io_reason(&e)
                ))
                .hint("check the path with list_dir"));
            }
        }
    }
    let dir_syntax = raw.ends_with('/') || raw.ends_with("/.");
    let relative = shown(&root, &real);
    let shown = echo(&relative).into_owned();
    if dir_syntax && std::fs::metadata(&real).is_ok_and(|m| !m.is_dir()) {
        return Err(ToolError::new(format!(
            "`{}` ends with `/`, so it names a directory, but `{shown}` is not a directory",
            echo(raw)
        ))
        .hint(format!(
            "leave out the trailing `/` to use the file `{shown}`"
        )));
    }
    Ok(WorkspacePath {
        shown,
        relative,
        real,
        dir_syntax,
    })
}

/// The error for a symbolic link on the way that cannot be resolved: its target is
/// missing, it is part of a loop, or something on the way cannot be read.
fn broken_link(raw: &str, root: &Path, link: &Path, e: &std::io::Error) -> ToolError {
    let shown_link = echo(&shown(root, link)).into_owned();
    let points_to = std::fs::read_link(link)
        .map(|t| format!(" (it points to `{}`)", echo(&t.display().to_string())))
        .unwrap_or_default();
    let why = if e.raw_os_error() == Some(libc::ELOOP) {
        "which is part of a loop of symbolic links".to_owned()
    } else if e.kind() == ErrorKind::NotFound {
        "whose target does not exist".to_owned()
    } else {
        format!("whose target cannot be resolved ({})", io_reason(e))
    };
    ToolError::new(format!(
        "`{}` goes through the symbolic link `{shown_link}`, {why}{points_to}",
        echo(raw)
    ))
    .hint("use a path to a real file or directory inside the workspace")
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
        "`{}` is outside the workspace `{}`",
        echo(raw),
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
            let parent = Path::new(&path.relative).parent().unwrap_or(Path::new(""));
            echo(&parent.join(s).to_string_lossy()).into_owned()
        })
    });
    let error = ToolError::new(format!("{what} `{}` does not exist", path.shown));
    match suggestion {
        Some(s) => error.hint(format!("did you mean `{s}`?")),
        None => error.hint("check the path with list_dir or glob"),
    }
}

/// Read a UTF-8 text file inside the workspace, refusing directories, special files
/// (FIFOs, sockets, devices), oversized and binary files with errors the model can act
/// on. Blocking: call it from the blocking pool.
///
/// The file type is checked before the file is opened, because opening a FIFO for
/// reading waits for a writer that may never come; the file is then opened without
/// blocking and checked again, in case it was swapped in between.
pub(crate) fn read_text_file(path: &WorkspacePath) -> Result<String, ToolError> {
    let meta = match std::fs::metadata(&path.real) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(not_found(path, "file")),
        Err(e) => return Err(io_error("read", path, &e)),
    };
    check_readable(path, &meta)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path.real)
        .map_err(|e| io_error("read", path, &e))?;
    let meta = file.metadata().map_err(|e| io_error("read", path, &e))?;
    check_readable(path, &meta)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_TEXT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", path, &e))?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(too_big(path, bytes.len() as u64));
    }
    decode_text(bytes, &path.shown)
}

/// Refuse what `read_text_file` must not open or load.
fn check_readable(path: &WorkspacePath, meta: &Metadata) -> Result<(), ToolError> {
    if meta.is_dir() {
        return Err(
            ToolError::new(format!("`{}` is a directory, not a file", path.shown))
                .hint("use list_dir to see what it contains"),
        );
    }
    if !meta.is_file() {
        return Err(not_regular(path, meta));
    }
    if meta.len() > MAX_TEXT_FILE_BYTES {
        return Err(too_big(path, meta.len()));
    }
    Ok(())
}

fn too_big(path: &WorkspacePath, len: u64) -> ToolError {
    ToolError::new(format!(
        "`{}` is {len} bytes, more than the {MAX_TEXT_FILE_BYTES} bytes the file tools load",
        path.shown
    ))
    .hint("find the relevant part with grep, or look at it with bash (`head`, `tail`, `sed -n '100,200p'`)")
}

/// The error for a FIFO, socket or device where a regular file is needed.
pub(crate) fn not_regular(path: &WorkspacePath, meta: &Metadata) -> ToolError {
    let t = meta.file_type();
    let what = if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else {
        "a special file"
    };
    ToolError::new(format!(
        "`{}` is {what}, not a regular file; the file tools only read and write regular files",
        path.shown
    ))
    .hint("leave it alone, or use bash if you really need to interact with it")
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
/// file or the new one, never a half-written one. Parent directories are created as
/// needed. Blocking: call it from the blocking pool.
///
/// The temporary file is removed whatever happens short of the rename: an I/O error, a
/// panic, or `cancel` being set (the caller went away), which is checked just before the
/// rename so an abandoned call leaves the file as it was. Its name is short
/// (`.ap-<pid>-<n>.tmp`), so a target whose name is near the file-name length limit can
/// still be written.
pub(crate) fn write_atomic(
    path: &WorkspacePath,
    contents: &[u8],
    cancel: &CancelToken,
) -> Result<(), ToolError> {
    if path.dir_syntax {
        return Err(ToolError::new(format!(
            "`{}/` ends with `/`, so it names a directory, not a file",
            path.shown
        ))
        .hint("leave out the trailing `/` and give a file path such as `notes/todo.md`"));
    }
    let Some(dir) = path.real.parent() else {
        return Err(ToolError::new(format!(
            "cannot write `{}`: it has no parent directory",
            path.shown
        ))
        .hint("give a file path such as `notes/todo.md`"));
    };
    if path.real.file_name().is_none() {
        return Err(ToolError::new(format!(
            "cannot write `{}`: it is not a file path",
            path.shown
        ))
        .hint("give a file path such as `notes/todo.md`"));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| io_error("create the parent directory of", path, &e))?;
    let existing = std::fs::metadata(&path.real).ok();
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return Err(
                ToolError::new(format!("`{}` is a directory, not a file", path.shown))
                    .hint("write to a file path inside it instead"),
            );
        }
        if !meta.is_file() {
            return Err(not_regular(path, meta));
        }
    }

    let (mut file, mut temp) = create_temp(dir).map_err(|e| io_error("write", path, &e))?;
    let written = (|| {
        file.write_all(contents)?;
        // Keep the mode of the file being replaced (an executable script stays executable).
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()
    })();
    drop(file);
    written.map_err(|e| io_error("write", path, &e))?;
    if cancel.is_cancelled() {
        return Err(ToolError::new(format!(
            "the write to `{}` was abandoned; the file is unchanged",
            path.shown
        ))
        .hint("try again"));
    }
    std::fs::rename(&temp.path, &path.real).map_err(|e| io_error("write", path, &e))?;
    temp.renamed = true;
    Ok(())
}

/// A temporary file that is removed when dropped unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    renamed: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Create a new, empty temporary file in `dir` under a short name nobody else uses.
fn create_temp(dir: &Path) -> std::io::Result<(File, TempFile)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut attempts = 0;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".ap-{:x}-{n:x}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => {
                return Ok((
                    file,
                    TempFile {
                        path,
                        renamed: false,
                    },
                ));
            }
            // Left behind by a process that had our PID before; take the next number.
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempts < 100 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
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

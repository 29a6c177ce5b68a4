//! Workspace confinement as the tools see it: a path a model names is resolved beneath
//! the workspace root's open descriptor ([`beneath`](super::beneath)) and refused, with a
//! message the model can act on, when it leads outside — by `..`, by an absolute path
//! elsewhere, or through a symbolic link. Also the text-file reading and atomic writing
//! the file tools share, both relative to the directory descriptor the resolution ended
//! in, never by name.

use std::ffi::OsString;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::beneath::{DirChain, ResolveError, Resolved, open_read, read_entries};
use super::blocking::CancelToken;
use super::limits::echo;
use crate::suggest::did_you_mean;
use crate::tools::{ToolContext, ToolError};

/// Largest file `read_file` and `edit_file` load, and `write_file` writes (16 MiB).
pub(crate) const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A path that was resolved inside the workspace.
#[derive(Clone, Debug)]
pub(crate) struct WorkspacePath {
    /// Where it led: an entry of a directory held open (every link on the way followed).
    pub(crate) resolved: Resolved,
    /// The path relative to the workspace root, for messages (`.` for the root); cut
    /// with an ellipsis when very long.
    pub(crate) shown: String,
    /// The path was given with a trailing `/`, so it names a directory.
    pub(crate) dir_syntax: bool,
}

impl WorkspacePath {
    /// Does it exist?
    pub(crate) fn exists(&self) -> bool {
        self.resolved.kind.is_some()
    }
}

/// Resolve `raw` (relative to the workspace root, or absolute inside it) and refuse it if
/// it leads outside the workspace. Nothing is created.
///
/// `..` in `raw` is applied lexically and may not climb above the root; every symbolic
/// link on the way is followed as long as it stays inside (an absolute link into the
/// workspace included). A link whose target is missing is refused, because writing
/// through it would create a file wherever it points.
///
/// A path written with a trailing `/` names a directory: it is refused when it leads to
/// an existing file, and remembered ([`WorkspacePath::dir_syntax`]) for the writers.
pub(crate) fn resolve(ctx: &ToolContext, raw: &str) -> Result<WorkspacePath, ToolError> {
    resolve_with(ctx, raw, false)
}

/// Like [`resolve`], creating the missing directories on the way (not the last
/// component): for writers.
pub(crate) fn resolve_for_write(ctx: &ToolContext, raw: &str) -> Result<WorkspacePath, ToolError> {
    resolve_with(ctx, raw, true)
}

fn resolve_with(
    ctx: &ToolContext,
    raw: &str,
    create_dirs: bool,
) -> Result<WorkspacePath, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::new("the path is empty").hint(
            "give a path relative to the workspace root, e.g. `src/main.rs`, or `.` for the root",
        ));
    }
    if raw.contains('\0') {
        return Err(ToolError::new("the path contains a NUL character")
            .hint("give a plain path relative to the workspace root, e.g. `src/main.rs`"));
    }
    let root = ctx.root();
    let Some(components) = root.components_below(Path::new(raw)) else {
        return Err(outside(raw, root.path()));
    };
    let dir_syntax = raw.ends_with('/') || raw.ends_with("/.");
    let resolved = root
        .resolve(root.chain(), components.clone(), create_dirs && !dir_syntax)
        .map_err(|e| resolve_error(raw, root.path(), &components, e))?;
    let shown = echo(&shown(&resolved.relative())).into_owned();
    if dir_syntax && resolved.kind.is_some() && !resolved.is_dir() {
        return Err(ToolError::new(format!(
            "`{}` ends with `/`, so it names a directory, but `{shown}` is not a directory",
            echo(raw)
        ))
        .hint(format!(
            "leave out the trailing `/` to use the file `{shown}`"
        )));
    }
    Ok(WorkspacePath {
        resolved,
        shown,
        dir_syntax,
    })
}

/// The tool error for a path that could not be resolved inside the workspace. Where a
/// link outside points is never said (only that it leads outside).
fn resolve_error(raw: &str, root: &Path, components: &[OsString], e: ResolveError) -> ToolError {
    let inside = "use a path to a real file or directory inside the workspace";
    if let ResolveError::Outside { link, .. } = &e
        && link.as_os_str().is_empty()
    {
        return outside(raw, root);
    }
    let raw = echo(raw);
    match e {
        ResolveError::Outside {
            link,
            target_missing,
        } => {
            let link = echo(&shown(&link)).into_owned();
            let message = if target_missing {
                format!(
                    "`{raw}` goes through the symbolic link `{link}`, whose target does not exist and would lie outside the workspace"
                )
            } else {
                format!("`{raw}` leads outside the workspace through the symbolic link `{link}`")
            };
            ToolError::new(message).hint(
                "only files inside the workspace can be used; pick a path that stays inside it",
            )
        }
        ResolveError::Loop { link, target } => ToolError::new(format!(
            "`{raw}` goes through the symbolic link `{}`, which is part of a loop of symbolic links (it points to `{}`)",
            echo(&shown(&link)),
            echo(&target.to_string_lossy())
        ))
        .hint(inside),
        ResolveError::Broken { link, target } => ToolError::new(format!(
            "`{raw}` goes through the symbolic link `{}`, whose target does not exist (it points to `{}`)",
            echo(&shown(&link)),
            echo(&target.to_string_lossy())
        ))
        .hint(inside),
        ResolveError::MissingDir { parent, name } => {
            let at = parent.relative().join(&name);
            let error = ToolError::new(format!(
                "`{raw}` does not exist: there is no directory `{}`",
                echo(&shown(&at))
            ));
            // A close directory name, with the rest of the path after it.
            let given: PathBuf = components.iter().collect();
            let suggestion = given.strip_prefix(&at).ok().and_then(|rest| {
                let names = directory_names(parent.fd());
                let close = did_you_mean(&name.to_string_lossy(), names.iter().map(String::as_str))?;
                Some(echo(&shown(&parent.relative().join(close).join(rest))).into_owned())
            });
            match suggestion {
                Some(s) => error.hint(format!("did you mean `{s}`?")),
                None => error.hint("check the path with list_dir or glob"),
            }
        }
        ResolveError::NotADirectory { at } => ToolError::new(format!(
            "`{raw}` goes through `{}`, which is a file, not a directory",
            echo(&shown(&at))
        ))
        .hint("check the path with list_dir"),
        ResolveError::Unstable { at } => ToolError::new(format!(
            "`{}` kept changing while `{raw}` was being resolved",
            echo(&shown(&at))
        ))
        .hint("try again once whatever is changing it has finished"),
        ResolveError::Io { at, error } => ToolError::new(format!(
            "cannot access `{}`: {}",
            echo(&shown(&at)),
            io_reason(&error)
        ))
        .hint("check the path with list_dir"),
    }
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

/// A path relative to the workspace root with `/` separators; `.` for the root itself.
pub(crate) fn shown(relative: &Path) -> String {
    if relative.as_os_str().is_empty() {
        return ".".to_owned();
    }
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
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

/// The names in directory `dir`, lossily as text (for "did you mean").
fn directory_names(dir: BorrowedFd<'_>) -> Vec<String> {
    read_entries(dir)
        .map(|entries| {
            entries
                .into_iter()
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The error for a path that does not exist, with a close name from its directory.
pub(crate) fn not_found(path: &WorkspacePath, what: &str) -> ToolError {
    let suggestion = path.resolved.name.as_ref().and_then(|name| {
        let names = directory_names(path.resolved.dir.fd());
        let close = did_you_mean(&name.to_string_lossy(), names.iter().map(String::as_str))?;
        Some(echo(&shown(&path.resolved.dir.relative().join(close))).into_owned())
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
/// The file is opened relative to its directory's descriptor, without following a link
/// and without blocking (a FIFO swapped in opens at once), then checked on the open
/// descriptor (regular file, size), and read through a cap.
pub(crate) fn read_text_file(path: &WorkspacePath) -> Result<String, ToolError> {
    let name = match (&path.resolved.kind, &path.resolved.name) {
        (None, _) => return Err(not_found(path, "file")),
        (Some(FileType::Directory), _) | (_, None) => return Err(is_a_directory(path)),
        (Some(FileType::RegularFile), Some(name)) => name,
        (Some(other), _) => return Err(not_regular(path, *other)),
    };
    let fd = match open_read(path.resolved.dir.fd(), name) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(not_found(path, "file")),
        Err(Errno::LOOP | Errno::MLINK) => return Err(changed(path)),
        Err(e) => return Err(io_error("read", path, &e.into())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_error("read", path, &e.into()))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => return Err(is_a_directory(path)),
        other => return Err(not_regular(path, other)),
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > MAX_TEXT_FILE_BYTES {
        return Err(too_big(path, size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    File::from(fd)
        .take(MAX_TEXT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", path, &e))?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(too_big(path, bytes.len() as u64));
    }
    decode_text(bytes, &path.shown)
}

fn is_a_directory(path: &WorkspacePath) -> ToolError {
    ToolError::new(format!("`{}` is a directory, not a file", path.shown))
        .hint("use list_dir to see what it contains")
}

fn changed(path: &WorkspacePath) -> ToolError {
    ToolError::new(format!(
        "`{}` was replaced by a symbolic link while it was being opened; nothing was read or written",
        path.shown
    ))
    .hint("try again")
}

fn too_big(path: &WorkspacePath, len: u64) -> ToolError {
    ToolError::new(format!(
        "`{}` is {len} bytes, more than the {MAX_TEXT_FILE_BYTES} bytes the file tools load",
        path.shown
    ))
    .hint("find the relevant part with grep, or look at it with bash (`head`, `tail`, `sed -n '100,200p'`)")
}

/// What a file type is called in messages (`a FIFO (named pipe)`).
pub(crate) fn describe_type(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::BlockDevice => "a block device",
        FileType::CharacterDevice => "a character device",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::RegularFile => "a regular file",
        FileType::Unknown => "a special file",
    }
}

/// The error for a FIFO, socket or device where a regular file is needed.
pub(crate) fn not_regular(path: &WorkspacePath, kind: FileType) -> ToolError {
    ToolError::new(format!(
        "`{}` is {}, not a regular file; the file tools only read and write regular files",
        path.shown,
        describe_type(kind)
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
/// same directory, flush it to disk, then rename it over the target — all relative to the
/// directory's descriptor, so the file lands in the directory that was checked, whatever
/// happens to names meanwhile. Readers see the old file or the new one, never a
/// half-written one. Blocking: call it from the blocking pool.
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
    let Some(name) = &path.resolved.name else {
        return Err(is_a_directory(path).hint("write to a file path inside it instead"));
    };
    let dir = path.resolved.dir.fd();
    // Looked at again, on the directory descriptor, right before the write.
    let mode = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Some(st.st_mode & 0o7777),
            FileType::Directory => {
                return Err(is_a_directory(path).hint("write to a file path inside it instead"));
            }
            // A link swapped in meanwhile is replaced by the rename, not written through.
            FileType::Symlink => None,
            other => return Err(not_regular(path, other)),
        },
        Err(Errno::NOENT) => None,
        Err(e) => return Err(io_error("write", path, &e.into())),
    };

    let (file, mut temp) = create_temp(dir).map_err(|e| io_error("write", path, &e))?;
    let written = (|| {
        let mut file = File::from(file);
        file.write_all(contents)?;
        // Keep the mode of the file being replaced (an executable script stays executable).
        if let Some(mode) = mode {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
        }
        file.sync_all()
    })();
    written.map_err(|e| io_error("write", path, &e))?;
    if cancel.is_cancelled() {
        return Err(ToolError::new(format!(
            "the write to `{}` was abandoned; the file is unchanged",
            path.shown
        ))
        .hint("try again"));
    }
    rustix::fs::renameat(dir, &temp.name, dir, name)
        .map_err(|e| io_error("write", path, &e.into()))?;
    temp.renamed = true;
    Ok(())
}

/// A temporary file in a directory held open; removed when dropped unless it was renamed
/// into place.
struct TempFile<'a> {
    dir: BorrowedFd<'a>,
    name: OsString,
    renamed: bool,
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = rustix::fs::unlinkat(self.dir, &self.name, AtFlags::empty());
        }
    }
}

/// Create a new, empty temporary file in `dir` under a short name nobody else uses.
fn create_temp(dir: BorrowedFd<'_>) -> std::io::Result<(OwnedFd, TempFile<'_>)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut attempts = 0;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = OsString::from(format!(".ap-{:x}-{n:x}.tmp", std::process::id()));
        match rustix::fs::openat(
            dir,
            &name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        ) {
            Ok(fd) => {
                return Ok((
                    fd,
                    TempFile {
                        dir,
                        name,
                        renamed: false,
                    },
                ));
            }
            // Left behind by a process that had our PID before; take the next number.
            Err(Errno::EXIST) if attempts < 100 => attempts += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Open the directory `path` names, for reading its entries, as a chain (so entries
/// below it resolve without names being looked up again).
pub(crate) fn open_dir(path: &WorkspacePath) -> Result<DirChain, ToolError> {
    path.resolved
        .clone()
        .into_dir_chain()
        .map_err(|e| io_error("open", path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_is_relative_with_slashes() {
        assert_eq!(shown(Path::new("")), ".");
        assert_eq!(shown(Path::new("a/b.rs")), "a/b.rs");
    }
}

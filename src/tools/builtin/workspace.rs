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
use crate::texts::*;
use crate::tools::{TextValue, ToolContext, ToolError, vals};

/// Largest file `read_file` and `edit_file` load, and `write_file` writes (16 MiB).
pub(crate) const MAX_TEXT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A path that was resolved inside the workspace.
#[derive(Clone, Debug)]
pub(crate) struct WorkspacePath {
    /// Where it led: an entry of a directory held open (every link on the way followed).
    pub(crate) resolved: Resolved,
    /// The path relative to the workspace root, for messages (`.` for the root); cut
    /// with an ellipsis when very long, in the words of the texts it is told in.
    pub(crate) shown: ShownPath,
    /// The path was given with a trailing `/`, so it names a directory.
    pub(crate) dir_syntax: bool,
}

/// A path as messages show it, whole: cut (with `tools.cut`, in the language of the
/// text it goes into) only when it is told, so a long path reads in one language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShownPath(String);

impl ShownPath {
    /// The path told in `texts` (cut when very long).
    pub(crate) fn told(&self, texts: &crate::texts::Texts) -> String {
        echo(&self.0).told(texts)
    }
}

impl From<&ShownPath> for crate::tools::TextValue {
    fn from(p: &ShownPath) -> Self {
        echo(&p.0).into()
    }
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
        return Err(
            ToolError::text(&TOOLS_PATH_EMPTY, vec![]).hint_text(&TOOLS_PATH_EMPTY_HINT, vec![])
        );
    }
    if raw.contains('\0') {
        return Err(
            ToolError::text(&TOOLS_PATH_NUL, vec![]).hint_text(&TOOLS_PATH_NUL_HINT, vec![])
        );
    }
    let root = ctx.root();
    let Some(components) = root.components_below(Path::new(raw)) else {
        return Err(outside(raw, root.path()));
    };
    let dir_syntax = raw.ends_with('/') || raw.ends_with("/.");
    let resolved = root
        .resolve(root.chain(), components.clone(), create_dirs && !dir_syntax)
        .map_err(|e| resolve_error(raw, root.path(), &components, e))?;
    let shown = ShownPath(shown(&resolved.relative()));
    if dir_syntax && resolved.kind.is_some() && !resolved.is_dir() {
        return Err(ToolError::text(
            &TOOLS_PATH_DIR_SYNTAX,
            vals![path = echo(raw), shown = &shown],
        )
        .hint_text(&TOOLS_PATH_DIR_SYNTAX_HINT, vals![shown = &shown]));
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
            let link = shown(&link);
            let text = if target_missing {
                &TOOLS_PATH_LINK_OUTSIDE_MISSING
            } else {
                &TOOLS_PATH_LINK_OUTSIDE
            };
            ToolError::text(text, vals![path = &raw, link = echo(&link)])
                .hint_text(&TOOLS_PATH_LINK_OUTSIDE_HINT, vec![])
        }
        ResolveError::Loop { link, target } => ToolError::text(
            &TOOLS_PATH_LINK_LOOP,
            vals![
                path = &raw,
                link = echo(&shown(&link)),
                target = echo(&target.to_string_lossy())
            ],
        )
        .hint_text(&TOOLS_PATH_INSIDE_HINT, vec![]),
        ResolveError::Broken { link, target } => ToolError::text(
            &TOOLS_PATH_LINK_BROKEN,
            vals![
                path = &raw,
                link = echo(&shown(&link)),
                target = echo(&target.to_string_lossy())
            ],
        )
        .hint_text(&TOOLS_PATH_INSIDE_HINT, vec![]),
        ResolveError::MissingDir { parent, name } => {
            let at = parent.relative().join(&name);
            let error = ToolError::text(
                &TOOLS_PATH_MISSING_DIR,
                vals![path = &raw, dir = echo(&shown(&at))],
            );
            // A close directory name, with the rest of the path after it.
            let given: PathBuf = components.iter().collect();
            let suggestion = given.strip_prefix(&at).ok().and_then(|rest| {
                let names = directory_names(parent.fd());
                let close =
                    did_you_mean(&name.to_string_lossy(), names.iter().map(String::as_str))?;
                Some(shown(&parent.relative().join(close).join(rest)))
            });
            match suggestion {
                Some(s) => error.hint_text(&TOOLS_PATH_DID_YOU_MEAN, vals![suggestion = echo(&s)]),
                None => error.hint_text(&TOOLS_PATH_CHECK_HINT, vec![]),
            }
        }
        ResolveError::NotADirectory { at } => ToolError::text(
            &TOOLS_PATH_THROUGH_FILE,
            vals![path = &raw, at = echo(&shown(&at))],
        )
        .hint_text(&TOOLS_PATH_LIST_DIR_HINT, vec![]),
        ResolveError::Unstable { at } => ToolError::text(
            &TOOLS_PATH_UNSTABLE,
            vals![path = &raw, at = echo(&shown(&at))],
        )
        .hint_text(&TOOLS_PATH_UNSTABLE_HINT, vec![]),
        ResolveError::Io { at, error } => ToolError::text(
            &TOOLS_PATH_IO,
            vec![
                ("at", echo(&shown(&at)).into()),
                ("reason", io_reason_value(&error)),
            ],
        )
        .hint_text(&TOOLS_PATH_LIST_DIR_HINT, vec![]),
    }
}

fn outside(raw: &str, root: &Path) -> ToolError {
    let root = root.display().to_string();
    ToolError::text(&TOOLS_PATH_OUTSIDE, vals![path = echo(raw), root = &root])
        .hint_text(&TOOLS_PATH_OUTSIDE_HINT, vals![root = root])
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

/// [`io_reason`] as a text value: the two reasons the tools name themselves are texts.
pub(crate) fn io_reason_value(e: &std::io::Error) -> TextValue {
    match e.kind() {
        ErrorKind::NotFound => TextValue::Text(&TOOLS_IO_NOT_FOUND),
        ErrorKind::PermissionDenied => TextValue::Text(&TOOLS_IO_PERMISSION_DENIED),
        ErrorKind::IsADirectory => TextValue::Text(&TOOLS_IO_IS_A_DIRECTORY),
        ErrorKind::NotADirectory => TextValue::Text(&TOOLS_IO_NOT_A_DIRECTORY),
        ErrorKind::AlreadyExists => TextValue::Text(&TOOLS_IO_ALREADY_EXISTS),
        ErrorKind::DirectoryNotEmpty => TextValue::Text(&TOOLS_IO_DIRECTORY_NOT_EMPTY),
        ErrorKind::ReadOnlyFilesystem => TextValue::Text(&TOOLS_IO_READ_ONLY),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            TextValue::Text(&TOOLS_IO_STORAGE_FULL)
        }
        ErrorKind::FileTooLarge => TextValue::Text(&TOOLS_IO_FILE_TOO_LARGE),
        ErrorKind::InvalidFilename => TextValue::Text(&TOOLS_IO_INVALID_NAME),
        ErrorKind::ResourceBusy | ErrorKind::ExecutableFileBusy => TextValue::Text(&TOOLS_IO_BUSY),
        ErrorKind::Interrupted => TextValue::Text(&TOOLS_IO_INTERRUPTED),
        ErrorKind::TimedOut => TextValue::Text(&TOOLS_IO_TIMED_OUT),
        ErrorKind::InvalidData => TextValue::Text(&TOOLS_IO_INVALID_DATA),
        ErrorKind::OutOfMemory => TextValue::Text(&TOOLS_IO_OUT_OF_MEMORY),
        ErrorKind::CrossesDevices => TextValue::Text(&TOOLS_IO_CROSSES_DEVICES),
        ErrorKind::TooManyLinks => TextValue::Text(&TOOLS_IO_TOO_MANY_LINKS),
        ErrorKind::Unsupported => TextValue::Text(&TOOLS_IO_UNSUPPORTED),
        ErrorKind::InvalidInput => TextValue::Text(&TOOLS_IO_INVALID_ARGUMENT),
        ErrorKind::WouldBlock => TextValue::Text(&TOOLS_IO_TRY_LATER),
        ErrorKind::BrokenPipe => TextValue::Text(&TOOLS_IO_BROKEN_PIPE),
        ErrorKind::NotSeekable => TextValue::Text(&TOOLS_IO_NOT_SEEKABLE),
        ErrorKind::StaleNetworkFileHandle => TextValue::Text(&TOOLS_IO_STALE),
        ErrorKind::UnexpectedEof => TextValue::Text(&TOOLS_IO_ENDED_EARLY),
        ErrorKind::WriteZero => TextValue::Text(&TOOLS_IO_WRITE_ZERO),
        ErrorKind::ArgumentListTooLong => TextValue::Text(&TOOLS_IO_ARGUMENTS_TOO_LONG),
        ErrorKind::Deadlock => TextValue::Text(&TOOLS_IO_DEADLOCK),
        _ => os_reason_value(e),
    }
}

/// [`io_reason_value`] in the words of `texts` (for messages rendered on the spot).
pub(crate) fn io_reason_in(e: &std::io::Error, texts: &crate::texts::Texts) -> String {
    io_reason_value(e).told(texts)
}

/// The system errors [`io_reason_value`] cannot tell by their kind, by their number:
/// a text where one fits, else the error's symbolic name and number (`ENOEXEC (8)`),
/// which reads the same in every language. An error the system did not raise (one a
/// library made, with its own words) keeps its words.
fn os_reason_value(e: &std::io::Error) -> TextValue {
    let Some(code) = e.raw_os_error() else {
        return TextValue::Plain(io_reason(e));
    };
    let text: Option<&'static BuiltinText> = match code {
        libc::ELOOP => Some(&TOOLS_IO_LINK_LOOP),
        libc::EIO => Some(&TOOLS_IO_DEVICE),
        libc::ENODEV | libc::ENXIO => Some(&TOOLS_IO_NO_DEVICE),
        libc::EMFILE | libc::ENFILE => Some(&TOOLS_IO_TOO_MANY_OPEN),
        libc::ENOSYS | libc::EOPNOTSUPP => Some(&TOOLS_IO_UNSUPPORTED),
        libc::EINVAL => Some(&TOOLS_IO_INVALID_ARGUMENT),
        libc::EAGAIN => Some(&TOOLS_IO_TRY_LATER),
        _ => None,
    };
    match text {
        Some(text) => TextValue::Text(text),
        None => TextValue::Plain(match errno_name(code) {
            Some(name) => format!("{name} ({code})"),
            None => format!("errno {code}"),
        }),
    }
}

/// The symbolic name of a system error number, for the rare ones without a text.
fn errno_name(code: i32) -> Option<&'static str> {
    const NAMES: &[(i32, &str)] = &[
        (libc::EPERM, "EPERM"),
        (libc::ESRCH, "ESRCH"),
        (libc::EINTR, "EINTR"),
        (libc::E2BIG, "E2BIG"),
        (libc::ENOEXEC, "ENOEXEC"),
        (libc::EBADF, "EBADF"),
        (libc::ECHILD, "ECHILD"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::EFAULT, "EFAULT"),
        (libc::ENOTBLK, "ENOTBLK"),
        (libc::ETXTBSY, "ETXTBSY"),
        (libc::ENOTTY, "ENOTTY"),
        (libc::EDOM, "EDOM"),
        (libc::ERANGE, "ERANGE"),
        (libc::ENOLCK, "ENOLCK"),
        (libc::EOVERFLOW, "EOVERFLOW"),
        (libc::EILSEQ, "EILSEQ"),
        (libc::ENOTSOCK, "ENOTSOCK"),
        (libc::EBADMSG, "EBADMSG"),
        (libc::EPROTO, "EPROTO"),
        (libc::ECANCELED, "ECANCELED"),
        (libc::EOWNERDEAD, "EOWNERDEAD"),
        (libc::ENOTRECOVERABLE, "ENOTRECOVERABLE"),
        (libc::ECONNREFUSED, "ECONNREFUSED"),
        (libc::ECONNRESET, "ECONNRESET"),
        (libc::ECONNABORTED, "ECONNABORTED"),
        (libc::ENOTCONN, "ENOTCONN"),
        (libc::EADDRINUSE, "EADDRINUSE"),
        (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
        (libc::ENETUNREACH, "ENETUNREACH"),
        (libc::EHOSTUNREACH, "EHOSTUNREACH"),
        (libc::ENETDOWN, "ENETDOWN"),
    ];
    NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| *name)
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
pub(crate) fn not_found(path: &WorkspacePath, what: &'static BuiltinText) -> ToolError {
    let suggestion = path.resolved.name.as_ref().and_then(|name| {
        let names = directory_names(path.resolved.dir.fd());
        let close = did_you_mean(&name.to_string_lossy(), names.iter().map(String::as_str))?;
        Some(shown(&path.resolved.dir.relative().join(close)))
    });
    let error = ToolError::text(what, vals![path = &path.shown]);
    match suggestion {
        Some(s) => error.hint_text(&TOOLS_PATH_DID_YOU_MEAN, vals![suggestion = echo(&s)]),
        None => error.hint_text(&TOOLS_PATH_CHECK_HINT, vec![]),
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
        (None, _) => return Err(not_found(path, &TOOLS_FILE_NOT_FOUND)),
        (Some(FileType::Directory), _) | (_, None) => return Err(is_a_directory(path)),
        (Some(FileType::RegularFile), Some(name)) => name,
        (Some(other), _) => return Err(not_regular(path, *other)),
    };
    let fd = match open_read(path.resolved.dir.fd(), name) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(not_found(path, &TOOLS_FILE_NOT_FOUND)),
        Err(Errno::LOOP | Errno::MLINK) => return Err(changed(path)),
        Err(e) => return Err(io_error(&TOOLS_FILE_CANNOT_READ, path, &e.into())),
    };
    let stat =
        rustix::fs::fstat(&fd).map_err(|e| io_error(&TOOLS_FILE_CANNOT_READ, path, &e.into()))?;
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
        .map_err(|e| io_error(&TOOLS_FILE_CANNOT_READ, path, &e))?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(too_big(path, bytes.len() as u64));
    }
    decode_text(bytes, &path.shown)
}

fn is_a_directory(path: &WorkspacePath) -> ToolError {
    ToolError::text(&TOOLS_FILE_IS_A_DIRECTORY, vals![path = &path.shown])
        .hint_text(&TOOLS_FILE_IS_A_DIRECTORY_HINT, vec![])
}

fn changed(path: &WorkspacePath) -> ToolError {
    ToolError::text(&TOOLS_FILE_CHANGED, vals![path = &path.shown])
        .hint_text(&TOOLS_TRY_AGAIN_HINT, vec![])
}

fn too_big(path: &WorkspacePath, len: u64) -> ToolError {
    ToolError::text(
        &TOOLS_FILE_TOO_BIG,
        vals![path = &path.shown, bytes = len, max = MAX_TEXT_FILE_BYTES],
    )
    .hint_text(&TOOLS_FILE_TOO_BIG_HINT, vec![])
}

/// What a file type is called in messages (`a FIFO (named pipe)`).
pub(crate) fn describe_type(kind: FileType) -> &'static BuiltinText {
    match kind {
        FileType::Fifo => &TOOLS_FILE_KIND_FIFO,
        FileType::Socket => &TOOLS_FILE_KIND_SOCKET,
        FileType::BlockDevice => &TOOLS_FILE_KIND_BLOCK_DEVICE,
        FileType::CharacterDevice => &TOOLS_FILE_KIND_CHARACTER_DEVICE,
        FileType::Directory => &TOOLS_FILE_KIND_DIRECTORY,
        FileType::Symlink => &TOOLS_FILE_KIND_SYMLINK,
        FileType::RegularFile => &TOOLS_FILE_KIND_REGULAR,
        FileType::Unknown => &TOOLS_FILE_KIND_OTHER,
    }
}

/// The error for a FIFO, socket or device where a regular file is needed.
pub(crate) fn not_regular(path: &WorkspacePath, kind: FileType) -> ToolError {
    ToolError::text(
        &TOOLS_FILE_NOT_REGULAR,
        vals![path = &path.shown, kind = describe_type(kind)],
    )
    .hint_text(&TOOLS_FILE_NOT_REGULAR_HINT, vec![])
}

/// The bytes as text, or an error if they look binary (a NUL byte or invalid UTF-8).
pub(crate) fn decode_text(bytes: Vec<u8>, shown: &ShownPath) -> Result<String, ToolError> {
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(
            ToolError::text(&TOOLS_FILE_BINARY, vals![path = shown, offset = at])
                .hint_text(&TOOLS_FILE_BINARY_HINT, vec![]),
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError::text(
            &TOOLS_FILE_NOT_UTF8,
            vals![path = shown, offset = e.utf8_error().valid_up_to()],
        )
        .hint_text(&TOOLS_FILE_BINARY_HINT, vec![])
    })
}

/// An I/O failure on `path` as a tool error.
pub(crate) fn io_error(
    action: &'static BuiltinText,
    path: &WorkspacePath,
    e: &std::io::Error,
) -> ToolError {
    ToolError::text(
        action,
        vec![
            ("path", (&path.shown).into()),
            ("reason", io_reason_value(e)),
        ],
    )
    .hint_text(&TOOLS_FILE_CANNOT_HINT, vec![])
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
        return Err(
            ToolError::text(&TOOLS_FILE_WRITE_DIR_SYNTAX, vals![path = &path.shown])
                .hint_text(&TOOLS_FILE_WRITE_DIR_SYNTAX_HINT, vec![]),
        );
    }
    let Some(name) = &path.resolved.name else {
        return Err(is_a_directory(path).hint_text(&TOOLS_FILE_WRITE_INTO_HINT, vec![]));
    };
    let dir = path.resolved.dir.fd();
    // Looked at again, on the directory descriptor, right before the write.
    let mode = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Some(st.st_mode & 0o7777),
            FileType::Directory => {
                return Err(is_a_directory(path).hint_text(&TOOLS_FILE_WRITE_INTO_HINT, vec![]));
            }
            // A link swapped in meanwhile is replaced by the rename, not written through.
            FileType::Symlink => None,
            other => return Err(not_regular(path, other)),
        },
        Err(Errno::NOENT) => None,
        Err(e) => return Err(io_error(&TOOLS_FILE_CANNOT_WRITE, path, &e.into())),
    };

    let (file, mut temp) =
        create_temp(dir).map_err(|e| io_error(&TOOLS_FILE_CANNOT_WRITE, path, &e))?;
    let written = (|| {
        let mut file = File::from(file);
        file.write_all(contents)?;
        // Keep the mode of the file being replaced (an executable script stays executable).
        if let Some(mode) = mode {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
        }
        file.sync_all()
    })();
    written.map_err(|e| io_error(&TOOLS_FILE_CANNOT_WRITE, path, &e))?;
    if cancel.is_cancelled() {
        return Err(
            ToolError::text(&TOOLS_FILE_WRITE_ABANDONED, vals![path = &path.shown])
                .hint_text(&TOOLS_TRY_AGAIN_HINT, vec![]),
        );
    }
    rustix::fs::renameat(dir, &temp.name, dir, name)
        .map_err(|e| io_error(&TOOLS_FILE_CANNOT_WRITE, path, &e.into()))?;
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
        .map_err(|e| io_error(&TOOLS_FILE_CANNOT_OPEN, path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_io_reasons_are_texts_a_pack_translates() {
        use std::io::{Error, ErrorKind as K};
        for (kind, id) in [
            (K::IsADirectory, "tools.io.is-a-directory"),
            (K::NotADirectory, "tools.io.not-a-directory"),
            (K::AlreadyExists, "tools.io.already-exists"),
            (K::StorageFull, "tools.io.storage-full"),
            (K::ReadOnlyFilesystem, "tools.io.read-only"),
            (K::ResourceBusy, "tools.io.busy"),
            (K::UnexpectedEof, "tools.io.ended-early"),
            (K::CrossesDevices, "tools.io.crosses-devices"),
        ] {
            match io_reason_value(&Error::from(kind)) {
                TextValue::Text(text) => assert_eq!(text.id, id),
                other => panic!("{kind:?} is not a text: {other:?}"),
            }
        }
    }

    /// Every system error reads without English words: a text a pack translates, else
    /// its symbolic name and number. Only an error a library made keeps its words.
    #[test]
    fn every_system_error_is_a_text_or_its_name() {
        use std::io::Error;
        for code in 1..134 {
            match io_reason_value(&Error::from_raw_os_error(code)) {
                TextValue::Text(_) => {}
                TextValue::Plain(p) => assert!(
                    p == format!("errno {code}")
                        || (p.starts_with('E')
                            && p.ends_with(&format!("({code})"))
                            && p.chars()
                                .take_while(|c| *c != ' ')
                                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())),
                    "errno {code}: {p:?}"
                ),
                other => panic!("errno {code}: {other:?}"),
            }
        }
        match io_reason_value(&Error::from_raw_os_error(libc::ELOOP)) {
            TextValue::Text(text) => assert_eq!(text.id, "tools.io.link-loop"),
            other => panic!("ELOOP: {other:?}"),
        }
        match io_reason_value(&Error::other("a library's own words")) {
            TextValue::Plain(p) => assert_eq!(p, "a library's own words"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shown_is_relative_with_slashes() {
        assert_eq!(shown(Path::new("")), ".");
        assert_eq!(shown(Path::new("a/b.rs")), "a/b.rs");
    }
}

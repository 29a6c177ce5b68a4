//! Reading and writing one file beneath a directory, through [`beneath`](super::beneath):
//! a `textFile` beside its preset ([`read_beneath`]), and a file of the project that
//! `schema --write` and `lock` write ([`write_confined`], [`remove_confined`]).
//!
//! A cloned repository is not necessarily yours: a committed symbolic link
//! `.agent-presets/preset.schema.json -> ~/.bashrc` (or a `schemas` directory linked to
//! somewhere else) must not turn `schema --write` into a write outside the project, nor
//! `textFile: notes.md -> ~/.ssh/id_ed25519` into a read outside the preset's directory.
//! So the path is resolved beneath the directory's descriptor, one component at a time,
//! every link read and judged, never followed by the kernel: a link that stays inside is
//! followed, one that leads out is refused before anything is opened. Bytes are written
//! to a temporary file created in the directory the walk ended in (never through an
//! existing name) and renamed over the target there, so a link swapped in meanwhile is
//! replaced, not written through, and a reader never sees half a file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::beneath::{ResolveError, Resolved, WorkspaceRoot, open_read};
use crate::bounded::{BoundedReadError, FileKind, read_open_file};

/// Why [`read_beneath`] read nothing.
#[derive(Debug)]
pub(crate) enum ReadBeneathError {
    /// A symbolic link on the path (or the path itself) leads outside the directory.
    Outside,
    /// Nothing readable is there, or reading it failed or was refused.
    Read(BoundedReadError),
}

/// Read the regular file `relative` beneath the directory `dir`, at most `limit` bytes
/// (as [`read_bounded`](crate::bounded::read_bounded) reads). A link that leads outside
/// `dir` is refused ([`ReadBeneathError::Outside`]) unless its target does not exist
/// either, which is a dangling link like any other.
pub(crate) fn read_beneath(
    dir: &Path,
    relative: &Path,
    limit: u64,
) -> Result<Vec<u8>, ReadBeneathError> {
    let read = |e: BoundedReadError| ReadBeneathError::Read(e);
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let absolute = dir.canonicalize().map_err(|e| read(io_error(e)))?;
    let root = WorkspaceRoot::open(&absolute)
        .map_err(|e| read(BoundedReadError::Io(io::Error::other(e.to_string()))))?;
    let components = root
        .components_below(relative)
        .ok_or(ReadBeneathError::Outside)?;
    let resolved = match root.resolve(root.chain(), components, false) {
        Ok(resolved) => resolved,
        Err(ResolveError::Outside {
            target_missing: true,
            ..
        })
        | Err(ResolveError::Broken { .. }) => return Err(read(BoundedReadError::DanglingLink)),
        Err(ResolveError::Outside { .. }) => return Err(ReadBeneathError::Outside),
        Err(ResolveError::MissingDir { .. }) => return Err(read(BoundedReadError::NotFound)),
        Err(ResolveError::NotADirectory { .. }) => {
            return Err(read(BoundedReadError::Io(io::Error::from_raw_os_error(
                libc::ENOTDIR,
            ))));
        }
        Err(ResolveError::Loop { .. }) => {
            return Err(read(BoundedReadError::Io(io::Error::from_raw_os_error(
                libc::ELOOP,
            ))));
        }
        Err(ResolveError::Unstable { at }) => {
            return Err(read(BoundedReadError::Io(io::Error::other(format!(
                "`{}` kept changing while it was read",
                at.display()
            )))));
        }
        Err(ResolveError::Io { error, .. }) => return Err(read(BoundedReadError::Io(error))),
    };
    let name = match (&resolved.name, resolved.kind) {
        (_, None) => return Err(read(BoundedReadError::NotFound)),
        (None, _) | (_, Some(FileType::Directory)) => {
            return Err(read(BoundedReadError::Directory));
        }
        (Some(name), Some(_)) => name,
    };
    // A socket cannot be opened at all; anything else is judged on the opened descriptor.
    if resolved.kind == Some(FileType::Socket) {
        return Err(read(BoundedReadError::NotRegular(FileKind::Socket)));
    }
    let fd = open_read(resolved.dir.fd(), name).map_err(|e| read(io_error(e.into())))?;
    read_open_file(File::from(fd), limit).map_err(read)
}

fn io_error(e: io::Error) -> BoundedReadError {
    match e.kind() {
        io::ErrorKind::NotFound => BoundedReadError::NotFound,
        _ => BoundedReadError::Io(e),
    }
}

/// Why a project file was not written or removed: what to print, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFileError {
    /// What went wrong, naming the file as shown.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl ProjectFileError {
    fn new(message: String) -> Self {
        ProjectFileError {
            message,
            help: None,
        }
    }
}

impl std::fmt::Display for ProjectFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProjectFileError {}

/// `root` opened, and `path` (absolute, or relative to the current directory) as
/// components below it; a path outside `root` is refused as leading outside.
fn open_below(
    root: &Path,
    path: &Path,
    shown: &str,
) -> Result<(WorkspaceRoot, Vec<OsString>, Refuse), ProjectFileError> {
    let spelled = std::path::absolute(root)
        .map_err(|e| ProjectFileError::new(format!("cannot resolve `{}`: {e}", root.display())))?;
    let opened = WorkspaceRoot::open(&spelled).map_err(|e| match e {
        crate::confine::WorkspaceError::Inaccessible { source, .. } => {
            ProjectFileError::new(format!("cannot resolve `{}`: {source}", root.display()))
        }
        other => ProjectFileError::new(format!("cannot resolve `{}`: {other}", root.display())),
    })?;
    let refuse = Refuse {
        shown: shown.to_owned(),
        outside: format!("outside `{}`", opened.path().display()),
    };
    let path = std::path::absolute(path)
        .map_err(|e| ProjectFileError::new(format!("cannot resolve `{shown}`: {e}")))?;
    let components = opened
        .components_below(&path)
        .ok_or_else(|| refuse.via_link())?;
    Ok((opened, components, refuse))
}

/// The refusals of one file, worded alike.
struct Refuse {
    shown: String,
    outside: String,
}

impl Refuse {
    fn because(&self, why: String) -> ProjectFileError {
        let shown = &self.shown;
        ProjectFileError {
            message: format!("not writing `{shown}`: {why}"),
            help: Some(format!(
                "replace the symbolic link with a regular file or directory (e.g. `rm {shown}`), then run the command again"
            )),
        }
    }

    fn via_link(&self) -> ProjectFileError {
        self.because(format!(
            "a symbolic link on its path leads {}",
            self.outside
        ))
    }

    /// A walk that failed, for the file whose components below the root are `own`.
    fn resolve_error(&self, e: ResolveError, own: &Path, verb: &str) -> ProjectFileError {
        let shown = &self.shown;
        match e {
            ResolveError::Outside {
                link,
                target_missing,
            } if link == own => {
                if target_missing {
                    self.dangling()
                } else {
                    self.because(format!("it is a symbolic link to a file {}", self.outside))
                }
            }
            ResolveError::Broken { link, .. } | ResolveError::Loop { link, .. } if link == own => {
                self.dangling()
            }
            ResolveError::Outside { .. }
            | ResolveError::Broken { .. }
            | ResolveError::Loop { .. } => self.via_link(),
            ResolveError::MissingDir { .. } => ProjectFileError::new(format!(
                "cannot {verb} `{shown}`: {}",
                io::Error::from_raw_os_error(libc::ENOENT)
            )),
            ResolveError::NotADirectory { at } => ProjectFileError::new(format!(
                "cannot create the directory of `{shown}`: `{}` is not a directory",
                at.display()
            )),
            ResolveError::Unstable { at } => ProjectFileError::new(format!(
                "cannot {verb} `{shown}`: `{}` kept changing meanwhile",
                at.display()
            )),
            ResolveError::Io { at, error } => ProjectFileError::new(format!(
                "cannot {verb} `{shown}`: `{}`: {error}",
                at.display()
            )),
        }
    }

    fn dangling(&self) -> ProjectFileError {
        self.because(
            "it is a symbolic link to nothing (a file is never created where a link points)"
                .to_owned(),
        )
    }
}

/// Write `contents` to `path`, which must stay inside `root` (see the module docs):
/// missing directories are created beneath `root`, a link that stays inside is followed
/// (the file it names is replaced), then a temporary file is written beside the target
/// and renamed over it.
pub fn write_confined(
    root: &Path,
    path: &Path,
    shown: &str,
    contents: &[u8],
) -> Result<(), ProjectFileError> {
    let (opened, components, refuse) = open_below(root, path, shown)?;
    let own: PathBuf = components.iter().collect();
    let resolved = opened
        .resolve(opened.chain(), components, true)
        .map_err(|e| refuse.resolve_error(e, &own, "write"))?;
    let Resolved { dir, name, kind } = resolved;
    let Some(name) = name else {
        return Err(ProjectFileError::new(format!(
            "cannot write `{shown}`: it has no directory"
        )));
    };
    if kind == Some(FileType::Directory) {
        return Err(ProjectFileError::new(format!(
            "cannot write `{shown}`: {}",
            io::Error::from_raw_os_error(libc::EISDIR)
        )));
    }
    replace(dir.fd(), &name, contents)
        .map_err(|e| ProjectFileError::new(format!("cannot write `{shown}`: {e}")))
}

/// Remove `path` (a file of `root`); a link is removed itself, never what it points to,
/// and a file whose directory lies outside `root` is left alone.
pub fn remove_confined(root: &Path, path: &Path, shown: &str) -> Result<(), ProjectFileError> {
    let (opened, mut components, refuse) = open_below(root, path, shown)?;
    let Some(name) = components.pop() else {
        return Err(ProjectFileError::new(format!(
            "cannot remove `{shown}`: it has no directory"
        )));
    };
    let own: PathBuf = components.iter().collect();
    let dir = opened
        .resolve(opened.chain(), components, false)
        .map_err(|e| refuse.resolve_error(e, &own, "remove"))?
        .into_dir_chain()
        .map_err(|e| ProjectFileError::new(format!("cannot remove `{shown}`: {e}")))?;
    rustix::fs::unlinkat(dir.fd(), &name, AtFlags::empty()).map_err(|e| {
        ProjectFileError::new(format!("cannot remove `{shown}`: {}", io::Error::from(e)))
    })
}

/// A temporary file is created, never opened through an existing name or a link
/// (`O_CREAT | O_EXCL`, and `O_NOFOLLOW` besides), and not passed on to commands.
const TEMPORARY_FLAGS: OFlags = OFlags::WRONLY
    .union(OFlags::CREATE)
    .union(OFlags::EXCL)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Write `contents` to a new temporary file in `dir` and rename it over `name`. The
/// temporary file is created exclusively (`O_EXCL` never follows a link).
fn replace(dir: BorrowedFd<'_>, name: &OsStr, contents: &[u8]) -> io::Result<()> {
    let shown = name.to_string_lossy();
    let mut attempt = 0u32;
    let (temporary, fd): (OsString, OwnedFd) = loop {
        let candidate = OsString::from(format!(".{shown}.{}.{attempt}.tmp", std::process::id()));
        match rustix::fs::openat(dir, &candidate, TEMPORARY_FLAGS, Mode::from_raw_mode(0o666)) {
            Ok(fd) => break (candidate, fd),
            Err(Errno::EXIST) if attempt < 100 => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    };
    let mut file = File::from(fd);
    // The file keeps its permissions (a shared, group-writable schema stays so).
    let keep_mode = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => rustix::fs::fchmod(&file, Mode::from_raw_mode(st.st_mode & 0o7777))
            .map_err(io::Error::from),
        Err(_) => Ok(()),
    };
    let written = keep_mode
        .and_then(|()| file.write_all(contents))
        .and_then(|()| file.sync_all())
        .and_then(|()| rustix::fs::renameat(dir, &temporary, dir, name).map_err(io::Error::from));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, &temporary, AtFlags::empty());
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn writes_inside_and_refuses_links_out() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("project");
        let elsewhere = outer.path().join("elsewhere");
        fs::create_dir_all(root.join("a")).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();

        // A new file in new directories.
        write_confined(&root, &root.join("x/y/new.json"), "x/y/new.json", b"1").unwrap();
        assert_eq!(fs::read(root.join("x/y/new.json")).unwrap(), b"1");

        // A link to a file outside: refused, the target untouched.
        fs::write(elsewhere.join("victim"), "keep").unwrap();
        symlink(elsewhere.join("victim"), root.join("a/link.json")).unwrap();
        let e = write_confined(&root, &root.join("a/link.json"), "a/link.json", b"2");
        assert!(e.is_err(), "{e:?}");
        assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"keep");

        // A dangling link: refused, nothing created where it points.
        symlink(elsewhere.join("new"), root.join("a/dangling.json")).unwrap();
        assert!(write_confined(&root, &root.join("a/dangling.json"), "d", b"3").is_err());
        assert!(!elsewhere.join("new").exists());

        // A linked directory on the way out: refused, also for a file not there yet.
        symlink(&elsewhere, root.join("out")).unwrap();
        assert!(write_confined(&root, &root.join("out/victim"), "v", b"4").is_err());
        assert!(write_confined(&root, &root.join("out/sub/f"), "f", b"5").is_err());
        assert!(remove_confined(&root, &root.join("out/victim"), "v").is_err());
        assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"keep");
        assert!(!elsewhere.join("sub").exists());

        // A link that stays inside is followed.
        fs::write(root.join("a/real.json"), "old").unwrap();
        symlink("real.json", root.join("a/inner.json")).unwrap();
        write_confined(&root, &root.join("a/inner.json"), "a/inner.json", b"6").unwrap();
        assert_eq!(fs::read(root.join("a/real.json")).unwrap(), b"6");
        assert!(
            fs::symlink_metadata(root.join("a/inner.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // The permissions of a file written again are kept.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(root.join("a/real.json"), fs::Permissions::from_mode(0o640)).unwrap();
        write_confined(&root, &root.join("a/real.json"), "a/real.json", b"7").unwrap();
        let mode = fs::metadata(root.join("a/real.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
        // No temporary file is left behind.
        let left: Vec<_> = fs::read_dir(root.join("a"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// A temporary directory holding `project/` (the root) and `elsewhere/`.
    fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("project");
        let elsewhere = outer.path().join("elsewhere");
        fs::create_dir_all(root.join("a")).unwrap();
        fs::create_dir_all(&elsewhere).unwrap();
        (outer, root, elsewhere)
    }

    fn message(e: Result<(), ProjectFileError>) -> String {
        let e = e.unwrap_err();
        assert_eq!(e.to_string(), e.message);
        e.message
    }

    #[test]
    fn each_refusal_says_which_link_is_wrong() {
        let (_outer, root, elsewhere) = layout();
        let write = |rel: &str| write_confined(&root, &root.join(rel), rel, b"x");
        fs::write(elsewhere.join("victim"), "keep").unwrap();
        symlink(elsewhere.join("victim"), root.join("a/out.json")).unwrap();
        let e = write("a/out.json").unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "not writing `a/out.json`: it is a symbolic link to a file outside `{}`",
                root.canonicalize().unwrap().display()
            )
        );
        assert_eq!(
            e.help.as_deref(),
            Some(
                "replace the symbolic link with a regular file or directory (e.g. `rm a/out.json`), then run the command again"
            )
        );
        let nothing =
            "it is a symbolic link to nothing (a file is never created where a link points)";
        // Dangling: outside, inside, and a loop.
        symlink(elsewhere.join("new"), root.join("a/gone-out.json")).unwrap();
        assert!(message(write("a/gone-out.json")).ends_with(nothing));
        symlink("missing.json", root.join("a/gone-in.json")).unwrap();
        assert!(message(write("a/gone-in.json")).ends_with(nothing));
        symlink("loop2", root.join("a/loop1")).unwrap();
        symlink("loop1", root.join("a/loop2")).unwrap();
        assert!(message(write("a/loop1")).ends_with(nothing));
        // The same links on the way to the file: the path leads outside.
        let via = "a symbolic link on its path leads outside";
        symlink(&elsewhere, root.join("a/dir-out")).unwrap();
        assert!(message(write("a/dir-out/f.json")).contains(via));
        symlink("nowhere", root.join("a/dir-gone")).unwrap();
        assert!(message(write("a/dir-gone/f.json")).contains(via));
        assert!(message(write("a/loop1/f.json")).contains(via));
        // A path that is not below the root at all.
        let e = write_confined(&root, &elsewhere.join("victim"), "victim", b"x");
        assert!(message(e).contains(via));
        assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"keep");
        assert!(!elsewhere.join("new").exists());
        assert!(!root.join("a/missing.json").exists());
    }

    #[test]
    fn what_cannot_be_written_is_named() {
        let (_outer, root, _elsewhere) = layout();
        // The root itself has no directory to hold it.
        let e = write_confined(&root, &root, "project", b"x");
        assert_eq!(message(e), "cannot write `project`: it has no directory");
        // A directory is not replaced.
        let e = message(write_confined(&root, &root.join("a"), "a", b"x"));
        assert!(e.starts_with("cannot write `a`: Is a directory"), "{e}");
        assert!(root.join("a").is_dir());
        // A file where a directory should be.
        fs::write(root.join("file"), "f").unwrap();
        let e = message(write_confined(&root, &root.join("file/x.json"), "x", b"x"));
        assert_eq!(
            e,
            "cannot create the directory of `x`: `file` is not a directory"
        );
        // A root that is missing, or not a directory.
        let e = message(write_confined(
            &root.join("none"),
            &root.join("none/x"),
            "x",
            b"",
        ));
        assert!(e.starts_with("cannot resolve `"), "{e}");
        assert!(e.contains("No such file"), "{e}");
        let e = message(write_confined(
            &root.join("file"),
            &root.join("file/x"),
            "x",
            b"",
        ));
        assert!(e.starts_with("cannot resolve `"), "{e}");
        assert!(e.ends_with("is not a directory"), "{e}");
        // A relative path, below a relative root: both from the current directory.
        let here = std::env::current_dir().unwrap();
        let rel_root = pathdiff(&root, &here);
        write_confined(&rel_root, &rel_root.join("a/rel.json"), "rel", b"r").unwrap();
        assert_eq!(fs::read(root.join("a/rel.json")).unwrap(), b"r");
    }

    /// `path` relative to `base`, with `..` as needed (both absolute).
    fn pathdiff(path: &Path, base: &Path) -> PathBuf {
        let path: Vec<_> = path.components().collect();
        let base: Vec<_> = base.components().collect();
        let common = path.iter().zip(&base).take_while(|(a, b)| a == b).count();
        let mut out = PathBuf::new();
        for _ in common..base.len() {
            out.push("..");
        }
        for c in &path[common..] {
            out.push(c);
        }
        out
    }

    #[test]
    fn a_temporary_name_in_use_is_skipped() {
        let (_outer, root, _elsewhere) = layout();
        let taken = root.join(format!("a/.t.json.{}.0.tmp", std::process::id()));
        fs::write(&taken, "someone else's").unwrap();
        write_confined(&root, &root.join("a/t.json"), "t", b"mine").unwrap();
        assert_eq!(fs::read(root.join("a/t.json")).unwrap(), b"mine");
        assert_eq!(fs::read(&taken).unwrap(), b"someone else's");
        let left: Vec<_> = fs::read_dir(root.join("a"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        // After 100 names in use it gives up rather than look for ever.
        for attempt in 1..=100 {
            let taken = root.join(format!("a/.t.json.{}.{attempt}.tmp", std::process::id()));
            fs::write(&taken, "").unwrap();
        }
        let e = message(write_confined(&root, &root.join("a/t.json"), "t", b"late"));
        assert!(e.starts_with("cannot write `t`: File exists"), "{e}");
        assert_eq!(fs::read(root.join("a/t.json")).unwrap(), b"mine");
    }

    #[test]
    fn removing_takes_the_name_never_what_it_points_to() {
        let (_outer, root, elsewhere) = layout();
        fs::write(elsewhere.join("victim"), "keep").unwrap();
        symlink(elsewhere.join("victim"), root.join("a/link")).unwrap();
        remove_confined(&root, &root.join("a/link"), "a/link").unwrap();
        assert!(fs::symlink_metadata(root.join("a/link")).is_err());
        assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"keep");
        fs::write(root.join("a/file"), "x").unwrap();
        remove_confined(&root, &root.join("a/file"), "a/file").unwrap();
        assert!(!root.join("a/file").exists());
        // Through a linked directory that stays inside.
        symlink("a", root.join("alias")).unwrap();
        fs::write(root.join("a/inner"), "x").unwrap();
        remove_confined(&root, &root.join("alias/inner"), "alias/inner").unwrap();
        assert!(!root.join("a/inner").exists());
        // Missing: the file, its directory.
        let e = message(remove_confined(&root, &root.join("a/none"), "a/none"));
        assert!(e.starts_with("cannot remove `a/none`: No such file"), "{e}");
        let e = message(remove_confined(&root, &root.join("b/none"), "b/none"));
        assert!(e.starts_with("cannot remove `b/none`: No such file"), "{e}");
        // Outside, and the root itself.
        symlink(&elsewhere, root.join("out")).unwrap();
        let e = message(remove_confined(&root, &root.join("out/victim"), "v"));
        assert!(e.contains("it is a symbolic link to a file outside"), "{e}");
        let e = message(remove_confined(&root, &root.join("out/sub/victim"), "v"));
        assert!(
            e.contains("a symbolic link on its path leads outside"),
            "{e}"
        );
        let e = message(remove_confined(&root, &root, "project"));
        assert_eq!(e, "cannot remove `project`: it has no directory");
        assert!(elsewhere.join("victim").exists());
    }

    fn read(dir: &Path, rel: &str) -> Result<Vec<u8>, ReadBeneathError> {
        read_beneath(dir, Path::new(rel), 16)
    }

    #[test]
    fn reads_stay_beneath_the_directory() {
        let (_outer, root, elsewhere) = layout();
        fs::write(root.join("a/t.md"), "text").unwrap();
        fs::write(elsewhere.join("secret"), "secret").unwrap();
        assert_eq!(read(&root, "a/t.md").unwrap(), b"text");
        symlink("a/t.md", root.join("near")).unwrap();
        assert_eq!(read(&root, "near").unwrap(), b"text");
        symlink(elsewhere.join("secret"), root.join("far")).unwrap();
        assert!(matches!(read(&root, "far"), Err(ReadBeneathError::Outside)));
        symlink(&elsewhere, root.join("out")).unwrap();
        assert!(matches!(
            read(&root, "out/secret"),
            Err(ReadBeneathError::Outside)
        ));
        assert!(matches!(
            read(&root, "../elsewhere/secret"),
            Err(ReadBeneathError::Outside)
        ));
        // A link out to nothing is dangling like one inside.
        symlink(elsewhere.join("none"), root.join("gone-out")).unwrap();
        symlink("none", root.join("gone-in")).unwrap();
        for rel in ["gone-out", "gone-in"] {
            assert!(
                matches!(
                    read(&root, rel),
                    Err(ReadBeneathError::Read(BoundedReadError::DanglingLink))
                ),
                "{rel}"
            );
        }
        // The preset's directory given as "" is the current one.
        let here = std::env::current_dir().unwrap();
        assert!(here.join("Cargo.toml").is_file());
        let bytes = read_beneath(Path::new(""), Path::new("Cargo.toml"), 1 << 20).unwrap();
        assert_eq!(bytes, fs::read(here.join("Cargo.toml")).unwrap());
    }

    #[test]
    fn what_cannot_be_read_says_why() {
        let (_outer, root, _elsewhere) = layout();
        let refused = |rel: &str| match read(&root, rel) {
            Err(ReadBeneathError::Read(e)) => e,
            other => panic!("{rel}: {other:?}"),
        };
        assert!(matches!(refused("none"), BoundedReadError::NotFound));
        assert!(matches!(refused("b/none"), BoundedReadError::NotFound));
        assert!(matches!(refused("a"), BoundedReadError::Directory));
        assert!(matches!(refused("."), BoundedReadError::Directory));
        fs::write(root.join("file"), "f").unwrap();
        let e = refused("file/x");
        assert!(
            matches!(&e, BoundedReadError::Io(io) if io.raw_os_error() == Some(libc::ENOTDIR)),
            "{e:?}"
        );
        symlink("l2", root.join("l1")).unwrap();
        symlink("l1", root.join("l2")).unwrap();
        let e = refused("l1");
        assert!(
            matches!(&e, BoundedReadError::Io(io) if io.raw_os_error() == Some(libc::ELOOP)),
            "{e:?}"
        );
        fs::write(root.join("big"), "x".repeat(17)).unwrap();
        assert!(matches!(
            refused("big"),
            BoundedReadError::TooLarge {
                size: Some(17),
                limit: 16
            }
        ));
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            refused("fifo"),
            BoundedReadError::NotRegular(FileKind::Fifo)
        ));
        let _socket = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
        assert!(matches!(
            refused("sock"),
            BoundedReadError::NotRegular(FileKind::Socket)
        ));
        // Missing or unusable directories.
        let e = match read(&root.join("none"), "x") {
            Err(ReadBeneathError::Read(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(matches!(e, BoundedReadError::NotFound), "{e:?}");
        let e = match read(&root.join("file"), "x") {
            Err(ReadBeneathError::Read(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(e.to_string().ends_with("is not a directory"), "{e}");
    }
}

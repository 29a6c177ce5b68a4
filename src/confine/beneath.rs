//! Resolution beneath the workspace root's directory descriptor.
//!
//! The root is opened once ([`WorkspaceRoot::open`]); every path a tool names is then
//! walked one component at a time from that descriptor: each directory is opened
//! relative to the one before it with `O_NOFOLLOW`, and every symbolic link is read
//! (`readlinkat`), never followed by the kernel, and its target resolved by the same
//! rules. `..` returns to a directory descriptor already held, and cannot go above the
//! root. Files are then opened, created and renamed relative to the directory
//! descriptor the walk ended in, again with `O_NOFOLLOW`. A name is never resolved twice,
//! so a process that swaps a directory or a file for a symbolic link between a check and
//! a use cannot make a tool leave the workspace: at worst the use fails.
//!
//! Why a walk of our own instead of `cap-std`'s `Dir` or `openat2(RESOLVE_BENEATH)`:
//! both refuse every absolute symbolic link, also one that points back into the
//! workspace (`alias -> /work/repo/src`), which the tools follow; both hide which link led
//! outside, which the tools' messages name; and `openat2` exists only on Linux 5.6 and
//! later. A component-by-component walk with `openat(O_NOFOLLOW)` and `readlinkat` gives
//! the same guarantee on every Unix — the kernel never follows a link for us, magic
//! `/proc` links included (their target is only ever read as text).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::WorkspaceError;

/// Most symbolic links one resolution follows (the kernel's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;
/// How often a component that changes while it is being looked at is looked at again.
const MAX_RETRIES: usize = 16;

/// Flags for a directory held only to resolve names beneath it.
pub(crate) fn walk_dir_flags() -> OFlags {
    // `O_PATH` needs no read permission (like path resolution itself, which only needs
    // search permission); elsewhere a directory must be readable to be held open.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let access = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let access = OFlags::RDONLY;
    access
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC)
}

/// The workspace root: its canonical path and a descriptor opened once, from which every
/// path is resolved.
#[derive(Debug)]
pub(crate) struct WorkspaceRoot {
    /// Canonical: absolute, no `.`, `..` or symbolic links.
    path: PathBuf,
    /// The root as the host spelled it, `.` and `..` applied; absolute paths and links
    /// under it count as inside too.
    spelled: PathBuf,
    dir: Arc<OwnedFd>,
}

impl WorkspaceRoot {
    /// Open the workspace root: it must be absolute, exist and be a directory.
    pub(crate) fn open(given: &Path) -> Result<Self, WorkspaceError> {
        if !given.is_absolute() {
            return Err(WorkspaceError::NotAbsolute {
                path: given.to_path_buf(),
            });
        }
        let path = given
            .canonicalize()
            .map_err(|source| WorkspaceError::Inaccessible {
                path: given.to_path_buf(),
                source,
            })?;
        let dir = rustix::fs::open(&path, walk_dir_flags(), Mode::empty()).map_err(|e| {
            if e == Errno::NOTDIR {
                WorkspaceError::NotADirectory {
                    path: given.to_path_buf(),
                }
            } else {
                WorkspaceError::Inaccessible {
                    path: given.to_path_buf(),
                    source: e.into(),
                }
            }
        })?;
        Ok(WorkspaceRoot {
            spelled: normalize(given),
            path,
            dir: Arc::new(dir),
        })
    }

    /// The canonical path of the root.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The root's descriptor.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// A chain holding just the root.
    pub(crate) fn chain(&self) -> DirChain {
        DirChain {
            steps: vec![(Arc::clone(&self.dir), OsString::new())],
        }
    }

    /// The components of `given` (relative to the root, or absolute) below the root, with
    /// `.` and `..` applied lexically; `None` when it lies outside the root.
    pub(crate) fn components_below(&self, given: &Path) -> Option<Vec<OsString>> {
        let joined = if given.is_absolute() {
            normalize(given)
        } else {
            normalize(&self.path.join(given))
        };
        let below = joined
            .strip_prefix(&self.path)
            .or_else(|_| joined.strip_prefix(&self.spelled))
            .ok()?;
        Some(
            below
                .components()
                .map(|c| c.as_os_str().to_os_string())
                .collect(),
        )
    }

    /// Resolve `components` (below `start`) without leaving the root. With `create_dirs`,
    /// missing directories on the way are created (the last component never is).
    pub(crate) fn resolve(
        &self,
        start: DirChain,
        components: Vec<OsString>,
        create_dirs: bool,
    ) -> Result<Resolved, ResolveError> {
        Walk {
            root: self,
            chain: start,
            queue: components
                .into_iter()
                .map(|name| Pending { name, via: None })
                .collect(),
            links: Vec::new(),
            followed: 0,
            retries: 0,
            create_dirs,
        }
        .run()
    }

    /// `target` (an absolute link target) below the root, as components; `None` when it
    /// lies elsewhere. `..` is not applied: the walk applies it on descriptors.
    fn strip(&self, target: &Path) -> Option<Vec<OsString>> {
        let rest = target
            .strip_prefix(&self.path)
            .or_else(|_| target.strip_prefix(&self.spelled))
            .ok()?;
        Some(components_of(rest))
    }
}

/// The open directories from the root down to one directory (root first), with their
/// names: the directory and where it lies, without any name being resolved again.
#[derive(Clone, Debug)]
pub(crate) struct DirChain {
    steps: Vec<(Arc<OwnedFd>, OsString)>,
}

impl DirChain {
    /// The innermost directory.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.last().0.as_fd()
    }

    /// The innermost directory, shared.
    pub(crate) fn shared_fd(&self) -> Arc<OwnedFd> {
        Arc::clone(&self.last().0)
    }

    fn last(&self) -> &(Arc<OwnedFd>, OsString) {
        // A chain always holds the root (`WorkspaceRoot::chain`; `pop` keeps it).
        &self.steps[self.steps.len() - 1]
    }

    /// The innermost directory's path relative to the root (empty for the root).
    pub(crate) fn relative(&self) -> PathBuf {
        self.steps.iter().skip(1).map(|(_, name)| name).collect()
    }

    /// How many directories below the root.
    pub(crate) fn depth(&self) -> usize {
        self.steps.len() - 1
    }

    /// Every directory of the chain (root first), with its path relative to the root.
    pub(crate) fn levels(&self) -> impl Iterator<Item = (BorrowedFd<'_>, PathBuf)> {
        let mut rel = PathBuf::new();
        self.steps.iter().enumerate().map(move |(i, (fd, name))| {
            if i > 0 {
                rel.push(name);
            }
            (fd.as_fd(), rel.clone())
        })
    }

    /// Step into `name`, a directory of the innermost one opened as `fd`.
    pub(crate) fn push(&mut self, fd: OwnedFd, name: OsString) {
        self.steps.push((Arc::new(fd), name));
    }

    /// Step out of the innermost directory; `false` at the root.
    fn pop(&mut self) -> bool {
        if self.steps.len() > 1 {
            self.steps.pop();
            true
        } else {
            false
        }
    }

    fn truncate_to_root(&mut self) {
        self.steps.truncate(1);
    }
}

/// Where a path led: an entry of a directory held open (or that directory itself).
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    /// The directory holding the entry.
    pub(crate) dir: DirChain,
    /// The entry's name in `dir`; `None` when the path names `dir` itself.
    pub(crate) name: Option<OsString>,
    /// What the entry is (never a symbolic link: those are followed); `None` when it does
    /// not exist.
    pub(crate) kind: Option<FileType>,
}

impl Resolved {
    /// The path relative to the root (empty for the root).
    pub(crate) fn relative(&self) -> PathBuf {
        let mut rel = self.dir.relative();
        if let Some(name) = &self.name {
            rel.push(name);
        }
        rel
    }

    /// Does it name a directory?
    pub(crate) fn is_dir(&self) -> bool {
        self.kind == Some(FileType::Directory)
    }

    /// The chain ending in this directory (held open, without following a link), for
    /// walking or listing it.
    pub(crate) fn into_dir_chain(self) -> io::Result<DirChain> {
        let mut chain = self.dir;
        if let Some(name) = self.name {
            let fd = rustix::fs::openat(chain.fd(), &name, walk_dir_flags(), Mode::empty())?;
            chain.push(fd, name);
        }
        Ok(chain)
    }
}

/// Why a path could not be resolved inside the workspace.
#[derive(Debug)]
pub(crate) enum ResolveError {
    /// A symbolic link (`link`, in the path as given) leads outside the workspace.
    Outside {
        /// The link, relative to the root.
        link: PathBuf,
        /// Its target does not exist either.
        target_missing: bool,
    },
    /// Following the link `link` never ends (a loop, or more than 40 links).
    Loop {
        /// The link, relative to the root.
        link: PathBuf,
        /// What it points to.
        target: PathBuf,
    },
    /// The link `link` points inside the workspace, to something that does not exist.
    Broken {
        /// The link, relative to the root.
        link: PathBuf,
        /// What it points to.
        target: PathBuf,
    },
    /// A directory on the way does not exist: `name` in the directory `parent`.
    MissingDir {
        /// The existing directory the missing one was looked up in.
        parent: DirChain,
        /// The missing directory's name.
        name: OsString,
    },
    /// Something on the way (`at`, relative to the root) is a file, not a directory.
    NotADirectory {
        /// The file.
        at: PathBuf,
    },
    /// `at` kept changing while it was being looked at.
    Unstable {
        /// What changed.
        at: PathBuf,
    },
    /// Another I/O error at `at` (e.g. permission denied).
    Io {
        /// Where.
        at: PathBuf,
        /// What.
        error: io::Error,
    },
}

/// A component still to resolve, and the outermost link it came from (if any).
struct Pending {
    name: OsString,
    via: Option<usize>,
}

/// One resolution in progress.
struct Walk<'a> {
    root: &'a WorkspaceRoot,
    chain: DirChain,
    queue: VecDeque<Pending>,
    /// The links in the path as given that were expanded: (link, target).
    links: Vec<(PathBuf, PathBuf)>,
    followed: usize,
    retries: usize,
    create_dirs: bool,
}

impl Walk<'_> {
    fn run(mut self) -> Result<Resolved, ResolveError> {
        while let Some(item) = self.queue.pop_front() {
            let name = item.name;
            if name == "." || name.is_empty() {
                continue;
            }
            if name == ".." {
                if !self.chain.pop() {
                    return Err(self.outside(item.via, None));
                }
                continue;
            }
            let last = self.queue.is_empty();
            let at = || self.chain.relative().join(&name);
            let kind = match rustix::fs::statat(self.chain.fd(), &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Some(FileType::from_raw_mode(st.st_mode)),
                Err(Errno::NOENT) => None,
                Err(e) => {
                    return Err(ResolveError::Io {
                        at: at(),
                        error: e.into(),
                    });
                }
            };
            match kind {
                None => {
                    if let Some(via) = item.via {
                        let (link, target) = self.links[via].clone();
                        return Err(ResolveError::Broken { link, target });
                    }
                    if last {
                        return Ok(Resolved {
                            dir: self.chain,
                            name: Some(name),
                            kind: None,
                        });
                    }
                    if !self.create_dirs {
                        return Err(ResolveError::MissingDir {
                            parent: self.chain,
                            name,
                        });
                    }
                    match rustix::fs::mkdirat(self.chain.fd(), &name, Mode::from_raw_mode(0o777)) {
                        // Created (or created by someone else meanwhile): look again.
                        Ok(()) | Err(Errno::EXIST) => self.again(name, item.via)?,
                        Err(e) => {
                            return Err(ResolveError::Io {
                                at: at(),
                                error: e.into(),
                            });
                        }
                    }
                }
                Some(FileType::Symlink) => self.follow(name, item.via)?,
                Some(FileType::Directory) if !last => {
                    match rustix::fs::openat(
                        self.chain.fd(),
                        &name,
                        walk_dir_flags(),
                        Mode::empty(),
                    ) {
                        Ok(fd) => self.chain.push(fd, name),
                        // Swapped for a link or a file, or removed, since the stat.
                        Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT | Errno::MLINK) => {
                            self.again(name, item.via)?;
                        }
                        Err(e) => {
                            return Err(ResolveError::Io {
                                at: at(),
                                error: e.into(),
                            });
                        }
                    }
                }
                Some(kind) if last => {
                    return Ok(Resolved {
                        dir: self.chain,
                        name: Some(name),
                        kind: Some(kind),
                    });
                }
                Some(_) => return Err(ResolveError::NotADirectory { at: at() }),
            }
        }
        // Nothing left to name: the path names the directory the walk is in.
        Ok(Resolved {
            dir: self.chain,
            name: None,
            kind: Some(FileType::Directory),
        })
    }

    /// Look at `name` again (it changed while being looked at), a bounded number of times.
    fn again(&mut self, name: OsString, via: Option<usize>) -> Result<(), ResolveError> {
        self.retries += 1;
        if self.retries > MAX_RETRIES {
            return Err(ResolveError::Unstable {
                at: self.chain.relative().join(&name),
            });
        }
        self.queue.push_front(Pending { name, via });
        Ok(())
    }

    /// Replace the link `name` by its target's components.
    fn follow(&mut self, name: OsString, via: Option<usize>) -> Result<(), ResolveError> {
        let here = self.chain.relative().join(&name);
        let target = match rustix::fs::readlinkat(self.chain.fd(), &name, Vec::new()) {
            Ok(t) => PathBuf::from(OsString::from_vec(t.into_bytes())),
            // Not a link any more (or gone): look at it again.
            Err(Errno::INVAL | Errno::NOENT) => return self.again(name, via),
            Err(e) => {
                return Err(ResolveError::Io {
                    at: here,
                    error: e.into(),
                });
            }
        };
        let via = match via {
            Some(v) => v,
            None => {
                self.links.push((here, target.clone()));
                self.links.len() - 1
            }
        };
        self.followed += 1;
        if self.followed > MAX_LINKS {
            let (link, target) = self.links[via].clone();
            return Err(ResolveError::Loop { link, target });
        }
        let components = if target.is_absolute() {
            match self.root.strip(&target) {
                Some(rest) => {
                    self.chain.truncate_to_root();
                    rest
                }
                None => return Err(self.outside(Some(via), Some(&target))),
            }
        } else if target.as_os_str().is_empty() {
            let (link, target) = self.links[via].clone();
            return Err(ResolveError::Broken { link, target });
        } else {
            components_of(&target)
        };
        for name in components.into_iter().rev() {
            self.queue.push_front(Pending {
                name,
                via: Some(via),
            });
        }
        Ok(())
    }

    /// The error for a link that leads outside (`target`: an absolute target elsewhere).
    fn outside(&self, via: Option<usize>, target: Option<&Path>) -> ResolveError {
        // Only for the wording of the message ("whose target does not exist"): whether
        // the place outside exists; nothing there is opened.
        let target_missing =
            target.is_some_and(|t| std::fs::symlink_metadata(normalize(t)).is_err());
        ResolveError::Outside {
            link: via.map_or_else(PathBuf::new, |v| self.links[v].0.clone()),
            target_missing,
        }
    }
}

/// `path`'s components as names (`..` and `.` kept; a root or prefix dropped).
fn components_of(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// `path` with `.` removed and `..` applied, without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
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

/// The entries of the directory `dir` (`.` and `..` left out) with their types, symbolic
/// links not followed; in the order the file system gives them.
pub(crate) fn read_entries(dir: BorrowedFd<'_>) -> io::Result<Vec<(OsString, FileType)>> {
    let fd = rustix::fs::openat(
        dir,
        c".",
        OFlags::RDONLY
            .union(OFlags::DIRECTORY)
            .union(OFlags::CLOEXEC),
        Mode::empty(),
    )?;
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::new(fd)? {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => {
                match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    // Gone meanwhile.
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            kind => kind,
        };
        entries.push((name.to_os_string(), kind));
    }
    Ok(entries)
}

/// Open the entry `name` of `dir` for reading, never following a link and never waiting
/// (a FIFO opens at once; its type is then refused by the caller).
pub(crate) fn open_read(dir: BorrowedFd<'_>, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY
            .union(OFlags::NONBLOCK)
            .union(OFlags::NOFOLLOW)
            .union(OFlags::NOCTTY)
            .union(OFlags::CLOEXEC),
        Mode::empty(),
    )
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
    fn components_keep_dot_dot() {
        assert_eq!(
            components_of(Path::new("../a/./b/")),
            [OsString::from(".."), "a".into(), "b".into()]
        );
    }

    #[test]
    fn the_root_must_be_an_absolute_directory() {
        assert!(matches!(
            WorkspaceRoot::open(Path::new("missing/..")),
            Err(WorkspaceError::NotAbsolute { .. })
        ));
        assert!(matches!(
            WorkspaceRoot::open(Path::new("/definitely/missing/..")),
            Err(WorkspaceError::Inaccessible { .. })
        ));
        let file = std::env::current_exe().unwrap();
        assert!(matches!(
            WorkspaceRoot::open(&file),
            Err(WorkspaceError::NotADirectory { .. })
        ));
    }

    /// A root under a temporary directory: `root/a/t` (a file), `root/b/` and `outside/`.
    fn tree() -> (tempfile::TempDir, WorkspaceRoot) {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::create_dir_all(outer.path().join("outside")).unwrap();
        std::fs::write(root.join("a/t"), "t").unwrap();
        let opened = WorkspaceRoot::open(&root).unwrap();
        (outer, opened)
    }

    fn resolve(root: &WorkspaceRoot, path: &str) -> Result<Resolved, ResolveError> {
        let components = root.components_below(Path::new(path)).unwrap();
        root.resolve(root.chain(), components, false)
    }

    #[test]
    fn dot_and_dot_dot_are_applied_on_the_held_directories() {
        let (_outer, root) = tree();
        let r = resolve(&root, "a/./t").unwrap();
        assert_eq!(r.relative(), Path::new("a/t"));
        assert_eq!(r.dir.depth(), 1);
        assert!(!r.is_dir());
        let r = resolve(&root, "b").unwrap();
        assert!(r.is_dir());
        assert_eq!(r.relative(), Path::new("b"));
        let chain = r.into_dir_chain().unwrap();
        assert_eq!(chain.depth(), 1);
        assert_eq!(chain.relative(), Path::new("b"));
        let levels: Vec<PathBuf> = chain.levels().map(|(_, p)| p).collect();
        assert_eq!(levels, [PathBuf::new(), PathBuf::from("b")]);
        // A link's `..` climbs the held chain, not the link's own place.
        std::os::unix::fs::symlink("../a/t", root.path().join("b/up")).unwrap();
        let r = resolve(&root, "b/up").unwrap();
        assert_eq!(r.relative(), Path::new("a/t"));
        assert_eq!(r.dir.depth(), 1);
        // `..` above the root, in a link, leads outside.
        std::os::unix::fs::symlink("../../outside", root.path().join("b/out")).unwrap();
        assert!(matches!(
            resolve(&root, "b/out/x"),
            Err(ResolveError::Outside { link, target_missing: false }) if link == Path::new("b/out")
        ));
        std::os::unix::fs::symlink("..", root.path().join("parent")).unwrap();
        assert!(matches!(
            resolve(&root, "parent/outside"),
            Err(ResolveError::Outside { .. })
        ));
        // The root itself.
        let r = resolve(&root, ".").unwrap();
        assert!(r.is_dir() && r.name.is_none());
        assert_eq!(r.dir.depth(), 0);
        assert_eq!(r.relative(), PathBuf::new());
    }

    #[test]
    fn an_absolute_link_back_inside_starts_again_at_the_root() {
        let (_outer, root) = tree();
        let target = root.path().join("a/t");
        std::os::unix::fs::symlink(&target, root.path().join("b/abs")).unwrap();
        let r = resolve(&root, "b/abs").unwrap();
        assert_eq!(r.relative(), Path::new("a/t"));
        assert_eq!(r.dir.depth(), 1);
        std::os::unix::fs::symlink(root.path().join("a"), root.path().join("b/absdir")).unwrap();
        let r = resolve(&root, "b/absdir/t").unwrap();
        assert_eq!(r.relative(), Path::new("a/t"));
        let gone = root.path().join("b/none");
        std::os::unix::fs::symlink(&gone, root.path().join("b/dangling")).unwrap();
        assert!(matches!(
            resolve(&root, "b/dangling"),
            Err(ResolveError::Broken { link, .. }) if link == Path::new("b/dangling")
        ));
    }

    #[test]
    fn a_name_that_keeps_changing_is_given_up_on() {
        let (_outer, root) = tree();
        let mut walk = Walk {
            root: &root,
            chain: root.chain(),
            queue: VecDeque::new(),
            links: Vec::new(),
            followed: 0,
            retries: 0,
            create_dirs: false,
        };
        for _ in 0..MAX_RETRIES {
            assert!(walk.again(OsString::from("x"), None).is_ok());
        }
        assert!(matches!(
            walk.again(OsString::from("x"), None),
            Err(ResolveError::Unstable { at }) if at == Path::new("x")
        ));
        assert_eq!(walk.queue.len(), MAX_RETRIES);
    }

    #[test]
    fn held_directories_never_follow_a_link_nor_leak_into_commands() {
        let flags = walk_dir_flags();
        assert!(flags.contains(OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC));
    }

    #[test]
    fn forty_links_are_followed_and_the_forty_first_is_a_loop() {
        let (_outer, root) = tree();
        // l0 -> l1 -> ... -> l39 -> a/t: forty links.
        for i in 0..40 {
            let target = if i == 39 {
                "a/t".to_owned()
            } else {
                format!("l{}", i + 1)
            };
            std::os::unix::fs::symlink(target, root.path().join(format!("l{i}"))).unwrap();
        }
        assert_eq!(resolve(&root, "l0").unwrap().relative(), Path::new("a/t"));
        std::os::unix::fs::symlink("l0", root.path().join("m")).unwrap();
        assert!(matches!(
            resolve(&root, "m"),
            Err(ResolveError::Loop { link, .. }) if link == Path::new("m")
        ));
    }

    #[test]
    fn entries_are_listed_without_following_links() {
        let (_outer, root) = tree();
        std::os::unix::fs::symlink("a/t", root.path().join("link")).unwrap();
        let mut entries = read_entries(root.fd()).unwrap();
        entries.sort_by(|x, y| x.0.cmp(&y.0));
        assert_eq!(
            entries,
            [
                (OsString::from("a"), FileType::Directory),
                (OsString::from("b"), FileType::Directory),
                (OsString::from("link"), FileType::Symlink),
            ]
        );
    }

    #[test]
    fn an_entry_is_opened_only_if_it_is_not_a_link() {
        let (_outer, root) = tree();
        std::os::unix::fs::symlink("a/t", root.path().join("link")).unwrap();
        assert_eq!(
            open_read(root.fd(), OsStr::new("link")).unwrap_err(),
            Errno::LOOP
        );
        let chain = resolve(&root, "a").unwrap().into_dir_chain().unwrap();
        assert!(open_read(chain.fd(), OsStr::new("t")).is_ok());
    }
}

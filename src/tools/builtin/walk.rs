//! The directory walk `glob` and `grep` share. It works on descriptors: it starts from
//! the directory (held open) a path resolved to, opens each subdirectory relative to its
//! parent with `O_NOFOLLOW`, never follows a symbolic link (links are listed, not
//! entered), and hands out entries as (directory descriptor, name), so a caller opens a
//! file relative to the directory it was found in — never by a path that could have been
//! swapped for a link meanwhile. It respects `.gitignore` (also outside a git
//! repository), skips hidden entries unless asked, and stops when cancelled or out of
//! time.
//!
//! Only the workspace's own ignore files apply: `.ignore`, `.gitignore` and
//! `.git/info/exclude` in the workspace root and the directories below it, read through
//! descriptors like everything else (a symbolic link or a FIFO in their place is not
//! read). Ignore files *above* the workspace root and the user's global gitignore are
//! never read, so results do not depend on where the workspace sits or who runs the
//! agent. A walk of a subdirectory honours the ignore files of the directories between
//! the root and it, with the precedence of the `ignore` crate (and git): `.ignore` rules
//! before `.gitignore` rules before `.git/info/exclude` rules, and within each kind the
//! deeper file first.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, FileType};

use super::beneath::{Resolved, WorkspaceRoot, open_read, read_entries, walk_dir_flags};
use super::blocking::{self, CancelToken};
use crate::texts::*;
use crate::tools::ToolError;

/// How long a walk may run before it stops and reports what it found so far; below the
/// tools' registry timeout so partial results arrive instead of a timeout.
pub(crate) const WALK_TIME_BUDGET: Duration = Duration::from_secs(45);

/// How many directory levels below its start a walk descends; each level holds one
/// descriptor open.
pub(crate) const MAX_WALK_DEPTH: usize = 100;

/// Largest ignore file read (1 MiB); a bigger one is not applied.
const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// One entry a walk found.
#[derive(Clone, Debug)]
pub(crate) struct WalkEntry {
    /// The path relative to the workspace root.
    pub(crate) relative: PathBuf,
    /// The directory holding it, open.
    pub(crate) dir: Arc<OwnedFd>,
    /// Its name in `dir`.
    pub(crate) name: OsString,
    /// What it is (a symbolic link is reported as one, not followed).
    pub(crate) kind: FileType,
}

/// A sorted, depth-first walk (each directory's entries by name, a directory before its
/// contents). Hidden entries are skipped unless `include_hidden`; `.git` directories
/// always are. The start itself is never skipped: naming an ignored or hidden directory
/// searches it, and naming a file yields just that file.
pub(crate) struct Walk {
    root_path: PathBuf,
    include_hidden: bool,
    /// The ignore rules of every directory from the root down to the one being read.
    ignores: Vec<Arc<DirIgnores>>,
    frames: Vec<Frame>,
    start_depth: usize,
    single: Option<WalkEntry>,
    /// Directories not entered because they lie deeper than [`MAX_WALK_DEPTH`].
    pub(crate) too_deep: usize,
}

/// A directory being walked: its remaining entries, sorted and filtered.
struct Frame {
    dir: Arc<OwnedFd>,
    relative: PathBuf,
    depth: usize,
    entries: std::vec::IntoIter<(OsString, FileType)>,
}

/// Walk what `start` names inside the workspace `root`.
pub(crate) fn walk(root: &WorkspaceRoot, start: Resolved, include_hidden: bool) -> Walk {
    let mut walk = Walk {
        root_path: root.path().to_path_buf(),
        include_hidden,
        ignores: Vec::new(),
        frames: Vec::new(),
        start_depth: 0,
        single: None,
        too_deep: 0,
    };
    match (start.kind, &start.name) {
        (None, _) => {}
        (Some(FileType::Directory), _) => {
            let Ok(chain) = start.into_dir_chain() else {
                return walk;
            };
            walk.start_depth = chain.depth();
            // The ignore files of the directories above the start apply too.
            for (fd, rel) in chain.levels().take(chain.depth()) {
                let ignores = DirIgnores::read(fd, &walk.root_path.join(rel));
                walk.ignores.push(Arc::new(ignores));
            }
            walk.enter(chain.shared_fd(), chain.relative(), chain.depth());
        }
        (Some(kind), Some(name)) => {
            walk.single = Some(WalkEntry {
                relative: start.relative(),
                dir: start.dir.shared_fd(),
                name: name.clone(),
                kind,
            });
        }
        (Some(_), None) => {}
    }
    walk
}

impl Walk {
    /// Start walking the directory `dir` at `relative` (`depth` levels below the root):
    /// read its ignore files and its entries, filtered and sorted.
    fn enter(&mut self, dir: Arc<OwnedFd>, relative: PathBuf, depth: usize) {
        let dir_path = self.root_path.join(&relative);
        self.ignores.truncate(depth);
        self.ignores
            .push(Arc::new(DirIgnores::read(dir.as_fd(), &dir_path)));
        let Ok(found) = read_entries(dir.as_fd()) else {
            return;
        };
        let mut entries: Vec<(OsString, FileType)> = found
            .into_iter()
            .filter(|(name, kind)| {
                if name == ".git" {
                    return false;
                }
                let is_dir = *kind == FileType::Directory;
                match self.matched(&dir_path.join(name), is_dir) {
                    Some(ignored) => !ignored,
                    None => self.include_hidden || !name.as_bytes().starts_with(b"."),
                }
            })
            .collect();
        entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        self.frames.push(Frame {
            dir,
            relative,
            depth,
            entries: entries.into_iter(),
        });
    }

    /// Whether the ignore files say `path` is ignored (`Some(true)`), re-included
    /// (`Some(false)`) or nothing (`None`), deepest file first within each kind.
    fn matched(&self, path: &Path, is_dir: bool) -> Option<bool> {
        let mut matches = Matches::default();
        for level in self.ignores.iter().rev() {
            matches.add(level, path, is_dir);
        }
        matches.decided()
    }
}

impl Iterator for Walk {
    type Item = WalkEntry;

    fn next(&mut self) -> Option<WalkEntry> {
        if let Some(single) = self.single.take() {
            return Some(single);
        }
        loop {
            let frame = self.frames.last_mut()?;
            let Some((name, kind)) = frame.entries.next() else {
                self.frames.pop();
                continue;
            };
            let entry = WalkEntry {
                relative: frame.relative.join(&name),
                dir: Arc::clone(&frame.dir),
                name,
                kind,
            };
            if kind == FileType::Directory {
                let depth = frame.depth + 1;
                if depth - self.start_depth > MAX_WALK_DEPTH {
                    self.too_deep += 1;
                } else if let Ok(fd) = rustix::fs::openat(
                    &entry.dir,
                    &entry.name,
                    walk_dir_flags(),
                    rustix::fs::Mode::empty(),
                ) {
                    // A directory swapped for a link since it was listed fails to open
                    // (`O_NOFOLLOW`) and is not entered.
                    self.enter(Arc::new(fd), entry.relative.clone(), depth);
                }
            }
            return Some(entry);
        }
    }
}

/// The ignore files of one directory.
#[derive(Debug)]
struct DirIgnores {
    ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
}

impl DirIgnores {
    /// The rules of the directory `dir`, whose absolute path is `path` (patterns are
    /// anchored there).
    fn read(dir: BorrowedFd<'_>, path: &Path) -> Self {
        DirIgnores {
            ignore: matcher(path, ".ignore", read_small(dir, OsStr::new(".ignore"))),
            git_ignore: matcher(
                path,
                ".gitignore",
                read_small(dir, OsStr::new(".gitignore")),
            ),
            git_exclude: matcher(path, ".git/info/exclude", read_exclude(dir)),
        }
    }
}

/// `.git/info/exclude` below `dir`, when `.git` is a directory there.
fn read_exclude(dir: BorrowedFd<'_>) -> Option<Vec<u8>> {
    let git = open_subdir(dir, ".git")?;
    let info = open_subdir(git.as_fd(), "info")?;
    read_small(info.as_fd(), OsStr::new("exclude"))
}

fn open_subdir(dir: BorrowedFd<'_>, name: &str) -> Option<OwnedFd> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return None;
    }
    rustix::fs::openat(dir, name, walk_dir_flags(), rustix::fs::Mode::empty()).ok()
}

/// The contents of the regular file `name` in `dir`, if it is one (not a link, not a
/// FIFO) and at most [`MAX_IGNORE_FILE_BYTES`] long.
fn read_small(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Vec<u8>> {
    let fd = open_read(dir, name).ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || u64::try_from(st.st_size).unwrap_or(u64::MAX) > MAX_IGNORE_FILE_BYTES
    {
        return None;
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(MAX_IGNORE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_IGNORE_FILE_BYTES).then_some(bytes)
}

/// The rules of one ignore file (`file`, relative to `dir`), anchored at `dir`; empty if
/// it is missing or unreadable. A bad line is skipped; the rest of the file still applies.
fn matcher(dir: &Path, file: &str, contents: Option<Vec<u8>>) -> Gitignore {
    let Some(contents) = contents else {
        return Gitignore::empty();
    };
    let text = String::from_utf8_lossy(&contents);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut builder = GitignoreBuilder::new(dir);
    let from = dir.join(file);
    for line in text.lines() {
        let _ = builder.add_line(Some(from.clone()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The three kinds of rule matches for one path, each from the deepest file that has one.
#[derive(Clone, Copy, Default)]
struct Matches {
    ignore: Option<bool>,
    git_ignore: Option<bool>,
    git_exclude: Option<bool>,
}

impl Matches {
    /// Fill the kinds still undecided from `dir`'s files (called deepest first).
    fn add(&mut self, dir: &DirIgnores, path: &Path, is_dir: bool) {
        fn decided<T>(m: Match<T>) -> Option<bool> {
            match m {
                Match::None => None,
                Match::Ignore(_) => Some(true),
                Match::Whitelist(_) => Some(false),
            }
        }
        if self.ignore.is_none() {
            self.ignore = decided(dir.ignore.matched(path, is_dir));
        }
        if self.git_ignore.is_none() {
            self.git_ignore = decided(dir.git_ignore.matched(path, is_dir));
        }
        if self.git_exclude.is_none() {
            self.git_exclude = decided(dir.git_exclude.matched(path, is_dir));
        }
    }

    /// Ignored (`true`) or re-included (`false`), by the walker's precedence: `.ignore`,
    /// then `.gitignore`, then exclude; `None` when no rule speaks of it.
    fn decided(&self) -> Option<bool> {
        self.ignore.or(self.git_ignore).or(self.git_exclude)
    }
}

/// Why [`read_entry`] did not read a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unread {
    /// It is larger than the limit.
    TooBig,
    /// It is not a regular file (any more: a FIFO or a link swapped in), or it cannot be
    /// opened or read.
    NotRegular,
}

/// Read the file `entry` names for searching, if it is a regular file of at most `limit`
/// bytes: opened relative to its directory without following a link and without
/// blocking, checked on the open descriptor, read through the cap.
pub(crate) fn read_entry(entry: &WalkEntry, limit: u64) -> Result<Vec<u8>, Unread> {
    let fd = open_read(entry.dir.as_fd(), &entry.name).map_err(|_| Unread::NotRegular)?;
    let st = rustix::fs::fstat(&fd).map_err(|_| Unread::NotRegular)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(Unread::NotRegular);
    }
    if u64::try_from(st.st_size).unwrap_or(u64::MAX) > limit {
        return Err(Unread::TooBig);
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| Unread::NotRegular)?;
    if bytes.len() as u64 > limit {
        return Err(Unread::TooBig);
    }
    Ok(bytes)
}

/// Why a walk stopped early, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Out of [`WALK_TIME_BUDGET`].
    OutOfTime,
    /// The caller went away.
    Cancelled,
}

/// Tells a blocking walk to stop: when the handler's future is dropped (e.g. by the
/// registry's timeout), so no walk keeps running for nobody, or when out of time.
#[derive(Debug)]
pub(crate) struct WalkControl {
    cancel: CancelToken,
    started: Instant,
}

impl WalkControl {
    /// Should the walk stop now?
    pub(crate) fn stop(&self) -> Option<Stop> {
        if self.cancel.is_cancelled() {
            Some(Stop::Cancelled)
        } else if self.started.elapsed() > WALK_TIME_BUDGET {
            Some(Stop::OutOfTime)
        } else {
            None
        }
    }
}

/// Run a walk on the blocking pool; it is told to stop if this future is dropped.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&WalkControl) -> T + Send + 'static,
{
    let started = Instant::now();
    blocking::run_blocking(&TOOLS_WORK_SEARCH, move |cancel| {
        work(&WalkControl {
            cancel: cancel.clone(),
            started,
        })
    })
    .await
}

/// The marker for a walk that stopped early (empty when it did not).
pub(crate) fn stop_note(texts: &Texts, stop: Option<Stop>) -> String {
    match stop {
        Some(Stop::OutOfTime) => format!(
            "{}\n",
            texts.render(
                &TOOLS_OUTPUT_SEARCH_STOPPED,
                &[("seconds", &WALK_TIME_BUDGET.as_secs().to_string())]
            )
        ),
        Some(Stop::Cancelled) | None => String::new(),
    }
}

/// The marker for directories a walk did not enter because they lie too deep (empty when
/// there were none).
pub(crate) fn depth_note(texts: &Texts, too_deep: usize) -> String {
    let text = match too_deep {
        0 => return String::new(),
        1 => &TOOLS_OUTPUT_TOO_DEEP_ONE,
        _ => &TOOLS_OUTPUT_TOO_DEEP_MANY,
    };
    format!(
        "{}\n",
        texts.render(
            text,
            &[
                ("count", &too_deep.to_string()),
                ("max", &MAX_WALK_DEPTH.to_string())
            ]
        )
    )
}

//! The directory walk `glob` and `grep` share: respects `.gitignore` (also outside a git
//! repository), never follows symbolic links, and stops when cancelled or out of time.
//!
//! Only the workspace's own ignore files apply: `.gitignore`, `.ignore` and
//! `.git/info/exclude` in the workspace root and the directories below it. Ignore files
//! *above* the workspace root (say, a `.gitignore` of `*` in a parent directory) and the
//! user's global gitignore are never read, so results do not depend on where the
//! workspace sits or who runs the agent.
//!
//! A walk of a subdirectory still honours the ignore files of the directories between
//! the workspace root and it ([`UpperIgnores`]), with the same precedence the `ignore`
//! crate gives them when it walks from the root: `.ignore` rules before `.gitignore`
//! rules before `.git/info/exclude` rules, and within each kind the deeper file first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, Walk, WalkBuilder};

use super::blocking::{self, CancelToken};
use crate::tools::ToolError;

/// How long a walk may run before it stops and reports what it found so far; below the
/// tools' registry timeout so partial results arrive instead of a timeout.
pub(crate) const WALK_TIME_BUDGET: Duration = Duration::from_secs(45);

/// A sorted walk of `base`, a directory or file inside the workspace `root`. Hidden
/// entries are skipped unless `include_hidden`; `.git` directories always are. `base`
/// itself is never skipped: naming an ignored or hidden directory searches it.
pub(crate) fn walk(root: &Path, base: &Path, include_hidden: bool) -> Walk {
    let upper = UpperIgnores::new(root, base);
    WalkBuilder::new(base)
        .hidden(!include_hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .ignore(true)
        // Never read ignore files above `base`: the ones between the workspace root and
        // `base` are applied by `upper`, the ones above the root not at all.
        .parents(false)
        .follow_links(false)
        .filter_entry(move |e| {
            e.file_name() != ".git"
                && !upper.ignores(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
        })
        .sort_by_file_path(|a, b| a.cmp(b))
        .build()
}

/// The ignore files of one directory.
#[derive(Debug)]
struct DirIgnores {
    ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
}

impl DirIgnores {
    fn read(dir: &Path) -> Self {
        let exclude = dir.join(".git").join("info").join("exclude");
        DirIgnores {
            ignore: matcher(dir, &dir.join(".ignore")),
            git_ignore: matcher(dir, &dir.join(".gitignore")),
            git_exclude: if dir.join(".git").is_dir() {
                matcher(dir, &exclude)
            } else {
                Gitignore::empty()
            },
        }
    }
}

/// The rules of one ignore file, anchored at `dir`; empty if it is missing or unreadable.
fn matcher(dir: &Path, file: &Path) -> Gitignore {
    if !file.is_file() {
        return Gitignore::empty();
    }
    let mut builder = GitignoreBuilder::new(dir);
    // A bad line is skipped; the rest of the file still applies (as in the walker).
    let _ = builder.add(file);
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

    /// Ignored, by the walker's precedence: `.ignore`, then `.gitignore`, then exclude.
    fn ignored(&self) -> bool {
        self.ignore
            .or(self.git_ignore)
            .or(self.git_exclude)
            .unwrap_or(false)
    }
}

/// The ignore files of the directories from the workspace root down to (not including)
/// the walk's base, which the walker itself does not read because it starts at the base.
struct UpperIgnores {
    base: PathBuf,
    /// Deepest first.
    levels: Vec<DirIgnores>,
    /// Ignore files of directories inside `base`, read on demand (see [`Self::ignores`]).
    below: Mutex<HashMap<PathBuf, Arc<DirIgnores>>>,
}

impl UpperIgnores {
    fn new(root: &Path, base: &Path) -> Self {
        let levels = match base.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => base
                .ancestors()
                .skip(1)
                .take_while(|dir| dir.starts_with(root))
                .map(DirIgnores::read)
                .collect(),
            _ => Vec::new(),
        };
        UpperIgnores {
            base: base.to_path_buf(),
            levels,
            below: Mutex::new(HashMap::new()),
        }
    }

    /// Do the upper files ignore `path`, which the walker (reading the files from `base`
    /// down) did not skip?
    fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        if self.levels.is_empty() {
            return false;
        }
        let mut upper = Matches::default();
        for level in &self.levels {
            upper.add(level, path, is_dir);
        }
        if !upper.ignored() {
            return false;
        }
        // An upper rule ignores it, but a rule of another kind or a deeper file of the
        // same kind (`!keep.log`) may take precedence: work out the whole stack, as the
        // walker would from the root.
        let mut all = Matches::default();
        let mut dir = path.parent();
        while let Some(d) = dir {
            if !d.starts_with(&self.base) {
                break;
            }
            all.add(&self.below(d), path, is_dir);
            dir = d.parent();
        }
        for level in &self.levels {
            all.add(level, path, is_dir);
        }
        all.ignored()
    }

    fn below(&self, dir: &Path) -> Arc<DirIgnores> {
        let mut cache = self.below.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(
            cache
                .entry(dir.to_path_buf())
                .or_insert_with(|| Arc::new(DirIgnores::read(dir))),
        )
    }
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
    blocking::run_blocking("search", move |cancel| {
        work(&WalkControl {
            cancel: cancel.clone(),
            started,
        })
    })
    .await
}

/// The marker for a walk that stopped early (empty when it did not).
pub(crate) fn stop_note(stop: Option<Stop>) -> String {
    match stop {
        Some(Stop::OutOfTime) => format!(
            "[... the search stopped after {} s, so the results are incomplete; narrow the path or pattern]\n",
            WALK_TIME_BUDGET.as_secs()
        ),
        Some(Stop::Cancelled) | None => String::new(),
    }
}

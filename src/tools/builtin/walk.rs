//! The directory walk `glob` and `grep` share: respects `.gitignore` (also outside a git
//! repository), never follows symbolic links, and stops when cancelled or out of time.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ignore::{Walk, WalkBuilder};

use crate::tools::ToolError;

/// How long a walk may run before it stops and reports what it found so far; below the
/// tools' registry timeout so partial results arrive instead of a timeout.
pub(crate) const WALK_TIME_BUDGET: Duration = Duration::from_secs(45);

/// A sorted walk of `base`. Hidden entries are skipped unless `include_hidden`; `.git`
/// directories always are.
///
/// The user's global gitignore is not read, so results do not depend on who runs the
/// agent; the workspace's own `.gitignore`, `.ignore` and `.git/info/exclude` apply.
pub(crate) fn walk(base: &Path, include_hidden: bool) -> Walk {
    WalkBuilder::new(base)
        .hidden(!include_hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .ignore(true)
        .parents(true)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_path(|a, b| a.cmp(b))
        .build()
}

/// Why a walk stopped early, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Out of [`WALK_TIME_BUDGET`].
    OutOfTime,
    /// The caller went away.
    Cancelled,
}

/// Tells a blocking walk to stop; set when the handler's future is dropped (e.g. by the
/// registry's timeout), so no walk keeps running for nobody.
#[derive(Debug)]
pub(crate) struct WalkControl {
    cancelled: Arc<AtomicBool>,
    started: Instant,
}

impl WalkControl {
    /// Should the walk stop now?
    pub(crate) fn stop(&self) -> Option<Stop> {
        if self.cancelled.load(Ordering::Relaxed) {
            Some(Stop::Cancelled)
        } else if self.started.elapsed() > WALK_TIME_BUDGET {
            Some(Stop::OutOfTime)
        } else {
            None
        }
    }
}

/// Cancels its [`WalkControl`] when dropped.
#[derive(Debug)]
pub(crate) struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Run `work` on the blocking pool; it is told to stop if this future is dropped.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&WalkControl) -> T + Send + 'static,
{
    let cancelled = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(Arc::clone(&cancelled));
    let control = WalkControl {
        cancelled,
        started: Instant::now(),
    };
    tokio::task::spawn_blocking(move || work(&control))
        .await
        .map_err(|_| {
            ToolError::new("the search stopped unexpectedly").hint("try again, or narrow the path")
        })
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

//! Blocking work off the async executor: file reads and writes, searches and CPU-heavy
//! text processing run on tokio's blocking pool, so a handler's future always has an
//! await point and the registry's timeout can fire while the work is still going.
//!
//! A blocking task cannot be aborted. Instead it gets a [`CancelToken`] that is set when
//! the handler's future is dropped (by the registry's timeout, or a caller that gave up),
//! and checks it before doing anything with a lasting effect (e.g. renaming a written
//! file into place) or between the steps of a long walk.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::texts::{BuiltinText, TOOLS_WORK_STOPPED, TOOLS_WORK_STOPPED_HINT};
use crate::tools::{ToolError, vals};

/// Tells blocking work that nobody waits for its result any more.
#[derive(Clone, Debug)]
pub(crate) struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// Has the caller gone away?
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Cancels its token when dropped.
#[derive(Debug)]
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Run `work` on the blocking pool; its token is cancelled if this future is dropped.
/// `what` names the work in the (unexpected) error for a task that panicked.
pub(crate) async fn run_blocking<T, F>(what: &'static BuiltinText, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&CancelToken) -> T + Send + 'static,
{
    let flag = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(Arc::clone(&flag));
    let token = CancelToken(flag);
    tokio::task::spawn_blocking(move || work(&token))
        .await
        .map_err(|_| {
            ToolError::text(&TOOLS_WORK_STOPPED, vals![work = what])
                .hint_text(&TOOLS_WORK_STOPPED_HINT, vec![])
        })
}

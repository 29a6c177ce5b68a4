//! [`ToolContext`]: what a handler may touch — the confined workspace and the session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Per-session state shared by the tools of one agent session (e.g. the todo list).
#[derive(Debug, Default)]
pub struct SessionState {
    /// The task list kept by `todo_write`, as the JSON the tool last stored.
    pub todos: Mutex<Vec<serde_json::Value>>,
}

/// What a tool handler receives besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    workspace: Arc<PathBuf>,
    session: Arc<SessionState>,
}

impl ToolContext {
    /// A context rooted at `workspace` (canonicalized by the caller or here when possible).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let root: PathBuf = workspace.into();
        let root = root.canonicalize().unwrap_or(root);
        ToolContext {
            workspace: Arc::new(root),
            session: Arc::new(SessionState::default()),
        }
    }

    /// The workspace root every path argument is confined to.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The session's shared state.
    pub fn session(&self) -> &SessionState {
        &self.session
    }
}

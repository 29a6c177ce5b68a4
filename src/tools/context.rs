//! [`ToolContext`]: what a handler may touch — the confined workspace and the session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::builtin::{OutputLimits, TodoItem};

/// Per-session state shared by the tools of one agent session (e.g. the todo list).
#[derive(Debug, Default)]
pub struct SessionState {
    /// The task list kept by `todo_write`, as it last stored it.
    pub todos: Mutex<Vec<TodoItem>>,
}

impl SessionState {
    /// A copy of the current task list.
    pub fn todo_list(&self) -> Vec<TodoItem> {
        // A panic elsewhere while holding the lock cannot leave a half-written Vec (it is
        // replaced whole), so a poisoned lock still holds a usable list.
        self.todos
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Replace the task list.
    pub fn set_todo_list(&self, todos: Vec<TodoItem>) {
        *self
            .todos
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = todos;
    }
}

/// What a tool handler receives besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    workspace: Arc<PathBuf>,
    session: Arc<SessionState>,
    limits: OutputLimits,
    hidden_env: Arc<[String]>,
}

impl ToolContext {
    /// A context rooted at `workspace` (canonicalized by the caller or here when possible),
    /// with a fresh session and the default [`OutputLimits`].
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let root: PathBuf = workspace.into();
        let root = root.canonicalize().unwrap_or(root);
        ToolContext {
            workspace: Arc::new(root),
            session: Arc::new(SessionState::default()),
            limits: OutputLimits::default(),
            hidden_env: Arc::from(Vec::new()),
        }
    }

    /// The same context with environment variables to leave out of the environment of
    /// commands run by tools (e.g. the preset's `apiKeyEnv`). Besides these, `bash` always
    /// leaves out variables whose names look like credentials (`*_KEY`, `*_PAT`, `*_PASS`,
    /// `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, `*AUTH*`, …) and variables
    /// whose values look like one (a known API key or token format, a URL with a
    /// password).
    ///
    /// This is best-effort, not isolation: a command runs as the agent's user, so it can
    /// still read the agent process's own environment (`/proc/$PPID/environ`) and any
    /// file the agent can read. Keeping secrets from commands for real needs a sandbox
    /// (another user, a container) around them.
    pub fn with_hidden_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hidden_env = names.into_iter().map(Into::into).collect();
        self
    }

    /// Environment variables left out of commands' environments, besides the
    /// credential-looking ones (best-effort; see [`with_hidden_env`](Self::with_hidden_env)).
    pub fn hidden_env(&self) -> &[String] {
        &self.hidden_env
    }

    /// The same context with other output limits (e.g. a smaller budget for a small model).
    pub fn with_limits(mut self, limits: OutputLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The workspace root every path argument is confined to.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The session's shared state.
    pub fn session(&self) -> &SessionState {
        &self.session
    }

    /// How much text one tool result may carry.
    pub fn limits(&self) -> &OutputLimits {
        &self.limits
    }
}

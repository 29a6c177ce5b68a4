//! [`ToolContext`]: what a handler may touch — the confined workspace, the session and
//! the environment of commands.

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::builtin::{CommandLimits, Containment, OutputLimits, TodoItem};
use super::sandbox::{SandboxProfile, SharedProfile};
pub use crate::confine::WorkspaceError;
use crate::confine::beneath::WorkspaceRoot;
use crate::texts::Texts;

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

/// What a tool handler receives besides its arguments: the workspace (opened once, as a
/// directory descriptor every path is resolved beneath), the session, output limits and
/// what the environment of commands may hold.
#[derive(Clone, Debug)]
pub struct ToolContext {
    workspace: Arc<WorkspaceRoot>,
    session: Arc<SessionState>,
    limits: OutputLimits,
    hidden_env: Arc<[String]>,
    passed_env: Arc<[String]>,
    containment: Option<Containment>,
    command_limits: CommandLimits,
    sandbox: SharedProfile,
    texts: Arc<Texts>,
}

impl ToolContext {
    /// A context rooted at `workspace`, with a fresh session and the default
    /// [`OutputLimits`].
    ///
    /// The root must be an absolute path to an existing directory; it is canonicalized and
    /// opened here, once, and every path a tool is given is resolved beneath that open
    /// directory (so renaming or replacing the directory later does not move the
    /// workspace). A relative path (`missing/..`, `.`), a missing path or a file is an
    /// error.
    pub fn new(workspace: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        Ok(ToolContext {
            workspace: Arc::new(WorkspaceRoot::open(workspace.as_ref())?),
            session: Arc::new(SessionState::default()),
            limits: OutputLimits::default(),
            hidden_env: Arc::from(Vec::new()),
            passed_env: Arc::from(Vec::new()),
            containment: None,
            command_limits: CommandLimits::default(),
            sandbox: Arc::new(SandboxProfile::full_access()),
            texts: Texts::english(),
        })
    }

    /// The same context telling results in `texts` (the registry sets its own before a
    /// handler runs, see [`ToolRegistry::with_texts`](super::ToolRegistry::with_texts)).
    pub fn with_texts(mut self, texts: Arc<Texts>) -> Self {
        self.texts = texts;
        self
    }

    /// The texts results are told in.
    pub fn texts(&self) -> &Arc<Texts> {
        &self.texts
    }

    /// The same context passing the environment variables `names` to commands run by
    /// tools (`bash`), besides the base allowlist ([`BASE_COMMAND_ENV`]): typically the
    /// preset's `passEnv` ([`ValidPreset::pass_env`]). A name that looks like it holds a
    /// credential (`*_TOKEN`, `*_KEY`, `*PASS*`, `*_DSN`, …), or whose value looks like
    /// one (a known API key format, a URL with a password), is withheld all the same, as
    /// is every name given to [`with_hidden_env`](Self::with_hidden_env).
    ///
    /// [`BASE_COMMAND_ENV`]: crate::tools::builtin::BASE_COMMAND_ENV
    /// [`ValidPreset::pass_env`]: crate::preset::ValidPreset::pass_env
    pub fn with_passed_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.passed_env = names.into_iter().map(Into::into).collect();
        self
    }

    /// Environment variables passed to commands besides the base allowlist (see
    /// [`with_passed_env`](Self::with_passed_env)).
    pub fn passed_env(&self) -> &[String] {
        &self.passed_env
    }

    /// The same context withholding the environment variables `names` from commands run
    /// by tools even when they are allowlisted or passed (e.g. the preset's `apiKeyEnv`).
    ///
    /// Withholding is not isolation: a command runs as the agent's user, so it can still
    /// read the agent process's own environment (`/proc/$PPID/environ`) and any file the
    /// agent can read. Keeping secrets from commands for real needs a sandbox (another
    /// user, a container) around them.
    pub fn with_hidden_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hidden_env = names.into_iter().map(Into::into).collect();
        self
    }

    /// Environment variables always withheld from commands (see
    /// [`with_hidden_env`](Self::with_hidden_env)).
    pub fn hidden_env(&self) -> &[String] {
        &self.hidden_env
    }

    /// The same context running commands under `containment` instead of the best one the
    /// host allows ([`Containment::best_available`]). When the host does not allow the one
    /// asked for, the next weaker one runs.
    pub fn with_containment(mut self, containment: Containment) -> Self {
        self.containment = Some(containment);
        self
    }

    /// How commands are kept from outliving their call: the one set with
    /// [`with_containment`](Self::with_containment), else the best the host allows.
    pub fn containment(&self) -> Containment {
        self.containment.unwrap_or_else(Containment::best_available)
    }

    /// The same context running commands with other resource limits (processes, memory)
    /// than [`CommandLimits::default`]; [`CommandLimits::unlimited`] for none. They are
    /// applied where a cgroup is writable (see [`Containment`]).
    pub fn with_command_limits(mut self, limits: CommandLimits) -> Self {
        self.command_limits = limits;
        self
    }

    /// The resource limits of commands (see [`with_command_limits`](Self::with_command_limits)).
    pub fn command_limits(&self) -> CommandLimits {
        self.command_limits
    }

    /// The same context running commands (`bash`) in `profile`'s sandbox. The default is
    /// [`SandboxProfile::full_access`] (no sandbox, as before sandboxes existed); the CLI
    /// takes the preset's mode (`workspace-write` unless it says otherwise). When the
    /// kernel cannot enforce the profile, commands are refused, never run unconfined.
    pub fn with_sandbox(mut self, profile: SandboxProfile) -> Self {
        self.sandbox = Arc::new(profile);
        self
    }

    /// The sandbox commands run in (see [`with_sandbox`](Self::with_sandbox)).
    pub fn sandbox(&self) -> &SandboxProfile {
        &self.sandbox
    }

    /// The environment rules of programs run in this context: the names passed
    /// ([`passed_env`](Self::passed_env)) and withheld ([`hidden_env`](Self::hidden_env)).
    pub(crate) fn env_rules(&self) -> crate::process::EnvRules<'_> {
        crate::process::EnvRules::new(&self.passed_env, &self.hidden_env)
    }

    /// How programs run in this context are confined, in `profile` (the context's own
    /// sandbox, or one derived from it, e.g. with the network for an MCP server).
    pub(crate) fn confinement<'a>(
        &'a self,
        profile: &'a SandboxProfile,
    ) -> crate::process::Confinement<'a> {
        crate::process::Confinement {
            containment: self.containment(),
            limits: self.command_limits(),
            profile,
            workspace: self.workspace(),
        }
    }

    /// The same context with other output limits (e.g. a smaller budget for a small model).
    pub fn with_limits(mut self, limits: OutputLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The workspace root every path argument is confined to: absolute and canonical.
    pub fn workspace(&self) -> &Path {
        self.workspace.path()
    }

    /// The opened workspace root.
    pub(crate) fn root(&self) -> &WorkspaceRoot {
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

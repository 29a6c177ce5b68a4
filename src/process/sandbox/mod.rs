//! [`SandboxProfile`]: what a command run by a tool (`bash`; command tools and stdio MCP
//! servers later, through the same spawn path) may read, write and reach.
//!
//! Three modes ([`SandboxMode`]):
//! - `read-only`: reads limited to the workspace, the system paths a shell needs and the
//!   toolchains on `PATH` ([`SandboxProfile::readable_paths`] lists them); writes only in a
//!   private temporary directory (`TMPDIR`, removed when the command ends); no network;
//! - `workspace-write`: the same, plus writes in the workspace;
//! - `full-access`: no sandbox: the command can do whatever the agent's user can.
//!
//! In the first two modes, home-directory secrets ([`SECRET_PATHS`]) and system secrets
//! ([`ETC_DENIED`]) are never readable, not even through `allowRead` or the workspace.
//!
//! How it is enforced (Linux), in the command's process between `fork` and `exec`, after
//! everything was prepared in the agent (no allocation, only system calls, in the child):
//! - `PR_SET_NO_NEW_PRIVS` (a setuid binary gains nothing), the capability bounding set
//!   emptied (a command run as root keeps no capability after `exec`), not dumpable (the
//!   subreaper supervisor, a copy of the agent's memory, cannot be read through `/proc`);
//! - Landlock (ABI 3 or later: Linux 6.2+) for the filesystem; it also keeps the command
//!   from `ptrace`-like access to processes outside its sandbox (`/proc/<agent>/environ`,
//!   `/proc/<agent>/root`), and with ABI 6 from signalling them or their abstract Unix
//!   sockets;
//! - seccomp: `socket(2)` of any family fails (no network, no Unix socket to a daemon such
//!   as Docker's; with [`SandboxProfile::with_network`], every family but `AF_INET` and
//!   `AF_INET6`) and so do `ptrace`, `process_vm_*`, `unshare`, `setns`, namespace flags
//!   of `clone`, `mount` and friends, `bpf`, `perf_event_open`, `io_uring`, `keyctl`,
//!   `userfaultfd`, kernel modules, `open_by_handle_at` and the terminal ioctls
//!   `TIOCSTI`, `TIOCLINUX`, `TIOCSCTTY`, `TIOCSPGRP`, `TIOCSETD`;
//! - no terminal of the user's: neither `/dev/tty` nor `/dev/pts` is in the Landlock rules
//!   (and the program has no controlling terminal: it starts its own session).
//!
//! When the kernel cannot enforce the mode chosen, [`SandboxProfile::prepare`] fails with
//! [`SandboxError::Unsupported`]: the command is refused, never run unconfined.

#[cfg(target_os = "linux")]
mod linux;
mod program;
#[cfg(target_os = "linux")]
pub(crate) use linux::process_gone;
pub use program::{find_program, program_reads, program_writes, resolve_program, script_arguments};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How much a command may do (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Reads limited; writes only in a private temporary directory; no network.
    ReadOnly,
    /// As `read-only`, plus writes in the workspace.
    WorkspaceWrite,
    /// No sandbox.
    FullAccess,
}

impl SandboxMode {
    /// Every mode, strictest first.
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::FullAccess,
    ];

    /// `read-only`, `workspace-write` or `full-access`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }

    /// Is `self` at least as strict as `other`?
    pub fn at_least_as_strict_as(self, other: SandboxMode) -> bool {
        self <= other
    }

    /// One sentence for the model (`standard`'s `sandbox` section, kept equal by a test;
    /// the note on a refused command) and for people: what a command may do in this mode.
    pub fn summary(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => {
                "Commands run in a read-only sandbox: they cannot reach the network, cannot write anywhere except the temporary directory $TMPDIR (emptied after each command), and can read only the workspace, system directories and the toolchains on PATH."
            }
            SandboxMode::WorkspaceWrite => {
                "Commands run in a sandbox: they cannot reach the network, only the workspace and the temporary directory $TMPDIR (emptied after each command) are writable, and they can read only the workspace, system directories and the toolchains on PATH."
            }
            SandboxMode::FullAccess => {
                "Commands run without a sandbox: they can read and write whatever the user can and reach the network."
            }
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SandboxMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown sandbox mode `{s}`; expected `read-only`, `workspace-write` or `full-access`"
                )
            })
    }
}

/// Home-directory paths never readable in a sandbox (relative to `$HOME`), besides the
/// agent-presets configuration directory.
pub const SECRET_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/git/credentials",
    ".git-credentials",
    ".netrc",
    ".gnupg",
    ".password-store",
    ".docker",
    ".kube",
    ".pypirc",
    ".npmrc",
    ".yarnrc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d",
    ".vault-token",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
];

/// Entries of `/etc` never readable in a sandbox.
pub const ETC_DENIED: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl/private",
    "security/opasswd",
    "docker",
    "wireguard",
    "NetworkManager/system-connections",
    "credstore",
    "credstore.encrypted",
];

/// What commands may do: the [`SandboxMode`] and the paths a preset adds
/// (`allowRead`). Part of a tool context (`ToolContext::with_sandbox`); a host can supply
/// its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxProfile {
    mode: SandboxMode,
    allow_read: Vec<PathBuf>,
    /// Directories writable besides the workspace: a launcher's download cache
    /// ([`program_writes`]).
    allow_write: Vec<PathBuf>,
    /// The home directory whose secrets are denied and toolchains derived; `$HOME` when
    /// `None`.
    home: Option<PathBuf>,
    /// May commands open sockets (an MCP server that declares `network: true`)?
    network: bool,
    /// Tests: act as if the kernel had no Landlock.
    simulate_no_landlock: bool,
}

impl SandboxProfile {
    /// A profile in `mode`, with nothing added.
    pub fn new(mode: SandboxMode) -> Self {
        SandboxProfile {
            mode,
            allow_read: Vec::new(),
            allow_write: Vec::new(),
            home: None,
            network: false,
            simulate_no_landlock: false,
        }
    }

    /// No sandbox (the library's default, as before sandboxes existed; the CLI takes the
    /// preset's mode, `workspace-write` unless it says otherwise).
    pub fn full_access() -> Self {
        SandboxProfile::new(SandboxMode::FullAccess)
    }

    /// The same profile with `paths` readable too (absolute; the preset's `allowRead`
    /// resolved against the workspace). The secret paths stay unreadable.
    pub fn with_allow_read<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.allow_read = paths.into_iter().map(Into::into).collect();
        self
    }

    /// The same profile able to read what the program `argv` needs, derived from the
    /// program itself ([`program_reads`]: its install prefix, its shebang's interpreter, a
    /// virtualenv's Python, a script argument, a launcher's package cache), `env` being
    /// the child's environment (its `PATH` finds the program) and `cwd` its working
    /// directory. Added to [`allow_read`](Self::allow_read); the secret paths stay
    /// unreadable. A launcher (`uvx`, `npx`, `pipx`) may also write its own download
    /// cache ([`program_writes`], [`allow_write`](Self::allow_write); not under
    /// `read-only`). Nothing for `full-access`.
    pub fn with_program<K, V>(mut self, argv: &[String], env: &[(K, V)], cwd: &Path) -> Self
    where
        K: AsRef<std::ffi::OsStr>,
        V: AsRef<std::ffi::OsStr>,
    {
        if !self.is_sandboxed() {
            return self;
        }
        let lookup = |name: &str| {
            env.iter()
                .find(|(k, _)| k.as_ref() == name)
                .map(|(_, v)| v.as_ref().to_owned())
        };
        let home = self.home();
        for p in program_reads(argv, &lookup, cwd, home.as_deref()) {
            if !self.allow_read.contains(&p) {
                self.allow_read.push(p);
            }
        }
        for p in program_writes(argv, &lookup, cwd, home.as_deref()) {
            if !self.allow_write.contains(&p) {
                self.allow_write.push(p);
            }
        }
        self
    }

    /// The directories writable besides the workspace and the temporary directory: the
    /// download cache of a launcher that is the program ([`program_writes`], added by
    /// [`with_program`](Self::with_program)). Never under `read-only`.
    pub fn allow_write(&self) -> &[PathBuf] {
        match self.mode {
            SandboxMode::ReadOnly => &[],
            _ => &self.allow_write,
        }
    }

    /// The same profile letting commands open Internet sockets (TCP, UDP: `AF_INET`,
    /// `AF_INET6`; never a Unix socket) when `allowed`:
    /// for a process that needs the network (an MCP server that declares
    /// `network: true`), with the filesystem still confined. `bash` never gets it from the
    /// CLI: its guidance says commands cannot reach the network.
    pub fn with_network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// May commands open sockets?
    pub fn network(&self) -> bool {
        self.network || !self.is_sandboxed()
    }

    /// The same profile taking `home` as the user's home directory (whose secrets are
    /// never readable) instead of `$HOME`.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// The home directory: the one given with [`with_home`](Self::with_home), else
    /// `$HOME` (when absolute).
    pub fn home(&self) -> Option<PathBuf> {
        self.home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .filter(|h| h.is_absolute())
    }

    /// The agent's environment with `HOME` as [`home`](Self::home).
    pub(crate) fn vars(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let mut vars: Vec<_> = std::env::vars_os().filter(|(k, _)| k != "HOME").collect();
        if let Some(home) = self.home() {
            vars.push(("HOME".into(), home.into()));
        }
        vars
    }

    /// The same profile behaving as if the kernel had no Landlock (for tests of the
    /// refusal: the command must not run).
    #[doc(hidden)]
    pub fn simulating_no_landlock(mut self) -> Self {
        self.simulate_no_landlock = true;
        self
    }

    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// The paths added with [`with_allow_read`](Self::with_allow_read) and
    /// [`with_program`](Self::with_program).
    pub fn allow_read(&self) -> &[PathBuf] {
        &self.allow_read
    }

    /// Does this profile confine commands at all?
    pub fn is_sandboxed(&self) -> bool {
        self.mode != SandboxMode::FullAccess
    }

    /// What to tell the user when the command `argv` (run in `cwd`, its program looked
    /// up on `path`, the child's `PATH`) could not start or died at once under this
    /// profile: that the sandbox may be the cause, the resolved path of what it could not
    /// read, and how to let it through (`allowRead` in the preset, or
    /// `--sandbox full-access`). `None` for `full-access`, where the sandbox is not it.
    ///
    /// What is named is the program, unless the sandbox can read it anyway (`/bin/sh`,
    /// `python3` on `PATH`) and an argument is a file it cannot (the script or binary it
    /// runs): then that file.
    pub fn start_failure_help(
        &self,
        argv: &[String],
        path: Option<&std::ffi::OsStr>,
        cwd: &Path,
    ) -> Option<String> {
        if !self.is_sandboxed() {
            return None;
        }
        let (program, args) = argv.split_first()?;
        let resolve = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
        let found = if program.contains('/') {
            Some(cwd.join(program)).filter(|p| p.is_file())
        } else {
            path.or(std::env::var_os("PATH").as_deref()).and_then(|p| {
                std::env::split_paths(p)
                    .map(|d| d.join(program))
                    .find(|p| p.is_file())
            })
        };
        let readable = self.readable_paths();
        let unreadable =
            |p: &Path| !p.starts_with(cwd) && !readable.iter().any(|r| p.starts_with(r));
        let found = found.map(resolve);
        let named = match &found {
            Some(p) if !unreadable(p) => args
                .iter()
                .filter(|a| a.contains('/'))
                .map(|a| resolve(cwd.join(a)))
                .find(|a| a.is_file() && unreadable(a))
                .or(found.clone()),
            _ => found.clone(),
        };
        // A program in `<prefix>/bin` (a virtualenv, a tool's install) usually needs its
        // whole prefix.
        let dir =
            named
                .as_deref()
                .and_then(Path::parent)
                .map(|d| match (d.file_name(), d.parent()) {
                    (Some(name), Some(prefix)) if name == "bin" && prefix.parent().is_some() => {
                        prefix
                    }
                    _ => d,
                });
        let (what, dir) = match (&named, dir) {
            (Some(p), Some(d)) if named == found => (
                format!("the program is `{}`", p.display()),
                d.display().to_string(),
            ),
            (Some(p), Some(d)) => (
                format!("it runs `{}`", p.display()),
                d.display().to_string(),
            ),
            _ => (
                format!("`{program}` was not found to say where it is"),
                "<its directory>".to_owned(),
            ),
        };
        Some(format!(
            "the `{mode}` sandbox may be what stopped it: sandboxed programs can read only the workspace, system directories, the toolchains on PATH and the preset's `allowRead`, and {what} (it may also need files elsewhere: an interpreter, a virtualenv, a package cache such as ~/.cache/uv); let it read them with `allowRead: [{dir}]` in the preset, or run with `--sandbox full-access`",
            mode = self.mode.as_str()
        ))
    }

    /// The paths outside the workspace a command may read in this profile (for
    /// documentation and `--explain`-style output), with the secret paths excluded as
    /// described in the module documentation. Empty for `full-access`.
    pub fn readable_paths(&self) -> Vec<PathBuf> {
        if !self.is_sandboxed() {
            return Vec::new();
        }
        let mut out = system_read_paths();
        out.extend(toolchain_paths(&self.vars()));
        out.extend(self.allow_read.iter().cloned());
        out
    }

    /// Prepare the sandbox of one command run with `workspace` as its workspace: a
    /// private temporary directory, the Landlock ruleset and the seccomp program, all
    /// built here, in the agent, so that the forked child only has to apply them.
    ///
    /// Fails when the kernel cannot enforce the mode: the command must then not run.
    pub fn prepare(&self, workspace: &Path) -> Result<PreparedSandbox, SandboxError> {
        if !self.is_sandboxed() {
            return Ok(PreparedSandbox {
                mode: self.mode,
                #[cfg(target_os = "linux")]
                inner: None,
            });
        }
        if self.simulate_no_landlock {
            return Err(SandboxError::Unsupported {
                mode: self.mode,
                reason: "Landlock is not available (simulated)".to_owned(),
            });
        }
        #[cfg(target_os = "linux")]
        {
            let inner = linux::Prepared::new(self, workspace)?;
            Ok(PreparedSandbox {
                mode: self.mode,
                inner: Some(inner),
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = workspace;
            Err(SandboxError::Unsupported {
                mode: self.mode,
                reason: "sandboxes are implemented on Linux only".to_owned(),
            })
        }
    }
}

impl Default for SandboxProfile {
    fn default() -> Self {
        SandboxProfile::full_access()
    }
}

/// Why a sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel cannot enforce the mode.
    #[error("the `{mode}` sandbox cannot be enforced here: {reason}")]
    Unsupported {
        /// The mode asked for.
        mode: SandboxMode,
        /// Why.
        reason: String,
    },
    /// Setting it up failed (a temporary directory, a ruleset).
    #[error("the `{mode}` sandbox could not be set up: {reason}")]
    Setup {
        /// The mode asked for.
        mode: SandboxMode,
        /// Why.
        reason: String,
    },
}

impl SandboxError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            SandboxError::Unsupported { .. } => {
                "the command was not run. Use Linux 6.2 or later with Landlock enabled (the `lsm=` boot parameter must list landlock), or choose to run commands unconfined explicitly with `agent-presets run --sandbox full-access`"
            }
            SandboxError::Setup { .. } => {
                "the command was not run; try again, or choose to run commands unconfined explicitly with `agent-presets run --sandbox full-access`"
            }
        }
    }
}

/// A sandbox ready to be applied in a forked child: owns the temporary directory (removed
/// when dropped), the Landlock ruleset descriptor and the seccomp programs.
pub struct PreparedSandbox {
    mode: SandboxMode,
    #[cfg(target_os = "linux")]
    inner: Option<linux::Prepared>,
}

impl fmt::Debug for PreparedSandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedSandbox")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl PreparedSandbox {
    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// The command's private temporary directory (its `TMPDIR`), when sandboxed.
    pub fn temp_dir(&self) -> Option<&Path> {
        #[cfg(target_os = "linux")]
        {
            self.inner.as_ref().map(linux::Prepared::temp_dir)
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// Register the sandbox with `command`: a `pre_exec` closure that applies it in the
    /// forked child. Registered closures run in order: under the subreaper containment it
    /// must come before the supervisor splits off, so the supervisor is confined too.
    #[cfg(unix)]
    pub(crate) fn register(&self, command: &mut tokio::process::Command) {
        #[cfg(target_os = "linux")]
        if let Some(inner) = &self.inner {
            inner.register(command);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = command;
    }
}

/// The system paths a shell needs to read (those that exist): `/usr`, `/bin`, `/sbin`,
/// `/lib*`, every entry of `/etc` but [`ETC_DENIED`], `/proc`, `/dev/null`, `/dev/zero`,
/// `/dev/full`, `/dev/random`, `/dev/urandom`, `/dev/fd`, `/dev/stdin`…, `/dev/ptmx`
/// (never `/dev/tty` or `/dev/pts`), `/sys/devices/system/cpu` (CPU counts for build
/// tools).
pub(crate) fn system_read_paths() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/proc",
        "/sys/devices/system/cpu",
        "/sys/fs/cgroup",
    ]
    .iter()
    .map(PathBuf::from)
    .filter(|p| p.exists())
    .collect();
    out.extend(tree_minus(Path::new("/etc"), &etc_denied()));
    out
}

/// `/etc/<denied>` as paths.
pub(crate) fn etc_denied() -> Vec<PathBuf> {
    ETC_DENIED
        .iter()
        .map(|d| Path::new("/etc").join(d))
        .collect()
}

/// The secret paths for `home`, plus the agent-presets configuration directory.
pub(crate) fn secret_paths(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = home
        .map(|h| SECRET_PATHS.iter().map(|s| h.join(s)).collect())
        .unwrap_or_default();
    if let Some(config) = dirs::config_dir() {
        out.push(config.join("agent-presets"));
    }
    out.extend(etc_denied());
    out
}

/// `root` as a list of paths to allow such that none of `denied` is inside any: `root`
/// itself when no denied path is below it, else its entries (recursively) minus the
/// denied ones. Symbolic links among the entries are left out (Landlock resolves them;
/// their targets must be allowed on their own). Missing paths give nothing.
pub(crate) fn tree_minus(root: &Path, denied: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    tree_minus_into(root, denied, &mut out, 0);
    out
}

fn tree_minus_into(root: &Path, denied: &[PathBuf], out: &mut Vec<PathBuf>, depth: usize) {
    // A path in a secret directory is part of the secret.
    if denied.iter().any(|d| root.starts_with(d)) {
        return;
    }
    if !denied.iter().any(|d| d.starts_with(root)) {
        if root.symlink_metadata().is_ok() {
            out.push(root.to_path_buf());
        }
        return;
    }
    // A denied path is below: allow the siblings on the way to it.
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    if depth > 16 {
        return;
    }
    let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    children.sort();
    for child in children {
        let Ok(meta) = child.symlink_metadata() else {
            continue;
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        tree_minus_into(&child, denied, out, depth + 1);
    }
}

/// Environment variables naming toolchain directories whose contents commands read.
const TOOLCHAIN_VARS: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "GOROOT",
    "GOPATH",
    "NVM_DIR",
    "VOLTA_HOME",
    "RBENV_ROOT",
    "SDKMAN_DIR",
    "JAVA_HOME",
];

/// Home-directory paths commands read to work at all (relative to `$HOME`): the Rust
/// toolchains and git's configuration (without `git/credentials`, a secret path).
const HOME_CONFIG: &[&str] = &[".cargo", ".rustup", ".gitconfig", ".config/git"];

/// The toolchain directories to read, derived from the agent's environment `vars`:
/// each `PATH` entry (its parent when it ends in `bin`, `sbin` or `shims`, so
/// `~/.cargo/bin` gives `~/.cargo`), the directories [`TOOLCHAIN_VARS`] name, and
/// [`HOME_CONFIG`] (`~/.cargo`, `~/.rustup`, `~/.gitconfig`, `~/.config/git`) when they
/// exist. Never `/`, the home directory or a
/// directory above it (a `PATH` entry that is one is skipped), and never a secret path
/// (a toolchain directory holding one is allowed minus it, e.g. `~/.cargo` without its
/// `credentials.toml`).
pub(crate) fn toolchain_paths(vars: &[(std::ffi::OsString, std::ffi::OsString)]) -> Vec<PathBuf> {
    let get = |name: &str| {
        vars.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
    };
    let home = get("HOME").filter(|h| h.is_absolute());
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(path) = get("PATH") {
        for entry in std::env::split_paths(path.as_os_str()) {
            if !entry.is_absolute() {
                continue;
            }
            let derived = match entry.file_name().and_then(|n| n.to_str()) {
                Some("bin" | "sbin" | "shims") => entry.parent().map(Path::to_path_buf),
                _ => None,
            };
            match derived {
                Some(parent) if !too_wide(&parent, home.as_deref()) => candidates.push(parent),
                _ => candidates.push(entry),
            }
        }
    }
    for name in TOOLCHAIN_VARS {
        if let Some(dir) = get(name).filter(|d| d.is_absolute()) {
            candidates.push(dir);
        }
    }
    if let Some(home) = &home {
        for dir in HOME_CONFIG {
            candidates.push(home.join(dir));
        }
    }
    let denied = secret_paths(home.as_deref());
    let mut out: Vec<PathBuf> = Vec::new();
    for candidate in candidates {
        // Canonical, so `..` cannot climb to the home directory.
        let Ok(dir) = candidate.canonicalize() else {
            continue;
        };
        if too_wide(&dir, home.as_deref()) || out.iter().any(|o| dir.starts_with(o)) {
            continue;
        }
        out.retain(|o| !o.starts_with(&dir));
        out.push(dir);
    }
    out.into_iter()
        .flat_map(|dir| tree_minus(&dir, &denied))
        .collect()
}

/// Is `dir` the root, the home directory or above it (too much to allow)?
fn too_wide(dir: &Path, home: Option<&Path>) -> bool {
    dir.parent().is_none() || home.is_some_and(|h| h.starts_with(dir))
}

/// The note added to a sandboxed command's result when its output shows a refusal.
pub(crate) fn denial_note(mode: SandboxMode, output: &[u8]) -> Option<String> {
    const SIGNS: [&[u8]; 6] = [
        b"Permission denied",
        b"Invalid cross-device link",
        b"Operation not permitted",
        b"Read-only file system",
        b"EACCES",
        b"EPERM",
    ];
    let hit = SIGNS
        .iter()
        .any(|sign| memchr::memmem::find(output, sign).is_some());
    (hit && mode != SandboxMode::FullAccess).then(|| {
        format!(
            "[sandbox: a \"Permission denied\" or \"Operation not permitted\" above most likely came from the `{mode}` sandbox, not from file permissions. {} Retrying will not help; do the work inside the workspace, or tell the user what needs more access.]",
            mode.summary()
        )
    })
}

/// A shared, cheaply cloned profile (what a tool context holds).
pub(crate) type SharedProfile = Arc<SandboxProfile>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn modes_parse_and_order_by_strictness() {
        for m in SandboxMode::ALL {
            assert_eq!(m.as_str().parse::<SandboxMode>(), Ok(m));
        }
        assert!(SandboxMode::ReadOnly.at_least_as_strict_as(SandboxMode::WorkspaceWrite));
        assert!(!SandboxMode::FullAccess.at_least_as_strict_as(SandboxMode::WorkspaceWrite));
        let err = "danger".parse::<SandboxMode>().unwrap_err();
        assert!(err.contains("unknown sandbox mode `danger`"), "{err}");
    }

    #[test]
    fn toolchains_come_from_path_but_never_home_or_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        for d in [".cargo/bin", ".ssh", "bin", ".pyenv/shims", ".config/gh"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        std::fs::write(home.join(".cargo/credentials.toml"), "token").unwrap();
        std::fs::write(home.join(".cargo/env"), "").unwrap();
        let path = std::env::join_paths([
            home.join(".cargo/bin"),
            home.join("bin"),
            home.join(".pyenv/shims"),
            home.clone(),
            PathBuf::from("/"),
            home.join(".config/gh"),
        ])
        .unwrap();
        let vars: Vec<(OsString, OsString)> =
            vec![("HOME".into(), home.clone().into()), ("PATH".into(), path)];
        let home = home.canonicalize().unwrap();
        let got = toolchain_paths(&vars);
        assert!(got.contains(&home.join("bin")), "{got:?}");
        assert!(got.contains(&home.join(".pyenv")), "{got:?}");
        assert!(got.contains(&home.join(".cargo/bin")), "{got:?}");
        assert!(got.contains(&home.join(".cargo/env")), "{got:?}");
        for bad in [
            home.clone(),
            PathBuf::from("/"),
            home.join(".cargo"),
            home.join(".cargo/credentials.toml"),
            home.join(".config/gh"),
            home.join(".ssh"),
        ] {
            assert!(!got.contains(&bad), "{bad:?} in {got:?}");
        }
    }

    #[test]
    fn etc_is_readable_minus_its_secrets() {
        let paths = system_read_paths();
        assert!(!paths.contains(&PathBuf::from("/etc")));
        assert!(!paths.contains(&PathBuf::from("/etc/shadow")));
        if Path::new("/etc/passwd").exists() {
            assert!(paths.contains(&PathBuf::from("/etc/passwd")), "{paths:?}");
        }
    }

    #[test]
    fn a_denial_gets_a_note_naming_the_sandbox() {
        let note =
            denial_note(SandboxMode::WorkspaceWrite, b"cat: /x: Permission denied\n").unwrap();
        assert!(note.contains("`workspace-write` sandbox"), "{note}");
        assert!(denial_note(SandboxMode::FullAccess, b"Permission denied").is_none());
        assert!(denial_note(SandboxMode::ReadOnly, b"all good").is_none());
    }
}

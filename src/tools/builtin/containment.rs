//! [`Containment`]: how `bash` keeps the processes a command starts from outliving the
//! call — background jobs, jobs started under `set -m`, `setsid`, `nohup` and
//! double-forked daemons included.
//!
//! - [`Containment::Cgroup`] (Linux, where the host lets this process create cgroups
//!   below its own cgroup v2): each command runs in a fresh cgroup, and everything in it
//!   is killed at once by writing `1` to its `cgroup.kill` (Linux 5.14+). A process can
//!   only leave the cgroup by writing to a cgroup it may write to.
//! - [`Containment::Subreaper`] (Linux otherwise): the command runs under a supervisor
//!   process that is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every process the
//!   command orphans — whatever its session or process group — is re-parented to the
//!   supervisor instead of to init. When the command ends, times out or the call is
//!   dropped (the supervisor watches a pipe the call holds), the supervisor kills every
//!   process below it until none is left, then exits.
//! - [`Containment::ProcessGroup`] (elsewhere): the command's process group is killed;
//!   a process that leaves the group (`setsid`, `set -m`) is not tracked.
//!
//! None of them stops a command from asking something outside its tree to run a process
//! (`systemd-run`, `at`, `ssh localhost`, a container runtime); that needs an OS sandbox.
//!
//! When the agent itself dies:
//! - by a signal it handles (the CLI handles SIGINT, SIGTERM and SIGHUP), the call's
//!   future is dropped and [`Contained`]'s drop kills everything, as on a timeout, before
//!   the process exits; the cgroup is removed then and there;
//! - by SIGKILL (which nothing can handle): the command's own process gets
//!   `PR_SET_PDEATHSIG` (SIGKILL) when it was spawned from the process's main thread (as
//!   the CLI does); the subreaper supervisor sees its lifeline close (and gets SIGCONT as
//!   its death signal, in case a command stopped it) and kills the whole tree; under the
//!   cgroup strategy the background processes keep running in their cgroup until the
//!   next agent on the host starts a command: it kills and removes the cgroups of agents
//!   that are gone ([`Containment::best_available`] probes once per process).
//!
//! [`CommandLimits`] (process count, memory) are applied in the command's cgroup (v2)
//! where the controllers are enabled, else in a cgroup v1 `pids` / `memory` hierarchy
//! this process may write, else not at all.

use std::fmt;
use std::io;
use std::num::NonZeroU64;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::tools::sandbox::PreparedSandbox;

/// How `bash` keeps the processes a command starts from outliving its call (see the
/// documentation of this module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Containment {
    /// Linux: a cgroup (v2) per command, killed with `cgroup.kill`.
    Cgroup,
    /// Linux: a child-subreaper supervisor per command that kills every descendant.
    Subreaper,
    /// Elsewhere: the command's process group is killed; processes that leave it are
    /// not tracked.
    ProcessGroup,
}

impl Containment {
    /// The strongest containment this host allows: [`Cgroup`](Self::Cgroup) where this
    /// process may create cgroups below its own (cgroup v2 with `cgroup.kill`),
    /// [`Subreaper`](Self::Subreaper) on other Linux hosts,
    /// [`ProcessGroup`](Self::ProcessGroup) elsewhere. Probed once (it creates and removes
    /// an empty cgroup).
    pub fn best_available() -> Containment {
        #[cfg(target_os = "linux")]
        {
            if cgroup::available() {
                Containment::Cgroup
            } else {
                Containment::Subreaper
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Containment::ProcessGroup
        }
    }

    /// `cgroup`, `subreaper` or `process-group`.
    pub fn as_str(self) -> &'static str {
        match self {
            Containment::Cgroup => "cgroup",
            Containment::Subreaper => "subreaper",
            Containment::ProcessGroup => "process-group",
        }
    }

    /// How the kill is done, for messages ("… were killed (through their cgroup)").
    pub(crate) fn killed_by(self) -> &'static str {
        match self {
            Containment::Cgroup => "through their cgroup",
            Containment::Subreaper => "by the command's subreaper supervisor",
            Containment::ProcessGroup => "with the command's process group",
        }
    }

    /// Does it track processes that leave the command's process group?
    pub fn tracks_every_descendant(self) -> bool {
        !matches!(self, Containment::ProcessGroup)
    }

    /// The next weaker one, to fall back to.
    fn weaker(self) -> Option<Containment> {
        match self {
            Containment::Cgroup => Some(Containment::Subreaper),
            Containment::Subreaper => Some(Containment::ProcessGroup),
            Containment::ProcessGroup => None,
        }
    }

    /// Can it run here at all (before trying)?
    fn possible(self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Containment::Cgroup => cgroup::available(),
            #[cfg(target_os = "linux")]
            Containment::Subreaper => true,
            #[cfg(not(target_os = "linux"))]
            Containment::Cgroup | Containment::Subreaper => false,
            Containment::ProcessGroup => true,
        }
    }
}

impl fmt::Display for Containment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Containment {
    type Err = String;

    /// `cgroup`, `subreaper` or `process-group`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cgroup" => Ok(Containment::Cgroup),
            "subreaper" => Ok(Containment::Subreaper),
            "process-group" => Ok(Containment::ProcessGroup),
            other => Err(format!(
                "unknown containment `{other}`; expected `cgroup`, `subreaper` or `process-group`"
            )),
        }
    }
}

/// Resource limits for every command `bash` runs (the command and all it starts,
/// together), applied through a cgroup where this process may write one (see the
/// module documentation); elsewhere they are not applied.
///
/// The defaults ([`CommandLimits::default`]) stop a fork bomb or a runaway allocation
/// before it takes the machine down, and stay far above what building and testing a
/// normal project needs:
/// - at most [`DEFAULT_MAX_PROCESSES`](Self::DEFAULT_MAX_PROCESSES) (8192) tasks. The
///   kernel counts threads as well as processes, so this leaves room for `cargo test`
///   with one test thread and one `rustc` (each with its own threads) per core on a
///   machine with a few hundred cores;
/// - at most half the physical memory: `cargo test` or `python -m pytest` on a normal
///   project stays well below, and the other half keeps the agent and the desktop alive
///   when a command leaks. (Beyond the limit the kernel's OOM killer ends a process of
///   the command, not the agent.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CommandLimits {
    max_processes: Option<NonZeroU64>,
    max_memory: Option<NonZeroU64>,
}

impl CommandLimits {
    /// The default process (task) limit.
    pub const DEFAULT_MAX_PROCESSES: u64 = 8192;

    /// No limits at all.
    pub fn unlimited() -> Self {
        CommandLimits {
            max_processes: None,
            max_memory: None,
        }
    }

    /// The same limits with at most `max` processes and threads (`pids.max`); `None`
    /// for no limit.
    pub fn with_max_processes(mut self, max: Option<NonZeroU64>) -> Self {
        self.max_processes = max;
        self
    }

    /// The same limits with at most `bytes` of memory (`memory.max`); `None` for no
    /// limit.
    pub fn with_max_memory(mut self, bytes: Option<NonZeroU64>) -> Self {
        self.max_memory = bytes;
        self
    }

    /// The process (task) limit.
    pub fn max_processes(&self) -> Option<NonZeroU64> {
        self.max_processes
    }

    /// The memory limit in bytes.
    pub fn max_memory(&self) -> Option<NonZeroU64> {
        self.max_memory
    }
}

impl Default for CommandLimits {
    fn default() -> Self {
        CommandLimits {
            max_processes: NonZeroU64::new(Self::DEFAULT_MAX_PROCESSES),
            max_memory: half_of_physical_memory(),
        }
    }
}

/// Half the physical memory, if the host says how much there is.
fn half_of_physical_memory() -> Option<NonZeroU64> {
    // SAFETY: sysconf(3) reads no memory of ours.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let total = u64::try_from(pages)
        .ok()?
        .checked_mul(u64::try_from(size).ok()?)?;
    NonZeroU64::new(total / 2)
}

/// A command running under a containment.
pub(crate) struct Contained {
    /// The process spawned (the supervisor under [`Containment::Subreaper`]).
    pub(crate) child: Child,
    /// What contains it.
    pub(crate) containment: Containment,
    guard: Guard,
    /// cgroup v1 groups that carry limits the command's cgroup could not; emptied and
    /// removed after the guard (fields drop in order).
    #[cfg(target_os = "linux")]
    _limit_groups: Vec<v1::Group>,
}

/// What kills everything when the command is done; kills on drop too.
enum Guard {
    #[cfg(target_os = "linux")]
    Cgroup(cgroup::Cgroup),
    #[cfg(target_os = "linux")]
    Subreaper(subreaper::Supervised),
    ProcessGroup(ProcessGroup),
}

/// Spawn the command `build` makes (a fresh one per attempt) under `wanted`, or the
/// next weaker containment that works here, with `limits` where a cgroup can carry them.
/// `build` sets everything but the containment: program, arguments, environment,
/// working directory, stdio.
///
/// `sandbox` (prepared by the caller, who keeps it alive until this returns) confines the
/// command: its `pre_exec` closure runs after the containment's own and, under the
/// subreaper, before the supervisor splits off, so the supervisor is confined too.
pub(crate) fn spawn(
    build: &dyn Fn() -> Command,
    wanted: Containment,
    limits: CommandLimits,
    sandbox: &PreparedSandbox,
) -> io::Result<Contained> {
    // Set when the command could not be started in the cgroup made for it.
    let refused = std::cell::Cell::new(false);
    let contained = first_that_starts(wanted, Containment::possible, |containment| {
        try_spawn(build, containment, limits, sandbox, &refused)
    })?;
    // It started under a weaker containment: the host does not let us move a process
    // into our cgroups (no delegation), so do not try again. A command that no
    // containment can start (a missing program) says nothing about the cgroup.
    #[cfg(target_os = "linux")]
    if refused.get() {
        cgroup::disable();
    }
    Ok(contained)
}

/// Try `wanted`, then each weaker containment, skipping those that are not `possible`
/// here, until one `start`s. When even the weakest one fails, the command itself cannot
/// start: its error is returned.
fn first_that_starts<T>(
    wanted: Containment,
    possible: impl Fn(Containment) -> bool,
    mut start: impl FnMut(Containment) -> io::Result<T>,
) -> io::Result<T> {
    let mut containment = wanted;
    loop {
        if possible(containment) {
            match start(containment) {
                Ok(started) => return Ok(started),
                // The weakest one failed: the command itself cannot start.
                Err(e) if containment.weaker().is_none() => return Err(e),
                Err(_) => {}
            }
        }
        match containment.weaker() {
            Some(next) => containment = next,
            None => return Err(io::Error::other("no way to run a command here")),
        }
    }
}

/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends, not the
/// process: it is set only when spawning from the main thread, which lives as long as
/// the process (the CLI runs its commands there). Returns the signal and the pid the
/// child's parent must have (checked after setting it, as prctl(2) advises: the parent
/// may have died before).
#[cfg(target_os = "linux")]
fn death_signal(signal: libc::c_int) -> Option<(libc::c_int, libc::pid_t)> {
    // SAFETY: getpid(2) and gettid(2) have no preconditions.
    let (pid, tid) = unsafe { (libc::getpid(), libc::syscall(libc::SYS_gettid)) };
    (libc::c_long::from(pid) == tid).then_some((signal, pid))
}

/// In the forked child: set the death signal (see [`death_signal`]).
#[cfg(target_os = "linux")]
fn set_death_signal(signal: libc::c_int, parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl(2) and getppid(2) are async-signal-safe and read no memory of ours.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            // The agent is already gone.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

/// Register the death signal and the joining of the limit groups with `command`.
#[cfg(target_os = "linux")]
fn prepare_child(command: &mut Command, death: libc::c_int, groups: &[v1::Group]) {
    let mut fds: [libc::c_int; 2] = [-1; 2];
    for (slot, group) in fds.iter_mut().zip(groups) {
        *slot = group.procs_fd();
    }
    let death = death_signal(death);
    // SAFETY: the closure runs in the forked child before exec; it calls only prctl,
    // getppid and write(2) (async-signal-safe) on descriptors opened before the fork,
    // and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            for fd in fds.into_iter().filter(|&fd| fd >= 0) {
                // Best effort: a limit that cannot be joined does not stop the command.
                let _ = cgroup::join(fd);
            }
            match death {
                Some((signal, parent)) => set_death_signal(signal, parent),
                None => Ok(()),
            }
        });
    }
}

/// Spawn under `containment`; `refused` is set when the command could not be started in
/// its cgroup (see [`spawn`]).
fn try_spawn(
    build: &dyn Fn() -> Command,
    containment: Containment,
    limits: CommandLimits,
    sandbox: &PreparedSandbox,
    refused: &std::cell::Cell<bool>,
) -> io::Result<Contained> {
    let mut command = build();
    // Its own process group in every case: no terminal signal reaches it, and the group
    // is the last resort.
    command.process_group(0);
    let _ = (&limits, refused);
    match containment {
        #[cfg(target_os = "linux")]
        Containment::Cgroup => {
            let (group, missing) = cgroup::Cgroup::create(limits)?;
            let procs = group.procs_fd();
            // SAFETY: the closure runs in the forked child before exec; it only calls
            // write(2), which is async-signal-safe, on a descriptor opened before the
            // fork, and allocates nothing.
            unsafe {
                command.pre_exec(move || cgroup::join(procs));
            }
            let limit_groups = v1::groups(missing);
            prepare_child(&mut command, libc::SIGKILL, &limit_groups);
            sandbox.register(&mut command);
            command.kill_on_drop(true);
            match command.spawn() {
                Ok(child) => Ok(Contained {
                    child,
                    containment,
                    guard: Guard::Cgroup(group),
                    _limit_groups: limit_groups,
                }),
                Err(e) => {
                    // The host may not let us move a process there (no delegation), or
                    // the program is missing: `spawn` tells the two apart.
                    refused.set(true);
                    Err(e)
                }
            }
        }
        #[cfg(target_os = "linux")]
        Containment::Subreaper => {
            let (supervised, fds) = subreaper::Supervised::prepare()?;
            // The supervisor joins the limit groups (everything below it inherits them),
            // and gets SIGCONT when the agent dies: if a command stopped it, it wakes up,
            // sees its lifeline closed and kills the tree.
            let limit_groups = v1::groups(limits);
            prepare_child(&mut command, libc::SIGCONT, &limit_groups);
            // Before `split`: the supervisor is confined too (and not dumpable, so the
            // command cannot read its copy of the agent's memory through /proc).
            sandbox.register(&mut command);
            // SAFETY: the closure runs in the forked child before exec and uses only
            // async-signal-safe system calls (prctl, fork, close, dup2, open, sigaction,
            // sigprocmask, ppoll, waitpid, kill, getdents64, read, write, _exit) on
            // memory it owns on its stack; it allocates nothing and takes no lock.
            unsafe {
                command.pre_exec(move || subreaper::split(fds));
            }
            // Killing the supervisor would leave its descendants to init: a dropped call
            // closes the lifeline instead, and the supervisor cleans up and exits (tokio
            // reaps it).
            command.kill_on_drop(false);
            let child = command.spawn()?;
            Ok(Contained {
                guard: Guard::Subreaper(supervised.started()),
                child,
                containment,
                _limit_groups: limit_groups,
            })
        }
        #[cfg(not(target_os = "linux"))]
        Containment::Cgroup | Containment::Subreaper => Err(io::Error::other("Linux only")),
        Containment::ProcessGroup => {
            #[cfg(target_os = "linux")]
            prepare_child(&mut command, libc::SIGKILL, &[]);
            sandbox.register(&mut command);
            command.kill_on_drop(true);
            let child = command.spawn()?;
            Ok(Contained {
                guard: Guard::ProcessGroup(ProcessGroup::new(child.id())),
                child,
                containment,
                #[cfg(target_os = "linux")]
                _limit_groups: Vec::new(),
            })
        }
    }
}

/// How the command ended.
pub(crate) struct Ending {
    /// The command's exit status; `None` when it did not end by itself (timeout).
    pub(crate) status: Option<ExitStatus>,
    /// Something went wrong with the containment itself (e.g. the supervisor was killed):
    /// processes may have survived. Said in the result.
    pub(crate) warning: Option<String>,
}

impl Contained {
    /// Wait for the command for at most `timeout`, then kill everything it started
    /// (the command too, if it is still running).
    pub(crate) async fn run_to_end(
        &mut self,
        timeout: Duration,
        grace: Duration,
    ) -> io::Result<Ending> {
        let waited = tokio::select! {
            status = self.child.wait() => Some(status?),
            () = tokio::time::sleep(timeout) => None,
        };
        match &mut self.guard {
            #[cfg(target_os = "linux")]
            Guard::Cgroup(group) => {
                group.kill();
                if waited.is_none() {
                    let _ = tokio::time::timeout(grace, self.child.wait()).await;
                }
                let warning = group.remove_when_empty(grace).await;
                Ok(Ending {
                    status: waited,
                    warning,
                })
            }
            #[cfg(target_os = "linux")]
            Guard::Subreaper(supervised) => {
                let status = match waited {
                    // The supervisor exits only after it killed every descendant.
                    Some(own) => {
                        let command = supervised.command_status();
                        if command.is_none() {
                            // It did not say how the command ended: it was killed itself.
                            return Ok(Ending {
                                status: Some(own),
                                warning: Some(format!(
                                    "the supervisor of the command ended unexpectedly ({}); processes the command started may still be running",
                                    describe(own)
                                )),
                            });
                        }
                        command
                    }
                    None => {
                        supervised.release();
                        if tokio::time::timeout(grace, self.child.wait())
                            .await
                            .is_err()
                        {
                            // The supervisor did not clean up (a command stopped it, or
                            // it is stuck): kill its tree from here, then it.
                            let left = match self.child.id() {
                                Some(pid) => subreaper::kill_tree(pid),
                                None => Vec::new(),
                            };
                            let _ = self.child.start_kill();
                            let _ = tokio::time::timeout(grace, self.child.wait()).await;
                            if !left.is_empty() {
                                return Ok(Ending {
                                    status: None,
                                    warning: Some(subreaper::survivors(&left)),
                                });
                            }
                        }
                        None
                    }
                };
                Ok(Ending {
                    status,
                    warning: None,
                })
            }
            Guard::ProcessGroup(group) => {
                group.kill();
                if waited.is_none() {
                    let _ = tokio::time::timeout(grace, self.child.wait()).await;
                }
                Ok(Ending {
                    status: waited,
                    warning: None,
                })
            }
        }
    }
}

impl Contained {
    /// The command's exit status if it has ended, without waiting (under
    /// [`Containment::Subreaper`], the status the supervisor reported for the command, not
    /// the supervisor's own). For a long-lived command (an MCP server) whose output closed.
    #[cfg(feature = "client")]
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        let own = self.child.try_wait().ok().flatten()?;
        match &mut self.guard {
            #[cfg(target_os = "linux")]
            Guard::Subreaper(supervised) => supervised.command_status().or(Some(own)),
            #[allow(unreachable_patterns)]
            _ => Some(own),
        }
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        // The call was dropped (cancelled, or the agent is exiting on a signal) while the
        // supervisor still runs: do not count on it (a command may have stopped it).
        // Kill its tree from here, then it. (Cgroup and process group kill in their own
        // drop.)
        #[cfg(target_os = "linux")]
        if let Guard::Subreaper(supervised) = &mut self.guard {
            supervised.release();
            if matches!(self.child.try_wait(), Ok(None)) {
                if let Some(pid) = self.child.id() {
                    subreaper::kill_tree(pid);
                }
                let _ = self.child.start_kill();
            }
        }
    }
}

/// `exit code: 0`, or the signal that ended a process.
pub(crate) fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "exit status unknown".to_owned(),
    }
}

/// The command's process group; killed (SIGKILL) on [`kill`](Self::kill) or when dropped
/// without having been killed.
struct ProcessGroup {
    pgid: Option<libc::pid_t>,
}

impl ProcessGroup {
    fn new(pid: Option<u32>) -> Self {
        // 0 and 1 would address our own group or every process: never signal those.
        let pgid = pid
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|&p| p > 1);
        ProcessGroup { pgid }
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: kill(2) only sends a signal; it reads and writes no memory of ours.
            // The group was created for this command by `process_group(0)`.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A name nobody else uses, for a cgroup of this process.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Is the agent that made the cgroup `name` (`agent-presets-<pid>-<n>`) gone? Our own
/// pid counts as gone while probing: nothing of ours exists yet, so such a cgroup was
/// left by an earlier process that had our pid.
#[cfg(target_os = "linux")]
fn owner_gone(name: &str) -> bool {
    let Some(pid) = name
        .strip_prefix(CGROUP_PREFIX)
        .and_then(|rest| rest.split('-').next())
        .and_then(|p| p.parse::<libc::pid_t>().ok())
    else {
        return false;
    };
    if pid <= 1 {
        return false;
    }
    if pid == std::process::id() as libc::pid_t {
        return true;
    }
    crate::tools::sandbox::process_gone(pid)
}

/// The prefix of the cgroups we create (`agent-presets-<pid>-<n>`).
#[cfg(target_os = "linux")]
const CGROUP_PREFIX: &str = "agent-presets-";

/// How a cgroup's `cgroup.procs` and `cgroup.kill` are opened: write-only, not inherited
/// by the command. (`union`, not `|`: cargo-mutants' `|` → `^` on distinct bits is the
/// same set.)
#[cfg(target_os = "linux")]
const PROCS_FLAGS: rustix::fs::OFlags =
    rustix::fs::OFlags::WRONLY.union(rustix::fs::OFlags::CLOEXEC);

/// Wait until `done` (asked every 2 ms), for at most `wait`; whether it was.
#[cfg(target_os = "linux")]
async fn wait_until(wait: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + wait;
    loop {
        if done() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Remove `dir` once it is empty, waiting (blocking) for at most `wait`.
#[cfg(target_os = "linux")]
fn remove_dir_blocking(dir: &std::path::Path, wait: Duration) -> bool {
    let deadline = std::time::Instant::now() + wait;
    loop {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(target_os = "linux")]
mod cgroup {
    //! A cgroup (v2) per command, below this process's own cgroup.

    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, OnceLock};
    use std::time::Duration;

    use rustix::fs::Mode;

    use super::CGROUP_PREFIX as PREFIX;
    use super::{CommandLimits, PROCS_FLAGS};

    /// Set once a cgroup could not be used: from then on commands use the subreaper.
    static DISABLED: AtomicBool = AtomicBool::new(false);

    /// Our own cgroup's directory, if cgroups can be created below it.
    fn base() -> Option<&'static Path> {
        static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
        BASE.get_or_init(probe).as_deref()
    }

    pub(super) fn available() -> bool {
        !DISABLED.load(Ordering::Relaxed) && base().is_some()
    }

    pub(super) fn disable() {
        DISABLED.store(true, Ordering::Relaxed);
    }

    /// Find our cgroup v2 directory and check that a child cgroup with `cgroup.kill` can
    /// be made there (and removed). Removes empty cgroups left by agents that died.
    fn probe() -> Option<PathBuf> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let dir = own_dir(&own, &mounts)?;
        usable(&dir).then_some(dir)
    }

    /// Our cgroup v2 directory, from the text of `/proc/self/cgroup` (`own`) and
    /// `/proc/self/mountinfo` (`mounts`): the `0::` path, below the first cgroup2 mount
    /// whose root holds it.
    pub(super) fn own_dir(own: &str, mounts: &str) -> Option<PathBuf> {
        let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
        mounts.lines().find_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            if fs.split(' ').next()? != "cgroup2" {
                return None;
            }
            let fields: Vec<&str> = mount.split(' ').collect();
            let (root, point) = (unescape(fields.get(3)?), unescape(fields.get(4)?));
            let below = Path::new(path).strip_prefix(&root).ok()?;
            Some(Path::new(&point).join(below))
        })
    }

    /// Can cgroups with `cgroup.kill` be made below `dir` (a cgroup v2 directory)? Tries
    /// one (and removes it), after removing the cgroups of agents that are gone and
    /// enabling the controllers that carry limits.
    pub(super) fn usable(dir: &Path) -> bool {
        if !dir.join("cgroup.procs").is_file() {
            return false;
        }
        remove_stale(dir);
        enable_controllers(dir);
        let probe = dir.join(format!("{PREFIX}{}", super::unique_suffix()));
        if std::fs::create_dir(&probe).is_err() {
            return false;
        }
        let usable = killable(&probe);
        let _ = std::fs::remove_dir(&probe);
        usable
    }

    /// Does the cgroup at `dir` have `cgroup.kill` (Linux 5.14+) and `cgroup.procs`?
    pub(super) fn killable(dir: &Path) -> bool {
        dir.join("cgroup.kill").is_file() && dir.join("cgroup.procs").is_file()
    }

    /// `\040`-style escapes of /proc/self/mountinfo undone.
    pub(super) fn unescape(field: &str) -> String {
        let bytes = field.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\\'
                && i + 3 < bytes.len()
                && let Ok(n) = u8::from_str_radix(&field[i + 1..i + 4], 8)
            {
                out.push(n);
                i += 4;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Kill what is left in the cgroups of agents that are gone (an agent killed with
    /// SIGKILL leaves its command's background processes there) and remove them.
    pub(super) fn remove_stale(dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_str().is_some_and(super::owner_gone) {
                continue;
            }
            let path = entry.path();
            let _ = std::fs::write(path.join("cgroup.kill"), "1");
            super::remove_dir_blocking(&path, Duration::from_secs(1));
        }
    }

    /// Let the cgroups below `dir` carry `pids.max` and `memory.max` where the host
    /// offers those controllers (only adds; fails harmlessly where the cgroup holds
    /// processes and is not the root, or the controller is bound to cgroup v1).
    pub(super) fn enable_controllers(dir: &Path) {
        let offered = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
        let enabled =
            std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
        for controller in ["pids", "memory"] {
            let has = |list: &str| list.split_whitespace().any(|c| c == controller);
            if has(&offered) && !has(&enabled) {
                let _ =
                    std::fs::write(dir.join("cgroup.subtree_control"), format!("+{controller}"));
            }
        }
    }

    /// Does the cgroup at `dir` hold a live process (`cgroup.events`)?
    pub(super) fn populated(dir: &Path) -> bool {
        std::fs::read_to_string(dir.join("cgroup.events"))
            .map(|events| events.lines().any(|l| l == "populated 1"))
            .unwrap_or(false)
    }

    /// One command's cgroup: killed and removed when done (or dropped).
    pub(super) struct Cgroup {
        dir: PathBuf,
        procs: OwnedFd,
        kill: Option<OwnedFd>,
        removed: bool,
    }

    impl Cgroup {
        /// A fresh cgroup carrying what it can of `limits`; also returns the limits it
        /// could not carry (their controller is not enabled here).
        pub(super) fn create(limits: CommandLimits) -> io::Result<(Cgroup, CommandLimits)> {
            let base = base().ok_or_else(|| io::Error::other("no usable cgroup"))?;
            let dir = base.join(format!("{PREFIX}{}", super::unique_suffix()));
            std::fs::create_dir(&dir)?;
            let set = |file: &str, value: Option<std::num::NonZeroU64>| match value {
                Some(v) => std::fs::write(dir.join(file), v.to_string()).is_err(),
                None => false,
            };
            let missing = CommandLimits::unlimited()
                .with_max_processes(
                    limits
                        .max_processes()
                        .filter(|_| set("pids.max", limits.max_processes())),
                )
                .with_max_memory(
                    limits
                        .max_memory()
                        .filter(|_| set("memory.max", limits.max_memory())),
                );
            let open = |name: &str| rustix::fs::open(dir.join(name), PROCS_FLAGS, Mode::empty());
            match (open("cgroup.procs"), open("cgroup.kill")) {
                (Ok(procs), Ok(kill)) => Ok((
                    Cgroup {
                        dir,
                        procs,
                        kill: Some(kill),
                        removed: false,
                    },
                    missing,
                )),
                (Err(e), _) | (_, Err(e)) => {
                    let _ = std::fs::remove_dir(&dir);
                    disable();
                    Err(e.into())
                }
            }
        }

        /// The descriptor of `cgroup.procs`, for the child to join with.
        pub(super) fn procs_fd(&self) -> RawFd {
            self.procs.as_raw_fd()
        }

        /// Kill everything in the cgroup (once).
        pub(super) fn kill(&mut self) {
            if let Some(kill) = self.kill.take() {
                let _ = rustix::io::write(&kill, b"1");
            }
        }

        /// Wait (at most `grace`) for the killed processes to be gone, then remove the
        /// cgroup. Returns the warning for the result when it could not be removed: the
        /// kill is then not verified (as the subreaper's is).
        pub(super) async fn remove_when_empty(&mut self, grace: Duration) -> Option<String> {
            super::wait_until(grace, || !populated(&self.dir)).await;
            self.removed = std::fs::remove_dir(&self.dir).is_ok();
            (!self.removed).then(|| {
                format!(
                    "the command's cgroup could not be removed {} ms after its processes were killed; some may still be running",
                    grace.as_millis()
                )
            })
        }
    }

    impl Drop for Cgroup {
        fn drop(&mut self) {
            self.kill();
            // Killed processes leave the cgroup within milliseconds (a zombie does not
            // count): wait for that here, as the process may be about to exit (on a
            // signal) and a thread would not outlive it.
            if self.removed || super::remove_dir_blocking(&self.dir, Duration::from_secs(1)) {
                return;
            }
            // Still emptying: remove it from a thread of its own, for at most 5 s.
            let dir = Arc::new(std::mem::take(&mut self.dir));
            let _ = std::thread::Builder::new()
                .name("agent-presets-cgroup".into())
                .spawn(move || {
                    for _ in 0..500 {
                        if std::fs::remove_dir(&*dir).is_ok() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                });
        }
    }

    /// In the forked child: move this process into the cgroup (`0` means "the writer").
    pub(super) fn join(procs: RawFd) -> io::Result<()> {
        // SAFETY: write(2) reads one byte from a static buffer.
        let written = unsafe { libc::write(procs, b"0".as_ptr().cast(), 1) };
        if written == 1 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

#[cfg(target_os = "linux")]
mod v1 {
    //! Limits through a cgroup v1 hierarchy (`pids`, `memory`) this process may write, on
    //! hosts where those controllers are not available in cgroup v2 (hybrid setups).

    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    use std::time::Duration;

    use rustix::fs::Mode;

    use super::{CGROUP_PREFIX, CommandLimits, PROCS_FLAGS};

    /// One command's group in one v1 hierarchy: emptied and removed when dropped.
    pub(crate) struct Group {
        dir: PathBuf,
        procs: OwnedFd,
    }

    impl Group {
        pub(super) fn procs_fd(&self) -> RawFd {
            self.procs.as_raw_fd()
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            // Whatever is still in it belongs to the command: kill it (a safety net
            // behind the containment), then remove the group.
            kill_members(&self.dir);
            super::remove_dir_blocking(&self.dir, Duration::from_secs(1));
        }
    }

    /// The groups carrying `limits` (those a v1 hierarchy here can carry).
    pub(super) fn groups(limits: CommandLimits) -> Vec<Group> {
        let mut groups = Vec::new();
        if let Some(max) = limits.max_processes()
            && let Some(group) = create(pids_base(), "pids.max", max.get())
        {
            groups.push(group);
        }
        if let Some(max) = limits.max_memory()
            && let Some(group) = create(memory_base(), "memory.limit_in_bytes", max.get())
        {
            groups.push(group);
        }
        groups
    }

    fn pids_base() -> Option<&'static Path> {
        static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
        BASE.get_or_init(|| probe("pids")).as_deref()
    }

    fn memory_base() -> Option<&'static Path> {
        static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
        BASE.get_or_init(|| probe("memory")).as_deref()
    }

    fn create(base: Option<&Path>, file: &str, value: u64) -> Option<Group> {
        let dir = base?.join(format!("{CGROUP_PREFIX}{}", super::unique_suffix()));
        std::fs::create_dir(&dir).ok()?;
        let opened = std::fs::write(dir.join(file), value.to_string()).and_then(|()| {
            rustix::fs::open(dir.join("cgroup.procs"), PROCS_FLAGS, Mode::empty())
                .map_err(io::Error::from)
        });
        match opened {
            Ok(procs) => Some(Group { dir, procs }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// Our own group's directory in the v1 hierarchy of `controller`, if it is mounted;
    /// cleans what agents that are gone left there.
    fn probe(controller: &str) -> Option<PathBuf> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let path = own.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let _id = fields.next()?;
            let controllers = fields.next()?;
            let path = fields.next()?;
            controllers
                .split(',')
                .any(|c| c == controller)
                .then(|| path.to_owned())
        })?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let dir = mounts.lines().find_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            let mut fs = fs.split(' ');
            if fs.next()? != "cgroup" {
                return None;
            }
            let _source = fs.next()?;
            if !fs.next()?.split(',').any(|o| o == controller) {
                return None;
            }
            let fields: Vec<&str> = mount.split(' ').collect();
            let (root, point) = (*fields.get(3)?, *fields.get(4)?);
            let below = Path::new(&path).strip_prefix(root).ok()?;
            Some(Path::new(point).join(below))
        })?;
        if !dir.join("cgroup.procs").is_file() {
            return None;
        }
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                if entry.file_name().to_str().is_some_and(super::owner_gone) {
                    kill_members(&entry.path());
                    super::remove_dir_blocking(&entry.path(), Duration::from_secs(1));
                }
            }
        }
        Some(dir)
    }

    /// SIGKILL every process in the group at `dir`, until it is empty (for at most 1 s).
    fn kill_members(dir: &Path) {
        for _ in 0..1000 {
            let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
                return;
            };
            let pids: Vec<libc::pid_t> = procs.lines().filter_map(|l| l.parse().ok()).collect();
            if pids.is_empty() {
                return;
            }
            for pid in pids.into_iter().filter(|&p| p > 1) {
                // SAFETY: kill(2) only sends a signal, to a process in the command's group.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(target_os = "linux")]
mod subreaper {
    //! A supervisor per command that is a child subreaper and kills every descendant.
    //!
    //! The supervisor is the process the call spawns. Between fork and exec (in
    //! `pre_exec`) it makes itself a subreaper, forks the process that goes on to exec
    //! the command, closes every descriptor it inherited but two pipes, and waits. Only
    //! async-signal-safe system calls are made there: the agent is multi-threaded, and
    //! after `fork` another thread may have held a lock (of the allocator, say).

    use std::io::{self, Read};
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};
    use std::process::ExitStatus;

    /// The ends of the two pipes the supervisor keeps.
    #[derive(Clone, Copy)]
    pub(super) struct SupervisorFds {
        /// Read end of the lifeline: end of file means "the call is gone: kill it all".
        lifeline: RawFd,
        /// Write end of the status pipe: the command's wait status, once known.
        status: RawFd,
    }

    /// The call's side: the lifeline's write end and the status pipe's read end.
    pub(super) struct Supervised {
        lifeline: Option<OwnedFd>,
        status: OwnedFd,
        // Kept open until the supervisor is spawned; then closed in this process.
        child_ends: Option<(OwnedFd, OwnedFd)>,
    }

    impl Supervised {
        pub(super) fn prepare() -> io::Result<(Supervised, SupervisorFds)> {
            let (lifeline_r, lifeline_w) = pipe()?;
            let (status_r, status_w) = pipe()?;
            // Read only once the supervisor exited: what it wrote is there, or nothing
            // will be (never wait on it).
            rustix::io::ioctl_fionbio(&status_r, true)?;
            let fds = SupervisorFds {
                lifeline: lifeline_r.as_raw_fd(),
                status: status_w.as_raw_fd(),
            };
            Ok((
                Supervised {
                    lifeline: Some(lifeline_w),
                    status: status_r,
                    child_ends: Some((lifeline_r, status_w)),
                },
                fds,
            ))
        }

        /// The supervisor runs (`pid`): drop our copies of its ends of the pipes.
        pub(super) fn started(mut self) -> Supervised {
            self.child_ends = None;
            self
        }

        /// The command's exit status as the supervisor reported it (after the supervisor
        /// exited; the read does not block); `None` if it never did.
        pub(super) fn command_status(&mut self) -> Option<ExitStatus> {
            use std::os::unix::process::ExitStatusExt;
            let mut buf = [0u8; 4];
            let mut file = std::fs::File::from(self.status.try_clone().ok()?);
            file.read_exact(&mut buf).ok()?;
            Some(ExitStatus::from_raw(i32::from_ne_bytes(buf)))
        }

        /// Close the lifeline: the supervisor kills everything and exits.
        pub(super) fn release(&mut self) {
            self.lifeline = None;
        }
    }

    /// A pipe whose ends are close-on-exec and numbered 3 or above (so setting up the
    /// child's stdin, stdout and stderr cannot overwrite them).
    pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        let (r, w) = std::io::pipe()?;
        let high = |fd: OwnedFd| -> io::Result<OwnedFd> {
            if fd.as_raw_fd() > 2 {
                Ok(fd)
            } else {
                Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
            }
        };
        Ok((high(r.into())?, high(w.into())?))
    }

    /// Catchable signals that would end the supervisor: ignored there, so a command
    /// cannot stop it with `kill $PPID` (only SIGKILL can, which the call then reports).
    const IGNORED: [libc::c_int; 11] = [
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGPIPE,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
    ];

    /// In the forked child: become a subreaper and fork the command's process. Returns
    /// `Ok` in that process (which then executes the command); the supervisor itself
    /// never returns.
    ///
    /// The supervisor's signal handling is set up before the fork, so the command cannot
    /// signal it before it is ready; the command's process puts everything back as it was.
    pub(super) fn split(fds: SupervisorFds) -> io::Result<()> {
        // SAFETY: prctl, sigprocmask, sigaction, pipe2, fork, read and close are
        // async-signal-safe; they read and write only the stack values passed to them.
        unsafe {
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // SIGCHLD is blocked except while waiting in ppoll, so none is missed between
            // reaping and waiting.
            let mut chld: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut chld);
            libc::sigaddset(&mut chld, libc::SIGCHLD);
            let mut saved_mask: libc::sigset_t = std::mem::zeroed();
            libc::sigprocmask(libc::SIG_BLOCK, &chld, &mut saved_mask);
            let mut ignore: libc::sigaction = std::mem::zeroed();
            ignore.sa_sigaction = libc::SIG_IGN;
            libc::sigemptyset(&mut ignore.sa_mask);
            let mut saved: [libc::sigaction; IGNORED.len()] = std::mem::zeroed();
            for (signal, old) in IGNORED.iter().zip(saved.iter_mut()) {
                libc::sigaction(*signal, &ignore, old);
            }
            let mut on_chld: libc::sigaction = std::mem::zeroed();
            on_chld.sa_sigaction = on_child as extern "C" fn(libc::c_int) as usize;
            on_chld.sa_flags = libc::SA_NOCLDSTOP;
            libc::sigemptyset(&mut on_chld.sa_mask);
            let mut saved_chld: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGCHLD, &on_chld, &mut saved_chld);

            // The command's process waits (EOF on this pipe) until the supervisor has
            // closed every descriptor it inherited, among them the channel on which the
            // agent's `spawn` waits for the exec: a command that stops its supervisor
            // (`kill -STOP $PPID`) before that would block the agent inside `spawn`.
            let mut sync: [libc::c_int; 2] = [-1; 2];
            if libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(io::Error::last_os_error());
            }
            let pid = libc::fork();
            if pid < 0 {
                let error = io::Error::last_os_error();
                libc::close(sync[0]);
                libc::close(sync[1]);
                return Err(error);
            }
            if pid == 0 {
                libc::close(sync[1]);
                wait_for_eof(sync[0]);
                libc::close(sync[0]);
                // The command's process: the signal handling it would have had, and death
                // with the supervisor.
                for (signal, old) in IGNORED.iter().zip(saved.iter()) {
                    libc::sigaction(*signal, old, std::ptr::null_mut());
                }
                libc::sigaction(libc::SIGCHLD, &saved_chld, std::ptr::null_mut());
                libc::sigprocmask(libc::SIG_SETMASK, &saved_mask, std::ptr::null_mut());
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                return Ok(());
            }
            let mut waiting = saved_mask;
            libc::sigdelset(&mut waiting, libc::SIGCHLD);
            supervise(pid, fds, &waiting)
        }
    }

    extern "C" fn on_child(_: libc::c_int) {}

    /// Block until end of file on `fd` (every write end closed), through interruptions
    /// by signals. Only system calls: for a freshly forked child.
    pub(super) fn wait_for_eof(fd: RawFd) {
        let mut byte = 0u8;
        // SAFETY: read(2) into a byte on our stack.
        while unsafe { libc::read(fd, (&raw mut byte).cast(), 1) } < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }

    /// The supervisor: wait for the command or the end of the lifeline, kill every
    /// descendant, report the command's status, exit. `waiting` is the signal mask while
    /// waiting (SIGCHLD unblocked).
    ///
    /// SAFETY (for callers): to be called only in a freshly forked child of a
    /// multi-threaded process, with SIGCHLD blocked and handled; it uses
    /// async-signal-safe system calls only.
    unsafe fn supervise(command: libc::pid_t, fds: SupervisorFds, waiting: &libc::sigset_t) -> ! {
        // SAFETY: every call below is a plain system call on values owned by this
        // function (stack buffers, descriptors it keeps), as the caller requires.
        unsafe {
            close_all_but(fds.lifeline, fds.status);
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            for fd in 0..3 {
                if null >= 0 {
                    libc::dup2(null, fd);
                } else {
                    libc::close(fd);
                }
            }
            if null > 2 {
                libc::close(null);
            }
            let mut status: Option<libc::c_int> = None;
            loop {
                reap(command, &mut status);
                if status.is_some() {
                    break;
                }
                let mut poll = libc::pollfd {
                    fd: fds.lifeline,
                    events: libc::POLLIN,
                    revents: 0,
                };
                let ready = libc::ppoll(&mut poll, 1, std::ptr::null(), waiting);
                if ready > 0 && poll.revents != 0 {
                    // The call is gone (timeout, dropped, or the agent died).
                    break;
                }
            }
            kill_descendants(command, &mut status);
            if let Some(status) = status {
                let bytes = status.to_ne_bytes();
                libc::write(fds.status, bytes.as_ptr().cast(), bytes.len());
            }
            libc::_exit(0)
        }
    }

    /// Reap every child that has ended; remember the command's status.
    unsafe fn reap(command: libc::pid_t, status: &mut Option<libc::c_int>) -> bool {
        loop {
            let mut st: libc::c_int = 0;
            // SAFETY: waitpid(2) writes the status into our stack variable.
            let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if pid > 0 {
                if pid == command && status.is_none() {
                    *status = Some(st);
                }
                continue;
            }
            // `false`: no children are left at all.
            return pid == 0;
        }
    }

    /// Kill every process below the supervisor: its children, then (as they die and
    /// their own children are re-parented to the subreaper) theirs, until none is left.
    unsafe fn kill_descendants(command: libc::pid_t, status: &mut Option<libc::c_int>) {
        // SAFETY: getpid(2) has no preconditions.
        let me = unsafe { libc::getpid() };
        for _ in 0..100_000 {
            // SAFETY: see `kill_children`.
            unsafe { kill_children(me) };
            // SAFETY: see `reap`.
            if !unsafe { reap(command, status) } {
                return;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000,
            };
            // SAFETY: nanosleep(2) reads our timespec.
            unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
        }
    }

    /// SIGKILL every process whose parent is `parent`, found by scanning `/proc` with
    /// fixed buffers.
    unsafe fn kill_children(parent: libc::pid_t) {
        // SAFETY: open/getdents64/close on a descriptor we own, into our stack buffer.
        unsafe {
            let proc_dir = libc::open(
                c"/proc".as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if proc_dir < 0 {
                return;
            }
            let mut buf = [0u64; 1024];
            loop {
                let n = libc::syscall(
                    libc::SYS_getdents64,
                    proc_dir,
                    buf.as_mut_ptr(),
                    std::mem::size_of_val(&buf),
                );
                if n <= 0 {
                    break;
                }
                let bytes = std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize);
                let mut at = 0usize;
                while at + 19 < bytes.len() {
                    // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
                    let reclen = usize::from(u16::from_ne_bytes([bytes[at + 16], bytes[at + 17]]));
                    if reclen == 0 {
                        break;
                    }
                    let name = &bytes[at + 19..(at + reclen).min(bytes.len())];
                    if let Some(pid) = parse_pid(name)
                        && parent_of(pid) == Some(parent)
                    {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    at += reclen;
                }
            }
            libc::close(proc_dir);
        }
    }

    /// The number a `/proc` entry name (NUL-terminated) spells, if it is one.
    pub(super) fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
        let mut pid: libc::pid_t = 0;
        let mut digits = 0;
        for &b in name {
            match b {
                0 => break,
                b'0'..=b'9' => {
                    pid = pid
                        .checked_mul(10)?
                        .checked_add(libc::pid_t::from(b - b'0'))?;
                    digits += 1;
                }
                _ => return None,
            }
        }
        (digits > 0).then_some(pid)
    }

    /// The parent of `pid`, from `/proc/<pid>/stat` (`pid (comm) state ppid …`).
    unsafe fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
        let mut path = [0u8; 32];
        let mut len = 0;
        for &b in b"/proc/" {
            path[len] = b;
            len += 1;
        }
        let mut digits = [0u8; 12];
        let mut n = pid;
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for i in (0..count).rev() {
            path[len] = digits[i];
            len += 1;
        }
        for &b in b"/stat\0" {
            path[len] = b;
            len += 1;
        }
        let mut stat = [0u8; 512];
        // SAFETY: the path is NUL-terminated in our buffer; we read into our buffer.
        let read = unsafe {
            let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return None;
            }
            let read = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
            libc::close(fd);
            read
        };
        let stat = stat.get(..usize::try_from(read).ok()?)?;
        // The command name may hold spaces and `)`: the state follows the last `)`.
        let close = stat.iter().rposition(|&b| b == b')')?;
        let mut fields = stat[close + 1..]
            .split(|&b| b == b' ')
            .filter(|f| !f.is_empty());
        let _state = fields.next()?;
        parse_pid(fields.next()?)
    }

    /// Close every descriptor but `a` and `b` (both 3 or above).
    unsafe fn close_all_but(a: RawFd, b: RawFd) {
        let (low, high) = if a < b { (a, b) } else { (b, a) };
        let ranges = [(3, low - 1), (low + 1, high - 1), (high + 1, RawFd::MAX)];
        for (first, last) in ranges {
            if first > last {
                continue;
            }
            // SAFETY: close_range(2) only closes descriptors.
            let done = unsafe {
                libc::syscall(
                    libc::SYS_close_range,
                    first as libc::c_uint,
                    last as libc::c_uint,
                    0 as libc::c_uint,
                )
            } == 0;
            if !done {
                // Before Linux 5.9: one at a time, up to a sane bound.
                let end = last.min(65_535);
                for fd in first..=end {
                    // SAFETY: close(2) of a descriptor that may not be open is harmless.
                    unsafe { libc::close(fd) };
                }
            }
        }
    }

    /// From the agent, without counting on the supervisor (a command may have stopped
    /// it): SIGKILL every descendant of `root` (the supervisor, our unreaped child, so
    /// its pid is ours), found by walking `/proc`, until a scan finds none alive; then
    /// the caller kills `root` itself. A process that got SIGKILL cannot fork any more,
    /// and an orphan of the tree is re-parented to `root` (a subreaper, stopped or not),
    /// so the walk sees everything that is left. Returns the descendants still alive
    /// after a bounded number of rounds (empty: verified none is left).
    pub(super) fn kill_tree(root: u32) -> Vec<libc::pid_t> {
        let Ok(root) = libc::pid_t::try_from(root) else {
            return Vec::new();
        };
        for _ in 0..2000 {
            let alive = live_descendants(root);
            if alive.is_empty() {
                return alive;
            }
            for &pid in &alive {
                // SAFETY: kill(2) only sends a signal, to a descendant of our supervisor.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        live_descendants(root)
    }

    /// The descendants of `root` that are not zombies.
    pub(super) fn live_descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        // (pid, parent, alive)
        let table: Vec<(libc::pid_t, libc::pid_t, bool)> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .filter_map(|pid| {
                let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
                let close = stat.iter().rposition(|&b| b == b')')?;
                let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
                let mut fields = rest.split_whitespace();
                let state = fields.next()?;
                let parent = fields.next()?.parse().ok()?;
                Some((pid, parent, !matches!(state, "Z" | "X")))
            })
            .collect();
        let mut tree = vec![root];
        let mut at = 0;
        while at < tree.len() {
            let parent = tree[at];
            tree.extend(
                table
                    .iter()
                    .filter(|&&(pid, ppid, _)| ppid == parent && !tree.contains(&pid))
                    .map(|&(pid, _, _)| pid)
                    .collect::<Vec<_>>(),
            );
            at += 1;
        }
        tree.into_iter()
            .skip(1)
            .filter(|pid| table.iter().any(|&(p, _, alive)| p == *pid && alive))
            .collect()
    }

    /// What the result says when [`kill_tree`] could not verify the tree is gone.
    pub(super) fn survivors(left: &[libc::pid_t]) -> String {
        let pids: Vec<String> = left.iter().map(ToString::to_string).collect();
        format!(
            "{} process{} the command started could not be killed and may still be running (pid {})",
            left.len(),
            if left.len() == 1 { "" } else { "es" },
            pids.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containments_parse_from_their_names() {
        for c in [
            Containment::Cgroup,
            Containment::Subreaper,
            Containment::ProcessGroup,
        ] {
            assert_eq!(c.as_str().parse::<Containment>(), Ok(c));
        }
        let err = "chroot".parse::<Containment>().unwrap_err();
        assert!(err.contains("unknown containment `chroot`"), "{err}");
    }

    #[test]
    fn default_limits_are_generous_and_unlimited_is_none() {
        let limits = CommandLimits::default();
        assert_eq!(
            limits.max_processes().map(NonZeroU64::get),
            Some(CommandLimits::DEFAULT_MAX_PROCESSES)
        );
        // Half the memory of any machine that builds this crate: more than 256 MiB.
        assert!(limits.max_memory().is_some_and(|m| m.get() > 256 << 20));
        let none = CommandLimits::unlimited();
        assert_eq!((none.max_processes(), none.max_memory()), (None, None));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_cgroup_of_our_own_pid_counts_as_left_over_while_probing() {
        assert!(owner_gone(&format!(
            "{CGROUP_PREFIX}{}-0",
            std::process::id()
        )));
        assert!(!owner_gone(&format!("{CGROUP_PREFIX}1-0")));
        assert!(!owner_gone("user.slice"));
    }

    #[test]
    fn each_containment_names_itself_and_its_kill_and_falls_back_to_a_weaker_one() {
        use Containment::*;
        let all = [Cgroup, Subreaper, ProcessGroup];
        let shown: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["cgroup", "subreaper", "process-group"]);
        assert_eq!(
            all.map(Containment::killed_by),
            [
                "through their cgroup",
                "by the command's subreaper supervisor",
                "with the command's process group",
            ]
        );
        assert_eq!(
            all.map(Containment::tracks_every_descendant),
            [true, true, false]
        );
        assert_eq!(
            all.map(Containment::weaker),
            [Some(Subreaper), Some(ProcessGroup), None]
        );
        assert!(ProcessGroup.possible());
        #[cfg(target_os = "linux")]
        {
            assert!(Subreaper.possible());
            assert_eq!(Cgroup.possible(), cgroup::available());
            assert_eq!(
                Containment::best_available(),
                if cgroup::available() {
                    Cgroup
                } else {
                    Subreaper
                }
            );
        }
    }

    #[test]
    fn limits_are_set_one_by_one() {
        let five = NonZeroU64::new(5);
        let gib = NonZeroU64::new(1 << 30);
        let limits = CommandLimits::unlimited()
            .with_max_processes(five)
            .with_max_memory(gib);
        assert_eq!((limits.max_processes(), limits.max_memory()), (five, gib));
        let lifted = limits.with_max_processes(None);
        assert_eq!((lifted.max_processes(), lifted.max_memory()), (None, gib));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_default_memory_limit_is_half_of_what_the_kernel_reports() {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let half = half_of_physical_memory().unwrap().get();
        let total = kib * 1024;
        // sysconf's page count and MemTotal are the same figure, give or take rounding.
        assert!(
            half * 2 >= total - total / 100 && half * 2 <= total + total / 100,
            "half {half} of {total}"
        );
    }

    #[test]
    fn exit_statuses_are_described_by_code_or_signal() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(describe(ExitStatus::from_raw(0)), "exit code: 0");
        assert_eq!(describe(ExitStatus::from_raw(3 << 8)), "exit code: 3");
        assert_eq!(describe(ExitStatus::from_raw(9)), "killed by signal 9");
    }

    #[test]
    fn cgroup_names_are_unique_and_carry_our_pid() {
        let (a, b) = (unique_suffix(), unique_suffix());
        assert_ne!(a, b);
        for s in [&a, &b] {
            let (pid, n) = s.split_once('-').unwrap();
            assert_eq!(pid, std::process::id().to_string());
            assert!(n.parse::<u64>().is_ok(), "{s}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_cgroup_is_left_over_only_when_its_owner_is_gone() {
        let sleep = || {
            std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap()
        };
        let (mut live, mut dead) = (sleep(), sleep());
        let name = |child: &std::process::Child| format!("{CGROUP_PREFIX}{}-3", child.id());
        dead.kill().unwrap();
        dead.wait().unwrap();
        // Reaped: the pid is free (a new process taking it this instant is unlikely).
        assert!(owner_gone(&name(&dead)), "a gone owner");
        // Right after a lookup that failed with ESRCH (errno still says so), a live
        // owner is still live: the answer is kill(2)'s, not a stale errno's.
        assert!(!owner_gone(&name(&live)), "a live owner");
        assert!(!owner_gone(&format!("{CGROUP_PREFIX}0-1")));
        assert!(!owner_gone(&format!("{CGROUP_PREFIX}x-1")));
        live.kill().unwrap();
        live.wait().unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_is_removed_once_empty_or_given_up_on_after_the_wait() {
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(remove_dir_blocking(&empty, Duration::from_secs(5)));
        assert!(!empty.exists());
        assert!(remove_dir_blocking(&empty, Duration::ZERO), "already gone");
        let full = tmp.path().join("full");
        std::fs::create_dir(&full).unwrap();
        std::fs::write(full.join("f"), "x").unwrap();
        let start = std::time::Instant::now();
        assert!(!remove_dir_blocking(&full, Duration::from_millis(50)));
        assert!(start.elapsed() >= Duration::from_millis(50));
        assert!(full.exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mountinfo_escapes_are_undone_and_nothing_else_changes() {
        use super::cgroup::unescape;
        assert_eq!(unescape("/sys/fs/cgroup"), "/sys/fs/cgroup");
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/tab\\011x\\134y"), "/tab\tx\\y");
        assert_eq!(unescape("/a\\040"), "/a ", "an escape at the very end");
        // Not escapes: cut short at the end, not octal, digits without a backslash.
        assert_eq!(unescape("/ab\\04"), "/ab\\04");
        assert_eq!(unescape("x\\04"), "x\\04");
        assert_eq!(unescape("/a\\9zz"), "/a\\9zz");
        assert_eq!(unescape("a123"), "a123");
        assert_eq!(unescape(""), "");
    }

    #[test]
    fn containments_are_tried_from_the_wanted_one_down_until_one_starts() {
        use Containment::*;
        let fail = |c: Containment| io::Error::other(format!("{c} failed"));
        let mut tried = Vec::new();
        // The cgroup fails: the subreaper starts the command.
        let started = first_that_starts(
            Cgroup,
            |_| true,
            |c| {
                tried.push(c);
                if c == Cgroup { Err(fail(c)) } else { Ok(c) }
            },
        );
        assert_eq!(started.unwrap(), Subreaper);
        assert_eq!(tried, [Cgroup, Subreaper]);
        // One that is not possible here is not tried; none stronger than the one wanted is.
        tried.clear();
        let started = first_that_starts(
            Cgroup,
            |c| c != Cgroup,
            |c| {
                tried.push(c);
                Ok(c)
            },
        );
        assert_eq!(started.unwrap(), Subreaper);
        let started = first_that_starts(
            ProcessGroup,
            |_| true,
            |c| {
                tried.push(c);
                Ok(c)
            },
        );
        assert_eq!(started.unwrap(), ProcessGroup);
        assert_eq!(tried, [Subreaper, ProcessGroup]);
        // Every one fails: the command cannot start, and the weakest one says why.
        tried.clear();
        let err = first_that_starts(
            Cgroup,
            |_| true,
            |c| {
                tried.push(c);
                Err::<(), _>(fail(c))
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "process-group failed");
        assert_eq!(tried, [Cgroup, Subreaper, ProcessGroup]);
        let err =
            first_that_starts(Cgroup, |c| c == Cgroup, |c| Err::<(), _>(fail(c))).unwrap_err();
        assert_eq!(err.to_string(), "no way to run a command here");
    }

    /// This host's cgroup v2 directory for this process, if a cgroup with `cgroup.kill`
    /// can be made below it: found here without the code under test.
    #[cfg(target_os = "linux")]
    fn host_cgroup_dir() -> Option<std::path::PathBuf> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let dir = mounts.lines().find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let dash = fields.iter().position(|&f| f == "-")?;
            (fields.get(dash + 1) == Some(&"cgroup2")).then_some(())?;
            let below = path.strip_prefix(fields[3]).unwrap_or(path);
            Some(std::path::Path::new(fields[4]).join(below.trim_start_matches('/')))
        })?;
        // Not `agent-presets-<pid>-<n>`: no clean-up of dead agents' cgroups takes it.
        static N: AtomicU64 = AtomicU64::new(0);
        let child = dir.join(format!(
            "agent-presets-check-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&child).ok()?;
        let kill = child.join("cgroup.kill").is_file();
        std::fs::remove_dir(&child).unwrap();
        kill.then_some(dir)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn our_cgroup_directory_is_below_the_cgroup2_mount_that_holds_it() {
        use super::cgroup::own_dir;
        let dir = |own: &str, mounts: &str| own_dir(own, mounts).map(|d| d.display().to_string());
        // A hybrid host: cgroup v1 controllers, and cgroup2 at `unified`, listed after
        // mounts whose root holds the path too.
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                      35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            dir("4:memory:/process_api/x\n1:cpu:/\n0::/\n", hybrid).as_deref(),
            Some("/sys/fs/cgroup/unified/")
        );
        // cgroup v2 only, a nested cgroup.
        let unified = "25 22 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            dir("0::/user.slice/session-2.scope\n", unified).as_deref(),
            Some("/sys/fs/cgroup/user.slice/session-2.scope")
        );
        // A mount of another subtree is passed over; the mount point's escapes are undone;
        // lines cut short or without the separator are skipped.
        let mounts = "50 1 0:23 /other /mnt/other rw - cgroup2 cgroup2 rw\n\
                      51 1 0:23 / /mnt/no-separator rw cgroup2 cgroup2 rw\n\
                      52 1 0:23 / - cgroup2 cgroup2 rw\n\
                      53 1 0:23 /user.slice /mnt/c\\040g rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            dir("0::/user.slice/app\n", mounts).as_deref(),
            Some("/mnt/c g/app")
        );
        // No cgroup v2 path, or no cgroup2 mount that holds it.
        assert_eq!(dir("1:cpu:/\n", unified), None);
        assert_eq!(
            dir(
                "0::/x\n",
                "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
            ),
            None
        );
        assert_eq!(
            dir(
                "0::/x\n",
                "50 1 0:23 /other /mnt/other rw - cgroup2 cgroup2 rw\n"
            ),
            None
        );
        // This host's own files give the directory found without the code under test.
        if let Some(host) = host_cgroup_dir() {
            let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
            assert_eq!(own_dir(&own, &mounts), Some(host));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_cgroup_is_usable_only_where_a_child_with_cgroup_kill_can_be_made() {
        use super::cgroup::{killable, usable};
        let tmp = tempfile::tempdir().unwrap();
        let names = |dir: &std::path::Path| {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        // Only both files make a cgroup that can be killed.
        let d = tmp.path();
        assert!(!killable(d));
        std::fs::write(d.join("cgroup.kill"), "").unwrap();
        assert!(!killable(d), "cgroup.kill alone");
        std::fs::write(d.join("cgroup.procs"), "").unwrap();
        assert!(killable(d));
        std::fs::remove_file(d.join("cgroup.kill")).unwrap();
        assert!(!killable(d), "cgroup.procs alone");
        // A directory with cgroup.procs whose children are plain directories: not usable,
        // and the child tried is removed.
        assert!(!usable(d));
        assert_eq!(names(d), ["cgroup.procs"]);
        // Not a cgroup at all: nothing is tried or cleaned there (a dead agent's name stays).
        let plain = tempfile::tempdir().unwrap();
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        let stale = format!("{CGROUP_PREFIX}{}-0", dead.id());
        std::fs::create_dir(plain.path().join(&stale)).unwrap();
        assert!(!usable(plain.path()));
        assert_eq!(names(plain.path()), [stale.as_str()]);
        assert_eq!(names(&plain.path().join(&stale)), Vec::<String>::new());
        // Where the host gives cgroups, our own directory is usable.
        if let Some(host) = host_cgroup_dir() {
            assert!(usable(&host));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_cgroups_of_agents_that_are_gone_are_killed_and_no_other() {
        use super::cgroup::remove_stale;
        let tmp = tempfile::tempdir().unwrap();
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        let stale = tmp.path().join(format!("{CGROUP_PREFIX}{}-0", dead.id()));
        let live = tmp.path().join(format!(
            "{CGROUP_PREFIX}{}-0",
            std::os::unix::process::parent_id()
        ));
        let other = tmp.path().join("user.slice");
        for dir in [&stale, &live, &other] {
            std::fs::create_dir(dir).unwrap();
        }
        remove_stale(tmp.path());
        // `1` written to the dead agent's `cgroup.kill` (here a plain directory, which then
        // is not empty and stays).
        assert_eq!(
            std::fs::read_to_string(stale.join("cgroup.kill"))
                .ok()
                .as_deref(),
            Some("1")
        );
        assert!(!live.join("cgroup.kill").exists(), "a live agent's cgroup");
        assert!(!other.join("cgroup.kill").exists(), "not ours");
        remove_stale(&tmp.path().join("missing"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_limit_controllers_are_enabled_where_offered_and_not_yet_enabled() {
        use super::cgroup::enable_controllers;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let after = |offered: &str, enabled: &str| {
            std::fs::write(d.join("cgroup.controllers"), offered).unwrap();
            std::fs::write(d.join("cgroup.subtree_control"), enabled).unwrap();
            enable_controllers(d);
            // A plain file keeps only the last write (a cgroup's adds them up).
            std::fs::read_to_string(d.join("cgroup.subtree_control")).unwrap()
        };
        assert_eq!(after("cpu io memory pids\n", "memory\n"), "+pids");
        assert_eq!(after("cpu pids memory\n", "pids\n"), "+memory");
        assert_eq!(after("cpu io\n", "cpu\n"), "cpu\n", "neither offered");
        assert_eq!(after("pids memory\n", "memory pids\n"), "memory pids\n");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_wait_ends_as_soon_as_it_is_done_or_at_its_deadline() {
        use std::time::Instant;
        let mut asked = 0;
        let start = Instant::now();
        let done = wait_until(Duration::from_secs(10), || {
            asked += 1;
            asked == 3
        })
        .await;
        assert!(done);
        assert_eq!(asked, 3, "asked until done, then no more");
        assert!(start.elapsed() < Duration::from_secs(10));
        let mut asked = 0;
        let start = Instant::now();
        let done = wait_until(Duration::from_millis(50), || {
            asked += 1;
            false
        })
        .await;
        assert!(!done);
        assert!(start.elapsed() >= Duration::from_millis(50));
        assert!(asked >= 2, "asked again while waiting: {asked}");
        assert!(wait_until(Duration::ZERO, || true).await, "done at once");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_cgroup_is_populated_while_its_events_say_so() {
        use super::cgroup::populated;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        assert!(!populated(d), "no cgroup.events");
        for (events, expected) in [
            ("populated 1\nfrozen 0\n", true),
            ("frozen 0\npopulated 1\n", true),
            ("populated 0\nfrozen 0\n", false),
        ] {
            std::fs::write(d.join("cgroup.events"), events).unwrap();
            assert_eq!(populated(d), expected, "{events}");
        }
    }

    /// Wait (at most 10 s) for the forked `child` to exit; its exit code, or `None` when
    /// it had to be killed.
    #[cfg(target_os = "linux")]
    fn exit_code_of(child: libc::pid_t) -> Option<i32> {
        let mut status = 0;
        for _ in 0..1000 {
            // SAFETY: waitpid(2) on our own child, into our stack variable.
            if unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) } == child {
                return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: kill(2) and waitpid(2) of our own child, which hangs.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, &mut status, 0);
        }
        None
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn pipe_ends_are_never_numbered_as_stdin_stdout_or_stderr() {
        use std::os::fd::AsRawFd;
        // In a forked child with stdin and stderr closed, 0 and 2 are the lowest free
        // numbers: a pipe gets them. (Only system calls there: this process has threads.)
        // SAFETY: the child calls close, pipe2, fcntl and _exit, and allocates nothing.
        let child = unsafe { libc::fork() };
        assert!(child >= 0);
        if child == 0 {
            // SAFETY: see above.
            unsafe {
                libc::close(0);
                libc::close(2);
                let code = match super::subreaper::pipe() {
                    Ok((r, w)) if r.as_raw_fd() > 2 && w.as_raw_fd() > 2 => 0,
                    Ok(_) => 1,
                    Err(_) => 2,
                };
                libc::_exit(code);
            }
        }
        assert_eq!(exit_code_of(child), Some(0));
    }

    #[cfg(target_os = "linux")]
    extern "C" fn on_alarm(_: libc::c_int) {}

    #[cfg(target_os = "linux")]
    #[test]
    fn the_wait_for_end_of_file_goes_on_through_a_signal() {
        use super::subreaper::wait_for_eof;
        // In a forked child: a SIGALRM handler without SA_RESTART interrupts the read at
        // 50 ms; a grandchild holds the pipe's write end until 300 ms.
        let mut fds = [-1; 2];
        // SAFETY: pipe2(2) into our array; fork(2), after which the child makes only
        // system calls and allocates nothing.
        let child = unsafe {
            assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
            libc::fork()
        };
        assert!(child >= 0);
        if child == 0 {
            // SAFETY: see above.
            unsafe {
                let holder = libc::fork();
                if holder == 0 {
                    libc::close(fds[0]);
                    let hold = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 300_000_000,
                    };
                    libc::nanosleep(&hold, std::ptr::null_mut());
                    libc::_exit(0);
                }
                libc::close(fds[1]);
                let mut alarm: libc::sigaction = std::mem::zeroed();
                alarm.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut alarm.sa_mask);
                libc::sigaction(libc::SIGALRM, &alarm, std::ptr::null_mut());
                let timer = libc::itimerval {
                    it_interval: libc::timeval {
                        tv_sec: 0,
                        tv_usec: 0,
                    },
                    it_value: libc::timeval {
                        tv_sec: 0,
                        tv_usec: 50_000,
                    },
                };
                let now = || {
                    let mut t: libc::timespec = std::mem::zeroed();
                    libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
                    t.tv_sec * 1000 + t.tv_nsec / 1_000_000
                };
                let start = now();
                libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut());
                wait_for_eof(fds[0]);
                let waited = now() - start;
                libc::waitpid(holder, std::ptr::null_mut(), 0);
                libc::_exit(if waited >= 250 { 0 } else { 1 });
            }
        }
        // SAFETY: our copies of the pipe's ends, which the child has its own of.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        assert_eq!(exit_code_of(child), Some(0));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_entry_names_are_pids_only_when_all_digits() {
        use super::subreaper::parse_pid;
        assert_eq!(parse_pid(b"1234\0"), Some(1234));
        assert_eq!(parse_pid(b"1234"), Some(1234));
        assert_eq!(parse_pid(b"7\0junk"), Some(7));
        assert_eq!(parse_pid(b"\0"), None);
        assert_eq!(parse_pid(b""), None);
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"12a\0"), None);
        assert_eq!(parse_pid(b"99999999999\0"), None, "overflows a pid");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn survivors_are_counted_and_named() {
        use super::subreaper::survivors;
        assert_eq!(
            survivors(&[42]),
            "1 process the command started could not be killed and may still be running (pid 42)"
        );
        assert_eq!(
            survivors(&[42, 43]),
            "2 processes the command started could not be killed and may still be running (pid 42, 43)"
        );
    }

    /// `/proc/<pid>/stat`'s state letter.
    #[cfg(target_os = "linux")]
    fn state_of(pid: libc::pid_t) -> Option<String> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        Some(rest.split_whitespace().next()?.to_owned())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_tree_walk_finds_live_descendants_skips_zombies_and_kills_them() {
        use super::subreaper::{kill_tree, live_descendants};
        // A root whose children are one live `sleep` and one zombie (the root execs a
        // program that never reaps).
        let mut root = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & (exit 0) & exec sleep 30"])
            .spawn()
            .unwrap();
        let pid = libc::pid_t::try_from(root.id()).unwrap();
        // Its children, from every process's `stat` (`pid (comm) state ppid …`).
        let children = |pid: libc::pid_t| -> Vec<libc::pid_t> {
            let mut kids: Vec<libc::pid_t> = std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .filter(|&p: &libc::pid_t| {
                    std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|stat| {
                        stat.rfind(')').is_some_and(|close| {
                            stat[close + 1..].split_whitespace().nth(1)
                                == Some(pid.to_string().as_str())
                        })
                    })
                })
                .collect();
            kids.sort_unstable();
            kids
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let (live, zombie) = loop {
            let kids = children(pid);
            let states: Vec<Option<String>> = kids.iter().map(|&k| state_of(k)).collect();
            let zombie = kids
                .iter()
                .zip(&states)
                .find(|(_, s)| s.as_deref() == Some("Z"))
                .map(|(k, _)| *k);
            let live = kids
                .iter()
                .zip(&states)
                .find(|(_, s)| s.as_deref().is_some_and(|s| s != "Z"))
                .map(|(k, _)| *k);
            if let (Some(l), Some(z), 2) = (live, zombie, kids.len()) {
                break (l, z);
            }
            assert!(std::time::Instant::now() < deadline, "{kids:?} {states:?}");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_ne!(live, zombie);
        assert_eq!(live_descendants(pid), [live]);
        assert_eq!(kill_tree(root.id()), Vec::<libc::pid_t>::new());
        assert!(
            state_of(live).is_none_or(|s| s == "Z"),
            "the live child was killed"
        );
        assert_eq!(
            state_of(pid).as_deref().map(|s| s != "Z"),
            Some(true),
            "not the root"
        );
        root.kill().unwrap();
        root.wait().unwrap();
    }
}

//! [`Containment`]: how a program the agent runs (a `bash` command, a command tool, a stdio
//! MCP server) is kept from outliving its call — background jobs, jobs started under `set -m`, `setsid`, `nohup` and
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
//!   future is dropped and `Contained`'s drop kills everything, as on a timeout, before
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

use crate::process::sandbox::PreparedSandbox;

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
pub mod orphans;
mod process_group;
#[cfg(target_os = "linux")]
mod subreaper;
#[cfg(target_os = "linux")]
mod v1;

use process_group::ProcessGroup;

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
    /// The spawned process's pid (kept: `child.id()` is gone once it is reaped).
    #[cfg(target_os = "linux")]
    pid: Option<u32>,
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
    // Registered as ours before an end of call elsewhere can take it for an orphan.
    #[cfg(target_os = "linux")]
    let mut spawned = orphans::SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
    #[allow(unused_mut)]
    let mut contained = first_that_starts(wanted, Containment::possible, |containment| {
        try_spawn(build, containment, limits, sandbox, &refused)
    })?;
    #[cfg(target_os = "linux")]
    {
        contained.pid = contained.child.id();
        if let Some(pid) = contained.pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
            spawned.push(pid);
        }
        drop(spawned);
    }
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

/// Make the child start its own session (`setsid`) before it executes the program (under
/// the subreaper: before the supervisor forks the command, which then shares the
/// supervisor's new session and process group). It has no controlling terminal: it cannot
/// open `/dev/tty`, read what the user types, or take the user's terminal with
/// `TIOCSCTTY`, and no signal from the terminal (Ctrl-C, SIGHUP, SIGTTIN) reaches it. Its
/// process group, numbered as its pid, is what the process-group containment kills.
///
/// Every descriptor but standard input, output and error is also marked close-on-exec:
/// one the agent inherited without the flag (a terminal its own parent left open as
/// descriptor 3) does not reach the program.
fn own_session(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec; setsid(2), close_range(2)
    // and fcntl(2) are async-signal-safe system calls that touch no memory of ours.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            close_on_exec_from(3);
            Ok(())
        });
    }
}

/// Mark every descriptor from `first` on close-on-exec (only system calls: for a forked
/// child).
fn close_on_exec_from(first: libc::c_int) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only sets descriptor flags.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        } == 0;
        if done {
            return;
        }
    }
    // Before Linux 5.11, or elsewhere: one at a time, up to a sane bound.
    for fd in first..4096 {
        // SAFETY: fcntl(2) on a descriptor that may not be open fails harmlessly.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
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
    // Its own session in every case: no terminal of the agent's, and its process group is
    // the last resort.
    own_session(&mut command);
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
                    pid: None,
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
                pid: None,
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
                #[cfg(target_os = "linux")]
                pid: None,
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
    pub(crate) warning: Option<ContainmentWarning>,
}

/// What went wrong with a containment: processes the command started may have survived.
/// The caller words it (in the model's language: `tools.containment.*`); `Display` is
/// the English.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ContainmentWarning {
    /// The subreaper supervisor was itself killed (how it ended).
    SupervisorDied(ExitStatus),
    /// These processes could not be killed.
    Survivors(Vec<i32>),
    /// The cgroup was still populated this long after the kill.
    CgroupLeft(Duration),
}

impl std::fmt::Display for ContainmentWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContainmentWarning::SupervisorDied(status) => write!(
                f,
                "the supervisor of the command ended unexpectedly ({}); processes the command started may still be running",
                describe(*status)
            ),
            ContainmentWarning::Survivors(left) => {
                let pids: Vec<String> = left.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "{} process{} the command started could not be killed and may still be running (pid {})",
                    left.len(),
                    if left.len() == 1 { "" } else { "es" },
                    pids.join(", ")
                )
            }
            ContainmentWarning::CgroupLeft(grace) => write!(
                f,
                "the command's cgroup could not be removed {} ms after its processes were killed; some may still be running",
                grace.as_millis()
            ),
        }
    }
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
                                warning: Some(ContainmentWarning::SupervisorDied(own)),
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
                                    warning: Some(ContainmentWarning::Survivors(left)),
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
        #[cfg(target_os = "linux")]
        {
            orphans::forget(self.pid);
            orphans::reap();
        }
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
    crate::process::sandbox::process_gone(pid)
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

#[cfg(test)]
mod tests;

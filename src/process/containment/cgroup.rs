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
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    for controller in ["pids", "memory"] {
        let has = |list: &str| list.split_whitespace().any(|c| c == controller);
        if has(&offered) && !has(&enabled) {
            let _ = std::fs::write(dir.join("cgroup.subtree_control"), format!("+{controller}"));
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
    pub(super) async fn remove_when_empty(
        &mut self,
        grace: Duration,
    ) -> Option<super::ContainmentWarning> {
        super::wait_until(grace, || !populated(&self.dir)).await;
        self.removed = std::fs::remove_dir(&self.dir).is_ok();
        (!self.removed).then_some(super::ContainmentWarning::CgroupLeft(grace))
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

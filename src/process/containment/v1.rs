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

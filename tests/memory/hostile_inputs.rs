//! The attacks of issue 9 on reading presets and reporting on them, through the built
//! binary: a 100 MB preset, a sparse 1.5 GB file, a committed link to
//! `/proc/self/pagemap`, FIFOs, 90,000 unknown keys. Each must finish (a watchdog kills
//! a run that hangs, failing the test), with the secure outcome, and with a small peak
//! memory, read from the kernel's accounting of the child (`wait4`). No timing is
//! asserted; `cargo run --release` figures are in docs/security.md.
#![cfg(all(feature = "cli", target_os = "linux"))]

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

/// A run that has not finished after this long is killed, and the test fails.
const WATCHDOG: Duration = Duration::from_secs(120);

/// Peak memory allowed for refusing a file that is too large or not a file at all: the
/// binary's own footprint, nothing proportional to the file (it was 317 MB for a
/// 100 MB preset).
const SMALL_RSS_KB: i64 = 64 * 1024;

/// The budget of issue 10 for any hostile input.
const BUDGET_RSS_KB: i64 = 200 * 1024;

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    /// Peak resident set size of the process, in KiB.
    peak_rss_kb: i64,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut = |s: &str| s.chars().take(4000).collect::<String>();
        write!(
            f,
            "exit {}, peak RSS {} KiB\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.peak_rss_kb,
            cut(&self.stdout),
            cut(&self.stderr)
        )
    }
}

/// A temporary project (the current directory of every run) and an empty user config.
struct Project {
    dir: TempDir,
    config: TempDir,
}

impl Project {
    fn new() -> Self {
        Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        path
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        fs::write(&path, text).unwrap();
        path
    }

    /// [`Project::run`], asserting the exit code and that the run stayed within
    /// [`SMALL_RSS_KB`].
    fn run_small(&self, args: &[&str], code: i32) -> Outcome {
        let run = self.run(args);
        assert_eq!(run.code, code, "{run:?}");
        assert!(run.peak_rss_kb < SMALL_RSS_KB, "{run:?}");
        run
    }

    /// Run the binary, measuring its peak memory; a run that hangs is killed.
    fn run(&self, args: &[&str]) -> Outcome {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
            .args(args)
            .current_dir(self.dir.path())
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        let drain = |mut pipe: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                pipe.read_to_end(&mut bytes).unwrap();
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let stdout = drain(Box::new(child.stdout.take().unwrap()));
        let stderr = drain(Box::new(child.stderr.take().unwrap()));

        // The watchdog is stopped before the child is reaped, so it can only ever
        // signal our own child (a zombie at worst), never a reused pid.
        let (stop, stopped) = mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if stopped.recv_timeout(WATCHDOG).is_err() {
                // SAFETY: `pid` is our child, not reaped yet (see above).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return true;
            }
            false
        });
        wait_for_exit_without_reaping(pid);
        let _ = stop.send(());
        let killed = watchdog.join().unwrap();
        let (status, usage) = reap(pid);
        drop(child);
        assert!(
            !killed,
            "`agent-presets {}` did not finish within {WATCHDOG:?}",
            args.join(" ")
        );
        Outcome {
            code: if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            },
            stdout: stdout.join().unwrap(),
            stderr: stderr.join().unwrap(),
            peak_rss_kb: usage.ru_maxrss,
        }
    }
}

fn wait_for_exit_without_reaping(pid: libc::pid_t) {
    loop {
        // SAFETY: plain system call on our child; `info` is written by the kernel.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let id = libc::id_t::try_from(pid).unwrap();
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            return;
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "waitid: {e}");
    }
}

fn reap(pid: libc::pid_t) -> (libc::c_int, libc::rusage) {
    loop {
        let mut status = 0;
        // SAFETY: plain system call on our exited child; `usage` is written by the
        // kernel.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return (status, usage);
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "wait4: {e}");
    }
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn json(run: &Outcome) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

/// The diagnostics of a JSON report as `(kind, file, line, column)`.
fn located(v: &Value) -> Vec<(String, String, u64, u64)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap().to_owned(),
                d["file"].as_str().unwrap_or("").to_owned(),
                d["line"].as_u64().unwrap_or(0),
                d["column"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn limit_at(file: &str) -> Vec<(String, String, u64, u64)> {
    vec![("limit-exceeded".to_owned(), file.to_owned(), 1, 1)]
}

/// A real 100 MB preset (YAML all the way) is refused from its size, never read.
#[test]
fn a_100_mb_preset_costs_nothing() {
    let p = Project::new();
    let path = p.path(".agent-presets/big.yaml");
    let mut file = fs::File::create(&path).unwrap();
    let chunk = "key: value\n".repeat(1024 * 1024 / 11 + 1);
    for _ in 0..100 {
        file.write_all(chunk.as_bytes()).unwrap();
    }
    drop(file);
    assert!(fs::metadata(&path).unwrap().len() >= 100 * 1024 * 1024);

    let run = p.run_small(&["validate", "--format", "json"], 1);
    let v = json(&run);
    assert_eq!(located(&v), limit_at(".agent-presets/big.yaml"), "{v}");
    let d = &v["diagnostics"][0];
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .ends_with("a preset file may be at most 1 MiB (1048576 bytes)"),
        "{d}"
    );
    assert!(d["help"].as_str().is_some());

    // Given as a path, and listed: the same.
    let run = p.run_small(
        &["validate", ".agent-presets/big.yaml", "--format", "json"],
        1,
    );
    assert_eq!(located(&json(&run)), limit_at(".agent-presets/big.yaml"));
    let run = p.run_small(&["list"], 0);
    assert!(run.stdout.contains("big"), "{run:?}");
}

/// A sparse 1.5 GB file: refused from its size; nothing is read.
#[test]
fn a_sparse_giant_costs_nothing() {
    let p = Project::new();
    let path = p.path("x/giant.yaml");
    fs::File::create(&path)
        .unwrap()
        .set_len(1_500_000_000)
        .unwrap();
    let run = p.run_small(&["validate", "x/giant.yaml", "--format", "json"], 1);
    let v = json(&run);
    assert_eq!(located(&v), limit_at("x/giant.yaml"));
    assert_eq!(
        v["diagnostics"][0]["message"],
        "the file is 1500000000 bytes; a preset file may be at most 1 MiB (1048576 bytes)"
    );
    assert_eq!(v["presets"][0]["valid"], false);
}

/// A committed link to a `/proc` file that says it is empty and never ends: `list` and
/// `validate` finish, the file refused at the limit.
#[test]
fn a_committed_link_to_proc_pagemap_is_cut_at_the_limit() {
    let p = Project::new();
    std::os::unix::fs::symlink("/proc/self/pagemap", p.path(".agent-presets/evil.yaml")).unwrap();
    p.write(
        ".agent-presets/fine.yaml",
        "version: 1\nname: fine\nextends: minimal\n",
    );

    let run = p.run_small(&["list"], 0);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("evil ")
            && l.ends_with("project  (invalid: run `agent-presets validate evil`)")),
        "{run:?}"
    );

    let run = p.run_small(&["validate", "--format", "json"], 1);
    let v = json(&run);
    assert_eq!(located(&v), limit_at(".agent-presets/evil.yaml"), "{v}");
    assert_eq!(
        v["diagnostics"][0]["message"],
        "the file holds more than 1 MiB (1048576 bytes), the most a preset file may hold"
    );
    let valid: Vec<(&str, bool)> = v["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["valid"].as_bool().unwrap()))
        .collect();
    assert!(valid.contains(&("evil", false)) && valid.contains(&("fine", true)));

    for command in ["show", "render"] {
        let run = p.run_small(&[command, "evil"], 1);
        assert!(run.stderr.contains("error[P0008]"), "{run:?}");
    }
}

/// `validate x/fifo.yaml` used to hang in `open`; a FIFO in `.agent-presets/` too.
#[test]
fn fifos_never_hang() {
    let p = Project::new();
    mkfifo(&p.path("x/fifo.yaml"));
    let run = p.run_small(&["validate", "x/fifo.yaml"], 2);
    assert!(
        run.stdout.contains(
            "cannot read preset file `x/fifo.yaml`: it is a FIFO (named pipe), not a regular file"
        ),
        "{run:?}"
    );

    mkfifo(&p.path(".agent-presets/pipe.yaml"));
    let run = p.run_small(&["validate", "--format", "json"], 2);
    let v = json(&run);
    assert_eq!(
        located(&v),
        [("io".to_owned(), ".agent-presets/pipe.yaml".to_owned(), 1, 1)]
    );
    p.run_small(&["list"], 0);

    // Committed schema files are read bounded too.
    mkfifo(&p.path("schemas/preset.schema.json"));
    let run = p.run_small(&["schema", "--check"], 2);
    assert!(run.stderr.contains("it is a FIFO"), "{run:?}");
    p.run_small(&["schema", "--write"], 2);
}

/// 90,000 unknown keys: the report shows 200 and counts the rest; the summary still
/// counts all of them.
#[test]
fn ninety_thousand_unknown_keys_are_reported_capped() {
    let p = Project::new();
    let mut text = String::from("version: 1\nname: keys\n");
    for i in 0..90_000 {
        text.push_str(&format!("k{i}: 1\n"));
    }
    p.write(".agent-presets/keys.yaml", &text);

    let run = p.run(&["validate", "keys"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout.matches("error[P0003]").count(), 200);
    assert!(
        run.stdout.contains(
            "note: 89800 more diagnostics in `.agent-presets/keys.yaml` are not shown (at most \
             200 are shown per file)"
        ),
        "{run:?}"
    );
    assert!(
        run.stdout
            .ends_with("0 presets valid, 1 invalid (90000 errors, 0 warnings)\n"),
        "{run:?}"
    );
    assert!(run.stdout.len() < 200_000, "{} bytes", run.stdout.len());
    assert!(run.peak_rss_kb < BUDGET_RSS_KB, "{run:?}");

    let run = p.run(&["validate", "keys", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v = json(&run);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 200);
    assert_eq!(
        v["omitted"],
        serde_json::json!([{ "file": ".agent-presets/keys.yaml", "count": 89800 }])
    );
    assert!(run.stdout.len() < 200_000, "{} bytes", run.stdout.len());

    // (GitHub and SARIF output are cut the same way: see `report`'s tests.)
}

/// 300 unknown keys after a 500,000-character string, all on one line: each of the 200
/// snippets shows a 120-column window of that line with the caret under its own key,
/// not 500 KB (which would make 100 MB of output).
#[test]
fn a_huge_line_is_cut_in_every_snippet() {
    let p = Project::new();
    let keys: Vec<String> = (0..300).map(|i| format!("b{i}: 1")).collect();
    let text = format!(
        "version: 1\nname: wide\npersona: {{ sections: [ {{ name: a, order: 0, text: \"{}\", {} }} ] }}\n",
        "x".repeat(500_000),
        keys.join(", ")
    );
    p.write(".agent-presets/wide.yaml", &text);
    let run = p.run(&["validate", "wide"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.len() < 300_000, "{} bytes", run.stdout.len());
    assert!(run.peak_rss_kb < BUDGET_RSS_KB, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let mut checked = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(key) = line
            .strip_prefix("error[P0003]: unknown key `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(key, _)| key)
        else {
            continue;
        };
        // error, -->, |, the line, the caret.
        let shown = lines[i + 3].strip_prefix("3 | ").unwrap();
        let caret = lines[i + 4].strip_prefix("  | ").unwrap();
        assert!(shown.chars().count() <= 120, "{shown}");
        assert!(shown.starts_with('\u{2026}'), "{shown}");
        let at = caret.find('^').unwrap();
        let under: String = shown.chars().skip(at).take(key.len()).collect();
        assert_eq!(under, key, "{shown}\n{caret}");
        checked += 1;
    }
    assert_eq!(checked, 200);
    assert!(
        run.stdout
            .contains("note: 100 more diagnostics in `.agent-presets/wide.yaml`")
    );
}

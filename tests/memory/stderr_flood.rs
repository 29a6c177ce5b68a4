//! A server that floods stderr while an answer streams: `run` holds its lines until the
//! answer's line is done, at most a bounded number per server, and says how many it
//! dropped; the agent's memory stays constant (measured as the run's peak resident set).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::mcp_fixture;
use crate::mock_provider::{self as mock, MockProvider, Reply};

const KEY: &str = "mem-test-key-0123456789abcdef";

/// The preset: the stdio fixture `fx` flooding stderr with `line`-byte lines from its
/// first call on (and saying the key at startup), and the mock model at `url`.
fn preset(url: &str, log: &Path, line: usize) -> String {
    let argv = serde_json::to_string(&mcp_fixture::stdio_argv()).unwrap();
    let env: serde_json::Map<String, serde_json::Value> =
        mcp_fixture::stdio_env(&format!("stderr=the key is {KEY},stderr_flood={line}"), log)
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::from(v)))
            .collect();
    let exe_dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    format!(
        "version: 1\nname: agent\nextends: standard\nmodel:\n  provider: deepseek\n  name: test-model\n  baseUrl: {url}\n  apiKeyEnv: TEST_MODEL_KEY\nallowRead: [{}]\nmcpServers:\n  fx:\n    command: {argv}\n    env: {}\n    startupTimeout: 30s\n    readOnly: true\ntools:\n  allow: [read_file, mcp__fx__echo]\n",
        exe_dir.display(),
        serde_json::Value::Object(env)
    )
}

/// Run `agent-presets args` in `project`; its exit code, stderr (the last 256 KiB), how
/// many bytes it wrote on stderr, and its peak resident set in KiB (with its children's).
// The child is waited for with wait4 (for its resource usage), not `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run(project: &Path, config: &Path, args: &[&str]) -> (Option<i32>, String, usize, i64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
        .args(args)
        .current_dir(project)
        .env("AGENT_PRESETS_CONFIG_DIR", config)
        .env("TEST_MODEL_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut total = 0;
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n;
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 512 * 1024 {
                tail.drain(..tail.len() - 256 * 1024);
            }
        }
        (String::from_utf8_lossy(&tail).into_owned(), total)
    });
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: wait4 only writes into the status and the struct we pass; the child is ours
    // and not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid);
    let (stderr, total) = reader.join().unwrap();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, stderr, total, usage.ru_maxrss)
}

#[cfg(target_os = "linux")]
#[test]
fn a_stderr_flood_during_a_streamed_answer_stays_in_constant_memory() {
    let pieces: Vec<String> = (0..30).map(|i| format!("word{i} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_call(
            "c1",
            "mcp__fx__echo",
            "{\"text\":\"go\"}",
        )),
        Reply::Sse {
            pieces: mock::openai_text_stream(&pieces),
            delay: Duration::from_millis(200),
            complete: true,
        },
    ]);
    let project = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let log = project.path().join("fx.log");
    std::fs::create_dir_all(config.path().join("presets")).unwrap();
    std::fs::write(
        config.path().join("presets/agent.yaml"),
        preset(&server.url(""), &log, 4000),
    )
    .unwrap();
    let (code, stderr, _, _) = run(project.path(), config.path(), &["lock", "--connect"]);
    assert_eq!(code, Some(0), "{stderr}");
    // `--connect` masks the preset's key variable too.
    assert!(stderr.contains("[mcp fx] the key is *****"), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");

    let (code, stderr, total, peak_kib) =
        run(project.path(), config.path(), &["run", "agent", "Flood."]);
    let peak_mib = peak_kib / 1024;
    eprintln!("run: peak {peak_mib} MiB, {total} bytes of stderr");
    assert_eq!(code, Some(0), "{stderr}");
    // The run's key is masked in the server's stderr.
    assert!(stderr.contains("[mcp fx] the key is *****"), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");
    assert!(
        stderr.contains("lines of stderr from `fx` dropped"),
        "{}",
        &stderr[stderr.len().saturating_sub(2000)..]
    );
    // Unbounded (before), 6 s of this flood held 60 MB of lines: a 66 MiB peak after 3 s.
    assert!(peak_mib < 56, "the run peaked at {peak_mib} MiB");
}

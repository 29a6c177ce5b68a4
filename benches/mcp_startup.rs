//! MCP servers start in parallel (issue 17): with three stdio servers, the time from
//! `agent-presets run` to its first model request against the slowest server's own
//! startup.
//!
//! The servers are the in-tree fixture (tests/integration/support/mcp_fixture.rs, this binary run
//! again), each behind `sleep` of 100, 200 and 300 ms, so their startups differ the way
//! real servers' do (`uvx` resolving a package, a JVM). Measured, each the median of
//! `RUNS`:
//!
//! - each server's own startup: `McpSession::connect` alone (spawn, handshake, listing);
//! - `run` of a preset without servers: spawn of the CLI → first request at a mock model
//!   on 127.0.0.1 (the CLI's own cost: discovery, validation, rendering);
//! - `run` of the same preset with the three servers (locked first).
//!
//! The servers add (run with servers − run without) to the run; started one after the
//! other they would add the sum of their startups, in parallel the slowest one.
//!
//! Run: `cargo bench --bench mcp_startup` (or `--profile dev`; figures in BENCHMARKS.md).

#[path = "../tests/integration/support/mcp_fixture.rs"]
mod mcp_fixture;
#[path = "../tests/integration/support/mock_provider.rs"]
#[allow(dead_code)]
mod mock_provider;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_presets::mcp::{McpSession, ServerConfig, ServerTransport};
use agent_presets::tools::ToolContext;
use mock_provider::{MockProvider, Reply};

const RUNS: usize = 11;
const DELAYS_MS: [u64; 3] = [100, 200, 300];

fn main() {
    // Run again as a fixture server (see `server_argv`).
    mcp_fixture::serve_stdio_if_asked();
    if std::env::var_os(mcp_fixture::SCRIPT_VAR).is_some() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let project = dir.path().join("project");
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("presets")).expect("the config directory");
    std::fs::create_dir_all(&project).expect("the project directory");
    let log = dir.path().join("fixture.log");

    // Each server alone.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let ctx = ToolContext::new(&project).expect("a workspace");
    let mut alone = Vec::new();
    let mut configs = Vec::new();
    for delay in DELAYS_MS {
        let config = ServerConfig {
            name: format!("s{delay}"),
            transport: ServerTransport::Stdio {
                argv: server_argv(delay),
                env: mcp_fixture::stdio_env("", &log),
                cwd: project.clone(),
            },
            startup_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(30),
        };
        let times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                runtime.block_on(async {
                    let start = Instant::now();
                    let session = McpSession::connect(&config, &ctx)
                        .await
                        .expect("the fixture starts");
                    let took = start.elapsed();
                    session.shutdown().await;
                    took
                })
            })
            .collect();
        alone.push(median(times));
        configs.push(config);
    }
    let slowest = alone.iter().copied().max().unwrap_or_default();
    // The three at once, in this process (what `run` does, without the CLI around it).
    let together = median(
        (0..RUNS)
            .map(|_| {
                runtime.block_on(async {
                    let start = Instant::now();
                    let sessions = futures_util::future::join_all(
                        configs.iter().map(|c| McpSession::connect(c, &ctx)),
                    )
                    .await;
                    let took = start.elapsed();
                    for s in sessions {
                        s.expect("the fixture starts").shutdown().await;
                    }
                    took
                })
            })
            .collect(),
    );

    // `run` without, then with the three servers.
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
        .expect("this binary's directory");
    let servers: String = DELAYS_MS
        .iter()
        .map(|delay| {
            let argv = serde_json::to_string(&server_argv(*delay)).expect("JSON");
            let env = serde_json::to_string(
                &mcp_fixture::stdio_env("", &log)
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::from(v)))
                    .collect::<serde_json::Map<String, serde_json::Value>>(),
            )
            .expect("JSON");
            format!(
                "  s{delay}:\n    command: {argv}\n    env: {env}\n    startupTimeout: 30s\n    readOnly: true\n"
            )
        })
        .collect();
    let measure = |preset: &str, extra: &[&str]| -> Duration {
        let times: Vec<Duration> = (0..1)
            .map(|_| {
                let provider =
                    MockProvider::start(vec![Reply::json(mock_provider::openai_text("ok"))]);
                std::fs::write(
                    config.join("presets/agent.yaml"),
                    format!(
                        "version: 1\nname: agent\nextends: standard\nallowRead: [{}]\nmodel:\n  provider: deepseek\n  name: m\n  baseUrl: {}\n  apiKeyEnv: BENCH_MODEL_KEY\n{preset}",
                        exe_dir.display(),
                        provider.url("")
                    ),
                )
                .expect("the preset");
                let start = Instant::now();
                let mut child = cli(&project, &config)
                    .args(["run", "agent", "hi"])
                    .args(extra)
                    .spawn()
                    .expect("the CLI starts");
                while provider.requests().is_empty() {
                    std::thread::sleep(Duration::from_micros(200));
                }
                let took = start.elapsed();
                let _ = child.wait();
                took
            })
            .collect();
        median(times)
    };
    let with_servers = format!(
        "mcpServers:\n{servers}tools:\n  allow: [read_file, \"mcp__s100__*\", \"mcp__s200__*\", \"mcp__s300__*\"]\n"
    );
    // Lock the servers once (the run takes their tools from the lock).
    std::fs::write(
        config.join("presets/agent.yaml"),
        format!(
            "version: 1\nname: agent\nextends: standard\nallowRead: [{}]\nmodel:\n  provider: deepseek\n  name: m\n  baseUrl: http://127.0.0.1:9\n  apiKeyEnv: BENCH_MODEL_KEY\n{with_servers}",
            exe_dir.display()
        ),
    )
    .expect("the preset");
    let locked = cli(&project, &config)
        .args(["lock", "--connect", "agent"])
        .status()
        .expect("lock runs");
    assert!(locked.success(), "lock --connect failed");
    // Alternately, so the machine's load weighs on both alike.
    let (mut without, mut with, mut unboxed) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        without.push(measure("", &[]));
        with.push(measure(&with_servers, &[]));
        unboxed.push(measure(&with_servers, &["--sandbox", "full-access"]));
    }
    let (without, with, unboxed) = (median(without), median(with), median(unboxed));

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("each server alone (connect + list), median of {RUNS}:");
    for (delay, took) in DELAYS_MS.iter().zip(&alone) {
        println!("  sleep {delay} ms + fixture: {:7.1} ms", ms(*took));
    }
    let sum: Duration = alone.iter().sum();
    println!("  slowest {:7.1} ms, sum {:7.1} ms", ms(slowest), ms(sum));
    println!(
        "the three at once, in process (connect_all): {:7.1} ms",
        ms(together)
    );
    println!("run → first model request, median of {RUNS}:");
    println!("  without servers:     {:7.1} ms", ms(without));
    println!("  with three servers:  {:7.1} ms", ms(with));
    println!(
        "  with three servers, no sandbox (--sandbox full-access): {:7.1} ms",
        ms(unboxed)
    );
    println!(
        "  added by the servers: {:6.1} ms = slowest server {:+.1} ms",
        ms(with.saturating_sub(without)),
        ms(with.saturating_sub(without)) - ms(slowest)
    );
}

/// A fixture server that sleeps `delay_ms` before it starts.
fn server_argv(delay_ms: u64) -> Vec<String> {
    let mut argv = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        "sleep \"$0\"; exec \"$@\"".to_owned(),
        format!("{}", delay_ms as f64 / 1000.0),
    ];
    argv.extend(mcp_fixture::stdio_argv());
    argv
}

fn cli(project: &Path, config: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
    c.current_dir(project)
        .env("AGENT_PRESETS_CONFIG_DIR", config)
        .env("BENCH_MODEL_KEY", "sk-bench-0123456789abcdefghij")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

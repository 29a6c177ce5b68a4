//! The MCP client (`agent_presets::mcp`) against the in-tree fixture server
//! (tests/integration/support/mcp_fixture.rs) over stdio and Streamable HTTP on 127.0.0.1, scripted
//! to misbehave, and against a published third-party server (`mcp-server-time`).
#![cfg(feature = "client")]

use crate::support::mcp_fixture;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_presets::mcp::{
    HeaderSecret, MAX_DESCRIPTION_BYTES, MAX_TOOLS, McpError, McpSession, ServerConfig,
    ServerTransport, StderrSink,
};
use agent_presets::tools::ToolContext;
use serde_json::{Map, Value, json};

struct Fix {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    log: PathBuf,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Fix {
    fn new() -> Fix {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        let log = dir.path().join("fixture.log");
        Fix {
            _dir: dir,
            workspace,
            log,
            lines: Arc::default(),
        }
    }

    fn ctx(&self) -> ToolContext {
        ToolContext::new(&self.workspace).unwrap()
    }

    fn sink(&self) -> StderrSink {
        let lines = Arc::clone(&self.lines);
        Arc::new(move |_server: &str, line: &str| lines.lock().unwrap().push(line.to_owned()))
    }

    fn stderr(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    fn stdio(&self, script: &str) -> ServerConfig {
        ServerConfig {
            name: "fix".into(),
            transport: ServerTransport::Stdio {
                argv: mcp_fixture::stdio_argv(),
                env: mcp_fixture::stdio_env(script, &self.log),
                cwd: self.workspace.clone(),
            },
            startup_timeout: Duration::from_secs(20),
            tool_timeout: Duration::from_secs(20),
        }
    }

    async fn http(&self, script: &str) -> ServerConfig {
        let url =
            mcp_fixture::serve_http(mcp_fixture::Script::parse(script), Some(self.log.clone()))
                .await;
        ServerConfig {
            name: "web".into(),
            transport: ServerTransport::Http {
                url,
                headers: vec![("X-Test".into(), HeaderSecret::new("secret-value"))],
            },
            startup_timeout: Duration::from_secs(20),
            tool_timeout: Duration::from_secs(20),
        }
    }

    async fn connect(&self, config: &ServerConfig) -> Result<McpSession, McpError> {
        McpSession::connect_with_stderr(config, &self.ctx(), self.sink()).await
    }

    fn log_lines(&self) -> Vec<String> {
        mcp_fixture::log_lines(&self.log)
    }

    /// Wait until the fixture's log has `line` (at most `within`).
    async fn wait_for_log(&self, line: &str, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if self.log_lines().iter().any(|l| l == line) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// Is a process whose environment names this fixture's log still alive?
    fn fixture_alive(&self) -> bool {
        let needle = self.log.to_string_lossy().into_owned();
        std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            let environ = entry.path().join("environ");
            std::fs::read(environ)
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(&needle))
        })
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn tool_names(session: &McpSession) -> Vec<String> {
    session
        .listing()
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

/// What every transport and era must do: list (with the server's identity and the
/// agreed revision) and call.
async fn lists_and_calls(session: &McpSession, protocol: &str) {
    let listing = session.listing();
    assert_eq!(listing.server_name, "mcp-fixture");
    assert_eq!(listing.server_version, "1.2.3");
    assert_eq!(listing.protocol_version, protocol);
    let names = tool_names(session);
    assert_eq!(&names[..3], ["echo", "add", "fail"], "{names:?}");
    let echo = &listing.tools[0];
    assert_eq!(echo.description.as_deref(), Some("Echo the text back."));
    assert_eq!(echo.input_schema["required"], json!(["text"]));
    assert_eq!(
        echo.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    let add = &listing.tools[1];
    assert_eq!(add.title.as_deref(), Some("Add"));
    assert_eq!(
        add.output_schema.as_ref().unwrap()["required"],
        json!(["sum"])
    );

    let out = session
        .call("echo", args(json!({"text": "hello there"})))
        .await
        .unwrap();
    assert_eq!(out.text, "hello there");
    assert!(!out.is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server_on_the_2026_revision_lists_and_calls() {
    let fix = Fix::new();
    let started = Instant::now();
    let session = fix.connect(&fix.stdio("")).await.unwrap();
    eprintln!(
        "fixture (stdio): connected and listed in {:?}",
        started.elapsed()
    );
    lists_and_calls(&session, "2026-07-28").await;
    // No capabilities: no roots, sampling or elicitation.
    assert!(
        fix.log_lines().contains(&"capabilities {}".to_owned()),
        "{:?}",
        fix.log_lines()
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server_from_before_2026_gets_the_initialize_handshake() {
    let fix = Fix::new();
    let started = Instant::now();
    let session = fix.connect(&fix.stdio("legacy")).await.unwrap();
    // The fallback follows the server's answer to the probe, not a timeout.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    lists_and_calls(&session, "2025-11-25").await;
    assert!(
        fix.log_lines().contains(&"capabilities {}".to_owned()),
        "{:?}",
        fix.log_lines()
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_server_slower_to_start_than_the_probe_timeout_is_still_reached() {
    // rmcp gives the `server/discover` probe 10 s, then sends `initialize`; a cold
    // `npx -y`/`uvx` server reads both only then and answers the probe first. That late
    // answer failed the start ("uncorrelated error response: expected id 1, error
    // response carried 0").
    let fix = Fix::new();
    let session = fix
        .connect(&fix.stdio("legacy,start_delay=11"))
        .await
        .unwrap();
    lists_and_calls(&session, "2025-11-25").await;
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_knows_discover_but_only_older_revisions_is_still_reached() {
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("narrow")).await.unwrap();
    lists_and_calls(&session, "2025-11-25").await;
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_lists_and_calls_in_both_eras() {
    let fix = Fix::new();
    let session = fix.connect(&fix.http("").await).await.unwrap();
    lists_and_calls(&session, "2026-07-28").await;
    session.shutdown().await;
    let session = fix.connect(&fix.http("legacy").await).await.unwrap();
    lists_and_calls(&session, "2025-11-25").await;
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_is_not_there_is_a_start_error() {
    let fix = Fix::new();
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = ServerConfig {
        name: "web".into(),
        transport: ServerTransport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![],
        },
        startup_timeout: Duration::from_secs(10),
        tool_timeout: Duration::from_secs(10),
    };
    let started = Instant::now();
    let err = fix.connect(&config).await.unwrap_err();
    assert!(
        matches!(err, McpError::Start { .. } | McpError::Protocol { .. }),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_printing_garbage_is_not_mcp_without_waiting_for_the_timeout() {
    let fix = Fix::new();
    let mut config = fix.stdio("garbage");
    config.startup_timeout = Duration::from_secs(30);
    let started = Instant::now();
    let err = fix.connect(&config).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let McpError::NotMcp { detail, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        detail.contains("Starting the server, step 0 of 20"),
        "{detail}"
    );
    assert!(
        err.to_string().contains("stderr rather than stdout"),
        "{err}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!fix.fixture_alive(), "the server was not killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_at_startup_times_out_and_is_killed() {
    let fix = Fix::new();
    let mut config = fix.stdio("hang");
    config.startup_timeout = Duration::from_millis(1500);
    let started = Instant::now();
    let err = fix.connect(&config).await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, McpError::StartupTimeout { .. }), "{err:?}");
    assert!(err.to_string().contains("within 1.5s"), "{err}");
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(6),
        "{took:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!fix.fixture_alive(), "the server was not killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_is_missing_or_exits_at_once_is_a_clear_start_error() {
    let fix = Fix::new();
    let mut config = fix.stdio("");
    config.transport = ServerTransport::Stdio {
        argv: vec!["/nonexistent/mcp-server".into()],
        env: vec![],
        cwd: fix.workspace.clone(),
    };
    let err = fix.connect(&config).await.unwrap_err();
    assert!(err.to_string().contains("was not found"), "{err}");

    config.transport = ServerTransport::Stdio {
        argv: vec![
            "/bin/sh".into(),
            "-c".into(),
            "echo 'no such module: mcp' >&2; exit 2".into(),
        ],
        env: vec![],
        cwd: fix.workspace.clone(),
    };
    let err = fix.connect(&config).await.unwrap_err();
    let McpError::Start { reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(reason.contains("exit code: 2"), "{reason}");
    assert!(reason.contains("no such module: mcp"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_once_is_reported_with_its_own_status_under_every_containment() {
    use agent_presets::tools::builtin::Containment;
    let fix = Fix::new();
    let mut config = fix.stdio("");
    config.transport = ServerTransport::Stdio {
        argv: vec!["/bin/sh".into(), "-c".into(), "exit 2".into()],
        env: vec![],
        cwd: fix.workspace.clone(),
    };
    // Under the subreaper the process spawned is the supervisor, which exits with 0: the
    // status said is the one it reported for the server.
    for containment in [
        Containment::best_available(),
        Containment::Subreaper,
        Containment::ProcessGroup,
    ] {
        let ctx = fix.ctx().with_containment(containment);
        let err = McpSession::connect_with_stderr(&config, &ctx, fix.sink())
            .await
            .unwrap_err();
        let McpError::Start { reason, .. } = &err else {
            panic!("{containment}: {err:?}")
        };
        assert!(reason.contains("exit code: 2"), "{containment}: {reason}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_mid_run_fails_every_later_call_without_a_hang() {
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("crash_after=1")).await.unwrap();
    assert_eq!(
        session
            .call("echo", args(json!({"text": "one"})))
            .await
            .unwrap()
            .text,
        "one"
    );
    for _ in 0..3 {
        let started = Instant::now();
        let err = session
            .call("echo", args(json!({"text": "two"})))
            .await
            .unwrap_err();
        assert!(matches!(err, McpError::Crashed { .. }), "{err:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
    let gone: Vec<_> = fix
        .stderr()
        .into_iter()
        .filter(|l| l.contains("server is gone"))
        .collect();
    assert_eq!(gone.len(), 1, "{:?}", fix.stderr());
    assert!(gone[0].starts_with("[mcp fix] "), "{gone:?}");
    assert!(gone[0].contains("exit code: 3"), "{gone:?}");
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_listing_5000_tools_is_refused() {
    let fix = Fix::new();
    let started = Instant::now();
    let err = fix
        .connect(&fix.stdio("tools=5000,page=100"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        McpError::TooManyTools {
            server: "fix".into(),
            limit: MAX_TOOLS
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // Pagination is followed: 990 more tools over ten pages are fine.
    let session = fix.connect(&fix.stdio("tools=990,page=100")).await.unwrap();
    assert_eq!(session.listing().tools.len(), 998);
    assert_eq!(session.listing().tools.last().unwrap().name, "bulk_00989");
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_kib_description_is_refused_naming_the_tool() {
    let fix = Fix::new();
    let err = fix.connect(&fix.stdio("describe=65536")).await.unwrap_err();
    assert_eq!(
        err,
        McpError::ToolTooLarge {
            server: "fix".into(),
            tool: "verbose".into(),
            what: "description",
            bytes: 65536,
            limit: MAX_DESCRIPTION_BYTES,
        }
    );
    let session = fix
        .connect(&fix.stdio(&format!("describe={MAX_DESCRIPTION_BYTES}")))
        .await
        .unwrap();
    assert!(tool_names(&session).contains(&"verbose".to_owned()));
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_are_passed_on_as_listed_even_a_ref_loop() {
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("ref_loop")).await.unwrap();
    let tool = session
        .listing()
        .tools
        .iter()
        .find(|t| t.name == "loop")
        .unwrap();
    assert_eq!(
        tool.input_schema["definitions"]["a"]["$ref"],
        "#/definitions/a"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tool_times_out_and_the_server_sees_the_cancellation() {
    let fix = Fix::new();
    for config in [fix.stdio(""), fix.http("").await] {
        let mut config = config;
        config.tool_timeout = Duration::from_millis(500);
        let session = fix.connect(&config).await.unwrap();
        let started = Instant::now();
        let err = session
            .call("slow", args(json!({"secs": 30})))
            .await
            .unwrap_err();
        assert!(
            matches!(err, McpError::Timeout { ref tool, .. } if tool == "slow"),
            "{err:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert!(
            fix.wait_for_log("cancelled slow", Duration::from_secs(5))
                .await,
            "{:?}: {:?}",
            config.transport,
            fix.log_lines()
        );
        // The session goes on.
        assert_eq!(
            session
                .call("echo", args(json!({"text": "still here"})))
                .await
                .unwrap()
                .text,
            "still here"
        );
        session.shutdown().await;
        std::fs::remove_file(&fix.log).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_from_the_server_are_answered_with_errors() {
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("legacy")).await.unwrap();
    let out = session.call("ask", Map::new()).await.unwrap();
    assert!(out.text.contains("roots/list: error"), "{}", out.text);
    assert!(
        out.text.contains("sampling/createMessage: error"),
        "{}",
        out.text
    );
    // list_changed is ignored: the listing stays as it was, calls go on.
    session.call("changed", Map::new()).await.unwrap();
    assert_eq!(tool_names(&session).len(), 8);
    assert_eq!(
        session
            .call("echo", args(json!({"text": "x"})))
            .await
            .unwrap()
            .text,
        "x"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_become_text_for_the_model() {
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("")).await.unwrap();
    let out = session.call("fail", Map::new()).await.unwrap();
    assert!(out.is_error);
    assert_eq!(out.text, "it failed on purpose");

    let out = session.call("image", Map::new()).await.unwrap();
    assert!(!out.is_error);
    assert!(
        out.text
            .starts_with("a chart:\n[image left out: image/png, about "),
        "{}",
        out.text
    );
    assert!(!out.text.contains("iVBOR"), "{}", out.text);

    let out = session
        .call("add", args(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&out.text).unwrap(),
        json!({"sum": 5.0})
    );

    // A protocol error (an unknown tool) is an error, not a result.
    let err = session.call("nope", Map::new()).await.unwrap_err();
    assert!(
        matches!(err, McpError::ToolFailed { ref tool, ref message, .. } if tool == "nope" && message.contains("no tool `nope`")),
        "{err:?}"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_bounded_like_a_built_in_tool() {
    let fix = Fix::new();
    let ctx = fix
        .ctx()
        .with_limits(agent_presets::tools::builtin::OutputLimits {
            max_bytes: 1000,
            max_lines: 100,
            max_line_chars: 100,
        });
    let session = McpSession::connect(&fix.stdio(""), &ctx).await.unwrap();
    let out = session
        .call("echo", args(json!({"text": "x".repeat(5000)})))
        .await
        .unwrap();
    assert!(out.text.len() < 1200, "{}", out.text.len());
    assert!(
        out.text.contains("output truncated: 4000 more bytes"),
        "{}",
        &out.text[1000..]
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_lines_reach_the_sink_prefixed_and_escaped() {
    let fix = Fix::new();
    let session = fix
        .connect(&fix.stdio("stderr=hello from the server;\x1b[2Jcleared"))
        .await
        .unwrap();
    let start = Instant::now();
    while fix.stderr().len() < 2 && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines = fix.stderr();
    assert!(
        lines.contains(&"[mcp fix] hello from the server".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[mcp fix] ") && l.contains("cleared") && !l.contains('\x1b')),
        "{lines:?}"
    );
    session.shutdown().await;
}

/// A stderr line longer than 4 KiB is cut (the rest of it skipped, the next line whole),
/// and every line is masked by the session's redactor before it is escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_lines_are_cut_and_redacted() {
    let fix = Fix::new();
    let key = "sk-fixture-0123456789abcdef";
    let hex: String = key.bytes().map(|b| format!("{b:02X}")).collect();
    let script = format!(
        "stderr={};after the long one;key {key};hex {hex};json \\u0073\\u006B-fixture-0123456789abcdef;prompt\r$",
        "x".repeat(10_000)
    );
    let redactor = agent_presets::redact::Redactor::new([key]);
    let session =
        McpSession::connect_redacted(&fix.stdio(&script), &fix.ctx(), fix.sink(), redactor)
            .await
            .unwrap();
    let start = Instant::now();
    while fix.stderr().len() < 6 && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines = fix.stderr();
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert_eq!(
        lines[0],
        format!("[mcp fix] {} … (line cut)", "x".repeat(4096))
    );
    assert_eq!(lines[1], "[mcp fix] after the long one");
    assert_eq!(lines[2], format!("[mcp fix] key {}", "*".repeat(key.len())));
    assert_eq!(lines[3], format!("[mcp fix] hex {}", "*".repeat(hex.len())));
    assert!(
        lines[4].starts_with("[mcp fix] json ****") && !lines[4].contains("fixture"),
        "{lines:?}"
    );
    assert_eq!(lines[5], "[mcp fix] prompt\\r$");
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_stdin_then_terms_then_kills() {
    // A server that exits when its stdin ends: no signal needed.
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("")).await.unwrap();
    let started = Instant::now();
    session.clone().shutdown().await;
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert!(
        fix.log_lines().contains(&"stdin closed".to_owned()),
        "{:?}",
        fix.log_lines()
    );
    assert!(
        !fix.log_lines().contains(&"sigterm".to_owned()),
        "{:?}",
        fix.log_lines()
    );
    assert!(!fix.fixture_alive());
    // Calls after the end fail (on any clone).
    assert!(matches!(
        session.call("echo", Map::new()).await,
        Err(McpError::Crashed { .. })
    ));

    // One that stays after stdin ends: SIGTERM.
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("linger")).await.unwrap();
    session.shutdown().await;
    assert!(
        fix.log_lines().contains(&"sigterm".to_owned()),
        "{:?}",
        fix.log_lines()
    );
    assert!(!fix.fixture_alive());

    // One that ignores SIGTERM too: SIGKILL, about two grace periods later.
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("stubborn")).await.unwrap();
    let started = Instant::now();
    session.shutdown().await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(6),
        "{took:?}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!fix.fixture_alive(), "a stubborn server survived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_handle_kills_the_server() {
    let fix = Fix::new();
    let session = fix.connect(&fix.stdio("stubborn")).await.unwrap();
    assert!(fix.fixture_alive());
    drop(session);
    let start = Instant::now();
    while fix.fixture_alive() && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!fix.fixture_alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_header_values_stay_out_of_errors() {
    let fix = Fix::new();
    let config = ServerConfig {
        name: "web".into(),
        transport: ServerTransport::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            headers: vec![(
                "Authorization".into(),
                HeaderSecret::new("Bearer sk-live-123\n"),
            )],
        },
        startup_timeout: Duration::from_secs(5),
        tool_timeout: Duration::from_secs(5),
    };
    let err = fix.connect(&config).await.unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(matches!(err, McpError::Config { .. }), "{text}");
    assert!(!text.contains("sk-live"), "{text}");
}

/// Where `mcp-server-time` is: `AGENT_PRESETS_MCP_SERVER_TIME`, or the venv `.ci/run`
/// makes (`target/mcp-venv`), or the PATH.
fn mcp_server_time() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AGENT_PRESETS_MCP_SERVER_TIME") {
        return Some(PathBuf::from(path));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/mcp-server-time");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("mcp-server-time"))
        .find(|p| p.is_file())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_published_mcp_server_time_lists_and_answers() {
    let Some(program) = mcp_server_time() else {
        let required =
            std::env::var("AGENT_PRESETS_REQUIRE_THIRD_PARTY_MCP").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "mcp-server-time is not installed (.ci/run installs it into target/mcp-venv)"
        );
        eprintln!(
            "skipped: mcp-server-time is not installed; `python3 -m venv target/mcp-venv && \
             target/mcp-venv/bin/pip install mcp-server-time==2026.10.19` installs it"
        );
        return;
    };
    let fix = Fix::new();
    let config = ServerConfig {
        name: "time".into(),
        transport: ServerTransport::Stdio {
            argv: vec![
                program.to_string_lossy().into_owned(),
                "--local-timezone".into(),
                "UTC".into(),
            ],
            env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            cwd: fix.workspace.clone(),
        },
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Duration::from_secs(30),
    };
    let started = Instant::now();
    let session = fix.connect(&config).await.unwrap();
    eprintln!(
        "mcp-server-time: connected and listed in {:?}",
        started.elapsed()
    );
    let listing = session.listing();
    assert_eq!(listing.server_name, "mcp-time");
    let names = tool_names(&session);
    assert!(names.contains(&"get_current_time".to_owned()), "{names:?}");
    let tool = listing
        .tools
        .iter()
        .find(|t| t.name == "get_current_time")
        .unwrap();
    assert_eq!(tool.input_schema["required"], json!(["timezone"]));
    let out = session
        .call(
            "get_current_time",
            args(json!({"timezone": "Europe/Berlin"})),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.text);
    let answer: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(answer["timezone"], "Europe/Berlin", "{}", out.text);
    assert!(
        answer["datetime"].as_str().is_some_and(|d| d.len() >= 19),
        "{}",
        out.text
    );
    // A bad argument is the server's tool error, not a crash.
    let out = session
        .call(
            "get_current_time",
            args(json!({"timezone": "Mars/Olympus"})),
        )
        .await;
    match out {
        Ok(out) => assert!(out.is_error, "{}", out.text),
        Err(err) => assert!(matches!(err, McpError::Protocol { .. }), "{err:?}"),
    }
    session.shutdown().await;
}

/// A session is shared by the tool handlers of a run: a `Send + Sync` handle whose call
/// futures are `Send` (checked at compile time).
#[test]
fn sessions_and_their_calls_can_move_between_threads() {
    fn shared<T: Send + Sync + Clone + 'static>() {}
    fn call(
        session: &McpSession,
    ) -> impl std::future::Future<Output = Result<agent_presets::mcp::CallOutput, McpError>> + Send + '_
    {
        session.call("echo", Map::new())
    }
    shared::<McpSession>();
    shared::<McpError>();
    let _ = call;
}

/// A stdio server the sandbox cannot read (the test binary, outside the workspace, no
/// `allowRead`) does not start, and the error says the sandbox may be why, names the
/// program's resolved path and how to let it through; the same server started through
/// `/bin/sh` (which the sandbox can run) dies at once, and the binary it runs is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_the_sandbox_cannot_read_says_how_to_allow_it() {
    use agent_presets::tools::sandbox::{SandboxMode, SandboxProfile};
    let fix = Fix::new();
    // The test binary where the sandbox derives no read (a secret path of its home).
    let home = tempfile::tempdir().unwrap();
    let exe = mcp_fixture::hidden_copy(home.path());
    let exe_dir = exe.parent().unwrap().display().to_string();
    let ctx = fix
        .ctx()
        .with_sandbox(SandboxProfile::new(SandboxMode::WorkspaceWrite).with_home(home.path()));
    let current = std::env::current_exe()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let hide = |mut config: ServerConfig| {
        if let ServerTransport::Stdio { argv, .. } = &mut config.transport {
            for a in argv.iter_mut().filter(|a| **a == current) {
                *a = exe.to_string_lossy().into_owned();
            }
        }
        config
    };
    // The fixture without its `/bin/sh` wrapper: the program is the test binary itself.
    let mut direct = hide(fix.stdio(""));
    if let ServerTransport::Stdio { argv, .. } = &mut direct.transport {
        argv.drain(..3);
        assert_eq!(argv[0], exe.to_string_lossy());
    }
    for (config, names) in [
        (direct, exe.display().to_string()),
        (hide(fix.stdio("")), String::new()),
    ] {
        let reason = match McpSession::connect(&config, &ctx).await {
            Err(McpError::Start { reason, .. }) if reason.contains("Landlock") => {
                eprintln!("skipped: this kernel cannot sandbox ({reason})");
                return;
            }
            Err(McpError::Start { reason, .. }) => reason,
            Ok(session) => {
                session.shutdown().await;
                panic!("the sandbox let the server read the test binary: nothing to check");
            }
            Err(err) => panic!("{err}"),
        };
        assert!(
            reason.contains("the `workspace-write` sandbox may be what stopped it"),
            "{reason}"
        );
        assert!(reason.contains("--sandbox full-access"), "{reason}");
        if names.is_empty() {
            // `/bin/sh` can be read: the binary it runs is named.
            assert!(reason.contains("ended before the handshake"), "{reason}");
            assert!(
                reason.contains(&format!("it runs `{}`", exe.display())),
                "{reason}"
            );
        } else {
            assert!(
                reason.contains(&format!("the program is `{names}`")),
                "{reason}"
            );
        }
        assert!(
            reason.contains(&format!("`allowRead: [{exe_dir}]`")),
            "{reason}"
        );
    }
    // Without a sandbox the sandbox is not blamed.
    let unboxed = fix.ctx().with_sandbox(SandboxProfile::full_access());
    let mut missing = fix.stdio("");
    if let ServerTransport::Stdio { argv, .. } = &mut missing.transport {
        *argv = vec!["/bin/sh".into(), "-c".into(), "exit 3".into()];
    }
    match McpSession::connect(&missing, &unboxed).await {
        Err(McpError::Start { reason, .. }) => assert!(!reason.contains("sandbox"), "{reason}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// Under the CLI's default sandbox (`workspace-write`) a server runs confined like
/// `bash`, with the network allowed: it can run from a path the sandbox lets it read
/// (here `allowRead` names the test binary's directory) and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_runs_under_the_workspace_write_sandbox() {
    use agent_presets::tools::sandbox::{SandboxMode, SandboxProfile};
    let fix = Fix::new();
    let exe_dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let profile = SandboxProfile::new(SandboxMode::WorkspaceWrite).with_allow_read([exe_dir]);
    let ctx = fix.ctx().with_sandbox(profile);
    let session = match McpSession::connect(&fix.stdio(""), &ctx).await {
        Ok(session) => session,
        Err(McpError::Start { reason, .. }) if reason.contains("Landlock") => {
            eprintln!("skipped: this kernel cannot sandbox ({reason})");
            return;
        }
        Err(err) => panic!("{err}"),
    };
    assert_eq!(
        session
            .call("echo", args(json!({"text": "boxed"})))
            .await
            .unwrap()
            .text,
        "boxed"
    );
    session.shutdown().await;
}

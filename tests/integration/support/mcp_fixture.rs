//! An MCP server for tests, built on rmcp's server side and scriptable to misbehave.
//!
//! Over stdio it runs as a child process: the test binary itself, re-run with the one
//! test [`ENTRY_TEST`] selected. The test crate declares the entry test at its root
//! (`#[test] fn mcp_fixture_server() { support::mcp_fixture::serve_stdio_if_asked() }`,
//! see tests/integration/main.rs; a bench declares its own), and a test starts the
//! server with [`stdio_argv`] and [`stdio_env`]. libtest prints its own lines on
//! stdout before the test runs, so the protocol goes over descriptor 3 (the `sh` wrapper
//! of [`stdio_argv`] moves the client's pipe there and stdout to /dev/null).
//!
//! Over Streamable HTTP it runs in the test's process on 127.0.0.1 ([`serve_http`]).
//!
//! The script ([`Script`], from a comma-separated string such as `tools=5000,page=100`):
//! - `garbage`: print lines that are not JSON-RPC on stdout, then hang;
//! - `hang`: never answer anything;
//! - `crash_after=N`: exit (code 3) when call N+1 arrives;
//! - `tools=N`: N more tools, `bulk_00000`…; `page=N`: list N tools per page;
//! - `describe=BYTES`: a tool `verbose` with a description of BYTES bytes;
//! - `ref_loop`: a tool whose schema is a `$ref` loop;
//! - `legacy`: behave like a server from before 2026-07-28 (no `server/discover`);
//! - `narrow`: know `server/discover` but support only revisions up to 2025-11-25;
//! - `linger`: keep running after stdin ends (SIGTERM ends it);
//! - `stubborn`: ignore SIGTERM and the end of stdin (only SIGKILL ends it);
//! - `stderr=TEXT`: print TEXT on stderr at startup (`;` separates lines);
//! - `start_delay=SECS`: read nothing for SECS seconds before serving (a cold `npx -y`
//!   or `uvx` downloading its package), then answer what queued up, in order;
//! - `stderr_flood=BYTES`: from the first tool call on, write lines of BYTES bytes to
//!   stderr in a loop, as fast as the reader takes them, until the server ends.
//!
//! Its tools: `echo {text}`, `add {a, b}` (structuredContent only), `fail` (isError),
//! `image` (text + image), `slow {secs}` (sleeps unless cancelled), `ask` (sends the
//! client `roots/list` and `sampling/createMessage` and reports the answers), `crash`
//! (exits at once), `changed` (sends `notifications/tools/list_changed`).
//!
//! What happened is appended to the log file named by [`LOG_VAR`] (stdio) or given to
//! [`serve_http`]: `capabilities <the client's, as JSON>` (on each `tools/list`),
//! `call <tool>`, `cancelled slow`, `stdin closed`, `sigterm`.
#![allow(dead_code, deprecated)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateMessageRequestParams,
    DiscoverResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The name of the test that runs the fixture when asked.
pub const ENTRY_TEST: &str = "mcp_fixture_server";
/// The script, for a stdio fixture.
pub const SCRIPT_VAR: &str = "AGENT_PRESETS_MCP_FIXTURE";
/// The log file, for a stdio fixture.
pub const LOG_VAR: &str = "AGENT_PRESETS_MCP_FIXTURE_LOG";

/// The argv of a stdio fixture: this test binary, with only [`ENTRY_TEST`] run.
pub fn stdio_argv() -> Vec<String> {
    let exe = std::env::current_exe().expect("the test binary's path");
    vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        "exec 3>&1 1>/dev/null; exec \"$0\" \"$@\"".to_owned(),
        exe.to_string_lossy().into_owned(),
        ENTRY_TEST.to_owned(),
        "--exact".to_owned(),
        "--nocapture".to_owned(),
        "--test-threads=1".to_owned(),
        "-q".to_owned(),
    ]
}

/// A link to this test binary in `home`'s `.ssh` (a secret path, which no sandbox opens
/// and from which no read is derived): a stdio fixture the sandbox of a profile whose home
/// is `home` cannot run.
pub fn hidden_copy(home: &Path) -> PathBuf {
    let dir = home.join(".ssh");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join("fixture");
    let exe = std::env::current_exe().expect("the test binary's path");
    if std::fs::hard_link(&exe, &to).is_err() {
        std::fs::copy(&exe, &to).unwrap();
    }
    to.canonicalize().unwrap()
}

/// The complete environment of a stdio fixture running `script`, logging to `log`.
pub fn stdio_env(script: &str, log: &Path) -> Vec<(String, String)> {
    vec![
        (SCRIPT_VAR.to_owned(), script.to_owned()),
        (LOG_VAR.to_owned(), log.to_string_lossy().into_owned()),
    ]
}

/// The lines of a fixture's log so far.
pub fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What the fixture does.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub garbage: bool,
    pub hang: bool,
    pub crash_after: Option<usize>,
    pub tools: usize,
    pub page: Option<usize>,
    pub describe: Option<usize>,
    pub ref_loop: bool,
    pub legacy: bool,
    pub narrow: bool,
    pub linger: bool,
    pub stubborn: bool,
    pub stderr: Option<String>,
    pub stderr_flood: Option<usize>,
    pub start_delay: Option<usize>,
}

impl Script {
    pub fn parse(text: &str) -> Script {
        let mut script = Script::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or((item, ""));
            let number = || {
                value
                    .parse::<usize>()
                    .expect("a number in the fixture script")
            };
            match key {
                "garbage" => script.garbage = true,
                "hang" => script.hang = true,
                "crash_after" => script.crash_after = Some(number()),
                "tools" => script.tools = number(),
                "page" => script.page = Some(number()),
                "describe" => script.describe = Some(number()),
                "ref_loop" => script.ref_loop = true,
                "legacy" => script.legacy = true,
                "narrow" => script.narrow = true,
                "linger" => script.linger = true,
                "stubborn" => script.stubborn = true,
                "stderr" => script.stderr = Some(value.to_owned()),
                "stderr_flood" => script.stderr_flood = Some(number()),
                "start_delay" => script.start_delay = Some(number()),
                other => panic!("unknown fixture script item `{other}`"),
            }
        }
        script
    }
}

/// The fixture's server handler.
#[derive(Clone)]
pub struct Fixture {
    script: Arc<Script>,
    log: Option<PathBuf>,
    calls: Arc<AtomicUsize>,
}

impl Fixture {
    pub fn new(script: Script, log: Option<PathBuf>) -> Self {
        Fixture {
            script: Arc::new(script),
            log,
            calls: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn log(&self, line: &str) {
        log_to(self.log.as_deref(), line);
    }

    fn tools(&self) -> Vec<Value> {
        let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
        let mut tools = vec![
            json!({"name": "echo", "description": "Echo the text back.",
                   "inputSchema": object(json!({"text": {"type": "string"}}), json!(["text"])),
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "add", "title": "Add", "description": "Add two numbers.",
                   "inputSchema": object(json!({"a": {"type": "number"}, "b": {"type": "number"}}), json!(["a", "b"])),
                   "outputSchema": object(json!({"sum": {"type": "number"}}), json!(["sum"]))}),
            json!({"name": "fail", "description": "Fail as a tool.", "inputSchema": {"type": "object"}}),
            json!({"name": "image", "description": "Return a picture.", "inputSchema": {"type": "object"}}),
            json!({"name": "slow", "description": "Take a while.",
                   "inputSchema": object(json!({"secs": {"type": "number"}}), json!([]))}),
            json!({"name": "ask", "description": "Ask the client things.", "inputSchema": {"type": "object"}}),
            json!({"name": "crash", "description": "Exit at once.", "inputSchema": {"type": "object"}}),
            json!({"name": "changed", "description": "Say the tool list changed.", "inputSchema": {"type": "object"}}),
        ];
        if let Some(bytes) = self.script.describe {
            tools.push(json!({"name": "verbose", "description": "d".repeat(bytes), "inputSchema": {"type": "object"}}));
        }
        if self.script.ref_loop {
            tools.push(json!({"name": "loop", "description": "A schema that refers to itself.",
                "inputSchema": {"$ref": "#/definitions/a", "definitions": {"a": {"$ref": "#/definitions/a"}}}}));
        }
        for i in 0..self.script.tools {
            tools.push(json!({"name": format!("bulk_{i:05}"), "description": "One of many.", "inputSchema": {"type": "object"}}));
        }
        tools
    }
}

pub fn log_to(log: Option<&Path>, line: &str) {
    if let Some(path) = log
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}

fn result(value: Value) -> Result<CallToolResponse, ErrorData> {
    let result: CallToolResult = serde_json::from_value(value).expect("a valid CallToolResult");
    Ok(result.into())
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({"tools": {"listChanged": true}})).expect("capabilities");
        let mut info = ServerConfig::new(capabilities);
        info.server_info = rmcp::model::Implementation::new("mcp-fixture", "1.2.3");
        info
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        if self.script.narrow {
            rmcp::model::ProtocolVersion::known_up_to(&rmcp::model::ProtocolVersion::V_2025_11_25)
                .into()
        } else {
            std::borrow::Cow::Borrowed(rmcp::model::ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if self.script.legacy {
            // What a server from before 2026-07-28 answers to an unknown method.
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "server/discover",
                None,
            ));
        }
        let _ = context;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // What the client declared: in its `initialize` (legacy) or in the request's `_meta`.
        let declared = context.meta.client_capabilities().or_else(|| {
            context
                .peer
                .peer_info()
                .map(|info| info.capabilities.clone())
        });
        self.log(&format!(
            "capabilities {}",
            serde_json::to_string(&declared).unwrap_or_default()
        ));
        let tools = self.tools();
        let start: usize = request
            .and_then(|r| r.cursor)
            .map(|c| c.parse().expect("a cursor the fixture made"))
            .unwrap_or(0);
        let end = self
            .script
            .page
            .map_or(tools.len(), |p| (start + p).min(tools.len()));
        let mut page = json!({"tools": tools[start..end]});
        if end < tools.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        Ok(serde_json::from_value(page).expect("a valid ListToolsResult"))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let name = request.name.to_string();
        self.log(&format!("call {name}"));
        if let Some(bytes) = self.script.stderr_flood
            && n == 0
        {
            std::thread::spawn(move || {
                let mut line = "flood ".repeat(bytes / 6 + 1);
                line.truncate(bytes.saturating_sub(1));
                line.push('\n');
                let mut err = std::io::stderr().lock();
                while err.write_all(line.as_bytes()).is_ok() {}
            });
        }
        if self.script.crash_after.is_some_and(|after| n >= after) {
            std::process::exit(3);
        }
        let args = request.arguments.unwrap_or_default();
        match name.as_str() {
            "echo" => result(
                json!({"content": [{"type": "text", "text": args.get("text").and_then(Value::as_str).unwrap_or("")}]}),
            ),
            "add" => {
                let num = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                result(json!({"content": [], "structuredContent": {"sum": num("a") + num("b")}}))
            }
            "fail" => result(
                json!({"content": [{"type": "text", "text": "it failed on purpose"}], "isError": true}),
            ),
            "image" => result(json!({"content": [
                {"type": "text", "text": "a chart:"},
                {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "mimeType": "image/png"}
            ]})),
            "slow" => {
                let secs = args.get("secs").and_then(Value::as_f64).unwrap_or(30.0);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs_f64(secs)) => {
                        result(json!({"content": [{"type": "text", "text": "done"}]}))
                    }
                    () = context.ct.cancelled() => {
                        self.log("cancelled slow");
                        Err(ErrorData::internal_error("cancelled", None))
                    }
                }
            }
            "ask" => {
                #[allow(deprecated)]
                let roots = context.peer.list_roots().await;
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                    "maxTokens": 10
                }))
                .expect("params");
                #[allow(deprecated)]
                let sampling = context.peer.create_message(params).await;
                let say = |r: Result<String, String>| match r {
                    Ok(ok) => format!("answered {ok}"),
                    Err(e) => format!("error: {e}"),
                };
                let text = format!(
                    "roots/list: {}\nsampling/createMessage: {}",
                    say(roots.map(|r| format!("{r:?}")).map_err(|e| e.to_string())),
                    say(sampling
                        .map(|r| format!("{r:?}"))
                        .map_err(|e| e.to_string()))
                );
                result(json!({"content": [{"type": "text", "text": text}]}))
            }
            "crash" => std::process::exit(3),
            "changed" => {
                let _ = context.peer.notify_tool_list_changed().await;
                result(json!({"content": [{"type": "text", "text": "told"}]}))
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool `{other}`"),
                None,
            )),
        }
    }
}

static SIGTERM_LOG: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_sigterm(_: libc::c_int) {
    let fd = SIGTERM_LOG.load(Ordering::SeqCst);
    // SAFETY: write(2) and _exit(2) are async-signal-safe.
    unsafe {
        libc::write(fd, b"sigterm\n".as_ptr().cast(), 8);
        libc::_exit(143);
    }
}

/// The entry test's body: serve over stdio (descriptor 3 out) when [`SCRIPT_VAR`] is
/// set, else return at once.
pub fn serve_stdio_if_asked() {
    let Ok(text) = std::env::var(SCRIPT_VAR) else {
        return;
    };
    let script = Script::parse(&text);
    let log = std::env::var_os(LOG_VAR).map(PathBuf::from);
    // SAFETY: descriptor 3 is the pipe the `sh` wrapper of `stdio_argv` set up; nothing
    // else in this process owns it.
    let out: std::fs::File = unsafe { std::os::fd::FromRawFd::from_raw_fd(3) };
    if script.stubborn {
        // SAFETY: setting a signal to be ignored has no preconditions.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
    } else if let Some(path) = &log {
        // Log SIGTERM before dying of it: the handler only writes to a descriptor opened
        // here and exits (async-signal-safe calls).
        if let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            SIGTERM_LOG.store(std::os::fd::IntoRawFd::into_raw_fd(file), Ordering::SeqCst);
            // SAFETY: the handler is async-signal-safe (write, _exit).
            unsafe {
                libc::signal(
                    libc::SIGTERM,
                    on_sigterm as extern "C" fn(libc::c_int) as libc::sighandler_t,
                );
            }
        }
    }
    if let Some(lines) = &script.stderr {
        for line in lines.split(';') {
            eprintln!("{line}");
        }
    }
    if let Some(secs) = script.start_delay {
        std::thread::sleep(Duration::from_secs(secs as u64));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let mut out = tokio::fs::File::from_std(out);
        if script.hang {
            std::future::pending::<()>().await;
        }
        if script.garbage {
            use tokio::io::AsyncWriteExt;
            for i in 0..20 {
                let _ = out
                    .write_all(format!("Starting the server, step {i} of 20...\n").as_bytes())
                    .await;
            }
            let _ = out.flush().await;
            std::future::pending::<()>().await;
        }
        let stays = script.stubborn || script.linger;
        let fixture = Fixture::new(script, log.clone());
        if let Ok(running) = fixture.serve((tokio::io::stdin(), out)).await {
            let _ = running.waiting().await;
        }
        log_to(log.as_deref(), "stdin closed");
        if stays {
            std::future::pending::<()>().await;
        }
    });
}

/// A Streamable HTTP fixture on 127.0.0.1: its URL. It runs until the runtime ends.
pub async fn serve_http(script: Script, log: Option<PathBuf>) -> String {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let fixture = Fixture::new(script, log);
    let service = StreamableHttpService::new(
        move || Ok(fixture.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{address}/mcp")
}
